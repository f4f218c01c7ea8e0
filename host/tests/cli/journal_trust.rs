//! The journal's directory as a hostile machine or a careless setup leaves
//! it (`docs/contract.md#journal`, SECURITY.md): directories others can
//! write, links, another root's journal, a root made again, homes that
//! cannot be written, roots that are gone.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::{bin_str, envelope, root_arg, run, run_cmd};

/// `write-tool --root ROOT --journal BASE ARGS`, `stdin` its input.
fn on(root: &Path, base: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let root = root_arg(root);
    let head = ["--root", &root, "--journal", base.to_str().expect("UTF-8")];
    run(&[&head[..], args].concat(), stdin)
}

/// `write-tool --root ROOT --journal BASE write f.txt`.
fn write_with(root: &Path, base: &Path) -> Output {
    on(root, base, &["write", "f.txt", "--content", "x\n"], b"")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A journal base another user could write (0777, not sticky) is not used:
/// the CLI stops (the journal was asked for) and names the directory and
/// why; nothing is written.
#[test]
fn a_journal_directory_others_can_write_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (root, base) = (dir.path().join("root"), dir.path().join("open"));
    fs::create_dir(&root).expect("root");
    fs::create_dir(&base).expect("base");
    fs::set_permissions(&base, fs::Permissions::from_mode(0o777)).expect("chmod");
    let out = write_with(&root, &base);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains(base.to_str().expect("UTF-8")), "{err}");
    assert!(err.contains("others can write it"), "{err}");
    assert!(!root.join("f.txt").exists());
    // Below a directory others can write, too: it could be swapped.
    fs::set_permissions(&base, fs::Permissions::from_mode(0o700)).expect("chmod");
    let inner = base.join("inner");
    fs::create_dir(&inner).expect("inner");
    fs::set_permissions(&base, fs::Permissions::from_mode(0o777)).expect("chmod");
    let out = write_with(&root, &inner);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        stderr(&out).contains("can be written by others and is not sticky"),
        "{}",
        stderr(&out)
    );
}

/// A root's journal directory that is a link — to another root's journal,
/// say — is not followed; a journal whose `root` file names another root
/// is not used.
#[test]
fn a_journal_that_is_a_link_or_another_roots_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("journals");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    fs::create_dir(&a).expect("a");
    fs::create_dir(&b).expect("b");
    assert_eq!(write_with(&a, &base).status.code(), Some(0));
    let journal_of = |root: &Path| -> std::path::PathBuf {
        let out = on(root, &base, &["history", "--json"], b"");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        fs::read_dir(&base)
            .expect("base")
            .map(|e| e.expect("entry").path())
            .find(|p| {
                fs::read_to_string(p.join("root")).is_ok_and(|n| {
                    n.lines().next() == Some(root.canonicalize().expect("c").to_str().expect("u"))
                })
            })
            .expect("the root's journal")
    };
    let a_journal = journal_of(&a);
    let b_journal = journal_of(&b);
    // b's journal made a link to a's.
    fs::remove_dir_all(&b_journal).expect("remove");
    std::os::unix::fs::symlink(&a_journal, &b_journal).expect("symlink");
    let out = write_with(&b, &base);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        stderr(&out).contains("not a directory (a link is not followed)"),
        "{}",
        stderr(&out)
    );
    // b's journal a copy of a's, `root` file and all.
    fs::remove_file(&b_journal).expect("unlink");
    fs::create_dir(&b_journal).expect("mkdir");
    fs::set_permissions(&b_journal, fs::Permissions::from_mode(0o700)).expect("chmod");
    fs::copy(a_journal.join("root"), b_journal.join("root")).expect("copy");
    let out = write_with(&b, &base);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        stderr(&out).contains("the journal of another root"),
        "{}",
        stderr(&out)
    );
    assert!(!b.join("f.txt").exists());
}

/// A project deleted and made again at the same path is another project:
/// it does not inherit the journal, so the old contents cannot be put
/// back into it.
#[test]
fn a_root_made_again_does_not_inherit_its_journal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (root, base) = (dir.path().join("root"), dir.path().join("journals"));
    fs::create_dir(&root).expect("root");
    assert_eq!(write_with(&root, &base).status.code(), Some(0));
    let inode = fs::metadata(&root).expect("stat").ino();
    fs::remove_dir_all(&root).expect("delete the project");
    // Another directory at the same path, with the same inode number where
    // the file system gives it again (ext4 does, often): then only its
    // birth time tells them apart.
    let mut reused = false;
    for _ in 0..200 {
        fs::create_dir(&root).expect("a new project");
        reused = fs::metadata(&root).expect("stat").ino() == inode;
        if reused {
            break;
        }
        fs::remove_dir(&root).expect("again");
    }
    if !reused {
        fs::create_dir(&root).expect("a new project");
        eprintln!("the file system gave the inode number again in none of 200 tries");
    }
    let out = on(&root, &base, &["history", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let history: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        history,
        Value::Array(Vec::new()),
        "the old project's history"
    );
}

