//! Recovery (`docs/contract.md#journal`): the commit a writer that stopped
//! (killed, crashed, trapped, its host gone) left in the `pending` mark is
//! finished or rolled back by the next journaled call, before its own.
//!
//! - Its record is the last one: every file either holds its new content
//!   already or still holds exactly its old one with its temp file beside
//!   it — then the rest are placed, as the commit would have (a create
//!   linked, so that a file made meanwhile is never replaced) — all new;
//!   otherwise (a temp file swept as a leftover, a file changed since) the
//!   files placed are put back and a `void` record says the change did not
//!   happen — all old.
//! - It has no record (the writer stopped before it): its temp files and
//!   the directories it made, when empty, are removed — all old, and no
//!   litter.
//!
//! Any step that fails (the call was cancelled at its commit point, a
//! file cannot be written) leaves the mark for the next call: the mark is
//! cleared only when every step is done.

use std::io;

use write_tool_wire::request::ToolName;

use crate::error::ToolError;
use crate::fs::{self, Durability, Unchanged};
use crate::journal::{FileChange, Held, Key, Kind, Pending, Record, ms};
use crate::roots::Roots;

use super::config::Config;
use super::restore::{forget_link, forget_link_of, holds_state, restore_into};
use super::stage::{ParentDir, parent_of};
use super::target;

/// Finish or roll back what a dead writer left; `Ok` when nothing is left.
pub(super) fn recover(held: &Held<'_>, roots: &Roots, config: &Config) -> Result<(), ToolError> {
    let pending = held.pending().map_err(|e| ToolError::journal_io(&e))?;
    let Some(pending) = pending else {
        return Ok(());
    };
    let record = its_record(held, &pending)?;
    let key = held
        .journal()
        .key()
        .map_err(|e| ToolError::journal_io(&e))?;
    let files = left(roots, &pending, record.as_ref(), config, key);
    let done = match &record {
        Some(record) if files.iter().all(|f| f.state() != State::Blocked) => finish(&files),
        Some(record) => roll_back(held, &files, record, config),
        None => {
            clean(held, roots, &files, &pending.dirs);
            Ok(())
        }
    };
    done.map_err(|e| unfinished(&e))?;
    if config.durability == Durability::Full {
        for file in &files {
            let _ = file.dir.sync();
        }
    }
    held.clear_pending().map_err(|e| ToolError::journal_io(&e))
}

/// The record of the marked commit: the last record, if it is that
/// commit's and no `void` followed it.
fn its_record(held: &Held<'_>, pending: &Pending) -> Result<Option<Record>, ToolError> {
    let last = held.last().map_err(|e| ToolError::journal_io(&e))?;
    Ok(last
        .map(|(record, _)| record)
        .filter(|r| r.seq == pending.seq && r.is_change()))
}

/// The error of a recovery step.
fn unfinished(err: &io::Error) -> ToolError {
    if err.kind() == io::ErrorKind::Interrupted {
        ToolError::cancelled()
    } else {
        ToolError::unfinished(&err.to_string())
    }
}

/// Where a file of the dead writer's commit stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Its step was done.
    Done,
    /// Its step can be done: it holds exactly what the change replaces.
    Ready,
    /// Neither: its temp file is gone, or it was changed since.
    Blocked,
}

/// A file of a commit a dead writer left.
struct Left<'r, 'c> {
    dir: ParentDir<'r>,
    name: String,
    /// Its staged temp file (none for a removal).
    temp: Option<String>,
    /// What the record says of it.
    change: Option<&'c FileChange>,
    /// The journal's key, to tell contents by.
    key: &'c Key,
}

