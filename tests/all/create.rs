use serde_json::json;

use crate::support::{Project, apply_with_patch_tool};

#[test]
fn creates_a_file_with_the_contract_text() {
    let p = Project::new();
    let env = p.put("hello.txt", "hi\n");
    env.assert_status("success");
    assert_eq!(env.text, "Created 'hello.txt' (1 line, 3 bytes).");
    assert_eq!(p.read_string("hello.txt"), "hi\n");
    let data = env.data();
    assert!(data.applied);
    assert_eq!(data.operation, "create");
    assert!(!data.diff_truncated);
    assert_eq!(env.context.path_resolved.as_deref(), Some("hello.txt"));
    assert_eq!(
        env.context.params_input,
        json!({"path": "hello.txt", "content": "hi\n"})
    );
    assert_eq!(env.stats.numbers(), (3, 0, 3, 1, 0));
}

#[test]
fn singular_and_plural_in_the_create_line() {
    let p = Project::new();
    assert_eq!(p.put("one", "x").text, "Created 'one' (1 line, 1 byte).");
    assert_eq!(
        p.put("two", "a\nb").text,
        "Created 'two' (2 lines, 3 bytes)."
    );
    assert_eq!(p.put("nl", "\n").text, "Created 'nl' (1 line, 1 byte).");
}

#[test]
fn creates_all_missing_parents_and_says_so() {
    let p = Project::new();
    p.mkdir("src");
    let env = p.put("src/utils/deep/helper.py", "def f():\n    pass\n");
    env.assert_status("success");
    assert_eq!(
        env.text,
        "Created 'src/utils/deep/helper.py' (2 lines, 18 bytes).\n(Created directory: src/utils/deep/)"
    );
    assert_eq!(
        p.read_string("src/utils/deep/helper.py"),
        "def f():\n    pass\n"
    );
    let env = p.put("src/utils/deep/other.py", "x\n");
    assert!(!env.text.contains("Created directory"), "{}", env.text);
}

#[test]
fn the_path_in_the_text_is_the_callers_and_path_resolved_is_normalised() {
    let p = Project::new();
    let env = p.put("./a//b/../c.txt", "x\n");
    assert_eq!(
        env.text,
        "Created './a//b/../c.txt' (1 line, 2 bytes).\n(Created directory: a/)"
    );
    assert_eq!(env.context.path_resolved.as_deref(), Some("a/c.txt"));
    assert!(p.exists("a/c.txt"));
    assert!(!p.exists("a/b"));
}

#[test]
fn content_is_written_byte_exact() {
    let p = Project::new();
    let content = "crlf\r\nunicode: ünïcødé 🦀\n\ttab\u{0}nul\nno final newline";
    p.put("exact.txt", content).assert_status("success");
    assert_eq!(p.read("exact.txt"), content.as_bytes());
}

#[test]
fn names_are_opaque_bytes() {
    let p = Project::new();
    let nfc = "caf\u{e9}.txt";
    let nfd = "cafe\u{301}.txt";
    p.put(nfc, "nfc").assert_status("success");
    p.put(nfd, "nfd").assert_status("success");
    assert_eq!(p.read_string(nfc), "nfc");
    assert_eq!(p.read_string(nfd), "nfd");
    p.put("Case.txt", "upper").assert_status("success");
    p.put("case.txt", "lower").assert_status("success");
    assert_eq!(p.read_string("Case.txt"), "upper");
    let long = "n".repeat(255);
    p.put(&long, "long name").assert_status("success");
    assert_eq!(p.read_string(&long), "long name");
    assert!(p.tree().temp_files().is_empty());
}

#[test]
fn new_files_get_the_usual_mode() {
    let p = Project::new();
    p.put("m.txt", "x").assert_status("success");
    let mode = p.mode("m.txt");
    assert_eq!(mode & 0o600, 0o600, "owner can read and write: {mode:o}");
    assert_eq!(mode & 0o111, 0, "not executable: {mode:o}");
}

#[test]
fn create_preview_applies_to_an_empty_file() {
    let p = Project::new();
    for content in ["a\nb\n", "no newline", "x\n\n\ny"] {
        let env = p.put("p.txt", content);
        assert_eq!(
            apply_with_patch_tool("p.txt", b"", env.preview()),
            content.as_bytes()
        );
        std::fs::remove_file(p.path("p.txt")).unwrap();
    }
}

#[test]
fn a_write_file_call_gets_its_own_text() {
    let p = Project::new();
    let env = p.call(json!({"name": "write_file", "arguments": {"path": "notes/todo.txt", "content": "Buy milk"}}));
    env.assert_status("success");
    assert_eq!(env.text, "Successfully wrote to notes/todo.txt");
    assert_eq!(
        env.context.params_input,
        json!({"path": "notes/todo.txt", "content": "Buy milk"})
    );
    assert_eq!(p.read_string("notes/todo.txt"), "Buy milk");
}

/// An item of the `tool_calls` list an OpenAI model answers with, passed on
/// as it is.
#[test]
fn an_openai_tool_calls_item_is_a_tool_call() {
    let p = Project::new();
    let item = json!({
        "id": "call_abc",
        "type": "function",
        "function": {
            "name": "Write",
            "arguments": json!({"path": "from/openai.txt", "content": "hi\n"}).to_string(),
        },
    });
    let env = p.call(item);
    env.assert_status("success");
    assert_eq!(
        env.text,
        "Created 'from/openai.txt' (1 line, 3 bytes).\n(Created directory: from/)"
    );
    assert_eq!(
        env.context.params_input,
        json!({"path": "from/openai.txt", "content": "hi\n"})
    );
    assert_eq!(p.read_string("from/openai.txt"), "hi\n");
}
