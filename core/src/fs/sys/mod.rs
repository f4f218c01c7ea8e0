//! The platform layer: a directory handle and the few operations the tool
//! makes through it, each relative to a handle.
//!
//! - In the component (`sys/wasi.rs`) a handle is a `wasi:filesystem`
//!   descriptor: the root is the host's preopen, and every path is resolved
//!   by the host beneath it, so the capability layer stands behind every
//!   check the tool makes. Files are opened with only the descriptor flags
//!   they need (no `mutate-directory`, which some hosts refuse on files).
//! - Natively (`sys/native.rs`) a handle is a directory's path and the
//!   operations are `std::fs` calls on paths below it: the same logic with
//!   no sandbox beneath, which is how the crate is unit-tested and
//!   benchmarked.
//!
//! Paths given to a handle are relative, `/`-separated, and already
//! checked by the caller; the layer adds no policy of its own.

use std::time::SystemTime;

#[cfg(not(target_os = "wasi"))]
mod native;
#[cfg(target_os = "wasi")]
mod wasi;

#[cfg(not(target_os = "wasi"))]
pub use native::{Dir, File, environment, preopens};
#[cfg(target_os = "wasi")]
pub use wasi::{Dir, File, environment, preopens};

/// What a path names, not following a final symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A symbolic link.
    Symlink,
    /// A directory.
    Directory,
    /// A regular file.
    File,
    /// A FIFO, socket, device or anything else.
    Other,
}

/// What the tool reads of a file or an entry.
#[derive(Debug, Clone, Copy)]
pub struct Stat {
    /// Its kind.
    pub kind: Kind,
    /// Its size in bytes.
    pub len: u64,
    /// Its modification time, where the platform keeps one.
    pub modified: Option<SystemTime>,
    /// When its status (names, mode) last changed, where the platform
    /// keeps it.
    pub changed: Option<SystemTime>,
    /// How many names it has (hard links).
    pub link_count: u64,
}

/// The capability layer refused an access: the path led outside a
/// directory handle (or the handle does not allow the operation). Carried
/// inside an `io::Error` of kind `PermissionDenied`; only the component
/// produces it, since natively no sandbox sits below.
#[derive(Debug)]
pub struct SandboxRefusal;

impl std::fmt::Display for SandboxRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the capability layer refused the access")
    }
}

impl std::error::Error for SandboxRefusal {}

/// Whether `err` is a [`SandboxRefusal`].
pub fn is_sandbox_refusal(err: &std::io::Error) -> bool {
    err.get_ref()
        .is_some_and(|inner| inner.is::<SandboxRefusal>())
}
