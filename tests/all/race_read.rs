//! Races on what a change reads: another process keeps swapping a
//! directory of the path between a real one and a link into `.git` or into
//! a protected folder, while the tool answers with the old file's lines —
//! a dry-run write's or edit's diff, a merge's conflict text, a revert's or
//! `undo_edit`'s "changed since" diff. Each answer shows the harmless file
//! or refuses; none shows the protected one's (`fs/walk.rs`).
//!
//! Each test makes at least [`MIN_CALLS`] calls, until the path has
//! changed under the tool at least [`SWAPS`] times and it has both answered
//! and refused (the race was met), and counts both.

use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::{Value, json};
use write_tool::{Options, Root, WriteTool};

use crate::support::{Project, decode, options};

/// Swaps each test must meet.
const SWAPS: usize = 1_000;
/// Calls each test makes at least: a call meets a swap between its look
/// and its read only now and then (a few in a thousand with the walk
/// broken on purpose).
const MIN_CALLS: usize = 3_000;
/// Calls after which a test gives up meeting the race: it then fails.
const MAX_CALLS: usize = 20_000;

/// The folder the host protects beside `.git`.
const PROTECTED: &str = "keys";

/// The tool with [`PROTECTED`] protected, compiled once for the module.
fn guarded() -> &'static WriteTool {
    static TOOL: OnceLock<WriteTool> = OnceLock::new();
    TOOL.get_or_init(|| {
        WriteTool::new(Options {
            protect: vec![PROTECTED.into()],
            ..options()
        })
        .expect("component compiles")
    })
}

/// Where the swapped link points: a place whose file must never be shown.
#[derive(Debug, Clone, Copy)]
enum Into {
    Git,
    Protected,
}

impl Into {
    const BOTH: [Into; 2] = [Into::Git, Into::Protected];

    fn folder(self) -> &'static str {
        match self {
            Into::Git => ".git",
            Into::Protected => PROTECTED,
        }
    }
}

/// A journaled project with `a/b/config` harmless, and the same name
/// below `.git` and the protected folder holding a secret.
fn project() -> Project {
    let p = Project::journaled();
    for place in Into::BOTH {
        p.write(&format!("{}/b/config", place.folder()), "SECRET line\n");
    }
    p.write("a/b/config", "harmless line\n");
    p
}

/// Stops the swapper when the calls end, by an assertion too: the scope
/// waits for it, and a test must fail, not hang.
struct Stop<'a>(&'a AtomicBool);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Call `call` while another thread swaps `a/b` for a link into `into`'s
/// folder and back, until [`SWAPS`] swaps and both an answer showing the
/// harmless file (its text holds `shown`) and a refusal; no answer may
/// hold `SECRET`. Returns (answered, refused).
fn race(p: &Project, into: Into, shown: &str, call: impl Fn() -> Value) -> (usize, usize) {
    let before = p.read_string("a/b/config");
    let (real, parked) = (p.path("a/b"), p.path("a/parked"));
    let link = format!("../{}/b", into.folder());
    let stop = AtomicBool::new(false);
    let swaps = AtomicUsize::new(0);
    let (mut answered, mut refused, mut calls) = (0, 0, 0);
    std::thread::scope(|scope| {
        scope.spawn(|| swapper(&real, &parked, &link, &stop, &swaps));
        let _stop = Stop(&stop);
        while calls < MAX_CALLS
            && (calls < MIN_CALLS
                || swaps.load(Ordering::Relaxed) < SWAPS
                || answered == 0
                || refused == 0)
        {
            let env = call();
            let text = env.to_string();
            assert!(!text.contains("SECRET"), "{into:?}: {text}");
            // An answer shows the old file's line; a refusal does not (the
            // request's echo left out: a patch carries the line itself).
            let mut answer = env.clone();
            answer.as_object_mut().map(|o| o.remove("context"));
            if answer.to_string().contains(shown) {
                answered += 1;
            } else {
                refused += 1;
            }
            calls += 1;
        }
    });
    let swaps = swaps.load(Ordering::Relaxed);
    assert!(swaps >= SWAPS, "{into:?}: {swaps} swaps in {calls} calls");
    assert!(
        answered > 0 && refused > 0,
        "{into:?}: answered {answered}, refused {refused} in {calls} calls"
    );
    // The project is as it was: the swapper put the real directory back.
    assert_eq!(p.read_string("a/b/config"), before);
    (answered, refused)
}

