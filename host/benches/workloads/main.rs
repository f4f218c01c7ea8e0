//! Workloads W1–W7, each run four ways, medians written to BENCHMARKS.md.
//!
//! ```sh
//! cargo bench -p write-tool --bench workloads
//! ```
//!
//! - **native**: `write_tool_core::call` with `std::fs` on a real directory,
//!   no WebAssembly: the floor of this design. It sweeps leftover temp
//!   files on the first write to each directory, as the host does.
//! - **component**: the host library, `WriteTool::call` (fresh store and
//!   instance per call, the guest doing the work through WASI).
//! - **serve**: a `write-tool serve` process, one JSON line in and one
//!   envelope line out over pipes, timed from write to read.
//! - **serve, --sync none**: the same without file and directory syncs.
//!
//! The modes take turns call by call (call `i` in every mode, then call
//! `i + 1`), so that this shared machine's slow and fast spells fall on
//! every mode alike. Every mode does the same work per call: parse the
//! arguments, resolve the path, read the old file, diff, build the
//! envelope, write atomically (with the syncs the mode says). One-shot `write-tool write` (process start to
//! exit, warm compile cache) and the peak memory of `serve` on W4 are
//! measured too. Results replace the part of BENCHMARKS.md between the
//! `results` markers.
//!
//! To compare with another build (a change's "before"), build it and point
//! `WRITE_TOOL_BENCH_BASELINE` at its binary: the bench then runs this
//! build's `serve` and that one's in turn, call by call, and prints the
//! medians and their ratio instead of the table (`WRITE_TOOL_BENCH_FLAGS`
//! gives both the same flags, `--no-journal` say).
//!
//! Other modes, by a filter of their own: `-- formats` (W3 on files in
//! other formats), `-- startup` (one-shot `write` against the wasmtime CLI),
//! `-- journal` (W1–W7 with the journal on against off), `-- busy` (W3
//! with competing processes spinning), `-- edits` (edits against writes of
//! the same result), `-- density` (many `serve` processes at once, as a
//! node of sandboxes runs them), `-- memory` (the sidecar's peak under
//! the largest requests its settings admit), `-- tokens` (what a model
//! pays to read each kind of answer, against two peers' answers) and
//! `-- view` (a view of 1 MiB against W5), `-- floor` (W1–W7 in the
//! default configuration against a durable floor and a journaled one, and
//! the MCP filesystem server where `WRITE_TOOL_BENCH_MCP_FS` names it).

#![allow(clippy::print_stdout, reason = "a bench binary reports on stdout")]

use std::path::{Path, PathBuf};
use std::time::Duration;

use write_tool::{Options, WriteTool};

mod busy;
mod corpus;
mod density;
mod edits;
mod floor;
mod memory;
mod modes;
mod startup;
mod tokens;
mod view;

use busy::{SPIN, busy, spin};
use corpus::*;
use density::density;
use edits::edits;
use floor::{FLOOR_ROOT, floor, serve_floor};
use memory::memory;
use modes::*;
use startup::startup;
use tokens::tokens;
use view::view;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

fn ratio(a: Duration, b: Duration) -> String {
    format!("{:.2}×", a.as_secs_f64() / b.as_secs_f64())
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cores} cores, {cpu}, Linux {}", kernel.trim())
}

/// `WRITE_TOOL_BENCH_BASELINE=/path/to/other/write-tool`: instead of the
/// table, compare this build's `serve` with another build's, call by call
/// in turn, and print the medians and their ratio (this / other). Both
/// run with the flags in `WRITE_TOOL_BENCH_FLAGS` (split at spaces; none
/// by default, the CLI's own configuration: the journal on).
fn compare_with(baseline: &Path, filter: &[String], cache: &Path) {
    let flags = std::env::var("WRITE_TOOL_BENCH_FLAGS").unwrap_or_default();
    let flags: Vec<&str> = flags.split_whitespace().collect();
    // Each binary fills its own compile cache: the artifacts differ.
    let other_cache = tempfile::tempdir().expect("cache dir");
    println!(
        "| workload | serve, this build | serve, {} | ratio |",
        baseline.display()
    );
    println!("|---|---|---|---|");
    for w in workloads() {
        if !filter.is_empty() && !filter.iter().any(|f| f == w.name) {
            continue;
        }
        let mut this = Serve::new(&w, cache, &flags);
        let mut other = Serve::of(baseline, &w, other_cache.path(), &flags);
        let medians = interleaved(&w, &mut [&mut this, &mut other]);
        this.finish();
        other.finish();
        pair_row(w.name, &medians);
    }
}

fn main() {
    if std::env::var_os(SPIN).is_some() {
        spin();
    }
    if let Some(root) = std::env::var_os(FLOOR_ROOT) {
        serve_floor(Path::new(&root));
    }
    // `cargo bench` passes `--bench`; a filter picks workloads by name.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let cache = tempfile::tempdir().expect("cache dir");
    if filter == ["startup"] {
        startup();
        return;
    }
    if filter == ["journal"] {
        journal_costs(cache.path());
        return;
    }
    if filter == ["floor"] {
        floor(cache.path());
        return;
    }
    if filter == ["density"] {
        density(cache.path());
        return;
    }
    if filter == ["memory"] {
        memory(cache.path());
        return;
    }
    if filter == ["view"] {
        view(cache.path());
        return;
    }
    if let Some(baseline) = std::env::var_os("WRITE_TOOL_BENCH_BASELINE") {
        compare_with(Path::new(&baseline), &filter, cache.path());
        return;
    }
    let tool = WriteTool::new(Options {
        cache: write_tool::CompileCache::Dir(cache.path().to_path_buf()),
        ..Options::default()
    })
    .expect("component compiles");

    if filter == ["formats"] {
        formats(&tool);
        return;
    }
    if filter == ["busy"] {
        busy(&tool, cache.path());
        return;
    }
    if filter == ["edits"] {
        edits(&tool);
        return;
    }
    if filter == ["tokens"] {
        tokens(&tool);
        return;
    }

    let results = table(&tool, cache.path(), &filter);
    if filter.is_empty() {
        write_results(&results);
    } else {
        println!("{results}");
    }
}

