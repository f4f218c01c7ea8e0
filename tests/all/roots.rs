//! Several roots (`docs/contract.md#several-roots`): `write_file` with
//! absolute paths inside any allowed root, its wording and success text.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;
use write_tool::{Root, ambient_authority};

use crate::support::{Envelope, Tree, decode, plant_temps, tool};

/// `base/` holds the project root `root/`, a second allowed root
/// `second/`, and `outside/` with a canary.
struct Roots {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: Root,
}

impl Roots {
    fn new() -> Roots {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical base");
        for d in ["root", "second", "outside"] {
            fs::create_dir(base.join(d)).expect("mkdir");
        }
        fs::write(base.join("outside/canary.txt"), "canary\n").expect("canary");
        let root = Root::open_all(
            [base.join("root"), base.join("second")],
            ambient_authority(),
        )
        .expect("open roots");
        Roots {
            _dir: dir,
            base,
            root,
        }
    }

    fn abs(&self, rel: &str) -> String {
        format!("{}/{rel}", self.base.display())
    }

    fn call(&self, name: &str, path: &str, content: &str) -> Envelope {
        let request = json!({"name": name, "arguments": {"path": path, "content": content}});
        decode(&tool().call(&self.root, &request.to_string()))
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.base.join(rel)).expect("read")
    }
}

#[test]
fn relative_paths_resolve_against_the_first_root() {
    let r = Roots::new();
    for name in ["Write", "write_file"] {
        let path = format!("{name}/a.txt");
        let env = r.call(name, &path, "one\n");
        assert_eq!(env.status, "success", "{}", env.text);
        assert_eq!(env.context.path_resolved.as_deref(), Some(path.as_str()));
        assert_eq!(r.read(&format!("root/{path}")), "one\n");
        assert!(!r.base.join("second").join(&path).exists());
    }
}

#[test]
fn write_file_text_is_its_own_confirmation() {
    let r = Roots::new();
    let env = r.call("write_file", "notes/todo.txt", "Buy milk");
    assert_eq!(env.text, "Successfully wrote to notes/todo.txt");
    assert_eq!(env.data.expect("data").operation, "create");
    // Overwrite: same text, and the envelope still says what happened.
    let env = r.call("write_file", "notes/todo.txt", "Buy bread");
    assert_eq!(env.text, "Successfully wrote to notes/todo.txt");
    assert_eq!(env.data.expect("data").operation, "update");
    assert_eq!(r.read("root/notes/todo.txt"), "Buy bread");
    // A dry run is not a write: it keeps the dry-run wording.
    let request = json!({"name": "write_file", "arguments": {"path": "x.txt", "content": "x", "dry_run": true}});
    let env = decode(&tool().call(&r.root, &request.to_string()));
    assert_eq!(env.text, "[Dry Run] Would create 'x.txt' (+1 lines).");
    assert!(!r.base.join("root/x.txt").exists());
}

#[test]
fn absolute_paths_inside_the_project_root() {
    let r = Roots::new();
    let path = r.abs("root/src/main.rs");
    let env = r.call("write_file", &path, "fn main() {}\n");
    assert_eq!(env.status, "success", "{}", env.text);
    assert_eq!(env.text, format!("Successfully wrote to {path}"));
    assert_eq!(env.context.path_resolved.as_deref(), Some("src/main.rs"));
    assert_eq!(r.read("root/src/main.rs"), "fn main() {}\n");
}

#[test]
fn absolute_paths_inside_another_root() {
    let r = Roots::new();
    let path = r.abs("second/data/out.txt");
    let env = r.call("write_file", &path, "a\nb\n");
    assert_eq!(env.status, "success", "{}", env.text);
    assert_eq!(env.context.path_resolved.as_deref(), Some(path.as_str()));
    let preview = env.data.expect("data").diff_preview;
    assert!(preview.contains(&format!("+++ b/{path}\n")), "{preview}");
    assert_eq!(r.read("second/data/out.txt"), "a\nb\n");
    assert!(!r.base.join("root/data").exists());
    // Updating it works the same way.
    let env = r.call("write_file", &path, "a\nc\n");
    assert_eq!(env.data.expect("data").operation, "update");
    assert_eq!(r.read("second/data/out.txt"), "a\nc\n");
}

#[test]
fn paths_outside_every_root_get_write_files_wording_and_change_nothing() {
    let r = Roots::new();
    fs::write(r.base.join("second/keep.txt"), "keep\n").expect("fixture");
    std::os::unix::fs::symlink("../outside", r.base.join("second/out")).expect("link");
    std::os::unix::fs::symlink("../outside", r.base.join("root/out")).expect("link");
    let before = Tree::of(&r.base);
    let cases = [
        r.abs("outside/canary.txt"),
        r.abs("outside/new.txt"),
        r.abs("rootx/a.txt"),
        r.abs("root/../outside/new.txt"),
        r.abs("second/out/new.txt"),
        "/etc/x".to_owned(),
        "../outside/new.txt".to_owned(),
        "../second/keep.txt".to_owned(),
        "out/new.txt".to_owned(),
        "C:\\Users\\x.txt".to_owned(),
    ];
    for path in &cases {
        let env = r.call("write_file", path, "pwned\n");
        let error = env.error.expect("error");
        assert_eq!(error.code, "ACCESS_DENIED", "{path}");
        assert_eq!(
            error.message,
            format!("path '{path}' is not in allowed directories")
        );
        assert_eq!(env.text, error.message);
    }
    assert_eq!(Tree::of(&r.base), before);
}

