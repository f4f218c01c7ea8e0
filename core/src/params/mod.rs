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

use write_tool_wire::kinds::{self, KINDS, Kind, Op};
pub use write_tool_wire::request::ToolName;
use write_tool_wire::request::{SHAPES, ShapeError, unwrap};
use write_tool_wire::{Form, echo};

use crate::error::ToolError;

mod edit;
mod editor;
mod fields;
mod idempotency;
mod journal;
mod view;

pub use edit::{EditRequest, PatchRequest, parse_patch};
use edit::{edit, patch_request};
pub use editor::{EditorCommand, EditorRequest};
pub use fields::Request;
use fields::{request_from, truncate};
pub use idempotency::{KEY as IDEMPOTENCY_KEY, Keyed, MAX_KEY_BYTES};
pub use journal::{JournalRequest, ManyRequest, RevertRequest, RevertTarget};
use journal::{checkpoint, echo_many, journal, many, revert};
pub use view::ViewRequest;

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
    /// Show a file or directory, changing nothing.
    View(ViewRequest),
    /// A command of Anthropic's text editor tool.
    TextEditor(EditorRequest),
    /// Add text at the end of one file, creating it (`crate::ops::append`).
    Append(Request),
}

/// Raw call input, parsed (`parse_any`).
#[derive(Debug)]
pub struct Parsed {
    /// The echo for `params_input`.
    pub echo: Value,
    /// The request, or the reason there is none.
    pub call: Result<Call, ToolError>,
    /// The form the answer takes, if the input says (`envelope`).
    pub form: Option<Form>,
    /// Its idempotency key and what it asks, if it carries one.
    pub keyed: Option<Keyed>,
}

/// Parse raw call input into any request the tool takes. Always returns
/// the echo, the request or the reason there is none, the form the answer
/// takes if the input says (`envelope`) and its idempotency key.
pub fn parse_any(input: &str) -> Parsed {
    let call = match tool_call(input) {
        Ok(call) => call,
        Err(e) => {
            return Parsed {
                echo: empty(),
                call: Err(e),
                form: None,
                keyed: None,
            };
        }
    };
    let (form, bad_form) = match envelope_form(&call.arguments) {
        Ok(form) => (form, None),
        Err(e) => (None, Some(e)),
    };
    let (keyed, bad_key) = match idempotency::keyed(&call.arguments, call.name.as_deref()) {
        Ok(keyed) => (keyed, None),
        Err(e) => (None, Some(e)),
    };
    let (echo, result) = parse_named(call.arguments, call.name);
    Parsed {
        echo,
        call: match bad_form.or(bad_key) {
            Some(e) => Err(e),
            None => result,
        },
        form,
        keyed,
    }
}

/// The `envelope` argument: which form the answer takes
/// (`docs/contract.md#envelope`).
fn envelope_form(args: &Map<String, Value>) -> Result<Option<Form>, ToolError> {
    match args.get("envelope") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_str()
            .and_then(Form::from_name)
            .map(Some)
            .ok_or_else(|| {
                ToolError::invalid_param("Parameter 'envelope' must be \"compact\" or \"full\".")
            }),
    }
}

