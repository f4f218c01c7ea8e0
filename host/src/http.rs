//! Plain HTTP requests on the WebSocket port (`serve --ws`), besides the
//! probes: MCP over Streamable HTTP at `/mcp` (`docs/contract.md#mcp-http`),
//! the sandbox file API under `/v1/` (`docs/contract.md#files-api`),
//! `/quiesce` and `/resume` (`docs/contract.md#quiesce`), and, where the
//! port is an OAuth resource server, its metadata under
//! `/.well-known/oauth-protected-resource` (`docs/contract.md#oauth`).
//!
//! A connection whose first request line names one of those paths is
//! served by hyper, request after request, under the port's rules: it
//! takes one of the connection slots, a `Host` that names neither an
//! address, `localhost` nor an allowed origin's host is refused (403, as
//! `/metrics` refuses it: a page that made its own name resolve to this
//! address), and so is a browser `Origin` the WebSocket handshake would
//! refuse. Where the operator gave a token (`crate::auth`), a request
//! without it is 401 with the bearer challenge, and its connection is
//! closed after the answer. A request's body is bounded by the port's
//! message size (413 past it) and by the transfer time (408,
//! `transfer`). At a drain, the request in flight is answered and the
//! connection then closed.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, HOST, ORIGIN, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use crate::calls::Calls;
use crate::files::{Body, Files, error};
use crate::mcp::McpServer;
use crate::transfer::{self, Deadline};
use crate::{Root, WriteTool, probes};

/// What the port serves over plain HTTP.
pub(crate) struct Http {
    mcp: StreamableHttpService<McpServer, NeverSessionManager>,
    files: Files,
    tool: Arc<WriteTool>,
    root: Arc<Root>,
    allowed_origins: Vec<String>,
    /// The tokens requests must carry (`crate::auth`).
    tokens: crate::auth::Tokens,
    /// Cancelled at a drain: rmcp's streams end.
    stop: CancellationToken,
    /// How long a request's body may take to arrive, and an answer's
    /// write may wait for the client to read (`transfer`).
    transfer: Duration,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http").finish_non_exhaustive()
    }
}

/// Whether a connection's first request is one for [`Http`]: its request
/// line names `/mcp` or a path under `/v1/`. Peeked, not read: anything
/// else reaches the WebSocket handshake whole.
pub(crate) async fn wants(stream: &TcpStream) -> bool {
    let mut buf = [0u8; 512];
    let Ok(n) = stream.peek(&mut buf).await else {
        return false;
    };
    let line = buf[..n].split(|&b| b == b'\r').next().unwrap_or_default();
    let mut parts = line.split(|&b| b == b' ');
    let (Some(_method), Some(target)) = (parts.next(), parts.next()) else {
        return false;
    };
    let path = target.split(|&b| b == b'?').next().unwrap_or_default();
    path == b"/mcp"
        || path.starts_with(b"/v1/")
        || path == b"/quiesce"
        || path == b"/resume"
        || path.starts_with(crate::auth::oauth::WELL_KNOWN.as_bytes())
}

impl Http {
    /// The MCP server and the file API over `root`, for a port whose
    /// messages are at most `max_body` bytes and whose browsers may come
    /// from `allowed_origins` (besides loopback).
    /// Its calls take `calls`' slots: one bound for the whole port.
    pub(crate) fn new(
        calls: &Calls,
        root: &Arc<Root>,
        max_body: usize,
        allowed_origins: Vec<String>,
        tokens: crate::auth::Tokens,
        transfer: Duration,
    ) -> wasmtime::Result<Http> {
        let stop = CancellationToken::new();
        let mcp =
            McpServer::on_calls(calls, Arc::clone(root))?.streamable_http(max_body, stop.clone());
        Ok(Http {
            mcp,
            files: Files::new(calls.for_surface("files"), Arc::clone(root), max_body),
            tool: calls.shared_tool(),
            root: Arc::clone(root),
            allowed_origins,
            tokens,
            stop,
            transfer,
        })
    }

