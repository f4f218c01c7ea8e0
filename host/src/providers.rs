//! The tool in each model provider's own shapes (`docs/contract.md#providers`),
//! for an agent loop that calls a model's API itself, without MCP: the tool
//! definitions as each API takes them, a model's turn (a whole message or
//! response) taken apart into its tool calls, and the answers put back in
//! the shape the API expects next — Anthropic's `tool_result` blocks in a
//! user message, OpenAI Responses' `function_call_output` items, OpenAI
//! Chat Completions' `tool` messages.

use std::str::FromStr;

use serde_json::{Value, json};

use write_tool_wire::{kinds, request};

use crate::WriteTool;

/// A model provider's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Anthropic's Messages API.
    Anthropic,
    /// OpenAI's Responses API.
    OpenAi,
    /// OpenAI's Chat Completions API (and the many APIs that copy it).
    OpenAiChat,
}

impl FromStr for Provider {
    type Err = String;

    fn from_str(name: &str) -> Result<Provider, String> {
        match name {
            "anthropic" => Ok(Provider::Anthropic),
            "openai" => Ok(Provider::OpenAi),
            "openai-chat" => Ok(Provider::OpenAiChat),
            other => Err(format!(
                "unknown provider '{other}': anthropic, openai (Responses) or openai-chat \
                 (Chat Completions)"
            )),
        }
    }
}

/// The tool definitions as `provider`'s API takes them in its `tools`.
pub fn definitions(tool: &WriteTool, provider: Provider) -> wasmtime::Result<Value> {
    let (listed, definition) = crate::mcp::listed(tool)?;
    let mut tools: Vec<Value> = Vec::new();
    // The registry's: the write, the edit, the look, the journal's and the
    // append. `write_file` and `edit_file` (other clients' names for the
    // same tools) are left out, so that a model is not offered one tool
    // twice; `apply_patch` goes to OpenAI's models, which are trained on
    // it.
    let handed = kinds::KINDS.iter().flat_map(|k| k.names).filter(|n| {
        n.handed || (n.name == request::APPLY_PATCH && provider != Provider::Anthropic)
    });
    for name in handed.map(|n| n.name) {
        let Some(found) = listed.iter().find(|t| t.name == name) else {
            // The journal's tools are not listed when the host keeps
            // them from the model.
            continue;
        };
        let description = found.description.as_deref().unwrap_or_default();
        let schema = Value::Object((*found.input_schema).clone());
        tools.push(match provider {
            Provider::Anthropic => {
                json!({"name": name, "description": description, "input_schema": schema})
            }
            // The freeform apply_patch, with its grammar, as OpenAI's own
            // agents declare it (`docs/contract.md#freeform`).
            Provider::OpenAi if name == "apply_patch" => definition["custom_tools"]
                .as_array()
                .and_then(|custom| custom.first())
                .cloned()
                .unwrap_or(Value::Null),
            Provider::OpenAi => json!({
                "type": "function", "name": name, "description": description,
                "parameters": schema, "strict": false
            }),
            Provider::OpenAiChat => json!({
                "type": "function",
                "function": {"name": name, "description": description, "parameters": schema}
            }),
        });
    }
    tools.retain(|t| !t.is_null());
    Ok(Value::Array(tools))
}

/// One tool call of a model's turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The id the answer names (`tool_use_id`, `call_id`, `tool_call_id`).
    pub id: String,
    /// The call itself, as a request the tool reads (`docs/contract.md#requests`).
    pub request: Value,
    /// An OpenAI custom tool call (raw input), answered as one.
    pub custom: bool,
}

