//! The tool as a Model Context Protocol server (`write-tool mcp`), on the
//! official Rust SDK, `rmcp`.
//!
//! It lists two tools that run the same component: `Write` (the input
//! schema from the component's `definition()`) and `write_file` (`path` and
//! `content`, absolute paths inside an allowed root accepted;
//! `docs/contract.md#several-roots`). A `tools/call` is answered with the envelope: its JSON as the
//! text content, the same object as `structuredContent`, and `isError` set
//! for error envelopes. A call the tool cannot even start (an unknown tool
//! name) is a JSON-RPC error; everything else, bad arguments included, is an
//! envelope, as it is on every other surface.

use std::sync::Arc;

use crate::calls::Calls;
use crate::{Root, WriteTool};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{Value, json};
use write_tool_wire::Status;

/// The MCP server: the tool, its roots, and the tool list built once.
#[derive(Debug)]
pub struct McpServer {
    calls: Calls,
    tools: Vec<Tool>,
}

impl McpServer {
    /// Build the server. Reads the `Write` schema from the component.
    pub fn new(tool: Arc<WriteTool>, root: Arc<Root>) -> wasmtime::Result<McpServer> {
        let definition: Value = serde_json::from_str(&tool.definition()?)?;
        let tools = tools(&definition)?;
        Ok(McpServer {
            calls: Calls::new(tool, root),
            tools,
        })
    }

    /// Serve MCP over stdin/stdout until the client closes stdin.
    /// `max_message_bytes` bounds one incoming JSON-RPC message; a longer
    /// one is dropped (and answered) without being buffered.
    pub async fn serve_stdio(self, max_message_bytes: usize) -> anyhow::Result<()> {
        let transport = AsyncRwTransport::new_server(tokio::io::stdin(), tokio::io::stdout())
            .with_max_line_length(max_message_bytes);
        let service = self.serve(transport).await?;
        service.waiting().await?;
        Ok(())
    }

    /// The tools this server lists.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    async fn run(&self, name: &str, arguments: Option<JsonObject>) -> Result<String, ErrorData> {
        let input = json!({
            "name": name,
            "arguments": Value::Object(arguments.unwrap_or_default()),
        })
        .to_string();
        self.calls
            .call(input)
            .await
            .map_err(|message| ErrorData::internal_error(message, None))
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("write-tool", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Write files inside the project root. `Write` takes a root-relative path and \
                 the complete content and returns a JSON envelope with a unified diff preview; \
                 use dry_run to preview. `write_file` is the same tool for callers that name \
                 files by absolute path inside an allowed directory, or relative to the \
                 project root.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method: String = request.method.chars().take(64).collect();
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "Unknown method '{method}'. This server answers initialize, ping, tools/list and \
                 tools/call."
            ),
            None,
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        if !self.tools.iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool '{name}'. This server has 'Write' and 'write_file'."),
                None,
            ));
        }
        let envelope = self.run(name, request.arguments).await?;
        Ok(result(envelope).into())
    }
}

/// The call result for an envelope: its JSON as text (as the guest wrote
/// it), the same object as `structuredContent`, `isError` for errors.
fn result(envelope: String) -> CallToolResult {
    let value: Value = serde_json::from_str(&envelope).unwrap_or(Value::Null);
    let status = Status::deserialize(&value["status"]).ok();
    let mut result = if status == Some(Status::Error) {
        CallToolResult::structured_error(value)
    } else {
        CallToolResult::structured(value)
    };
    result.content = vec![ContentBlock::text(envelope)];
    result
}

/// `Write` from the component's definition, and `write_file`.
fn tools(definition: &Value) -> wasmtime::Result<Vec<Tool>> {
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
    let annotations = |title: &str| {
        ToolAnnotations::with_title(title)
            .read_only(false)
            .destructive(true)
            .idempotent(true)
            .open_world(false)
    };
    let write =
        Tool::new(name, description, Arc::new(schema.clone())).annotate(annotations("Write file"));
    let Value::Object(file_schema) = json!({
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
    }) else {
        unreachable!("a JSON object literal");
    };
    let write_file = Tool::new(
        "write_file",
        "Writes text content to a file path. Parent directories are created as needed. \
         Only paths under the allowed directories are accepted.",
        Arc::new(file_schema),
    )
    .annotate(annotations("Write file (write_file)"));
    Ok(vec![write, write_file])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_envelopes_are_tool_errors_and_keep_their_text() {
        let envelope = r#"{"status":"error","data":null,"text":"no","stats":{"time_ms":0},"context":{},"error":{"code":"INVALID_PARAM","message":"no"}}"#;
        let result = result(envelope.to_owned());
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            result.structured_content.as_ref().unwrap()["error"]["code"],
            "INVALID_PARAM"
        );
        let text = serde_json::to_value(&result.content[0]).unwrap();
        assert_eq!(text["text"], envelope);
        let ok = super::result(r#"{"status":"partial"}"#.to_owned());
        assert_eq!(ok.is_error, Some(false));
    }
}
