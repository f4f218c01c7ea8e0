//! `revert` and `checkpoint` (`docs/contract.md#journal`).
//!
//! A revert works out, from the records `choose.rs` picks, what each file
//! it touches held before the first change it undoes and after the last:
//! it expects the latter now, and puts back the former — a copy of the
//! saved content; a file those changes created is removed. A file that
//! holds something else now was changed since: the revert is refused with
//! what would be lost, unless forced. A file with other hard links is
//! read neither now nor ever: it counts as changed, and nothing of it is
//! shown. The revert is a change of its own, committed through the one
//! commit every change goes through, and recorded (so it can be undone
//! too).

use std::time::{Instant, SystemTime};

use serde_json::Value;
use write_tool_wire::envelope::{Envelope, Operation};
use write_tool_wire::request::ToolName;

use crate::diff;
use crate::error::ToolError;
use crate::fs::sys::Kind as EntryKind;
use crate::fs::{self, Unchanged};
use crate::journal::{By, FileChange, Journal, Kind, ObjectError, Record, State};
use crate::params::RevertRequest;
use crate::roots::Roots;

use super::answer_many::{Group, GroupFile, group_envelope};
use super::choose::{Chosen, choose};
use super::commit;
use super::config::Config;
use super::group::Change;
use super::journaled::created_dirs;
use super::stage::{Content, Planned, Seen};
use super::target::{self, Target};

/// Answer a `revert`.
/// A failure is told as `tell` tells it ([`ToolError::as_is`], or a
/// voice's words).
pub(super) fn answer(
    roots: &Roots,
    request: &RevertRequest,
    echo: Value,
    config: &Config,
    start: Instant,
    tell: impl FnOnce(ToolError) -> ToolError,
) -> Envelope {
    let result = run(roots, request, config).map_err(tell);
    group_envelope(result, request.dry_run, echo, start)
}

/// What a revert does to one file.
struct Net {
    path: String,
    /// What to put back; `None`: remove the file.
    restore: Option<State>,
    /// What the changes left; `None`: no file.
    expected: Option<State>,
    shared: bool,
    /// The first change did not save what it replaced, and which change
    /// that was.
    unsaved: Option<String>,
}

/// What a file holds now.
enum Current {
    /// Nothing.
    Missing,
    /// A file the tool read: its bytes and modification time.
    Read(Vec<u8>, Option<SystemTime>),
    /// A file with other hard links, never read: its size and time.
    Shared(u64, Option<SystemTime>),
    /// A symbolic link, where the changes removed or made one: its
    /// target's text and its own time.
    Link(Vec<u8>, Option<SystemTime>),
}

/// One file of a revert, looked at.
struct Looked<'r> {
    net: Net,
    target: Target<'r>,
    current: Current,
    /// The content put back.
    restored: Option<Vec<u8>>,
    /// Whether the file holds what the undone changes left. A file with
    /// other hard links is never read, so never known to.
    holds_expected: bool,
}

fn run(roots: &Roots, request: &RevertRequest, config: &Config) -> Result<Group, ToolError> {
    if !config.revert {
        return Err(ToolError::host_refuses("revert changes"));
    }
    let journal = config
        .journal
        .as_deref()
        .ok_or_else(ToolError::no_journal)?;
    let Chosen {
        records,
        extra,
        what,
    } = choose(journal, &request.target, config)?;
    let planned = plan(roots, journal, &records, config)?;
    check(&planned, request, config)?;
    let mut group = Group {
        files: planned.iter().map(|p| file_of(p, config)).collect(),
        applied: false,
        change_id: None,
        headline: String::new(),
    };
    let changing = group.files.iter().filter(|f| f.changes).count();
    if request.dry_run {
        group.headline = format!("[Dry Run] Would revert {what}: {changing} files.");
        return Ok(group);
    }
    if changing == 0 {
        group.applied = true;
        group.headline = format!("Nothing to revert for {what}: the files already hold it.");
        return Ok(group);
    }
    if config.read_only {
        return Err(ToolError::read_only_root());
    }
    let files: Vec<Planned<'_, '_>> = planned
        .iter()
        .zip(&group.files)
        .filter(|(_, f)| f.changes)
        .map(|(p, _)| p.planned())
        .collect();
    let change = Change {
        kind: Kind::Revert,
        files,
        extra,
    };
    let done = commit::commit(roots, change, SystemTime::now(), config)?;
    let record = done.record.ok_or_else(ToolError::no_journal)?;
    // Directories the undone changes created, where they are empty now.
    for dir in created_dirs(records.iter().flat_map(|r| r.files.iter())) {
        if let Ok(located) = roots.locate(ToolName::WriteFile, &dir) {
            let _ = located.dir.remove_dir_at(&located.rel.names().join("/"));
        }
    }
    group.applied = true;
    group.headline = format!("Reverted {what} ({}).", record.id);
    group.change_id = Some(record.id);
    Ok(group)
}

