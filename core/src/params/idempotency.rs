//! A call's idempotency key (`docs/contract.md#idempotency`): the key, and
//! a digest of what the call asked, by which a repeat is told from another
//! call that reuses the key.

use std::io;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::error::ToolError;

/// The argument that carries the key.
pub const KEY: &str = write_tool_wire::request::IDEMPOTENCY_KEY;

/// The longest key, in bytes: room for a UUID, a ULID, a Temporal
/// activity's workflow, run and activity ids together, or Stripe's keys.
pub const MAX_KEY_BYTES: usize = 255;

/// Arguments that do not change what a call does, so a repeat may differ in
/// them: the key itself and the form of the answer.
const NOT_ASKED: [&str; 2] = [KEY, "envelope"];

/// A call's key and the SHA-256 of its tool name and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyed {
    /// The key as the caller sent it.
    pub key: String,
    /// SHA-256 of the tool's name and the arguments, less `idempotency_key` and `envelope`,
    /// as JSON with every object's keys in order: the same however a
    /// caller orders them.
    pub asked: [u8; 32],
}

/// The key `args` carry, if any, with what the call asks.
pub(super) fn keyed(
    args: &Map<String, Value>,
    name: Option<&str>,
) -> Result<Option<Keyed>, ToolError> {
    let key = match args.get(KEY) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(key)) => key,
        Some(_) => {
            return Err(ToolError::invalid_param(format!(
                "Parameter '{KEY}' must be a string."
            )));
        }
    };
    if key.is_empty() || key.len() > MAX_KEY_BYTES || key.chars().any(char::is_control) {
        return Err(ToolError::invalid_param(format!(
            "Parameter '{KEY}' must be 1 to {MAX_KEY_BYTES} bytes of text without controls."
        )));
    }
    let mut hasher = Hashing(Sha256::new());
    hasher.0.update(name.unwrap_or_default().as_bytes());
    hasher.0.update([0]);
    serde_json::to_writer(
        &mut hasher,
        &OrderedMap {
            map: args,
            top: true,
        },
    )
    .map_err(|e| ToolError::execution(format!("The arguments could not be hashed: {e}")))?;
    Ok(Some(Keyed {
        key: key.clone(),
        asked: hasher.0.finalize().into(),
    }))
}

/// An object written with its keys in order (and, at the top, without
/// [`NOT_ASKED`]), straight into the hash: a large content is not copied
/// to be hashed.
struct OrderedMap<'a> {
    map: &'a Map<String, Value>,
    top: bool,
}

impl Serialize for OrderedMap<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut entries: Vec<(&String, &Value)> = self
            .map
            .iter()
            .filter(|(k, _)| !(self.top && NOT_ASKED.contains(&k.as_str())))
            .collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut out = s.serialize_map(Some(entries.len()))?;
        for (k, value) in entries {
            out.serialize_entry(k, &Ordered(value))?;
        }
        out.end()
    }
}

/// A value inside the arguments, its objects' keys in order.
struct Ordered<'a>(&'a Value);

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => OrderedMap { map, top: false }.serialize(s),
            Value::Array(items) => s.collect_seq(items.iter().map(Ordered)),
            other => other.serialize(s),
        }
    }
}

/// The hash as a writer, for `serde_json::to_writer`.
struct Hashing(Sha256);

impl io::Write for Hashing {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn asked(args: Value, name: Option<&str>) -> [u8; 32] {
        let Value::Object(map) = args else { panic!() };
        keyed(&map, name).unwrap().unwrap().asked
    }

    /// The order of keys, the key itself and the answer's form do not
    /// change what a call asks; a value, a nested one, or the tool's name do.
    #[test]
    fn what_a_call_asks_is_its_name_and_arguments_in_any_order() {
        let one = asked(
            json!({"idempotency_key": "a", "path": "x", "content": "1", "o": {"b": 1, "a": 2}}),
            Some("Write"),
        );
        let same = asked(
            json!({"o": {"a": 2, "b": 1}, "content": "1", "path": "x", "envelope": "full", "idempotency_key": "b"}),
            Some("Write"),
        );
        assert_eq!(one, same);
        for other in [
            json!({"idempotency_key": "a", "path": "x", "content": "2", "o": {"b": 1, "a": 2}}),
            json!({"idempotency_key": "a", "path": "x", "content": "1", "o": {"b": 1, "a": 3}}),
            json!({"idempotency_key": "a", "path": "x", "content": "1", "o": {"b": 1, "a": 2}, "dry_run": false}),
        ] {
            assert_ne!(asked(other, Some("Write")), one);
        }
        let edit = asked(
            json!({"idempotency_key": "a", "path": "x", "content": "1", "o": {"b": 1, "a": 2}}),
            Some("Edit"),
        );
        assert_ne!(edit, one);
    }

    /// A key that is not a string, empty, too long or holding a control
    /// is refused; no key is none.
    #[test]
    fn a_key_is_short_printable_text() {
        let of = |args: Value| {
            let Value::Object(map) = args else { panic!() };
            keyed(&map, None)
        };
        assert_eq!(of(json!({"path": "x"})), Ok(None));
        assert_eq!(of(json!({"path": "x", "idempotency_key": null})), Ok(None));
        for bad in [json!(1), json!(""), json!("a\nb"), json!("k".repeat(256))] {
            let err = of(json!({"path": "x", "idempotency_key": bad})).unwrap_err();
            assert!(err.message().contains("idempotency_key"), "{err}");
        }
        assert!(
            of(json!({"idempotency_key": "k".repeat(255)}))
                .unwrap()
                .is_some()
        );
    }
}
