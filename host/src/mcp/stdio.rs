//! MCP's stdio transport: one JSON-RPC message per line, each way.
//!
//! Every line is read as strictly as a request on any other surface
//! (`write_tool_wire::strict`): a repeated key is refused, not the last one
//! taken. What rmcp would end the session on, or pass over in silence, is
//! answered here instead, as the MCP revisions this server speaks
//! (2025-11-25, 2026-07-28) ask:
//!
//! - before a lifecycle opens, a request other than `initialize`, `ping`,
//!   `server/discover` or a self-contained request of MCP 2026-07-28 (its
//!   protocol version and the client's capabilities in `_meta`) gets a
//!   JSON-RPC error (-32002, "not initialized"), `ping` its empty result,
//!   and a notification or a response is ignored: rmcp ends the session on
//!   anything else before a lifecycle opens;
//! - a batch (a JSON array; MCP dropped JSON-RPC batches in 2025-06-18)
//!   and a message whose `id` is neither a string nor an integer get an
//!   Invalid Request error (-32600) with a null `id`, since none can be
//!   answered to.
//!
//! rmcp's own line transport drops a line over the size limit, and a line
//! serde_json will not parse (one nested deeper than its 128 levels among
//! them), without a word: the client waits for an answer that never comes.
//! This one answers both whenever the request's `id` can be read — from the
//! line's first bytes for one over the limit, which is never buffered whole:
//! a `tools/call` with an `INVALID_PARAM` envelope, as every other surface
//! answers bad input, any other method with a JSON-RPC error. A line with no
//! readable `id` stays unanswered: it may be a notification, and JSON-RPC
//! answers none.

use std::future::{Future, ready};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::RoleServer;
use rmcp::model::{
    ErrorCode as RpcCode, ErrorData, GetExtensions as _, JsonRpcMessage, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

use super::lifecycle::{self, Opening};
use super::tools::result;
use crate::envelope::{invalid_request, request_too_long};
use head::Head;
use write_tool_wire::{Envelope, ErrorCode};

mod bounds;
mod head;

use bounds::{Backlog, MAX_PENDING_CALLS, Pending};

/// How much of a line over the limit is kept to look for its `id`: clients
/// write `jsonrpc`, `id` and `method` before `params`.
const HEAD_BYTES: usize = 4096;

/// The transport over `read` and `write`, and the task that writes: it
/// ends once the transport is dropped and every message is written.
pub(super) fn lines<R, W>(read: R, write: W, max_line_bytes: usize) -> (Lines<R>, JoinHandle<()>)
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (out, queue) = unbounded_channel();
    let backlog = Arc::new(Backlog::default());
    let writer = tokio::spawn(write_lines(write, queue, Arc::clone(&backlog)));
    let lines = Lines {
        read: BufReader::new(read),
        initialized: false,
        opening: Vec::new(),
        line: Vec::new(),
        over: false,
        max_line_bytes,
        out,
        backlog,
        pending: Arc::default(),
        stop: None,
        roots_changes: None,
    };
    (lines, writer)
}

/// Read up to the end of a line into `line` (only its first bytes once it
/// is `over` the limit). `false` at the end of input (an unfinished last
/// line is no message).
async fn read_line<R: AsyncRead + Unpin>(
    read: &mut BufReader<R>,
    line: &mut Vec<u8>,
    over: &mut bool,
    max_line_bytes: usize,
) -> std::io::Result<bool> {
    loop {
        let buffered = read.fill_buf().await?;
        if buffered.is_empty() {
            return Ok(false);
        }
        let (part, used, ends) = match memchr::memchr(b'\n', buffered) {
            Some(at) => (&buffered[..at], at + 1, true),
            None => (buffered, buffered.len(), false),
        };
        if !*over && line.len() + part.len() > max_line_bytes {
            *over = true;
            line.truncate(HEAD_BYTES);
        }
        let room = if *over {
            HEAD_BYTES.saturating_sub(line.len())
        } else {
            part.len()
        };
        line.extend_from_slice(&part[..room.min(part.len())]);
        read.consume(used);
        if ends {
            return Ok(true);
        }
    }
}

