//! The envelope's compact form (`docs/contract.md#envelope`), what a model
//! gets when a call does not ask: the rest of the suite reads the full form.

use serde_json::{Value, json};
use write_tool::{Options, WriteTool};

use crate::support::{Project, options};

/// A tool as hosts run it by default: compact answers.
fn compact_tool() -> &'static WriteTool {
    static TOOL: std::sync::OnceLock<WriteTool> = std::sync::OnceLock::new();
    TOOL.get_or_init(|| {
        WriteTool::new(Options {
            envelope: None,
            ..options()
        })
        .expect("component compiles")
    })
}

fn call(p: &Project, arguments: Value) -> (String, Value) {
    let json = compact_tool().call(p.root(), &arguments.to_string());
    let value = serde_json::from_str(&json).expect("an envelope");
    (json, value)
}

/// A 60-line module, the shape of file agents edit most.
fn module() -> String {
    let mut text = String::from("import math\n");
    for i in 0..8 {
        text.push_str(&format!(
            "\ndef step_{i}(order, rate):\n    \"\"\"Step {i}.\"\"\"\n    total = order.total * rate\n    if total > {}:\n        total = math.floor(total)\n    return total\n",
            100 * (i + 1)
        ));
    }
    text
}

#[test]
fn a_create_answers_without_the_content_it_was_sent() {
    let p = Project::journaled();
    let content = "- [ ] x\n".repeat(128);
    let (json, env) = call(&p, json!({"path": "notes/todo.md", "content": content}));
    assert_eq!(p.read_string("notes/todo.md"), content);
    // No preview, so none cut: a success.
    assert_eq!(env["status"], "success", "{json}");
    let keys: Vec<&str> = env
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["status", "data", "text"], "{json}");
    let data = &env["data"];
    assert_eq!(data["operation"], "create");
    assert!(data.get("diff_preview").is_none(), "{json}");
    assert!(!json.contains("- [ ] x"), "no echo of the content: {json}");
    assert_eq!(data["lock"]["expected_size_bytes"], 1024);
    assert!(data["change_id"].is_string(), "{json}");
    for default in [
        "encoding",
        "bom",
        "line_endings",
        "warnings",
        "diff_truncated",
    ] {
        assert!(data.get(default).is_none(), "{default} left out: {json}");
    }
    assert_eq!(
        env["text"],
        "Created 'notes/todo.md' (128 lines, 1024 bytes).\n(Created directory: notes/)"
    );
    // A dry run is still partial; the full form still cuts its preview.
    let (json, env) = call(
        &p,
        json!({"path": "more/todo.md", "content": content, "dry_run": true}),
    );
    assert_eq!(env["status"], "partial", "{json}");
    let (json, env) = call(
        &p,
        json!({"path": "full/todo.md", "content": content, "envelope": "full"}),
    );
    assert_eq!(env["status"], "partial", "{json}");
    assert_eq!(env["data"]["diff_truncated"], true, "{json}");
    assert!(
        env["text"]
            .as_str()
            .unwrap()
            .ends_with("the line counts cover the whole change.)")
    );
}

#[test]
fn a_small_edit_answers_in_at_most_600_characters() {
    let p = Project::journaled();
    p.write("orders.py", module());
    let (json, env) = call(
        &p,
        json!({"file_path": "orders.py", "old_string": "    total = order.total * rate\n    if total > 300:\n", "new_string": "    total = order.total * rate * 0.9\n    if total > 300:\n"}),
    );
    assert_eq!(env["status"], "success", "{json}");
    assert!(
        p.read_string("orders.py")
            .contains("rate * 0.9\n    if total > 300")
    );
    let data = &env["data"];
    assert!(
        data["diff_preview"]
            .as_str()
            .unwrap()
            .contains("+    total = order.total * rate * 0.9\n")
    );
    assert!(data["lock"]["expected_mtime_ms"].is_i64(), "{json}");
    assert!(data["change_id"].is_string(), "{json}");
    assert!(
        data.get("edits").is_none(),
        "an exact match: the diff says where: {json}"
    );
    assert!(!json.contains("old_string"), "no echo: {json}");
    assert!(
        json.chars().count() <= 600,
        "{} characters: {json}",
        json.chars().count()
    );
}

