//! Races: another thread keeps swapping part of the path for a link to the
//! outside while the tool writes through it. The guest's checks can be
//! raced; the capability layer behind them cannot. Every write must land
//! inside the root or be refused, and the outside must never change.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;

use std::os::unix::fs::FileTypeExt;

use crate::support::{Envelope, Project, Tree, is_tool_temp, temp_files};

const WRITES: usize = 300;

/// Run `swap` in a loop on another thread while `WRITES` writes of `path`
/// go through the tool; return the envelopes. After every call no temp
/// file of the tool's may be left anywhere in the root, whatever the race
/// made of the path (`docs/contract.md#writing`).
fn race(p: &Project, path: &str, swap: impl Fn(usize) + Sync) -> Vec<Envelope> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut round = 0;
            while !stop.load(Ordering::Relaxed) {
                swap(round);
                round += 1;
                // Hold the restored state for a varying while, so that some
                // writes run through a stable path and others are raced.
                for _ in 0..(round % 32) * 40 {
                    std::thread::yield_now();
                }
            }
        });
        let answers = (0..WRITES)
            .map(|i| {
                let env = p.put(path, &format!("write {i}\n"));
                let mut litter = Vec::new();
                find_temps(&p.root_dir(), &mut litter);
                for temp in &litter {
                    let _ = fs::remove_file(temp);
                }
                (env, litter)
            })
            .collect::<Vec<_>>();
        stop.store(true, Ordering::Relaxed);
        let littered: Vec<_> = answers
            .iter()
            .filter(|(_, litter)| !litter.is_empty())
            .map(|(_, litter)| litter)
            .collect();
        assert!(
            littered.is_empty(),
            "{} of {WRITES} calls left temp files behind: {littered:?}",
            littered.len()
        );
        answers.into_iter().map(|(env, _)| env).collect()
    })
}

/// The tool's temp files anywhere below `dir`, links not followed. The
/// tree changes under the walk: what vanishes meanwhile is skipped.
fn find_temps(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            find_temps(&path, found);
        } else if entry.file_name().to_str().is_some_and(is_tool_temp) {
            found.push(path);
        }
    }
}

fn outside(p: &Project) -> Tree {
    p.tree().without("root")
}

/// What the race made of the calls: each code, and that no answer carries
/// anything of the outside (its secret's content, its name).
fn codes_without_leaks(answers: &[Envelope]) -> Vec<Option<String>> {
    for env in answers {
        let shown = format!(
            "{} {}",
            env.text,
            env.data.as_ref().map_or("", |d| d.diff_preview.as_str())
        );
        assert!(
            !shown.contains("outside secret") && !shown.contains("outside/"),
            "an answer shows the outside: {shown}"
        );
    }
    answers
        .iter()
        .map(|e| e.code().map(str::to_owned))
        .collect()
}

/// How many of `codes` are the refusals a race with an outward link must
/// produce: the guest's (`ACCESS_DENIED`) or the capability layer's as the
/// system's (`PERMISSION_DENIED`, SECURITY.md's known limits).
fn refusals(codes: &[Option<String>]) -> usize {
    codes
        .iter()
        .filter(|c| matches!(c.as_deref(), Some("ACCESS_DENIED" | "PERMISSION_DENIED")))
        .count()
}

/// Hold a state of the race for a varying while, so that some writes run
/// through it and others through the next.
fn hold(round: usize) {
    for _ in 0..(round % 16) * 40 {
        std::thread::yield_now();
    }
}

#[test]
fn a_directory_swapped_for_an_outward_link() {
    let p = Project::new();
    p.mkdir("dir");
    let before = outside(&p);
    let dir = p.path("dir");
    let answers = race(&p, "dir/sub/f.txt", |round| {
        // Park the directory under a fresh name, put a link to the outside
        // in its place for a while, then put a directory back.
        let _ = fs::rename(&dir, p.path(&format!("parked{round}")));
        let _ = symlink("../outside", &dir);
        hold(round);
        let _ = fs::remove_file(&dir);
        let _ = fs::create_dir(&dir);
    });
    assert_eq!(outside(&p), before, "the outside changed");
    let codes = codes_without_leaks(&answers);
    assert!(refusals(&codes) > 0, "no call met the link: {codes:?}");
    for code in &codes {
        assert!(
            matches!(
                code.as_deref(),
                // A capability refusal whose path the race has put back by
                // the time the guest walks it again reads as the system's
                // (SECURITY.md, known limits).
                None | Some(
                    "ACCESS_DENIED" | "EXECUTION_ERROR" | "INVALID_PARAM" | "PERMISSION_DENIED"
                )
            ),
            "unexpected code {code:?}"
        );
    }
    assert!(
        codes.iter().any(Option::is_none),
        "no write got through at all"
    );
}

