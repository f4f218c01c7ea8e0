//! Where the build put things, found from the running test binary
//! (`<target>/<profile>/deps/<test>`).

use std::path::PathBuf;

/// The build's profile directory, `<target>/<profile>`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("a test binary lives in <target>/<profile>/deps")
        .to_path_buf()
}

/// The `write-tool` binary of this build. Cargo builds it for the host
/// crate's integration tests; other suites do not get it.
pub fn bin() -> PathBuf {
    let bin = profile_dir().join(format!("write-tool{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is not built: only the host crate's tests get it",
        bin.display()
    );
    bin
}

/// [`bin`] as text, for argument lists.
pub fn bin_str() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| bin().to_str().expect("a UTF-8 build path").to_owned())
}

/// Scratch space that outlives one test (`<target>/tmp`), for what is
/// worth keeping between runs: the compile cache, installed peers.
pub fn target_tmp() -> PathBuf {
    let dir = profile_dir()
        .parent()
        .map(|target| target.join("tmp"))
        .expect("a profile directory has a parent");
    std::fs::create_dir_all(&dir).expect("create <target>/tmp");
    dir
}

/// One compile cache for every process and tool the suites start, so that
/// only the first pays for compiling the component.
pub fn cache_dir() -> PathBuf {
    target_tmp().join("write-tool-cache")
}
