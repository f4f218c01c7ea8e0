//! What every test suite of write-tool shares (after cargo's
//! `cargo-test-support`): where the binary and the build's scratch space
//! are, snapshots of a directory tree, planted and leftover temp files, the
//! envelope as a consumer decodes it, and CLI processes.
//!
//! - `tests/all`: the component through the host library;
//! - `host/tests/cli`: the `write-tool` binary as scripts drive it;
//! - `host/tests/peers`: the binary and the component under real peers.
//!
//! The envelope types here are the tests' own, not the producer's: they
//! reject unknown fields, so an unplanned change of the format fails a
//! test instead of passing through.

#![allow(
    clippy::unwrap_used,
    missing_docs,
    reason = "test support: a failed fixture is a failed test"
)]

pub mod capability;
pub mod envelope;
pub mod paths;
pub mod process;
pub mod temps;
pub mod tree;

pub use envelope::{Envelope, decode};
pub use paths::{bin, bin_str, cache_dir, target_tmp};
pub use temps::{Temps, is_tool_temp, plant_temps, temp_files};
pub use tree::Tree;