fn swapper(real: &Path, parked: &Path, link: &str, stop: &AtomicBool, swaps: &AtomicUsize) {
    let mut round = 0_usize;
    while !stop.load(Ordering::Relaxed) {
        // Each state held for a short, varying while: some calls see one
        // state throughout, others see both.
        let hold = || {
            for _ in 0..round % 4 {
                std::thread::yield_now();
            }
        };
        if std::fs::rename(real, parked).is_ok() {
            let _ = std::os::unix::fs::symlink(link, real);
            hold();
            let _ = std::fs::remove_file(real);
            let _ = std::fs::rename(parked, real);
            swaps.fetch_add(1, Ordering::Relaxed);
        }
        hold();
        round += 1;
    }
}

/// A call of the guarded tool, decoded as JSON.
fn call(root: &Root, arguments: &Value) -> Value {
    serde_json::from_str(&guarded().call(root, &arguments.to_string())).expect("envelope")
}

fn check(name: &str, p: &Project, shown: &str, arguments: &Value) {
    for into in Into::BOTH {
        let (answered, refused) = race(p, into, shown, || call(p.root(), arguments));
        eprintln!("{name}, into {into:?}: answered {answered}, refused {refused}");
    }
}

#[test]
fn a_dry_run_writes_diff_shows_nothing_of_a_swapped_in_place() {
    let p = project();
    let write = json!({"path": "a/b/config", "content": "new\n", "dry_run": true});
    check("write", &p, "-harmless", &write);
}

#[test]
fn a_dry_run_edits_diff_and_error_show_nothing_of_a_swapped_in_place() {
    let p = project();
    // Found in the harmless file and in the secret one alike.
    let edit = json!({"file_path": "a/b/config", "old_string": "line",
        "new_string": "LINE", "dry_run": true});
    check("edit", &p, "-harmless", &edit);
}

#[test]
fn a_dry_run_patchs_diff_shows_nothing_of_a_swapped_in_place() {
    let p = project();
    // A line added with no context: it applies to the harmless file and to
    // the secret one alike, and the diff shows the file's line around it.
    let patch = "*** Begin Patch\n*** Update File: a/b/config\n@@\n+new\n*** End Patch\n";
    let patch = json!({"name": "apply_patch", "arguments": {"input": patch, "dry_run": true}});
    check("apply_patch", &p, "harmless line", &patch);
}

#[test]
fn a_merges_conflict_text_shows_nothing_of_a_swapped_in_place() {
    let p = project();
    let viewed = decode(&guarded().call(
        p.root(),
        &json!({"name": "view", "arguments": {"path": "a/b/config"}}).to_string(),
    ));
    let base = viewed.data().view.as_ref().and_then(|v| v.base.clone());
    let base = base.expect("a base");
    // On the version seen, a change of its one line: merged onto a file
    // that is another one's, it conflicts and shows that file's line.
    let write = json!({"path": "a/b/config", "content": "mine\n", "base": base,
        "dry_run": true});
    check("merge", &p, "-harmless", &write);
}

/// A change of the model's to `a/b/config`, then the file changed by hand:
/// a revert or an undo is refused with what changed since.
fn changed_since() -> (Project, String) {
    let p = project();
    let env = decode(&guarded().call(
        p.root(),
        &json!({"path": "a/b/config", "content": "by the model\n"}).to_string(),
    ));
    let id = env.data().change_id.clone().expect("a change id");
    p.write("a/b/config", "by hand\n");
    (p, id)
}

#[test]
fn a_reverts_changed_since_diff_shows_nothing_of_a_swapped_in_place() {
    let (p, id) = changed_since();
    check("revert", &p, "-by hand", &json!({"change_id": id}));
}

#[test]
fn an_undo_edits_changed_since_diff_shows_nothing_of_a_swapped_in_place() {
    let (p, _) = changed_since();
    let undo = json!({"type": "tool_use", "id": "toolu_1",
        "name": "str_replace_based_edit_tool",
        "input": {"command": "undo_edit", "path": "a/b/config"}});
    check("undo_edit", &p, "-by hand", &undo);
}
