//! Edits (`docs/contract.md#edit`): every request shape, the matching
//! ladder through the real component, the write's guarantees kept, and
//! nothing on disk changed by an edit that does not apply.

use serde_json::json;

use crate::support::{Project, tool};
use write_tool::TextEdit;

#[test]
fn claude_code_edit_replaces_one_place_and_answers_like_a_write() {
    let p = Project::new();
    p.write("src/a.py", "def f():\n    return 1\n");
    let env = p.call(json!({"name": "Edit", "arguments": {
        "file_path": "src/a.py", "old_string": "return 1", "new_string": "return 2"}}));
    env.assert_status("success");
    assert_eq!(
        env.text,
        "Edited 'src/a.py' (1 edit, +1/-1 lines, 22 bytes)."
    );
    let data = env.data();
    assert_eq!(data.operation, "update");
    assert_eq!(
        data.diff_preview,
        "--- a/src/a.py\n+++ b/src/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
    );
    assert_eq!(data.edits.len(), 1);
    assert_eq!(
        (data.edits[0].tolerance.as_str(), &data.edits[0].lines[..]),
        ("exact", &[2][..])
    );
    assert_eq!(data.lock.as_ref().unwrap().expected_size_bytes, 22);
    assert_eq!(p.read_string("src/a.py"), "def f():\n    return 2\n");
}

#[test]
fn multi_edit_and_edit_file_shapes_apply_in_order() {
    let p = Project::new();
    p.write("m.txt", "one\ntwo\nthree\n");
    let env = p.call(
        json!({"name": "MultiEdit", "arguments": {"file_path": "m.txt", "edits": [
        {"old_string": "one", "new_string": "1"},
        {"old_string": "1\ntwo", "new_string": "1\n2"}]}}),
    );
    // The second edit touches what the first wrote.
    env.assert_error("INVALID_PARAM");
    assert!(env.text.contains("Edit 2 overlaps edit 1"), "{}", env.text);
    assert_eq!(p.read_string("m.txt"), "one\ntwo\nthree\n");
    let env = p.call(
        json!({"name": "MultiEdit", "arguments": {"file_path": "m.txt", "edits": [
        {"old_string": "one", "new_string": "1"},
        {"old_string": "three", "new_string": "3"}]}}),
    );
    env.assert_status("success");
    assert_eq!(p.read_string("m.txt"), "1\ntwo\n3\n");
    let before = p.tree();
    let env = p.call(
        json!({"name": "edit_file", "arguments": {"path": "m.txt", "dryRun": true,
        "edits": [{"oldText": "two", "newText": "2"}]}}),
    );
    env.assert_status("partial");
    assert!(
        env.text.starts_with("[Dry Run] Would edit 'm.txt'"),
        "{}",
        env.text
    );
    assert!(env.preview().contains("-two\n+2\n"));
    assert_eq!(p.tree(), before);
    // The arguments alone are an edit by their keys.
    let env = p.call(json!({"file_path": "m.txt", "old_string": "two", "new_string": "2"}));
    env.assert_status("success");
    assert_eq!(p.read_string("m.txt"), "1\n2\n3\n");
}

#[test]
fn a_crlf_utf16_file_is_matched_in_its_text_and_keeps_its_format() {
    let p = Project::new();
    let text = "Name=Old\r\nPath=C:\\x\r\n";
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    p.write("cfg.ini", &bytes);
    // LF in the old text, as models send it.
    let env = p.call(
        json!({"file_path": "cfg.ini", "old_string": "Name=Old\nPath",
        "new_string": "Name=New\nPath"}),
    );
    env.assert_status("success");
    let data = env.data();
    assert_eq!((data.encoding.as_str(), data.bom), ("utf-16le", true));
    assert_eq!(data.edits[0].tolerance, "line_endings");
    let mut want = vec![0xFF, 0xFE];
    want.extend(
        "Name=New\r\nPath=C:\\x\r\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes),
    );
    assert_eq!(p.read("cfg.ini"), want);
}

#[test]
fn a_legacy_encoding_is_kept_byte_for_byte_outside_the_edit() {
    let p = Project::new();
    p.write("l.txt", b"caf\xE9 cr\xE8me\nprix: 3\n");
    let env = p.call(json!({"file_path": "l.txt", "old_string": "prix: 3",
        "new_string": "prix: 4 \u{20AC}", "encoding": "windows-1252"}));
    env.assert_status("success");
    assert_eq!(p.read("l.txt"), b"caf\xE9 cr\xE8me\nprix: 4 \x80\n");
}

