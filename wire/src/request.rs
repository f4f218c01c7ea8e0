//! The shapes a request may take (`docs/contract.md#requests`), and the
//! one function that takes a request apart, [`unwrap`].
//!
//! A request is a JSON object, either
//!
//! - the arguments themselves: `{"path": …, "content": …, …}` (an object
//!   with any of the tool's parameter names, [`PARAMETERS`]); or
//! - a tool call: `{"name": "Write", "arguments": {…}}`, where `arguments`
//!   may also be a string holding the object (the OpenAI function-calling
//!   form, and the `function_call` items of OpenAI's Responses API, whose
//!   other keys, such as `call_id`, are ignored); or
//! - an item of an OpenAI Chat Completions `tool_calls` list: `{"type":
//!   "function", "function": {"name": "Write", "arguments": "…"}}` (any
//!   other keys, such as `id`, ignored), whose `function` is the tool
//!   call; or
//! - an Anthropic `tool_use` content block: `{"type": "tool_use", "id": …,
//!   "name": "Write", "input": {…}}`; or
//! - an OpenAI custom tool call, whose input is raw text (a freeform
//!   `apply_patch`'s patch): a Responses `{"type": "custom_tool_call",
//!   "call_id": …, "name": "apply_patch", "input": "*** Begin Patch…"}`
//!   item, or a Chat Completions `{"type": "custom", "custom": {"name": …,
//!   "input": …}}` item; the arguments are `{"input": text}`.
//!
//! An object with a `path` key is the arguments, whatever else it holds;
//! the arguments never have an `arguments` key.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer as _, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The tool names a call may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolName {
    /// `Write`: the tool's own name, and the default.
    Write,
    /// `write_file`: the same tool under the name of the simpler `write_file`
    /// design (`docs/contract.md#several-roots`), with its own success text
    /// and absolute paths allowed.
    WriteFile,
}

impl ToolName {
    /// Every name, the tool's own first.
    pub const ALL: [ToolName; 2] = [ToolName::Write, ToolName::WriteFile];

    /// The name as a call spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::Write => "Write",
            ToolName::WriteFile => "write_file",
        }
    }

    /// The tool a call names, if it is one of this tool's names.
    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|n| n.as_str() == name)
    }
}

/// The tool's parameter names: an object with any of them is the
/// arguments object itself. After the write's own come those of
/// `write_many`, `revert`, `checkpoint`, the host's `journal` requests and
/// the edits (`Edit`, `MultiEdit`, `edit_file`), and `view`'s range.
pub const PARAMETERS: [&str; 24] = [
    "path",
    "content",
    "dry_run",
    "expected_mtime_ms",
    "expected_size_bytes",
    "expected_sha256",
    "base",
    "create_only",
    "keep_format",
    "report_sha256",
    "encoding",
    "file_path",
    "writes",
    "change_id",
    "to",
    "force",
    "checkpoint",
    "journal",
    "old_string",
    "new_string",
    "replace_all",
    "edits",
    "patch",
    "view_range",
];

/// The argument any changing request may carry to be done once however
/// often it is sent (`docs/contract.md#idempotency`).
pub const IDEMPOTENCY_KEY: &str = "idempotency_key";

/// The names of the journal's requests (`docs/contract.md#journal`),
/// beside the write's own ([`ToolName`]).
pub const WRITE_MANY: &str = "write_many";
/// Undo a change, or every change since a checkpoint.
pub const REVERT: &str = "revert";
/// Mark a point to revert to.
pub const CHECKPOINT: &str = "checkpoint";
/// The host's own requests: history, verify, gc.
pub const JOURNAL: &str = "journal";
/// Edit a file: one old text replaced (`docs/contract.md#edit`), in the
/// shape of Claude Code's `Edit`.
pub const EDIT: &str = "Edit";
/// Several edits of one file, in the shape of Claude Code's `MultiEdit`.
pub const MULTI_EDIT: &str = "MultiEdit";
/// Several edits of one file, in the shape of the MCP filesystem server's
/// `edit_file`.
pub const EDIT_FILE: &str = "edit_file";
/// A patch of several files, in the format OpenAI's models emit for
/// `apply_patch` (`docs/contract.md#patch`).
pub const APPLY_PATCH: &str = "apply_patch";
/// Show a file's lines or a directory's entries, changing nothing
/// (`docs/contract.md#view`).
pub const VIEW: &str = "view";
/// `view` under the name and parameters of Claude Code's `Read`
/// (`file_path`, `offset`, `limit`).
pub const READ: &str = "Read";
/// Anthropic's text editor tool (`text_editor_20250728` and
/// `text_editor_20250429`), whose `command` says what it does
/// (`docs/contract.md#text-editor`).
pub const TEXT_EDITOR: &str = "str_replace_based_edit_tool";
/// Anthropic's text editor tool under the name of its versions with
/// `undo_edit` (`text_editor_20250124`, `text_editor_20241022`).
pub const TEXT_EDITOR_UNDO: &str = "str_replace_editor";

