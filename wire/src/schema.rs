//! The answers' JSON Schema, generated from the types that read them
//! (`docs/contract.md#envelope`): what MCP lists as every tool's
//! `outputSchema`, so that a client that validates `structuredContent`
//! checks it against the same definition the hosts decode with, not a copy
//! kept by hand.

use serde_json::{Map, Value};

use crate::compact::Either;

/// The schema of an envelope in either form (compact or full): one object,
/// every subschema inlined and no `$schema` keyword, so that validators of
/// either JSON Schema draft MCP clients use (draft 7, 2020-12) read it the
/// same way.
pub fn envelope() -> Map<String, Value> {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<Either>().to_value();
    drop_number_formats(&mut schema);
    match schema {
        Value::Object(map) => map,
        // schemars writes an object for a struct; a bare `true` would say
        // nothing, so an empty object (any value) says the same.
        _ => Map::new(),
    }
}

/// Remove the `format`s schemars gives integers (`uint64`, `int64`, …):
/// no JSON Schema draft defines them, and a strict validator (Ajv, as the
/// TypeScript SDK runs it) may refuse a schema with formats it does not
/// know. `minimum` still says what they meant.
fn drop_number_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let numeric = map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f.starts_with("int") || f.starts_with("uint"));
            if numeric {
                map.remove("format");
            }
            map.values_mut().for_each(drop_number_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_number_formats),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_one_object_with_no_references_or_integer_formats() {
        let schema = Value::Object(envelope());
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], serde_json::json!(["status", "text"]));
        let text = schema.to_string();
        assert!(!text.contains("$ref"), "{text}");
        assert!(!text.contains("$schema"), "{text}");
        // No format at all: no integer one a strict validator refuses.
        assert!(!text.contains("\"format\""), "{text}");
        // The error codes are the contract's, every one of them.
        for code in crate::ErrorCode::ALL {
            assert!(text.contains(&format!("\"{}\"", code.as_str())), "{code:?}");
        }
    }
}
