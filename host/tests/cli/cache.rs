use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::{bin_str, envelope, run_cmd};

/// `write-tool write` with the compile cache in `cache` (or off).
fn write_with_cache(root: &Path, cache: Option<&Path>, content: &str) -> Output {
    let mut cmd = Command::new(bin_str());
    match cache {
        Some(dir) => cmd.arg("--cache-dir").arg(dir),
        None => cmd.arg("--no-cache"),
    };
    cmd.arg("--root")
        .arg(root)
        .args(["write", "f.txt", "--content", content]);
    let out = run_cmd(&mut cmd, b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(envelope(&out)["status"], "success");
    assert_eq!(
        fs::read_to_string(root.join("f.txt")).expect("written"),
        content
    );
    out
}

fn artifacts(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found: Vec<_> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.expect("entry").path())
                .map(|p| {
                    (
                        p.file_name().expect("name").to_string_lossy().into_owned(),
                        fs::read(&p).expect("artifact"),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn the_first_process_stores_the_artifact_and_later_ones_reuse_it() {
    let root = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join("nested/cache");
    write_with_cache(root.path(), Some(&dir), "one");
    let stored = artifacts(&dir);
    assert_eq!(stored.len(), 1, "one artifact, no temp file left");
    assert!(stored[0].0.ends_with(".cwasm"));
    // The artifact first (wasmtime maps the file), then the trailer.
    assert!(stored[0].1.starts_with(b"\x7fELF"));
    assert_eq!(&stored[0].1[stored[0].1.len() - 16..][..8], b"WTCACHE3");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }
    let modified = fs::metadata(dir.join(&stored[0].0))
        .unwrap()
        .modified()
        .unwrap();
    write_with_cache(root.path(), Some(&dir), "two");
    // A server loads it too (copied in rather than mapped, the other way
    // of loading): a request answered, nothing compiled or stored again.
    let out = run_cmd(
        Command::new(bin_str())
            .arg("--cache-dir")
            .arg(&dir)
            .arg("--root")
            .arg(root.path())
            .arg("serve"),
        b"{\"path\": \"f.txt\", \"content\": \"three\"}\n",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"status\":\"success\""));
    assert_eq!(
        artifacts(&dir),
        stored,
        "a valid artifact is reused as it is"
    );
    assert_eq!(
        fs::metadata(dir.join(&stored[0].0))
            .unwrap()
            .modified()
            .unwrap(),
        modified
    );
}

#[test]
fn a_corrupt_or_truncated_artifact_is_replaced_by_compiling() {
    let root = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_with_cache(root.path(), Some(cache.path()), "one");
    let stored = artifacts(cache.path());
    let path = cache.path().join(&stored[0].0);

    let mut corrupt = stored[0].1.clone();
    let middle = corrupt.len() / 2;
    corrupt[middle] ^= 0xff;
    fs::write(&path, &corrupt).unwrap();
    write_with_cache(root.path(), Some(cache.path()), "two");
    assert_eq!(
        artifacts(cache.path()),
        stored,
        "the artifact was rewritten whole"
    );

    fs::write(&path, &stored[0].1[..1000]).unwrap();
    write_with_cache(root.path(), Some(cache.path()), "three");
    assert_eq!(artifacts(cache.path()), stored);

    fs::write(&path, b"").unwrap();
    write_with_cache(root.path(), Some(cache.path()), "four");
    assert_eq!(artifacts(cache.path()), stored);
}

#[test]
fn a_cache_that_cannot_be_used_costs_only_the_compile() {
    let root = tempfile::tempdir().unwrap();
    let blocker = tempfile::NamedTempFile::new().unwrap();
    // A directory below a regular file can be neither read nor created.
    write_with_cache(root.path(), Some(&blocker.path().join("cache")), "blocked");
    // Under a file-size limit, wasmtime and the cache keep off files.
    let cache = tempfile::tempdir().unwrap();
    let script = "ulimit -f 100; exec \"$0\" \"$@\"";
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script, bin_str(), "--cache-dir"])
        .arg(cache.path())
        .arg("--root")
        .arg(root.path())
        .args(["write", "f.txt", "--content", "limited"]);
    let out = run_cmd(&mut cmd, b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        fs::read_to_string(root.path().join("f.txt")).unwrap(),
        "limited"
    );
    assert_eq!(
        artifacts(cache.path()),
        Vec::new(),
        "nothing written past the limit"
    );
}

