//! Fixtures of this suite: a temp project with an outside world around
//! it, and the shared tool. What every suite shares (tree snapshots, temp
//! files, the envelope mirror types) comes from `write-tool-test-support`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;
use write_tool::{CompileCache, Options, ProjectPreopen, Root, WriteTool, ambient_authority};
pub use write_tool_test_support::process::apply_with_patch_tool;
pub use write_tool_test_support::{
    Envelope, Temps, Tree, decode, is_tool_temp, plant_temps, temp_files,
};

/// Default options, with the compile cache in the build's scratch space
/// rather than the user's.
/// The suite checks every field of the envelope, so its tool answers in
/// the full form; `compact.rs` checks the compact form, the default.
pub fn options() -> Options {
    Options {
        cache: CompileCache::Dir(write_tool_test_support::cache_dir()),
        envelope: Some(write_tool::wire::Form::Full),
        ..Options::default()
    }
}

/// One tool for the whole test binary: compiling the component is the
/// expensive part, and calls are independent anyway.
pub fn tool() -> &'static WriteTool {
    static TOOL: OnceLock<WriteTool> = OnceLock::new();
    TOOL.get_or_init(|| WriteTool::new(options()).expect("component compiles"))
}

/// The tool of a host that lets patches delete and move
/// (`--allow-delete`), one for the whole test binary as [`tool`] is.
pub fn deleting() -> &'static WriteTool {
    static TOOL: OnceLock<WriteTool> = OnceLock::new();
    TOOL.get_or_init(|| {
        WriteTool::new(Options {
            allow_delete: true,
            ..options()
        })
        .expect("component compiles")
    })
}

/// A project root inside a temp directory, with an `outside/` directory and
/// a canary file beside it, so that escapes have something to hit.
pub struct Project {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: Root,
}

/// Whether a project's changes are recorded in a journal. Every test of a
/// guarantee runs both ways: with the journal (the CLI's default, what
/// users run) and without.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Journaling {
    /// Recorded, in a journal beside the root.
    On,
    /// Not recorded.
    Off,
}

/// Both configurations, the default first.
pub const JOURNALING: [Journaling; 2] = [Journaling::On, Journaling::Off];

/// How the project root is preopened, both ways: every suite that guards
/// the sandbox runs under each (`docs/contract.md#several-roots`).
pub const NAMINGS: [ProjectPreopen; 2] = [ProjectPreopen::Dot, ProjectPreopen::HostPath];

impl Project {
    /// A project whose root the guest sees as `.`.
    pub fn new() -> Project {
        Project::named(ProjectPreopen::Dot)
    }

    /// A project whose changes are recorded in a journal beside the root
    /// (`journal/`, outside it).
    pub fn journaled() -> Project {
        Project::journaled_as(ProjectPreopen::Dot)
    }

    /// [`Project::journaled`], its root preopened as `naming` says.
    pub fn journaled_as(naming: ProjectPreopen) -> Project {
        let mut p = Project::named(naming);
        let journal = p.base.join("journal");
        fs::create_dir(&journal).expect("journal");
        fs::set_permissions(&journal, fs::Permissions::from_mode(0o700)).expect("private");
        let root = Root::open_all_as([p.base.join("root")], naming, ambient_authority())
            .expect("open root");
        p.root = root.with_journal(&journal).expect("journal");
        p
    }

    /// A project whose journal is `journal`, a directory of the caller's
    /// (another file system, say: then what a change replaces is copied
    /// into it, not linked).
    pub fn journaled_in(journal: &Path) -> Project {
        fs::set_permissions(journal, fs::Permissions::from_mode(0o700)).expect("private");
        let mut p = Project::new();
        let root = Root::open_all_as(
            [p.base.join("root")],
            ProjectPreopen::Dot,
            ambient_authority(),
        )
        .expect("open root");
        p.root = root.with_journal(journal).expect("journal");
        p
    }

    /// A project as `journaling` says.
    pub fn with(journaling: Journaling) -> Project {
        match journaling {
            Journaling::On => Project::journaled(),
            Journaling::Off => Project::new(),
        }
    }

    /// The journal's directory of [`Project::journaled`].
    pub fn journal(&self) -> PathBuf {
        self.base.join("journal")
    }

    /// The journal's log up to its last newline: its records, without the
    /// room of zeros kept after them (`docs/contract.md#journal`).
    pub fn log_lines(&self) -> String {
        let mut log = fs::read(self.journal().join("log")).unwrap_or_default();
        log.truncate(log.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1));
        String::from_utf8(log).expect("UTF-8 records")
    }

    /// A host command ([`WriteTool::call_as_host`]), decoded as JSON: the
    /// envelope's `text` parsed for the journal's own requests.
    pub fn host(&self, arguments: Value) -> Value {
        let json = tool().call_as_host(&self.root, &arguments.to_string());
        let envelope: Value = serde_json::from_str(&json).expect("envelope");
        assert_eq!(envelope["status"], "success", "{json}");
        serde_json::from_str(envelope["text"].as_str().expect("text")).expect("JSON text")
    }

    /// A project whose root is preopened as `naming` says.
    pub fn named(naming: ProjectPreopen) -> Project {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().to_path_buf();
        fs::create_dir(base.join("root")).expect("root");
        fs::create_dir(base.join("outside")).expect("outside");
        fs::write(base.join("outside/secret.txt"), "outside secret\n").expect("canary");
        fs::write(base.join("canary.txt"), "canary\n").expect("canary");
        let root =
            Root::open_all_as([base.join("root")], naming, ambient_authority()).expect("open root");
        Project {
            _dir: dir,
            base,
            root,
        }
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    /// Host path of the root itself.
    pub fn root_dir(&self) -> PathBuf {
        self.base.join("root")
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

    /// [`Project::tree`] without the versions a view keeps for merges
    /// (`journal/seen`, `docs/contract.md#merge`) and the directories'
    /// times they change: what a look must leave as it was.
    pub fn tree_but_seen(&self) -> Tree {
        self.tree()
            .without("journal/seen")
            .without_directory_times()
    }

    /// [`Project::tree`] without the files' bytes.
    pub fn tree_without_contents(&self) -> Tree {
        Tree::of_metadata(&self.base)
    }
}