/// [`parse_any`] once the arguments and the tool's name are apart: the
/// kind the name names, or the one the arguments' keys are
/// (`write_tool_wire::kinds`), reads them.
fn parse_named(args: Map<String, Value>, name: Option<String>) -> (Value, Result<Call, ToolError>) {
    let (kind, name) = match name {
        Some(name) => (kinds::named(&name), name),
        None => {
            let kind = kinds::recognise(&args);
            (Some(kind), kind.name().to_owned())
        }
    };
    let Some(kind) = kind else {
        return (empty(), Err(unknown_tool(&name)));
    };
    let echo = || echo::arguments(args.clone());
    match kind.op {
        Op::Write => {
            let tool = ToolName::parse(&name).unwrap_or(ToolName::Write);
            let (echo, result) = request_from(args, tool);
            (echo, result.map(Call::Write))
        }
        Op::Append => {
            let (echo, result) = request_from(args, ToolName::Write);
            (echo, result.map(Call::Append))
        }
        Op::WriteMany => {
            let result = many(&args);
            (echo_many(args), result.map(Call::Many))
        }
        Op::Revert => (echo(), revert(&args).map(Call::Revert)),
        Op::Checkpoint => (echo(), checkpoint(&args).map(Call::Checkpoint)),
        Op::Journal => (echo(), journal(&args).map(Call::Journal)),
        Op::Patch => {
            let result = patch_request(&args);
            (elided(args, &["input", "patch"]), result.map(Call::Patch))
        }
        Op::Edit => (echo(), edit(&args, &name).map(Call::Edit)),
        Op::View => (echo(), view::view(&args).map(Call::View)),
        Op::TextEditor => {
            let result = editor::editor(&args, &name);
            let texts = ["file_text", "old_str", "new_str", "insert_text"];
            (elided(args, &texts), result.map(Call::TextEditor))
        }
    }
}

/// The echo of `args` with the long texts under `keys` elided.
fn elided(mut args: Map<String, Value>, keys: &[&str]) -> Value {
    for key in keys {
        if let Some(Value::String(text)) = args.get(*key) {
            let elided = echo::content(text);
            args.insert((*key).into(), elided);
        }
    }
    echo::arguments(args)
}

/// A call's name that is none of the tool's: the names it answers to.
fn unknown_tool(name: &str) -> ToolError {
    let offered = |kind: &Kind| {
        let names: Vec<String> = kind.names[1..]
            .iter()
            .map(|n| format!("'{}'", n.name))
            .collect();
        match names.is_empty() {
            true => format!("'{}'", kind.name()),
            false => format!("'{}' ({})", kind.name(), names.join(", ")),
        }
    };
    let others: Vec<String> = KINDS
        .iter()
        .filter(|k| !matches!(k.op, Op::Write | Op::TextEditor | Op::Journal))
        .map(offered)
        .collect();
    ToolError::invalid_param(format!(
        "Unknown tool '{}'. This tool is 'Write' (also accepted as 'write_file'), with {} and \
         Anthropic's {}.",
        truncate(name, 64),
        others.join(", "),
        offered(kinds::of(Op::TextEditor)),
    ))
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
        Value::Object(object) if whole_message(&object) => Err(ToolError::whole_message()),
        Value::Object(object) => unwrap(object, parse_strict).map_err(shape_error),
        _ => Err(ToolError::invalid_param("Arguments must be a JSON object.")),
    }
}

/// Whether `object` is a model's whole turn rather than a tool call: a
/// message (`role`, and `content` that is a list of blocks or `tool_calls`),
/// or an API's response (`output` or `choices` as a list). The arguments
/// have none of these; `content` there is a string.
fn whole_message(object: &Map<String, Value>) -> bool {
    let list = |key: &str| object.get(key).is_some_and(Value::is_array);
    (object.contains_key("role") && (list("content") || list("tool_calls")))
        || list("output")
        || list("choices")
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
        ShapeError::InputNotString => ToolError::invalid_param(
            "A custom tool call's 'input' must be a string: the raw text, such as the patch.",
        ),
        ShapeError::Parse(err) => err,
    }
}

fn empty() -> Value {
    Value::Object(Map::new())
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
    fn a_whole_turn_is_told_apart_from_a_call() {
        for turn in [
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Write","input":{"path":"a","content":"x"}}]}"#,
            r#"{"id":"resp_1","output":[{"type":"function_call","call_id":"c","name":"Write","arguments":"{}"}]}"#,
            r#"{"choices":[{"message":{"role":"assistant","tool_calls":[]}}]}"#,
            r#"{"role":"assistant","content":null,"tool_calls":[]}"#,
        ] {
            assert!(err(turn).contains("write-tool turn"), "{turn}");
        }
        // Arguments whose content is text are arguments.
        let (_, req) = parse_call(r#"{"path":"a","content":"x","role":"admin"}"#);
        assert_eq!(req.expect("a write").path, "a");
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
