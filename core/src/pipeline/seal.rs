//! The journal sealed for a snapshot, and the seal checked on the next
//! start (`docs/contract.md#quiesce`): the chain's head and what the files
//! of the last change hold, so that a suspended sandbox that resumes, or a
//! snapshot restored, can tell whether its journal and those files still
//! go together.

use std::time::SystemTime;

use serde_json::{Value, json};
use write_tool_wire::request::ToolName;

use crate::error::ToolError;
use crate::journal::{Head, Held, Key, Kind, Seal, Sealed, chain, ms};
use crate::roots::Roots;

use super::choose::Stack;
use super::restore::{holds, holds_link};
use super::stage::parent_of;
use super::target;

/// Seal the journal `held`, whose chain `verified` (`admin::verify`'s
/// answer) checked: its head and the files of its last change, as they
/// are, written to the journal and synced. Answers the seal and its
/// SHA-256, the digest an operator keeps beside the snapshot.
pub(super) fn seal(held: &Held<'_>, roots: &Roots, verified: &Value) -> Result<Value, ToolError> {
    let verify = &verified["verify"];
    if verify["ok"] != true {
        return Err(ToolError::journal_io(&std::io::Error::other(format!(
            "the journal's chain does not verify ({}); it is not sealed",
            verify["problem"]
        ))));
    }
    let journal = held.journal();
    let io = |e: std::io::Error| ToolError::journal_io(&e);
    let key = journal.key().map_err(io)?;
    let files = last_change(held)?
        .into_iter()
        .map(|(path, digest, link)| {
            let held = holds_now(roots, key, &path, digest.as_deref(), link);
            Sealed {
                path,
                digest,
                held,
                link,
            }
        })
        .collect();
    let seal = Seal {
        head: head_of(verify),
        files,
        time_ms: ms(SystemTime::now()),
    };
    journal.write_seal(&seal).map_err(io)?;
    // The seal's own line hashed as a record's is: what an operator keeps.
    let digest = chain(&serde_json::to_vec(&seal).unwrap_or_default());
    Ok(json!({"seal": seal, "digest": digest}))
}

/// Check the seal a quiesce left, if any, and take it away: the journal's
/// head must be the one sealed (nothing written, nothing cut off), and
/// each sealed file must hold what it held. `{"check": null}` when there
/// is none.
pub(super) fn check(held: &Held<'_>, roots: &Roots, verified: &Value) -> Result<Value, ToolError> {
    let journal = held.journal();
    let io = |e: std::io::Error| ToolError::journal_io(&e);
    let Some(seal) = journal.read_seal().map_err(io)? else {
        return Ok(json!({ "check": null }));
    };
    let verify = &verified["verify"];
    let mut problems = Vec::new();
    if verify["ok"] != true {
        problems.push(
            json!({"problem": "the journal's chain does not verify", "detail": verify["problem"]}),
        );
    }
    let head = head_of(verify);
    if head != seal.head {
        problems.push(json!({"problem": "the journal's head is not the one sealed", "sealed": seal.head, "now": head}));
    }
    let key = journal.key().map_err(io)?;
    for file in &seal.files {
        if file.held && !holds_now(roots, key, &file.path, file.digest.as_deref(), file.link) {
            problems.push(json!({"problem": "the file changed since the seal", "path": file.path}));
        }
    }
    journal.remove_seal().map_err(io)?;
    Ok(json!({"check": {
        "ok": problems.is_empty(),
        "sealed_at_ms": seal.time_ms,
        "head": seal.head,
        "files": seal.files.len(),
        "problems": problems,
    }}))
}

/// The head `admin::verify` reported.
fn head_of(verify: &Value) -> Option<Head> {
    serde_json::from_value(verify["head"].clone()).ok()
}

/// The files of the last change that stands (not voided), each with the
/// digest of what it left there (`None`: no file).
fn last_change(held: &Held<'_>) -> Result<Vec<(String, Option<String>, bool)>, ToolError> {
    let stack = Stack::read(held.journal())?;
    let mut last = Vec::new();
    held.journal()
        .scan(|_, record| {
            if let Some(r) = record
                && matches!(r.kind, Kind::Write | Kind::Many | Kind::Revert)
                && !stack.is_voided(r.seq)
            {
                last = r
                    .files
                    .into_iter()
                    .map(|f| {
                        let link = f.new.as_ref().is_some_and(|s| s.link);
                        (f.path, f.new.map(|s| s.digest), link)
                    })
                    .collect();
            }
            Ok(true)
        })
        .map_err(|e| ToolError::journal_io(&e))?;
    Ok(last)
}

/// Whether the file `path` (as a record names it) holds what `digest`
/// names now — a file, or for `link` a symbolic link to the text it names;
/// for `None`, whether it is absent.
fn holds_now(roots: &Roots, key: &Key, path: &str, digest: Option<&str>, link: bool) -> bool {
    // A link the change made is the link itself, not followed.
    let Ok(target) = target::resolve_as(roots, ToolName::WriteFile, path, !link) else {
        return false;
    };
    let Ok(dir) = parent_of(&target) else {
        return digest.is_none();
    };
    let name = target.resolved.file_name();
    match digest {
        Some(digest) if link => holds_link(key, &dir, name, digest),
        Some(digest) => holds(key, &dir, name, digest),
        None => dir
            .stat_at(name)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound),
    }
}
