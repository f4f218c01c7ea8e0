//! The Write tool's logic, free of any runtime.
//!
//! An agent asks to write `content` to `path`. This crate turns that request
//! into an [`Envelope`]:
//!
//! 1. [`params`] parses the tool-call arguments strictly and keeps an echo
//!    for `params_input`.
//! 2. [`path`] applies the lexical rules: no absolute paths, no climbing
//!    above the root, no control or look-alike characters.
//! 3. [`fs::resolve`] walks the path under the root, following links that
//!    stay inside and refusing those that leave; [`protect`] then refuses
//!    protected places such as `.git`.
//! 4. The old file is decoded in its own encoding and the content given
//!    its line endings (`tool/format.rs`); [`diff`] compares the two texts
//!    into a bounded unified-diff preview with whole-diff counts, and
//!    [`placeholder`] looks at the lines it adds.
//! 5. [`fs::write_atomic`] creates missing parents and replaces the file
//!    through a synced temp file and a rename.
//!
//! [`tool::call`] and [`tool::write`] run the whole pipeline. All file I/O
//! is `std::fs` below one root directory: inside the WebAssembly component
//! the root is `.`, the single preopen, so that I/O is WASI; natively it is
//! an ordinary directory, which is how this crate is unit-tested and
//! benchmarked.

#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod definition;
pub mod diff;
pub mod error;
pub mod fs;
pub mod params;
pub mod path;
pub mod placeholder;
pub mod protect;
pub mod roots;
pub mod tool;

pub use error::{ErrorCode, ToolError};
pub use params::Request;
pub use roots::Roots;
pub use tool::{Config, call, write};
pub use write_tool_wire as wire;
pub use write_tool_wire::Envelope;
