//! `examples/agent-loop`: a minimal agent loop per provider, without MCP,
//! run against recorded model turns (no network), as a new user would run
//! it.

use std::fs;
use std::process::Command;

use serde_json::Value;

use crate::{bin_str, python, root, run, workspace};

/// Each provider's loop writes the file, then changes it; every tool call
/// gets its answer under its own id, in the provider's shape, before the
/// model's next turn.
#[test]
fn an_agent_loop_for_each_provider() {
    for (provider, answer_key, id_key) in [
        ("anthropic", "tool_result", "tool_use_id"),
        ("openai", "function_call_output", "call_id"),
        ("openai-chat", "tool", "tool_call_id"),
    ] {
        let root = root();
        let state = tempfile::tempdir().expect("state");
        let output = run(Command::new(python())
            // The journal no one named goes under the user's state
            // directory: this run's own.
            .env("XDG_STATE_HOME", state.path())
            .arg(workspace().join("examples/agent-loop/agent_loop.py"))
            .arg(provider)
            .arg(root.path())
            .arg(bin_str()));
        assert_eq!(
            fs::read_to_string(root.path().join("hello.py")).expect("hello.py"),
            "print('hello, world')\n",
            "{provider}"
        );
        let conversation: Value = serde_json::from_slice(&output.stdout).expect("JSON");
        let text = conversation.to_string();
        // The second call's answer shows the change, under its id.
        assert!(
            text.contains("+print('hello, world')"),
            "{provider}: {text}"
        );
        let answers: Vec<&Value> = conversation
            .as_array()
            .expect("a list")
            .iter()
            .flat_map(|m| match m["content"].as_array() {
                Some(blocks) if provider == "anthropic" => blocks.iter().collect(),
                _ => vec![m],
            })
            .filter(|m| {
                m["type"] == answer_key
                    || m["role"] == answer_key
                    || m["type"] == "custom_tool_call_output"
            })
            .collect();
        let ids: Vec<&str> = answers.iter().filter_map(|a| a[id_key].as_str()).collect();
        let want = if provider == "anthropic" {
            ["toolu_01", "toolu_02"]
        } else {
            ["call_01", "call_02"]
        };
        assert_eq!(ids, want, "{provider}: {text}");
    }
}

/// The tools in each provider's format: the handed tools in order, each
/// in the shape that API takes, `apply_patch` freeform for OpenAI's
/// Responses and absent for Anthropic's models.
#[test]
fn schema_prints_each_providers_tool_list() {
    let schema = |provider: &str| -> Value {
        let output = run(Command::new(bin_str()).args(["schema", "--provider", provider]));
        serde_json::from_slice(&output.stdout).expect("JSON")
    };
    let anthropic = schema("anthropic");
    let names: Vec<&str> = anthropic
        .as_array()
        .expect("a list")
        .iter()
        .map(|t| t["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        names,
        [
            "Write",
            "Edit",
            "view",
            "write_many",
            "revert",
            "checkpoint",
            "append"
        ]
    );
    for tool in anthropic.as_array().expect("a list") {
        assert_eq!(tool["input_schema"]["type"], "object", "{tool}");
        assert!(
            tool.get("parameters").is_none() && tool.get("type").is_none(),
            "{tool}"
        );
    }
    let openai = schema("openai");
    let tools = openai.as_array().expect("a list");
    let patch = tools
        .iter()
        .find(|t| t["name"] == "apply_patch")
        .expect("apply_patch");
    assert_eq!(patch["type"], "custom", "{patch}");
    assert_eq!(patch["format"]["type"], "grammar", "{patch}");
    for tool in tools.iter().filter(|t| t["name"] != "apply_patch") {
        assert_eq!(tool["type"], "function", "{tool}");
        assert_eq!(tool["parameters"]["type"], "object", "{tool}");
        assert_eq!(tool["strict"], false, "{tool}");
    }
    assert_eq!(tools.len(), 8);
    let chat = schema("openai-chat");
    for tool in chat.as_array().expect("a list") {
        assert_eq!(tool["type"], "function", "{tool}");
        assert_eq!(tool["function"]["parameters"]["type"], "object", "{tool}");
    }
    // The host that keeps undo from the model keeps it from the list.
    let output = run(Command::new(bin_str()).args([
        "--no-model-revert",
        "schema",
        "--provider",
        "anthropic",
    ]));
    let kept: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert!(
        !kept.to_string().contains("\"revert\""),
        "revert not offered: {kept}"
    );
}

/// A turn of two calls, the second failing: both run, in order, each
/// answered under its own id, `is_error` only on the second; exit 1.
#[test]
fn turn_answers_every_call_under_its_id_and_exits_1_when_one_failed() {
    let root = root();
    let turn = serde_json::json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_a", "name": "Write", "input": {"path": "a.txt", "content": "a\n"}},
        {"type": "tool_use", "id": "toolu_b", "name": "Edit", "input": {"file_path": "missing.txt", "old_string": "x", "new_string": "y"}}
    ]});
    let mut child = Command::new(bin_str())
        .arg("--root")
        .arg(root.path())
        .args(["--no-journal", "turn", "--provider", "anthropic"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(turn.to_string().as_bytes())
            .expect("write the turn");
    }
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(1));
    let reply: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(reply["role"], "user");
    let blocks = reply["content"].as_array().expect("blocks");
    let seen: Vec<(&str, bool)> = blocks
        .iter()
        .map(|b| {
            (
                b["tool_use_id"].as_str().expect("an id"),
                b["is_error"].as_bool().expect("is_error"),
            )
        })
        .collect();
    assert_eq!(seen, [("toolu_a", false), ("toolu_b", true)]);
    assert!(
        blocks[0]["content"]
            .as_str()
            .expect("text")
            .contains("a.txt")
    );
    assert!(
        blocks[1]["content"]
            .as_str()
            .expect("text")
            .contains("missing.txt")
    );
    assert_eq!(
        fs::read_to_string(root.path().join("a.txt")).expect("a"),
        "a\n"
    );
}
