//! `write-tool`: the Write tool from the command line.
//!
//! Stdout carries only envelopes (one JSON document per line, or pretty with
//! `--pretty`). Exit status: 0 for `success` and `partial`, 1 for an `error`
//! envelope, 2 for a usage or host failure (message on stderr, no envelope).

use std::io::{self, BufRead, Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use serde_json::{Value, json};
use write_tool::mcp::McpServer;
use write_tool::wire::Status;
use write_tool::ws::WsOptions;
use write_tool::{
    COMPONENT, CompileCache, Durability, Options, Root, WriteTool, ambient_authority,
    invalid_request,
};

/// Exit status for `success` and `partial` envelopes.
const EXIT_OK: u8 = 0;
/// Exit status for an `error` envelope.
const EXIT_ERROR_ENVELOPE: u8 = 1;
/// Exit status for a usage or host failure.
const EXIT_USAGE: u8 = 2;

/// Write files for AI agents, sandboxed in a WebAssembly component.
#[derive(Debug, Parser)]
#[command(name = "write-tool", version, about, long_about = None)]
struct Cli {
    /// Project root: the only directory the tool can touch (default: the
    /// current directory). Give it again to allow more directories (seed
    /// 004's AllowedPaths): relative paths resolve against the first, and
    /// `write_file` calls may name absolute paths inside any of them.
    #[arg(long, global = true, value_name = "DIR")]
    root: Vec<PathBuf>,

    /// Pretty-print the envelope.
    #[arg(long, global = true)]
    pretty: bool,

    /// Largest content accepted, in bytes.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = Options::default().max_content_bytes)]
    max_content_bytes: u64,

    /// Largest request `call` and `serve` read, in bytes (default: four
    /// times --max-content-bytes plus 1 MiB, room for JSON escapes). A longer
    /// request is answered with INVALID_PARAM without being buffered.
    #[arg(long, global = true, value_name = "BYTES")]
    max_request_bytes: Option<u64>,

    /// Accept empty content (creates or truncates to an empty file).
    #[arg(long, global = true)]
    allow_empty: bool,

    /// Wall-time bound on one call, in milliseconds.
    #[arg(long, global = true, value_name = "MS", default_value_t = 30_000)]
    timeout_ms: u64,

    /// Bound on the diff algorithm, in milliseconds, for the largest texts
    /// (64 MiB of old and new content); smaller ones get a share in
    /// proportion, at least 1/32 of it. Past it the diff is coarser but
    /// still correct.
    #[arg(long, global = true, value_name = "MS", default_value_t = 1_000)]
    diff_timeout_ms: u64,

    /// Cap on the component's memory, in MiB (at least 8: the component's
    /// memory starts at 8 MiB).
    #[arg(long, global = true, value_name = "MIB", default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(8..))]
    memory_limit_mib: u64,

    /// Protect paths matching this glob (repeatable): a pattern without '/'
    /// matches any name in the path ('*.pem'), one with '/' matches the path
    /// or an ancestor ('config/prod').
    #[arg(long, global = true, value_name = "GLOB")]
    protect: Vec<String>,

    /// Do not protect '.git' (protected by default, in any letter case).
    #[arg(long, global = true)]
    no_default_protect: bool,

    /// Preopen the root read-only: every write is refused with
    /// PERMISSION_DENIED; dry runs still work.
    #[arg(long, global = true)]
    read_only: bool,

    /// Which syncs a write makes: 'full' (file and directory), 'file', or
    /// 'none' (tmpfs, CI, scratch trees: atomic but not durable).
    #[arg(long, global = true, value_enum, default_value_t = Sync::Full)]
    sync: Sync,

    /// Keep compiled code in this directory (default: $WRITE_TOOL_CACHE_DIR,
    /// else $XDG_CACHE_HOME/write-tool, else ~/.cache/write-tool).
    #[arg(long, global = true, value_name = "DIR", conflicts_with = "no_cache")]
    cache_dir: Option<PathBuf>,

    /// Compile the component in this process, without the cache (also:
    /// WRITE_TOOL_CACHE=off).
    #[arg(long, global = true)]
    no_cache: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Sync {
    Full,
    File,
    None,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write one file. Content comes from --content, --content-file, or stdin.
    Write {
        /// Path relative to the root, with '/' separators.
        path: String,
        /// Compute the diff, change nothing.
        #[arg(long)]
        dry_run: bool,
        /// The content, given inline.
        #[arg(long, conflicts_with = "content_file")]
        content: Option<String>,
        /// Read the content from this file.
        #[arg(long, value_name = "FILE")]
        content_file: Option<PathBuf>,
    },
    /// Run one tool call read from stdin: the arguments object, or
    /// {"name": "Write", "arguments": {...}}.
    Call,
    /// Answer one JSON request per stdin line with one envelope per stdout
    /// line, until end of input; or, with --ws, one request per WebSocket
    /// text message.
    Serve {
        /// Serve WebSocket connections on this address instead of stdin
        /// (for example 127.0.0.1:8765; port 0 picks a free port, printed
        /// on stderr).
        #[arg(long, value_name = "ADDR")]
        ws: Option<SocketAddr>,
        /// Allow --ws on an address that is not loopback. Anyone who can
        /// reach it can write files under the roots.
        #[arg(long, requires = "ws")]
        ws_allow_remote: bool,
        /// Accept browser connections from this origin too (repeatable;
        /// loopback origins are always accepted), for example
        /// https://tool.example.com.
        #[arg(long, value_name = "ORIGIN", requires = "ws")]
        ws_origin: Vec<String>,
    },
    /// Serve the tool over the Model Context Protocol on stdin/stdout
    /// (tools `Write` and `write_file`).
    Mcp,
    /// Write the WebAssembly component this binary runs, for other hosts
    /// (wasmtime, wasmtime-py, jco).
    Component {
        /// Write it to this file instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print the tool definition (name, description, parameter schema).
    Schema,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("write-tool: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn run(cli: Cli) -> Result<u8, String> {
    let options = Options {
        max_content_bytes: cli.max_content_bytes,
        allow_empty: cli.allow_empty,
        memory_limit_bytes: usize::try_from(cli.memory_limit_mib.saturating_mul(1024 * 1024))
            .unwrap_or(usize::MAX),
        timeout: Duration::from_millis(cli.timeout_ms),
        diff_timeout: Duration::from_millis(cli.diff_timeout_ms),
        default_protect: !cli.no_default_protect,
        protect: cli.protect.clone(),
        read_only: cli.read_only,
        durability: match cli.sync {
            Sync::Full => Durability::Full,
            Sync::File => Durability::File,
            Sync::None => Durability::None,
        },
        cache: match (cli.no_cache, &cli.cache_dir) {
            (true, _) => CompileCache::Disabled,
            (false, Some(dir)) => CompileCache::Dir(dir.clone()),
            (false, None) => CompileCache::from_env(),
        },
        // `write`, `call` and `serve` make one call at a time (plus the
        // start-up check); the network servers take a few at once.
        max_concurrent_calls: match cli.command {
            Command::Mcp | Command::Serve { ws: Some(_), .. } => SERVER_CALLS,
            _ => 2,
        },
        ..Options::default()
    };
    let request_limit = usize::try_from(cli.max_request_bytes.unwrap_or_else(|| {
        options
            .max_content_bytes
            .saturating_mul(4)
            .saturating_add(1 << 20)
    }))
    .unwrap_or(usize::MAX);
    let root = match &cli.command {
        Command::Schema => None,
        Command::Component { out } => return write_component(out.as_deref()),
        _ => Some(open_root(cli.root.clone())?),
    };
    if let Command::Serve {
        ws: Some(addr),
        ws_allow_remote,
        ..
    } = &cli.command
        && !addr.ip().is_loopback()
        && !ws_allow_remote
    {
        return Err(format!(
            "--ws {addr} is not a loopback address; add --ws-allow-remote to serve it anyway"
        ));
    }
    let tool = WriteTool::new(options).map_err(|e| format!("cannot start the tool: {e}"))?;
    // Locked per command, not here: the network servers write to stdout
    // from the async runtime's threads, and a lock held by this thread
    // would block them forever.
    let mut out = io::stdout();
    match (cli.command, root) {
        (Command::Schema, _) => {
            let definition = tool
                .definition()
                .map_err(|e| format!("cannot read the tool definition: {e}"))?;
            emit(&mut out, &definition, cli.pretty)?;
            Ok(EXIT_OK)
        }
        (
            Command::Write {
                path,
                dry_run,
                content,
                content_file,
            },
            Some(root),
        ) => {
            let content = read_content(content, content_file)?;
            let arguments =
                json!({ "path": path, "content": content, "dry_run": dry_run }).to_string();
            let envelope = tool.call(&root, &arguments);
            emit(&mut out, &envelope, cli.pretty)?;
            Ok(exit_code(&envelope))
        }
        (Command::Call, Some(root)) => {
            let request = read_request(&mut io::stdin().lock(), request_limit, false)?
                .unwrap_or(Request::Complete(Vec::new()));
            let envelope = answer(&tool, &root, request);
            emit(&mut out, &envelope, cli.pretty)?;
            Ok(exit_code(&envelope))
        }
        (Command::Serve { ws: None, .. }, Some(root)) => {
            widen_stdin_pipe();
            // JSON lines: one envelope per line, so never pretty.
            serve(
                &tool,
                &root,
                // Large requests arrive in large reads (stdin's own buffer
                // is 8 KiB).
                io::BufReader::with_capacity(1 << 20, io::stdin().lock()),
                &mut out.lock(),
                request_limit,
            )?;
            Ok(EXIT_OK)
        }
        (
            Command::Serve {
                ws: Some(addr),
                ws_origin,
                ..
            },
            Some(root),
        ) => {
            let options = WsOptions {
                max_message_bytes: request_limit,
                allowed_origins: ws_origin,
            };
            runtime()?.block_on(async move {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
                let local = listener
                    .local_addr()
                    .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
                eprintln!("write-tool: serving ws://{local}");
                write_tool::ws::serve(Arc::new(tool), Arc::new(root), listener, options)
                    .await
                    .map_err(|e| format!("WebSocket server failed: {e}"))
            })?;
            Ok(EXIT_OK)
        }
        (Command::Mcp, Some(root)) => {
            widen_stdin_pipe();
            let server = McpServer::new(Arc::new(tool), Arc::new(root))
                .map_err(|e| format!("cannot start the MCP server: {e}"))?;
            runtime()?
                .block_on(server.serve_stdio(request_limit))
                .map_err(|e| format!("MCP server failed: {e}"))?;
            Ok(EXIT_OK)
        }
        (_, None) | (Command::Component { .. }, _) => Err("no root".into()),
    }
}

/// Calls the network servers (`mcp`, `serve --ws`) run at once; more wait.
const SERVER_CALLS: u32 = 8;

/// The async runtime of the network servers. Calls themselves run on its
/// blocking threads, bounded by [`SERVER_CALLS`].
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// `write-tool component`: the embedded `.wasm`, byte for byte.
fn write_component(out: Option<&std::path::Path>) -> Result<u8, String> {
    match out {
        Some(path) => std::fs::write(path, COMPONENT)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => io::stdout()
            .lock()
            .write_all(COMPONENT)
            .map_err(|e| format!("cannot write to stdout: {e}"))?,
    }
    Ok(EXIT_OK)
}

fn open_root(mut roots: Vec<PathBuf>) -> Result<Root, String> {
    if roots.is_empty() {
        roots.push(
            std::env::current_dir()
                .map_err(|e| format!("cannot read the current directory: {e}"))?,
        );
    }
    Root::open_all(&roots, ambient_authority())
        .map_err(|e| format!("a root is not a usable directory: {e}"))
}

fn read_content(content: Option<String>, file: Option<PathBuf>) -> Result<String, String> {
    let bytes = match (content, file) {
        (Some(content), _) => return Ok(content),
        (None, Some(file)) => {
            std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?
        }
        (None, None) => {
            let mut bytes = Vec::new();
            io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            bytes
        }
    };
    String::from_utf8(bytes)
        .map_err(|_| "content is not valid UTF-8; the tool writes UTF-8 text".to_owned())
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
        Request::TooLong(limit) => invalid_request(&format!(
            "Request is over the limit of {limit} bytes; it was not read."
        )),
    }
}

/// A request as read from stdin.
enum Request {
    Complete(Vec<u8>),
    /// Longer than the limit (given): skipped, not buffered.
    TooLong(usize),
}

/// Read up to and excluding the next `\n` (or end of input), keeping at most
/// `limit` bytes. `None` at end of input.
fn read_request(
    input: &mut impl BufRead,
    limit: usize,
    until_newline: bool,
) -> Result<Option<Request>, String> {
    let mut buffer = Vec::new();
    let mut too_long = false;
    let mut any = false;
    loop {
        let chunk = input
            .fill_buf()
            .map_err(|e| format!("cannot read stdin: {e}"))?;
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (take, done) = match until_newline
            .then(|| memchr::memchr(b'\n', chunk))
            .flatten()
        {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !too_long && buffer.len() + take <= limit {
            buffer.extend_from_slice(&chunk[..take]);
        } else {
            too_long = true;
            buffer = Vec::new();
        }
        input.consume(if done { take + 1 } else { take });
        if done {
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    if too_long {
        return Ok(Some(Request::TooLong(limit)));
    }
    if until_newline && buffer.last() == Some(&b'\r') {
        buffer.pop();
    }
    Ok(Some(Request::Complete(buffer)))
}

/// JSON lines: one request per line in, one envelope per line out. A bad
/// line is answered and the loop goes on; only end of input (or a broken
/// stdout) ends it.
fn serve(
    tool: &WriteTool,
    root: &Root,
    mut input: impl BufRead,
    out: &mut impl Write,
    limit: usize,
) -> Result<(), String> {
    while let Some(request) = read_request(&mut input, limit, true)? {
        let envelope = answer(tool, root, request);
        emit(out, &envelope, false)?;
    }
    Ok(())
}

/// Let large requests through a stdin pipe in fewer, larger pieces. A pipe
/// holds 64 KiB by default, so a 1 MiB request wakes this process and its
/// writer 16 times; 1 MiB is the most an unprivileged process may ask for.
/// Nothing changes when stdin is not a pipe or the system says no.
#[cfg(target_os = "linux")]
fn widen_stdin_pipe() {
    let _ = rustix::pipe::fcntl_setpipe_size(io::stdin(), 1 << 20);
}

#[cfg(not(target_os = "linux"))]
fn widen_stdin_pipe() {}

fn emit(out: &mut impl Write, json: &str, pretty: bool) -> Result<(), String> {
    let text = if pretty {
        serde_json::from_str::<Value>(json)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .unwrap_or_else(|_| json.to_owned())
    } else {
        json.to_owned()
    };
    writeln!(out, "{text}")
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))
}

fn exit_code(envelope: &str) -> u8 {
    match Status::of_json(envelope) {
        Some(Status::Success | Status::Partial) => EXIT_OK,
        _ => EXIT_ERROR_ENVELOPE,
    }
}
