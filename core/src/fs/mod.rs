//! The one place that touches the file system: resolution of a path under
//! the root, reading the old file, and the atomic write.
//!
//! Every operation goes through a directory handle ([`Dir`]) and a path
//! relative to it, never through an absolute or ambient path: inside the
//! component the root handle is the host's preopen, so the capability
//! layer stands behind every check made here ([`sys`]).
//!
//! - [`resolve()`]: the walk down the path, links followed by the tool itself;
//! - [`walk()`]: the one way down to a file the tool reads or replaces;
//! - [`read_existing`]: the file a write replaces;
//! - [`stage`], [`commit_staged`] and [`create_parents`]: the write itself;
//! - [`temps`]: the tool's temp files, and the sweep of leftovers.

mod read;
mod resolve;
pub mod sys;
pub mod temps;
pub mod walk;
mod write;

pub use read::{Existing, ReadError, read_existing, read_viewed};
pub use resolve::{Resolved, TargetKind, resolve, resolve_unfollowed};
use std::io;
pub use sys::Dir;
pub use walk::{Walked, walk};

use crate::error::ToolError;

/// The error for an I/O failure met while `doing` something: a refusal of
/// the capability layer means the path led outside the root; anything else
/// is the system's.
pub fn io_error(err: &io::Error, doing: &str) -> ToolError {
    if sys::is_sandbox_refusal(err) {
        ToolError::outside_root()
    } else {
        ToolError::from_io(err, doing)
    }
}

/// Whether the file system under `root` takes names that differ only in
/// case for one name, probed on the path a call walked: the first of the
/// `existing` leading names of `names` with an ASCII letter is looked up
/// with its letters' case swapped, and found to be the same entry. With no
/// such name, nothing tells: false.
pub fn folds_case(root: &Dir, names: &[String], existing: usize) -> bool {
    let Some(at) = names[..existing.min(names.len())]
        .iter()
        .position(|n| n.bytes().any(|b| b.is_ascii_alphabetic()))
    else {
        return false;
    };
    let path = names[..=at].join("/");
    let mut swapped = names[..at].join("/");
    if !swapped.is_empty() {
        swapped.push('/');
    }
    swapped.extend(names[at].chars().map(|c| {
        if c.is_ascii_lowercase() {
            c.to_ascii_uppercase()
        } else {
            c.to_ascii_lowercase()
        }
    }));
    root.same_entry(&path, &swapped)
}

pub use write::{
    Durability, RENAME_ATTEMPTS, Unchanged, check_unchanged, commit_staged, create_parents,
    is_target_changed, remove_dirs, stage, stage_link,
};

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::error::ErrorCode;
    use crate::path::RelPath;

    fn resolve_in(root: &Path, path: &str) -> Result<Resolved, ErrorCode> {
        let rel = RelPath::parse(path).map_err(|e| e.code())?;
        resolve(&Dir::from_path(root), rel).map_err(|e| e.code())
    }

    #[test]
    fn a_read_stops_one_byte_past_what_the_caller_reads() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f"), [7u8; 100]).unwrap();
        let root = Dir::from_path(dir.path());
        let file = || root.open_read_at("f").unwrap();
        assert_eq!(file().read_capped(100, 10).unwrap().len(), 11);
        assert_eq!(file().read_capped(100, 1_000).unwrap().len(), 100);
        assert_eq!(file().read_all(100).unwrap().len(), 100);
        assert!(matches!(
            read_viewed(&root, "f", 99),
            Err(ReadError::TooLarge { len: 100 })
        ));
        assert_eq!(read_viewed(&root, "f", 100).unwrap().bytes.len(), 100);
    }

    #[test]
    fn missing_parents_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("a")).unwrap();
        let r = resolve_in(dir.path(), "a/b/c/f.txt").unwrap();
        assert_eq!(r.kind, TargetKind::Missing);
        assert_eq!(r.existing_dirs, 1);
        assert!(r.creates_dirs());
        assert_eq!(r.parent_display().as_deref(), Some("a/b/c"));
        let r = resolve_in(dir.path(), "a/f.txt").unwrap();
        assert!(!r.creates_dirs());
    }

    #[cfg(unix)]
    #[test]
    fn links_inside_are_followed_and_outside_refused() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir_all(root.join("real")).unwrap();
        symlink("real", root.join("alias")).unwrap();
        symlink("../outside", root.join("out")).unwrap();
        symlink("/tmp", root.join("abs")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        symlink("../root/real", root.join("back")).unwrap();
        let r = resolve_in(&root, "alias/f.txt").unwrap();
        assert_eq!(r.display(), "real/f.txt");
        for refused in ["out/f.txt", "abs/f.txt", "loop", "back/f"] {
            assert_eq!(
                resolve_in(&root, refused).unwrap_err(),
                ErrorCode::AccessDenied,
                "{refused}"
            );
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    /// A staged temp file put in place leaves nothing beside the file.
    fn write(dir: &Path, name: &str, content: &[u8]) {
        let handle = Dir::from_path(dir);
        let (temp, _) = stage(&handle, None, content, Durability::None).unwrap();
        commit_staged(&handle, &temp, name, None).unwrap();
    }

    #[test]
    fn a_staged_write_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f.txt"), "old").unwrap();
        write(dir.path(), "f.txt", b"new");
        assert_eq!(fs::read(dir.path().join("f.txt")).unwrap(), b"new");
        assert_eq!(names(dir.path()), ["f.txt"]);
    }

    #[test]
    fn a_create_never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let handle = Dir::from_path(dir.path());
        fs::write(dir.path().join("f.txt"), "theirs").unwrap();
        let (temp, _) = stage(&handle, None, b"mine", Durability::None).unwrap();
        let err = commit_staged(&handle, &temp, "f.txt", Some(Unchanged::Missing)).unwrap_err();
        assert!(is_target_changed(&err), "{err}");
        assert_eq!(fs::read(dir.path().join("f.txt")).unwrap(), b"theirs");
    }

    #[test]
    fn stale_temps_of_the_tools_pattern_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let handle = Dir::from_path(dir.path());
        let stale = dir.path().join(".wt-0123456789abcdef.tmp");
        let lookalike = dir.path().join(".wt-0123456789ABCDEF.tmp");
        let other = dir.path().join("user.tmp");
        for path in [&stale, &lookalike, &other] {
            fs::write(path, "left over").unwrap();
        }
        let started = SystemTime::now() + temps::STALE_TEMP_AGE + Duration::from_secs(1);
        temps::remove_stale(&handle, started);
        assert!(!stale.exists());
        assert!(lookalike.exists() && other.exists());
        // Temp files about as new as the write belong to a live writer.
        let fresh = dir.path().join(".wt-fedcba9876543210.tmp");
        fs::write(&fresh, "in flight").unwrap();
        temps::remove_stale(&handle, SystemTime::now());
        assert!(fresh.exists());
    }
}
