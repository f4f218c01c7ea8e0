//! The sandbox file API on the WebSocket port (`docs/contract.md#files-api`)
//! as a program drives it: with the host's settings a model's session
//! would have, where they apply to a client that keeps no view.

use std::process::Command;

use write_tool_test_support::bin_str;

use crate::cli::{WsServer, http, http_bytes};

/// One request with `body`, answered on a fresh connection.
fn send(addr: &str, method: &str, path: &str, body: &[u8]) -> String {
    send_as(addr, "", method, path, body)
}

/// [`send`] with the header lines `headers` (each ending in `\r\n`).
fn send_as(addr: &str, headers: &str, method: &str, path: &str, body: &[u8]) -> String {
    String::from_utf8_lossy(&send_bytes(addr, headers, method, path, body)).into_owned()
}

/// [`send_as`], its body and answer as bytes.
fn send_bytes(addr: &str, headers: &str, method: &str, path: &str, body: &[u8]) -> Vec<u8> {
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{headers}Content-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    let mut request = head.into_bytes();
    request.extend_from_slice(body);
    http_bytes(addr, &request)
}

/// `PUT` writes the body's bytes exactly, whatever they are — binary,
/// windows-1252, UTF-8 with a byte-order mark and CRLF — over a text file
/// or none, and `GET` serves them back; still through the pipeline: a
/// protected path is refused with nothing written, and the person's
/// `undo` takes a binary write back to the text it replaced.
#[test]
fn a_put_writes_the_bodys_bytes_exactly() {
    let server = WsServer::start("127.0.0.1:0");
    let addr = server.addr();
    let root = server.root();
    std::fs::write(root.join("was-text.txt"), "text\n").expect("text");
    let bodies: [(&str, &[u8]); 5] = [
        ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"),
        ("cp1252.txt", b"caf\xe9 na\xefve\r\n"),
        ("bom.txt", b"\xef\xbb\xbfa\r\nb\n"),
        ("lone.bin", b"\x80"),
        ("was-text.txt", b"\x00\x01\x02 binary now\xff"),
    ];
    for (name, body) in bodies {
        let answer = send_bytes(addr, "", "PUT", &format!("/v1/files/{name}"), body);
        assert!(
            answer.starts_with(b"HTTP/1.1 204"),
            "{name}: {:?}",
            String::from_utf8_lossy(&answer)
        );
        assert_eq!(
            std::fs::read(root.join(name)).expect("written"),
            body,
            "{name}"
        );
        let served = send_bytes(addr, "", "GET", &format!("/v1/files/{name}"), b"");
        assert!(
            served.ends_with(body),
            "{name}: {:?}",
            String::from_utf8_lossy(&served)
        );
    }
    std::fs::create_dir_all(root.join(".git/hooks")).expect("hooks");
    let refused = send_bytes(
        addr,
        "",
        "PUT",
        "/v1/files/.git%2Fhooks%2Fpre-commit",
        b"\xff\xfe",
    );
    assert!(
        refused.starts_with(b"HTTP/1.1 403"),
        "{:?}",
        String::from_utf8_lossy(&refused)
    );
    assert!(!root.join(".git/hooks/pre-commit").exists());
    let undo = Command::new(bin_str())
        .args(["--root", &root.display().to_string(), "undo"])
        .output()
        .expect("undo");
    assert!(
        undo.status.success(),
        "{}",
        String::from_utf8_lossy(&undo.stderr)
    );
    assert_eq!(
        std::fs::read(root.join("was-text.txt")).expect("back"),
        b"text\n"
    );
    // A path absolute inside the root, as the spec's paths may be.
    let absolute = root
        .join("abs.bin")
        .display()
        .to_string()
        .replace('/', "%2F");
    let answer = send_bytes(addr, "", "PUT", &format!("/v1/files/{absolute}"), b"\xfe");
    assert!(
        answer.starts_with(b"HTTP/1.1 204"),
        "{:?}",
        String::from_utf8_lossy(&answer)
    );
    assert_eq!(std::fs::read(root.join("abs.bin")).expect("abs"), b"\xfe");
}

