//! One call from request to envelope: validate, resolve, read, diff, write.

mod config;
mod format;
mod lock;
mod text;

use std::borrow::Cow;
use std::time::{Instant, SystemTime};

use serde_json::Value;
use write_tool_wire::envelope::{
    CWD, Context, Data, Envelope, LockValues, Operation, Stats, Status, Warning, WarningKind,
    WriteStats,
};
use write_tool_wire::messages;
use write_tool_wire::request::ToolName;

pub use config::Config;
pub use format::Unencodable;
use format::{LineEnding, TextEncoding};
pub(crate) use text::cut;

use crate::diff::{self, DiffLimits, DiffSummary};
use crate::error::ToolError;
use crate::fs::{self, Dir, ReadError, Resolved, TargetKind};
use crate::params::Request;
use crate::roots::Roots;

/// Run raw JSON call input against `roots`.
///
/// Takes the input by value and lets it go once it is parsed: with a large
/// content it is the biggest allocation besides the content itself.
pub fn call(roots: &Roots, input: String, config: &Config) -> Envelope {
    let start = Instant::now();
    let (echo, request) = crate::params::parse_call(&input);
    drop(input);
    match request {
        Ok(request) => run(roots, &request, echo, config, start),
        Err(err) => err.into_envelope(elapsed_ms(start), echo, None),
    }
}

/// Run a typed request against `roots`.
pub fn write(roots: &Roots, request: &Request, config: &Config) -> Envelope {
    let start = Instant::now();
    run(roots, request, request.echo(), config, start)
}

