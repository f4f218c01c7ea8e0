//! Stage 2, **read the old file**: the bytes a write replaces, bounded by
//! the content limit, and what the optimistic lock compares.

use crate::error::ToolError;
use crate::fs::{self, Existing, ReadError, TargetKind};

use super::config::Config;
use super::target::Target;

/// The old file of `target`, `None` when there is none.
///
/// Its size is checked before it is opened: a file larger than the tool
/// reads is never read.
pub(super) fn read(target: &Target<'_>, config: &Config) -> Result<Option<Existing>, ToolError> {
    if target.resolved.kind != TargetKind::File {
        return Ok(None);
    }
    let limit = config.max_content_bytes;
    if let Some(len) = target.resolved.len
        && len > limit
    {
        return Err(ToolError::existing_too_large(len, limit));
    }
    let existing =
        fs::read_existing(target.root, &target.resolved.names, limit).map_err(|e| match e {
            ReadError::NotRegular => ToolError::replaced_while_read(),
            ReadError::Walk(e) => fs::walk::error(&e),
            ReadError::TooLarge { len } => ToolError::existing_too_large(len, limit),
            // The walk saw it a moment ago.
            ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ToolError::replaced_while_read()
            }
            ReadError::Io(e) => fs::io_error(&e, "reading the existing file"),
        })?;
    // The walk saw a file of one name; one that has others now was linked
    // meanwhile, perhaps to a file outside the root: not read.
    if existing.link_count > 1 {
        return Err(ToolError::replaced_while_read());
    }
    Ok(Some(existing))
}
