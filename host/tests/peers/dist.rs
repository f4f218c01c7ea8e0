//! The release (`cargo xtask dist`, `push`, `verify`), built from the binary
//! under test and installed the way its users install it: the wheel into a
//! fresh virtualenv, the npm package into a fresh folder, the bundle
//! checked and unpacked by the official `mcpb` CLI and driven by the MCP
//! Python SDK, the OCI artifact pushed to a real registry (Debian's
//! `docker-registry`, the CNCF distribution server, on 127.0.0.1) and
//! pulled back by an independent client (PyPI `oras`), `server.json`
//! validated against the registry's schema.

use std::fs;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use xtask::dist::sha256;
use xtask::{Dist, Options};

use crate::{bin_str, installed, peers_dir, python, run, workspace};

/// What a dist into `out` from the binary under test is built from.
fn options(out: &Path) -> Options {
    Options {
        out: out.to_path_buf(),
        binary: PathBuf::from(bin_str()),
        workspace: workspace(),
        work: peers_dir().join("xtask"),
        python: python().to_path_buf(),
        epoch: xtask::release::source_date_epoch(&workspace()).expect("epoch"),
    }
}

/// A dist built into `out` from the binary under test.
fn build(out: &Path) -> anyhow::Result<Dist> {
    build_with(&options(out))
}

/// A dist built as `options` say, one at a time: every build stages its
/// wheel and npm package in the one work folder (`Options::work`, which
/// keeps the Node tools' install), and two at once would stage into each
/// other.
fn build_with(options: &Options) -> anyhow::Result<Dist> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    xtask::dist(options, &mut |_| {})
}

/// The dist every test reads, built once.
pub(crate) fn built() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| {
        let out = peers_dir().join("dist");
        let _ = fs::remove_dir_all(&out);
        build(&out).expect("dist");
        out
    })
}

fn listed() -> Dist {
    serde_json::from_slice(&fs::read(built().join("dist.json")).expect("dist.json")).expect("JSON")
}

/// `entry` of the zip at `zip`, read by Python's `zipfile`.
fn unzip(zip: &Path, entry: &str) -> Vec<u8> {
    run(Command::new(python())
        .args([
            "-c",
            "import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))",
        ])
        .arg(zip)
        .arg(entry))
    .stdout
}

