//! The journal (`docs/contract.md#journal`): every applied change
//! recorded with what it replaced; revert, checkpoints, write_many, the
//! chain, the bounds.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use write_tool::{Options, WriteTool};

use crate::support::{Project, Tree, decode, options};

/// SHA-256 in lowercase hex, as the chain names a line.
fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The records of the journal's `log`.
fn records(p: &Project) -> Vec<Value> {
    p.log_lines()
        .lines()
        .map(|l| serde_json::from_str(l).expect("record"))
        .collect()
}

#[test]
fn every_applied_write_is_recorded_and_nothing_else_is() {
    let p = Project::journaled();
    let env = p.put("a.txt", "one\n");
    let created = env.data().change_id.clone().expect("change id");
    let env = p.put("a.txt", "two\n");
    let updated = env.data().change_id.clone().expect("change id");
    assert_ne!(created, updated);
    // A dry run, identical content and a refusal record nothing.
    let dry = p.call(json!({"path": "a.txt", "content": "three\n", "dry_run": true}));
    assert_eq!(dry.data().change_id, None);
    let same = p.put("a.txt", "two\n");
    assert_eq!(same.data().change_id, None);
    p.call(json!({"path": "../x", "content": "x"}))
        .assert_error("ACCESS_DENIED");
    let records = records(&p);
    assert_eq!(records.len(), 2, "{records:?}");
    let [first, second] = &records[..] else {
        unreachable!()
    };
    assert_eq!(first["id"], created.as_str());
    assert_eq!(first["files"][0]["op"], "create");
    assert_eq!(first["files"][0]["path"], "a.txt");
    assert!(first["files"][0]["old"].is_null());
    assert_eq!(second["files"][0]["op"], "update");
    assert_eq!(second["files"][0]["old"]["size"], 4);
    assert_eq!(second["files"][0]["new"]["size"], 4);
    // The old content is saved, named by its digest.
    let digest = second["files"][0]["old"]["digest"]
        .as_str()
        .expect("digest");
    assert_eq!(
        fs::read(p.journal().join("objects").join(digest)).expect("saved"),
        b"one\n"
    );
    // Chained: each record holds the SHA-256 of the line before.
    assert_eq!(first["prev"], "0".repeat(64));
    let log = fs::read_to_string(p.journal().join("log")).expect("log");
    let first_line = log.lines().next().expect("a line");
    assert_eq!(second["prev"], sha256(first_line.as_bytes()));
}

