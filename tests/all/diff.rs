use crate::support::{Project, apply_with_patch_tool};

/// Old/new pairs whose previews must round-trip through `patch -p1`.
const ROUND_TRIPS: &[(&str, &str)] = &[
    ("a\nb\nc\n", "a\nB\nc\n"),
    ("a\nb", "a\nc"),
    ("a\nb\n", "a\nb"),
    ("a\nb", "a\nb\n"),
    ("only", "other"),
    ("x\n", "x\ny\nz\n"),
    (
        "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
        "0\n1\n2\n3\n4\n5\nsix\n7\n8\n9\n10\n11\n",
    ),
    (
        "tab\there\r\nwindows\r\n",
        "tab\there\r\nwindows\r\nmore\r\n",
    ),
    ("\n\n\n", "\n"),
];

#[test]
fn previews_apply_with_patch() {
    let p = Project::new();
    for (i, (old, new)) in ROUND_TRIPS.iter().enumerate() {
        let name = format!("dir/case{i:02}.txt");
        p.write(&name, old);
        let env = p.put(&name, new);
        env.assert_status("success");
        assert!(
            env.preview()
                .starts_with(&format!("--- a/{name}\n+++ b/{name}\n@@ -"))
        );
        assert_eq!(
            apply_with_patch_tool(&name, old.as_bytes(), env.preview()),
            new.as_bytes(),
            "case {i}"
        );
        assert_eq!(p.read_string(&name), *new);
    }
}

#[test]
fn the_header_names_the_resolved_path() {
    let p = Project::new();
    p.mkdir("real");
    p.symlink("real", "alias");
    let env = p.put("alias/f.txt", "x\n");
    assert!(
        env.preview()
            .starts_with("--- a/real/f.txt\n+++ b/real/f.txt\n"),
        "{}",
        env.preview()
    );
}

fn numbered(n: usize) -> String {
    (0..n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn a_hundred_line_diff_is_not_truncated() {
    let p = Project::new();
    // 2 file headers + 1 hunk header + 97 added lines = 100 lines.
    let env = p.put("exact.txt", &numbered(97));
    env.assert_status("success");
    assert!(!env.data().diff_truncated);
    assert_eq!(env.preview().lines().count(), 100);
    assert!(!env.text.contains("truncated"));
}

#[test]
fn the_line_limit_truncates_at_whole_lines_and_counts_stay_whole() {
    let p = Project::new();
    let env = p.put("long.txt", &numbered(500));
    env.assert_status("partial");
    let data = env.data();
    assert!(data.applied, "a truncated preview still writes");
    assert!(data.diff_truncated);
    assert!(data.diff_preview.ends_with("\n... (truncated)"));
    let kept = data.diff_preview.strip_suffix("... (truncated)").unwrap();
    assert_eq!(kept.lines().count(), 100);
    assert_eq!(env.stats.lines_added, Some(500));
    assert_eq!(
        env.text,
        format!(
            "Created 'long.txt' (500 lines, {} bytes).\n(Diff preview truncated; the line counts cover the whole change.)",
            numbered(500).len()
        )
    );
    assert_eq!(p.read_string("long.txt"), numbered(500));
}

#[test]
fn the_byte_limit_truncates_at_whole_lines() {
    let p = Project::new();
    let wide: String = (0..60).map(|i| format!("{i:0>199}\n")).collect();
    p.write("wide.txt", "start\n");
    let env = p.put("wide.txt", &wide);
    env.assert_status("partial");
    let kept = env.preview().strip_suffix("... (truncated)").unwrap();
    assert!(kept.len() <= 10_240, "{}", kept.len());
    assert!(kept.ends_with('\n'));
    assert!(
        kept.lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .all(|l| l.len() == 200)
    );
    assert_eq!(
        (env.stats.lines_added, env.stats.lines_removed),
        (Some(60), Some(1))
    );
    assert_eq!(
        env.text,
        format!(
            "Updated 'wide.txt' (+60/-1 lines, {} bytes).\n(Diff preview truncated; the line counts cover the whole change.)",
            wide.len()
        )
    );
}

#[test]
fn counts_cover_every_hunk() {
    let p = Project::new();
    let old = numbered(2000);
    let new = old
        .replace("line 10\n", "ten\n")
        .replace("line 1500\n", "")
        .replace("line 1999\n", "a\nb\n");
    p.write("many.txt", &old);
    let env = p.put("many.txt", &new);
    assert_eq!(
        (env.stats.lines_added, env.stats.lines_removed),
        (Some(3), Some(3))
    );
    assert_eq!(
        env.text,
        format!("Updated 'many.txt' (+3/-3 lines, {} bytes).", new.len())
    );
    assert_eq!(
        apply_with_patch_tool("many.txt", old.as_bytes(), env.preview()),
        new.as_bytes()
    );
}

#[test]
fn an_old_file_that_is_not_text_is_diffed_lossily_and_the_text_says_so() {
    // A NUL byte: not text in any encoding (a legacy-encoded text file is
    // kept in its encoding instead: tests/all/format.rs).
    let p = Project::new();
    p.write("blob.txt", b"caf\xe9\x00\nsame\n");
    let env = p.put("blob.txt", "café\nsame\n");
    env.assert_status("success");
    assert!(
        env.preview().contains("-caf\u{fffd}\u{0}\n"),
        "{}",
        env.preview()
    );
    assert!(env.text.contains("not valid UTF-8"), "{}", env.text);
    assert_eq!(env.stats.original_size, Some(11));
    assert_eq!(p.read_string("blob.txt"), "café\nsame\n");
}

/// Files long enough to be checked in blocks (the component checks UTF-8
/// 16 bytes at a time): multi-byte characters straddle block boundaries
/// at every offset in the valid file, and the invalid one has a single bad
/// byte deep inside.
#[test]
fn utf8_is_checked_across_a_long_old_file() {
    let p = Project::new();
    // "é" is two bytes and "€" three; lines of 31 bytes shift the
    // characters against the blocks line by line.
    let line = format!("{}\n", "xé€".repeat(5));
    let valid = line.repeat(1_000);
    let new = format!("replaced\n{}", line.repeat(999));
    p.write("valid.txt", valid.as_bytes());
    let env = p.put("valid.txt", &new);
    env.assert_status("success");
    assert!(!env.text.contains("not valid UTF-8"), "{}", env.text);
    assert!(
        env.preview().contains(&format!("\n-{line}+replaced\n")),
        "{}",
        env.preview()
    );
    assert_eq!(env.stats.lines_removed, Some(1));

    // Line 646 (0-based 645), its seventh byte: an "x".
    let mut invalid = valid.into_bytes();
    invalid[645 * 31 + 6] = 0xff;
    p.write("invalid.txt", &invalid);
    let env = p.put("invalid.txt", &new);
    env.assert_status("success");
    assert!(env.text.contains("not valid UTF-8"), "{}", env.text);
    assert!(
        env.preview().contains("\n-xé€\u{fffd}é€xé€xé€xé€\n"),
        "{}",
        env.preview()
    );
    assert_eq!(env.stats.lines_removed, Some(1));
    assert_eq!(p.read_string("invalid.txt"), new);
}
