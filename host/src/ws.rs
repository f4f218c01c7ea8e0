//! JSON requests over WebSocket (`write-tool serve --ws ADDR`), for browser
//! front ends.
//!
//! One request per text message (the arguments object or a tool call, as
//! for `serve`), one envelope per reply, in order, per connection. A
//! malformed request is answered with an `INVALID_PARAM` envelope and the
//! connection stays open; a binary message is answered the same way. A
//! message over the size limit closes the connection with code 1009
//! ("message too big"), the WebSocket way, without being buffered.
//!
//! At most [`WsOptions::max_connections`] connections are served at once
//! ([`MAX_CONNECTIONS`] by default). So that no
//! client can hold those slots for good:
//!
//! - a connection takes a slot only once its handshake is done; at most
//!   [`MAX_HANDSHAKES`] wait for theirs, and when more arrive the one that
//!   waited longest is dropped, so sockets that never speak cannot keep
//!   clients that do from connecting; one that has not finished within
//!   [`WsOptions::handshake_timeout`] is dropped anyway;
//! - a served connection that sends nothing for
//!   [`WsOptions::idle_timeout`] between requests is closed (code 1001,
//!   "going away"), and one that does not read its answer within
//!   [`WsOptions::write_timeout`] is dropped (it would hold its slot and,
//!   at a drain, the server);
//! - a drain ends within the call time bound and
//!   [`crate::DRAIN_WRITE_GRACE`] more, whatever the clients do.
//!
//! A call in flight is never cut short by any of these. A failed accept
//! (out of descriptors, say) is retried after a pause that doubles up to a
//! second, not at once in a loop.
//!
//! A web page can open a WebSocket to any address, including loopback:
//! browsers do not apply the same-origin policy to WebSockets. So the
//! handshake is refused (403) when it carries an `Origin` header that is
//! neither a loopback origin (`http://localhost:5173`, `http://127.0.0.1`,
//! `http://[::1]:8080`) nor one the host allowed by name. Clients that are
//! not browsers send no `Origin` and are accepted.
//!
//! Health probes share the port: a plain HTTP `GET /healthz` or
//! `GET /readyz` (no `Upgrade` header) is answered `200 ok` and the
//! connection closed. The server is live once it answers, and ready as
//! soon as it listens: the root was opened and the component compiled
//! before the port was bound. A probe's head must arrive in its first
//! segment, as probes send it (kubelet, curl); anything else goes to the
//! WebSocket handshake, which refuses what is not one. With metrics on
//! (`--metrics`, `crate::metrics`), `GET /metrics` is answered the same way
//! with the Prometheus text.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use write_tool_wire::{Envelope, ErrorCode};

use crate::calls::Calls;
use crate::http::Http;
use crate::probes;
use crate::{Root, Session, WriteTool, invalid_request};

/// Limits and the origin policy of a WebSocket server.
#[derive(Debug, Clone)]
pub struct WsOptions {
    /// Largest request message, in bytes.
    pub max_message_bytes: usize,
    /// Origins accepted besides loopback ones, exactly as browsers send
    /// them (`https://tool.example.com`).
    pub allowed_origins: Vec<String>,
    /// How long a connection may take to finish its handshake (default
    /// 10 s): a socket that sends nothing must not hold a slot.
    pub handshake_timeout: Duration,
    /// How long a connection may send nothing between requests (default
    /// 5 minutes).
    pub idle_timeout: Duration,
    /// How long a connection may leave an answer unread (default 30 s).
    pub write_timeout: Duration,
    /// Connections served at once (default [`MAX_CONNECTIONS`]). Each may
    /// hold a request of up to `max_message_bytes` (twice, as read and as
    /// passed on), so this and that bound what the host itself holds.
    pub max_connections: usize,
    /// The tokens the port asks for (`crate::auth`); none by default.
    pub tokens: crate::auth::Tokens,
}

impl Default for WsOptions {
    fn default() -> Self {
        WsOptions {
            max_message_bytes: 4 << 20,
            allowed_origins: Vec::new(),
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            write_timeout: Duration::from_secs(30),
            max_connections: MAX_CONNECTIONS,
            tokens: crate::auth::Tokens::default(),
        }
    }
}

