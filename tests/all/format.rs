//! Files keep their format (`docs/contract.md#format`): line endings, the
//! byte-order mark, UTF-16 and legacy encodings; `keep_format: false`
//! writes the content as given. And the agent-safety parameters: lock
//! values to chain, `create_only`, omission placeholders.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;
use write_tool::{Options, WriteTool};

use crate::support::{Envelope, Project, decode, options};

fn update(p: &Project, path: &str, content: &str) -> Envelope {
    p.call(json!({"path": path, "content": content}))
}

#[test]
fn a_crlf_file_keeps_crlf_when_the_content_uses_lf() {
    let p = Project::new();
    p.write("win.txt", "one\r\ntwo\r\nthree\r\n");
    let env = update(&p, "win.txt", "one\nTWO\nthree\n");
    env.assert_status("success");
    assert_eq!(p.read("win.txt"), b"one\r\nTWO\r\nthree\r\n");
    // The diff and the counts describe what was written: one line changed.
    let stats = env.stats.numbers();
    assert_eq!((stats.3, stats.4), (1, 1), "{env:#?}");
    assert!(
        env.preview().contains("-two\r\n+TWO\r\n"),
        "{}",
        env.preview()
    );
    assert_eq!(env.stats.new_size, Some(17));
    assert_eq!(env.stats.bytes_written, Some(17));
    assert_eq!(env.data().line_endings.as_deref(), Some("crlf"));
    assert!(
        env.text.contains("\nLine endings kept as CRLF."),
        "{}",
        env.text
    );
    assert!(env.text.contains("17 bytes"), "{}", env.text);

    // Content that is CRLF already: written as it is, nothing to say.
    let env = update(&p, "win.txt", "one\r\n2\r\nthree\r\n");
    assert_eq!(p.read("win.txt"), b"one\r\n2\r\nthree\r\n");
    assert!(!env.text.contains("Line endings"), "{}", env.text);

    // A dry run says the same and writes nothing.
    let env = p.call(json!({"path": "win.txt", "content": "a\nb\n", "dry_run": true}));
    assert!(
        env.text.contains("Line endings kept as CRLF."),
        "{}",
        env.text
    );
    assert!(env.preview().contains("+a\r\n"), "{}", env.preview());
    assert_eq!(p.read("win.txt"), b"one\r\n2\r\nthree\r\n");
}

#[test]
fn an_lf_file_keeps_lf_when_the_content_uses_crlf() {
    let p = Project::new();
    p.write("unix.txt", "a\nb\n");
    let env = update(&p, "unix.txt", "a\r\nc\r\n");
    assert_eq!(p.read("unix.txt"), b"a\nc\n");
    assert_eq!(env.data().line_endings.as_deref(), Some("lf"));
    assert!(
        env.text.contains("Line endings kept as LF."),
        "{}",
        env.text
    );
}

#[test]
fn mixed_endings_lone_crs_one_line_files_and_new_files_take_the_content_as_given() {
    let p = Project::new();
    for (name, old) in [
        ("mixed.txt", "a\r\nb\nc\r\n"),
        ("cr.txt", "a\rb\rc\r"),
        ("oneline.txt", "no newline at all"),
    ] {
        p.write(name, old);
        let env = update(&p, name, "x\ny\r\nz\n");
        env.assert_status("success");
        assert_eq!(p.read(name), b"x\ny\r\nz\n", "{name}");
        assert_eq!(env.data().line_endings, None, "{name}");
        assert!(!env.text.contains("Line endings"), "{name}: {}", env.text);
    }
    for content in ["new\r\nfile\r\n", "new\nfile\n"] {
        let env = update(&p, "created.txt", content);
        env.assert_status("success");
        assert_eq!(p.read_string("created.txt"), content);
        fs::remove_file(p.path("created.txt")).unwrap();
    }
}

