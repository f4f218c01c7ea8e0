//! Sessions (`docs/contract.md#session`): within one, a write takes as its
//! base the version the session last viewed, so that a change made on a
//! stale view is merged rather than written over another writer's; with
//! read-first, a write or edit of an existing file the session has neither
//! viewed nor written is refused.

use std::sync::OnceLock;

use serde_json::{Value, json};
use write_tool::{Options, Session, WriteTool};
use write_tool_test_support::{Envelope, decode};

use crate::support::{Project, options, tool};

/// A tool whose sessions read first.
fn reading_first() -> &'static WriteTool {
    static TOOL: OnceLock<WriteTool> = OnceLock::new();
    TOOL.get_or_init(|| {
        WriteTool::new(Options {
            read_first: true,
            ..options()
        })
        .expect("component compiles")
    })
}

fn call_in(tool: &WriteTool, p: &Project, session: &Session, arguments: Value) -> Envelope {
    decode(&tool.call_in(p.root(), &arguments.to_string(), session, None))
}

const LINES: &str = "one\ntwo\nthree\nfour\nfive\n";

#[test]
fn a_write_made_on_a_stale_view_is_merged_though_it_names_no_base() {
    let p = Project::journaled();
    p.write("a.txt", LINES);
    let session = Session::new();
    call_in(
        tool(),
        &p,
        &session,
        json!({"name": "view", "arguments": {"path": "a.txt"}}),
    )
    .assert_status("success");
    // Another writer changes the file after the session's view.
    p.write("a.txt", LINES.replace("five", "FIVE"));
    let env = call_in(
        tool(),
        &p,
        &session,
        json!({"path": "a.txt", "content": LINES.replace("one", "ONE")}),
    );
    env.assert_status("success");
    assert!(env.data().merged, "{env:#?}");
    assert_eq!(
        p.read_string("a.txt"),
        LINES.replace("one", "ONE").replace("five", "FIVE")
    );
    // Outside the session the same write is written as it comes.
    p.write("a.txt", LINES);
    let env = decode(&tool().call(
        p.root(),
        &json!({"path": "a.txt", "content": "x\n"}).to_string(),
    ));
    assert!(!env.data().merged);
    assert_eq!(p.read_string("a.txt"), "x\n");
    // Lock values ask for the file as it was: no version is taken for
    // them, and a mismatch is refused.
    let env = call_in(
        tool(),
        &p,
        &session,
        json!({"path": "a.txt", "content": "y\n", "expected_size_bytes": 1}),
    );
    env.assert_error("CONFLICT");
    session.end(p.root());
}

#[test]
fn read_first_refuses_a_change_of_a_file_the_session_has_not_seen() {
    let p = Project::journaled();
    p.write("a.txt", LINES);
    p.write("b.txt", LINES);
    let session = Session::new();
    let before = p.tree_but_seen();
    for arguments in [
        json!({"path": "a.txt", "content": "x\n"}),
        json!({"name": "Edit", "arguments": {"file_path": "a.txt", "old_string": "one",
            "new_string": "1"}}),
        json!({"type": "tool_use", "id": "t", "name": "str_replace_based_edit_tool",
            "input": {"command": "str_replace", "path": "a.txt", "old_str": "one",
            "new_str": "1"}}),
    ] {
        let env = call_in(reading_first(), &p, &session, arguments);
        env.assert_error("INVALID_PARAM");
        assert!(
            env.text
                .starts_with("File 'a.txt' exists and has not been viewed in this session"),
            "{}",
            env.text
        );
    }
    assert_eq!(p.tree_but_seen(), before);
    // Viewed: written.
    call_in(
        reading_first(),
        &p,
        &session,
        json!({"name": "view", "arguments": {"path": "a.txt"}}),
    )
    .assert_status("success");
    call_in(
        reading_first(),
        &p,
        &session,
        json!({"path": "a.txt", "content": "x\n"}),
    )
    .assert_status("success");
    // A new file, and then the file the session wrote itself.
    for content in ["new\n", "newer\n"] {
        call_in(
            reading_first(),
            &p,
            &session,
            json!({"path": "c.txt", "content": content}),
        )
        .assert_status("success");
    }
    // Lock values are no view: a size or a time can be guessed.
    let size = LINES.len();
    let before = p.tree_but_seen();
    call_in(
        reading_first(),
        &p,
        &session,
        json!({"path": "b.txt", "content": "y\n", "expected_size_bytes": size}),
    )
    .assert_error("INVALID_PARAM");
    assert_eq!(p.tree_but_seen(), before);
    // The version a view named (its base, seen by another session here)
    // plays the view's part.
    let viewed = decode(&reading_first().call(
        p.root(),
        &json!({"name": "view", "arguments": {"path": "b.txt"}}).to_string(),
    ));
    let base = viewed.data().view.as_ref().and_then(|v| v.base.clone());
    call_in(
        reading_first(),
        &p,
        &session,
        json!({"path": "b.txt", "content": "y\n", "base": base.expect("a base")}),
    )
    .assert_status("success");
    // Another session has seen nothing of what this one saw.
    let other = Session::new();
    call_in(
        reading_first(),
        &p,
        &other,
        json!({"path": "c.txt", "content": "z\n"}),
    )
    .assert_error("INVALID_PARAM");
    // Outside a session nothing is refused for it.
    let env = decode(&reading_first().call(
        p.root(),
        &json!({"path": "c.txt", "content": "z\n"}).to_string(),
    ));
    env.assert_status("success");
    session.end(p.root());
    other.end(p.root());
}

