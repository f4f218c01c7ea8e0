//! Tool-call arguments (`docs/contract.md#requests`, `#parameters`): strict
//! JSON in, a [`Request`] and the echo
//! for `params_input` out.
//!
//! Accepted shapes (`write_tool_wire::request`, which takes them apart):
//! the arguments object itself, a tool call `{"name": "Write", "arguments":
//! {…}}` whose `arguments` may also be a string holding the object (an
//! OpenAI Responses `function_call` item is one), an OpenAI `tool_calls`
//! item holding such a call in its `function`, or an Anthropic `tool_use`
//! block.
//!
//! Malformed JSON, trailing data, duplicate keys, lone surrogates, a
//! non-object, a missing required field or a wrong type all give
//! `INVALID_PARAM` naming the problem. Unknown fields are ignored and still
//! echoed.

use serde_json::{Map, Value};

use write_tool_wire::echo;
pub use write_tool_wire::request::ToolName;
use write_tool_wire::request::{self as shapes, SHAPES, ShapeError, unwrap};

use crate::edit::Edit;
use crate::edit::patch::{self, Patch};
use crate::error::ToolError;

/// One validated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Which name the call used.
    pub tool: ToolName,
    /// The path as given.
    pub path: String,
    /// The content to write.
    pub content: String,
    /// Compute everything, change nothing.
    pub dry_run: bool,
    /// Optimistic lock: the file's mtime in milliseconds since the epoch.
    pub expected_mtime_ms: Option<i64>,
    /// Optimistic lock: the file's size.
    pub expected_size_bytes: Option<u64>,
    /// Optimistic lock: the file's SHA-256, lowercase or uppercase hex.
    pub expected_sha256: Option<String>,
    /// Keep the old file's encoding, byte-order mark and line endings
    /// (`docs/contract.md#format`); `false` writes the content as given.
    pub keep_format: bool,
    /// Refuse to replace a file that exists.
    pub create_only: bool,
    /// Report the SHA-256 of the file in the envelope's lock values.
    pub report_sha256: bool,
    /// The encoding the caller says the old file is in: replaces detection
    /// (`docs/contract.md#format`).
    pub encoding: Option<&'static encoding_rs::Encoding>,
}

impl Request {
    /// A `Write` request from the typed WIT arguments.
    pub fn new(path: String, content: String, dry_run: bool) -> Self {
        Request {
            tool: ToolName::Write,
            path,
            content,
            dry_run,
            expected_mtime_ms: None,
            expected_size_bytes: None,
            expected_sha256: None,
            keep_format: true,
            create_only: false,
            report_sha256: false,
            encoding: None,
        }
    }

    /// The `params_input` echo of typed arguments.
    pub fn echo(&self) -> Value {
        echo::typed(&self.path, &self.content, self.dry_run)
    }
}

/// Any request the tool takes (`docs/contract.md#requests`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// Write one file.
    Write(Request),
    /// Write several files, all or none.
    Many(ManyRequest),
    /// Undo changes.
    Revert(RevertRequest),
    /// Mark a point to revert to.
    Checkpoint(String),
    /// The host's own look at the journal.
    Journal(JournalRequest),
    /// Edit one existing file.
    Edit(EditRequest),
    /// Apply a patch of several files.
    Patch(PatchRequest),
}

/// `apply_patch`: a patch, parsed (`docs/contract.md#patch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchRequest {
    /// Its file operations.
    pub patch: Patch,
    /// Compute everything, change nothing.
    pub dry_run: bool,
}

/// An edit of one existing file (`docs/contract.md#edit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditRequest {
    /// The write's parameters: path, dry run, lock values, encoding; the
    /// content is the edited text.
    pub request: Request,
    /// The edits, in order.
    pub edits: Vec<Edit>,
}

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
}

