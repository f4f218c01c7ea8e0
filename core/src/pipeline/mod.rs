//! One call from request to envelope, as a sequence of named stages.
//!
//! [`call`] and [`write`] run [`run`]: each stage is a function in its own
//! file, with typed input and output, so that an operation other than a
//! whole-content write (an edit, a write of several files, a revert) is a
//! new front stage or a new commit stage rather than a branch inside one
//! long function.
//!
//! 1. **resolve** (`target.rs`): place the path under a root, walk it with
//!    every link followed, refuse protected places and what is no file;
//! 2. **read the old file** (`old.rs`), bounded;
//! 3. **lock** (`lock.rs`): the optimistic lock's values compared;
//! 4. **plan the format** (`crate::format::plan`): the old file's
//!    encoding, mark and line endings, and the content in them;
//! 5. **encode and diff** (`change.rs`): the new bytes and the preview;
//! 6. **commit** (`commit.rs`): parents created, the file replaced
//!    atomically — or, with a journal, recorded first (`journaled.rs`);
//! 7. **answer** (`outcome.rs`, `text.rs`): the envelope.
//!
//! The journal's requests (`docs/contract.md#journal`) reuse the stages:
//! `many.rs` prepares each write as above and commits them as one change;
//! `revert.rs` plans a revert from the records and commits it the same
//! way; `admin.rs` answers the host's own requests; `gc.rs` keeps the
//! journal within its bounds.

mod admin;
mod change;
mod commit;
mod config;
mod edits;
pub mod gc;
mod group;
mod journaled;
mod lock;
mod many;
mod old;
mod outcome;
mod patch;
mod revert;
mod target;
mod text;

use std::time::{Instant, SystemTime};

use serde_json::Value;
use write_tool_wire::envelope::{Envelope, elapsed_ms};
use write_tool_wire::request::ToolName;

pub use config::Config;

use crate::edit::Edit;
use crate::edit::patch::Hunk;
use crate::error::{ErrorKind, ToolError};
use crate::format::{self, TextEncoding};
use crate::fs;
use crate::params::{
    Call, EditRequest, ManyRequest, PatchRequest, Request, RevertRequest, RevertTarget,
};
use crate::roots::Roots;
use change::Change;
use outcome::Outcome;

/// Run raw JSON call input against `roots`.
///
/// Takes the input by value and lets it go once it is parsed: with a large
/// content it is the biggest allocation besides the content itself.
pub fn call(roots: &Roots, input: String, config: &Config) -> Envelope {
    let start = Instant::now();
    let (echo, request) = crate::params::parse_any(&input);
    drop(input);
    match request {
        Ok(Call::Write(request)) => answer(roots, &request, Source::Content, echo, config, start),
        Ok(Call::Edit(edit)) => {
            let source = Source::Edits(&edit.edits);
            answer(roots, &edit.request, source, echo, config, start)
        }
        Ok(Call::Many(request)) => many::answer(roots, &request, echo, config, start),
        Ok(Call::Revert(request)) => revert::answer(roots, &request, echo, config, start),
        Ok(Call::Checkpoint(name)) => revert::checkpoint(roots, &name, echo, config, start),
        Ok(Call::Journal(request)) => admin::answer(roots, &request, echo, config, start),
        Ok(Call::Patch(request)) => patch::answer(roots, &request, echo, config, start),
        Err(err) => err.into_envelope(elapsed_ms(start), echo, None),
    }
}

/// Write several files through the typed interface (`write-many`).
pub fn write_many(roots: &Roots, request: &ManyRequest, config: &Config) -> Envelope {
    let start = Instant::now();
    let echo = serde_json::json!({
        "writes": request
            .writes
            .iter()
            .map(Request::echo)
            .collect::<Vec<_>>(),
        "dry_run": request.dry_run,
    });
    many::answer(roots, request, echo, config, start)
}

