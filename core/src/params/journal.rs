//! `write_many`, `revert`, `checkpoint` and the host's `journal`: their
//! arguments.

use serde_json::{Map, Value};

use write_tool_wire::echo;
use write_tool_wire::request::ToolName;

use crate::error::ToolError;

use super::fields::{Request, fields, flag, missing, wrong_type};

/// `write_many`: the writes, each a `Write` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManyRequest {
    /// The writes, in order.
    pub writes: Vec<Request>,
    /// Compute everything, change nothing.
    pub dry_run: bool,
}

/// `revert`: what to undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevertRequest {
    /// The change, or the checkpoint, to go back before.
    pub target: RevertTarget,
    /// Compute everything, change nothing.
    pub dry_run: bool,
    /// Revert even files changed since, losing those changes.
    pub force: bool,
}

/// What a revert goes back before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevertTarget {
    /// The latest change.
    Latest,
    /// The change with this id.
    Change(String),
    /// Every change since the checkpoint of this name.
    Checkpoint(String),
    /// The latest change of the file of this name (as the journal names
    /// it), which must have changed that file alone: Anthropic's text
    /// editor's `undo_edit`.
    LatestOf(String),
}

/// The host's requests on the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalRequest {
    /// The records, newest first, of a path or all.
    History {
        /// Only changes of this path.
        path: Option<String>,
    },
    /// Check the chain of records.
    Verify,
    /// Apply the bounds now.
    Gc,
    /// Seal the journal for a snapshot (`docs/contract.md#quiesce`).
    Seal,
    /// Check, and take away, the seal a quiesce left.
    CheckSeal,
}

/// `write_many`'s arguments.
pub(super) fn many(args: &Map<String, Value>) -> Result<ManyRequest, ToolError> {
    let dry_run = flag(args, "dry_run", false)?;
    let Some(writes) = args.get("writes") else {
        return Err(missing("writes"));
    };
    let Value::Array(items) = writes else {
        return Err(wrong_type("writes", "an array of write arguments"));
    };
    if items.is_empty() {
        return Err(ToolError::invalid_param(
            "Parameter 'writes' is empty: give one write or more.",
        ));
    }
    let mut requests = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Value::Object(item) = item else {
            return Err(wrong_type(&format!("writes[{i}]"), "an object"));
        };
        if item.contains_key("dry_run") {
            return Err(ToolError::invalid_param(format!(
                "writes[{i}] has 'dry_run': give it once, beside 'writes'."
            )));
        }
        // Bytes are one file's write (`docs/contract.md#bytes`): not taken
        // here rather than ignored beside a `content`.
        if item.contains_key(super::fields::CONTENT_BASE64) {
            return Err(ToolError::invalid_param(format!(
                "writes[{i}] has 'content_base64': write_many writes text; write bytes with \
                 Write, one file at a time."
            )));
        }
        let content = match item.get("content") {
            Some(Value::String(text)) => Some(text.clone()),
            _ => None,
        };
        let mut request = fields(item, content, ToolName::Write)
            .map_err(|e| ToolError::invalid_param(format!("writes[{i}]: {}", e.message())))?;
        request.dry_run = dry_run;
        requests.push(request);
    }
    Ok(ManyRequest {
        writes: requests,
        dry_run,
    })
}

/// The echo of `write_many`'s arguments, each content elided as a write's
/// is.
pub(super) fn echo_many(mut args: Map<String, Value>) -> Value {
    if let Some(Value::Array(items)) = args.get_mut("writes") {
        for item in items {
            if let Value::Object(item) = item
                && let Some(Value::String(text)) = item.get("content")
            {
                let elided = echo::content(text);
                item.insert("content".into(), elided);
            }
        }
    }
    echo::arguments(args)
}

/// `revert`'s arguments.
pub(super) fn revert(args: &Map<String, Value>) -> Result<RevertRequest, ToolError> {
    let text = |name: &str| match args.get(name) {
        None => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_owned())),
        Some(_) => Err(wrong_type(name, "a non-empty string")),
    };
    let target = match (text("change_id")?, text("to")?) {
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid_param(
                "Give 'change_id' or 'to', not both.",
            ));
        }
        (Some(id), None) => RevertTarget::Change(id),
        (None, Some(name)) => RevertTarget::Checkpoint(name),
        (None, None) => RevertTarget::Latest,
    };
    Ok(RevertRequest {
        target,
        dry_run: flag(args, "dry_run", false)?,
        force: flag(args, "force", false)?,
    })
}

/// `checkpoint`'s arguments: its name.
pub(super) fn checkpoint(args: &Map<String, Value>) -> Result<String, ToolError> {
    match args.get("checkpoint") {
        Some(Value::String(name)) if !name.trim().is_empty() && name.len() <= 200 => {
            Ok(name.trim().to_owned())
        }
        Some(_) => Err(wrong_type("checkpoint", "a name of 1 to 200 bytes")),
        None => Err(missing("checkpoint")),
    }
}

/// The host's `journal` request: `{"journal": "history" | "verify" | "gc"
/// | "seal" | "check_seal",
/// "path": …}`.
pub(super) fn journal(args: &Map<String, Value>) -> Result<JournalRequest, ToolError> {
    match args.get("journal").and_then(Value::as_str) {
        Some("history") => Ok(JournalRequest::History {
            path: args.get("path").and_then(Value::as_str).map(str::to_owned),
        }),
        Some("verify") => Ok(JournalRequest::Verify),
        Some("gc") => Ok(JournalRequest::Gc),
        Some("seal") => Ok(JournalRequest::Seal),
        Some("check_seal") => Ok(JournalRequest::CheckSeal),
        _ => Err(wrong_type(
            "journal",
            "\"history\", \"verify\", \"gc\", \"seal\" or \"check_seal\"",
        )),
    }
}
