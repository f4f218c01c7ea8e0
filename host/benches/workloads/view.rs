//! `-- view`: `view` of W3's 1 MiB file against W5 (the dry run of W3,
//! which reads, decodes and diffs the same file and writes nothing), both
//! under `serve`, call by call in turn. The target (BENCHMARKS.md#view):
//! a view of 1 MiB at most 1.2× of W5.

use std::path::Path;

use serde_json::json;

use crate::corpus::{Workload, text, workloads};
use crate::modes::{Serve, interleaved};
use crate::{ms, ratio};

/// A view of the 20,000-line file: its first page (`V1`), or its last
/// (`V2`, every line before it counted and skipped).
fn view_of_mib(name: &'static str, view_range: serde_json::Value) -> Workload {
    Workload {
        name,
        what: "view of 1 MiB (20k lines)",
        iterations: 40,
        setup: vec![("v.txt".into(), text(20_000, "medium").into_bytes())],
        request: Box::new(move |_| {
            json!({"name": "view", "arguments": {"path": "v.txt", "view_range": view_range}})
                .to_string()
        }),
    }
}

pub(crate) fn view(cache: &Path) {
    let all = workloads();
    let w5 = all
        .iter()
        .find(|w| w.name == "W5")
        .expect("W5 is a workload");
    println!("| view | serve, view | serve, W5 | ratio |");
    println!("|---|---|---|---|");
    for v in [
        view_of_mib("V1 first page", json!([1, -1])),
        view_of_mib("V2 last page", json!([19_001, -1])),
    ] {
        let mut look = Serve::new(&v, cache, &[]);
        let mut dry = Serve::new(w5, cache, &[]);
        let medians = interleaved(w5, &mut [&mut look, &mut dry]);
        look.finish();
        dry.finish();
        println!(
            "| {} | {} | {} | {} |",
            v.name,
            ms(medians[0]),
            ms(medians[1]),
            ratio(medians[0], medians[1])
        );
    }
}