#[test]
fn every_artifact_carries_the_clis_component_and_two_builds_agree() {
    let dist = listed();
    let component = write_tool::COMPONENT;
    assert_eq!(dist.component_sha256, sha256(component));
    let kinds: Vec<&str> = dist.artifacts.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["oci", "wheel", "npm", "mcpb", "server-json"]);
    for entry in &dist.artifacts {
        let path = built().join(&entry.file);
        if entry.kind != "oci" {
            assert_eq!(
                sha256(&fs::read(&path).expect("artifact")),
                entry.sha256,
                "{}",
                entry.file
            );
        }
    }

    // The OCI layout's component layer, the wheel's component, the
    // bundle's binary: the bytes themselves.
    let oci = dist.get("oci").expect("oci");
    let layer = oci.component_digest.as_deref().expect("component digest");
    assert_eq!(layer, format!("sha256:{}", sha256(component)));
    let blob = built().join("oci/blobs/sha256").join(&layer[7..]);
    assert_eq!(fs::read(blob).expect("layer"), component);
    let wheel = built().join(&dist.get("wheel").expect("wheel").file);
    assert_eq!(unzip(&wheel, "write_tool/write_tool.wasm"), component);
    let mcpb = built().join(&dist.get("mcpb").expect("mcpb").file);
    assert_eq!(
        unzip(&mcpb, "server/write-tool"),
        fs::read(bin_str()).expect("binary")
    );
    // The npm package holds the transpilation, not the component: its
    // core module is the component's own (jco copies it out unchanged).
    let npm = built().join(&dist.get("npm").expect("npm").file);
    let listing = run(Command::new("tar").arg("tzf").arg(&npm)).stdout;
    let listing = String::from_utf8_lossy(&listing);
    for file in [
        "package/index.js",
        "package/index.d.ts",
        "package/gen/write_tool.js",
        "package/gen/write_tool.core.wasm",
    ] {
        assert!(listing.lines().any(|l| l == file), "{file} in {listing}");
    }

    // The layout as Wassette and wkg read it, in their own words.
    let layout = xtask::oci::Artifact::read_layout(&built().join("oci")).expect("layout");
    let manifest: serde_json::Value = serde_json::from_slice(&layout.manifest).expect("JSON");
    assert_eq!(
        manifest["artifactType"],
        "application/vnd.wasm.component.v1+wasm"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(
        manifest["layers"][1]["mediaType"],
        "application/vnd.wasm.policy.v1+yaml"
    );
    for key in ["title", "description", "version", "source", "licenses"] {
        let value = &manifest["annotations"][format!("org.opencontainers.image.{key}")];
        assert!(
            value.as_str().is_some_and(|v| !v.is_empty()),
            "{key}: {manifest}"
        );
    }
    let epoch = xtask::release::source_date_epoch(&workspace()).expect("epoch");
    let config_digest = manifest["config"]["digest"].as_str().expect("digest");
    let config: serde_json::Value =
        serde_json::from_slice(&layout.blobs[config_digest]).expect("config");
    assert_eq!(config["created"], xtask::release::rfc3339(epoch));
    assert_eq!(
        (&config["architecture"], &config["os"]),
        (&"wasm".into(), &"wasip2".into())
    );
    assert_eq!(config["layerDigests"], serde_json::json!([layer]));
    let policy_digest = manifest["layers"][1]["digest"].as_str().expect("digest");
    let policy = run(Command::new(python())
        .args([
            "-c",
            "import sys, yaml, json; print(json.dumps(yaml.safe_load(sys.argv[1])))",
        ])
        .arg(String::from_utf8(layout.blobs[policy_digest].clone()).expect("utf-8")));
    let policy: serde_json::Value = serde_json::from_slice(&policy.stdout).expect("policy");
    assert_eq!(policy["version"], "1.0");
    assert_eq!(
        policy["permissions"],
        serde_json::json!({"storage": {"allow": [{"uri": "fs:///workspace", "access": ["read", "write"]}]}}),
        "the policy grants the one directory and nothing else"
    );

    // A second build of the same tree, into another folder: the same bytes.
    let again = tempfile::tempdir().expect("tempdir");
    let second = build(&again.path().join("dist")).expect("second dist");
    assert_eq!(second, dist, "two builds of one tree differ");
}

