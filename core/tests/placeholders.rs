//! The omission-placeholder detector on its corpus
//! (`tests/placeholders/SOURCES.md`): recall on what models write, false
//! positives on real comments in eleven languages, each line written by a
//! dry run in the two shapes of change that matter
//! (`docs/contract.md#placeholders`). The figures are printed for
//! BENCHMARKS.md#omission-placeholders; the test holds them to bounds.

use std::collections::BTreeMap;

use write_tool_core::{Config, Dir, Roots, call};

/// Code lines a placeholder stands for.
const BLOCK: &str = "    let a = load(path)?;\n    let b = parse(&a)?;\n    check(&b)?;\n    \
                     store(b)?;\n    log(\"stored\");\n    count += 1;\n    flush()?;\n    \
                     done = true;\n";

/// How a line enters the file.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// In place of a block of eight lines: the placeholder's own shape.
    ForBlock,
    /// Above a line the write changes: how a real comment is usually added.
    AboveChange,
}

impl Shape {
    fn old_text(self) -> String {
        match self {
            Shape::ForBlock => format!("fn run() {{\n{BLOCK}}}\n"),
            Shape::AboveChange => "fn run() {\n    let a = 1;\n}\n".to_owned(),
        }
    }

    fn new_text(self, line: &str) -> String {
        match self {
            Shape::ForBlock => format!("fn run() {{\n{line}\n}}\n"),
            Shape::AboveChange => format!("fn run() {{\n{line}\n    let a = 2;\n}}\n"),
        }
    }
}

/// A root holding the old file of each shape, and a dry run per line.
struct Bench {
    _dir: tempfile::TempDir,
    roots: Roots,
    config: Config,
}

impl Bench {
    fn new() -> Bench {
        let dir = tempfile::tempdir().expect("tempdir");
        for shape in [Shape::ForBlock, Shape::AboveChange] {
            std::fs::write(dir.path().join(format!("{shape:?}.rs")), shape.old_text())
                .expect("old");
        }
        Bench {
            roots: Roots::single(Dir::from_path(dir.path())),
            _dir: dir,
            config: Config::default(),
        }
    }

    /// Whether writing `line` in `shape` warns of a placeholder.
    fn warns(&self, shape: Shape, line: &str) -> bool {
        let request = serde_json::json!({
            "path": format!("{shape:?}.rs"),
            "content": shape.new_text(line),
            "dry_run": true,
        });
        let envelope = call(&self.roots, request.to_string(), &self.config);
        assert!(envelope.error.is_none(), "{}", envelope.text);
        let json: serde_json::Value = serde_json::from_str(&envelope.to_json()).expect("json");
        json["data"]["warnings"]
            .as_array()
            .is_some_and(|w| w.iter().any(|w| w["kind"] == "omission_placeholder"))
    }
}

/// `(first column, line)` of a corpus file, comment rows left out.
fn corpus(text: &str) -> Vec<(&str, &str)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_once('\t').expect("two columns"))
        .collect()
}

#[test]
fn placeholders_models_write_are_found() {
    let bench = Bench::new();
    let lines = corpus(include_str!("placeholders/placeholders.tsv"));
    let missed: Vec<&str> = lines
        .iter()
        .filter(|(_, line)| !bench.warns(Shape::ForBlock, line))
        .map(|(_, line)| *line)
        .collect();
    let found = lines.len() - missed.len();
    let held_out: Vec<_> = lines.iter().filter(|(s, _)| *s == "held-out").collect();
    let held_out_found = held_out.iter().filter(|(_, l)| !missed.contains(l)).count();
    eprintln!(
        "held out (written after the detector): {held_out_found} of {}",
        held_out.len()
    );
    eprintln!(
        "placeholders: {found} of {} found in place of a block ({:.1}%); missed: {missed:?}",
        lines.len(),
        100.0 * found as f64 / lines.len() as f64
    );
    // Every one the review found missing is found now.
    for (source, line) in &lines {
        if *source == "issue-26" {
            assert!(!missed.contains(line), "{line}");
        }
    }
    // The held-out lines were written after the detector was tuned: its
    // recall on them is what it does on placeholders it never saw.
    // Checked first: the overall bar allows fewer misses than fit in it.
    assert!(
        held_out_found * 100 >= held_out.len() * 80,
        "held-out recall under 80%: {held_out_found} of {}",
        held_out.len()
    );
    assert!(
        found * 100 >= lines.len() * 97,
        "recall under 97%: {missed:?}"
    );
}

#[test]
fn real_comments_are_rarely_taken_for_placeholders() {
    let bench = Bench::new();
    let lines = corpus(include_str!("placeholders/comments.tsv"));
    let mut by_language: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let (mut flagged, mut for_block) = (Vec::new(), Vec::new());
    for (language, line) in &lines {
        let entry = by_language.entry(language).or_default();
        entry.0 += 1;
        if bench.warns(Shape::AboveChange, line) {
            entry.1 += 1;
            flagged.push(*line);
        }
        if bench.warns(Shape::ForBlock, line) {
            entry.2 += 1;
            for_block.push(*line);
        }
    }
    let (above, block) = by_language
        .values()
        .fold((0, 0), |(a, b), (_, x, y)| (a + x, b + y));
    eprintln!(
        "real comments: {} lines; warned above a changed line: {above} ({:.2}%); in place of \
         a block: {block} ({:.2}%)",
        lines.len(),
        100.0 * above as f64 / lines.len() as f64,
        100.0 * block as f64 / lines.len() as f64
    );
    for (language, (n, x, y)) in &by_language {
        eprintln!("  {language}: {n} lines, {x} above a change, {y} for a block");
    }
    eprintln!("  warned above a change: {flagged:?}");
    eprintln!("  warned in place of a block: {for_block:?}");
    // The two the review found.
    for line in [
        "    # Replace the existing Content-Type header with the one the caller gave.",
        "    \"\"\"Same as read(...), but returns the bytes.\"\"\"",
    ] {
        assert!(!bench.warns(Shape::ForBlock, line), "{line}");
    }
    assert!(above * 200 <= lines.len(), "over 0.5% above a change");
    assert!(block * 100 <= lines.len(), "over 1% in place of a block");
}