#[test]
fn a_target_file_swapped_for_an_outward_link() {
    let p = Project::new();
    p.write("target.txt", "inside\n");
    let before = outside(&p);
    let target = p.path("target.txt");
    let answers = race(&p, "target.txt", |round| {
        let _ = fs::remove_file(&target);
        let _ = symlink("../outside/secret.txt", &target);
        hold(round);
        let _ = fs::remove_file(&target);
        let _ = fs::write(&target, "inside again\n");
    });
    assert_eq!(outside(&p), before, "the outside changed");
    let codes = codes_without_leaks(&answers);
    assert!(refusals(&codes) > 0, "no call met the link: {codes:?}");
    for code in &codes {
        assert!(
            matches!(
                code.as_deref(),
                // As above: a refusal the race undid reads as the system's.
                None | Some("ACCESS_DENIED" | "EXECUTION_ERROR" | "PERMISSION_DENIED")
            ),
            "unexpected code {code:?}"
        );
    }
    assert!(
        codes.iter().any(Option::is_none),
        "no write got through at all"
    );
}

#[test]
fn a_target_file_swapped_for_a_directory() {
    // The swap lands after the temp file exists, so that the rename over
    // the target fails: the call is refused and its temp file must go with
    // it. A watcher swaps the file for a directory as soon as the tool's
    // temp file appears and holds it there until the temp file is gone.
    const CALLS: usize = 60;
    let p = Project::new();
    p.write("target.txt", "inside\n");
    let target = p.path("target.txt");
    let content = "a line of the new content\n".repeat((1 << 20) / 26);
    let mut renames_refused = 0;
    for call in 0..CALLS {
        let stop = AtomicBool::new(false);
        let (env, swapped) = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    if !temp_files(&p.root_dir()).is_empty() {
                        let _ = fs::remove_file(&target);
                        let _ = fs::create_dir(&target);
                        while !temp_files(&p.root_dir()).is_empty() && !stop.load(Ordering::Relaxed)
                        {
                            std::thread::yield_now();
                        }
                        return true;
                    }
                    std::thread::yield_now();
                }
                false
            });
            let env = p.put("target.txt", &content);
            stop.store(true, Ordering::Relaxed);
            (env, watcher.join().unwrap())
        });
        let _ = fs::remove_dir(&target);
        fs::write(&target, "inside again\n").unwrap();
        match env.code() {
            None => {}
            Some("IS_DIRECTORY") => {
                if env.text.contains("became a directory") {
                    renames_refused += 1;
                }
            }
            other => panic!("call {call}: unexpected {other:?}: {}", env.text),
        }
        assert!(swapped || env.code().is_none(), "call {call}: {}", env.text);
        assert!(
            temp_files(&p.root_dir()).is_empty(),
            "call {call} left a temp file"
        );
    }
    assert!(
        renames_refused * 2 >= CALLS,
        "only {renames_refused} of {CALLS} renames met the directory"
    );
}

#[test]
fn a_locked_write_refuses_a_change_made_while_it_writes_its_content() {
    // The lock is compared when the old file is read; a change made while
    // the new content is being written and synced must still be seen
    // (`docs/contract.md#parameters`): the watcher changes the file as
    // soon as the tool's temp file appears, and knows it changed it in
    // time when that temp file is still there afterwards.
    const ROUNDS: usize = 6;
    let p = Project::new();
    let content = "a line of the new content\n".repeat((8 << 20) / 26);
    let mut in_window = 0;
    for round in 0..ROUNDS {
        let old = format!("round {round}\n");
        p.write("locked.txt", &old);
        let changed = format!("changed behind the tool's back in round {round}\n");
        let stop = AtomicBool::new(false);
        let (env, landed) = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let temps = temp_files(&p.root_dir());
                    if let Some(temp) = temps.first() {
                        fs::write(p.path("locked.txt"), &changed).unwrap();
                        return p.root_dir().join(temp).exists();
                    }
                    std::thread::yield_now();
                }
                false
            });
            let env = p.call(json!({
                "path": "locked.txt",
                "content": content,
                "expected_size_bytes": old.len(),
            }));
            stop.store(true, Ordering::Relaxed);
            (env, watcher.join().unwrap())
        });
        if landed {
            in_window += 1;
            env.assert_error("CONFLICT");
            assert_eq!(p.read_string("locked.txt"), changed, "round {round}");
        }
        assert!(temp_files(&p.root_dir()).is_empty(), "round {round}");
    }
    assert!(
        in_window * 2 >= ROUNDS,
        "the change landed inside the write in only {in_window} of {ROUNDS} rounds"
    );
}

