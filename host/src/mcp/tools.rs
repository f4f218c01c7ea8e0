//! The tools the MCP server lists, and a call's result as the protocol
//! carries it.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations};
use serde_json::{Value, json};
use write_tool_wire::{Envelope, Status, kinds};

/// The most characters of a successful answer's text block: under the
/// 50,000 past which Claude Code puts a result in a file instead of before
/// the model.
pub(super) const MAX_TEXT_CHARS: usize = 40_000;
/// The most characters of an error's text block: under the ~11,000 past
/// which Claude Code cuts error text.
pub(super) const MAX_ERROR_CHARS: usize = 10_000;

/// The call result for an envelope, which each client reads in one form
/// (`docs/contract.md#mcp`): the envelope's JSON as `structuredContent`
/// (what Claude Code and Codex put before the model), and as the text
/// block not the same JSON again but the envelope rendered for a model
/// (text, diff, the values a next call passes back), which clients
/// without structured content show; `isError` for errors.
pub(super) fn result(envelope: String) -> CallToolResult {
    let value: Value = serde_json::from_str(&envelope).unwrap_or(Value::Null);
    let (text, error) = for_model(&envelope);
    let mut result = if error {
        CallToolResult::structured_error(value)
    } else {
        CallToolResult::structured(value)
    };
    result.content = vec![ContentBlock::text(text)];
    result
}

/// The envelope written for a model, as the text block carries it, and
/// whether it is an error: bounded as [`MAX_TEXT_CHARS`] and
/// [`MAX_ERROR_CHARS`] say; JSON that is no envelope as it is.
pub(crate) fn for_model(envelope: &str) -> (String, bool) {
    let status = Status::of_json(envelope);
    let error = status == Some(Status::Error);
    let text = match Envelope::from_json(envelope) {
        Ok(decoded) => decoded.for_model(if error {
            MAX_ERROR_CHARS
        } else {
            MAX_TEXT_CHARS
        }),
        Err(_) => envelope.to_owned(),
    };
    (text, error)
}

/// `Write` from the component's definition, `write_file`, the component's
/// other tools (`Edit`, `edit_file`, `apply_patch`, `view`, `append`),
/// `write_many`, and — unless the host keeps them from the model — `revert` and
/// `checkpoint` (`docs/contract.md#journal`).
pub(super) fn tools(definition: &Value, revert: bool) -> wasmtime::Result<Vec<Tool>> {
    let Some(Value::Object(schema)) = definition.get("parameters") else {
        return Err(wasmtime::Error::msg(
            "the tool definition has no parameter schema",
        ));
    };
    let name = definition["name"].as_str().unwrap_or("Write").to_owned();
    let description = definition["description"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let write = Tool::new(name, description, Arc::new(schema.clone()));
    let mut tools = vec![write, write_file()];
    tools.extend(edits(definition));
    tools.push(write_many(schema));
    if revert {
        tools.extend([revert_tool(), checkpoint()]);
    }
    // Every tool answers with an envelope: one schema, generated from the
    // types the hosts read answers with.
    let answers = Arc::new(write_tool_wire::schema::envelope());
    Ok(tools
        .into_iter()
        .filter_map(|tool| {
            let annotations = annotations(&tool.name)?;
            Some(
                tool.annotate(annotations)
                    .with_raw_output_schema(Arc::clone(&answers)),
            )
        })
        .collect())
}

/// What the registry says of `name` (`write_tool_wire::kinds`), as MCP
/// annotates a tool: `None` for a name a server does not list. Plan modes
/// and read-only approval modes admit exactly the tools that say
/// `readOnlyHint` (`docs/contract.md#view`).
fn annotations(name: &str) -> Option<ToolAnnotations> {
    let kind = kinds::named(name)?;
    let title = kind.names.iter().find(|n| n.name == name)?.title?;
    Some(
        ToolAnnotations::with_title(title)
            .read_only(kind.hints.read_only)
            .destructive(kind.hints.destructive)
            .idempotent(kind.hints.idempotent)
            .open_world(false),
    )
}

fn object(value: Value) -> Arc<serde_json::Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("a JSON object literal"),
    }
}

