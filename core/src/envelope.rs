//! The envelope: what every call answers with.
//!
//! # Format
//!
//! One JSON object whose top-level keys are exactly `status`, `data`,
//! `text`, `stats`, `context`, plus `error` only when `status` is `"error"`:
//!
//! ```json
//! {
//!   "status": "success",
//!   "data": {
//!     "applied": true,
//!     "operation": "create",
//!     "diff_preview": "--- a/src/new.py\n+++ b/src/new.py\n@@ -0,0 +1,2 @@\n+def hello():\n+    print(\"world\")\n",
//!     "diff_truncated": false
//!   },
//!   "text": "Created 'src/new.py' (2 lines, 33 bytes).\n(Created directory: src/)",
//!   "stats": {
//!     "time_ms": 1,
//!     "bytes_written": 33,
//!     "original_size": 0,
//!     "new_size": 33,
//!     "lines_added": 2,
//!     "lines_removed": 0
//!   },
//!   "context": {
//!     "cwd": ".",
//!     "params_input": {"path": "src/new.py", "content": "def hello():\n    print(\"world\")\n"},
//!     "path_resolved": "src/new.py"
//!   }
//! }
//! ```
//!
//! - `status`: `"success"` (written, preview complete), `"partial"` (dry run,
//!   or preview truncated), `"error"` (nothing changed on disk).
//! - `data`: `null` on error.
//! - `stats`: on error only `{"time_ms": n}`. A dry run has
//!   `bytes_written = 0` and `new_size = original_size`. `lines_added` and
//!   `lines_removed` count the whole diff even when the preview is cut.
//! - `context.params_input`: the arguments as received; a `content` longer
//!   than 1024 bytes is replaced by `"[N bytes elided]"`.
//! - `context.path_resolved`: root-relative POSIX path actually targeted, or
//!   `null` if the path never resolved.
//! - `error`: `{"code": …, "message": …}`; `text` equals the message.

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::error::{ErrorCode, ToolError};

/// Outcome of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Written, preview complete.
    Success,
    /// Dry run, or preview truncated.
    Partial,
    /// Nothing changed.
    Error,
}

/// What the write did or would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// The target did not exist.
    Create,
    /// The target existed.
    Update,
}

/// The `data` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Data {
    /// Whether the content is on disk.
    pub applied: bool,
    /// Create or update.
    pub operation: Operation,
    /// The (possibly cut) unified diff.
    pub diff_preview: String,
    /// Whether the preview was cut.
    pub diff_truncated: bool,
}

/// The `stats` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Milliseconds spent in the call.
    pub time_ms: u64,
    /// The remaining fields, absent on error.
    #[serde(flatten)]
    pub write: Option<WriteStats>,
}

/// The `stats` fields that exist when the call did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WriteStats {
    /// Bytes written to disk.
    pub bytes_written: u64,
    /// Size before.
    pub original_size: u64,
    /// Size after.
    pub new_size: u64,
    /// Lines added (whole diff).
    pub lines_added: u64,
    /// Lines removed (whole diff).
    pub lines_removed: u64,
}

/// The `context` field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Context {
    /// Always `"."`.
    pub cwd: &'static str,
    /// The arguments as received (content elided past 1024 bytes).
    pub params_input: Value,
    /// The root-relative path targeted.
    pub path_resolved: Option<String>,
}

/// The `error` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorBody {
    /// Stable code.
    #[serde(serialize_with = "serialize_code")]
    pub code: ErrorCode,
    /// Message, equal to `text`.
    pub message: String,
}

fn serialize_code<S: Serializer>(code: &ErrorCode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(code.as_str())
}

/// The envelope. See the module documentation for the wire format.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Envelope {
    /// Outcome.
    pub status: Status,
    /// What was written; `None` on error.
    pub data: Option<Data>,
    /// Text for a human or a model.
    pub text: String,
    /// Numbers.
    pub stats: Stats,
    /// What was asked and targeted.
    pub context: Context,
    /// Why it failed; only on error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

impl Envelope {
    /// The error envelope for `err`.
    pub fn error(
        err: ToolError,
        time_ms: u64,
        params_input: Value,
        path_resolved: Option<String>,
    ) -> Self {
        Envelope {
            status: Status::Error,
            data: None,
            text: err.message.clone(),
            stats: Stats {
                time_ms,
                write: None,
            },
            context: Context {
                cwd: ".",
                params_input,
                path_resolved,
            },
            error: Some(ErrorBody {
                code: err.code,
                message: err.message,
            }),
        }
    }

    /// The envelope as one line of JSON.
    pub fn to_json(&self) -> String {
        // Serialising these plain types cannot fail: every map key is a
        // string and no value is a non-finite float.
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_envelope_shape() {
        let env = Envelope::error(
            ToolError::is_directory(),
            3,
            serde_json::json!({"path": "."}),
            None,
        );
        insta::assert_snapshot!(env.to_json(), @r#"{"status":"error","data":null,"text":"Target path is a directory.","stats":{"time_ms":3},"context":{"cwd":".","params_input":{"path":"."},"path_resolved":null},"error":{"code":"IS_DIRECTORY","message":"Target path is a directory."}}"#);
    }
}
