//! `-- busy`: W3 with competing processes spinning.

use std::path::Path;
use std::process::Command;

use write_tool::WriteTool;

use crate::corpus::*;
use crate::modes::*;
use crate::{machine, median, ms, ratio};

/// Set in the environment of the competing process `-- busy` starts: the
/// bench binary then only spins.
pub(crate) const SPIN: &str = "WRITE_TOOL_BENCH_SPIN";

/// Keeps one CPU busy until killed.
pub(crate) fn spin() -> ! {
    let mut x = 1_u64;
    loop {
        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
    }
}

/// Competing processes, each spinning on a CPU while they live.
pub(crate) struct Competitors(Vec<std::process::Child>);

impl Competitors {
    pub(crate) fn start(n: usize) -> Competitors {
        let exe = std::env::current_exe().expect("the bench binary");
        Competitors(
            (0..n)
                .map(|_| {
                    Command::new(&exe)
                        .env(SPIN, "1")
                        .spawn()
                        .expect("spawn competitor")
                })
                .collect(),
        )
    }
}

impl Drop for Competitors {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `-- busy`: W3 in each mode with the machine as it is and with one more
/// process spinning on a CPU, in blocks of calls that alternate between
/// the two, and each mode's slowdown (busy median / quiet median). A mode
/// that has other threads wake up while a call runs, or hands work to
/// another thread, waits for a CPU the competitor holds; a single-threaded
/// one does not.
pub(crate) fn busy(tool: &WriteTool, cache: &Path) {
    const ROUNDS: usize = 6;
    const BLOCK: usize = 10;
    let competing = std::env::var("WRITE_TOOL_BENCH_COMPETITORS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let all = workloads();
    let w = all.iter().find(|w| w.name == "W3").expect("W3");
    let mut native = Native::new(w);
    let mut component = Component::new(w, tool);
    let mut serve = Serve::new(w, cache, &[]);
    let names = ["native (core + std::fs)", "component", "serve"];
    let mut modes: [&mut dyn Mode; 3] = [&mut native, &mut component, &mut serve];
    // samples[busy][mode]
    let mut samples = [vec![Vec::new(); 3], vec![Vec::new(); 3]];
    let mut i = 0;
    for round in 0..ROUNDS {
        // Which state goes first alternates, so neither always follows
        // the other's start-up or tear-down.
        for busy in [round % 2 == 1, round % 2 == 0] {
            let competitors = busy.then(|| Competitors::start(competing));
            for _ in 0..BLOCK {
                for (mode, samples) in modes.iter_mut().zip(&mut samples[usize::from(busy)]) {
                    samples.push(mode.call(i));
                }
                i += 1;
            }
            drop(competitors);
        }
    }
    serve.finish();
    let [quiet, busy] = samples.map(|s| s.into_iter().map(median).collect::<Vec<_>>());
    println!(
        "{}. W3 ({}), medians of {} calls per mode and state.\n\n\
         | mode | as is | {competing} competing process(es) | slowdown |\n|---|---|---|---|",
        machine(),
        w.what,
        ROUNDS * BLOCK
    );
    for (name, (q, b)) in names.iter().zip(quiet.iter().zip(&busy)) {
        println!("| {name} | {} | {} | {} |", ms(*q), ms(*b), ratio(*b, *q));
    }
}