/// Parse raw call input into any request the tool takes. Always returns
/// the echo, and the request or the reason there is none.
pub fn parse_any(input: &str) -> (Value, Result<Call, ToolError>) {
    let call = match tool_call(input) {
        Ok(call) => call,
        Err(e) => return (empty(), Err(e)),
    };
    let args = call.arguments;
    let name = call.name.unwrap_or_else(|| {
        // The arguments alone: their keys say which request they are.
        let has = |key: &str| args.contains_key(key);
        if has("journal") {
            shapes::JOURNAL
        } else if has("patch") {
            shapes::APPLY_PATCH
        } else if has("edits") {
            shapes::MULTI_EDIT
        } else if has("old_string") {
            shapes::EDIT
        } else if has("writes") {
            shapes::WRITE_MANY
        } else if (has("change_id") || has("to")) && !has("content") {
            shapes::REVERT
        } else if has("checkpoint") && !has("content") {
            shapes::CHECKPOINT
        } else {
            ToolName::Write.as_str()
        }
        .to_owned()
    });
    let echo = || echo::arguments(args.clone());
    match name.as_str() {
        shapes::WRITE_MANY => {
            let result = many(&args);
            (echo_many(args), result.map(Call::Many))
        }
        shapes::REVERT => (echo(), revert(&args).map(Call::Revert)),
        shapes::CHECKPOINT => (echo(), checkpoint(&args).map(Call::Checkpoint)),
        shapes::JOURNAL => (echo(), journal(&args).map(Call::Journal)),
        shapes::APPLY_PATCH => {
            let result = patch_request(&args);
            let mut args = args;
            for key in ["input", "patch"] {
                if let Some(Value::String(text)) = args.get(key) {
                    let elided = echo::content(text);
                    args.insert(key.into(), elided);
                }
            }
            (echo::arguments(args), result.map(Call::Patch))
        }
        shapes::EDIT | shapes::MULTI_EDIT | shapes::EDIT_FILE => {
            (echo(), edit(&args, &name).map(Call::Edit))
        }
        other => match ToolName::parse(other) {
            Some(tool) => {
                let (echo, result) = request_from(args, tool);
                (echo, result.map(Call::Write))
            }
            None => (
                empty(),
                Err(ToolError::invalid_param(format!(
                    "Unknown tool '{}'. This tool is 'Write' (also accepted as 'write_file'), \
                     with 'Edit' ('MultiEdit', 'edit_file'), 'apply_patch', 'write_many', \
                     'revert' and 'checkpoint'.",
                    truncate(other, 64)
                ))),
            ),
        },
    }
}

