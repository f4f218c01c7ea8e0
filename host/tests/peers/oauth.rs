//! The port as an OAuth resource server (`docs/contract.md#port-auth`),
//! with tokens minted outside it (`oauth_peer.py`: `cryptography` signs,
//! the MCP Python SDK discovers).

use std::process::Command;

use crate::cli::{WsServer, http};
use crate::{python, run, workspace};

const ISSUER: &str = "https://auth.example";

/// An Ed25519 public key as a JWK.
const ED: &str =
    r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"ed"}"#;

/// A port on loopback nobody listens on now: the resource identifier
/// names it before the server starts.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// A `PUT` of `name` with `token`: the answer.
fn put(addr: &str, token: Option<&str>, name: &str) -> String {
    let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
    http(
        addr,
        &format!(
            "PUT /v1/files/{name} HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Length: 3\r\n\
             Connection: close\r\n\r\nok\n"
        ),
    )
}

const PORT_TOKEN: &str = "c4a1f09e7b3d2c58a6e1f0d9b7c3a2e5c4a1f09e7b3d2c58";

/// An authorization server's keys and tokens (`oauth_peer.py mint`), for
/// a resource on a free loopback port.
struct Issued {
    keys: tempfile::TempDir,
    port: u16,
    resource: String,
    tokens: serde_json::Value,
}

impl Issued {
    fn new() -> Issued {
        let keys = tempfile::tempdir().expect("keys");
        let port = free_port();
        let resource = format!("http://127.0.0.1:{port}/mcp");
        let minted = run(Command::new(python()).arg(script()).args([
            "mint",
            &keys.path().display().to_string(),
            ISSUER,
            &resource,
        ]));
        let tokens = serde_json::from_slice(&minted.stdout).expect("tokens");
        std::fs::write(keys.path().join("port-token"), PORT_TOKEN).expect("token");
        Issued {
            keys,
            port,
            resource,
            tokens,
        }
    }

    fn token(&self, name: &str) -> Option<&str> {
        Some(self.tokens[name].as_str().expect("a token"))
    }

    /// `serve --ws` on `listen` as the resource server, with `more` flags;
    /// the server and its root.
    fn serve(&self, listen: &str, more: &[&str]) -> (WsServer, std::path::PathBuf) {
        let root = tempfile::tempdir().expect("root");
        let path = root.path().to_owned();
        let keys = self.keys.path();
        let mut args: Vec<String> = [
            "--root",
            &path.display().to_string(),
            "serve",
            "--ws",
            listen,
            "--oauth-issuer",
            ISSUER,
            "--oauth-resource",
            &self.resource,
            "--oauth-jwks-file",
            &keys.join("jwks.json").display().to_string(),
        ]
        .map(str::to_owned)
        .into();
        args.extend(more.iter().map(|m| (*m).to_owned()));
        (WsServer::run(&args, root), path)
    }
}

/// A WebSocket session opened with `token`: one call answered, then how
/// the server ended it.
fn websocket_session(addr: &str, token: &str) -> String {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut request = format!("ws://{addr}")
            .into_client_request()
            .expect("request");
        request.headers_mut().insert(
            "authorization",
            format!("Bearer {token}").parse().expect("a header"),
        );
        let (mut ws, _) = tokio_tungstenite::connect_async(request)
            .await
            .expect("connect");
        ws.send(Message::text(r#"{"path": "ws.txt", "content": "w\n"}"#))
            .await
            .expect("send");
        let wait = std::time::Duration::from_secs(60);
        let answer = tokio::time::timeout(wait, ws.next())
            .await
            .expect("in time");
        let answer = answer.expect("a message").expect("not an error");
        assert!(
            answer.to_text().expect("text").contains("success"),
            "{answer}"
        );
        let end = tokio::time::timeout(wait, ws.next())
            .await
            .expect("closed in time");
        format!("{end:?}")
    })
}

fn script() -> std::path::PathBuf {
    workspace().join("host/tests/peers/oauth_peer.py")
}

