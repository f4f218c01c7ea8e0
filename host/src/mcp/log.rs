//! MCP log notifications (`notifications/message`): how the server tells
//! the client, and the person who reads its logs, what is wrong with its
//! roots. MCP deprecated logging (SEP-2577) after the protocol versions
//! clients speak today; while clients show these messages, the server sends
//! them.

#![allow(deprecated, reason = "MCP logging; see the module documentation")]

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::Peer;
use serde_json::Value;

/// How serious a message is.
#[derive(Debug, Clone, Copy)]
pub(super) enum Level {
    /// Calls will fail.
    Error,
    /// Calls work, perhaps not where the user expects.
    Warning,
}

/// Send `message` to the client's log, and to stderr.
pub(super) async fn notify(peer: &Peer<RoleServer>, level: Level, message: String) {
    eprintln!("write-tool mcp: {message}");
    let level = match level {
        Level::Error => LoggingLevel::Error,
        Level::Warning => LoggingLevel::Warning,
    };
    let param = LoggingMessageNotificationParam::new(level, Value::String(message))
        .with_logger("write-tool");
    // A client that went away needs no message.
    let _ = peer.notify_logging_message(param).await;
}
