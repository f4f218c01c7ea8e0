//! Directories whose contents the host trusts: the compile cache (code the
//! host runs) and the journals (what every change replaced, and the
//! records an undo follows).
//!
//! A directory is judged the way ssh's `StrictModes` judges a home
//! directory: every directory above it must belong to root or this user
//! and be writable by no one else unless it is sticky (`/tmp`), and the
//! directory itself must belong to this user and be writable by no one
//! else. It is then opened once, without following a link, and
//! everything happens relative to that handle: a directory swapped for a
//! link, or renamed away, after the check changes nothing the host does.

use std::path::PathBuf;

/// Why a directory, or a file in it, is not trusted.
#[derive(Debug)]
pub(crate) enum Untrusted {
    /// Its metadata could not be read, or it could not be created.
    Unreadable(std::io::Error),
    /// It is a link, a file or something else, not a directory.
    NotADirectory,
    /// Another user owns it.
    OtherOwner,
    /// Others can write it.
    WritableByOthers,
    /// A directory above it lets another user replace what is below.
    Ancestor {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it.
        why: AncestorFault,
    },
}

/// What makes a directory above a trusted one unsafe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AncestorFault {
    /// A user other than root and this one owns it.
    OtherOwner,
    /// Group or others can write it, and it is not sticky.
    WritableNotSticky,
}

impl std::fmt::Display for Untrusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Untrusted::Unreadable(err) => write!(f, "{err}"),
            Untrusted::NotADirectory => {
                f.write_str("it is not a directory (a link is not followed)")
            }
            Untrusted::OtherOwner => f.write_str("it is owned by another user"),
            Untrusted::WritableByOthers => f.write_str("others can write it"),
            Untrusted::Ancestor { path, why } => write!(
                f,
                "{} above it {}, so another user could replace it",
                path.display(),
                match why {
                    AncestorFault::OtherOwner => "is owned by another user",
                    AncestorFault::WritableNotSticky =>
                        "can be written by others and is not sticky",
                }
            ),
        }
    }
}

/// The check of one directory above a trusted one, from its owner and
/// mode bits: `uid` the owner, `me` this process's user.
pub(crate) fn ancestor_fault(uid: u32, mode: u32, me: u32) -> Option<AncestorFault> {
    if uid != 0 && uid != me {
        return Some(AncestorFault::OtherOwner);
    }
    let others_write = mode & 0o022 != 0;
    let sticky = mode & 0o1000 != 0;
    (others_write && !sticky).then_some(AncestorFault::WritableNotSticky)
}

#[cfg(unix)]
pub(crate) use unix::*;

#[cfg(unix)]
mod unix {
    use std::os::fd::OwnedFd;
    use std::path::Path;

    use rustix::fs::{CWD, FileType, Mode, OFlags, Stat};

    use super::{Untrusted, ancestor_fault};

    /// This process's user.
    pub(crate) fn me() -> u32 {
        rustix::process::geteuid().as_raw()
    }

    /// Why a file or directory's own owner and mode make it untrusted.
    pub(crate) fn untrusted(stat: &Stat) -> Option<Untrusted> {
        if stat.st_uid != me() {
            return Some(Untrusted::OtherOwner);
        }
        if stat.st_mode & 0o022 != 0 {
            return Some(Untrusted::WritableByOthers);
        }
        None
    }

    /// The directory at `path`, created private (0700, and what is missing
    /// above it) if it is missing, opened without following a link, when
    /// it and every directory above it are trusted.
    pub(crate) fn open_dir(path: &Path) -> Result<OwnedFd, Untrusted> {
        let absolute = std::path::absolute(path).map_err(Untrusted::Unreadable)?;
        check_ancestors(&absolute)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(CWD, &absolute, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => {
                create_private(&absolute)?;
                rustix::fs::openat(CWD, &absolute, flags, Mode::empty())
                    .map_err(|e| Untrusted::Unreadable(e.into()))?
            }
            Err(rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
                return Err(Untrusted::NotADirectory);
            }
            Err(e) => return Err(Untrusted::Unreadable(e.into())),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| Untrusted::Unreadable(e.into()))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
            return Err(Untrusted::NotADirectory);
        }
        if let Some(why) = untrusted(&stat) {
            return Err(why);
        }
        Ok(fd)
    }

    /// Check every directory above `absolute` (and those of its own path
    /// that do not exist yet, from the deepest that does), the way ssh's
    /// `StrictModes` checks a home directory.
    pub(crate) fn check_ancestors(absolute: &Path) -> Result<(), Untrusted> {
        // A link on the path as written leads wherever its owner points it:
        // another user's link (in `/tmp`, say) could send the directory
        // into a tree of this user's that a model writes.
        for dir in absolute.ancestors() {
            if let Ok(stat) = rustix::fs::lstat(dir)
                && FileType::from_raw_mode(stat.st_mode) == FileType::Symlink
                && stat.st_uid != 0
                && stat.st_uid != me()
            {
                return Err(Untrusted::Ancestor {
                    path: dir.to_path_buf(),
                    why: super::AncestorFault::OtherOwner,
                });
            }
        }
        let existing = absolute
            .ancestors()
            .skip(1)
            .find(|dir| dir.exists())
            .unwrap_or(Path::new("/"));
        // The real path: a link above leads where it leads, and that is
        // what must be safe.
        let real = existing.canonicalize().map_err(Untrusted::Unreadable)?;
        for dir in real.ancestors() {
            let stat = rustix::fs::stat(dir).map_err(|e| Untrusted::Unreadable(e.into()))?;
            if let Some(why) = ancestor_fault(stat.st_uid, stat.st_mode, me()) {
                return Err(Untrusted::Ancestor {
                    path: dir.to_path_buf(),
                    why,
                });
            }
        }
        Ok(())
    }

    /// Create `path` and what is missing above it, private to this user.
    fn create_private(path: &Path) -> Result<(), Untrusted> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .map_err(Untrusted::Unreadable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory above the cache is judged by its owner and mode bits,
    /// as ssh's StrictModes judges a home directory.
    #[test]
    fn directories_above_are_judged_by_owner_and_mode() {
        let me = 1000;
        assert_eq!(ancestor_fault(0, 0o755, me), None);
        assert_eq!(ancestor_fault(me, 0o700, me), None);
        assert_eq!(ancestor_fault(0, 0o1777, me), None, "/tmp: sticky");
        assert_eq!(
            ancestor_fault(0, 0o777, me),
            Some(AncestorFault::WritableNotSticky)
        );
        assert_eq!(
            ancestor_fault(me, 0o775, me),
            Some(AncestorFault::WritableNotSticky)
        );
        assert_eq!(
            ancestor_fault(1001, 0o755, me),
            Some(AncestorFault::OtherOwner)
        );
    }

    /// Over a real tree: a directory above the cache that others can write
    /// and that is not sticky makes it untrusted, however deep; made
    /// sticky, it is fine.
    #[cfg(unix)]
    #[test]
    fn a_writable_directory_above_is_found() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let open = base.path().join("open");
        let cache = open.join("deep/cache");
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = check_ancestors(&cache).unwrap_err();
        let (path, why) = match &err {
            Untrusted::Ancestor { path, why } => Some((path.clone(), *why)),
            _ => None,
        }
        .expect("an ancestor");
        assert_eq!(
            (path, why),
            (
                open.canonicalize().unwrap(),
                AncestorFault::WritableNotSticky
            )
        );
        // Not created yet: the deepest directory that exists is judged.
        assert!(check_ancestors(&open.join("new/cache")).is_err());
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        check_ancestors(&cache).unwrap();
        assert!(open_dir(&cache).is_ok());
    }
}
