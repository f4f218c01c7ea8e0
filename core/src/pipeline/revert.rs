//! `revert` and `checkpoint` (`docs/contract.md#journal`).
//!
//! A revert works out, from the records, what each file it touches held
//! before the first change it undoes and after the last: it expects the
//! latter now, and puts back the former — the saved file itself, linked
//! back, where the file system allows (its mode and times come with it),
//! else a copy; a file those changes created is removed. A file that
//! holds something else now was changed since: the revert is refused with
//! what would be lost, unless forced. The revert is a change of its own,
//! committed and recorded as every other (so it can be reverted too).

use std::collections::HashSet;
use std::time::Instant;

use serde_json::Value;
use write_tool_wire::envelope::{
    CWD, Context, Data, Envelope, Operation, Stats, Status, WriteStats, elapsed_ms,
};
use write_tool_wire::request::ToolName;

use crate::diff;
use crate::error::ToolError;
use crate::fs::sys::Kind as EntryKind;
use crate::fs::{self, Unchanged};
use crate::journal::{Digest, Journal, Kind, ObjectError, Record, State, seq_of};
use crate::params::{RevertRequest, RevertTarget};
use crate::roots::Roots;

use super::config::Config;
use super::journaled::{self, Extra, ParentDir, Seen, Staged};
use super::many::{Group, GroupFile};
use super::target::{self, Target};

/// Answer a `revert`.
pub(super) fn answer(
    roots: &Roots,
    request: &RevertRequest,
    echo: Value,
    config: &Config,
    start: Instant,
) -> Envelope {
    super::many::group_envelope(run(roots, request, config), request.dry_run, echo, start)
}

/// What a revert does to one file.
struct Net {
    path: String,
    /// What to put back; `None`: remove the file.
    restore: Option<State>,
    /// What the changes left; `None`: no file.
    expected: Option<State>,
    shared: bool,
}

/// A file's bytes and modification time.
type Current = (Vec<u8>, Option<std::time::SystemTime>);

/// One file of a revert, looked at.
struct Planned<'r> {
    net: Net,
    target: Target<'r>,
    /// What is there now: bytes and when it was modified.
    current: Option<Current>,
    /// The content put back.
    restored: Option<Vec<u8>>,
}

