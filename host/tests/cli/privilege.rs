//! A replaced or restored file never gains privilege
//! (`docs/contract.md#writing`, SECURITY.md): the mode rule as root and
//! as another user, with the journal and without. These need root, to give
//! files to other users and to run the tool as one; CI runs them as root.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
use std::path::Path;
use std::process::{Command, Output};

use write_tool_test_support::capability;

use crate::{bin_str, root_arg, run_cmd};

/// Users the tests give files to, and run the tool as.
const PLANTER: u32 = 4101;
const WRITER: u32 = 4102;

fn is_root() -> bool {
    capability::runs(
        capability::is_root(),
        "privilege tests",
        "root (to give files to other users and run as one)",
    )
}

/// `write-tool ARGS` as `uid` (group `uid`, no other groups), with no
/// cache and no journal of the user's.
fn run_as(uid: Option<u32>, args: &[&str]) -> Output {
    let mut cmd = match uid {
        Some(uid) => {
            let mut cmd = Command::new("setpriv");
            cmd.args([
                &format!("--reuid={uid}"),
                &format!("--regid={uid}"),
                "--clear-groups",
                "--",
                bin_str(),
            ]);
            cmd
        }
        None => Command::new(bin_str()),
    };
    cmd.env("WRITE_TOOL_CACHE", "off").args(args);
    run_cmd(&mut cmd, b"")
}

/// A project root everyone may write, a file in it planted by `PLANTER`
/// with `mode`.
fn planted(mode: u32) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
    let root = dir.path().join("root");
    fs::create_dir(&root).expect("root");
    fs::set_permissions(&root, fs::Permissions::from_mode(0o777)).expect("chmod");
    let prog = root.join("prog");
    fs::write(&prog, "#!/bin/sh\nid -u\n").expect("plant");
    chown(&prog, Some(PLANTER), Some(PLANTER)).expect("chown");
    fs::set_permissions(&prog, fs::Permissions::from_mode(mode)).expect("chmod");
    (dir, root)
}

/// `--root ROOT` and the journal below `base`, or none.
fn journaled<'a>(root: &'a str, base: &'a Path, journal: bool) -> Vec<&'a str> {
    let mut args = vec!["--root", root];
    if journal {
        args.extend(["--journal", base.to_str().expect("UTF-8")]);
    } else {
        args.push("--no-journal");
    }
    args
}

fn owner_and_mode(path: &Path) -> (u32, u32, u32) {
    let meta = fs::metadata(path).expect("stat");
    (meta.uid(), meta.gid(), meta.mode() & 0o7777)
}

/// Root replacing another user's setuid program gives the file back to
/// that user, with its mode: it stays that user's program, never root's.
/// Undone, the same.
#[test]
fn root_keeps_the_owner_so_a_planted_setuid_program_never_becomes_roots() {
    if !is_root() {
        return;
    }
    for journal in [true, false] {
        let (dir, root) = planted(0o4755);
        let (root_s, base) = (root_arg(&root), dir.path().join("journals"));
        let args = journaled(&root_s, &base, journal);
        let write: Vec<&str> = [
            &args[..],
            &["write", "prog", "--content", "#!/bin/sh\necho changed\n"],
        ]
        .concat();
        let out = run_as(None, &write);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(
            owner_and_mode(&root.join("prog")),
            (PLANTER, PLANTER, 0o4755)
        );
        if journal {
            let undo: Vec<&str> = [&args[..], &["undo"]].concat();
            let out = run_as(None, &undo);
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            assert_eq!(
                fs::read_to_string(root.join("prog")).expect("read"),
                "#!/bin/sh\nid -u\n"
            );
            assert_eq!(
                owner_and_mode(&root.join("prog")),
                (PLANTER, PLANTER, 0o4755)
            );
        }
    }
}

/// A user replacing another user's setuid/setgid program cannot give the
/// file back to its owner: the new file is the writer's, and loses the
/// set-user-ID and set-group-ID bits (its other bits kept).
#[test]
fn a_file_that_changes_owner_loses_set_user_and_group_id() {
    if !is_root() {
        return;
    }
    let (_dir, root) = planted(0o6755);
    let root_s = root_arg(&root);
    let out = run_as(
        Some(WRITER),
        &[
            "--root",
            &root_s,
            "--no-journal",
            "write",
            "prog",
            "--content",
            "#!/bin/sh\necho mine\n",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(owner_and_mode(&root.join("prog")), (WRITER, WRITER, 0o755));
}

/// A hard link in the root to a setuid file outside it: the write splits
/// it off, and the content written does not inherit the privilege, even
/// where the owner is kept (root writing root's file).
#[test]
fn a_hard_linked_setuid_file_split_off_loses_set_user_and_group_id() {
    if !is_root() {
        return;
    }
    for journal in [true, false] {
        let dir = tempfile::tempdir().expect("tempdir");
        let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
        fs::create_dir(&root).expect("root");
        fs::create_dir(&outside).expect("outside");
        let helper = outside.join("helper");
        fs::write(&helper, "#!/bin/sh\ntrue\n").expect("plant");
        fs::set_permissions(&helper, fs::Permissions::from_mode(0o6755)).expect("chmod");
        fs::hard_link(&helper, root.join("helper")).expect("link");
        let (root_s, base) = (root_arg(&root), dir.path().join("journals"));
        let args = journaled(&root_s, &base, journal);
        let write: Vec<&str> = [
            &args[..],
            &["write", "helper", "--content", "#!/bin/sh\nid\n"],
        ]
        .concat();
        let out = run_as(None, &write);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let (uid, _, mode) = owner_and_mode(&root.join("helper"));
        assert_eq!((uid, mode), (0, 0o755), "journal {journal}");
        // The file outside is untouched, privilege and all.
        assert_eq!(owner_and_mode(&helper).2, 0o6755);
        assert_eq!(
            fs::read_to_string(&helper).expect("read"),
            "#!/bin/sh\ntrue\n"
        );
    }
}
