//! A `write-tool serve` process driven line by line, as the tests of
//! kills and repeats drive it.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::Value;

use crate::bin_str;

/// A `write-tool serve` process with line-oriented access.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    pub(crate) fn start(args: &[&str]) -> Server {
        Server::start_with(Command::new(bin_str()).args(args).arg("serve"))
    }

    pub(crate) fn start_with(command: &mut Command) -> Server {
        // The soak test's own variable is not a setting of the CLI.
        let mut child = command
            .env_remove("WRITE_TOOL_SOAK_CALLS")
            .env("WRITE_TOOL_CACHE_DIR", crate::cache_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn serve");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Server {
            child,
            stdin,
            stdout,
        }
    }

    pub(crate) fn send(&mut self, request: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{request}").expect("send");
        stdin.flush().expect("flush");
    }

    pub(crate) fn receive(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read envelope");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not an envelope ({e}): {line:?}"))
    }

    pub(crate) fn call(&mut self, request: &Value) -> Value {
        self.send(request);
        self.receive()
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kill the server once `k` of the files in `root` named `names` are
    /// no longer the inodes `before` lists — renamed over by the call in
    /// flight — or after 20 s.
    pub(crate) fn kill_after_renames(
        &mut self,
        root: &std::path::Path,
        names: &[String],
        before: &[u64],
        k: usize,
    ) {
        let start = std::time::Instant::now();
        while names
            .iter()
            .zip(before)
            .filter(|(n, ino)| inode(&root.join(n)) != **ino)
            .count()
            < k
            && start.elapsed() < std::time::Duration::from_secs(20)
        {
            std::hint::spin_loop();
        }
        self.kill();
    }

    pub(crate) fn kill(&mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
    }

    /// Resident set size of the server, in KiB.
    pub(crate) fn rss_kib(&self) -> u64 {
        let status =
            fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .expect("VmRSS")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The inode of `path`, 0 when there is nothing there.
pub(crate) fn inode(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    fs::metadata(path).map(|m| m.ino()).unwrap_or(0)
}
