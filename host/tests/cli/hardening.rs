use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::BuildHasher;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use crate::server::{Server, inode};
use crate::{assert_usage_error, bin_str, envelope, root_arg, run};
use write_tool_test_support::temp_files;

/// A large file's two versions, differing in a few lines so that the diff
/// is quick and the time goes into writing.
fn versions() -> (String, String) {
    let old: String = (0..200_000)
        .map(|i| format!("line {i:>8} of the large file\n"))
        .collect();
    let new = old
        .replace("line    10000 ", "LINE    10000 ")
        .replace("line   150000 ", "LINE   150000 ");
    (old, new)
}

/// The names of the temp files in `dir` that are not in `before`, once
/// there are any; `None` once `target` was replaced without one being seen.
fn watch_for_temp(dir: &Path, before: &[String], target: &Path) -> Option<Vec<String>> {
    let inode = |path: &Path| fs::metadata(path).map(|m| m.ino()).ok();
    let original = inode(target);
    let start = Instant::now();
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no temp file appeared and the target was not replaced"
        );
        let fresh: Vec<String> = temp_files(dir)
            .into_iter()
            .filter(|name| !before.contains(name))
            .collect();
        if !fresh.is_empty() {
            return Some(fresh);
        }
        if inode(target) != original {
            return None;
        }
        std::thread::yield_now();
    }
}

/// How long a write's temp file lives here, from its creation (after the
/// diff) to the rename, told by uninterrupted replaces: the shortest of
/// three, since a kill timed by a slow one lands after a fast one's rename.
fn temp_life(dir: &Path, root: &str, target: &Path, other: &dyn Fn() -> String) -> Duration {
    let mut server = Server::start(&["--root", root]);
    let warm = server.call(&json!({"path": "warm.txt", "content": "warm\n"}));
    assert_eq!(warm["status"], "success");
    let mut window = Duration::MAX;
    for _ in 0..3 {
        let before = temp_files(dir);
        server.send(&json!({"path": "big.txt", "content": other()}));
        let lived = match watch_for_temp(dir, &before, target) {
            Some(temp) => {
                let created = Instant::now();
                while dir.join(&temp[0]).exists() {
                    std::thread::yield_now();
                }
                created.elapsed()
            }
            None => Duration::ZERO,
        };
        assert_eq!(server.receive()["status"], "success");
        window = window.min(lived);
    }
    window
}

