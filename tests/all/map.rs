//! The map of the tree in `docs/reference.md#tree`: every path it names
//! exists, and every production room is named.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// The map: the section from its anchor to the next heading.
fn section(reference: &str) -> &str {
    let start = reference
        .find("<a id=\"tree\"></a>")
        .expect("docs/reference.md has the tree's anchor");
    let rest = &reference[start..];
    let body = rest.find("\n## ").map_or(rest, |at| &rest[at + 1..]);
    body.find("\nDependencies point one way")
        .map_or(body, |end| &body[..end])
}

/// The spans between backticks that name a path: with a slash, or a
/// file's extension.
fn spans(line: &str) -> Vec<&str> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| {
            !span.contains(' ')
                && (span.contains('/') || [".rs", ".md", ".wit"].iter().any(|e| span.ends_with(e)))
        })
        .collect()
}

/// Every path the map names, as the workspace holds it: a span whose first
/// component is at the workspace's top is taken from there, any other from
/// the room its table row is about (the row's first path).
fn named(map: &str, top: &BTreeSet<String>) -> Vec<String> {
    let mut paths = Vec::new();
    for line in map.lines() {
        let mut room: Option<&str> = None;
        let cells: Vec<&str> = if line.starts_with('|') {
            line.split('|').collect()
        } else {
            vec![line]
        };
        for (at, cell) in cells.iter().enumerate() {
            for span in spans(cell) {
                let first = span.split('/').next().unwrap_or(span);
                let path = if top.contains(first) {
                    span.to_owned()
                } else {
                    let room = room.unwrap_or_else(|| panic!("{span}: a path outside any room"));
                    format!("{room}{span}")
                };
                if room.is_none() && at == 1 && line.starts_with('|') {
                    room = Some(span).filter(|span| span.ends_with('/'));
                }
                paths.push(path);
            }
        }
    }
    paths
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("entry"))
        .map(|entry| {
            let name = entry.file_name().into_string().expect("utf-8");
            if entry.file_type().expect("type").is_dir() {
                format!("{name}/")
            } else {
                name
            }
        })
        .collect();
    names.sort();
    names
}

fn map_paths() -> BTreeSet<String> {
    let root = workspace();
    let reference = std::fs::read_to_string(root.join("docs/reference.md")).expect("reference");
    let top: BTreeSet<String> = entries(&root)
        .into_iter()
        .map(|name| name.trim_end_matches('/').to_owned())
        .collect();
    named(section(&reference), &top).into_iter().collect()
}

#[test]
fn every_path_the_map_names_exists() {
    let root = workspace();
    let paths = map_paths();
    assert!(
        paths.len() > 100,
        "{} paths: the map was not read",
        paths.len()
    );
    let missing: Vec<&String> = paths.iter().filter(|p| !root.join(p).exists()).collect();
    assert!(
        missing.is_empty(),
        "the map names what is not there: {missing:?}"
    );
}

/// Each crate's modules at its top, and each file of the two rooms where a
/// request kind lives, are named: a room added without a line in the map
/// turns this red. A crate's `lib.rs` and `main.rs` are the crate itself;
/// `snapshots/` holds insta's data, not code.
#[test]
fn every_production_room_is_on_the_map() {
    let root = workspace();
    let paths = map_paths();
    let mut unnamed = Vec::new();
    for dir in [
        "wire/src/",
        "core/src/",
        "guest/src/",
        "host/src/",
        "xtask/src/",
        "core/src/pipeline/",
        "core/src/params/",
    ] {
        for name in entries(&root.join(dir)) {
            let path = format!("{dir}{name}");
            let exempt = ["lib.rs", "main.rs", "snapshots/"].contains(&name.as_str());
            if !exempt && !paths.contains(&path) {
                unnamed.push(path);
            }
        }
    }
    assert!(
        unnamed.is_empty(),
        "rooms the map does not name: {unnamed:?}"
    );
}

#[test]
fn a_span_is_read_from_its_row() {
    let top = BTreeSet::from(["core".to_owned(), "docs".to_owned()]);
    let map = "| `core/src/edit/` | the ladder (`fast.rs`), `docs/contract.md` |\n\
               `core/src/path.rs` and `call`, `wasm32-wasip2`";
    assert_eq!(
        named(map, &top),
        [
            "core/src/edit/",
            "core/src/edit/fast.rs",
            "docs/contract.md",
            "core/src/path.rs"
        ]
    );
}
