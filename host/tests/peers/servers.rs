//! `write-tool mcp` and `write-tool serve --ws` under real clients.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::{bin_str, installed, peers_dir, python, root, run, workspace};

/// MCP 2025-11-25's lifecycle: `initialize`, then calls.
#[test]
fn mcp_python_sdk_client() {
    mcp_python_sdk_client_in("legacy");
}

/// MCP 2026-07-28's, as the SDK's default mode finds it: `server/discover`,
/// then stateless calls.
#[test]
fn mcp_python_sdk_client_discovers() {
    mcp_python_sdk_client_in("auto");
}

/// MCP 2026-07-28's with the version pinned: no handshake at all, each
/// request self-contained.
#[test]
fn mcp_python_sdk_client_pinned_to_2026_07_28() {
    mcp_python_sdk_client_in("2026-07-28");
}

/// The Python SDK's client in `mode` drives the server through every kind
/// of answer (`host/tests/peers/mcp_client.py`); the files are as it left
/// them.
fn mcp_python_sdk_client_in(mode: &str) {
    let root = root();
    let script = workspace().join("host/tests/peers/mcp_client.py");
    // The journal no one named, under a state directory of the test's own.
    let state = tempfile::tempdir().expect("state");
    let output = run(Command::new(python())
        .env("XDG_STATE_HOME", state.path())
        .env("WRITE_TOOL_CACHE_DIR", write_tool_test_support::cache_dir())
        .arg(script)
        .arg(bin_str())
        .arg(root.path())
        .arg(mode));
    assert!(String::from_utf8_lossy(&output.stdout).contains(&format!("mcp client ({mode}): ok")));
    let read = |p: &str| fs::read_to_string(root.path().join(p)).expect(p);
    // As the text editor's insert left it.
    assert_eq!(read("src/a.txt"), "one\none and a half\ntwo\n");
    assert_eq!(read("notes/todo.txt"), "Buy milk");
    assert_eq!(read("last.txt"), "still here\n");
    assert_eq!(
        fs::metadata(root.path().join("big.txt"))
            .expect("big")
            .len(),
        12 * 1024 * 1024
    );
    assert!(!root.path().join("dry.txt").exists());
    assert!(!root.path().join("no-content.txt").exists());
    assert!(!root.beside("escape.txt"));
}

/// `host/tests/peers/node`, installed at the versions its lock file pins.
fn node_peers() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let source = workspace().join("host/tests/peers/node");
        let files = [
            "package.json",
            "package-lock.json",
            "mcp_client.mjs",
            "mcp_headers_client.mjs",
        ];
        let mut inputs = String::new();
        for file in files {
            inputs += &fs::read_to_string(source.join(file)).expect(file);
        }
        let dir = peers_dir().join("node-peers");
        installed(&dir, &inputs, |dir| {
            for file in files {
                fs::copy(source.join(file), dir.join(file)).expect("copy");
            }
            run(Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(dir));
        });
        dir
    })
}

/// The TypeScript SDK's stdio client, which validates answers against the
/// tools' output schema with Ajv (`host/tests/peers/node/mcp_client.mjs`).
#[test]
fn mcp_typescript_sdk_client() {
    let root = root();
    let dir = node_peers();
    let state = tempfile::tempdir().expect("state");
    let output = run(Command::new("node")
        .env("XDG_STATE_HOME", state.path())
        .env("WRITE_TOOL_CACHE_DIR", write_tool_test_support::cache_dir())
        .arg(dir.join("mcp_client.mjs"))
        .arg(bin_str())
        .arg(root.path())
        .current_dir(dir));
    assert!(String::from_utf8_lossy(&output.stdout).contains("mcp ts client: ok"));
    check_typescript_client_files(root.path());
    assert!(!root.beside("escape.txt"));
}

