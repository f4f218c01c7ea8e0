//! Races: another thread keeps swapping part of the path for a link to the
//! outside while the tool writes through it. The guest's checks can be
//! raced; the capability layer behind them cannot. Every write must land
//! inside the root or be refused, and the outside must never change.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support::{Project, Tree, is_tool_temp};

const WRITES: usize = 300;

/// Run `swap` in a loop on another thread while `WRITES` writes of `path`
/// go through the tool; return the envelopes' codes. After every call no
/// temp file of the tool's may be left anywhere in the root, whatever the
/// race made of the path (`docs/contract.md#writing`).
fn race(p: &Project, path: &str, swap: impl Fn(usize) + Sync) -> Vec<Option<String>> {
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
        let codes = (0..WRITES)
            .map(|i| {
                let code = p
                    .put(path, &format!("write {i}\n"))
                    .code()
                    .map(str::to_owned);
                let mut litter = Vec::new();
                find_temps(&p.root_dir(), &mut litter);
                for temp in &litter {
                    let _ = fs::remove_file(temp);
                }
                (code, litter)
            })
            .collect::<Vec<_>>();
        stop.store(true, Ordering::Relaxed);
        let littered: Vec<_> = codes
            .iter()
            .filter(|(_, litter)| !litter.is_empty())
            .collect();
        assert!(
            littered.is_empty(),
            "{} of {WRITES} calls left temp files behind: {littered:?}",
            littered.len()
        );
        codes.into_iter().map(|(code, _)| code).collect()
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

#[test]
fn a_directory_swapped_for_an_outward_link() {
    let p = Project::new();
    p.mkdir("dir");
    let before = outside(&p);
    let dir = p.path("dir");
    let codes = race(&p, "dir/sub/f.txt", |round| {
        // Park the directory under a fresh name, put a link to the outside
        // in its place, then put a directory back.
        let _ = fs::rename(&dir, p.path(&format!("parked{round}")));
        let _ = symlink("../outside", &dir);
        let _ = fs::remove_file(&dir);
        let _ = fs::create_dir(&dir);
    });
    assert_eq!(outside(&p), before, "the outside changed");
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
    let codes = race(&p, "target.txt", |_| {
        let _ = fs::remove_file(&target);
        let _ = symlink("../outside/secret.txt", &target);
        let _ = fs::remove_file(&target);
        let _ = fs::write(&target, "inside again\n");
    });
    assert_eq!(outside(&p), before, "the outside changed");
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
    // The swap can land after the temp file exists, so that the rename
    // over the target fails: the call is refused and its temp file must
    // go with it.
    let p = Project::new();
    p.write("target.txt", "inside\n");
    let target = p.path("target.txt");
    let codes = race(&p, "target.txt", |_| {
        let _ = fs::remove_file(&target);
        let _ = fs::create_dir(&target);
        let _ = fs::remove_dir(&target);
        let _ = fs::write(&target, "inside again\n");
    });
    for code in &codes {
        assert!(
            matches!(
                code.as_deref(),
                None | Some("IS_DIRECTORY" | "EXECUTION_ERROR")
            ),
            "unexpected code {code:?}"
        );
    }
    assert!(
        codes.iter().any(Option::is_none),
        "no write got through at all"
    );
}
