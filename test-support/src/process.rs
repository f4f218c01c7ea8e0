//! Processes the suites run: the `write-tool` binary, and `patch`.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::paths::{bin, cache_dir};

/// `write-tool ARGS` with `stdin` fed to it.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    run_cmd(Command::new(bin()).args(args), stdin)
}

/// `cmd` with the suites' compile cache and `stdin` fed to it; its output.
pub fn run_cmd(cmd: &mut Command, stdin: &[u8]) -> Output {
    let mut child = cmd
        .env("WRITE_TOOL_CACHE_DIR", cache_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn write-tool");
    // Feed stdin from a thread so that a large input cannot deadlock
    // against a full stdout pipe.
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let output = child.wait_with_output().expect("wait");
    feeder.join().expect("feeder");
    output
}

/// `write-tool ARGS` on a terminal (a pseudo-terminal from util-linux's
/// `script`) with `typed` typed at it: its exit status, and everything the
/// terminal showed (stdout, stderr and the echo of what was typed).
pub fn run_on_terminal(args: &[&str], typed: &[u8]) -> (Option<i32>, String) {
    let quote = |arg: &str| format!("'{}'", arg.replace('\'', r"'\''"));
    let command = std::iter::once(bin().to_str().expect("a UTF-8 build path").to_owned())
        .chain(args.iter().copied().map(str::to_owned))
        .map(|arg| quote(&arg))
        .collect::<Vec<_>>()
        .join(" ");
    let output = run_cmd(
        Command::new("script").args(["--quiet", "--return", "--command", &command, "/dev/null"]),
        typed,
    );
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The one envelope on stdout.
pub fn envelope(output: &Output) -> Value {
    let stdout = String::from_utf8(output.stdout.clone()).expect("utf-8 stdout");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stdout: {stdout:?}");
    serde_json::from_str(lines[0]).expect("stdout is an envelope")
}

/// Exit 2, a message on stderr, and no envelope.
#[track_caller]
pub fn assert_usage_error(output: &Output) {
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
    assert!(!output.stderr.is_empty(), "{output:?}");
}

/// A directory as a `--root` argument.
pub fn root_arg(dir: &Path) -> String {
    dir.to_str().expect("utf-8 temp path").to_owned()
}

/// Apply `patch` to `old` with the system's `patch -p1`, returning the
/// result. Tests the claim that the preview is a real unified diff.
pub fn apply_with_patch_tool(name: &str, old: &[u8], patch: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(name);
    if let Some(parent) = file.parent() {
        fs::create_dir_all(parent).expect("mkdir");
    }
    fs::write(&file, old).expect("old");
    let mut child = Command::new("patch")
        .args(["-p1", "--quiet", "--batch", "--no-backup-if-mismatch"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .spawn()
        .expect("patch is installed");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(patch.as_bytes())
        .expect("feed patch");
    let status = child.wait().expect("patch runs");
    assert!(status.success(), "patch failed on:\n{patch}");
    fs::read(&file).expect("patched")
}
