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
    assert_eq!(
        fs::read_to_string(root.path().join("hello/from-python.txt")).expect("read"),
        "updated\n"
    );
    assert!(!root.beside("outside.txt"));
}

/// `examples/node`, installed at the versions its lock file pins and
/// transpiled with jco. (`npm install`, not `npm ci`: npm leaves other
/// platforms' optional binaries out of a lock file it writes, and `npm ci`
/// then refuses the lock as out of sync.)
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
                .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
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
    assert_eq!(
        fs::read_to_string(root.path().join("hello/from-node.txt")).expect("read"),
        "updated\n"
    );
    let names: Vec<_> = fs::read_dir(root.path().join("hello"))
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["from-node.txt"], "no temp files left behind");
}

#[test]
fn upstream_wasmtime_cli_invokes_the_exports() {
    let root = root();
    let wasmtime = python().with_file_name("wasmtime");
    let dir = format!("{}::.", root.path().display());
    let invoke = |call: &str| {
        let output = run(Command::new(&wasmtime)
            .args(["run", "--dir", &dir, "--invoke", call])
            .arg(component()));
        String::from_utf8(output.stdout).expect("utf-8")
    };
    let out = invoke(r##"write("docs/readme.md", "# hi\n", false)"##);
    assert!(out.starts_with("{status: success"), "{out}");
    assert!(out.contains("operation: create"), "{out}");
    let out = invoke(r##"call("{\"path\": \"docs/readme.md\", \"content\": \"# hello\\n\"}")"##);
    assert!(out.contains(r#"\"operation\":\"update\""#), "{out}");
    let out = invoke(r#"write("../escape.txt", "x", false)"#);
    assert!(out.contains("code: access-denied"), "{out}");
    assert_eq!(
        fs::read_to_string(root.path().join("docs/readme.md")).expect("read"),
        "# hello\n"
    );
    assert!(!root.beside("escape.txt"));
}
