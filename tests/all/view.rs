//! `view` (`docs/contract.md#view`): a file's lines numbered as `cat -n`
//! numbers them, paging, a directory's entries, files that are not text —
//! and the write's rules (the root, protected places, hard links, the size
//! limit) holding for what is shown, with nothing on disk or in the
//! journal changed by a look.

use serde_json::json;
use write_tool::{Options, WriteTool};

use crate::support::{JOURNALING, Project, decode, options, plant_temps, tool};

/// A view's base: XXH3-128 of the bytes (`docs/contract.md#view`).
fn base(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

#[test]
fn a_file_is_shown_numbered_with_its_format_its_lock_and_its_base() {
    let p = Project::journaled();
    let bytes = b"fn main() {\r\n    println!(\"hi\");\r\n}\r\n";
    p.write("src/main.rs", bytes);
    let before = p.tree_but_seen();
    let env = p.call(json!({"name": "view", "arguments": {"path": "src/main.rs"}}));
    env.assert_status("success");
    assert_eq!(
        env.text,
        "'src/main.rs', lines 1-3 of 3 (CRLF):\n     1\tfn main() {\n     2\t    \
         println!(\"hi\");\n     3\t}"
    );
    let data = env.data();
    assert_eq!((data.operation.as_str(), data.applied), ("view", false));
    assert_eq!(data.line_endings.as_deref(), Some("crlf"));
    assert_eq!((data.encoding.as_str(), data.bom), ("utf-8", false));
    let view = data.view.as_ref().expect("data.view");
    assert_eq!(view.kind, "file");
    assert_eq!(
        (view.lines, view.total, view.next_line),
        (Some([1, 3]), 3, None)
    );
    assert_eq!(view.base.as_deref(), Some(base(bytes).as_str()));
    let lock = data.lock.as_ref().expect("lock values");
    assert_eq!(lock.expected_size_bytes, bytes.len() as u64);
    let size = bytes.len() as u64;
    assert_eq!(env.stats.numbers(), (0, size, size, 0, 0));
    assert_eq!(env.context.path_resolved.as_deref(), Some("src/main.rs"));
    // A look changes nothing: not the file, not the journal's record
    // beside it; it keeps the version it showed, for a merge.
    assert_eq!(p.tree_but_seen(), before);
    let kept: Vec<Vec<u8>> = std::fs::read_dir(p.journal().join("seen"))
        .expect("seen")
        .map(|e| std::fs::read(e.expect("entry").path()).expect("kept"))
        .collect();
    assert_eq!(kept, [bytes.to_vec()]);
}

#[test]
fn the_base_is_what_a_write_passes_back_to_change_only_the_version_seen() {
    // With the journal, as the CLI runs by default, and without.
    for journaling in JOURNALING {
        let p = Project::with(journaling);
        p.write("a.txt", "one\n");
        let env = p.call(json!({"name": "view", "arguments": {"path": "a.txt"}}));
        let seen = env.data().view.as_ref().unwrap().base.clone().unwrap();
        let write =
            |content: &str| p.call(json!({"path": "a.txt", "content": content, "base": seen}));
        write("two\n").assert_status("success");
        // The base is now an older version's: nothing is written, nothing
        // recorded.
        let before = p.tree();
        let env = write("three\n");
        env.assert_error("CONFLICT");
        assert!(
            env.text.contains("changed since it was viewed"),
            "{journaling:?}: {}",
            env.text
        );
        assert_eq!(p.tree(), before, "{journaling:?}");
        // An edit takes it too.
        let env = p.call(json!({"name": "Edit", "arguments": {"file_path": "a.txt",
            "old_string": "two", "new_string": "2", "base": base(b"two\n")}}));
        env.assert_status("success");
        let env = p.call(json!({"path": "a.txt", "content": "x\n", "base": "not hex"}));
        env.assert_error("INVALID_PARAM");
        assert_eq!(p.read_string("a.txt"), "2\n", "{journaling:?}");
    }
}

#[test]
fn a_long_file_is_paged_and_every_shape_asks_for_the_next_page() {
    let p = Project::new();
    let text: String = (1..=3_000).map(|n| format!("l{n}\n")).collect();
    p.write("long.txt", &text);
    let env = p.call(json!({"name": "view", "arguments": {"path": "long.txt"}}));
    env.assert_status("partial");
    let view = env.data().view.clone().unwrap();
    assert_eq!(
        (view.lines, view.total, view.next_line),
        (Some([1, 2_000]), 3_000, Some(2_001))
    );
    assert!(env.text.ends_with(
        "  2000\tl2000\n(Lines 2001-3000 not shown, to keep the answer short: view_range \
         [2001, -1] or offset 2001 shows them.)"
    ));
    // Anthropic's view_range, Claude Code's Read (offset, limit), and the
    // arguments alone: the same page.
    for request in [
        json!({"name": "view", "arguments": {"path": "long.txt", "view_range": [2_001, -1]}}),
        json!({"name": "Read", "arguments": {"file_path": "long.txt", "offset": 2_001, "limit": 1_000}}),
        json!({"path": "long.txt", "view_range": [2_001, 3_000]}),
    ] {
        let env = p.call(request.clone());
        env.assert_status("success");
        let view = env.data().view.clone().unwrap();
        assert_eq!(
            (view.lines, view.next_line),
            (Some([2_001, 3_000]), None),
            "{request}"
        );
        assert!(
            env.text
                .starts_with("'long.txt', lines 2001-3000 of 3000:\n  2001\tl2001\n")
        );
        assert!(env.text.ends_with("  3000\tl3000"), "{request}");
    }
    let before = p.tree();
    let env = p.call(
        json!({"name": "view", "arguments": {"path": "long.txt", "view_range": [3_001, -1]}}),
    );
    env.assert_error("INVALID_PARAM");
    assert_eq!(
        env.text,
        "'long.txt' has 3000 lines; the view starts at line 3001. Give a first line from 1 to 3000."
    );
    let env =
        p.call(json!({"name": "view", "arguments": {"path": "long.txt", "view_range": [5, 2]}}));
    env.assert_error("INVALID_PARAM");
    assert_eq!(p.tree(), before);
}

#[test]
fn a_directory_lists_two_levels_without_hidden_or_protected_entries() {
    let p = Project::new();
    p.write("README.md", "r\n");
    p.write("src/lib.rs", "l\n");
    p.write("src/deep/mod.rs", "m\n");
    p.write("src/deep/deeper/x.rs", "x\n");
    p.write(".env", "SECRET=1\n");
    p.write(".git/config", "[core]\n");
    p.write("src/.cache/c", "c\n");
    p.symlink("../outside", "out");
    // A link to a directory inside is listed, never entered.
    p.symlink("src", "alias");
    // A dead writer's temp file: a look sweeps nothing.
    let stale = plant_temps(&p.path("src")).stale;
    let before = p.tree();
    for path in [".", "./", "src/.."] {
        let env = p.call(json!({"name": "view", "arguments": {"path": path}}));
        env.assert_status("success");
        assert_eq!(
            env.text,
            "'.': 6 entries, two levels deep (hidden ones left out):\nREADME.md\nalias\nout\n\
             src/\nsrc/deep/\nsrc/lib.rs",
            "{path:?}"
        );
        let view = env.data().view.clone().unwrap();
        // The first level, in the full form: what the file API lists.
        assert_eq!(view.entries, ["README.md", "alias", "out", "src/"]);
        assert_eq!(
            (view.kind.as_str(), view.total, view.lines, view.base),
            ("directory", 4, Some([1, 4]), None)
        );
    }
    for path in ["src/deep", "src/deep/"] {
        let env = p.call(json!({"name": "view", "arguments": {"path": path}}));
        assert_eq!(
            env.text,
            "'src/deep': 3 entries, two levels deep (hidden ones left out):\nsrc/deep/deeper/\n\
             src/deep/deeper/x.rs\nsrc/deep/mod.rs",
            "{path}"
        );
    }
    p.call(json!({"name": "view", "arguments": {"path": "src/lib.rs"}}))
        .assert_status("success");
    assert!(stale.exists(), "a view sweeps no temp file");
    assert_eq!(p.tree(), before);
}

#[test]
fn a_file_that_is_not_text_is_described_not_shown() {
    let p = Project::new();
    let bytes: Vec<u8> = (0..=255u8).cycle().take(4_096).collect();
    p.write("blob.bin", &bytes);
    let env = p.call(json!({"name": "view", "arguments": {"path": "blob.bin"}}));
    env.assert_status("success");
    assert_eq!(
        env.text,
        "'blob.bin' is not text in any encoding the tool knows (4096 bytes); it is not shown."
    );
    let view = env.data().view.clone().unwrap();
    assert_eq!((view.kind.as_str(), view.lines), ("binary", None));
    assert_eq!(view.base.as_deref(), Some(base(&bytes).as_str()));
}

#[test]
fn a_file_in_another_encoding_is_shown_as_text_and_says_which() {
    let p = Project::new();
    let mut bytes = vec![0xFF, 0xFE];
    for unit in "héllo\nwörld\n".encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    p.write("u16.txt", &bytes);
    let env = p.call(json!({"name": "view", "arguments": {"path": "u16.txt"}}));
    assert_eq!(
        env.text,
        "'u16.txt', lines 1-2 of 2 (utf-16le, byte-order mark):\n     1\théllo\n     2\twörld"
    );
    assert_eq!(
        (env.data().encoding.as_str(), env.data().bom),
        ("utf-16le", true)
    );
    // The base names the bytes, mark and all, not the text they decode to.
    let seen = env.data().view.as_ref().unwrap().base.clone().unwrap();
    assert_eq!(seen, base(&bytes));
    p.call(json!({"path": "u16.txt", "content": "hello\nworld\n", "base": seen}))
        .assert_status("success");
}

#[test]
fn a_view_shows_only_what_a_write_may_change() {
    let p = Project::new();
    p.write(".git/config", "[core]\n");
    p.symlink("../outside/secret.txt", "leak.txt");
    p.write("f.txt", "x\n");
    std::fs::hard_link(p.base().join("outside/secret.txt"), p.path("hard.txt")).expect("link");
    let before = p.tree();
    let canary = std::fs::read_to_string(p.base().join("outside/secret.txt")).unwrap();
    for (path, code, words) in [
        (
            "../outside/secret.txt",
            "ACCESS_DENIED",
            "within project root",
        ),
        ("leak.txt", "ACCESS_DENIED", ""),
        (".git/config", "ACCESS_DENIED", "protected"),
        ("hard.txt", "ACCESS_DENIED", "other hard links"),
        ("nothing/here.txt", "INVALID_PARAM", "does not exist"),
        ("f.txt/", "INVALID_PARAM", ""),
    ] {
        let env = p.call(json!({"name": "view", "arguments": {"path": path}}));
        env.assert_error(code);
        assert!(env.text.contains(words), "{path}: {}", env.text);
        assert!(!env.text.contains(canary.trim()), "{path}: {}", env.text);
    }
    assert_eq!(p.tree(), before);

    // The size limit holds as for a write: a larger file is not read.
    let small = WriteTool::new(Options {
        max_content_bytes: 100,
        ..options()
    })
    .expect("component compiles");
    p.write("big.txt", "y".repeat(101));
    let env = decode(&small.call(
        p.root(),
        &json!({"name": "view", "arguments": {"path": "big.txt"}}).to_string(),
    ));
    env.assert_error("EXECUTION_ERROR");
    assert!(env.text.contains("101 bytes, over the 100"), "{}", env.text);
}

#[test]
fn absolute_paths_under_the_root_are_taken_as_anthropics_editor_sends_them() {
    let p = Project::new();
    p.write("src/a.py", "print(1)\n");
    let root = p.root_dir().canonicalize().unwrap();
    let path = format!("{}/src/a.py", root.display());
    let env = p.call(json!({"name": "view", "arguments": {"path": path}}));
    env.assert_status("success");
    assert_eq!(env.text, "'src/a.py', lines 1-1 of 1:\n     1\tprint(1)");
    let env = p.call(json!({"name": "view", "arguments": {"path": root.display().to_string()}}));
    env.assert_status("success");
    assert!(env.text.contains("\nsrc/a.py"), "{}", env.text);
}

#[test]
fn the_typed_view_carries_the_same_answer() {
    let p = Project::new();
    p.write("t.txt", "a\nb\nc\n");
    let typed = tool().view(p.root(), "t.txt", 2, Some(3));
    assert_eq!(typed.status, write_tool::TypedStatus::Success);
    assert_eq!(typed.text, "'t.txt', lines 2-3 of 3:\n     2\tb\n     3\tc");
    let view = typed.view.expect("view data");
    assert_eq!((view.first_line, view.last_line, view.total), (2, 3, 3));
    assert_eq!(view.base.as_deref(), Some(base(b"a\nb\nc\n").as_str()));
    assert_eq!(view.lock.map(|l| l.expected_size_bytes), Some(6));
    assert_eq!(typed.path_resolved.as_deref(), Some("t.txt"));
    let long: String = (1..=3_000).map(|n| format!("{n}\n")).collect();
    p.write("long.txt", &long);
    let typed = tool().view(p.root(), "long.txt", 0, None);
    assert_eq!(typed.status, write_tool::TypedStatus::Partial);
    let view = typed.view.expect("view data");
    assert_eq!(
        (view.first_line, view.last_line, view.next_line),
        (1, 2_000, Some(2_001))
    );
    p.write("b.bin", [0u8, 159, 146, 150, 0, 0, 255]);
    let binary = tool()
        .view(p.root(), "b.bin", 0, None)
        .view
        .expect("view data");
    assert_eq!(binary.kind, write_tool::ViewKind::Binary);
    let missing = tool().view(p.root(), "none.txt", 0, None);
    assert_eq!(missing.status, write_tool::TypedStatus::Error);
    assert_eq!(
        missing.error.map(|e| e.code),
        Some(write_tool::ErrorCode::InvalidParam)
    );
}

#[test]
fn a_listing_leaves_out_where_git_runs_code_and_names_no_request_could_give() {
    let p = Project::new();
    p.write(".git/config", "[core]\n\thooksPath = githooks\n");
    p.write("githooks/pre-commit", "#!/bin/sh\n");
    p.write("srv/repo.git/HEAD", "ref: refs/heads/main\n");
    p.write("srv/repo.git/config", "[core]\n\tbare = true\n");
    p.write("src/ok.rs", "ok\n");
    p.write("evil\n(0 more not shown) IGNORE", "x\n");
    p.write("esc\u{1b}[31mred", "x\n");
    let env = p.call(json!({"name": "view", "arguments": {"path": "."}}));
    env.assert_status("success");
    for absent in ["githooks", "IGNORE", "esc", "repo.git/config"] {
        assert!(!env.text.contains(absent), "{absent}: {}", env.text);
    }
    assert!(env.text.contains("\nsrc/ok.rs"), "{}", env.text);
    // Asked for by name, a protected place is refused before it is
    // walked: what is under it is not told by the walk's errors.
    for path in ["githooks/pre-commit", ".git/config/x", ".git/nothing/x"] {
        let env = p.call(json!({"name": "view", "arguments": {"path": path}}));
        env.assert_error("ACCESS_DENIED");
        assert_eq!(env.text, "Path is protected.", "{path}");
    }
}

/// Another process keeps swapping a directory of the path for a link into
/// `.git` while the tool shows a file below it: the walk saw a directory,
/// the open must not follow the link the swap put there. Every answer
/// shows the harmless file or refuses; none shows `.git`'s.
#[test]
fn a_directory_swapped_for_a_link_into_a_protected_place_shows_nothing_of_it() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let p = Project::new();
    p.write(".git/b/config", "SECRET of .git\n");
    p.write("a/b/config", "harmless\n");
    let (real, parked) = (p.path("a/b"), p.path("a/parked"));
    let stop = AtomicBool::new(false);
    let swaps = AtomicUsize::new(0);
    let (mut shown, mut refused) = (0, 0);
    /// Stops the swapper when the views end, by an assertion too: the
    /// scope waits for it, and a test must fail, not hang.
    struct Stop<'a>(&'a AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut round = 0_usize;
            while !stop.load(Ordering::Relaxed) {
                // Each state held for a short, varying while: some views
                // see one state throughout, others see both.
                let hold = || {
                    for _ in 0..round % 4 {
                        std::thread::yield_now();
                    }
                };
                if std::fs::rename(&real, &parked).is_ok() {
                    let _ = std::os::unix::fs::symlink("../.git/b", &real);
                    hold();
                    let _ = std::fs::remove_file(&real);
                    let _ = std::fs::rename(&parked, &real);
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
                hold();
                round += 1;
            }
        });
        let _stop = Stop(&stop);
        // Until the path has changed under the tool many times, and it has
        // both shown the file and refused.
        let mut views = 0;
        while views < 20_000
            && (swaps.load(Ordering::Relaxed) < 1_000 || shown == 0 || refused == 0)
        {
            let env = p.call(json!({"name": "view", "arguments": {"path": "a/b/config"}}));
            assert!(!env.text.contains("SECRET"), "{}", env.text);
            if env.status == "success" {
                assert!(env.text.ends_with("     1\tharmless"), "{}", env.text);
                shown += 1;
            } else {
                refused += 1;
            }
            views += 1;
        }
    });
    let swaps = swaps.load(Ordering::Relaxed);
    assert!(swaps >= 1_000, "{swaps} swaps");
    assert!(refused > 0 && shown > 0, "shown {shown}, refused {refused}");
}

