//! One call from request to envelope, as a sequence of named stages.
//!
//! This file only dispatches: each stage is a function in its own file,
//! with typed input and output, so that an operation other than a
//! whole-content write (an edit, a write of several files, a revert) is a
//! new front stage rather than a branch inside one long function — and
//! never a second commit.
//!
//! 1. **resolve** (`target.rs`): place the path under a root, walk it with
//!    every link followed, refuse protected places and what is no file;
//! 2. **read the old file** (`old.rs`), bounded;
//! 3. **lock** (`lock.rs`): the optimistic lock's values compared;
//! 4. **plan the format** (`crate::format::plan`): the old file's
//!    encoding, mark and line endings, and the content in them (an edit's
//!    or a patch's front stage, `edits.rs`, turns its edits into content);
//! 5. **encode and diff** (`change.rs`): the new bytes and the preview —
//!    stages 1 to 5 are run by `prepare.rs`;
//! 6. **stage and commit** (`stage.rs`, `commit.rs`): the new content in
//!    a synced temp file, then put in place by the one commit point every
//!    operation shares (`place.rs`); with a journal, recorded first
//!    (`journaled.rs`), after a dead writer's commit is finished or rolled
//!    back (`recover.rs`);
//! 7. **answer** (`outcome.rs`, `text.rs`): the envelope.
//!
//! `single.rs` runs them for one file; `many.rs` (`write_many`) and
//! `patch.rs` prepare each file and commit them as one change; `revert.rs`
//! plans a revert from the records and commits it the same way;
//! `admin.rs` answers the host's own requests; `gc.rs` keeps the journal
//! within its bounds; `view.rs` shows a file or directory through stages
//! 1 and 2 and the format, and stops there.

mod admin;
mod answer_many;
pub(crate) mod append;
mod change;
mod checkpoint;
mod choose;
mod commit;
mod config;
mod editor;
mod edits;
pub mod gc;
mod group;
mod idempotent;
mod journaled;
mod lock;
mod many;
mod merge;
mod old;
mod outcome;
mod page;
mod patch;
mod place;
mod prepare;
mod recover;
mod restore;
mod revert;
mod seal;
mod session;
mod single;
mod stage;
mod target;
#[cfg(test)]
pub(crate) mod testing;
mod text;
mod view;

use std::time::Instant;

use serde_json::Value;

use write_tool_wire::envelope::{Envelope, elapsed_ms};

pub use config::Config;

use crate::edit::Voice;
use crate::error::ToolError;
use crate::params::{
    Call, EditRequest, ManyRequest, PatchRequest, Request, RevertRequest, RevertTarget, ViewRequest,
};
use crate::roots::Roots;
use prepare::Source;

/// Run raw JSON call input against `roots`.
///
/// Takes the input by value and lets it go once it is parsed: with a large
/// content it is the biggest allocation besides the content itself.
pub fn call(roots: &Roots, input: String, config: &Config) -> Envelope {
    let start = Instant::now();
    let parsed = crate::params::parse_any(&input);
    drop(input);
    let form = parsed.form;
    let mut envelope = match parsed.call {
        Err(err) => err.into_envelope(elapsed_ms(start), parsed.echo, None),
        Ok(request) => match parsed.keyed.filter(|_| idempotent::changes(&request)) {
            None => dispatch(roots, request, parsed.echo, config, start),
            Some(keyed) => {
                let run = |config: &Config, echo| dispatch(roots, request, echo, config, start);
                idempotent::answer(roots, &keyed, parsed.echo, config, start, run)
            }
        },
    };
    // A person's own commands answer in full (a script reads their
    // numbers); a model's, compact (`docs/contract.md#envelope`).
    envelope.form = form.or(config.form).unwrap_or(match config.by {
        crate::journal::By::Person => write_tool_wire::Form::Full,
        crate::journal::By::Model => write_tool_wire::Form::Compact,
    });
    if envelope.form == write_tool_wire::Form::Compact {
        uncut_create(&mut envelope);
    }
    envelope
}

