//! agent-sandbox's sandbox file API, FilesystemService v1 (KEP-539.2,
//! "sandboxd"; the spec is vendored at `deploy/sandboxd/filesystem.yaml`),
//! served on the WebSocket port with the tool's guarantees
//! (`docs/contract.md#files-api`):
//!
//! - `PUT /v1/files/{path}` is a write through the pipeline — sandbox,
//!   protected paths, atomic durable commit, the journal (undoable) — with
//!   the body's bytes kept as sent (`keep_format: false`); 204.
//! - `GET` and `HEAD` are what `view` admits: a file's bytes only if
//!   `view` would show it (inside the root, not protected, no other hard
//!   links), and only the version it admitted (its `base`, checked against
//!   the bytes read); a directory's entries as `DirectoryListing`.
//! - `DELETE` of a file is a patch that deletes it: journaled, undoable,
//!   and refused unless the host allows deletes.
//! - `GET /v1/health` and `GET /v1/metadata`.
//!
//! Errors are the spec's `{code, message}`, the code the envelope's.
//! A `PUT` or `DELETE` may carry an `Idempotency-Key` header (the IETF
//! httpapi draft's): it becomes the call's `idempotency_key`
//! (`docs/contract.md#idempotency`), so a resent request changes nothing.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use write_tool_wire::{Envelope, ErrorCode, Status};

use crate::auth::Caller;
use crate::calls::Calls;
use crate::transfer::Deadline;
use crate::{Root, probes};

/// A response body of the port's plain HTTP (`crate::http`).
pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// Where file paths start.
const FILES: &str = "/v1/files/";

/// The file API over one root.
pub(crate) struct Files {
    calls: Calls,
    root: Arc<Root>,
    max_body: usize,
    started: Instant,
}

impl Files {
    pub(crate) fn new(calls: Calls, root: Arc<Root>, max_body: usize) -> Files {
        Files {
            calls,
            root,
            max_body,
            started: Instant::now(),
        }
    }

    /// The answer to a request under `/v1/`.
    pub(crate) async fn answer(&self, request: Request<Deadline<Incoming>>) -> Response<Body> {
        // Whom the request is for, as the port's check found it.
        let caller = request.extensions().get::<Caller>().cloned();
        let caller = &caller.unwrap_or_default();
        let method = request.method().clone();
        let path = request.uri().path().to_owned();
        let reads = method == Method::GET || method == Method::HEAD;
        match path.as_str() {
            "/v1/health" if reads => self.health(),
            "/v1/metadata" if reads => self.metadata(),
            "/v1/health" | "/v1/metadata" => not_allowed("GET, HEAD"),
            _ => {
                let Some(name) = path.strip_prefix(FILES) else {
                    return error(StatusCode::NOT_FOUND, "NOT_FOUND", "No such endpoint.");
                };
                let name = match decode(name) {
                    Ok(name) => name,
                    // As `failed` answers a name the tool refuses.
                    Err(message) if method == Method::PUT => {
                        return error(StatusCode::BAD_REQUEST, "INVALID_PARAM", &message);
                    }
                    Err(message) => {
                        return error(StatusCode::FORBIDDEN, "INVALID_PARAM", &message);
                    }
                };
                match method {
                    Method::GET | Method::HEAD => {
                        let page = request.uri().query().map(page_of).unwrap_or_default();
                        self.read(&name, page, caller).await
                    }
                    Method::PUT | Method::DELETE => self.change(&name, request, caller).await,
                    _ => not_allowed("GET, HEAD, PUT, DELETE"),
                }
            }
        }
    }