#[test]
fn revert_restores_content_and_mode_and_removes_what_a_change_created() {
    let p = Project::journaled();
    p.write("tool.sh", "#!/bin/sh\necho one\n");
    fs::set_permissions(p.path("tool.sh"), fs::Permissions::from_mode(0o750)).expect("chmod");
    let before = p.tree();
    let update = p.put("tool.sh", "#!/bin/sh\necho two\n");
    let update_id = update.data().change_id.clone().expect("id");
    let create = p.put("new/deep/file.txt", "fresh\n");
    assert!(create.data().change_id.is_some());
    // The latest change first: the created file and its directories go.
    let env = p.call(json!({"change_id": create.data().change_id}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert!(!p.exists("new"), "created directories removed");
    // Then the update: the old bytes and mode come back.
    let env = p.call(json!({"change_id": update_id}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("tool.sh"), "#!/bin/sh\necho one\n");
    assert_eq!(p.mode("tool.sh"), 0o750);
    assert_eq!(
        p.tree().without("journal").contents_and_modes(),
        before.without("journal").contents_and_modes()
    );
    // A revert is a change too: reverting it writes `two` again.
    let revert_id = env.data().change_id.clone().expect("revert id");
    let env = p.call(json!({"change_id": revert_id}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("tool.sh"), "#!/bin/sh\necho two\n");
}

#[test]
fn a_revert_of_a_file_changed_since_is_a_conflict_unless_forced() {
    let p = Project::journaled();
    p.write("a.txt", "one\n");
    let id = p
        .put("a.txt", "two\n")
        .data()
        .change_id
        .clone()
        .expect("id");
    p.write("a.txt", "three, by someone else\n");
    let before = p.tree();
    let env = p.call(json!({"change_id": id}));
    env.assert_error("CONFLICT");
    assert!(env.text.contains("three, by someone else"), "{}", env.text);
    assert_eq!(p.tree(), before, "a refused revert changes nothing");
    let env = p.call(json!({"change_id": id, "force": true}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("a.txt"), "one\n");
}

#[test]
fn a_checkpoint_rewinds_every_later_change_at_once() {
    let p = Project::journaled();
    p.write("keep.txt", "kept\n");
    p.put("a.txt", "a1\n");
    let env = p.call(json!({"checkpoint": "before-refactor"}));
    assert_eq!(env.data().operation, "checkpoint");
    let before = p.tree();
    p.put("a.txt", "a2\n");
    p.put("b/c.txt", "c\n");
    p.put("a.txt", "a3\n");
    p.put("keep.txt", "changed\n");
    let env = p.call(json!({"to": "before-refactor", "dry_run": true}));
    assert_eq!(env.status, "partial");
    assert_eq!(env.data().files.len(), 3, "{:?}", env.data().files);
    let env = p.call(json!({"to": "before-refactor"}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(
        p.tree().without("journal").contents_and_modes(),
        before.without("journal").contents_and_modes()
    );
}

#[test]
fn write_many_writes_all_or_none() {
    let p = Project::journaled();
    p.write("a.txt", "a\n");
    let before = p.tree();
    // One bad write refuses them all, before anything is staged.
    let env = p.call(json!({"writes": [
        {"path": "a.txt", "content": "A\n"},
        {"path": "new.txt", "content": "new\n"},
        {"path": ".git/config", "content": "x"},
    ]}));
    env.assert_error("ACCESS_DENIED");
    assert!(env.text.starts_with("writes[2]"), "{}", env.text);
    assert_eq!(p.tree().without("journal"), before.without("journal"));
    let env = p.call(json!({"writes": [
        {"path": "a.txt", "content": "A\n"},
        {"path": "dir/new.txt", "content": "new\n"},
    ]}));
    assert_eq!(env.code(), None, "{}", env.text);
    let data = env.data();
    assert_eq!(data.operation, "many");
    assert_eq!(data.files.len(), 2);
    assert!(data.diff_preview.contains("+A"), "{}", data.diff_preview);
    assert!(data.diff_preview.contains("+new"), "{}", data.diff_preview);
    assert_eq!(p.read_string("a.txt"), "A\n");
    assert_eq!(p.read_string("dir/new.txt"), "new\n");
    // One revert undoes the whole group.
    let env = p.call(json!({"change_id": data.change_id}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(
        p.tree().without("journal").contents_and_modes(),
        before.without("journal").contents_and_modes()
    );
}

#[test]
fn the_host_reads_history_and_verifies_the_chain() {
    let p = Project::journaled();
    p.put("a.txt", "1\n");
    p.put("a.txt", "2\n");
    p.put("b.txt", "b\n");
    let history = p.host(json!({"journal": "history", "path": "a.txt"}));
    assert_eq!(history["history"].as_array().map(Vec::len), Some(2));
    let verify = p.host(json!({"journal": "verify"}));
    assert_eq!(verify["verify"]["ok"], true, "{verify}");
    // A model cannot ask.
    p.call(json!({"journal": "history"}))
        .assert_error("PERMISSION_DENIED");
    // An edited record is found.
    let log = p.journal().join("log");
    let text = fs::read_to_string(&log).expect("log");
    fs::write(&log, text.replacen("\"size\":2", "\"size\":3", 1)).expect("edit");
    let verify = p.host(json!({"journal": "verify"}));
    assert_eq!(verify["verify"]["ok"], false, "{verify}");
    let _ = Tree::of(&p.journal());
}

#[test]
fn a_host_can_keep_revert_from_the_model() {
    let tool = WriteTool::new(Options {
        model_revert: false,
        ..options()
    })
    .expect("tool");
    let p = Project::journaled();
    let call = |args: Value| decode(&tool.call(p.root(), &args.to_string()));
    let id = call(json!({"path": "a.txt", "content": "one\n"}))
        .data()
        .change_id
        .clone()
        .expect("recorded");
    let before = p.tree();
    call(json!({"change_id": id})).assert_error("PERMISSION_DENIED");
    call(json!({"checkpoint": "x"})).assert_error("PERMISSION_DENIED");
    assert_eq!(p.tree(), before);
    // The host's own command may.
    let env = decode(&tool.call_as_host(p.root(), &json!({"change_id": id}).to_string()));
    assert_eq!(env.code(), None, "{}", env.text);
    assert!(!p.exists("a.txt"));
}

#[test]
fn a_saved_content_altered_since_is_never_restored() {
    let p = Project::journaled();
    p.write("a.txt", "one\n");
    let id = p
        .put("a.txt", "two\n")
        .data()
        .change_id
        .clone()
        .expect("id");
    // The saved copy is the old file itself (a hard link): written in
    // place, it no longer has its digest.
    let record = &records(&p)[0];
    let digest = record["files"][0]["old"]["digest"]
        .as_str()
        .expect("digest");
    fs::write(p.journal().join("objects").join(digest), "forged\n").expect("alter");
    let before = p.tree();
    let env = p.call(json!({"change_id": id, "force": true}));
    env.assert_error("EXECUTION_ERROR");
    assert!(
        env.text.contains("changed since it was saved"),
        "{}",
        env.text
    );
    assert_eq!(p.tree(), before);
    assert_eq!(p.read_string("a.txt"), "two\n");
}

#[test]
fn undo_gives_back_the_exact_bytes_of_a_file_in_another_encoding() {
    let p = Project::journaled();
    // windows-1252 with CRLF line endings: kept by the write, and given back
    // byte for byte by the revert.
    let old: &[u8] = b"caf\xe9 cr\xe8me\r\nna\xefve\r\n";
    p.write("menu.txt", old);
    let env = p.put("menu.txt", "café crème\nnaïve\nbrûlée\n");
    assert_eq!(env.data().encoding, "windows-1252", "{}", env.text);
    let id = env.data().change_id.clone().expect("id");
    p.call(json!({"change_id": id})).assert_status("success");
    assert_eq!(p.read("menu.txt"), old);
}

#[test]
fn verify_finds_a_removed_or_reordered_record() {
    let p = Project::journaled();
    for i in 0..4 {
        p.put("a.txt", &format!("{i}\n"));
    }
    let log = p.journal().join("log");
    let lines: Vec<String> = p.log_lines().lines().map(str::to_owned).collect();
    for (what, edited) in [
        (
            "removed",
            [&lines[0], &lines[1], &lines[3]]
                .map(|l| l.as_str())
                .join("\n"),
        ),
        (
            "reordered",
            [&lines[0], &lines[2], &lines[1], &lines[3]]
                .map(|l| l.as_str())
                .join("\n"),
        ),
    ] {
        fs::write(&log, edited + "\n").expect("edit");
        let verify = p.host(json!({"journal": "verify"}));
        assert_eq!(verify["verify"]["ok"], false, "{what}: {verify}");
    }
    fs::write(&log, lines.join("\n") + "\n").expect("restore");
    assert_eq!(p.host(json!({"journal": "verify"}))["verify"]["ok"], true);
}

#[test]
fn the_bounds_drop_the_oldest_changes_and_what_only_they_saved() {
    let tool = WriteTool::new(Options {
        journal_bounds: (1 << 30, 3, 30),
        ..options()
    })
    .expect("tool");
    let p = Project::journaled();
    let call = |args: Value| decode(&tool.call(p.root(), &args.to_string()));
    for i in 0..70 {
        call(json!({"path": "a.txt", "content": format!("version {i}\n")}))
            .assert_status("success");
    }
    let kept: Vec<Value> = records(&p);
    let changes = kept.iter().filter(|r| r["kind"] == "write").count();
    // Applied every 64th record, and for good by `journal gc`.
    assert!(changes < 70, "{changes} changes kept");
    let gc = tool.call_as_host(p.root(), &json!({"journal": "gc"}).to_string());
    assert!(gc.contains(r#""status":"success""#), "{gc}");
    let kept: Vec<Value> = records(&p);
    let changes = kept.iter().filter(|r| r["kind"] == "write").count();
    assert!(changes <= 3, "{changes} changes kept after gc");
    let saved = fs::read_dir(p.journal().join("objects"))
        .expect("objects")
        .count();
    assert!(saved <= 3, "{saved} saved contents kept");
    let verify = tool.call_as_host(p.root(), &json!({"journal": "verify"}).to_string());
    assert!(verify.contains(r#"\"ok\":true"#), "{verify}");
    // A change whose saved content alone is over the size bound is refused.
    call(json!({"path": "a.txt", "content": "x".repeat(200)})).assert_status("success");
    let small = WriteTool::new(Options {
        journal_bounds: (64, 100, 30),
        ..options()
    })
    .expect("tool");
    let env = decode(&small.call(
        p.root(),
        &json!({"path": "a.txt", "content": "short\n"}).to_string(),
    ));
    env.assert_error("EXECUTION_ERROR");
    assert!(env.text.contains("size bound"), "{}", env.text);
    assert_eq!(p.read_string("a.txt"), "x".repeat(200));
    // The old file was linked into the journal before the bound refused
    // the change: the link is dropped again, so that the file keeps one
    // name (with two, every later write would take it for a hard link).
    use std::os::unix::fs::MetadataExt;
    assert_eq!(fs::metadata(p.path("a.txt")).expect("stat").nlink(), 1);
}

#[test]
fn write_many_is_bounded_and_refuses_a_file_named_twice() {
    let tool = WriteTool::new(Options {
        many_bounds: (2, 1 << 20),
        ..options()
    })
    .expect("tool");
    let p = Project::journaled();
    let call = |args: Value| decode(&tool.call(p.root(), &args.to_string()));
    let before = p.tree();
    let three = json!({"writes": [
        {"path": "a", "content": "a"}, {"path": "b", "content": "b"}, {"path": "c", "content": "c"}
    ]});
    call(three).assert_error("INVALID_PARAM");
    let twice = json!({"writes": [{"path": "a", "content": "a"}, {"path": "./a", "content": "b"}]});
    let env = call(twice);
    env.assert_error("INVALID_PARAM");
    assert!(env.text.contains("both change 'a'"), "{}", env.text);
    assert_eq!(p.tree().without("journal"), before.without("journal"));
}

/// A reverted file is a file of its own, not a second name of the
/// journal's saved copy: the next write reads it, keeps its format and
/// shows its diff, as for any file (`docs/contract.md#journal`).
#[test]
fn a_restored_file_has_no_other_name_and_later_writes_keep_its_format() {
    use std::os::unix::fs::MetadataExt;
    let p = Project::journaled();
    p.write("win.txt", "one\r\ntwo\r\n");
    let id = p.put("win.txt", "one\nTWO\n").data().change_id.clone();
    let env = p.call(json!({"change_id": id}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("win.txt"), "one\r\ntwo\r\n");
    let links = fs::metadata(p.path("win.txt")).expect("stat").nlink();
    assert_eq!(links, 1, "the restored file shares its inode");
    let env = p.put("win.txt", "one\nthree\n");
    assert_eq!(env.status, "success", "{}", env.text);
    assert_eq!(env.data().line_endings.as_deref(), Some("crlf"));
    assert!(env.data().diff_preview.contains("-two"), "{}", env.text);
    assert_eq!(p.read_string("win.txt"), "one\r\nthree\r\n");
}

/// The `write-tool` host gives the files a `write_many` replaced their
/// permission bits back, as it does for a single write.
#[test]
fn write_many_keeps_the_mode_of_the_files_it_replaces() {
    let p = Project::journaled();
    p.write("run.sh", "#!/bin/sh\necho one\n");
    fs::set_permissions(p.path("run.sh"), fs::Permissions::from_mode(0o750)).expect("chmod");
    let env = p.call(json!({"writes": [
        {"path": "run.sh", "content": "#!/bin/sh\necho two\n"},
        {"path": "other.txt", "content": "x\n"},
    ]}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("run.sh"), "#!/bin/sh\necho two\n");
    assert_eq!(p.mode("run.sh"), 0o750);
}

/// A journal made by the first builds with one, whose pending marks were a
/// directory (empty between commits), is taken up as it is.
#[test]
fn a_journal_with_the_first_builds_pending_directory_is_taken_up() {
    let p = Project::journaled();
    fs::create_dir(p.journal().join("pending")).expect("old layout");
    let env = p.put("a.txt", "one\n");
    assert_eq!(env.code(), None, "{}", env.text);
    assert!(env.data().change_id.is_some());
    assert!(p.journal().join("pending").is_file());
}

/// A file a revert removed and a second revert brings back gets the mode it
/// had when it was removed, which the journal kept with its content.
#[test]
fn a_file_brought_back_by_reverting_a_revert_keeps_its_mode() {
    let p = Project::journaled();
    let id = p.put("run.sh", "#!/bin/sh\n").data().change_id.clone();
    fs::set_permissions(p.path("run.sh"), fs::Permissions::from_mode(0o750)).expect("chmod");
    let removed = p.call(json!({"change_id": id}));
    assert_eq!(removed.code(), None, "{}", removed.text);
    assert!(!p.exists("run.sh"));
    let back = p.call(json!({"change_id": removed.data().change_id}));
    assert_eq!(back.code(), None, "{}", back.text);
    assert_eq!(p.read_string("run.sh"), "#!/bin/sh\n");
    assert_eq!(p.mode("run.sh"), 0o750);
}