/// The tool calls of a model's turn in `provider`'s shape: the whole
/// response, the assistant message, or its list of blocks or items.
/// Blocks that are not tool calls (text, reasoning) are passed over.
pub fn calls(provider: Provider, turn: &Value) -> Result<Vec<Call>, String> {
    let items = match provider {
        Provider::Anthropic => turn.get("content").unwrap_or(turn),
        Provider::OpenAi => turn.get("output").unwrap_or(turn),
        Provider::OpenAiChat => {
            let message = turn
                .pointer("/choices/0/message")
                .or_else(|| turn.get("message"))
                .unwrap_or(turn);
            message.get("tool_calls").unwrap_or(&Value::Null)
        }
    };
    let Some(items) = items.as_array() else {
        return Err(format!(
            "no tool calls found: give {}",
            match provider {
                Provider::Anthropic =>
                    "the Messages API's response, its assistant message, or its content blocks",
                Provider::OpenAi => "the Responses API's response or its output items",
                Provider::OpenAiChat => "the Chat Completions response or its assistant message",
            }
        ));
    };
    let mut calls = Vec::new();
    for item in items {
        let kind = item["type"].as_str().unwrap_or_default();
        let (id, custom) = match (provider, kind) {
            (Provider::Anthropic, "tool_use") => (&item["id"], false),
            (Provider::OpenAi, "function_call") => (&item["call_id"], false),
            (Provider::OpenAi, "custom_tool_call") => (&item["call_id"], true),
            (Provider::OpenAiChat, "function") => (&item["id"], false),
            (Provider::OpenAiChat, "custom") => (&item["id"], true),
            _ => continue,
        };
        let id = id
            .as_str()
            .ok_or_else(|| format!("a tool call without its id: {item}"))?;
        calls.push(Call {
            id: id.to_owned(),
            request: item.clone(),
            custom,
        });
    }
    Ok(calls)
}

/// What goes back to `provider`'s API after the calls: each answer (the
/// envelope JSON) written for a model, as the MCP text block writes it,
/// under its call's id. Anthropic: one user message of `tool_result`
/// blocks; OpenAI Responses: the `function_call_output` (or
/// `custom_tool_call_output`) items to add to the input; Chat Completions:
/// one `tool` message per call.
pub fn reply(provider: Provider, answered: &[(Call, String)]) -> Value {
    let parts = answered.iter().map(|(call, envelope)| {
        let (text, error) = crate::mcp::for_model(envelope);
        match provider {
            Provider::Anthropic => json!({
                "type": "tool_result", "tool_use_id": call.id, "content": text, "is_error": error
            }),
            Provider::OpenAi => json!({
                "type": if call.custom { "custom_tool_call_output" } else { "function_call_output" },
                "call_id": call.id,
                "output": text,
            }),
            Provider::OpenAiChat => json!({"role": "tool", "tool_call_id": call.id, "content": text}),
        }
    });
    match provider {
        Provider::Anthropic => json!({"role": "user", "content": parts.collect::<Vec<_>>()}),
        Provider::OpenAi | Provider::OpenAiChat => Value::Array(parts.collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calls_of_a_turn_in_each_shape() {
        let anthropic = json!({"role": "assistant", "content": [
            {"type": "text", "text": "I'll write it."},
            {"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"path": "a", "content": "x"}}
        ]});
        let found = calls(Provider::Anthropic, &anthropic).expect("calls");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, "toolu_1");
        let responses = json!({"output": [
            {"type": "reasoning", "id": "rs_1"},
            {"type": "function_call", "call_id": "call_1", "name": "Write", "arguments": "{}"},
            {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "x"}
        ]});
        let found = calls(Provider::OpenAi, &responses).expect("calls");
        assert_eq!(
            found
                .iter()
                .map(|c| (c.id.as_str(), c.custom))
                .collect::<Vec<_>>(),
            [("call_1", false), ("call_2", true)]
        );
        let chat = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "Write", "arguments": "{}"}}
        ]}}]});
        assert_eq!(
            calls(Provider::OpenAiChat, &chat).expect("calls")[0].id,
            "c1"
        );
        assert!(calls(Provider::Anthropic, &json!("text")).is_err());
        let no_id = json!([{"type": "tool_use", "name": "Write", "input": {}}]);
        assert!(calls(Provider::Anthropic, &no_id).is_err());
    }

    #[test]
    fn answers_go_back_in_the_providers_shape() {
        let call = |custom| Call {
            id: "i".into(),
            request: Value::Null,
            custom,
        };
        let error =
            r#"{"status":"error","data":null,"text":"No.","error":{"code":"INVALID_PARAM"}}"#;
        let back = reply(Provider::Anthropic, &[(call(false), error.to_owned())]);
        assert_eq!(
            back,
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "i", "content": "No.", "is_error": true}
            ]})
        );
        let back = reply(Provider::OpenAi, &[(call(true), error.to_owned())]);
        assert_eq!(back[0]["type"], "custom_tool_call_output");
        let back = reply(Provider::OpenAiChat, &[(call(false), error.to_owned())]);
        assert_eq!(
            back,
            json!([{"role": "tool", "tool_call_id": "i", "content": "No."}])
        );
    }
}
