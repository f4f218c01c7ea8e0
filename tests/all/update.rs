use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::time::{Duration, SystemTime};

use crate::support::{Project, Temps, plant_temps};

#[test]
fn updates_with_the_contract_text_and_counts() {
    let p = Project::new();
    p.write("src/main.py", "a\nb\nc\n");
    let env = p.put("src/main.py", "a\nB\nc\nd\n");
    env.assert_status("success");
    assert_eq!(env.text, "Updated 'src/main.py' (+2/-1 lines, 8 bytes).");
    let data = env.data();
    assert!(data.applied);
    assert_eq!(data.operation, "update");
    assert_eq!(env.stats.numbers(), (8, 6, 8, 2, 1));
    assert_eq!(p.read_string("src/main.py"), "a\nB\nc\nd\n");
}

#[test]
fn identical_content_writes_nothing_and_keeps_the_mtime() {
    let p = Project::new();
    p.write("same.txt", "same\n");
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    fs::File::options()
        .write(true)
        .open(p.path("same.txt"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let before = p.tree();
    let env = p.put("same.txt", "same\n");
    env.assert_status("success");
    assert_eq!(env.text, "No changes to 'same.txt' (content identical).");
    assert!(env.data().applied);
    assert_eq!(env.preview(), "");
    assert_eq!(env.stats.bytes_written, Some(0));
    assert_eq!(
        (env.stats.lines_added, env.stats.lines_removed),
        (Some(0), Some(0))
    );
    assert_eq!(p.tree(), before);
    assert_eq!(
        fs::metadata(p.path("same.txt"))
            .unwrap()
            .modified()
            .unwrap(),
        old
    );
}

#[test]
fn a_replace_is_a_rename_to_a_new_inode_and_leaves_no_temp_file() {
    let p = Project::new();
    p.write("f.txt", "old\n");
    let ino = fs::metadata(p.path("f.txt")).unwrap().ino();
    p.put("f.txt", "new\n").assert_status("success");
    assert_ne!(fs::metadata(p.path("f.txt")).unwrap().ino(), ino);
    assert!(p.tree().temp_files().is_empty());
}

#[test]
fn permission_bits_are_kept() {
    let p = Project::new();
    for mode in [0o755, 0o600, 0o640, 0o700] {
        p.write("script.sh", "#!/bin/sh\necho old\n");
        fs::set_permissions(p.path("script.sh"), fs::Permissions::from_mode(mode)).unwrap();
        p.put("script.sh", &format!("#!/bin/sh\necho {mode:o}\n"))
            .assert_status("success");
        let got = p.mode("script.sh");
        assert_eq!(got, mode, "mode {mode:o} became {got:o}");
    }
}

#[test]
fn permission_bits_are_kept_through_a_link_and_the_typed_export() {
    let p = Project::new();
    p.write("bin/tool", "v1\n");
    fs::set_permissions(p.path("bin/tool"), fs::Permissions::from_mode(0o750)).unwrap();
    p.symlink("bin/tool", "tool_link");
    p.put("tool_link", "v2\n").assert_status("success");
    assert_eq!(p.mode("bin/tool"), 0o750);
    let env = crate::support::tool().write(p.root(), "bin/tool", "v3\n", false);
    assert_eq!(env.stats.bytes_written, Some(3));
    assert_eq!(p.read_string("bin/tool"), "v3\n");
    assert_eq!(p.mode("bin/tool"), 0o750);
}

#[test]
fn hard_links_are_split_and_keep_the_old_content() {
    let p = Project::new();
    p.write("inside.txt", "shared\n");
    fs::hard_link(p.path("inside.txt"), p.base().join("outside/hardlink.txt")).unwrap();
    let env = p.put("inside.txt", "changed\n");
    // Written without being read (another name of the file may lie outside
    // the root): the preview is the content alone, so partial.
    env.assert_status("partial");
    assert_eq!(
        env.text,
        "Updated 'inside.txt' (+1/-0 lines, 8 bytes).\n(The file had other hard links, which may lie beyond the project: the tool did not read it, and replaced it with the content as given, in UTF-8; the other links keep the old content.)"
    );
    assert!(!env.preview().contains("shared"), "{}", env.preview());
    assert_eq!(p.read_string("inside.txt"), "changed\n");
    assert_eq!(
        fs::read_to_string(p.base().join("outside/hardlink.txt")).unwrap(),
        "shared\n"
    );
}

#[test]
fn replacing_an_empty_file_and_a_large_one() {
    let p = Project::new();
    p.write("empty.txt", "");
    let env = p.put("empty.txt", "now\n");
    assert_eq!(env.data().operation, "update");
    assert_eq!(env.text, "Updated 'empty.txt' (+1/-0 lines, 4 bytes).");
    let big: String = (0..100_000).map(|i| format!("row {i}\n")).collect();
    p.write("big.txt", &big);
    let changed = big.replace("row 50000\n", "row fifty thousand\n");
    let env = p.put("big.txt", &changed);
    env.assert_status("success");
    assert_eq!(
        (env.stats.lines_added, env.stats.lines_removed),
        (Some(1), Some(1))
    );
    assert_eq!(p.read_string("big.txt"), changed);
}

#[test]
fn a_write_sweeps_stale_temp_files_from_its_directory_only() {
    let p = Project::new();
    p.mkdir("deep/er");
    let root_stale = plant_temps(&p.path("")).stale;
    let Temps {
        stale,
        fresh,
        lookalike,
    } = plant_temps(&p.path("deep/er"));
    p.put("deep/er/file.txt", "new\n").assert_status("success");
    assert!(!stale.exists(), "the stale temp file is swept");
    assert!(fresh.exists(), "a live writer's temp file is kept");
    assert!(lookalike.exists(), "a name of another pattern is kept");
    assert!(root_stale.exists(), "other directories are left alone");
    p.put("top.txt", "new\n").assert_status("success");
    assert!(!root_stale.exists(), "the root is swept by a write into it");
}