/// The same client over Streamable HTTP, at `/mcp` on the WebSocket port.
#[test]
fn mcp_typescript_sdk_client_over_http() {
    let root = tempfile::tempdir().expect("root");
    let journal = tempfile::tempdir().expect("journal");
    let path = root.path().to_path_buf();
    let args: Vec<String> = vec![
        "--root".into(),
        path.display().to_string(),
        "--journal".into(),
        journal.path().display().to_string(),
        "serve".into(),
        "--ws".into(),
        "127.0.0.1:0".into(),
    ];
    let server = crate::cli::WsServer::run(&args, root);
    let dir = node_peers();
    let output = run(Command::new("node")
        .arg(dir.join("mcp_client.mjs"))
        .arg(bin_str())
        .arg(&path)
        .arg(format!("http://{}/mcp", server.addr()))
        .current_dir(dir));
    assert!(String::from_utf8_lossy(&output.stdout).contains("mcp ts client: ok"));
    check_typescript_client_files(&path);
}

/// SEP-2243 at `/mcp` behind the operator's token, under both SDKs pinned
/// to MCP 2026-07-28: the `Mcp-Method` and `Mcp-Name` they send are taken,
/// and a call whose header was rewritten on its way is refused with
/// HEADER_MISMATCH and writes nothing (`mcp_headers_client.mjs`,
/// `mcp_headers_client.py`).
#[test]
fn mcp_headers_are_checked_against_the_body_under_both_sdks() {
    let root = tempfile::tempdir().expect("root");
    let secrets = tempfile::tempdir().expect("secrets");
    let token = "7d0f3b9e61a24c58b0d7e3f2a9c1b4e67d0f3b9e61a24c58";
    let token_file = secrets.path().join("token");
    fs::write(&token_file, token).expect("token");
    let path = root.path().to_path_buf();
    let args: Vec<String> = vec![
        "--root".into(),
        path.display().to_string(),
        "serve".into(),
        "--ws".into(),
        "127.0.0.1:0".into(),
        "--ws-token-file".into(),
        token_file.display().to_string(),
    ];
    let server = crate::cli::WsServer::run(&args, root);
    let url = format!("http://{}/mcp", server.addr());
    let dir = node_peers();
    let output = run(Command::new("node")
        .arg(dir.join("mcp_headers_client.mjs"))
        .args([&url, token])
        .current_dir(dir));
    assert!(String::from_utf8_lossy(&output.stdout).contains("mcp ts headers client: ok"));
    let script = workspace().join("host/tests/peers/mcp_headers_client.py");
    let output = run(Command::new(python()).arg(script).args([&url, token]));
    assert!(String::from_utf8_lossy(&output.stdout).contains("mcp py headers client: ok"));
    for sdk in ["ts", "py"] {
        let written = |name: &str| path.join(format!("{sdk}-headers/{name}.txt"));
        for name in ["sent", "after"] {
            assert_eq!(
                fs::read_to_string(written(name)).expect("written"),
                format!("{sdk}-headers/{name}.txt\n")
            );
        }
        for name in ["renamed", "remethod"] {
            assert!(!written(name).exists(), "{sdk}: {name} was written");
        }
    }
}

/// What `mcp_client.mjs` leaves in the root.
fn check_typescript_client_files(root: &Path) {
    let read = |p: &str| fs::read_to_string(root.join(p)).expect(p);
    assert_eq!(read("ts/a.txt"), "one\n2\n");
    assert!(!root.join("ts/dry.txt").exists());
    assert!(!root.join("ts/no-content.txt").exists());
    assert!(!root.join("ts/many").exists(), "the group is undone");
}

/// The freeform `apply_patch`'s grammar, as the definition hands it to
/// OpenAI, read by Lark: it admits the patches the tool applies, refuses
/// the malformed ones, and every random patch drawn from its rules is one
/// the tool parses (`host/tests/peers/patch_grammar.py`).
#[test]
fn the_patch_grammar_admits_only_patches_the_tool_parses() {
    let root = root();
    let script = workspace().join("host/tests/peers/patch_grammar.py");
    let output = run(Command::new(python())
        .arg(script)
        .arg(bin_str())
        .arg(root.path()));
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains("patch grammar: ok (406 patches)"), "{said}");
}