/// Run a parsed request.
fn dispatch(roots: &Roots, call: Call, echo: Value, config: &Config, start: Instant) -> Envelope {
    match call {
        Call::Write(request) => single::answer(
            roots,
            &request,
            Source::Content,
            echo,
            config,
            start,
            ToolError::as_is,
        ),
        Call::Edit(edit) => {
            let source = Source::Edits(&edit.edits, Voice::Tool);
            single::answer(
                roots,
                &edit.request,
                source,
                echo,
                config,
                start,
                ToolError::as_is,
            )
        }
        Call::Many(request) => many::answer(roots, &request, echo, config, start),
        Call::Revert(request) => {
            revert::answer(roots, &request, echo, config, start, ToolError::as_is)
        }
        Call::Checkpoint(name) => checkpoint::checkpoint(roots, &name, echo, config, start),
        Call::Journal(request) => admin::answer(roots, &request, echo, config, start),
        Call::Patch(request) => patch::answer(roots, &request, echo, config, start),
        Call::View(request) => view::answer(roots, &request, echo, config, start, ToolError::as_is),
        Call::TextEditor(request) => editor::answer(roots, &request, echo, config, start),
        Call::Append(request) => append::answer(roots, &request, echo, config, start),
    }
}

/// A new file's preview is not in the compact form (it is the content the
/// caller sent), so none is cut: no note says so, and a create that was
/// written is a success.
fn uncut_create(envelope: &mut Envelope) {
    let Some(data) = &envelope.data else {
        return;
    };
    if data.operation != write_tool_wire::Operation::Create || !data.diff_truncated {
        return;
    }
    envelope.text = envelope.text.replace(&format!("\n{}", text::TRUNCATED), "");
    if data.applied {
        envelope.status = write_tool_wire::Status::Success;
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
        RevertTarget::LatestOf(path) => {
            serde_json::json!({"path": path, "dry_run": request.dry_run})
        }
        RevertTarget::Change(id) => {
            serde_json::json!({"change_id": id, "dry_run": request.dry_run})
        }
        RevertTarget::Checkpoint(name) => {
            serde_json::json!({"to": name, "dry_run": request.dry_run})
        }
    };
    revert::answer(roots, request, echo, config, start, ToolError::as_is)
}

/// Set a checkpoint through the typed interface.
pub fn checkpoint(roots: &Roots, name: &str, config: &Config) -> Envelope {
    let start = Instant::now();
    checkpoint::checkpoint(
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
    single::answer(
        roots,
        request,
        Source::Content,
        request.echo(),
        config,
        start,
        ToolError::as_is,
    )
}

/// Apply a patch through the typed interface (`apply-patch`).
pub fn apply_patch(roots: &Roots, request: &PatchRequest, config: &Config) -> Envelope {
    let start = Instant::now();
    let echo = serde_json::json!({"dry_run": request.dry_run});
    patch::answer(roots, request, echo, config, start)
}

/// Show a file or directory through the typed interface (`view`).
pub fn view(roots: &Roots, request: &ViewRequest, config: &Config) -> Envelope {
    let start = Instant::now();
    let echo = serde_json::json!({
        "path": request.path,
        "view_range": [request.first, request.last.map_or(-1, |l| i64::try_from(l).unwrap_or(-1))],
    });
    view::answer(roots, request, echo, config, start, ToolError::as_is)
}

/// Edit a file through the typed interface (`edit`).
pub fn edit(roots: &Roots, request: &EditRequest, config: &Config) -> Envelope {
    let start = Instant::now();
    let echo = edits::echo(request);
    single::answer(
        roots,
        &request.request,
        Source::Edits(&request.edits, Voice::Tool),
        echo,
        config,
        start,
        ToolError::as_is,
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::error::ErrorCode;
    use crate::fs::Dir;
    use serde_json::Value;
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
