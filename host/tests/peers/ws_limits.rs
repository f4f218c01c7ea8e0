//! Clients that would hold a WebSocket server (`docs/contract.md#surfaces`,
//! `#drain`): ones that never read their answers, sockets that never
//! finish a handshake, and a drain whatever they do.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use crate::cli::WsServer;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A dry run whose answer carries a preview of about 10 KiB: many of them
/// unread fill the socket's buffers.
fn big_request(i: usize) -> String {
    let content: String = (0..100)
        .map(|n| format!("line {n} of request {i}, long enough\n"))
        .collect();
    // The full form: its answer carries the new file's diff, so answers are
    // as large as requests and fill the buffers.
    serde_json::json!({"path": format!("f{i}.txt"), "content": content, "dry_run": true, "envelope": "full"})
        .to_string()
}

/// A client that sends request after request and never reads: once its
/// answers fill the buffers, the server waits for it no longer than the
/// write timeout and drops it, freeing its slot; the server itself then
/// drains and exits at once on SIGTERM.
#[test]
fn a_client_that_never_reads_is_dropped_and_cannot_stall_a_drain() {
    let mut server = WsServer::start_with("127.0.0.1:0", &["--ws-write-timeout-ms", "1000"]);
    let url = format!("ws://{}", server.addr());
    let (sent, ended) = runtime().block_on(async {
        let (ws, _) = tokio_tungstenite::connect_async(&url)
            .await
            .expect("connect");
        let (mut write, mut read) = ws.split();
        let mut sent = 0;
        // Send until the server stops taking requests (it is blocked on
        // an answer, or dropped the connection), at most 4,000.
        while sent < 4000 {
            let send = write.send(Message::text(big_request(sent)));
            match tokio::time::timeout(Duration::from_secs(3), send).await {
                Ok(Ok(())) => sent += 1,
                _ => break,
            }
        }
        // Now read: the answers the buffers held, then the end.
        let drained = async { while let Some(Ok(_)) = read.next().await {} };
        let ended = tokio::time::timeout(Duration::from_secs(20), drained)
            .await
            .is_ok();
        (sent, ended)
    });
    assert!(sent > 100, "only {sent} requests sent");
    assert!(
        ended,
        "the server kept a client that never read ({sent} requests)"
    );
    // A new client is served.
    let answered = runtime().block_on(async {
        let (mut ws, _) = tokio_tungstenite::connect_async(&url)
            .await
            .expect("connect");
        ws.send(Message::text(big_request(0))).await.expect("send");
        tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .ok()
            .flatten()
            .is_some()
    });
    assert!(answered);
    assert_eq!(server.terminate_within(Duration::from_secs(20)), Some(0));
}

/// With the default write timeout (30 s), a drain does not wait that long
/// for a client that never reads: the server is held in a write when the
/// signal comes (the client's own sends stopped going through), and exits
/// within the grace (5 s) all the same.
#[test]
fn a_drain_ends_in_time_whatever_a_client_does() {
    let mut server = WsServer::start("127.0.0.1:0");
    let url = format!("ws://{}", server.addr());
    let rt = runtime();
    let (_held, blocked) = rt.block_on(async {
        let (mut ws, _) = tokio_tungstenite::connect_async(&url)
            .await
            .expect("connect");
        let mut blocked = false;
        for i in 0..20_000 {
            let send = ws.send(Message::text(big_request(i)));
            if tokio::time::timeout(Duration::from_secs(3), send)
                .await
                .is_err()
            {
                blocked = true;
                break;
            }
        }
        (ws, blocked)
    });
    assert!(blocked, "the server never stopped reading: it is not held");
    assert_eq!(server.terminate_within(Duration::from_secs(12)), Some(0));
}

/// Hundreds of sockets that never send a byte do not keep a real client
/// from connecting: the socket that waited longest for its handshake is
/// dropped for a new one, though the handshake timeout (60 s here) has not
/// passed.
#[test]
fn sockets_that_never_handshake_do_not_lock_clients_out() {
    let server = WsServer::start_with("127.0.0.1:0", &["--ws-handshake-timeout-ms", "60000"]);
    let silent: Vec<std::net::TcpStream> = (0..200)
        .map(|_| std::net::TcpStream::connect(server.addr()).expect("connect"))
        .collect();
    let url = format!("ws://{}", server.addr());
    let answered = runtime().block_on(async {
        let connect = tokio_tungstenite::connect_async(&url);
        let Ok(Ok((mut ws, _))) = tokio::time::timeout(Duration::from_secs(20), connect).await
        else {
            return false;
        };
        ws.send(Message::text(big_request(0))).await.expect("send");
        tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .ok()
            .flatten()
            .is_some()
    });
    assert!(answered, "200 silent sockets locked a client out");
    // The one that waited longest was dropped, long before its handshake
    // timeout: it reads the end of the stream (or a reset), not a timeout.
    let mut first = &silent[0];
    first
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut byte = [0u8; 1];
    match std::io::Read::read(&mut first, &mut byte) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("the oldest silent socket is still held: {other:?}"),
    }
    drop(silent);
}

