//! The journal as an attack surface (`docs/contract.md#journal`,
//! SECURITY.md): what a hostile tree, model or client can do with it.
//! Each test names what it guards and shows the attack happen.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use crate::support::{Project, decode, tool};

/// The records of the journal's `log`.
fn records(p: &Project) -> Vec<Value> {
    p.log_lines()
        .lines()
        .map(|l| serde_json::from_str(l).expect("record"))
        .collect()
}

/// A host command, its envelope.
fn host(p: &Project, arguments: Value) -> crate::support::Envelope {
    decode(&tool().call_as_host(p.root(), &arguments.to_string()))
}

/// The host's `verify`: whether the chain holds.
fn verified(p: &Project) -> (bool, String) {
    let json = tool().call_as_host(p.root(), &json!({"journal": "verify"}).to_string());
    let envelope: Value = serde_json::from_str(&json).expect("envelope");
    let text = envelope["text"].as_str().unwrap_or_default().to_owned();
    let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    (answer["verify"]["ok"] == true, text)
}

/// A write over an in-root hard link to an outside file replaces it
/// without reading it, and saves nothing of it: the journal holds no
/// copy of the outside content, a revert of that write is refused (there
/// is nothing to put back), and no answer — the revert's, its dry run's,
/// a forced one's — shows the outside bytes.
#[test]
fn a_hard_link_to_an_outside_file_is_never_read_by_the_journal() {
    let p = Project::journaled();
    let secret = p.base().join("outside/secret.txt");
    fs::hard_link(&secret, p.path("linked.txt")).expect("hard link");
    let env = p.put("linked.txt", "mine\n");
    assert_eq!(env.code(), None, "{}", env.text);
    let id = env.data().change_id.clone().expect("id");
    assert_eq!(fs::read_to_string(&secret).unwrap(), "outside secret\n");
    // Nothing saved of it.
    let record = records(&p).pop().expect("record");
    assert_eq!(record["files"][0]["unsaved"], true, "{record}");
    for entry in fs::read_dir(p.journal().join("objects"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let saved = fs::read(entry.path()).unwrap();
        assert!(
            !saved.starts_with(b"outside secret"),
            "the journal saved the outside file"
        );
    }
    for args in [
        json!({"change_id": id}),
        json!({"change_id": id, "dry_run": true}),
        json!({"change_id": id, "force": true}),
    ] {
        let env = p.call(args.clone());
        env.assert_error("INVALID_PARAM");
        assert!(
            env.text.contains("other hard links"),
            "{args}: {}",
            env.text
        );
        assert!(!env.text.contains("outside secret"), "{}", env.text);
    }
    assert_eq!(p.read_string("linked.txt"), "mine\n");
}

/// A revert whose file is now a hard link to an outside file reads it
/// neither for the conflict's diff nor for a dry run's preview: the file
/// counts as changed, and nothing of it is shown; forced, it is replaced
/// (the link split) without being read.
#[test]
fn a_revert_never_reads_a_file_that_became_a_hard_link() {
    let p = Project::journaled();
    let env = p.put("a.txt", "first\n");
    assert_eq!(env.code(), None);
    let id = p
        .put("a.txt", "second\n")
        .data()
        .change_id
        .clone()
        .expect("id");
    fs::remove_file(p.path("a.txt")).unwrap();
    fs::hard_link(p.base().join("outside/secret.txt"), p.path("a.txt")).unwrap();
    let shows = |env: &crate::support::Envelope| {
        format!(
            "{} {}",
            env.text,
            env.data.as_ref().map_or("", |d| d.diff_preview.as_str())
        )
    };
    let conflict = p.call(json!({"change_id": id}));
    conflict.assert_error("CONFLICT");
    assert!(
        !shows(&conflict).contains("outside secret"),
        "{}",
        shows(&conflict)
    );
    let dry = p.call(json!({"change_id": id, "dry_run": true, "force": true}));
    assert_eq!(dry.code(), None, "{}", dry.text);
    assert!(!shows(&dry).contains("outside secret"), "{}", shows(&dry));
    let forced = p.call(json!({"change_id": id, "force": true}));
    assert_eq!(forced.code(), None, "{}", forced.text);
    assert!(
        !shows(&forced).contains("outside secret"),
        "{}",
        shows(&forced)
    );
    assert_eq!(p.read_string("a.txt"), "first\n");
    assert_eq!(
        fs::read_to_string(p.base().join("outside/secret.txt")).unwrap(),
        "outside secret\n"
    );
}

/// The chain's head is anchored: an edit of the last record, its removal,
/// or the log cut short is found by `verify`, which no later record could
/// have caught.
#[test]
fn an_edit_or_removal_of_the_last_record_is_found() {
    let p = Project::journaled();
    p.put("a.txt", "1\n");
    p.put("b.txt", "2\n");
    let ok = |p: &Project| verified(p).0;
    assert!(ok(&p), "{}", verified(&p).1);
    let log = p.journal().join("log");
    let text = fs::read_to_string(&log).unwrap();
    // The last record's path changed, the chain left as it was.
    fs::write(
        &log,
        text.replace("\"path\":\"b.txt\"", "\"path\":\"c.txt\""),
    )
    .unwrap();
    assert!(!ok(&p), "an edit of the last record passed");
    // The last record removed.
    let first_line: String = text.lines().next().unwrap().to_owned() + "\n";
    fs::write(&log, &first_line).unwrap();
    assert!(!ok(&p), "a removed last record passed");
    // Put back whole, it verifies again.
    fs::write(&log, &text).unwrap();
    assert!(ok(&p), "{}", verified(&p).1);
    // The head removed: nothing anchors the last record.
    fs::remove_file(p.journal().join("pending")).unwrap();
    assert!(!ok(&p), "a journal without its head passed");
}

/// A write 400 directories deep records one directory, not every one (a
/// record stays small however deep the path: listing each by its whole
/// path made it grow with the square of the depth), and its revert still
/// removes every directory it made.
#[test]
fn a_deep_write_records_one_directory_and_its_revert_removes_all() {
    let p = Project::journaled();
    let path = format!("{}f.txt", "d/".repeat(400));
    let env = p.put(&path, "deep\n");
    assert_eq!(env.code(), None, "{}", env.text);
    let log_len = p.log_lines().len();
    assert!(log_len < 8 << 10, "the record is {log_len} bytes");
    let record = records(&p).pop().unwrap();
    assert_eq!(record["files"][0]["dirs"], json!(["d"]), "{record}");
    let env = p.call(json!({"change_id": env.data().change_id}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert!(!p.exists("d"), "the directories stay");
}

/// Checkpoints and changes are a person's or a model's: a model that
/// reuses a person's checkpoint name finds only its own; a person's `to`
/// finds the person's; a model may not revert a person's change, even by
/// guessing its id; its "latest change" is its own.
#[test]
fn a_model_cannot_take_back_or_shadow_what_a_person_did() {
    let p = Project::journaled();
    p.put("m.txt", "model 1\n");
    let person = host(
        &p,
        json!({"name": "checkpoint", "arguments": {"checkpoint": "safe"}}),
    );
    assert_eq!(person.code(), None, "{}", person.text);
    let by_person = decode(&tool().call_as_person(
        p.root(),
        &json!({"path": "p.txt", "content": "person\n"}).to_string(),
    ));
    let person_id = by_person.data().change_id.clone().expect("id");
    p.put("m.txt", "model 2\n");
    // The model's own checkpoint of the same name, after everything.
    p.call(json!({"checkpoint": "safe"})).data();
    p.put("m.txt", "model 3\n");
    // The person's rewind goes back to the person's point: every change
    // since, the person's own and the model's.
    let env = host(
        &p,
        json!({"name": "revert", "arguments": {"to": "safe", "dry_run": true}}),
    );
    assert_eq!(env.code(), None, "{}", env.text);
    let files: Vec<&str> = env.data().files.iter().map(|f| f.path.as_str()).collect();
    assert!(
        files.contains(&"p.txt") && files.contains(&"m.txt"),
        "{files:?}"
    );
    // The model's rewind finds only its own point, after the person's
    // change, so it undoes model 3 only.
    let env = p.call(json!({"to": "safe"}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("m.txt"), "model 2\n");
    assert_eq!(p.read_string("p.txt"), "person\n");
    // The person's change is not the model's to revert, by id or as its
    // latest.
    let env = p.call(json!({"change_id": person_id}));
    env.assert_error("PERMISSION_DENIED");
    assert!(env.text.contains("made by a person"), "{}", env.text);
    let env = p.call(json!({"name": "revert", "arguments": {}}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("p.txt"), "person\n");
}

/// The three rules, each where only it decides: a model's "latest" passes
/// over a person's newer change; a model does not find a checkpoint only a
/// person set; a model's rewind over a person's change is refused.
#[test]
fn a_models_latest_checkpoints_and_rewinds_are_its_own() {
    let p = Project::journaled();
    let as_person = |path: &str, content: &str| {
        let env = decode(&tool().call_as_person(
            p.root(),
            &json!({"path": path, "content": content}).to_string(),
        ));
        assert_eq!(env.code(), None, "{}", env.text);
    };
    // The person's change is the newest: the model's bare undo takes back
    // the model's own.
    p.put("m.txt", "model\n");
    as_person("p.txt", "person\n");
    let env = p.call(json!({"name": "revert", "arguments": {}}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert!(!p.exists("m.txt"), "the model's change undone");
    assert_eq!(p.read_string("p.txt"), "person\n");
    // A name only the person used is no checkpoint of the model's.
    let env = host(
        &p,
        json!({"name": "checkpoint", "arguments": {"checkpoint": "theirs"}}),
    );
    assert_eq!(env.code(), None, "{}", env.text);
    p.put("m.txt", "model again\n");
    let before = p.tree();
    let env = p.call(json!({"to": "theirs"}));
    env.assert_error("INVALID_PARAM");
    assert!(env.text.contains("has no checkpoint"), "{}", env.text);
    assert_eq!(p.tree(), before);
    // The model's own checkpoint, a person's change after it: the rewind
    // would take that back, and is refused.
    p.call(json!({"checkpoint": "mine"})).data();
    p.put("m.txt", "model later\n");
    as_person("p.txt", "person later\n");
    let before = p.tree();
    let env = p.call(json!({"to": "mine"}));
    env.assert_error("PERMISSION_DENIED");
    assert!(env.text.contains("made by a person"), "{}", env.text);
    assert_eq!(p.tree(), before);
}

/// A person's recorded change of a file after a model's is the person's:
/// no model revert puts the file back over it — by id, as its latest, as
/// `undo_edit` of the path, forced or not — and the refusal names the
/// person's change and how to go on. Once the person has undone their own
/// change, the model's revert is the model's again.
#[test]
fn a_model_never_reverts_over_a_persons_later_change_even_forced() {
    let p = Project::journaled();
    let model_id = p
        .put("a.txt", "model\n")
        .data()
        .change_id
        .clone()
        .expect("id");
    let by_person = decode(&tool().call_as_person(
        p.root(),
        &json!({"path": "a.txt", "content": "person\n"}).to_string(),
    ));
    let person_id = by_person.data().change_id.clone().expect("id");
    let undo_edit = json!({"type": "tool_use", "id": "toolu_1",
        "name": "str_replace_based_edit_tool",
        "input": {"command": "undo_edit", "path": "a.txt"}});
    let before = p.tree();
    for request in [
        json!({"change_id": model_id, "force": true}),
        json!({"change_id": model_id}),
        json!({"name": "revert", "arguments": {"force": true}}),
        json!({"name": "revert", "arguments": {"change_id": model_id, "dry_run": true}}),
        undo_edit.clone(),
    ] {
        let env = p.call(request.clone());
        env.assert_error("PERMISSION_DENIED");
        assert!(
            env.text.contains(&format!(
                "'a.txt' was changed by a person after that change ({person_id})"
            )) && env.text.contains("write the file as it should be"),
            "{request}: {}",
            env.text
        );
        assert_eq!(p.tree(), before, "{request}");
    }
    // The person may; and once the person's change is undone, the model's
    // is the model's to undo.
    let env = decode(&tool().call_as_person(
        p.root(),
        &json!({"name": "revert", "arguments": {"change_id": person_id}}).to_string(),
    ));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("a.txt"), "model\n");
    let env = p.call(json!({"change_id": model_id}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert!(!p.exists("a.txt"));
}

/// A checkpoint's name is printable text: escapes, newlines, bidi
/// controls and invisible characters are refused, and nothing is
/// recorded.
#[test]
fn checkpoint_names_that_could_act_on_a_terminal_are_refused() {
    let p = Project::journaled();
    p.put("a.txt", "a\n");
    let before = records(&p).len();
    for name in [
        "x\u{1b}]0;pwned\u{7}",
        "two\nlines",
        "abc\u{202e}fed",
        "zero\u{200b}width",
        "c1\u{9b}31m",
    ] {
        let env = p.call(json!({"checkpoint": name}));
        env.assert_error("INVALID_PARAM");
    }
    assert_eq!(records(&p).len(), before);
    assert_eq!(
        p.call(json!({"checkpoint": "before the refactor"})).code(),
        None
    );
}

/// `undo` without an id steps back: each takes back the latest change not
/// undone yet, so that run twice it undoes two changes; a revert of a
/// revert redoes.
#[test]
fn undo_run_twice_steps_back_twice() {
    let p = Project::journaled();
    p.put("a.txt", "1\n");
    p.put("a.txt", "2\n");
    p.put("a.txt", "3\n");
    let undo = || p.call(json!({"name": "revert", "arguments": {}}));
    let first = undo();
    assert_eq!(first.code(), None, "{}", first.text);
    assert_eq!(p.read_string("a.txt"), "2\n");
    let second = undo();
    assert_eq!(second.code(), None, "{}", second.text);
    assert_eq!(p.read_string("a.txt"), "1\n");
    // Redo the last undo.
    let redo = p.call(json!({"change_id": second.data().change_id}));
    assert_eq!(redo.code(), None, "{}", redo.text);
    assert_eq!(p.read_string("a.txt"), "2\n");
    // History shows what is undone.
    let history = p.host(json!({"journal": "history"}));
    let undone: Vec<&str> = history["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["undone"] == true)
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert!(undone.contains(&"c3"), "{history}");
}

/// A model's forced revert that would remove a file changed since its
/// creation needs the host's delete setting; removing what it created,
/// as it created it, does not.
#[test]
fn a_models_revert_removes_only_what_it_created_as_it_created_it() {
    let p = Project::journaled();
    let created = p
        .put("new.txt", "created\n")
        .data()
        .change_id
        .clone()
        .unwrap();
    fs::write(p.path("new.txt"), "a person's work since\n").unwrap();
    let env = p.call(json!({"change_id": created, "force": true}));
    env.assert_error("PERMISSION_DENIED");
    assert_eq!(p.read_string("new.txt"), "a person's work since\n");
    let other = p
        .put("other.txt", "created\n")
        .data()
        .change_id
        .clone()
        .unwrap();
    let env = p.call(json!({"change_id": other}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert!(!p.exists("other.txt"));
}

/// A reverted file keeps its own mode, not its saved copy's: reverting a
/// 0644 file whose bytes were first saved from a 0755 file gives it back
/// its own 0644. (A file a revert makes again takes the saved copy's bits:
/// SECURITY.md, known limits.)
#[test]
fn a_reverted_file_keeps_its_own_mode_not_its_saved_copys() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::journaled();
    p.write("run.sh", "same\n");
    p.write("data.txt", "same\n");
    fs::set_permissions(p.path("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(p.path("data.txt"), fs::Permissions::from_mode(0o644)).unwrap();
    p.put("run.sh", "changed\n");
    let id = p
        .put("data.txt", "changed\n")
        .data()
        .change_id
        .clone()
        .unwrap();
    let env = p.call(json!({"change_id": id}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("data.txt"), "same\n");
    assert_eq!(p.mode("data.txt"), 0o644);
    assert_eq!(p.mode("run.sh"), 0o755);
}

/// Two files of one `write_many` where one would have to be the other's
/// directory are refused in words, before anything is written.
#[test]
fn a_file_and_its_own_directory_in_one_write_many_are_refused_in_words() {
    let p = Project::journaled();
    let before = p.tree();
    let env = p.call(json!({"writes": [
        {"path": "d", "content": "file\n"},
        {"path": "d/x", "content": "inside\n"},
    ]}));
    env.assert_error("INVALID_PARAM");
    assert!(
        env.text.contains("both a file and a directory"),
        "{}",
        env.text
    );
    assert_eq!(p.tree().without("journal"), before.without("journal"));
}

/// A link to a name no request could give (a C1 control, a backslash) is
/// not written through: the journal would record a name that no undo
/// could name again. Refused in words; nothing changes.
#[test]
fn a_link_to_a_name_no_request_could_give_is_not_written_through() {
    for journaling in crate::support::JOURNALING {
        let p = Project::with(journaling);
        for (name, target) in [("csi", "x\u{9b}31m"), ("back", "a\\b")] {
            p.write(target, "old\n");
            p.symlink(target, name);
            let before = p.tree();
            let env = p.call(json!({"path": name, "content": "new\n"}));
            env.assert_error("INVALID_PARAM");
            assert!(env.text.contains("leads through a link"), "{}", env.text);
            assert_eq!(p.tree(), before, "{name}");
        }
    }
}

/// A journal directory the library is given must be private: others who
/// could read it would read what every change replaced.
#[test]
fn a_journal_directory_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    let journal = p.base().join("shared");
    fs::create_dir(&journal).expect("journal");
    fs::set_permissions(&journal, fs::Permissions::from_mode(0o755)).expect("chmod");
    let open = || {
        write_tool::Root::open(p.root_dir(), write_tool::ambient_authority())
            .expect("root")
            .with_journal(&journal)
    };
    let err = open().expect_err("a journal others can read");
    assert!(err.to_string().contains("not private"), "{err}");
    fs::set_permissions(&journal, fs::Permissions::from_mode(0o700)).expect("chmod");
    assert!(open().is_ok());
}

/// A library host that names the root itself (or a directory holding
/// it) as the journal is refused before the journal writes anything
/// there: its `root` note would be a file a call could rewrite.
#[test]
fn a_journal_that_is_the_root_or_holds_it_is_refused_before_anything_is_written() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    for journal in [p.root_dir(), p.base().to_path_buf()] {
        fs::set_permissions(&journal, fs::Permissions::from_mode(0o700)).expect("chmod");
        let before = p.tree();
        let err = write_tool::Root::open(p.root_dir(), write_tool::ambient_authority())
            .expect("root")
            .with_journal(&journal)
            .expect_err("a journal that is the root or holds it");
        let err = err.to_string();
        assert!(
            err.contains("it is a root") || err.contains("a root lies in it"),
            "{err}"
        );
        assert_eq!(p.tree(), before, "{}", journal.display());
        assert!(!journal.join("root").is_file(), "{}", journal.display());
    }
}

/// Contents a model chose to collide with a person's file under XXH3's
/// public secret (`tests/all/collision/`) are saved apart: each journal
/// keys its digests with a secret of its own, so the person's undo puts
/// back the person's bytes, not the model's look-alike.
#[test]
fn content_made_to_collide_with_a_persons_file_is_saved_apart() {
    let person = include_str!("collision/person.sh");
    let model = include_str!("collision/model.sh");
    assert_ne!(person, model);
    assert_eq!(
        xxhash_rust::xxh3::xxh3_128(person.as_bytes()),
        xxhash_rust::xxh3::xxh3_128(model.as_bytes()),
        "the fixture is a collision under the public secret"
    );
    let p = Project::journaled();
    p.write("deploy.sh", person);
    // The model's three writes: its look-alike saved, then the person's
    // file replaced.
    for (path, content) in [
        ("notes/scratch.txt", model),
        ("notes/scratch.txt", "x\n"),
        ("deploy.sh", "#!/bin/sh\necho simplified\n"),
    ] {
        let env = p.put(path, content);
        assert_eq!(env.code(), None, "{}", env.text);
    }
    let env = host(&p, json!({"name": "revert", "arguments": {}}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert!(
        p.read_string("deploy.sh") == person,
        "the undo put back the model's look-alike"
    );
    // The digests are keyed, and differ between journals.
    let digest = |p: &Project| {
        records(p)
            .iter()
            .rev()
            .find_map(|r| r["files"][0]["new"]["digest"].as_str().map(str::to_owned))
            .expect("a digest")
    };
    let other = Project::journaled();
    other.put("deploy.sh", "#!/bin/sh\necho simplified\n");
    let mine = records(&p)
        .iter()
        .find(|r| r["files"][0]["path"] == "deploy.sh" && r["kind"] == "write")
        .and_then(|r| r["files"][0]["new"]["digest"].as_str().map(str::to_owned))
        .expect("the write's digest");
    assert!(mine.starts_with('k'), "{mine}");
    assert_ne!(mine, digest(&other), "two journals, one secret");
}

/// The secret that names saved contents is read as the journal made it: a
/// secret of another length, a link or a directory in its place, or one
/// gone while contents saved under it are kept, is not used (nor drawn
/// again, which would leave every saved content unreadable without a
/// word): the write is refused in words and nothing changes.
#[test]
fn a_damaged_or_missing_secret_refuses_the_write_and_changes_nothing() {
    let p = Project::journaled();
    p.put("a.txt", "one\n");
    p.put("a.txt", "two\n");
    let secret = p.journal().join("secret");
    let good = fs::read(&secret).expect("the secret");
    let huge = vec![7u8; 5 << 20];
    let damages: [(&str, &dyn Fn()); 4] = [
        ("gone", &|| fs::remove_file(&secret).expect("rm")),
        ("huge", &|| fs::write(&secret, &huge).expect("write")),
        ("short", &|| fs::write(&secret, &good[1..]).expect("write")),
        ("a link", &|| {
            fs::rename(&secret, p.journal().join("elsewhere")).expect("mv");
            std::os::unix::fs::symlink("elsewhere", &secret).expect("ln");
        }),
    ];
    for (what, damage) in damages {
        damage();
        let log = fs::read(p.journal().join("log")).expect("log");
        let env = p.put("a.txt", "three\n");
        assert_eq!(env.code(), Some("EXECUTION_ERROR"), "{what}: {}", env.text);
        assert!(env.text.contains("secret"), "{what}: {}", env.text);
        assert_eq!(p.read_string("a.txt"), "two\n", "{what}");
        assert_eq!(
            fs::read(p.journal().join("log")).expect("log"),
            log,
            "{what}"
        );
        let _ = fs::remove_file(p.journal().join("elsewhere"));
        let _ = fs::remove_file(&secret);
        fs::write(&secret, &good).expect("put back");
        fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    // Put back, the journal works and the change is undone.
    assert_eq!(p.put("a.txt", "three\n").code(), None);
    let env = host(&p, json!({"name": "revert", "arguments": {}}));
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("a.txt"), "two\n");
}
