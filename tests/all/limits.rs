use std::time::{Duration, Instant};

use serde_json::json;
use write_tool::{MIN_MEMORY_LIMIT_BYTES, Options, WriteTool};

use crate::support::{Project, decode, options, plant_temps, tool};

/// 200,000 lines drawing on the same 1,000 values in two different orders:
/// Myers has to work hard on these.
fn hard_to_diff() -> (String, String) {
    let lines = |step: usize| {
        (0..200_000)
            .map(|i| format!("{}\n", i * step % 1000))
            .collect()
    };
    (lines(7), lines(11))
}

/// `n` distinct lines, and the same with every twentieth line swapped with
/// the next: the exact diff moves one line of each pair, `n / 20` lines
/// each way, which takes the search about 45 steps a line.
fn swapped(n: usize) -> (String, String) {
    let old: Vec<String> = (0..n).map(|i| format!("line {i}\n")).collect();
    let mut new = old.clone();
    for i in (0..n).step_by(20) {
        new.swap(i, i + 1);
    }
    (old.concat(), new.concat())
}

fn tool_with(options: Options) -> WriteTool {
    WriteTool::new(options).expect("component compiles")
}

fn call(tool: &WriteTool, p: &Project, args: serde_json::Value) -> crate::support::Envelope {
    decode(&tool.call(p.root(), &args.to_string()))
}

#[test]
fn content_over_the_limit_is_invalid_param_naming_the_limit() {
    let p = Project::new();
    let small = tool_with(Options {
        max_content_bytes: 100,
        ..options()
    });
    let before = p.tree();
    let env = call(
        &small,
        &p,
        json!({"path": "f.txt", "content": "x".repeat(101)}),
    );
    env.assert_error("INVALID_PARAM");
    assert_eq!(
        env.text,
        "Content is 101 bytes, over this tool's content limit of 100 bytes (a host setting); \
         nothing was written."
    );
    assert_eq!(p.tree(), before);
    call(
        &small,
        &p,
        json!({"path": "f.txt", "content": "x".repeat(100)}),
    )
    .assert_status("success");
}

#[test]
fn the_default_limit_is_sixteen_mib() {
    let p = Project::new();
    let limit = 16 * 1024 * 1024;
    let env = p.put("big.txt", &"x".repeat(limit + 1));
    env.assert_error("INVALID_PARAM");
    assert!(
        env.text
            .contains(&format!("over this tool's content limit of {limit} bytes")),
        "{}",
        env.text
    );
    assert!(!p.exists("big.txt"));
}

#[test]
fn empty_content_needs_the_host_option() {
    let p = Project::new();
    p.put("e.txt", "").assert_error("INVALID_PARAM");
    let lenient = tool_with(Options {
        allow_empty: true,
        ..options()
    });
    let env = call(&lenient, &p, json!({"path": "e.txt", "content": ""}));
    env.assert_status("success");
    assert_eq!(env.text, "Created 'e.txt' (0 lines, 0 bytes).");
    assert_eq!(p.read("e.txt"), b"");
}

#[test]
fn a_memory_cap_below_the_components_initial_memory_is_refused_with_a_reason() {
    let err = WriteTool::new(Options {
        memory_limit_bytes: MIN_MEMORY_LIMIT_BYTES - (64 << 10),
        ..options()
    })
    .expect_err("a component whose memory starts above the cap cannot run");
    assert!(
        format!("{err:#}").contains("below the component's initial memory"),
        "{err:#}"
    );
    // The smallest cap runs calls: the constant is the component's size.
    let p = Project::new();
    let smallest = tool_with(Options {
        memory_limit_bytes: MIN_MEMORY_LIMIT_BYTES,
        ..options()
    });
    call(&smallest, &p, json!({"path": "f.txt", "content": "x\n"})).assert_status("success");
    assert_eq!(p.read_string("f.txt"), "x\n");
}

#[test]
fn a_guest_over_its_memory_cap_is_an_execution_error_and_the_host_goes_on() {
    let p = Project::new();
    p.write("keep.txt", "original\n");
    let tight = tool_with(Options {
        memory_limit_bytes: 8 << 20,
        ..options()
    });
    let before = p.tree();
    let env = call(
        &tight,
        &p,
        json!({"path": "keep.txt", "content": "m".repeat(6 << 20)}),
    );
    env.assert_error("EXECUTION_ERROR");
    assert!(
        env.text.contains("memory limit of 8388608 bytes"),
        "{}",
        env.text
    );
    assert_eq!(
        env.context.params_input["content"],
        format!("[{} bytes elided]", 6 << 20)
    );
    assert_eq!(p.tree(), before);
    call(
        &tight,
        &p,
        json!({"path": "keep.txt", "content": "after\n"}),
    )
    .assert_status("success");
    assert_eq!(p.read_string("keep.txt"), "after\n");
}

