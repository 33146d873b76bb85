//! Builds against GRW's plugin WIT with the version changed to `0.2.1`.

const VERSION: &str = "0.2.1";

include!("../versioned_wit.rs");

fn main() {
    write_versioned_wit();
}