#[test]
fn keep_format_false_writes_the_content_exactly_as_given() {
    let p = Project::new();
    p.write("win.txt", "\u{feff}one\r\ntwo\r\n");
    let env = p.call(json!({"path": "win.txt", "content": "one\ntwo\n", "keep_format": false}));
    env.assert_status("success");
    assert_eq!(p.read("win.txt"), b"one\ntwo\n");
    assert_eq!(env.data().encoding, "utf-8");
    assert!(!env.data().bom);
    assert_eq!(env.data().line_endings, None);
    assert!(
        env.text
            .contains("written as given, in UTF-8; the file was UTF-8 with a byte-order mark"),
        "{}",
        env.text
    );

    let cp1252 = b"caf\xe9\n";
    fs::write(p.path("legacy.txt"), cp1252).unwrap();
    let env = p.call(json!({"path": "legacy.txt", "content": "café ł\n", "keep_format": false}));
    env.assert_status("success");
    assert_eq!(p.read_string("legacy.txt"), "café ł\n");
    // The old text is still decoded properly for the diff.
    assert!(env.preview().contains("-café\n"), "{}", env.preview());
    assert!(
        env.text.contains("the file was windows-1252"),
        "{}",
        env.text
    );

    let env = p.call(json!({"path": "a.txt", "content": "x", "keep_format": "no"}));
    env.assert_error("INVALID_PARAM");
    assert_eq!(env.text, "Parameter 'keep_format' must be a boolean.");
    assert!(!p.exists("a.txt"));
}

#[test]
fn a_utf8_bom_is_kept_and_never_doubled() {
    let p = Project::new();
    p.write("bom.txt", "\u{feff}hello\n");
    let env = update(&p, "bom.txt", "hello\nworld\n");
    env.assert_status("success");
    assert_eq!(p.read("bom.txt"), b"\xef\xbb\xbfhello\nworld\n");
    assert!(env.data().bom);
    assert_eq!(env.data().encoding, "utf-8");
    assert!(
        env.text.contains("\nUTF-8 byte-order mark kept."),
        "{}",
        env.text
    );
    // The mark is not a line of text: only the added line is in the diff.
    assert_eq!(env.stats.numbers().3, 1);
    assert!(!env.preview().contains('\u{feff}'), "{}", env.preview());

    let env = update(&p, "bom.txt", "\u{feff}hello\n");
    env.assert_status("success");
    assert_eq!(p.read("bom.txt"), b"\xef\xbb\xbfhello\n");

    // Identical once the mark is kept: nothing is written.
    let env = update(&p, "bom.txt", "hello\n");
    assert!(
        env.text.starts_with("No changes to 'bom.txt'"),
        "{}",
        env.text
    );
    assert_eq!(env.stats.bytes_written, Some(0));
}

fn utf16(text: &str, little: bool) -> Vec<u8> {
    std::iter::once(0xfeff_u16)
        .chain(text.encode_utf16())
        .flat_map(|unit| {
            if little {
                unit.to_le_bytes()
            } else {
                unit.to_be_bytes()
            }
        })
        .collect()
}

#[test]
fn utf16_files_are_diffed_as_text_and_written_back_in_utf16() {
    let p = Project::new();
    for (name, little, label) in [("le.txt", true, "utf-16le"), ("be.txt", false, "utf-16be")] {
        fs::write(p.path(name), utf16("Grüße\r\nzweite Zeile\r\n", little)).unwrap();
        let env = update(&p, name, "Grüße\nandere Zeile 😀\n");
        env.assert_status("success");
        assert_eq!(
            p.read(name),
            utf16("Grüße\r\nandere Zeile 😀\r\n", little),
            "{name}"
        );
        assert_eq!(env.data().encoding, label);
        assert!(env.data().bom);
        assert!(
            env.preview()
                .contains("-zweite Zeile\r\n+andere Zeile 😀\r\n"),
            "{}",
            env.preview()
        );
        assert_eq!(env.stats.numbers().3, 1);
        assert!(
            env.text.contains(&format!(
                "\nEncoding kept: {label}, with its byte-order mark."
            )),
            "{}",
            env.text
        );
        let len = fs::metadata(p.path(name)).unwrap().len();
        assert_eq!(env.stats.new_size, Some(len));
    }
}

