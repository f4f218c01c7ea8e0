//! One function per command. Each gets what it needs already built (the
//! tool, the roots, the limits) and answers with an exit status.

use std::io::{self, BufRead, IsTerminal, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, bail};
use serde_json::json;
use write_tool::mcp::{McpServer, RootsError};
use write_tool::ws::WsOptions;
use write_tool::{COMPONENT, Root, WriteTool, invalid_request, request_too_long};

use super::input::{self, Request};
use super::output::{
    EXIT_OK, emit, exit_code, for_a_person, printable, safe_json, with_flag_hints,
};

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
    let started = std::time::Instant::now();
    let envelope = tool.call_as_person(root, &arguments);
    write_tool::log::call("write", &envelope, started);
    let envelope = for_a_person(envelope);
    emit(&mut io::stdout(), &envelope, pretty)?;
    Ok(exit_code(&envelope))
}

/// `write-tool edit PATH`: one edit from the flags, or the JSON array of
/// edits on stdin.
pub(crate) fn edit(
    tool: &WriteTool,
    root: &Root,
    path: &str,
    single: Option<(String, String, bool)>,
    dry_run: bool,
    limit: usize,
    pretty: bool,
) -> anyhow::Result<u8> {
    let started = std::time::Instant::now();
    let edit = |edits: serde_json::Value| {
        let arguments = json!({"file_path": path, "edits": edits, "dry_run": dry_run});
        tool.call_as_person(
            root,
            &json!({"name": "Edit", "arguments": arguments}).to_string(),
        )
    };
    let envelope = match single {
        Some((old, new, replace_all)) => edit(json!([
            {"old_string": old, "new_string": new, "replace_all": replace_all}
        ])),
        None => from_stdin(
            limit,
            "edit --edits-json read nothing on stdin: give a JSON array of edits.",
            |bytes| match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(edits @ serde_json::Value::Array(_)) => Ok(edit(edits)),
                _ => Err("edit --edits-json reads a JSON array of edits on stdin: \
                          [{\"old_string\": …, \"new_string\": …}, …]."),
            },
        )?,
    };
    logged(&envelope, "edit", started, pretty)
}

/// Log the call, print its envelope and say the exit code.
fn logged(
    envelope: &str,
    surface: &'static str,
    started: std::time::Instant,
    pretty: bool,
) -> anyhow::Result<u8> {
    write_tool::log::call(surface, envelope, started);
    let envelope = for_a_person(envelope.to_owned());
    emit(&mut io::stdout(), &envelope, pretty)?;
    Ok(exit_code(&envelope))
}