/// Journals of roots that are gone are removed by a later start, once no
/// one wrote them for a while: a platform with a directory per sandbox
/// does not keep a journal per sandbox. A journal whose root is still
/// there stays, and so does one written a moment ago.
#[test]
fn journals_of_roots_that_are_gone_are_swept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("journals");
    let keep = dir.path().join("keep");
    fs::create_dir(&keep).expect("keep");
    for i in 0..5 {
        let root = dir.path().join(format!("sandbox{i}"));
        fs::create_dir(&root).expect("root");
        assert_eq!(write_with(&root, &base).status.code(), Some(0));
        fs::remove_dir_all(&root).expect("the sandbox goes");
    }
    assert_eq!(write_with(&keep, &base).status.code(), Some(0));
    let journals = || {
        fs::read_dir(&base)
            .expect("base")
            .filter(|e| e.as_ref().is_ok_and(|e| e.path().is_dir()))
            .count()
    };
    assert_eq!(journals(), 6);
    // As if an hour passed: every journal idle but the last sandbox's
    // (written a moment ago, as a sandbox just gone would be), the last
    // sweep old.
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    let recent = dir.path().join("sandbox4");
    for entry in fs::read_dir(&base).expect("base").flatten() {
        let path = entry.path();
        let root = fs::read_to_string(path.join("root")).unwrap_or_default();
        if root.lines().next() == recent.to_str() {
            continue;
        }
        for file in ["log", "pending", ""] {
            let p = if file.is_empty() {
                path.clone()
            } else {
                path.join(file)
            };
            if let Ok(f) = fs::File::open(&p) {
                let _ = f.set_modified(hour_ago);
            }
        }
    }
    assert_eq!(write_with(&keep, &base).status.code(), Some(0));
    assert_eq!(
        journals(),
        2,
        "the idle gone roots' journals stay, or the recent one went"
    );
}

/// With the default journal (no `--journal`) and a home that cannot hold
/// it, the CLI works without one and says so, naming the directory and the
/// system's error; asked for (`--journal`), it stops, naming both.
#[test]
fn a_journal_no_one_asked_for_may_be_absent_one_asked_for_may_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    fs::create_dir(&root).expect("root");
    let not_a_dir = dir.path().join("a-file");
    fs::write(&not_a_dir, "x").expect("file");
    let state = not_a_dir.join("state");
    let out = run_cmd(
        Command::new(bin_str())
            .env_remove("WRITE_TOOL_JOURNAL_DIR")
            .env("XDG_STATE_HOME", &state)
            .args([
                "--root",
                &root_arg(&root),
                "write",
                "f.txt",
                "--content",
                "x\n",
            ]),
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(envelope(&out)["data"]["change_id"].is_null());
    let err = stderr(&out);
    assert!(err.contains(state.to_str().expect("UTF-8")), "{err}");
    assert!(err.contains("not a directory"), "{err}");
    assert!(err.contains("cannot be undone"), "{err}");
    let out = on(&root, &state, &["write", "g.txt", "--content", "x\n"], b"");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        stderr(&out).contains(state.to_str().expect("UTF-8")),
        "{}",
        stderr(&out)
    );
    assert!(!root.join("g.txt").exists());
}

/// Run in `/` without `--root`, the CLI writes nothing at the top of the
/// file system: it stops and says to pass `--root`.
#[test]
fn the_current_directory_is_no_root_when_it_is_slash() {
    let out = run_cmd(
        Command::new(bin_str()).current_dir("/").args([
            "--no-journal",
            "write",
            "write-tool-should-not-be-here.txt",
            "--content",
            "x",
        ]),
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("--root"), "{}", stderr(&out));
    assert!(!Path::new("/write-tool-should-not-be-here.txt").exists());
}

