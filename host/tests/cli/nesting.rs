use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::{bin_str, root_arg, run};

const LEVELS: usize = 100_000;

/// A request whose arguments are wrapped in `{"arguments": …}` 100,000
/// times: each level looks like the tool-call form.
fn nested_request() -> String {
    let mut request = json!({"path": "deep.txt", "content": "x"}).to_string();
    request.insert_str(0, &r#"{"arguments":"#.repeat(LEVELS));
    request.push_str(&"}".repeat(LEVELS));
    request
}

fn codes(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| {
            let env: Value = serde_json::from_str(line).expect("an envelope per line");
            env["error"]["code"]
                .as_str()
                .or(env["status"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[test]
fn serve_and_call_refuse_deep_nesting_and_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let deep = nested_request();
    let next = json!({"path": "after.txt", "content": "still serving\n"});

    let out = run(
        &["--root", &root, "serve"],
        format!("{deep}\n{next}\n").as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(codes(&out.stdout), ["INVALID_PARAM", "success"]);

    let out = run(&["--root", &root, "call"], deep.as_bytes());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(codes(&out.stdout), ["INVALID_PARAM"]);

    assert!(!dir.path().join("deep.txt").exists());
    assert!(dir.path().join("after.txt").exists());
}

/// `write-tool mcp` on raw JSON-RPC lines: what the SDKs would not send.
struct Mcp {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
}

impl Mcp {
    fn start(args: &[&str]) -> Mcp {
        let mut child = Command::new(bin_str())
            .args(args)
            .arg("mcp")
            .env("WRITE_TOOL_CACHE_DIR", crate::cache_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mcp");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Mcp { child, lines }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        stdin.write_all(line.as_bytes()).expect("send");
        stdin.write_all(b"\n").expect("send");
        stdin.flush().expect("flush");
    }

    /// The next message from the server; a server that does not answer
    /// fails the test instead of hanging it.
    fn receive(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(120))
            .expect("an answer from the server");
        serde_json::from_str(&line).expect("a JSON-RPC message")
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tool_call(id: u32, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"Write","arguments":{arguments}}}}}"#
    )
}

/// The envelope in a `tools/call` answer.
fn envelope(answer: &Value) -> &Value {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    &answer["result"]["structuredContent"]
}

#[test]
fn mcp_answers_deep_nesting_and_lines_over_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let mut mcp = Mcp::start(&["--root", &root, "--max-request-bytes", "4000000"]);
    mcp.send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string(),
    );
    assert_eq!(mcp.receive()["id"], 0);
    mcp.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    mcp.send(&tool_call(1, &nested_request()));
    let answer = mcp.receive();
    assert_eq!(answer["id"], 1);
    let env = envelope(&answer);
    assert_eq!(env["error"]["code"], "INVALID_PARAM", "{env}");
    assert!(env["text"].as_str().unwrap().contains("recursion limit"));

    let over = json!({"path": "big.txt", "content": "b".repeat(4_000_000)}).to_string();
    mcp.send(&tool_call(2, &over));
    let answer = mcp.receive();
    assert_eq!(answer["id"], 2);
    let env = envelope(&answer);
    assert_eq!(
        env["text"],
        "Request is over the limit of 4000000 bytes; it was not read."
    );

    // Another method, nested too deep: a JSON-RPC error with its id.
    let deep_list = format!(
        r#"{{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{{"x":{}{}}}}}"#,
        "[".repeat(LEVELS),
        "]".repeat(LEVELS)
    );
    mcp.send(&deep_list);
    let answer = mcp.receive();
    assert_eq!(answer["id"], "l", "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");

    // The server goes on.
    mcp.send(&tool_call(
        3,
        &json!({"path": "after.txt", "content": "still serving\n"}).to_string(),
    ));
    let answer = mcp.receive();
    assert_eq!(answer["id"], 3);
    assert_eq!(
        answer["result"]["structuredContent"]["status"], "success",
        "{answer}"
    );
    assert!(!dir.path().join("deep.txt").exists());
    assert!(!dir.path().join("big.txt").exists());
    assert!(dir.path().join("after.txt").exists());
}