#[test]
fn a_dist_refuses_a_folder_holding_other_files_and_replaces_its_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    fs::create_dir(&out).expect("mkdir");
    fs::write(out.join("notes.txt"), "mine").expect("write");
    let error = build(&out).expect_err("a folder with a stranger's file");
    let said = format!("{error:#}");
    assert!(
        said.contains("notes.txt") && said.contains("Nothing was built"),
        "{said}"
    );
    assert_eq!(
        fs::read_to_string(out.join("notes.txt")).expect("kept"),
        "mine"
    );
    assert_eq!(fs::read_dir(&out).expect("list").count(), 1);
    assert_eq!(
        fs::read_dir(dir.path()).expect("list").count(),
        1,
        "no staging left"
    );

    // An earlier dist is replaced whole; one with a stranger inside is not.
    let earlier = dir.path().join("earlier");
    copy(built(), &earlier);
    fs::write(earlier.join("server.json"), "stale").expect("write");
    // A build that fails leaves the earlier dist as it was, and no folder
    // of its own behind.
    let failing = Options {
        binary: PathBuf::from("/bin/false"),
        ..options(&earlier)
    };
    build_with(&failing).expect_err("no component from /bin/false");
    assert_eq!(
        fs::read_to_string(earlier.join("server.json")).expect("kept"),
        "stale"
    );
    assert_eq!(
        fs::read_dir(dir.path()).expect("list").count(),
        2,
        "no staging left"
    );
    let dist = build(&earlier).expect("replaces an earlier dist");
    assert_eq!(
        sha256(&fs::read(earlier.join("server.json")).expect("read")),
        dist.get("server-json").expect("entry").sha256
    );
    fs::write(earlier.join("keep.me"), "x").expect("write");
    let said = format!("{:#}", build(&earlier).expect_err("a stranger in a dist"));
    assert!(said.contains("keep.me"), "{said}");
    assert!(earlier.join("dist.json").is_file() && earlier.join("keep.me").is_file());
    fs::remove_file(earlier.join("keep.me")).expect("remove");
    // A stranger deeper down is one too.
    fs::write(earlier.join("oci/mine.txt"), "x").expect("write");
    let said = format!(
        "{:#}",
        build(&earlier).expect_err("a stranger in the layout")
    );
    assert!(said.contains("oci/mine.txt"), "{said}");
    assert_eq!(
        fs::read_to_string(earlier.join("oci/mine.txt")).expect("kept"),
        "x"
    );
}

fn copy(from: &Path, to: &Path) {
    run(Command::new("cp").arg("-R").arg(from).arg(to));
}

#[test]
fn server_json_is_valid_against_the_registrys_schema() {
    let schema = workspace().join("xtask/schemas/server.schema.json");
    let script = r#"
import json, sys
from jsonschema import Draft7Validator, FormatChecker
schema = json.load(open(sys.argv[1]))
entry = json.load(open(sys.argv[2]))
Draft7Validator.check_schema(schema)
errors = sorted(Draft7Validator(schema, format_checker=FormatChecker()).iter_errors(entry), key=str)
for e in errors:
    print(list(e.absolute_path), e.message)
sys.exit(1 if errors else 0)
"#;
    let server = built().join("server.json");
    run(Command::new(python())
        .args(["-c", script])
        .arg(&schema)
        .arg(&server));
    let entry: serde_json::Value =
        serde_json::from_slice(&fs::read(&server).expect("read")).expect("JSON");
    assert_eq!(entry["$schema"], xtask_schema_id(&schema));
    let mcpb = &entry["packages"][0];
    assert_eq!(mcpb["registryType"], "mcpb");
    assert_eq!(
        mcpb["fileSha256"],
        listed().get("mcpb").expect("mcpb").sha256
    );
    assert_eq!(entry["packages"][1]["registryType"], "oci");
    assert_eq!(entry["remotes"][0]["url"], "http://{sidecar}/mcp");
    assert_eq!(entry["remotes"][0]["type"], "streamable-http");
    // An entry the schema refuses is refused: the check can fail.
    let bad = tempfile::NamedTempFile::new().expect("temp");
    fs::write(
        bad.path(),
        r#"{"name": "no slash", "description": "", "version": "1"}"#,
    )
    .expect("write");
    let refused = Command::new(python())
        .args(["-c", script])
        .arg(&schema)
        .arg(bad.path())
        .output()
        .expect("python");
    assert!(!refused.status.success());
}

fn xtask_schema_id(schema: &Path) -> serde_json::Value {
    let schema: serde_json::Value =
        serde_json::from_slice(&fs::read(schema).expect("schema")).expect("JSON");
    schema["$id"].clone()
}

/// `@anthropic-ai/mcpb`, the official CLI, installed once.
fn mcpb_cli() -> PathBuf {
    let dir = peers_dir().join("mcpb");
    let pinned = "@anthropic-ai/mcpb@2.1.2";
    installed(&dir, pinned, |dir| {
        run(Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                pinned,
            ])
            .current_dir(dir));
    });
    dir.join("node_modules/.bin/mcpb")
}