fn run(roots: &Roots, request: &RevertRequest, config: &Config) -> Result<Group, ToolError> {
    if !config.revert {
        return Err(ToolError::host_refuses("revert changes"));
    }
    let journal = config.journal.as_ref().ok_or_else(ToolError::no_journal)?;
    let records = journal
        .records()
        .map_err(|e| journaled::journal_error(&e))?;
    let voided: HashSet<u64> = records
        .iter()
        .filter(|r| r.kind == Kind::Void)
        .filter_map(|r| r.of)
        .collect();
    let live = |r: &&Record| r.is_change() && !voided.contains(&r.seq);
    let (changes, extra, what): (Vec<&Record>, Extra, String) = match &request.target {
        RevertTarget::Latest => {
            let last = records
                .iter()
                .rev()
                .find(live)
                .ok_or_else(|| ToolError::no_such_change("change to revert"))?;
            let extra = Extra {
                reverts: Some(last.id.clone()),
                to: None,
            };
            (vec![last], extra, last.id.clone())
        }
        RevertTarget::Change(id) => {
            let seq =
                seq_of(id).ok_or_else(|| ToolError::no_such_change(&format!("change '{id}'")))?;
            let record = records
                .iter()
                .find(|r| r.seq == seq)
                .filter(live)
                .ok_or_else(|| ToolError::no_such_change(&format!("change '{id}'")))?;
            let extra = Extra {
                reverts: Some(record.id.clone()),
                to: None,
            };
            (vec![record], extra, record.id.clone())
        }
        RevertTarget::Checkpoint(name) => {
            let mark = records
                .iter()
                .rev()
                .find(|r| r.kind == Kind::Checkpoint && r.name.as_deref() == Some(name))
                .ok_or_else(|| ToolError::no_such_change(&format!("checkpoint '{name}'")))?;
            let after: Vec<&Record> = records
                .iter()
                .filter(|r| r.seq > mark.seq)
                .filter(live)
                .collect();
            let extra = Extra {
                reverts: None,
                to: Some(name.clone()),
            };
            (
                after,
                extra,
                format!("the changes since checkpoint '{name}'"),
            )
        }
    };
    // Per file: its state before the first change and after the last.
    let mut nets: Vec<Net> = Vec::new();
    for file in changes.iter().flat_map(|r| &r.files) {
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
            }),
        }
    }
    // Undone last-written first.
    nets.reverse();
    let mut planned = Vec::with_capacity(nets.len());
    let mut conflicts = Vec::new();
    let mut lost = String::new();
    for net in nets {
        let target = target::resolve(roots, ToolName::WriteFile, &net.path)
            .map_err(|e| e.prefixed(&format!("'{}'", net.path)))?;
        target
            .check_writable(false, config)
            .map_err(|e| e.prefixed(&format!("'{}'", net.path)))?;
        let current = read_current(&target)?;
        let now = current.as_ref().map(|(bytes, _)| Digest::of(bytes).hex());
        let restored = match &net.restore {
            None => None,
            Some(state) => Some(journal.object(&state.digest).map_err(|e| match e {
                ObjectError::Missing => ToolError::saved_altered(&net.path, true),
                ObjectError::Altered => ToolError::saved_altered(&net.path, false),
                ObjectError::Io(e) => fs::io_error(&e, "reading the journal"),
            })?),
        };
        if now.as_deref() != net.expected.as_ref().map(|s| s.digest.as_str()) {
            conflicts.push(net.path.clone());
            if !net.shared {
                let before = text(current.as_ref().map(|(b, _)| &b[..]));
                let after = text(restored.as_deref());
                lost.push_str(&diff::diff(&before, &after, &net.path, &config.diff).preview);
            }
        }
        planned.push(Planned {
            net,
            target,
            current,
            restored,
        });
    }
    if !conflicts.is_empty() && !request.force {
        return Err(ToolError::revert_conflict(&conflicts, &lost));
    }
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
    let mut staged: Vec<Staged<'_, '_>> = Vec::new();
    for (p, f) in planned.iter().zip(&group.files) {
        if !f.changes {
            continue;
        }
        match stage(journal, p) {
            Ok(s) => staged.push(s),
            Err(e) => {
                journaled::unstage(&staged);
                return Err(e);
            }
        }
    }
    let record = journaled::commit(roots, journal, Kind::Revert, staged, extra, config)?;
    // Directories the undone changes created, where they are empty now.
    for dir in journaled::created_dirs(changes.iter().flat_map(|r| r.files.iter())) {
        if let Ok(located) = roots.locate(ToolName::WriteFile, &dir) {
            let _ = located.dir.remove_dir_at(&located.rel.names().join("/"));
        }
    }
    group.applied = true;
    group.headline = format!("Reverted {what} ({}).", record.id);
    group.change_id = Some(record.id);
    Ok(group)
}