/// Under `--read-first` a `PUT` over an existing file is written: the
/// file API's client is a program outside any session, as `call` is, and
/// read-first holds sessions only. A model's WebSocket call in a session
/// is still refused.
#[test]
fn read_first_holds_sessions_not_the_file_apis_programs() {
    let server = WsServer::start_with("127.0.0.1:0", &["--read-first"]);
    let addr = server.addr();
    for body in ["first\n", "second\n"] {
        let answer = send(addr, "PUT", "/v1/files/a.txt", body.as_bytes());
        assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    }
    let answer = send(addr, "GET", "/v1/files/a.txt", b"");
    assert!(answer.ends_with("\r\n\r\nsecond\n"), "{answer}");
    let refused = one_call(addr, r#"{"path": "a.txt", "content": "from a session\n"}"#);
    assert!(
        refused.contains("has not been viewed in this session"),
        "{refused}"
    );
    let answer = send(addr, "GET", "/v1/files/a.txt", b"");
    assert!(answer.ends_with("\r\n\r\nsecond\n"), "{answer}");
}

/// A directory's listing is bounded and paged as `view`'s is
/// (`docs/contract.md#files-api`): 1,000 entries at most, `next_offset`
/// where the rest starts, `offset` and `limit` as `view` takes them; a
/// bad one is refused by name.
#[test]
fn a_listing_is_bounded_and_paged_as_views_is() {
    let server = WsServer::start("127.0.0.1:0");
    let addr = server.addr();
    let dir = server.root().join("many");
    std::fs::create_dir(&dir).expect("dir");
    for n in 0..1_500 {
        std::fs::write(dir.join(format!("f{n:04}")), "x").expect("file");
    }
    let listing = |query: &str| -> serde_json::Value {
        let answer = send(addr, "GET", &format!("/v1/files/many{query}"), b"");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        let body = answer.split_once("\r\n\r\n").expect("a body").1;
        serde_json::from_str(body).expect("JSON")
    };
    let names = |page: &serde_json::Value| -> Vec<String> {
        page["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|e| e["name"].as_str().expect("a name").to_owned())
            .collect()
    };
    let first = listing("");
    assert_eq!(names(&first).len(), 1_000);
    assert_eq!(first["next_offset"], 1_001);
    let rest = listing("?offset=1001");
    let rest_names = names(&rest);
    assert_eq!(rest_names.len(), 500);
    assert_eq!(
        (rest_names[0].as_str(), rest.get("next_offset")),
        ("f1000", None)
    );
    let mut all = names(&first);
    all.extend(rest_names);
    let expected: Vec<String> = (0..1_500).map(|n| format!("f{n:04}")).collect();
    assert_eq!(
        all, expected,
        "every entry once, in order, across the pages"
    );
    let small = listing("?offset=3&limit=2");
    assert_eq!(
        (names(&small), &small["next_offset"]),
        (
            vec!["f0002".to_owned(), "f0003".to_owned()],
            &serde_json::Value::Null
        )
    );
    for bad in ["?limit=0", "?offset=x", "?offset=1501"] {
        let answer = send(addr, "GET", &format!("/v1/files/many{bad}"), b"");
        assert!(answer.starts_with("HTTP/1.1 403"), "{bad}: {answer}");
        assert!(answer.contains("INVALID_PARAM"), "{bad}: {answer}");
    }
}

/// A caller without the port's token is answered and let go
/// (`docs/contract.md#port-auth`): its connection is closed after the
/// 401, kept alive it would hold a connection slot; one with the token
/// is kept.
#[test]
fn a_caller_without_the_token_is_not_kept_alive() {
    use std::io::{Read as _, Write as _};

    let dir = tempfile::tempdir().expect("token");
    std::fs::write(dir.path().join("token"), TOKEN).expect("token");
    let token_file = dir.path().join("token").display().to_string();
    let server = WsServer::start_with("127.0.0.1:0", &["--ws-token-file", &token_file]);
    let ask = |auth: &str| -> (String, bool) {
        let mut stream = std::net::TcpStream::connect(server.addr()).expect("connect");
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .expect("timeout");
        write!(
            stream,
            "GET /v1/health HTTP/1.1\r\nHost: localhost\r\n{auth}\r\n"
        )
        .expect("send");
        let mut answer = Vec::new();
        let mut buf = [0u8; 4096];
        // Read until the server closes, or the answer is whole and the
        // connection stays.
        let closed = loop {
            match stream.read(&mut buf) {
                Ok(0) => break true,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
                Err(_) => break false,
            }
            let text = String::from_utf8_lossy(&answer);
            if text.contains("\r\n\r\n")
                && text.ends_with('}')
                && !text.contains("onnection: close")
            {
                break false;
            }
        };
        (String::from_utf8_lossy(&answer).into_owned(), closed)
    };
    let (answer, closed) = ask("");
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(closed, "kept alive: {answer}");
    let (answer, closed) = ask(&format!("Authorization: Bearer {TOKEN}\r\n"));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(!closed, "a caller with the token was let go: {answer}");
}

/// One WebSocket call on a connection of its own (a session), its answer.
fn one_call(addr: &str, request: &str) -> String {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}"))
            .await
            .expect("connect");
        ws.send(Message::text(request)).await.expect("send");
        let answer = tokio::time::timeout(std::time::Duration::from_secs(60), ws.next())
            .await
            .expect("an answer in time")
            .expect("a message")
            .expect("not an error");
        answer.into_text().expect("text").to_string()
    })
}

