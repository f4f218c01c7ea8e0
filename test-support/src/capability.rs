//! Tests that need what only some machines give (root, to give a file to
//! another user; a file system that takes `chattr +i`; the right to
//! mount). Where it is
//! missing, such a test says so on stderr (past the harness's capture, so
//! that the skip shows beside the test's "ok") and passes without running —
//! except under CI (`CI=true`), which runs every test as root on a file
//! system that takes `chattr`, where a missing capability fails the test
//! rather than quietly losing it.
//!
//! The skip is a line on stderr, not a count in the harness's summary:
//! stable libtest has no way for a test to skip itself at run time, and
//! marking these `#[ignore]` when the build finds no root would take a
//! build script that probes root, `chattr` and mounts in the production
//! crate's build (the CLI's tests are that crate's), run by every
//! `cargo install`.

use std::path::Path;
use std::process::Command;

/// Whether this process runs as root.
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.trim_ascii() == b"0")
}

/// Whether `chattr +i` works on a file in `dir` (root, and a file system
/// with the attribute: not tmpfs).
pub fn chattr_works(dir: &Path) -> bool {
    let probe = dir.join(".chattr-probe");
    if std::fs::write(&probe, b"probe").is_err() {
        return false;
    }
    let set = Command::new("chattr")
        .arg("+i")
        .arg(&probe)
        .output()
        .is_ok_and(|out| out.status.success());
    if set {
        let _ = Command::new("chattr").arg("-i").arg(&probe).status();
    }
    let _ = std::fs::remove_file(&probe);
    set
}

/// Whether `mount --bind` works here (root, with the right to mount).
pub fn bind_mount_works(dir: &Path) -> bool {
    let (from, to) = (dir.join(".mount-probe-from"), dir.join(".mount-probe-to"));
    if std::fs::create_dir(&from).is_err() || std::fs::create_dir(&to).is_err() {
        return false;
    }
    let mounted = Command::new("mount")
        .arg("--bind")
        .arg(&from)
        .arg(&to)
        .output()
        .is_ok_and(|out| out.status.success());
    if mounted {
        let _ = Command::new("umount").arg(&to).status();
    }
    let _ = std::fs::remove_dir(&from);
    let _ = std::fs::remove_dir(&to);
    mounted
}

/// A directory this process can write in on another file system than
/// `than`'s: `/dev/shm`, the target directory's `tmp/` or `/var/tmp`,
/// whichever is first; none on a machine with one file system for all.
pub fn other_file_system(than: &Path) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(than).ok()?.dev();
    ["/dev/shm".into(), crate::target_tmp(), "/var/tmp".into()]
        .into_iter()
        .find(|dir: &std::path::PathBuf| {
            std::fs::metadata(dir).is_ok_and(|m| m.is_dir() && m.dev() != dev)
                && tempfile::tempdir_in(dir).is_ok()
        })
}

/// Whether the test `name`, which needs `what`, can run (`have`). When it
/// cannot, it says so loudly; under CI it fails instead.
pub fn runs(have: bool, name: &str, what: &str) -> bool {
    if have {
        return true;
    }
    let ci = std::env::var_os("CI").is_some_and(|v| v == "true");
    assert!(
        !ci,
        "{name} needs {what}; CI runs every test as root, allowed to mount, on a file system \
         that takes chattr"
    );
    // Written to the process's stderr itself, not through `eprintln!`,
    // which the test harness captures and shows only for a failure: a
    // skip must show even when the test reads "ok".
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED {name}: it needs {what} (CI runs it as root)"
    );
    false
}
