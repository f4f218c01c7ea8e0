//! JSON read as strictly as the tool reads a request
//! (`docs/contract.md#parameters`): a repeated key in any object, or
//! anything after the value, is an error rather than the last key winning
//! or the rest ignored. Every surface that takes a request reads it so:
//! the component its arguments, the MCP server its whole messages.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Parse one JSON value from `input`, refusing duplicate keys and
/// trailing data.
pub fn parse(input: &str) -> Result<Value, serde_json::Error> {
    // From a `str`: its strings are not checked for UTF-8 again, which a
    // request of many MiB would pay for.
    let mut de = serde_json::Deserializer::from_str(input);
    let value = StrictValue.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// [`parse`] of bytes, which must be UTF-8 where they are strings.
pub fn parse_slice(input: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(input);
    let value = StrictValue.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// A `serde_json::Value` seed that fails on a repeated key.
struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                let shown: String = key.chars().take(64).collect();
                return Err(de::Error::custom(format_args!("duplicate key '{shown}'")));
            }
            let value = access.next_value_seed(StrictValue)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_and_trailing_data_are_errors() {
        assert!(parse(r#"{"a":1,"b":{"c":2}}"#).is_ok());
        let err = parse(r#"{"a":1,"b":{"c":2,"c":3}}"#).unwrap_err();
        assert!(err.to_string().contains("duplicate key 'c'"), "{err}");
        assert!(parse(r#"{"a":1} x"#).is_err());
        assert!(parse_slice(br#"[{"a":1,"a":1}]"#).is_err());
    }
}