/// A call stopped by its time bound while it holds the journal's lock —
/// staging a change of several files, which happens under it — does not
/// keep it: the host releases the lock of a guest that stopped, so the
/// next call does not wait for it (20 s, then a refusal), and that call
/// cleans up the temp files the stopped change had made. The stopped
/// call does not claim a write it did not make. The time bound that stops
/// the call while it stages depends on the machine: longer bounds are
/// tried until one does.
#[test]
fn a_call_stopped_while_it_holds_the_journal_does_not_keep_it() {
    let mut tried = Vec::new();
    for timeout_ms in [150, 300, 600, 1200, 2400, 4800] {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        fs::create_dir(&root).expect("root");
        let mut serve = Serve::start(&root, &dir.path().join("journals"), timeout_ms);
        let content = "x".repeat(1_000_000);
        let writes: Vec<Value> = (0..60)
            .map(|i| serde_json::json!({"path": format!("f{i}.txt"), "content": content}))
            .collect();
        let stopped = serve.call(&serde_json::json!({"writes": writes}));
        let staging = !write_tool_test_support::temp_files(&root).is_empty();
        tried.push((timeout_ms, stopped["status"].clone(), staging));
        if !staging {
            continue;
        }
        assert_eq!(
            stopped["error"]["code"], "EXECUTION_ERROR",
            "{}",
            stopped["text"]
        );
        let text = stopped["text"].as_str().expect("text");
        assert!(text.contains("time limit"), "{text}");
        assert!(!text.contains("was done"), "{text}");
        // In another directory: a write beside the temp files would sweep
        // them as a dead writer's anyway; this one finds them only through
        // the journal's recovery.
        let next = serve.call(&serde_json::json!({"path": "sub/after.txt", "content": "after\n"}));
        assert_eq!(next["status"], "success", "{next}");
        assert_eq!(
            write_tool_test_support::temp_files(&root),
            Vec::<String>::new()
        );
        assert!((0..60).all(|i| !root.join(format!("f{i}.txt")).exists()));
        return;
    }
    panic!("no time bound stopped the change while it staged: {tried:?}");
}

/// `write-tool serve` with a journal and a time bound, one request at a
/// time.
struct Serve {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Serve {
    fn start(root: &Path, base: &Path, timeout_ms: u64) -> Serve {
        let mut child = Command::new(bin_str())
            .env("WRITE_TOOL_CACHE_DIR", crate::cache_dir())
            .args([
                "--root",
                &root_arg(root),
                "--journal",
                base.to_str().expect("UTF-8"),
            ])
            .args(["--timeout-ms", &timeout_ms.to_string(), "serve"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("serve");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        Serve {
            child,
            stdin,
            stdout,
        }
    }

    fn call(&mut self, request: &Value) -> Value {
        use std::io::{BufRead, Write};
        writeln!(self.stdin, "{request}").expect("send");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("answer");
        serde_json::from_str(&line).expect("JSON")
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The one journal below `base`: its directory's name.
fn only_journal(base: &Path) -> String {
    let key = fs::read_dir(base)
        .expect("the journal base")
        .map(|e| e.expect("entry").path())
        .find(|p| p.is_dir())
        .expect("the root's journal");
    key.file_name()
        .expect("a name")
        .to_str()
        .expect("UTF-8")
        .to_owned()
}

/// Each of `paths` (root-relative), written for real and as a dry run
/// with `root` and `base`, is `ACCESS_DENIED` and shows nothing of a
/// record.
fn forging_is_denied(root: &Path, base: &Path, paths: &[&str]) {
    for path in paths {
        for dry_run in [true, false] {
            let request = serde_json::json!({
                "name": "Write",
                "arguments": {"path": path, "content": "forged\n", "dry_run": dry_run}
            });
            let out = on(root, base, &["call"], request.to_string().as_bytes());
            let env: Value = envelope(&out);
            assert_eq!(env["error"]["code"], "ACCESS_DENIED", "{path}: {env}");
            assert!(!env.to_string().contains("\"seq\""), "records shown: {env}");
        }
    }
}

/// A journal inside the root reached by another spelling of the root's
/// path (through a link: a home directory that is one) is protected there
/// all the same: a model can neither read its records nor write them.
#[test]
fn a_journal_inside_the_root_by_another_spelling_is_protected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let real = dir.path().join("proj");
    fs::create_dir(&real).expect("root");
    let alias = dir.path().join("alias");
    std::os::unix::fs::symlink("proj", &alias).expect("symlink");
    let base = alias.join(".wt");
    assert_eq!(write_with(&alias, &base).status.code(), Some(0));
    let log = format!(".wt/{}/log", only_journal(&real.join(".wt")));
    let before = fs::read(real.join(&log)).expect("the log");
    forging_is_denied(&alias, &base, &[&log, ".wt/x"]);
    assert_eq!(fs::read(real.join(&log)).expect("the log"), before);
    assert!(!real.join(".wt/x").exists());
}

/// A link on the journal's path that another user owns (in `/tmp`, say)
/// could send the journal anywhere: it is refused, named. Needs root, to
/// give the link to another user.
#[test]
fn a_link_another_user_owns_on_the_journal_path_is_refused() {
    if !write_tool_test_support::capability::runs(
        write_tool_test_support::capability::is_root(),
        "a link another user owns",
        "root (to give a link to another user)",
    ) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (root, elsewhere) = (dir.path().join("root"), dir.path().join("elsewhere"));
    fs::create_dir(&root).expect("root");
    fs::create_dir(&elsewhere).expect("elsewhere");
    let link = dir.path().join("planted");
    std::os::unix::fs::symlink(&elsewhere, &link).expect("symlink");
    std::os::unix::fs::lchown(&link, Some(4101), Some(4101)).expect("lchown");
    let out = write_with(&root, &link.join("journals"));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains("planted"), "{err}");
    assert!(err.contains("owned by another user"), "{err}");
    assert!(!root.join("f.txt").exists());
    // The same link, this user's: used.
    std::os::unix::fs::lchown(&link, Some(0), Some(0)).expect("lchown");
    assert_eq!(
        write_with(&root, &link.join("journals")).status.code(),
        Some(0)
    );
}

/// A journal kept in the root itself (`--journal .`) would let every call
/// write its records: it is refused, named, before anything is made in
/// the root or written.
#[test]
fn a_journal_base_that_is_the_root_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    fs::create_dir(&root).expect("root");
    fs::set_permissions(&root, fs::Permissions::from_mode(0o700)).expect("chmod");
    let out = write_with(&root, &root);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains("it is a root"), "{err}");
    assert_eq!(
        fs::read_dir(&root).expect("root").count(),
        0,
        "nothing made"
    );
}

/// A root that lies in the journals' base could write every journal there
/// (and one named as a journal could be swept): refused, named, before
/// anything is made in the base.
#[test]
fn a_root_inside_the_journals_base_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("journals");
    let root = base.join("project");
    fs::create_dir_all(&root).expect("root");
    fs::set_permissions(&base, fs::Permissions::from_mode(0o700)).expect("chmod");
    let out = write_with(&root, &base);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains("a root lies in it"), "{err}");
    let names: Vec<_> = fs::read_dir(&base)
        .expect("base")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["project"], "nothing made in the base");
    assert_eq!(fs::read_dir(&root).expect("root").count(), 0);
}

