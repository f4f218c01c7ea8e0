//! The few envelopes the host writes itself.
//!
//! The guest answers every call it finishes. When it cannot finish — the
//! time bound or memory cap stopped it, or it trapped — the host answers in
//! the same format, with code `EXECUTION_ERROR`. `serve` also answers a line
//! that is not UTF-8 (the guest takes strings) with `INVALID_PARAM`.

use serde_json::{Map, Value, json};

use crate::bindings::exports::write_tool::tool::tool as wit;

/// Content longer than this is elided in `params_input`, as the guest does.
const ECHO_CONTENT_MAX: usize = 1024;

/// Status of an envelope, read back from its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `"success"`.
    Success,
    /// `"partial"`.
    Partial,
    /// `"error"`.
    Error,
}

/// The `status` of envelope JSON, `None` if it has none.
pub fn status_of(envelope_json: &str) -> Option<Status> {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        status: &'a str,
    }
    match serde_json::from_str::<Head<'_>>(envelope_json).ok()?.status {
        "success" => Some(Status::Success),
        "partial" => Some(Status::Partial),
        "error" => Some(Status::Error),
        _ => None,
    }
}

/// The `INVALID_PARAM` envelope for a request that cannot reach the guest
/// (not UTF-8, or over the size limit), as JSON.
pub fn invalid_request(message: &str) -> String {
    error_json("INVALID_PARAM", message, 0, Value::Object(Map::new()))
}

/// A host-made error envelope as JSON.
pub(crate) fn error_json(code: &str, message: &str, time_ms: u64, params_input: Value) -> String {
    json!({
        "status": "error",
        "data": null,
        "text": message,
        "stats": { "time_ms": time_ms },
        "context": { "cwd": ".", "params_input": params_input, "path_resolved": null },
        "error": { "code": code, "message": message },
    })
    .to_string()
}

/// A host-made `EXECUTION_ERROR` envelope in its typed form.
pub(crate) fn error_typed(message: &str, time_ms: u64, params_input: Value) -> wit::Envelope {
    wit::Envelope {
        status: wit::Status::Error,
        data: None,
        text: message.to_owned(),
        stats: wit::Stats {
            time_ms,
            bytes_written: None,
            original_size: None,
            new_size: None,
            lines_added: None,
            lines_removed: None,
        },
        context: wit::Context {
            cwd: ".".to_owned(),
            params_input: params_input.to_string(),
            path_resolved: None,
        },
        error: Some(wit::ErrorInfo {
            code: wit::ErrorCode::ExecutionError,
            message: message.to_owned(),
        }),
    }
}

/// Best-effort `params_input` for raw arguments the guest did not finish
/// with: the arguments object (or a tool call's), content elided past
/// 1024 bytes; `{}` when the input is not such an object.
pub(crate) fn echo_arguments(arguments: &str) -> Value {
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(arguments) else {
        return Value::Object(Map::new());
    };
    if object.contains_key("arguments") && !object.contains_key("path") {
        object = match object.remove("arguments") {
            Some(Value::Object(args)) => args,
            Some(Value::String(text)) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(args)) => args,
                _ => Map::new(),
            },
            _ => Map::new(),
        };
    }
    if let Some(Value::String(content)) = object.get_mut("content")
        && content.len() > ECHO_CONTENT_MAX
    {
        *content = format!("[{} bytes elided]", content.len());
    }
    Value::Object(object)
}

/// `params_input` for typed arguments.
pub(crate) fn echo_typed(path: &str, content: &str, dry_run: bool) -> Value {
    let content = if content.len() > ECHO_CONTENT_MAX {
        format!("[{} bytes elided]", content.len())
    } else {
        content.to_owned()
    };
    json!({ "path": path, "content": content, "dry_run": dry_run })
}

/// The `path` argument of raw call input, read without materialising the
/// content (which can be many MiB): other fields are skipped, not built, and
/// reading stops as soon as `path` is found (agents usually send it first).
pub(crate) fn path_argument(arguments: &str) -> Option<String> {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};
    use serde_json::value::RawValue;

    /// What the scan found.
    enum Found<'a> {
        Path(String),
        Arguments(&'a RawValue),
    }

    /// Stops the parse (with an error) as soon as `path` is read; what was
    /// found goes into the slot, since the parse itself reports failure.
    struct Scan<'s, 'de>(&'s mut Option<Found<'de>>);

    impl<'de> Visitor<'de> for Scan<'_, 'de> {
        type Value = ();

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match key.as_ref() {
                    "path" => {
                        *self.0 = Some(Found::Path(map.next_value()?));
                        return Err(serde::de::Error::custom("found"));
                    }
                    "arguments" => *self.0 = Some(Found::Arguments(map.next_value()?)),
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(())
        }
    }

    let mut found = None;
    let mut de = serde_json::Deserializer::from_str(arguments);
    // The result only says whether the scan stopped early; the slot says
    // what it saw. The guest validates the input in full anyway.
    let _ = (&mut de).deserialize_map(Scan(&mut found));
    match found? {
        Found::Path(path) => Some(path),
        Found::Arguments(raw) => {
            let inner = raw.get();
            if inner.starts_with('"') {
                let text: String = serde_json::from_str(inner).ok()?;
                path_argument(&text)
            } else {
                path_argument(inner)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_argument_forms() {
        assert_eq!(
            path_argument(r#"{"content":"x","path":"a/b"}"#).as_deref(),
            Some("a/b")
        );
        assert_eq!(
            path_argument(r#"{"name":"Write","arguments":{"path":"c","content":"x"}}"#).as_deref(),
            Some("c")
        );
        assert_eq!(
            path_argument(r#"{"name":"Write","arguments":"{\"path\":\"d\"}"}"#).as_deref(),
            Some("d")
        );
        assert_eq!(path_argument("not json"), None);
    }

    #[test]
    fn echo_elides_long_content() {
        let long = "x".repeat(2000);
        let echo = echo_arguments(&json!({"path": "a", "content": long}).to_string());
        assert_eq!(echo, json!({"path": "a", "content": "[2000 bytes elided]"}));
        assert_eq!(echo_arguments("[1]"), json!({}));
    }

    #[test]
    fn status_is_read_back() {
        assert_eq!(
            status_of(&error_json("EXECUTION_ERROR", "m", 1, json!({}))),
            Some(Status::Error)
        );
        assert_eq!(status_of("{}"), None);
    }
}
