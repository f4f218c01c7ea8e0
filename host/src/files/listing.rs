//! What the file API reads itself, once `view` has admitted the path: a
//! directory's entries, and a file's bytes — only the version `view`
//! admitted, only when it still has no other hard link.

use std::io::Read as _;
use std::os::unix::fs::MetadataExt as _;

use cap_std::fs::PermissionsExt as _;

use serde_json::{Value, json};

use crate::Root;

/// How many times a file that changes while it is read is read again.
const READS: usize = 3;

/// `DirectoryListing` of `relative` (named `name` to the caller): its
/// files and directories, one level, not what lies behind links.
pub(super) fn of(root: &Root, relative: &str, name: &str) -> std::io::Result<Value> {
    let dir = root.dir().open_dir(relative)?;
    let mut entries = Vec::new();
    for entry in dir.entries()? {
        let entry = entry?;
        let Ok(meta) = entry.metadata() else { continue };
        let kind = if meta.is_dir() {
            "directory"
        } else if meta.is_file() {
            "file"
        } else {
            continue;
        };
        let modified = meta
            .modified()
            .map(cap_std::time::SystemTime::into_std)
            .unwrap_or(std::time::UNIX_EPOCH);
        let modified: chrono::DateTime<chrono::Utc> = modified.into();
        entries.push(json!({
            "name": entry.file_name().to_string_lossy(),
            "size": meta.len(),
            "type": kind,
            "modified_at": modified.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "mode": format!("{:04o}", meta.permissions().mode() & 0o7777),
        }));
    }
    entries.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Ok(json!({"path": name, "entries": entries}))
}

/// The bytes of `relative`, if they are still the version `base` names
/// (XXH3-128, as `view` reports it) and the file has no other hard link;
/// read again if it changed meanwhile, refused if it keeps changing.
pub(super) fn bytes_of(
    root: &Root,
    relative: &str,
    base: &str,
    max: usize,
) -> Result<Vec<u8>, String> {
    for _ in 0..READS {
        let file = root
            .dir()
            .open(relative)
            .map_err(|e| format!("The file could not be read: {e}."))?
            .into_std();
        let meta = file
            .metadata()
            .map_err(|e| format!("The file could not be read: {e}."))?;
        if !meta.is_file() || meta.nlink() > 1 {
            return Err(
                "The file was replaced by one the tool does not show while it was read.".into(),
            );
        }
        let mut bytes = Vec::new();
        let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
        file.take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("The file could not be read: {e}."))?;
        if format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes)) == base {
            return Ok(bytes);
        }
    }
    Err("The file kept changing while it was read; try again.".into())
}