/// Unmounts its mount point when dropped, whatever the test did.
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// A bind mount inside the root that shows the journals' base is found
/// from the mount's side: through it, a model can neither read the log
/// nor write it. Needs the right to mount.
#[test]
fn a_journal_shown_inside_the_root_by_a_bind_mount_is_protected() {
    let dir = tempfile::tempdir().expect("tempdir");
    if !write_tool_test_support::capability::runs(
        write_tool_test_support::capability::bind_mount_works(dir.path()),
        "a journal shown by a bind mount",
        "root allowed to mount (mount --bind)",
    ) {
        return;
    }
    let (root, base) = (dir.path().join("root"), dir.path().join("journals"));
    fs::create_dir_all(root.join("mnt")).expect("root");
    fs::create_dir(&base).expect("base");
    fs::set_permissions(&base, fs::Permissions::from_mode(0o700)).expect("chmod");
    let status = Command::new("mount")
        .arg("--bind")
        .arg(&base)
        .arg(root.join("mnt"))
        .status()
        .expect("mount");
    assert!(status.success());
    // Dropped before the temp dir, which then removes no journal twice.
    let _mounted = Mounted(root.join("mnt"));
    assert_eq!(write_with(&root, &base).status.code(), Some(0));
    let key = only_journal(&base);
    let log = format!("mnt/{key}/log");
    let before = fs::read(root.join(&log)).expect("the log, through the mount");
    forging_is_denied(&root, &base, &[&log, "mnt/x"]);
    assert_eq!(fs::read(root.join(&log)).expect("the log"), before);
    assert!(!base.join("x").exists());
    // One journal's directory, or its saved contents, shown on its own
    // (a replaced file saved first, so that there are some).
    let out = on(&root, &base, &["write", "f.txt", "--content", "y\n"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for (part, name) in [(key.clone(), "secret"), (format!("{key}/objects"), "kx")] {
        fs::create_dir_all(root.join("part")).expect("mount point");
        let status = Command::new("mount")
            .arg("--bind")
            .arg(base.join(&part))
            .arg(root.join("part"))
            .status()
            .expect("mount");
        assert!(status.success());
        let _part = Mounted(root.join("part"));
        let before = fs::read(base.join(&part).join(name)).ok();
        forging_is_denied(&root, &base, &[&format!("part/{name}")]);
        assert_eq!(fs::read(base.join(&part).join(name)).ok(), before, "{part}");
    }
}
