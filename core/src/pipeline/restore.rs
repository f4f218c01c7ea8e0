//! Putting back what the journal saved: for a commit that failed half
//! way, and for the recovery of a dead writer's commit.

use std::io;

use crate::fs::sys::Kind as EntryKind;
use crate::fs::{self, Dir};
use crate::journal::{Journal, Key, ObjectError, State};

/// Put the saved content `state` names at `name` in `dir`, through a
/// temp file (a temp link, for a link's state).
pub(super) fn restore_into(
    journal: &Journal,
    state: &State,
    dir: &Dir,
    name: &str,
) -> io::Result<()> {
    let bytes = journal.object(&state.digest).map_err(|e| match e {
        ObjectError::Io(e) => e,
        _ => io::Error::from(io::ErrorKind::InvalidData),
    })?;
    let (temp, _) = if state.link {
        let target = std::str::from_utf8(&bytes).map_err(|_| io::ErrorKind::InvalidData)?;
        fs::stage_link(dir, None, target)?
    } else {
        fs::stage(dir, None, &bytes, fs::Durability::Full)?
    };
    dir.rename_at(&temp, name).inspect_err(|_| {
        let _ = dir.unlink_at(&temp);
    })
}

/// The bytes of the file `name` in `dir`, if it is a readable regular
/// file. Only for decisions of the recovery, never shown: a file the
/// journal saved by a link has a second name, in `objects/`.
fn current(dir: &Dir, name: &str) -> Option<Vec<u8>> {
    let file = dir.open_read_at(name).ok()?;
    let stat = file.stat().ok()?;
    if stat.kind != EntryKind::File {
        return None;
    }
    file.read_all(stat.len).ok()
}

/// Whether the file `name` in `dir` holds the content `digest` names.
pub(super) fn holds(key: &Key, dir: &Dir, name: &str, digest: &str) -> bool {
    current(dir, name).is_some_and(|bytes| key.matches(digest, &bytes))
}

/// Whether `name` in `dir` is what `state` says: a file holding its
/// content, or a link to its target.
pub(super) fn holds_state(key: &Key, dir: &Dir, name: &str, state: &State) -> bool {
    if !state.link {
        return holds(key, dir, name, &state.digest);
    }
    holds_link(key, dir, name, &state.digest)
}

/// Whether `name` in `dir` is a symbolic link to the text `digest` names.
pub(super) fn holds_link(key: &Key, dir: &Dir, name: &str, digest: &str) -> bool {
    let is_link = dir
        .stat_at(name)
        .is_ok_and(|s| s.kind == EntryKind::Symlink);
    is_link
        && dir
            .read_link_at(name)
            .ok()
            .flatten()
            .is_some_and(|target| key.matches(digest, target.as_bytes()))
}

/// After a change that did not happen: if the journal's saved content
/// `digest` is the file `name` of `dir` itself — linked into the journal by
/// that change, which then never replaced it —, drop the journal's name
/// for it. Left, it would give the user's file a second name, and every
/// later write would take it for a file with other hard links. Only that
/// change can have made the link (an object that existed before is never
/// linked again), and no record after it refers to it.
pub(super) fn forget_link(journal: &Journal, digest: &str, dir: &Dir, name: &str) {
    let object = format!("{}/{digest}", crate::journal::OBJECTS);
    let same = journal
        .dir()
        .identity_at(&object)
        .is_ok_and(|id| dir.identity_at(name).is_ok_and(|file| file == id));
    if same {
        let _ = journal.dir().unlink_at(&object);
    }
}

/// [`forget_link`] for a file whose saved digest is not known (a change
/// that died before its record): its digest is taken from what it holds.
pub(super) fn forget_link_of(journal: &Journal, dir: &Dir, name: &str) {
    let linked = dir
        .stat_at(name)
        .is_ok_and(|s| s.kind == EntryKind::File && s.link_count > 1);
    if linked
        && let Ok(key) = journal.key()
        && let Some(bytes) = current(dir, name)
    {
        forget_link(journal, &key.digest(&bytes).hex(), dir, name);
    }
}