    /// End rmcp's streams: the server drains.
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }

    /// Serve `stream` until the client closes it, stays silent for `idle`
    /// between requests, or the server drains (`draining` turns true):
    /// then the request in flight is answered and the connection closed.
    pub(crate) async fn serve(
        self: &Arc<Self>,
        stream: TcpStream,
        mut draining: tokio::sync::watch::Receiver<bool>,
        idle: Duration,
    ) {
        let this = Arc::clone(self);
        let service = hyper::service::service_fn(move |request| {
            let this = Arc::clone(&this);
            async move { Ok::<_, Infallible>(this.answer(request).await) }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(idle);
        let stream = transfer::Stalls::new(stream, self.transfer);
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        tokio::pin!(connection);
        let drained = async {
            if draining.wait_for(|d| *d).await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            _ = connection.as_mut() => {}
            () = drained => {
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
            }
        }
    }

    async fn answer(&self, request: Request<Incoming>) -> Response<Body> {
        let (mut response, trusted) = self.answer_checked(request).await;
        // A caller that showed no credential the port takes is answered,
        // then let go: kept alive, its connection would hold one of the
        // port's slots for as long as it cares to send a request now and
        // then, token or not.
        if !trusted && self.tokens.any() {
            response.headers_mut().insert(
                hyper::header::CONNECTION,
                hyper::header::HeaderValue::from_static("close"),
            );
        }
        response
    }

    /// The answer, and whether the caller was let through the port's
    /// checks.
    async fn answer_checked(&self, request: Request<Incoming>) -> (Response<Body>, bool) {
        let mut request = request.map(|body| Deadline::new(body, self.transfer));
        let host = request.headers().get(HOST).and_then(|h| h.to_str().ok());
        if !host.is_some_and(|host| probes::host_allowed(host, &self.allowed_origins)) {
            let refused = error(
                StatusCode::FORBIDDEN,
                "ACCESS_DENIED",
                "This host name is not allowed: use an address or localhost, or start the \
                 server with --ws-origin naming it.",
            );
            return (refused, false);
        }
        if let Some(origin) = request.headers().get(ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            if !probes::origin_allowed(origin, &self.allowed_origins) {
                let refused = error(
                    StatusCode::FORBIDDEN,
                    "ACCESS_DENIED",
                    &format!(
                        "Origin {origin} is not allowed; start the server with --ws-origin \
                         {origin} to allow it."
                    ),
                );
                return (refused, false);
            }
        }
        let path = request.uri().path().to_owned();
        let path = path.as_str();
        let scope = if crate::quiesce::serves(path) {
            crate::auth::Scope::Quiesce
        } else {
            crate::auth::Scope::Calls
        };
        // Open to all, as RFC 9728 has it: it tells a client where to get
        // a token.
        if let Some(oauth) = self.tokens.oauth.as_ref().filter(|o| o.serves(path)) {
            return (crate::files::json(StatusCode::OK, oauth.metadata()), false);
        }
        let given = request.headers().get(AUTHORIZATION).map(|h| h.as_bytes());
        let pass = match self.tokens.check(scope, given) {
            Ok(pass) => pass,
            Err(refused) => return (self.refused(&refused), false),
        };
        // Whom the call is for, which the port shares its slots by: the
        // file API reads it here, rmcp hands it to the tool's handler in
        // the request's parts.
        request.extensions_mut().insert(pass.caller);
        let answer = if path == "/mcp" {
            if request
                .headers()
                .get_all(MCP_PROTOCOL_VERSION)
                .iter()
                .nth(1)
                .is_some()
            {
                return (twice_versioned(), true);
            }
            let fired = request.body().fired();
            let answer = self.mcp.handle(request).await;
            // rmcp answers a body that failed 500; this one came too slowly.
            if fired.load(std::sync::atomic::Ordering::SeqCst) {
                late_body()
            } else {
                answer
            }
        } else if crate::quiesce::serves(path) {
            crate::quiesce::answer(request.method(), path, &self.tool, &self.root).await
        } else {
            self.files.answer(request).await
        };
        (answer, true)
    }

    /// The answer to a request whose credential the port does not take.
    fn refused(&self, refused: &crate::auth::Refused) -> Response<Body> {
        let (status, challenge) = self.tokens.challenge(refused);
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::UNAUTHORIZED);
        let code = if status == StatusCode::FORBIDDEN {
            "ACCESS_DENIED"
        } else {
            "UNAUTHORIZED"
        };
        let mut refused = error(status, code, crate::auth::REFUSED);
        if let Ok(challenge) = hyper::header::HeaderValue::from_str(&challenge) {
            refused.headers_mut().insert(WWW_AUTHENTICATE, challenge);
        }
        refused
    }
}

/// The header that names a request's MCP revision.
const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// The answer to an MCP request that names its revision twice: rmcp reads
/// the first, and would check the 2026-07-28 headers (SEP-2243) or not by
/// it, while a proxy may read the other; neither is guessed at.
fn twice_versioned() -> Response<Body> {
    refused_call(
        StatusCode::BAD_REQUEST,
        -32020,
        "MCP-Protocol-Version was sent more than once; nothing was called.",
    )
}

/// The answer to an MCP request whose body did not arrive within the
/// transfer time: 408, with a JSON-RPC error, and nothing called.
fn late_body() -> Response<Body> {
    refused_call(
        StatusCode::REQUEST_TIMEOUT,
        -32600,
        "The request's body did not arrive in time (--ws-write-timeout-ms); nothing was called.",
    )
}

/// An MCP request refused before it is read: `status`, and a JSON-RPC
/// error with `code` and `message` for no id.
fn refused_call(status: StatusCode, code: i64, message: &str) -> Response<Body> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    crate::files::json(status, body.to_string())
}
