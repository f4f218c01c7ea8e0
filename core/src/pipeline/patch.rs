//! `apply_patch` (`docs/contract.md#patch`): each file operation of a
//! patch goes through the stages of a write up to its commit (an update's
//! hunks as its front stage, like an edit's); only when every one has
//! passed are they committed together, as one recorded change.
//!
//! Deleting and moving are powers a host grants (`allow_delete`); a patch
//! of several files, or one that deletes or moves, needs the journal to be
//! all or nothing and undoable. A patch of one added or updated file
//! commits as a write does, journal or not.

use std::time::{Instant, SystemTime};

use serde_json::Value;
use write_tool_wire::envelope::Envelope;
use write_tool_wire::request::ToolName;

use crate::edit::patch::FileOp;
use crate::error::{ErrorKind, ToolError};
use crate::fs::sys::Kind as EntryKind;
use crate::fs::{self, TargetKind};
use crate::journal::Kind;
use crate::params::{PatchRequest, Request};
use crate::roots::Roots;

use super::answer_many::{Group, group_envelope};
use super::commit;
use super::config::Config;
use super::group::{Change, Extra};
use super::many::{self, Ready, push_ready};
use super::prepare::{Source, prepare};
use super::session;
use super::target;

/// Answer an `apply_patch`.
pub(super) fn answer(
    roots: &Roots,
    request: &PatchRequest,
    echo: Value,
    config: &Config,
    start: Instant,
) -> Envelope {
    group_envelope(run(roots, request, config), request.dry_run, echo, start)
}

fn run(roots: &Roots, request: &PatchRequest, config: &Config) -> Result<Group, ToolError> {
    let ops = &request.patch.ops;
    let journal = allowed(request, config)?;
    let started = SystemTime::now();
    let mut ready: Vec<Ready<'_>> = Vec::with_capacity(ops.len());
    for op in ops {
        let named = |e: ToolError| e.prefixed(&label(op));
        match op {
            FileOp::Add { path, content } => {
                let mut request = file_request(path, request.dry_run);
                request.content.clone_from(content);
                request.create_only = true;
                let one = prepared(roots, &request, Source::Content, config).map_err(named)?;
                push_ready(&mut ready, one, None)?;
            }
            FileOp::Update {
                path,
                move_to,
                hunks,
            } => {
                let request = file_request(path, request.dry_run);
                let one = prepared(roots, &request, Source::Hunks(hunks), config).map_err(named)?;
                let (one, gone) = match move_to {
                    Some(dest) => moved(roots, one, dest, config).map_err(named)?,
                    None => (one, None),
                };
                if let Some(gone) = gone {
                    push_ready(&mut ready, gone, None)?;
                }
                push_ready(&mut ready, one, None)?;
            }
            FileOp::Delete { path } => {
                let gone = removal(roots, path, request.dry_run, config).map_err(named)?;
                push_ready(&mut ready, gone, None)?;
            }
        }
    }
    if !journal && !request.dry_run {
        return commit_alone(roots, ready, started, config);
    }
    many::finish(
        roots,
        ready,
        request.dry_run,
        journal,
        many::Kind::Patch,
        started,
        config,
    )
}

/// Whether the host lets this patch be made (deletes and moves need its
/// leave, a change of several files its journal, and the files are
/// bounded), and whether it keeps a journal.
fn allowed(request: &PatchRequest, config: &Config) -> Result<bool, ToolError> {
    let ops = &request.patch.ops;
    let removes = ops.iter().any(|op| {
        matches!(
            op,
            FileOp::Delete { .. }
                | FileOp::Update {
                    move_to: Some(_),
                    ..
                }
        )
    });
    if removes && !config.allow_delete {
        return Err(ToolError::host_refuses(
            "delete or move files ('*** Delete File:' and '*** Move to:' in a patch; the host \
             allows them with WRITE_TOOL_ALLOW_DELETE)",
        ));
    }
    let single = ops.len() == 1 && !removes;
    let journal = config.journal.is_some();
    if !journal && !request.dry_run && !single {
        return Err(ToolError::no_journal_for_patch());
    }
    if ops.len() as u64 > config.many_max_files {
        return Err(ToolError::invalid_param(format!(
            "The patch changes {} files, over this host's limit of {} per change; nothing was \
             written.",
            ops.len(),
            config.many_max_files
        )));
    }
    Ok(journal)
}

/// An update `one` that moves its file to `dest`: the file at the new
/// name (a create), and the old name going, as read for the update.
fn moved<'r>(
    roots: &'r Roots,
    mut one: Ready<'r>,
    dest: &str,
    config: &Config,
) -> Result<(Ready<'r>, Option<Ready<'r>>), ToolError> {
    let target = target::resolve(roots, ToolName::Write, dest)?;
    target.check_writable(true, config)?;
    // The preview shows the change under both names, as git shows a
    // rename.
    let (from, to) = (one.target.display.clone(), target.display.clone());
    one.outcome.diff.preview = one.outcome.diff.preview.replacen(
        &format!("\n+++ b/{from}\n"),
        &format!("\n+++ b/{to}\n"),
        1,
    );
    // The old name goes: its lines live on under the new one, so its
    // preview is empty.
    let gone = Ready {
        target: std::mem::replace(&mut one.target, target),
        bytes: Vec::new(),
        outcome: one.outcome.moved_away(),
        old: one.old.take(),
        expect_unchanged: true,
        shared: false,
        delete: true,
        note: false,
        moved: Some(format!("to '{to}'")),
        link: false,
    };
    one.moved = Some(format!("from '{from}'"));
    one.expect_unchanged = true;
    one.outcome.operation = write_tool_wire::Operation::Create;
    Ok((one, Some(gone)))
}

