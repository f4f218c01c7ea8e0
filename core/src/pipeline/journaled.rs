//! The commit of a journaled change (`docs/contract.md#journal`): one
//! file or several, all or none, recorded before the first rename.
//!
//! Every file's new content is staged first (a synced temp file beside it,
//! or for a revert a copy of the saved content), with no lock held.
//! Then, holding the journal's lock: what is left of a commit a dead
//! writer left is finished or rolled back; each target is looked at once
//! more (a locked write's values, `create_only`); the content each change
//! replaces is saved (linked into the journal, or copied); a `pending`
//! mark names the temp files; the record is appended and synced — the
//! commit point of the group —; the temp files are renamed over their
//! targets in order; the mark is removed. A rename that fails puts back
//! the files renamed before it and voids the record. A writer that dies
//! after the record leaves the mark: the next journaled call renames the
//! rest (all new) — unless a sweep of leftovers took one of the temp files
//! meanwhile, when it puts back what was renamed and voids the record (all
//! old); one that dies before it leaves a mark without a record: its temp
//! files are removed (all old).

use std::collections::BTreeSet;
use std::io;
use std::time::SystemTime;

use write_tool_wire::request::ToolName;

use crate::error::ToolError;
use crate::fs::sys::Kind as EntryKind;
use crate::fs::{self, Dir, Durability, Unchanged};
use crate::journal::{Digest, FileChange, Held, Journal, Kind, Op, Pending, Record, State};
use crate::roots::Roots;

use super::config::Config;
use super::target::{self, Target};

/// A directory a file lives in: the root itself, or one opened below it.
#[derive(Debug)]
pub(super) enum ParentDir<'r> {
    /// The root.
    Root(&'r Dir),
    /// A directory below it.
    Opened(Dir),
}

impl std::ops::Deref for ParentDir<'_> {
    type Target = Dir;
    fn deref(&self) -> &Dir {
        match self {
            ParentDir::Root(dir) => dir,
            ParentDir::Opened(dir) => dir,
        }
    }
}

/// The directory `target`'s file is in.
pub(super) fn parent_of<'r>(target: &Target<'r>) -> io::Result<ParentDir<'r>> {
    let parent = target.resolved.parent().join("/");
    Ok(if parent.is_empty() {
        ParentDir::Root(target.root)
    } else {
        ParentDir::Opened(target.root.open_dir_at(&parent)?)
    })
}

/// The content a file had when the call read it.
#[derive(Debug)]
pub(super) struct Seen<'a> {
    /// Its bytes, unless it was not read (other hard links).
    pub(super) bytes: Option<&'a [u8]>,
    /// Its size.
    pub(super) size: u64,
    /// Its modification time.
    pub(super) modified: Option<SystemTime>,
}

/// One file of a change, staged.
#[derive(Debug)]
pub(super) struct Staged<'r, 'a> {
    /// Where it goes.
    pub(super) target: &'a Target<'r>,
    /// Its directory.
    pub(super) dir: ParentDir<'r>,
    /// The temp file holding its new content; `None`: the file goes.
    pub(super) temp: Option<String>,
    /// The new content's state; `None`: the file goes.
    pub(super) new: Option<State>,
    /// The directories staging created, root-relative, outermost first.
    pub(super) created: Vec<String>,
    /// What the target must still be at the commit.
    pub(super) unchanged: Option<Unchanged>,
    /// The file as the call read it, if there was one.
    pub(super) seen: Option<Seen<'a>>,
    /// It had other hard links.
    pub(super) shared: bool,
}

/// Stage `bytes` for `target`: parents created, the tool's stale temp
/// files swept as a plain write sweeps them, a synced temp file beside it.
/// On failure, nothing is left.
pub(super) fn stage<'r>(
    target: &Target<'r>,
    bytes: &[u8],
    started: SystemTime,
    config: &Config,
) -> Result<(ParentDir<'r>, String, Vec<String>, fs::sys::Stat), ToolError> {
    let created = fs::create_parents(target.root, &target.resolved)
        .map_err(|e| fs::io_error(&e, "creating the parent directory"))?;
    let parent = target.resolved.parent().join("/");
    let sweep = config.sweep_temps && created.last() != Some(&parent);
    let staged = parent_of(target).and_then(|dir| {
        if sweep {
            fs::temps::remove_stale(&dir, started);
        }
        let (temp, stat) = fs::stage(&dir, bytes, config.durability)?;
        Ok((dir, temp, stat))
    });
    match staged {
        Ok((dir, temp, stat)) => Ok((dir, temp, created, stat)),
        Err(e) => {
            fs::remove_dirs(target.root, &created);
            Err(fs::io_error(&e, "writing to file"))
        }
    }
}

