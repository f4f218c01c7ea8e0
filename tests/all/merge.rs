//! Three-way merge instead of CONFLICT (`docs/contract.md#merge`): a
//! write or edit made on a version a view showed, after another writer
//! changed the file, is merged onto what the file holds now — when the
//! version is known and the changes are apart — and refused, changing
//! nothing, where they meet; measured against `git merge-file`.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::support::Project;

/// The base a view of `path` gives.
fn viewed(p: &Project, path: &str) -> String {
    let env = p.call(json!({"name": "view", "arguments": {"path": path}}));
    assert_eq!(env.code(), None, "{env:#?}");
    env.data()
        .view
        .as_ref()
        .and_then(|v| v.base.clone())
        .expect("a base")
}

const LINES: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n";

#[test]
fn a_write_on_a_version_changed_since_is_merged_when_the_changes_are_apart() {
    let p = Project::journaled();
    p.write("a.txt", LINES);
    let base = viewed(&p, "a.txt");
    // Another writer changes the last line meanwhile.
    p.write("a.txt", LINES.replace("eight", "EIGHT"));
    let env = p.call(
        json!({"path": "a.txt", "content": LINES.replace("one", "ONE"),
        "base": base}),
    );
    env.assert_status("success");
    let data = env.data();
    assert!(data.merged && data.applied, "{env:#?}");
    assert_eq!(
        p.read_string("a.txt"),
        LINES.replace("one", "ONE").replace("eight", "EIGHT")
    );
    // The diff is the model's change on the file as it was now.
    assert!(
        data.diff_preview.contains("-one\n+ONE\n") && !data.diff_preview.contains("EIGHT"),
        "{}",
        data.diff_preview
    );
    assert!(
        env.text
            .contains("your change was merged onto what it holds now"),
        "{}",
        env.text
    );
    // Recorded as a change of its own: an undo gives back the other
    // writer's version, not the one viewed.
    p.call(json!({"name": "revert", "arguments": {}}))
        .assert_status("success");
    assert_eq!(p.read_string("a.txt"), LINES.replace("eight", "EIGHT"));
}

#[test]
fn an_edit_on_a_version_changed_since_is_made_on_it_and_merged() {
    let p = Project::journaled();
    p.write("a.txt", LINES);
    let base = viewed(&p, "a.txt");
    // The other writer removes the line the edit would have found twice
    // now: the edit is matched in the version seen, where it is once.
    p.write("a.txt", format!("{LINES}one\n"));
    let env = p.call(json!({"name": "Edit", "arguments": {"file_path": "a.txt",
        "old_string": "one\n", "new_string": "1\n", "base": base}}));
    env.assert_status("success");
    assert!(env.data().merged);
    assert_eq!(
        p.read_string("a.txt"),
        format!("{}one\n", LINES.replace("one", "1"))
    );
    // A dry run merges, and writes nothing.
    let base = viewed(&p, "a.txt");
    p.write("a.txt", format!("{LINES}x\n").replace("one", "1"));
    let before = p.tree_but_seen();
    let env = p.call(json!({"name": "Edit", "arguments": {"file_path": "a.txt",
        "old_string": "two", "new_string": "2", "base": base, "dry_run": true}}));
    env.assert_status("partial");
    assert!(env.data().merged && !env.data().applied);
    assert_eq!(p.tree_but_seen(), before);
}

#[test]
fn where_the_changes_meet_nothing_is_written_and_the_answer_shows_where() {
    let p = Project::journaled();
    p.write("a.txt", LINES);
    let base = viewed(&p, "a.txt");
    p.write("a.txt", LINES.replace("four", "FOUR"));
    let before = p.tree_but_seen();
    let env = p.call(
        json!({"path": "a.txt", "content": LINES.replace("four", "4"),
        "base": base}),
    );
    env.assert_error("CONFLICT");
    assert!(
        env.text
            .contains("At line 4:\n<<<<<<< now\nFOUR\n=======\n4\n>>>>>>> yours"),
        "{}",
        env.text
    );
    assert_eq!(p.tree_but_seen(), before);
}

