//! Cancellation: a call stops at its commit point and nowhere else
//! (`docs/contract.md#cancellation`).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use write_tool::Cancel;
use write_tool::wire::messages::CANCELLED;

use crate::support::{Project, decode, tool};

fn call(p: &Project, arguments: serde_json::Value, cancel: &Cancel) -> crate::support::Envelope {
    decode(&tool().call_cancellable(p.root(), &arguments.to_string(), cancel))
}

/// A call whose flag is set before it reaches its commit point runs up to
/// it and stops there: no file, no temp file, no directory it created is
/// left, and the answer says the call was cancelled. Every kind of write
/// has the one commit point.
#[test]
fn a_call_cancelled_before_its_commit_point_writes_nothing() {
    let p = Project::new();
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
            p.tree().without_directory_times(),
            before.without_directory_times(),
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
    const ROUNDS: usize = 60;
    let p = Project::new();
    let target = p.path("t.txt");
    fs::write(&target, "round 0\n").unwrap();
    let mut in_flight = 0;
    for round in 1..=ROUNDS {
        let old = fs::metadata(&target).unwrap().ino();
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
            (env, watcher.join().unwrap())
        });
        assert_eq!(env.code(), None, "round {round}: {}", env.text);
        assert!(env.data().applied);
        assert_eq!(fs::read_to_string(&target).unwrap(), content);
        in_flight += usize::from(early);
    }
    eprintln!("cancels after the commit point, call still running: {in_flight} of {ROUNDS}");
    assert!(in_flight > 0, "no cancel arrived while a call was running");
}