/// Remove what staging left: temp files, directories it created.
pub(super) fn unstage(staged: &[Staged<'_, '_>]) {
    for s in staged.iter().rev() {
        if let Some(temp) = &s.temp {
            let _ = s.dir.unlink_at(temp);
        }
        fs::remove_dirs(s.target.root, &s.created);
    }
}

/// What a journaled commit adds to its record.
#[derive(Debug, Default)]
pub(super) struct Extra {
    /// A revert: the change it undid.
    pub(super) reverts: Option<String>,
    /// A revert to a checkpoint: its name.
    pub(super) to: Option<String>,
}

/// Commit `staged` as one change of `kind`, recorded in `journal`.
/// Whatever happens, no temp file is left.
pub(super) fn commit(
    roots: &Roots,
    journal: &Journal,
    kind: Kind,
    staged: Vec<Staged<'_, '_>>,
    extra: Extra,
    config: &Config,
) -> Result<Record, ToolError> {
    let result = commit_held(roots, journal, kind, &staged, extra, config);
    if result.is_err() {
        unstage(&staged);
    }
    result
}

fn commit_held(
    roots: &Roots,
    journal: &Journal,
    kind: Kind,
    staged: &[Staged<'_, '_>],
    extra: Extra,
    config: &Config,
) -> Result<Record, ToolError> {
    let mut held = journal.lock().map_err(|e| journal_error(&e))?;
    recover(&held, roots, config);
    let sync = config.durability != Durability::None;
    // Each target as the change expects it.
    for s in staged {
        if let Some(expected) = s.unchanged {
            let name = s.target.resolved.file_name();
            fs::check_unchanged(&s.dir, name, expected).map_err(|e| {
                if fs::is_target_changed(&e) {
                    match expected {
                        Unchanged::Missing => ToolError::exists(&s.target.display, None),
                        Unchanged::File { .. } => ToolError::changed(&s.target.display),
                    }
                } else {
                    fs::io_error(&e, "writing to file")
                }
            })?;
        }
    }
    // The content each replaces, saved.
    let mut files = Vec::with_capacity(staged.len());
    let mut added = 0;
    for s in staged {
        let (old, bytes) = save_old(&held, s, sync).map_err(|e| journal_error(&e))?;
        added += bytes;
        let op = match (&old, &s.new) {
            (None, _) => Op::Create,
            (Some(_), None) => Op::Delete,
            (Some(_), Some(_)) => Op::Update,
        };
        files.push(FileChange {
            path: s.target.display.clone(),
            op,
            old,
            new: s.new.clone(),
            dirs: s
                .created
                .iter()
                .map(|d| s.target.shown(d.clone()))
                .collect(),
            shared: s.shared,
        });
    }
    super::gc::make_room(&mut held, added, config).map_err(|e| journal_error(&e))?;
    let next = held
        .last()
        .map_err(|e| journal_error(&e))?
        .map_or(1, |(r, _)| r.seq + 1);
    let pending = Pending {
        seq: next,
        temps: staged
            .iter()
            .map(|s| (s.target.display.clone(), s.temp.clone()))
            .collect(),
    };
    held.mark_pending(&pending).map_err(|e| journal_error(&e))?;
    let mut record = Record::new(kind);
    record.files = files;
    record.bytes = added;
    record.reverts = extra.reverts;
    record.to = extra.to;
    let record = match held.append(record, sync) {
        Ok(record) => record,
        Err(e) => {
            held.clear_pending();
            return Err(journal_error(&e));
        }
    };
    // The commit point is behind: every rename now, in order.
    for (i, s) in staged.iter().enumerate() {
        let name = s.target.resolved.file_name();
        let renamed = match &s.temp {
            Some(temp) => fs::commit_staged(&s.dir, temp, name, None),
            None => s.dir.unlink_at(name),
        };
        if let Err(e) = renamed {
            put_back(&held, &staged[..i], &record);
            let mut void = Record::new(Kind::Void);
            void.of = Some(record.seq);
            let _ = held.append(void, sync);
            held.clear_pending();
            return Err(if e.kind() == io::ErrorKind::IsADirectory {
                ToolError::became_directory()
            } else if e.kind() == io::ErrorKind::Interrupted {
                ToolError::cancelled()
            } else {
                fs::io_error(&e, "writing to file")
            });
        }
    }
    held.clear_pending();
    drop(held);
    if config.durability == Durability::Full {
        for s in staged {
            let _ = s.dir.sync();
        }
    }
    Ok(record)
}