/// The request shapes, as a message names them for a caller that sent
/// none of them.
pub const SHAPES: &str = "the arguments object ({\"path\": …, \"content\": …}), a tool call \
    ({\"name\": \"Write\", \"arguments\": {…}}, also as an OpenAI Responses function_call \
    item), an OpenAI tool_calls item ({\"type\": \"function\", \"function\": {…}}), an \
    Anthropic tool_use block ({\"type\": \"tool_use\", \"name\": \"Write\", \"input\": {…}}) \
    or an OpenAI custom tool call with raw input ({\"type\": \"custom_tool_call\", \"name\": \
    \"apply_patch\", \"input\": \"*** Begin Patch…\"})";

/// A request taken apart.
#[derive(Debug, Clone, PartialEq)]
pub struct Unwrapped {
    /// The tool the call names; `None` when the request is the arguments
    /// object itself.
    pub name: Option<String>,
    /// The arguments object.
    pub arguments: Map<String, Value>,
}

/// Why a request could not be taken apart.
#[derive(Debug, Clone, PartialEq)]
pub enum ShapeError<E> {
    /// None of the shapes: no parameter, no tool call.
    Unknown,
    /// A tool call without `name`.
    NameMissing,
    /// A tool call whose `name` is not a string.
    NameNotString,
    /// A tool call whose arguments are neither an object nor a string.
    ArgumentsNotObject,
    /// A tool call whose arguments are a string that does not hold an
    /// object.
    ArgumentsStringNotObject,
    /// A custom tool call whose `input` is not a string.
    InputNotString,
    /// The string holding the arguments did not parse.
    Parse(E),
}

/// The tool call and arguments of `object`, in whichever shape it came.
/// `parse` reads arguments given as a JSON string (each caller parses as
/// strictly as it needs). The only place a request's shape is decided.
pub fn unwrap<E>(
    mut object: Map<String, Value>,
    parse: impl FnOnce(&str) -> Result<Value, E>,
) -> Result<Unwrapped, ShapeError<E>> {
    if object.contains_key("path") {
        return Ok(Unwrapped {
            name: None,
            arguments: object,
        });
    }
    match object.get("type").and_then(Value::as_str) {
        Some("custom_tool_call") => return custom_call(object),
        Some("custom") => {
            if let Some(Value::Object(custom)) = object.remove("custom") {
                return custom_call(custom);
            }
        }
        _ => {}
    }
    let tool_use = object.get("type").and_then(Value::as_str) == Some("tool_use");
    let key = if tool_use { "input" } else { "arguments" };
    if !object.contains_key(key)
        && let Some(Value::Object(_)) = object.get("function")
        && let Some(Value::Object(function)) = object.remove("function")
    {
        // A `tool_calls` item: its `function` is the tool call.
        object = function;
    }
    if !object.contains_key(key) {
        return if PARAMETERS.iter().any(|p| object.contains_key(*p)) {
            Ok(Unwrapped {
                name: None,
                arguments: object,
            })
        } else {
            Err(ShapeError::Unknown)
        };
    }
    let name = match object.remove("name") {
        Some(Value::String(name)) => name,
        Some(_) => return Err(ShapeError::NameNotString),
        None => return Err(ShapeError::NameMissing),
    };
    let arguments = match object.remove(key) {
        Some(Value::Object(arguments)) => arguments,
        Some(Value::String(text)) if !tool_use => match parse(&text).map_err(ShapeError::Parse)? {
            Value::Object(arguments) => arguments,
            _ => return Err(ShapeError::ArgumentsStringNotObject),
        },
        _ => return Err(ShapeError::ArgumentsNotObject),
    };
    Ok(Unwrapped {
        name: Some(name),
        arguments,
    })
}

/// An OpenAI custom tool call — a Responses `custom_tool_call` item, or
/// the `custom` of a Chat Completions `tool_calls` item — whose `input` is
/// raw text (a patch, for `apply_patch`): the arguments are `{"input":
/// text}`.
fn custom_call<E>(mut object: Map<String, Value>) -> Result<Unwrapped, ShapeError<E>> {
    let name = match object.remove("name") {
        Some(Value::String(name)) => name,
        Some(_) => return Err(ShapeError::NameNotString),
        None => return Err(ShapeError::NameMissing),
    };
    let input = match object.remove("input") {
        Some(Value::String(input)) => input,
        _ => return Err(ShapeError::InputNotString),
    };
    let mut arguments = Map::new();
    arguments.insert("input".to_owned(), Value::String(input));
    Ok(Unwrapped {
        name: Some(name),
        arguments,
    })
}