#[test]
fn a_legacy_encoding_is_detected_kept_and_refused_where_the_content_does_not_fit() {
    let p = Project::new();
    let old = b"Caf\xe9 cr\xe8me br\xfbl\xe9e\r\nna\xefve fa\xe7ade\r\n";
    fs::write(p.path("menu.txt"), old).unwrap();
    let env = update(&p, "menu.txt", "Café crème brûlée\nnaïve façade – jolie\n");
    env.assert_status("success");
    assert_eq!(
        p.read("menu.txt"),
        b"Caf\xe9 cr\xe8me br\xfbl\xe9e\r\nna\xefve fa\xe7ade \x96 jolie\r\n"
    );
    assert_eq!(env.data().encoding, "windows-1252");
    assert!(!env.data().bom);
    assert!(
        env.preview()
            .contains("-naïve façade\r\n+naïve façade – jolie\r\n"),
        "{}",
        env.preview()
    );
    assert!(
        env.text.contains("\nEncoding kept: windows-1252."),
        "{}",
        env.text
    );

    // A character windows-1252 has no code for: refused, nothing written.
    // (The file has text enough for the detector to be sure of it: the
    // content keeps none of its lines to tell.)
    let sure = "Café crème brûlée, naïve façade, à la française; où est l'été?\r\n".repeat(3);
    fs::write(
        p.path("menu.txt"),
        encoding_rs::WINDOWS_1252.encode(&sure).0,
    )
    .unwrap();
    let before = p.tree();
    for dry_run in [false, true] {
        let env = p.call(json!({
            "path": "menu.txt",
            "content": "Café\nZażółć gęślą jaźń\n",
            "dry_run": dry_run,
        }));
        env.assert_error("INVALID_PARAM");
        assert_eq!(
            env.text,
            "The file is windows-1252 and 'ż' (U+017C, line 2) cannot be written in it; nothing \
             was written. Use characters the encoding has, or pass keep_format: false to write \
             the file as UTF-8."
        );
        assert_eq!(p.tree(), before);
    }
}

/// Lines the content leaves as they were keep their bytes, even where
/// encoding their text again would give other bytes: Shift_JIS has two
/// codes for U+2170 (`EE EF` and `FA 40`), and its encoder writes `FA 40`.
#[test]
fn unchanged_lines_of_a_legacy_file_keep_their_exact_bytes() {
    let p = Project::new();
    let sjis = encoding_rs::SHIFT_JIS;
    let japanese = "日本語のテキストです。これは文字コードの検出に使う行です。\n".repeat(8);
    let mut old = sjis.encode(&japanese).0.into_owned();
    old.extend_from_slice(b"\x8d\x80\x96\xda\xEE\xEF\n"); // "項目ⅰ" with the NEC code
    old.extend_from_slice(&sjis.encode("最後の行です。\n").0);
    fs::write(p.path("jp.txt"), &old).unwrap();
    let text = sjis.decode_without_bom_handling(&old).0.into_owned();
    assert!(text.contains("項目\u{2170}\n"), "{text}");

    // The same text: nothing to write, although encoding it gives other
    // bytes.
    let env = update(&p, "jp.txt", &text);
    env.assert_status("success");
    assert_eq!(env.data().encoding, "shift_jis");
    assert_eq!(env.stats.bytes_written, Some(0), "{}", env.text);
    assert_eq!(p.read("jp.txt"), old);

    // Another line changed: only that line is encoded again.
    let env = update(
        &p,
        "jp.txt",
        &text.replace("最後の行です。", "最後の行でした。"),
    );
    env.assert_status("success");
    let mut expected = old.clone();
    let last = sjis.encode("最後の行です。\n").0;
    expected.truncate(old.len() - last.len());
    expected.extend_from_slice(&sjis.encode("最後の行でした。\n").0);
    assert_eq!(p.read("jp.txt"), expected);
    let (_, _, _, added, removed) = env.stats.numbers();
    assert_eq!((added, removed), (1, 1));
}

#[test]
fn a_binary_old_file_is_replaced_by_the_content_as_utf8() {
    let p = Project::new();
    fs::write(p.path("blob.bin"), b"\x00\x01\x02\xff\xfe\x80 binary").unwrap();
    let env = update(&p, "blob.bin", "text now\n");
    env.assert_status("success");
    assert_eq!(p.read("blob.bin"), b"text now\n");
    assert_eq!(env.data().encoding, "utf-8");
    assert!(
        env.text
            .contains("not valid UTF-8 nor text in another encoding the tool knows"),
        "{}",
        env.text
    );
}

fn mtime_ms(path: &Path) -> i64 {
    let modified = fs::metadata(path)
        .and_then(|m| m.modified())
        .expect("mtime");
    let since = modified.duration_since(UNIX_EPOCH).expect("after 1970");
    i64::try_from(since.as_millis()).expect("in range")
}

