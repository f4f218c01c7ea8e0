//! The commands that serve: JSON lines on stdio, WebSocket, MCP; and
//! the drain on SIGTERM they share.

use std::io::{self, BufRead, Write};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use write_tool::mcp::{McpServer, RootsError};
use write_tool::ws::WsOptions;
use write_tool::{Root, Session, WriteTool, invalid_request, request_too_long};

use super::input::{self, Request};
use super::output::{EXIT_OK, emit};

/// `write-tool serve`: JSON lines on stdin and stdout.
pub(crate) fn serve(tool: &WriteTool, root: &Root, limit: usize) -> anyhow::Result<u8> {
    input::widen_stdin_pipe();
    let busy = Arc::new(Mutex::new(()));
    drain_on_sigterm(Arc::clone(&busy), tool.options().timeout)?;
    // Large requests arrive in large reads (stdin's own buffer is 8 KiB).
    let input = io::BufReader::with_capacity(1 << 20, io::stdin().lock());
    serve_lines(tool, root, input, &mut io::stdout().lock(), limit, &busy)?;
    Ok(EXIT_OK)
}

/// JSON lines: one request per line in, one envelope per line out (never
/// pretty). A blank line is skipped; a bad line is answered and the loop
/// goes on; only end of input (or a broken stdin or stdout) ends it.
/// `busy` is held from a request's start to its answer's last byte.
fn serve_lines(
    tool: &WriteTool,
    root: &Root,
    mut input: impl BufRead,
    out: &mut impl Write,
    limit: usize,
    busy: &Mutex<()>,
) -> anyhow::Result<()> {
    // The stream is one session (`docs/contract.md#session`).
    let session = Session::new();
    let served = serve_session(tool, root, &mut input, out, limit, busy, &session);
    session.end(root);
    served
}

/// [`serve_lines`], its calls part of `session`.
fn serve_session(
    tool: &WriteTool,
    root: &Root,
    input: &mut impl BufRead,
    out: &mut impl Write,
    limit: usize,
    busy: &Mutex<()>,
    session: &Session,
) -> anyhow::Result<()> {
    while let Some(request) = input::request(input, limit, true)? {
        if matches!(&request, Request::Complete(line) if line.trim_ascii().is_empty()) {
            continue;
        }
        let _call = busy
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        emit(
            out,
            &answer(tool, root, request, "serve", Some(session)),
            false,
        )?;
    }
    Ok(())
}

/// On SIGTERM, `serve` drains (`docs/contract.md#drain`): the call in
/// flight, if any, finishes and is answered (its `busy` hold ends with its
/// answer's last byte), no other starts, and the process exits 0 — within
/// the call's time bound and [`write_tool::DRAIN_WRITE_GRACE`] more, even
/// when the client does not read its answer.
fn drain_on_sigterm(busy: Arc<Mutex<()>>, call_bound: std::time::Duration) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the signal handler")?;
    // Installed before the first request is read, so no SIGTERM finds the
    // default action (an exit mid-call).
    let mut term = {
        let _entered = runtime.enter();
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("cannot handle SIGTERM")?
    };
    std::thread::spawn(move || {
        runtime.block_on(term.recv());
        let (done, drained) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _drained = busy
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let _ = done.send(());
        });
        if drained
            .recv_timeout(call_bound + write_tool::DRAIN_WRITE_GRACE)
            .is_err()
        {
            eprintln!("write-tool: the client did not read its last answer; exiting");
        }
        std::process::exit(i32::from(EXIT_OK));
    });
    Ok(())
}

/// A future that completes when the process gets SIGTERM (never, if it
/// cannot be handled). The handler is installed now, inside `runtime`,
/// not when the future is first polled: a SIGTERM that came before that
/// would find the default action and kill the process mid-call.
fn sigterm(runtime: &tokio::runtime::Runtime) -> impl Future<Output = ()> + Send + 'static {
    let term = {
        let _entered = runtime.enter();
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok()
    };
    async move {
        match term {
            Some(mut term) => {
                term.recv().await;
            }
            None => std::future::pending().await,
        }
    }
}

