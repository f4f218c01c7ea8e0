//! `-- floor`: W1–W7 through `serve` in the default configuration (the
//! journal on) and with `--no-journal`, against two floors that do only
//! what durability needs, call by call in turn (BENCHMARKS.md#the-floor).
//!
//! - The **durable floor** is a JSON-lines server (this bench binary run
//!   again with [`FLOOR_ROOT`] set): it reads the old file, writes a temp
//!   file beside it, syncs it, renames it over the target and syncs the
//!   directory. No diff, no checks, no envelope; a dry run reads the old
//!   file and writes nothing.
//! - The **journaled floor** does the same and, before the rename, what
//!   any journal that can undo must: links the old file into its
//!   `objects` (by a hash of its content, so a content saved before is
//!   not saved again) and writes a record into its log (into room of
//!   zeros written ahead, as write-tool does) and syncs it.
//!
//! With `WRITE_TOOL_BENCH_MCP_FS` naming the npm MCP filesystem server's
//! `dist/index.js` (`@modelcontextprotocol/server-filesystem`), it runs
//! too: `write_file` over MCP, which neither syncs nor diffs; it makes no
//! directories, so its W1 is `create_directory` then `write_file`, timed
//! together, and it has no dry run of a write (W5: none).

use std::collections::hash_map::DefaultHasher;
use std::fs::{self, File, OpenOptions};
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::corpus::{Workload, fresh_root, workloads};
use crate::modes::{Mode, Serve, exchange, interleaved};
use crate::{ms, ratio};

/// Set, the bench binary is a floor server for the root it names.
pub(crate) const FLOOR_ROOT: &str = "WRITE_TOOL_BENCH_FLOOR_ROOT";
/// Set beside [`FLOOR_ROOT`], the floor keeps a journal in this directory.
const FLOOR_JOURNAL: &str = "WRITE_TOOL_BENCH_FLOOR_JOURNAL";
/// The MCP filesystem server's script, to run it as a peer.
const MCP_FS: &str = "WRITE_TOOL_BENCH_MCP_FS";

/// The floor server: one JSON line of arguments in, one line out, until
/// its input ends.
pub(crate) fn serve_floor(root: &Path) -> ! {
    let journal = std::env::var_os(FLOOR_JOURNAL).map(PathBuf::from);
    let log = journal.as_ref().map(|j| {
        fs::create_dir_all(j.join("objects")).expect("objects");
        OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(j.join("log"))
            .expect("log")
    });
    // Records go into room written ahead, as write-tool's do: a sync that
    // grows the file commits metadata too.
    let (mut end, mut len) = (0u64, 0u64);
    let mut out = std::io::stdout().lock();
    let mut seq = 0u64;
    for line in std::io::stdin().lock().lines() {
        let args: Value = serde_json::from_str(&line.expect("line")).expect("json");
        let path = root.join(args["path"].as_str().expect("path"));
        let content = args["content"].as_str().expect("content");
        let dir = path.parent().expect("parent");
        fs::create_dir_all(dir).expect("dirs");
        let old = fs::read(&path).ok();
        if args["dry_run"].as_bool() != Some(true) {
            seq += 1;
            let temp = dir.join(format!(".floor-{seq}.tmp"));
            let mut file = File::create(&temp).expect("temp");
            file.write_all(content.as_bytes()).expect("write");
            file.sync_all().expect("sync");
            drop(file);
            if let (Some(log), Some(journal)) = (log.as_ref(), &journal) {
                let digest = old.as_ref().map(|old| {
                    let mut hasher = DefaultHasher::new();
                    old.hash(&mut hasher);
                    format!("{:016x}", hasher.finish())
                });
                if let Some(digest) = &digest {
                    let _ = fs::hard_link(&path, journal.join("objects").join(digest));
                }
                let record = json!({
                    "seq": seq, "path": args["path"], "old": digest,
                    "old_size": old.as_ref().map(Vec::len), "new_size": content.len(),
                });
                let mut line = format!("{record}\n").into_bytes();
                let at = end;
                end += line.len() as u64;
                if end > len {
                    len = end.next_multiple_of(16 << 10);
                    line.resize(usize::try_from(len - at).expect("room"), 0);
                }
                log.write_all_at(&line, at).expect("record");
                log.sync_data().expect("sync log");
            }
            fs::rename(&temp, &path).expect("rename");
            File::open(dir).expect("dir").sync_all().expect("sync dir");
        }
        writeln!(out, "{{\"status\":\"success\"}}").expect("answer");
        out.flush().expect("flush");
    }
    std::process::exit(0)
}

/// A floor server (journaled or not), timed as `serve` is.
struct Floor<'w> {
    w: &'w Workload,
    _dir: tempfile::TempDir,
    _journal: Option<tempfile::TempDir>,
    child: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
    line: String,
}

