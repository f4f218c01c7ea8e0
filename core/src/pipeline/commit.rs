//! Stage 5, **commit**: missing parents created and the target replaced
//! atomically (`docs/contract.md#writing`). The rename is the commit
//! point: before it nothing the caller can see has changed; after it the
//! new content is the file.

use std::time::SystemTime;

use crate::error::{ErrorKind, ToolError};
use crate::fs::{self, Dir, Existing, Unchanged};

use super::config::Config;
use super::target::Target;

/// What the commit left on disk.
#[derive(Debug)]
pub(super) struct Committed {
    /// The new file's modification time, as written.
    pub(super) modified: Option<SystemTime>,
    /// The outermost directory the write created, as shown.
    pub(super) created_dir: Option<String>,
}

/// Write `bytes` over `target`. With `expect_unchanged` (a locked or
/// create-only write), the target is looked at once more just before the
/// rename and must still be what `old` was (or still be missing).
/// `started` is when the call began: temp files older than it are swept.
pub(super) fn commit(
    target: &Target<'_>,
    old: Option<&Existing>,
    bytes: &[u8],
    expect_unchanged: bool,
    started: SystemTime,
    config: &Config,
) -> Result<Committed, ToolError> {
    let unchanged = expect_unchanged.then_some(match old {
        None => Unchanged::Missing,
        Some(old) => Unchanged::File {
            len: old.bytes.len() as u64,
            modified: old.modified,
        },
    });
    let written =
        write(target, bytes, unchanged, started, config).map_err(|err| refine(target, err))?;
    Ok(Committed {
        modified: written.modified,
        created_dir: created_dir(target),
    })
}

/// Write `bytes` over `target` with no journal, `unchanged` what it must
/// still be just before the rename (a patch's single file).
pub(super) fn commit_expecting(
    target: &Target<'_>,
    bytes: &[u8],
    unchanged: Option<Unchanged>,
    started: SystemTime,
    config: &Config,
) -> Result<Committed, ToolError> {
    let written =
        write(target, bytes, unchanged, started, config).map_err(|err| refine(target, err))?;
    Ok(Committed {
        modified: written.modified,
        created_dir: created_dir(target),
    })
}

/// The capability layer's refusal and the operating system's own (an
/// immutable file, a directory that takes no new entries) reach the
/// component alike. Walk the path again: if it still resolves to the same
/// place inside, nothing led outside, and the refusal was the system's.
pub(super) fn refine(target: &Target<'_>, err: ToolError) -> ToolError {
    if err.kind() == ErrorKind::OutsideRoot
        && fs::resolve(target.root, target.rel.clone())
            .is_ok_and(|again| again.names == target.resolved.names)
    {
        ToolError::os_refused()
    } else {
        err
    }
}

/// The outermost directory a write to `target` creates, as shown.
pub(super) fn created_dir(target: &Target<'_>) -> Option<String> {
    let resolved = &target.resolved;
    resolved
        .creates_dirs()
        .then(|| resolved.parent_display().map(|p| target.shown(p)))
        .flatten()
}

/// Create parents and replace the target; on failure remove what was
/// created.
fn write(
    target: &Target<'_>,
    content: &[u8],
    unchanged: Option<Unchanged>,
    started: SystemTime,
    config: &Config,
) -> Result<fs::sys::Stat, ToolError> {
    let (root, resolved) = (target.root, &target.resolved);
    let created = fs::create_parents(root, resolved)
        .map_err(|e| fs::io_error(&e, "creating the parent directory"))?;
    let parent = resolved.parent().join("/");
    // A directory this call created holds no leftovers.
    let new_parent = created.last() == Some(&parent);
    let swept = (config.sweep_temps && !new_parent).then_some(started);
    let written = (|| {
        let opened;
        let dir: &Dir = if parent.is_empty() {
            root
        } else {
            opened = root.open_dir_at(&parent)?;
            &opened
        };
        fs::write_atomic(
            dir,
            resolved.file_name(),
            content,
            unchanged,
            swept,
            config.durability,
        )
    })();
    written.map_err(|e| {
        fs::remove_dirs(root, &created);
        if fs::is_target_changed(&e) {
            match unchanged {
                // Only `create_only` expects nothing there.
                Some(Unchanged::Missing) => ToolError::exists(&target.display, None),
                _ => ToolError::changed(&target.display),
            }
        } else if e.kind() == std::io::ErrorKind::IsADirectory {
            ToolError::became_directory()
        } else if e.kind() == std::io::ErrorKind::Interrupted {
            // Only a host that gates the commit point refuses it so.
            ToolError::cancelled()
        } else {
            fs::io_error(&e, "writing to file")
        }
    })
}