#[test]
fn a_target_file_swapped_for_a_fifo_never_blocks_a_call() {
    // The walk sees a regular file; a FIFO put in its place before the
    // tool opens it must not make the open wait for a writer that never
    // comes. The swapper renames a file and a FIFO in and out of the
    // target's name (making the FIFO again whenever a write replaced it);
    // each call must answer within a bound, and some must be refused by
    // the open itself, which only a FIFO that arrived after the walk
    // produces ("replaced while the tool read it").
    const CALLS: usize = 1000;
    let p = Arc::new(Project::new());
    p.write("target.txt", "inside\n");
    let stop = Arc::new(AtomicBool::new(false));
    let _stop_on_exit = StopOnDrop(Arc::clone(&stop));
    {
        let (p, stop) = (Arc::clone(&p), Arc::clone(&stop));
        std::thread::spawn(move || {
            let (target, fifo, parked) = (p.path("target.txt"), p.path("fifo"), p.path("parked"));
            let mut round = 0usize;
            while !stop.load(Ordering::Relaxed) {
                if !fs::symlink_metadata(&fifo).is_ok_and(|m| m.file_type().is_fifo()) {
                    let _ = fs::remove_file(&fifo);
                    make_fifo(&fifo);
                }
                let _ = fs::rename(&target, &parked);
                let _ = fs::rename(&fifo, &target);
                for _ in 0..(round % 16) * 20 {
                    std::thread::yield_now();
                }
                let _ = fs::rename(&target, &fifo);
                let _ = fs::rename(&parked, &target);
                round += 1;
            }
        });
    }
    let mut codes = Vec::new();
    let mut refused_at_open = 0;
    for i in 0..CALLS {
        let (tx, rx) = std::sync::mpsc::channel();
        let p = Arc::clone(&p);
        // Detached: a call that blocks must fail the test, not hang it.
        std::thread::spawn(move || {
            let _ = tx.send(p.put("target.txt", &format!("write {i}\n")));
        });
        let env = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("call {i} blocked"));
        if env.text.contains("replaced while the tool read it") {
            refused_at_open += 1;
        }
        codes.push(env.code().map(str::to_owned));
    }
    for code in &codes {
        assert!(
            matches!(
                code.as_deref(),
                None | Some("ACCESS_DENIED" | "EXECUTION_ERROR")
            ),
            "unexpected code {code:?}"
        );
    }
    assert!(codes.iter().any(Option::is_none), "no write got through");
    assert!(
        refused_at_open > 0,
        "no call opened the FIFO after its walk saw a file ({} refused by the walk)",
        codes
            .iter()
            .filter(|c| c.as_deref() == Some("ACCESS_DENIED"))
            .count()
    );
}

/// A FIFO at `path`.
fn make_fifo(path: &Path) {
    use rustix::fs::{CWD, FileType, Mode, mknodat};
    mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o600), 0).expect("mkfifo");
}