/// The file `target` names now: its bytes and time, `None` when missing.
fn read_current(target: &Target<'_>) -> Result<Option<Current>, ToolError> {
    let rel = target.resolved.display();
    match target.root.stat_at(&rel) {
        Ok(stat) if stat.kind == EntryKind::File => {
            let file = target
                .root
                .open_read_at(&rel)
                .map_err(|e| fs::io_error(&e, "reading the existing file"))?;
            let bytes = file
                .read_all(stat.len)
                .map_err(|e| fs::io_error(&e, "reading the existing file"))?;
            Ok(Some((bytes, stat.modified)))
        }
        Ok(stat) if stat.kind == EntryKind::Directory => Err(ToolError::is_directory()),
        Ok(_) => Err(ToolError::not_regular_file()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(fs::io_error(&e, "reading the existing file")),
    }
}

/// Bytes as text for a diff: UTF-8, or lossily.
fn text(bytes: Option<&[u8]>) -> String {
    bytes.map_or_else(String::new, |b| String::from_utf8_lossy(b).into_owned())
}

fn file_of(p: &Planned<'_>, config: &Config) -> GroupFile {
    let before = p.current.as_ref().map(|(b, _)| &b[..]);
    let after = p.restored.as_deref();
    let changes = before != after;
    let operation = match (before, after) {
        (None, _) => Operation::Create,
        (Some(_), None) => Operation::Delete,
        (Some(_), Some(_)) => Operation::Update,
    };
    let summary = if p.net.shared {
        // Its content may be a file outside the root's: not shown.
        diff::DiffSummary::default()
    } else {
        diff::diff(&text(before), &text(after), &p.net.path, &config.diff)
    };
    GroupFile {
        path: p.net.path.clone(),
        operation,
        preview: summary.preview,
        truncated: summary.truncated || p.net.shared,
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

/// Stage one file of a revert: a copy of the saved content beside
/// it, or nothing for a removal.
fn stage<'r, 'a>(journal: &Journal, p: &'a Planned<'r>) -> Result<Staged<'r, 'a>, ToolError> {
    let target = &p.target;
    let created = fs::create_parents(target.root, &target.resolved)
        .map_err(|e| fs::io_error(&e, "creating the parent directory"))?;
    let staged = (|| -> std::io::Result<(ParentDir<'r>, Option<String>)> {
        let dir = journaled::parent_of(target)?;
        let temp = match &p.net.restore {
            Some(state) => Some(journaled::staged_copy(journal, &state.digest, &dir)?),
            None => None,
        };
        Ok((dir, temp))
    })();
    let (dir, temp) = match staged {
        Ok(done) => done,
        Err(e) => {
            fs::remove_dirs(target.root, &created);
            return Err(fs::io_error(&e, "restoring the saved content"));
        }
    };
    Ok(Staged {
        target,
        dir,
        temp,
        new: p.net.restore.clone(),
        created,
        unchanged: Some(match &p.current {
            None => Unchanged::Missing,
            Some((bytes, modified)) => Unchanged::File {
                len: bytes.len() as u64,
                modified: *modified,
            },
        }),
        seen: p.current.as_ref().map(|(bytes, modified)| Seen {
            bytes: Some(bytes),
            size: bytes.len() as u64,
            modified: *modified,
        }),
        shared: p.net.shared,
    })
}

/// Answer a `checkpoint`: a record of the name, nothing written.
pub(super) fn checkpoint(
    roots: &Roots,
    name: &str,
    echo: Value,
    config: &Config,
    start: Instant,
) -> Envelope {
    let set = (|| -> Result<Record, ToolError> {
        if !config.revert {
            return Err(ToolError::host_refuses("set checkpoints"));
        }
        let journal = config.journal.as_ref().ok_or_else(ToolError::no_journal)?;
        let held = journal.lock().map_err(|e| journaled::journal_error(&e))?;
        journaled::recover(&held, roots, config);
        let mut record = Record::new(Kind::Checkpoint);
        record.name = Some(name.to_owned());
        held.append(record, config.durability != fs::Durability::None)
            .map_err(|e| journaled::journal_error(&e))
    })();
    let time_ms = elapsed_ms(start);
    match set {
        Ok(record) => Envelope {
            status: Status::Success,
            data: Some(Data {
                applied: true,
                operation: Operation::Checkpoint,
                diff_preview: String::new(),
                diff_truncated: false,
                encoding: String::new(),
                bom: false,
                line_endings: None,
                lock: None,
                warnings: Vec::new(),
                change_id: Some(record.id.clone()),
                files: Vec::new(),
                edits: Vec::new(),
            }),
            text: format!(
                "Checkpoint '{name}' set ({}): revert with {{\"to\": \"{name}\"}} undoes every \
                 change after it.",
                record.id
            ),
            stats: Stats {
                time_ms,
                write: Some(WriteStats {
                    bytes_written: 0,
                    original_size: 0,
                    new_size: 0,
                    lines_added: 0,
                    lines_removed: 0,
                }),
            },
            context: Context {
                cwd: CWD.to_owned(),
                params_input: echo,
                path_resolved: None,
            },
            error: None,
        },
        Err(err) => err.into_envelope(time_ms, echo, None),
    }
}
