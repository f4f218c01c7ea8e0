//! The shape of the house: no crate's files import one another in a
//! circle, and no source file grows past one concern.
//!
//! Read file by file, every path a file uses (`use crate::…`, `use
//! super::…`, `self::…`, a child module's name in a `use` or in code — a parent
//! calling `child::f()` depends on the child as much as an import does —,
//! or a `crate::…`/`super::…` path in code) names the file that defines
//! it; re-exports (`pub use`) are a module's facade and name nothing
//! themselves, and tests are left out. The graph of those edges must have
//! no cycle, in every crate of the workspace: each file can then be read
//! after the files it needs, and a change to a leaf (`error.rs`,
//! `diff/limits.rs`) cannot pull the rest of the crate around with it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`["diff", "ops"]`) → file.
type Modules = BTreeMap<Vec<String>, PathBuf>;

fn modules(src: &Path) -> Modules {
    let mut found = Modules::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src");
            let mut names: Vec<String> = rel
                .iter()
                .map(|n| n.to_string_lossy().trim_end_matches(".rs").to_owned())
                .collect();
            // A crate's roots (a library's and a binary's, whose module
            // names do not collide) and a directory's module file.
            if matches!(
                names.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                names.pop();
            }
            found.insert(names, path);
        }
    }
    found
}