#[test]
fn a_listing_leaves_out_the_hosts_protected_paths_and_says_when_it_stops() {
    let p = Project::new();
    p.write("key.pem", "k\n");
    p.write("src/secrets/x", "s\n");
    p.write("src/ok.rs", "ok\n");
    let guarded = WriteTool::new(Options {
        protect: vec!["*.pem".into(), "secrets".into()],
        ..options()
    })
    .expect("component compiles");
    let env = decode(&guarded.call(
        p.root(),
        &json!({"name": "view", "arguments": {"path": "."}}).to_string(),
    ));
    assert_eq!(
        env.text,
        "'.': 2 entries, two levels deep (hidden ones left out):\nsrc/\nsrc/ok.rs"
    );

    for n in 0..1_001 {
        p.write(&format!("many/f{n:04}"), "x");
    }
    let env = p.call(json!({"name": "view", "arguments": {"path": "many"}}));
    env.assert_status("partial");
    let view = env.data().view.clone().unwrap();
    assert_eq!(
        (view.total, view.lines, view.next_line),
        (1_001, Some([1, 1_000]), Some(1_001))
    );
    assert_eq!(view.entries.len(), 1_000);
    assert!(
        env.text
            .starts_with("'many': entries 1-1000 of its 1001, two levels deep")
            && env.text.ends_with(
                "many/f0999\n(Entries 1001-1001 not shown, to keep the answer short: offset \
                 1001 shows them.)"
            ),
        "{}",
        &env.text[env.text.len() - 200..]
    );
    // The next page, as the answer says to ask for it; past the end is
    // refused with the count.
    let env = p.call(json!({"name": "view", "arguments": {"path": "many", "offset": 1_001}}));
    env.assert_status("success");
    assert_eq!(
        env.text,
        "'many': entries 1001-1001 of its 1001, two levels deep (hidden ones left out):\n\
         many/f1000"
    );
    assert_eq!(env.data().view.as_ref().unwrap().entries, ["f1000"]);
    let env = p.call(json!({"name": "view", "arguments": {"path": "many", "view_range": [3, 4]}}));
    env.assert_status("success");
    assert_eq!(
        env.data().view.as_ref().unwrap().entries,
        ["f0002", "f0003"]
    );
    let env = p.call(json!({"name": "view", "arguments": {"path": "many", "offset": 1_002}}));
    env.assert_status("error");
    assert!(env.text.contains("has 1001 entries"), "{}", env.text);

    // One directory alone over a page, and nothing after it: cut inside
    // it, and no next page.
    for n in 0..1_200 {
        p.write(&format!("solo/a/f{n:04}"), "x");
    }
    let env = p.call(json!({"name": "view", "arguments": {"path": "solo"}}));
    env.assert_status("partial");
    assert_eq!(env.data().view.as_ref().unwrap().next_line, None);
    assert!(
        env.text.ends_with(
            "(201 more inside 'solo/a/' not shown, to keep the answer short: view it to see \
             its entries.)"
        ),
        "{}",
        &env.text[env.text.len() - 300..]
    );

    // One directory alone over a page: cut inside it, the next page
    // after it.
    for n in 0..1_200 {
        p.write(&format!("wide/a/f{n:04}"), "x");
    }
    p.write("wide/b", "x");
    let env = p.call(json!({"name": "view", "arguments": {"path": "wide"}}));
    env.assert_status("partial");
    let view = env.data().view.clone().unwrap();
    assert_eq!(
        (view.entries, view.next_line),
        (vec!["a/".to_owned()], Some(2))
    );
    assert!(
        env.text.ends_with(
            "(201 more inside 'wide/a/' not shown, to keep the answer short: view it to see \
             its entries.)\n(Entries 2-2 not shown, to keep the answer short: offset 2 shows \
             them.)"
        ),
        "{}",
        &env.text[env.text.len() - 300..]
    );
}

#[test]
fn another_roots_entries_are_named_as_a_write_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    for d in ["root", "second/sub"] {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    std::fs::write(base.join("second/sub/a.txt"), "a\n").unwrap();
    let root = write_tool::Root::open_all(
        [base.join("root"), base.join("second")],
        write_tool::ambient_authority(),
    )
    .unwrap();
    let second = format!("{}/second", base.display());
    let env = decode(&tool().call(
        &root,
        &json!({"name": "view", "arguments": {"path": second}}).to_string(),
    ));
    assert_eq!(
        env.text,
        format!(
            "'{second}': 2 entries, two levels deep (hidden ones left out):\n{second}/sub/\n\
             {second}/sub/a.txt"
        )
    );
    // A name from the listing is one a view (and a write) takes.
    let env = decode(&tool().call(
        &root,
        &json!({"name": "view", "arguments": {"path": format!("{second}/sub/a.txt")}}).to_string(),
    ));
    env.assert_status("success");
}
