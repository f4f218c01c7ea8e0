//! `context.params_input`: the arguments echoed back
//! (`docs/contract.md#envelope`).
//!
//! An agent does not want the file it just sent echoed back into its
//! context, so a `content` longer than [`ECHO_CONTENT_MAX`] bytes is echoed
//! as `"[N bytes elided]"`, N its length in bytes.

use serde_json::{Map, Value};

use crate::request::{is_tool_call, take_function};

/// Contents longer than this are echoed as `"[N bytes elided]"`.
pub const ECHO_CONTENT_MAX: usize = 1024;

/// The echo of one `content` value.
pub fn content(content: &str) -> Value {
    if content.len() > ECHO_CONTENT_MAX {
        Value::String(elided(content.len()))
    } else {
        Value::String(content.to_owned())
    }
}

/// What stands in for `len` bytes that are not echoed.
pub fn elided(len: usize) -> String {
    format!("[{len} bytes elided]")
}

/// The echo of an arguments object: the object, its `content` elided.
pub fn arguments(mut args: Map<String, Value>) -> Value {
    if let Some(Value::String(text)) = args.get_mut("content")
        && text.len() > ECHO_CONTENT_MAX
    {
        *text = elided(text.len());
    }
    Value::Object(args)
}

/// The echo of the typed arguments of the WIT `write` function.
pub fn typed(path: &str, text: &str, dry_run: bool) -> Value {
    let mut map = Map::new();
    map.insert("path".into(), Value::String(path.to_owned()));
    map.insert("content".into(), content(text));
    map.insert("dry_run".into(), Value::Bool(dry_run));
    Value::Object(map)
}

/// Best-effort echo of raw request text that the tool did not finish with
/// (the host answers for it): the arguments object, or a tool call's, with
/// `content` elided; `{}` when the text is no such object.
pub fn raw(request: &str) -> Value {
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(request) else {
        return Value::Object(Map::new());
    };
    if let Some(function) = take_function(&mut object) {
        object = function;
    }
    if is_tool_call(&object) {
        object = match object.remove("arguments") {
            Some(Value::Object(args)) => args,
            Some(Value::String(text)) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(args)) => args,
                _ => Map::new(),
            },
            _ => Map::new(),
        };
    }
    arguments(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_content_is_elided() {
        let long = "x".repeat(ECHO_CONTENT_MAX + 1);
        assert_eq!(content(&long), json!("[1025 bytes elided]"));
        let exact = "x".repeat(ECHO_CONTENT_MAX);
        assert_eq!(content(&exact), json!(exact));
        let echo = raw(&json!({"path": "a", "content": "x".repeat(2000)}).to_string());
        assert_eq!(echo, json!({"path": "a", "content": "[2000 bytes elided]"}));
    }

    #[test]
    fn raw_requests_of_every_shape() {
        let call = json!({"name": "Write", "arguments": {"path": "a", "content": "x"}});
        assert_eq!(raw(&call.to_string()), json!({"path": "a", "content": "x"}));
        let string = json!({"name": "Write", "arguments": "{\"path\":\"b\"}"});
        assert_eq!(raw(&string.to_string()), json!({"path": "b"}));
        let item = json!({"type": "function", "function": {"name": "Write", "arguments": "{\"path\":\"c\"}"}});
        assert_eq!(raw(&item.to_string()), json!({"path": "c"}));
        assert_eq!(raw("[1]"), json!({}));
        assert_eq!(raw("not json"), json!({}));
    }
}