/// Accept connections on `listener` until the process ends.
pub async fn serve(
    tool: Arc<WriteTool>,
    root: Arc<Root>,
    listener: TcpListener,
    options: WsOptions,
) -> std::io::Result<()> {
    serve_until(tool, root, listener, options, std::future::pending()).await
}

/// Accept connections on `listener` until `shutdown` completes, then drain
/// (`docs/contract.md#drain`): accept no more, let every call in flight
/// finish and be answered, close each connection with 1001 ("going away")
/// before it starts another, and return once all are closed.
pub async fn serve_until(
    tool: Arc<WriteTool>,
    root: Arc<Root>,
    listener: TcpListener,
    options: WsOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let (drain, draining) = tokio::sync::watch::channel(false);
    let call_bound = tool.options().timeout;
    let slots = options.max_connections.max(1);
    // A journal sealed by a quiesce is checked before any call is taken
    // (connections wait in the listener's backlog meanwhile).
    let said = tokio::task::spawn_blocking({
        let (tool, root) = (Arc::clone(&tool), Arc::clone(&root));
        move || crate::quiesce::check_on_start(&tool, &root)
    })
    .await;
    if let Ok(Some(line)) = said {
        eprintln!("write-tool: {line}");
    }
    let calls = Calls::for_port(tool, &options.tokens);
    let http = Http::new(
        &calls,
        &root,
        options.max_message_bytes,
        options.allowed_origins.clone(),
        options.tokens.clone(),
        options.write_timeout,
    )
    .map_err(std::io::Error::other)?;
    let shared = Arc::new(Shared {
        http: Arc::new(http),
        calls,
        root,
        options,
        draining,
        slots: Arc::new(Semaphore::new(slots)),
        waiting: std::sync::Mutex::new(std::collections::VecDeque::new()),
    });
    let mut pause = ACCEPT_PAUSE_MIN;
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                pause = ACCEPT_PAUSE_MIN;
                let shared = Arc::clone(&shared);
                connections.spawn(async move { shared.connection(stream).await });
            }
            // The peer went away, or the process is out of descriptors for
            // a while: retrying at once would spin.
            Err(_) => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(ACCEPT_PAUSE_MAX);
            }
        }
    }
    drop(listener);
    let _ = drain.send(true);
    shared.http.stop();
    // Each call in flight ends within its time bound; a connection waiting
    // for its handshake or a message closes at once; one that does not
    // read its last answer is cut after the grace.
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(call_bound + crate::DRAIN_WRITE_GRACE, drained)
        .await
        .is_err()
    {
        connections.abort_all();
    }
    Ok(())
}

/// Connections served at once. Each holds at most one call in flight, and
/// calls share the tool's instance pool, so more would only queue there.
pub const MAX_CONNECTIONS: usize = 64;
/// Connections waiting for their handshake at once; the one that waited
/// longest is dropped for a new one.
pub const MAX_HANDSHAKES: usize = 64;

const ACCEPT_PAUSE_MIN: Duration = Duration::from_millis(10);
const ACCEPT_PAUSE_MAX: Duration = Duration::from_secs(1);

struct Shared {
    /// `/mcp` and the file API (`crate::http`).
    http: Arc<Http>,
    calls: Calls,
    root: Arc<Root>,
    options: WsOptions,
    /// Set when the server drains.
    draining: tokio::sync::watch::Receiver<bool>,
    /// The served connections' slots.
    slots: Arc<Semaphore>,
    /// The connections waiting for their handshake, oldest first: each
    /// one's signal to give up.
    waiting: std::sync::Mutex<std::collections::VecDeque<Arc<Notify>>>,
}

/// A connection past its first bytes.
enum Opened {
    /// Boxed: the stream and its buffers are ten times the size of a
    /// socket. With when its credential ends (an OAuth access token's
    /// expiry), if it does, and whom it speaks for.
    WebSocket(
        Box<tokio_tungstenite::WebSocketStream<TcpStream>>,
        crate::auth::Pass,
    ),
    /// Plain HTTP for `crate::http`, nothing of it read yet.
    Http(TcpStream),
}

/// A connection's place among those waiting for their handshake; leaving
/// it (done, failed, dropped) frees it.
struct Waiting<'s> {
    shared: &'s Shared,
    evicted: Arc<Notify>,
}