/// How an error names the operation it came from.
fn label(op: &FileOp) -> String {
    match op {
        FileOp::Add { path, .. } => format!("Add File '{path}'"),
        FileOp::Delete { path } => format!("Delete File '{path}'"),
        FileOp::Update { path, .. } => format!("Update File '{path}'"),
    }
}

/// A write's parameters for one file of the patch.
fn file_request(path: &str, dry_run: bool) -> Request {
    Request::new(path.to_owned(), String::new(), dry_run)
}

/// One file through the stages before the commit.
fn prepared<'r>(
    roots: &'r Roots,
    request: &Request,
    source: Source<'_>,
    config: &Config,
) -> Result<Ready<'r>, ToolError> {
    let mut resolved = None;
    let mut ready = prepare(roots, request, source, config, &mut resolved, |p| {
        Ok(Ready::of(p, request))
    })?;
    // A hunk applies to the file as read: a file changed since is not
    // replaced, with or without a journal.
    ready.expect_unchanged = true;
    Ok(ready)
}

/// The file at `path`, to be removed: it goes through the stages as a
/// write of nothing would (the sandbox, protected paths, read-only roots);
/// it must be a file the tool reads, and the preview shows every line
/// going.
fn removal<'r>(
    roots: &'r Roots,
    path: &str,
    dry_run: bool,
    config: &Config,
) -> Result<Ready<'r>, ToolError> {
    let request = file_request(path, dry_run);
    if let Some(link) = link_removal(roots, &request, config)? {
        return Ok(link);
    }
    let mut gone = prepared(roots, &request, Source::Remove, config)?;
    gone.delete = true;
    Ok(gone)
}

/// The link at `request`'s path, to be removed as itself, as `rm` and
/// git remove a link (`docs/contract.md#patch`); `None` when the last
/// name is not a link. Links above it are followed; what the link leads
/// to is neither read nor changed, and counts only where it is protected.
/// The link's own place is checked (protected paths, read-only roots), and
/// its target's text is what the journal keeps to make it again.
fn link_removal<'r>(
    roots: &'r Roots,
    request: &Request,
    config: &Config,
) -> Result<Option<Ready<'r>>, ToolError> {
    // `link/` and `link/.` name what the link leads to, as for `rm`.
    if request
        .path
        .rsplit('/')
        .next()
        .is_some_and(|last| last.is_empty() || last == ".")
    {
        return Ok(None);
    }
    let target = target::resolve_as(roots, request.tool, &request.path, false)?;
    if target.resolved.kind != TargetKind::Link {
        return Ok(None);
    }
    target.check_place(config)?;
    // What git protects through a link (`core.hooksPath`, an include) is
    // the place it leads to; with the link gone, that place would take
    // writes, and the link made again would give git what they wrote.
    if let Ok(followed) = target::resolve(roots, request.tool, &request.path)
        && followed
            .check_place(config)
            .is_err_and(|e| e.kind() == ErrorKind::Protected)
    {
        return Err(ToolError::protected_link(&target.display));
    }
    if config.read_only && !request.dry_run {
        return Err(ToolError::read_only_root());
    }
    let dir = fs::walk(target.root, target.resolved.parent()).map_err(|e| fs::walk::error(&e))?;
    let name = target.resolved.file_name();
    let stat = dir
        .stat_at(name)
        .map_err(|e| fs::io_error(&e, "resolving the path"))?;
    if stat.kind != EntryKind::Symlink {
        // Swapped since the walk.
        return Err(ToolError::replaced_while_read());
    }
    // An absolute target (which the component's sandbox does not read),
    // or one that is not text: the journal could not make it again.
    let to = match dir.read_link_at(name) {
        Ok(Some(to)) if !to.starts_with('/') => to,
        Ok(_) => return Err(ToolError::unreadable_link(&target.display)),
        Err(e) if fs::sys::is_sandbox_refusal(&e) => {
            return Err(ToolError::unreadable_link(&target.display));
        }
        Err(e) => return Err(fs::io_error(&e, "resolving the path")),
    };
    let shown = super::outcome::link_text(&to);
    let diff = crate::diff::diff(&shown, "", &target.display, &config.diff);
    Ok(Some(Ready {
        outcome: super::outcome::Outcome::link_removed(stat.len, diff),
        target,
        bytes: Vec::new(),
        old: Some((stat.len, stat.modified)),
        expect_unchanged: true,
        shared: false,
        delete: true,
        note: false,
        moved: None,
        link: true,
    }))
}

/// A patch of one added or updated file, on a host with no journal:
/// committed as a write is.
fn commit_alone(
    roots: &Roots,
    mut ready: Vec<Ready<'_>>,
    started: SystemTime,
    config: &Config,
) -> Result<Group, ToolError> {
    let r = ready.pop().ok_or_else(ToolError::no_journal_for_patch)?;
    let mut group = Group {
        files: vec![many::file_of(&r)],
        applied: true,
        change_id: None,
        headline: String::new(),
    };
    if r.outcome.unchanged {
        group.headline = "No changes: the file already holds what the patch makes.".to_owned();
        return Ok(group);
    }
    let change = Change {
        kind: Kind::Many,
        files: vec![r.planned()],
        extra: Extra::default(),
    };
    commit::commit(roots, change, started, config)?;
    if r.note && !r.delete {
        session::saw(config, &r.target.display, None);
    }
    group.headline = "Applied the patch: 1 of 1 files changed.".to_owned();
    Ok(group)
}
