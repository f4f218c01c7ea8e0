//! `-- density`: many `serve` processes at once.

use std::path::Path;
use std::time::Instant;

use crate::corpus::*;
use crate::modes::*;
use crate::{machine, median, ms, percentile};

/// A process's memory, in KiB, from `/proc`: resident (`VmRSS`), its
/// share of pages it shares (`Pss` of `smaps_rollup`), and the resident
/// pages that are its alone (`RssAnon`) or mapped from files (`RssFile`,
/// the compiled component among them).
pub(crate) fn memory(pid: u32) -> [u64; 4] {
    let field = |text: &str, name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    [
        field(&status, "VmRSS:"),
        field(&rollup, "Pss:"),
        field(&status, "RssAnon:"),
        field(&status, "RssFile:"),
    ]
}

/// A workload on W3's file that takes both W1's and W3's calls: even
/// calls W1's, odd calls W3's.
fn w1_and_w3() -> Workload {
    let mut all = workloads();
    let take = |all: &mut Vec<Workload>, name: &str| {
        let at = all.iter().position(|w| w.name == name).expect("workload");
        all.remove(at)
    };
    let (w1, w3) = (take(&mut all, "W1"), take(&mut all, "W3"));
    Workload {
        name: "density",
        what: "",
        iterations: 0,
        setup: w3.setup,
        request: Box::new(move |i| {
            if i % 2 == 0 {
                (w1.request)(i / 2)
            } else {
                (w3.request)(i / 2)
            }
        }),
    }
}

/// `-- density`: N `serve` processes (`WRITE_TOOL_BENCH_DENSITY`, default
/// 50) on N roots, as a node of sandboxes runs them: each one's start-up
/// to its first answer, its memory once warm, and W1 and W3 latency with
/// all N driven in turn; against one process alone in the same run.
pub(crate) fn density(cache: &Path) {
    let n: usize = std::env::var("WRITE_TOOL_BENCH_DENSITY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let both = w1_and_w3();
    // The compile cache warm, as on a node that has run the tool before.
    Serve::new(&both, cache, &[]).finish();
    let started = Instant::now();
    let mut servers: Vec<Serve<'_>> = Vec::with_capacity(n);
    let mut startup = Vec::with_capacity(n);
    for _ in 0..n {
        let spawned = Instant::now();
        let mut server = Serve::new(&both, cache, &[]);
        server.call(0);
        startup.push(spawned.elapsed());
        servers.push(server);
    }
    let all_up = started.elapsed();
    let (mut w1_times, mut w3_times) = (Vec::new(), Vec::new());
    for round in 1..=10 {
        for server in &mut servers {
            w1_times.push(server.call(2 * round));
            w3_times.push(server.call(2 * round + 1));
        }
    }
    let mems: Vec<[u64; 4]> = servers.iter().map(|s| memory(s.child.id())).collect();
    let med = |k: usize| {
        let mut v: Vec<u64> = mems.iter().map(|m| m[k]).collect();
        v.sort_unstable();
        v[v.len() / 2] as f64 / 1024.0
    };
    for server in servers {
        server.finish();
    }
    // One process alone, the same calls.
    let mut alone = Serve::new(&both, cache, &[]);
    let (mut alone_w1, mut alone_w3) = (Vec::new(), Vec::new());
    for round in 0..20 {
        alone_w1.push(alone.call(2 * round));
        alone_w3.push(alone.call(2 * round + 1));
    }
    let alone_mem = memory(alone.child.id());
    alone.finish();
    println!(
        "{}. {n} `serve` processes, each on its own root holding W3's file, journal on \
         (the CLI's default), started one after another, then driven in turn.\n",
        machine(),
    );
    println!("| measure | {n} at once | one alone |\n|---|---|---|");
    println!(
        "| start-up to first answer (W1), median / p90 | {} / {} ms | — |",
        ms(median(startup.clone())),
        ms(percentile(startup, 90))
    );
    println!("| all {n} started and answering | {} ms | — |", ms(all_up));
    let mib = |k: usize| alone_mem[k] as f64 / 1024.0;
    println!(
        "| resident (VmRSS), median | {:.1} MiB | {:.1} MiB |",
        med(0),
        mib(0)
    );
    println!(
        "| proportional (Pss), median | {:.1} MiB | {:.1} MiB |",
        med(1),
        mib(1)
    );
    println!(
        "| anonymous / file-backed resident, median | {:.1} / {:.1} MiB | {:.1} / {:.1} MiB |",
        med(2),
        med(3),
        mib(2),
        mib(3)
    );
    println!(
        "| W1 median / p90 | {} / {} ms | {} ms |",
        ms(median(w1_times.clone())),
        ms(percentile(w1_times, 90)),
        ms(median(alone_w1))
    );
    println!(
        "| W3 median / p90 | {} / {} ms | {} ms |",
        ms(median(w3_times.clone())),
        ms(percentile(w3_times, 90)),
        ms(median(alone_w3))
    );
}
