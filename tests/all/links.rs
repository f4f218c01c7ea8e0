//! A patch's `Delete File` of a symbolic link removes the link, as `rm`
//! and git do (`docs/contract.md#patch`): never what it points to, which
//! may be a file outside the root or nothing at all. The journal keeps the
//! link's target, so a revert makes the same link again, and a revert of
//! that revert removes it once more.

use serde_json::{Value, json};

use crate::support::{Envelope, Project, decode, deleting};

fn call(p: &Project, arguments: Value) -> Envelope {
    decode(&deleting().call(p.root(), &arguments.to_string()))
}

fn delete(p: &Project, path: &str, dry_run: bool) -> Envelope {
    let patch = format!("*** Begin Patch\n*** Delete File: {path}\n*** End Patch\n");
    call(
        p,
        json!({"name": "apply_patch", "arguments": {"input": patch, "dry_run": dry_run}}),
    )
}

fn link_of(p: &Project, rel: &str) -> Option<String> {
    std::fs::read_link(p.path(rel))
        .ok()
        .map(|t| t.to_string_lossy().into_owned())
}

#[test]
fn deleting_a_link_removes_the_link_and_a_revert_makes_it_again() {
    let p = Project::journaled();
    p.write("real/x.txt", "x\n");
    p.symlink("x.txt", "real/link.txt");
    // A dry run says what would go and changes nothing.
    let before = p.tree();
    let env = delete(&p, "real/link.txt", true);
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.tree(), before, "a dry run changes nothing");
    let env = delete(&p, "real/link.txt", false);
    env.assert_status("success");
    assert!(!p.exists("real/link.txt"), "the link is gone: {}", env.text);
    assert_eq!(p.read_string("real/x.txt"), "x\n", "its target stays");
    let preview = &env.data().diff_preview;
    assert!(
        preview.contains("-(a symbolic link to 'x.txt')"),
        "the preview names the link: {preview}"
    );
    let id = env.data().change_id.clone().expect("a recorded change");
    let undone = call(&p, json!({"change_id": id}));
    undone.assert_status("success");
    assert_eq!(link_of(&p, "real/link.txt").as_deref(), Some("x.txt"));
    assert_eq!(p.read_string("real/x.txt"), "x\n");
    // The revert is a change too: undone, the link goes again.
    let again = undone.data().change_id.clone().expect("the revert's id");
    call(&p, json!({"change_id": again})).assert_status("success");
    assert!(!p.exists("real/link.txt"));
    assert_eq!(p.read_string("real/x.txt"), "x\n");
}

#[test]
fn a_link_out_of_the_root_or_to_nothing_is_removed_without_touching_its_target() {
    let p = Project::journaled();
    let outside = p.base().join("outside.txt");
    std::fs::write(&outside, "secret\n").expect("outside");
    p.symlink("../outside.txt", "up");
    p.symlink("nowhere", "dangling");
    let mut ids = Vec::new();
    for name in ["up", "dangling"] {
        let env = delete(&p, name, false);
        env.assert_status("success");
        assert!(!p.exists(name), "{name}: {}", env.text);
        assert!(!env.text.contains("secret"), "{}", env.text);
        ids.push(env.data().change_id.clone().expect("a recorded change"));
    }
    assert_eq!(
        std::fs::read_to_string(&outside).expect("outside"),
        "secret\n"
    );
    // Each comes back as it was, the latest first.
    for id in ids.iter().rev() {
        call(&p, json!({"change_id": id})).assert_status("success");
    }
    assert_eq!(link_of(&p, "up").as_deref(), Some("../outside.txt"));
    assert_eq!(link_of(&p, "dangling").as_deref(), Some("nowhere"));
    assert_eq!(
        std::fs::read_to_string(&outside).expect("outside"),
        "secret\n"
    );
}

/// The component's sandbox does not read an absolute link's target, so
/// its removal could not be undone: refused, in words, and nothing goes.
#[test]
fn a_link_to_an_absolute_path_is_refused_and_stays() {
    let p = Project::journaled();
    let outside = p.base().join("outside.txt");
    std::fs::write(&outside, "secret\n").expect("outside");
    p.symlink(outside.to_str().expect("utf-8"), "out");
    let before = p.tree();
    let env = delete(&p, "out", false);
    env.assert_error("ACCESS_DENIED");
    assert!(
        env.text.contains("a link to an absolute path"),
        "{}",
        env.text
    );
    assert_eq!(p.tree(), before);
}

#[test]
fn a_link_in_a_protected_place_is_refused_and_stays() {
    let p = Project::journaled();
    p.mkdir(".git");
    p.write(".git/config", "[core]\n");
    p.symlink("config", ".git/alias");
    let before = p.tree();
    let env = delete(&p, ".git/alias", false);
    env.assert_error("ACCESS_DENIED");
    assert_eq!(p.tree(), before);
}