impl<'s> Waiting<'s> {
    /// Wait with the others, dropping the oldest if there are too many.
    fn join(shared: &'s Shared) -> Waiting<'s> {
        let evicted = Arc::new(Notify::new());
        let mut waiting = shared
            .waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while waiting.len() >= MAX_HANDSHAKES {
            if let Some(oldest) = waiting.pop_front() {
                oldest.notify_one();
            }
        }
        waiting.push_back(Arc::clone(&evicted));
        Waiting { shared, evicted }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut waiting = self
            .shared
            .waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        waiting.retain(|w| !Arc::ptr_eq(w, &self.evicted));
    }
}

impl Shared {
    async fn connection(self: Arc<Self>, stream: TcpStream) {
        if *self.draining.borrow() {
            return;
        }
        let waiting = Waiting::join(&self);
        let evicted = Arc::clone(&waiting.evicted);
        let handshake =
            tokio::time::timeout(self.options.handshake_timeout, self.handshake(stream));
        let opened = tokio::select! {
            opened = handshake => opened.ok().flatten(),
            () = evicted.notified() => None,
        };
        drop(waiting);
        let (ws, pass) = match opened {
            Some(Opened::WebSocket(ws, pass)) => (*ws, pass),
            Some(Opened::Http(stream)) => return self.http_connection(stream).await,
            None => return,
        };
        // A slot, or the connection is told to come back (1013).
        let slot = tokio::time::timeout(
            self.options.handshake_timeout,
            Arc::clone(&self.slots).acquire_owned(),
        )
        .await;
        match slot {
            Ok(Ok(slot)) => {
                self.serve(ws, pass).await;
                drop(slot);
            }
            _ => {
                let mut ws = ws;
                let frame = CloseFrame {
                    code: CloseCode::Again,
                    reason: "too many connections".into(),
                };
                let _ = self.bounded(ws.close(Some(frame))).await;
            }
        }
    }

    /// A plain HTTP connection (`crate::http`), served while it holds a
    /// slot; told to come back (503) when none is free.
    async fn http_connection(&self, mut stream: TcpStream) {
        let slot = tokio::time::timeout(
            self.options.handshake_timeout,
            Arc::clone(&self.slots).acquire_owned(),
        )
        .await;
        if let Ok(Ok(slot)) = slot {
            let idle = self.options.idle_timeout;
            self.http.serve(stream, self.draining.clone(), idle).await;
            drop(slot);
        } else {
            use tokio::io::AsyncWriteExt;
            let busy = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\
                         Content-Length: 0\r\nConnection: close\r\n\r\n";
            let _ = self.bounded(stream.write_all(busy)).await;
        }
    }

