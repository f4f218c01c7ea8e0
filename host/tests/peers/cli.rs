//! CLI plumbing the peers rely on.

use std::process::Command;

use crate::{bin_str, run};

#[test]
fn component_goes_to_stdout_byte_for_byte() {
    let output = run(Command::new(bin_str()).arg("component"));
    assert_eq!(output.stdout, write_tool::COMPONENT);
}

#[test]
fn ws_refuses_addresses_that_are_not_loopback_unless_asked() {
    let root = tempfile::tempdir().expect("tempdir");
    let output = Command::new(bin_str())
        .arg("--root")
        .arg(root.path())
        .args(["serve", "--ws", "0.0.0.0:0"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--ws-allow-remote"), "{stderr}");
    // Allowed, but with no token: it would be open to whoever reaches it.
    let output = Command::new(bin_str())
        .arg("--root")
        .arg(root.path())
        .args(["serve", "--ws", "0.0.0.0:0", "--ws-allow-remote"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("only with a token (--ws-token-file"),
        "{stderr}"
    );
}

/// A `serve --ws ADDR` server on a fresh root, and the address it printed
/// once listening (`None` if it failed and exited instead, with the line).
/// The server is killed when the guard drops.
pub(crate) struct WsServer {
    child: std::process::Child,
    _root: tempfile::TempDir,
    addr: Result<String, String>,
    /// The rest of its stderr, for what it prints next.
    stderr: Option<std::io::BufReader<std::process::ChildStderr>>,
}

impl WsServer {
    pub(crate) fn start(listen: &str) -> WsServer {
        WsServer::start_with(listen, &[])
    }

    /// `serve --ws LISTEN` with more flags.
    pub(crate) fn start_with(listen: &str, flags: &[&str]) -> WsServer {
        let root = tempfile::tempdir().expect("tempdir");
        let mut args: Vec<String> = vec!["--root".into(), root.path().display().to_string()];
        args.extend(["serve", "--ws", listen].map(str::to_owned));
        args.extend(flags.iter().map(|f| (*f).to_owned()));
        WsServer::run(&args, root)
    }

    /// The binary with `args` (a `serve --ws` command), `root` kept for its
    /// life.
    pub(crate) fn run(args: &[String], root: tempfile::TempDir) -> WsServer {
        WsServer::run_program(bin_str(), args, root, &[])
    }

    /// `program ARGS` (the binary, or a wrapper that runs it) with `env`.
    pub(crate) fn run_program(
        program: &str,
        args: &[String],
        root: tempfile::TempDir,
        env: &[(&str, &str)],
    ) -> WsServer {
        use std::io::{BufRead, BufReader};
        use std::process::Stdio;

        let mut child = Command::new(program)
            .env("WRITE_TOOL_CACHE_DIR", write_tool_test_support::cache_dir())
            .envs(env.iter().copied())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut first = String::new();
        // The server prints its address once it listens, or fails and
        // exits (closing stderr): either way the line comes.
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        stderr.read_line(&mut first).expect("read stderr");
        let addr = first
            .strip_prefix("write-tool: serving ws://")
            .map(|a| a.trim().to_owned())
            .ok_or(first);
        WsServer {
            child,
            _root: root,
            addr,
            stderr: Some(stderr),
        }
    }

    /// The next line the server prints on stderr.
    pub(crate) fn next_line(&mut self) -> String {
        use std::io::BufRead;
        let mut line = String::new();
        if let Some(stderr) = &mut self.stderr {
            stderr.read_line(&mut line).expect("read stderr");
        }
        line
    }

    /// The root it serves.
    pub(crate) fn root(&self) -> &std::path::Path {
        self._root.path()
    }

    pub(crate) fn addr(&self) -> &str {
        self.addr
            .as_deref()
            .unwrap_or_else(|line| panic!("not serving: {line:?}"))
    }

    /// SIGTERM the server; its exit code if it exits within `bound`
    /// (`None`: it did not, and the test fails rather than hangs).
    pub(crate) fn terminate_within(&mut self, bound: std::time::Duration) -> Option<i32> {
        let pid = rustix::process::Pid::from_raw(i32::try_from(self.child.id()).expect("a pid"))
            .expect("a pid");
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
        // Reaped on a thread of its own, so that a server that never exits
        // is a timeout here.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let status = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
            let _ = tx.send(status.ok().flatten().and_then(|(_, s)| s.exit_status()));
        });
        rx.recv_timeout(bound).ok().flatten()
    }
}

impl Drop for WsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `--ws` takes a host name as well as an address; one that resolves to
/// loopback serves like `127.0.0.1`.
#[test]
fn ws_listens_on_a_host_name_that_resolves_to_loopback() {
    let server = WsServer::start("localhost:0");
    let addr: std::net::SocketAddr = server.addr().parse().expect("an address");
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
}

/// Health probes on the WebSocket port (`docs/contract.md#surfaces`):
/// `GET /healthz` and `GET /readyz` answered `200 ok` without an upgrade;
/// another path, or a probe that asks for an upgrade, goes to the
/// WebSocket handshake, which refuses it.
#[test]
fn ws_answers_health_probes_on_its_port() {
    let server = WsServer::start("127.0.0.1:0");
    let ask = |request: &str| http(server.addr(), request);
    let healthz = ask("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    let readyz = ask("GET /readyz?verbose HTTP/1.0\r\n\r\n");
    let other = ask("GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
    let upgrade = ask("GET /healthz HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n\r\n");
    for answer in [&healthz, &readyz] {
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer:?}");
        assert!(answer.ends_with("\r\n\r\nok\n"), "{answer:?}");
    }
    for answer in [&other, &upgrade] {
        assert!(!answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    }
}

/// One plain HTTP request to `addr`, and what came back before the server
/// closed the connection.
pub(crate) fn http(addr: &str, request: &str) -> String {
    String::from_utf8_lossy(&http_bytes(addr, request.as_bytes())).into_owned()
}

/// [`http`] of bytes: what came back, byte for byte.
pub(crate) fn http_bytes(addr: &str, request: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .expect("timeout");
    stream.write_all(request).expect("send");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    answer
}

/// `serve --ws --metrics` (`docs/contract.md#metrics`): after known calls
/// over WebSocket, `GET /metrics` counts them by status and code, with the
/// bytes written, their latencies and none in flight.
#[test]
fn ws_serves_metrics_of_known_calls_when_asked() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    let server = WsServer::start_with("127.0.0.1:0", &["--metrics"]);
    let requests = [
        r#"{"path": "a.txt", "content": "hello\n"}"#,
        r#"{"path": "a.txt", "content": "hello\n"}"#,
        r#"{"path": "../x.txt", "content": "x"}"#,
        r#"{"file_path": "a.txt", "old_string": "hello", "new_string": "howdy"}"#,
    ];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let url = format!("ws://{}", server.addr());
        let (mut ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("connect");
        for request in requests {
            ws.send(Message::text(request)).await.expect("send");
            let answer = ws.next().await.expect("an answer").expect("a message");
            assert!(answer.is_text(), "{answer:?}");
        }
    });
    // A page that made its own name resolve here (DNS rebinding) sends
    // that name: refused.
    let rebound = http(
        server.addr(),
        "GET /metrics HTTP/1.1\r\nHost: evil.example.com:8765\r\n\r\n",
    );
    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
    assert!(!rebound.contains("write_tool_calls_total"), "{rebound}");
    let metrics = http(
        server.addr(),
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n",
    );
    assert!(metrics.starts_with("HTTP/1.1 200 OK\r\n"), "{metrics}");
    assert!(
        metrics.contains("Content-Type: application/openmetrics-text"),
        "{metrics}"
    );
    for line in [
        r#"write_tool_calls_total{surface="ws",status="success",code=""} 3"#,
        r#"write_tool_calls_total{surface="ws",status="error",code="ACCESS_DENIED"} 1"#,
        r#"write_tool_bytes_written_total{surface="ws"} 12"#,
        r#"write_tool_call_duration_seconds_count{surface="ws"} 4"#,
        r#"write_tool_calls_in_flight{surface="ws"} 0"#,
        "# EOF",
    ] {
        assert!(metrics.contains(line), "{line} in:\n{metrics}");
    }
}

/// Raw JSON-RPC on the MCP server's stdin: every kind of bad line, then a
/// good call that must still be answered.
#[test]
fn mcp_survives_malformed_requests() {
    let root = tempfile::tempdir().expect("tempdir");
    let mut mcp = RawMcp::start(root.path(), &["--max-request-bytes", "4096"]);
    mcp.initialize();
    // Not JSON: no id to answer, so ignored. A line over the limit is read
    // for its id in its first bytes, and answered; a batch is answered
    // with a null id.
    mcp.send("this is not json");
    mcp.send(&format!(
        r#"{{"jsonrpc":"2.0","id":99,"method":"ping","pad":"{}"}}"#,
        "x".repeat(8192)
    ));
    let reply = mcp.answer();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (99.into(), (-32600).into())
    );
    mcp.send("[1, 2, 3]");
    let reply = mcp.answer();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (serde_json::Value::Null, (-32600).into())
    );
    mcp.send(r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#);
    let reply = mcp.answer();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (2.into(), (-32601).into())
    );
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Unknown method 'no/such/method'."),
        "{message}"
    );
    mcp.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Delete","arguments":{}}}"#,
    );
    let reply = mcp.answer();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (3.into(), (-32602).into())
    );
    mcp.send(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Write","arguments":{"path":7}}}"#,
    );
    let reply = mcp.answer();
    assert_eq!(reply["id"], 4);
    assert_eq!(reply["result"]["isError"], true);
    assert_eq!(
        reply["result"]["structuredContent"]["error"]["code"],
        "INVALID_PARAM"
    );
    mcp.send(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"Write","arguments":{"path":"ok.txt","content":"ok\n"}}}"#,
    );
    let reply = mcp.answer();
    assert_eq!(reply["id"], 5);
    assert_eq!(reply["result"]["isError"], false);
    assert_eq!(reply["result"]["structuredContent"]["status"], "success");
    assert!(mcp.finish().success(), "EOF ends the server cleanly");
    assert_eq!(
        std::fs::read_to_string(root.path().join("ok.txt")).expect("read"),
        "ok\n"
    );
}

