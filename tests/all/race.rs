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

use std::os::unix::fs::FileTypeExt;

use crate::support::{Envelope, JOURNALING, Journaling, Project, Tree, is_tool_temp, temp_files};

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

/// Everything beside the root but the journal, which records the calls.
fn outside(p: &Project) -> Tree {
    p.tree().without("root").without("journal")
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
pub(crate) fn hold(round: usize) {
    for _ in 0..(round % 16) * 40 {
        std::thread::yield_now();
    }
}

#[test]
fn a_directory_swapped_for_an_outward_link() {
    for journaling in JOURNALING {
        a_directory_swapped_for_an_outward_link_with(journaling);
    }
}

fn a_directory_swapped_for_an_outward_link_with(journaling: Journaling) {
    let p = Project::with(journaling);
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
    for journaling in JOURNALING {
        a_target_file_swapped_for_an_outward_link_with(journaling);
    }
}

fn a_target_file_swapped_for_an_outward_link_with(journaling: Journaling) {
    let p = Project::with(journaling);
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
    for journaling in JOURNALING {
        a_target_file_swapped_for_a_directory_with(journaling);
    }
}

/// The swap lands after the temp file exists, so that the rename over the
/// target fails: the call is refused and its temp file must go with it. A
/// watcher swaps the file for a directory as soon as the tool's temp file
/// appears and holds it there until the temp file is gone. Calls go on
/// until `WANTED` renames met the directory (a loaded machine moves the
/// watcher's timing), at most `MAX_CALLS`.
fn a_target_file_swapped_for_a_directory_with(journaling: Journaling) {
    const WANTED: usize = 20;
    const MAX_CALLS: usize = 400;
    let p = Project::with(journaling);
    p.write("target.txt", "inside\n");
    let target = p.path("target.txt");
    let content = "a line of the new content\n".repeat((1 << 20) / 26);
    let mut renames_refused = 0;
    let mut call = 0;
    while renames_refused < WANTED && call < MAX_CALLS {
        call += 1;
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
            (env, watcher.join().expect("the other thread"))
        });
        let _ = fs::remove_dir(&target);
        fs::write(&target, "inside again\n").expect("the test's own file");
        match env.code() {
            None => {}
            Some("IS_DIRECTORY") => {
                if env.text.contains("became a directory") {
                    renames_refused += 1;
                }
            }
            other => panic!(
                "call {call} ({journaling:?}): unexpected {other:?}: {}",
                env.text
            ),
        }
        assert!(
            swapped || env.code().is_none(),
            "call {call} ({journaling:?}): {}",
            env.text
        );
        assert!(
            temp_files(&p.root_dir()).is_empty(),
            "call {call} left a temp file ({journaling:?})"
        );
    }
    assert!(
        renames_refused >= WANTED,
        "{journaling:?}: only {renames_refused} of {call} renames met the directory"
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
    // produces ("replaced while the tool read it"). The walk and the open
    // come before the commit and are the same with the journal or without
    // (the journal's own look at the file, `save_old`, stats it and opens
    // nothing that is not a regular file): the race runs without it, where
    // calls are quick enough to meet the swapper between walk and open.
    a_target_file_swapped_for_a_fifo_never_blocks_a_call_with(Journaling::Off);
}

fn a_target_file_swapped_for_a_fifo_never_blocks_a_call_with(journaling: Journaling) {
    // At least `CALLS`, and on until one met the FIFO at its open (a
    // loaded machine moves the swapper's timing), at most `MAX_CALLS`.
    const CALLS: usize = 600;
    const MAX_CALLS: usize = 5000;
    let p = Arc::new(Project::with(journaling));
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
    let mut i = 0;
    while (i < CALLS || refused_at_open == 0) && i < MAX_CALLS {
        i += 1;
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
        "{journaling:?}: no call of {i} opened the FIFO after its walk saw a file ({} refused \
         by the walk)",
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
