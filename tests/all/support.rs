//! Fixtures: a temp project with an outside world around it, the shared
//! tool, and envelope mirror types that reject unknown fields.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::SystemTime;

use serde::Deserialize;
use serde_json::Value;
use write_tool::{CompileCache, Options, Root, WriteTool, ambient_authority};

/// Default options, with the compile cache in the build's temp directory
/// rather than the user's.
pub fn options() -> Options {
    Options {
        cache: CompileCache::Dir(Path::new(env!("CARGO_TARGET_TMPDIR")).join("write-tool-cache")),
        ..Options::default()
    }
}

/// One tool for the whole test binary: compiling the component is the
/// expensive part, and calls are independent anyway.
pub fn tool() -> &'static WriteTool {
    static TOOL: OnceLock<WriteTool> = OnceLock::new();
    TOOL.get_or_init(|| WriteTool::new(options()).expect("component compiles"))
}

/// A project root inside a temp directory, with an `outside/` directory and
/// a canary file beside it, so that escapes have something to hit.
pub struct Project {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: Root,
}

impl Project {
    pub fn new() -> Project {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().to_path_buf();
        fs::create_dir(base.join("root")).expect("root");
        fs::create_dir(base.join("outside")).expect("outside");
        fs::write(base.join("outside/secret.txt"), "outside secret\n").expect("canary");
        fs::write(base.join("canary.txt"), "canary\n").expect("canary");
        let root = Root::open(base.join("root"), ambient_authority()).expect("open root");
        Project {
            _dir: dir,
            base,
            root,
        }
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    /// Host path of something in the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.base.join("root").join(rel)
    }

    /// Host path of something beside the root (the parent temp dir).
    pub fn base(&self) -> &Path {
        &self.base
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("mkdir");
        }
        fs::write(path, content).expect("write fixture");
    }

    pub fn mkdir(&self, rel: &str) {
        fs::create_dir_all(self.path(rel)).expect("mkdir");
    }

    pub fn symlink(&self, target: &str, rel: &str) {
        std::os::unix::fs::symlink(target, self.path(rel)).expect("symlink");
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.path(rel)).expect("read")
    }

    pub fn read_string(&self, rel: &str) -> String {
        String::from_utf8(self.read(rel)).expect("utf-8")
    }

    /// Permission bits of something in the root.
    pub fn mode(&self, rel: &str) -> u32 {
        fs::metadata(self.path(rel))
            .expect("stat")
            .permissions()
            .mode()
            & 0o7777
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).symlink_metadata().is_ok()
    }

    /// `call` with a JSON value, decoded.
    pub fn call(&self, arguments: Value) -> Envelope {
        self.call_raw(&arguments.to_string())
    }

    /// `call` with raw text, decoded and checked for shape.
    pub fn call_raw(&self, arguments: &str) -> Envelope {
        decode(&tool().call(&self.root, arguments))
    }

    /// Write `content` to `path`.
    pub fn put(&self, path: &str, content: &str) -> Envelope {
        self.call(serde_json::json!({ "path": path, "content": content }))
    }

    /// Everything under the temp dir (root and outside), for comparing
    /// before and after a call.
    pub fn tree(&self) -> Tree {
        Tree::of(&self.base)
    }
}

/// A snapshot of a directory tree: per entry its kind, bytes, mode, mtime,
/// inode and link target. Symlinks are recorded, not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree(BTreeMap<PathBuf, Entry>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    kind: &'static str,
    bytes: Option<Vec<u8>>,
    link: Option<PathBuf>,
    mode: u32,
    mtime: Option<SystemTime>,
    ino: u64,
}

impl Tree {
    pub fn of(dir: &Path) -> Tree {
        let mut entries = BTreeMap::new();
        walk(dir, dir, &mut entries);
        Tree(entries)
    }

    /// The same snapshot without the entries below `prefix` (relative to
    /// the snapshot's base), for comparing what lies outside the root.
    pub fn without(&self, prefix: &str) -> Tree {
        Tree(
            self.0
                .iter()
                .filter(|(p, _)| !p.starts_with(prefix))
                .map(|(p, e)| (p.clone(), e.clone()))
                .collect(),
        )
    }

    /// Names of temp files the tool may have left.
    pub fn temp_files(&self) -> Vec<&PathBuf> {
        self.0
            .keys()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(".wt-"))
            })
            .collect()
    }
}

fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Entry>) {
    let mut children: Vec<_> = fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .collect();
    children.sort();
    for path in children {
        let meta = fs::symlink_metadata(&path).expect("lstat");
        let ft = meta.file_type();
        let kind = if ft.is_symlink() {
            "link"
        } else if ft.is_dir() {
            "dir"
        } else if ft.is_file() {
            "file"
        } else {
            "other"
        };
        let entry = Entry {
            kind,
            bytes: ft.is_file().then(|| fs::read(&path).expect("read")),
            link: ft
                .is_symlink()
                .then(|| fs::read_link(&path).expect("readlink")),
            mode: meta.permissions().mode(),
            // A directory's mtime changes when an entry is added or removed,
            // which is exactly what "nothing changed" must rule out.
            mtime: if ft.is_symlink() {
                None
            } else {
                meta.modified().ok()
            },
            ino: meta.ino(),
        };
        out.insert(
            path.strip_prefix(base).expect("prefix").to_path_buf(),
            entry,
        );
        if ft.is_dir() {
            walk(base, &path, out);
        }
    }
}