/// Started the way desktop clients start servers — in `/`, without
/// `--root` — by a client that offers no roots, the server has no project
/// root: it says so in a log message once the client is initialized, and
/// answers calls with that message; started in a directory, it warns that
/// it writes there.
#[test]
fn mcp_without_any_root_says_so_instead_of_writing_somewhere() {
    let run_in = |dir: &std::path::Path, call: &str| -> Vec<serde_json::Value> {
        let mut command = Command::new(bin_str());
        command.arg("mcp").current_dir(dir);
        let mut mcp = RawMcp::spawn(command);
        mcp.initialize();
        mcp.send(call);
        // Every message until both the call's answer (id 2) and the log
        // message have come, in whichever order the server sent them.
        let mut seen: Vec<serde_json::Value> = Vec::new();
        while !(seen.iter().any(|m| m["id"] == 2)
            && seen.iter().any(|m| m["method"] == "notifications/message"))
        {
            let message = mcp
                .next()
                .unwrap_or_else(|| panic!("no answer and log message in 60 s: {seen:?}"));
            seen.push(message);
        }
        assert!(mcp.finish().success());
        seen
    };
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Write","arguments":{"path":"stray.txt","content":"x\n"}}}"#;

    let seen = run_in(std::path::Path::new("/"), call);
    let log = seen
        .iter()
        .find(|m| m["method"] == "notifications/message")
        .expect("a log message");
    assert_eq!(log["params"]["level"], "error");
    let logged = log["params"]["data"].as_str().expect("text");
    assert!(logged.contains("no project root"), "{logged}");
    let answer = seen.iter().find(|m| m["id"] == 2).expect("the answer");
    assert_eq!(answer["result"]["isError"], true);
    let text = answer["result"]["structuredContent"]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains("--root"), "{text}");
    assert!(!std::path::Path::new("/stray.txt").exists());

    let cwd = tempfile::tempdir().expect("tempdir");
    let seen = run_in(cwd.path(), call);
    let log = seen
        .iter()
        .find(|m| m["method"] == "notifications/message")
        .expect("a log message");
    assert_eq!(log["params"]["level"], "warning");
    let logged = log["params"]["data"].as_str().expect("text");
    let shown = cwd.path().canonicalize().expect("canonical");
    assert!(
        logged.contains(&shown.display().to_string()),
        "{logged} names {}",
        shown.display()
    );
    let answer = seen.iter().find(|m| m["id"] == 2).expect("the answer");
    assert_eq!(answer["result"]["isError"], false);
    assert!(cwd.path().join("stray.txt").exists());
}

