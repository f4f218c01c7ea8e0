//! Cancellation: a call stops at its commit point and nowhere else
//! (`docs/contract.md#cancellation`).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use write_tool::Cancel;
use write_tool::wire::messages::CANCELLED;

use crate::support::{JOURNALING, Journaling, Project, decode, temp_files, tool};

fn call(p: &Project, arguments: serde_json::Value, cancel: &Cancel) -> crate::support::Envelope {
    decode(&tool().call_cancellable(p.root(), &arguments.to_string(), cancel))
}

/// A call whose flag is set before it reaches its commit point runs up to
/// it and stops there: no file, no temp file, no directory it created is
/// left, and the answer says the call was cancelled. Every kind of write
/// has the one commit point.
#[test]
fn a_call_cancelled_before_its_commit_point_writes_nothing() {
    for journaling in JOURNALING {
        cancelled_before_with(journaling);
    }
}

fn cancelled_before_with(journaling: Journaling) {
    let p = Project::with(journaling);
    p.write("old.txt", "old\n");
    let cancel = Cancel::new();
    cancel.cancel();
    let calls = [
        json!({"path": "old.txt", "content": "new\n"}),
        json!({"path": "new/deep/file.txt", "content": "new\n"}),
        json!({"path": "fresh.txt", "content": "new\n", "create_only": true}),
    ];
    for arguments in calls {
        let before = p.tree();
        let env = call(&p, arguments.clone(), &cancel);
        env.assert_error("EXECUTION_ERROR");
        assert_eq!(
            env.error.as_ref().map(|e| e.message.as_str()),
            Some(CANCELLED)
        );
        assert_eq!(env.text, CANCELLED);
        assert_eq!(
            p.tree().without("journal").without_directory_times(),
            before.without("journal").without_directory_times(),
            "{arguments}"
        );
    }
    // The same call with the flag clear writes: the refusal above came
    // from the flag.
    let env = call(
        &p,
        json!({"path": "old.txt", "content": "new\n"}),
        &Cancel::new(),
    );
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("old.txt"), "new\n");
}

/// A dry run has no commit point: cancelled or not, it answers with its
/// preview.
#[test]
fn a_cancelled_dry_run_still_answers() {
    let p = Project::new();
    let cancel = Cancel::new();
    cancel.cancel();
    let before = p.tree();
    let env = call(
        &p,
        json!({"path": "a.txt", "content": "a\n", "dry_run": true}),
        &cancel,
    );
    assert_eq!(env.code(), None, "{}", env.text);
    assert!(env.preview().contains("+a"), "{}", env.preview());
    assert_eq!(p.tree(), before);
}

/// A cancel that arrives after the commit point finds the write done: a
/// watcher sets the flag the moment the new file is at its name, while the
/// call is still finishing, and the call answers with success. The test
/// counts the rounds in which the flag was set before the call returned,
/// and requires some: otherwise it would show nothing.
#[test]
fn a_cancel_after_the_commit_point_finds_the_write_done() {
    for journaling in JOURNALING {
        cancelled_after_with(journaling);
    }
}

fn cancelled_after_with(journaling: Journaling) {
    const ROUNDS: usize = 60;
    let p = Project::with(journaling);
    let target = p.path("t.txt");
    fs::write(&target, "round 0\n").expect("the file");
    let mut in_flight = 0;
    for round in 1..=ROUNDS {
        let old = fs::metadata(&target).expect("the file").ino();
        let cancel = Cancel::new();
        let returned = AtomicBool::new(false);
        let content = format!("round {round}\n");
        let (env, early) = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                loop {
                    if returned.load(Ordering::SeqCst) {
                        return false;
                    }
                    if fs::symlink_metadata(&target).is_ok_and(|m| m.ino() != old) {
                        cancel.cancel();
                        return !returned.load(Ordering::SeqCst);
                    }
                    std::hint::spin_loop();
                }
            });
            let env = call(&p, json!({"path": "t.txt", "content": content}), &cancel);
            returned.store(true, Ordering::SeqCst);
            (env, watcher.join().expect("the watcher"))
        });
        assert_eq!(env.code(), None, "round {round}: {}", env.text);
        assert!(env.data().applied);
        assert_eq!(fs::read_to_string(&target).expect("the file"), content);
        in_flight += usize::from(early);
    }
    eprintln!("cancels after the commit point, call still running: {in_flight} of {ROUNDS}");
    assert!(in_flight > 0, "no cancel arrived while a call was running");
}

/// How many rounds a race wants met, and the most it tries.
const WANTED: usize = 3;
const MAX_ROUNDS: usize = 200;