/// Per file: its state before the first change and after the last,
/// undone last-written first.
fn nets(records: &[Record]) -> Vec<Net> {
    let mut nets: Vec<Net> = Vec::new();
    for (record, file) in records
        .iter()
        .flat_map(|r| r.files.iter().map(move |f| (r, f)))
    {
        match nets.iter_mut().find(|n| n.path == file.path) {
            Some(net) => {
                net.expected = file.new.clone();
                net.shared |= file.shared;
            }
            None => nets.push(Net {
                path: file.path.clone(),
                restore: file.old.clone(),
                expected: file.new.clone(),
                shared: file.shared,
                unsaved: unsaved(record, file),
            }),
        }
    }
    nets.reverse();
    nets
}

/// The change whose saved content of `file` is missing, if it is.
fn unsaved(record: &Record, file: &FileChange) -> Option<String> {
    file.unsaved.then(|| record.id.clone())
}

/// Each file the records touched, resolved, read and checked.
fn plan<'r>(
    roots: &'r Roots,
    journal: &Journal,
    records: &[Record],
    config: &Config,
) -> Result<Vec<Looked<'r>>, ToolError> {
    let mut planned = Vec::new();
    for net in nets(records) {
        let named = |e: ToolError| e.prefixed(&format!("'{}'", net.path));
        if let Some(id) = &net.unsaved {
            return Err(ToolError::unrevertable(&net.path, id));
        }
        // A link removed or made again is the link itself, not followed.
        let link = net.restore.iter().chain(&net.expected).any(|s| s.link);
        let target =
            target::resolve_as(roots, ToolName::WriteFile, &net.path, !link).map_err(named)?;
        target.check_writable(false, config).map_err(named)?;
        let current = read_current(&target)?;
        let restored = match &net.restore {
            None => None,
            Some(state) => Some(journal.object(&state.digest).map_err(|e| match e {
                ObjectError::Missing => ToolError::saved_altered(&net.path, true),
                ObjectError::Altered => ToolError::saved_altered(&net.path, false),
                ObjectError::Io(e) => fs::io_error(&e, "reading the journal"),
            })?),
        };
        let key = journal
            .key()
            .map_err(|e| fs::io_error(&e, "reading the journal"))?;
        let holds_expected = match (&current, &net.expected) {
            (Current::Missing, None) => true,
            (Current::Read(bytes, _), Some(state)) if !state.link => {
                key.matches(&state.digest, bytes)
            }
            (Current::Link(bytes, _), Some(state)) if state.link => {
                key.matches(&state.digest, bytes)
            }
            _ => false,
        };
        planned.push(Looked {
            net,
            target,
            current,
            restored,
            holds_expected,
        });
    }
    Ok(planned)
}

/// Refuse a revert that would lose changes made since (unless forced),
/// or that a model may not make: removing a file that changed since it
/// was created, where the host lets no call remove files.
fn check(
    planned: &[Looked<'_>],
    request: &RevertRequest,
    config: &Config,
) -> Result<(), ToolError> {
    let mut conflicts = Vec::new();
    let mut lost = String::new();
    for p in planned {
        if p.holds_expected {
            continue;
        }
        conflicts.push(p.net.path.clone());
        if let Current::Read(..) | Current::Link(..) = &p.current {
            let before = p.before_text();
            let after = p.after_text();
            lost.push_str(&diff::diff(&before, &after, &p.net.path, &config.diff).preview);
        }
    }
    if conflicts.is_empty() {
        return Ok(());
    }
    if !request.force {
        return Err(ToolError::revert_conflict(&conflicts, &lost));
    }
    let removes = planned
        .iter()
        .find(|p| p.net.restore.is_none() && !p.holds_expected);
    match removes {
        Some(p) if config.by == By::Model && !config.allow_delete => {
            Err(ToolError::revert_would_delete(&p.net.path))
        }
        _ => Ok(()),
    }
}

impl Looked<'_> {
    /// What the file holds now, as a diff shows it.
    fn before_text(&self) -> String {
        match &self.current {
            Current::Read(bytes, _) => text(Some(bytes)),
            Current::Link(to, _) => super::outcome::link_text(&String::from_utf8_lossy(to)),
            Current::Missing | Current::Shared(..) => String::new(),
        }
    }

    /// What the revert puts back, as a diff shows it.
    fn after_text(&self) -> String {
        match (&self.net.restore, &self.restored) {
            (Some(state), Some(to)) if state.link => {
                super::outcome::link_text(&String::from_utf8_lossy(to))
            }
            _ => text(self.restored.as_deref()),
        }
    }

    /// The file as the commit takes it: the restored content, expected to
    /// find the file as it was looked at.
    fn planned(&self) -> Planned<'_, '_> {
        let (unchanged, seen) = match &self.current {
            Current::Missing => (Unchanged::Missing, None),
            Current::Read(bytes, modified) => (
                Unchanged::File {
                    len: bytes.len() as u64,
                    modified: *modified,
                },
                Some(Seen {
                    bytes: Some(bytes),
                    size: bytes.len() as u64,
                    modified: *modified,
                }),
            ),
            Current::Shared(len, modified) => (
                Unchanged::File {
                    len: *len,
                    modified: *modified,
                },
                None,
            ),
            Current::Link(bytes, modified) => (
                Unchanged::Link {
                    len: bytes.len() as u64,
                    modified: *modified,
                },
                None,
            ),
        };
        Planned {
            target: &self.target,
            content: match &self.net.restore {
                Some(state) => Content::Saved(state),
                None => Content::Remove,
            },
            unchanged: Some(unchanged),
            seen,
            shared: self.net.shared || matches!(self.current, Current::Shared(..)),
        }
    }
}