/// With `--oauth-issuer`, the port takes the authorization server's
/// access tokens — signed by a key of its JWKS (Ed25519, RSA and EC
/// alike), issued by it, for this resource, in their time, with the
/// scope required — and refuses every other kind with 401 and the
/// challenge naming the metadata (403 `insufficient_scope` for a missing
/// scope), writing nothing; the operator's token still passes.
#[test]
fn access_tokens_of_the_authorization_server_and_no_others_pass() {
    let issued = Issued::new();
    let token_file = issued.keys.path().join("port-token").display().to_string();
    let (server, written) = issued.serve(
        &format!("127.0.0.1:{}", issued.port),
        &["--oauth-scope", "files", "--ws-token-file", &token_file],
    );
    let addr = server.addr().to_owned();
    for good in [
        "good_ed",
        "good_rs",
        "good_ec",
        "good_aud_list",
        "scp_array",
        "typ_jwt",
    ] {
        let answer = put(&addr, issued.token(good), &format!("{good}.txt"));
        assert!(answer.starts_with("HTTP/1.1 204"), "{good}: {answer}");
    }
    let answer = put(&addr, Some(PORT_TOKEN), "port.txt");
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    let metadata = format!(
        "resource_metadata=\"http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp\"",
        issued.port
    );
    let answer = put(&addr, None, "none.txt");
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(answer.contains(&metadata), "{answer}");
    for bad in [
        "expired",
        "not_yet",
        "other_issuer",
        "other_audience",
        "no_exp",
        "other_key",
        "unknown_kid",
        "tampered",
        "alg_none",
        "hs256_confusion",
        "alg_mismatch",
        "typ_id_token",
        "no_kid",
        "alg_not_the_keys",
        "hs256_oct",
    ] {
        let answer = put(&addr, issued.token(bad), &format!("{bad}.txt"));
        assert!(answer.starts_with("HTTP/1.1 401"), "{bad}: {answer}");
        assert!(
            answer.contains("error=\"invalid_token\""),
            "{bad}: {answer}"
        );
        assert!(answer.contains(&metadata), "{bad}: {answer}");
    }
    let answer = put(&addr, issued.token("alg_not_the_keys"), "x.txt");
    assert!(
        answer.contains("an algorithm its key does not take"),
        "{answer}"
    );
    for short in ["no_scope", "scope_prefix", "scp_prefix"] {
        let answer = put(&addr, issued.token(short), &format!("{short}.txt"));
        assert!(answer.starts_with("HTTP/1.1 403"), "{short}: {answer}");
        assert!(
            answer.contains("error=\"insufficient_scope\", scope=\"files\""),
            "{short}: {answer}"
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(&written)
        .expect("root")
        .map(|e| e.expect("entry").file_name().into_string().expect("name"))
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "good_aud_list.txt",
            "good_ec.txt",
            "good_ed.txt",
            "good_rs.txt",
            "port.txt",
            "scp_array.txt",
            "typ_jwt.txt"
        ]
    );
}

/// The metadata is open to anyone (no token), at both of RFC 9728's
/// names, on a connection whose first request asks for it.
#[test]
fn the_metadata_is_open_on_a_connection_of_its_own() {
    let issued = Issued::new();
    let token_file = issued.keys.path().join("port-token").display().to_string();
    let (server, _) = issued.serve(
        &format!("127.0.0.1:{}", issued.port),
        &["--ws-token-file", &token_file],
    );
    let addr = server.addr().to_owned();
    for at in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let answer = http(
            &addr,
            &format!("GET {at} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
        );
        assert!(answer.starts_with("HTTP/1.1 200"), "{at}: {answer}");
        let body = answer.split_once("\r\n\r\n").expect("a body").1;
        let doc: serde_json::Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(doc["resource"], issued.resource.as_str(), "{at}");
        assert_eq!(
            doc["authorization_servers"],
            serde_json::json!([ISSUER]),
            "{at}"
        );
    }
}

/// An MCP call with an access token is served; without one, the MCP
/// Python SDK finds the metadata as its discovery does (the challenge's
/// `resource_metadata`, then both well-known names); beyond loopback,
/// OAuth alone is enough to start.
#[test]
fn an_mcp_client_finds_the_authorization_server_and_calls_with_its_token() {
    let issued = Issued::new();
    let (server, written) = issued.serve(&format!("127.0.0.1:{}", issued.port), &[]);
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Write","arguments":{"path":"mcp.txt","content":"m\n"}}}"#;
    let answer = http(
        server.addr(),
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\nConnection: close\r\n\
             \r\n{call}",
            issued.token("good_ed").expect("a token"),
            call.len()
        ),
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(
        std::fs::read_to_string(written.join("mcp.txt")).expect("mcp"),
        "m\n"
    );
    let output = run(Command::new(python())
        .arg(script())
        .args(["discover", &issued.resource]));
    assert!(String::from_utf8_lossy(&output.stdout).contains("oauth discover: ok"));
    // A WebSocket session lasts as long as its token: one that expires
    // six seconds after it is minted is answered, then closed.
    let short = run(Command::new(python()).arg(script()).args([
        "short",
        &issued.keys.path().display().to_string(),
        ISSUER,
        &issued.resource,
        "6",
    ]));
    let short = String::from_utf8(short.stdout).expect("a token");
    let closed = websocket_session(server.addr(), short.trim());
    assert!(closed.contains("the access token expired"), "{closed}");
    drop(server);
    let (server, _) = issued.serve("0.0.0.0:0", &["--ws-allow-remote"]);
    assert!(server.addr().starts_with("0.0.0.0:"), "{}", server.addr());
}

