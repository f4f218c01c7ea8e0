//! The mode rule (`docs/contract.md#writing`): a file the tool replaces
//! keeps its permission bits and, where this process may set them, its
//! owner and group; it never gains privilege.
//!
//! WASI has no chmod or chown, so the host applies the rule at the commit
//! point (`crate::commit_gate`): before the guest's rename puts its temp
//! file in place, the temp file is given what the file it replaces has —
//! so no instant exists where the new file has another mode. The rule:
//!
//! - **Owner and group** are kept where this process may give them (as
//!   root; a group the user is in); otherwise the new file is this
//!   process's, as any new file is.
//! - **Permission bits** are kept.
//! - **Set-user-ID and set-group-ID** are kept only when the new file has
//!   the old one's owner and group: a file of another user's, replaced by
//!   a process that cannot give it back to them, loses them, so that a
//!   program planted by one user never becomes another's (root's) setuid
//!   program.
//!
//! Only the tool's own temp file is changed: opened through its directory
//! without following a link, a regular file with one name, owned by this
//! process's user — never a file someone put at that name.
//!
//! A file a revert makes again (one a change removed) has no file to take
//! a mode from: it gets the permission bits the journal's saved copy has,
//! without set-user-ID, set-group-ID or sticky bits ([`after_revert`]).

use std::os::fd::BorrowedFd;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::Root;

/// The bits a file keeps only with its owner and group.
const PRIVILEGE: u32 = 0o6000;

/// Give the temp file `temp` in `temp_dir` the owner, group and mode of
/// the file `target` in `target_dir` that it is about to replace, as the
/// rule says. `journal_links` are the files (device, inode) the journal
/// linked in this call: their name there is not another name of theirs. Best effort: where it cannot, the new file keeps what a new
/// file has, which never adds privilege.
pub(crate) fn carry_over(
    temp_dir: BorrowedFd<'_>,
    temp: &str,
    target_dir: BorrowedFd<'_>,
    target: &str,
    journal_links: &[(u64, u64)],
) {
    let Ok(old) = rustix::fs::statat(target_dir, target, AtFlags::SYMLINK_NOFOLLOW) else {
        return;
    };
    if FileType::from_raw_mode(old.st_mode) != FileType::RegularFile {
        return;
    }
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let Ok(fd) = rustix::fs::openat(temp_dir, temp, flags, Mode::empty()) else {
        return;
    };
    let Ok(new) = rustix::fs::fstat(&fd) else {
        return;
    };
    let ours = FileType::from_raw_mode(new.st_mode) == FileType::RegularFile
        && new.st_nlink == 1
        && new.st_uid == rustix::process::geteuid().as_raw();
    if !ours {
        return;
    }
    let (mut uid, mut gid) = (new.st_uid, new.st_gid);
    if (uid, gid) != (old.st_uid, old.st_gid) {
        let owner = Some(rustix::process::Uid::from_raw(old.st_uid));
        let group = Some(rustix::process::Gid::from_raw(old.st_gid));
        if rustix::fs::fchown(&fd, owner, group).is_ok() {
            (uid, gid) = (old.st_uid, old.st_gid);
        } else if rustix::fs::fchown(&fd, None, group).is_ok() {
            gid = old.st_gid;
        }
    }
    let mut mode = old.st_mode & 0o7777;
    // A file with other names may be one of a file outside the root (a
    // hard link planted there): the write splits it off, and a content of
    // the model's must not inherit a privilege granted to that file.
    let saved = u64::from(journal_links.contains(&(old.st_dev, old.st_ino)));
    #[allow(
        clippy::useless_conversion,
        reason = "the link count is 32 bits on some platforms"
    )]
    let other_names = u64::from(old.st_nlink).saturating_sub(1 + saved);
    if (uid, gid) != (old.st_uid, old.st_gid) || other_names > 0 {
        mode &= !PRIVILEGE;
    }
    // A change of owner clears the privilege bits itself: set them last.
    if rustix::fs::fstat(&fd).is_ok_and(|now| now.st_mode & 0o7777 != mode) {
        let _ = rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode));
    }
}

/// After a revert (`change_id`): give each file it made again the
/// permission bits of the journal's saved copy of its content, without
/// the bits that need an owner (set-user-ID, set-group-ID) or the sticky
/// bit. Files it replaced took their mode at the commit point.
pub(crate) fn after_revert(root: &Root, change_id: &str) {
    let Some(journal) = root.journal_dir() else {
        return;
    };
    let Some(record) = journal.last_record() else {
        return;
    };
    if record["id"] != change_id || record["kind"] != "revert" {
        return;
    }
    for file in record["files"].as_array().into_iter().flatten() {
        // Made again: there was no file when the revert was made.
        if !file["old"].is_null() {
            continue;
        }
        let (Some(path), Some(digest)) = (file["path"].as_str(), file["new"]["digest"].as_str())
        else {
            continue;
        };
        if let Some(mode) = journal.object_mode(digest) {
            set_mode(root, path, mode & 0o777);
        }
    }
}

/// Set the mode of the regular file `path` names under `root`, through
/// the root's capability (cap-std keeps every step inside it).
fn set_mode(root: &Root, path: &str, mode: u32) {
    use cap_std::fs::{Permissions, PermissionsExt};
    let Some((dir, rel)) = root.locate(path) else {
        return;
    };
    if dir.symlink_metadata(&rel).is_ok_and(|m| m.is_file()) {
        let _ = dir.set_permissions(&rel, Permissions::from_mode(mode));
    }
}