/// `write_many`'s arguments.
fn many(args: &Map<String, Value>) -> Result<ManyRequest, ToolError> {
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
fn echo_many(mut args: Map<String, Value>) -> Value {
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

/// A patch from its text, as the typed interface takes it.
pub fn parse_patch(text: &str, dry_run: bool) -> Result<PatchRequest, ToolError> {
    let mut args = Map::new();
    args.insert("patch".into(), Value::String(text.to_owned()));
    args.insert("dry_run".into(), Value::Bool(dry_run));
    patch_request(&args)
}

/// `apply_patch`'s arguments: the patch text as `input` (the name
/// OpenAI's function tool gives it) or `patch`.
fn patch_request(args: &Map<String, Value>) -> Result<PatchRequest, ToolError> {
    let text = match (args.get("input"), args.get("patch")) {
        (Some(Value::String(text)), _) | (None, Some(Value::String(text))) => text,
        (Some(_), _) => return Err(wrong_type("input", "a string holding the patch")),
        (None, Some(_)) => return Err(wrong_type("patch", "a string holding the patch")),
        (None, None) => return Err(missing("input")),
    };
    let patch = patch::parse(text).map_err(|e| {
        ToolError::invalid_param(format!(
            "The patch does not parse (line {}): {} Nothing was changed.",
            e.line, e.message
        ))
    })?;
    Ok(PatchRequest {
        patch,
        dry_run: flag(args, "dry_run", false)?,
    })
}

/// Most edits one call may carry.
const MAX_EDITS: usize = 1000;

/// An edit's arguments, in any of its shapes: `Edit` (`file_path`,
/// `old_string`, `new_string`, `replace_all`), `MultiEdit` (`file_path`,
/// `edits: [{old_string, new_string, replace_all}]`), `edit_file`
/// (`path`, `edits: [{oldText, newText}]`, `dryRun`). Either spelling of a
/// name is taken in every shape, and `old_text`/`new_text` too.
fn edit(args: &Map<String, Value>, tool: &str) -> Result<EditRequest, ToolError> {
    let path = match (args.get("file_path"), args.get("path")) {
        (Some(Value::String(a)), Some(Value::String(b))) if a != b => {
            return Err(ToolError::invalid_param(
                "Give 'file_path' or 'path', not two different paths.",
            ));
        }
        (Some(Value::String(path)), _) | (None, Some(Value::String(path))) => path.clone(),
        (Some(_), _) => return Err(wrong_type("file_path", "a string")),
        (None, Some(_)) => return Err(wrong_type("path", "a string")),
        (None, None) => return Err(missing("file_path")),
    };
    let edits = match args.get("edits") {
        Some(Value::Array(items)) if items.is_empty() => {
            return Err(ToolError::invalid_param(
                "Parameter 'edits' is empty: give one edit or more.",
            ));
        }
        Some(Value::Array(items)) if items.len() > MAX_EDITS => {
            return Err(ToolError::invalid_param(format!(
                "Parameter 'edits' holds {} edits, over the limit of {MAX_EDITS} per call.",
                items.len()
            )));
        }
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::Object(item) => one_edit(item)
                    .map_err(|e| ToolError::invalid_param(format!("edits[{i}]: {}", e.message()))),
                _ => Err(wrong_type(&format!("edits[{i}]"), "an object")),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(wrong_type("edits", "an array of edits")),
        None => vec![one_edit(args)?],
    };
    let dry_run = match (args.get("dry_run"), args.get("dryRun")) {
        (Some(_), _) => flag(args, "dry_run", false)?,
        (None, Some(_)) => flag(args, "dryRun", false)?,
        (None, None) => false,
    };
    // The write's own parameters, without the edits' texts (copied once
    // already into `edits`).
    let mut with_path: Map<String, Value> = args
        .iter()
        .filter(|(key, _)| {
            !matches!(
                key.as_str(),
                "edits"
                    | "old_string"
                    | "new_string"
                    | "oldText"
                    | "newText"
                    | "old_text"
                    | "new_text"
            )
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    with_path.insert("path".into(), Value::String(path));
    let mut request = fields(&with_path, Some(String::new()), tool_of(tool))?;
    if request.create_only {
        return Err(ToolError::invalid_param(
            "An edit changes a file that exists; 'create_only' has no place in it. To create \
             a file, use Write.",
        ));
    }
    // An edit always writes the file back in its own format.
    request.keep_format = true;
    request.dry_run = dry_run;
    Ok(EditRequest { request, edits })
}

/// Path rules follow the family of the shape: `edit_file` is the MCP
/// filesystem server's, whose paths may be absolute under an allowed
/// directory, as `write_file`'s are.
fn tool_of(shape: &str) -> ToolName {
    if shape == shapes::EDIT_FILE {
        ToolName::WriteFile
    } else {
        ToolName::Write
    }
}

/// One edit's fields.
fn one_edit(item: &Map<String, Value>) -> Result<Edit, ToolError> {
    let text = |names: [&str; 3]| -> Result<String, ToolError> {
        for name in names {
            match item.get(name) {
                Some(Value::String(text)) => return Ok(text.clone()),
                Some(_) => return Err(wrong_type(name, "a string")),
                None => {}
            }
        }
        Err(missing(names[0]))
    };
    let old = text(["old_string", "oldText", "old_text"])?;
    let new = text(["new_string", "newText", "new_text"])?;
    let replace_all = match (item.get("replace_all"), item.get("replaceAll")) {
        (Some(_), _) => flag(item, "replace_all", false)?,
        (None, Some(_)) => flag(item, "replaceAll", false)?,
        (None, None) => false,
    };
    Ok(Edit {
        old,
        new,
        replace_all,
    })
}

/// `revert`'s arguments.
fn revert(args: &Map<String, Value>) -> Result<RevertRequest, ToolError> {
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
fn checkpoint(args: &Map<String, Value>) -> Result<String, ToolError> {
    match args.get("checkpoint") {
        Some(Value::String(name)) if !name.trim().is_empty() && name.len() <= 200 => {
            Ok(name.trim().to_owned())
        }
        Some(_) => Err(wrong_type("checkpoint", "a name of 1 to 200 bytes")),
        None => Err(missing("checkpoint")),
    }
}

/// The host's `journal` request: `{"journal": "history" | "verify" | "gc",
/// "path": …}`.
fn journal(args: &Map<String, Value>) -> Result<JournalRequest, ToolError> {
    match args.get("journal").and_then(Value::as_str) {
        Some("history") => Ok(JournalRequest::History {
            path: args.get("path").and_then(Value::as_str).map(str::to_owned),
        }),
        Some("verify") => Ok(JournalRequest::Verify),
        Some("gc") => Ok(JournalRequest::Gc),
        _ => Err(wrong_type("journal", "\"history\", \"verify\" or \"gc\"")),
    }
}

/// Parse raw call input. Always returns the echo (an object, `{}` when the
/// input was not one), and the request or the reason there is none.
pub fn parse_call(input: &str) -> (Value, Result<Request, ToolError>) {
    let call = match tool_call(input) {
        Ok(call) => call,
        Err(e) => return (empty(), Err(e)),
    };
    let tool = match call.name {
        None => ToolName::Write,
        Some(name) => match ToolName::parse(&name) {
            Some(tool) => tool,
            None => {
                return (
                    empty(),
                    Err(ToolError::invalid_param(format!(
                        "Unknown tool '{}'. This tool is 'Write' (also accepted as 'write_file').",
                        truncate(&name, 64)
                    ))),
                );
            }
        },
    };
    request_from(call.arguments, tool)
}

/// The tool call `input` holds, in whichever shape it came (arguments
/// alone, a tool call, an OpenAI `tool_calls` item), unwrapped.
fn tool_call(input: &str) -> Result<write_tool_wire::request::Unwrapped, ToolError> {
    match parse_strict(input)? {
        Value::Object(object) => unwrap(object, parse_strict).map_err(shape_error),
        _ => Err(ToolError::invalid_param("Arguments must be a JSON object.")),
    }
}

/// The error for a request whose shape could not be read.
fn shape_error(err: ShapeError<ToolError>) -> ToolError {
    match err {
        ShapeError::Unknown => ToolError::unknown_shape(SHAPES),
        ShapeError::NameMissing => ToolError::invalid_param("Tool call is missing 'name'."),
        ShapeError::NameNotString => ToolError::invalid_param("Tool call 'name' must be a string."),
        ShapeError::ArgumentsNotObject => ToolError::invalid_param(
            "Tool call 'arguments' must be a JSON object or a string holding one.",
        ),
        ShapeError::ArgumentsStringNotObject => {
            ToolError::invalid_param("Tool call 'arguments' must be a JSON object.")
        }
        ShapeError::Parse(err) => err,
    }
}

fn request_from(
    mut args: Map<String, Value>,
    tool: ToolName,
) -> (Value, Result<Request, ToolError>) {
    // Move the content out instead of copying it: it can be many MiB.
    let content = match args.get_mut("content") {
        Some(Value::String(text)) => {
            let text = std::mem::take(text);
            args.insert("content".into(), echo::content(&text));
            Some(text)
        }
        _ => None,
    };
    let result = fields(&args, content, tool);
    (echo::arguments(args), result)
}

fn fields(
    args: &Map<String, Value>,
    content: Option<String>,
    tool: ToolName,
) -> Result<Request, ToolError> {
    let path = match args.get("path") {
        Some(Value::String(path)) => path.clone(),
        Some(_) => return Err(wrong_type("path", "a string")),
        None => return Err(missing("path")),
    };
    let content = match (content, args.get("content")) {
        (Some(content), _) => content,
        (None, Some(_)) => return Err(wrong_type("content", "a string")),
        (None, None) => return Err(missing("content")),
    };
    let dry_run = flag(args, "dry_run", false)?;
    let keep_format = flag(args, "keep_format", true)?;
    let create_only = flag(args, "create_only", false)?;
    let report_sha256 = flag(args, "report_sha256", false)?;
    let expected_mtime_ms = match args.get("expected_mtime_ms") {
        None => None,
        Some(v) => Some(
            v.as_i64()
                .ok_or_else(|| wrong_type("expected_mtime_ms", "an integer"))?,
        ),
    };
    let expected_size_bytes = match args.get("expected_size_bytes") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| wrong_type("expected_size_bytes", "a non-negative integer"))?,
        ),
    };
    let expected_sha256 = match args.get("expected_sha256") {
        None => None,
        Some(Value::String(hex))
            if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Some(hex.to_ascii_lowercase())
        }
        Some(_) => return Err(wrong_type("expected_sha256", "a 64-digit hex string")),
    };
    let encoding = match args.get("encoding") {
        None => None,
        Some(Value::String(label)) => Some(
            encoding_rs::Encoding::for_label(label.trim().as_bytes())
                .filter(|e| *e != encoding_rs::REPLACEMENT && *e != encoding_rs::X_USER_DEFINED)
                .ok_or_else(|| {
                    ToolError::invalid_param(format!(
                        "Parameter 'encoding' must name an encoding (a WHATWG label such as \
                         utf-8, windows-1252, shift_jis, gbk), not '{}'.",
                        truncate(label, 64)
                    ))
                })?,
        ),
        Some(_) => return Err(wrong_type("encoding", "a string naming an encoding")),
    };
    Ok(Request {
        tool,
        path,
        content,
        dry_run,
        expected_mtime_ms,
        expected_size_bytes,
        expected_sha256,
        keep_format,
        create_only,
        report_sha256,
        encoding,
    })
}

/// The boolean parameter `name`, `default` when absent.
fn flag(args: &Map<String, Value>, name: &str, default: bool) -> Result<bool, ToolError> {
    match args.get(name) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(wrong_type(name, "a boolean")),
    }
}