/// One request's envelope. Input that is not UTF-8 cannot reach the guest
/// (it takes strings), so the host answers it; so is a request over the
/// size limit, which is never buffered whole.
pub(crate) fn answer(
    tool: &WriteTool,
    root: &Root,
    request: Request,
    surface: &'static str,
    session: Option<&Session>,
) -> String {
    let started = std::time::Instant::now();
    match request {
        Request::Complete(input) => match String::from_utf8(input) {
            Ok(text) => {
                let answer = match session {
                    Some(session) => tool.call_in(root, &text, session, None),
                    None => tool.call(root, &text),
                };
                write_tool::log::call(surface, Some(&text), &answer, started);
                answer
            }
            Err(_) => logged(
                surface,
                invalid_request("Invalid JSON arguments: input is not valid UTF-8."),
                started,
            ),
        },
        Request::TooLong(limit) => {
            logged(surface, invalid_request(&request_too_long(limit)), started)
        }
    }
}

/// A host's own answer, logged.
fn logged(surface: &'static str, answer: String, started: std::time::Instant) -> String {
    write_tool::log::call(surface, None, &answer, started);
    answer
}

/// `write-tool serve --ws ADDR`: the same requests over WebSocket, on the
/// addresses `addr` resolved to.
pub(crate) fn serve_ws(
    tool: WriteTool,
    root: Root,
    addr: (String, Vec<SocketAddr>),
    options: WsOptions,
    probe_listen: Option<String>,
) -> anyhow::Result<u8> {
    let (name, addrs) = addr;
    let runtime = runtime()?;
    let shutdown = sigterm(&runtime);
    let root = Arc::new(root);
    runtime.block_on(async move {
        // The first of the resolved addresses that can be bound.
        let listener = tokio::net::TcpListener::bind(&addrs[..])
            .await
            .with_context(|| format!("cannot listen on {name}"))?;
        let local = listener
            .local_addr()
            .with_context(|| format!("cannot listen on {name}"))?;
        eprintln!("write-tool: serving ws://{local}");
        if let Some(probes) = probe_listen {
            let probe_listener = tokio::net::TcpListener::bind(&probes)
                .await
                .with_context(|| format!("cannot listen on {probes} for probes"))?;
            let at = probe_listener
                .local_addr()
                .with_context(|| format!("cannot listen on {probes}"))?;
            eprintln!("write-tool: probes on http://{at}");
            tokio::spawn(write_tool::probes::serve(probe_listener, Arc::clone(&root)));
        }
        write_tool::ws::serve_until(Arc::new(tool), root, listener, options, shutdown)
            .await
            .context("WebSocket server failed")
    })?;
    Ok(EXIT_OK)
}

/// The roots `mcp` runs on.
pub(crate) enum McpRoots {
    /// `--root`, opened.
    Given(Root),
    /// `--root`, not usable: every call says why.
    Broken(RootsError),
    /// No `--root`: the client's roots, else this one (or why there is
    /// none).
    FollowClient(Result<Root, RootsError>),
}

/// `write-tool mcp`: the Model Context Protocol on stdin and stdout.
pub(crate) fn mcp(tool: WriteTool, roots: McpRoots, limit: usize) -> anyhow::Result<u8> {
    input::widen_stdin_pipe();
    let tool = Arc::new(tool);
    let server = match roots {
        McpRoots::Given(root) => McpServer::new(tool, Arc::new(root)),
        McpRoots::Broken(error) => McpServer::without_root(tool, error),
        McpRoots::FollowClient(own) => McpServer::following_client(tool, own.map(Arc::new)),
    }
    .map_err(anyhow::Error::from)
    .context("cannot start the MCP server")?;
    let runtime = runtime()?;
    let shutdown = sigterm(&runtime);
    let served = runtime.block_on(server.serve_stdio_until(limit, shutdown));
    // After a drain stdin is still open, and tokio reads it on a blocking
    // thread that only its next line would end: not waited for.
    runtime.shutdown_background();
    served.context("MCP server failed")?;
    Ok(EXIT_OK)
}

/// The async runtime of the network servers. Calls themselves run on its
/// blocking threads, as many at once as the tool has instance slots.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
