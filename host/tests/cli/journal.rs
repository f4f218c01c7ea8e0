//! The journal's commands as scripts drive them (`docs/contract.md#journal`,
//! `docs/contract.md#cli`): `undo`, `checkpoint`, `history`, `write-many`,
//! `journal verify`, and the flags that turn the journal or the model's
//! revert off.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::{envelope, root_arg, run, run_cmd};

/// A root and its journal directory, in one temp dir.
struct Project {
    dir: tempfile::TempDir,
    root: String,
    journal: String,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir(dir.path().join("root")).expect("root");
        let root = root_arg(&dir.path().join("root"));
        let journal = dir
            .path()
            .join("journal")
            .to_str()
            .expect("UTF-8")
            .to_owned();
        Project { dir, root, journal }
    }

    /// `write-tool --root R --journal J ARGS…` with `stdin`.
    fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut all = vec!["--root", &self.root, "--journal", &self.journal];
        all.extend_from_slice(args);
        run(&all, stdin)
    }

    fn write(&self, path: &str, content: &str) -> Value {
        let out = self.run(&["write", path, "--content", content], b"");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        envelope(&out)
    }

    fn read(&self, path: &str) -> Option<String> {
        fs::read_to_string(self.dir.path().join("root").join(path)).ok()
    }

    /// The root's journal log (one root, so one journal below `--journal`).
    fn log(&self) -> PathBuf {
        let base = Path::new(&self.journal);
        fs::read_dir(base)
            .expect("journal base")
            .map(|e| e.expect("entry").path().join("log"))
            .find(|p| p.exists())
            .expect("a log")
    }
}