/// Revert through the typed interface (`revert`, `checkpoint`).
pub fn revert(roots: &Roots, request: &RevertRequest, config: &Config) -> Envelope {
    let start = Instant::now();
    let echo = match &request.target {
        RevertTarget::Latest => serde_json::json!({"dry_run": request.dry_run}),
        RevertTarget::Change(id) => {
            serde_json::json!({"change_id": id, "dry_run": request.dry_run})
        }
        RevertTarget::Checkpoint(name) => {
            serde_json::json!({"to": name, "dry_run": request.dry_run})
        }
    };
    revert::answer(roots, request, echo, config, start)
}

/// Set a checkpoint through the typed interface.
pub fn checkpoint(roots: &Roots, name: &str, config: &Config) -> Envelope {
    let start = Instant::now();
    revert::checkpoint(
        roots,
        name,
        serde_json::json!({"checkpoint": name}),
        config,
        start,
    )
}

/// Run a typed request against `roots`.
pub fn write(roots: &Roots, request: &Request, config: &Config) -> Envelope {
    let start = Instant::now();
    answer(
        roots,
        request,
        Source::Content,
        request.echo(),
        config,
        start,
    )
}

/// Apply a patch through the typed interface (`apply-patch`).
pub fn apply_patch(roots: &Roots, request: &PatchRequest, config: &Config) -> Envelope {
    let start = Instant::now();
    let echo = serde_json::json!({"dry_run": request.dry_run});
    patch::answer(roots, request, echo, config, start)
}

/// Edit a file through the typed interface (`edit`).
pub fn edit(roots: &Roots, request: &EditRequest, config: &Config) -> Envelope {
    let start = Instant::now();
    let echo = edits::echo(request);
    answer(
        roots,
        &request.request,
        Source::Edits(&request.edits),
        echo,
        config,
        start,
    )
}

fn answer(
    roots: &Roots,
    request: &Request,
    source: Source<'_>,
    echo: Value,
    config: &Config,
    start: Instant,
) -> Envelope {
    let mut resolved = None;
    match run(roots, request, source, config, &mut resolved) {
        Ok(outcome) => outcome.into_envelope(request, echo, elapsed_ms(start), resolved),
        Err(err) if request.tool == ToolName::WriteFile && err.kind() == ErrorKind::OutsideRoot => {
            // `write_file`'s callers match on its own wording
            // (`docs/contract.md#several-roots`).
            let err = ToolError::not_allowed(&request.path);
            err.into_envelope(elapsed_ms(start), echo, resolved)
        }
        Err(err) => err.into_envelope(elapsed_ms(start), echo, resolved),
    }
}

/// The stages of a whole-content write, in order. `resolved` gets the
/// target's name as soon as it is known, for the error envelope too.
fn run(
    roots: &Roots,
    request: &Request,
    source: Source<'_>,
    config: &Config,
    resolved: &mut Option<String>,
) -> Result<Outcome, ToolError> {
    let started = SystemTime::now();
    prepare(roots, request, source, config, resolved, |prepared| {
        let Prepared {
            target,
            old,
            bytes,
            mut outcome,
            shared,
        } = prepared;
        if request.dry_run || outcome.unchanged {
            // The file stays as it is: its own lock values.
            outcome.applied = !request.dry_run;
            outcome.lock = old.map(|o| lock::values(&o.bytes, o.modified, request.report_sha256));
            return Ok(outcome);
        }
        let expect_unchanged = lock::requested(request) || request.create_only;
        let committed = match &config.journal {
            None => commit::commit(&target, old, bytes, expect_unchanged, started, config)?,
            Some(journal) => {
                let (committed, id) = group::commit_one(
                    roots,
                    journal,
                    &target,
                    old,
                    bytes,
                    expect_unchanged,
                    shared,
                    started,
                    config,
                )?;
                outcome.change_id = Some(id);
                committed
            }
        };
        outcome.lock = Some(lock::values(
            bytes,
            committed.modified,
            request.report_sha256,
        ));
        outcome.applied = true;
        outcome.committed = Some(committed);
        Ok(outcome)
    })
}

/// What the stages before the commit found: the target, its old file, the
/// new bytes and the outcome so far.
struct Prepared<'r, 'b> {
    /// Where the write goes.
    target: target::Target<'r>,
    /// The old file, if there is one and it was read.
    old: Option<&'b fs::Existing>,
    /// The bytes the file will hold.
    bytes: &'b [u8],
    /// The outcome, before the commit.
    outcome: Outcome,
    /// The target has other hard links: it was not read.
    shared: bool,
}