const TOKEN: &str = "3f1c9a7be25d4c08a6f4e1d2b7c9a0e53f1c9a7be25d4c08";
const QUIESCE_TOKEN: &str = "quiesce-0c7d2e9f41b8a653c0e7d2e9f41b8a65";

/// With `--ws-token-file` every request but the probes' needs the token
/// (`docs/contract.md#port-auth`): without it, or with another, `/v1/*`,
/// `/mcp`, `/quiesce`, `/resume` and the WebSocket handshake are 401 with
/// the bearer challenge and nothing is written or paused; with it each is
/// served; `/quiesce` and `/resume` take their own token where one is
/// given, and not the port's.
#[test]
fn the_port_asks_every_caller_for_the_operators_token() {
    let dir = tempfile::tempdir().expect("tokens");
    let (port, quiesce) = (dir.path().join("token"), dir.path().join("quiesce"));
    std::fs::write(&port, format!("{TOKEN}\n")).expect("token");
    std::fs::write(&quiesce, QUIESCE_TOKEN).expect("token");
    let server = WsServer::start_with(
        "127.0.0.1:0",
        &[
            "--ws-token-file",
            port.to_str().expect("UTF-8"),
            "--ws-quiesce-token-file",
            quiesce.to_str().expect("UTF-8"),
        ],
    );
    let addr = server.addr();
    let good = format!("Authorization: Bearer {TOKEN}\r\n");
    let mcp = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let mcp_headers = "Content-Type: application/json\r\nAccept: application/json, \
                       text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n";
    for wrong in [
        String::new(),
        format!("Authorization: Bearer {TOKEN}x\r\n"),
        format!("Authorization: Basic {TOKEN}\r\n"),
        format!("Authorization: Bearer {QUIESCE_TOKEN}\r\n"),
    ] {
        for (method, path, body, extra) in [
            ("PUT", "/v1/files/a.txt", &b"x\n"[..], ""),
            ("GET", "/v1/files/a.txt", &b""[..], ""),
            ("POST", "/mcp", &mcp[..], mcp_headers),
        ] {
            let answer = send_as(addr, &format!("{wrong}{extra}"), method, path, body);
            assert!(
                answer.starts_with("HTTP/1.1 401"),
                "{wrong:?} {path}: {answer}"
            );
            assert!(
                answer.contains("www-authenticate: Bearer realm=\"write-tool\""),
                "{answer}"
            );
        }
    }
    for wrong in [String::new(), good.clone()] {
        for path in ["/quiesce", "/resume"] {
            let answer = send_as(addr, &wrong, "POST", path, b"");
            assert!(
                answer.starts_with("HTTP/1.1 401"),
                "{wrong:?} {path}: {answer}"
            );
        }
    }
    let handshake = "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: \
                     Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
                     Sec-WebSocket-Version: 13\r\n";
    for wrong in [
        "",
        "Authorization: Basic x\r\n",
        "Authorization: Bearer wrong\r\n",
    ] {
        let answer = http(addr, &format!("{handshake}{wrong}\r\n"));
        assert!(answer.starts_with("HTTP/1.1 401"), "{wrong:?}: {answer}");
    }
    let answer = http(addr, &format!("{handshake}{good}\r\n"));
    assert!(answer.starts_with("HTTP/1.1 101"), "{answer}");
    // Nothing was written or paused; the probes stay open.
    assert!(send(addr, "GET", "/healthz", b"").starts_with("HTTP/1.1 200"));
    let answer = send_as(addr, &good, "PUT", "/v1/files/a.txt", b"x\n");
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    let answer = send_as(addr, &format!("{good}{mcp_headers}"), "POST", "/mcp", mcp);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"tools\""), "{answer}");
    let quiesce = format!("Authorization: Bearer {QUIESCE_TOKEN}\r\n");
    for path in ["/quiesce", "/resume"] {
        let answer = send_as(addr, &quiesce, "POST", path, b"");
        assert!(answer.starts_with("HTTP/1.1 200"), "{path}: {answer}");
    }
}