fn empty() -> Value {
    Value::Object(Map::new())
}

#[cold]
fn missing(name: &str) -> ToolError {
    ToolError::invalid_param(format!("Missing required parameter '{name}'."))
}

#[cold]
fn wrong_type(name: &str, what: &str) -> ToolError {
    ToolError::invalid_param(format!("Parameter '{name}' must be {what}."))
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Parse one JSON value, refusing duplicate keys and trailing data.
fn parse_strict(input: &str) -> Result<Value, ToolError> {
    write_tool_wire::strict::parse(input)
        .map_err(|e| ToolError::invalid_param(format!("Invalid JSON arguments: {e}.")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn err(input: &str) -> String {
        let (_, result) = parse_call(input);
        let e = result.expect_err(input);
        assert_eq!(e.code(), ErrorCode::InvalidParam);
        e.message().to_owned()
    }

    #[test]
    fn plain_arguments() {
        let (echo, req) = parse_call(r#"{"path":"a.txt","content":"hi","dry_run":true,"extra":1}"#);
        let req = req.unwrap();
        assert_eq!(
            (req.path.as_str(), req.content.as_str(), req.dry_run),
            ("a.txt", "hi", true)
        );
        assert_eq!(
            echo.to_string(),
            r#"{"path":"a.txt","content":"hi","dry_run":true,"extra":1}"#
        );
    }

    #[test]
    fn tool_call_forms() {
        let (_, req) = parse_call(r#"{"name":"Write","arguments":{"path":"a","content":"x"}}"#);
        assert_eq!(req.unwrap().tool, ToolName::Write);
        let (echo, req) =
            parse_call(r#"{"name":"write_file","arguments":"{\"path\":\"a\",\"content\":\"x\"}"}"#);
        assert_eq!(req.unwrap().tool, ToolName::WriteFile);
        assert_eq!(echo.to_string(), r#"{"path":"a","content":"x"}"#);
        assert!(err(r#"{"name":"Edit","arguments":{}}"#).contains("Unknown tool 'Edit'"));
        // An item of OpenAI's `tool_calls` list.
        let (echo, req) = parse_call(
            r#"{"id":"call_1","type":"function","function":{"name":"Write","arguments":"{\"path\":\"b\",\"content\":\"y\"}"}}"#,
        );
        assert_eq!(req.unwrap().path, "b");
        assert_eq!(echo.to_string(), r#"{"path":"b","content":"y"}"#);
        // An Anthropic `tool_use` block, and an OpenAI Responses
        // `function_call` item.
        let (echo, req) = parse_call(
            r#"{"type":"tool_use","id":"toolu_1","name":"Write","input":{"path":"c","content":"z"}}"#,
        );
        assert_eq!(req.unwrap().path, "c");
        assert_eq!(echo.to_string(), r#"{"path":"c","content":"z"}"#);
        let (_, req) = parse_call(
            r#"{"type":"function_call","id":"fc_1","call_id":"call_1","name":"write_file","arguments":"{\"path\":\"d\",\"content\":\"w\"}"}"#,
        );
        let req = req.unwrap();
        assert_eq!((req.tool, req.path.as_str()), (ToolName::WriteFile, "d"));
    }

    #[test]
    fn a_shape_not_understood_is_named_with_the_shapes_that_are() {
        for unknown in [
            "{}",
            r#"{"text":"x"}"#,
            r#"{"type":"tool_use","name":"Write"}"#,
            r#"{"tool":"Write","parameters":{"path":"a","content":"x"}}"#,
        ] {
            let (_, result) = parse_call(unknown);
            let e = result.expect_err(unknown);
            assert_eq!(e.kind(), crate::error::ErrorKind::UnknownShape);
            assert!(e.message().contains("tool_use"), "{}", e.message());
            assert!(!e.message().contains("Missing required"), "{}", e.message());
        }
    }

    #[test]
    fn long_content_is_elided_in_the_echo() {
        use write_tool_wire::echo::ECHO_STRING_MAX;
        let content = "x".repeat(ECHO_STRING_MAX + 1);
        let (echo, req) =
            parse_call(&serde_json::json!({"path": "a", "content": content}).to_string());
        assert_eq!(req.unwrap().content.len(), ECHO_STRING_MAX + 1);
        assert_eq!(echo["content"], "[1025 bytes elided]");
        let (echo, _) =
            parse_call(&serde_json::json!({"path": "a", "content": "x".repeat(1024)}).to_string());
        assert_eq!(echo["content"].as_str().map(str::len), Some(1024));
    }

    #[test]
    fn bad_input_names_the_problem() {
        assert!(err("").contains("Invalid JSON"));
        assert!(err("{").contains("Invalid JSON"));
        assert!(err(r#"{"path":"a","content":"x"} x"#).contains("trailing"));
        assert!(err(r#"{"path":"a","path":"b","content":"x"}"#).contains("duplicate key 'path'"));
        for lone in [
            r#"{"path":"\ud800","content":"x"}"#,
            r#"{"path":"\udc00x","content":"x"}"#,
        ] {
            assert!(err(lone).starts_with("Invalid JSON arguments:"), "{lone}");
        }
        assert_eq!(err("[1]"), "Arguments must be a JSON object.");
        assert_eq!(
            err(r#"{"content":"x"}"#),
            "Missing required parameter 'path'."
        );
        assert_eq!(
            err(r#"{"path":"a"}"#),
            "Missing required parameter 'content'."
        );
        assert_eq!(
            err(r#"{"path":1,"content":"x"}"#),
            "Parameter 'path' must be a string."
        );
        assert_eq!(
            err(r#"{"path":"a","content":["x"]}"#),
            "Parameter 'content' must be a string."
        );
        assert_eq!(
            err(r#"{"path":"a","content":"x","dry_run":"yes"}"#),
            "Parameter 'dry_run' must be a boolean."
        );
        assert!(
            err(r#"{"path":"a","content":"x","expected_mtime_ms":1.5}"#)
                .contains("expected_mtime_ms")
        );
        assert!(
            err(r#"{"path":"a","content":"x","expected_size_bytes":-1}"#)
                .contains("expected_size_bytes")
        );
        assert!(
            err(r#"{"path":"a","content":"x","expected_sha256":"abc"}"#)
                .contains("expected_sha256")
        );
    }
}