/// W1–W7 in the four modes, the one-shot write and `serve`'s peak memory,
/// as BENCHMARKS.md shows them.
fn table(tool: &WriteTool, cache: &Path, filter: &[String]) -> String {
    let mut rows = Vec::new();
    let mut w4_peak = 0;
    for w in workloads() {
        if !filter.is_empty() && !filter.iter().any(|f| f == w.name) {
            continue;
        }
        let mut native = Native::new(&w);
        let mut component = Component::new(&w, tool);
        let mut serve = Serve::new(&w, cache, &[]);
        let mut serve_none = Serve::new(&w, cache, &["--sync", "none"]);
        let medians = interleaved(
            &w,
            &mut [&mut native, &mut component, &mut serve, &mut serve_none],
        );
        let [n, c, s, s_none] = medians[..] else {
            unreachable!("four modes")
        };
        let peak = serve.finish();
        serve_none.finish();
        if w.name == "W4" {
            w4_peak = peak;
        }
        let row = format!(
            "| {} {} | {} | {} | {} | {} | {} | {} |",
            w.name,
            w.what,
            ms(n),
            ms(c),
            ratio(c, n),
            ms(s),
            ratio(s, n),
            ms(s_none)
        );
        eprintln!("{row}");
        rows.push(row);
    }
    let one = one_shot(cache);
    eprintln!(
        "one-shot write: {} ms; serve peak RSS on W4: {w4_peak} KiB",
        ms(one)
    );

    let results = format!(
        "Machine: {}. Command: `cargo bench -p write-tool --bench workloads`. Medians in \
         milliseconds per call; ratios are to the native column of the same run. Durable writes \
         (file and directory synced) unless the column says otherwise.\n\n\
         | workload | native (core + std::fs) | component | component / native | serve | serve / native | serve, `--sync none` |\n\
         |---|---|---|---|---|---|---|\n{}\n\n\
         - One-shot `write-tool write` of a 1 KiB file, process start to exit, warm compile cache: **{} ms** (median of 30).\n\
         - Peak resident memory of `serve` over the W4 run: **{:.1} MiB**.\n",
        machine(),
        rows.join("\n"),
        ms(one),
        w4_peak as f64 / 1024.0
    );
    results
}

/// `-- formats`: W3 and its variants on files in other formats through the
/// component, call by call in turn, each with its ratio to plain W3 (the
/// workloads one after another would compare different spells of a busy
/// machine).
fn formats(tool: &WriteTool) {
    let all = workloads();
    let pick = |name: &str| all.iter().find(|w| w.name == name).expect("workload");
    let names = ["W3", "W3-crlf", "W3-1252", "W3-utf16"];
    let mut modes: Vec<Component> = names
        .iter()
        .map(|n| Component::new(pick(n), tool))
        .collect();
    let mut refs: Vec<&mut dyn Mode> = modes.iter_mut().map(|m| m as &mut dyn Mode).collect();
    let medians = interleaved(pick("W3"), &mut refs);
    println!("| workload | component | / W3 |\n|---|---|---|");
    for (name, median) in names.iter().zip(&medians) {
        println!(
            "| {name} | {} | {} |",
            ms(*median),
            ratio(*median, medians[0])
        );
    }
}

fn percentile(mut samples: Vec<Duration>, p: usize) -> Duration {
    samples.sort();
    samples[(samples.len() * p / 100).min(samples.len() - 1)]
}

/// `-- journal`: W1–W7 under `serve` with the journal on against the same
/// build with it off, call by call in turn (BENCHMARKS.md#the-journal).
fn journal_costs(cache: &Path) {
    println!("| workload | journal on | journal off | ratio |");
    println!("|---|---|---|---|");
    for w in workloads() {
        if !["W1", "W2", "W3", "W4", "W5", "W6", "W7"].contains(&w.name) {
            continue;
        }
        let journals = tempfile::tempdir().expect("journal dir");
        let dir = journals.path().to_str().expect("UTF-8").to_owned();
        let mut on = Serve::new(&w, cache, &["--journal", &dir]);
        let mut off = Serve::new(&w, cache, &["--no-journal"]);
        let medians = interleaved(&w, &mut [&mut on, &mut off]);
        on.finish();
        off.finish();
        pair_row(w.name, &medians);
    }
}

/// A table row of two medians taken in turn, and their ratio.
fn pair_row(name: &str, medians: &[Duration]) {
    println!(
        "| {name} | {} | {} | {} |",
        ms(medians[0]),
        ms(medians[1]),
        ratio(medians[0], medians[1])
    );
}

/// Replace the text between the results markers of BENCHMARKS.md.
fn write_results(results: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../BENCHMARKS.md");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    let (start, end) = ("<!-- results:start -->", "<!-- results:end -->");
    let updated = match (current.find(start), current.find(end)) {
        (Some(a), Some(b)) if a < b => {
            format!("{}{start}\n{results}{}", &current[..a], &current[b..])
        }
        _ => format!("{current}\n{start}\n{results}{end}\n"),
    };
    std::fs::write(&path, updated).expect("write BENCHMARKS.md");
    println!("{results}");
}