#[test]
fn a_session_that_ends_leaves_no_record_and_starts_again_with_nothing_seen() {
    let p = Project::journaled();
    p.write("a.txt", LINES);
    let session = Session::new();
    call_in(
        reading_first(),
        &p,
        &session,
        json!({"name": "view", "arguments": {"path": "a.txt"}}),
    )
    .assert_status("success");
    let entries = || -> usize {
        std::fs::read_dir(p.journal().join("sessions")).map_or(0, |d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with(session.id()))
            })
            .count()
        })
    };
    assert_eq!(entries(), 1);
    session.end(p.root());
    assert_eq!(entries(), 0);
    call_in(
        reading_first(),
        &p,
        &session,
        json!({"path": "a.txt", "content": "x\n"}),
    )
    .assert_error("INVALID_PARAM");
    assert_eq!(p.read_string("a.txt"), LINES);
}

/// A version the session viewed that is stale stops neither a patch (its
/// hunks find their places in the file now) nor a write of a file gone
/// since (written as it comes): neither is refused, neither is merged.
/// Whether the stale version was looked at on the way cannot be seen from
/// outside (a write it cannot merge goes on as if the session had not
/// viewed the file); what can is asserted.
#[test]
fn a_stale_view_of_the_session_stops_neither_a_patch_nor_a_write_of_a_file_gone_since() {
    let p = Project::journaled();
    p.write("a.txt", LINES);
    let session = Session::new();
    call_in(
        tool(),
        &p,
        &session,
        json!({"name": "view", "arguments": {"path": "a.txt"}}),
    )
    .assert_status("success");
    p.write("a.txt", LINES.replace("five", "FIVE"));
    // A patch finds its places in the file now: the bytes are the same
    // either way, so what says the session's version was not used is the
    // answer's `merged` (a write in its place is merged: see the test
    // above).
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n";
    let env = call_in(
        tool(),
        &p,
        &session,
        json!({"name": "apply_patch", "arguments": {"input": patch}}),
    );
    env.assert_status("success");
    assert!(!env.data().merged, "{env:#?}");
    assert!(!env.text.contains("merged"), "{}", env.text);
    assert_eq!(
        p.read_string("a.txt"),
        LINES.replace("one", "ONE").replace("five", "FIVE")
    );
    // A file gone since the view is written as the call says.
    call_in(
        tool(),
        &p,
        &session,
        json!({"name": "view", "arguments": {"path": "a.txt"}}),
    )
    .assert_status("success");
    std::fs::remove_file(p.path("a.txt")).expect("remove");
    let env = call_in(
        tool(),
        &p,
        &session,
        json!({"path": "a.txt", "content": "again\n"}),
    );
    env.assert_status("success");
    assert!(!env.data().merged, "{env:#?}");
    assert_eq!(env.data().operation, "create");
    assert_eq!(p.read_string("a.txt"), "again\n");
    session.end(p.root());
}

#[test]
fn read_first_spares_patches_and_a_version_no_longer_kept_writes_as_it_comes() {
    let p = Project::journaled();
    p.write("a.txt", LINES);
    p.write("b.txt", LINES);
    let session = Session::new();
    // A patch of a file the session never viewed applies.
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n";
    call_in(
        reading_first(),
        &p,
        &session,
        json!({"name": "apply_patch", "arguments": {"input": patch}}),
    )
    .assert_status("success");
    // write_many's writes are writes.
    let env = call_in(
        reading_first(),
        &p,
        &session,
        json!({"name": "write_many", "arguments": {"writes": [
            {"path": "b.txt", "content": "x\n"}]}}),
    );
    env.assert_error("INVALID_PARAM");
    assert_eq!(p.read_string("b.txt"), LINES);
    // The version viewed, dropped from the cache: the write goes through.
    call_in(
        reading_first(),
        &p,
        &session,
        json!({"name": "view", "arguments": {"path": "b.txt"}}),
    )
    .assert_status("success");
    std::fs::remove_dir_all(p.journal().join("seen")).expect("drop the kept versions");
    p.write("b.txt", LINES.replace("five", "FIVE"));
    let env = call_in(
        reading_first(),
        &p,
        &session,
        json!({"path": "b.txt", "content": "y\n"}),
    );
    env.assert_status("success");
    assert!(!env.data().merged);
    assert_eq!(p.read_string("b.txt"), "y\n");
    session.end(p.root());
}