#[test]
fn a_killed_writer_leaves_exactly_the_old_or_the_new_content() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let (old, new) = versions();
    let target = dir.path().join("big.txt");
    fs::write(&target, &old).unwrap();

    // Always the other version: identical content would write nothing.
    let other = || {
        if fs::read(&target).unwrap() == old.as_bytes() {
            new.clone()
        } else {
            old.clone()
        }
    };

    let window = temp_life(dir.path(), &root, &target, &other);

    let random = RandomState::new();
    let mut mid_write = 0;
    for round in 0..12u64 {
        let mut server = Server::start(&["--root", &root]);
        // A small call first: once it is answered the component is compiled
        // and the next request goes straight to work. It also finishes a
        // write the last round's kill left after its journal record, which
        // is why the next content is chosen after it.
        let warm = server.call(&json!({"path": "warm.txt", "content": format!("{round}\n")}));
        assert_eq!(warm["status"], "success");
        let next = other();
        let before = temp_files(dir.path());
        server.send(&json!({"path": "big.txt", "content": next}));
        // Kill once the write's temp file is there, at a random point of
        // its life (writing the data, syncing it, renaming), within the
        // first three quarters of the shortest life seen: a busy machine
        // makes one write faster than another.
        let temp = watch_for_temp(dir.path(), &before, &target).unwrap_or_default();
        let nanos = u64::try_from(window.as_nanos() * 3 / 4)
            .unwrap_or(u64::MAX)
            .max(1);
        let delay = Duration::from_nanos(random.hash_one(round) % nanos);
        let seen = Instant::now();
        while seen.elapsed() < delay {
            std::thread::yield_now();
        }
        server.kill();
        // The kill landed inside the write if its temp file is still there.
        if temp.iter().any(|name| dir.path().join(name).exists()) {
            mid_write += 1;
        }
        let now = fs::read(&target).unwrap();
        assert!(
            now == old.as_bytes() || now == new.as_bytes(),
            "round {round}: {} bytes that are neither version",
            now.len()
        );
    }
    assert!(
        mid_write >= 8,
        "only {mid_write} of 12 kills landed inside the write (its temp file lives {window:?})"
    );

    // A later write to the directory sweeps what the killed writers left,
    // once it is older than the sweep's margin (one second).
    let newest = temp_files(dir.path())
        .iter()
        .filter_map(|n| fs::metadata(dir.path().join(n)).ok()?.modified().ok())
        .max();
    if let Some(newest) = newest {
        while SystemTime::now() < newest + Duration::from_millis(1100) {
            std::thread::yield_now();
        }
    }
    let out = run(
        &[
            "--root",
            &root,
            "write",
            "after.txt",
            "--content",
            "after\n",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(temp_files(dir.path()), Vec::<String>::new());
    let now = fs::read(&target).unwrap();
    assert!(now == old.as_bytes() || now == new.as_bytes());
}

#[test]
fn a_write_cut_short_by_the_file_size_limit_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    fs::write(dir.path().join("f.txt"), "original\n").unwrap();
    // SIGXFSZ ignored (inherited through exec), so that write(2) past the
    // limit fails with EFBIG instead of killing the process.
    let mut server = Server::start_with(Command::new("sh").args([
        "-c",
        "trap '' XFSZ; exec \"$0\" \"$@\"",
        bin_str(),
        "--root",
        &root,
        "serve",
    ]));
    // wasmtime itself needs file-backed memory while it starts, so the
    // limit goes on once the server is up.
    assert_eq!(
        server.call(&json!({"path": "warm.txt", "content": "w\n"}))["status"],
        "success"
    );
    let limited = Command::new("prlimit")
        .args([&format!("--pid={}", server.pid()), "--fsize=51200:51200"])
        .status()
        .expect("prlimit");
    assert!(limited.success());
    let env = server.call(&json!({"path": "f.txt", "content": "y".repeat(1 << 20)}));
    assert_eq!(env["error"]["code"], "EXECUTION_ERROR", "{env}");
    assert_eq!(
        env["text"],
        "File too large for the file system while writing to file."
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "original\n"
    );
    assert_eq!(temp_files(dir.path()), Vec::<String>::new());
    // Small writes still fit under the limit: the server goes on.
    assert_eq!(
        server.call(&json!({"path": "small.txt", "content": "s\n"}))["status"],
        "success"
    );
}