/// Stops a detached helper thread when the test ends, failed or not.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `create_only` never replaces a file, however close another writer's
/// create comes to the tool's (`docs/contract.md#parameters`): the create
/// itself is atomic (the synced temp file is linked to the name, which
/// fails when a file is there). A writer creates the file exclusively
/// every millisecond or so, holds it, checks it still holds its own
/// content, and removes it; the tool creates it with `create_only` as fast
/// as it can. Some creates must land in the writer's window and be refused
/// there — at the commit, not at the tool's first look — and no writer's
/// file may ever be replaced.
///
/// The same race for locked updates, which a rename cannot make atomic
/// (WASI has no rename that compares), is measured and reported, not
/// required to be zero: see `docs/contract.md#parameters`.
#[test]
fn create_only_never_replaces_a_file_created_meanwhile() {
    const CALLS: usize = 3000;
    const MAX_CALLS: usize = 30_000;
    // Refused at the commit: the file was not there when the tool looked,
    // so the message has no size.
    let at_commit = |text: &str| !text.contains(" bytes)") && !text.contains("(1 byte)");
    let p = Project::new();
    let target = p.path("race.txt");
    let stop = AtomicBool::new(false);
    let (clobbered, created_by_writer, outcomes) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let (mut clobbered, mut created) = (0usize, 0usize);
            let mut n = 0usize;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let mine = format!("writer {n}\n");
                match fs::File::options()
                    .write(true)
                    .create_new(true)
                    .open(&target)
                {
                    Ok(mut file) => {
                        use std::io::Write;
                        file.write_all(mine.as_bytes()).unwrap();
                        drop(file);
                        created += 1;
                        hold(n);
                        if fs::read_to_string(&target).is_ok_and(|now| now != mine) {
                            clobbered += 1;
                        }
                        let _ = fs::remove_file(&target);
                    }
                    // The tool's file: let it stand a moment, then clear
                    // the name for the next round.
                    Err(_) => {
                        hold(n);
                        let _ = fs::remove_file(&target);
                    }
                }
            }
            (clobbered, created)
        });
        // Calls until some created the file and some were refused at the
        // commit, at most `MAX_CALLS`: on a loaded machine the writer's
        // window moves.
        let mut outcomes: Vec<Option<String>> = Vec::new();
        while outcomes.len() < MAX_CALLS
            && (outcomes.len() < CALLS
                || !outcomes.iter().any(Option::is_none)
                || !outcomes.iter().flatten().any(|t| at_commit(t)))
        {
            let i = outcomes.len();
            let env = p.call(json!({
                "path": "race.txt",
                "content": format!("tool {i}\n"),
                "create_only": true,
            }));
            outcomes.push(match env.code() {
                None => None,
                Some("CONFLICT") => Some(env.text.clone()),
                Some(other) => panic!("call {i}: {other}: {}", env.text),
            });
        }
        stop.store(true, Ordering::Relaxed);
        let (clobbered, created) = writer.join().unwrap();
        (clobbered, created, outcomes)
    });
    let created = outcomes.iter().filter(|o| o.is_none()).count();
    let refused = outcomes.len() - created;
    let at_commit = outcomes.iter().flatten().filter(|t| at_commit(t)).count();
    eprintln!(
        "create_only: {created} created, {refused} refused ({at_commit} at the commit); \
         the writer created {created_by_writer}; clobbered {clobbered}"
    );
    assert_eq!(
        clobbered, 0,
        "create_only replaced a file created meanwhile"
    );
    assert!(
        created > 0 && created_by_writer > 0,
        "no race: {created}/{created_by_writer}"
    );
    assert!(
        at_commit > 0,
        "no create met the writer's file at its commit"
    );
    assert!(temp_files(&p.root_dir()).is_empty());
}

/// The window a locked update leaves, measured: a writer replaces the file
/// every millisecond or so, each version a different size; the tool reads
/// the lock values with a dry run and writes with them. A clobber is a
/// locked write that replaced a version it had not read. Reported on
/// stderr for `docs/contract.md#parameters`; the test requires only that
/// the race happened (some writes refused, some through).
#[test]
fn the_window_a_locked_update_leaves_is_measured() {
    const CALLS: usize = 1500;
    let p = Project::new();
    let target = p.path("locked.txt");
    let size_of = |n: usize| n % 500 + 2;
    fs::write(&target, "x".repeat(size_of(0) - 1) + "\n").unwrap();
    let expected: std::sync::Mutex<std::collections::HashMap<String, u64>> = Default::default();
    let stop = AtomicBool::new(false);
    let (clobbers, outcomes) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut clobbers = 0usize;
            let mut last = 0usize;
            let scratch = p.path(".writer.tmp");
            while !stop.load(Ordering::Relaxed) {
                hold(last);
                if let Ok(now) = fs::read_to_string(&target)
                    && now.starts_with("tool")
                {
                    let seen = expected.lock().unwrap().get(&now).copied();
                    if seen != Some(size_of(last) as u64) {
                        clobbers += 1;
                    }
                }
                last += 1;
                fs::write(&scratch, "w".repeat(size_of(last) - 1) + "\n").unwrap();
                fs::rename(&scratch, &target).unwrap();
            }
            clobbers
        });
        let outcomes: Vec<bool> = (0..CALLS)
            .map(|i| {
                let look = p.call(json!({"path": "locked.txt", "content": "x\n", "dry_run": true}));
                let Some(lock) = look.data.as_ref().and_then(|d| d.lock.clone()) else {
                    return false;
                };
                let content = format!("tool {i}\n");
                expected
                    .lock()
                    .unwrap()
                    .insert(content.clone(), lock.expected_size_bytes);
                let env = p.call(json!({
                    "path": "locked.txt",
                    "content": content,
                    "expected_size_bytes": lock.expected_size_bytes,
                    "expected_mtime_ms": lock.expected_mtime_ms,
                }));
                env.code().is_none()
            })
            .collect();
        stop.store(true, Ordering::Relaxed);
        (writer.join().unwrap(), outcomes)
    });
    let through = outcomes.iter().filter(|&&ok| ok).count();
    eprintln!(
        "locked updates: {through} of {CALLS} through, {} refused; {clobbers} replaced a version \
         they had not read",
        CALLS - through
    );
    assert!(
        through > 0 && through < CALLS,
        "no race: {through} of {CALLS}"
    );
}