/// `write-tool patch`: the patch on stdin.
pub(crate) fn patch(
    tool: &WriteTool,
    root: &Root,
    dry_run: bool,
    limit: usize,
    pretty: bool,
) -> anyhow::Result<u8> {
    let started = std::time::Instant::now();
    let envelope = from_stdin(
        limit,
        "patch read nothing on stdin: give the patch ('*** Begin Patch' … '*** End Patch').",
        |bytes| match String::from_utf8(bytes) {
            Ok(patch) => {
                let arguments = json!({"input": patch, "dry_run": dry_run});
                let request = json!({"name": "apply_patch", "arguments": arguments});
                Ok(tool.call_as_person(root, &request.to_string()))
            }
            Err(_) => Err("patch reads the patch as UTF-8 text on stdin."),
        },
    )?;
    logged(&envelope, "patch", started, pretty)
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
    let envelope = with_flag_hints(answer(tool, root, request, "call"));
    emit(&mut io::stdout(), &envelope, pretty)?;
    Ok(exit_code(&envelope))
}

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
    while let Some(request) = input::request(&mut input, limit, true)? {
        if matches!(&request, Request::Complete(line) if line.trim_ascii().is_empty()) {
            continue;
        }
        let _call = busy
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        emit(out, &answer(tool, root, request, "serve"), false)?;
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
fn answer(tool: &WriteTool, root: &Root, request: Request, surface: &'static str) -> String {
    let started = std::time::Instant::now();
    let answer = match request {
        Request::Complete(input) => match String::from_utf8(input) {
            Ok(text) => tool.call(root, &text),
            Err(_) => invalid_request("Invalid JSON arguments: input is not valid UTF-8."),
        },
        Request::TooLong(limit) => invalid_request(&request_too_long(limit)),
    };
    write_tool::log::call(surface, &answer, started);
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

/// `write-tool write-many`: a JSON array of write arguments on stdin,
/// written all or none.
pub(crate) fn write_many(
    tool: &WriteTool,
    root: &Root,
    dry_run: bool,
    limit: usize,
    pretty: bool,
) -> anyhow::Result<u8> {
    let envelope = from_stdin(
        limit,
        "write-many read nothing on stdin: give a JSON array of writes.",
        |bytes| match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Ok(writes @ serde_json::Value::Array(_)) => Ok(tool.call_as_person(
                root,
                &json!({ "writes": writes, "dry_run": dry_run }).to_string(),
            )),
            _ => Err(
                "write-many reads a JSON array of write arguments on stdin: \
                      [{\"path\": …, \"content\": …}, …].",
            ),
        },
    )?;
    let envelope = for_a_person(envelope);
    emit(&mut io::stdout(), &envelope, pretty)?;
    Ok(exit_code(&envelope))
}

/// The envelope of a request made from all of stdin by `make`, which says
/// why the bytes are no such request when they are not; `empty` is the
/// message when stdin held nothing.
fn from_stdin(
    limit: usize,
    empty: &str,
    make: impl FnOnce(Vec<u8>) -> Result<String, &'static str>,
) -> anyhow::Result<String> {
    Ok(
        match input::request(&mut io::stdin().lock(), limit, false)? {
            Some(Request::Complete(bytes)) => make(bytes).unwrap_or_else(invalid_request),
            Some(Request::TooLong(limit)) => invalid_request(&request_too_long(limit)),
            None => invalid_request(empty),
        },
    )
}

/// `write-tool undo [ID | --to NAME]`.
pub(crate) fn undo(
    tool: &WriteTool,
    root: &Root,
    id: Option<String>,
    to: Option<String>,
    force: bool,
    dry_run: bool,
    pretty: bool,
) -> anyhow::Result<u8> {
    let mut arguments =
        json!({ "name": "revert", "arguments": { "dry_run": dry_run, "force": force } });
    if let Some(id) = id {
        arguments["arguments"]["change_id"] = json!(id);
    }
    if let Some(to) = to {
        arguments["arguments"]["to"] = json!(to);
    }
    let envelope = for_a_person(tool.call_as_host(root, &arguments.to_string()));
    emit(&mut io::stdout(), &envelope, pretty)?;
    Ok(exit_code(&envelope))
}

/// `write-tool checkpoint NAME`.
pub(crate) fn checkpoint(
    tool: &WriteTool,
    root: &Root,
    name: &str,
    pretty: bool,
) -> anyhow::Result<u8> {
    let arguments = json!({ "name": "checkpoint", "arguments": { "checkpoint": name } });
    let envelope = tool.call_as_host(root, &arguments.to_string());
    emit(&mut io::stdout(), &envelope, pretty)?;
    Ok(exit_code(&envelope))
}

/// A host request on the journal: its JSON answer, or the error envelope's
/// message as the error.
fn journal_request(
    tool: &WriteTool,
    root: &Root,
    arguments: serde_json::Value,
) -> anyhow::Result<serde_json::Value> {
    let envelope = tool.call_as_host(root, &arguments.to_string());
    let envelope: serde_json::Value =
        serde_json::from_str(&envelope).context("the tool's answer is not JSON")?;
    let text = envelope["text"].as_str().unwrap_or_default();
    if envelope["status"] != "success" {
        bail!("{text}");
    }
    serde_json::from_str(text).context("the journal's answer is not JSON")
}

/// `write-tool history [PATH] [--json]`.
pub(crate) fn history(
    tool: &WriteTool,
    root: &Root,
    path: Option<String>,
    as_json: bool,
) -> anyhow::Result<u8> {
    let answer = journal_request(tool, root, json!({ "journal": "history", "path": path }))?;
    let mut out = io::stdout().lock();
    if as_json {
        writeln!(out, "{}", safe_json(&answer["history"].to_string()))?;
        return Ok(EXIT_OK);
    }
    for record in answer["history"].as_array().into_iter().flatten() {
        let id = record["id"].as_str().unwrap_or("?");
        let when = record["time_ms"]
            .as_i64()
            .map_or_else(String::new, format_time);
        let kind = record["kind"].as_str().unwrap_or("?");
        let what = match kind {
            "checkpoint" => format!("'{}'", printable(record["name"].as_str().unwrap_or(""))),
            _ => record["files"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| {
                    format!(
                        "{} ({})",
                        printable(f["path"].as_str().unwrap_or("?")),
                        f["op"].as_str().unwrap_or("?")
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
        };
        let undoes = match (&record["reverts"], &record["to"]) {
            (serde_json::Value::String(id), _) => format!(" [undoes {}]", printable(id)),
            (_, serde_json::Value::String(name)) => {
                format!(" [back to '{}']", printable(name))
            }
            _ => String::new(),
        };
        let state = if record["voided"] == true {
            " [did not happen]"
        } else if record["undone"] == true {
            " [undone]"
        } else {
            ""
        };
        let by = if record["by"] == "model" {
            " (model)"
        } else {
            ""
        };
        let id = printable(id);
        writeln!(out, "{id:>6}  {when}  {kind:<10} {what}{undoes}{state}{by}")?;
    }
    Ok(EXIT_OK)
}

/// A time in ms since the epoch as `YYYY-MM-DD HH:MM:SS` UTC.
fn format_time(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `write-tool journal verify|gc`: the answer as JSON; `verify` exits 1
/// when the chain is broken.
pub(crate) fn journal(
    tool: &WriteTool,
    root: &Root,
    action: super::flags::JournalAction,
) -> anyhow::Result<u8> {
    let (request, key) = match action {
        super::flags::JournalAction::Verify => ("verify", "verify"),
        super::flags::JournalAction::Gc => ("gc", "gc"),
    };
    let answer = journal_request(tool, root, json!({ "journal": request }))?;
    writeln!(
        io::stdout().lock(),
        "{}",
        safe_json(&answer[key].to_string())
    )?;
    Ok(if key == "verify" && answer[key]["ok"] != true {
        super::output::EXIT_ERROR_ENVELOPE
    } else {
        EXIT_OK
    })
}
