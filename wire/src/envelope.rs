//! The envelope: what every call answers with (`docs/contract.md#envelope`).
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
//! - `context.params_input`: the arguments as received, long strings elided
//!   ([`crate::echo`]).
//! - `context.path_resolved`: the path actually targeted, or `null` if the
//!   path never resolved.
//! - `error`: `{"code": …, "message": …}`; `text` equals the message.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ErrorCode;

/// Outcome of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Written, preview complete.
    Success,
    /// Dry run, or preview truncated.
    Partial,
    /// Nothing changed.
    Error,
}

impl Status {
    /// The `status` of envelope JSON, `None` if it has none (or is not an
    /// envelope). Reads the `status` key and skips everything else.
    pub fn of_json(envelope: &str) -> Option<Status> {
        #[derive(Deserialize)]
        struct Head {
            status: Status,
        }
        serde_json::from_str::<Head>(envelope)
            .ok()
            .map(|head| head.status)
    }
}

/// What the write did or would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// The target did not exist.
    Create,
    /// The target existed.
    Update,
    /// The target was removed (a revert of its creation).
    Delete,
    /// Several files: see `files` (`write_many`, a revert).
    Many,
    /// A checkpoint was set; no file changed.
    Checkpoint,
}

/// One file of a change of several (`data.files`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileResult {
    /// The file, as `path_resolved` names it.
    pub path: String,
    /// What happened (or, for a dry run, would happen) to it.
    pub operation: Operation,
    /// Bytes written to it.
    pub bytes_written: u64,
    /// Lines added (whole diff).
    pub lines_added: u64,
    /// Lines removed (whole diff).
    pub lines_removed: u64,
}

/// The `data` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Data {
    /// Whether the content is on disk.
    pub applied: bool,
    /// Create or update.
    pub operation: Operation,
    /// The (possibly cut) unified diff.
    pub diff_preview: String,
    /// Whether the preview was cut.
    pub diff_truncated: bool,
    /// The encoding the file is written in (a dry run: would be), WHATWG's
    /// name in lowercase: `utf-8`, `utf-16le`, `windows-1252`, …
    pub encoding: String,
    /// Whether the file starts with a byte-order mark.
    pub bom: bool,
    /// The old file's uniform line ending (`lf` or `crlf`), which the
    /// content's line breaks were given; `None` when the content's were
    /// kept as given (a new file, mixed endings, `keep_format: false`).
    pub line_endings: Option<String>,
    /// What the next write of this file passes as its optimistic lock:
    /// the file as written (a dry run or identical content: as it is);
    /// `None` when there is no file.
    pub lock: Option<LockValues>,
    /// Things the caller should look at; empty when there are none.
    pub warnings: Vec<Warning>,
    /// The journal's id of the change (`docs/contract.md#journal`): what a
    /// revert names. Absent when nothing was recorded (a dry run, no
    /// change, no journal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_id: Option<String>,
    /// The files of a change of several, in order; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileResult>,
    /// Where each edit of an edit call matched and how
    /// (`docs/contract.md#edit`), in order; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<EditMatch>,
}

/// Where one edit matched (`data.edits`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditMatch {
    /// The rung of the matching ladder that found it: `exact`,
    /// `line_endings`, `trailing_whitespace`, `indentation` or
    /// `look_alikes`.
    pub tolerance: String,
    /// The first line of each place it changed, from 1, in the text as it
    /// was when the edit applied.
    pub lines: Vec<u64>,
    /// What was repaired in the edit's texts before a rung found it
    /// (`docs/contract.md#matching`): `line_break_at_end`, `line_numbers`,
    /// `json_escapes`, `html_entities`, `blank_ends`; absent when nothing
    /// was. Not in the WIT record (a field there would break the typed
    /// interface of 0.1): the envelope's `text` says it there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repaired: Vec<String>,
}

/// The lock values of a file, named as the lock parameters are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockValues {
    /// Modification time in whole milliseconds since the epoch; absent
    /// where the platform keeps none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_mtime_ms: Option<i64>,
    /// Size in bytes.
    pub expected_size_bytes: u64,
    /// SHA-256 of the content, lowercase hex; only when the call asked for
    /// it (`report_sha256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_sha256: Option<String>,
}

/// A warning about the content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// What kind of warning (`omission_placeholder`).
    pub kind: WarningKind,
    /// The line of the new content it is about, from 1.
    pub line: u64,
    /// That line (cut to 200 bytes).
    pub text: String,
}

