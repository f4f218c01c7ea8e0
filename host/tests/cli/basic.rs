//! The basic commands as scripts drive them.

use std::fs;
use std::process::Command;

use serde_json::{Value, json};

use crate::{assert_usage_error, bin_str, envelope, root_arg, run, run_cmd, run_on_terminal};

#[test]
fn write_with_inline_content() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let out = run(
        &["--root", &root, "write", "hello.txt", "--content", "hi"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let env = envelope(&out);
    assert_eq!(env["status"], "success");
    assert_eq!(env["text"], "Created 'hello.txt' (1 line, 2 bytes).");
    assert_eq!(
        fs::read_to_string(dir.path().join("hello.txt")).unwrap(),
        "hi"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn write_from_stdin_and_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let out = run(
        &["--root", &root, "write", "a/from_stdin.txt"],
        b"piped\ncontent\n",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        fs::read_to_string(dir.path().join("a/from_stdin.txt")).unwrap(),
        "piped\ncontent\n"
    );

    let source = tempfile::NamedTempFile::new().unwrap();
    fs::write(source.path(), "from a file\n").unwrap();
    let source_arg = source.path().to_str().unwrap();
    let out = run(
        &[
            "--root",
            &root,
            "write",
            "b.txt",
            "--content-file",
            source_arg,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "from a file\n"
    );
}

#[test]
fn dry_run_is_partial_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let out = run(
        &[
            "--root",
            &root,
            "write",
            "d/x.txt",
            "--dry-run",
            "--content",
            "x\n",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(envelope(&out)["status"], "partial");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn an_error_envelope_exits_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let out = run(
        &["--root", &root, "write", "../escape.txt", "--content", "x"],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let env = envelope(&out);
    assert_eq!(env["error"]["code"], "ACCESS_DENIED");
    assert!(!dir.path().parent().unwrap().join("escape.txt").exists());
}

#[test]
fn edit_inserts_after_a_line_with_insert_after() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    fs::write(dir.path().join("a.txt"), "one\nthree\n").unwrap();
    let args = [
        "--root",
        &root,
        "edit",
        "a.txt",
        "--insert-after",
        "1",
        "--new",
        "two",
    ];
    let out = run(&args, b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(envelope(&out)["data"]["edits"][0]["lines"], json!([2]));
    assert_eq!(
        fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
    // Past the last line: refused, the file as it was.
    let args = [
        "--root",
        &root,
        "edit",
        "a.txt",
        "--insert-after",
        "9",
        "--new",
        "x",
    ];
    let out = run(&args, b"");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(envelope(&out)["error"]["code"], "INVALID_PARAM");
    assert_eq!(
        fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
}

#[test]
fn view_shows_lines_and_entries_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let out = run(
        &["--root", &root, "view", "a.txt", "--from", "2", "--to", "3"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let env = envelope(&out);
    assert_eq!(env["status"], "success");
    assert_eq!(
        env["text"],
        "'a.txt', lines 2-3 of 3:\n     2\ttwo\n     3\tthree"
    );
    assert_eq!(env["data"]["view"]["lines"], json!([2, 3]));
    let out = run(&["--root", &root, "view", "a.txt", "--to", "2"], b"");
    let env = envelope(&out);
    assert_eq!(
        env["text"],
        "'a.txt', lines 1-2 of 3:\n     1\tone\n     2\ttwo"
    );
    assert!(env["data"]["view"].get("next_line").is_none(), "{env}");
    let out = run(&["--root", &root, "view", "."], b"");
    assert_eq!(
        envelope(&out)["text"],
        "'.': 1 entry, two levels deep (hidden ones left out):\na.txt"
    );
    let out = run(&["--root", &root, "view", "none.txt"], b"");
    assert_eq!(out.status.code(), Some(1), "an error envelope");
    assert_eq!(envelope(&out)["error"]["code"], "INVALID_PARAM");
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["a.txt"], "nothing but the file");
}

#[test]
fn write_flags_for_create_only_and_content_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let file = dir.path().join("win.txt");
    fs::write(&file, "a\r\nb\r\n").unwrap();
    let out = run(
        &[
            "--root",
            &root,
            "write",
            "win.txt",
            "--create-only",
            "--content",
            "x\n",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(envelope(&out)["error"]["code"], "CONFLICT");
    assert_eq!(fs::read(&file).unwrap(), b"a\r\nb\r\n");

    let out = run(
        &["--root", &root, "write", "win.txt", "--content", "c\n"],
        b"",
    );
    assert_eq!(envelope(&out)["data"]["line_endings"], "crlf");
    assert_eq!(fs::read(&file).unwrap(), b"c\r\n");
    let out = run(
        &[
            "--root",
            &root,
            "write",
            "win.txt",
            "--as-given",
            "--content",
            "d\n",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        envelope(&out)["context"]["params_input"]["keep_format"],
        false
    );
    assert_eq!(fs::read(&file).unwrap(), b"d\n");
}

#[test]
fn usage_and_host_failures_exit_two_with_no_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let file = dir.path().join("file");
    fs::write(&file, "x").unwrap();
    for root in [missing.to_str().unwrap(), file.to_str().unwrap()] {
        let out = run(&["--root", root, "write", "a.txt", "--content", "x"], b"");
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a usable directory"));
    }
    let out = run(&["write"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let out = run(&["frobnicate"], b"");
    assert_eq!(out.status.code(), Some(2));
    let root = root_arg(dir.path());
    let out = run(
        &[
            "--root",
            &root,
            "write",
            "a.txt",
            "--content",
            "x",
            "--content-file",
            "f",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["--root", &root, "write", "latin1.txt"], b"caf\xe9\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid UTF-8"));
    assert!(!dir.path().join("latin1.txt").exists());
}

#[test]
fn root_defaults_to_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_cmd(
        Command::new(bin_str()).current_dir(dir.path()).args([
            "write",
            "here.txt",
            "--content",
            "cwd",
        ]),
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        fs::read_to_string(dir.path().join("here.txt")).unwrap(),
        "cwd"
    );
}

#[test]
fn call_accepts_arguments_and_tool_call_forms() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let inputs = [
        json!({"path": "one.txt", "content": "1"}),
        json!({"name": "Write", "arguments": {"path": "two.txt", "content": "2"}}),
        json!({"name": "Write", "arguments": "{\"path\": \"three.txt\", \"content\": \"3\"}"}),
    ];
    for (input, name) in inputs.iter().zip(["one.txt", "two.txt", "three.txt"]) {
        let out = run(&["--root", &root, "call"], input.to_string().as_bytes());
        assert_eq!(out.status.code(), Some(0), "{input}");
        let env = envelope(&out);
        // `call` answers as a model's call is answered: compact.
        assert!(env.get("context").is_none(), "{env}");
        assert_eq!(env["text"], format!("Created '{name}' (1 line, 1 byte)."));
        assert!(dir.path().join(name).exists());
    }
    let out = run(
        &["--root", &root, "call"],
        br#"{"name":"Delete","arguments":{"path":"one.txt"}}"#,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(envelope(&out)["error"]["code"], "INVALID_PARAM");
    assert!(dir.path().join("one.txt").exists());
    let out = run(&["--root", &root, "call"], b"\xff\xfe");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(envelope(&out)["error"]["code"], "INVALID_PARAM");
}

#[test]
fn pretty_output_is_the_same_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let out = run(
        &[
            "--root",
            &root,
            "--pretty",
            "write",
            "p.txt",
            "--dry-run",
            "--content",
            "x",
        ],
        b"",
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() > 10);
    let env: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(env["status"], "partial");
}

#[test]
fn serve_answers_every_line_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let mut input = Vec::new();
    input.extend_from_slice(
        json!({"path": "s1.txt", "content": "first\n"})
            .to_string()
            .as_bytes(),
    );
    input.extend_from_slice(b"\nnot json\n\n[1,2]\n\xc3\x28 invalid utf-8\n");
    input.extend_from_slice(
        json!({"path": "../out.txt", "content": "x"})
            .to_string()
            .as_bytes(),
    );
    input.extend_from_slice(b"\r\n");
    input.extend_from_slice(
        json!({"name": "Write", "arguments": {"path": "s2.txt", "content": "second\n"}})
            .to_string()
            .as_bytes(),
    );
    // The last line has no newline: it is still a request.
    let out = run(&["--root", &root, "serve"], &input);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let envelopes: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let codes: Vec<&str> = envelopes
        .iter()
        .map(|e| {
            e["error"]["code"]
                .as_str()
                .unwrap_or(e["status"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        codes,
        // Not JSON, an array, not UTF-8; the blank line is skipped.
        [
            "success",
            "INVALID_PARAM",
            "INVALID_PARAM",
            "INVALID_PARAM",
            "ACCESS_DENIED",
            "success"
        ]
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("s1.txt")).unwrap(),
        "first\n"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("s2.txt")).unwrap(),
        "second\n"
    );
}

/// `serve` widens its stdin pipe before it reads, so that a large request
/// arrives in a few reads instead of one per 64 KiB.
#[cfg(target_os = "linux")]
#[test]
fn serve_widens_its_stdin_pipe() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin_str())
        .args(["--root", &root_arg(dir.path()), "serve"])
        .env("WRITE_TOOL_CACHE_DIR", crate::cache_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    assert!(rustix::pipe::fcntl_getpipe_size(&stdin).unwrap() < 1 << 20);
    writeln!(stdin, "{}", json!({"path": "a.txt", "content": "a\n"})).unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("\"success\""), "{line}");
    assert_eq!(rustix::pipe::fcntl_getpipe_size(&stdin).unwrap(), 1 << 20);
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn serve_with_no_input_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["--root", &root_arg(dir.path()), "serve"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
}

#[test]
fn schema_prints_the_definition() {
    let out = run(&["schema"], b"");
    assert_eq!(out.status.code(), Some(0));
    let definition = envelope(&out);
    assert_eq!(definition["name"], "Write");
    assert_eq!(
        definition["parameters"]["required"],
        json!(["path", "content"])
    );
}

#[test]
fn limits_are_host_options() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let out = run(
        &[
            "--root",
            &root,
            "--max-content-bytes",
            "4",
            "write",
            "f.txt",
            "--content",
            "12345",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        envelope(&out)["text"],
        "Content is 5 bytes, over this tool's content limit of 4 bytes (a host setting); \
         nothing was written. Pass --max-content-bytes N to raise the limit."
    );
    let out = run(
        &[
            "--root",
            &root,
            "--allow-empty",
            "write",
            "empty.txt",
            "--content",
            "",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(fs::read(dir.path().join("empty.txt")).unwrap(), b"");

    // Two lines changed five apart: the exact diff counts 2 each way; with
    // no time for the diff, the lines between them are replaced too.
    let old: String = (0..10).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 2\n", "two\n")
        .replace("line 7\n", "seven\n");
    let counts = |timeout: &[&str]| {
        fs::write(dir.path().join("d.txt"), &old).unwrap();
        let mut args = vec!["--root", &root];
        args.extend(timeout);
        args.extend(["write", "d.txt", "--content", &new]);
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(fs::read_to_string(dir.path().join("d.txt")).unwrap(), new);
        let stats = &envelope(&out)["stats"];
        (stats["lines_added"].clone(), stats["lines_removed"].clone())
    };
    assert_eq!(counts(&[]), (2.into(), 2.into()));
    assert_eq!(counts(&["--diff-timeout-ms", "0"]), (6.into(), 6.into()));
}

/// An OS refusal is `PERMISSION_DENIED`. Root ignores directory modes, so
/// when the suite runs as root the binary runs as `nobody` instead.
#[test]
fn an_os_refusal_is_permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("locked");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("existing.txt"), "keep\n").unwrap();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o555)).unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let unprivileged = || {
        if is_root {
            let mut cmd = Command::new("setpriv");
            cmd.args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                bin_str(),
            ]);
            cmd
        } else {
            Command::new(bin_str())
        }
    };
    let root_arg = root.to_str().unwrap();
    for path in ["new.txt", "existing.txt", "sub/new.txt"] {
        let out = run_cmd(
            // Without a journal: the other user may not write the build's.
            unprivileged().args([
                "--no-journal",
                "--root",
                root_arg,
                "write",
                path,
                "--content",
                "x",
            ]),
            b"",
        );
        assert_eq!(out.status.code(), Some(1), "{path}: {out:?}");
        let env = envelope(&out);
        assert_eq!(env["error"]["code"], "PERMISSION_DENIED", "{path}: {env}");
        assert!(
            env["text"]
                .as_str()
                .unwrap()
                .starts_with("Permission denied"),
            "{env}"
        );
    }
    fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        fs::read_to_string(root.join("existing.txt")).unwrap(),
        "keep\n"
    );
    assert_eq!(fs::read_dir(&root).unwrap().count(), 1);
}

#[test]
fn every_sync_mode_writes_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    for mode in ["full", "file", "none"] {
        let name = format!("{mode}/f.txt");
        let out = run(
            &[
                "--root",
                &root,
                "--sync",
                mode,
                "write",
                &name,
                "--content",
                mode,
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(
            envelope(&out)["text"],
            format!(
                "Created '{name}' (1 line, {} bytes).\n(Created directory: {mode}/)",
                mode.len()
            )
        );
        assert_eq!(fs::read_to_string(dir.path().join(&name)).unwrap(), mode);
        let temps = fs::read_dir(dir.path().join(mode)).unwrap().count();
        assert_eq!(temps, 1, "only the file itself");
    }
    let out = run(
        &[
            "--root",
            &root,
            "--sync",
            "sometimes",
            "write",
            "x",
            "--content",
            "x",
        ],
        b"",
    );
    assert_usage_error(&out);
}

#[test]
fn root_given_twice_allows_both_for_write_file() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let (a, b) = (root_arg(first.path()), root_arg(second.path()));
    let abs = format!(
        "{}/data/x.txt",
        second.path().canonicalize().unwrap().display()
    );
    let input = json!({"name": "write_file", "arguments": {"path": abs, "content": "x"}});
    let out = run(
        &["--root", &a, "--root", &b, "call"],
        input.to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        envelope(&out)["text"],
        format!("Successfully wrote to {abs}")
    );
    assert_eq!(
        fs::read_to_string(second.path().join("data/x.txt")).unwrap(),
        "x"
    );
    // Relative paths go to the first root.
    let input = json!({"name": "write_file", "arguments": {"path": "y.txt", "content": "y"}});
    let out = run(
        &["--root", &a, "--root", &b, "call"],
        input.to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(first.path().join("y.txt").exists());
    // With only the first root, the second is outside every allowed root.
    let input = json!({"name": "write_file", "arguments": {"path": abs, "content": "z"}});
    let out = run(&["--root", &a, "call"], input.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        envelope(&out)["text"],
        format!("path '{abs}' is not in allowed directories")
    );
    assert_eq!(
        fs::read_to_string(second.path().join("data/x.txt")).unwrap(),
        "x"
    );
    // A root that does not exist is a usage error, named.
    let missing = first.path().join("missing");
    let out = run(
        &["--root", &a, "--root", missing.to_str().unwrap(), "call"],
        b"{}",
    );
    assert_usage_error(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing"));
}

/// Content is a value, whatever it starts with.
#[test]
fn content_may_start_with_a_dash() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    for (file, content) in [("list.md", "- item one"), ("flag.txt", "--pretty")] {
        let out = run(&["--root", &root, "write", file, "--content", content], b"");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(fs::read_to_string(dir.path().join(file)).unwrap(), content);
    }
}

/// Reading content from stdin at a terminal says so (on stderr) instead
/// of waiting in silence; from a pipe it says nothing (the first tests
/// above check that stderr stays empty).
#[test]
fn a_terminal_is_told_that_write_reads_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let (code, shown) = run_on_terminal(&["--root", &root, "write", "typed.txt"], b"typed\n\x04");
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("reading the content from stdin until end of input"),
        "{shown}"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("typed.txt")).unwrap(),
        "typed\n"
    );
}