#[test]
fn lock_values_chain_from_one_write_to_the_next() {
    let p = Project::new();
    let env = update(&p, "chain.txt", "first\n");
    env.assert_status("success");
    let lock = env.data().lock.clone().expect("lock values");
    assert_eq!(lock.expected_size_bytes, 6);
    assert_eq!(lock.expected_mtime_ms, Some(mtime_ms(&p.path("chain.txt"))));
    assert_eq!(lock.expected_sha256, None);

    // Straight into the next write: accepted.
    let env = p.call(json!({
        "path": "chain.txt",
        "content": "second\n",
        "expected_mtime_ms": lock.expected_mtime_ms,
        "expected_size_bytes": lock.expected_size_bytes,
        "report_sha256": true,
    }));
    env.assert_status("success");
    assert_eq!(p.read_string("chain.txt"), "second\n");
    let lock = env.data().lock.clone().expect("lock values");
    assert_eq!(lock.expected_size_bytes, 7);
    let sha = lock.expected_sha256.clone().expect("asked for");
    assert_eq!(sha.len(), 64);

    // A dry run reports the file as it is.
    let dry = p.call(json!({"path": "chain.txt", "content": "third\n", "dry_run": true}));
    let dry_lock = dry.data().lock.clone().expect("lock values");
    assert_eq!(dry_lock.expected_size_bytes, 7);
    assert_eq!(dry_lock.expected_mtime_ms, lock.expected_mtime_ms);

    // Changed behind the tool's back (another size and time): CONFLICT.
    std::thread::sleep(Duration::from_millis(5));
    fs::write(p.path("chain.txt"), "changed elsewhere\n").unwrap();
    let before = p.tree();
    let env = p.call(json!({
        "path": "chain.txt",
        "content": "third\n",
        "expected_mtime_ms": lock.expected_mtime_ms,
        "expected_size_bytes": lock.expected_size_bytes,
        "expected_sha256": sha,
    }));
    env.assert_error("CONFLICT");
    assert_eq!(p.tree(), before);

    // A dry run of a file that does not exist has no lock values.
    let env = p.call(json!({"path": "none.txt", "content": "x\n", "dry_run": true}));
    assert!(env.data().lock.is_none());
}