    fn health(&self) -> Response<Body> {
        match probes::writable(&self.root) {
            Ok(()) => json(
                StatusCode::OK,
                json!({"status": "ok", "uptime_seconds": self.started.elapsed().as_secs()})
                    .to_string(),
            ),
            Err(why) => error(StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE", &why),
        }
    }

    /// What the sandbox may know of this server: nothing secret.
    fn metadata(&self) -> Response<Body> {
        let env = json!({
            "WORKSPACE": self.root.path().display().to_string(),
            "WRITE_TOOL_VERSION": env!("CARGO_PKG_VERSION"),
        });
        json(StatusCode::OK, json!({ "env": env }).to_string())
    }

    /// The envelope of a tool call for `caller`, decoded.
    async fn call(&self, name: &str, arguments: Value, caller: &Caller) -> Envelope {
        let request = json!({"name": name, "arguments": arguments}).to_string();
        // Outside any session, as the CLI's `call` is: a client of this
        // API is a program, which keeps no view through the tool, so
        // read-first does not hold it (`docs/contract.md#files-api`), and
        // its reads note nothing.
        // A client that goes away before the answer (hyper drops this
        // future with its connection) cancels the call: it stops at its
        // commit point if it has not passed it, so the change is made
        // whole or not at all, and a slot is not spent on an answer no
        // one will read (`docs/contract.md#files-api`).
        let cancel = crate::Cancel::new();
        let _gone = CancelOnDrop(cancel.clone());
        let answer = self
            .calls
            .call(Arc::clone(&self.root), request, Some(cancel), None, caller)
            .await
            .unwrap_or_else(|e| {
                Envelope::refused(ErrorCode::ExecutionError, e.to_string()).to_json()
            });
        Envelope::from_json(&answer).unwrap_or_else(|e| {
            Envelope::refused(
                ErrorCode::ExecutionError,
                format!("the tool's answer could not be read: {e}"),
            )
        })
    }

    /// A file's bytes or a page of a directory's entries; `page` holds
    /// the query's `offset` and `limit`, given to `view` as they are, so
    /// that a listing is bounded and paged as its listing is.
    async fn read(
        &self,
        name: &str,
        page: serde_json::Map<String, Value>,
        caller: &Caller,
    ) -> Response<Body> {
        // The full form: a directory's own entries come in `data.view`.
        let mut arguments = json!({"path": name, "envelope": "full"});
        arguments.as_object_mut().expect("an object").extend(page);
        let seen = self.call("view", arguments, caller).await;
        if seen.status == Status::Error {
            return failed(&seen, false);
        }
        let view = seen.data.as_ref().and_then(|d| d.view.clone());
        let Some(view) = view else {
            return error(StatusCode::FORBIDDEN, "ACCESS_DENIED", &seen.text);
        };
        // The place view judged, by the names it resolved: not the name
        // as given, which a link inside it could lead elsewhere.
        let Some(resolved) = seen.context.path_resolved.clone() else {
            return error(StatusCode::FORBIDDEN, "ACCESS_DENIED", &seen.text);
        };
        let (root, name_shown, max) = (Arc::clone(&self.root), name.to_owned(), self.max_body);
        if view.kind == write_tool_wire::ViewKind::Directory {
            let listed = tokio::task::spawn_blocking(move || {
                listing::of(&root, &resolved, &name_shown, &view.entries).map(|mut listing| {
                    // Beside the spec's fields, where the next page starts.
                    if let Some(next) = view.next_line {
                        listing["next_offset"] = next.into();
                    }
                    listing
                })
            })
            .await;
            return match listed {
                Ok(Ok(listing)) => json(StatusCode::OK, listing.to_string()),
                Ok(Err(e)) => error(StatusCode::FORBIDDEN, "ACCESS_DENIED", &e.to_string()),
                Err(_) => error(
                    StatusCode::FORBIDDEN,
                    "ACCESS_DENIED",
                    "The listing failed.",
                ),
            };
        }
        let Some(base) = view.base else {
            return error(StatusCode::FORBIDDEN, "ACCESS_DENIED", &seen.text);
        };
        let read =
            tokio::task::spawn_blocking(move || listing::bytes_of(&root, &resolved, &base, max))
                .await
                .unwrap_or_else(|_| Err("The read failed.".to_owned()));
        match read {
            Ok(bytes) => {
                let length = bytes.len();
                let mut response = Response::new(Full::new(Bytes::from(bytes)).boxed());
                let headers = response.headers_mut();
                headers.insert(
                    CONTENT_TYPE,
                    "application/octet-stream".parse().expect("a header value"),
                );
                headers.insert(CONTENT_LENGTH, length.into());
                response
            }
            Err(message) => error(StatusCode::FORBIDDEN, "ACCESS_DENIED", &message),
        }
    }
}

mod change;
mod listing;

/// Cancels its call when dropped: at the end of the call, when it no
/// longer matters, or when the client left and the call's future with it.
struct CancelOnDrop(crate::Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// A JSON error body as the file API's spec shapes it: `{code, message}`.
pub(crate) fn error(status: StatusCode, code: &str, message: &str) -> Response<Body> {
    let body = serde_json::json!({"code": code, "message": message}).to_string();
    json(status, body)
}

/// A response with a JSON body.
pub(crate) fn json(status: StatusCode, body: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        "application/json".parse().expect("a header value"),
    );
    response
}

/// The answer to a change: 204, or the envelope's error.
fn done(envelope: &Envelope, changes: bool) -> Response<Body> {
    if envelope.status == Status::Error {
        return failed(envelope, changes);
    }
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = StatusCode::NO_CONTENT;
    response
}

/// An error envelope as the spec's status and `{code, message}`. The spec
/// gives a `PUT` 400 for what it cannot take; a `GET`, `HEAD` or `DELETE`
/// of a name the tool refuses (a control character in it, say) is
/// Forbidden, the only refusal the spec gives them.
fn failed(envelope: &Envelope, changes: bool) -> Response<Body> {
    let code = envelope
        .error
        .as_ref()
        .map_or(ErrorCode::ExecutionError, |e| e.code);
    let status = match code {
        _ if envelope.text == crate::hold::QUIESCED_MESSAGE => StatusCode::SERVICE_UNAVAILABLE,
        _ if envelope
            .text
            .contains(write_tool_wire::messages::NOTHING_THERE) =>
        {
            StatusCode::NOT_FOUND
        }
        ErrorCode::AccessDenied | ErrorCode::PermissionDenied => StatusCode::FORBIDDEN,
        ErrorCode::InvalidParam | ErrorCode::IsDirectory if changes => StatusCode::BAD_REQUEST,
        ErrorCode::InvalidParam | ErrorCode::IsDirectory => StatusCode::FORBIDDEN,
        ErrorCode::Conflict => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let code = if status == StatusCode::NOT_FOUND {
        "NOT_FOUND"
    } else {
        code.as_str()
    };
    error(status, code, &envelope.text)
}

fn not_allowed(allow: &'static str) -> Response<Body> {
    let mut response = error(
        StatusCode::METHOD_NOT_ALLOWED,
        "METHOD_NOT_ALLOWED",
        &format!("This endpoint answers {allow}."),
    );
    response.headers_mut().insert(
        hyper::header::ALLOW,
        hyper::header::HeaderValue::from_static(allow),
    );
    response
}

/// The path segment, percent-decoded (clients send `/` as `%2F`).
fn decode(segment: &str) -> Result<String, String> {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8()
        .map(|name| name.into_owned())
        .map_err(|_| "The path is not UTF-8 once decoded.".to_owned())
}

/// A listing's `offset` and `limit` in a query, as `view` takes them: a
/// number where the value is one, else the text, which `view` then
/// refuses by name.
fn page_of(query: &str) -> serde_json::Map<String, Value> {
    ["offset", "limit"]
        .into_iter()
        .filter_map(|key| {
            let value = self::query(query, key)?;
            let value = value
                .parse::<u64>()
                .map_or_else(|_| Value::String(value), Value::from);
            Some((key.to_owned(), value))
        })
        .collect()
}

/// A query parameter's value, percent-decoded.
fn query(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then(|| decode(v).unwrap_or_default())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_pages() {
        assert_eq!(decode("src%2Fa%20b.txt").as_deref(), Ok("src/a b.txt"));
        assert!(decode("%FF").is_err());
        assert_eq!(query("a=1&mode=0755", "mode").as_deref(), Some("0755"));
        assert_eq!(query("recursive=true", "mode"), None);
        let page = page_of("offset=3&limit=x&other=1");
        assert_eq!(Value::Object(page), json!({"offset": 3, "limit": "x"}));
    }
}
