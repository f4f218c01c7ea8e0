//! CLI plumbing the peers rely on.

use std::process::Command;

use crate::{BIN, run};

#[test]
fn component_goes_to_stdout_byte_for_byte() {
    let output = run(Command::new(BIN).arg("component"));
    assert_eq!(output.stdout, write_tool::COMPONENT);
}

#[test]
fn ws_refuses_addresses_that_are_not_loopback_unless_asked() {
    let root = tempfile::tempdir().expect("tempdir");
    let output = Command::new(BIN)
        .arg("--root")
        .arg(root.path())
        .args(["serve", "--ws", "0.0.0.0:0"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--ws-allow-remote"), "{stderr}");
}
