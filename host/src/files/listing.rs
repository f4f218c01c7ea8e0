//! What the file API reads itself, once `view` has admitted the path: a
//! directory's entries and a file's bytes. Reached by the names `view`
//! resolved (its `path_resolved`), one at a time from the root with no
//! link followed, so that what is read is the place `view` judged, not
//! another a link leads to; a file only in the version `view` admitted,
//! only with no other hard link, never a FIFO or a device (opened without
//! blocking, then checked).

use std::io::{self, Read as _};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt as _;

use cap_std::fs::PermissionsExt as _;
use rustix::fs::{Mode, OFlags};
use serde_json::{Value, json};

use crate::Root;

/// How many times a file that changes while it is read is read again.
const READS: usize = 3;

/// Open `resolved` (root-relative names joined by `/`; `.` for the root)
/// name by name, following no link; the last one with `last` flags.
fn walk(root: &Root, resolved: &str, last: OFlags) -> io::Result<OwnedFd> {
    let base = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let names: Vec<&str> = resolved
        .split('/')
        .filter(|n| !n.is_empty() && *n != ".")
        .collect();
    if names.contains(&"..") || resolved.starts_with('/') {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "not a path below the project root",
        ));
    }
    let mut fd = rustix::fs::openat(root.dir(), ".", base | OFlags::DIRECTORY, Mode::empty())?;
    for (i, name) in names.iter().enumerate() {
        let flags = if i + 1 == names.len() {
            base | last
        } else {
            base | OFlags::DIRECTORY
        };
        fd = rustix::fs::openat(&fd, *name, flags, Mode::empty())?;
    }
    if names.is_empty() && !last.contains(OFlags::DIRECTORY) {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "the root is a directory",
        ));
    }
    Ok(fd)
}

/// `DirectoryListing` of the directory `resolved` (named `name` to the
/// caller): of the entries `view` listed (`shown`: no hidden, protected or
/// temp names), the files and directories, not links, each as it is now.
pub(super) fn of(root: &Root, resolved: &str, name: &str, shown: &[String]) -> io::Result<Value> {
    let fd = walk(root, resolved, OFlags::DIRECTORY)?;
    let dir = cap_std::fs::Dir::from_std_file(std::fs::File::from(fd));
    let mut entries = Vec::new();
    for entry in shown {
        let entry = entry.trim_end_matches('/');
        let Ok(meta) = dir.symlink_metadata(entry) else {
            continue;
        };
        let kind = if meta.is_dir() {
            "directory"
        } else if meta.is_file() {
            "file"
        } else {
            continue;
        };
        let modified = meta
            .modified()
            .map(cap_std::time::SystemTime::into_std)
            .unwrap_or(std::time::UNIX_EPOCH);
        let modified: chrono::DateTime<chrono::Utc> = modified.into();
        entries.push(json!({
            "name": entry,
            "size": meta.len(),
            "type": kind,
            "modified_at": modified.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "mode": format!("{:04o}", meta.permissions().mode() & 0o7777),
        }));
    }
    Ok(json!({"path": name, "entries": entries}))
}

/// The bytes of the file `resolved`, if they are still the version `base`
/// names (XXH3-128, as `view` reports it) and the file is a regular one
/// with no other hard link; read again if it changed meanwhile, refused if
/// it keeps changing.
pub(super) fn bytes_of(
    root: &Root,
    resolved: &str,
    base: &str,
    max: usize,
) -> Result<Vec<u8>, String> {
    let failed = |e: io::Error| format!("The file could not be read: {e}.");
    for _ in 0..READS {
        // Non-blocking: a FIFO swapped in must not hold the server.
        let fd = walk(root, resolved, OFlags::NONBLOCK).map_err(failed)?;
        let meta = rustix::fs::fstat(fd.as_fd()).map_err(|e| failed(e.into()))?;
        let file = std::fs::File::from(fd);
        let std_meta = file.metadata().map_err(failed)?;
        if !std_meta.is_file() || std_meta.nlink() > 1 || meta.st_nlink > 1 {
            return Err(
                "The file was replaced by one the tool does not show while it was read.".into(),
            );
        }
        let mut bytes = Vec::new();
        let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
        file.take(limit).read_to_end(&mut bytes).map_err(failed)?;
        if format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes)) == base {
            return Ok(bytes);
        }
    }
    Err("The file kept changing while it was read; try again.".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ambient_authority;

    fn base(bytes: &[u8]) -> String {
        format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
    }

    /// Only the version `view` admitted, only with one link, never through
    /// a link or a `..`, never a FIFO.
    #[test]
    fn only_the_admitted_bytes_of_the_place_view_judged() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("sub")).expect("sub");
        std::fs::write(dir.path().join("sub/a.txt"), "a\n").expect("a");
        let root = Root::open(dir.path(), ambient_authority()).expect("root");
        assert_eq!(
            bytes_of(&root, "sub/a.txt", &base(b"a\n"), 1 << 20).as_deref(),
            Ok(&b"a\n"[..])
        );
        assert!(bytes_of(&root, "sub/a.txt", &base(b"other\n"), 1 << 20).is_err());
        std::fs::hard_link(dir.path().join("sub/a.txt"), dir.path().join("b.txt")).expect("link");
        assert!(bytes_of(&root, "sub/a.txt", &base(b"a\n"), 1 << 20).is_err());
        std::os::unix::fs::symlink("sub", dir.path().join("via")).expect("symlink");
        std::fs::write(dir.path().join("sub/c.txt"), "c\n").expect("c");
        assert!(bytes_of(&root, "via/c.txt", &base(b"c\n"), 1 << 20).is_err());
        assert!(bytes_of(&root, "sub/../sub/c.txt", &base(b"c\n"), 1 << 20).is_err());
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("fifo"),
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .expect("fifo");
        assert!(bytes_of(&root, "fifo", &base(b""), 1 << 20).is_err());
        let listed = of(
            &root,
            ".",
            ".",
            &["sub/".into(), "b.txt".into(), "via".into()],
        )
        .expect("listing");
        let names: Vec<&str> = listed["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .filter_map(|e| e["name"].as_str())
            .collect();
        // Only what view listed, and no link.
        assert_eq!(names, ["sub", "b.txt"]);
        assert!(of(&root, "via", "via", &[]).is_err());
    }
}
