//! What the MCP server does with a message that comes before a lifecycle
//! opens (`docs/contract.md#mcp-eras`): rmcp ends the session on anything
//! but `initialize`, `ping`, `server/discover` or a self-contained
//! request of MCP 2026-07-28, so the rest is answered or dropped here.

use rmcp::RoleServer;
use rmcp::model::{JsonRpcMessage, ProtocolVersion};
use rmcp::service::TxJsonRpcMessage;
use serde_json::{Value, json};

/// What becomes of a message before a lifecycle opens.
#[derive(Debug)]
pub(super) enum Opening {
    /// rmcp takes it, and it opens the lifecycle.
    Opens,
    /// rmcp takes it and waits on (`server/discover`).
    Passes,
    /// Answered here with this message.
    Answered(Value),
    /// A notification or a response: nothing to answer.
    Ignored,
}

/// What becomes of the request `value` (method `method`, id `id`, `None`
/// for a notification) that comes before a lifecycle opens.
pub(super) fn before(method: Option<&str>, id: Option<Value>, value: &Value) -> Opening {
    match (method, id) {
        (Some("initialize"), Some(_)) => Opening::Opens,
        (Some("ping"), Some(id)) => {
            Opening::Answered(json!({"jsonrpc": "2.0", "id": id, "result": {}}))
        }
        // The 2026-07-28 opener: rmcp answers it and waits on for either
        // lifecycle.
        (Some("server/discover"), Some(_)) => Opening::Passes,
        // A stateless request carrying what `initialize` would have said:
        // rmcp serves it, and every request after it, in that lifecycle.
        (Some(_), Some(_)) if self_contained(value) => Opening::Opens,
        (Some(_), Some(id)) => Opening::Answered(json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": NOT_INITIALIZED,
                "message": "Server not initialized: send initialize first, or (MCP 2026-07-28) \
                            the protocol version and the client's capabilities in each \
                            request's _meta.",
            },
        })),
        _ => Opening::Ignored,
    }
}

/// The error code of a request made before `initialize`: LSP's, which MCP
/// leaves to the implementation.
const NOT_INITIALIZED: i32 = -32002;

/// Whether a request made before `initialize` carries, in its `_meta`, a
/// protocol version this server speaks and the client's capabilities (MCP
/// 2026-07-28's stateless requests): the request that opens a lifecycle
/// without `initialize`. rmcp answers one that lacks either with an error
/// and waits on; this gate lets notifications through only once rmcp has
/// left that wait, so it asks the same of the request.
fn self_contained(request: &Value) -> bool {
    let meta = &request["params"]["_meta"];
    let known = meta["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .is_some_and(|version| {
            ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .any(|known| known.as_str() == version)
        });
    known && meta["io.modelcontextprotocol/clientCapabilities"].is_object()
}

/// Whether `answer` settles one of the `opening` requests (passed on, not
/// yet answered): `Some(true)` for a result, which opens the lifecycle,
/// `Some(false)` for an error, which leaves it shut; `None` otherwise.
pub(super) fn answered(
    opening: &mut Vec<Value>,
    answer: &TxJsonRpcMessage<RoleServer>,
) -> Option<bool> {
    let (id, opened) = match answer {
        JsonRpcMessage::Response(response) => (&response.id, true),
        JsonRpcMessage::Error(error) => (error.id.as_ref()?, false),
        _ => return None,
    };
    let id = serde_json::to_value(id).unwrap_or(Value::Null);
    let at = opening.iter().position(|o| *o == id)?;
    opening.swap_remove(at);
    Some(opened)
}