/// The `path` a request names, in any of its shapes, read without building
/// the rest of it (the content can be many MiB): other values are skipped,
/// not built, and reading stops at `path`. `None` when the request names
/// none, or is not well-formed enough to tell.
///
/// For a host that looks at the target before the call. It decides nothing
/// about the call's validity (the component checks the request in full),
/// and it reads at most the three levels a request has — a `tool_calls`
/// item, its tool call, the arguments — so however deeply a hostile request
/// nests, the look costs one pass over it.
pub fn path_of(request: &str) -> Option<String> {
    let top = skeleton(request, SKELETON_DEPTH)?;
    let call = unwrap(top, |text| {
        skeleton(text, SKELETON_DEPTH - 1)
            .map(Value::Object)
            .ok_or(())
    })
    .ok()?;
    match call.arguments.get("path") {
        Some(Value::String(path)) => Some(path.clone()),
        _ => None,
    }
}

/// How many levels of objects [`skeleton`] reads: a `tool_calls` item, its
/// tool call, the arguments.
const SKELETON_DEPTH: usize = 3;

/// The object `text` as far as [`unwrap`] and [`path_of`] look at it: the
/// `path`, `name` and `type` strings; the `arguments`, `function` and
/// `input` values as skeletons themselves (an `arguments` string decoded),
/// down to `depth` levels; every other key with a null value. Reading stops
/// at `path`: an object with one is the arguments. `None` when `text` is no
/// object, or breaks off before anything was seen.
fn skeleton(text: &str, depth: usize) -> Option<Map<String, Value>> {
    /// Fills the map; stops the parse (as an error) once `path` is read.
    struct Skeleton<'m> {
        map: &'m mut Map<String, Value>,
        depth: usize,
    }

    impl<'de> Visitor<'de> for Skeleton<'_> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                let value = match key.as_ref() {
                    "path" | "name" | "type" => match map.next_value::<Value>()? {
                        Value::String(text) => Value::String(text),
                        _ => Value::Null,
                    },
                    "arguments" | "function" | "input" if self.depth > 1 => {
                        let raw = map.next_value::<&RawValue>()?.get();
                        if raw.starts_with('"') {
                            serde_json::from_str::<String>(raw).map_or(Value::Null, Value::String)
                        } else {
                            skeleton(raw, self.depth - 1).map_or(Value::Null, Value::Object)
                        }
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                        Value::Null
                    }
                };
                let stop = key == "path";
                self.map.insert(key.into_owned(), value);
                if stop {
                    return Err(de::Error::custom("found"));
                }
            }
            Ok(())
        }
    }

    let mut map = Map::new();
    let mut de = serde_json::Deserializer::from_str(text);
    // Whether the parse stopped early or failed, the map holds what it saw;
    // a failure before anything was seen leaves it empty.
    let stopped = (&mut de)
        .deserialize_map(Skeleton {
            map: &mut map,
            depth,
        })
        .is_err();
    (!map.is_empty() || !stopped).then_some(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("an object literal"),
        }
    }

    fn unwrapped(value: Value) -> Result<Unwrapped, ShapeError<String>> {
        unwrap(object(value), |text| {
            serde_json::from_str(text).map_err(|e: serde_json::Error| e.to_string())
        })
    }

    #[test]
    fn every_shape_is_taken_apart() {
        let args = json!({"path": "a", "content": "x"});
        let plain = unwrapped(args.clone()).unwrap();
        assert_eq!(
            (plain.name, Value::Object(plain.arguments)),
            (None, args.clone())
        );
        for shape in [
            json!({"name": "Write", "arguments": {"path": "a", "content": "x"}}),
            json!({"name": "Write", "arguments": "{\"path\":\"a\",\"content\":\"x\"}"}),
            json!({"id": "call_1", "type": "function", "function": {"name": "Write", "arguments": "{\"path\":\"a\",\"content\":\"x\"}"}}),
            json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "Write", "arguments": "{\"path\":\"a\",\"content\":\"x\"}"}),
            json!({"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"path": "a", "content": "x"}}),
        ] {
            let call = unwrapped(shape.clone()).unwrap();
            assert_eq!(call.name.as_deref(), Some("Write"), "{shape}");
            assert_eq!(Value::Object(call.arguments), args, "{shape}");
        }
    }

    #[test]
    fn a_custom_tool_calls_raw_input_is_its_input_argument() {
        let patch = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n";
        for shape in [
            json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "apply_patch", "input": patch}),
            json!({"id": "call_2", "type": "custom", "custom": {"name": "apply_patch", "input": patch}}),
        ] {
            let call = unwrapped(shape.clone()).unwrap();
            assert_eq!(call.name.as_deref(), Some("apply_patch"), "{shape}");
            assert_eq!(
                Value::Object(call.arguments),
                json!({"input": patch}),
                "{shape}"
            );
        }
    }

    #[test]
    fn what_is_no_shape_or_a_broken_one() {
        // Arguments with a parameter but no path are still arguments.
        assert!(unwrapped(json!({"content": "x"})).unwrap().name.is_none());
        assert!(
            unwrapped(json!({"path": "a", "arguments": 1}))
                .unwrap()
                .name
                .is_none()
        );
        for unknown in [
            json!({}),
            json!({"text": "x"}),
            json!({"function": "x"}),
            json!({"type": "tool_use", "name": "Write"}),
        ] {
            assert_eq!(
                unwrapped(unknown.clone()),
                Err(ShapeError::Unknown),
                "{unknown}"
            );
        }
        assert_eq!(
            unwrapped(json!({"arguments": {}})),
            Err(ShapeError::NameMissing)
        );
        assert_eq!(
            unwrapped(json!({"name": 1, "arguments": {}})),
            Err(ShapeError::NameNotString)
        );
        assert_eq!(
            unwrapped(json!({"name": "Write", "arguments": 1})),
            Err(ShapeError::ArgumentsNotObject)
        );
        assert_eq!(
            unwrapped(json!({"name": "Write", "arguments": "[1]"})),
            Err(ShapeError::ArgumentsStringNotObject)
        );
        assert!(matches!(
            unwrapped(json!({"name": "Write", "arguments": "{"})),
            Err(ShapeError::Parse(_))
        ));
        assert_eq!(
            unwrapped(json!({"type": "custom_tool_call", "name": "apply_patch", "input": {}})),
            Err(ShapeError::InputNotString)
        );
        assert_eq!(
            unwrapped(json!({"type": "custom_tool_call", "input": "x"})),
            Err(ShapeError::NameMissing)
        );
        // tool_use takes its input as an object only.
        assert_eq!(
            unwrapped(json!({"type": "tool_use", "name": "Write", "input": "{}"})),
            Err(ShapeError::ArgumentsNotObject)
        );
    }

    #[test]
    fn the_path_of_every_shape() {
        let path = |request: &str| path_of(request);
        assert_eq!(
            path(r#"{"content":"x","path":"a/b"}"#).as_deref(),
            Some("a/b")
        );
        assert_eq!(
            path(r#"{"name":"Write","arguments":{"path":"c","content":"x"}}"#).as_deref(),
            Some("c")
        );
        assert_eq!(
            path(r#"{"name":"Write","arguments":"{\"path\":\"d\"}"}"#).as_deref(),
            Some("d")
        );
        assert_eq!(
            path(
                r#"{"type":"function","function":{"name":"Write","arguments":"{\"path\":\"e\"}"}}"#
            )
            .as_deref(),
            Some("e")
        );
        assert_eq!(path("not json"), None);
        assert_eq!(path(r#"{"path":7}"#), None);
    }

    #[test]
    fn the_path_is_looked_for_three_levels_deep_at_most() {
        let deep = format!(
            "{}{}{}",
            r#"{"arguments":"#.repeat(100_000),
            r#"{"path":"x"}"#,
            "}".repeat(100_000)
        );
        assert_eq!(path_of(&deep), None);
        let two = r#"{"arguments":{"arguments":{"path":"x"}}}"#;
        assert_eq!(path_of(two), None, "the guest refuses it too");
    }

    #[test]
    fn the_path_of_the_newer_shapes() {
        assert_eq!(
            path_of(
                r#"{"type":"tool_use","id":"t","name":"Write","input":{"path":"f","content":"x"}}"#
            )
            .as_deref(),
            Some("f")
        );
        assert_eq!(
            path_of(r#"{"type":"function_call","call_id":"c","name":"Write","arguments":"{\"path\":\"g\"}"}"#).as_deref(),
            Some("g")
        );
    }

    #[test]
    fn names() {
        assert_eq!(ToolName::parse("Write"), Some(ToolName::Write));
        assert_eq!(ToolName::parse("write_file"), Some(ToolName::WriteFile));
        assert_eq!(ToolName::parse("write"), None);
    }
}