impl<'w> Floor<'w> {
    fn new(w: &'w Workload, journaled: bool) -> Self {
        let dir = fresh_root(w);
        let journal = journaled.then(|| tempfile::tempdir().expect("journal"));
        let mut command = Command::new(std::env::current_exe().expect("bench binary"));
        command.env(FLOOR_ROOT, dir.path());
        if let Some(journal) = &journal {
            command.env(FLOOR_JOURNAL, journal.path());
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the floor");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Floor {
            w,
            _dir: dir,
            _journal: journal,
            child,
            stdout,
            line: String::new(),
        }
    }
}

impl Mode for Floor<'_> {
    fn call(&mut self, i: usize) -> Duration {
        let request = (self.w.request)(i);
        let stdin = self.child.stdin.as_mut().expect("stdin");
        let elapsed = exchange(stdin, &mut self.stdout, &mut self.line, &request);
        assert!(self.line.contains("success"), "{}", self.line);
        elapsed
    }
}

impl Drop for Floor<'_> {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// The npm MCP filesystem server over stdio.
struct McpFs<'w> {
    w: &'w Workload,
    dir: tempfile::TempDir,
    child: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
    line: String,
    id: u64,
}

impl<'w> McpFs<'w> {
    fn new(w: &'w Workload, script: &Path) -> Self {
        let dir = fresh_root(w);
        let root = dir.path().canonicalize().expect("root");
        let mut child = Command::new("node")
            .arg(script)
            .arg(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the MCP filesystem server");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut server = McpFs {
            w,
            dir,
            child,
            stdout,
            line: String::new(),
            id: 0,
        };
        server.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}}),
        );
        server.receive();
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{message}").expect("send");
        stdin.flush().expect("flush");
    }

    fn receive(&mut self) {
        self.line.clear();
        self.stdout.read_line(&mut self.line).expect("receive");
        assert!(!self.line.contains("\"isError\":true"), "{}", self.line);
    }

    fn tool(&mut self, name: &str, arguments: Value) {
        self.id += 1;
        self.send(
            &json!({"jsonrpc": "2.0", "id": self.id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}),
        );
        self.receive();
    }
}

impl Mode for McpFs<'_> {
    fn call(&mut self, i: usize) -> Duration {
        let args: Value = serde_json::from_str(&(self.w.request)(i)).expect("json");
        let root = self.dir.path().canonicalize().expect("root");
        let path = root.join(args["path"].as_str().expect("path"));
        let start = Instant::now();
        if self.w.name == "W1" {
            let parent = path.parent().expect("parent").to_str().expect("UTF-8");
            self.tool("create_directory", json!({"path": parent}));
        }
        self.tool(
            "write_file",
            json!({"path": path.to_str().expect("UTF-8"), "content": args["content"]}),
        );
        start.elapsed()
    }
}

impl Drop for McpFs<'_> {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The machine's load average over the last minute.
fn load() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

/// `-- floor`: the table of BENCHMARKS.md#the-floor.
pub(crate) fn floor(cache: &Path) {
    let peer = std::env::var_os(MCP_FS).map(PathBuf::from);
    println!(
        "| workload | durable floor | journaled floor | write-tool | / floor | --no-journal | / floor | the journal adds, write-tool / floor (ms) |{} load |",
        if peer.is_some() {
            " MCP filesystem server |"
        } else {
            ""
        }
    );
    println!(
        "|---|---|---|---|---|---|---|---|{}---|",
        if peer.is_some() { "---|" } else { "" }
    );
    for w in workloads() {
        if !["W1", "W2", "W3", "W4", "W5", "W6", "W7"].contains(&w.name) {
            continue;
        }
        let before = load();
        let journals = tempfile::tempdir().expect("journal dir");
        let dir = journals.path().to_str().expect("UTF-8").to_owned();
        let mut floor = Floor::new(&w, false);
        let mut journaled = Floor::new(&w, true);
        let mut on = Serve::new(&w, cache, &["--journal", &dir]);
        let mut off = Serve::new(&w, cache, &["--no-journal"]);
        let mut mcp = peer
            .as_deref()
            .filter(|_| w.name != "W5")
            .map(|script| McpFs::new(&w, script));
        let mut modes: Vec<&mut dyn Mode> = vec![&mut floor, &mut journaled, &mut on, &mut off];
        if let Some(mcp) = mcp.as_mut() {
            modes.push(mcp);
        }
        let m = interleaved(&w, &mut modes);
        on.finish();
        off.finish();
        let peer_cell = match (&peer, m.get(4)) {
            (None, _) => String::new(),
            (Some(_), Some(d)) => format!(" {} |", ms(*d)),
            (Some(_), None) => " — |".to_owned(),
        };
        // What the journal costs write-tool, and what it costs the floor.
        let adds = |with: Duration, without: Duration| {
            (with.as_secs_f64() - without.as_secs_f64()) * 1000.0
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.3} / {:.3} |{} {}–{} |",
            w.name,
            ms(m[0]),
            ms(m[1]),
            ms(m[2]),
            ratio(m[2], m[0]),
            ms(m[3]),
            ratio(m[3], m[0]),
            adds(m[2], m[3]),
            adds(m[1], m[0]),
            peer_cell,
            before,
            load()
        );
    }
}
