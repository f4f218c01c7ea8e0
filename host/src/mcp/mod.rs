//! The tool as a Model Context Protocol server (`write-tool mcp`), on the
//! official Rust SDK, `rmcp`.
//!
//! It lists tools that run the same component: `Write` (the input schema
//! from the component's `definition()`) and `write_file` (`path` and
//! `content`, absolute paths inside an allowed root accepted;
//! `docs/contract.md#several-roots`), the edits `Edit`, `edit_file` and
//! `apply_patch` (their schemas from `definition()`'s `tools`), and the
//! journal's (`tools` below). A `tools/call` is answered with the
//! envelope once in each form a client reads: its JSON as
//! `structuredContent`, the envelope written for a model as the text
//! content (`tools::result`), and `isError` set for error envelopes. A call the
//! tool cannot even start (an unknown tool name) is a JSON-RPC error;
//! everything else, bad arguments included, is an envelope, as it is on
//! every other surface.
//!
//! **Roots.** Started with roots of its own (`--root`), the server keeps
//! them. Started to follow the client ([`McpServer::following_client`]), it
//! takes the client's roots, the MCP way: when the client offers the roots
//! capability, its `roots/list` (file URIs) are the allowed roots, the
//! first the project root; they are asked for when a call first needs them,
//! and again as soon as `notifications/roots/list_changed` comes. A client
//! that offers no roots capability gets the server's fallback root, its
//! working directory, and is told so once initialized (a log notification).
//!
//! **A root that cannot be used** does not stop the server: desktop
//! clients show a server that exited as "disconnected", with nothing to go
//! on. The server starts, says what is wrong in a log notification once the
//! client is initialized (and on stderr), and answers every call with an
//! `EXECUTION_ERROR` envelope that says it: a `--root` that is not a
//! directory ([`McpServer::without_root`]), roots the client could not list
//! or that are not directories, or no root at all (no `--root`, no client
//! roots, and a working directory that is the file system's root, as
//! desktop clients start servers).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult,
    ErrorCode as RpcErrorCode, Implementation, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Mutex;
use write_tool_wire::{Envelope, ErrorCode, request};

mod lifecycle;
mod log;
mod progress;
mod roots;
mod stdio;
mod tools;

use crate::calls::Calls;
use crate::{Cancel, Root, Session, WriteTool};
pub use roots::RootsError;
use roots::client_roots;
pub(crate) use tools::for_model;

/// The tools this server lists, and the component's definition they come
/// from: for hosts that hand them to a model another way
/// (`crate::providers`).
pub(crate) fn listed(tool: &WriteTool) -> wasmtime::Result<(Vec<Tool>, Value)> {
    let definition: Value = serde_json::from_str(&tool.definition()?)?;
    let tools = tools::tools(&definition, tool.options().model_revert)?;
    Ok((tools, definition))
}

/// The MCP server: the tool, its roots, and the tool list built once.
#[derive(Debug)]
pub struct McpServer {
    calls: Arc<Calls>,
    roots: Arc<Roots>,
    tools: Arc<[Tool]>,
    /// The connection's session (`docs/contract.md#session`): one client.
    session: Arc<Session>,
}

/// Where the server's roots come from.
#[derive(Debug)]
enum Roots {
    /// Given when the server started.
    Fixed(Arc<Root>),
    /// Given when the server started, and not usable.
    Broken(RootsError),
    /// The client's, when it offers them; `own` otherwise.
    Client {
        own: Result<Arc<Root>, RootsError>,
        /// The client's roots as last listed, or why they cannot be used;
        /// `None` until a call needs them.
        listed: Mutex<Option<Listed>>,
        /// How many `notifications/roots/list_changed` the transport has
        /// read. rmcp runs each message's handler on a task of its own, so
        /// a call read after the notification may start before the
        /// notification's handler: the count, raised as the line is read,
        /// is what tells the call its roots are stale.
        changes: Arc<AtomicU64>,
    },
}

/// The client's roots as listed once `changes` had counted `at`.
#[derive(Debug)]
struct Listed {
    at: u64,
    roots: Result<Arc<Root>, RootsError>,
}

impl McpServer {
    /// Build the server on `root`. Reads the `Write` schema from the
    /// component.
    pub fn new(tool: Arc<WriteTool>, root: Arc<Root>) -> wasmtime::Result<McpServer> {
        McpServer::with_roots(tool, Roots::Fixed(root))
    }

    /// Build the server to follow the client's roots (see the module
    /// documentation), with `own` for a client that offers none (or why
    /// there is none).
    pub fn following_client(
        tool: Arc<WriteTool>,
        own: Result<Arc<Root>, RootsError>,
    ) -> wasmtime::Result<McpServer> {
        McpServer::with_roots(
            tool,
            Roots::Client {
                own,
                listed: Mutex::new(None),
                changes: Arc::default(),
            },
        )
    }

    /// Build the server for roots that could not be opened: it lists its
    /// tools and answers every call with `error`'s message.
    pub fn without_root(tool: Arc<WriteTool>, error: RootsError) -> wasmtime::Result<McpServer> {
        McpServer::with_roots(tool, Roots::Broken(error))
    }

