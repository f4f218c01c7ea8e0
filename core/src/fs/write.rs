//! The atomic write (`docs/contract.md#writing`): missing parents created,
//! content written to a temp file beside the target, synced, and renamed
//! over it.

use std::io;
use std::time::SystemTime;

use super::resolve::Resolved;
use super::sys::{Dir, Kind, Stat};
use super::temps;

/// What the target must still be just before the rename, for a write that
/// must not replace a file changed since it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unchanged {
    /// Nothing there.
    Missing,
    /// A regular file of this size and modification time.
    File {
        /// Its size in bytes.
        len: u64,
        /// Its modification time.
        modified: Option<SystemTime>,
    },
    /// A symbolic link whose target is this long, of this modification
    /// time (the link's own, not its target's).
    Link {
        /// Its target's length in bytes.
        len: u64,
        /// Its modification time.
        modified: Option<SystemTime>,
    },
}

/// The target no longer matched [`Unchanged`] just before the rename.
/// Carried inside an `io::Error` of kind `Other`.
#[derive(Debug)]
pub struct TargetChanged;

impl std::fmt::Display for TargetChanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the target changed before the rename")
    }
}

impl std::error::Error for TargetChanged {}

/// Whether `err` is a [`TargetChanged`].
pub fn is_target_changed(err: &io::Error) -> bool {
    err.get_ref()
        .is_some_and(|inner| inner.is::<TargetChanged>())
}

pub use write_tool_wire::settings::Durability;

/// How many times a write starts over with a new temp file when its rename
/// finds the temp file gone (a sweep beside it took it for a dead
/// writer's: one slower than [`super::temps::STALE_TEMP_AGE`]).
pub const RENAME_ATTEMPTS: u32 = 8;

/// How many names a write tries for its temp file before giving up (a
/// collision needs another writer to have drawn the same 64 random bits).
const TEMP_NAME_ATTEMPTS: u32 = 16;

/// Create the missing parent directories of `resolved` under `root`,
/// returning those actually created (outermost first, root-relative) so
/// that a failed write can remove them again.
pub fn create_parents(root: &Dir, resolved: &Resolved) -> io::Result<Vec<String>> {
    let mut created = Vec::new();
    for depth in resolved.existing_dirs..resolved.parent().len() {
        let dir = resolved.names[..=depth].join("/");
        match root.create_dir_at(&dir) {
            Ok(()) => created.push(dir),
            // Made by someone else meanwhile: fine, if it is a directory.
            Err(e)
                if e.kind() == io::ErrorKind::AlreadyExists
                    && root
                        .stat_at(&dir)
                        .is_ok_and(|stat| stat.kind == Kind::Directory) => {}
            Err(e) => {
                remove_dirs(root, &created);
                return Err(e);
            }
        }
    }
    Ok(created)
}

/// Remove directories created for a write that then failed (innermost
/// first). Only empty directories go; anything else is left alone.
pub fn remove_dirs(root: &Dir, created: &[String]) {
    for dir in created.iter().rev() {
        let _ = root.remove_dir_at(dir);
    }
}

/// Write `content` to a new temp file in `dir` (named `name`, or a fresh
/// name), synced as `sync` says: the first half of an atomic write, which
/// [`commit_staged`] ends. Returns
/// the temp file's name and what it is.
pub fn stage(
    dir: &Dir,
    name: Option<&str>,
    content: &[u8],
    sync: Durability,
) -> io::Result<(String, Stat)> {
    let (temp, file) = match name {
        Some(name) => (name.to_owned(), dir.create_new_at(name)?),
        None => create_temp(dir)?,
    };
    let written = (|| {
        file.write_all(content)?;
        if sync != Durability::None {
            file.sync()?;
        }
        file.stat()
    })();
    drop(file);
    match written {
        Ok(stat) => Ok((temp, stat)),
        Err(e) => {
            let _ = dir.unlink_at(&temp);
            Err(e)
        }
    }
}

/// Stage a symbolic link to `target` under the temp name `temp` (or a
/// fresh one) in `dir`, to be put in place as a staged file is (a revert
/// that makes a removed link again): the same commit point, the same
/// recovery.
pub fn stage_link(dir: &Dir, temp: Option<&str>, target: &str) -> io::Result<(String, Stat)> {
    let name = match temp {
        Some(name) => {
            dir.symlink_at(target, name)?;
            name.to_owned()
        }
        None => fresh_temp(|name| dir.symlink_at(target, name))?.0,
    };
    let stat = dir.stat_at(&name)?;
    Ok((name, stat))
}

/// The second half: put the staged `temp` in `name`'s place (see
/// `commit` below).
pub fn commit_staged(
    dir: &Dir,
    temp: &str,
    name: &str,
    unchanged: Option<Unchanged>,
) -> io::Result<()> {
    commit(dir, temp, name, unchanged)
}

/// Put the temp file `temp` in `name`'s place: the commit point.
///
/// Where nothing may be at `name` (`create_only`), the temp file is linked
/// to the name, which fails when a file got there first, whenever that
/// was: a create is atomic. Where the file must be as it was read (a
/// locked write), it is looked at once more and then replaced by a rename,
/// which cannot compare and swap: a change between the two is not seen.
fn commit(dir: &Dir, temp: &str, name: &str, unchanged: Option<Unchanged>) -> io::Result<()> {
    match unchanged {
        Some(Unchanged::Missing) => match dir.link_at(temp, name) {
            Ok(()) => {
                // The new file keeps its name if this fails; the temp name
                // is a leftover the next sweep removes.
                let _ = dir.unlink_at(temp);
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                Err(io::Error::other(TargetChanged))
            }
            // A file system without hard links: the look and the rename.
            Err(e) if links_unsupported(&e) => {
                check_unchanged(dir, name, Unchanged::Missing)?;
                dir.rename_at(temp, name)
            }
            Err(e) => Err(e),
        },
        Some(expected) => {
            check_unchanged(dir, name, expected)?;
            dir.rename_at(temp, name)
        }
        None => dir.rename_at(temp, name),
    }
}

/// Whether `err` says the file system (or the host) makes no hard links.
fn links_unsupported(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::Unsupported | io::ErrorKind::PermissionDenied
    ) && !super::sys::is_sandbox_refusal(err)
}

/// Whether `name` in `dir` is still as `expected` says; `TargetChanged`
/// if not.
pub fn check_unchanged(dir: &Dir, name: &str, expected: Unchanged) -> io::Result<()> {
    let now = match dir.stat_at(name) {
        Ok(stat) if stat.kind == Kind::File => Unchanged::File {
            len: stat.len,
            modified: stat.modified,
        },
        Ok(stat) if stat.kind == Kind::Symlink => Unchanged::Link {
            len: stat.len,
            modified: stat.modified,
        },
        // Anything else where a file was, or where nothing was, is a
        // change; `NotFound` would read as a swept temp file and retry.
        Ok(_) => return Err(io::Error::other(TargetChanged)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Unchanged::Missing,
        Err(e) => return Err(e),
    };
    if now == expected {
        Ok(())
    } else {
        Err(io::Error::other(TargetChanged))
    }
}

fn create_temp(dir: &Dir) -> io::Result<(String, super::sys::File)> {
    fresh_temp(|name| dir.create_new_at(name))
}

/// `make` tried with fresh temp names until one is not taken.
fn fresh_temp<T>(mut make: impl FnMut(&str) -> io::Result<T>) -> io::Result<(String, T)> {
    let mut last_err = None;
    for attempt in 0..TEMP_NAME_ATTEMPTS {
        let name = temps::temp_name(attempt);
        match make(&name) {
            Ok(made) => return Ok((name, made)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}
