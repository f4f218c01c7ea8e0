//! The escape matrix (after cap-std's `tests/cap-basics.rs`): paths that
//! must work next to paths that must fail, each with its exact outcome.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use write_tool::ProjectPreopen;

use crate::support::{NAMINGS, Project};

/// Links and files every case starts from. Paths are relative to the root;
/// `outside/` and `canary.txt` sit beside it.
fn fixture() -> Project {
    fixture_named(ProjectPreopen::Dot)
}

/// The fixture, the root preopened as `naming` says.
fn fixture_named(naming: ProjectPreopen) -> Project {
    let p = Project::named(naming);
    p.mkdir("real/sub");
    p.write("real/target.txt", "target\n");
    std::fs::create_dir(p.base().join("root2")).expect("sibling root");
    p.symlink("real", "inlink");
    p.symlink("inlink", "chain");
    p.symlink("real/target.txt", "filelink");
    p.symlink("real/created.txt", "dangling_in");
    p.symlink("../../real", "real/sub/uplink");
    p.symlink("../outside/secret.txt", "out_file");
    p.symlink("../outside", "out_dir");
    p.symlink("../outside/new.txt", "dangling_out");
    p.symlink("../canary.txt", "canary_link");
    p.symlink("/tmp", "abs_dir");
    p.symlink("/etc/hostname", "abs_file");
    p.symlink("../root/real", "back");
    p.symlink("../root2", "sibling");
    p.symlink("loop", "loop");
    p.symlink("loop_b", "loop_a");
    p.symlink("loop_a", "loop_b");
    p.symlink("real/../../outside", "sneaky");
    p
}