/// What arrives before `initialize` does not end the server: requests are
/// answered with an error (ping with its result), notifications and
/// responses ignored. A batch and an `id` that is neither a string nor an
/// integer get an Invalid Request error with a null `id`; a repeated key
/// is refused as on every other surface. The server goes on through all of
/// it and exits cleanly at end of input.
#[test]
fn mcp_answers_what_rmcp_would_stop_on_or_pass_over() {
    let root = tempfile::tempdir().expect("tempdir");
    let mut mcp = RawMcp::start(root.path(), &[]);
    // Before initialize.
    mcp.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    mcp.send(r#"{"jsonrpc":"2.0","id":77,"result":{}}"#);
    mcp.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let reply = mcp.answer();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (1.into(), (-32002).into())
    );
    mcp.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    let reply = mcp.answer();
    assert_eq!(
        (reply["id"].clone(), reply["result"].clone()),
        (2.into(), serde_json::json!({}))
    );
    // Batches and bad ids, before and after.
    mcp.send(r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#);
    let reply = mcp.answer();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (serde_json::Value::Null, (-32600).into())
    );
    mcp.send(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#);
    let reply = mcp.answer();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (serde_json::Value::Null, (-32600).into())
    );
    // Now the handshake, as clients make it.
    mcp.send(
        r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    assert_eq!(mcp.answer()["id"], 4);
    mcp.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // A repeated key, in the arguments and in the message itself.
    mcp.send(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"Write","arguments":{"path":"a.txt","path":"b.txt","content":"x"}}}"#,
    );
    let reply = mcp.answer();
    assert_eq!(reply["id"], 5);
    assert_eq!(reply["result"]["isError"], true);
    let message = reply["result"]["structuredContent"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("duplicate key 'path'"), "{message}");
    mcp.send(r#"{"jsonrpc":"2.0","id":6,"id":7,"method":"ping"}"#);
    let reply = mcp.answer();
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    mcp.send(r#"[]"#);
    assert_eq!(mcp.answer()["error"]["code"], -32600);
    // And the server still works.
    mcp.send(
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"Write","arguments":{"path":"ok.txt","content":"ok\n"}}}"#,
    );
    let reply = mcp.answer();
    assert_eq!(
        (reply["id"].clone(), reply["result"]["isError"].clone()),
        (8.into(), false.into())
    );
    assert!(mcp.finish().success(), "EOF ends the server cleanly");
    assert!(!root.path().join("a.txt").exists() && !root.path().join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(root.path().join("ok.txt")).unwrap(),
        "ok\n"
    );
}

