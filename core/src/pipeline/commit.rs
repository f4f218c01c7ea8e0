//! Stage 6b, **commit**: the one place where any operation — a write, an
//! edit, a patch, a `write_many`, a revert — changes files
//! (`docs/contract.md#writing`, `#journal`).
//!
//! Every file of a change is staged (`stage.rs`), then put in place by
//! `place.rs`: the target looked at once more just before (a locked write's
//! values), a create linked to its name so that it fails when a file got
//! there first (`create_only`), anything else renamed. That one function
//! is every operation's commit point, journal or not, so the guarantees
//! of a plain write hold for all of them.
//!
//! With a journal (`docs/contract.md#journal`), holding its lock: a commit
//! a dead writer left is finished or rolled back (`recover.rs`); a change
//! of several files is marked and staged (a single write is staged before
//! the lock, so that writers do not wait on each other's data); each
//! target is looked at (an early refusal saves the record); what each
//! replaces is saved; the record is appended and synced; then the files
//! are placed in order, each with its own last look, and a failure puts
//! back what was placed before it and voids the record.

use std::time::SystemTime;

use crate::error::ToolError;
use crate::fs;
use crate::roots::Roots;

use super::config::Config;
use super::group::{Change, Done};
use super::journaled;
use super::place::{failure, place};
use super::stage::{self, Planned};
use super::target::{Target, created_dir};

/// What the commit left on disk for a single write.
#[derive(Debug)]
pub(super) struct Committed {
    /// The new file's modification time, as written.
    pub(super) modified: Option<SystemTime>,
    /// The outermost directory the write created, as shown.
    pub(super) created_dir: Option<String>,
}

/// Commit `change`: all its files or none. `started` is when the call
/// began (temp files older than it are swept).
pub(super) fn commit(
    roots: &Roots,
    change: Change<'_, '_>,
    started: SystemTime,
    config: &Config,
) -> Result<Done, ToolError> {
    match config.journal.as_deref() {
        None => plain(change.files, started, config),
        Some(journal) => journaled::commit(roots, journal, change, started, config),
    }
}

/// Without a journal: one file (every change of several needs the
/// journal, and is refused before this), staged and placed. A temp file
/// a sweep took meanwhile (its writer slower than the sweep's margin) is
/// staged again.
fn plain(
    files: Vec<Planned<'_, '_>>,
    started: SystemTime,
    config: &Config,
) -> Result<Done, ToolError> {
    let mut modified = Vec::with_capacity(files.len());
    for plan in files {
        let mut attempt = 0;
        let staged = loop {
            let staged = stage::stage(plan, None, None, started, config)?;
            match place(&staged) {
                Ok(()) => break staged,
                Err(e) => {
                    stage::unstage(std::slice::from_ref(&staged));
                    attempt += 1;
                    let swept = e.kind() == std::io::ErrorKind::NotFound && staged.temp.is_some();
                    if !swept || attempt >= fs::RENAME_ATTEMPTS {
                        return Err(failure(&staged.plan, &e));
                    }
                }
            }
        };
        if config.durability == fs::Durability::Full {
            // The file is synced already; a platform that cannot sync a
            // directory (some WASI hosts) loses only the rename's
            // durability.
            let _ = staged.dir.sync();
        }
        modified.push(staged.modified);
    }
    Ok(Done {
        record: None,
        modified,
    })
}

/// A single write's commit as the envelope reports it.
pub(super) fn committed(target: &Target<'_>, done: &Done) -> Committed {
    Committed {
        modified: done.modified.first().copied().flatten(),
        created_dir: created_dir(target),
    }
}
