//! The workloads: their files and requests.

use serde_json::json;

/// One workload: a file set-up and a cycle of requests.
pub(crate) struct Workload {
    pub(crate) name: &'static str,
    pub(crate) what: &'static str,
    pub(crate) iterations: usize,
    /// Files to create before timing: (root-relative path, bytes).
    pub(crate) setup: Vec<(String, Vec<u8>)>,
    /// Request `i` (arguments JSON).
    pub(crate) request: Box<dyn Fn(usize) -> String>,
}

/// `lines` lines of about 50 bytes.
pub(crate) fn text(lines: usize, tag: &str) -> String {
    (0..lines)
        .map(|i| format!("{tag} line {i:>7}: the quick brown fox jumps over\n"))
        .collect()
}

/// `lines` short lines drawn from a thousand values in a stride's order:
/// two strides are a worst case for Myers (every line of one side occurs
/// on the other, in another order), about 1 MiB at 270,000 lines.
pub(crate) fn strided(lines: usize, stride: usize) -> String {
    (0..lines)
        .map(|i| format!("{}\n", i * stride % 1000))
        .collect()
}

/// `base` with every `step`-th line changed.
pub(crate) fn every(base: &str, step: usize) -> String {
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
pub(crate) fn crlf(text: &str) -> Vec<u8> {
    text.replace('\n', "\r\n").into_bytes()
}

/// `text` (Latin-1 characters only) in windows-1252.
pub(crate) fn windows_1252(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).expect("a Latin-1 character"))
        .collect()
}

/// `text` in UTF-16 LE, with its byte-order mark.
pub(crate) fn utf16le(text: &str) -> Vec<u8> {
    std::iter::once(0xFEFF_u16)
        .chain(text.encode_utf16())
        .flat_map(u16::to_le_bytes)
        .collect()
}

pub(crate) fn args(path: &str, content: &str, dry_run: bool) -> String {
    json!({"path": path, "content": content, "dry_run": dry_run}).to_string()
}

/// Alternate between `a` and `b` so that every call changes the file.
pub(crate) fn alternate(
    path: &'static str,
    a: String,
    b: String,
    dry_run: bool,
) -> Box<dyn Fn(usize) -> String> {
    let (a, b) = (args(path, &a, dry_run), args(path, &b, dry_run));
    Box::new(move |i| if i % 2 == 0 { a.clone() } else { b.clone() })
}

pub(crate) fn workloads() -> Vec<Workload> {
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

pub(crate) fn fresh_root(w: &Workload) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, content) in &w.setup {
        std::fs::write(dir.path().join(path), content).expect("setup");
    }
    dir
}

/// The edits that turn `from` into `to` (texts of the same lines, some
/// changed), one per changed line, as `MultiEdit` arguments.
pub(crate) fn edits_between(path: &str, from: &str, to: &str) -> String {
    let edits: Vec<serde_json::Value> = from
        .split_inclusive('\n')
        .zip(to.split_inclusive('\n'))
        .filter(|(a, b)| a != b)
        .map(|(a, b)| json!({"old_string": a, "new_string": b}))
        .collect();
    json!({"name": "MultiEdit", "arguments": {"file_path": path, "edits": edits}}).to_string()
}

/// A workload whose calls alternate between `a` and `b`, requests given.
pub(crate) fn pair(
    name: &'static str,
    iterations: usize,
    file: &str,
    a: String,
    b: String,
) -> Workload {
    Workload {
        name,
        what: "",
        iterations,
        setup: vec![(file.to_owned(), Vec::new())],
        request: Box::new(move |i| if i % 2 == 0 { a.clone() } else { b.clone() }),
    }
}
