//! One call from request to envelope: validate, resolve, read, diff, write.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::diff::{self, DiffLimits, DiffSummary};
use crate::error::ToolError;
use crate::fs::{self, Durability, Existing, Resolved, TargetKind};
use crate::params::{Request, ToolName};
use crate::path::RelPath;
use crate::protect::Protection;
use crate::roots::{AllowedRoots, Located};
use write_tool_wire::envelope::{
    CWD, Context, Data, Envelope, Operation, Stats, Status, WriteStats,
};

/// Default for [`Config::max_content_bytes`]: 16 MiB.
pub const DEFAULT_MAX_CONTENT_BYTES: u64 = 16 * 1024 * 1024;

/// Host-chosen limits and switches.
#[derive(Debug, Clone)]
pub struct Config {
    /// Largest content accepted, in bytes.
    pub max_content_bytes: u64,
    /// Accept empty content.
    pub allow_empty: bool,
    /// Preview size and diff deadline.
    pub diff: DiffLimits,
    /// Paths the tool refuses to write.
    pub protection: Protection,
    /// The root is read-only: every write that would proceed is refused
    /// with `PERMISSION_DENIED` (dry runs still work).
    pub read_only: bool,
    /// Which syncs a write makes.
    pub durability: Durability,
    /// Before a write, remove the tool's temp files that a killed writer
    /// left in the target's directory ([`fs::write_atomic`]). Default true.
    /// Listing a directory costs time in proportion to its entries, so a
    /// host that makes many writes may sweep only the first write to each
    /// directory (the wasmtime host does).
    pub sweep_temps: bool,
    /// Seed-004 mode: absolute names of the project root and other roots
    /// that `write_file` calls may reach (SPEC §9). Default: none.
    pub roots: AllowedRoots,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_content_bytes: DEFAULT_MAX_CONTENT_BYTES,
            allow_empty: false,
            diff: DiffLimits::default(),
            protection: Protection::default(),
            read_only: false,
            durability: Durability::Full,
            sweep_temps: true,
            roots: AllowedRoots::default(),
        }
    }
}

impl Config {
    /// Set the diff timeout from milliseconds (see [`DiffLimits::time_for`]).
    pub fn with_diff_timeout_ms(mut self, ms: u64) -> Self {
        self.diff.timeout = Duration::from_millis(ms);
        self
    }
}

/// Run raw JSON call input against the directory `root`.
///
/// Takes the input by value and lets it go once it is parsed: with a large
/// content it is the biggest allocation besides the content itself.
pub fn call(root: &Path, input: String, config: &Config) -> Envelope {
    let start = Instant::now();
    let (echo, request) = crate::params::parse_call(&input);
    drop(input);
    match request {
        Ok(request) => run(root, &request, echo, config, start),
        Err(err) => err.into_envelope(elapsed_ms(start), echo, None),
    }
}

/// Run a typed request against the directory `root`.
pub fn write(root: &Path, request: &Request, config: &Config) -> Envelope {
    let start = Instant::now();
    run(root, request, request.echo(), config, start)
}

fn run(root: &Path, request: &Request, echo: Value, config: &Config, start: Instant) -> Envelope {
    let mut resolved_path = None;
    match execute(root, request, config, &mut resolved_path) {
        Ok(done) => done.into_envelope(request, echo, elapsed_ms(start), resolved_path),
        Err(err) if request.tool == ToolName::WriteFile && err == ToolError::outside_root() => {
            // Seed 004's callers match on its wording (SPEC §9).
            let err = ToolError::not_allowed(&request.path);
            err.into_envelope(elapsed_ms(start), echo, resolved_path)
        }
        Err(err) => err.into_envelope(elapsed_ms(start), echo, resolved_path),
    }
}

fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// What a call did, before it is dressed as an envelope.
struct Done {
    operation: Operation,
    applied: bool,
    unchanged: bool,
    diff: DiffSummary,
    original_size: u64,
    bytes_written: u64,
    created_dir: Option<String>,
    old_not_utf8: bool,
    split_links: bool,
}