/// Save what `s`'s target holds now and return its state: the content
/// the call read, if the file is still that one; else what is there now,
/// read again (another writer replaced it meanwhile).
fn save_old(held: &Held<'_>, s: &Staged<'_, '_>, sync: bool) -> io::Result<(Option<State>, u64)> {
    let name = s.target.resolved.file_name();
    let now = match s.dir.stat_at(name) {
        Ok(stat) if stat.kind == EntryKind::File => stat,
        Ok(_) => return Err(io::Error::from(io::ErrorKind::IsADirectory)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((None, 0)),
        Err(e) => return Err(e),
    };
    let as_read = s
        .seen
        .as_ref()
        .filter(|seen| seen.size == now.len && seen.modified == now.modified)
        .and_then(|seen| seen.bytes);
    let read;
    let bytes = match as_read {
        Some(bytes) => bytes,
        None => {
            let file = s.dir.open_read_at(name)?;
            read = file.read_all(now.len)?;
            &read
        }
    };
    let digest = Digest::of(bytes);
    let added = held.save(&s.dir, name, digest, bytes.len() as u64, Some(bytes), sync)?;
    Ok((
        Some(State {
            digest: digest.hex(),
            size: bytes.len() as u64,
            mtime_ms: now.modified.map(ms),
        }),
        added,
    ))
}

/// Put back the files of `record` that `done` renamed: the saved content
/// copied back, a created file removed.
fn put_back(held: &Held<'_>, done: &[Staged<'_, '_>], record: &Record) {
    for (s, file) in done.iter().zip(&record.files).rev() {
        let name = s.target.resolved.file_name();
        match &file.old {
            None => {
                let _ = s.dir.unlink_at(name);
            }
            Some(old) => {
                let _ = restore_into(held.journal(), &old.digest, &s.dir, name);
            }
        }
    }
}

/// Put the saved content `digest` at `name` in `dir`, through a temp file.
fn restore_into(journal: &Journal, digest: &str, dir: &Dir, name: &str) -> io::Result<()> {
    let temp = staged_copy(journal, digest, dir)?;
    dir.rename_at(&temp, name).inspect_err(|_| {
        let _ = dir.unlink_at(&temp);
    })
}

/// A temp file in `dir` holding a copy of the saved content `digest`,
/// checked against its digest. A copy, not a link to the saved file: a
/// file restored as a second name of the journal's copy would count as a
/// file with other hard links in every later write (its content kept out
/// of the envelope, its format not kept), and a program writing it in
/// place would change the journal's copy. The host puts the saved file's
/// permission bits back where it can (`docs/contract.md#journal`).
pub(super) fn staged_copy(journal: &Journal, digest: &str, dir: &Dir) -> io::Result<String> {
    let bytes = journal.object(digest).map_err(|e| match e {
        crate::journal::ObjectError::Io(e) => e,
        _ => io::Error::from(io::ErrorKind::InvalidData),
    })?;
    let (temp, _) = fs::stage(dir, &bytes, Durability::Full)?;
    Ok(temp)
}

/// Finish or roll back the commit a dead writer left (see the module
/// documentation). Best effort: what cannot be done now is left for the
/// next call.
pub(super) fn recover(held: &Held<'_>, roots: &Roots, config: &Config) {
    let Ok(Some(marked)) = held.pending() else {
        return;
    };
    let Ok(records) = held.journal().records() else {
        return;
    };
    let sync = config.durability != Durability::None;
    let seq = marked.seq;
    let record = records.iter().find(|r| r.seq == seq).filter(|_| {
        !records
            .iter()
            .any(|r| r.kind == Kind::Void && r.of == Some(seq))
    });
    let mut files = Vec::with_capacity(marked.temps.len());
    for (i, (path, temp)) in marked.temps.iter().enumerate() {
        let dir = target::resolve(roots, ToolName::WriteFile, path)
            .ok()
            .and_then(|target| Some((parent_of(&target).ok()?, target)));
        let Some((dir, target)) = dir else {
            continue;
        };
        let name = target.resolved.file_name().to_owned();
        let change = record.and_then(|r| r.files.get(i));
        files.push(Left {
            dir,
            name,
            temp: temp.clone(),
            change,
        });
    }
    match record {
        Some(_) if files.iter().all(Left::can_finish) => {
            for file in &files {
                file.finish();
            }
        }
        Some(record) => {
            // A temp file is gone though its target never got the new
            // content: a sweep of leftovers took it (its writer died more
            // than a second before). What was renamed is put back.
            for file in &files {
                file.undo(held.journal());
            }
            let mut void = Record::new(Kind::Void);
            void.of = Some(record.seq);
            let _ = held.append(void, sync);
        }
        // Died before its record: nothing was renamed.
        None => {
            for file in &files {
                if let Some(temp) = &file.temp {
                    let _ = file.dir.unlink_at(temp);
                }
            }
        }
    }
    if sync {
        for file in &files {
            let _ = file.dir.sync();
        }
    }
    held.clear_pending();
}

/// A file of a commit a dead writer left.
struct Left<'r, 'c> {
    dir: ParentDir<'r>,
    name: String,
    /// Its staged temp file (none for a removal).
    temp: Option<String>,
    /// What the record says of it.
    change: Option<&'c FileChange>,
}

impl Left<'_, '_> {
    fn temp_present(&self) -> bool {
        self.temp
            .as_ref()
            .is_some_and(|temp| self.dir.stat_at(temp).is_ok())
    }

    /// Whether the file has its new content (the rename happened).
    fn is_new(&self) -> bool {
        let new = self.change.and_then(|c| c.new.as_ref());
        match new {
            Some(new) => current_digest(&self.dir, &self.name).as_deref() == Some(&new.digest),
            None => self.dir.stat_at(&self.name).is_err(),
        }
    }

    /// Its step can still be done, or was: a removal always can; a rename
    /// when its temp file is there or the rename happened.
    fn can_finish(&self) -> bool {
        self.temp.is_none() || self.temp_present() || self.is_new()
    }

    /// Do its step, if it was not done.
    fn finish(&self) {
        match &self.temp {
            Some(temp) => {
                if self.temp_present() {
                    let _ = self.dir.rename_at(temp, &self.name);
                }
            }
            None => {
                let old = self.change.and_then(|c| c.old.as_ref());
                if let Some(old) = old
                    && current_digest(&self.dir, &self.name).as_deref() == Some(&old.digest)
                {
                    let _ = self.dir.unlink_at(&self.name);
                }
            }
        }
    }

    /// Take its step back, if it was done; remove its temp file.
    fn undo(&self, journal: &Journal) {
        if let Some(temp) = &self.temp {
            let _ = self.dir.unlink_at(temp);
        }
        let Some(change) = self.change else {
            return;
        };
        if !self.is_new() {
            return;
        }
        match &change.old {
            Some(old) => {
                let _ = restore_into(journal, &old.digest, &self.dir, &self.name);
            }
            None => {
                let _ = self.dir.unlink_at(&self.name);
            }
        }
    }
}

/// The digest of the file `name` in `dir`, if it is a readable file.
pub(super) fn current_digest(dir: &Dir, name: &str) -> Option<String> {
    let file = dir.open_read_at(name).ok()?;
    let stat = file.stat().ok()?;
    if stat.kind != EntryKind::File {
        return None;
    }
    Some(Digest::of(&file.read_all(stat.len).ok()?).hex())
}

/// A time in ms since the epoch.
pub(super) fn ms(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The error for a journal that cannot record: the write is refused.
pub(super) fn journal_error(err: &io::Error) -> ToolError {
    use io::ErrorKind as K;
    let why = match err.kind() {
        K::StorageFull | K::QuotaExceeded | K::FileTooLarge => {
            "the journal's file system is full or over its quota"
        }
        K::WouldBlock => "another writer held the journal for too long",
        K::PermissionDenied | K::ReadOnlyFilesystem => "the journal's directory cannot be written",
        K::OutOfMemory => "the journal is over its size bound even after dropping old changes",
        _ => "the journal could not be written",
    };
    ToolError::journal(why)
}

/// The directories `records`' changes created, for a revert to remove when
/// they are empty: innermost first.
pub(super) fn created_dirs<'a>(files: impl Iterator<Item = &'a FileChange>) -> Vec<String> {
    let dirs: BTreeSet<&String> = files.flat_map(|f| f.dirs.iter()).collect();
    let mut dirs: Vec<String> = dirs.into_iter().cloned().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    dirs
}