/// The memory cap bounds all calls in flight together, not only each
/// one: calls that each fit under it alone but not at once are refused
/// in words (never all admitted), and each goes through alone.
#[test]
fn calls_in_flight_share_one_memory_cap() {
    const THREADS: usize = 4;
    const MAX_ROUNDS: usize = 20;
    let cap: usize = 48 << 20;
    let shared = tool_with(Options {
        memory_limit_bytes: cap,
        ..options()
    });
    let p = Project::new();
    let content = "m".repeat(6 << 20);
    // Alone, a call fits (its preview is cut: `partial`).
    let alone = call(
        &shared,
        &p,
        json!({"path": "alone.txt", "content": content}),
    );
    assert_eq!(alone.code(), None, "{}", alone.text);
    let (mut refused, mut rounds) = (0, 0);
    while refused == 0 && rounds < MAX_ROUNDS {
        rounds += 1;
        let barrier = std::sync::Barrier::new(THREADS);
        let answers: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..THREADS)
                .map(|i| {
                    let (shared, p, content, barrier) = (&shared, &p, &content, &barrier);
                    scope.spawn(move || {
                        barrier.wait();
                        call(
                            shared,
                            p,
                            json!({"path": format!("t{i}.txt"), "content": content}),
                        )
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a call"))
                .collect()
        });
        for env in &answers {
            match env.code() {
                None => {}
                Some("EXECUTION_ERROR") => {
                    assert!(
                        env.text.contains("calls in flight together"),
                        "{}",
                        env.text
                    );
                    refused += 1;
                }
                other => panic!("{other:?}: {}", env.text),
            }
        }
    }
    assert!(
        refused > 0,
        "{THREADS} calls of {} MiB content under one {} MiB cap were all admitted in {rounds} rounds",
        6,
        cap >> 20
    );
    // The calls gave their memory back: one alone fits again.
    let after = call(
        &shared,
        &p,
        json!({"path": "after.txt", "content": content}),
    );
    assert_eq!(after.code(), None, "{}", after.text);
}

#[test]
fn a_call_over_its_time_bound_is_stopped_and_the_host_goes_on() {
    let p = Project::new();
    // With a diff budget of an hour, only the time bound stops this diff.
    let (old, new) = hard_to_diff();
    p.write("slow.txt", &old);
    let bounded = tool_with(Options {
        timeout: Duration::from_millis(100),
        diff_timeout: Duration::from_secs(3600),
        ..options()
    });
    let before = p.tree();
    let env = call(&bounded, &p, json!({"path": "slow.txt", "content": new}));
    env.assert_error("EXECUTION_ERROR");
    assert!(env.text.contains("time limit of 100 ms"), "{}", env.text);
    assert_eq!(p.tree(), before);
    assert!(p.tree().temp_files().is_empty());
    call(
        &bounded,
        &p,
        json!({"path": "quick.txt", "content": "fast\n"}),
    )
    .assert_status("success");
}

/// Each call is stopped at its own deadline: the moment one call is due,
/// calls running alongside it, started later, go on.
#[test]
fn a_call_stopped_by_its_time_bound_leaves_the_calls_alongside_it_running() {
    let p = Project::new();
    let (old, new) = hard_to_diff();
    p.write("slow.txt", &old);
    let bounded = tool_with(Options {
        timeout: Duration::from_millis(300),
        diff_timeout: Duration::from_secs(3600),
        ..options()
    });
    let slow_done = std::sync::atomic::AtomicBool::new(false);
    let start = Instant::now();
    let (quick, slow) = std::thread::scope(|s| {
        let quick = s.spawn(|| {
            // When each quick call began and ended, from `start`.
            let mut spans = Vec::new();
            while !slow_done.load(std::sync::atomic::Ordering::Relaxed) {
                let content = format!("call {}\n", spans.len()).repeat(10);
                let began = start.elapsed();
                call(
                    &bounded,
                    &p,
                    json!({"path": "quick.txt", "content": content}),
                )
                .assert_status("success");
                spans.push((began, start.elapsed()));
            }
            spans
        });
        // Three deadlines pass while quick calls are under way; each slow
        // call is stopped when its answer comes back.
        let stopped: Vec<Duration> = (0..3)
            .map(|_| {
                call(&bounded, &p, json!({"path": "slow.txt", "content": new}))
                    .assert_error("EXECUTION_ERROR");
                start.elapsed()
            })
            .collect();
        slow_done.store(true, std::sync::atomic::Ordering::Relaxed);
        (quick.join().expect("quick calls"), stopped)
    });
    // Calls that were in flight when a slow call was stopped, and still
    // succeeded: the stop reached the slow call's store alone.
    let across = slow
        .iter()
        .filter(|&&stop| {
            quick
                .iter()
                .any(|&(began, ended)| began < stop && ended > stop)
        })
        .count();
    assert!(
        across >= 1,
        "no quick call was in flight when a slow call was stopped ({} quick calls)",
        quick.len()
    );
    assert_eq!(p.read_string("slow.txt"), old);
}

/// The budget bounds the diff's time: under a wall-time bound the exact
/// diff cannot meet, the same call with a diff budget ends in time, with
/// a correct but coarser diff (`diff_truncated` set).
/// The diff's bound is work, not time: the component and the same
/// pipeline built natively (several times faster) cut a pathological diff
/// at the same place, and so does the component again.
#[test]
fn a_diff_cut_short_is_cut_at_the_same_place_at_any_speed() {
    let p = Project::new();
    // About 0.9 million steps to number and 6.2 million to search; a
    // budget of 2.8 s gives these 2.1 MiB of text 6.4 million.
    let n = 100_000;
    let budget = Duration::from_millis(2_800);
    let (old, new) = swapped(n);
    p.write("slow.txt", &old);
    let args = json!({"path": "slow.txt", "content": new, "dry_run": true}).to_string();
    let tool = tool_with(Options {
        diff_timeout: budget,
        ..options()
    });
    let component = decode(&tool.call(p.root(), &args));
    let again = decode(&tool.call(p.root(), &args));
    let roots = write_tool_core::Roots::single(write_tool_core::Dir::from_path(p.root_dir()));
    let config = write_tool_core::Config {
        form: Some(write_tool::wire::Form::Full),
        ..write_tool_core::Config::default()
    }
    .with_diff_budget_ms(budget.as_millis() as u64);
    let native = decode(&write_tool_core::call(&roots, args, &config).to_json());
    let cut = |env: &crate::support::Envelope| {
        (
            env.stats.lines_added.unwrap(),
            env.stats.lines_removed.unwrap(),
            env.data().diff_preview.clone(),
        )
    };
    let (added, _, _) = cut(&component);
    // Cut short (the exact diff changes 5,000 lines each way), after most
    // of the search: its first splits are kept.
    assert!(added > n as u64 / 20 && added < n as u64 / 2, "+{added}");
    assert_eq!(cut(&again), cut(&component));
    assert_eq!(cut(&native), cut(&component));
}

#[test]
fn a_pathological_diff_is_cut_short_by_its_budget() {
    let p = Project::new();
    let (old, new) = hard_to_diff();
    p.write("slow.txt", &old);
    let args = json!({"path": "slow.txt", "content": new, "dry_run": true});
    // With a budget of an hour the exact diff takes seconds (far more than
    // this bound on any machine): the bound stops it.
    let exact = tool_with(Options {
        timeout: Duration::from_millis(300),
        diff_timeout: Duration::from_secs(3600),
        ..options()
    });
    call(&exact, &p, args.clone()).assert_error("EXECUTION_ERROR");
    // With a budget, the same diff ends on its own, coarser, with a minute
    // of slack to do so: nothing here depends on the machine's speed.
    let cut = tool_with(Options {
        timeout: Duration::from_secs(60),
        diff_timeout: Duration::from_millis(320),
        ..options()
    });
    let env = call(&cut, &p, args);
    env.assert_status("partial");
    assert!(env.data().diff_truncated);
    let added = env.stats.lines_added.unwrap();
    assert_eq!(added, env.stats.lines_removed.unwrap());
    assert!(added <= 200_000, "+{added}");
    let env = call(&cut, &p, json!({"path": "slow.txt", "content": new}));
    env.assert_status("partial");
    assert_eq!(p.read_string("slow.txt"), new);
}

/// Cut short, the diff is coarser than the exact one: [`swapped`] lines
/// take about 9 million steps, far more than the least share of a small
/// budget.
#[test]
fn a_diff_cut_short_is_coarser_than_the_exact_one() {
    let n: usize = 200_000;
    let swaps = (n / 20) as u64;
    let p = Project::new();
    let (old, new) = swapped(n);
    p.write("a.txt", &old);
    let counts = |diff_timeout| {
        let tool = tool_with(Options {
            diff_timeout,
            ..options()
        });
        let env = call(
            &tool,
            &p,
            json!({"path": "a.txt", "content": new, "dry_run": true}),
        );
        (
            env.stats.lines_added.unwrap(),
            env.stats.lines_removed.unwrap(),
        )
    };
    assert_eq!(counts(Duration::from_secs(3600)), (swaps, swaps), "exact");
    // The least share of a budget of 32 ms is 1 ms, 70,000 steps: not even
    // the numbering of these lines.
    let (added, removed) = counts(Duration::from_millis(32));
    assert_eq!(added, removed);
    assert!(added > swaps && added <= n as u64, "+{added}");
}

#[test]
fn a_tool_sweeps_each_directory_until_a_write_there_and_after_a_failed_call() {
    let p = Project::new();
    p.mkdir("d");
    let tight = tool_with(Options {
        memory_limit_bytes: 8 << 20,
        ..options()
    });
    let write =
        |path: &str, content: String| call(&tight, &p, json!({"path": path, "content": content}));
    let stale = plant_temps(&p.path("d")).stale;
    call(
        &tight,
        &p,
        json!({"path": "d/a.txt", "content": "a\n", "dry_run": true}),
    )
    .assert_status("partial");
    assert!(
        stale.exists(),
        "a dry run writes nothing and sweeps nothing"
    );
    write("d/a.txt", "a\n".into()).assert_status("success");
    assert!(!stale.exists(), "the first write to d/ sweeps it");

    let stale = plant_temps(&p.path("d")).stale;
    write("d/b.txt", "b\n".into()).assert_status("success");
    assert!(stale.exists(), "later writes to d/ do not list it again");
    write("d/e/c.txt", "c\n".into()).assert_status("success");
    assert!(stale.exists(), "a write elsewhere leaves d/ alone");

    // A call whose guest dies (here: over its memory cap) may have left a
    // temp file of its own: the next write there sweeps again.
    write("d/big.txt", "m".repeat(6 << 20)).assert_error("EXECUTION_ERROR");
    write("d/c.txt", "c\n".into()).assert_status("success");
    assert!(!stale.exists(), "swept again after the failed call");

    // Another tool (another process) sweeps on its first write.
    let stale = plant_temps(&p.path("d")).stale;
    call(tool(), &p, json!({"path": "d/x.txt", "content": "x\n"})).assert_status("success");
    assert!(!stale.exists());
}

/// A huge file in the root is not read (its whole content would have to be
/// held to diff it): a write to it is refused with a clear error, before
/// the file is even opened, and nothing changes.
#[test]
fn an_existing_file_over_the_limit_is_refused_not_read() {
    let p = Project::new();
    let huge = std::fs::File::create(p.path("huge.bin")).expect("create");
    huge.set_len(3 << 30).expect("a sparse 3 GiB file");
    drop(huge);
    let before = p.tree_without_contents();
    for dry_run in [false, true] {
        let env = p.call(json!({"path": "huge.bin", "content": "small\n", "dry_run": dry_run}));
        env.assert_error("EXECUTION_ERROR");
        assert_eq!(
            env.text,
            "The existing file is 3221225472 bytes, more than the 16777216 bytes this tool reads to diff and replace a file; nothing was written."
        );
        assert_eq!(env.context.path_resolved.as_deref(), Some("huge.bin"));
    }
    assert_eq!(p.tree_without_contents(), before);
    // The limit is the host's content limit.
    p.write("big.txt", "x".repeat(101));
    let small = tool_with(Options {
        max_content_bytes: 100,
        ..options()
    });
    let env = call(&small, &p, json!({"path": "big.txt", "content": "y\n"}));
    env.assert_error("EXECUTION_ERROR");
    assert!(env.text.contains("more than the 100 bytes"), "{}", env.text);
}