fn execute(
    root: &Path,
    request: &Request,
    config: &Config,
    resolved_path: &mut Option<String>,
) -> Result<Done, ToolError> {
    let started = SystemTime::now();
    check_content(&request.content, config)?;
    let located = match request.tool {
        ToolName::WriteFile => config.roots.locate_write_file(root, &request.path)?,
        ToolName::Write => Located {
            dir: root,
            prefix: None,
            rel: RelPath::parse(&request.path)?,
        },
    };
    let (root, prefix) = (located.dir, located.prefix);
    let resolved = fs::resolve(root, located.rel)?;
    let display = prefixed(prefix, resolved.display());
    *resolved_path = Some(display.clone());
    config.protection.check(&resolved.names)?;
    let target = fs::join(root, &resolved.names);

    let existing = match resolved.kind {
        TargetKind::Directory => return Err(ToolError::is_directory()),
        TargetKind::Other => return Err(ToolError::not_regular_file()),
        TargetKind::Missing => None,
        TargetKind::File => Some(fs::read_existing(&target).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => ToolError::not_regular_file(),
            _ => ToolError::from_io(&e, "reading the existing file"),
        })?),
    };
    check_lock(request, existing.as_ref())?;
    if config.read_only && !request.dry_run {
        return Err(ToolError::read_only_root());
    }

    let new = request.content.as_bytes();
    let operation = if existing.is_some() {
        Operation::Update
    } else {
        Operation::Create
    };
    let original_size = existing.as_ref().map_or(0, |e| e.bytes.len() as u64);
    let old_bytes = existing.as_ref().map_or(&[][..], |e| &e.bytes[..]);
    let unchanged = existing.is_some() && diff::same_bytes(old_bytes, new);
    // simdutf8 checks 16 bytes at a time with WebAssembly SIMD in the
    // component (std's `from_utf8` a 4-byte word at a time on wasm32, and
    // `from_utf8_lossy` a byte at a time, which a megabyte there feels).
    // Invalid text falls back to std's lossy decoding.
    let old_text = match simdutf8::basic::from_utf8(old_bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(old_bytes),
    };
    let old_not_utf8 = matches!(old_text, std::borrow::Cow::Owned(_));
    let diff = if unchanged {
        DiffSummary::default()
    } else {
        diff::diff(&old_text, &request.content, &display, &config.diff)
    };

    let mut done = Done {
        operation,
        applied: false,
        unchanged,
        diff,
        original_size,
        bytes_written: 0,
        created_dir: None,
        old_not_utf8,
        split_links: existing.as_ref().is_some_and(|e| e.link_count > 1),
    };
    if request.dry_run {
        return Ok(done);
    }
    done.applied = true;
    if unchanged {
        return Ok(done);
    }
    write_target(root, &resolved, &target, new, started, config)?;
    done.bytes_written = new.len() as u64;
    if resolved.creates_dirs() {
        done.created_dir = resolved.parent_display().map(|p| prefixed(prefix, p));
    }
    Ok(done)
}

/// A path below another root is shown under that root's absolute name.
fn prefixed(prefix: Option<&str>, rel: String) -> String {
    match prefix {
        None => rel,
        Some(prefix) => format!("{prefix}/{rel}"),
    }
}

fn check_content(content: &str, config: &Config) -> Result<(), ToolError> {
    if content.is_empty() && !config.allow_empty {
        return Err(ToolError::invalid_param("Content cannot be empty."));
    }
    let len = content.len() as u64;
    if len > config.max_content_bytes {
        return Err(ToolError::invalid_param(format!(
            "Content is {len} bytes, over the limit of {} bytes.",
            config.max_content_bytes
        )));
    }
    Ok(())
}

