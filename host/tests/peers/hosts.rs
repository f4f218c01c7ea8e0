//! The component, byte for byte the one the CLI runs, under other hosts:
//! the examples in `examples/` and the upstream wasmtime CLI.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use crate::{component, installed, peers_dir, python, root, run, workspace};

#[test]
fn python_example_under_wasmtime_py() {
    let root = root();
    let script = workspace().join("examples/python/write_tool.py");
    let output = run(Command::new(python())
        .arg(script)
        .arg(component())
        .arg(root.path()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("-written by wasmtime-py\n+updated\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Edited 'hello/from-python.txt'"),
        "{stdout}"
    );
    assert_eq!(
        fs::read_to_string(root.path().join("hello/from-python.txt")).expect("read"),
        "edited\n"
    );
    assert!(!root.beside("outside.txt"));
}

/// The Python example with a journal granted (`docs/contract.md#journal`):
/// its update is reverted, and a `write_many` of two files is written and
/// reverted as one change.
#[test]
fn python_example_reverts_with_a_journal_granted_under_wasmtime_py() {
    let root = root();
    let journal = tempfile::tempdir().expect("journal");
    let script = workspace().join("examples/python/write_tool.py");
    let output = run(Command::new(python())
        .arg(script)
        .arg(component())
        .arg(root.path())
        .arg(journal.path()));
    assert_reverted(
        &String::from_utf8_lossy(&output.stdout),
        root.path(),
        "from-python.txt",
        "updated\n",
    );
    assert!(journal.path().join("log").is_file());
}

/// What the examples print and leave when they revert: the edit undone,
/// the two files of the group written and removed again.
fn assert_reverted(stdout: &str, root: &Path, name: &str, first: &str) {
    assert!(stdout.contains("Reverted c3 (c4)."), "{stdout}");
    assert!(
        stdout.contains("Wrote 2 of 2 files as one change (c5)."),
        "{stdout}"
    );
    assert!(stdout.contains("Reverted c5 (c6)."), "{stdout}");
    assert_eq!(
        fs::read_to_string(root.join("hello").join(name)).expect("read"),
        first
    );
    let names: Vec<_> = fs::read_dir(root.join("hello"))
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(
        names,
        [name],
        "the group's files removed, no temp files left"
    );
}

/// `examples/node`, installed at the versions its lock file pins (`npm
/// ci`, as its README says) and transpiled with jco.
fn node_example() -> &'static Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let source = workspace().join("examples/node");
        let files = ["package.json", "package-lock.json", "write_tool.mjs"];
        let wasm = fs::read(component()).expect("component");
        let mut inputs = String::new();
        for file in files {
            inputs += &fs::read_to_string(source.join(file)).expect(file);
        }
        inputs += &format!("{:x}", crc(&wasm));
        let dir = peers_dir().join("node");
        installed(&dir, &inputs, |dir| {
            for file in files {
                fs::copy(source.join(file), dir.join(file)).expect("copy");
            }
            fs::write(dir.join("write_tool.wasm"), &wasm).expect("wasm");
            run(Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(dir));
            run(Command::new("npm")
                .args(["run", "--silent", "transpile"])
                .current_dir(dir));
        });
        dir
    })
}

/// A cheap fingerprint of the component, so that a rebuilt component is
/// transpiled again.
fn crc(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

#[test]
fn node_example_under_jco_and_preview2_shim() {
    let root = root();
    let dir = node_example();
    let output = run(Command::new("node")
        .arg(dir.join("write_tool.mjs"))
        .arg(root.path())
        .current_dir(dir));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("-written by jco\n+updated\n"), "{stdout}");
    assert!(stdout.contains("Edited 'hello/from-node.txt'"), "{stdout}");
    assert_eq!(
        fs::read_to_string(root.path().join("hello/from-node.txt")).expect("read"),
        "edited\n"
    );
    let names: Vec<_> = fs::read_dir(root.path().join("hello"))
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["from-node.txt"], "no temp files left behind");
}