/// The component is binary: it goes to a file or a pipe, never to a
/// terminal.
#[test]
fn component_is_not_written_to_a_terminal() {
    let (code, shown) = run_on_terminal(&["component"], b"");
    assert_eq!(code, Some(2), "{shown}");
    assert!(shown.contains("give -o FILE"), "{shown}");
    assert!(
        !shown.contains("asm"),
        "no binary on the terminal: {shown:?}"
    );
}

/// Empty content is refused by default; the CLI's message names the flag
/// that allows it to a person (`write`, `call`), not to the program or
/// model behind `serve`, which cannot pass it.
#[test]
fn empty_content_names_the_flag_that_allows_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let plain = "Content is empty; this tool does not write empty files (a host setting). \
                 Nothing was written.";
    let want = format!("{plain} Pass --allow-empty to write an empty file.");
    let out = run(&["--root", &root, "write", "e.txt", "--content", ""], b"");
    assert_eq!(out.status.code(), Some(1));
    let env = envelope(&out);
    assert_eq!(
        (env["text"].as_str(), env["error"]["message"].as_str()),
        (Some(want.as_str()), Some(want.as_str()))
    );
    let request = json!({"path": "e.txt", "content": ""}).to_string();
    let out = run(&["--root", &root, "call"], request.as_bytes());
    assert_eq!(envelope(&out)["text"], want);
    let out = run(
        &["--root", &root, "serve"],
        format!("{request}\n").as_bytes(),
    );
    assert_eq!(envelope(&out)["error"]["code"], "INVALID_PARAM");
    assert_eq!(envelope(&out)["text"], plain);
    assert!(!dir.path().join("e.txt").exists());
}