/// The code of a file that counts: no tests, no comments, and no `pub
/// use` statements.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect();
    let joined = lines.join("\n");
    // Drop re-export statements, which may span lines.
    let mut out = String::new();
    let mut rest = joined.as_str();
    while let Some(at) = find_reexport(rest) {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(';').map_or(rest.len(), |e| at + e + 1);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn find_reexport(text: &str) -> Option<usize> {
    ["pub use ", "pub(crate) use ", "pub(super) use "]
        .iter()
        .filter_map(|p| text.find(p))
        .min()
}

/// Every path in `code` that starts at `crate`, `super`, `self`, or a
/// child module, braces expanded: as lists of names.
fn paths(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    // `use` statements, braces expanded.
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let statement_end = rest[at..].find(';').map_or(rest.len(), |e| at + e);
        if before.is_none_or(|c| !c.is_alphanumeric() && c != '_') {
            let tree: String = rest[at + 4..statement_end]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            for path in expand(&tree) {
                let first = path.first().map(String::as_str);
                if matches!(first, Some("crate" | "super" | "self"))
                    || first.is_some_and(|f| children.contains(f))
                {
                    found.push(path);
                }
            }
        }
        rest = &rest[statement_end.max(at + 4)..];
    }
    // Paths written out in code: from `crate`, `super`, or a child module
    // (a parent calling its child).
    let starts: Vec<String> = ["crate", "super", "self"]
        .into_iter()
        .map(str::to_owned)
        .chain(children.iter().cloned())
        .map(|name| format!("{name}::"))
        .collect();
    for start in &starts {
        let mut rest = code;
        while let Some(at) = rest.find(start) {
            let before = rest[..at].chars().last();
            let tail = &rest[at..];
            let len = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            let path: Vec<String> = tail[..len]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            // A bare `super::`/`crate::` opens a `use` tree, read above.
            let bare = path.len() == 1 && matches!(path[0].as_str(), "crate" | "super" | "self");
            if before.is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != ':') && !bare {
                found.push(path);
            }
            rest = &tail[len.max(1)..];
        }
    }
    found
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e` (spaces removed).
fn expand(tree: &str) -> Vec<Vec<String>> {
    fn go(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
        let (head, braces) = match tree.find('{') {
            Some(at) if tree.ends_with('}') => (&tree[..at], Some(&tree[at + 1..tree.len() - 1])),
            _ => (tree, None),
        };
        let mut path = prefix.to_vec();
        path.extend(
            head.split("::")
                .filter(|s| !s.is_empty())
                .map(|s| s.split(" as ").next().unwrap_or(s).to_owned()),
        );
        let Some(inner) = braces else {
            out.push(path);
            return;
        };
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    go(&path, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if start < inner.len() {
            go(&path, &inner[start..], out);
        }
    }
    let mut out = Vec::new();
    go(&[], tree, &mut out);
    out
}

/// The module a path names: the longest of its prefixes that is a module,
/// from the module `at` it is written in.
fn target(path: &[String], at: &[String], modules: &Modules) -> Option<Vec<String>> {
    let mut base: Vec<String> = at.to_vec();
    let mut names = path;
    match names.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            names = &names[1..];
        }
        Some("super") => {
            while names.first().map(String::as_str) == Some("super") {
                base.pop();
                names = &names[1..];
            }
        }
        Some("self") => names = &names[1..],
        _ => {}
    }
    let mut best = None;
    for len in 0..=names.len() {
        let mut candidate = base.clone();
        candidate.extend(names[..len].iter().cloned());
        if modules.contains_key(&candidate) {
            best = Some(candidate);
        }
    }
    best
}

/// The workspace's directories of Rust files, each read as one crate.
const CRATES: [&str; 6] = [
    "wire/src",
    "core/src",
    "guest/src",
    "host/src",
    "test-support/src",
    "tests/all",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// Each file of the crate at `src` and the files it uses.
fn edges(modules: &Modules) -> BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> {
    let mut edges = BTreeMap::new();
    for (module, file) in modules {
        let text = std::fs::read_to_string(file).expect("read");
        let children: BTreeSet<String> = modules
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .map(|m| m[module.len()].clone())
            .collect();
        let mut targets = BTreeSet::new();
        for path in paths(&code(&text), &children) {
            if let Some(to) = target(&path, module, modules)
                && &to != module
            {
                targets.insert(to);
            }
        }
        edges.insert(module, targets);
    }
    edges
}

/// A circle among `edges`, if there is one, as the files on it.
fn circle(edges: &BTreeMap<&Vec<String>, BTreeSet<Vec<String>>>) -> Option<String> {
    fn visit<'a>(
        node: &'a Vec<String>,
        edges: &'a BTreeMap<&Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<&'a Vec<String>, u8>,
        stack: &mut Vec<&'a Vec<String>>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(2) => return None,
            Some(1) => {
                let from = stack.iter().position(|n| *n == node).unwrap_or(0);
                let mut cycle: Vec<String> = stack[from..].iter().map(|n| n.join("/")).collect();
                cycle.push(node.join("/"));
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(node, 1);
        stack.push(node);
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, state, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        state.insert(node, 2);
        None
    }
    // Depth-first search for a back edge.
    let mut state: BTreeMap<&Vec<String>, u8> = BTreeMap::new();
    let mut stack: Vec<&Vec<String>> = Vec::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut state, &mut stack))
        .map(|cycle| cycle.join(" -> "))
}

#[test]
fn no_file_of_any_crate_imports_in_a_circle() {
    let mut circles = Vec::new();
    for dir in CRATES {
        let modules = modules(&workspace().join(dir));
        assert!(modules.len() > 1, "{dir}: found {} files", modules.len());
        if let Some(found) = circle(&edges(&modules)) {
            circles.push(format!("{dir}: {found}"));
        }
    }
    assert!(
        circles.is_empty(),
        "files import in a circle:\n{}",
        circles.join("\n")
    );
}

/// Most lines a source file of a crate's `src/` may have before its
/// tests. A file past it holds more than one concern; clippy's
/// `too_many_lines` (`clippy.toml`) keeps each function to a screen the
/// same way. Test files are exempt: a file of tests is one topic however
/// many cases it tries, and each test stands alone.
const MAX_FILE_LINES: usize = 500;

#[test]
fn no_source_file_passes_its_bound() {
    let mut over = Vec::new();
    for dir in CRATES.iter().filter(|d| d.ends_with("/src")) {
        for file in modules(&workspace().join(dir)).values() {
            let text = std::fs::read_to_string(file).expect("read");
            let code = match text.find("#[cfg(test)]\nmod tests") {
                Some(at) => &text[..at],
                None => &text,
            };
            let lines = code.lines().count();
            if lines > MAX_FILE_LINES {
                over.push(format!("{} ({lines} lines)", file.display()));
            }
        }
    }
    assert!(
        over.is_empty(),
        "over {MAX_FILE_LINES} lines before their tests: {over:?}"
    );
}

#[test]
fn the_error_module_imports_nothing_from_the_crate() {
    let src = workspace().join("core/src");
    let modules = modules(&src);
    let mut files = 0;
    for (module, file) in modules
        .iter()
        .filter(|(m, _)| m.first().is_some_and(|n| n == "error"))
    {
        files += 1;
        let text = std::fs::read_to_string(file).expect("read");
        let children: BTreeSet<String> = modules
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .filter_map(|m| m.last().cloned())
            .collect();
        let used: Vec<_> = paths(&code(&text), &children)
            .into_iter()
            .filter_map(|p| target(&p, module, &modules))
            .filter(|t| t.first().is_none_or(|n| n != "error"))
            .collect();
        assert!(used.is_empty(), "{} uses {used:?}", file.display());
    }
    assert!(files > 1, "the error module's files: {files}");
}

#[test]
fn the_reader_finds_the_circles_it_is_meant_to() {
    // Two files that use each other, as `diff/ops.rs` and
    // `diff/preflight.rs` once did.
    let listed: Modules = [
        (vec![], "lib.rs"),
        (vec!["diff".to_owned()], "diff/mod.rs"),
        (vec!["diff".to_owned(), "ops".to_owned()], "diff/ops.rs"),
        (
            vec!["diff".to_owned(), "preflight".to_owned()],
            "diff/preflight.rs",
        ),
    ]
    .into_iter()
    .map(|(m, f)| (m, PathBuf::from(f)))
    .collect();
    let ops = code("use super::preflight::{reduce, search_reduced};\nuse std::x;\n");
    let preflight = code("use super::ops::search;\n#[cfg(test)]\nmod tests {\n use super::*;\n}\n");
    let at_ops = vec!["diff".to_owned(), "ops".to_owned()];
    let at_preflight = vec!["diff".to_owned(), "preflight".to_owned()];
    let ops_to: BTreeSet<_> = paths(&ops, &BTreeSet::new())
        .iter()
        .filter_map(|p| target(p, &at_ops, &listed))
        .collect();
    let preflight_to: BTreeSet<_> = paths(&preflight, &BTreeSet::new())
        .iter()
        .filter_map(|p| target(p, &at_preflight, &listed))
        .collect();
    assert_eq!(ops_to, [at_preflight].into());
    assert_eq!(preflight_to, [at_ops].into());
    // A re-export names nothing; a path in code does.
    let facade = code(
        "pub use ops::line_ops;\npub(crate) use lines::same_bytes;\nfn f() { crate::diff::ops::g() }\n",
    );
    let to: BTreeSet<_> = paths(&facade, &["ops".to_owned()].into())
        .iter()
        .filter_map(|p| target(p, &["diff".to_owned()], &listed))
        .collect();
    assert_eq!(to, [vec!["diff".to_owned(), "ops".to_owned()]].into());
    // A parent that calls its child, whose child imports from the parent
    // (as `edit/mod.rs` calling `fast::all_at_once` while `edit/fast.rs`
    // used `super::…`): a circle, found through files on disk.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("edit")).expect("mkdir");
    for (file, text) in [
        ("lib.rs", "mod edit;\n"),
        (
            "edit/mod.rs",
            "mod fast;\npub struct Edit;\nfn apply() { fast::all_at_once() }\n",
        ),
        (
            "edit/fast.rs",
            "use super::Edit;\npub fn all_at_once() {}\n",
        ),
        ("edit/other.rs", "use super::{Edit};\n"),
    ] {
        std::fs::write(dir.path().join(file), text).expect("write");
    }
    let on_disk = modules(dir.path());
    let found = circle(&edges(&on_disk));
    assert_eq!(found.as_deref(), Some("edit -> edit/fast -> edit"));
    // Without the call, no circle: `use super::{…}` names the parent once,
    // and the parent's `mod fast;` alone uses nothing of it.
    std::fs::write(
        dir.path().join("edit/mod.rs"),
        "mod fast;\npub struct Edit;\n",
    )
    .expect("write");
    assert_eq!(circle(&edges(&on_disk)), None);
    // The call spelled from `self`, in code and in a `use`: the same circle.
    for parent in [
        "mod fast;\npub struct Edit;\nfn apply() { self::fast::all_at_once() }\n",
        "mod fast;\nuse self::fast::all_at_once;\npub struct Edit;\n",
    ] {
        std::fs::write(dir.path().join("edit/mod.rs"), parent).expect("write");
        let found = circle(&edges(&on_disk));
        assert_eq!(
            found.as_deref(),
            Some("edit -> edit/fast -> edit"),
            "{parent}"
        );
    }
}
