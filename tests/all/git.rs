//! Git runs code from more places than `.git`: the hooks directory
//! `core.hooksPath` names (husky, lefthook), the files its configuration
//! includes, a bare repository's `hooks/`. A write to any of them is
//! refused as `.git` is, and a real `git commit` afterwards runs no hook
//! the tool could have written.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use serde_json::json;

use crate::support::Project;

fn git(p: &Project, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(p.root_dir())
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A hook that leaves `marker` in the root when it runs.
fn hook(marker: &str) -> String {
    format!("#!/bin/sh\ntouch \"$(git rev-parse --show-toplevel)/{marker}\"\n")
}

#[test]
fn hooks_named_by_the_configuration_are_protected_and_never_run() {
    let p = Project::new();
    git(&p, &["init", "-q"]);
    git(&p, &["config", "core.hooksPath", ".githooks"]);
    git(&p, &["config", "include.path", "../team.gitconfig"]);
    p.write(".githooks/pre-commit", hook("ran-original"));
    std::fs::set_permissions(
        p.path(".githooks/pre-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    p.write("team.gitconfig", "[commit]\n\tverbose = false\n");
    // husky's layout, as a second repository in the root.
    p.write("web/.husky/pre-commit", "npm test\n");
    std::fs::create_dir_all(p.path("web/.husky/_")).unwrap();
    let before = p.tree();
    for (path, content) in [
        (".githooks/pre-commit", hook("ran-written")),
        (".githooks/post-commit", hook("ran-written")),
        ("team.gitconfig", "[core]\n\thooksPath = evil\n".to_owned()),
        (".git/config", "[core]\n".to_owned()),
    ] {
        for dry_run in [false, true] {
            let env = p.call(json!({"path": path, "content": content, "dry_run": dry_run}));
            env.assert_error("ACCESS_DENIED");
            assert_eq!(env.text, "Path is protected.", "{path}");
        }
    }
    assert_eq!(p.tree(), before, "nothing written");
    // Ordinary files still are.
    p.put("src/main.rs", "fn main() {}\n")
        .assert_status("success");
    git(&p, &["add", "."]);
    git(&p, &["commit", "-q", "-m", "first"]);
    assert!(p.exists("ran-original"), "the user's own hook ran");
    assert!(!p.exists("ran-written"), "no hook the tool wrote ran");
}

#[test]
fn husky_worktree_and_bare_repository_hooks_are_protected() {
    let p = Project::new();
    // husky: `core.hooksPath = .husky/_`, whose scripts run `.husky/<hook>`.
    std::fs::create_dir_all(p.path("app")).unwrap();
    let app = p.path("app");
    let run = |dir: &std::path::Path, args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&app, &["init", "-q"]);
    run(&app, &["config", "core.hooksPath", ".husky/_"]);
    p.write("app/.husky/_/h", "#!/bin/sh\n");
    // A bare repository, and a repository whose git directory is kept
    // apart from its work tree.
    run(
        p.root_dir().as_path(),
        &["init", "-q", "--bare", "srv/repo.git"],
    );
    std::fs::create_dir_all(p.path("wt")).unwrap();
    run(
        &p.path("wt"),
        &["init", "-q", "--separate-git-dir", "../gd"],
    );
    for path in [
        "app/.husky/pre-commit",
        "app/.husky/_/pre-commit",
        "srv/repo.git/hooks/post-receive",
        "srv/repo.git/config",
        "wt/.git",
        "gd/config",
        "gd/hooks/pre-commit",
    ] {
        let env = p.put(path, "#!/bin/sh\necho pwned\n");
        env.assert_error("ACCESS_DENIED");
        assert_eq!(env.text, "Path is protected.", "{path}");
    }
    for path in ["app/src/a.js", "srv/notes.txt", "wt/src/b.rs"] {
        p.put(path, "ok\n").assert_status("success");
    }
}

/// `--no-default-protect` drops these with `.git`.
#[test]
fn dropping_the_default_protection_drops_the_hooks_too() {
    let p = Project::new();
    git(&p, &["init", "-q"]);
    git(&p, &["config", "core.hooksPath", ".githooks"]);
    let tool = write_tool::WriteTool::new(write_tool::Options {
        default_protect: false,
        ..crate::support::options()
    })
    .expect("component compiles");
    let env = crate::support::decode(&tool.call(
        p.root(),
        &json!({"path": ".githooks/pre-commit", "content": "x\n"}).to_string(),
    ));
    env.assert_status("success");
}
