//! Builds against GRW's plugin WIT with the version changed to `0.3.0`.

const VERSION: &str = "0.3.0";

include!("../versioned_wit.rs");

fn main() {
    write_versioned_wit();
}