#[test]
fn an_edit_matched_loosely_says_how() {
    let p = Project::new();
    p.write("orders.py", module());
    let (json, env) = call(
        &p,
        json!({"file_path": "orders.py", "old_string": "total = order.total * rate  \n    if total > 300:", "new_string": "total = order.total * rate * 0.9\n    if total > 300:"}),
    );
    assert_eq!(env["status"], "success", "{json}");
    assert_eq!(
        env["data"]["edits"][0]["tolerance"], "trailing_whitespace",
        "{json}"
    );
}

#[test]
fn a_refusal_says_its_message_once_in_at_most_400_characters() {
    let p = Project::new();
    p.write("orders.py", module());
    let before = p.tree();
    let (json, env) = call(
        &p,
        json!({"file_path": "orders.py", "old_string": "    total = order.total * rates\n    if total > 300:\n", "new_string": "    total = order.total * rate * 0.9\n    if total > 300:\n"}),
    );
    assert_eq!(p.tree(), before);
    assert_eq!(env["status"], "error");
    assert_eq!(env["error"], json!({"code": "INVALID_PARAM"}), "{json}");
    let text = env["text"].as_str().unwrap();
    assert!(
        text.contains("Closest: lines 19-20"),
        "the hint is kept: {text}"
    );
    assert!(
        text.contains("-    total = order.total * rates\n+    total = order.total * rate\n"),
        "{text}"
    );
    assert!(
        json.chars().count() <= 400,
        "{} characters: {json}",
        json.chars().count()
    );
}

#[test]
fn the_full_form_is_there_for_the_asking_and_a_bad_form_changes_nothing() {
    let p = Project::new();
    let (json, env) = call(
        &p,
        json!({"path": "a.txt", "content": "a\n", "envelope": "full"}),
    );
    assert_eq!(env["stats"]["bytes_written"], 2, "{json}");
    assert_eq!(env["context"]["params_input"]["envelope"], "full");
    assert_eq!(env["data"]["encoding"], "utf-8");
    assert!(
        env["data"]["diff_preview"]
            .as_str()
            .unwrap()
            .contains("+a\n")
    );

    let before = p.tree();
    let (json, env) = call(
        &p,
        json!({"path": "a.txt", "content": "b\n", "envelope": "short"}),
    );
    assert_eq!(p.tree(), before, "nothing written");
    assert_eq!(env["error"]["code"], "INVALID_PARAM", "{json}");
    assert_eq!(
        env["text"],
        "Parameter 'envelope' must be \"compact\" or \"full\"."
    );

    let (json, env) = call(
        &p,
        json!({"path": "a.txt", "content": "b\n", "envelope": "compact"}),
    );
    assert!(
        env.get("stats").is_none() && env["data"]["diff_preview"].is_string(),
        "{json}"
    );
}

#[test]
fn a_merge_is_said_in_the_compact_form_and_only_then() {
    let p = Project::journaled();
    p.write("a.txt", "one\ntwo\nthree\nfour\nfive\n");
    let (_, view) = call(&p, json!({"name": "view", "arguments": {"path": "a.txt"}}));
    let base = view["data"]["view"]["base"].clone();
    let (_, fresh) = call(
        &p,
        json!({"path": "a.txt", "content": "one\ntwo\nthree\nfour\nfive\n",
        "base": base}),
    );
    assert_eq!(fresh["status"], "success", "{fresh}");
    assert!(fresh["data"].get("merged").is_none(), "{fresh}");
    p.write("a.txt", "one\ntwo\nthree\nfour\nFIVE\n");
    let (_, merged) = call(
        &p,
        json!({"path": "a.txt", "content": "ONE\ntwo\nthree\nfour\nfive\n",
        "base": base}),
    );
    assert_eq!(merged["data"]["merged"], true, "{merged}");
    assert_eq!(p.read_string("a.txt"), "ONE\ntwo\nthree\nfour\nFIVE\n");
}