/// The files the mark names that still resolve under a root to a place a
/// write may change, with temp files of the tool's own names. The mark
/// and the records are the tool's own, in a directory no model reaches;
/// still, recovery writes nothing a call could not.
fn left<'r, 'c>(
    roots: &'r Roots,
    pending: &Pending,
    record: Option<&'c Record>,
    config: &Config,
    key: &'c Key,
) -> Vec<Left<'r, 'c>> {
    let mut files = Vec::with_capacity(pending.temps.len());
    for (i, (path, temp)) in pending.temps.iter().enumerate() {
        if temp.as_deref().is_some_and(|t| !fs::temps::is_temp_name(t)) {
            continue;
        }
        let change = record.and_then(|r| r.files.get(i));
        let link = change.is_some_and(FileChange::is_link);
        let Ok(target) = target::resolve_as(roots, ToolName::WriteFile, path, !link) else {
            continue;
        };
        if target.check_writable(false, config).is_err() {
            continue;
        }
        let Ok(dir) = parent_of(&target) else {
            continue;
        };
        files.push(Left {
            dir,
            name: target.resolved.file_name().to_owned(),
            temp: temp.clone(),
            change,
            key,
        });
    }
    files
}

impl Left<'_, '_> {
    fn temp_present(&self) -> bool {
        self.temp
            .as_ref()
            .is_some_and(|temp| self.dir.stat_at(temp).is_ok())
    }

    /// Whether the file holds what the change wrote (or is gone, for a
    /// removal).
    fn is_new(&self, change: &FileChange) -> bool {
        match &change.new {
            Some(new) => holds_state(self.key, &self.dir, &self.name, new),
            None => self.dir.stat_at(&self.name).is_err(),
        }
    }

    /// Whether the file holds exactly what the change replaces.
    fn is_old(&self, change: &FileChange) -> bool {
        let now = self.dir.stat_at(&self.name);
        match (&change.old, now) {
            (None, Err(e)) => e.kind() == io::ErrorKind::NotFound,
            (None, Ok(_)) | (Some(_), Err(_)) => false,
            (Some(_), Ok(stat)) if change.unsaved => stat.kind == fs::sys::Kind::File,
            (Some(old), Ok(_)) if old.link => holds_state(self.key, &self.dir, &self.name, old),
            (Some(old), Ok(stat)) => {
                stat.kind == fs::sys::Kind::File
                    && (stat.len == old.size && stat.modified.map(ms) == old.mtime_ms
                        || holds_state(self.key, &self.dir, &self.name, old))
            }
        }
    }

    fn state(&self) -> State {
        let Some(change) = self.change else {
            return State::Blocked;
        };
        let step_left = self.temp.is_none() || self.temp_present();
        if step_left && self.is_old(change) {
            State::Ready
        } else if self.is_new(change) {
            State::Done
        } else {
            State::Blocked
        }
    }

    /// Do its step, if it was not done: the commit point, as the dead
    /// writer would have passed it.
    fn finish(&self) -> io::Result<()> {
        if self.state() != State::Ready {
            return Ok(());
        }
        let creates = self.change.is_some_and(|c| c.old.is_none());
        match &self.temp {
            Some(temp) => {
                let unchanged = creates.then_some(Unchanged::Missing);
                fs::commit_staged(&self.dir, temp, &self.name, unchanged)
            }
            None => self.dir.unlink_at(&self.name),
        }
    }

    /// Take its step back, if it was done; remove its temp file, and the
    /// journal's link to the file where it never replaced it.
    fn undo(&self, held: &Held<'_>) -> io::Result<()> {
        if let Some(temp) = &self.temp {
            let _ = self.dir.unlink_at(temp);
        }
        let Some(change) = self.change else {
            return Ok(());
        };
        if !self.is_new(change) {
            if let Some(old) = change.old.as_ref().filter(|_| !change.unsaved) {
                forget_link(held.journal(), &old.digest, &self.dir, &self.name);
            }
            return Ok(());
        }
        match &change.old {
            Some(_) if change.unsaved => Ok(()),
            Some(old) => restore_into(held.journal(), old, &self.dir, &self.name),
            None => self.dir.unlink_at(&self.name),
        }
    }
}

/// Every file's step done: all new.
fn finish(files: &[Left<'_, '_>]) -> io::Result<()> {
    files.iter().try_for_each(Left::finish)
}

/// Every file's step taken back and the record voided: all old.
fn roll_back(
    held: &Held<'_>,
    files: &[Left<'_, '_>],
    record: &Record,
    config: &Config,
) -> io::Result<()> {
    for file in files.iter().rev() {
        file.undo(held)?;
    }
    let mut void = Record::new(Kind::Void);
    void.of = Some(record.seq);
    void.by = config.by;
    held.append(void, config.durability != Durability::None)
        .map(|_| ())
}

