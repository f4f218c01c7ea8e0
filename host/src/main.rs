//! `write-tool`: the Write tool from the command line.
//!
//! Stdout carries only envelopes (one JSON document per line, or pretty with
//! `--pretty`). Exit status: 0 for `success` and `partial`, 1 for an `error`
//! envelope, 2 for a usage or host failure (message on stderr, no envelope).

use std::io::{self, BufRead, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use serde_json::{Value, json};
use write_tool::{Options, Root, Status, WriteTool, status_of};

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
    /// current directory).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,

    /// Pretty-print the envelope.
    #[arg(long, global = true)]
    pretty: bool,

    /// Largest content accepted, in bytes.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = Options::default().max_content_bytes)]
    max_content_bytes: u64,

    /// Accept empty content (creates or truncates to an empty file).
    #[arg(long, global = true)]
    allow_empty: bool,

    /// Wall-time bound on one call, in milliseconds.
    #[arg(long, global = true, value_name = "MS", default_value_t = 30_000)]
    timeout_ms: u64,

    /// Cap on the component's memory, in MiB.
    #[arg(long, global = true, value_name = "MIB", default_value_t = 1024)]
    memory_limit_mib: usize,

    #[command(subcommand)]
    command: Command,
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
    /// line, until end of input.
    Serve,
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
        memory_limit_bytes: cli.memory_limit_mib.saturating_mul(1024 * 1024),
        timeout: Duration::from_millis(cli.timeout_ms),
        ..Options::default()
    };
    let root = match &cli.command {
        Command::Schema => None,
        _ => Some(open_root(cli.root.clone())?),
    };
    let tool =
        WriteTool::new(options).map_err(|e| format!("cannot load the tool component: {e}"))?;
    let mut out = io::stdout().lock();
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
            let mut input = Vec::new();
            io::stdin()
                .read_to_end(&mut input)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            let envelope = answer(&tool, &root, input);
            emit(&mut out, &envelope, cli.pretty)?;
            Ok(exit_code(&envelope))
        }
        (Command::Serve, Some(root)) => {
            // JSON lines: one envelope per line, so never pretty.
            serve(&tool, &root, io::stdin().lock(), &mut out)?;
            Ok(EXIT_OK)
        }
        (_, None) => Err("no root".into()),
    }
}

fn open_root(root: Option<PathBuf>) -> Result<Root, String> {
    let path = match root {
        Some(path) => path,
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    Root::open(&path).map_err(|e| format!("root {} is not a usable directory: {e}", path.display()))
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
/// (it takes strings), so the host answers it.
fn answer(tool: &WriteTool, root: &Root, input: Vec<u8>) -> String {
    match String::from_utf8(input) {
        Ok(text) => tool.call(root, &text),
        Err(_) => invalid_utf8_envelope(),
    }
}

fn invalid_utf8_envelope() -> String {
    let message = "Invalid JSON arguments: input is not valid UTF-8.";
    json!({
        "status": "error",
        "data": null,
        "text": message,
        "stats": { "time_ms": 0 },
        "context": { "cwd": ".", "params_input": {}, "path_resolved": null },
        "error": { "code": "INVALID_PARAM", "message": message },
    })
    .to_string()
}

/// JSON lines: one request per line in, one envelope per line out. A bad
/// line is answered and the loop goes on; only end of input (or a broken
/// stdout) ends it.
fn serve(
    tool: &WriteTool,
    root: &Root,
    mut input: impl BufRead,
    out: &mut impl Write,
) -> Result<(), String> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = input
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("cannot read stdin: {e}"))?;
        if read == 0 {
            return Ok(());
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        let envelope = answer(tool, root, std::mem::take(&mut line));
        emit(out, &envelope, false)?;
    }
}

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
    match status_of(envelope) {
        Some(Status::Success | Status::Partial) => EXIT_OK,
        _ => EXIT_ERROR_ENVELOPE,
    }
}