#[test]
fn there_is_no_merge_without_the_version_seen_or_against_a_lock() {
    // Without a journal no version is kept: refused as it always was.
    let bare = Project::new();
    bare.write("a.txt", LINES);
    let env = bare.call(json!({"name": "view", "arguments": {"path": "a.txt"}}));
    let base = env.data().view.as_ref().unwrap().base.clone().unwrap();
    bare.write("a.txt", LINES.replace("eight", "EIGHT"));
    let env = bare.call(
        json!({"path": "a.txt", "content": LINES.replace("one", "1"),
        "base": base}),
    );
    env.assert_error("CONFLICT");
    assert_eq!(bare.read_string("a.txt"), LINES.replace("eight", "EIGHT"));

    let p = Project::journaled();
    p.write("a.txt", LINES);
    let base = viewed(&p, "a.txt");
    let theirs = LINES.replace("eight", "the eighth");
    p.write("a.txt", &theirs);
    // A base is a version of the file it was viewed as: another file's
    // (here a copy of what a.txt held) is no version of b.txt.
    p.write("b.txt", format!("{LINES}x\n"));
    let env = p.call(
        json!({"path": "b.txt", "content": LINES.replace("one", "1"),
        "base": base}),
    );
    env.assert_error("CONFLICT");
    assert_eq!(p.read_string("b.txt"), format!("{LINES}x\n"));
    // A base no view gave: no version to merge from.
    let never = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(b"never viewed\n"));
    let env = p.call(json!({"path": "a.txt", "content": LINES, "base": never}));
    env.assert_error("CONFLICT");
    // A lock value beside the base asks for the file as it was: refused.
    let env = p.call(
        json!({"path": "a.txt", "content": LINES.replace("one", "1"),
        "base": base, "expected_size_bytes": LINES.len()}),
    );
    env.assert_error("CONFLICT");
    // A kept version altered since is not the version: refused, though
    // a merge from the altered copy (the file as it is now) would be clean.
    for entry in std::fs::read_dir(p.journal().join("seen")).expect("seen") {
        std::fs::write(entry.expect("entry").path(), &theirs).expect("alter");
    }
    let env = p.call(
        json!({"path": "a.txt", "content": LINES.replace("one", "1"),
        "base": base}),
    );
    env.assert_error("CONFLICT");
    assert!(
        env.text.contains("changed since it was viewed"),
        "{}",
        env.text
    );
    assert_eq!(p.read_string("a.txt"), theirs);
    // A fresh base is no merge.
    let fresh = viewed(&p, "a.txt");
    let env = p.call(json!({"path": "a.txt", "content": LINES, "base": fresh}));
    env.assert_status("success");
    assert!(
        !env.data().merged && !env.text.contains("merged"),
        "{env:#?}"
    );
}

#[test]
fn a_crlf_file_is_merged_in_its_own_line_endings() {
    let p = Project::journaled();
    let crlf = "a\r\nb\r\nc\r\nd\r\ne\r\n";
    p.write("a.txt", crlf);
    let base = viewed(&p, "a.txt");
    p.write("a.txt", crlf.replace('e', "E"));
    // The model writes LF, as models do: the file stays CRLF throughout.
    let env = p.call(json!({"path": "a.txt", "content": "A\nb\nc\nd\ne\n", "base": base}));
    env.assert_status("success");
    assert!(env.data().merged);
    assert_eq!(p.read_string("a.txt"), "A\r\nb\r\nc\r\nd\r\nE\r\n");
}