#[test]
fn a_read_only_root_refuses_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    fs::write(dir.path().join("f.txt"), "original\n").unwrap();
    let mut server = Server::start(&["--root", &root, "--read-only"]);
    for request in [
        json!({"path": "f.txt", "content": "changed\n"}),
        json!({"path": "new.txt", "content": "new\n"}),
        json!({"path": "deep/new.txt", "content": "new\n"}),
    ] {
        let env = server.call(&request);
        assert_eq!(env["error"]["code"], "PERMISSION_DENIED", "{env}");
    }
    let dry = server.call(&json!({"path": "f.txt", "content": "changed\n", "dry_run": true}));
    assert_eq!(dry["status"], "partial");
    assert_eq!(dry["text"], "[Dry Run] Would update 'f.txt' (+1/-1 lines).");
    drop(server);
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "original\n"
    );
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn protected_paths_follow_the_host_options() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    let out = run(
        &[
            "--root",
            &root,
            "write",
            ".git/hooks/pre-commit",
            "--content",
            "evil",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(envelope(&out)["text"], "Path is protected.");
    let out = run(
        &[
            "--root",
            &root,
            "--protect",
            "*.pem",
            "write",
            "keys/server.pem",
            "--content",
            "k",
        ],
        b"",
    );
    assert_eq!(envelope(&out)["error"]["code"], "ACCESS_DENIED");
    assert!(!dir.path().join("keys").exists());
    let out = run(
        &[
            "--root",
            &root,
            "--no-default-protect",
            "write",
            ".git/info",
            "--content",
            "ok\n",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!dir.path().join(".git/hooks/pre-commit").exists());
    let out = run(
        &[
            "--root",
            &root,
            "--protect",
            "[",
            "write",
            "x",
            "--content",
            "x",
        ],
        b"",
    );
    assert_usage_error(&out);
}

#[test]
fn serve_survives_hostile_input() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let huge = json!({"path": "huge.txt", "content": "h".repeat(100 << 20)}).to_string();
    let mut input = Vec::new();
    for line in [
        &b"{not json"[..],
        b"\xff\xfe\xfd",
        huge.as_bytes(),
        b"[]",
        b"{\"path\": 1}",
    ] {
        input.extend_from_slice(line);
        input.push(b'\n');
    }
    input.extend_from_slice(
        json!({"path": "ok.txt", "content": "still serving\n"})
            .to_string()
            .as_bytes(),
    );
    input.push(b'\n');
    let out = run(&["--root", &root, "serve"], &input);
    assert_eq!(out.status.code(), Some(0));
    let envelopes: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(envelopes.len(), 6);
    for env in &envelopes[..5] {
        assert_eq!(env["error"]["code"], "INVALID_PARAM", "{env}");
    }
    assert!(
        envelopes[2]["text"]
            .as_str()
            .unwrap()
            .starts_with("Request is over the limit of")
    );
    assert_eq!(envelopes[5]["status"], "success");
    assert!(!dir.path().join("huge.txt").exists());
}

/// Blank lines (a trailing newline, a keep-alive, lines a shell script
/// leaves) are no requests: skipped, not answered.
#[test]
fn serve_skips_blank_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let call = json!({"path": "a.txt", "content": "a\n"}).to_string();
    let input = format!("\n  \n{call}\n\r\n\t\n{call}\n\n");
    let out = run(&["--root", &root, "serve"], input.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let envelopes: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(envelopes.len(), 2, "{envelopes:?}");
    assert_eq!(envelopes[0]["status"], "success");
    assert_eq!(
        envelopes[1]["text"],
        "No changes to 'a.txt' (content identical)."
    );
}

/// A long `serve` session does not grow the host: resident memory after
/// many calls stays within a small constant of what it was early on. CI
/// runs 3,000 calls; `WRITE_TOOL_SOAK_CALLS` asks for more.
#[test]
fn serve_memory_stays_flat() {
    let calls: usize = std::env::var("WRITE_TOOL_SOAK_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3_000);
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let mut server = Server::start(&["--root", &root]);
    let request = |i: usize| json!({"path": format!("soak/{}.txt", i % 16), "content": format!("call {i}\n").repeat(1 + i % 50)});
    let warmup = 300.min(calls / 2);
    for i in 0..warmup {
        assert_ne!(server.call(&request(i))["status"], "error");
    }
    let early = server.rss_kib();
    for i in warmup..calls {
        assert_ne!(server.call(&request(i))["status"], "error");
    }
    let late = server.rss_kib();
    eprintln!("serve RSS after {warmup} calls: {early} KiB; after {calls} calls: {late} KiB");
    assert!(
        late <= early + 16 * 1024,
        "RSS grew from {early} KiB to {late} KiB over {calls} calls"
    );
}

/// Context switches of each thread of process `pid` but `pid`'s main
/// thread: (thread id, name, voluntary + involuntary).
#[cfg(target_os = "linux")]
fn other_threads(pid: u32) -> Vec<(String, String, u64)> {
    let tasks = fs::read_dir(format!("/proc/{pid}/task")).expect("proc tasks");
    let mut threads = Vec::new();
    for task in tasks {
        let tid = task
            .expect("task")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if tid == pid.to_string() {
            continue;
        }
        let Ok(status) = fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")) else {
            continue; // ended meanwhile
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(str::trim)
        };
        let switches = ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"]
            .iter()
            .filter_map(|key| field(key)?.parse::<u64>().ok())
            .sum();
        threads.push((tid, field("Name:").unwrap_or("").to_owned(), switches));
    }
    threads
}

/// While `serve` answers, no other thread of it runs: the time bound's
/// watchdog sleeps until a call is due, so a busy machine's CPUs go to the
/// calls (BENCHMARKS.md#steadiness).
#[cfg(target_os = "linux")]
#[test]
fn serve_wakes_no_other_thread_while_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let mut server = Server::start(&["--root", &root]);
    let request = |i: usize| json!({"path": "a.txt", "content": format!("call {i}\n").repeat(200)});
    // The first call starts what starts lazily (WASI's runtime).
    assert_ne!(server.call(&request(0))["status"], "error");
    let pid = server.pid();
    let before = other_threads(pid);
    let start = Instant::now();
    // At least 60 calls and half a second of them, however fast they are:
    // a thread that woke every 10 ms (the ticker this replaced) would have
    // switched in some fifty times.
    let mut calls = 0;
    while calls < 60 || start.elapsed() < Duration::from_millis(500) {
        calls += 1;
        assert_ne!(server.call(&request(calls))["status"], "error");
    }
    let took = start.elapsed();
    let after = other_threads(pid);
    let mut total = 0;
    let mut woke = Vec::new();
    for (tid, name, n) in &after {
        let was = before.iter().find(|(t, _, _)| t == tid).map_or(0, |b| b.2);
        if *n > was {
            total += n - was;
            woke.push(format!("{name} ({tid}): {}", n - was));
        }
    }
    // One switch is allowed: the watchdog looks once per time bound (30 s)
    // even when nothing is due, and that moment may fall in here.
    assert!(
        total <= 1,
        "other threads ran during {calls} calls ({took:?}), context switches: {woke:?}"
    );
}

