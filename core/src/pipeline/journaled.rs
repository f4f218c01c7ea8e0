//! The commit of a change the journal records (`docs/contract.md#journal`):
//! one file or several, all or none, recorded before the first file is
//! placed. The order, holding the journal's lock:
//!
//! 1. what a dead writer left is finished or rolled back (`recover.rs`);
//! 2. the `pending` mark names the commit's temp files and the directories
//!    it makes — before a change of several files is staged, right after
//!    the lock for a single write staged before it — so that whatever
//!    stops the writer from here on, the next call cleans up after it;
//! 3. each target is looked at (`place::look`);
//! 4. what each replaces is saved (linked into the journal, or copied);
//!    a file with other hard links is never read, so never saved;
//! 5. the record is appended and synced;
//! 6. the files are placed in order, each with its own last look
//!    (`place::place`, the commit point); a failure puts back what was
//!    placed before it and voids the record;
//! 7. the mark is cleared, and moves the chain's head to the record.

use std::time::{Instant, SystemTime};

use crate::error::ToolError;
use crate::fs::sys::Kind as EntryKind;
use crate::fs::{self, Durability};
use crate::journal::{FileChange, Held, Journal, Kind, Op, Pending, Record, State};
use crate::roots::Roots;

use super::config::Config;
use super::group::{Change, Done, Extra};
use super::place::{failure, look, place};
use super::recover::recover;
use super::restore::{forget_link, restore_into};
use super::stage::{self, Content, Planned, Staged, may_be_swept};

/// Commit `change` as one recorded change. Whatever happens, no temp file
/// is left, and the mark names no commit of this call's.
pub(super) fn commit(
    roots: &Roots,
    journal: &Journal,
    change: Change<'_, '_>,
    started: SystemTime,
    config: &Config,
) -> Result<Done, ToolError> {
    let Change { kind, files, extra } = change;
    // A single write stages before the lock: writers do not wait on each
    // other's data. A change of several files stages under it, marked
    // first, so that a writer killed while staging leaves nothing behind.
    let early = kind == Kind::Write && files.len() == 1;
    let mut staged: Vec<Staged<'_, '_>> = Vec::with_capacity(files.len());
    if early {
        for plan in &files {
            staged.push(stage::stage(*plan, None, Some(journal), started, config)?);
        }
    }
    let staged_at = Instant::now();
    let mut held = match journal.lock() {
        Ok(held) => held,
        Err(e) => {
            stage::unstage(&staged);
            return Err(ToolError::journal_io(&e));
        }
    };
    let mut marked = false;
    // What each file's old content was saved as, for a change that then
    // does not happen (`restore::forget_link`).
    let mut saved: Vec<Option<String>> = Vec::new();
    let result = (|| {
        recover(&held, roots, config)?;
        super::idempotent::check(&held, config)?;
        marked = true;
        if early {
            restage_swept(&mut staged, staged_at, journal, config)?;
            mark(&held, &staged, &[])?;
        } else {
            stage_marked(&held, &files, &mut staged, journal, started, config)?;
        }
        look(&staged)?;
        let record = record(&mut held, kind, &staged, extra, &mut saved, config)?;
        apply(&held, &staged, &record, config)?;
        Ok(record)
    })();
    match result {
        Ok(record) => {
            drop(held);
            if config.durability == Durability::Full {
                for s in &staged {
                    let _ = s.dir.sync();
                }
            }
            Ok(Done {
                record: Some(record),
                modified: staged.iter().map(|s| s.modified).collect(),
            })
        }
        Err(e) => {
            stage::unstage(&staged);
            for (s, digest) in staged.iter().zip(&saved) {
                if let Some(digest) = digest {
                    forget_link(journal, digest, &s.dir, s.name());
                }
            }
            if marked {
                let _ = held.clear_pending();
            }
            Err(e)
        }
    }
}

/// A single write's temp file, staged before the lock, is looked for when
/// the wait was long enough for a sweep beside it to take it, and staged
/// again if it is gone.
fn restage_swept<'r, 'a>(
    staged: &mut Vec<Staged<'r, 'a>>,
    at: Instant,
    journal: &Journal,
    config: &Config,
) -> Result<(), ToolError> {
    if !may_be_swept(at) {
        return Ok(());
    }
    for s in staged.iter_mut() {
        let gone = s.temp.as_ref().is_some_and(|t| s.dir.stat_at(t).is_err());
        if gone {
            let again = stage::stage(s.plan, None, Some(journal), SystemTime::now(), config);
            stage::unstage(std::slice::from_ref(s));
            *s = again?;
        }
    }
    Ok(())
}

/// The seq the next record gets.
fn next_seq(held: &Held<'_>) -> Result<u64, ToolError> {
    Ok(held.seq().map_err(|e| ToolError::journal_io(&e))? + 1)
}