/// A commit with no record: its temp files and empty directories go, and
/// the journal's links to files it saved but never replaced.
fn clean(held: &Held<'_>, roots: &Roots, files: &[Left<'_, '_>], dirs: &[String]) {
    for file in files {
        if let Some(temp) = &file.temp {
            let _ = file.dir.unlink_at(temp);
        }
        forget_link_of(held.journal(), &file.dir, &file.name);
    }
    let mut dirs: Vec<&String> = dirs.iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    for dir in dirs {
        if let Ok(located) = roots.locate(ToolName::WriteFile, dir) {
            let _ = located.dir.remove_dir_at(&located.rel.names().join("/"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::Dir;

    /// A change of five files whose writer died after three renames, and
    /// whose two other temp files a sweep took: the three are put back,
    /// and a `void` record says the change did not happen.
    #[test]
    fn a_change_whose_temp_files_were_swept_is_rolled_back() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = crate::pipeline::testing::journaled(dir.path(), 1000);
        let root_path = dir.path().join("root");
        let names: Vec<String> = (0..5).map(|i| format!("f{i}.txt")).collect();
        for name in &names {
            std::fs::write(root_path.join(name), "old\n").unwrap();
        }
        let writes: Vec<_> = names
            .iter()
            .map(|n| serde_json::json!({"path": n, "content": "new\n"}))
            .collect();
        let env = crate::pipeline::call(
            &roots,
            serde_json::json!({"writes": writes}).to_string(),
            &config,
        );
        assert_eq!(env.status, write_tool_wire::Status::Success, "{}", env.text);
        // As the dead writer left it: two files never renamed, their temp
        // files swept, and the mark naming the commit.
        for name in &names[3..] {
            std::fs::write(root_path.join(name), "old\n").unwrap();
        }
        let journal = config.journal.as_deref().unwrap();
        let held = journal.lock().unwrap();
        let (record, _) = held.last().unwrap().unwrap();
        let pending = Pending {
            seq: record.seq,
            temps: names
                .iter()
                .map(|n| (n.clone(), Some(format!(".wt-{:016x}.tmp", n.len()))))
                .collect(),
            dirs: Vec::new(),
        };
        held.mark_pending(&pending).unwrap();
        recover(&held, &roots, &config).unwrap();
        for name in &names {
            assert_eq!(
                std::fs::read_to_string(root_path.join(name)).unwrap(),
                "old\n",
                "{name}"
            );
        }
        let (last, _) = held.last().unwrap().unwrap();
        assert_eq!((last.kind, last.of), (Kind::Void, Some(record.seq)));
        assert_eq!(held.pending().unwrap(), None);
    }

    /// A patch that removed a link and a file, whose writer died after
    /// the link went, and whose file a person changed meanwhile: the
    /// change is rolled back, and the link made again as it was (to its
    /// own target, not a file holding the target's text).
    #[test]
    #[cfg(unix)]
    fn a_dead_writers_link_removal_is_rolled_back_to_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, mut config) = crate::pipeline::testing::journaled(dir.path(), 1000);
        config.allow_delete = true;
        let root_path = dir.path().join("root");
        std::fs::write(root_path.join("x.txt"), "x\n").unwrap();
        std::os::unix::fs::symlink("x.txt", root_path.join("link")).unwrap();
        std::fs::write(root_path.join("gone.txt"), "old\n").unwrap();
        let patch = "*** Begin Patch\n*** Delete File: link\n*** Delete File: gone.txt\n\
                     *** End Patch\n";
        let env = crate::pipeline::call(
            &roots,
            serde_json::json!({"name": "apply_patch", "arguments": {"input": patch}}).to_string(),
            &config,
        );
        assert_eq!(env.status, write_tool_wire::Status::Success, "{}", env.text);
        assert!(root_path.join("link").symlink_metadata().is_err());
        // As the dead writer left it: the link gone, the file not yet, and
        // a person's content in it since.
        std::fs::write(root_path.join("gone.txt"), "a person's\n").unwrap();
        let journal = config.journal.as_deref().unwrap();
        let held = journal.lock().unwrap();
        let (record, _) = held.last().unwrap().unwrap();
        assert!(record.files[0].old.as_ref().is_some_and(|o| o.link));
        let pending = Pending {
            seq: record.seq,
            temps: vec![("link".into(), None), ("gone.txt".into(), None)],
            dirs: Vec::new(),
        };
        held.mark_pending(&pending).unwrap();
        recover(&held, &roots, &config).unwrap();
        assert_eq!(
            std::fs::read_link(root_path.join("link")).unwrap(),
            std::path::Path::new("x.txt")
        );
        assert_eq!(
            std::fs::read_to_string(root_path.join("x.txt")).unwrap(),
            "x\n"
        );
        assert_eq!(
            std::fs::read_to_string(root_path.join("gone.txt")).unwrap(),
            "a person's\n"
        );
        let (last, _) = held.last().unwrap().unwrap();
        assert_eq!((last.kind, last.of), (Kind::Void, Some(record.seq)));
    }

    /// The same patch's writer died before the link went, after the file
    /// did: the change is finished, and the link itself removed, not what
    /// it leads to (here, a file outside the root).
    #[test]
    #[cfg(unix)]
    fn a_dead_writers_link_removal_is_finished_on_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, mut config) = crate::pipeline::testing::journaled(dir.path(), 1000);
        config.allow_delete = true;
        let root_path = dir.path().join("root");
        std::fs::write(dir.path().join("outside.txt"), "outside\n").unwrap();
        std::os::unix::fs::symlink("../outside.txt", root_path.join("up")).unwrap();
        std::fs::write(root_path.join("gone.txt"), "old\n").unwrap();
        let patch = "*** Begin Patch\n*** Delete File: up\n*** Delete File: gone.txt\n\
                     *** End Patch\n";
        let request = serde_json::json!({"name": "apply_patch", "arguments": {"input": patch}});
        let env = crate::pipeline::call(&roots, request.to_string(), &config);
        assert_eq!(env.status, write_tool_wire::Status::Success, "{}", env.text);
        // As the dead writer left it: the file gone, the link not yet.
        std::os::unix::fs::symlink("../outside.txt", root_path.join("up")).unwrap();
        let journal = config.journal.as_deref().unwrap();
        let held = journal.lock().unwrap();
        let (record, _) = held.last().unwrap().unwrap();
        let pending = Pending {
            seq: record.seq,
            temps: vec![("up".into(), None), ("gone.txt".into(), None)],
            dirs: Vec::new(),
        };
        held.mark_pending(&pending).unwrap();
        recover(&held, &roots, &config).unwrap();
        assert!(
            root_path.join("up").symlink_metadata().is_err(),
            "the link went"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("outside.txt")).unwrap(),
            "outside\n"
        );
        let (last, _) = held.last().unwrap().unwrap();
        assert_eq!(last.seq, record.seq, "finished, not voided");
        assert_eq!(held.pending().unwrap(), None);
    }

    /// A mark names only files a write may change and temp files of the
    /// tool's own names, or recovery passes them over: a forged mark
    /// (a journal some hand wrote) moves nothing into `.git` or from
    /// elsewhere.
    #[test]
    fn a_mark_naming_protected_files_or_foreign_temps_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let root_path = dir.path().join("root");
        std::fs::create_dir_all(root_path.join(".git")).unwrap();
        let roots = Roots::single(Dir::from_path(&root_path));
        let config = Config::default();
        let temp = ".wt-0123456789abcdef.tmp".to_owned();
        let pending = Pending {
            seq: 1,
            temps: vec![
                (".git/config".into(), Some(temp.clone())),
                ("a.txt".into(), Some("payload".into())),
                ("b.txt".into(), Some("../b.wt-0123456789abcdef.tmp".into())),
                ("c.txt".into(), Some(temp)),
                ("d.txt".into(), None),
            ],
            dirs: Vec::new(),
        };
        let key = Key::random().unwrap();
        let names: Vec<String> = left(&roots, &pending, None, &config, &key)
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert_eq!(names, ["c.txt", "d.txt"]);
    }
}