#[test]
fn undo_checkpoint_history_and_verify_from_the_command_line() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    p.write("a.txt", "two\n");
    let out = p.run(&["checkpoint", "mark"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    p.write("a.txt", "three\n");
    p.write("b.txt", "b\n");

    // `undo` without an id: the latest change, b.txt's creation.
    let out = p.run(&["undo"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(envelope(&out)["data"]["files"][0]["operation"], "delete");
    assert_eq!(p.read("b.txt"), None);

    // The history of one path, as JSON: whole records, newest first.
    let out = p.run(&["history", "a.txt", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let history: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let ids: Vec<&str> = history
        .as_array()
        .expect("a list")
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["c4", "c2", "c1"], "{history}");
    assert_eq!(history[0]["prev"].as_str().map(str::len), Some(64));

    // Back to the checkpoint: a.txt as it was then.
    let out = p.run(&["undo", "--to", "mark"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(p.read("a.txt").as_deref(), Some("two\n"));

    let out = p.run(&["journal", "verify"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let verdict: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(verdict["ok"], true, "{verdict}");

    // An edited record breaks the chain: exit 1, the record named.
    let log = p.log();
    let text = fs::read_to_string(&log).expect("log");
    let edited = text.replacen("\"size\":4", "\"size\":5", 1);
    assert_ne!(edited, text);
    fs::write(&log, edited).expect("edit");
    let out = p.run(&["journal", "verify"], b"");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let verdict: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(verdict["ok"], false, "{verdict}");
    assert!(
        verdict["problem"]["problem"]
            .as_str()
            .is_some_and(|p| p.starts_with("altered"))
    );
}

#[test]
fn write_many_from_stdin_is_all_or_none() {
    let p = Project::new();
    p.write("a.txt", "a\n");
    let bad = br#"[{"path": "a.txt", "content": "A\n"}, {"path": "../out.txt", "content": "x"}]"#;
    let out = p.run(&["write-many"], bad);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(envelope(&out)["error"]["code"], "ACCESS_DENIED");
    assert_eq!(p.read("a.txt").as_deref(), Some("a\n"));
    let good = br#"[{"path": "a.txt", "content": "A\n"}, {"path": "d/b.txt", "content": "B\n"}]"#;
    let out = p.run(&["write-many"], good);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let env = envelope(&out);
    assert_eq!(env["data"]["operation"], "many");
    assert_eq!(p.read("a.txt").as_deref(), Some("A\n"));
    assert_eq!(p.read("d/b.txt").as_deref(), Some("B\n"));
}

#[test]
fn without_a_journal_nothing_is_recorded_and_undo_says_why() {
    let p = Project::new();
    let no = |args: &[&str], stdin: &[u8]| {
        let mut all = vec!["--root", p.root.as_str(), "--no-journal"];
        all.extend_from_slice(args);
        run(&all, stdin)
    };
    let out = no(&["write", "a.txt", "--content", "one"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(envelope(&out)["data"].get("change_id").is_none());
    for (args, stdin) in [
        (&["undo"][..], &b""[..]),
        (
            &["write-many"][..],
            &br#"[{"path": "b.txt", "content": "b"}]"#[..],
        ),
    ] {
        let out = no(args, stdin);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let env = envelope(&out);
        assert_eq!(env["error"]["code"], "PERMISSION_DENIED", "{env}");
        assert!(
            env["text"].as_str().is_some_and(|t| t.contains("journal")),
            "{env}"
        );
    }
    assert_eq!(p.read("a.txt").as_deref(), Some("one"));
    assert_eq!(p.read("b.txt"), None);
    assert!(!Path::new(&p.journal).exists(), "no journal made");
}

#[test]
fn no_model_revert_refuses_calls_but_not_the_undo_command() {
    let p = Project::new();
    let id = p.write("a.txt", "one\n")["data"]["change_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let request = format!(r#"{{"change_id": "{id}"}}"#);
    let out = p.run(&["--no-model-revert", "call"], request.as_bytes());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(envelope(&out)["error"]["code"], "PERMISSION_DENIED");
    assert_eq!(p.read("a.txt").as_deref(), Some("one\n"));
    let out = p.run(&["--no-model-revert", "undo", &id], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(p.read("a.txt"), None);
}

/// A person's `write` after a model's `call`: the model's forced revert
/// and its `undo_edit` are refused, and the file keeps the person's line.
#[test]
fn a_models_forced_revert_never_undoes_a_persons_write_from_the_command_line() {
    let p = Project::new();
    let out = p.run(&["call"], br#"{"path": "a.txt", "content": "model\n"}"#);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let id = envelope(&out)["data"]["change_id"]
        .as_str()
        .expect("id")
        .to_owned();
    p.write("a.txt", "person\n");
    let undo_edit = r#"{"type": "tool_use", "id": "t", "name": "str_replace_based_edit_tool",
        "input": {"command": "undo_edit", "path": "a.txt"}}"#;
    for request in [
        format!(r#"{{"change_id": "{id}", "force": true}}"#),
        undo_edit.into(),
    ] {
        let out = p.run(&["call"], request.as_bytes());
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let env = envelope(&out);
        assert_eq!(env["error"]["code"], "PERMISSION_DENIED", "{env}");
        assert!(
            env["text"]
                .as_str()
                .is_some_and(|t| t.contains("was changed by a person")),
            "{env}"
        );
        assert_eq!(p.read("a.txt").as_deref(), Some("person\n"));
    }
    // The person undoes their own write: the model's change is the
    // model's to undo again.
    let out = p.run(&["undo"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(p.read("a.txt").as_deref(), Some("model\n"));
    let request = format!(r#"{{"change_id": "{id}"}}"#);
    let out = p.run(&["call"], request.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(p.read("a.txt"), None);
}

/// `edit` and `patch` as scripts drive them (`docs/contract.md#cli`): the
/// flags' edit and the JSON array's, a patch on stdin, exit codes, undo.
#[test]
fn edit_and_patch_from_the_command_line() {
    let p = Project::new();
    p.write("a.txt", "one\ntwo\nthree\n");
    let out = p.run(&["edit", "a.txt", "--old", "two", "--new", "2"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(envelope(&out)["data"]["edits"][0]["lines"][0], 2);
    assert_eq!(p.read("a.txt").as_deref(), Some("one\n2\nthree\n"));
    // An edit that does not apply: the error envelope, exit 1, no change.
    let out = p.run(&["edit", "a.txt", "--old", "four", "--new", "4"], b"");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(envelope(&out)["error"]["code"], "INVALID_PARAM");
    assert_eq!(p.read("a.txt").as_deref(), Some("one\n2\nthree\n"));
    let edits = br#"[{"old_string": "one", "new_string": "1"}, {"old_string": "three", "new_string": "3"}]"#;
    let out = p.run(&["edit", "a.txt", "--edits-json"], edits);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(p.read("a.txt").as_deref(), Some("1\n2\n3\n"));
    let patch = b"*** Begin Patch\n*** Update File: a.txt\n@@\n 1\n-2\n+two\n*** Add File: b.txt\n+b\n*** End Patch\n";
    let out = p.run(&["patch"], patch);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let patch_id = envelope(&out)["data"]["change_id"]
        .as_str()
        .expect("recorded")
        .to_owned();
    assert_eq!(p.read("a.txt").as_deref(), Some("1\ntwo\n3\n"));
    assert_eq!(p.read("b.txt").as_deref(), Some("b\n"));
    // A delete is refused until the flag allows it.
    let delete = b"*** Begin Patch\n*** Delete File: b.txt\n*** End Patch\n";
    let out = p.run(&["patch"], delete);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(p.read("b.txt").as_deref(), Some("b\n"));
    let out = p.run(&["--allow-delete", "patch"], delete);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(p.read("b.txt"), None);
    // Undo takes the delete back, then the patch, as one change each.
    let out = p.run(&["undo"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(p.read("b.txt").as_deref(), Some("b\n"));
    let out = p.run(&["undo", &patch_id], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(p.read("a.txt").as_deref(), Some("1\n2\n3\n"));
    assert_eq!(p.read("b.txt"), None);
}

#[test]
fn serve_is_a_session_that_reads_first_when_asked_and_leaves_no_record() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    p.write("b.txt", "two\n");
    let lines = [
        json!({"path": "a.txt", "content": "x\n"}),
        json!({"name": "view", "arguments": {"path": "a.txt"}}),
        json!({"path": "a.txt", "content": "x\n"}),
        json!({"path": "c.txt", "content": "new\n"}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect::<String>();
    let mut all = vec!["--root", &p.root, "--journal", &p.journal, "serve"];
    let out = run_cmd(
        Command::new(write_tool_test_support::bin())
            .args(all.drain(..))
            .env("WRITE_TOOL_READ_FIRST", "1"),
        lines.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("an envelope"))
        .collect();
    let statuses: Vec<&str> = answers
        .iter()
        .map(|a| a["status"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        statuses,
        ["error", "success", "success", "success"],
        "{answers:?}"
    );
    assert_eq!(p.read("a.txt").as_deref(), Some("x\n"));
    // The session's record went with it.
    let sessions: Vec<_> = fs::read_dir(Path::new(&p.journal))
        .expect("journal base")
        .filter_map(|e| fs::read_dir(e.expect("entry").path().join("sessions")).ok())
        .flatten()
        .collect();
    assert!(sessions.is_empty(), "{sessions:?}");
}