/// Kinds of [`Warning`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// A line such as `// ... rest of the code unchanged ...` in content
    /// that removes lines: the model may have meant to keep what it
    /// omitted.
    OmissionPlaceholder,
}

/// The `stats` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Milliseconds spent in the call.
    pub time_ms: u64,
    /// The remaining fields, absent on error.
    #[serde(flatten)]
    pub write: Option<WriteStats>,
}

/// The `stats` fields that exist when the call did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// The working directory relative to the project root: always `"."`.
    pub cwd: String,
    /// The arguments as received, as a JSON object ([`crate::echo`]).
    pub params_input: Value,
    /// The path actually targeted.
    pub path_resolved: Option<String>,
}

/// The `error` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// Stable code.
    pub code: ErrorCode,
    /// Message, equal to `text`.
    pub message: String,
}

/// The envelope. See the module documentation for the wire format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

/// `context.cwd`: paths are relative to the project root.
pub const CWD: &str = ".";

/// The milliseconds since `start`, as `stats.time_ms` counts them.
pub fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Envelope {
    /// An error envelope: `data` null, `stats` only the time, `text` the
    /// message.
    pub fn error(
        code: ErrorCode,
        message: String,
        time_ms: u64,
        params_input: Value,
        path_resolved: Option<String>,
    ) -> Self {
        Envelope {
            status: Status::Error,
            data: None,
            text: message.clone(),
            stats: Stats {
                time_ms,
                write: None,
            },
            context: Context {
                cwd: CWD.to_owned(),
                params_input,
                path_resolved,
            },
            error: Some(ErrorBody { code, message }),
        }
    }

    /// An error envelope for a request that never reached the tool: no
    /// arguments to echo (`params_input` is `{}`), no time spent.
    pub fn refused(code: ErrorCode, message: impl Into<String>) -> Self {
        Envelope::error(code, message.into(), 0, Value::Object(Map::new()), None)
    }

    /// The envelope as one line of JSON.
    pub fn to_json(&self) -> String {
        // Serialising these plain types cannot fail: every map key is a
        // string and no value is a non-finite float.
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// Decode envelope JSON.
    pub fn from_json(json: &str) -> serde_json::Result<Envelope> {
        serde_json::from_str(json)
    }

    /// The error code, if this is an error envelope.
    pub fn code(&self) -> Option<ErrorCode> {
        self.error.as_ref().map(|e| e.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_envelope_shape() {
        let env = Envelope::error(
            ErrorCode::IsDirectory,
            "Target path is a directory.".into(),
            3,
            serde_json::json!({"path": "."}),
            None,
        );
        let json = env.to_json();
        assert_eq!(
            json,
            r#"{"status":"error","data":null,"text":"Target path is a directory.","stats":{"time_ms":3},"context":{"cwd":".","params_input":{"path":"."},"path_resolved":null},"error":{"code":"IS_DIRECTORY","message":"Target path is a directory."}}"#
        );
        assert_eq!(Envelope::from_json(&json).expect("decode"), env);
        assert_eq!(Status::of_json(&json), Some(Status::Error));
    }

    #[test]
    fn success_round_trips() {
        let env = Envelope {
            status: Status::Partial,
            data: Some(Data {
                applied: false,
                operation: Operation::Update,
                diff_preview: "--- a/x\n+++ b/x\n".into(),
                diff_truncated: false,
                encoding: "utf-16le".into(),
                bom: true,
                line_endings: Some("crlf".into()),
                lock: Some(LockValues {
                    expected_mtime_ms: Some(1_700_000_000_000),
                    expected_size_bytes: 2,
                    expected_sha256: None,
                }),
                warnings: vec![Warning {
                    kind: WarningKind::OmissionPlaceholder,
                    line: 3,
                    text: "// ... rest unchanged".into(),
                }],
                change_id: None,
                files: Vec::new(),
                edits: Vec::new(),
            }),
            text: "[Dry Run] Would update 'x' (+0/-0 lines).".into(),
            stats: Stats {
                time_ms: 1,
                write: Some(WriteStats {
                    bytes_written: 0,
                    original_size: 2,
                    new_size: 2,
                    lines_added: 0,
                    lines_removed: 0,
                }),
            },
            context: Context {
                cwd: CWD.into(),
                params_input: serde_json::json!({"path": "x"}),
                path_resolved: Some("x".into()),
            },
            error: None,
        };
        let json = env.to_json();
        assert!(!json.contains("\"error\""), "{json}");
        assert_eq!(Envelope::from_json(&json).expect("decode"), env);
        assert_eq!(Status::of_json("{}"), None);
    }
}