/// A `write_many` of five files killed with SIGKILL in the middle of its
/// commit, after its first, second, third or fourth rename
/// (`docs/contract.md#journal`): the next journaled call of a new process
/// finishes it, so that every round ends all new or all old, never mixed,
/// and with no temp file left.
#[test]
fn a_write_many_killed_between_its_renames_is_all_or_nothing_after_restart() {
    killed_write_many_rounds(false);
}

/// The same, but before the restart the dead writer's temp files are old
/// and a write beside them (with no journal) sweeps them away as leftovers:
/// the files renamed are put back, so every round still ends all new or
/// all old.
#[test]
fn a_write_many_whose_temp_files_were_swept_after_its_kill_is_rolled_back() {
    killed_write_many_rounds(true);
}

/// Rounds of a killed five-file `write_many`, each followed by a restart
/// whose first journaled call must leave the files all old or all new. The
/// kill is timed by watching the files' inodes change; the rounds go on
/// until `MIXED` kills landed with the files mixed (at most `MAX_ROUNDS`,
/// which fails): otherwise recovery was never tried. How often a kill lands
/// between two renames depends on the machine's load, so no rate is
/// assumed. With `sweep`, the temp files left are aged and swept first.
fn killed_write_many_rounds(sweep: bool) {
    const FILES: usize = 5;
    const MIXED: usize = 8;
    const MAX_ROUNDS: usize = 400;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    let journal = dir.path().join("journal");
    fs::create_dir(&root).expect("mkdir root");
    let names: Vec<String> = (0..FILES).map(|i| format!("f{i}.txt")).collect();
    for name in &names {
        fs::write(root.join(name), "start\n").expect("seed file");
    }
    let args = [
        "--root",
        root.to_str().expect("UTF-8 path"),
        "--journal",
        journal.to_str().expect("UTF-8 path"),
    ];
    let read_all = || -> Vec<Vec<u8>> {
        names
            .iter()
            .map(|n| fs::read(root.join(n)).expect("read a file"))
            .collect()
    };
    let mut mixed_at_kill = 0;
    let mut swept = 0;
    let mut expected: Option<Versions> = None;
    let mut rounds = 0;
    for round in 0..=MAX_ROUNDS {
        if sweep && expected.is_some() {
            swept += age_and_sweep(&root, round);
        }
        let mut server = Server::start(&args);
        // A journaled call: it finishes or rolls back what the last round's
        // kill left.
        let warm = server.call(&json!({"path": "warm.txt", "content": format!("{round}\n")}));
        assert_eq!(warm["status"], "success", "{warm}");
        if let Some(versions) = expected.take() {
            assert_recovered(&root, &read_all(), &versions, round - 1);
        }
        if mixed_at_kill >= MIXED || round == MAX_ROUNDS {
            break;
        }
        rounds += 1;
        let old = read_all();
        let new: Vec<Vec<u8>> = (0..FILES)
            .map(|i| format!("round {round} file {i}\n").into_bytes())
            .collect();
        let before: Vec<u64> = names.iter().map(|n| inode(&root.join(n))).collect();
        let writes: Vec<Value> = names
            .iter()
            .zip(&new)
            .map(|(n, c)| json!({"path": n, "content": String::from_utf8_lossy(c)}))
            .collect();
        server.send(&json!({"writes": writes}));
        // Kill once `k` of the five were renamed, k = 1, 2, 3, 4 in turn.
        let k = 1 + round % (FILES - 1);
        server.kill_after_renames(&root, &names, &before, k);
        let renamed = read_all().iter().zip(&new).filter(|(a, b)| a == b).count();
        if (1..FILES).contains(&renamed) {
            mixed_at_kill += 1;
        }
        expected = Some((old, new));
    }
    eprintln!(
        "write_many kills that left the files mixed: {mixed_at_kill} of {rounds}; temp files swept before a restart: {swept}"
    );
    assert!(
        mixed_at_kill >= MIXED,
        "only {mixed_at_kill} of {rounds} kills landed between two renames"
    );
    if sweep {
        assert!(swept >= MIXED, "only {swept} temp files were swept");
    }
}

