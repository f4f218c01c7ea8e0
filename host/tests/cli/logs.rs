//! The per-call log (`docs/contract.md#cli`, `#log`): a line per call when
//! asked, and never a call's content, at any level.

use std::process::Command;

use serde_json::{Value, json};

use crate::{bin_str, root_arg, run_cmd};

/// The per-call log (`docs/contract.md#cli`): with `RUST_LOG` asking for
/// it, one line per call on stderr — as JSON with `--log-format json` —
/// with the surface, status, code, path, bytes and time, never the content;
/// without `RUST_LOG`, nothing.
#[test]
fn serve_logs_one_line_per_call_when_asked_and_never_the_content() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let secret = "a content that must not reach the log";
    let requests = format!(
        "{}\n{}\n",
        json!({"path": "a.txt", "content": secret}),
        json!({"path": "../out.txt", "content": secret}),
    );
    let logged = run_cmd(
        Command::new(bin_str())
            .env("RUST_LOG", "write_tool=info")
            .args(["--root", &root, "--log-format", "json", "serve"]),
        requests.as_bytes(),
    );
    assert_eq!(logged.status.code(), Some(0), "{logged:?}");
    let stderr = String::from_utf8_lossy(&logged.stderr);
    assert!(!stderr.contains(secret), "{stderr}");
    let lines: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert_eq!(lines[0]["surface"], "serve");
    assert_eq!(lines[0]["status"], "success");
    assert_eq!(lines[0]["path"], "a.txt");
    assert_eq!(lines[0]["bytes"], secret.len());
    assert!(
        lines[0]["ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{stderr}"
    );
    assert_eq!(lines[1]["status"], "error");
    assert_eq!(lines[1]["code"], "ACCESS_DENIED");
    let quiet = run_cmd(
        Command::new(bin_str())
            .env_remove("RUST_LOG")
            .args(["--root", &root, "serve"]),
        requests.as_bytes(),
    );
    assert_eq!(quiet.status.code(), Some(0), "{quiet:?}");
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}

/// `RUST_LOG=trace`, unscoped, turns on every library's log too: the MCP
/// SDK's, the WebSocket stack's, wasmtime's. None of it passes, so the
/// calls' content never reaches stderr; the tool's own line does.
#[test]
fn no_log_level_prints_a_calls_content() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = root_arg(dir.path());
    let secret = "a content that must not reach the log at any level";
    let lines = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "Write", "arguments": {"path": "a.txt", "content": secret}}}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    for surface in ["mcp", "serve"] {
        let input = if surface == "serve" {
            format!("{}\n", json!({"path": "b.txt", "content": secret}))
        } else {
            input.clone()
        };
        let out = run_cmd(
            Command::new(bin_str()).env("RUST_LOG", "trace").args([
                "--root",
                &root,
                "--no-journal",
                surface,
            ]),
            input.as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains(secret), "{surface}: {stderr}");
        assert!(
            stderr.contains("surface"),
            "{surface}: the tool's own line is gone: {stderr}"
        );
    }
}
