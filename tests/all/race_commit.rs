//! Races at the commit point (`docs/contract.md#parameters`, `#journal`):
//! another writer changes or creates the file as the tool commits, with
//! the journal on (the CLI's default) and off. A create never replaces a
//! file; a locked write looks at its file last, right before the rename,
//! whatever the journal does before.
//!
//! Each test counts the race it means to provoke and goes on (within a
//! bound) until it has met it enough times: a loaded machine moves the
//! other writer's timing, and a race that never happened proves nothing.

use std::fs;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::json;
use write_tool_test_support::capability;

use crate::race::hold;
use crate::support::{Envelope, JOURNALING, Project, temp_files};

/// A locked write refuses a change made while it writes and syncs its
/// content: the watcher changes the file as soon as the tool's temp file
/// appears, and knows it changed it in time when that temp file is still
/// there afterwards. Rounds go on until `WANTED` landed in time.
#[test]
fn a_locked_write_refuses_a_change_made_while_it_writes_its_content() {
    for journaling in JOURNALING {
        let p = Project::with(journaling);
        let content = "a line of the new content\n".repeat((8 << 20) / 26);
        let (landed, rounds) = locked_rounds(&p, "old\n", &content, |p| {
            !temp_files(&p.root_dir()).is_empty()
        });
        assert!(
            landed >= WANTED,
            "{journaling:?}: the change landed inside the write in {landed} of {rounds} rounds"
        );
    }
}

/// With the journal, a locked write looks at its file last — after it
/// marked its commit, saved the old content and appended and synced its
/// record, right before the rename — so a change made in that time is
/// refused, not replaced unseen: the watcher changes the file the moment
/// the journal's `pending` mark names the commit, and the call must answer
/// `CONFLICT` whenever the tool's temp file was still there after the
/// change.
///
/// The journal is on another file system than the root (`/dev/shm` where
/// there is one), so that the old content is copied into it, not linked:
/// a few milliseconds between the mark and the record for the change to
/// land in. A machine with one file system for all skips it, saying so.
#[test]
fn a_journaled_locked_write_looks_last_after_its_record() {
    let other = capability::other_file_system(&std::env::temp_dir());
    if !capability::runs(
        other.is_some(),
        "a_journaled_locked_write_looks_last_after_its_record",
        "a directory on another file system than the temp directory",
    ) {
        return;
    }
    let other = other.expect("checked");
    let journal = tempfile::tempdir_in(&other).expect("a journal on another file system");
    let p = Project::journaled_in(journal.path());
    let mark = journal.path().join("pending");
    let content = "a line of the new content\n".repeat(64);
    let old = "an old line\n".repeat((4 << 20) / 12);
    let (landed, rounds) = locked_rounds(&p, &old, &content, |_| {
        fs::read_to_string(&mark).is_ok_and(|m| m.contains("\"temps\""))
    });
    assert!(
        landed >= WANTED,
        "the change landed between the mark and the rename in {landed} of {rounds} rounds"
    );
}

/// How many rounds a test wants the race to land in.
const WANTED: usize = 3;
/// The most rounds it tries.
const MAX_ROUNDS: usize = 300;

/// Rounds of a locked write of `content` over a file of about `old` while
/// a watcher changes the file as soon as `now(p)` says; every round where
/// the change landed while the tool's temp file was still there (before
/// its rename) must be refused with the change kept. Returns how many
/// landed, in how many rounds.
fn locked_rounds(
    p: &Project,
    old: &str,
    content: &str,
    now: impl Fn(&Project) -> bool + Sync,
) -> (usize, usize) {
    let mut landed = 0;
    let mut round = 0;
    while landed < WANTED && round < MAX_ROUNDS {
        round += 1;
        let old = format!("round {round}\n{old}");
        p.write("locked.txt", &old);
        let changed = format!("changed behind the tool's back in round {round}\n");
        let stop = AtomicBool::new(false);
        let (env, in_time) = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    if now(p) {
                        let temps = temp_files(&p.root_dir());
                        fs::write(p.path("locked.txt"), &changed).expect("the test's own file");
                        return temps.first().is_some_and(|t| p.root_dir().join(t).exists());
                    }
                    std::hint::spin_loop();
                }
                false
            });
            let env = p.call(json!({
                "path": "locked.txt",
                "content": content,
                "expected_size_bytes": old.len(),
            }));
            stop.store(true, Ordering::Relaxed);
            (env, watcher.join().expect("the other thread"))
        });
        if in_time {
            landed += 1;
            env.assert_error("CONFLICT");
            assert_eq!(p.read_string("locked.txt"), changed, "round {round}");
        }
        assert!(temp_files(&p.root_dir()).is_empty(), "round {round}");
    }
    (landed, round)
}