/// `write-tool mcp` under a client that writes JSON-RPC lines itself.
struct RawMcp {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl RawMcp {
    /// The server on `root`, with `flags` before the command.
    fn start(root: &std::path::Path, flags: &[&str]) -> RawMcp {
        let mut command = Command::new(bin_str());
        command.arg("--root").arg(root).args(flags).arg("mcp");
        RawMcp::spawn(command)
    }

    /// The server `command` starts, its stdin and stdout piped to the test.
    fn spawn(mut command: Command) -> RawMcp {
        use std::io::{BufRead, BufReader};
        use std::process::Stdio;

        let mut child = command
            .env("WRITE_TOOL_CACHE_DIR", write_tool_test_support::cache_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        // Read on a thread, so that a message that never comes fails the
        // test after a bound instead of hanging it.
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        RawMcp {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        use std::io::Write;
        writeln!(self.stdin.as_mut().expect("open"), "{line}").expect("send");
    }

    /// The next message from the server.
    fn answer(&self) -> serde_json::Value {
        self.next().expect("an answer within a minute")
    }

    /// The next message from the server, if one comes within a minute.
    fn next(&self) -> Option<serde_json::Value> {
        let line = self
            .lines
            .recv_timeout(std::time::Duration::from_secs(60))
            .ok()?;
        Some(serde_json::from_str(&line).expect("JSON-RPC"))
    }

    /// The handshake, as clients make it.
    fn initialize(&mut self) {
        self.send(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        );
        assert_eq!(self.answer()["id"], 0);
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// A `tools/call` of `Write` with `arguments`.
    fn call(&mut self, id: u64, arguments: serde_json::Value) {
        let request = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": {"name": "Write", "arguments": arguments},
        });
        self.send(&request.to_string());
    }

    /// `notifications/cancelled` for request `id`.
    fn cancel(&mut self, id: u64) {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"test"}}}}"#
        ));
    }

    /// End input and wait for the server to exit; what it wrote meanwhile
    /// stays readable with [`RawMcp::rest`].
    fn finish(&mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().expect("wait")
    }

    /// Every message the server wrote and nobody read yet, once it exited.
    fn rest(&self) -> Vec<serde_json::Value> {
        self.lines
            .iter()
            .map(|line| serde_json::from_str(&line).expect("JSON-RPC"))
            .collect()
    }
}

