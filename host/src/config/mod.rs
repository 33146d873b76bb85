//! Configuration: the GRW config file, the environment and command-line flags.

mod types;

pub use types::*;
