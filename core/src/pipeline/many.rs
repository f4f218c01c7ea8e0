//! `write_many` (`docs/contract.md#journal`): several writes, all or
//! none. Each write goes through the stages of a single one up to its
//! commit; only when every path, lock, encoding and content has passed are
//! the files staged, and then committed as one recorded change.

use std::time::{Instant, SystemTime};

use serde_json::Value;
use write_tool_wire::envelope::{Envelope, Operation};

use crate::error::ToolError;
use crate::fs::Unchanged;
use crate::journal::Kind as RecordKind;
use crate::params::ManyRequest;
use crate::roots::Roots;

use super::answer_many::{Group, GroupFile, group_envelope};
use super::commit;
use super::config::Config;
use super::group::{Change, Extra};
use super::outcome::Outcome;
use super::prepare::{Prepared, Source, prepare};
use super::session;
use super::stage::{Content, Planned, Seen};
use super::target::Target;

/// Answer a `write_many`.
pub(super) fn answer(
    roots: &Roots,
    request: &ManyRequest,
    echo: Value,
    config: &Config,
    start: Instant,
) -> Envelope {
    group_envelope(run(roots, request, config), request.dry_run, echo, start)
}

/// One file of a change of several, prepared.
pub(super) struct Ready<'r> {
    pub(super) target: Target<'r>,
    pub(super) bytes: Vec<u8>,
    pub(super) outcome: Outcome,
    pub(super) old: Option<(u64, Option<SystemTime>)>,
    pub(super) expect_unchanged: bool,
    pub(super) shared: bool,
    /// The file goes (a patch's delete or move).
    pub(super) delete: bool,
    /// The session is to note that it wrote the file.
    pub(super) note: bool,
    /// A patch's move: `to '…'` on the old path, `from '…'` on the new.
    pub(super) moved: Option<String>,
    /// The file is a symbolic link, removed as itself (`old` its own size
    /// and time).
    pub(super) link: bool,
}

/// What a change of several files is, for its headline.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    /// `write_many`.
    Writes,
    /// A patch (`apply_patch`).
    Patch,
}

/// Add `one` to `ready`, refusing a second change of the same file; `what`
/// names the request's items (`writes`), or `None` for a patch's.
pub(super) fn push_ready<'r>(
    ready: &mut Vec<Ready<'r>>,
    one: Ready<'r>,
    what: Option<&str>,
) -> Result<(), ToolError> {
    if let Some(j) = ready
        .iter()
        .position(|r| r.target.display == one.target.display)
    {
        let file = &one.target.display;
        return Err(ToolError::invalid_param(match what {
            Some(what) => format!(
                "{what}[{j}] and {what}[{}] both change '{file}'; nothing was written.",
                ready.len()
            ),
            None => format!("The patch changes '{file}' twice; nothing was written."),
        }));
    }
    // One write's file is a directory another write needs: refused here,
    // in words, rather than failing as the directory is made.
    let under = |dir: &str, file: &str| file.strip_prefix(dir).is_some_and(|r| r.starts_with('/'));
    if let Some(j) = ready.iter().position(|r| {
        under(&r.target.display, &one.target.display)
            || under(&one.target.display, &r.target.display)
    }) {
        let (a, b) = (&ready[j].target.display, &one.target.display);
        let file = if under(a, b) { a } else { b };
        let pair = match what {
            Some(what) => format!("{what}[{j}] ('{a}') and {what}[{}] ('{b}')", ready.len()),
            None => format!("The patch's '{a}' and '{b}'"),
        };
        return Err(ToolError::invalid_param(format!(
            "{pair}: '{file}' would have to be both a file and a directory; nothing was written."
        )));
    }
    ready.push(one);
    Ok(())
}

fn run(roots: &Roots, request: &ManyRequest, config: &Config) -> Result<Group, ToolError> {
    let count = request.writes.len() as u64;
    if count > config.many_max_files {
        return Err(ToolError::invalid_param(format!(
            "'writes' holds {count} writes, over this host's limit of {} files per write_many; \
             nothing was written.",
            config.many_max_files
        )));
    }
    let total: u64 = request.writes.iter().map(|w| w.content.len() as u64).sum();
    if total > config.many_max_bytes {
        return Err(ToolError::invalid_param(format!(
            "'writes' carries {total} bytes of content, over this host's limit of {} bytes per \
             write_many; nothing was written.",
            config.many_max_bytes
        )));
    }
    // A dry run changes nothing and needs no record.
    let journal = config.journal.is_some();
    if !journal && !request.dry_run {
        return Err(ToolError::no_journal_for_many());
    }
    let started = SystemTime::now();
    let mut ready: Vec<Ready<'_>> = Vec::with_capacity(request.writes.len());
    for (i, write) in request.writes.iter().enumerate() {
        let mut resolved = None;
        let one = prepare(roots, write, Source::Content, config, &mut resolved, |p| {
            Ok(Ready::of(p, write))
        })
        .map_err(|e| e.prefixed(&format!("writes[{i}] ('{}')", write.path)))?;
        push_ready(&mut ready, one, Some("writes"))?;
    }
    finish(
        roots,
        ready,
        request.dry_run,
        journal,
        Kind::Writes,
        started,
        config,
    )
}