/// `notifications/cancelled` reaches the commit point
/// (`docs/contract.md#cancellation`): a call whose diff keeps it busy for
/// two seconds is cancelled at once and writes nothing, though the server
/// lets it run to its end before it exits; a cancel that comes after the
/// answer finds the write done. The server answers what comes next either
/// way.
#[test]
fn mcp_cancellation_stops_a_call_before_its_commit_point() {
    let root = tempfile::tempdir().expect("tempdir");
    let lines = slow_lines;
    let old = lines(7);
    std::fs::write(root.path().join("slow.txt"), &old).unwrap();
    // The least share of the diff's timeout a text gets is 1/32: two
    // seconds of diff before the commit point.
    let mut mcp = RawMcp::start(root.path(), &["--diff-timeout-ms", "64000"]);
    mcp.initialize();
    mcp.call(
        1,
        serde_json::json!({"path": "slow.txt", "content": lines(11)}),
    );
    mcp.cancel(1);
    mcp.call(
        2,
        serde_json::json!({"path": "late.txt", "content": "done\n"}),
    );
    let reply = mcp.answer();
    assert_eq!(
        (reply["id"].clone(), reply["result"]["isError"].clone()),
        (2.into(), false.into()),
        "{reply}"
    );
    mcp.cancel(2);
    mcp.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    assert_eq!(mcp.answer()["id"], 3);
    assert!(mcp.finish().success());
    let rest = mcp.rest();
    assert!(
        rest.iter().all(|m| m["id"] != 1),
        "a cancelled request is not answered: {rest:?}"
    );
    let read = |p: &str| std::fs::read_to_string(root.path().join(p)).unwrap();
    assert!(read("slow.txt") == old, "the cancelled write landed");
    assert_eq!(read("late.txt"), "done\n");
    let names: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// Lines a diff cannot match up quickly (the same thousand values in an
/// order `step` sets): a write of one such text over another runs its
/// diff to its deadline.
pub(crate) fn slow_lines(step: usize) -> String {
    (0..200_000)
        .map(|i| format!("{}\n", i * step % 1000))
        .collect()
}

/// Requests per connection in the drain test.
const DRAIN_EACH: usize = 25;

/// One connection of the drain test: sends its requests at once, reads
/// answers until the server closes it. Returns the answers and the close
/// code.
async fn drain_client(
    mut ws: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    c: usize,
    tick: tokio::sync::mpsc::UnboundedSender<()>,
) -> (usize, Option<u16>) {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    const EACH: usize = DRAIN_EACH;
    // Every request sent at once, answers read as they come.
    for i in 0..EACH {
        let request = serde_json::json!({
            "path": format!("c{c}/{i}.txt"), "content": format!("{c}-{i}\n")
        });
        ws.send(Message::text(request.to_string()))
            .await
            .expect("send");
    }
    let mut answers = 0;
    let mut closed_with = None;
    while let Some(message) = ws.next().await {
        match message {
            Ok(Message::Text(text)) => {
                let envelope: serde_json::Value = serde_json::from_str(&text).expect("an envelope");
                assert_eq!(envelope["status"], "success", "{envelope}");
                answers += 1;
                let _ = tick.send(());
            }
            Ok(Message::Close(frame)) => {
                closed_with = frame.map(|f| u16::from(f.code));
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    (answers, closed_with)
}

/// SIGTERM while hundreds of WebSocket requests are queued on 16
/// connections (`docs/contract.md#drain`): every request is answered with
/// its envelope or never started, each connection is closed with 1001, the
/// server exits 0, and the files are exactly those of the answered
/// requests.
#[test]
fn ws_drains_on_sigterm_and_loses_nothing() {
    const CONNECTIONS: usize = 16;
    const EACH: usize = DRAIN_EACH;
    let mut server = WsServer::start_with("127.0.0.1:0", &["--no-journal"]);
    let url = format!("ws://{}", server.addr());
    let root = server._root.path().to_path_buf();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let pid = server.child.id().to_string();
    let answered: Vec<usize> = runtime.block_on(async {
        let (tick, mut ticks) = tokio::sync::mpsc::unbounded_channel::<()>();
        let mut clients = Vec::new();
        for c in 0..CONNECTIONS {
            let (ws, _) = tokio_tungstenite::connect_async(url.as_str())
                .await
                .expect("connect");
            let tick = tick.clone();
            clients.push(tokio::spawn(drain_client(ws, c, tick)));
        }
        drop(tick);
        for _ in 0..40 {
            ticks.recv().await.expect("answers before the signal");
        }
        let status = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(status.success());
        let mut answered = Vec::new();
        for client in clients {
            let (answers, closed_with) = client.await.expect("client");
            if answers < EACH {
                assert_eq!(closed_with, Some(1001), "going away");
            }
            answered.push(answers);
        }
        answered
    });
    let status = server.child.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "drained, exit 0");
    let total: usize = answered.iter().sum();
    assert!(
        (40..CONNECTIONS * EACH).contains(&total),
        "{total} answered: {answered:?}"
    );
    for (c, &answers) in answered.iter().enumerate() {
        for i in 0..EACH {
            let file = root.join(format!("c{c}/{i}.txt"));
            if i < answers {
                assert_eq!(
                    std::fs::read_to_string(&file).expect("answered"),
                    format!("{c}-{i}\n")
                );
            } else {
                assert!(
                    !file.exists(),
                    "c{c} request {i} was not answered but wrote"
                );
            }
        }
    }
    assert!(write_tool_test_support::temp_files(&root).is_empty());
}

/// SIGTERM while `tools/call` requests keep coming to the MCP server, 16
/// in flight at a time (`docs/contract.md#drain`): the calls in flight are
/// answered, none sent after starts, the server exits 0 with its stdin
/// still open, and the files are exactly those of the answered calls.
#[test]
fn mcp_drains_on_sigterm_and_loses_nothing() {
    use std::io::Write;
    const CALLS: u64 = 400;
    const WINDOW: u64 = 16;
    let root = tempfile::tempdir().expect("tempdir");
    let mut mcp = RawMcp::start(root.path(), &["--no-journal"]);
    mcp.initialize();
    let mut stdin = mcp.stdin.take().expect("stdin");
    // Sent until the server is gone; what it never read never started.
    let mut sent = 0;
    let mut send = |stdin: &mut std::process::ChildStdin| {
        if sent < CALLS {
            sent += 1;
            let request = serde_json::json!({
                "jsonrpc": "2.0", "id": sent, "method": "tools/call",
                "params": {"name": "Write", "arguments":
                    {"path": format!("m/{sent}.txt"), "content": format!("{sent}\n")}},
            });
            let _ = writeln!(stdin, "{request}");
        }
    };
    for _ in 0..WINDOW {
        send(&mut stdin);
    }
    let mut answered = std::collections::BTreeSet::new();
    let mut killed = false;
    // Stdin stays open: the server ends for the signal, and its stdout
    // with it.
    loop {
        let line = match mcp.lines.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(line) => line,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("no exit after SIGTERM"),
        };
        let message: serde_json::Value = serde_json::from_str(&line).expect("JSON-RPC");
        let id = message["id"].as_u64().expect("a response");
        let result = &message["result"];
        assert_ne!(result["isError"], true, "{message}");
        assert_eq!(
            result["structuredContent"]["status"], "success",
            "{message}"
        );
        answered.insert(id);
        send(&mut stdin);
        if answered.len() == 40 && !killed {
            killed = true;
            let status = Command::new("kill")
                .args(["-TERM", &mcp.child.id().to_string()])
                .status()
                .expect("kill");
            assert!(status.success());
        }
    }
    let status = mcp.child.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "drained, exit 0");
    let total = answered.len() as u64;
    // Requests came after the signal and never started.
    assert!(
        total >= 40 && total < sent,
        "{total} answered of {sent} sent"
    );
    for id in 1..=sent {
        let file = root.path().join(format!("m/{id}.txt"));
        if answered.contains(&id) {
            assert_eq!(
                std::fs::read_to_string(&file).expect("answered"),
                format!("{id}\n")
            );
        } else {
            assert!(!file.exists(), "call {id} was not answered but wrote");
        }
    }
    assert!(write_tool_test_support::temp_files(root.path()).is_empty());
}