/// Without `--root`, `mcp` takes the client's roots (`roots/list`) and
/// follows their changes; with `--root`, the command line wins; a client
/// that offers none gets the server's own root.
#[test]
fn mcp_follows_the_clients_roots() {
    let base = tempfile::tempdir().expect("tempdir");
    let dirs: Vec<PathBuf> = ["cwd", "a", "b", "c"]
        .iter()
        .map(|d| {
            let dir = base.path().join(d);
            fs::create_dir(&dir).expect("mkdir");
            dir.canonicalize().expect("canonical")
        })
        .collect();
    let script = workspace().join("host/tests/peers/mcp_roots_client.py");
    let output = run(Command::new(python())
        .arg(script)
        .arg(bin_str())
        .args(&dirs));
    assert!(String::from_utf8_lossy(&output.stdout).contains("mcp roots client: ok"));
    let listing = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
            .collect();
        names.sort();
        names
    };
    let [cwd, a, b, c] = &dirs[..] else {
        unreachable!("four directories")
    };
    assert_eq!(listing(a), ["cli-wins.txt", "from-client.txt"]);
    assert_eq!(listing(b), ["in-b.txt"]);
    assert_eq!(listing(c), ["after-change.txt"]);
    assert_eq!(listing(cwd), ["own-root.txt"]);
}

#[test]
fn websocket_python_client() {
    let root = root();
    let script = workspace().join("host/tests/peers/ws_client.py");
    let output = run(Command::new(python())
        .arg(script)
        .arg(bin_str())
        .arg(root.path()));
    assert!(String::from_utf8_lossy(&output.stdout).contains("websocket client: ok"));
    let read = |p: &str| fs::read_to_string(root.path().join(p)).expect(p);
    assert_eq!(read("a.txt"), "two\n");
    assert_eq!(read("notes/todo.txt"), "Buy milk");
    assert_eq!(read("ui.txt"), "from the UI");
    for n in 0..4 {
        for i in 0..5 {
            assert_eq!(read(&format!("many/{n}/{i}.txt")), format!("{n}-{i}\n"));
        }
    }
    assert_eq!(read("under.txt"), "u");
    assert_eq!(read("past-the-silent.txt"), "in\n");
    for refused in ["b.txt", "evil.txt", "deep.txt", "over.txt"] {
        assert!(!root.path().join(refused).exists(), "{refused}");
    }
}

/// The README's MCP client configuration block.
fn readme_mcp_config() -> String {
    let readme = fs::read_to_string(workspace().join("README.md")).expect("README");
    readme
        .split("<!-- mcp-config")
        .nth(1)
        .and_then(|rest| rest.split("```json\n").nth(1))
        .and_then(|rest| rest.split("```").next())
        .expect("the README has the MCP configuration block")
        .to_owned()
}

/// The README's MCP client configuration, as written: only its
/// placeholders are filled in, the binary by its absolute path as the
/// README says.
#[test]
fn readme_mcp_configuration_works_as_written() {
    let root = root();
    let config = readme_mcp_config()
        .replace("/absolute/path/to/write-tool", bin_str())
        .replace("/path/to/project", root.path().to_str().expect("utf-8"));
    let config_path = root.path().with_extension("mcp.json");
    fs::write(&config_path, &config).expect("config");
    let script = workspace().join("host/tests/peers/mcp_config_client.py");
    let output = run(Command::new(python()).arg(script).arg(&config_path));
    fs::remove_file(&config_path).expect("cleanup");
    assert!(String::from_utf8_lossy(&output.stdout).contains("configured server: ok"));
    assert_eq!(
        fs::read_to_string(root.path().join("from-config.txt")).expect("read"),
        "configured\n"
    );
}

/// The README's configuration with its root placeholder left in, as a new
/// user pastes it: the client still connects, lists the tools, gets a log
/// message and a call error that name the path, and nothing is written.
#[test]
fn readme_mcp_configuration_with_the_placeholder_root_says_what_is_wrong() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = readme_mcp_config().replace("/absolute/path/to/write-tool", bin_str());
    assert!(config.contains("/path/to/project"));
    let config_path = dir.path().join("mcp.json");
    fs::write(&config_path, &config).expect("config");
    let script = workspace().join("host/tests/peers/mcp_config_client.py");
    let output = run(Command::new(python())
        .arg(script)
        .arg(&config_path)
        .args(["broken", "/path/to/project"])
        .current_dir(dir.path()));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("broken configuration: ok"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert_eq!(fs::read_dir(dir.path()).expect("list").count(), 1);
}
