//! The sandbox file API on the WebSocket port (`docs/contract.md#files-api`)
//! as a program drives it: with the host's settings a model's session
//! would have, where they apply to a client that keeps no view.

use crate::cli::{WsServer, http};

/// One request with `body`, answered on a fresh connection.
fn send(addr: &str, method: &str, path: &str, body: &[u8]) -> String {
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\nConnection: \
         close\r\n\r\n",
        body.len()
    );
    let mut request = head.into_bytes();
    request.extend_from_slice(body);
    http(addr, &String::from_utf8_lossy(&request))
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