/// SPEC §3: optimistic-lock parameters, compared with the file on disk.
fn check_lock(request: &Request, existing: Option<&Existing>) -> Result<(), ToolError> {
    let any = request.expected_mtime_ms.is_some()
        || request.expected_size_bytes.is_some()
        || request.expected_sha256.is_some();
    if !any {
        return Ok(());
    }
    let Some(existing) = existing else {
        return Err(ToolError::conflict());
    };
    if let Some(size) = request.expected_size_bytes
        && size != existing.bytes.len() as u64
    {
        return Err(ToolError::conflict());
    }
    if let Some(mtime) = request.expected_mtime_ms
        && Some(mtime) != mtime_ms(existing)
    {
        return Err(ToolError::conflict());
    }
    if let Some(hash) = &request.expected_sha256
        && *hash != sha256_hex(&existing.bytes)
    {
        return Err(ToolError::conflict());
    }
    Ok(())
}

/// The file's mtime in whole milliseconds since the epoch.
fn mtime_ms(existing: &Existing) -> Option<i64> {
    let modified = existing.modified?;
    let ms = match modified.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).ok()?,
        Err(before) => -i64::try_from(before.duration().as_millis()).ok()?,
    };
    Some(ms)
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Create parents and replace the target; on failure remove what was created.
fn write_target(
    root: &Path,
    resolved: &Resolved,
    target: &Path,
    content: &[u8],
    started: SystemTime,
    config: &Config,
) -> Result<(), ToolError> {
    let created = fs::create_parents(root, resolved)
        .map_err(|e| ToolError::from_io(&e, "creating the parent directory"))?;
    // A directory this call created holds no leftovers.
    let new_parent = created.last().map(PathBuf::as_path) == target.parent();
    let swept = (config.sweep_temps && !new_parent).then_some(started);
    if let Err(e) = fs::write_atomic(target, content, swept, config.durability) {
        fs::remove_dirs(&created);
        return Err(ToolError::from_io(&e, "writing to file"));
    }
    Ok(())
}

impl Done {
    fn into_envelope(
        self,
        request: &Request,
        echo: Value,
        time_ms: u64,
        path_resolved: Option<String>,
    ) -> Envelope {
        let status = if request.dry_run || self.diff.truncated {
            Status::Partial
        } else {
            Status::Success
        };
        let new_size = if self.applied {
            request.content.len() as u64
        } else {
            self.original_size
        };
        let text = self.text(request);
        Envelope {
            status,
            data: Some(Data {
                applied: self.applied,
                operation: self.operation,
                diff_preview: self.diff.preview,
                diff_truncated: self.diff.truncated,
            }),
            text,
            stats: Stats {
                time_ms,
                write: Some(WriteStats {
                    bytes_written: self.bytes_written,
                    original_size: self.original_size,
                    new_size,
                    lines_added: self.diff.lines_added,
                    lines_removed: self.diff.lines_removed,
                }),
            },
            context: Context {
                cwd: CWD.to_owned(),
                params_input: echo,
                path_resolved,
            },
            error: None,
        }
    }

    /// SPEC §7.
    fn text(&self, request: &Request) -> String {
        let path = &request.path;
        let (added, removed) = (self.diff.lines_added, self.diff.lines_removed);
        let bytes = request.content.len();
        if request.tool == ToolName::WriteFile && !request.dry_run {
            // Seed 004's confirmation, exactly: its callers match on it.
            return format!("Successfully wrote to {path}");
        }
        let mut text = if request.dry_run {
            match self.operation {
                Operation::Create => format!("[Dry Run] Would create '{path}' (+{added} lines)."),
                Operation::Update => {
                    format!("[Dry Run] Would update '{path}' (+{added}/-{removed} lines).")
                }
            }
        } else if self.unchanged {
            format!("No changes to '{path}' (content identical).")
        } else {
            match self.operation {
                Operation::Create => {
                    let lines = diff::count_lines(&request.content);
                    format!(
                        "Created '{path}' ({lines} {}, {bytes} {}).",
                        plural(lines, "line", "lines"),
                        plural(bytes as u64, "byte", "bytes")
                    )
                }
                Operation::Update => {
                    format!("Updated '{path}' (+{added}/-{removed} lines, {bytes} bytes).")
                }
            }
        };
        if let Some(dir) = &self.created_dir {
            text.push_str(&format!("\n(Created directory: {dir}/)"));
        }
        if self.split_links && self.applied && !self.unchanged {
            text.push_str("\n(The file had other hard links; they keep the old content.)");
        }
        if self.old_not_utf8 {
            text.push_str("\n(The existing file was not valid UTF-8; the diff shows it with U+FFFD replacement characters.)");
        }
        if self.diff.truncated {
            text.push_str("\n(Diff preview truncated. Use Read to verify full content.)");
        }
        text
    }
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn run_json(root: &Path, input: Value) -> Envelope {
        call(root, input.to_string(), &Config::default())
    }