/// A JWKS with nothing this server takes (a shared secret only), or an
/// issuer that is no URL, is refused at start, with why.
#[test]
fn a_configuration_the_resource_server_cannot_use_is_refused_at_start() {
    let keys = tempfile::tempdir().expect("keys");
    let root = tempfile::tempdir().expect("root");
    let start = |jwks: &str, issuer: &str, more: &[&str]| {
        let file = keys.path().join("jwks.json");
        std::fs::write(&file, jwks).expect("jwks");
        let output = Command::new(crate::bin_str())
            .args(["--root", &root.path().display().to_string()])
            .args(["serve", "--ws", "127.0.0.1:0", "--oauth-issuer", issuer])
            .args([
                "--oauth-resource",
                "https://x.example/mcp",
                "--oauth-jwks-file",
            ])
            .arg(&file)
            .args(more)
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let secret = r#"{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"s"}]}"#;
    let usable = format!(r#"{{"keys":[{ED}]}}"#);
    let why = start(secret, ISSUER, &[]);
    assert!(why.contains("never a shared secret"), "{why}");
    let why = start(&usable, "auth.example", &[]);
    assert!(why.contains("the OAuth issuer"), "{why}");
    for scope in ["a\"b", "", "a b"] {
        let why = start(&usable, ISSUER, &["--oauth-scope", scope]);
        assert!(why.contains("is not a scope"), "{scope:?}: {why}");
    }
}

/// The sum of the metric `name`'s samples, from `GET /metrics`.
fn metric(addr: &str, name: &str) -> u64 {
    let answer = http(
        addr,
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    answer
        .lines()
        .filter(|line| line.starts_with(&format!("{name}{{")))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// Where the port takes OAuth access tokens, each subject holds at most
/// its share of the slots (`docs/contract.md#mcp-http`): one subject's
/// fourteen slow writes, each on a connection of its own, run six at a
/// time with eight waiting behind its share — not in the slots' queue —
/// so another subject's `PUT` is answered before seven of them end, as
/// it could not be if they held all eight slots and queued before it.
/// Each slow write is kept busy by its diff.
#[test]
fn one_subjects_calls_leave_slots_for_another() {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

    const SLOW: usize = 14;
    let issued = Issued::new();
    let (server, root) = issued.serve(
        &format!("127.0.0.1:{}", issued.port),
        &["--diff-timeout-ms", "16000", "--metrics"],
    );
    let addr = server.addr().to_owned();
    let (old, new) = (crate::cli::slow_lines(7), crate::cli::slow_lines(11));
    for n in 0..SLOW {
        std::fs::write(root.join(format!("slow{n}.txt")), &old).expect("old");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let token = issued.token("good_ed").expect("a token").to_owned();
    let slow: Vec<_> = (0..SLOW)
        .map(|n| {
            let (url, token) = (format!("ws://{addr}"), token.clone());
            let request = serde_json::json!({"path": format!("slow{n}.txt"), "content": new});
            runtime.spawn(async move {
                let mut opening = url.into_client_request().expect("request");
                opening.headers_mut().insert(
                    "authorization",
                    format!("Bearer {token}").parse().expect("a header"),
                );
                let (mut ws, _) = tokio_tungstenite::connect_async(opening)
                    .await
                    .expect("connect");
                ws.send(Message::text(request.to_string()))
                    .await
                    .expect("send");
                let wait = std::time::Duration::from_secs(300);
                let answer = tokio::time::timeout(wait, ws.next()).await;
                answer
                    .expect("in time")
                    .expect("a message")
                    .expect("not an error")
            })
        })
        .collect();
    // Every slow write read and waiting or running before the other
    // subject asks.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let (running, waiting) = loop {
        let running = metric(&addr, "write_tool_calls_in_flight");
        let waiting = metric(&addr, "write_tool_calls_waiting");
        if running + waiting == SLOW as u64 {
            break (running, waiting);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{running} + {waiting}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let answer = put(&addr, issued.token("other_subject"), "quick.txt");
    let done = (0..SLOW)
        .filter(|n| {
            std::fs::read(root.join(format!("slow{n}.txt"))).expect("slow") != old.as_bytes()
        })
        .count();
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    assert!(
        running <= 6 && waiting >= 8,
        "{running} running, {waiting} waiting"
    );
    assert!(
        done < 7,
        "the other subject waited for {done} of the slow writes"
    );
    for answer in slow {
        let answer = runtime.block_on(answer).expect("the client");
        assert!(
            answer
                .to_text()
                .expect("text")
                .contains(r#""applied":true"#),
            "{answer}"
        );
    }
    for n in 0..SLOW {
        assert!(std::fs::read(root.join(format!("slow{n}.txt"))).expect("slow") == new.as_bytes());
    }
}