/// Mark the commit of `staged` (and of the directories `more` a change of
/// several files will make) as in progress.
fn mark(held: &Held<'_>, staged: &[Staged<'_, '_>], more: &[String]) -> Result<(), ToolError> {
    let mut dirs: Vec<String> = more.to_vec();
    for s in staged {
        dirs.extend(s.created.iter().map(|d| s.plan.target.shown(d.clone())));
    }
    let pending = Pending {
        seq: next_seq(held)?,
        temps: staged
            .iter()
            .map(|s| (s.plan.target.display.clone(), s.temp.clone()))
            .collect(),
        dirs,
    };
    held.mark_pending(&pending)
        .map_err(|e| ToolError::journal_io(&e))
}

/// Mark a change of several files with the temp files and directories it
/// is about to make, then stage them.
fn stage_marked<'r, 'a>(
    held: &Held<'_>,
    files: &[Planned<'r, 'a>],
    staged: &mut Vec<Staged<'r, 'a>>,
    journal: &Journal,
    started: SystemTime,
    config: &Config,
) -> Result<(), ToolError> {
    let temps: Vec<Option<String>> = files
        .iter()
        .enumerate()
        .map(|(i, plan)| match plan.content {
            Content::Remove => None,
            _ => Some(fs::temps::temp_name(u32::try_from(i).unwrap_or(u32::MAX))),
        })
        .collect();
    let mut dirs: Vec<String> = Vec::new();
    for plan in files {
        for dir in stage::dirs_to_create(plan.target) {
            let shown = plan.target.shown(dir);
            if !dirs.contains(&shown) {
                dirs.push(shown);
            }
        }
    }
    let pending = Pending {
        seq: next_seq(held)?,
        temps: files
            .iter()
            .zip(&temps)
            .map(|(plan, temp)| (plan.target.display.clone(), temp.clone()))
            .collect(),
        dirs,
    };
    held.mark_pending(&pending)
        .map_err(|e| ToolError::journal_io(&e))?;
    for (plan, temp) in files.iter().zip(&temps) {
        staged.push(stage::stage(
            *plan,
            temp.as_deref(),
            Some(journal),
            started,
            config,
        )?);
    }
    Ok(())
}

/// Save what each file replaces, make room, and append the record of
/// the change: the commit point of the group is behind once it is synced.
fn record(
    held: &mut Held<'_>,
    kind: Kind,
    staged: &[Staged<'_, '_>],
    extra: Extra,
    saved: &mut Vec<Option<String>>,
    config: &Config,
) -> Result<Record, ToolError> {
    let sync = config.durability != Durability::None;
    let marked_seq = next_seq(held)?;
    let key = held
        .journal()
        .key()
        .map_err(|e| ToolError::journal_io(&e))?
        .clone();
    let key = &key;
    let mut files = Vec::with_capacity(staged.len());
    let mut added = 0;
    for s in staged {
        let (old, bytes, unsaved) = save_old(&*held, s, sync)?;
        saved.push(old.as_ref().filter(|_| !unsaved).map(|o| o.digest.clone()));
        added += bytes;
        let op = match (&old, s.temp.is_some()) {
            (None, _) => Op::Create,
            (Some(_), false) => Op::Delete,
            (Some(_), true) => Op::Update,
        };
        files.push(FileChange {
            path: s.plan.target.display.clone(),
            op,
            old,
            new: s.new_state(key),
            dirs: s
                .created
                .first()
                .map(|d| s.plan.target.shown(d.clone()))
                .into_iter()
                .collect(),
            shared: s.plan.shared,
            unsaved,
        });
    }
    super::gc::make_room(held, added, config).map_err(|e| ToolError::journal_io(&e))?;
    if next_seq(held)? != marked_seq {
        // The bounds dropped records and said so in a record of their own.
        mark(held, staged, &[])?;
    }
    let mut record = Record::new(kind);
    record.files = files;
    record.bytes = added;
    record.reverts = extra.reverts;
    record.to = extra.to;
    record.undoes = extra.undoes;
    record.by = config.by;
    record.idem = config.idempotency.clone();
    held.append(record, sync)
        .map_err(|e| ToolError::journal_io(&e))
}

/// Place every file in order. A failure puts back the files placed
/// before it, voids the record, and clears the mark: all or nothing.
fn apply(
    held: &Held<'_>,
    staged: &[Staged<'_, '_>],
    record: &Record,
    config: &Config,
) -> Result<(), ToolError> {
    for (i, s) in staged.iter().enumerate() {
        if let Err(e) = place(s) {
            put_back(held, &staged[..i], record);
            let mut void = Record::new(Kind::Void);
            void.of = Some(record.seq);
            void.by = config.by;
            let _ = held.append(void, config.durability != Durability::None);
            let _ = held.clear_pending();
            return Err(failure(&s.plan, &e));
        }
    }
    // A mark left here names a commit whose files are all placed: the
    // next call's recovery finds it done and clears it.
    let _ = held.clear_pending();
    Ok(())
}