    #[test]
    fn create_then_update_then_identical() {
        let dir = tempfile::tempdir().unwrap();
        let env = run_json(
            dir.path(),
            serde_json::json!({"path": "src/a.txt", "content": "one\n"}),
        );
        assert_eq!(env.status, Status::Success);
        assert_eq!(
            env.text,
            "Created 'src/a.txt' (1 line, 4 bytes).\n(Created directory: src/)"
        );
        let env = run_json(
            dir.path(),
            serde_json::json!({"path": "src/a.txt", "content": "one\ntwo\n"}),
        );
        assert_eq!(env.text, "Updated 'src/a.txt' (+1/-0 lines, 8 bytes).");
        let env = run_json(
            dir.path(),
            serde_json::json!({"path": "src/a.txt", "content": "one\ntwo\n"}),
        );
        assert_eq!(env.text, "No changes to 'src/a.txt' (content identical).");
        assert_eq!(env.stats.write.map(|w| w.bytes_written), Some(0));
    }

    #[test]
    fn conflict_when_the_lock_does_not_match() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "abc").unwrap();
        let env = run_json(
            dir.path(),
            serde_json::json!({"path": "f", "content": "x", "expected_size_bytes": 2}),
        );
        assert_eq!(env.error.map(|e| e.code), Some(ErrorCode::Conflict));
        let hash = sha256_hex(b"abc");
        let env = run_json(
            dir.path(),
            serde_json::json!({"path": "f", "content": "x", "expected_sha256": hash}),
        );
        assert_eq!(env.status, Status::Success);
        let env = run_json(
            dir.path(),
            serde_json::json!({"path": "g", "content": "x", "expected_size_bytes": 0}),
        );
        assert_eq!(env.error.map(|e| e.code), Some(ErrorCode::Conflict));
    }

    #[test]
    fn write_file_reaches_every_allowed_root_and_nothing_else() {
        use crate::roots::AllowedRoot;
        let dir = tempfile::tempdir().unwrap();
        let (project, other) = (dir.path().join("p"), dir.path().join("o"));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let config = Config {
            roots: AllowedRoots {
                project: vec!["/virt/p".into()],
                others: vec![AllowedRoot {
                    dir: other.clone(),
                    names: vec!["/virt/o".into()],
                }],
            },
            ..Config::default()
        };
        let call_as = |name: &str, path: &str| {
            let input =
                serde_json::json!({"name": name, "arguments": {"path": path, "content": "x\n"}});
            call(&project, input.to_string(), &config)
        };
        let env = call_as("write_file", "/virt/p/a/x.txt");
        assert_eq!(env.text, "Successfully wrote to /virt/p/a/x.txt");
        assert_eq!(env.context.path_resolved.as_deref(), Some("a/x.txt"));
        assert_eq!(std::fs::read(project.join("a/x.txt")).unwrap(), b"x\n");
        let env = call_as("write_file", "/virt/o/b/y.txt");
        assert_eq!(env.status, Status::Success, "{}", env.text);
        assert_eq!(
            env.context.path_resolved.as_deref(),
            Some("/virt/o/b/y.txt")
        );
        let preview = env.data.unwrap().diff_preview;
        assert!(
            preview.starts_with("--- a//virt/o/b/y.txt\n+++ b//virt/o/b/y.txt\n"),
            "{preview}"
        );
        assert_eq!(std::fs::read(other.join("b/y.txt")).unwrap(), b"x\n");
        for path in ["/etc/x", "../o/x", "/virt/p/../o2/x"] {
            let env = call_as("write_file", path);
            let error = env.error.unwrap();
            assert_eq!(error.code, ErrorCode::AccessDenied);
            assert_eq!(
                error.message,
                format!("path '{path}' is not in allowed directories")
            );
        }
        let env = call_as("Write", "../o/x");
        assert_eq!(env.text, "Path must be within project root.");
        let env = call_as("Write", "/virt/p/x");
        assert_eq!(env.error.unwrap().code, ErrorCode::InvalidParam);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    /// Path pieces an attacker would try, and some ordinary ones.
    const PIECES: &[&str] = &[
        ".",
        "..",
        "",
        "a",
        "b",
        "in",
        "out",
        "abs",
        "loop",
        "deep",
        "file.txt",
        "\\",
        "\0",
        "\n",
        "\u{e9}",
        "e\u{301}",
        "\u{202e}",
        "\u{200b}",
        "\u{ff0e}\u{ff0e}",
        "C:",
        "~",
        "...",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// Whatever the path, the target is inside the root or the call is
        /// refused, and nothing outside the root changes.
        #[test]
        fn the_target_is_inside_the_root_or_refused(
            pieces in proptest::collection::vec(proptest::sample::select(PIECES.to_vec()), 1..8),
            leading_slash: bool,
        ) {
            let path = format!("{}{}", if leading_slash { "/" } else { "" }, pieces.join("/"));
            let fixture = sandbox();
            let root = fixture.path().join("root");
            let env = call(&root, serde_json::json!({"path": path, "content": "x"}).to_string(), &Config::default());
            proptest::prop_assert_eq!(std::fs::read(fixture.path().join("outside/canary")).unwrap(), b"canary");
            proptest::prop_assert_eq!(std::fs::read_dir(fixture.path().join("outside")).unwrap().count(), 1);
            proptest::prop_assert_eq!(std::fs::read_dir(fixture.path()).unwrap().count(), 2);
            if env.status != Status::Error {
                let resolved = env.context.path_resolved.clone().unwrap();
                let names: Vec<&str> = resolved.split('/').collect();
                proptest::prop_assert!(names.iter().all(|n| !matches!(*n, "" | "." | "..")), "{}", resolved);
                let written = root.join(&resolved).canonicalize().unwrap();
                proptest::prop_assert!(written.starts_with(root.canonicalize().unwrap()), "{}", written.display());
                proptest::prop_assert_eq!(std::fs::read(&written).unwrap(), b"x");
            }
        }
    }

    /// A root with links in and out, beside an `outside` directory.
    fn sandbox() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("a/deep")).unwrap();
        std::fs::create_dir(dir.path().join("outside")).unwrap();
        std::fs::write(dir.path().join("outside/canary"), "canary").unwrap();
        std::fs::write(root.join("file.txt"), "file").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink("a", root.join("in")).unwrap();
            symlink("../outside", root.join("out")).unwrap();
            symlink("/tmp", root.join("abs")).unwrap();
            symlink("loop", root.join("loop")).unwrap();
            symlink("../../outside/canary", root.join("a/b")).unwrap();
        }
        dir
    }

    #[test]
    fn envelope_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let mut env = run_json(
            dir.path(),
            serde_json::json!({"path": "a/b.py", "content": "def f():\n    pass\n"}),
        );
        env.stats.time_ms = 0;
        insta::assert_snapshot!(serde_json::to_string_pretty(&env).unwrap());
    }
}
