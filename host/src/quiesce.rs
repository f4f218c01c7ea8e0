//! Quiesce for a snapshot or a suspend, and the check on the next start
//! (`docs/contract.md#quiesce`). `POST /quiesce` on the `serve --ws` port
//! holds every call of the process (those that come are refused, those
//! running end), syncs the root's file system, seals the journal — its
//! head and what the files of its last change hold, written and synced —
//! and answers the seal and its digest. `POST /resume` lets calls run
//! again. A server that starts on a sealed journal checks it once and
//! says on stderr whether the journal and the files still match it.

use std::sync::Arc;

use hyper::{Method, Response, StatusCode};
use serde_json::{Value, json};

use crate::files::{Body, error, json as json_response};
use crate::hold::{HOLD, Wait};
use crate::{Root, WriteTool};

/// Whether `path` is one of this module's.
pub(crate) fn serves(path: &str) -> bool {
    matches!(path, "/quiesce" | "/resume")
}

/// The answer to `method path` (one [`serves`]).
pub(crate) async fn answer(
    method: &Method,
    path: &str,
    tool: &Arc<WriteTool>,
    root: &Arc<Root>,
) -> Response<Body> {
    if method != Method::POST {
        let mut response = error(
            StatusCode::METHOD_NOT_ALLOWED,
            "METHOD_NOT_ALLOWED",
            "This endpoint answers POST.",
        );
        response.headers_mut().insert(
            hyper::header::ALLOW,
            hyper::header::HeaderValue::from_static("POST"),
        );
        return response;
    }
    if path == "/resume" {
        HOLD.resume();
        // The seal describes a moment that is over: checked and taken
        // away, so that the next start does not take the changes to come
        // for a restore gone wrong.
        let (tool, root) = (Arc::clone(tool), Arc::clone(root));
        let checked = tokio::task::spawn_blocking(move || unseal(&tool, &root))
            .await
            .unwrap_or(Value::Null);
        return json_response(
            StatusCode::OK,
            json!({"quiesced": false, "journal": checked}).to_string(),
        );
    }
    let bound = tool.options().timeout + crate::DRAIN_WRITE_GRACE;
    let ticket = match HOLD.quiesce(bound).await {
        Wait::Settled(ticket) => ticket,
        Wait::StillRunning => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "EXECUTION_ERROR",
                &format!(
                    "Calls were still running after {} s; the journal was not sealed. Calls \
                     stay held: ask again, or POST /resume.",
                    bound.as_secs()
                ),
            );
        }
        Wait::Resumed => return resumed(),
    };
    let (tool_again, root_again) = (Arc::clone(tool), Arc::clone(root));
    let (tool, root) = (Arc::clone(tool), Arc::clone(root));
    let sealed = tokio::task::spawn_blocking(move || seal(&tool, &root)).await;
    if HOLD.undone(&ticket) {
        // Resumed while it sealed: calls run again, and no seal stands
        // for them.
        let (tool, root) = (Arc::clone(&tool_again), Arc::clone(&root_again));
        let _ = tokio::task::spawn_blocking(move || unseal(&tool, &root)).await;
        return resumed();
    }
    match sealed {
        Ok(Ok(seal)) => json_response(
            StatusCode::OK,
            json!({"quiesced": true, "journal": seal}).to_string(),
        ),
        Ok(Err(message)) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "EXECUTION_ERROR",
            &message,
        ),
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "EXECUTION_ERROR",
            "The seal did not finish.",
        ),
    }
}

/// The answer of a quiesce a resume undid (`409`).
fn resumed() -> Response<Body> {
    error(
        StatusCode::CONFLICT,
        "EXECUTION_ERROR",
        "Resumed before the quiesce finished: calls run, and no seal stands.",
    )
}

/// Sync the root's file system, then seal the journal; `null` for a root
/// without one.
fn seal(tool: &WriteTool, root: &Root) -> Result<Value, String> {
    sync_file_system(root.dir(), std::path::Path::new("."), "root")?;
    let Some(journal) = root.journal_dir() else {
        return Ok(Value::Null);
    };
    // The journal's records too, which may be on a volume of their own
    // and, with syncing relaxed, not yet on it. (An absolute path: `at`
    // plays no part.)
    sync_file_system(root.dir(), journal.path(), "journal")?;
    journal_request(tool, root, "seal")
}

/// Sync the file system of the directory `path` (below `at`, or absolute).
/// Opened for reading: the root's own handle may be a path-only one, which
/// syncfs refuses.
fn sync_file_system(
    at: impl std::os::fd::AsFd,
    path: &std::path::Path,
    what: &str,
) -> Result<(), String> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::openat(
        at,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .and_then(rustix::fs::syncfs)
    .map_err(|e| {
        format!(
            "The {what}'s file system could not be synced: {}.",
            std::io::Error::from(e)
        )
    })
}

/// Check and take away the seal, if any: what `/resume` answers.
fn unseal(tool: &WriteTool, root: &Root) -> Value {
    if root.journal_dir().is_none() {
        return Value::Null;
    }
    journal_request(tool, root, "check_seal").unwrap_or_else(|message| json!({ "error": message }))
}

/// The seal a quiesce left checked once, at start: the line to say on
/// stderr, `None` when there was none (or no journal).
pub(crate) fn check_on_start(tool: &WriteTool, root: &Root) -> Option<String> {
    root.journal_dir()?;
    let answer = match journal_request(tool, root, "check_seal") {
        Ok(answer) => answer,
        Err(message) => {
            return Some(format!(
                "the journal's seal could not be checked: {message}"
            ));
        }
    };
    let check = answer.get("check").filter(|c| !c.is_null())?;
    Some(if check["ok"] == true {
        format!(
            "the journal and its {} last written file(s) match the seal of the last quiesce",
            check["files"]
        )
    } else {
        format!(
            "the journal or its files no longer match the seal of the last quiesce: {}",
            check["problems"]
        )
    })
}

/// The tool's answer to the host's `{"journal": what}` request.
fn journal_request(tool: &WriteTool, root: &Root, what: &str) -> Result<Value, String> {
    let envelope = tool.call_as_host(root, &json!({ "journal": what }).to_string());
    let envelope: Value = serde_json::from_str(&envelope).map_err(|e| e.to_string())?;
    let text = envelope["text"].as_str().unwrap_or_default();
    if envelope["status"] != "success" {
        return Err(text.to_owned());
    }
    serde_json::from_str(text).map_err(|e| e.to_string())
}
