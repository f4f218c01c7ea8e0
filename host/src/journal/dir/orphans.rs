//! Journals whose root is gone, swept from the base that holds them
//! (`docs/contract.md#journal`): a platform that makes a directory per
//! sandbox must not keep a journal per sandbox.

use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags};

use super::super::{JournalChoice, is_key};
use super::{Identity, birth, clear, names, open_private, read_note, same};
use crate::trust;

/// How long a journal whose root is gone stays, from its last change: a
/// process may still be finishing with it.
const ORPHAN_GRACE: Duration = Duration::from_secs(10 * 60);
/// How often a process sweeps the base directory for orphans: the stamp
/// file's age.
const SWEEP_EVERY: Duration = Duration::from_secs(60 * 60);
/// The stamp file of the last sweep, in the base directory.
const SWEPT: &str = ".swept";
/// Remove the journal `name` of `base`: its contents ([`clear`]) and the
/// directory.
fn remove_journal(base: &OwnedFd, name: &str) -> io::Result<()> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let dir = rustix::fs::openat(base, name, flags, Mode::empty())?;
    clear(&dir)?;
    rustix::fs::unlinkat(base, name, AtFlags::REMOVEDIR)?;
    Ok(())
}

/// Remove the journals below `choice`'s base whose root is gone — deleted
/// (its nearest existing directory is on the device the root was on, so
/// the root was not merely on a disk that is not mounted now), or made
/// again (another directory at its path) — and which no one wrote for
/// [`ORPHAN_GRACE`]. At most once per [`SWEEP_EVERY`] per base, best
/// effort: a platform that makes a directory per sandbox must not keep a
/// journal per sandbox. Returns how many it removed.
pub(crate) fn sweep_orphans(choice: &JournalChoice) -> usize {
    let Ok(Some(base)) = choice.base() else {
        return 0;
    };
    let Ok(base_fd) = trust::open_dir(&base) else {
        return 0;
    };
    if !due(&base_fd) {
        return 0;
    }
    let mut removed = 0;
    for name in names(&base_fd).into_iter().filter(|n| is_key(n)) {
        let Ok(dir) = open_private(&base_fd, &name) else {
            continue;
        };
        let Some((root, Some(id))) = read_note(&dir) else {
            continue;
        };
        if orphaned(&root, id) && idle(&dir) {
            drop(dir);
            removed += usize::from(remove_journal(&base_fd, &name).is_ok());
        }
    }
    removed
}

/// Whether the base's last sweep is old enough for another; marks this
/// one.
fn due(base: &OwnedFd) -> bool {
    let fresh = rustix::fs::statat(base, SWEPT, AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .and_then(|s| modified(&s))
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age < SWEEP_EVERY);
    if fresh {
        return false;
    }
    let _ = rustix::fs::unlinkat(base, SWEPT, AtFlags::empty());
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(base, SWEPT, flags, Mode::from_raw_mode(0o600)).is_ok()
}

fn modified(stat: &rustix::fs::Stat) -> Option<SystemTime> {
    let secs = u64::try_from(stat.st_mtime).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// Whether the root a journal names is gone for good.
fn orphaned(root: &Path, id: Identity) -> bool {
    match rustix::fs::stat(root) {
        Ok(stat) => {
            let (sec, nsec) = birth(rustix::fs::statx(
                rustix::fs::CWD,
                root,
                AtFlags::empty(),
                StatxFlags::BTIME,
            ));
            !same((stat.st_dev, stat.st_ino, sec, nsec), id)
        }
        Err(_) => root
            .ancestors()
            .skip(1)
            .find_map(|dir| rustix::fs::stat(dir).ok())
            .is_some_and(|stat| stat.st_dev == id.0),
    }
}

/// Whether no one wrote the journal for [`ORPHAN_GRACE`].
fn idle(dir: &OwnedFd) -> bool {
    ["log", "pending", "."].iter().all(|name| {
        rustix::fs::statat(dir, *name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .and_then(|s| modified(&s))
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_none_or(|age| age > ORPHAN_GRACE)
    })
}