/// The MCP filesystem server's name and parameters, for clients that
/// ask for them.
fn write_file() -> Tool {
    let schema = object(json!({
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Absolute or relative path to the target file. Relative paths resolve against the project root; absolute paths must be inside an allowed directory."
            },
            "content": {
                "type": "string",
                "description": "The text to write. Existing files are overwritten."
            }
        },
        "required": ["path", "content"]
    }));
    Tool::new(
        "write_file",
        "Writes text content to a file path. Parent directories are created as needed. \
         Only paths under the allowed directories are accepted.",
        schema,
    )
}

/// The component's tools past `Write`, as it defines them for a model.
fn edits(definition: &Value) -> impl Iterator<Item = Tool> + '_ {
    definition
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| t["name"] != definition["name"])
        .filter_map(|t| {
            let name = t["name"].as_str()?;
            let description = t["description"].as_str().unwrap_or_default().to_owned();
            let Some(Value::Object(schema)) = t.get("parameters") else {
                return None;
            };
            Some(Tool::new(
                name.to_owned(),
                description,
                Arc::new(schema.clone()),
            ))
        })
}

/// Each item takes Write's parameters but `dry_run`, which is the
/// group's.
fn write_many(schema: &serde_json::Map<String, Value>) -> Tool {
    let mut item = schema.clone();
    if let Some(Value::Object(properties)) = item.get_mut("properties") {
        properties.remove("dry_run");
    }
    Tool::new(
        "write_many",
        "Write several files as one change, all or none: every path, lock and content is \
         checked and every file staged before the first is replaced; a crash leaves all old or \
         all new. Answers with one envelope (data.files per file) and one change_id, which \
         `revert` takes to undo the whole group.",
        object(json!({
            "type": "object",
            "properties": {
                "writes": {
                    "type": "array",
                    "description": "The writes, each with Write's parameters (path, content, and optionally the lock values, create_only, keep_format, encoding).",
                    "items": Value::Object(item),
                    "minItems": 1
                },
                "dry_run": {
                    "type": "boolean",
                    "description": "Compute every diff, change nothing.",
                    "default": false
                }
            },
            "required": ["writes"]
        })),
    )
}

fn revert_tool() -> Tool {
    Tool::new(
        "revert",
        "Undo a change this tool made: the latest, the one `change_id` names (a write's \
         data.change_id), or every change since the checkpoint `to`. Files get back \
         exactly what they held; files a change created are removed. A file changed \
         since is not reverted (CONFLICT, with what would be lost) unless `force`.",
        object(json!({
            "type": "object",
            "properties": {
                "change_id": {"type": "string", "description": "The change to undo (default: the latest)."},
                "to": {"type": "string", "description": "Undo every change after this checkpoint."},
                "force": {"type": "boolean", "description": "Revert files changed since, losing those changes.", "default": false},
                "dry_run": {"type": "boolean", "description": "Show what would be restored, change nothing.", "default": false}
            }
        })),
    )
}