/// Probes on a port of their own (`--probe-listen`), so that the port that
/// writes stays on loopback: health, readiness and metrics answered there,
/// anything else 404, and nothing of the WebSocket endpoint.
#[test]
fn probes_answer_on_a_port_of_their_own() {
    let mut server = WsServer::start_with(
        "127.0.0.1:0",
        &["--probe-listen", "127.0.0.1:0", "--metrics"],
    );
    let line = server.next_line();
    let probes = line
        .trim()
        .strip_prefix("write-tool: probes on http://")
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_owned();
    let ask = |path: &str| {
        crate::cli::http(
            &probes,
            &format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n"),
        )
    };
    assert!(
        ask("/healthz").starts_with("HTTP/1.1 200"),
        "{}",
        ask("/healthz")
    );
    assert!(
        ask("/readyz").starts_with("HTTP/1.1 200"),
        "{}",
        ask("/readyz")
    );
    assert!(
        ask("/metrics").contains("application/openmetrics-text"),
        "{}",
        ask("/metrics")
    );
    assert!(ask("/").starts_with("HTTP/1.1 404"), "{}", ask("/"));
}

/// `/readyz` answers 503 with why when the root cannot be written (the
/// server runs as a user the root's owner did not let write): ready means
/// writes can succeed. Needs root, to run the server as another user.
#[test]
fn readiness_says_no_when_the_root_cannot_be_written() {
    use std::os::unix::fs::PermissionsExt;
    if !write_tool_test_support::capability::runs(
        write_tool_test_support::capability::is_root(),
        "readiness_says_no_when_the_root_cannot_be_written",
        "root (to run the server as another user)",
    ) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let args: Vec<String> = [
        "--reuid=4104",
        "--regid=4104",
        "--clear-groups",
        "--",
        write_tool_test_support::bin_str(),
        "--no-journal",
        "--root",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([dir.path().display().to_string()])
    .chain(["serve", "--ws", "127.0.0.1:0"].map(str::to_owned))
    .collect();
    let root = tempfile::tempdir().expect("kept");
    let server = WsServer::run_program("setpriv", &args, root, &[("WRITE_TOOL_CACHE", "off")]);
    let ready = crate::cli::http(
        server.addr(),
        "GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n",
    );
    assert!(ready.starts_with("HTTP/1.1 503"), "{ready}");
    assert!(ready.contains("cannot be written"), "{ready}");
    let live = crate::cli::http(
        server.addr(),
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n",
    );
    assert!(live.starts_with("HTTP/1.1 200"), "{live}");
}

/// The answer to `GET /v1/health` on a connection of its own, which
/// waits for a slot.
async fn answered(addr: std::net::SocketAddr) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let health = "GET /v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    let mut next = tokio::net::TcpStream::connect(addr).await.expect("connect");
    next.write_all(health.as_bytes()).await.expect("send");
    let mut answer = String::new();
    let read = tokio::time::timeout(Duration::from_secs(30), next.read_to_string(&mut answer));
    read.await.expect("answered in time").expect("read");
    answer
}

/// Plain HTTP clients that would hold the port's only connection slot
/// (`docs/contract.md#mcp-http`): one that sends a body's first bytes and
/// then nothing, and one that asks for a 12 MiB file and never reads it.
/// Each is given up after the transfer time (`--ws-write-timeout-ms`),
/// the first with 408 and nothing written, so that a client waiting for
/// the slot meanwhile is served instead of being turned away (503) when
/// its own wait (the handshake timeout) runs out.
#[test]
fn a_slow_body_and_an_unread_answer_give_up_their_slot() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let server = WsServer::start_with(
        "127.0.0.1:0",
        &[
            "--ws-write-timeout-ms",
            "1000",
            "--ws-max-connections",
            "1",
            "--ws-handshake-timeout-ms",
            "15000",
        ],
    );
    let addr: std::net::SocketAddr = server.addr().parse().expect("an address");
    std::fs::write(server.root().join("big.txt"), "x".repeat(12 << 20)).expect("big");
    let (slow, waited) = runtime().block_on(async {
        // A body of 100 bytes, 10 sent.
        let mut slow = tokio::net::TcpStream::connect(addr).await.expect("connect");
        slow.write_all(
            b"PUT /v1/files/slow.txt HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n0123456789",
        )
        .await
        .expect("send");
        // Served only once the slow one gave up the slot.
        let waited = answered(addr).await;
        let mut answer = String::new();
        let read = tokio::time::timeout(Duration::from_secs(30), slow.read_to_string(&mut answer));
        let _ = read.await.expect("closed in time");
        (answer, waited)
    });
    assert!(slow.starts_with("HTTP/1.1 408"), "{slow}");
    assert!(slow.contains("nothing was written"), "{slow}");
    // The same on /mcp, whose body rmcp reads.
    let slow_mcp = runtime().block_on(async {
        let mut slow = tokio::net::TcpStream::connect(addr).await.expect("connect");
        slow.write_all(
            b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{",
        )
        .await
        .expect("send");
        let mut answer = String::new();
        let read = tokio::time::timeout(Duration::from_secs(30), slow.read_to_string(&mut answer));
        let _ = read.await.expect("closed in time");
        answer
    });
    assert!(slow_mcp.starts_with("HTTP/1.1 408"), "{slow_mcp}");
    assert!(slow_mcp.contains("nothing was called"), "{slow_mcp}");
    assert!(waited.starts_with("HTTP/1.1 200"), "{waited}");
    assert!(!server.root().join("slow.txt").exists());

    // The answer stalls only if the file is more than the server's send
    // buffer can take at its largest.
    let wmem_max = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_wmem")
        .ok()
        .and_then(|t| {
            t.split_whitespace()
                .nth(2)
                .and_then(|n| n.parse::<u64>().ok())
        })
        .unwrap_or(4 << 20);
    if wmem_max >= 8 << 20 {
        eprintln!(
            "skipped: the unread answer (tcp_wmem's largest send buffer, {wmem_max} bytes, takes \
             most of the 12 MiB answer)"
        );
        return;
    }
    let waited = runtime().block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.set_recv_buffer_size(4096).expect("a small buffer");
        let mut unread = socket.connect(addr).await.expect("connect");
        unread
            .write_all(b"GET /v1/files/big.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .expect("send");
        let waited = answered(addr).await;
        drop(unread);
        waited
    });
    assert!(waited.starts_with("HTTP/1.1 200"), "{waited}");
}

