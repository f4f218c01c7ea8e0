//! What a session has seen (`docs/contract.md#session`): with a session
//! and a journal, a write or edit of a file takes as its `base` the
//! version the session last viewed when the call names none, so that a
//! change made on a stale view is merged rather than written over another
//! writer's; and with read-first, a write or edit of an existing file the
//! session has neither viewed nor written is refused.

use crate::error::ToolError;
use crate::fs::TargetKind;
use crate::params::Request;

use super::config::Config;
use super::target::Target;

/// What the call's session has seen of the file `display` names: `None`
/// if nothing (or there is no session); else the base of the version it
/// last viewed, if a view was the last it saw of it.
pub(super) fn seen(config: &Config, display: &str) -> Option<Option<String>> {
    let session = config.session.as_deref()?;
    config.journal.as_deref()?.session_seen(session, display)
}

/// Refuse, with read-first, a write or edit of an existing file the
/// session has not seen, unless the call names the version a view gave it
/// (its `base`). Lock values do not count: a size or a time can be
/// guessed, and a digest taken by other means is not a look through the
/// tool.
pub(super) fn check(
    config: &Config,
    target: &Target<'_>,
    request: &Request,
    seen: Option<&Option<String>>,
) -> Result<(), ToolError> {
    let enforced = config.read_first && config.session.is_some() && config.journal.is_some();
    if !enforced
        || target.resolved.kind != TargetKind::File
        || seen.is_some()
        || request.base.is_some()
    {
        return Ok(());
    }
    Err(ToolError::not_viewed(&target.display))
}

/// Whether a write of a file of which the session has seen `seen` is to
/// be noted: over a version it viewed (whose base would no longer be the
/// file's), or for read-first, which counts what the session wrote as
/// seen. A note that changes nothing is not made: most writes then cost
/// the session one look and no write.
pub(super) fn to_note(config: &Config, seen: Option<&Option<String>>) -> bool {
    config.session.is_some()
        && match seen {
            Some(Some(_)) => true,
            Some(None) => false,
            None => config.read_first,
        }
}

/// Note that the call's session saw the file `display` names: the version
/// `base` names, or (`None`) one the call wrote. A note not kept only
/// means a later call is not helped by it.
pub(super) fn saw(config: &Config, display: &str, base: Option<&str>) {
    if let (Some(session), Some(journal)) = (config.session.as_deref(), config.journal.as_deref()) {
        let _ = journal.session_saw(session, display, base);
    }
}