/// Messages are written by one task, in the order they were sent, so that
/// neither a reply of the transport's own nor a cancelled receive can cut
/// into another message.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut write: W,
    mut queue: UnboundedReceiver<Vec<u8>>,
    backlog: Arc<Backlog>,
) {
    while let Some(message) = queue.recv().await {
        if write.write_all(&message).await.is_err() {
            return;
        }
        backlog.bytes.fetch_sub(message.len(), Ordering::SeqCst);
        backlog.written.notify_one();
        if queue.is_empty() && write.flush().await.is_err() {
            return;
        }
    }
}

pub(super) struct Lines<R> {
    read: BufReader<R>,
    /// rmcp has opened a lifecycle: it answered a request that opens one
    /// (`initialize`, or a stateless request of MCP 2026-07-28) with a
    /// result. Until then rmcp ends the session on a notification, so
    /// none is passed on.
    initialized: bool,
    /// The ids of the requests that would open a lifecycle, passed on and
    /// not yet answered.
    opening: Vec<Value>,
    /// The line read so far; receive is cancelled whenever another event
    /// wins rmcp's select, so a line in progress lives here, not in a local.
    line: Vec<u8>,
    /// The line went over the limit: only its first bytes are kept.
    over: bool,
    max_line_bytes: usize,
    out: UnboundedSender<Vec<u8>>,
    /// What `out` holds: no line is read while it is over its bound.
    backlog: Arc<Backlog>,
    /// The `tools/call` requests read and not yet done: a call past
    /// their bound is answered at once.
    pending: Arc<Pending>,
    /// Once it reads true, no more lines are read: the input ends.
    stop: Option<tokio::sync::watch::Receiver<bool>>,
    /// Raised as each `notifications/roots/list_changed` is read, before
    /// rmcp has it (the server's roots, `super::Roots`).
    roots_changes: Option<Arc<AtomicU64>>,
}

impl<R> Lines<R> {
    /// End the input once `stop` reads true (a drain).
    pub(super) fn stop_when(&mut self, stop: tokio::sync::watch::Receiver<bool>) {
        self.stop = Some(stop);
    }

    /// Raise `changes` as each roots change is read.
    pub(super) fn count_roots_changes(&mut self, changes: Arc<AtomicU64>) {
        self.roots_changes = Some(changes);
    }
}

impl<R: AsyncRead + Unpin> Lines<R> {
    fn queue(&self, message: &TxJsonRpcMessage<RoleServer>) -> std::io::Result<()> {
        let mut bytes = serde_json::to_vec(message)?;
        bytes.push(b'\n');
        self.send_bytes(bytes)
    }

    fn send_bytes(&self, bytes: Vec<u8>) -> std::io::Result<()> {
        self.backlog.bytes.fetch_add(bytes.len(), Ordering::SeqCst);
        self.out
            .send(bytes)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "output closed"))
    }

    /// The answer to a line that is not a message rmcp can take, if its
    /// `id` can be read.
    fn refuse(&self, line: &[u8], problem: &str) {
        let head = Head::of(line);
        let Some(id) = head.id else { return };
        let message = if head.method.as_deref() == Some("tools/call") {
            JsonRpcMessage::response(
                ServerResult::CallToolResult(result(invalid_request(problem))),
                id,
            )
        } else {
            JsonRpcMessage::error(
                ErrorData::new(RpcCode::INVALID_REQUEST, problem.to_owned(), None),
                Some(id),
            )
        };
        // Output already closed means the client is gone; nothing to tell.
        let _ = self.queue(&message);
    }
}

