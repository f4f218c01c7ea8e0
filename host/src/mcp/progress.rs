//! Progress notifications for a call the client gave a progress token
//! (`docs/contract.md#mcp`): clients show their message and reset their
//! idle watchdog on each one, so a call that can take long (a change of
//! several files, a large patch, a large write) says at once what it is
//! doing, and any call still running after a second says so every second
//! until it is answered.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use serde_json::Value;
use tokio::task::JoinHandle;

/// How often a call still running says so.
const BEAT: Duration = Duration::from_secs(1);

/// Content from this size on is a large write: said at once.
const LARGE_CONTENT_BYTES: usize = 1 << 20;

/// The notifications of one call; they stop when it is dropped, before the
/// answer goes out (no progress may follow a request's response).
#[derive(Debug)]
pub(super) struct Progress(JoinHandle<()>);

impl Progress {
    /// Start telling the client about the call `name` with `arguments`:
    /// what a long call does is said (sent to the transport) before this
    /// returns, so before the call starts and its answer can go.
    pub(super) async fn start(
        peer: Peer<RoleServer>,
        token: ProgressToken,
        name: &str,
        arguments: &Value,
    ) -> Progress {
        let send = move |step: u32, message: String| {
            let param = ProgressNotificationParam::new(token.clone(), f64::from(step))
                .with_message(message);
            let peer = peer.clone();
            async move {
                // A client gone is told nothing; the call goes on.
                let _ = peer.notify_progress(param).await;
            }
        };
        if let Some(message) = opening(name, arguments) {
            send(0, message).await;
        }
        Progress(tokio::spawn(async move {
            let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + BEAT, BEAT);
            for step in 1_u32.. {
                beat.tick().await;
                send(step, format!("Still working ({step} s)…")).await;
            }
        }))
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What a call that can take long says as it starts; `None` for the rest.
fn opening(name: &str, arguments: &Value) -> Option<String> {
    let string = |key: &str| arguments.get(key).and_then(Value::as_str);
    match name {
        "write_many" => {
            let files = arguments.get("writes").and_then(Value::as_array)?;
            let paths: Vec<&str> = files
                .iter()
                .filter_map(|f| f.get("path").and_then(Value::as_str))
                .take(3)
                .collect();
            let more = files.len().saturating_sub(paths.len());
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            Some(format!(
                "Writing {} file{} as one change: {}{tail}.",
                files.len(),
                if files.len() == 1 { "" } else { "s" },
                paths.join(", ")
            ))
        }
        "apply_patch" => {
            let patch = string("input").or_else(|| string("patch"))?;
            let files = patch
                .lines()
                .filter(|line| {
                    ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
                        .iter()
                        .any(|mark| line.starts_with(mark))
                })
                .count();
            (files > 1 || patch.len() >= LARGE_CONTENT_BYTES).then(|| {
                format!(
                    "Applying a patch to {files} file{} ({} bytes).",
                    if files == 1 { "" } else { "s" },
                    patch.len()
                )
            })
        }
        _ => {
            let content = string("content")?;
            let path = string("path").or_else(|| string("file_path"))?;
            (content.len() >= LARGE_CONTENT_BYTES)
                .then(|| format!("Writing {} bytes to {path}.", content.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_calls_say_what_they_do_and_short_ones_nothing() {
        let many = json!({"writes": [
            {"path": "a", "content": ""}, {"path": "b", "content": ""},
            {"path": "c", "content": ""}, {"path": "d", "content": ""}
        ]});
        assert_eq!(
            opening("write_many", &many).as_deref(),
            Some("Writing 4 files as one change: a, b, c and 1 more.")
        );
        let patch =
            "*** Begin Patch\n*** Add File: a\n+x\n*** Update File: b\n@@\n-y\n+z\n*** End Patch\n";
        assert_eq!(
            opening("apply_patch", &json!({"input": patch})).as_deref(),
            Some(format!("Applying a patch to 2 files ({} bytes).", patch.len()).as_str())
        );
        let big = "x".repeat(LARGE_CONTENT_BYTES);
        assert_eq!(
            opening("Write", &json!({"path": "a", "content": big})).as_deref(),
            Some("Writing 1048576 bytes to a.")
        );
        assert_eq!(
            opening("Write", &json!({"path": "a", "content": "x"})),
            None
        );
        assert_eq!(opening("view", &json!({"path": "a"})), None);
    }
}
