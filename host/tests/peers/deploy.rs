//! The sidecar (`Containerfile`, `deploy/`): the image's file parses as a
//! container build, its stages say what the README says and its command is
//! one the binary runs; the Kubernetes manifests validate against the
//! published schemas.

use std::fs;
use std::process::Command;

use crate::cli::WsServer;
use crate::{python, run, workspace};

/// One instruction of the Containerfile: its keyword and its arguments,
/// continuation lines joined.
fn instructions(text: &str) -> Vec<(String, String)> {
    const KNOWN: [&str; 12] = [
        "FROM",
        "RUN",
        "COPY",
        "WORKDIR",
        "ENV",
        "USER",
        "EXPOSE",
        "ENTRYPOINT",
        "CMD",
        "ARG",
        "LABEL",
        "STOPSIGNAL",
    ];
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if pending.is_empty() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        pending.push_str(trimmed.trim_end_matches('\\'));
        pending.push(' ');
        if trimmed.ends_with('\\') {
            continue;
        }
        let (keyword, args) = pending.trim().split_once(' ').expect("an instruction");
        assert!(KNOWN.contains(&keyword), "unknown instruction {keyword}");
        out.push((keyword.to_owned(), args.trim().to_owned()));
        pending.clear();
    }
    assert!(pending.is_empty(), "a continuation runs off the end");
    out
}

/// The Rust version the workspace pins.
fn pinned_rust() -> String {
    let manifest = fs::read_to_string(workspace().join("Cargo.toml")).expect("Cargo.toml");
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .expect("rust-version")
        .trim_matches('"')
        .to_owned()
}

#[test]
fn the_containerfile_builds_what_the_deploy_readme_says() {
    let text = fs::read_to_string(workspace().join("Containerfile")).expect("Containerfile");
    let readme = fs::read_to_string(workspace().join("deploy/README.md")).expect("README");
    let all = instructions(&text);
    let stages: Vec<&str> = all
        .iter()
        .filter(|(k, _)| k == "FROM")
        .map(|(_, a)| a.as_str())
        .collect();
    assert_eq!(stages.len(), 2, "multi-stage: {stages:?}");
    // The build uses the toolchain the workspace pins.
    let pinned = pinned_rust();
    let pinned = pinned.as_str();
    assert!(
        stages[0].starts_with(&format!("docker.io/library/rust:{pinned}.")),
        "{}",
        stages[0]
    );
    let last = all
        .iter()
        .rposition(|(k, _)| k == "FROM")
        .expect("a final stage");
    let run: Vec<&(String, String)> = all[last..].iter().collect();
    let get = |keyword: &str| {
        run.iter()
            .find(|(k, _)| k == keyword)
            .map(|(_, a)| a.as_str())
            .unwrap_or_else(|| panic!("no {keyword} in the final stage"))
    };
    // Non-root, and the cache owned by that user (or the host refuses it).
    let user = get("USER");
    let uid: u32 = user
        .split(':')
        .next()
        .expect("uid")
        .parse()
        .expect("numeric");
    assert_ne!(uid, 0);
    let cache = get("ENV")
        .strip_prefix("WRITE_TOOL_CACHE_DIR=")
        .expect("the cache's variable");
    assert!(
        run.iter().any(|(k, a)| k == "COPY"
            && a.contains(&format!("--chown={user}"))
            && a.ends_with(cache)),
        "the cache copied with --chown={user}"
    );
    let port = get("EXPOSE");
    let entrypoint: Vec<String> = serde_json::from_str(get("ENTRYPOINT")).expect("exec form");
    assert_eq!(entrypoint, ["/usr/local/bin/write-tool"]);
    let command: Vec<String> = serde_json::from_str(get("CMD")).expect("exec form");
    let after = |flag: &str| &command[command.iter().position(|a| a == flag).expect(flag) + 1];
    // The port that writes on loopback; the published one answers probes.
    let listen = after("--ws");
    assert_eq!(listen, "127.0.0.1:8080");
    let probes = after("--probe-listen");
    assert!(probes.ends_with(&format!(":{port}")), "{probes} on {port}");
    // The workspace and the journal exist in the image, the user's.
    for dir in [after("--root"), after("--journal")] {
        assert!(
            run.iter().any(|(k, a)| k == "COPY"
                && a.contains(&format!("--chown={user}"))
                && a.ends_with(dir.as_str())),
            "{dir} made in the image, owned by {user}"
        );
    }
    // The README names what the file does.
    let user_line = format!("USER {user}");
    let named = [pinned, cache, port, &user_line, "/usr/local/bin/write-tool"];
    for named in named.into_iter().chain(["distroless/cc-debian12"]) {
        assert!(
            readme.contains(named),
            "deploy/README.md does not name {named}"
        );
    }
    assert!(
        readme.contains(&command.join(" ")),
        "the default command, spelled out"
    );
    // The command is one the binary runs: the same flags, a temp root and
    // journal, a free loopback port.
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir(dir.path().join("workspace")).expect("workspace");
    let args: Vec<String> = command
        .iter()
        .map(|a| match a.as_str() {
            "/workspace" => dir.path().join("workspace").display().to_string(),
            "/journal" => dir.path().join("journal").display().to_string(),
            other if other == listen || other == probes => "127.0.0.1:0".to_owned(),
            other => other.to_owned(),
        })
        .collect();
    let server = WsServer::run(&args, dir);
    assert!(server.addr().starts_with("127.0.0.1:"), "{}", server.addr());
}

/// The Kubernetes manifests (`deploy/k8s/`) against the published schemas,
/// vendored: the agent-sandbox `SandboxTemplate` CRD
/// (kubernetes-sigs/agent-sandbox at 2fd412d5) and the Kubernetes v1.37
/// schemas (`schemas/kubernetes/extract.py`), both strict, so a misspelt
/// field fails; and what the sidecar needs of its pod (non-root, no
/// escalation, no capabilities, read-only root, requests and a memory
/// limit, probes on its port, the journal its own).
#[test]
fn the_kubernetes_manifests_validate_against_the_published_schemas() {
    let script = workspace().join("host/tests/peers/k8s_validate.py");
    let output = run(Command::new(python()).arg(script).arg(workspace()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for document in [
        "deployment.yaml: Deployment agent-with-write-tool",
        "deployment.yaml: NetworkPolicy write-tool-port",
        "sandbox-template.yaml: SandboxTemplate agent-with-write-tool",
    ] {
        assert!(
            stdout.contains(&format!("validated {document}")),
            "{stdout}"
        );
    }
}
