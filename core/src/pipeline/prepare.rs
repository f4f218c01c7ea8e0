//! Stages 1 to 5 of a write, from the request to the bytes it will put
//! in the file (see the module list in `mod.rs`): whatever the operation,
//! a file reaches the commit through [`prepare`].

use crate::edit::patch::Hunk;
use crate::edit::{Edit, Voice};
use crate::error::ToolError;
use crate::format::{self, TextEncoding};
use crate::fs;
use crate::params::Request;
use crate::roots::Roots;

use super::change::{self, Change};
use super::config::Config;
use super::merge::{self, Made};
use super::outcome::Outcome;
use super::{edits, lock, old, session, target};

/// What the stages before the commit found: the target, its old file, the
/// new bytes and the outcome so far.
pub(super) struct Prepared<'r, 'b> {
    /// Where the write goes.
    pub(super) target: target::Target<'r>,
    /// The old file, if there is one and it was read.
    pub(super) old: Option<&'b fs::Existing>,
    /// The bytes the file will hold.
    pub(super) bytes: &'b [u8],
    /// The outcome, before the commit.
    pub(super) outcome: Outcome,
    /// The target has other hard links: it was not read.
    pub(super) shared: bool,
    /// The call's change was made on a version it named (or its session
    /// saw): the commit must find the file as it was read.
    pub(super) locked: bool,
    /// The session is to note that it wrote the file.
    pub(super) note: bool,
}

/// What a call puts in the file.
#[derive(Debug, Clone, Copy)]
pub(super) enum Source<'a> {
    /// The request's content, whole.
    Content,
    /// Edits of the old file's text (`docs/contract.md#edit`), and whose
    /// words tell why they do not apply.
    Edits(&'a [Edit], Voice),
    /// A patch's hunks for the old file's text (`docs/contract.md#patch`).
    Hunks(&'a [Hunk]),
    /// Nothing: the file goes (a patch's delete).
    Remove,
    /// The request's content after the old file's text (`append.rs`).
    Append,
}

/// Run the stages up to the commit and hand what they found to `then`.
pub(super) fn prepare<'r, R>(
    roots: &'r Roots,
    request: &Request,
    source: Source<'_>,
    config: &Config,
    resolved: &mut Option<String>,
    then: impl FnOnce(Prepared<'r, '_>) -> Result<R, ToolError>,
) -> Result<R, ToolError> {
    if let Source::Content = source {
        match &request.raw {
            Some(raw) => check_len(raw.len(), config)?,
            None => check_content(&request.content, config)?,
        }
    }
    let target = target::resolve(roots, request.tool, &request.path)?;
    *resolved = Some(target.display.clone());
    target.check_writable(request.create_only, config)?;
    // A file with other names, which may lie outside the root, is replaced
    // without being read: nothing of its content reaches the answer.
    let shared = target.resolved.shared();
    if shared && lock::requested(request) {
        return Err(ToolError::shared_file_lock(&target.display));
    }
    match source {
        Source::Content => {}
        Source::Append => edits::check_append_target(&target, shared)?,
        _ => edits::check_target(&target, shared, matches!(source, Source::Remove))?,
    }
    let old = if shared {
        None
    } else {
        old::read(&target, config)?
    };
    let appends = matches!(source, Source::Append);
    let made = match source {
        Source::Content => Some(Made::Content),
        Source::Edits(list, voice) => Some(Made::Edits(list, voice)),
        Source::Hunks(_) | Source::Remove | Source::Append => None,
    };
    let Versions { base, locked, note } =
        versions(request, &target, old.as_ref(), made.as_ref(), config)?;
    // An append is made on what it read, whether or not the call names a
    // lock value: another writer's lines added meanwhile are not replaced
    // unseen (the commit looks last, as for a locked write).
    let locked = locked || appends;
    if config.read_only && !request.dry_run {
        return Err(ToolError::read_only_root());
    }
    let old_bytes = old.as_ref().map(|o| &o.bytes[..]);
    let plan = format::plan(old_bytes, request.keep_format, request.encoding)
        .map_err(|e| ToolError::not_in_encoding(&TextEncoding::Legacy(e.0).name()))?;
    let merged = base.is_some();
    let (edited, matches) = edited(&plan, base.zip(made), source, request, &target, config)?;
    let content = edited.as_deref().unwrap_or(&request.content);
    // Bytes as given (`content_base64`): their text, when they are UTF-8,
    // is only what the answer's diff shows.
    let raw = request.raw.as_deref().filter(|_| edited.is_none());
    let raw_text = raw.map(format::bytes_text);
    let new = match raw_text {
        None => plan.text_of(content),
        Some(text) => format::NewText {
            text: std::borrow::Cow::Borrowed(text.unwrap_or_default()),
            endings_converted: false,
        },
    };
    let limits = config.diff;
    let Change {
        bytes,
        unchanged,
        diff,
        encoding,
    } = match raw.zip(raw_text) {
        None => change::build(&plan, old_bytes, &new.text, &target.display, &limits)?,
        Some((raw, text)) => change::bytes(&plan, old_bytes, raw, text, &target.display, &limits),
    };
    if config.refuse_placeholders
        && let Some((line, text)) = diff.placeholders.first()
    {
        return Err(ToolError::placeholder(*line, text));
    }
    let new_size = bytes.len() as u64;
    let mut outcome = Outcome::new(old.as_ref(), &plan, &new, new_size, diff, unchanged);
    outcome.format.encoding = encoding;
    outcome.format.binary = matches!(raw_text, Some(None));
    outcome.edits = matches;
    outcome.merged = merged;
    if let Source::Remove = source {
        // Even an empty file goes.
        outcome.operation = write_tool_wire::Operation::Delete;
        outcome.unchanged = false;
    }
    if shared {
        outcome.unread_shared();
    }
    // The old text can be a file-sized copy: gone before the write.
    drop(plan);
    then(Prepared {
        target,
        old: old.as_ref(),
        bytes: &bytes,
        outcome,
        shared,
        locked,
        note,
    })
}

