//! Stage 6a, **stage**: each file's new content written to a synced temp
//! file beside its target, missing parents created, before the commit
//! (`commit.rs`) puts it in place. On failure nothing staged is left.

use std::io;
use std::time::SystemTime;

use crate::error::ToolError;
use crate::fs::{self, Dir, Unchanged};
use crate::journal::{Journal, Key, State};

use super::config::Config;
use super::target::Target;

/// A directory a file lives in: the root itself, or one opened below it.
pub(super) type ParentDir<'r> = fs::Walked<'r>;

/// The directory `target`'s file is in, reached by the walk every read
/// goes through (`fs::walk`): the file kept and the file replaced are the
/// ones the resolution checked, never one a swapped link leads to.
pub(super) fn parent_of<'r>(target: &Target<'r>) -> io::Result<ParentDir<'r>> {
    fs::walk(target.root, target.resolved.parent())
}

/// What a file of a change will hold.
#[derive(Debug, Clone, Copy)]
pub(super) enum Content<'a> {
    /// These bytes.
    Bytes(&'a [u8]),
    /// A content the journal saved (a revert), with its state.
    Saved(&'a State),
    /// Nothing: the file goes.
    Remove,
}

/// The content a file had when the call read it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Seen<'a> {
    /// Its bytes, unless the call kept none (other hard links, a change of
    /// several files).
    pub(super) bytes: Option<&'a [u8]>,
    /// Its size.
    pub(super) size: u64,
    /// Its modification time.
    pub(super) modified: Option<SystemTime>,
}

/// One file of a change, as the stages before the commit left it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Planned<'r, 'a> {
    /// Where it goes.
    pub(super) target: &'a Target<'r>,
    /// What it will hold.
    pub(super) content: Content<'a>,
    /// What the target must still be at the commit (a locked or
    /// create-only write, a revert, a patch's own files).
    pub(super) unchanged: Option<Unchanged>,
    /// The file as the call read it, if there was one.
    pub(super) seen: Option<Seen<'a>>,
    /// It had other hard links, so the call never read it.
    pub(super) shared: bool,
}

/// One file of a change, staged.
#[derive(Debug)]
pub(super) struct Staged<'r, 'a> {
    /// What the stages planned.
    pub(super) plan: Planned<'r, 'a>,
    /// Its directory.
    pub(super) dir: ParentDir<'r>,
    /// The temp file holding its new content; `None`: the file goes.
    pub(super) temp: Option<String>,
    /// The directories staging created, root-relative, outermost first.
    pub(super) created: Vec<String>,
    /// The temp file's modification time, which the file keeps.
    pub(super) modified: Option<SystemTime>,
}

impl Staged<'_, '_> {
    /// The file's name in its directory.
    pub(super) fn name(&self) -> &str {
        self.plan.target.resolved.file_name()
    }

    /// The new content's state, for the record, its digest keyed with
    /// `key`; `None`: the file goes.
    pub(super) fn new_state(&self, key: &Key) -> Option<State> {
        match self.plan.content {
            Content::Bytes(bytes) => Some(State {
                digest: key.digest(bytes).hex(),
                size: bytes.len() as u64,
                mtime_ms: self.modified.map(crate::journal::ms),
                link: false,
            }),
            Content::Saved(state) => Some(state.clone()),
            Content::Remove => None,
        }
    }
}

/// The directories a write to `target` would create, root-relative,
/// outermost first: those missing when the path was walked.
pub(super) fn dirs_to_create(target: &Target<'_>) -> Vec<String> {
    let resolved = &target.resolved;
    (resolved.existing_dirs..resolved.parent().len())
        .map(|depth| resolved.names[..=depth].join("/"))
        .collect()
}

/// Stage `plan`: parents created, the tool's stale temp files in the
/// directory swept (as a plain write sweeps them), its content in a synced
/// temp file named `temp` (or a fresh name). On failure nothing is left.
pub(super) fn stage<'r, 'a>(
    plan: Planned<'r, 'a>,
    temp: Option<&str>,
    journal: Option<&Journal>,
    started: SystemTime,
    config: &Config,
) -> Result<Staged<'r, 'a>, ToolError> {
    let target = plan.target;
    let created = match plan.content {
        Content::Remove => Vec::new(),
        _ => fs::create_parents(target.root, &target.resolved).map_err(|e| {
            super::target::refine(target, fs::io_error(&e, "creating the parent directory"))
        })?,
    };
    let parent = target.resolved.parent().join("/");
    let sweep = config.sweep_temps && created.last() != Some(&parent);
    let staged = parent_of(target).and_then(|dir| {
        if sweep && !matches!(plan.content, Content::Remove) {
            fs::temps::remove_stale(&dir, started);
        }
        let written = match plan.content {
            Content::Remove => None,
            Content::Bytes(bytes) => Some(fs::stage(&dir, temp, bytes, config.durability)?),
            Content::Saved(state) => Some(stage_saved(journal, state, &dir, temp)?),
        };
        Ok((dir, written))
    });
    match staged {
        Ok((dir, written)) => Ok(Staged {
            plan,
            dir,
            temp: written.as_ref().map(|(name, _)| name.clone()),
            created,
            modified: written.and_then(|(_, stat)| stat.modified),
        }),
        Err(e) => {
            fs::remove_dirs(target.root, &created);
            Err(super::target::refine(
                target,
                fs::io_error(&e, "writing to file"),
            ))
        }
    }
}

/// A temp file in `dir` holding a copy of the saved content `digest`,
/// checked against its digest. A copy, not a link to the saved file: a
/// file restored as a second name of the journal's copy would count as a
/// file with other hard links in every later write (its content kept out
/// of the envelope, its format not kept), and a program writing it in
/// place would change the journal's copy.
///
/// A link's state is staged as a temp link to the saved target, placed
/// as a file is.
fn stage_saved(
    journal: Option<&Journal>,
    state: &State,
    dir: &Dir,
    temp: Option<&str>,
) -> io::Result<(String, fs::sys::Stat)> {
    let journal = journal.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    let bytes = journal.object(&state.digest).map_err(|e| match e {
        crate::journal::ObjectError::Io(e) => e,
        _ => io::Error::from(io::ErrorKind::InvalidData),
    })?;
    if state.link {
        let target = std::str::from_utf8(&bytes).map_err(|_| io::ErrorKind::InvalidData)?;
        return fs::stage_link(dir, temp, target);
    }
    fs::stage(dir, temp, &bytes, fs::Durability::Full)
}

/// How long a temp file staged before the journal's lock may wait for it
/// before it is looked for again: a sweep beside it takes the tool's temp
/// files a second old (`fs::temps::STALE_TEMP_AGE`).
const RESTAGE_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

/// Whether a file staged at `at` may have lost its temp file to a sweep.
pub(super) fn may_be_swept(at: std::time::Instant) -> bool {
    at.elapsed() > RESTAGE_AFTER
}

/// Remove what staging left: temp files, directories it created.
pub(super) fn unstage(staged: &[Staged<'_, '_>]) {
    for s in staged.iter().rev() {
        if let Some(temp) = &s.temp {
            let _ = s.dir.unlink_at(temp);
        }
        fs::remove_dirs(s.plan.target.root, &s.created);
    }
}
