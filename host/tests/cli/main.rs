//! The `write-tool` binary as scripts drive it: stdout holds only
//! envelopes, exit codes follow `docs/contract.md#cli`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The commands, their exit codes and their input forms.
mod basic;
/// The compile cache: reuse, corruption, and caches that cannot be used.
mod cache;
/// Crashes, full disks, read-only roots, protected paths, hostile input and
/// a long-running `serve`.
mod hardening;

pub const BIN: &str = env!("CARGO_BIN_EXE_write-tool");

pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    run_cmd(Command::new(BIN).args(args), stdin)
}

/// One compile cache for every process the tests start, so that only the
/// first pays for compiling the component.
pub fn cache_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("write-tool-cache")
}

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

pub fn root_arg(dir: &Path) -> String {
    dir.to_str().expect("utf-8 temp path").to_owned()
}
