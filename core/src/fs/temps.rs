//! The tool's temp files: their names, and the sweep of those a killed
//! writer left behind.

use std::time::{Duration, SystemTime};

use super::sys::{Dir, Kind};

pub use write_tool_wire::temps::{TEMP_PREFIX, TEMP_SUFFIX, is_temp_name};

/// How much older than a write's start a temp file must be for the write to
/// sweep it away. Between its last `write` and its rename a live writer
/// only syncs, so this margin keeps the sweep off the temp files of writers
/// still running beside it.
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(1);

/// A fresh temp-file name; `attempt` varies it after a collision.
pub fn temp_name(attempt: u32) -> String {
    use std::hash::{BuildHasher, Hasher};
    // std's per-process random keys: the system's random source natively,
    // WASI's in the component.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(attempt);
    format!("{TEMP_PREFIX}{:016x}{TEMP_SUFFIX}", hasher.finish())
}

/// Remove from `dir` the tool's temp files (regular files of its name
/// pattern) last modified more than [`STALE_TEMP_AGE`] before `started`.
/// Best effort: what cannot be listed, read or removed stays.
pub fn remove_stale(dir: &Dir, started: SystemTime) {
    let Some(cutoff) = started.checked_sub(STALE_TEMP_AGE) else {
        return;
    };
    let Ok(names) = dir.names(is_temp_name) else {
        return;
    };
    for name in names {
        let stale = dir
            .stat_at(&name)
            .is_ok_and(|stat| stat.kind == Kind::File && stat.modified.is_some_and(|t| t < cutoff));
        if stale {
            let _ = dir.unlink_at(&name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names() {
        assert!(is_temp_name(".wt-0123456789abcdef.tmp"));
        assert!(!is_temp_name(".wt-0123456789abcde.tmp"));
        assert!(!is_temp_name(".wt-0123456789abcdeg.tmp"));
        assert!(!is_temp_name("x.wt-0123456789abcdef.tmp"));
        assert!(is_temp_name(&temp_name(0)));
        assert_ne!(temp_name(0), temp_name(1));
    }
}
