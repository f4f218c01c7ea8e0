//! One function per command. Each gets what it needs already built (the
//! tool, the roots, the limits) and answers with an exit status.

use std::io::{self, BufRead, IsTerminal, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use serde_json::json;
use write_tool::mcp::{McpServer, RootsError};
use write_tool::ws::WsOptions;
use write_tool::{COMPONENT, Root, WriteTool, invalid_request, request_too_long};

use super::input::{self, Request};
use super::output::{EXIT_OK, emit, exit_code, with_flag_hints};

/// `write-tool schema`: the tool definition.
pub(crate) fn schema(tool: &WriteTool, pretty: bool) -> anyhow::Result<u8> {
    let definition = tool
        .definition()
        .map_err(anyhow::Error::from)
        .context("cannot read the tool definition")?;
    emit(&mut io::stdout(), &definition, pretty)?;
    Ok(EXIT_OK)
}

/// The parameters `write-tool write` takes as flags.
pub(crate) struct WriteHow {
    pub(crate) dry_run: bool,
    pub(crate) create_only: bool,
    pub(crate) keep_format: bool,
}

/// `write-tool write PATH`: one file, content from a flag, a file or stdin.
pub(crate) fn write(
    tool: &WriteTool,
    root: &Root,
    path: &str,
    how: WriteHow,
    content: Option<String>,
    content_file: Option<PathBuf>,
    pretty: bool,
) -> anyhow::Result<u8> {
    let content = input::content(content, content_file)?;
    let mut arguments = json!({ "path": path, "content": content, "dry_run": how.dry_run });
    // Only flags that were given: the echo then shows what was asked.
    if how.create_only {
        arguments["create_only"] = json!(true);
    }
    if !how.keep_format {
        arguments["keep_format"] = json!(false);
    }
    let arguments = arguments.to_string();
    let envelope = with_flag_hints(tool.call(root, &arguments));
    emit(&mut io::stdout(), &envelope, pretty)?;
    Ok(exit_code(&envelope))
}

/// `write-tool call`: one request, all of stdin.
pub(crate) fn call(
    tool: &WriteTool,
    root: &Root,
    limit: usize,
    pretty: bool,
) -> anyhow::Result<u8> {
    let request = input::request(&mut io::stdin().lock(), limit, false)?
        .unwrap_or(Request::Complete(Vec::new()));
    let envelope = with_flag_hints(answer(tool, root, request));
    emit(&mut io::stdout(), &envelope, pretty)?;
    Ok(exit_code(&envelope))
}

/// `write-tool serve`: JSON lines on stdin and stdout.
pub(crate) fn serve(tool: &WriteTool, root: &Root, limit: usize) -> anyhow::Result<u8> {
    input::widen_stdin_pipe();
    // Large requests arrive in large reads (stdin's own buffer is 8 KiB).
    let input = io::BufReader::with_capacity(1 << 20, io::stdin().lock());
    serve_lines(tool, root, input, &mut io::stdout().lock(), limit)?;
    Ok(EXIT_OK)
}

/// JSON lines: one request per line in, one envelope per line out (never
/// pretty). A blank line is skipped; a bad line is answered and the loop
/// goes on; only end of input (or a broken stdin or stdout) ends it.
fn serve_lines(
    tool: &WriteTool,
    root: &Root,
    mut input: impl BufRead,
    out: &mut impl Write,
    limit: usize,
) -> anyhow::Result<()> {
    while let Some(request) = input::request(&mut input, limit, true)? {
        if matches!(&request, Request::Complete(line) if line.trim_ascii().is_empty()) {
            continue;
        }
        emit(out, &answer(tool, root, request), false)?;
    }
    Ok(())
}

/// One request's envelope. Input that is not UTF-8 cannot reach the guest
/// (it takes strings), so the host answers it; so is a request over the
/// size limit, which is never buffered whole.
fn answer(tool: &WriteTool, root: &Root, request: Request) -> String {
    match request {
        Request::Complete(input) => match String::from_utf8(input) {
            Ok(text) => tool.call(root, &text),
            Err(_) => invalid_request("Invalid JSON arguments: input is not valid UTF-8."),
        },
        Request::TooLong(limit) => invalid_request(&request_too_long(limit)),
    }
}

/// `write-tool serve --ws ADDR`: the same requests over WebSocket, on the
/// addresses `addr` resolved to.
pub(crate) fn serve_ws(
    tool: WriteTool,
    root: Root,
    addr: (String, Vec<SocketAddr>),
    options: WsOptions,
) -> anyhow::Result<u8> {
    let (name, addrs) = addr;
    runtime()?.block_on(async move {
        // The first of the resolved addresses that can be bound.
        let listener = tokio::net::TcpListener::bind(&addrs[..])
            .await
            .with_context(|| format!("cannot listen on {name}"))?;
        let local = listener
            .local_addr()
            .with_context(|| format!("cannot listen on {name}"))?;
        eprintln!("write-tool: serving ws://{local}");
        write_tool::ws::serve(Arc::new(tool), Arc::new(root), listener, options)
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
    runtime()?
        .block_on(server.serve_stdio(limit))
        .context("MCP server failed")?;
    Ok(EXIT_OK)
}

/// The async runtime of the network servers. Calls themselves run on its
/// blocking threads, as many at once as the tool has instance slots.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// `write-tool component`: the embedded `.wasm`, byte for byte.
/// `-o -` means stdout, as it does for most tools that write a file.
pub(crate) fn component(out: Option<&Path>) -> anyhow::Result<u8> {
    match out.filter(|path| *path != Path::new("-")) {
        Some(path) => std::fs::write(path, COMPONENT)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None if io::stdout().is_terminal() => {
            bail!("the component is binary; give -o FILE, or redirect stdout to a file");
        }
        None => io::stdout()
            .lock()
            .write_all(COMPONENT)
            .context("cannot write to stdout")?,
    }
    Ok(EXIT_OK)
}