/// A cancel that arrives while the call writes its content — after it
/// started, before its commit point — stops it there: a watcher sets the
/// flag as soon as the tool's temp file appears, and knows it did in time
/// when that temp file is still there afterwards. Those calls write
/// nothing; a call that read the flag only when it started would write.
#[test]
fn a_cancel_during_the_write_stops_it_at_its_commit_point() {
    for journaling in JOURNALING {
        let p = Project::with(journaling);
        p.write("big.txt", "old\n");
        let content = "a line of the new content\n".repeat((8 << 20) / 26);
        let (mut landed, mut round) = (0, 0);
        while landed < WANTED && round < MAX_ROUNDS {
            round += 1;
            let cancel = Cancel::new();
            let done = AtomicBool::new(false);
            let (env, in_time) = std::thread::scope(|scope| {
                let watcher = scope.spawn(|| {
                    while !done.load(Ordering::SeqCst) {
                        if let Some(temp) = temp_files(&p.root_dir()).first() {
                            cancel.cancel();
                            return p.root_dir().join(temp).exists();
                        }
                        std::hint::spin_loop();
                    }
                    false
                });
                let env = call(&p, json!({"path": "big.txt", "content": content}), &cancel);
                done.store(true, Ordering::SeqCst);
                (env, watcher.join().expect("the watcher"))
            });
            if in_time {
                landed += 1;
                env.assert_error("EXECUTION_ERROR");
                assert_eq!(env.text, CANCELLED, "{journaling:?} round {round}");
                assert_eq!(p.read_string("big.txt"), "old\n");
            }
            assert!(temp_files(&p.root_dir()).is_empty(), "round {round}");
        }
        assert!(
            landed >= WANTED,
            "{journaling:?}: the cancel landed during the write in {landed} of {round} rounds"
        );
    }
}

/// Once a change of several files has placed its first file, a cancel no
/// longer stops it: it finishes, all new, never split. A watcher sets the
/// flag the moment the first file changes; every round ends with all
/// three files new, and the rounds where the others were still old when
/// the flag was set are counted.
#[test]
fn a_cancel_after_the_first_file_of_a_change_lets_it_finish() {
    let p = Project::journaled();
    let names = ["a.txt", "b.txt", "c.txt"];
    for name in names {
        p.write(name, "old\n");
    }
    let (mut landed, mut round) = (0, 0);
    while landed < WANTED && round < MAX_ROUNDS {
        round += 1;
        let new = format!("round {round}\n");
        let first = fs::metadata(p.path("a.txt")).expect("a").ino();
        let cancel = Cancel::new();
        let writes: Vec<_> = names
            .iter()
            .map(|n| json!({"path": n, "content": new}))
            .collect();
        let done = AtomicBool::new(false);
        let (env, mid_change) = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                while !done.load(Ordering::SeqCst) {
                    if fs::metadata(p.path("a.txt")).is_ok_and(|m| m.ino() != first) {
                        cancel.cancel();
                        return fs::read_to_string(p.path("c.txt")).is_ok_and(|c| c != new);
                    }
                    std::hint::spin_loop();
                }
                false
            });
            let env = call(&p, json!({"writes": writes}), &cancel);
            done.store(true, Ordering::SeqCst);
            (env, watcher.join().expect("the watcher"))
        });
        assert_eq!(env.code(), None, "round {round}: {}", env.text);
        for name in names {
            assert_eq!(p.read_string(name), new, "round {round}: {name}");
        }
        landed += usize::from(mid_change);
    }
    assert!(
        landed >= WANTED,
        "the cancel landed between the files in {landed} of {round} rounds"
    );
}

/// A change whose first step removes a file (the revert of a create and
/// an update) is stopped at that removal by a cancel set before it, and
/// once the removal is done a cancel no longer stops it: the update
/// follows, never split. A watcher sets the flag the moment the created
/// file is gone; the rounds where the updated file was still new then are
/// counted.
#[test]
fn a_removal_is_a_commit_point_too() {
    let p = Project::journaled();
    p.write("y.txt", "old\n");
    let revert = json!({"name": "revert", "arguments": {}});
    let change = |round: usize| {
        let writes = json!([
            {"path": "y.txt", "content": format!("new {round}\n")},
            {"path": "x.txt", "content": "made\n"},
        ]);
        let env = p.call(json!({"writes": writes}));
        assert_eq!(env.code(), None, "{}", env.text);
    };
    // Cancelled before: nothing moves, and the change can still be undone.
    change(0);
    let cancel = Cancel::new();
    cancel.cancel();
    let env = call(&p, revert.clone(), &cancel);
    assert_eq!(env.text, CANCELLED);
    assert!(p.exists("x.txt"));
    assert_eq!(p.read_string("y.txt"), "new 0\n");
    let env = p.call(revert.clone());
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("y.txt"), "old\n");
    let (mut landed, mut round) = (0, 0);
    while landed < WANTED && round < MAX_ROUNDS {
        round += 1;
        change(round);
        let cancel = Cancel::new();
        let done = AtomicBool::new(false);
        let (env, mid_change) = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                while !done.load(Ordering::SeqCst) {
                    if !p.exists("x.txt") {
                        cancel.cancel();
                        return fs::read_to_string(p.path("y.txt")).is_ok_and(|c| c != "old\n");
                    }
                    std::hint::spin_loop();
                }
                false
            });
            let env = call(&p, revert.clone(), &cancel);
            done.store(true, Ordering::SeqCst);
            (env, watcher.join().expect("the watcher"))
        });
        assert_eq!(env.code(), None, "round {round}: {}", env.text);
        assert!(!p.exists("x.txt"), "round {round}");
        assert_eq!(p.read_string("y.txt"), "old\n", "round {round}");
        landed += usize::from(mid_change);
    }
    assert!(
        landed >= WANTED,
        "the cancel landed between the files in {landed} of {round} rounds"
    );
}