/// `create_only` never replaces a file, however close another writer's
/// create comes to the tool's (`docs/contract.md#parameters`): the create
/// itself is atomic (the synced temp file is linked to the name, which
/// fails when a file is there), with the journal as without. A writer
/// creates the file exclusively every millisecond or so, holds it, checks
/// it still holds its own content, and removes it; the tool creates it
/// with `create_only` as fast as it can. Some creates must land in the
/// writer's window and be refused there — at the commit, not at the
/// tool's first look — and no writer's file may ever be replaced.
#[test]
fn create_only_never_replaces_a_file_created_meanwhile() {
    for journaling in JOURNALING {
        create_race(
            Project::with(journaling),
            &format!("create_only ({journaling:?})"),
            |i| json!({"path": "race.txt", "content": format!("tool {i}\n"), "create_only": true}),
        );
    }
}

/// A patch's `*** Add File` is a create: the same race, with the journal
/// (a patch of several files needs it, and records its creates).
#[test]
fn a_patchs_add_never_replaces_a_file_created_meanwhile() {
    create_race(Project::journaled(), "patch add", |i| {
        let patch = format!(
            "*** Begin Patch\n*** Add File: race.txt\n+tool {i}\n*** Add File: other{i}.txt\n\
             +x\n*** End Patch\n"
        );
        json!({"name": "apply_patch", "arguments": {"input": patch}})
    });
}

/// The race of [`create_only_never_replaces_a_file_created_meanwhile`],
/// for calls `call(i)` that create `race.txt`.
fn create_race(p: Project, what: &str, call: impl Fn(usize) -> serde_json::Value) {
    const CALLS: usize = 1500;
    const MAX_CALLS: usize = 30_000;
    // Refused at the commit: the file was not there when the tool looked,
    // so the message has no size.
    let at_commit = |text: &str| !text.contains(" bytes)") && !text.contains("(1 byte)");
    // Files the writer must have held meanwhile: a race with a writer
    // that seldom wrote would prove little.
    const HELD: usize = 50;
    let target = p.path("race.txt");
    let stop = AtomicBool::new(false);
    let writer_created = AtomicUsize::new(0);
    let (clobbered, outcomes) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| writer(&target, &stop, &writer_created));
        // Calls until some created the file, some were refused at the
        // commit and the writer held its file often, at most `MAX_CALLS`:
        // on a loaded machine the writer's window moves.
        let mut outcomes: Vec<Option<String>> = Vec::new();
        while outcomes.len() < MAX_CALLS
            && (outcomes.len() < CALLS
                || !outcomes.iter().any(Option::is_none)
                || writer_created.load(Ordering::Relaxed) < HELD
                || outcomes.iter().flatten().filter(|t| at_commit(t)).count() < WANTED)
        {
            let i = outcomes.len();
            let env: Envelope = p.call(call(i));
            outcomes.push(match env.code() {
                None => None,
                Some("CONFLICT") => Some(env.text.clone()),
                Some(other) => panic!("{what}: call {i}: {other}: {}", env.text),
            });
            let _ = fs::remove_file(p.path(&format!("other{i}.txt")));
        }
        stop.store(true, Ordering::Relaxed);
        let clobbered = writer.join().expect("the other thread");
        (clobbered, outcomes)
    });
    let created_by_writer = writer_created.load(Ordering::Relaxed);
    let created = outcomes.iter().filter(|o| o.is_none()).count();
    let refused = outcomes.len() - created;
    let at_commit = outcomes.iter().flatten().filter(|t| at_commit(t)).count();
    eprintln!(
        "{what}: {created} created, {refused} refused ({at_commit} at the commit); the writer \
         created {created_by_writer}; clobbered {clobbered}"
    );
    assert_eq!(clobbered, 0, "{what} replaced a file created meanwhile");
    assert!(
        created > 0 && created_by_writer >= HELD,
        "{what}: no race: the tool created {created}, the writer {created_by_writer}"
    );
    assert!(
        at_commit >= WANTED,
        "{what}: only {at_commit} creates met the writer's file at their commit"
    );
    assert!(temp_files(&p.root_dir()).is_empty());
}