#[test]
fn tolerant_matches_fit_the_new_text_to_the_file_and_say_so() {
    let p = Project::new();
    p.write(
        "k.go",
        "func f() {\n\tif x {\n\t\tsay(\u{201C}hi\u{201D})  \n\t}\n}\n",
    );
    // Spaces for tabs, no trailing spaces, straight quotes.
    let env = p.call(json!({"file_path": "k.go",
        "old_string": "    if x {\n        say(\"hi\")\n    }\n",
        "new_string": "    if x {\n        say(\"hi\")\n        done()\n    }\n"}));
    env.assert_status("success");
    assert_eq!(env.data().edits[0].tolerance, "look_alikes");
    assert!(env.text.contains("only when ignoring"), "{}", env.text);
    assert_eq!(
        p.read_string("k.go"),
        "func f() {\n\tif x {\n\t\tsay(\u{201C}hi\u{201D})  \n\t\tdone()\n\t}\n}\n"
    );
    assert_eq!(
        env.preview(),
        "--- a/k.go\n+++ b/k.go\n@@ -1,5 +1,6 @@\n func f() {\n \tif x {\n \t\tsay(\u{201C}hi\u{201D})  \n+\t\tdone()\n \t}\n }\n"
    );
}

#[test]
fn an_edit_that_cannot_apply_changes_nothing_and_says_why() {
    let p = Project::new();
    p.write(
        "z.rs",
        "fn a() {\n    let v = 1;\n}\nfn b() {\n    let v = 1;\n    go(v);\n}\n",
    );
    let before = p.tree();
    let env = p.call(json!({"file_path": "z.rs", "old_string": "let v = 1;",
        "new_string": "let v = 2;"}));
    env.assert_error("INVALID_PARAM");
    assert!(env.text.contains("matches 2 places"), "{}", env.text);
    assert!(env.text.contains("at lines 2, 5"), "{}", env.text);
    let env = p.call(json!({"file_path": "z.rs",
        "old_string": "fn b() {\n    let v = 3;\n    go(v);\n}\n", "new_string": "x"}));
    env.assert_error("INVALID_PARAM");
    assert!(env.text.contains("Closest: lines 4-7"), "{}", env.text);
    assert!(
        env.text.contains("-    let v = 3;\n+    let v = 1;"),
        "{}",
        env.text
    );
    let env = p.call(json!({"file_path": "z.rs", "old_string": "", "new_string": "x"}));
    env.assert_error("INVALID_PARAM");
    let env = p.call(json!({"file_path": "nope.rs", "old_string": "a", "new_string": "b"}));
    env.assert_error("INVALID_PARAM");
    assert!(env.text.contains("does not exist"), "{}", env.text);
    assert!(env.text.contains("use Write"), "{}", env.text);
    let env = p.call(json!({"file_path": "z.rs", "old_string": "go(v)",
        "new_string": "stop(v)", "expected_size_bytes": 1}));
    env.assert_error("CONFLICT");
    let env = p.call(
        json!({"file_path": "../outside/secret.txt", "old_string": "outside",
        "new_string": "x"}),
    );
    env.assert_error("ACCESS_DENIED");
    assert_eq!(p.tree(), before);
    p.mkdir(".git");
    p.write(".git/config", "[core]\n");
    let before_git = p.tree();
    let env = p.call(json!({"file_path": ".git/config", "old_string": "[core]",
        "new_string": "[core]\n\thooksPath = x"}));
    env.assert_error("ACCESS_DENIED");
    assert_eq!(p.tree(), before_git);
}

#[test]
fn a_hard_linked_file_is_not_read_so_not_edited() {
    let p = Project::new();
    p.write("h.txt", "secret\n");
    std::fs::hard_link(p.path("h.txt"), p.base().join("outside/h2.txt")).unwrap();
    let before = p.tree();
    let env = p.call(json!({"file_path": "h.txt", "old_string": "secret", "new_string": "x"}));
    env.assert_error("CONFLICT");
    assert!(env.text.contains("cannot edit it"), "{}", env.text);
    assert!(!env.text.contains("secret\n"));
    assert_eq!(p.tree(), before);
}

#[test]
fn a_journaled_edit_has_a_change_id_and_reverts() {
    let p = Project::journaled();
    p.write("r.txt", "alpha\nbeta\n");
    let env = p.call(json!({"file_path": "r.txt", "old_string": "beta", "new_string": "gamma"}));
    env.assert_status("success");
    let id = env.data().change_id.clone().expect("change id");
    assert_eq!(p.read_string("r.txt"), "alpha\ngamma\n");
    p.call(json!({"change_id": id})).assert_status("success");
    assert_eq!(p.read_string("r.txt"), "alpha\nbeta\n");
}

#[test]
fn the_typed_edit_mirrors_the_json_one() {
    let p = Project::new();
    p.write("t.txt", "a\nb\na\n");
    let edits = [TextEdit {
        old_text: "a".into(),
        new_text: "c".into(),
        replace_all: true,
    }];
    let typed = tool().edit(p.root(), "t.txt", &edits, false);
    assert!(typed.error.is_none(), "{}", typed.text);
    let data = typed.data.expect("data");
    assert_eq!(data.edits.len(), 1);
    assert_eq!(data.edits[0].tolerance, "exact");
    assert_eq!(data.edits[0].lines, [1, 3]);
    assert_eq!(p.read_string("t.txt"), "c\nb\nc\n");
    let typed = tool().edit(p.root(), "t.txt", &edits, false);
    let error = typed.error.expect("no match left");
    assert!(matches!(error.code, write_tool::ErrorCode::InvalidParam));
}
