//! The shapes a request may take (`docs/contract.md#requests`).
//!
//! A request is a JSON object, either
//!
//! - the arguments themselves: `{"path": …, "content": …, …}`, or
//! - a tool call: `{"name": "Write", "arguments": {…}}`, where `arguments`
//!   may also be a string holding the object (the OpenAI function-calling
//!   form); or
//! - an item of an OpenAI `tool_calls` list: `{"type": "function",
//!   "function": {"name": "Write", "arguments": "…"}}` (any other keys, such
//!   as `id`, ignored), whose `function` is the tool call.
//!
//! An object is a tool call when it has an `arguments` key and no `path`
//! key: the arguments object itself never has an `arguments` parameter, and
//! always has `path`. It is a `tool_calls` item when, besides, its
//! `function` is an object.

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

/// Whether `object` is a tool call (`name` and `arguments`) rather than the
/// arguments themselves.
pub fn is_tool_call(object: &Map<String, Value>) -> bool {
    object.contains_key("arguments") && !object.contains_key("path")
}

/// The tool call inside an OpenAI `tool_calls` item, taken out of it; the
/// object is left as it was when it is no such item.
pub fn take_function(object: &mut Map<String, Value>) -> Option<Map<String, Value>> {
    if object.contains_key("path") || object.contains_key("arguments") {
        return None;
    }
    match object.get("function") {
        Some(Value::Object(_)) => match object.remove("function") {
            Some(Value::Object(function)) => Some(function),
            _ => None,
        },
        _ => None,
    }
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
    let top = scan(request)?;
    if top.path.is_some() {
        return top.path;
    }
    let arguments = match (top.arguments, top.function) {
        (Some(arguments), _) => arguments,
        (None, Some(function)) => scan(function.get())?.arguments?,
        (None, None) => return None,
    };
    let text = arguments.get();
    if text.starts_with('"') {
        let inner: String = serde_json::from_str(text).ok()?;
        scan(&inner)?.path
    } else {
        scan(text)?.path
    }
}

/// What [`scan`] saw of one object's keys.
#[derive(Default)]
struct Scanned<'a> {
    path: Option<String>,
    arguments: Option<&'a RawValue>,
    function: Option<&'a RawValue>,
}

/// The `path`, `arguments` and `function` of the object `text`, without
/// descending into any value.
fn scan(text: &str) -> Option<Scanned<'_>> {
    /// Fills the slot; stops the parse (as an error) once `path` is read.
    struct Scan<'s, 'de>(&'s mut Scanned<'de>);

    impl<'de> Visitor<'de> for Scan<'_, 'de> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                match key.as_ref() {
                    "path" => {
                        self.0.path = Some(map.next_value()?);
                        return Err(de::Error::custom("found"));
                    }
                    "arguments" => self.0.arguments = Some(map.next_value()?),
                    "function" => self.0.function = Some(map.next_value()?),
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(())
        }
    }

    let mut scanned = Scanned::default();
    let mut de = serde_json::Deserializer::from_str(text);
    // Whether the parse stopped early or failed, the slot holds what it
    // saw; a failure before anything was seen leaves it empty.
    let stopped = (&mut de).deserialize_map(Scan(&mut scanned)).is_err();
    let seen = scanned.path.is_some() || scanned.arguments.is_some() || scanned.function.is_some();
    (seen || !stopped).then_some(scanned)
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

    #[test]
    fn tool_calls_are_told_from_arguments() {
        assert!(is_tool_call(&object(
            json!({"name": "Write", "arguments": {}})
        )));
        assert!(is_tool_call(&object(json!({"arguments": "{}"}))));
        assert!(!is_tool_call(&object(json!({"path": "a", "arguments": 1}))));
        assert!(!is_tool_call(&object(json!({"path": "a", "content": "x"}))));
    }

    #[test]
    fn tool_calls_items_hold_a_tool_call() {
        let mut item = object(json!({
            "id": "call_1",
            "type": "function",
            "function": {"name": "Write", "arguments": "{}"}
        }));
        let function = take_function(&mut item).expect("a tool_calls item");
        assert!(is_tool_call(&function));
        let mut args = object(json!({"path": "a", "function": {}}));
        assert_eq!(take_function(&mut args), None);
        assert!(args.contains_key("function"), "left as it was");
        assert_eq!(take_function(&mut object(json!({"function": "x"}))), None);
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
    fn names() {
        assert_eq!(ToolName::parse("Write"), Some(ToolName::Write));
        assert_eq!(ToolName::parse("write_file"), Some(ToolName::WriteFile));
        assert_eq!(ToolName::parse("write"), None);
    }
}
