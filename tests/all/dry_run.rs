use serde_json::json;

use crate::support::Project;

#[test]
fn a_dry_run_create_changes_nothing_not_even_directories() {
    let p = Project::new();
    let before = p.tree();
    let env = p.call(json!({"path": "new/deep/file.txt", "content": "a\nb\n", "dry_run": true}));
    env.assert_status("partial");
    assert_eq!(p.tree(), before);
    assert!(!p.exists("new"));
    let data = env.data();
    assert!(!data.applied);
    assert_eq!(data.operation, "create");
    assert_eq!(
        data.diff_preview,
        "--- a/new/deep/file.txt\n+++ b/new/deep/file.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"
    );
    assert_eq!(
        env.text,
        "[Dry Run] Would create 'new/deep/file.txt' (+2 lines)."
    );
    let s = &env.stats;
    assert_eq!(
        (s.bytes_written, s.original_size, s.new_size),
        (Some(0), Some(0), Some(0))
    );
    assert_eq!(env.context.params_input["dry_run"], true);
}

#[test]
fn a_dry_run_update_changes_nothing() {
    let p = Project::new();
    p.write("f.txt", "one\ntwo\n");
    let before = p.tree();
    let env = p.call(json!({"path": "f.txt", "content": "one\n2\nthree\n", "dry_run": true}));
    env.assert_status("partial");
    assert_eq!(p.tree(), before);
    assert_eq!(env.text, "[Dry Run] Would update 'f.txt' (+2/-1 lines).");
    assert_eq!(env.stats.numbers(), (0, 8, 8, 2, 1));
    assert_eq!(env.data().operation, "update");
}

#[test]
fn a_dry_run_gives_the_same_diff_as_the_write() {
    let p = Project::new();
    p.write("f.txt", "a\nb\nc\n");
    let dry = p.call(json!({"path": "f.txt", "content": "a\nc\nd\n", "dry_run": true}));
    let real = p.put("f.txt", "a\nc\nd\n");
    assert_eq!(dry.preview(), real.preview());
    assert_eq!(dry.stats.lines_added, real.stats.lines_added);
    assert_eq!(dry.stats.lines_removed, real.stats.lines_removed);
}

#[test]
fn a_dry_run_with_identical_content_is_partial_and_writes_nothing() {
    let p = Project::new();
    p.write("same.txt", "same\n");
    let before = p.tree();
    let env = p.call(json!({"path": "same.txt", "content": "same\n", "dry_run": true}));
    env.assert_status("partial");
    assert!(!env.data().applied);
    assert_eq!(env.preview(), "");
    assert_eq!(p.tree(), before);
}

#[test]
fn dry_run_errors_are_the_same_errors() {
    let p = Project::new();
    p.mkdir("dir");
    for (path, code) in [
        ("../x", "ACCESS_DENIED"),
        ("dir", "IS_DIRECTORY"),
        ("/abs", "INVALID_PARAM"),
    ] {
        let before = p.tree();
        let env = p.call(json!({"path": path, "content": "x", "dry_run": true}));
        env.assert_error(code);
        assert_eq!(p.tree(), before);
    }
}
