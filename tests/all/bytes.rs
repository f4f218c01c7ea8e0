//! A write's content as bytes (`content_base64`, `docs/contract.md#bytes`):
//! written exactly as given, whatever they are, through every other stage
//! of a write; refused, changing nothing, where it is malformed or asks to
//! keep a format.

use base64::Engine as _;
use serde_json::json;

use crate::support::Project;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn bytes_are_written_as_given_and_only_text_is_diffed() {
    let p = Project::journaled();
    p.write("a.txt", "line one\r\nline two\r\n");
    // UTF-8 with LF over a CRLF file: kept as given, not given CRLF.
    let env = p.call(json!({"path": "a.txt", "content_base64": b64(b"line one\nline 2\n")}));
    env.assert_status("success");
    assert_eq!(p.read("a.txt"), b"line one\nline 2\n");
    assert!(env.preview().contains("+line 2\n"), "{}", env.preview());
    assert_eq!(env.data().encoding, "utf-8");

    let png: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff";
    let env = p.call(json!({"path": "a.txt", "content_base64": b64(png), "dry_run": true}));
    env.assert_status("partial");
    assert_eq!(
        p.read("a.txt"),
        b"line one\nline 2\n",
        "a dry run writes nothing"
    );
    let env = p.call(json!({"path": "a.txt", "content_base64": b64(png)}));
    env.assert_status("success");
    assert_eq!(p.read("a.txt"), png);
    assert_eq!(env.data().encoding, "binary");
    assert!(!env.data().bom);
    assert_eq!(env.preview(), "", "bytes that are not text are not diffed");
    assert!(
        env.text.contains("not UTF-8 text: written byte for byte"),
        "{}",
        env.text
    );
    let change_id = env.data().change_id.clone().expect("journaled");

    // Again: the same bytes, nothing to write.
    let env = p.call(json!({"path": "a.txt", "content_base64": b64(png)}));
    assert!(env.text.contains("content identical"), "{}", env.text);

    // windows-1252 bytes and a UTF-8 byte-order mark, each as sent.
    for (bytes, encoding) in [
        (&b"caf\xe9\r\n"[..], "binary"),
        (b"\xef\xbb\xbfbom\n", "utf-8"),
        (b"\x80", "binary"),
    ] {
        let env = p.call(json!({"path": "new.bin", "content_base64": b64(bytes)}));
        assert_ne!(env.status, "error", "{env:#?}");
        assert_eq!(env.data().encoding, encoding);
        assert_eq!(p.read("new.bin"), bytes);
    }
    assert!(
        p.call(json!({"path": "b.txt", "content_base64": b64(b"\xef\xbb\xbfb\n")}))
            .data()
            .bom
    );

    // The journal kept what the binary write replaced.
    let env = p.call(json!({"change_id": change_id}));
    env.assert_status("success");
    assert_eq!(p.read("a.txt"), b"line one\nline 2\n");
}

#[test]
fn malformed_bytes_or_a_format_to_keep_are_refused_and_change_nothing() {
    let p = Project::new();
    p.write("a.txt", "kept\n");
    let png = b64(b"\x89PNG\x00");
    for (arguments, says) in [
        (
            json!({"path": "a.txt", "content_base64": png, "content": "x"}),
            "not both",
        ),
        (
            json!({"path": "a.txt", "content_base64": "not base64!"}),
            "not standard base64",
        ),
        (
            json!({"path": "a.txt", "content_base64": "QUJD="}),
            "not standard base64",
        ),
        (
            json!({"path": "a.txt", "content_base64": 7}),
            "content_base64",
        ),
        (
            json!({"path": "a.txt", "content_base64": png, "keep_format": true}),
            "byte for byte",
        ),
        (
            json!({"path": "a.txt", "content_base64": png, "encoding": "utf-8"}),
            "byte for byte",
        ),
        (json!({"path": "a.txt", "content_base64": ""}), "empty"),
        (
            json!({"path": ".git/config", "content_base64": png}),
            "protected",
        ),
    ] {
        let env = p.call(arguments.clone());
        assert_eq!(env.status, "error", "{arguments}");
        assert!(env.text.contains(says), "{arguments}: {}", env.text);
        assert_eq!(p.read("a.txt"), b"kept\n");
        assert!(!p.exists(".git/config"));
    }
}

