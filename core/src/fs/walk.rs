//! The one way down to a file the tool reads or replaces: the directories
//! of a resolved path opened one name at a time from the root, no link
//! followed (cap-std's `open` with `FollowSymlinks::No`, one component at
//! a time; openat2's `RESOLVE_NO_SYMLINKS`).
//!
//! [`resolve()`](super::resolve()) looked at each name and followed links
//! itself; between that look and the open another process may swap a
//! directory of the path for a link — into `.git`, into a protected folder.
//! Opening the whole path again would follow that link (a `wasi:filesystem`
//! open follows every link but the last), and the bytes read would be the
//! protected file's. Opening one name at a time with no link followed
//! fails instead: the swap is seen as a file replaced while it was read.
//! Every read whose bytes can reach an answer, a saved version or a merge
//! — and every commit's directory — is opened here (`view`, the old file
//! of a write, edit, patch and merge, a revert's current file, the file the
//! journal keeps).
//!
//! In the component a name is opened by the host beneath its descriptor, so
//! the walk holds against a swap at any moment. Natively a handle is a path
//! (`sys/native.rs`): each name is checked to be a directory and not a
//! link, which narrows the window but cannot close it; the native build has
//! no sandbox below it and is the benchmarks' baseline, not a surface.

use std::io;

use super::sys::Dir;
use crate::error::ToolError;

/// A directory a walk reached: the root itself, or one opened below it.
#[derive(Debug)]
pub enum Walked<'r> {
    /// The root.
    Root(&'r Dir),
    /// A directory below it.
    Opened(Dir),
}

impl std::ops::Deref for Walked<'_> {
    type Target = Dir;
    fn deref(&self) -> &Dir {
        match self {
            Walked::Root(dir) => dir,
            Walked::Opened(dir) => dir,
        }
    }
}

/// The directory `names` below `root`, each name opened in the one above
/// it with no link followed. A name that is a link now, or no longer a
/// directory, fails to open.
pub fn walk<'r>(root: &'r Dir, names: &[String]) -> io::Result<Walked<'r>> {
    let Some((first, rest)) = names.split_first() else {
        return Ok(Walked::Root(root));
    };
    let mut dir = root.open_dir_at(first)?;
    for name in rest {
        dir = dir.open_dir_at(name)?;
    }
    Ok(Walked::Opened(dir))
}

/// Whether a walk's error means the path changed since it was resolved (a
/// name gone, or a link or a file now), rather than a directory the system
/// does not let this process open, which is said as such.
pub fn moved(err: &io::Error) -> bool {
    err.kind() != io::ErrorKind::PermissionDenied || super::sys::is_sandbox_refusal(err)
}

/// The answer to a walk that failed: the file replaced while it was read
/// when the path changed, else the system's error.
pub fn error(err: &io::Error) -> ToolError {
    if moved(err) {
        ToolError::replaced_while_read()
    } else {
        super::io_error(err, "opening a directory on the path")
    }
}
