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