#[test]
fn a_revert_does_not_make_a_link_over_a_file_made_since() {
    let p = Project::journaled();
    p.write("x.txt", "x\n");
    p.symlink("x.txt", "link.txt");
    let env = delete(&p, "link.txt", false);
    let id = env.data().change_id.clone().expect("a recorded change");
    p.write("link.txt", "a person's file\n");
    let before = p.tree();
    let env = call(&p, json!({"change_id": id}));
    env.assert_error("CONFLICT");
    assert!(env.text.contains("a person's file"), "{}", env.text);
    assert_eq!(p.tree(), before, "a refused revert changes nothing");
}

/// git's hooks directory named through a link (`core.hooksPath`) is
/// protected where the link leads; removing the link would unprotect that
/// place, and a link made again would run what was written there. It is
/// refused, and the place stays protected.
#[test]
fn a_link_to_what_git_runs_is_refused_and_stays() {
    let p = Project::journaled();
    p.write(".git/config", "[core]\n\thooksPath = myhooks\n");
    p.write("scripts/pre-commit", "#!/bin/sh\necho lint\n");
    p.symlink("scripts", "myhooks");
    let before = p.tree();
    let env = delete(&p, "myhooks", false);
    env.assert_error("ACCESS_DENIED");
    assert!(
        env.text.contains("a link to a protected place"),
        "{}",
        env.text
    );
    assert_eq!(p.tree(), before);
    call(
        &p,
        json!({"path": "scripts/pre-commit", "content": "#!/bin/sh\necho pwned\n"}),
    )
    .assert_error("ACCESS_DENIED");
    assert_eq!(
        p.read_string("scripts/pre-commit"),
        "#!/bin/sh\necho lint\n"
    );
}

/// A line break in a link's target is shown escaped: it makes no line of
/// its own in the preview.
#[test]
fn a_links_target_is_shown_on_one_line() {
    let p = Project::journaled();
    p.symlink("x')\n+evil", "odd");
    let env = delete(&p, "odd", false);
    env.assert_status("success");
    let preview = &env.data().diff_preview;
    assert!(!preview.contains("\n+evil"), "{preview}");
    assert!(
        preview.contains("-(a symbolic link to 'x\\')\\n+evil')"),
        "{preview}"
    );
}

/// A revert of a link's removal shows the link coming back; a link
/// pointed elsewhere since is a change the revert of that revert does not
/// undo: `CONFLICT`, showing where it points now, and the link stays.
#[test]
fn a_link_pointed_elsewhere_since_is_a_conflict() {
    let p = Project::journaled();
    p.write("x.txt", "x\n");
    p.write("other.txt", "o\n");
    p.symlink("x.txt", "link");
    let env = delete(&p, "link", false);
    let id = env.data().change_id.clone().expect("a recorded change");
    let undone = call(&p, json!({"change_id": id}));
    undone.assert_status("success");
    assert_eq!(undone.data().files[0].operation, "create", "{undone:#?}");
    let preview = &undone.data().diff_preview;
    assert!(
        preview.contains("+(a symbolic link to 'x.txt')"),
        "{preview}"
    );
    std::fs::remove_file(p.path("link")).expect("unlink");
    p.symlink("other.txt", "link");
    let before = p.tree();
    let again = undone.data().change_id.clone().expect("the revert's id");
    let env = call(&p, json!({"change_id": again}));
    env.assert_error("CONFLICT");
    assert!(
        env.text.contains("(a symbolic link to 'other.txt')"),
        "{}",
        env.text
    );
    assert_eq!(p.tree(), before, "a refused revert changes nothing");
    assert_eq!(link_of(&p, "link").as_deref(), Some("other.txt"));
}

/// A link under a linked directory: the directory's link is followed, as
/// every path's are, and the link at the end is removed as itself; the
/// record names it where it is.
#[test]
fn a_link_under_a_linked_directory_is_removed_where_it_is() {
    let p = Project::journaled();
    p.write("real/x.txt", "x\n");
    p.symlink("x.txt", "real/link.txt");
    p.symlink("real", "alias");
    let env = delete(&p, "alias/link.txt", false);
    env.assert_status("success");
    assert_eq!(env.data().files[0].path, "real/link.txt", "{env:#?}");
    assert!(!p.exists("real/link.txt"));
    assert_eq!(link_of(&p, "alias").as_deref(), Some("real"));
    assert_eq!(p.read_string("real/x.txt"), "x\n");
    // `link/` names what it leads to, as for `rm`: a file there is not a
    // directory, and nothing goes.
    p.symlink("x.txt", "real/again");
    let before = p.tree();
    let env = delete(&p, "real/again/", false);
    assert_eq!(env.status, "error", "{env:#?}");
    assert_eq!(p.tree(), before);
}