/// The files' contents before and after a round's write_many.
type Versions = (Vec<Vec<u8>>, Vec<Vec<u8>>);

/// After a restart's first call, the files hold all the old contents or
/// all the new ones, and no temp file is left.
fn assert_recovered(root: &Path, now: &[Vec<u8>], (old, new): &Versions, round: usize) {
    assert!(
        now == old || now == new,
        "round {round}: the files are mixed after recovery: {:?}",
        now.iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect::<Vec<_>>()
    );
    let left: Vec<String> = temp_files(root);
    assert!(left.is_empty(), "round {round}: temp files left: {left:?}");
}

/// Make the temp files in `root` a minute old, then let a write with no
/// journal beside them (new content each round: an identical write
/// writes nothing, and sweeps nothing) sweep them as a dead writer's
/// leftovers. Returns
/// how many were swept.
fn age_and_sweep(root: &Path, round: usize) -> usize {
    let aged = SystemTime::now() - Duration::from_secs(60);
    let left = temp_files(root);
    for name in &left {
        let file = fs::File::options()
            .write(true)
            .open(root.join(name))
            .expect("open a temp file");
        file.set_modified(aged).expect("set its mtime");
    }
    let out = Command::new(bin_str())
        .env("WRITE_TOOL_CACHE_DIR", crate::cache_dir())
        .args(["--root", root.to_str().expect("UTF-8 path"), "--no-journal"])
        .args(["write", "sweeper.txt", "--content", &round.to_string()])
        .output()
        .expect("run the sweeping write");
    assert!(out.status.success(), "{out:?}");
    let now = temp_files(root);
    assert!(now.is_empty(), "not swept: {now:?}");
    left.len()
}