#[test]
fn only_what_a_view_showed_is_kept_and_within_its_bounds() {
    let p = Project::journaled();
    let seen = || -> Vec<String> {
        match std::fs::read_dir(p.journal().join("seen")) {
            Ok(entries) => entries
                .map(|e| e.expect("entry").file_name().into_string().expect("name"))
                .collect(),
            Err(_) => Vec::new(),
        }
    };
    // Not a file that is not text, not a view refused.
    p.write("logo.bin", [0u8, 159, 146, 150, 0, 1, 2]);
    p.call(json!({"name": "view", "arguments": {"path": "logo.bin"}}))
        .assert_status("success");
    p.write("a.txt", "a\n");
    p.call(json!({"name": "view", "arguments": {"path": "a.txt", "view_range": [5, -1]}}))
        .assert_error("INVALID_PARAM");
    assert_eq!(seen(), Vec::<String>::new());
    // Not a file over 2 MiB: its stale write is refused as before.
    let big = "0123456789abcdef\n".repeat(3 << 16);
    p.write("big.txt", &big);
    let base = viewed(&p, "big.txt");
    assert_eq!(seen(), Vec::<String>::new());
    p.write("big.txt", format!("{big}x\n"));
    let env = p.call(json!({"path": "big.txt", "content": format!("y\n{big}"), "base": base}));
    env.assert_error("CONFLICT");
    assert!(
        env.text.contains("changed since it was viewed"),
        "{}",
        env.text
    );
    // At most 128 versions: past them the cache starts again, and the
    // version just shown is kept.
    for i in 0..129 {
        p.write("n.txt", format!("{i}\n"));
        viewed(&p, "n.txt");
    }
    let kept = seen();
    assert!(!kept.is_empty() && kept.len() <= 128, "{} kept", kept.len());
    let last = std::fs::read_dir(p.journal().join("seen"))
        .expect("seen")
        .any(|e| std::fs::read(e.expect("entry").path()).is_ok_and(|b| b == b"128\n"));
    assert!(last, "the version just shown is kept");
}

/// The repository's top directory.
fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
}

/// A small deterministic generator, so that the corpus is the same on
/// every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// `git merge-file -p` of `now` and `yours` from `base`: the merge, and
/// whether git found conflicts.
fn git_merge(dir: &Path, base: &str, now: &str, yours: &str) -> (String, bool) {
    for (name, text) in [("base", base), ("now", now), ("yours", yours)] {
        std::fs::write(dir.join(name), text).expect("write");
    }
    let out = Command::new("git")
        .args(["merge-file", "-p", "now", "base", "yours"])
        .current_dir(dir)
        .output()
        .expect("git merge-file");
    // The number of conflicts, or 255 (or a signal) when git failed.
    let code = out.status.code().expect("exit code");
    assert!(code < 128, "git merge-file failed: {out:?}");
    (String::from_utf8(out.stdout).expect("UTF-8"), code > 0)
}