/// Save what `s`'s target holds now and return its state, the bytes the
/// journal grew by, and whether it went unsaved: the content the call
/// read, if the file is still that one; else what is there now, read
/// again (another writer replaced it meanwhile). A file with other hard
/// links — which may be a file outside the root's — is never read: its
/// old content is not saved, and the change cannot be reverted.
fn save_old(
    held: &Held<'_>,
    s: &Staged<'_, '_>,
    sync: bool,
) -> Result<(Option<State>, u64, bool), ToolError> {
    let name = s.name();
    let io = |e: &std::io::Error| ToolError::journal_io(e);
    let now = match s.dir.stat_at(name) {
        Ok(stat) if stat.kind == EntryKind::File => stat,
        // A link the change removes (only a removal expects one).
        Ok(stat) if stat.kind == EntryKind::Symlink && s.temp.is_none() => {
            return save_link(held, s, &stat, sync);
        }
        Ok(stat) if stat.kind == EntryKind::Directory => return Err(ToolError::became_directory()),
        Ok(_) => return Err(ToolError::not_regular_file()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, 0, false)),
        Err(e) => return Err(failure(&s.plan, &e)),
    };
    let unsaved = || {
        let state = State {
            digest: String::new(),
            size: 0,
            mtime_ms: None,
            link: false,
        };
        Ok((Some(state), 0, true))
    };
    if s.plan.shared || now.link_count > 1 {
        return unsaved();
    }
    let as_read = s
        .plan
        .seen
        .filter(|seen| seen.size == now.len && seen.modified == now.modified)
        .and_then(|seen| seen.bytes);
    let read;
    let bytes = match as_read {
        Some(bytes) => bytes,
        None => {
            let file = s.dir.open_read_at(name).map_err(|e| io(&e))?;
            // The file opened, not the name looked at: a hard link put in
            // its place between the two is not read either.
            if file.stat().map_err(|e| io(&e))?.link_count > 1 {
                return unsaved();
            }
            read = file.read_all(now.len).map_err(|e| io(&e))?;
            &read
        }
    };
    let digest = held.journal().key().map_err(|e| io(&e))?.digest(bytes);
    let added = held
        .save(&s.dir, name, digest, bytes.len() as u64, Some(bytes), sync)
        .map_err(|e| io(&e))?;
    let state = State {
        digest: digest.hex(),
        size: bytes.len() as u64,
        mtime_ms: now.modified.map(crate::journal::ms),
        link: false,
    };
    Ok((Some(state), added, false))
}

/// Save the link `s` removes: its target's text, as a copy.
fn save_link(
    held: &Held<'_>,
    s: &Staged<'_, '_>,
    now: &fs::sys::Stat,
    sync: bool,
) -> Result<(Option<State>, u64, bool), ToolError> {
    let io = |e: &std::io::Error| ToolError::journal_io(e);
    let target = s
        .dir
        .read_link_at(s.name())
        .map_err(|e| failure(&s.plan, &e))?
        .ok_or_else(ToolError::not_regular_file)?;
    let bytes = target.as_bytes();
    let digest = held.journal().key().map_err(|e| io(&e))?.digest(bytes);
    let added = held.save_copy(digest, bytes, sync).map_err(|e| io(&e))?;
    let state = State {
        digest: digest.hex(),
        size: bytes.len() as u64,
        mtime_ms: now.modified.map(crate::journal::ms),
        link: true,
    };
    Ok((Some(state), added, false))
}

/// Put back the files of `record` that `done` placed: the saved content
/// copied back, a created file removed. A file whose old content was not
/// saved keeps the new one.
fn put_back(held: &Held<'_>, done: &[Staged<'_, '_>], record: &Record) {
    for (s, file) in done.iter().zip(&record.files).rev() {
        let name = s.name();
        match &file.old {
            None => {
                let _ = s.dir.unlink_at(name);
            }
            Some(_) if file.unsaved => {}
            Some(old) => {
                let _ = restore_into(held.journal(), old, &s.dir, name);
            }
        }
    }
}

/// The directories `files`' changes created, for a revert to remove when
/// they are empty, innermost first: each one recorded, and those between
/// it and its file.
pub(super) fn created_dirs<'a>(files: impl Iterator<Item = &'a FileChange>) -> Vec<String> {
    let mut dirs = std::collections::BTreeSet::new();
    for file in files {
        for outer in &file.dirs {
            let inside = |d: &str| {
                d == outer
                    || d.strip_prefix(outer.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            };
            let mut dir = file.path.as_str();
            while let Some((parent, _)) = dir.rsplit_once('/') {
                if !inside(parent) {
                    break;
                }
                dirs.insert(parent.to_owned());
                dir = parent;
            }
        }
    }
    let mut dirs: Vec<String> = dirs.into_iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    dirs
}