/// The other writer of [`create_race`]: creates `target` exclusively,
/// holds it, counts its creates in `created`, and returns the times it
/// found its file replaced. Between
/// rounds it leaves the name free for a varying while (up to a few
/// milliseconds, as long as a journaled create takes), so that some of
/// the tool's creates finish in a gap and others meet its file.
fn writer(target: &std::path::Path, stop: &AtomicBool, created: &AtomicUsize) -> usize {
    let mut clobbered = 0usize;
    let mut n = 0usize;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        // Pacing the other writer, not waiting for the tool.
        std::thread::sleep(std::time::Duration::from_micros((n % 8) as u64 * 400));
        let mine = format!("writer {n}\n");
        match fs::File::options()
            .write(true)
            .create_new(true)
            .open(target)
        {
            Ok(mut file) => {
                use std::io::Write;
                file.write_all(mine.as_bytes())
                    .expect("the test's own file");
                drop(file);
                created.fetch_add(1, Ordering::Relaxed);
                hold(n);
                if fs::read_to_string(target).is_ok_and(|now| now != mine) {
                    clobbered += 1;
                }
                let _ = fs::remove_file(target);
            }
            // The tool's file: let it stand a moment, then clear the name
            // for the next round.
            Err(_) => {
                hold(n);
                let _ = fs::remove_file(target);
            }
        }
    }
    clobbered
}

/// The window a locked update leaves, measured: a writer replaces the file
/// every millisecond or so, each version a different size; the tool reads
/// the lock values with a dry run and writes, every other call with the
/// lock values, every other without (the control, met by the same writer
/// at the same moments). A clobber is a write that replaced a version it
/// had not read. The control shows that the count sees the clobbers there
/// are; the lock must have met the race (some writes refused, some
/// through). The counts go to stderr for `docs/contract.md#parameters`:
/// on a quiet machine the locked side clobbers a tenth to a twentieth as
/// often as the control, but a loaded one stops calls between the last
/// look and the rename and widens the window, so no share is bounded here;
/// that the last look is made is the two tests above.
#[test]
fn the_window_a_locked_update_leaves_is_measured() {
    for journaling in JOURNALING {
        let p = Project::with(journaling);
        let [locked, control] = window(&p, 600);
        eprintln!("locked updates ({journaling:?}): {locked:?}; without the lock: {control:?}");
        assert!(
            control.clobbers > 0,
            "{journaling:?}: the control met no race: {control:?}"
        );
        assert!(
            locked.through > 0 && locked.through < locked.calls,
            "{journaling:?}: no race: {locked:?}"
        );
        assert!(
            locked.clobbers <= locked.through,
            "{journaling:?}: a clobber counted for a write refused: {locked:?}"
        );
    }
}

/// What one side of [`window`] counted.
#[derive(Debug, Default)]
struct Window {
    calls: usize,
    through: usize,
    clobbers: usize,
}

/// `calls` locked updates and as many without the lock values, taken in
/// turn against one writer: what each side counted.
fn window(p: &Project, calls: usize) -> [Window; 2] {
    let target = p.path("locked.txt");
    let size_of = |n: usize| n % 500 + 2;
    fs::write(&target, "x".repeat(size_of(0) - 1) + "\n").expect("the test's own file");
    // The tool's content, by the size its dry run read and its side.
    let expected: std::sync::Mutex<std::collections::HashMap<String, (u64, usize)>> =
        Default::default();
    let stop = AtomicBool::new(false);
    let (clobbers, mut sides) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut clobbers = [0usize; 2];
            let mut last = 0usize;
            let scratch = p.path(".writer.tmp");
            while !stop.load(Ordering::Relaxed) {
                hold(last);
                if let Ok(now) = fs::read_to_string(&target)
                    && now.starts_with("tool")
                {
                    // Taken out, so that a version is counted once.
                    let seen = expected.lock().expect("the map").remove(&now);
                    if let Some((size, side)) = seen
                        && size != size_of(last) as u64
                    {
                        clobbers[side] += 1;
                    }
                }
                last += 1;
                fs::write(&scratch, "w".repeat(size_of(last) - 1) + "\n")
                    .expect("the test's own file");
                fs::rename(&scratch, &target).expect("the test's own file");
            }
            clobbers
        });
        let mut sides = [Window::default(), Window::default()];
        for i in 0..2 * calls {
            let side = i % 2;
            sides[side].calls += 1;
            let look = p.call(json!({"path": "locked.txt", "content": "x\n", "dry_run": true}));
            let Some(lock) = look.data.as_ref().and_then(|d| d.lock.clone()) else {
                continue;
            };
            let content = format!("tool {i}\n");
            expected
                .lock()
                .expect("the map")
                .insert(content.clone(), (lock.expected_size_bytes, side));
            let mut args = json!({"path": "locked.txt", "content": content});
            if side == 0 {
                args["expected_size_bytes"] = lock.expected_size_bytes.into();
                args["expected_mtime_ms"] = lock.expected_mtime_ms.into();
            }
            if p.call(args).code().is_none() {
                sides[side].through += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        (writer.join().expect("the other thread"), sides)
    });
    for (side, clobbers) in sides.iter_mut().zip(clobbers) {
        side.clobbers = clobbers;
    }
    sides
}