/// `lines` with one change at `at`: the line replaced by `with`, a line
/// `with` inserted before it, or the line removed, as `how` says.
fn changed(lines: &[&str], at: usize, how: usize, with: &str) -> String {
    let mut out: Vec<&str> = lines.to_vec();
    match how % 3 {
        0 => out[at] = with,
        1 => out.insert(at, with),
        _ => {
            out.remove(at);
        }
    }
    out.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn merges_agree_with_git_merge_file_on_a_corpus_of_concurrent_changes() {
    // Real sources, fixed in `merge_corpus/` (its NOTICE says whose),
    // changed by two writers at lines apart, next to each other, and the
    // same.
    let mut files: Vec<_> = std::fs::read_dir(workspace().join("tests/all/merge_corpus"))
        .expect("the corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 24, "the corpus is fixed");
    let scratch = tempfile::tempdir().expect("tempdir");
    let mut rng = Lcg(7);
    let (mut cases, mut git_clean, mut merged, mut git_conflicts, mut refused) = (0, 0, 0, 0, 0);
    let mut safer = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source");
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() < 40 {
            continue;
        }
        for gap in [0, 1, 2, 5, 20] {
            let at = rng.below(lines.len() - gap);
            let base: String = lines.iter().map(|l| format!("{l}\n")).collect();
            // Replaced, inserted or removed lines, by each writer.
            let now = changed(&lines, at, rng.below(3), "    // the other writer's line");
            let yours = changed(&lines, at + gap, rng.below(3), "    // the model's line");
            let (git, git_conflict) = git_merge(scratch.path(), &base, &now, &yours);
            let p = Project::journaled();
            p.write("f.rs", &base);
            let seen = viewed(&p, "f.rs");
            p.write("f.rs", &now);
            let env = p.call(json!({"path": "f.rs", "content": yours, "base": seen}));
            cases += 1;
            if now == yours {
                // The same change by both: no conflict, one change.
                assert_eq!(p.read_string("f.rs"), now);
                continue;
            }
            if git_conflict {
                git_conflicts += 1;
                // Never a merge where git finds the changes meet.
                assert_eq!(
                    env.code(),
                    Some("CONFLICT"),
                    "{}: gap {gap}",
                    file.display()
                );
                assert_eq!(p.read_string("f.rs"), now);
                refused += 1;
            } else if env.code().is_some() {
                // The safe side: changes among repeated lines, which another
                // diff might have placed elsewhere, are refused.
                git_clean += 1;
                assert_eq!(env.code(), Some("CONFLICT"), "{env:#?}");
                assert_eq!(p.read_string("f.rs"), now);
                safer += 1;
            } else {
                git_clean += 1;
                assert_eq!(p.read_string("f.rs"), git, "{}: gap {gap}", file.display());
                merged += 1;
            }
        }
    }
    eprintln!(
        "merge corpus: {cases} cases; git clean {git_clean}: merged identically {merged}, \
         refused {safer}; git conflicts {git_conflicts}, refused {refused}"
    );
    assert!(cases >= 100 && refused > 0, "{cases} {merged} {refused}");
    // Nearly every merge git makes, the tool makes: on this fixed corpus,
    // all but one (BENCHMARKS.md#merge). A rule that refuses more turns
    // this red.
    assert!(
        safer <= 1,
        "refused {safer} of the {git_clean} merges git makes"
    );
}

#[test]
fn among_repeated_lines_a_merge_never_loses_a_change_git_keeps() {
    // Small files of few distinct lines (braces, blank lines, repeated
    // statements: where line alignments are ambiguous), changed at random
    // by both writers. Where the tool merges, git merges to the same
    // bytes; where git finds a conflict, the tool writes nothing.
    let alphabet = ["}\n", "\n", "1,\n", "x();\n", "return;\n"];
    let scratch = tempfile::tempdir().expect("tempdir");
    let mut rng = Lcg(11);
    let p = Project::journaled();
    let (mut merged, mut refused, mut both_clean, mut safer) = (0, 0, 0, 0);
    for case in 0..1000 {
        let len = 3 + rng.below(8);
        let base: Vec<&str> = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        let mut edit = |marker: &'static str| -> String {
            let mut lines: Vec<&str> = base.clone();
            for _ in 0..1 + rng.below(2) {
                let at = rng.below(lines.len());
                match rng.below(3) {
                    0 => lines[at] = marker,
                    1 => lines.insert(at, marker),
                    _ if lines.len() > 1 => {
                        lines.remove(at);
                    }
                    _ => lines[at] = marker,
                }
            }
            lines.concat()
        };
        let now = edit("now();\n");
        let yours = edit("yours();\n");
        let base = base.concat();
        if now == yours || now == base || yours == base {
            continue;
        }
        let (git, git_conflict) = git_merge(scratch.path(), &base, &now, &yours);
        let path = format!("r{case}.rs");
        p.write(&path, &base);
        let seen = viewed(&p, &path);
        p.write(&path, &now);
        let env = p.call(json!({"path": path, "content": yours, "base": seen}));
        if env.code().is_some() {
            assert_eq!(env.code(), Some("CONFLICT"), "{env:#?}");
            assert_eq!(p.read_string(&path), now, "case {case}: nothing written");
            refused += 1;
            if !git_conflict {
                safer += 1;
            }
        } else {
            merged += 1;
            assert!(
                !git_conflict,
                "case {case}: merged where git conflicts:\nbase {base:?}\nnow {now:?}\nyours \
                 {yours:?}\ntool {:?}",
                p.read_string(&path)
            );
            assert_eq!(
                p.read_string(&path),
                git,
                "case {case}: base {base:?} now {now:?} yours {yours:?}"
            );
            both_clean += 1;
        }
    }
    eprintln!(
        "repeated lines: merged {merged} (as git: {both_clean}); refused {refused}, of which \
         git merges {safer}"
    );
    assert!(merged > 0 && refused > 0, "{merged} {refused}");
    // The safe side has a price: of the 429 merges git makes here, the
    // tool refuses 213 (BENCHMARKS.md#merge). The cases are fixed by the
    // seed, so a rule that refuses more turns this red.
    assert!(
        safer <= 213,
        "refused {safer} of the {} merges git makes",
        safer + both_clean
    );
}