    /// A health probe answered (`None`), a plain HTTP request for
    /// `crate::http`, or the WebSocket handshake done.
    async fn handshake(&self, mut stream: TcpStream) -> Option<Opened> {
        if let Some((head, what)) = probes::probe(&stream, &self.options.allowed_origins).await {
            probes::answer(&mut stream, head, what, &self.root).await;
            return None;
        }
        if crate::http::wants(&stream).await {
            return Some(Opened::Http(stream));
        }
        let limit = self.options.max_message_bytes;
        let config = WebSocketConfig::default()
            .max_message_size(Some(limit))
            .max_frame_size(Some(limit));
        let allowed = self.options.allowed_origins.clone();
        let tokens = self.options.tokens.clone();
        let pass = Arc::new(std::sync::Mutex::new(crate::auth::Pass::default()));
        let granted = Arc::clone(&pass);
        #[allow(clippy::result_large_err, reason = "tungstenite's callback signature")]
        let check = move |request: &Request, response: Response| {
            check_origin(request, &allowed)?;
            let passed = check_token(request, &tokens)?;
            *granted
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = passed;
            Ok(response)
        };
        let ws = tokio_tungstenite::accept_hdr_async_with_config(stream, check, Some(config))
            .await
            .ok()?;
        let pass = std::mem::take(
            &mut *pass
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        Some(Opened::WebSocket(Box::new(ws), pass))
    }

    /// `write`, a write to the client, bounded by the write timeout and,
    /// once the server drains, by the grace from then on — a write that
    /// began before the drain too: a client that does not read would
    /// otherwise hold the drain for the whole write timeout.
    async fn bounded<T>(&self, write: impl Future<Output = T>) -> Option<T> {
        let mut draining = self.draining.clone();
        let grace = async {
            if draining.wait_for(|d| *d).await.is_err() {
                // No drain can come any more.
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(crate::DRAIN_WRITE_GRACE).await;
        };
        tokio::select! {
            done = tokio::time::timeout(self.options.write_timeout, write) => done.ok(),
            () = grace => None,
        }
    }

    /// Requests and answers until the client goes, or idles, or the
    /// server drains.
    async fn serve(
        &self,
        mut ws: tokio_tungstenite::WebSocketStream<TcpStream>,
        pass: crate::auth::Pass,
    ) {
        let mut draining = self.draining.clone();
        // A session lasts as long as the credential it opened with: an
        // access token's, until it expires (a call in flight then ends).
        let expired = async {
            match pass.until {
                Some(until) => {
                    let left = until
                        .duration_since(std::time::SystemTime::now())
                        .unwrap_or_default();
                    tokio::time::sleep(left).await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::pin!(expired);
        // One session per connection, its record gone when it closes.
        let session = Arc::new(Session::ending_with(Arc::clone(&self.root)));
        // Only a request restarts the idle time: pings and pongs (which
        // client libraries send on their own, every 20 s for Python's
        // `websockets`) do not keep a connection's slot.
        let mut idle_until = tokio::time::Instant::now() + self.options.idle_timeout;
        loop {
            let next = tokio::time::timeout_at(idle_until, ws.next());
            // A request not yet read when the server drains is never
            // started: the connection closes instead.
            let next = tokio::select! {
                biased;
                _ = draining.wait_for(|d| *d) => Err("shutting down"),
                () = &mut expired => Err("the access token expired"),
                next = next => next.map_err(|_| "idle"),
            };
            let message = match next {
                Ok(Some(message)) => message,
                Ok(None) => break,
                Err(reason) => {
                    let frame = CloseFrame {
                        code: CloseCode::Away,
                        reason: reason.into(),
                    };
                    let sent = self.bounded(ws.send(Message::Close(Some(frame)))).await;
                    if matches!(sent, Some(Ok(()))) {
                        // Read on (and drop: never started) what the client
                        // sent meanwhile, up to its own close: a socket
                        // closed with unread bytes is reset, and a reset
                        // can lose the close frame on its way.
                        let closing = async {
                            while let Some(Ok(message)) = ws.next().await {
                                if message.is_close() {
                                    break;
                                }
                            }
                        };
                        let _ = tokio::time::timeout(self.options.handshake_timeout, closing).await;
                    }
                    return;
                }
            };
            let reply = match message {
                // The message's bytes go to the call as they are, not copied.
                Ok(Message::Text(text)) => self
                    .calls
                    .call(
                        Arc::clone(&self.root),
                        text,
                        None,
                        Some(Arc::clone(&session)),
                        &pass.caller,
                    )
                    .await
                    .unwrap_or_else(|message| {
                        Envelope::refused(ErrorCode::ExecutionError, message.to_string()).to_json()
                    }),
                Ok(Message::Binary(_)) => {
                    invalid_request("Invalid JSON arguments: send each request as a text message.")
                }
                Err(tokio_tungstenite::tungstenite::Error::Capacity(_)) => {
                    let frame = CloseFrame {
                        code: CloseCode::Size,
                        reason: "message too big".into(),
                    };
                    let _ = self.bounded(ws.close(Some(frame))).await;
                    return;
                }
                Ok(Message::Close(_)) | Err(_) => break,
                Ok(_) => continue,
            };
            idle_until = tokio::time::Instant::now() + self.options.idle_timeout;
            // A client that does not read its answer loses the connection.
            let sent = self.bounded(ws.send(Message::text(reply)));
            if !matches!(sent.await, Some(Ok(()))) {
                return;
            }
        }
        // Completes the closing handshake if the client started it.
        let _ = self.bounded(ws.close(None)).await;
    }
}

mod checks;
use checks::{check_origin, check_token};
