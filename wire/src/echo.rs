//! `context.params_input`: the arguments echoed back
//! (`docs/contract.md#envelope`).
//!
//! The echo is for the caller to see what the tool understood, not to hand
//! its input back: an agent does not want the file it just sent echoed into
//! its context, and a hostile caller must not be able to make the answer as
//! large as its request. So every string longer than [`ECHO_STRING_MAX`]
//! bytes (`content`, but also a path or an unknown field) is echoed as
//! `"[N bytes elided]"`, N its length in bytes; so is any other value whose
//! JSON is longer than that; and once the echo holds [`ECHO_TOTAL_MAX`]
//! bytes, further fields are left out and counted under the key
//! [`ELIDED_FIELDS_KEY`].

use std::io;

use serde_json::{Map, Value};

use crate::request::unwrap;

/// Strings (and other values, as JSON) longer than this are echoed as
/// `"[N bytes elided]"`.
pub const ECHO_STRING_MAX: usize = 1024;

/// The most the echo holds, in bytes of JSON, before fields are left out.
pub const ECHO_TOTAL_MAX: usize = 8 * 1024;

/// The key under which the echo counts the fields it left out.
pub const ELIDED_FIELDS_KEY: &str = "[elided]";

/// The echo of one `content` value.
pub fn content(content: &str) -> Value {
    string(content)
}

/// The echo of one string.
fn string(text: &str) -> Value {
    if text.len() > ECHO_STRING_MAX {
        Value::String(elided(text.len()))
    } else {
        Value::String(text.to_owned())
    }
}

/// What stands in for `len` bytes that are not echoed.
pub fn elided(len: usize) -> String {
    format!("[{len} bytes elided]")
}

/// The echo of one value: itself, or the elision when it is too long.
fn value(value: Value) -> Value {
    match value {
        Value::String(text) => string(&text),
        scalar @ (Value::Null | Value::Bool(_) | Value::Number(_)) => scalar,
        container => match json_len(&container, ECHO_STRING_MAX) {
            Some(_) => container,
            None => Value::String(elided(json_len(&container, usize::MAX).unwrap_or(0))),
        },
    }
}

/// The echo of an arguments object, bounded as the module says.
pub fn arguments(args: Map<String, Value>) -> Value {
    let mut echo = Map::new();
    let mut budget = ECHO_TOTAL_MAX;
    let mut left_out = 0usize;
    for (key, field) in args {
        let field = value(field);
        let size = json_len(&Value::String(key.clone()), budget)
            .and_then(|key_len| Some(key_len + 1 + json_len(&field, budget)? + 1));
        match size {
            Some(size) if size <= budget => {
                budget -= size;
                echo.insert(key, field);
            }
            _ => left_out += 1,
        }
    }
    if left_out > 0 {
        echo.insert(
            ELIDED_FIELDS_KEY.to_owned(),
            Value::String(format!("{left_out} more fields")),
        );
    }
    Value::Object(echo)
}

/// The length of `value` as JSON, if it is at most `max`: the count stops
/// there, so that measuring a huge value costs no more than `max` bytes.
fn json_len(value: &Value, max: usize) -> Option<usize> {
    struct Counter {
        len: usize,
        max: usize,
    }
    impl io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.len += buf.len();
            if self.len > self.max {
                return Err(io::Error::from(io::ErrorKind::FileTooLarge));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { len: 0, max };
    serde_json::to_writer(&mut counter, value).ok()?;
    Some(counter.len)
}

/// The echo of the typed arguments of the WIT `write` function.
pub fn typed(path: &str, text: &str, dry_run: bool) -> Value {
    let mut map = Map::new();
    map.insert("path".into(), string(path));
    map.insert("content".into(), string(text));
    map.insert("dry_run".into(), Value::Bool(dry_run));
    Value::Object(map)
}

/// Best-effort echo of raw request text that the tool did not finish with
/// (the host answers for it): the arguments object, or a tool call's, with
/// content elided; `{}` when the text is no such object.
pub fn raw(request: &str) -> Value {
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(request) else {
        return Value::Object(Map::new());
    };
    match unwrap(object, |text| serde_json::from_str::<Value>(text)) {
        Ok(call) => arguments(call.arguments),
        Err(_) => Value::Object(Map::new()),
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
    fn long_content_is_elided() {
        let long = "x".repeat(ECHO_STRING_MAX + 1);
        assert_eq!(content(&long), json!("[1025 bytes elided]"));
        let exact = "x".repeat(ECHO_STRING_MAX);
        assert_eq!(content(&exact), json!(exact));
        let echo = raw(&json!({"path": "a", "content": "x".repeat(2000)}).to_string());
        assert_eq!(echo, json!({"path": "a", "content": "[2000 bytes elided]"}));
    }

    #[test]
    fn every_long_string_and_value_is_elided() {
        let echo = arguments(object(json!({
            "path": "p".repeat(3 << 20),
            "content": "short",
            "extra": ["x".repeat(600), "y".repeat(600)],
            "small": {"a": 1},
        })));
        assert_eq!(
            echo,
            json!({
                "path": format!("[{} bytes elided]", 3 << 20),
                "content": "short",
                "extra": "[1207 bytes elided]",
                "small": {"a": 1},
            })
        );
        assert_eq!(
            typed(&"q".repeat(5000), "c", true),
            json!({"path": "[5000 bytes elided]", "content": "c", "dry_run": true})
        );
    }

    #[test]
    fn the_echo_as_a_whole_is_bounded() {
        let mut args = Map::new();
        args.insert("path".into(), json!("a.txt"));
        for i in 0..10_000 {
            args.insert(format!("field{i}"), json!("v".repeat(500)));
        }
        args.insert("k".repeat(1 << 20), json!(1));
        let echo = arguments(args);
        let json = echo.to_string();
        assert!(json.len() <= ECHO_TOTAL_MAX + 64, "{}", json.len());
        assert_eq!(echo["path"], "a.txt");
        let left_out = echo[ELIDED_FIELDS_KEY].as_str().expect("a count");
        let kept = echo.as_object().expect("an object").len() - 1;
        assert_eq!(left_out, format!("{} more fields", 10_001 + 1 - kept));
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