/// What a call puts in the file.
#[derive(Debug, Clone, Copy)]
pub(super) enum Source<'a> {
    /// The request's content, whole.
    Content,
    /// Edits of the old file's text (`docs/contract.md#edit`).
    Edits(&'a [Edit]),
    /// A patch's hunks for the old file's text (`docs/contract.md#patch`).
    Hunks(&'a [Hunk]),
    /// Nothing: the file goes (a patch's delete).
    Remove,
}

/// Run the stages up to the commit and hand what they found to `then`.
fn prepare<'r, R>(
    roots: &'r Roots,
    request: &Request,
    source: Source<'_>,
    config: &Config,
    resolved: &mut Option<String>,
    then: impl FnOnce(Prepared<'r, '_>) -> Result<R, ToolError>,
) -> Result<R, ToolError> {
    if let Source::Content = source {
        check_content(&request.content, config)?;
    }
    let target = target::resolve(roots, request.tool, &request.path)?;
    *resolved = Some(target.display.clone());
    target.check_writable(request.create_only, config)?;
    // A file with other names, which may lie outside the root, is replaced
    // without being read: nothing of its content reaches the answer.
    let shared = target.resolved.shared();
    if shared && lock::requested(request) {
        return Err(ToolError::shared_file_lock(&target.display));
    }
    if !matches!(source, Source::Content) {
        edits::check_target(&target, shared, matches!(source, Source::Remove))?;
    }
    let old = if shared {
        None
    } else {
        old::read(&target, config)?
    };
    lock::check(request, old.as_ref(), &target.display)?;
    if config.read_only && !request.dry_run {
        return Err(ToolError::read_only_root());
    }
    let old_bytes = old.as_ref().map(|o| &o.bytes[..]);
    let plan = format::plan(old_bytes, request.keep_format, request.encoding)
        .map_err(|e| ToolError::not_in_encoding(&TextEncoding::Legacy(e.0).name()))?;
    let (edited, matches) = match source {
        Source::Content => (None, Vec::new()),
        Source::Remove => (Some(String::new()), Vec::new()),
        Source::Edits(list) => {
            let edited = edits::apply(&plan, list, &target.display, config)?;
            check_content(&edited.text, config)?;
            (Some(edited.text), edited.matches)
        }
        Source::Hunks(hunks) => {
            let edited = edits::apply_hunks(&plan, hunks, &target.display, config)?;
            check_content(&edited.text, config)?;
            (Some(edited.text), edited.matches)
        }
    };
    let content = edited.as_deref().unwrap_or(&request.content);
    let new = plan.text_of(content);
    let limits = config.diff;
    let Change {
        bytes,
        unchanged,
        diff,
        encoding,
    } = change::build(&plan, old_bytes, &new.text, &target.display, &limits)?;
    if config.refuse_placeholders
        && let Some((line, text)) = diff.placeholders.first()
    {
        return Err(ToolError::placeholder(*line, text));
    }
    let new_size = bytes.len() as u64;
    let mut outcome = Outcome::new(old.as_ref(), &plan, &new, new_size, diff, unchanged);
    outcome.format.encoding = encoding;
    outcome.edits = matches;
    if let Source::Remove = source {
        // Even an empty file goes.
        outcome.operation = write_tool_wire::Operation::Delete;
        outcome.unchanged = false;
    }
    if shared {
        outcome.unread_shared();
    }
    // The old text can be a file-sized copy: gone before the write.
    drop(plan);
    then(Prepared {
        target,
        old: old.as_ref(),
        bytes: &bytes,
        outcome,
        shared,
    })
}

fn check_content(content: &str, config: &Config) -> Result<(), ToolError> {
    if content.is_empty() && !config.allow_empty {
        return Err(ToolError::empty_content());
    }
    let len = content.len() as u64;
    if len > config.max_content_bytes {
        return Err(ToolError::content_too_large(len, config.max_content_bytes));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::error::ErrorCode;
    use crate::fs::Dir;
    use write_tool_wire::Status;

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