fn checkpoint() -> Tool {
    Tool::new(
        "checkpoint",
        "Mark a point to go back to: `revert` with `to` set to this name later undoes \
         every change made after it, all at once.",
        object(json!({
            "type": "object",
            "properties": {
                "checkpoint": {"type": "string", "description": "The checkpoint's name."}
            },
            "required": ["checkpoint"]
        })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(result: &CallToolResult) -> String {
        let block = serde_json::to_value(&result.content[0]).unwrap();
        block["text"].as_str().unwrap().to_owned()
    }

    #[test]
    fn view_alone_is_declared_read_only() {
        let tools = tools(&write_tool_core_definition(), true).unwrap();
        for tool in &tools {
            let hints = tool.annotations.as_ref().unwrap();
            let looks = tool.name == "view";
            assert_eq!(hints.read_only_hint, Some(looks), "{}", tool.name);
            if looks {
                assert_eq!(hints.destructive_hint, Some(false));
                assert_eq!(hints.idempotent_hint, Some(true));
            }
        }
        assert!(tools.iter().any(|t| t.name == "view"));
    }

    /// Each listed tool's title and hints, as the registry gives them.
    #[test]
    fn every_listed_tool_is_annotated_as_the_registry_says() {
        let mut definition = write_tool_core_definition();
        definition["tools"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "append", "description": "a", "parameters": {}}));
        let seen: Vec<(String, String, [bool; 3])> = tools(&definition, true)
            .unwrap()
            .iter()
            .map(|t| {
                let a = t.annotations.as_ref().unwrap();
                let hints = [a.read_only_hint, a.destructive_hint, a.idempotent_hint];
                assert_eq!(a.open_world_hint, Some(false), "{}", t.name);
                (
                    t.name.to_string(),
                    a.title.clone().unwrap(),
                    hints.map(|h| h.unwrap()),
                )
            })
            .collect();
        let want = [
            ("Write", "Write file", [false, true, true]),
            ("write_file", "Write file (write_file)", [false, true, true]),
            ("Edit", "Edit file", [false, true, false]),
            ("view", "View a file or directory", [true, false, true]),
            ("append", "Append to a file", [false, false, false]),
            ("write_many", "Write several files", [false, true, true]),
            ("revert", "Undo a change", [false, true, false]),
            ("checkpoint", "Set a checkpoint", [false, false, false]),
        ]
        .map(|(n, t, h)| (n.to_owned(), t.to_owned(), h));
        assert_eq!(seen, want);
        // A name the registry does not list is not offered.
        definition["tools"] = json!([{"name": "MultiEdit", "parameters": {}}]);
        assert_eq!(tools(&definition, false).unwrap().len(), 3);
    }

    /// The definition as the component gives it, from the CLI's schema
    /// of a real component being out of reach here: its `tools` part.
    fn write_tool_core_definition() -> Value {
        json!({
            "name": "Write",
            "description": "w",
            "parameters": {"type": "object", "properties": {}},
            "tools": [
                {"name": "Edit", "description": "e", "parameters": {"type": "object"}},
                {"name": "view", "description": "v", "parameters": {"type": "object"}}
            ]
        })
    }

    #[test]
    fn error_envelopes_are_tool_errors_and_keep_their_text() {
        let envelope = r#"{"status":"error","text":"no","error":{"code":"INVALID_PARAM"}}"#;
        let result = result(envelope.to_owned());
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            result.structured_content.as_ref().unwrap()["error"]["code"],
            "INVALID_PARAM"
        );
        assert_eq!(text_of(&result), "no", "the message, not the JSON again");
        let ok = self::result(r#"{"status":"partial","text":"t"}"#.to_owned());
        assert_eq!(ok.is_error, Some(false));
    }

    #[test]
    fn the_text_block_is_the_answer_written_for_a_model_and_bounded() {
        let envelope = r#"{"status":"success","data":{"applied":true,"operation":"update","diff_preview":"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n","lock":{"expected_mtime_ms":7,"expected_size_bytes":2},"change_id":"c9"},"text":"Updated 'f'."}"#;
        let result = result(envelope.to_owned());
        assert_eq!(
            text_of(&result),
            "Updated 'f'.\n\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\nexpected_mtime_ms: 7, expected_size_bytes: 2, change_id: c9"
        );
        assert_eq!(
            result.structured_content.unwrap()["data"]["change_id"],
            "c9"
        );
        let long = "x".repeat(MAX_TEXT_CHARS * 2);
        for (status, max) in [("success", MAX_TEXT_CHARS), ("error", MAX_ERROR_CHARS)] {
            let envelope = serde_json::json!({"status": status, "text": long, "error": {"code": "EXECUTION_ERROR"}});
            let text = text_of(&self::result(envelope.to_string()));
            assert!(
                text.chars().count() <= max && text.chars().count() > max - 100,
                "{status}"
            );
            assert!(text.ends_with("characters left out)"), "{status}");
        }
    }
}