    /// Build the server on `root`, its calls taking `calls`' slots (a port
    /// that serves other surfaces too).
    pub(crate) fn on_calls(calls: &Calls, root: Arc<Root>) -> wasmtime::Result<McpServer> {
        let (tools, _) = listed(calls.tool())?;
        Ok(McpServer {
            calls: Arc::new(calls.for_surface("mcp")),
            session: Arc::new(Session::new()),
            roots: Arc::new(Roots::Fixed(root)),
            tools: tools.into(),
        })
    }

    fn with_roots(tool: Arc<WriteTool>, roots: Roots) -> wasmtime::Result<McpServer> {
        let (tools, _) = listed(&tool)?;
        Ok(McpServer {
            calls: Arc::new(Calls::new(tool, "mcp")),
            session: Arc::new(Session::new()),
            roots: Arc::new(roots),
            tools: tools.into(),
        })
    }

    /// The server for one stateless request (`http`): the same tool, roots
    /// and tools, and a session of its own that ends with the request —
    /// MCP 2026-07-28 keeps no state between requests.
    fn for_request(&self) -> McpServer {
        McpServer {
            calls: Arc::clone(&self.calls),
            roots: Arc::clone(&self.roots),
            tools: Arc::clone(&self.tools),
            session: Arc::new(Session::new()),
        }
    }

    /// The roots a call runs under, or why it cannot run.
    #[allow(deprecated, reason = "the roots capability; see `client_roots`")]
    async fn root(&self, peer: &Peer<RoleServer>) -> Result<Arc<Root>, RootsError> {
        let (own, listed, changes) = match &*self.roots {
            Roots::Fixed(root) => return Ok(Arc::clone(root)),
            Roots::Broken(error) => return Err(error.clone()),
            Roots::Client {
                own,
                listed,
                changes,
            } => (own, listed, changes),
        };
        let mut listed = listed.lock().await;
        // Read before the listing: a change said while it is asked for
        // makes the next call ask again.
        let at = changes.load(Ordering::SeqCst);
        if let Some(known) = listed.as_ref().filter(|known| known.at == at) {
            return known.roots.clone();
        }
        let offers = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        let roots = if offers {
            client_roots(peer, self.calls.tool().options()).await
        } else {
            own.clone()
        };
        *listed = Some(Listed {
            at,
            roots: roots.clone(),
        });
        roots
    }

    /// What the stdio transport raises on each roots change it reads
    /// (see `Roots::Client`'s `changes`).
    fn roots_changes(&self) -> Option<Arc<AtomicU64>> {
        match &*self.roots {
            Roots::Client { changes, .. } => Some(Arc::clone(changes)),
            Roots::Fixed(_) | Roots::Broken(_) => None,
        }
    }

    /// Serve MCP over stdin/stdout until the client closes stdin.
    /// `max_message_bytes` bounds one incoming JSON-RPC message; a longer
    /// one is answered without being buffered (`stdio`).
    pub async fn serve_stdio(self, max_message_bytes: usize) -> anyhow::Result<()> {
        self.serve_stdio_until(max_message_bytes, std::future::pending())
            .await
    }

    /// [`serve_stdio`](Self::serve_stdio) until `shutdown` completes, then
    /// drain (`docs/contract.md#drain`): the calls in flight finish and are
    /// answered, no other starts, and stdin is read no further.
    pub async fn serve_stdio_until(
        self,
        max_message_bytes: usize,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let (mut transport, writer) =
            stdio::lines(tokio::io::stdin(), tokio::io::stdout(), max_message_bytes);
        if let Some(changes) = self.roots_changes() {
            transport.count_roots_changes(changes);
        }
        let (stop, stopped) = tokio::sync::watch::channel(false);
        transport.stop_when(stopped.clone());
        let calls = Arc::clone(&self.calls);
        tokio::spawn(async move {
            shutdown.await;
            calls.quiesce().await;
            let _ = stop.send(true);
        });
        let draining = stopped.clone();
        let served = async {
            let service = match self.serve(transport).await {
                Ok(service) => service,
                // A drain before the client's `initialize` was read ends
                // the input the handshake waited for: nothing was in
                // flight, and the drain is done.
                Err(_) if *draining.borrow() => return Ok(()),
                Err(e) => return Err(e.into()),
            };
            service.waiting().await?;
            // The transport is gone with the service; what it queued is
            // written.
            writer.await?;
            anyhow::Ok(())
        };
        // Once drained, answers a client does not read hold the process no
        // longer than the grace.
        let mut stopped = stopped;
        let grace = async move {
            let _ = stopped.wait_for(|s| *s).await;
            tokio::time::sleep(crate::DRAIN_WRITE_GRACE).await;
        };
        tokio::select! {
            served = served => served,
            () = grace => {
                eprintln!("write-tool: the client did not read its answers; exiting");
                Ok(())
            }
        }
    }

