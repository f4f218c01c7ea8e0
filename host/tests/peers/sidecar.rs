//! The sidecar's HTTP surfaces on the WebSocket port — MCP over Streamable
//! HTTP and agent-sandbox's file API — under real clients: the MCP Python
//! SDK, agent-sandbox's Python SDK, and schemathesis reading the vendored
//! OpenAPI spec (`deploy/sandboxd/filesystem.yaml`).

use std::fs;
use std::process::Command;

use crate::cli::WsServer;
use crate::{bin_str, python, root, run, workspace};

#[test]
fn sidecar_http_under_the_mcp_and_agent_sandbox_sdks() {
    let root = root();
    let journal = tempfile::tempdir().expect("journal");
    let script = workspace().join("host/tests/peers/sidecar_client.py");
    let output = run(Command::new(python())
        .env("WRITE_TOOL_CACHE_DIR", write_tool_test_support::cache_dir())
        .arg(script)
        .arg(bin_str())
        .arg(root.path())
        .arg(journal.path()));
    assert!(String::from_utf8_lossy(&output.stdout).contains("sidecar client: ok"));
    let read = |p: &str| fs::read_to_string(root.path().join(p)).expect(p);
    assert_eq!(read("api/hello.txt"), "second\n");
    assert_eq!(read("api/sub/deep.txt"), "deep\n");
    for mode in ["legacy", "auto", "2026-07-28"] {
        assert_eq!(read(&format!("http-{mode}.txt")), format!("over {mode}\n"));
        assert_eq!(read(&format!("http-{mode}/2.txt")), "2\n");
    }
    // Written after a resume, sealed, then changed behind the journal's
    // back (which the next start reported).
    assert_eq!(
        read("api/resumed.txt"),
        "yes\nchanged behind the journal's back\n"
    );
    assert_eq!(read("api/endings.txt"), "c\nd\n");
    let bytes = |name: &str| fs::read(root.path().join(name)).expect(name);
    assert_eq!(bytes("api/binary.bin"), b"\xff\xfe\x00\x89PNG");
    assert_eq!(bytes("api/cp1252.txt"), b"caf\xe9\r\n");
    for absent in [
        "api/gone.txt",
        "api/undone.txt",
        "api/mode.txt",
        "api/held.txt",
        "api/big.txt",
        "evil.txt",
    ] {
        assert!(!root.path().join(absent).exists(), "{absent}");
    }
    assert!(!root.beside("escape.txt") && !root.beside("out.txt"));
}

/// schemathesis generates requests from the spec and checks each answer
/// against it: no server error, only the status codes, content types,
/// headers and bodies the spec declares.
#[test]
fn the_file_api_answers_as_its_openapi_spec_says() {
    let root = tempfile::tempdir().expect("root");
    let journal = tempfile::tempdir().expect("journal");
    let args: Vec<String> = vec![
        "--root".into(),
        root.path().display().to_string(),
        "--journal".into(),
        journal.path().display().to_string(),
        "--allow-delete".into(),
        "serve".into(),
        "--ws".into(),
        "127.0.0.1:0".into(),
    ];
    let server = WsServer::run(&args, root);
    let spec = workspace().join("deploy/sandboxd/filesystem.yaml");
    let schemathesis = python().with_file_name("schemathesis");
    // It keeps a cache where it runs: a directory of the test's own.
    let scratch = tempfile::tempdir().expect("scratch");
    let output = Command::new(schemathesis)
        .current_dir(scratch.path())
        .arg("run")
        .arg(spec)
        .arg("--url")
        .arg(format!("http://{}/v1", server.addr()))
        .args([
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,\
             response_headers_conformance,response_schema_conformance",
            "--max-examples",
            "40",
            "--seed",
            "7",
            "--request-timeout",
            "30",
            "--no-color",
        ])
        .output()
        .expect("run schemathesis");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "schemathesis found answers the spec does not allow:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // It tested every operation of the spec, in both phases that send
    // requests, and every case it made passed: a run that skipped what it
    // could not reach says so in these lines.
    let line = |label: &str| -> String {
        stdout
            .lines()
            .find_map(|line| line.trim().strip_prefix(label))
            .unwrap_or_else(|| panic!("no {label:?} in:\n{stdout}"))
            .trim()
            .to_owned()
    };
    let total = line("Selected:");
    let (selected, of) = total.split_once('/').expect("N/M");
    assert_eq!(selected, of, "{stdout}");
    assert!(of.parse::<usize>().expect("a count") >= 5, "{stdout}");
    assert_eq!(line("Tested:"), of, "{stdout}");
    for phase in ["Coverage", "Fuzzing"] {
        assert!(
            stdout.contains(&format!("✅ {phase}")),
            "the {phase} phase did not pass:\n{stdout}"
        );
    }
    // Under "Test cases:", one line: "N generated, N passed".
    let cases = stdout
        .lines()
        .skip_while(|line| line.trim() != "Test cases:")
        .nth(1)
        .unwrap_or_else(|| panic!("no test cases in:\n{stdout}"))
        .trim();
    let (generated, passed) = cases.split_once(", ").expect("generated, passed");
    let generated = generated.strip_suffix(" generated").expect("generated");
    assert_eq!(passed, format!("{generated} passed"), "{stdout}");
    assert!(generated.parse::<usize>().expect("a count") > 0, "{stdout}");
}
