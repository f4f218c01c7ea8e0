//! The answers' JSON Schema, generated from the types that read them
//! (`docs/contract.md#envelope`): what MCP lists as every tool's
//! `outputSchema`, so that a client that validates `structuredContent`
//! checks it against the same definition the hosts decode with, not a copy
//! kept by hand.

use serde_json::{Map, Value};

use crate::compact::Either;

/// The schema of an envelope in either form (compact or full), as
/// [`of`] writes it.
pub fn envelope() -> Map<String, Value> {
    of::<Either>()
}

/// The JSON Schema of `T`: one object, every subschema inlined and no
/// `$schema` keyword, so that validators of either JSON Schema draft
/// MCP clients use (draft 7, 2020-12) read it the same way.
pub fn of<T: schemars::JsonSchema>() -> Map<String, Value> {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    drop_number_formats(&mut schema);
    match schema {
        Value::Object(map) => map,
        // schemars writes an object for a struct; a bare `true` would say
        // nothing, so an empty object (any value) says the same.
        _ => Map::new(),
    }
}

/// The JSON Schema of a tool's parameters `T`, as [`of`] writes it, for
/// a model: no root `title` or `description` (the Rust type's, which say
/// nothing to a model: the tool's own description does), each
/// parameter's description one paragraph (a doc comment's lines joined),
/// and an optional parameter's type its own, not also `null`: models'
/// APIs that take one type per property (Gemini's function declarations)
/// read it, and leaving a parameter out is how a call says "none".
pub fn parameters<T: schemars::JsonSchema>() -> Map<String, Value> {
    let mut schema = of::<T>();
    schema.remove("title");
    schema.remove("description");
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for property in properties.values_mut() {
            if let Some(Value::String(text)) = property.get_mut("description") {
                *text = text.replace('\n', " ");
            }
            if let Some(Value::Array(types)) = property.get_mut("type") {
                types.retain(|t| t != "null");
                if let [one] = &types[..] {
                    property["type"] = one.clone();
                }
            }
        }
    }
    schema
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