    /// This server over MCP's Streamable HTTP, stateless
    /// (`docs/contract.md#mcp-http`): every POST is served by a server of
    /// its own ([`for_request`](Self::for_request)) and answered as JSON,
    /// or as an event stream when progress comes before the answer. The
    /// port's own checks (`Host`, `Origin`) run before it, so rmcp's are
    /// off; `max_body` bounds a request, `stop` ends the streams at a
    /// drain.
    pub(crate) fn streamable_http(
        self,
        max_body: usize,
        stop: tokio_util::sync::CancellationToken,
    ) -> StreamableHttpService<McpServer, NeverSessionManager> {
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .disable_allowed_hosts()
            .disable_allowed_origins()
            .with_max_request_body_bytes(max_body)
            .with_cancellation_token(stop);
        StreamableHttpService::new(
            move || Ok(self.for_request()),
            Arc::new(NeverSessionManager::default()),
            config,
        )
    }

    /// The tools this server lists.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    async fn run(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> Result<String, ErrorData> {
        let peer = &context.peer;
        let arguments = Value::Object(arguments.unwrap_or_default());
        let root = match self.root(peer).await {
            Ok(root) => root,
            Err(error) => {
                return Ok(Envelope::error(
                    ErrorCode::ExecutionError,
                    error.to_string(),
                    0,
                    write_tool_wire::echo::arguments(match arguments {
                        Value::Object(map) => map,
                        _ => serde_json::Map::new(),
                    }),
                    None,
                )
                .to_json());
            }
        };
        // Said before the call starts, stopped before it is answered.
        let progress = match context.meta.get_progress_token() {
            Some(token) => {
                Some(progress::Progress::start(peer.clone(), token, name, &arguments).await)
            }
            None => None,
        };
        let input = json!({ "name": name, "arguments": arguments }).to_string();
        // rmcp cancels the request's token on `notifications/cancelled`
        // (and drops the answer); the flag carries that to the commit
        // point (`docs/contract.md#cancellation`).
        let cancel = Cancel::new();
        let watch = tokio::spawn({
            let (token, cancel) = (context.ct.clone(), cancel.clone());
            async move {
                token.cancelled().await;
                cancel.cancel();
            }
        });
        // The session's record goes with it, from the root it last used.
        self.session.ends_in(Arc::clone(&root));
        let session = Arc::clone(&self.session);
        let caller = crate::auth::Caller::of_mcp(&context.extensions);
        let answer = self
            .calls
            .call(root, input, Some(cancel), Some(session), &caller)
            .await;
        watch.abort();
        drop(progress);
        answer.map_err(|err| ErrorData::internal_error(err.to_string(), None))
    }
}

impl ServerHandler for McpServer {
    #[allow(deprecated, reason = "MCP logging; see `log`")]
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("write-tool", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Write files inside the project root. `Write` takes a root-relative path and \
                 the complete content and returns a JSON envelope with a unified diff preview; \
                 use dry_run to preview. `write_file` is the same tool for callers that name \
                 files by absolute path inside an allowed directory, or relative to the \
                 project root. To change part of an existing file, use `Edit` (old_string, \
                 new_string; several at once with `edits`) or `edit_file`; for several files \
                 at once, `apply_patch`. To look at a file or directory first, `view` (read \
                 only): its data.view.base, passed as base, makes the next write change only \
                 the version seen.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method: String = request.method.chars().take(64).collect();
        Err(ErrorData::new(
            RpcErrorCode::METHOD_NOT_FOUND,
            format!(
                "Unknown method '{method}'. This server answers server/discover, initialize, ping, \
                 tools/list and tools/call."
            ),
            None,
        ))
    }

    /// Log messages are few and all worth showing: any level is accepted
    /// and none filters them.
    #[allow(deprecated, reason = "MCP logging; see `log`")]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let offers = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        let (level, message) = match &*self.roots {
            Roots::Broken(error) => (log::Level::Error, error.to_string()),
            Roots::Client {
                own: Err(error), ..
            } if !offers => (log::Level::Error, error.to_string()),
            Roots::Client { own: Ok(own), .. } if !offers => (
                log::Level::Warning,
                format!(
                    "No --root was given and the client offers no roots: files are written \
                     under the server's working directory, {}.",
                    own.path().display()
                ),
            ),
            _ => return,
        };
        log::notify(&context.peer, level, message).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        // Asked again at once, whether or not a call got there first: the
        // stdio transport has counted the change already, another
        // transport may not have.
        if let Roots::Client {
            listed, changes, ..
        } = &*self.roots
        {
            let mut listed = listed.lock().await;
            let at = changes.load(Ordering::SeqCst);
            let roots = client_roots(&context.peer, self.calls.tool().options()).await;
            *listed = Some(Listed { at, roots });
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        // Anthropic's text editor is answered though not listed: a model's
        // schema for it is built in, and a client that forwards its
        // `tool_use` blocks calls it by name (`docs/contract.md#text-editor`).
        let editor = [request::TEXT_EDITOR, request::TEXT_EDITOR_UNDO].contains(&name);
        if !editor && !self.tools.iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "Unknown tool '{name}'. This server has {}.",
                    self.tools
                        .iter()
                        .map(|t| format!("'{}'", t.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            ));
        }
        let envelope = self.run(name, request.arguments, &context).await?;
        Ok(tools::result(envelope).into())
    }
}
