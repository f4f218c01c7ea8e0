//! Temp files: planting what a killed writer leaves, and finding what a
//! call left.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Whether `name` looks like one of the tool's temp files
/// (`.wt-<16 hex>.tmp`, or anything else that starts `.wt-` and ends
/// `.tmp`: a test should see a near miss too).
pub fn is_tool_temp(name: &str) -> bool {
    name.starts_with(".wt-") && name.ends_with(".tmp")
}

/// The names of the tool's temp files in `dir` (not below it), sorted.
pub fn temp_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("read_dir")
        .filter_map(|e| e.expect("entry").file_name().into_string().ok())
        .filter(|n| is_tool_temp(n))
        .collect();
    names.sort();
    names
}

/// Temp files planted by [`plant_temps`].
#[derive(Debug)]
pub struct Temps {
    /// Of the tool's pattern, last modified an hour ago: what a killed
    /// writer leaves.
    pub stale: PathBuf,
    /// Of the tool's pattern, dated a minute ahead: a live writer's, fresh
    /// however long the test takes to reach its write.
    pub fresh: PathBuf,
    /// An hour old, but not of the tool's pattern.
    pub lookalike: PathBuf,
}

/// Plant [`Temps`] in `dir`.
pub fn plant_temps(dir: &Path) -> Temps {
    let temps = Temps {
        stale: dir.join(".wt-0123456789abcdef.tmp"),
        fresh: dir.join(".wt-fedcba9876543210.tmp"),
        lookalike: dir.join(".wt-not-the-pattern.tmp"),
    };
    let (now, hour) = (SystemTime::now(), std::time::Duration::from_secs(3600));
    for (path, time) in [
        (&temps.stale, now - hour),
        (&temps.fresh, now + hour / 60),
        (&temps.lookalike, now - hour),
    ] {
        fs::write(path, "partial").expect("plant");
        fs::File::options()
            .write(true)
            .open(path)
            .expect("open")
            .set_modified(time)
            .expect("age");
    }
    temps
}
