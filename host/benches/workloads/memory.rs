//! `-- memory`: the sidecar's peak memory under the largest requests its
//! settings admit (`deploy/`), as a pod's memory limit must be sized.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use crate::machine;
use crate::modes::{BIN, write_tool};

/// The image's settings that bound memory (`Containerfile`): the host's,
/// then `serve`'s.
const FLAGS: [&str; 4] = [
    "--memory-limit-mib",
    "512",
    "--max-request-bytes",
    "17825792",
];
const SERVE_FLAGS: [&str; 2] = ["--ws-max-connections", "8"];
/// Clients at once: more than the connections served, so that some wait.
const CLIENTS: usize = 12;

/// Client `i`'s request `r` of a phase, given the 16 MiB content.
type Request = fn(usize, usize, &str) -> String;

/// The peak resident memory of process `pid` so far, in KiB (`VmHWM`).
fn peak(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// One client's two requests, each answered before the next is sent; the
/// statuses of the answers.
async fn client(url: String, requests: [String; 2]) -> Vec<String> {
    let (mut ws, _) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .expect("connect");
    let mut statuses = Vec::new();
    for request in requests {
        ws.send(Message::text(request)).await.expect("send");
        let answer = loop {
            match ws.next().await.expect("an answer").expect("a message") {
                Message::Text(text) => break text,
                _ => continue,
            }
        };
        let answer: serde_json::Value = serde_json::from_str(&answer).expect("an envelope");
        // A write whose diff was cut is `partial`, and applied all the same.
        let applied = answer["data"]["applied"] == true;
        statuses.push(if applied { "applied" } else { "refused" }.to_owned());
    }
    statuses
}

/// Twelve clients each write a 16 MiB file twice, then each sends two
/// edits that grow its file past the component's cap; the peak after
/// each phase.
pub(crate) fn memory(cache: &Path) {
    let root = tempfile::tempdir().expect("root");
    let journal = tempfile::tempdir().expect("journal");
    let mut child = write_tool(BIN)
        .env("WRITE_TOOL_CACHE_DIR", cache)
        .arg("--root")
        .arg(root.path())
        .arg("--journal")
        .arg(journal.path())
        .args(FLAGS)
        .args(["serve", "--ws", "127.0.0.1:0"])
        .args(SERVE_FLAGS)
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve --ws");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr"))
        .read_line(&mut line)
        .expect("the address");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("ws://"))
        .unwrap_or_else(|| panic!("no address: {line}"))
        .to_owned();
    let content: String = (0..700_000)
        .map(|j| format!("line {j} of the content {}\n", j * 7919 % 100_003))
        .collect::<String>()
        .chars()
        .take((16 << 20) - 64)
        .collect();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    println!(
        "{}. `serve --ws` with `{}`, {CLIENTS} clients at once.\n",
        machine(),
        [&FLAGS[..], &["serve"], &SERVE_FLAGS[..]]
            .concat()
            .join(" ")
    );
    println!("| phase | answers | peak resident (VmHWM) |\n|---|---|---|");
    let phases: [(&str, Request); 2] = [
        ("two 16 MiB writes each", |i, r, content| {
            serde_json::json!({"path": format!("f{i}.txt"), "content": format!("{content}{r}")})
                .to_string()
        }),
        (
            "two edits each that grow the file past the cap",
            |i, _, _| {
                serde_json::json!({"name": "Edit", "arguments": {
                "file_path": format!("f{i}.txt"), "old_string": "line",
                "new_string": "x".repeat(2000), "replace_all": true}})
                .to_string()
            },
        ),
    ];
    for (phase, request) in phases {
        let statuses: Vec<String> = runtime.block_on(async {
            let clients = (0..CLIENTS).map(|i| {
                let requests = [request(i, 0, &content), request(i, 1, &content)];
                tokio::spawn(client(url.clone(), requests))
            });
            let mut all = Vec::new();
            for c in clients.collect::<Vec<_>>() {
                all.extend(c.await.expect("client"));
            }
            all
        });
        let count = |s: &str| statuses.iter().filter(|x| *x == s).count();
        println!(
            "| {phase} | {} applied, {} refused | {:.0} MiB |",
            count("applied"),
            count("refused"),
            peak(child.id()) as f64 / 1024.0
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}