impl<'r> Ready<'r> {
    /// The file as the commit takes it.
    pub(super) fn planned<'a>(&'a self) -> Planned<'r, 'a> {
        let as_read = self.old.map(|(len, modified)| match self.link {
            true => Unchanged::Link { len, modified },
            false => Unchanged::File { len, modified },
        });
        Planned {
            target: &self.target,
            content: if self.delete {
                Content::Remove
            } else {
                Content::Bytes(&self.bytes)
            },
            // A removal always looks: it must take what the call read.
            unchanged: if self.delete {
                as_read
            } else {
                self.expect_unchanged
                    .then_some(as_read.unwrap_or(Unchanged::Missing))
            },
            seen: self.old.map(|(size, modified)| Seen {
                bytes: None,
                size,
                modified,
            }),
            shared: self.shared,
        }
    }

    /// A write, prepared for `request`.
    pub(super) fn of(p: Prepared<'r, '_>, request: &crate::params::Request) -> Ready<'r> {
        Ready {
            target: p.target,
            bytes: p.bytes.to_vec(),
            outcome: p.outcome,
            old: p.old.map(|o| (o.bytes.len() as u64, o.modified)),
            expect_unchanged: p.locked || request.create_only,
            note: p.note,
            shared: p.shared,
            delete: false,
            moved: None,
            link: false,
        }
    }
}

/// Commit `ready` as one recorded change (or, for a dry run, say what it
/// would be).
pub(super) fn finish(
    roots: &Roots,
    ready: Vec<Ready<'_>>,
    dry_run: bool,
    journal: bool,
    kind: Kind,
    started: SystemTime,
    config: &Config,
) -> Result<Group, ToolError> {
    let mut group = Group {
        files: ready.iter().map(file_of).collect(),
        applied: false,
        change_id: None,
        headline: String::new(),
    };
    let changed = ready.iter().filter(|r| !r.outcome.unchanged).count();
    let verb = match kind {
        Kind::Writes => "write",
        Kind::Patch => "change",
    };
    if dry_run {
        group.headline = format!(
            "[Dry Run] Would {verb} {} of {} files as one change.",
            changed,
            ready.len()
        );
        return Ok(group);
    }
    if !journal {
        return Err(ToolError::no_journal_for_many());
    }
    if changed == 0 {
        group.applied = true;
        group.headline = format!(
            "No changes: all {} files already hold their content.",
            ready.len()
        );
        return Ok(group);
    }
    let files: Vec<Planned<'_, '_>> = ready
        .iter()
        .filter(|r| !r.outcome.unchanged)
        .map(Ready::planned)
        .collect();
    let change = Change {
        kind: RecordKind::Many,
        files,
        extra: Extra::default(),
    };
    let done = commit::commit(roots, change, started, config)?;
    // The session has seen what it wrote.
    for r in ready.iter().filter(|r| r.note && !r.delete) {
        session::saw(config, &r.target.display, None);
    }
    let record = done.record.ok_or_else(ToolError::no_journal_for_many)?;
    group.applied = true;
    group.headline = match kind {
        Kind::Writes => format!(
            "Wrote {changed} of {} files as one change ({}).",
            ready.len(),
            record.id
        ),
        Kind::Patch => format!(
            "Applied the patch: {changed} of {} files changed as one change ({}).",
            ready.len(),
            record.id
        ),
    };
    group.change_id = Some(record.id);
    Ok(group)
}

pub(super) fn file_of(r: &Ready<'_>) -> GroupFile {
    let o = &r.outcome;
    GroupFile {
        path: r.target.display.clone(),
        operation: o.operation,
        preview: o.diff.preview.clone(),
        truncated: o.diff.truncated || o.split_links,
        lines_added: if o.operation == Operation::Create && r.moved.is_none() {
            o.new_lines
        } else {
            o.diff.lines_added
        },
        lines_removed: o.diff.lines_removed,
        sizes: (o.original_size, o.new_size),
        changes: !o.unchanged,
        warnings: o.diff.placeholders.clone(),
        encoding: o.format.encoding.name(),
        moved: r.moved.clone(),
    }
}