/// What the lock stage found of the versions: the version seen, when the
/// file changed since and the change is to be merged onto it; whether the
/// commit must find the file as it was read; whether the session is to
/// note the write.
struct Versions {
    base: Option<Vec<u8>>,
    locked: bool,
    note: bool,
}

/// The lock stage, in order: read-first; the version the change is made
/// on (the call's `base`, or its session's where a merge can use it); that
/// version and the call's lock values against the file now; where they no
/// longer match, a merge onto the file now, or the session's version let
/// go. Each is looked at once.
fn versions(
    request: &Request,
    target: &target::Target<'_>,
    old: Option<&fs::Existing>,
    made: Option<&Made<'_>>,
    config: &Config,
) -> Result<Versions, ToolError> {
    let seen = session::seen(config, &target.display);
    let note = session::to_note(config, seen.as_ref());
    if made.is_some() {
        // A patch's hunks find their places in the file now: read-first
        // holds a write or an edit only.
        session::check(config, target, request, seen.as_ref())?;
    }
    let requested = lock::requested(request);
    // The session's version stands in for a base only where a merge can
    // use it: a write or edit of a file that is there, which names no lock
    // value of its own. A file gone since is written as it comes.
    let session_base = match (made, old) {
        (Some(_), Some(_)) if !requested => seen.as_ref().and_then(|s| s.as_deref()),
        _ => None,
    };
    let named = request.base.as_deref().or(session_base);
    let locked = requested || named.is_some();
    let Err(err) = lock::check(request, named, old, &target.display) else {
        return Ok(Versions {
            base: None,
            locked,
            note,
        });
    };
    // A stale version that is kept is merged onto the file now. Bytes as
    // given are not text a merge can take.
    let mergeable = made.filter(|_| request.raw.is_none());
    if let Some(base) = merge::base_for(&target.display, named, mergeable, old, config, &err) {
        return Ok(Versions {
            base: Some(base),
            locked,
            note,
        });
    }
    // The session's version, no longer kept: the call named none, and is
    // written as it comes, as before sessions. Not bytes: a write that
    // cannot be merged does not go over a change made since the session
    // saw the file.
    if session_base.is_some() && request.raw.is_none() {
        return Ok(Versions {
            base: None,
            locked: false,
            note,
        });
    }
    Err(err)
}

/// The content a call writes when it is not the request's own: a merge
/// onto the file now of the change made on a `stale` version, an edit's,
/// a patch's or a removal's; and the edits' matches.
fn edited(
    plan: &format::Plan<'_>,
    stale: Option<(Vec<u8>, Made<'_>)>,
    source: Source<'_>,
    request: &Request,
    target: &target::Target<'_>,
    config: &Config,
) -> Result<(Option<String>, Vec<crate::edit::Matched>), ToolError> {
    Ok(match (stale, source) {
        (Some((base, made)), _) => {
            let (text, matches) =
                merge::merged(&base, plan, request, &made, &target.display, config)?;
            check_content(&text, config)?;
            (Some(text), matches)
        }
        (None, Source::Content) => (None, Vec::new()),
        (None, Source::Remove) => (Some(String::new()), Vec::new()),
        (None, Source::Append) => {
            let text = edits::appended(plan, &request.content, &target.display)?;
            check_content(&text, config)?;
            (Some(text), Vec::new())
        }
        (None, Source::Edits(list, voice)) => {
            // The text editor's words name the file as its model did.
            let named = match voice {
                Voice::Tool => target.display.as_str(),
                Voice::TextEditor => request.path.as_str(),
            };
            let edited = edits::apply(plan, list, voice, named, config)?;
            check_content(&edited.text, config)?;
            (Some(edited.text), edited.matches)
        }
        (None, Source::Hunks(hunks)) => {
            let edited = edits::apply_hunks(plan, hunks, &target.display, config)?;
            check_content(&edited.text, config)?;
            (Some(edited.text), edited.matches)
        }
    })
}

pub(super) fn check_content(content: &str, config: &Config) -> Result<(), ToolError> {
    check_len(content.len(), config)
}

/// [`check_content`] of content `len` bytes long.
fn check_len(len: usize, config: &Config) -> Result<(), ToolError> {
    if len == 0 && !config.allow_empty {
        return Err(ToolError::empty_content());
    }
    let len = len as u64;
    if len > config.max_content_bytes {
        return Err(ToolError::content_too_large(len, config.max_content_bytes));
    }
    Ok(())
}
