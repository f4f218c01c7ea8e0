//! The attack suite: hostile paths by class, each run twice (dry run and
//! real) against a fresh project surrounded by canaries, with the same
//! invariants checked every time:
//!
//! - nothing outside the root is created, changed or removed (canaries in
//!   the parent, in sibling directories whose names extend the root's name,
//!   and in an outside directory, compared by bytes, mtime, mode and inode);
//! - on a refusal nothing inside the root changes either, and no temp file
//!   remains;
//! - the call returns promptly;
//! - nothing the envelope says of its own (text, message, diff preview,
//!   resolved path) reveals outside paths, link targets or outside content,
//!   and the echo is the request and nothing else;
//! - a dry run gives the same code as the real call.

use std::time::{Duration, Instant};

use serde_json::json;

use write_tool::ProjectPreopen;

use crate::support::{NAMINGS, Project};

/// What a case must do.
#[derive(Debug, Clone, Copy)]
enum Want {
    /// Succeed, writing this root-relative file.
    Write(&'static str),
    /// Be refused with this code.
    Refuse(&'static str),
}
use Want::{Refuse, Write};

const ACCESS: Want = Refuse("ACCESS_DENIED");
const INVALID: Want = Refuse("INVALID_PARAM");
const IS_DIR: Want = Refuse("IS_DIRECTORY");

/// Words that must never appear in a message: names and link targets from
/// outside the root.
const SECRETS: &[&str] = &[
    "outside",
    "secret",
    "root-evil",
    "rootX",
    "canary",
    "/tmp",
    "/etc",
    "hard.txt",
];

fn fixture() -> Project {
    fixture_named(ProjectPreopen::Dot)
}

/// The fixture, the root preopened as `naming` says.
fn fixture_named(naming: ProjectPreopen) -> Project {
    let p = Project::named(naming);
    let base = p.base().to_path_buf();
    for sibling in ["root-evil", "rootX"] {
        std::fs::create_dir(base.join(sibling)).expect("sibling");
        std::fs::write(base.join(sibling).join("canary.txt"), "sibling canary\n").expect("canary");
    }
    std::fs::write(base.join("outside/hard.txt"), "outside hard link\n").expect("outside file");
    p.mkdir("real/sub");
    p.mkdir(".git/hooks");
    p.write(".git/config", "[core]\n");
    p.write("file.txt", "a file\n");
    std::fs::hard_link(base.join("outside/hard.txt"), p.path("hardlink.txt")).expect("hard link");
    let fifo = std::process::Command::new("mkfifo")
        .arg(p.path("fifo"))
        .status()
        .expect("mkfifo");
    assert!(fifo.success());
    drop(std::os::unix::net::UnixListener::bind(p.path("socket")).expect("socket"));
    let links: &[(&str, &str)] = &[
        ("in_dir", "real"),
        ("in_chain", "in_dir"),
        ("in_up", "real/../real/sub"),
        ("to_root", "."),
        ("to_parent", ".."),
        ("out_file", "../outside/secret.txt"),
        ("out_dir", "../outside"),
        ("out_dangling", "../outside/new.txt"),
        ("out_chain", "in_chain/../out_dir"),
        ("out_chain2", "out_dir"),
        ("out_abs_tmp", "/tmp"),
        ("out_abs_etc", "/etc/passwd"),
        ("out_and_back", "../root/real"),
        ("out_deep_climb", "real/sub/../../../outside"),
        ("evil", "../root-evil"),
        ("evilx", "../rootX/canary.txt"),
        ("loop_self", "loop_self"),
        ("loop_a", "loop_b"),
        ("fifo_link", "fifo"),
        ("dev_null", "/dev/null"),
        ("loop_b", "loop_a"),
        ("git_link", ".git"),
        ("hook_link", ".GIT/hooks/post-checkout"),
        ("real/sub/up_out", "../../../outside"),
        ("real/sub/up_in", "../../real"),
    ];
    for (name, target) in links {
        p.symlink(target, name);
    }
    p
}

/// The paths every configuration is tried with, and what each must do.
const FIXED: &[(&str, Want)] = &[
    // Traversal.
    ("..", ACCESS),
    ("../", ACCESS),
    ("../x.txt", ACCESS),
    ("../../x.txt", ACCESS),
    ("a/../../x.txt", ACCESS),
    ("./../x.txt", ACCESS),
    ("../root/x.txt", ACCESS),
    ("x/../../root/x.txt", ACCESS),
    ("real/sub/../../../x.txt", ACCESS),
    ("real/./../../x.txt", ACCESS),
    ("a/b/c/../../../../x.txt", ACCESS),
    ("a/../b/../x.txt", Write("x.txt")),
    // Absolute and Windows-style forms.
    ("/x.txt", INVALID),
    ("/", INVALID),
    ("//x.txt", INVALID),
    ("///etc/passwd", INVALID),
    ("C:/x.txt", INVALID),
    ("C:\\x.txt", INVALID),
    ("c:", INVALID),
    ("\\\\server\\share\\x.txt", INVALID),
    ("//server/share/x.txt", INVALID),
    ("\\x.txt", INVALID),
    // Separators and control characters.
    ("a\0b", INVALID),
    ("\0", INVALID),
    ("x.txt\0.png", INVALID),
    ("a\nb", INVALID),
    ("a\rb", INVALID),
    ("a\tb", INVALID),
    ("\u{1b}[31mred", INVALID),
    ("a\u{7f}", INVALID),
    ("a\u{85}b", INVALID),
    ("a\u{9b}b", INVALID),
    ("..\\..\\x.txt", INVALID),
    ("a/b\\c", INVALID),
    ("trailing space ", Write("trailing space ")),
    // Unicode oddities: look-alikes are plain names; invisible and
    // direction-changing characters are refused.
    ("caf\u{e9}.txt", Write("caf\u{e9}.txt")),
    ("cafe\u{301}.txt", Write("cafe\u{301}.txt")),
    ("\u{ff0e}\u{ff0e}/x.txt", Write("\u{ff0e}\u{ff0e}/x.txt")),
    ("\u{2024}\u{2024}/x.txt", Write("\u{2024}\u{2024}/x.txt")),
    ("\u{2215}etc\u{2215}x", Write("\u{2215}etc\u{2215}x")),
    ("\u{200b}x.txt", INVALID),
    ("x\u{200c}.txt", INVALID),
    ("x\u{200d}.txt", INVALID),
    ("\u{2060}x.txt", INVALID),
    ("\u{feff}x.txt", INVALID),
    ("evil\u{202e}txt.sh", INVALID),
    ("\u{202a}x", INVALID),
    ("\u{2066}x\u{2069}", INVALID),
    ("..\u{200b}/x.txt", INVALID),
    ("x\u{200e}.txt", INVALID),
    ("x\u{200f}.txt", INVALID),
    ("\u{061c}x.txt", INVALID),
    ("x\u{206a}.txt", INVALID),
    ("x\u{206f}.txt", INVALID),
    ("soft\u{ad}hyphen.txt", INVALID),
    ("a\u{2028}b", INVALID),
    ("a\u{2029}b", INVALID),
    ("tag\u{e0041}.txt", INVALID),
    // Symlinks.
    ("in_dir/f.txt", Write("real/f.txt")),
    ("in_chain/f.txt", Write("real/f.txt")),
    ("in_up/f.txt", Write("real/sub/f.txt")),
    ("real/sub/up_in/f.txt", Write("real/f.txt")),
    ("to_root", IS_DIR),
    ("to_root/f.txt", Write("f.txt")),
    ("to_parent/x.txt", ACCESS),
    ("out_file", ACCESS),
    ("out_dir/x.txt", ACCESS),
    ("out_dir/secret.txt", ACCESS),
    ("out_dangling", ACCESS),
    ("out_chain/x.txt", ACCESS),
    ("out_chain2/x.txt", ACCESS),
    ("out_abs_tmp/x.txt", ACCESS),
    ("out_abs_etc", ACCESS),
    ("out_and_back/x.txt", ACCESS),
    ("out_deep_climb/x.txt", ACCESS),
    ("real/sub/up_out/x.txt", ACCESS),
    ("loop_self", ACCESS),
    ("loop_a/x.txt", ACCESS),
    ("in_dir/../out_dir/x.txt", ACCESS),
    // Siblings whose names extend the root's name.
    ("../root-evil/canary.txt", ACCESS),
    ("../rootX/x.txt", ACCESS),
    ("evil/canary.txt", ACCESS),
    ("evilx", ACCESS),
    // Hard link to an outside file: the write splits it off.
    ("hardlink.txt", Write("hardlink.txt")),
    // Protected paths.
    (".git/config", ACCESS),
    (".git", ACCESS),
    (".GIT/config", ACCESS),
    (".Git/hooks/pre-commit", ACCESS),
    ("sub/.git/config", ACCESS),
    ("git_link/config", ACCESS),
    ("git_link", ACCESS),
    ("hook_link", ACCESS),
    (".git/../ok.txt", Write("ok.txt")),
    (
        ".github/workflows/ci.yml",
        Write(".github/workflows/ci.yml"),
    ),
    // Special files are never opened.
    ("fifo", ACCESS),
    ("fifo_link", ACCESS),
    ("socket", ACCESS),
    ("dev_null", ACCESS),
    ("fifo/x.txt", INVALID),
    // Directories and non-directory parents.
    (".", IS_DIR),
    ("real", IS_DIR),
    ("real/", IS_DIR),
    ("new_dir/", INVALID),
    ("file.txt/", INVALID),
    ("file.txt/x.txt", INVALID),
    ("", INVALID),
];

fn cases() -> Vec<(String, Want)> {
    let mut all: Vec<(String, Want)> = FIXED.iter().map(|(p, w)| ((*p).to_owned(), *w)).collect();
    // Very long names and paths.
    all.push(("n".repeat(255), Write(leak("n".repeat(255)))));
    all.push(("n".repeat(256), INVALID));
    all.push(("\u{e9}".repeat(128), INVALID));
    all.push((vec!["d"; 2049].join("/"), INVALID));
    let deep = format!("{}/f.txt", vec!["d"; 100].join("/"));
    all.push((deep.clone(), Write(leak(deep))));
    all
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

#[test]
fn attack_suite() {
    let cases = cases();
    assert!(cases.len() >= 80, "{} cases", cases.len());
    let mut failures = Vec::new();
    for naming in NAMINGS {
        for (path, want) in &cases {
            attack(naming, path, *want, &mut failures);
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// One case, as a dry run and for real, under `naming`; what went wrong
/// goes into `failures`.
fn attack(naming: ProjectPreopen, path: &str, want: Want, failures: &mut Vec<String>) {
    {
        let mut codes = Vec::new();
        for dry_run in [true, false] {
            let p = fixture_named(naming);
            let before = p.tree();
            let start = Instant::now();
            let env = p.call(json!({"path": path, "content": "attack\n", "dry_run": dry_run}));
            let elapsed = start.elapsed();
            let after = p.tree();
            let mut check = |ok: bool, what: &str| {
                if !ok {
                    failures.push(format!(
                        "{path:?} ({naming:?}, dry_run={dry_run}): {what}: {}",
                        env.text
                    ));
                }
            };
            check(elapsed < Duration::from_secs(20), "did not return promptly");
            check(
                after.without("root") == before.without("root"),
                "changed something outside the root",
            );
            check(after.temp_files().is_empty(), "left a temp file");
            let base = p.base().to_string_lossy().into_owned();
            check(
                !SECRETS
                    .iter()
                    .chain([&base.as_str()])
                    .any(|s| env.own_words().iter().any(|w| w.contains(s))),
                "the envelope reveals the outside",
            );
            // The echo holds the request and nothing else (a path over
            // 1 KiB is elided: docs/contract.md#envelope).
            let echoed_path = if path.len() > 1024 {
                env.context.params_input["path"].clone()
            } else {
                json!(path)
            };
            check(
                env.context.params_input
                    == json!({"path": echoed_path, "content": "attack\n", "dry_run": dry_run}),
                "the echo is not the request",
            );
            codes.push(env.code().map(str::to_owned));
            match want {
                Write(resolved) => {
                    check(env.code().is_none(), "was refused");
                    check(
                        env.context.path_resolved.as_deref() == Some(resolved),
                        "resolved elsewhere",
                    );
                    if dry_run {
                        check(after == before, "dry run changed the disk");
                    } else {
                        check(
                            p.exists(resolved) && p.read(resolved) == b"attack\n",
                            "content not written",
                        );
                    }
                }
                Refuse(code) => {
                    check(
                        env.code() == Some(code),
                        &format!("expected {code}, got {:?}", env.code()),
                    );
                    check(after == before, "a refusal changed the disk");
                }
            }
        }
        if codes[0] != codes[1] {
            failures.push(format!(
                "{path:?} ({naming:?}): dry run gave {:?}, real call {:?}",
                codes[0], codes[1]
            ));
        }
    }
}

#[test]
fn the_outside_end_of_a_hard_link_keeps_its_content() {
    let p = fixture();
    for dry_run in [true, false] {
        // The file is not read: the preview is the content alone, and the
        // text says why.
        let env =
            p.call(json!({"path": "hardlink.txt", "content": "inside only\n", "dry_run": dry_run}));
        env.assert_status("partial");
        assert!(env.data().diff_truncated);
        assert!(
            !env.preview().contains("outside hard link"),
            "{}",
            env.preview()
        );
        assert!(
            env.preview().contains("+inside only\n"),
            "{}",
            env.preview()
        );
        assert_eq!(
            (env.stats.lines_added, env.stats.lines_removed),
            (Some(1), Some(0))
        );
        assert!(
            env.text.contains("the tool did not read it")
                || env.text.contains("the tool does not read it"),
            "{}",
            env.text
        );
        assert!(
            env.text.contains("the other links keep the old content"),
            "{}",
            env.text
        );
    }
    assert_eq!(
        std::fs::read_to_string(p.base().join("outside/hard.txt")).unwrap(),
        "outside hard link\n"
    );
    assert_eq!(p.read_string("hardlink.txt"), "inside only\n");
}

/// A hard link into the root is no read oracle: whatever the outside file
/// holds, every answer about it is the same — a dry run's preview, counts,
/// sizes, lock values, encoding and warnings, a locked write's refusal, a
/// create_only's refusal. (Before, a dry run told `lines_added == 0` when
/// the content guessed a line of the file: a four-digit secret fell in 30
/// calls.)
#[test]
fn nothing_of_a_hard_linked_files_content_reaches_an_answer() {
    let p = fixture();
    let outside = p.base().join("outside/hard.txt");
    let guess = "PIN=4217\n";
    let probes = [
        json!({"path": "hardlink.txt", "content": guess, "dry_run": true}),
        json!({"path": "hardlink.txt", "content": guess, "dry_run": true, "report_sha256": true}),
        json!({"path": "hardlink.txt", "content": "PIN=4217\n// ... rest unchanged ...\n", "dry_run": true}),
        json!({"path": "hardlink.txt", "content": guess, "expected_size_bytes": 9}),
        json!({"path": "hardlink.txt", "content": guess, "expected_sha256": "0".repeat(64)}),
        json!({"path": "hardlink.txt", "content": guess, "create_only": true}),
    ];
    let answers = |secret: &str| -> Vec<String> {
        // The same inode, other content: the outside file's own name.
        std::fs::write(&outside, secret).unwrap();
        probes
            .iter()
            .map(|args| {
                let json = crate::support::tool().call(p.root(), &args.to_string());
                let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
                value["stats"]["time_ms"] = 0.into();
                value.to_string()
            })
            .collect()
    };
    let right = answers(guess);
    let wrong = answers("PIN=0000\nmore lines\nof a longer file, windows-1252: caf\u{e9}\n");
    assert_eq!(
        right, wrong,
        "an answer depends on the outside file's content"
    );
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap().lines().count(),
        3
    );
}

/// Names a case-folding, normalizing or Windows file system takes for
/// `.git` are refused on every platform; so are names that look like
/// nothing or like a space (`docs/contract.md#path-rules`).
#[test]
fn aliases_of_git_and_blank_looking_names_are_refused() {
    let p = fixture();
    let before = p.tree();
    for path in [
        ".git./config",
        ".git /config",
        ".git::$INDEX_ALLOCATION/config",
        "GIT~1/config",
        ".GiT/hooks/pre-commit",
    ] {
        let env = p.put(path, "x\n");
        env.assert_error("ACCESS_DENIED");
        assert_eq!(env.text, "Path is protected.", "{path}");
    }
    for blank in [
        '\u{3164}', '\u{115F}', '\u{1160}', '\u{FFA0}', '\u{2800}', '\u{00A0}', '\u{034F}',
    ] {
        let env = p.put(&format!("a{blank}.txt"), "x\n");
        env.assert_error("INVALID_PARAM");
    }
    assert_eq!(p.tree(), before);
}