#[test]
fn the_bundle_validates_unpacks_and_serves_mcp_from_where_it_was_unpacked() {
    let cli = mcpb_cli();
    let bundle = built().join(&listed().get("mcpb").expect("mcpb").file);
    let scratch = tempfile::tempdir().expect("tempdir");
    let unpacked = scratch.path().join("unpacked");
    run(Command::new(&cli).arg("unpack").arg(&bundle).arg(&unpacked));
    let validated = run(Command::new(&cli)
        .arg("validate")
        .arg(unpacked.join("manifest.json")));
    assert!(
        String::from_utf8_lossy(&validated.stdout).contains("Manifest schema validation passes"),
        "{}",
        String::from_utf8_lossy(&validated.stdout)
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(unpacked.join("manifest.json")).expect("manifest"))
            .expect("JSON");
    assert_eq!(manifest["manifest_version"], "0.4");
    assert_eq!(manifest["server"]["type"], "binary");
    assert_eq!(manifest["user_config"]["project_root"]["type"], "directory");

    // Run as a client runs it: the manifest's command and arguments, with
    // `${__dirname}` the unpacked folder and the user's directory filled in.
    let root = scratch.path().join("project");
    fs::create_dir(&root).expect("root");
    let command = manifest["server"]["mcp_config"]["command"]
        .as_str()
        .expect("command")
        .replace("${__dirname}", unpacked.to_str().expect("utf-8"));
    let args: Vec<String> = manifest["server"]["mcp_config"]["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| {
            a.as_str()
                .expect("string")
                .replace("${user_config.project_root}", root.to_str().expect("utf-8"))
        })
        .collect();
    let listed_tools: Vec<&str> = manifest["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    let client = workspace().join("host/tests/peers/dist_mcpb_client.py");
    let output = run(Command::new(python())
        .arg(client)
        .arg(&command)
        .args(&args)
        .env("WRITE_TOOL_JOURNAL_DIR", scratch.path().join("journals")));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let served = stdout
        .lines()
        .find_map(|l| l.strip_prefix("tools: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(
        served.split(' ').collect::<Vec<_>>(),
        listed_tools,
        "{stdout}"
    );
    assert_eq!(
        fs::read_to_string(root.join("notes.md")).expect("written"),
        "# Notes\nedited\n"
    );
}

#[test]
fn the_wheel_installs_into_a_fresh_virtualenv_and_its_tests_pass_there() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let venv = scratch.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    let wheel = built().join(&listed().get("wheel").expect("wheel").file);
    run(Command::new(venv.join("bin/python"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg(&wheel)
        .arg("pytest==9.2.0"));
    // The tests run from a folder of their own, so that nothing but the
    // installed package can be imported.
    let tests = scratch.path().join("tests");
    copy(&workspace().join("packages/python/tests"), &tests);
    let output = run(Command::new(venv.join("bin/python"))
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(&tests)
        .current_dir(scratch.path())
        .env("WRITETOOL_CLI", bin_str())
        // A host's setting in the process's environment: the package must
        // not hand it to the component (its tests write).
        .env("WRITE_TOOL_READ_ONLY", "1")
        .env_remove("PYTHONPATH"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        !stdout.contains("skipped") && stdout.contains(" passed"),
        "{stdout}"
    );

    // The package's README, run as written in the same environment.
    let (root, journal) = readme_dirs(scratch.path());
    let block = readme_block("packages/python/README.md", "python", &root, &journal);
    let output = run(Command::new(venv.join("bin/python"))
        .args(["-c", &block])
        .current_dir(scratch.path()));
    assert_readme_ran(&String::from_utf8_lossy(&output.stdout), &root);
}

/// A root and a journal for a README's `/path/to/project` and
/// `/path/to/journal`.
fn readme_dirs(scratch: &Path) -> (PathBuf, PathBuf) {
    let root = scratch.join("project");
    fs::create_dir(&root).expect("root");
    (root, scratch.join("journal"))
}

/// The one `lang` block of the README at `readme`, its paths filled in.
fn readme_block(readme: &str, lang: &str, root: &Path, journal: &Path) -> String {
    let blocks = crate::readme::blocks(&workspace().join(readme));
    let [block] = &blocks[..] else {
        panic!("{readme}: one block, not {}", blocks.len())
    };
    assert_eq!(block.lang, lang, "{readme}");
    block
        .text
        .replace("/path/to/project", root.to_str().expect("utf-8"))
        .replace("/path/to/journal", journal.to_str().expect("utf-8"))
}

/// What the packages' README blocks do: a write, an edit and its revert.
fn assert_readme_ran(stdout: &str, root: &Path) {
    assert!(stdout.contains("success Created 'hello.txt'"), "{stdout}");
    assert!(stdout.contains("     1\thello"), "the view: {stdout}");
    assert_eq!(
        fs::read_to_string(root.join("hello.txt")).expect("read"),
        "hi\n",
        "the edit taken back"
    );
}

#[test]
fn the_npm_package_installs_into_a_fresh_folder_and_its_tests_pass_there() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let app = scratch.path().join("app");
    fs::create_dir(&app).expect("app");
    fs::write(
        app.join("package.json"),
        r#"{"name": "app", "private": true, "type": "module"}"#,
    )
    .expect("package.json");
    let tarball = built().join(&listed().get("npm").expect("npm").file);
    run(Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .arg(&tarball)
        .current_dir(&app));
    copy(&workspace().join("packages/node/test"), &app.join("test"));
    let output = run(Command::new("node")
        .args(["--test", "test/"])
        .current_dir(&app)
        .env("WRITETOOL_CLI", bin_str())
        .env("WRITE_TOOL_READ_ONLY", "1"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("# fail 0") && !stdout.contains("# pass 0"),
        "{stdout}"
    );

    let (root, journal) = readme_dirs(scratch.path());
    let block = readme_block("packages/node/README.md", "js", &root, &journal);
    fs::write(app.join("readme.mjs"), block).expect("write");
    let output = run(Command::new("node").arg("readme.mjs").current_dir(&app));
    assert_readme_ran(&String::from_utf8_lossy(&output.stdout), &root);
}

/// A CNCF distribution registry on a free loopback port, its storage in a
/// folder of the test's, stopped when dropped.
struct Registry {
    child: Child,
    addr: String,
    storage: tempfile::TempDir,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const REGISTRY: &str = "/usr/bin/docker-registry";

impl Registry {
    /// `None` (said on stderr) where Debian's `docker-registry` is not
    /// installed; CI installs it (`.ci/run`), so there it must be.
    fn start() -> Option<Registry> {
        if !Path::new(REGISTRY).exists() {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI installs {REGISTRY} (.ci/run)"
            );
            eprintln!("SKIPPED: {REGISTRY} is not installed (apt-get install docker-registry)");
            return None;
        }
        let storage = tempfile::tempdir().expect("tempdir");
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let addr = format!("127.0.0.1:{port}");
        let config = storage.path().join("config.yml");
        fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  \
                 delete:\n    enabled: true\nhttp:\n  addr: {addr}\n",
                storage.path().join("data").display()
            ),
        )
        .expect("config");
        let child = Command::new(REGISTRY)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the registry");
        let registry = Registry {
            child,
            addr,
            storage,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(&registry.addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "the registry did not listen within 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(registry)
    }

    /// Where the registry keeps the blob `digest`.
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = &digest[7..];
        self.storage
            .path()
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

/// A fresh ECDSA P-256 key pair, made by openssl: the private key's and
/// the public key's paths.
fn key_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let private = dir.join(format!("{name}.key"));
    let public = dir.join(format!("{name}.pub"));
    run(Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
        ])
        .arg(&private));
    run(Command::new("openssl")
        .args(["pkey", "-pubout", "-in"])
        .arg(&private)
        .arg("-out")
        .arg(&public));
    (private, public)
}

fn text(path: &Path) -> String {
    fs::read_to_string(path).expect("read")
}

/// A registry holding the dist's artifact at `write-tool/TAG`, pushed and
/// signed with a fresh key pair kept in `keys`.
struct Signed {
    registry: Registry,
    keys: tempfile::TempDir,
    private: PathBuf,
    public: PathBuf,
    published: xtask::registry::Published,
}

impl Signed {
    /// `None` where no registry can be started (`Registry::start`).
    fn push(tag: &str) -> Option<Signed> {
        let registry = Registry::start()?;
        let keys = tempfile::tempdir().expect("tempdir");
        let (private, public) = key_pair(keys.path(), "ours");
        let to = format!("{}/write-tool/{tag}", registry.addr);
        let published =
            xtask::registry::push(&built().join("oci"), &to, Some(&text(&private))).expect("push");
        Some(Signed {
            registry,
            keys,
            private,
            public,
            published,
        })
    }
}

/// Why `verify` refuses `at` with the public key at `key`.
fn refused(at: &str, key: &Path) -> String {
    format!(
        "{:#}",
        xtask::registry::verify(at, &text(key)).expect_err("refused")
    )
}

/// The dist's layout with the annotation `org.opencontainers.image.KEY`
/// set to `value` (another manifest of the same blobs), in `DIR/oci`.
fn variant(key: &str, value: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut artifact = xtask::oci::Artifact::read_layout(&built().join("oci")).expect("layout");
    artifact
        .parsed
        .annotations
        .insert(format!("org.opencontainers.image.{key}"), value.into());
    artifact.manifest = serde_json::to_vec(&artifact.parsed).expect("JSON");
    artifact
        .write_layout(&dir.path().join("oci"))
        .expect("write");
    dir
}

#[test]
fn the_artifact_pushes_signed_and_pulls_back_the_same_through_oras() {
    // The keys' folder is held to the end: `..` would drop it at once.
    let Some(Signed {
        registry,
        keys: _keys,
        public,
        published,
        ..
    }) = Signed::push("component:0.1.0")
    else {
        return;
    };
    let to = published.reference.clone();
    let oci = listed();
    let oci = oci.get("oci").expect("oci");
    assert_eq!(Some(&published.digest), oci.manifest_digest.as_ref());
    let tag = published.signature.expect("signed");

    // An independent client: the same manifest digest, the same bytes of
    // every blob, and the signature checked by Python's `cryptography`.
    let out = tempfile::tempdir().expect("tempdir");
    let client = workspace().join("host/tests/peers/dist_oras.py");
    let output = run(Command::new(python())
        .arg(&client)
        .arg(&registry.addr)
        .arg("write-tool/component")
        .arg("0.1.0")
        .arg(&tag)
        .arg(&public)
        .arg(out.path()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("manifest {}", published.digest)),
        "{stdout}"
    );
    assert!(stdout.contains("signature verifies"), "{stdout}");
    let layout = xtask::oci::Artifact::read_layout(&built().join("oci")).expect("layout");
    for (digest, bytes) in &layout.blobs {
        let pulled = fs::read(out.path().join(&digest[7..])).expect("pulled blob");
        assert!(&pulled == bytes, "{digest} pulled back differs");
    }

    let verified = xtask::registry::verify(&format!("oci://{to}"), &text(&public)).expect("verify");
    assert_eq!(verified.component, write_tool::COMPONENT);
    assert_eq!(
        Some(&verified.component_digest),
        oci.component_digest.as_ref()
    );
}

#[test]
fn verify_refuses_another_key_an_unsigned_artifact_a_swapped_manifest_and_an_altered_layer() {
    let Some(Signed {
        registry,
        keys,
        public,
        published,
        ..
    }) = Signed::push("component:signed")
    else {
        return;
    };
    let signed = published.reference.clone();
    let (_, other) = key_pair(keys.path(), "theirs");

    let said = refused(&signed, &other);
    assert!(said.contains("not made with this key"), "{said}");
    // A digest pinned in the reference is the one the manifest must have.
    let pinned = format!(
        "{}/write-tool/component@sha256:{}",
        registry.addr,
        "0".repeat(64)
    );
    let said = refused(&pinned, &public);
    assert!(
        said.contains("no manifest") || said.contains("hashes to"),
        "{said}"
    );

    let unsigned = format!("{}/write-tool/other:unsigned", registry.addr);
    xtask::registry::push(&built().join("oci"), &unsigned, None).expect("push");
    let said = refused(&unsigned, &public);
    assert!(said.contains("not signed"), "{said}");

    // Another manifest under the signed tag, with the signature copied to
    // where a verifier of the new digest looks: the payload names the old.
    let swapped = variant("description", "swapped");
    let layout = swapped.path().join("oci");
    let swapped_ref = format!("{}/write-tool/component:swapped", registry.addr);
    let pushed = xtask::registry::push(&layout, &swapped_ref, None).expect("push");
    copy_signature(&registry, &published.digest, &pushed.digest);
    let said = refused(&swapped_ref, &public);
    assert!(said.contains("manifest was swapped"), "{said}");

    // A layer altered in the registry's storage, its size kept.
    let component = listed()
        .get("oci")
        .expect("oci")
        .component_digest
        .clone()
        .expect("digest");
    let file = registry.blob_file(&component);
    let mut bytes = fs::read(&file).expect("stored layer");
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs::write(&file, bytes).expect("alter");
    let said = refused(&signed, &public);
    assert!(said.contains("altered"), "{said}");
}

#[test]
fn verify_refuses_a_signature_for_another_repository_and_an_older_release_under_a_newer_tag() {
    let Some(Signed {
        registry,
        keys: _keys,
        private,
        public,
        published,
    }) = Signed::push("component:signed")
    else {
        return;
    };

    // A signature made for another repository, copied beside this one.
    let elsewhere = format!("{}/write-tool/elsewhere:signed", registry.addr);
    xtask::registry::push(&built().join("oci"), &elsewhere, Some(&text(&private))).expect("push");
    let here = format!("{}/write-tool/here:signed", registry.addr);
    xtask::registry::push(&built().join("oci"), &here, None).expect("push");
    copy_signature_between(
        &registry,
        "write-tool/elsewhere",
        "write-tool/here",
        &published.digest,
    );
    let said = refused(&here, &public);
    assert!(
        said.contains("made for") && said.contains("write-tool/elsewhere"),
        "{said}"
    );

    // An older release, signed in its day, put under a newer version's tag.
    let older = variant("version", "0.0.9");
    let old_tag = format!("{}/write-tool/component:0.0.9", registry.addr);
    let old = xtask::registry::push(&older.path().join("oci"), &old_tag, Some(&text(&private)))
        .expect("push");
    xtask::registry::verify(&old_tag, &text(&public)).expect("the old release under its own tag");
    retag(&registry, "write-tool/component", &old.digest, "9.9.9");
    let said = refused(
        &format!("{}/write-tool/component:9.9.9", registry.addr),
        &public,
    );
    assert!(said.contains("of version 0.0.9"), "{said}");
}

/// Copy the signature of `digest` in `from` (manifest and blobs) to the
/// same tag in `to`, as one who can push to `to` would.
fn copy_signature_between(registry: &Registry, from: &str, to: &str, digest: &str) {
    let script = r#"
import json, sys, urllib.request
addr, src, dst, tag = sys.argv[1:5]
accept = "application/vnd.oci.image.manifest.v1+json"
get = lambda url, h={}: urllib.request.urlopen(urllib.request.Request(url, headers=h)).read()
body = get(f"http://{addr}/v2/{src}/manifests/{tag}", {"Accept": accept})
manifest = json.loads(body)
for d in [manifest["config"], *manifest["layers"]]:
    blob = get(f"http://{addr}/v2/{src}/blobs/{d['digest']}")
    start = urllib.request.Request(f"http://{addr}/v2/{dst}/blobs/uploads/", method="POST", data=b"")
    location = urllib.request.urlopen(start).headers["Location"]
    sep = "&" if "?" in location else "?"
    url = location if location.startswith("http") else f"http://{addr}{location}"
    urllib.request.urlopen(urllib.request.Request(f"{url}{sep}digest={d['digest']}", data=blob, method="PUT",
                           headers={"Content-Type": "application/octet-stream"})).read()
urllib.request.urlopen(urllib.request.Request(f"http://{addr}/v2/{dst}/manifests/{tag}", data=body, method="PUT",
                       headers={"Content-Type": accept})).read()
"#;
    run(Command::new(python())
        .args(["-c", script])
        .arg(&registry.addr)
        .arg(from)
        .arg(to)
        .arg(xtask::sign::signature_tag(digest)));
}

/// Put the manifest `digest` of `repo` under `tag` too.
fn retag(registry: &Registry, repo: &str, digest: &str, tag: &str) {
    let script = r#"
import sys, urllib.request
addr, repo, digest, tag = sys.argv[1:5]
accept = "application/vnd.oci.image.manifest.v1+json"
body = urllib.request.urlopen(urllib.request.Request(f"http://{addr}/v2/{repo}/manifests/{digest}",
                              headers={"Accept": accept})).read()
urllib.request.urlopen(urllib.request.Request(f"http://{addr}/v2/{repo}/manifests/{tag}", data=body,
                       method="PUT", headers={"Content-Type": accept})).read()
"#;
    run(Command::new(python())
        .args(["-c", script])
        .arg(&registry.addr)
        .arg(repo)
        .arg(digest)
        .arg(tag));
}

/// Put the signature manifest of `from` at the tag a verifier of `to`
/// looks for, as an attacker who swaps the manifest would.
fn copy_signature(registry: &Registry, from: &str, to: &str) {
    let script = r#"
import sys, urllib.request
addr, repo, src, dst = sys.argv[1:5]
accept = "application/vnd.oci.image.manifest.v1+json"
req = urllib.request.Request(f"http://{addr}/v2/{repo}/manifests/{src}", headers={"Accept": accept})
body = urllib.request.urlopen(req).read()
put = urllib.request.Request(f"http://{addr}/v2/{repo}/manifests/{dst}", data=body, method="PUT",
                             headers={"Content-Type": accept})
urllib.request.urlopen(put).read()
"#;
    run(Command::new(python())
        .args(["-c", script])
        .arg(&registry.addr)
        .arg("write-tool/component")
        .arg(xtask::sign::signature_tag(from))
        .arg(xtask::sign::signature_tag(to)));
}

#[test]
fn a_push_to_a_registry_that_is_down_says_so_and_publishes_nothing() {
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let to = format!("127.0.0.1:{port}/write-tool/component:0.1.0");
    let said = format!(
        "{:#}",
        xtask::registry::push(&built().join("oci"), &to, None).expect_err("nothing listens")
    );
    assert!(said.contains("refused or did not answer"), "{said}");
    // A key that is not one is refused before the registry is spoken to.
    let said = format!(
        "{:#}",
        xtask::registry::push(&built().join("oci"), &to, Some("not a key")).expect_err("no key")
    );
    assert!(said.contains("not a PEM PKCS #8"), "{said}");
    // Plain HTTP is for loopback only: anywhere else TLS or nothing.
    assert!(!xtask::registry::is_loopback(
        "registry.example.invalid:5000"
    ));
}