const METRICS: &str = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// A `PUT` whose client goes away before its answer is cancelled, as an
/// MCP call is (`docs/contract.md#files-api`): the call stops at its
/// commit point and nothing is written; one whose client stays lands.
/// The write is kept busy by its diff (lines a diff cannot match up
/// quickly; `--diff-timeout-ms 64000` gives a text at least 1/32 of it,
/// two seconds) and the server's per-call log says when it ended.
#[test]
fn a_put_whose_client_left_writes_nothing() {
    use std::io::Write as _;

    let root = tempfile::tempdir().expect("root");
    let lines = crate::cli::slow_lines;
    let old = lines(7);
    std::fs::write(root.path().join("slow.txt"), &old).expect("old");
    let args: Vec<String> = [
        "--root",
        &root.path().display().to_string(),
        "--diff-timeout-ms",
        "64000",
        "serve",
        "--ws",
        "127.0.0.1:0",
        "--metrics",
    ]
    .map(str::to_owned)
    .into();
    let path = root.path().to_owned();
    let mut server =
        WsServer::run_program(bin_str(), &args, root, &[("RUST_LOG", "write_tool=info")]);
    let addr = server.addr().to_owned();
    let body = lines(11);
    let head = format!(
        "PUT /v1/files/slow.txt HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut gone = std::net::TcpStream::connect(&addr).expect("connect");
    gone.write_all(head.as_bytes()).expect("head");
    gone.write_all(body.as_bytes()).expect("body");
    // Gone once the call runs (the metrics count it in flight): a client
    // gone before it starts leaves no call to cancel.
    let started = std::time::Instant::now();
    while !http(&addr, METRICS).contains("calls_in_flight{surface=\"files\"} 1") {
        assert!(started.elapsed().as_secs() < 30, "the call never started");
    }
    drop(gone);
    // The call's log line, read on a thread of its own so that a server
    // that never logs it fails the test instead of hanging it.
    let (told, ended) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        loop {
            let line = server.next_line();
            if line.is_empty() || line.contains("slow.txt") {
                let _ = told.send(line);
                return server;
            }
        }
    });
    let ended = ended
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the call ended in time");
    let _server = reader.join().expect("the reader");
    assert!(
        ended.contains("status=\"error\"") && ended.contains("code=\"EXECUTION_ERROR\""),
        "not cancelled: {ended}"
    );
    assert!(
        std::fs::read_to_string(path.join("slow.txt")).expect("read") == old,
        "the write of a client that left landed"
    );
    let answer = send(&addr, "PUT", "/v1/files/slow.txt", body.as_bytes());
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    assert!(std::fs::read_to_string(path.join("slow.txt")).expect("read") == body);
}