impl<R: AsyncRead + Send + Unpin> Transport<RoleServer> for Lines<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if !self.initialized
            && let Some(opened) = lifecycle::answered(&mut self.opening, &item)
        {
            self.initialized = opened;
        }
        ready(self.queue(&item))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // A line in progress stays in `self.line`: reading is
            // cancel-safe, as rmcp's select needs it to be anyway.
            let read = async {
                while self.backlog.over() {
                    self.backlog.written.notified().await;
                }
                read_line(
                    &mut self.read,
                    &mut self.line,
                    &mut self.over,
                    self.max_line_bytes,
                )
                .await
            };
            let read = match &mut self.stop {
                Some(stop) => tokio::select! {
                    biased;
                    _ = stop.wait_for(|s| *s) => return None,
                    read = read => read,
                },
                None => read.await,
            };
            match read {
                Ok(true) => {}
                Ok(false) => return None,
                Err(error) => {
                    eprintln!("write-tool mcp: reading stdin: {error}");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let over = std::mem::replace(&mut self.over, false);
            let text = line.strip_suffix(b"\r").unwrap_or(&line);
            if over {
                self.refuse(text, &request_too_long(self.max_line_bytes));
            } else if !text.iter().all(u8::is_ascii_whitespace) {
                let message = self.admit(text);
                self.line = reuse(line);
                if message.is_some() {
                    return message;
                }
                continue;
            }
            self.line = reuse(line);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl<R: AsyncRead + Unpin> Lines<R> {
    /// The message on `line` if rmcp is to have it; otherwise it is
    /// answered (or ignored) here.
    fn admit(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
        if line.trim_ascii_start().starts_with(b"[") {
            self.answer_null_id(
                "Invalid Request: batches are not supported (MCP removed JSON-RPC batching in \
                 2025-06-18); send one message per line.",
            );
            return None;
        }
        let value = match write_tool_wire::strict::parse_slice(line) {
            Ok(value) => value,
            Err(error) => {
                self.refuse(line, &format!("Invalid JSON arguments: {error}."));
                return None;
            }
        };
        let id = value.get("id");
        if id.is_some_and(|id| !(id.is_string() || id.is_i64() || id.is_u64() || id.is_null())) {
            self.answer_null_id("Invalid Request: 'id' must be a string or an integer.");
            return None;
        }
        let method = value.get("method").and_then(Value::as_str);
        if !self.initialized {
            let id = id.filter(|id| !id.is_null()).cloned();
            match lifecycle::before(method, id.clone(), &value) {
                // Open once rmcp answers it with a result.
                Opening::Opens => self.opening.extend(id),
                Opening::Passes => {}
                Opening::Answered(answer) => {
                    self.write_value(&answer);
                    return None;
                }
                Opening::Ignored => return None,
            }
        }
        if method == Some("notifications/roots/list_changed")
            && let Some(changes) = &self.roots_changes
        {
            changes.fetch_add(1, Ordering::SeqCst);
        }
        let call = method == Some("tools/call");
        if call && self.pending.full() {
            self.busy(line);
            return None;
        }
        match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
            Ok(mut message) => {
                if call && let JsonRpcMessage::Request(request) = &mut message {
                    let mark = self.pending.admit(line.len());
                    request.request.extensions_mut().insert(mark);
                }
                Some(message)
            }
            Err(error) => {
                self.refuse(line, &format!("Invalid JSON-RPC message: {error}."));
                None
            }
        }
    }

    /// The answer to a call past the bound of calls not yet done: not
    /// run, and said so.
    fn busy(&self, line: &[u8]) {
        let Some(id) = Head::of(line).id else { return };
        let message = format!(
            "The server has {MAX_PENDING_CALLS} calls not yet done; this one was not run and \
             nothing was written. Wait for answers before sending more."
        );
        let envelope = Envelope::refused(ErrorCode::ExecutionError, message).to_json();
        let answer = JsonRpcMessage::response(ServerResult::CallToolResult(result(envelope)), id);
        // Output already closed means the client is gone; nothing to tell.
        let _ = self.queue(&answer);
    }

    /// An Invalid Request error that can be sent to no request.
    fn answer_null_id(&self, message: &str) {
        self.write_value(&json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": RpcCode::INVALID_REQUEST.0, "message": message},
        }));
    }

    fn write_value(&self, value: &Value) {
        let mut bytes = value.to_string().into_bytes();
        bytes.push(b'\n');
        // Output already closed means the client is gone; nothing to tell.
        let _ = self.send_bytes(bytes);
    }
}

