//! A single file's write or edit, through every stage: [`answer`] turns
//! the request into the envelope.

use std::time::{Instant, SystemTime};

use serde_json::Value;
use write_tool_wire::envelope::{Envelope, elapsed_ms};
use write_tool_wire::request::ToolName;

use crate::error::{ErrorKind, ToolError};
use crate::fs::Unchanged;
use crate::journal::Kind;
use crate::params::Request;
use crate::roots::Roots;

use super::commit;
use super::config::Config;
use super::group::{Change, Extra};
use super::lock;
use super::outcome::Outcome;
use super::prepare::{Prepared, Source, prepare};
use super::session;
use super::stage::{Content, Planned, Seen};

/// Answer a write (or an edit, as `source` says) of one file.
/// A failure is told as `tell` tells it ([`ToolError::as_is`], or a
/// voice's words).
pub(super) fn answer(
    roots: &Roots,
    request: &Request,
    source: Source<'_>,
    echo: Value,
    config: &Config,
    start: Instant,
    tell: impl FnOnce(ToolError) -> ToolError,
) -> Envelope {
    let mut resolved = None;
    match run(roots, request, source, config, &mut resolved).map_err(tell) {
        Ok(outcome) => outcome.into_envelope(request, echo, elapsed_ms(start), resolved),
        Err(err) if request.tool == ToolName::WriteFile && err.kind() == ErrorKind::OutsideRoot => {
            // `write_file`'s callers match on its own wording
            // (`docs/contract.md#several-roots`).
            let err = ToolError::not_allowed(&request.path);
            err.into_envelope(elapsed_ms(start), echo, resolved)
        }
        Err(err) => err.into_envelope(elapsed_ms(start), echo, resolved),
    }
}

/// The stages of a whole-content write, in order. `resolved` gets the
/// target's name as soon as it is known, for the error envelope too.
fn run(
    roots: &Roots,
    request: &Request,
    source: Source<'_>,
    config: &Config,
    resolved: &mut Option<String>,
) -> Result<Outcome, ToolError> {
    let started = SystemTime::now();
    prepare(roots, request, source, config, resolved, |prepared| {
        let Prepared {
            target,
            old,
            bytes,
            mut outcome,
            shared,
            locked,
            note,
        } = prepared;
        if request.dry_run || outcome.unchanged {
            if note && !request.dry_run {
                // The session knows what the file holds: what it sent.
                session::saw(config, &target.display, None);
            }
            // The file stays as it is: its own lock values.
            outcome.applied = !request.dry_run;
            outcome.lock = old.map(|o| lock::values(&o.bytes, o.modified, request.report_sha256));
            return Ok(outcome);
        }
        let expect_unchanged = locked || request.create_only;
        let plan = Planned {
            target: &target,
            content: Content::Bytes(bytes),
            unchanged: expect_unchanged.then_some(match old {
                None => Unchanged::Missing,
                Some(old) => Unchanged::File {
                    len: old.bytes.len() as u64,
                    modified: old.modified,
                },
            }),
            seen: old.map(|old| Seen {
                bytes: Some(&old.bytes),
                size: old.bytes.len() as u64,
                modified: old.modified,
            }),
            shared,
        };
        let change = Change {
            kind: Kind::Write,
            files: vec![plan],
            extra: Extra::default(),
        };
        let done = commit::commit(roots, change, started, config)?;
        if note {
            // The session has seen what it wrote.
            session::saw(config, &target.display, None);
        }
        let committed = commit::committed(&target, &done);
        outcome.change_id = done.record.map(|r| r.id);
        outcome.lock = Some(lock::values(
            bytes,
            committed.modified,
            request.report_sha256,
        ));
        outcome.applied = true;
        outcome.committed = Some(committed);
        Ok(outcome)
    })
}