/// A one-shot `write` (and `call`) makes one call: it reserves no pool of
/// instance slots, so it runs under an address-space limit that holds one
/// linear memory's reservation (4 GiB and its guard) but not the pool's
/// two slots and their guards (`Options::pool_instances`).
#[cfg(target_os = "linux")]
#[test]
fn one_shot_commands_reserve_no_instance_pool() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let limited = |args: &[&str], stdin: &[u8]| {
        // `ulimit -v` is in KiB: 6 GiB.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", r#"ulimit -v 6291456 && exec "$0" "$@""#, bin_str()])
            .args(args);
        run_cmd(&mut cmd, stdin)
    };
    let out = limited(&["--root", &root, "write", "a.txt", "--content", "hi"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(envelope(&out)["status"], "success");
    assert_eq!(fs::read_to_string(dir.path().join("a.txt")).unwrap(), "hi");
    let out = limited(
        &["--root", &root, "call"],
        br#"{"path": "b.txt", "content": "ho"}"#,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(fs::read_to_string(dir.path().join("b.txt")).unwrap(), "ho");
}

/// Settings that would fail open, or fail every call, are refused at
/// start; the CLI reads `WRITE_TOOL_*` from its environment as its
/// settings (flags win), and refuses one it does not know or cannot read,
/// as the component does: an MCP client's `"env": {"WRITE_TOOL_READ_ONLY":
/// "true"}` must not leave the root writable.
#[test]
fn settings_that_fail_open_are_refused_and_the_environment_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_arg(dir.path());
    let write = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = Command::new(bin_str());
        cmd.env("WRITE_TOOL_CACHE_DIR", write_tool_test_support::cache_dir());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args(["--root", &root])
            .args(args)
            .args(["write", "f.txt", "--content", "x\n"]);
        run_cmd(&mut cmd, b"")
    };
    for (args, env, says) in [
        (&["--timeout-ms", "0"][..], &[][..], "--timeout-ms"),
        (&["--protect", ""], &[], "protects nothing"),
        (&[], &[("WRITE_TOOL_TIMEOUT_MS", "0")], "timeout"),
        (
            &[],
            &[("WRITE_TOOL_READONLY", "true")],
            "WRITE_TOOL_READONLY is not a setting",
        ),
        (&[], &[("WRITE_TOOL_READ_ONLY", "maybe")], "maybe"),
        (
            &[],
            &[("WRITE_TOOL_CACHE", "sometimes")],
            "WRITE_TOOL_CACHE must be on or off",
        ),
        (&[], &[("WRITE_TOOL_PROTECT", "")], "protect"),
    ] {
        let out = write(args, env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}: {stderr}");
        assert!(
            stderr.to_lowercase().contains(&says.to_lowercase()),
            "{args:?} {env:?}: {stderr}"
        );
        assert!(!dir.path().join("f.txt").exists(), "{args:?} {env:?}");
    }
    // Read from the environment: a read-only root.
    let out = write(&[], &[("WRITE_TOOL_READ_ONLY", "true")]);
    assert_eq!(envelope(&out)["error"]["code"], "PERMISSION_DENIED");
    assert!(!dir.path().join("f.txt").exists());
    // A flag wins over its variable.
    let out = write(
        &["--timeout-ms", "30000"],
        &[("WRITE_TOOL_TIMEOUT_MS", "1")],
    );
    assert_eq!(envelope(&out)["status"], "success");
    // The spellings people write turn the cache off: nothing is stored.
    let cache = tempfile::tempdir().unwrap();
    for off in ["OFF", "false", "No", "0"] {
        let mut cmd = Command::new(bin_str());
        cmd.env("WRITE_TOOL_CACHE_DIR", cache.path())
            .env("WRITE_TOOL_CACHE", off)
            .args(["--root", &root, "write", "g.txt", "--content", off]);
        let out = run_cmd(&mut cmd, b"");
        assert_eq!(envelope(&out)["status"], "success", "{off}");
        assert_eq!(fs::read_dir(cache.path()).unwrap().count(), 0, "{off}");
    }
}