/// The file `target` names now, reached by the walk every read goes
/// through (`fs::walk`): its bytes reach the "changed since" diff. A file
/// with other hard links is not read: it may be another name of a file
/// outside the root.
fn read_current(target: &Target<'_>) -> Result<Current, ToolError> {
    let reading = |e: std::io::Error| fs::io_error(&e, "reading the existing file");
    let resolved = &target.resolved;
    if resolved.kind == fs::TargetKind::Missing {
        return Ok(Current::Missing);
    }
    let dir = fs::walk(target.root, resolved.parent()).map_err(|e| fs::walk::error(&e))?;
    let name = resolved.file_name();
    match dir.stat_at(name) {
        // Only a walk that leaves the last link unfollowed sees one.
        Ok(stat) if stat.kind == EntryKind::Symlink => {
            match dir.read_link_at(name).map_err(reading)? {
                Some(to) => Ok(Current::Link(to.into_bytes(), stat.modified)),
                None => Err(ToolError::not_regular_file()),
            }
        }
        Ok(stat) if stat.kind == EntryKind::File && stat.link_count > 1 => {
            Ok(Current::Shared(stat.len, stat.modified))
        }
        Ok(stat) if stat.kind == EntryKind::File => {
            let file = dir.open_read_at(name).map_err(reading)?;
            // The file opened, not the name looked at, is what is read.
            let opened = file.stat().map_err(reading)?;
            if opened.link_count > 1 {
                return Ok(Current::Shared(opened.len, opened.modified));
            }
            let bytes = file.read_all(opened.len).map_err(reading)?;
            Ok(Current::Read(bytes, opened.modified))
        }
        Ok(stat) if stat.kind == EntryKind::Directory => Err(ToolError::is_directory()),
        Ok(_) => Err(ToolError::not_regular_file()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Current::Missing),
        Err(e) => Err(reading(e)),
    }
}

/// Bytes as text for a diff: UTF-8, or lossily.
fn text(bytes: Option<&[u8]>) -> String {
    bytes.map_or_else(String::new, |b| String::from_utf8_lossy(b).into_owned())
}

fn file_of(p: &Looked<'_>, config: &Config) -> GroupFile {
    let (before, shared_now) = match &p.current {
        Current::Missing => (None, false),
        Current::Read(bytes, _) | Current::Link(bytes, _) => (Some(&bytes[..]), false),
        Current::Shared(..) => (None, true),
    };
    let after = p.restored.as_deref();
    let exists = !matches!(p.current, Current::Missing);
    // A link and a file holding its target's text are not the same.
    let kind_changes =
        matches!(p.current, Current::Link(..)) != p.net.restore.as_ref().is_some_and(|s| s.link);
    let changes = shared_now || before != after || (before.is_some() && kind_changes);
    let operation = match (exists, after) {
        (false, _) => Operation::Create,
        (true, None) => Operation::Delete,
        (true, Some(_)) => Operation::Update,
    };
    let summary = if p.net.shared || shared_now {
        // Its content may be a file outside the root's: not shown.
        diff::DiffSummary::default()
    } else {
        diff::diff(&p.before_text(), &p.after_text(), &p.net.path, &config.diff)
    };
    GroupFile {
        path: p.net.path.clone(),
        operation,
        preview: summary.preview,
        truncated: summary.truncated || p.net.shared || shared_now,
        lines_added: summary.lines_added,
        lines_removed: summary.lines_removed,
        sizes: (
            before.map_or(0, |b| b.len() as u64),
            after.map_or(0, |b| b.len() as u64),
        ),
        changes,
        warnings: Vec::new(),
        encoding: String::new(),
        moved: None,
    }
}
