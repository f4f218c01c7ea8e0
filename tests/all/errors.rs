use serde_json::json;

use crate::support::Project;

/// Raw inputs that are not valid calls, with the start of the message each
/// must get. Every one is `INVALID_PARAM` and changes nothing.
const BAD_INPUT: &[(&str, &str)] = &[
    ("", "Invalid JSON arguments:"),
    ("   ", "Invalid JSON arguments:"),
    ("{", "Invalid JSON arguments:"),
    ("not json", "Invalid JSON arguments:"),
    (
        r#"{"path":"a.txt","content":"x"} trailing"#,
        "Invalid JSON arguments: trailing",
    ),
    (
        r#"{"path":"a.txt","content":"x"}{}"#,
        "Invalid JSON arguments: trailing",
    ),
    (
        r#"{"path":"a.txt","path":"b.txt","content":"x"}"#,
        "Invalid JSON arguments: duplicate key 'path'",
    ),
    (
        r#"{"path":"a.txt","content":"\ud800"}"#,
        "Invalid JSON arguments:",
    ),
    (
        r#"{"path":"a.txt","content":"\udc00 low"}"#,
        "Invalid JSON arguments:",
    ),
    ("[]", "Arguments must be a JSON object."),
    ("\"a string\"", "Arguments must be a JSON object."),
    ("null", "Arguments must be a JSON object."),
    (r#"{"content":"x"}"#, "Missing required parameter 'path'."),
    (
        r#"{"path":"a.txt"}"#,
        "Missing required parameter 'content'.",
    ),
    (
        r#"{"path":null,"content":"x"}"#,
        "Parameter 'path' must be a string.",
    ),
    (
        r#"{"path":["a"],"content":"x"}"#,
        "Parameter 'path' must be a string.",
    ),
    (
        r#"{"path":"a.txt","content":42}"#,
        "Parameter 'content' must be a string.",
    ),
    (
        r#"{"path":"a.txt","content":"x","dry_run":"true"}"#,
        "Parameter 'dry_run' must be a boolean.",
    ),
    (
        r#"{"path":"a.txt","content":"x","dry_run":1}"#,
        "Parameter 'dry_run' must be a boolean.",
    ),
    (
        r#"{"path":"a.txt","content":"x","expected_mtime_ms":"1"}"#,
        "Parameter 'expected_mtime_ms' must be an integer.",
    ),
    (
        r#"{"path":"a.txt","content":"x","expected_size_bytes":-1}"#,
        "Parameter 'expected_size_bytes' must be a non-negative integer.",
    ),
    (
        r#"{"path":"a.txt","content":"x","expected_sha256":"zz"}"#,
        "Parameter 'expected_sha256' must be a 64-digit hex string.",
    ),
    (
        r#"{"path":"a.txt","content":""}"#,
        "Content is empty; this tool does not write empty files (a host setting). Nothing was written.",
    ),
    (r#"{"path":"","content":"x"}"#, "Path cannot be empty."),
    (
        r#"{"path":"a\u0000b","content":"x"}"#,
        "Invalid path: control characters",
    ),
    (
        r#"{"path":"a\\b","content":"x"}"#,
        "Invalid path: Use '/' as the path separator.",
    ),
    (
        r#"{"path":"/etc/passwd","content":"x"}"#,
        "Absolute path not allowed. Use relative path.",
    ),
    (
        r#"{"name":"Delete","arguments":{"path":"a.txt","content":"x"}}"#,
        "Unknown tool 'Delete'.",
    ),
    (
        r#"{"name":"Write","arguments":42}"#,
        "Tool call 'arguments' must be a JSON object or a string holding one.",
    ),
    (
        r#"{"name":"Write","arguments":"{not json"}"#,
        "Invalid JSON arguments:",
    ),
    (
        r#"{"arguments":{"path":"a.txt","content":"x"}}"#,
        "Tool call is missing 'name'.",
    ),
];

#[test]
fn bad_input_is_invalid_param_and_changes_nothing() {
    let p = Project::new();
    p.write("a.txt", "original\n");
    let before = p.tree();
    for (input, message) in BAD_INPUT {
        let env = p.call_raw(input);
        env.assert_error("INVALID_PARAM");
        assert!(env.text.starts_with(message), "{input:?}: {:?}", env.text);
        assert!(env.context.path_resolved.is_none(), "{input:?}");
        assert_eq!(p.tree(), before, "{input:?} changed the disk");
    }
}

#[test]
fn params_input_echoes_the_arguments_even_on_error() {
    let p = Project::new();
    let env = p.call(json!({"path": "", "content": "x", "extra": {"nested": true}}));
    env.assert_error("INVALID_PARAM");
    assert_eq!(
        env.context.params_input,
        json!({"path": "", "content": "x", "extra": {"nested": true}})
    );
    let env = p.call_raw("not json");
    assert_eq!(env.context.params_input, json!({}));
}

#[test]
fn unknown_fields_are_ignored_and_echoed() {
    let p = Project::new();
    let env = p.call(json!({"path": "u.txt", "content": "x", "mode": "append", "why": 1}));
    env.assert_status("success");
    assert_eq!(
        env.context.params_input,
        json!({"path": "u.txt", "content": "x", "mode": "append", "why": 1})
    );
    assert_eq!(p.read_string("u.txt"), "x");
}

#[test]
fn long_content_is_elided_in_params_input() {
    let p = Project::new();
    let content = "y".repeat(5000);
    let env = p.put("big.txt", &content);
    assert_eq!(env.context.params_input["content"], "[5000 bytes elided]");
    let env = p.put("small.txt", &"z".repeat(1024));
    assert_eq!(
        env.context.params_input["content"].as_str().map(str::len),
        Some(1024)
    );
}

#[test]
fn is_directory_for_directories_and_the_root() {
    let p = Project::new();
    p.mkdir("sub");
    p.mkdir("real");
    p.symlink("real", "dirlink");
    for path in ["sub", "sub/", ".", "./", "a/..", "dirlink"] {
        let before = p.tree();
        let env = p.put(path, "x");
        env.assert_error("IS_DIRECTORY");
        assert_eq!(env.text, "Target path is a directory.");
        assert_eq!(p.tree(), before, "{path}");
    }
}

/// A path ending in `/` names a directory: what is really there decides
/// the answer, and nothing is created either way.
#[test]
fn a_final_slash_is_answered_by_what_is_there() {
    let p = Project::new();
    p.write("file.txt", "x");
    p.symlink("file.txt", "filelink");
    for (path, message) in [
        (
            "missing/",
            "Path ends with '/', but there is nothing there; to create a file, leave out the trailing '/'.",
        ),
        (
            "new/deeper/",
            "Path ends with '/', but there is nothing there; to create a file, leave out the trailing '/'.",
        ),
        (
            "file.txt/",
            "Path ends with '/', but there is a file there, not a directory; leave out the trailing '/'.",
        ),
        (
            "filelink/",
            "Path ends with '/', but there is a file there, not a directory; leave out the trailing '/'.",
        ),
    ] {
        for dry_run in [false, true] {
            let before = p.tree();
            let env = p.call(json!({"path": path, "content": "x", "dry_run": dry_run}));
            env.assert_error("INVALID_PARAM");
            assert_eq!(env.text, message, "{path}");
            assert_eq!(p.tree(), before, "{path}");
        }
    }
}

#[test]
fn a_parent_that_is_a_file_is_invalid_param() {
    let p = Project::new();
    p.write("file.txt", "x");
    let before = p.tree();
    let env = p.put("file.txt/child.txt", "y");
    env.assert_error("INVALID_PARAM");
    assert_eq!(env.text, "A parent of the path is not a directory.");
    p.put("file.txt/deeper/child.txt", "y")
        .assert_error("INVALID_PARAM");
    assert_eq!(p.tree(), before);
}

#[test]
fn conflict_when_an_expectation_does_not_hold() {
    let p = Project::new();
    p.write("c.txt", "abc");
    let meta = std::fs::metadata(p.path("c.txt")).unwrap();
    let mtime_ms = meta
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    // sha256("abc")
    let sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    let before = p.tree();
    let stale = [
        json!({"path": "c.txt", "content": "new", "expected_size_bytes": 4}),
        json!({"path": "c.txt", "content": "new", "expected_mtime_ms": mtime_ms - 1}),
        json!({"path": "c.txt", "content": "new", "expected_sha256": sha.replace('b', "c")}),
        json!({"path": "c.txt", "content": "new", "expected_size_bytes": 3, "expected_mtime_ms": mtime_ms + 5}),
        json!({"path": "absent.txt", "content": "new", "expected_size_bytes": 0}),
        json!({"path": "absent.txt", "content": "new", "expected_sha256": sha}),
        json!({"path": "c.txt", "content": "new", "expected_size_bytes": 1, "dry_run": true}),
    ];
    for args in stale {
        let env = p.call(args.clone());
        env.assert_error("CONFLICT");
        let path = args["path"].as_str().unwrap();
        let want = if path == "absent.txt" {
            format!(
                "File '{path}' no longer exists, though the lock values given describe one; \
                 nothing was written. Write without lock values to create it."
            )
        } else {
            format!(
                "File '{path}' changed since it was read (its size, modification time or hash \
                 differ from the lock values given); nothing was written. Read it again, or \
                 dry-run this write: the answer's data.lock holds its current lock values."
            )
        };
        assert_eq!(env.text, want);
        assert_eq!(p.tree(), before, "{args}");
    }
    let env = p.call(json!({
        "path": "c.txt", "content": "new",
        "expected_size_bytes": 3, "expected_mtime_ms": mtime_ms, "expected_sha256": sha.to_uppercase(),
    }));
    env.assert_status("success");
    assert_eq!(p.read_string("c.txt"), "new");
}

/// A hostile caller cannot make the answer as large as its request: every
/// long string is elided in the echo, not only `content`, and the echo as
/// a whole is bounded.
#[test]
fn the_echo_is_bounded_whatever_the_arguments() {
    let p = Project::new();
    let mut args = serde_json::Map::new();
    args.insert("path".into(), json!("p".repeat(3 << 20)));
    args.insert("content".into(), json!("c".repeat(2 << 20)));
    args.insert("unknown".into(), json!("u".repeat(2 << 20)));
    for i in 0..2_000 {
        args.insert(format!("extra{i}"), json!("e".repeat(100)));
    }
    let request = serde_json::Value::Object(args).to_string();
    assert!(request.len() > 7 << 20);
    let answer = write_tool_test_support::decode(&crate::support::tool().call(p.root(), &request));
    answer.assert_error("INVALID_PARAM");
    let echoed = answer.context.params_input.to_string();
    assert!(echoed.len() < 10 << 10, "{} bytes echoed", echoed.len());
    assert_eq!(
        answer.context.params_input["path"],
        format!("[{} bytes elided]", 3 << 20)
    );
    assert_eq!(
        answer.context.params_input["unknown"],
        format!("[{} bytes elided]", 2 << 20)
    );
}

/// `chattr +i` on a path for as long as the guard lives: the file or
/// directory refuses every change, to root too.
struct Immutable(std::path::PathBuf);

impl Immutable {
    fn set(path: std::path::PathBuf) -> Immutable {
        let status = std::process::Command::new("chattr")
            .arg("+i")
            .arg(&path)
            .status()
            .expect("chattr runs");
        assert!(status.success(), "chattr +i {}", path.display());
        Immutable(path)
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

/// The system's own refusal (an immutable file, a directory that takes no
/// new entries) is not the sandbox's: it gets `PERMISSION_DENIED` and a
/// message of its own, not "Path must be within project root.".
#[test]
fn an_immutable_file_or_directory_is_the_systems_refusal() {
    use write_tool_test_support::capability;
    let p = Project::new();
    if !capability::runs(
        capability::chattr_works(&p.root_dir()),
        "an_immutable_file_or_directory_is_the_systems_refusal",
        "chattr +i (root, and a file system that keeps the attribute)",
    ) {
        return;
    }
    p.write("locked.txt", "old\n");
    p.mkdir("sealed");
    let want = "Permission denied writing to file: the system refused to change it or its directory (it may be immutable, append-only, or granted read-only).";
    {
        let _file = Immutable::set(p.path("locked.txt"));
        let before = p.tree();
        for name in ["Write", "write_file"] {
            let env = p.call(
                json!({"name": name, "arguments": {"path": "locked.txt", "content": "new\n"}}),
            );
            env.assert_error("PERMISSION_DENIED");
            assert_eq!(env.text, want);
        }
        // Only the rename can tell that the file refuses to be replaced:
        // the temp file beside it was made and removed again, so the root's
        // own mtime moved, and nothing else did.
        let after = p.tree();
        assert!(after.temp_files().is_empty());
        assert_eq!(after.without("root/"), before.without("root/"));
        assert_eq!(
            after.entry("root/locked.txt"),
            before.entry("root/locked.txt")
        );
        assert_eq!(after.entry("root/sealed"), before.entry("root/sealed"));
    }
    {
        let _dir = Immutable::set(p.path("sealed"));
        let before = p.tree();
        let env = p.put("sealed/new.txt", "x\n");
        env.assert_error("PERMISSION_DENIED");
        assert_eq!(env.text, want);
        let env = p.put("sealed/deeper/new.txt", "x\n");
        env.assert_error("PERMISSION_DENIED");
        assert_eq!(p.tree(), before);
    }
    assert_eq!(p.read_string("locked.txt"), "old\n");
}

/// `write_file`'s confirmation says that something was written; when the
/// content was already there, nothing was, and the text says that instead.
#[test]
fn write_file_does_not_claim_a_write_it_did_not_make() {
    let p = Project::new();
    p.write("same.txt", "same\n");
    let env = p.call(
        json!({"name": "write_file", "arguments": {"path": "same.txt", "content": "same\n"}}),
    );
    env.assert_status("success");
    assert_eq!(env.text, "No changes to 'same.txt' (content identical).");
    assert_eq!(env.stats.bytes_written, Some(0));
}

/// A file under a temp file's name would be taken for one (swept as a
/// dead write's leftover, its removal no commit point): such a name is
/// refused in words, whether given or reached through a link, and
/// nothing changes. A name that only looks alike is written.
#[test]
fn a_temp_files_name_is_refused() {
    let p = Project::new();
    p.symlink(".wt-00000000000000ff.tmp", "link.txt");
    let before = p.tree();
    for path in [
        "sub/.wt-0123456789abcdef.tmp",
        ".wt-0123456789abcdef.tmp",
        "link.txt",
    ] {
        let env = p.call_raw(&serde_json::json!({"path": path, "content": "x"}).to_string());
        env.assert_error("INVALID_PARAM");
        assert!(env.text.contains("temp files"), "{path}: {}", env.text);
        assert_eq!(p.tree(), before, "{path} changed the disk");
    }
    for alike in [
        ".wt-0123456789abcdeg.tmp",
        ".wt-01234.tmp",
        "x.wt-0123456789abcdef.tmp",
    ] {
        let env = p.call_raw(&serde_json::json!({"path": alike, "content": "x"}).to_string());
        env.assert_status("success");
    }
}