enum Want {
    /// Written; the target is this root-relative path.
    Ok(&'static str),
    /// Refused with this code.
    Err(&'static str),
}

const MATRIX: &[(&str, Want)] = &[
    // Lexical paths that stay inside.
    ("plain.txt", Want::Ok("plain.txt")),
    ("a/../b.txt", Want::Ok("b.txt")),
    ("./real/./x.txt", Want::Ok("real/x.txt")),
    ("real//sub///y.txt", Want::Ok("real/sub/y.txt")),
    ("..hidden", Want::Ok("..hidden")),
    ("dots.../x", Want::Ok("dots.../x")),
    // Links that stay inside are followed.
    ("inlink/f.txt", Want::Ok("real/f.txt")),
    ("chain/g.txt", Want::Ok("real/g.txt")),
    ("filelink", Want::Ok("real/target.txt")),
    ("dangling_in", Want::Ok("real/created.txt")),
    ("real/sub/uplink/h.txt", Want::Ok("real/h.txt")),
    // Climbing above the root, lexically.
    ("..", Want::Err("ACCESS_DENIED")),
    ("../x.txt", Want::Err("ACCESS_DENIED")),
    ("../root/x.txt", Want::Err("ACCESS_DENIED")),
    ("../root2/x.txt", Want::Err("ACCESS_DENIED")),
    ("a/../../x.txt", Want::Err("ACCESS_DENIED")),
    ("./../outside/secret.txt", Want::Err("ACCESS_DENIED")),
    ("real/sub/../../../x", Want::Err("ACCESS_DENIED")),
    // Absolute forms.
    ("/x.txt", Want::Err("INVALID_PARAM")),
    ("/etc/passwd", Want::Err("INVALID_PARAM")),
    ("C:/x.txt", Want::Err("INVALID_PARAM")),
    ("C:\\x.txt", Want::Err("INVALID_PARAM")),
    ("//server/share/x", Want::Err("INVALID_PARAM")),
    ("\\\\server\\share\\x", Want::Err("INVALID_PARAM")),
    // Characters.
    ("a\0b", Want::Err("INVALID_PARAM")),
    ("a\\b.txt", Want::Err("INVALID_PARAM")),
    ("..\\x.txt", Want::Err("INVALID_PARAM")),
    ("x\n.txt", Want::Err("INVALID_PARAM")),
    ("evil\u{202e}txt.exe", Want::Err("INVALID_PARAM")),
    ("zero\u{200b}width", Want::Err("INVALID_PARAM")),
    // Links that lead outside, by any route.
    ("out_file", Want::Err("ACCESS_DENIED")),
    ("out_dir/new.txt", Want::Err("ACCESS_DENIED")),
    ("out_dir/secret.txt", Want::Err("ACCESS_DENIED")),
    ("dangling_out", Want::Err("ACCESS_DENIED")),
    ("canary_link", Want::Err("ACCESS_DENIED")),
    ("abs_dir/x.txt", Want::Err("ACCESS_DENIED")),
    ("abs_file", Want::Err("ACCESS_DENIED")),
    ("back/x.txt", Want::Err("ACCESS_DENIED")),
    ("sibling/x.txt", Want::Err("ACCESS_DENIED")),
    ("sneaky/x.txt", Want::Err("ACCESS_DENIED")),
    ("loop", Want::Err("ACCESS_DENIED")),
    ("loop_a/x", Want::Err("ACCESS_DENIED")),
    ("chain/../out_dir/x", Want::Err("ACCESS_DENIED")),
];

#[test]
fn escape_matrix() {
    for naming in NAMINGS {
        for (path, want) in MATRIX {
            escape(naming, path, want);
        }
    }
}

/// One case of the matrix, as a dry run and for real, under `naming`.
fn escape(naming: ProjectPreopen, path: &str, want: &Want) {
    {
        for dry_run in [true, false] {
            let p = fixture_named(naming);
            let before = p.tree();
            let env = p.call(json!({"path": path, "content": "escape test\n", "dry_run": dry_run}));
            match want {
                Want::Ok(resolved) => {
                    assert_eq!(env.code(), None, "{path:?} ({naming:?}): {env:#?}");
                    assert_eq!(
                        env.context.path_resolved.as_deref(),
                        Some(*resolved),
                        "{path:?}"
                    );
                    if dry_run {
                        assert_eq!(p.tree(), before, "dry run {path:?} changed the disk");
                    } else {
                        assert_eq!(p.read_string(resolved), "escape test\n", "{path:?}");
                    }
                }
                Want::Err(code) => {
                    env.assert_error(code);
                    assert_eq!(
                        p.tree(),
                        before,
                        "{path:?} ({naming:?}, dry_run={dry_run}) changed the disk"
                    );
                    assert!(env.context.path_resolved.is_none(), "{path:?}: {env:#?}");
                    let base = p.base().to_string_lossy().into_owned();
                    for secret in ["outside", "secret", "canary", "/tmp", "/etc", base.as_str()] {
                        assert!(
                            env.own_words().iter().all(|w| !w.contains(secret)),
                            "{path:?}: the envelope reveals {secret:?}: {env:#?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn an_in_root_link_is_followed_and_stays_a_link() {
    let p = fixture();
    let env = p.put("filelink", "through the link\n");
    env.assert_status("success");
    assert_eq!(env.data().operation, "update");
    assert!(
        std::fs::symlink_metadata(p.path("filelink"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_link(p.path("filelink")).unwrap().to_str(),
        Some("real/target.txt")
    );
    assert_eq!(p.read_string("real/target.txt"), "through the link\n");
    assert!(env.text.starts_with("Updated 'filelink' "), "{}", env.text);
}

#[test]
fn a_dangling_in_root_link_creates_its_target() {
    let p = fixture();
    p.symlink("real/newdir/made.txt", "dangling_deep");
    let env = p.put("dangling_deep", "made\n");
    env.assert_status("success");
    assert_eq!(env.data().operation, "create");
    assert_eq!(
        env.text,
        "Created 'dangling_deep' (1 line, 5 bytes).\n(Created directory: real/newdir/)"
    );
    assert_eq!(p.read_string("real/newdir/made.txt"), "made\n");
    assert!(
        std::fs::symlink_metadata(p.path("dangling_deep"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn forty_links_are_followed_and_forty_one_are_a_loop() {
    let p = Project::new();
    p.write("end.txt", "end\n");
    let mut previous = "end.txt".to_owned();
    for i in 0..41 {
        let name = format!("l{i:02}");
        p.symlink(&previous, &name);
        previous = name;
    }
    p.put("l39", "forty\n").assert_status("success");
    assert_eq!(p.read_string("end.txt"), "forty\n");
    let before = p.tree();
    p.put("l40", "forty-one\n").assert_error("ACCESS_DENIED");
    assert_eq!(p.tree(), before);
}

/// Run a call on another thread and fail (instead of hanging the suite) if
/// it does not answer within a generous bound. The thread is detached, not
/// scoped: a scope would join it, and so hang on the very call that blocks.
fn call_with_bound(p: &Arc<Project>, path: &str) -> crate::support::Envelope {
    let (tx, rx) = std::sync::mpsc::channel();
    let (p, path) = (Arc::clone(p), path.to_owned());
    std::thread::spawn(move || {
        let _ = tx.send(p.put(&path, "x\n"));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the call must not block")
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let p = Arc::new(Project::new());
    let status = std::process::Command::new("mkfifo")
        .arg(p.path("pipe"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    p.symlink("pipe", "pipe_link");
    for path in ["pipe", "pipe_link"] {
        let before = p.tree();
        let env = call_with_bound(&p, path);
        env.assert_error("ACCESS_DENIED");
        assert_eq!(env.text, "Target is not a regular file.");
        assert_eq!(env.context.path_resolved.as_deref(), Some("pipe"));
        assert_eq!(p.tree(), before);
    }
}

#[test]
fn a_socket_is_refused() {
    let p = Arc::new(Project::new());
    let _listener = std::os::unix::net::UnixListener::bind(p.path("sock")).expect("bind");
    let before = p.tree();
    let env = call_with_bound(&p, "sock");
    env.assert_error("ACCESS_DENIED");
    assert_eq!(env.text, "Target is not a regular file.");
    assert_eq!(p.tree(), before);
}
