//! Multi-file patches (`docs/contract.md#patch`): the apply_patch format
//! applied all or nothing, deleting and moving only where the host allows,
//! revertible with the journal, and nothing changed by a patch that fails.

use serde_json::json;
use write_tool::{Options, WriteTool};

use crate::support::{Envelope, Project, decode, deleting, options};

fn patch_with(tool: &WriteTool, p: &Project, patch: &str) -> Envelope {
    let request = json!({"name": "apply_patch", "arguments": {"input": patch}});
    decode(&tool.call(p.root(), &request.to_string()))
}

const FULL: &str = "*** Begin Patch
*** Add File: docs/hello.txt
+Hello world
*** Update File: app.py
*** Move to: src/main.py
@@ def greet():
-    print(\"Hi\")
+    print(\"Hello, world!\")
*** Delete File: obsolete.txt
*** End Patch
";

fn fixture(p: &Project) {
    p.write(
        "app.py",
        "def greet():\n    print(\"Hi\")\n\ndef other():\n    pass\n",
    );
    p.write("obsolete.txt", "old\n");
}

#[test]
fn a_patch_adds_moves_and_deletes_as_one_change_and_reverts() {
    let p = Project::journaled();
    fixture(&p);
    let before = p.read("app.py");
    let env = patch_with(deleting(), &p, FULL);
    env.assert_status("success");
    assert!(
        env.text.starts_with("Applied the patch: 4 of 4 files"),
        "{}",
        env.text
    );
    assert!(
        env.text.contains("'app.py': moved to 'src/main.py'"),
        "{}",
        env.text
    );
    let data = env.data();
    let ops: Vec<(&str, &str)> = data
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.operation.as_str()))
        .collect();
    assert_eq!(
        ops,
        [
            ("docs/hello.txt", "create"),
            ("app.py", "delete"),
            ("src/main.py", "create"),
            ("obsolete.txt", "delete")
        ]
    );
    assert!(
        data.diff_preview
            .contains("--- a/app.py\n+++ b/src/main.py\n")
    );
    assert_eq!(p.read_string("docs/hello.txt"), "Hello world\n");
    assert_eq!(
        p.read_string("src/main.py"),
        "def greet():\n    print(\"Hello, world!\")\n\ndef other():\n    pass\n"
    );
    assert!(!p.exists("app.py") && !p.exists("obsolete.txt"));
    let id = data.change_id.clone().expect("recorded");
    let env = decode(&deleting().call(p.root(), &json!({"change_id": id}).to_string()));
    env.assert_status("success");
    assert_eq!(p.read("app.py"), before);
    assert_eq!(p.read_string("obsolete.txt"), "old\n");
    for gone in ["docs", "src"] {
        assert!(!p.exists(gone), "{gone}");
    }
}

#[test]
fn deleting_and_moving_are_refused_unless_the_host_allows_them() {
    let p = Project::journaled();
    fixture(&p);
    let before = p.tree();
    let env = p.call(json!({"name": "apply_patch", "arguments": {"input": FULL}}));
    env.assert_error("PERMISSION_DENIED");
    assert!(env.text.contains("WRITE_TOOL_ALLOW_DELETE"), "{}", env.text);
    assert_eq!(p.tree(), before);
}

#[test]
fn a_failing_hunk_changes_no_file_and_shows_where_to_look() {
    let p = Project::journaled();
    fixture(&p);
    let before = p.tree();
    let patch = "*** Begin Patch
*** Add File: new.txt
+x
*** Update File: app.py
@@
 def other():
-    passs
+    return 1
*** End Patch";
    let env = patch_with(deleting(), &p, patch);
    env.assert_error("INVALID_PARAM");
    assert!(env.text.starts_with("Update File 'app.py'"), "{}", env.text);
    assert!(env.text.contains("Closest: lines 4-5"), "{}", env.text);
    assert_eq!(p.tree(), before);
    // Protected paths and the sandbox hold for every file of a patch.
    for path in [".git/config", "../outside/x.txt"] {
        let patch = format!(
            "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Add File: {path}\n+x\n*** End Patch"
        );
        let env = patch_with(deleting(), &p, &patch);
        env.assert_error("ACCESS_DENIED");
        assert_eq!(p.tree(), before, "{path}");
    }
    // An added file that exists is refused rather than overwritten.
    let env = patch_with(
        deleting(),
        &p,
        "*** Begin Patch\n*** Add File: obsolete.txt\n+new\n*** End Patch",
    );
    env.assert_error("CONFLICT");
    let env = patch_with(
        deleting(),
        &p,
        "*** Begin Patch\n*** Add File: twice.txt\n+a\n*** Add File: ./twice.txt\n+b\n*** End Patch",
    );
    env.assert_error("INVALID_PARAM");
    assert!(
        env.text.contains("changes 'twice.txt' twice"),
        "{}",
        env.text
    );
    let env = patch_with(
        deleting(),
        &p,
        "*** Begin Patch\n*** Frob: x\n*** End Patch",
    );
    env.assert_error("INVALID_PARAM");
    assert!(env.text.contains("line 2"), "{}", env.text);
    assert_eq!(p.tree(), before);
}

