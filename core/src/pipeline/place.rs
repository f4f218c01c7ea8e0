//! The commit point of every change, and the looks before it
//! (`docs/contract.md#writing`): see [`place`].

use crate::error::ToolError;
use crate::fs::{self, Unchanged};

use super::stage::{Planned, Staged};
use super::target::refine;

/// Put one staged file in place: **the commit point**. Where nothing may
/// be there (`create_only`, a revert that restores a removed file), the
/// temp file is linked to the name, which fails whenever a file got there
/// first; where the target must be as it was read, it is looked at once
/// more, the moment before the rename; a removal is looked at and
/// unlinked.
pub(super) fn place(s: &Staged<'_, '_>) -> std::io::Result<()> {
    let name = s.name();
    match &s.temp {
        Some(temp) => fs::commit_staged(&s.dir, temp, name, s.plan.unchanged),
        None => {
            if let Some(expected) = s.plan.unchanged {
                fs::check_unchanged(&s.dir, name, expected)?;
            }
            s.dir.unlink_at(name)
        }
    }
}

/// Look at each target as its change expects it, before anything is
/// saved or recorded: a refusal here costs nothing. [`place`] looks again.
pub(super) fn look(staged: &[Staged<'_, '_>]) -> Result<(), ToolError> {
    for s in staged {
        if let Some(expected) = s.plan.unchanged {
            fs::check_unchanged(&s.dir, s.name(), expected).map_err(|e| failure(&s.plan, &e))?;
        }
    }
    Ok(())
}

/// The error for a file that could not be placed.
pub(super) fn failure(plan: &Planned<'_, '_>, err: &std::io::Error) -> ToolError {
    let target = plan.target;
    let error = if fs::is_target_changed(err) {
        match plan.unchanged {
            // Only a create expects nothing there.
            Some(Unchanged::Missing) => ToolError::exists(&target.display, None),
            _ => ToolError::changed(&target.display),
        }
    } else if err.kind() == std::io::ErrorKind::IsADirectory {
        ToolError::became_directory()
    } else if err.kind() == std::io::ErrorKind::Interrupted {
        // Only a host that gates the commit point refuses it so.
        ToolError::cancelled()
    } else {
        fs::io_error(err, "writing to file")
    };
    refine(target, error)
}