/// Bytes are not text a merge can take: made on a version a view saw and
/// that has changed since, they are refused and the file is left as it
/// is, where the same change as `content` is merged.
#[test]
fn bytes_on_a_stale_base_are_refused_not_merged() {
    let p = Project::journaled();
    p.write("a.txt", "one\ntwo\nthree\n");
    let seen = p.call(json!({"name": "view", "arguments": {"path": "a.txt"}}));
    let base = seen.data().view.as_ref().expect("a view").base.clone();
    let base = base.expect("a base");
    p.write("a.txt", "one\ntwo\nthree\nfour\n");
    let change = b"one\n2\nthree\n";
    let env = p.call(json!({"path": "a.txt", "content_base64": b64(change), "base": base}));
    env.assert_error("CONFLICT");
    // Refused as stale, not tried as a merge (whose conflict it would be).
    assert!(
        env.text.contains("is not the version the base names"),
        "{}",
        env.text
    );
    assert_eq!(p.read("a.txt"), b"one\ntwo\nthree\nfour\n");
    let text = String::from_utf8_lossy(change);
    let env = p.call(json!({"path": "a.txt", "content": text, "base": base}));
    env.assert_status("success");
    assert_eq!(p.read("a.txt"), b"one\n2\nthree\nfour\n");
}

/// Nor do bytes go over a change made since the session's view, which a
/// text write would be merged onto: refused, the other change kept.
#[test]
fn bytes_after_a_change_since_the_sessions_view_are_refused() {
    use write_tool::Session;
    use write_tool_test_support::decode;

    let p = Project::journaled();
    p.write("a.txt", "l1\nl2\nl3\nl4\n");
    let session = Session::new();
    let call = |arguments: serde_json::Value| {
        decode(&crate::support::tool().call_in(p.root(), &arguments.to_string(), &session, None))
    };
    call(json!({"name": "view", "arguments": {"path": "a.txt"}})).assert_status("success");
    p.write("a.txt", "l1\nl2\nl3\nl4 a person's\n");
    let env = call(json!({"path": "a.txt", "content_base64": b64(b"L1\nl2\nl3\nl4\n")}));
    env.assert_error("CONFLICT");
    assert_eq!(p.read("a.txt"), b"l1\nl2\nl3\nl4 a person's\n");
    // Viewed again, the file is the session's version: written.
    call(json!({"name": "view", "arguments": {"path": "a.txt"}})).assert_status("success");
    let env = call(json!({"path": "a.txt", "content_base64": b64(b"L1\n")}));
    env.assert_status("success");
    assert_eq!(p.read("a.txt"), b"L1\n");
}

/// `write_many` writes text: an item with bytes is refused, not written
/// as its `content` beside them.
#[test]
fn write_many_refuses_bytes_and_writes_nothing() {
    let p = Project::new();
    let env = p.call(json!({"writes": [
        {"path": "a.txt", "content": "a\n"},
        {"path": "b.bin", "content": "b", "content_base64": b64(b"\xff")},
    ]}));
    env.assert_error("INVALID_PARAM");
    assert!(
        env.text.contains("writes[1] has 'content_base64'"),
        "{}",
        env.text
    );
    assert!(!p.exists("a.txt") && !p.exists("b.bin"));
}

/// `create_only` holds for bytes as for text: an existing file is refused
/// and keeps its bytes. A file with other hard links is replaced without
/// being read, as a text write replaces it: its other name keeps the old
/// bytes, and nothing of them reaches the answer.
#[test]
fn bytes_keep_create_only_and_leave_a_hard_links_other_name_alone() {
    let p = Project::journaled();
    p.write("kept.bin", b"\x00secret\xff");
    let before = p.tree();
    let env = p.call(
        json!({"path": "kept.bin", "content_base64": b64(b"\x01new"),
        "create_only": true}),
    );
    env.assert_error("CONFLICT");
    assert_eq!(p.tree(), before, "a refused create changes nothing");
    let made = p.call(
        json!({"path": "fresh.bin", "content_base64": b64(b"\x01new"),
        "create_only": true}),
    );
    made.assert_status("success");
    assert_eq!(p.read("fresh.bin"), b"\x01new");

    std::fs::hard_link(p.path("kept.bin"), p.path("other.bin")).expect("hard link");
    let env = p.call(json!({"path": "kept.bin", "content_base64": b64(b"\x02bytes")}));
    assert_ne!(env.status, "error", "{env:#?}");
    assert_eq!(p.read("kept.bin"), b"\x02bytes");
    assert_eq!(
        p.read("other.bin"),
        b"\x00secret\xff",
        "the other name keeps its bytes"
    );
    assert!(!env.text.contains("secret"), "{}", env.text);
    assert!(!env.preview().contains("secret"), "{}", env.preview());
}