#[test]
fn write_keeps_its_own_rules_with_several_roots() {
    let r = Roots::new();
    let before = Tree::of(&r.base);
    // An absolute path in the project root: the message names the
    // relative form to use instead.
    let env = r.call("Write", &r.abs("root/src/a.txt"), "x");
    let error = env.error.expect("error");
    assert_eq!(error.code, "INVALID_PARAM");
    assert_eq!(
        error.message,
        "Absolute path not allowed. Use relative path: 'src/a.txt'."
    );
    // In another root, a relative path cannot reach it: `write_file` can.
    let env = r.call("Write", &r.abs("second/a.txt"), "x");
    assert_eq!(
        env.text,
        "Absolute path not allowed. Use relative path. The path is in another allowed \
         directory: write_file takes it by its absolute path."
    );
    let env = r.call("Write", "../second/a.txt", "x");
    assert_eq!(env.text, "Path must be within project root.");
    // The typed export is `Write` too.
    let env = tool().write(&r.root, &r.abs("second/a.txt"), "x", false);
    assert!(env.error.is_some());
    assert_eq!(Tree::of(&r.base), before);
}

/// The other roots are preopened under their host paths; a project path
/// that spells one, or spells the convention an earlier host used for
/// other roots (`../roots/N`), still lands in the project root:
/// relative paths that spell a root's host path or preopen name stay in
/// the project root.
#[test]
fn project_paths_are_never_routed_to_another_root() {
    let r = Roots::new();
    let second = r.base.join("second");
    let spelled = second.to_str().expect("utf-8").trim_start_matches('/');
    for rel in [
        format!("{spelled}/x.txt"),
        "roots/1/x.txt".to_owned(),
        "./roots/1/y.txt".to_owned(),
    ] {
        let env = r.call("write_file", &rel, "here\n");
        assert_eq!(env.status, "success", "{rel}: {}", env.text);
        let want = rel.trim_start_matches("./");
        assert_eq!(r.read(&format!("root/{want}")), "here\n", "{rel}");
    }
    assert_eq!(fs::read_dir(&second).expect("list").count(), 0);
}

#[test]
fn the_longest_root_wins_when_roots_nest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    fs::create_dir_all(base.join("proj/vendor")).expect("mkdir");
    let root = Root::open_all(
        [base.join("proj"), base.join("proj/vendor")],
        ambient_authority(),
    )
    .expect("roots");
    let path = format!("{}/proj/vendor/lib.rs", base.display());
    let request = json!({"name": "write_file", "arguments": {"path": path, "content": "x\n"}});
    let env = decode(&tool().call(&root, &request.to_string()));
    assert_eq!(env.context.path_resolved.as_deref(), Some(path.as_str()));
    assert_eq!(
        fs::read_to_string(base.join("proj/vendor/lib.rs")).expect("read"),
        "x\n"
    );
}

#[test]
fn a_root_given_through_a_link_answers_to_both_spellings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    fs::create_dir_all(base.join("real")).expect("mkdir");
    fs::create_dir_all(base.join("proj")).expect("mkdir");
    std::os::unix::fs::symlink("real", base.join("alias")).expect("link");
    let root = Root::open_all([base.join("proj"), base.join("alias")], ambient_authority())
        .expect("roots");
    for (spelling, file) in [("alias", "a.txt"), ("real", "b.txt")] {
        let path = format!("{}/{spelling}/{file}", base.display());
        let request = json!({"name": "write_file", "arguments": {"path": path, "content": "x"}});
        let env = decode(&tool().call(&root, &request.to_string()));
        assert_eq!(env.status, "success", "{path}: {}", env.text);
        assert!(base.join("real").join(file).is_file());
    }
}

#[test]
fn permission_bits_survive_in_another_root() {
    let r = Roots::new();
    let script = r.base.join("second/run.sh");
    fs::write(&script, "#!/bin/sh\n").expect("fixture");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o750)).expect("chmod");
    let env = r.call(
        "write_file",
        &r.abs("second/run.sh"),
        "#!/bin/sh\necho hi\n",
    );
    assert_eq!(env.status, "success", "{}", env.text);
    let mode = fs::metadata(&script).expect("stat").permissions().mode() & 0o7777;
    assert_eq!(mode, 0o750);
}

#[test]
fn every_root_is_checked_when_opened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing");
    assert!(Root::open_all([dir.path(), missing.as_path()], ambient_authority()).is_err());
    assert!(Root::open_all(Vec::<&Path>::new(), ambient_authority()).is_err());
    let paths: Vec<PathBuf> = Root::open_all([dir.path(), dir.path()], ambient_authority())
        .expect("twice is fine")
        .paths()
        .map(Path::to_path_buf)
        .collect();
    assert_eq!(paths.len(), 2);
}

#[test]
fn a_write_in_another_root_sweeps_stale_temp_files_there() {
    let r = Roots::new();
    fs::create_dir(r.base.join("second/sub")).expect("mkdir");
    let temps = plant_temps(&r.base.join("second/sub"));
    let env = r.call("write_file", &r.abs("second/sub/a.txt"), "one\n");
    assert_eq!(env.status, "success", "{}", env.text);
    assert!(!temps.stale.exists(), "the stale temp file is swept");
    assert!(temps.fresh.exists(), "a live writer's temp file is kept");
}