#[test]
fn the_reported_sha256_is_the_written_files() {
    let p = Project::new();
    let env = p.call(json!({"path": "h.txt", "content": "abc", "report_sha256": true}));
    let sha = env.data().lock.clone().unwrap().expected_sha256.unwrap();
    // SHA-256("abc"), FIPS 180-2's first example.
    assert_eq!(
        sha,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    // And it opens the lock.
    let env = p.call(json!({"path": "h.txt", "content": "abcd", "expected_sha256": sha}));
    env.assert_status("success");
}

#[test]
fn create_only_refuses_an_existing_file_and_creates_a_missing_one() {
    let p = Project::new();
    p.write("there.txt", "twelve bytes");
    let before = p.tree();
    for dry_run in [false, true] {
        let env = p.call(json!({
            "path": "there.txt", "content": "new\n", "create_only": true, "dry_run": dry_run,
        }));
        env.assert_error("CONFLICT");
        assert_eq!(
            env.text,
            "File 'there.txt' already exists (12 bytes); create_only refuses to replace it. \
             Read it first, then write without create_only to replace it, or choose another path."
        );
        assert_eq!(p.tree(), before);
    }
    let env = p.call(json!({"path": "sub/new.txt", "content": "new\n", "create_only": true}));
    env.assert_status("success");
    assert_eq!(p.read_string("sub/new.txt"), "new\n");
}

const SOURCE: &str = "fn a() {\n    one();\n}\n\nfn b() {\n    two();\n    three();\n}\n";

#[test]
fn an_omission_placeholder_that_deletes_lines_is_warned_about() {
    let p = Project::new();
    p.write("lib.rs", SOURCE);
    let content = "fn a() {\n    ONE();\n}\n\n// ... rest of the code unchanged ...\n";
    let env = update(&p, "lib.rs", content);
    env.assert_status("success");
    let warnings = &env.data().warnings;
    assert_eq!(warnings.len(), 1, "{env:#?}");
    assert_eq!(warnings[0].kind, "omission_placeholder");
    assert_eq!(warnings[0].line, 5);
    assert_eq!(warnings[0].text, "// ... rest of the code unchanged ...");
    assert!(
        env.text.contains(
            "\nWarning: line 5 looks like an omission placeholder (\"// ... rest of the code unchanged ...\")"
        ),
        "{}",
        env.text
    );

    // Adding such a line without removing any is not a warning.
    p.write("lib.rs", SOURCE);
    let env = update(&p, "lib.rs", &format!("{SOURCE}# ... existing code ...\n"));
    assert!(env.data().warnings.is_empty(), "{env:#?}");
}

#[test]
fn a_host_can_refuse_omission_placeholders() {
    let p = Project::new();
    p.write("page.html", "<p>one</p>\n<p>two</p>\n<p>three</p>\n");
    let strict = WriteTool::new(Options {
        refuse_placeholders: true,
        ..options()
    })
    .expect("component compiles");
    let before = p.tree();
    let env = decode(&strict.call(
        p.root(),
        &json!({"path": "page.html", "content": "<p>ONE</p>\n<!-- rest of file -->\n"}).to_string(),
    ));
    env.assert_error("INVALID_PARAM");
    assert_eq!(
        env.text,
        "Line 2 of the content looks like an omission placeholder (\"<!-- rest of file -->\") \
         while the write removes lines; nothing was written. Write the complete file content."
    );
    assert_eq!(p.tree(), before);
    let env = decode(
        &strict.call(
            p.root(),
            &json!({"path": "page.html", "content": "<p>ONE</p>\n<p>two</p>\n<p>three</p>\n"})
                .to_string(),
        ),
    );
    env.assert_status("success");
}

/// Real source files: the repository's own text files (Rust, Python,
/// JavaScript, Markdown, TOML, WIT, JSON, shell), which every checkout
/// has, read in a fixed order. At least `MIN` of them.
fn corpus() -> Vec<PathBuf> {
    const MIN: usize = 100;
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf();
    let mut files = Vec::new();
    let mut dirs = vec![workspace];
    while let Some(dir) = dirs.pop() {
        let mut entries: Vec<_> = fs::read_dir(&dir)
            .expect("list")
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if !name.starts_with('.') && !matches!(name, "target" | "node_modules" | "gen") {
                    dirs.push(path);
                }
            } else if path.extension().is_some_and(|e| {
                matches!(
                    e.to_str(),
                    Some("rs" | "py" | "mjs" | "js" | "toml" | "md" | "wit" | "json" | "sh")
                )
            }) && fs::metadata(&path).is_ok_and(|m| m.len() > 200 && m.len() < 200_000)
            {
                files.push(path);
            }
        }
    }
    assert!(
        files.len() >= MIN,
        "only {} source files in the repository",
        files.len()
    );
    files
}

#[test]
fn real_source_files_raise_no_placeholder_warning() {
    let p = Project::new();
    let mut checked = 0;
    for (i, source) in corpus().iter().enumerate() {
        let Ok(text) = fs::read_to_string(source) else {
            continue;
        };
        let name = format!("f{i}.txt");
        p.write(&name, &text);
        // Over itself: nothing added, nothing to warn about.
        let env = update(&p, &name, &text);
        assert!(
            env.data().warnings.is_empty(),
            "{}: {env:#?}",
            source.display()
        );
        // One line edited (the middle one), the rest as it was.
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mid = lines.len() / 2;
        let edited: String = lines
            .iter()
            .enumerate()
            .map(|(n, line)| {
                if n == mid {
                    format!("{} edited\n", line.trim_end())
                } else {
                    (*line).to_owned()
                }
            })
            .collect();
        let env = update(&p, &name, &edited);
        // Success, or partial where the preview had to be cut (a line
        // longer than the preview holds): what the contract promises.
        if env.status == "partial" {
            assert!(env.data().diff_truncated, "{}: {env:#?}", source.display());
        } else {
            env.assert_status("success");
        }
        assert!(env.data().applied, "{}", source.display());
        assert!(
            env.data().warnings.is_empty(),
            "{}: {env:#?}",
            source.display()
        );
        checked += 1;
    }
    assert!(checked >= 100, "only {checked} files were text");
}