/// A journal that cannot record (its file system full; here the process's
/// file size limit, below the log's size) refuses the write: nothing is
/// written, no temp file or pending mark is left, and the message says how
/// to free space or turn the journal off (`docs/contract.md#journal`).
#[test]
fn a_full_journal_refuses_the_write_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let journal = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    fs::write(dir.path().join("f.txt"), "original\n").unwrap();
    let mut server = Server::start_with(Command::new("sh").args([
        "-c",
        "trap '' XFSZ; exec \"$0\" \"$@\"",
        bin_str(),
        "--root",
        &root,
        "--journal",
        journal.path().to_str().unwrap(),
        "serve",
    ]));
    // Records enough for the log to pass the limit set below.
    for i in 0..40 {
        let env = server.call(&json!({"path": format!("fill/{i}.txt"), "content": "x\n"}));
        assert_eq!(env["status"], "success", "{env}");
    }
    let log = fs::read_dir(journal.path())
        .unwrap()
        .map(|e| e.unwrap().path().join("log"))
        .find(|p| p.exists())
        .expect("the root's journal");
    assert!(fs::metadata(&log).unwrap().len() > 8192);
    let limited = Command::new("prlimit")
        .args([&format!("--pid={}", server.pid()), "--fsize=8192:8192"])
        .status()
        .expect("prlimit");
    assert!(limited.success());
    let env = server.call(&json!({"path": "f.txt", "content": "changed\n"}));
    assert_eq!(env["error"]["code"], "EXECUTION_ERROR", "{env}");
    let text = env["text"].as_str().unwrap();
    assert!(text.contains("journal's file system is full"), "{text}");
    assert!(text.contains("--no-journal"), "{text}");
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "original\n"
    );
    assert_eq!(temp_files(dir.path()), Vec::<String>::new());
    // The mark holds the chain's head, and names no commit in progress.
    let mark = fs::read_to_string(log.with_file_name("pending")).unwrap_or_default();
    assert!(
        !mark.contains("\"temps\""),
        "a pending mark is left: {mark}"
    );
    assert!(!log.with_file_name("lock").exists(), "the lock is released");
}

/// SIGTERM in the middle of hundreds of queued `serve` requests
/// (`docs/contract.md#drain`): the call in flight is answered, none after
/// it starts, the process exits 0, and the files are exactly those of the
/// answered requests.
#[test]
fn serve_drains_on_sigterm_and_loses_nothing() {
    const REQUESTS: usize = 400;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(bin_str())
        .args(["--no-journal", "--root"])
        .arg(dir.path())
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let mut stdin = child.stdin.take().expect("stdin");
    // Every request queued at once; the pipe takes what it can and the
    // writer waits for the rest (or fails once the server is gone).
    let writer = std::thread::spawn(move || {
        for i in 0..REQUESTS {
            let line = json!({"path": format!("d/{i}.txt"), "content": format!("{i}\n")});
            if writeln!(stdin, "{line}").is_err() {
                return;
            }
        }
        // Held open: the server must stop for the signal, not for the end
        // of its input.
        std::thread::park();
    });
    let mut answers = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut answered = 0;
    for line in answers.by_ref() {
        let envelope: Value = serde_json::from_str(&line.expect("a line")).expect("an envelope");
        assert_eq!(envelope["status"], "success", "{envelope}");
        answered += 1;
        if answered == 40 {
            let status = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .expect("kill");
            assert!(status.success());
        }
    }
    let status = child.wait().expect("wait");
    drop(writer);
    assert_eq!(status.code(), Some(0), "drained, exit 0");
    // The signal came with requests still queued: some were never started.
    assert!((40..REQUESTS).contains(&answered), "{answered} answered");
    for i in 0..REQUESTS {
        let file = dir.path().join(format!("d/{i}.txt"));
        if i < answered {
            assert_eq!(
                fs::read_to_string(&file).expect("answered"),
                format!("{i}\n")
            );
        } else {
            assert!(!file.exists(), "request {i} was not answered but wrote");
        }
    }
    assert!(temp_files(dir.path()).is_empty());
}
