//! The ways a workload is run: native, component, serve.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use write_tool::{Root, WriteTool, ambient_authority};

use crate::corpus::*;
use crate::median;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_write-tool");

/// `write-tool` (or another build of it) as the bench runs it: without the
/// bench's own `WRITE_TOOL_BENCH_*` variables, which the CLI would refuse
/// as settings it does not know.
pub(crate) fn write_tool(bin: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(bin);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("WRITE_TOOL_BENCH_") {
            command.env_remove(name);
        }
    }
    command
}

/// One way of making calls: `call(i)` makes workload call `i` and returns
/// how long it took.
pub(crate) trait Mode {
    fn call(&mut self, i: usize) -> Duration;
}

/// `write_tool_core::call` on `std::fs`.
pub(crate) struct Native<'w> {
    pub(crate) w: &'w Workload,
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) roots: write_tool_core::Roots,
    pub(crate) config: write_tool_core::Config,
    pub(crate) swept: std::collections::HashSet<String>,
}

impl<'w> Native<'w> {
    pub(crate) fn new(w: &'w Workload) -> Self {
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
pub(crate) struct Component<'t> {
    pub(crate) w: &'t Workload,
    pub(crate) tool: &'t WriteTool,
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) root: Root,
}

impl<'t> Component<'t> {
    pub(crate) fn new(w: &'t Workload, tool: &'t WriteTool) -> Self {
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
pub(crate) struct Serve<'w> {
    pub(crate) w: &'w Workload,
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) child: std::process::Child,
    pub(crate) stdin: Option<std::process::ChildStdin>,
    pub(crate) stdout: BufReader<std::process::ChildStdout>,
    pub(crate) line: String,
}

impl<'w> Serve<'w> {
    pub(crate) fn new(w: &'w Workload, cache: &Path, extra: &[&str]) -> Self {
        Self::of(Path::new(BIN), w, cache, extra)
    }

    /// `serve` of the binary `bin`.
    pub(crate) fn of(bin: &Path, w: &'w Workload, cache: &Path, extra: &[&str]) -> Self {
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
    pub(crate) fn finish(mut self) -> u64 {
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
        let elapsed = exchange(stdin, &mut self.stdout, &mut self.line, &request);
        assert!(!self.line.contains("\"status\":\"error\""), "{}", self.line);
        elapsed
    }
}

/// One JSON line to a server and its answer into `line`, timed from the
/// request written to the answer read.
pub(crate) fn exchange(
    stdin: &mut std::process::ChildStdin,
    stdout: &mut BufReader<std::process::ChildStdout>,
    line: &mut String,
    request: &str,
) -> Duration {
    line.clear();
    let start = Instant::now();
    stdin.write_all(request.as_bytes()).expect("send");
    stdin.write_all(b"\n").expect("send");
    stdin.flush().expect("flush");
    stdout.read_line(line).expect("receive");
    start.elapsed()
}

/// Medians of each mode's calls, made in turn (call `i` in every mode,
/// then call `i + 1`), so that the machine's slow and fast spells fall on
/// every mode alike.
pub(crate) fn interleaved(w: &Workload, modes: &mut [&mut dyn Mode]) -> Vec<Duration> {
    let mut samples = vec![Vec::with_capacity(w.iterations); modes.len()];
    for i in 0..w.iterations {
        for (mode, samples) in modes.iter_mut().zip(&mut samples) {
            samples.push(mode.call(i));
        }
    }
    samples.into_iter().map(median).collect()
}

/// One-shot `write-tool write` of a 1 KiB file, process start to exit.
pub(crate) fn one_shot(cache: &Path) -> Duration {
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