fn run(roots: &Roots, request: &Request, echo: Value, config: &Config, start: Instant) -> Envelope {
    let mut resolved_path = None;
    match execute(roots, request, config, &mut resolved_path) {
        Ok(done) => done.into_envelope(request, echo, elapsed_ms(start), resolved_path),
        Err(err) if request.tool == ToolName::WriteFile && err == ToolError::outside_root() => {
            // `write_file`'s callers match on its own wording
            // (`docs/contract.md#several-roots`).
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
    /// The size of the file after the call (a dry run: as it is).
    new_size: u64,
    /// Lines of a created file.
    new_lines: u64,
    bytes_written: u64,
    created_dir: Option<String>,
    /// The old file is not text in any encoding the tool knows.
    old_not_text: bool,
    split_links: bool,
    /// The encoding the file is written in.
    encoding: TextEncoding,
    /// The old file's uniform line ending, given to the content.
    line_endings: Option<LineEnding>,
    /// The content's line endings were changed to the file's.
    endings_converted: bool,
    /// `keep_format: false` wrote the content as given over a file of
    /// another encoding: the one it had.
    converted_from: Option<TextEncoding>,
    /// The lock values of the file after the call, if there is one.
    lock: Option<LockValues>,
}

fn execute(
    roots: &Roots,
    request: &Request,
    config: &Config,
    resolved_path: &mut Option<String>,
) -> Result<Done, ToolError> {
    let started = SystemTime::now();
    check_content(&request.content, config)?;
    let located = roots.locate(request.tool, &request.path)?;
    let (root, prefix) = (located.dir, located.prefix);
    let dir_only = located.rel.dir_only();
    let rel = located.rel.clone();
    let resolved = fs::resolve(root, located.rel)?;
    let display = prefixed(prefix, resolved.display());
    *resolved_path = Some(display.clone());
    config.protection.check(&resolved.names)?;

    match resolved.kind {
        TargetKind::Missing if dir_only => return Err(ToolError::slash_but_nothing_there()),
        TargetKind::File if dir_only => return Err(ToolError::slash_but_a_file()),
        TargetKind::File if request.create_only => {
            return Err(ToolError::exists(&display, resolved.len.unwrap_or(0)));
        }
        _ => {}
    }

    // Checked before opening the file: a huge file is never read.
    if let Some(len) = resolved.len
        && len > config.max_content_bytes
    {
        return Err(ToolError::existing_too_large(len, config.max_content_bytes));
    }
    let existing = match resolved.kind {
        TargetKind::Directory => return Err(ToolError::is_directory()),
        TargetKind::Other => return Err(ToolError::not_regular_file()),
        TargetKind::Missing => None,
        TargetKind::File => Some(
            fs::read_existing(root, &resolved.display(), config.max_content_bytes).map_err(
                |e| match e {
                    ReadError::NotRegular => ToolError::not_regular_file(),
                    ReadError::TooLarge { len } => {
                        ToolError::existing_too_large(len, config.max_content_bytes)
                    }
                    ReadError::Io(e) => ToolError::from_io(&e, "reading the existing file"),
                },
            )?,
        ),
    };
    lock::check(request, existing.as_ref())?;
    if config.read_only && !request.dry_run {
        return Err(ToolError::read_only_root());
    }

    let operation = if existing.is_some() {
        Operation::Update
    } else {
        Operation::Create
    };
    let original_size = existing.as_ref().map_or(0, |e| e.bytes.len() as u64);
    let old_bytes = existing.as_ref().map_or(&[][..], |e| &e.bytes[..]);

    // The old file's format, kept unless the caller asked for the content
    // as given (`docs/contract.md#format`).
    let old = format::decode(old_bytes);
    let keep = request.keep_format && existing.is_some() && old.encoding.is_some();
    let encoding = match old.encoding {
        Some(encoding) if keep => encoding,
        _ => TextEncoding::PLAIN,
    };
    let converted_from = old
        .encoding
        .filter(|&old| existing.is_some() && !request.keep_format && old != TextEncoding::PLAIN);
    let line_endings = if keep {
        format::line_endings(&old.text)
    } else {
        None
    };
    let body = if keep {
        format::strip_bom(&request.content, encoding)
    } else {
        &request.content
    };
    let new_text = match line_endings {
        Some(ending) => format::convert_endings(body, ending),
        None => Cow::Borrowed(body),
    };
    let endings_converted = matches!(new_text, Cow::Owned(_));
    let split_links = existing.as_ref().is_some_and(|e| e.link_count > 1);
    // The old file has other names, perhaps outside the root: what it held
    // is not the caller's to read.
    let limits = DiffLimits {
        withhold_old_lines: split_links,
        ..config.diff
    };
    let line_by_line = format::line_by_line(encoding).filter(|_| keep);
    let (new, unchanged, diff) = match line_by_line {
        // A legacy encoding or UTF-16: the diff first, then only the lines
        // it does not keep are encoded; the kept ones are the old file's
        // bytes (`docs/contract.md#format`).
        Some(codec) if !diff::same_bytes(old.text.as_bytes(), new_text.as_bytes()) => {
            let (diff, kept) = diff::diff_keeping(&old.text, &new_text, &display, &limits);
            let new = match format::encode_keeping(&new_text, codec, old_bytes, &kept) {
                Some(encoded) => Cow::Owned(encoded.map_err(|e| ToolError::unencodable(&e))?),
                None => {
                    format::encode(&new_text, encoding).map_err(|e| ToolError::unencodable(&e))?
                }
            };
            // Different text can encode to the same bytes (Shift_JIS
            // writes U+00A5 as the byte of `\`): the file stays as it is.
            if diff::same_bytes(old_bytes, &new) {
                (new, true, DiffSummary::default())
            } else {
                (new, false, diff)
            }
        }
        Some(_) => (Cow::Borrowed(old_bytes), true, DiffSummary::default()),
        None => {
            let new =
                format::encode(&new_text, encoding).map_err(|e| ToolError::unencodable(&e))?;
            let unchanged = existing.is_some() && diff::same_bytes(old_bytes, &new);
            let diff = if unchanged {
                DiffSummary::default()
            } else {
                diff::diff(&old.text, &new_text, &display, &limits)
            };
            (new, unchanged, diff)
        }
    };
    if config.refuse_placeholders
        && let Some((line, text)) = diff.placeholders.first()
    {
        return Err(ToolError::placeholder(*line, text));
    }

    let mut done = Done {
        operation,
        applied: false,
        unchanged,
        diff,
        original_size,
        new_size: original_size,
        new_lines: if existing.is_none() {
            diff::count_lines(&new_text)
        } else {
            0
        },
        bytes_written: 0,
        created_dir: None,
        old_not_text: existing.is_some() && old.encoding.is_none(),
        split_links,
        encoding,
        line_endings,
        endings_converted,
        converted_from,
        lock: None,
    };
    drop(old);
    if request.dry_run || unchanged {
        // The file stays as it is: its own lock values (hashed only here,
        // not also before a write that replaces it).
        done.applied = !request.dry_run;
        done.lock = existing.as_ref().map(|e| LockValues {
            expected_mtime_ms: e.modified.and_then(lock::mtime_ms),
            expected_size_bytes: original_size,
            expected_sha256: request.report_sha256.then(|| lock::sha256_hex(&e.bytes)),
        });
        return Ok(done);
    }
    done.applied = true;
    // A locked or create-only write looks at the target once more just
    // before its rename.
    let unchanged = (lock::requested(request) || request.create_only).then_some(match &existing {
        None => fs::Unchanged::Missing,
        Some(existing) => fs::Unchanged::File {
            len: existing.bytes.len() as u64,
            modified: existing.modified,
        },
    });
    let written =
        write_target(root, &resolved, &new, unchanged, started, config).map_err(|err| {
            // The capability layer's refusal and the operating system's own
            // (an immutable file, a directory that takes no new entries) reach
            // the component alike. Walk the path again: if it still resolves
            // to the same place inside, nothing led outside, and the refusal
            // was the system's.
            if err == ToolError::outside_root()
                && fs::resolve(root, rel).is_ok_and(|again| again.names == resolved.names)
            {
                ToolError::os_refused()
            } else {
                err
            }
        })?;
    done.bytes_written = new.len() as u64;
    done.new_size = new.len() as u64;
    done.lock = Some(LockValues {
        expected_mtime_ms: written.modified.and_then(lock::mtime_ms),
        expected_size_bytes: new.len() as u64,
        expected_sha256: request.report_sha256.then(|| lock::sha256_hex(&new)),
    });
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
        return Err(ToolError::invalid_param(messages::EMPTY_CONTENT));
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

/// Create parents and replace the target; on failure remove what was created.
fn write_target(
    root: &Dir,
    resolved: &Resolved,
    content: &[u8],
    unchanged: Option<fs::Unchanged>,
    started: SystemTime,
    config: &Config,
) -> Result<fs::sys::Stat, ToolError> {
    let created = fs::create_parents(root, resolved)
        .map_err(|e| ToolError::from_io(&e, "creating the parent directory"))?;
    let parent = resolved.parent().join("/");
    // A directory this call created holds no leftovers.
    let new_parent = created.last() == Some(&parent);
    let swept = (config.sweep_temps && !new_parent).then_some(started);
    let written = (|| {
        let opened;
        let dir = if parent.is_empty() {
            root
        } else {
            opened = root.open_dir_at(&parent)?;
            &opened
        };
        fs::write_atomic(
            dir,
            resolved.file_name(),
            content,
            unchanged,
            swept,
            config.durability,
        )
    })();
    written.map_err(|e| {
        fs::remove_dirs(root, &created);
        if fs::is_target_changed(&e) {
            ToolError::conflict()
        } else {
            ToolError::from_io(&e, "writing to file")
        }
    })
}

impl Done {
    fn into_envelope(
        self,
        request: &Request,
        echo: Value,
        time_ms: u64,
        path_resolved: Option<String>,
    ) -> Envelope {
        let incomplete = self.diff.truncated || self.diff.withheld;
        let status = if request.dry_run || incomplete {
            Status::Partial
        } else {
            Status::Success
        };
        let text = self.text(request);
        Envelope {
            status,
            data: Some(Data {
                applied: self.applied,
                operation: self.operation,
                diff_preview: self.diff.preview,
                diff_truncated: incomplete,
                encoding: self.encoding.name(),
                bom: self.encoding.bom(),
                line_endings: self.line_endings.map(|e| e.name().to_owned()),
                lock: self.lock,
                warnings: self
                    .diff
                    .placeholders
                    .into_iter()
                    .map(|(line, text)| Warning {
                        kind: WarningKind::OmissionPlaceholder,
                        line,
                        text: cut(&text, 200).to_owned(),
                    })
                    .collect(),
            }),
            text,
            stats: Stats {
                time_ms,
                write: Some(WriteStats {
                    bytes_written: self.bytes_written,
                    original_size: self.original_size,
                    new_size: self.new_size,
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
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::error::ErrorCode;

    fn run_json(root: &Path, input: Value) -> Envelope {
        call(
            &Roots::single(Dir::from_path(root)),
            input.to_string(),
            &Config::default(),
        )
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
        let hash = lock::sha256_hex(b"abc");
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
        let dir = tempfile::tempdir().unwrap();
        let (project, other) = (dir.path().join("p"), dir.path().join("o"));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let roots = Roots::from_preopens(vec![
            (Dir::from_path(&project), ".".into()),
            (Dir::from_path(&project), "/virt/p".into()),
            (Dir::from_path(&other), "/virt/o".into()),
        ])
        .unwrap();
        let call_as = |name: &str, path: &str| {
            let input =
                serde_json::json!({"name": name, "arguments": {"path": path, "content": "x\n"}});
            call(&roots, input.to_string(), &Config::default())
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
            let env = call(&Roots::single(Dir::from_path(&root)), serde_json::json!({"path": path, "content": "x"}).to_string(), &Config::default());
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
        let lock = env.data.as_mut().and_then(|d| d.lock.as_mut()).unwrap();
        let mtime = std::fs::metadata(dir.path().join("a/b.py"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(lock.expected_mtime_ms, lock::mtime_ms(mtime));
        lock.expected_mtime_ms = Some(0);
        insta::assert_snapshot!(serde_json::to_string_pretty(&env).unwrap());
    }
}