/// The Node example with a journal granted, as under wasmtime-py.
#[test]
fn node_example_reverts_with_a_journal_granted_under_jco() {
    let root = root();
    let journal = tempfile::tempdir().expect("journal");
    let dir = node_example();
    let output = run(Command::new("node")
        .arg(dir.join("write_tool.mjs"))
        .arg(root.path())
        .arg(journal.path())
        .current_dir(dir));
    assert_reverted(
        &String::from_utf8_lossy(&output.stdout),
        root.path(),
        "from-node.txt",
        "updated\n",
    );
    assert!(journal.path().join("log").is_file());
}

/// The upstream wasmtime CLI, the root granted both ways: under the name
/// `.`, and under its own absolute path (as runtimes such as Wassette do).
#[test]
fn upstream_wasmtime_cli_invokes_the_exports() {
    for dot in [true, false] {
        let root = root();
        let path = root.path().display().to_string();
        let dir = if dot {
            format!("{path}::.")
        } else {
            format!("{path}::{path}")
        };
        let wasmtime = python().with_file_name("wasmtime");
        let invoke = |call: &str| {
            let output = run(Command::new(&wasmtime)
                .args(["run", "--dir", &dir, "--invoke", call])
                .arg(component()));
            String::from_utf8(output.stdout).expect("utf-8")
        };
        let out = invoke(r##"write("docs/readme.md", "# hi\n", false)"##);
        assert!(out.starts_with("{status: success"), "{dir}: {out}");
        assert!(out.contains("operation: create"), "{out}");
        let out =
            invoke(r##"call("{\"path\": \"docs/readme.md\", \"content\": \"# hello\\n\"}")"##);
        assert!(out.contains(r#"\"operation\":\"update\""#), "{dir}: {out}");
        let out = invoke(r#"write("../escape.txt", "x", false)"#);
        assert!(out.contains("code: access-denied"), "{dir}: {out}");
        assert_eq!(
            fs::read_to_string(root.path().join("docs/readme.md")).expect("read"),
            "# hello\n"
        );
        // An absolute path: `Write` names the relative form when it knows
        // the root's absolute name, `write_file` writes there.
        let absolute = format!("{path}/docs/abs.md");
        let out = invoke(&format!(r#"write("{absolute}", "x", false)"#));
        assert!(out.contains("code: invalid-param"), "{dir}: {out}");
        if !dot {
            // WAVE escapes the quotes.
            assert!(
                out.contains(r"Use relative path: \'docs/abs.md\'."),
                "{out}"
            );
        }
        let request = format!(
            r#"{{\"name\": \"write_file\", \"arguments\": {{\"path\": \"{absolute}\", \"content\": \"abs\\n\"}}}}"#
        );
        let out = invoke(&format!(r#"call("{request}")"#));
        if dot {
            // The guest knows the root only as `.`: no absolute name.
            assert!(out.contains("is not in allowed directories"), "{out}");
        } else {
            assert!(out.contains("Successfully wrote to"), "{dir}: {out}");
            assert_eq!(
                fs::read_to_string(root.path().join("docs/abs.md")).expect("read"),
                "abs\n"
            );
        }
        assert!(!root.beside("escape.txt"));
    }
}

/// The component carries its WIT docs (`package-docs`), and
/// `wasm-tools component wit` prints them: what runtimes that describe
/// tools from a component's docs read.
#[test]
fn wasm_tools_prints_the_components_docs() {
    let wasm_tools = python().with_file_name("wasm-tools");
    let output = run(Command::new(wasm_tools)
        .args(["component", "wit"])
        .arg(component()));
    let wit = String::from_utf8(output.stdout).expect("utf-8");
    for doc in [
        "/// The tool itself.",
        "/// Write `content` to `path` (relative to the project root",
        "/// Run a tool call from its raw JSON",
        "/// The tool definition as JSON",
        "/// Nothing was changed on disk; `error` says why.",
    ] {
        assert!(wit.contains(doc), "missing {doc:?} in:\n{wit}");
    }
    assert!(wit.contains("  export tool: interface {"), "{wit}");
}
