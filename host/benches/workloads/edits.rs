//! `-- edits`: edits against writes of the same result.

use std::time::{Duration, Instant};

use serde_json::json;
use write_tool::{Root, WriteTool, ambient_authority};

use crate::corpus::*;
use crate::modes::*;
use crate::{median, ms, ratio};

/// `-- edits`: an edit against the write with the same result, through the
/// component, call by call in turn: W3's ten changed lines as ten edits
/// (E3), W4's hundred as a hundred (E4), one line of W3's file as one edit
/// or a write (E1/W3-1); then the time a failing edit of W4's file takes to
/// find its closest region.
pub(crate) fn edits(tool: &WriteTool) {
    let (big, runs) = runs();
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
    failing_edit(tool, &big);
}

/// Each write with the edit of the same result, and the 10 MiB file's
/// text.
fn runs() -> (String, [(Workload, Workload); 3]) {
    let mib = text(20_000, "medium");
    let big = text(200_000, "large");
    let runs = [
        write_and_edit(["W3", "E3"], 40, &mib, &every(&mib, 2_000)),
        write_and_edit(["W4", "E4"], 12, &big, &every(&big, 2_000)),
        write_and_edit(["W3-1", "E1"], 40, &mib, &every(&mib, 20_000)),
    ];
    (big, runs)
}

/// Two workloads on the file `from` that turn it into `to` and back, call
/// after call: by writes, and by edits of the changed lines.
fn write_and_edit(
    [write, edit]: [&'static str; 2],
    iterations: usize,
    from: &str,
    to: &str,
) -> (Workload, Workload) {
    let with = |mut w: Workload| {
        w.setup[0].1 = from.as_bytes().to_vec();
        w
    };
    (
        with(pair(
            write,
            iterations,
            "f",
            args("f", to, false),
            args("f", from, false),
        )),
        with(pair(
            edit,
            iterations,
            "f",
            edits_between("f", from, to),
            edits_between("f", to, from),
        )),
    )
}

/// The time a failing edit of the 10 MiB file `big` takes to find its
/// closest region.
fn failing_edit(tool: &WriteTool, big: &str) {
    // A miss on 10 MiB: one line of the old text wrong.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("f"), big).expect("setup");
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