#[test]
fn without_a_journal_only_one_file_patches_apply() {
    let p = Project::new();
    fixture(&p);
    let before = p.tree();
    let env = patch_with(deleting(), &p, FULL);
    env.assert_error("PERMISSION_DENIED");
    assert!(env.text.contains("needs the journal"), "{}", env.text);
    assert_eq!(p.tree(), before);
    let one = "*** Begin Patch\n*** Update File: app.py\n@@ def other():\n-    pass\n+    return 2\n*** End Patch";
    let env = patch_with(deleting(), &p, one);
    env.assert_status("success");
    assert!(p.read_string("app.py").ends_with("    return 2\n"));
    // A dry run of the whole patch shows every file and changes nothing.
    let before = p.tree();
    let request = json!({"name": "apply_patch", "arguments": {"input": FULL, "dry_run": true}});
    let env = decode(&deleting().call(p.root(), &request.to_string()));
    env.assert_status("partial");
    assert_eq!(env.data().files.len(), 4);
    assert_eq!(p.tree(), before);
}

#[test]
fn a_crlf_file_takes_an_lf_patch_and_stays_crlf() {
    let p = Project::new();
    p.write("w.txt", "one\r\ntwo\r\nthree\r\n");
    let env = patch_with(
        deleting(),
        &p,
        "*** Begin Patch\n*** Update File: w.txt\n@@\n one\n-two\n+2\n three\n*** End Patch",
    );
    env.assert_status("success");
    assert_eq!(p.read_string("w.txt"), "one\r\n2\r\nthree\r\n");
}

/// A delete goes through a write's stages: a read-only root refuses it
/// before anything is staged, in the read-only root's words.
#[test]
fn a_read_only_root_refuses_a_patch_delete() {
    let tool = WriteTool::new(Options {
        allow_delete: true,
        read_only: true,
        ..options()
    })
    .expect("component compiles");
    let p = Project::journaled();
    fixture(&p);
    let before = p.read("obsolete.txt");
    let env = patch_with(
        &tool,
        &p,
        "*** Begin Patch\n*** Delete File: obsolete.txt\n*** End Patch",
    );
    env.assert_error("PERMISSION_DENIED");
    assert!(
        env.text.contains("the project root is read-only"),
        "{}",
        env.text
    );
    assert_eq!(p.read("obsolete.txt"), before);
}

/// A GPT-5-class model given `apply_patch` as a freeform tool answers with
/// a Responses `custom_tool_call` whose input is the patch itself (the
/// item's shape as `openai/codex` reads it, `ResponseItem::CustomToolCall`);
/// the tool takes the item as it comes, and the definition offers the tool
/// with its grammar.
#[test]
fn a_custom_tool_call_of_the_freeform_apply_patch_applies_its_raw_patch() {
    let p = Project::new();
    p.write("app.py", "def greet():\n    print(\"Hi\")\n");
    let patch = "*** Begin Patch\n*** Update File: app.py\n@@ def greet():\n-    print(\"Hi\")\n\
                 +    print(\"Hello\")\n*** End Patch\n";
    let item = json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1",
        "name": "apply_patch", "input": patch});
    let env = p.call(item);
    env.assert_status("success");
    assert_eq!(
        p.read_string("app.py"),
        "def greet():\n    print(\"Hello\")\n"
    );
    // Chat Completions' form of the same call.
    let again = "*** Begin Patch\n*** Update File: app.py\n-    print(\"Hello\")\n\
                 +    print(\"Hey\")\n*** End Patch\n";
    let item = json!({"id": "call_2", "type": "custom",
        "custom": {"name": "apply_patch", "input": again}});
    p.call(item).assert_status("success");
    assert_eq!(
        p.read_string("app.py"),
        "def greet():\n    print(\"Hey\")\n"
    );
    let before = p.tree();
    let env = p.call(
        json!({"type": "custom_tool_call", "call_id": "c", "name": "apply_patch",
        "input": {"patch": patch}}),
    );
    env.assert_error("INVALID_PARAM");
    assert!(
        env.text.contains("'input' must be a string"),
        "{}",
        env.text
    );
    assert_eq!(p.tree(), before);

    let definition: serde_json::Value =
        serde_json::from_str(&crate::support::tool().definition().unwrap()).unwrap();
    let freeform = &definition["custom_tools"][0];
    assert_eq!(
        (
            &freeform["type"],
            &freeform["name"],
            &freeform["format"]["syntax"]
        ),
        (&json!("custom"), &json!("apply_patch"), &json!("lark"))
    );
    let grammar = freeform["format"]["definition"].as_str().unwrap();
    assert!(
        grammar.starts_with("start: \"*** Begin Patch\" LF operation+"),
        "{grammar}"
    );
}