/// Calls from one connection cannot take every slot
/// (`docs/contract.md#mcp-http`): a WebSocket client that sends eight slow
/// writes at once has them run one after another, as its connection
/// answers in order, so another client's `/mcp` write is answered while
/// the slow client's last write has not even started. Each slow write is
/// kept busy by its diff (two seconds of it).
#[test]
fn one_connections_slow_calls_leave_slots_for_another_client() {
    use std::io::Write as _;

    let root = tempfile::tempdir().expect("root");
    let old = crate::cli::slow_lines(7);
    for n in 0..8 {
        std::fs::write(root.path().join(format!("slow{n}.txt")), &old).expect("old");
    }
    let path = root.path().to_owned();
    let args: Vec<String> = [
        "--root",
        &path.display().to_string(),
        "--diff-timeout-ms",
        "64000",
        "serve",
        "--ws",
        "127.0.0.1:0",
    ]
    .map(str::to_owned)
    .into();
    let server = WsServer::run(&args, root);
    let url = format!("ws://{}", server.addr());
    let new = crate::cli::slow_lines(11);
    let rt = runtime();
    let (mut ws, _) = rt
        .block_on(tokio_tungstenite::connect_async(&url))
        .expect("connect");
    rt.block_on(async {
        for n in 0..8 {
            let request = serde_json::json!({"path": format!("slow{n}.txt"), "content": new});
            ws.send(Message::text(request.to_string()))
                .await
                .expect("send");
        }
    });
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Write","arguments":{"path":"quick.txt","content":"q\n"}}}"#;
    let mut stream = std::net::TcpStream::connect(server.addr()).expect("connect");
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: \
         application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{call}",
        call.len()
    )
    .expect("send");
    let mut answer = String::new();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    std::io::Read::read_to_string(&mut stream, &mut answer).expect("answered");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(
        std::fs::read_to_string(path.join("quick.txt")).expect("quick"),
        "q\n"
    );
    assert!(
        std::fs::read_to_string(path.join("slow7.txt")).expect("slow7") == old,
        "the slow client's last write ran before the other client was answered"
    );
    // And the slow client's writes all land, in order.
    let answers = rt.block_on(async {
        let mut answers = 0;
        while answers < 8 {
            let next = tokio::time::timeout(Duration::from_secs(120), ws.next()).await;
            match next {
                Ok(Some(Ok(Message::Text(_)))) => answers += 1,
                Ok(Some(Ok(_))) => {}
                _ => break,
            }
        }
        answers
    });
    assert_eq!(answers, 8);
    assert!(std::fs::read_to_string(path.join("slow7.txt")).expect("slow7") == new);
}

/// An MCP request that names its revision twice is refused before
/// anything is called: rmcp reads the first `MCP-Protocol-Version` and
/// checks SEP-2243's headers by it, where a proxy may have read the other
/// (a `Mcp-Method` of `tools/list` on a `tools/call` passed when the first
/// named a revision without those headers).
#[test]
fn an_mcp_request_naming_its_revision_twice_is_refused() {
    let server = WsServer::start("127.0.0.1:0");
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Write","arguments":{"path":"twice.txt","content":"x\n"}}}"#;
    for (first, second) in [("2025-06-18", "2026-07-28"), ("2026-07-28", "2025-06-18")] {
        let answer = crate::cli::http(
            server.addr(),
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {first}\r\n\
                 MCP-Protocol-Version: {second}\r\nMcp-Method: tools/list\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{call}",
                call.len()
            ),
        );
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        assert!(answer.contains("more than once"), "{answer}");
        assert!(!server.root().join("twice.txt").exists());
    }
}
