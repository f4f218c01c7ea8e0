//! The MCP bundle (`modelcontextprotocol/mcpb`, manifest 0.4): the
//! `write-tool` binary and a manifest that runs it as a stdio MCP server on
//! the project directory the user picks at install.
//!
//! The zip is written here, not by `mcpb pack`, which stamps the time of
//! the build on every entry: entries in a fixed order, each dated with
//! `SOURCE_DATE_EPOCH` and given its Unix mode (the binary executable,
//! which `mcpb unpack` restores). The manifest's tool list is what the
//! server itself lists, asked over MCP.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::{fs, io};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::dist::Options;
use crate::release::{DESCRIPTION, LICENSE, Release, SOURCE, VERSION, ZIP_EPOCH};

/// Where the binary sits inside the bundle.
const ENTRY_POINT: &str = "server/write-tool";

/// Build the bundle into `out`; its file name.
pub fn build(options: &Options, release: &Release, out: &Path) -> Result<String> {
    let tools = tools(&options.binary, &options.work)?;
    let manifest = manifest(tools);
    let binary =
        fs::read(&options.binary).with_context(|| format!("read {}", options.binary.display()))?;
    let file = Release::mcpb_file();
    let mut json = serde_json::to_vec_pretty(&manifest)?;
    json.push(b'\n');
    zip(
        &out.join(&file),
        release.epoch,
        &[
            ("manifest.json", &json, 0o644),
            (ENTRY_POINT, &binary, 0o755),
        ],
    )?;
    Ok(file)
}

/// The bundle's manifest.
pub fn manifest(tools: Vec<Value>) -> Value {
    json!({
        "manifest_version": "0.4",
        "name": "write-tool",
        "display_name": "write-tool",
        "version": VERSION,
        "description": DESCRIPTION,
        "long_description": "Writes, edits (in the shapes models are trained on), patches and views files \
            in one project directory, and nowhere else: every change diffed, written atomically and \
            durably, and recorded so that it can be undone. The tools run inside a WebAssembly \
            sandbox that can reach only the directory you choose.",
        "author": {"name": "write-tool contributors", "url": SOURCE},
        "repository": {"type": "git", "url": SOURCE},
        "homepage": SOURCE,
        "license": LICENSE,
        "keywords": ["files", "edit", "patch", "sandbox", "webassembly"],
        "server": {
            "type": "binary",
            "entry_point": ENTRY_POINT,
            "mcp_config": {
                "command": format!("${{__dirname}}/{ENTRY_POINT}"),
                "args": ["--root", "${user_config.project_root}", "mcp"],
            },
        },
        "tools": tools,
        "compatibility": {"platforms": ["linux"]},
        "user_config": {
            "project_root": {
                "type": "directory",
                "title": "Project directory",
                "description": "The one directory the tools may read and change. Nothing outside it \
                    is touched.",
                "required": true,
            },
        },
    })
}

/// The tools the server lists, as the manifest names them: each one's name
/// and the first sentence of its description.
fn tools(binary: &Path, work: &Path) -> Result<Vec<Value>> {
    let root = work.join("mcpb-root");
    fs::create_dir_all(&root)?;
    let mut child = Command::new(binary)
        .arg("--root")
        .arg(&root)
        .args(["--no-journal", "mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {} mcp", binary.display()))?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "xtask", "version": VERSION}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    for request in requests {
        writeln!(stdin, "{request}")?;
    }
    stdin.flush()?;
    let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
    let mut listed = None;
    for line in stdout.lines() {
        let message: Value = serde_json::from_str(&line?)?;
        if message["id"] == 2 {
            listed = Some(message);
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    let listed = listed.context("the server ended without listing its tools")?;
    let Some(tools) = listed["result"]["tools"].as_array() else {
        bail!("the server's tools/list answer holds no tools: {listed}");
    };
    Ok(tools
        .iter()
        .map(|tool| {
            let description = tool["description"].as_str().unwrap_or_default();
            let first = description
                .split_inclusive(". ")
                .next()
                .unwrap_or(description)
                .trim();
            json!({"name": tool["name"], "description": first})
        })
        .collect())
}

/// A zip of `entries` (name, bytes, Unix mode), each dated `epoch`.
fn zip(path: &Path, epoch: u64, entries: &[(&str, &[u8], u32)]) -> Result<()> {
    use zip::write::SimpleFileOptions;
    let file = fs::File::create(path).with_context(|| format!("create {}", path.display()))?;
    let mut writer = zip::ZipWriter::new(io::BufWriter::new(file));
    let date = zip_date(epoch)?;
    for (name, bytes, mode) in entries {
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(date)
            .unix_permissions(*mode);
        writer.start_file(*name, options)?;
        writer.write_all(bytes)?;
    }
    writer.finish()?.flush()?;
    Ok(())
}

/// `epoch` as a zip entry's date, no earlier than [`ZIP_EPOCH`].
fn zip_date(epoch: u64) -> Result<zip::DateTime> {
    use chrono::{Datelike as _, Timelike as _};
    let at = i64::try_from(epoch)
        .ok()
        .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
        .unwrap_or_default();
    let at = at.max(chrono::DateTime::from_timestamp(ZIP_EPOCH as i64, 0).unwrap_or_default());
    let part = |v: u32| u8::try_from(v).unwrap_or(0);
    zip::DateTime::from_date_and_time(
        u16::try_from(at.year()).unwrap_or(1980),
        part(at.month()),
        part(at.day()),
        part(at.hour()),
        part(at.minute()),
        part(at.second()),
    )
    .map_err(|e| anyhow::anyhow!("no zip date for {epoch}: {e}"))
}