/// Decode envelope JSON into the mirror types and check the top-level
/// shape: exactly the keys of `docs/contract.md#envelope`, `error` only on
/// error.
pub fn decode(json: &str) -> Envelope {
    let value: Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("envelope is not JSON ({e}): {json}"));
    let keys: Vec<&str> = value
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    let envelope: Envelope = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("envelope shape ({e}): {json}"));
    if envelope.status == "error" {
        assert_eq!(
            keys,
            ["status", "data", "text", "stats", "context", "error"],
            "{json}"
        );
        assert!(value["data"].is_null());
        let error = envelope.error.as_ref().expect("error body");
        assert_eq!(envelope.text, error.message, "text equals the message");
        assert_eq!(
            value["stats"].as_object().map(|o| o.len()),
            Some(1),
            "error stats hold only time_ms"
        );
    } else {
        assert_eq!(
            keys,
            ["status", "data", "text", "stats", "context"],
            "{json}"
        );
        assert!(envelope.data.is_some(), "{json}");
        assert!(envelope.stats.bytes_written.is_some(), "{json}");
        assert!(
            matches!(envelope.status.as_str(), "success" | "partial"),
            "{json}"
        );
    }
    assert_eq!(envelope.context.cwd, ".");
    assert!(envelope.context.params_input.is_object(), "{json}");
    assert!(envelope.stats.time_ms < 600_000, "{json}");
    envelope
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    pub status: String,
    pub data: Option<Data>,
    pub text: String,
    pub stats: Stats,
    pub context: Context,
    #[serde(default)]
    pub error: Option<ErrorBody>,
}

impl Envelope {
    pub fn code(&self) -> Option<&str> {
        self.error.as_ref().map(|e| e.code.as_str())
    }

    pub fn data(&self) -> &Data {
        self.data.as_ref().expect("data")
    }

    pub fn preview(&self) -> &str {
        &self.data().diff_preview
    }

    /// Panics with the envelope unless it is an error with `code`.
    #[track_caller]
    pub fn assert_error(&self, code: &str) -> &Self {
        assert_eq!(self.code(), Some(code), "{self:#?}");
        self
    }

    #[track_caller]
    pub fn assert_status(&self, status: &str) -> &Self {
        assert_eq!(self.status, status, "{self:#?}");
        self
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Data {
    pub applied: bool,
    pub operation: String,
    pub diff_preview: String,
    pub diff_truncated: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stats {
    pub time_ms: u64,
    pub bytes_written: Option<u64>,
    pub original_size: Option<u64>,
    pub new_size: Option<u64>,
    pub lines_added: Option<u64>,
    pub lines_removed: Option<u64>,
}

impl Stats {
    /// `(bytes_written, original_size, new_size, lines_added, lines_removed)`
    /// of a non-error envelope.
    #[track_caller]
    pub fn numbers(&self) -> (u64, u64, u64, u64, u64) {
        let get = |v: Option<u64>| v.expect("stats of a non-error envelope");
        (
            get(self.bytes_written),
            get(self.original_size),
            get(self.new_size),
            get(self.lines_added),
            get(self.lines_removed),
        )
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Context {
    pub cwd: String,
    pub params_input: Value,
    pub path_resolved: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
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
    let mut child = std::process::Command::new("patch")
        .args(["-p1", "--quiet", "--batch", "--no-backup-if-mismatch"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("patch is installed");
    use std::io::Write;
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

/// Temp files planted by [`plant_temps`].
pub struct Temps {
    /// Of the tool's pattern, last modified an hour ago: what a killed
    /// writer leaves.
    pub stale: PathBuf,
    /// Of the tool's pattern, dated a minute ahead: a live writer's, fresh
    /// however long the test takes to reach its write.
    pub fresh: PathBuf,
    /// An hour old, but not of the tool's pattern.
    pub lookalike: PathBuf,
}

/// Plant [`Temps`] in `dir`.
pub fn plant_temps(dir: &Path) -> Temps {
    let temps = Temps {
        stale: dir.join(".wt-0123456789abcdef.tmp"),
        fresh: dir.join(".wt-fedcba9876543210.tmp"),
        lookalike: dir.join(".wt-not-the-pattern.tmp"),
    };
    let (now, hour) = (SystemTime::now(), std::time::Duration::from_secs(3600));
    for (path, time) in [
        (&temps.stale, now - hour),
        (&temps.fresh, now + hour / 60),
        (&temps.lookalike, now - hour),
    ] {
        fs::write(path, "partial").expect("plant");
        fs::File::options()
            .write(true)
            .open(path)
            .expect("open")
            .set_modified(time)
            .expect("age");
    }
    temps
}
