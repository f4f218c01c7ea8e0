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
    fn names() {
        assert_eq!(ToolName::parse("Write"), Some(ToolName::Write));
        assert_eq!(ToolName::parse("write_file"), Some(ToolName::WriteFile));
        assert_eq!(ToolName::parse("write"), None);
    }
}
