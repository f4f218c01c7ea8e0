//! Stage 1, **resolve**: the request's path placed under a root, walked
//! with every link followed, checked against the protected paths, and
//! refused where no file can be written there.

use crate::error::{ErrorKind, ToolError};
use crate::fs::{self, Dir, Resolved, TargetKind};
use crate::path::RelPath;
use crate::roots::Roots;
use write_tool_wire::request::ToolName;

use super::config::Config;

/// Where a call writes.
#[derive(Debug)]
pub(super) struct Target<'r> {
    /// The root the path resolved under.
    pub(super) root: &'r Dir,
    /// The path as the request gave it, below that root (walked again to
    /// tell a capability refusal from the system's).
    pub(super) rel: RelPath,
    /// The path with every link followed.
    pub(super) resolved: Resolved,
    /// How the envelope names it (`path_resolved`): root-relative, or
    /// under another root's absolute name.
    pub(super) display: String,
    /// Another root's absolute name, which prefixes what is shown of it.
    pub(super) prefix: Option<&'r str>,
}

impl Target<'_> {
    /// A root-relative name shown under the root's prefix.
    pub(super) fn shown(&self, rel: String) -> String {
        prefixed(self.prefix, rel)
    }
}

/// Place `path` for a call to `tool` and walk it.
pub(super) fn resolve<'r>(
    roots: &'r Roots,
    tool: ToolName,
    path: &str,
) -> Result<Target<'r>, ToolError> {
    resolve_as(roots, tool, path, true)
}

/// Place `path` for a call to `tool` and walk it, a link as its last name
/// followed or not (`fs::resolve_unfollowed`: a link removed, or made
/// again, is the link itself).
pub(super) fn resolve_as<'r>(
    roots: &'r Roots,
    tool: ToolName,
    path: &str,
    follow_last: bool,
) -> Result<Target<'r>, ToolError> {
    let located = roots.locate(tool, path)?;
    let rel = located.rel.clone();
    let resolved = if follow_last {
        fs::resolve(located.dir, located.rel)?
    } else {
        fs::resolve_unfollowed(located.dir, located.rel)?
    };
    Ok(Target {
        display: prefixed(located.prefix, resolved.display()),
        root: located.dir,
        rel,
        resolved,
        prefix: located.prefix,
    })
}

impl Target<'_> {
    /// Refuse a target where nothing can be written: a protected place, a
    /// directory, a special file, a trailing `/` that names a file or
    /// nothing, and — for `create_only` — a file.
    pub(super) fn check_writable(
        &self,
        create_only: bool,
        config: &Config,
    ) -> Result<(), ToolError> {
        self.check_place(config)?;
        let dir_only = self.rel.dir_only();
        match self.resolved.kind {
            TargetKind::Missing if dir_only => Err(ToolError::slash_but_nothing_there()),
            TargetKind::File if dir_only => Err(ToolError::slash_but_a_file()),
            // A shared file's size is not the caller's to learn.
            TargetKind::File if create_only => Err(ToolError::exists(
                &self.display,
                self.resolved.len.filter(|_| !self.resolved.shared()),
            )),
            TargetKind::Directory => Err(ToolError::is_directory()),
            TargetKind::Other => Err(ToolError::not_regular_file()),
            // A link left unfollowed is only ever removed, or made again.
            TargetKind::Missing | TargetKind::File | TargetKind::Link => Ok(()),
        }
    }

    /// Refuse a place the tool does not touch, whatever is there: a name
    /// reached through a link that no request could give, a temp file's
    /// name, a protected place. `view` shows only what passes, as a write
    /// changes only what passes.
    pub(super) fn check_place(&self, config: &Config) -> Result<(), ToolError> {
        let resolved = &self.resolved;
        // A link may lead to a name no request could give (a control
        // character, a backslash): the journal records the name reached,
        // and an undo must be able to name it again.
        let reached = resolved.display();
        if !reached.is_empty()
            && let Err(err) = crate::path::check_characters(&reached)
        {
            return Err(ToolError::invalid_param(format!(
                "The path leads through a link to a name this tool does not write. {}",
                err.message()
            )));
        }
        // A file under a temp file's name would be taken for one: swept
        // as a dead write's leftover, its removal never a commit point.
        if resolved
            .names
            .last()
            .is_some_and(|name| fs::temps::is_temp_name(name))
        {
            return Err(ToolError::invalid_param(format!(
                "The name is one this tool gives its temp files ({}<16 hex digits>{}); \
                 choose another.",
                fs::temps::TEMP_PREFIX,
                fs::temps::TEMP_SUFFIX
            )));
        }
        // Only host patterns care (`.git` is matched in any case anyway).
        let folds_case = config.protection.has_patterns() && {
            let existing = resolved.existing_dirs
                + usize::from(matches!(resolved.kind, TargetKind::File | TargetKind::Link));
            fs::folds_case(self.root, &resolved.names, existing)
        };
        config.protection.check(&resolved.names, folds_case)?;
        if config.protection.protects_git()
            && crate::git::runs_code(self.root, &self.resolved.names, self.resolved.existing_dirs)
        {
            return Err(ToolError::protected());
        }
        Ok(())
    }
}

/// A path below another root is shown under that root's absolute name.
fn prefixed(prefix: Option<&str>, rel: String) -> String {
    match prefix {
        None => rel,
        Some(prefix) => format!("{prefix}/{rel}"),
    }
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