/// `DELETE` of a link removes the link, as `rm` does
/// (`docs/contract.md#files-api`): what it leads to stays; a path through
/// a linked directory deletes the file there, as `rm` would; and the
/// link's removal is a change the journal takes back.
#[test]
fn a_delete_of_a_link_removes_the_link() {
    let server = WsServer::start_with("127.0.0.1:0", &["--allow-delete"]);
    let addr = server.addr();
    let root = server.root();
    std::fs::create_dir(root.join("real")).expect("dir");
    std::fs::write(root.join("real/x.txt"), "x\n").expect("x");
    std::fs::write(root.join("real/y.txt"), "y\n").expect("y");
    std::os::unix::fs::symlink("x.txt", root.join("real/link.txt")).expect("link");
    std::os::unix::fs::symlink("real", root.join("alias")).expect("alias");
    let answer = send(addr, "DELETE", "/v1/files/real%2Flink.txt", b"");
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    assert!(root.join("real/link.txt").symlink_metadata().is_err());
    assert_eq!(
        std::fs::read_to_string(root.join("real/x.txt")).expect("x"),
        "x\n"
    );
    let answer = send(addr, "DELETE", "/v1/files/alias%2Fy.txt", b"");
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    assert!(!root.join("real/y.txt").exists());
    assert!(
        root.join("alias").symlink_metadata().is_ok(),
        "the linked directory stays"
    );
    // Undone (the file's removal first, then the link's), both are back.
    for _ in 0..2 {
        let undo = Command::new(bin_str())
            .args(["--root", &root.display().to_string(), "undo"])
            .output()
            .expect("undo");
        assert!(undo.status.success(), "{undo:?}");
    }
    assert_eq!(
        std::fs::read_link(root.join("real/link.txt")).expect("the link again"),
        std::path::Path::new("x.txt")
    );
    assert_eq!(
        std::fs::read_to_string(root.join("real/y.txt")).expect("y"),
        "y\n"
    );
    // A name with blanks at its ends, which a patch would trim, is not the
    // file without them; an absolute path is one inside the root or none.
    for name in [
        "%20real%2Fy.txt",
        "real%2Fy.txt%20",
        "%2Felsewhere%2Freal%2Fy.txt",
    ] {
        let answer = send(addr, "DELETE", &format!("/v1/files/{name}"), b"");
        assert!(answer.starts_with("HTTP/1.1 403"), "{name}: {answer}");
        assert!(root.join("real/y.txt").exists(), "{name}");
    }
    let absolute = root
        .join("real/y.txt")
        .display()
        .to_string()
        .replace('/', "%2F");
    let answer = send(addr, "DELETE", &format!("/v1/files/{absolute}"), b"");
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    assert!(!root.join("real/y.txt").exists());
}

/// A `PUT` or `DELETE` resent with its `Idempotency-Key` header
/// (`docs/contract.md#idempotency`) answers as the first did and changes
/// nothing: the file a person changed since is left as the person left
/// it, a deleted file is not an error the second time; the key with
/// another body is refused, and a key that is not text is refused before
/// anything is done.
#[test]
fn a_resent_put_or_delete_with_its_key_changes_nothing() {
    let server = WsServer::start_with("127.0.0.1:0", &["--allow-delete"]);
    let addr = server.addr();
    let root = server.root();
    let put = |key: &str, body: &str| {
        send_as(
            addr,
            &format!("Idempotency-Key: {key}\r\n"),
            "PUT",
            "/v1/files/a.txt",
            body.as_bytes(),
        )
    };
    assert!(put("put-1", "first\n").starts_with("HTTP/1.1 204"));
    std::fs::write(root.join("a.txt"), "a person's\n").expect("change");
    let again = put("put-1", "first\n");
    assert!(again.starts_with("HTTP/1.1 204"), "{again}");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).expect("a"),
        "a person's\n"
    );
    let other = put("put-1", "other\n");
    assert!(other.starts_with("HTTP/1.1 409"), "{other}");
    assert!(other.contains("a key names one request"), "{other}");
    let bad = send_as(
        addr,
        "Idempotency-Key: caf\u{e9}\r\n",
        "PUT",
        "/v1/files/b.txt",
        b"b\n",
    );
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
    assert!(!root.join("b.txt").exists());
    for _ in 0..2 {
        let answer = send_as(
            addr,
            "Idempotency-Key: delete-1\r\n",
            "DELETE",
            "/v1/files/a.txt",
            b"",
        );
        assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
        assert!(!root.join("a.txt").exists());
    }
    let unkeyed = send(addr, "DELETE", "/v1/files/a.txt", b"");
    assert!(unkeyed.starts_with("HTTP/1.1 404"), "{unkeyed}");
}
