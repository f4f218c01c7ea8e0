//! The Write tool's logic, free of any runtime.
//!
//! An agent asks to write `content` to `path`. This crate turns that request
//! into an [`Envelope`], through the stages of `pipeline/`:
//!
//! 1. `params` parses the tool-call arguments strictly and keeps an echo
//!    for `params_input`; `path` applies the lexical rules (no absolute
//!    paths, no climbing above the root, no control or look-alike
//!    characters); `roots` places the path under one of the host's roots.
//! 2. `fs/` walks the path under the root, following links that stay
//!    inside and refusing those that leave; `protect` then refuses
//!    protected places such as `.git`.
//! 3. `format/` decodes the old file in its own encoding and gives the
//!    content its format; `diff/` compares the two texts into a bounded
//!    unified-diff preview with whole-diff counts, and `placeholder` looks
//!    at the lines it adds.
//! 4. `fs/` creates missing parents and replaces the file through a synced
//!    temp file and a rename.
//!
//! [`call`] and [`write()`] run the whole pipeline. All file I/O goes through
//! a directory handle ([`Dir`]) below one root: inside the WebAssembly
//! component it is a `wasi:filesystem` descriptor, the host's preopen;
//! natively it is an ordinary directory, which is how this crate is
//! unit-tested and benchmarked.
//!
//! The modules are private; what the component and the benchmarks use is
//! re-exported below, so that the compiler sees what nothing uses.

#![deny(missing_docs)]
#![deny(unsafe_code)]

mod definition;
mod diff;
pub mod edit;
mod error;
mod format;
mod fs;
mod git;
pub mod journal;
mod params;
mod path;
mod pipeline;
mod placeholder;
mod protect;
mod roots;

pub use definition::definition;
pub use diff::DiffLimits;
pub use error::{ErrorCode, ErrorKind, ToolError};
pub use fs::Durability;
pub use fs::sys::{Dir, environment, preopens};
pub use params::{
    Call, EditRequest, IDEMPOTENCY_KEY, JournalRequest, Keyed, MAX_KEY_BYTES, ManyRequest, Parsed,
    PatchRequest, Request, RevertRequest, RevertTarget, ViewRequest, parse_any, parse_call,
    parse_patch,
};
pub use pipeline::{Config, apply_patch, call, checkpoint, edit, revert, view, write, write_many};
pub use protect::{ProtectError, ProtectErrorKind, Protection};
pub use roots::Roots;
pub use write_tool_wire as wire;
pub use write_tool_wire::Envelope;