/// The buffer back, empty, unless it grew past what ordinary lines need.
fn reuse(mut line: Vec<u8>) -> Vec<u8> {
    line.clear();
    if line.capacity() > 1 << 20 {
        line = Vec::new();
    }
    line
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    /// Before a lifecycle opens, rmcp is handed only what it can take:
    /// `server/discover`, and requests that open a lifecycle (`initialize`,
    /// or one carrying MCP 2026-07-28's `_meta`); notifications are
    /// dropped until rmcp has answered one of those with a result (an
    /// error leaves the gate shut), and a request with neither is answered
    /// here. After it, everything goes through.
    #[tokio::test]
    async fn the_lifecycle_opens_when_rmcp_answers_an_opening_request() {
        use rmcp::model::{ClientRequest, ErrorData, JsonRpcMessage, ServerResult};
        use rmcp::transport::Transport;
        use tokio::io::AsyncBufReadExt;

        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let unknown = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let cancel = |id: u32| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
            )
        };
        let list = |id: u32, meta: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{meta}}}}}"#)
        };
        let input = [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{{{meta}}}}}"#),
            cancel(9),
            list(3, unknown),
            list(4, meta),
            cancel(4),
            list(5, meta),
            cancel(5),
        ]
        .join("\n")
            + "\n";
        let (client, server) = tokio::io::duplex(1 << 16);
        let (mut lines, _writer) = super::lines(input.as_bytes(), server, 1 << 20);
        let next = async |lines: &mut super::Lines<&[u8]>| {
            let message = tokio::time::timeout(std::time::Duration::from_secs(10), lines.receive())
                .await
                .expect("a message in time")
                .expect("a message");
            match message {
                JsonRpcMessage::Request(r)
                    if matches!(r.request, ClientRequest::DiscoverRequest(_)) =>
                {
                    "discover".to_owned()
                }
                JsonRpcMessage::Request(r) => format!("request {:?}", r.id),
                JsonRpcMessage::Notification(_) => "notification".to_owned(),
                _ => "other".to_owned(),
            }
        };
        assert_eq!(next(&mut lines).await, "discover");
        assert_eq!(next(&mut lines).await, "request Number(4)");
        // rmcp refused it: the gate stays shut, the notification after it
        // is dropped, and the next opening request passes.
        let refused = JsonRpcMessage::error(
            ErrorData::invalid_params("no", None),
            Some(NumberOrString::Number(4)),
        );
        lines.send(refused).await.expect("sent");
        assert_eq!(next(&mut lines).await, "request Number(5)");
        lines
            .send(JsonRpcMessage::response(
                ServerResult::empty(()),
                NumberOrString::Number(5),
            ))
            .await
            .expect("sent");
        assert_eq!(next(&mut lines).await, "notification");
        let mut answers = tokio::io::BufReader::new(client).lines();
        let mut refused = Vec::new();
        for _ in 0..2 {
            let line =
                tokio::time::timeout(std::time::Duration::from_secs(10), answers.next_line())
                    .await
                    .expect("an answer")
                    .expect("read")
                    .expect("a line");
            let answer: serde_json::Value = serde_json::from_str(&line).expect("JSON");
            assert_eq!(answer["error"]["code"], -32002, "{answer}");
            refused.push(answer["id"].clone());
        }
        assert_eq!(refused, [1, 3]);
    }

    /// A roots change is counted as its line is read, before rmcp has the
    /// message: a call read after it finds its roots stale whichever of
    /// their handlers runs first.
    #[tokio::test]
    async fn a_roots_change_is_counted_before_the_call_after_it_is_passed_on() {
        use rmcp::transport::Transport;
        use std::sync::atomic::{AtomicU64, Ordering};

        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"t","version":"1"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Write","arguments":{}}}"#,
            "\n",
        );
        let (_client, server) = tokio::io::duplex(1 << 16);
        let (mut lines, _writer) = super::lines(input.as_bytes(), server, 1 << 20);
        let changes = std::sync::Arc::new(AtomicU64::new(0));
        lines.count_roots_changes(std::sync::Arc::clone(&changes));
        async fn next(
            lines: &mut super::Lines<&[u8]>,
        ) -> super::RxJsonRpcMessage<super::RoleServer> {
            tokio::time::timeout(std::time::Duration::from_secs(10), lines.receive())
                .await
                .expect("a message in time")
                .expect("a message")
        }
        next(&mut lines).await;
        assert_eq!(changes.load(Ordering::SeqCst), 0);
        lines
            .send(rmcp::model::JsonRpcMessage::response(
                rmcp::model::ServerResult::empty(()),
                NumberOrString::Number(1),
            ))
            .await
            .expect("sent");
        let change = next(&mut lines).await;
        assert!(matches!(
            change,
            rmcp::model::JsonRpcMessage::Notification(_)
        ));
        assert_eq!(changes.load(Ordering::SeqCst), 1);
        let call = next(&mut lines).await;
        assert!(matches!(call, rmcp::model::JsonRpcMessage::Request(_)));
        assert_eq!(changes.load(Ordering::SeqCst), 1);
    }

    /// Answers a client leaves unread past the bound stop the reading of
    /// its requests; once it reads them, reading goes on.
    #[tokio::test]
    async fn a_client_that_does_not_read_stops_being_read() {
        use futures_util::FutureExt;
        use rmcp::transport::Transport;

        let input = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
"#;
        let (mut client, server) = tokio::io::duplex(4096);
        let (mut lines, _writer) = super::lines(&input[..], server, 1 << 20);
        let big = format!(
            r#"{{"status":"success","data":null,"text":"{}","stats":{{}},"context":{{}},"error":null}}"#,
            "x".repeat(super::bounds::MAX_BACKLOG_BYTES)
        );
        let answer = rmcp::model::JsonRpcMessage::response(
            rmcp::model::ServerResult::CallToolResult(super::result(big)),
            NumberOrString::Number(0),
        );
        lines.send(answer).await.expect("queued");
        assert!(
            lines.receive().now_or_never().is_none(),
            "a request read while the answers wait"
        );
        tokio::spawn(async move { tokio::io::copy(&mut client, &mut tokio::io::sink()).await });
        let request = lines
            .receive()
            .await
            .expect("the request, once the answers are read");
        assert!(matches!(request, rmcp::model::JsonRpcMessage::Request(_)));
    }

    /// A call past the bound of calls read and not yet done is answered
    /// at once, not run, and reading goes on (an answer the calls wait
    /// for may come after them); once a call is done (its request
    /// dropped, as rmcp drops it when its task ends), calls run again.
    /// Other requests do not count.
    #[tokio::test]
    async fn calls_past_the_bound_are_answered_at_once_and_reading_goes_on() {
        use rmcp::transport::Transport;
        use tokio::io::AsyncBufReadExt;

        let mut input = String::from(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        );
        input.push('\n');
        let call = |id: usize| {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"Write\",\"arguments\":{{}}}}}}\n"
            )
        };
        for id in 1..=3 {
            input.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":\"l{id}\",\"method\":\"tools/list\"}}\n"
            ));
        }
        let max = super::bounds::MAX_PENDING_CALLS;
        for id in 1..=max + 2 {
            input.push_str(&call(id));
        }
        input.push_str(r#"{"jsonrpc":"2.0","id":"r","result":{"roots":[]}}"#);
        input.push('\n');
        input.push_str(&call(max + 3));
        let (client, server) = tokio::io::duplex(1 << 20);
        let (mut lines, _writer) = super::lines(input.as_bytes(), server, 1 << 20);
        let mut held = vec![lines.receive().await.expect("initialize")];
        // rmcp's answer to it opens the lifecycle.
        let answered = rmcp::model::JsonRpcMessage::response(
            rmcp::model::ServerResult::empty(()),
            NumberOrString::Number(0),
        );
        lines.send(answered).await.expect("sent");
        for _ in 0..3 + max {
            held.push(lines.receive().await.expect("a message"));
        }
        // The two calls past the bound are answered, and the client's
        // answer after them read.
        let next = lines.receive().await.expect("the client's answer");
        assert!(
            matches!(next, rmcp::model::JsonRpcMessage::Response(_)),
            "{next:?}"
        );
        let mut answers = tokio::io::BufReader::new(client).lines();
        let first = answers.next_line().await.expect("read").expect("an answer");
        assert!(
            first.contains(r#""id":0"#),
            "initialize's answer first: {first}"
        );
        for id in [max + 1, max + 2] {
            let answer = answers.next_line().await.expect("read").expect("an answer");
            let answer: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
            assert_eq!(answer["id"], id, "{answer}");
            let envelope = &answer["result"]["structuredContent"];
            assert_eq!(envelope["error"]["code"], "EXECUTION_ERROR", "{answer}");
            assert!(
                envelope["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("not run")),
                "{answer}"
            );
        }
        held.truncate(10);
        let next = lines.receive().await.expect("a call, once others are done");
        assert!(
            matches!(next, rmcp::model::JsonRpcMessage::Request(_)),
            "{next:?}"
        );
    }
}