#[test]
fn the_cache_can_be_turned_off_by_flag_and_by_environment() {
    let root = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_with_cache(root.path(), None, "flag");
    // The switch wins over a cache directory named in the environment.
    let out = Command::new(bin_str())
        .env("WRITE_TOOL_CACHE", "off")
        .env("WRITE_TOOL_CACHE_DIR", cache.path())
        .arg("--root")
        .arg(root.path())
        .args(["write", "f.txt", "--content", "env"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(artifacts(cache.path()), Vec::new());
}

#[test]
fn storing_an_artifact_keeps_only_the_newest_and_removes_stale_temp_files() {
    use std::time::{Duration, SystemTime};
    let root = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let keep = write_tool::CompileCache::KEEP;
    let day = Duration::from_secs(24 * 60 * 60);
    let aged = |name: &str, age: Duration| {
        let path = cache.path().join(name);
        fs::write(&path, b"an older artifact WTCACHE3").unwrap();
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(SystemTime::now() - age)
            .unwrap();
    };
    // Artifacts of other components or engines, the i-th i days old.
    let older: Vec<String> = (1..=keep + 2)
        .map(|i| format!("{i:032x}-{:032x}.cwasm", 0xabcu64))
        .collect();
    // An artifact as builds before SHA-256 keys named them: the oldest.
    let old_name = format!("{:016x}-{:016x}.cwasm", 1, 2);
    aged(&old_name, day * 50);
    for (i, name) in older.iter().enumerate() {
        aged(name, day * u32::try_from(i + 1).unwrap());
    }
    let temp_of = |pid: u32| format!(".{}.{pid}.7.tmp", older[0]);
    aged(&temp_of(1), day);
    aged(&temp_of(2), Duration::ZERO);
    aged("notes.cwasm", day * 100);

    write_with_cache(root.path(), Some(cache.path()), "one");
    let names: Vec<String> = artifacts(cache.path())
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let stored: Vec<&String> = names
        .iter()
        .filter(|n| {
            n.ends_with(".cwasm") && !older.contains(n) && *n != "notes.cwasm" && **n != old_name
        })
        .collect();
    assert_eq!(stored.len(), 1, "the new artifact is kept: {names:?}");
    let mut expected: Vec<String> = older[..keep - 1].to_vec();
    expected.extend([stored[0].clone(), temp_of(2), "notes.cwasm".to_owned()]);
    expected.sort();
    assert_eq!(
        names, expected,
        "the {keep} newest artifacts, a temp file that may still be written, and a file not named as ours"
    );
}

/// The cached artifact is code the host runs: a cache directory that
/// others can write, or that another user owns, is not used at all (the
/// host says so, compiles, and stores nothing there).
#[test]
fn a_cache_directory_others_could_write_is_not_used() {
    use std::os::unix::fs::{PermissionsExt, chown};
    use write_tool_test_support::capability;
    let root = tempfile::tempdir().unwrap();
    // Giving the directory to another user takes root.
    let root_cases = capability::runs(
        capability::is_root(),
        "a_cache_directory_others_could_write_is_not_used (another owner)",
        "root",
    );
    for (why, prepare) in [
        (
            "others can write it",
            Box::new(|dir: &Path| {
                fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap()
            }) as Box<dyn Fn(&Path)>,
        ),
        (
            "it is owned by another user",
            Box::new(|dir: &Path| chown(dir, Some(65534), Some(65534)).unwrap()),
        ),
    ] {
        if why.contains("another user") && !root_cases {
            continue;
        }
        let cache = tempfile::tempdir().unwrap();
        prepare(cache.path());
        let out = write_with_cache(root.path(), Some(cache.path()), why);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("not using the compile cache") && stderr.contains(why),
            "{stderr}"
        );
        assert!(artifacts(cache.path()).is_empty(), "{why}: nothing stored");
    }
}

/// An artifact is opened without following links: a link where the
/// artifact should be is not loaded from, and the artifact compiled in its
/// place replaces the link, not what it points to.
#[test]
fn an_artifact_behind_a_link_is_not_loaded() {
    let root = tempfile::tempdir().unwrap();
    let first = tempfile::tempdir().unwrap();
    write_with_cache(root.path(), Some(first.path()), "one");
    let [(name, bytes)] = &artifacts(first.path())[..] else {
        panic!("one artifact")
    };
    let second = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(first.path().join(name), second.path().join(name)).unwrap();
    write_with_cache(root.path(), Some(second.path()), "two");
    let meta = fs::symlink_metadata(second.path().join(name)).unwrap();
    assert!(
        meta.is_file(),
        "the link was replaced by an artifact of its own"
    );
    assert_eq!(&fs::read(first.path().join(name)).unwrap(), bytes);
}

/// A directory above the cache that others can write, and that is not
/// sticky, lets another user swap the cache for one of theirs between the
/// host's check and its load: the cache is not used (said once on stderr),
/// however far down it sits, and nothing is stored; the call still works.
/// Made sticky (as `/tmp` is), the same directory is fine.
#[test]
fn a_cache_below_a_directory_others_can_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let base = tempfile::tempdir().unwrap();
    let open = base.path().join("shared");
    let cache = open.join("me/cache");
    fs::create_dir_all(&cache).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    let out = write_with_cache(root.path(), Some(&cache), "one");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("not using the compile cache").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("can be written by others and is not sticky"),
        "{stderr}"
    );
    assert!(artifacts(&cache).is_empty(), "nothing stored");
    fs::set_permissions(&open, fs::Permissions::from_mode(0o1777)).unwrap();
    let out = write_with_cache(root.path(), Some(&cache), "two");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(artifacts(&cache).len(), 1, "stored once trusted");
}
