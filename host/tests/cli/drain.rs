//! A drain on SIGTERM whatever the client does (`docs/contract.md#drain`):
//! `serve` and `mcp` exit within the call's time bound and a few seconds
//! more even when their own client never reads stdout.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::{bin_str, root_arg};

/// A request whose answer carries a preview of about 10 KiB.
fn big_dry_run(i: usize) -> String {
    let content: String = (0..100)
        .map(|n| format!("line {n} of request {i}, long enough to fill\n"))
        .collect();
    serde_json::json!({"path": format!("f{i}.txt"), "content": content, "dry_run": true})
        .to_string()
}

/// Start `args` with a stdout nobody reads, feed it `lines` until its
/// stdin takes no more (or all are sent), SIGTERM it, and give its exit
/// code if it exits within `bound`.
fn unread(args: &[&str], lines: impl Iterator<Item = String>, bound: Duration) -> Option<i32> {
    let mut child = Command::new(bin_str())
        .env("WRITE_TOOL_CACHE_DIR", crate::cache_dir())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    // Fed from a thread: once the server blocks on its stdout, it stops
    // reading, and the write blocks here too.
    let lines: Vec<String> = lines.collect();
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&sent);
    std::thread::spawn(move || {
        for line in lines {
            if writeln!(stdin, "{line}").is_err() {
                break;
            }
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        // Kept open: a server at end of input would stop on its own.
        std::thread::park();
    });
    // Nobody reads stdout: its pipe holds a few answers, so once a hundred
    // of requests are in, the server is (or is about to be) blocked on a
    // write of an answer when the signal comes.
    let _unread = child.stdout.take();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while sent.load(std::sync::atomic::Ordering::SeqCst) < 100 {
        assert!(
            std::time::Instant::now() < deadline,
            "the server took no requests"
        );
        std::thread::yield_now();
    }
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).expect("pid")).expect("pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let status = child.wait().ok().and_then(|s| s.code());
        let _ = tx.send(status);
    });
    let code = rx.recv_timeout(bound);
    if code.is_err() {
        // Missed the bound: not left running after the test.
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
    code.ok().flatten()
}

/// `serve` with a client that never reads: on SIGTERM it exits 0 within
/// the time bound (2 s here) and the grace (5 s).
#[test]
fn serve_exits_on_sigterm_though_its_client_never_reads() {
    let root = tempfile::tempdir().expect("tempdir");
    let root = root_arg(root.path());
    let code = unread(
        &[
            "--root",
            &root,
            "--no-journal",
            "--timeout-ms",
            "2000",
            "serve",
        ],
        (0..5000).map(big_dry_run),
        Duration::from_secs(20),
    );
    assert_eq!(code, Some(0));
}

/// `mcp` with a client that never reads: the same.
#[test]
fn mcp_exits_on_sigterm_though_its_client_never_reads() {
    let root = tempfile::tempdir().expect("tempdir");
    let root = root_arg(root.path());
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let calls = (1..5000).map(|i| {
        let args: serde_json::Value = serde_json::from_str(&big_dry_run(i)).expect("JSON");
        serde_json::json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "Write", "arguments": args}})
        .to_string()
    });
    let lines = [init.to_string(), initialized.to_string()]
        .into_iter()
        .chain(calls);
    let code = unread(
        &[
            "--root",
            &root,
            "--no-journal",
            "--timeout-ms",
            "2000",
            "mcp",
        ],
        lines,
        Duration::from_secs(20),
    );
    assert_eq!(code, Some(0));
}
