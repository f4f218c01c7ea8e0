//! The file API's changes: `PUT` as a `Write`, `DELETE` as a patch, each
//! keyed by its `Idempotency-Key` header when it has one.

use http_body_util::{BodyExt as _, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use super::{Body, Files, done, error, query};
use crate::auth::Caller;
use crate::transfer::Deadline;

/// The header a resent `PUT` or `DELETE` names itself by.
const IDEMPOTENCY_KEY: &str = "idempotency-key";

impl Files {
    /// A `PUT` or `DELETE` of `name`, keyed as its header says.
    pub(super) async fn change(
        &self,
        name: &str,
        request: Request<Deadline<Incoming>>,
        caller: &Caller,
    ) -> Response<Body> {
        let key = match idempotency_key(request.headers()) {
            Ok(key) => key,
            Err(response) => return *response,
        };
        if request.method() == Method::PUT {
            self.put(name, key, request, caller).await
        } else {
            self.delete(name, key, caller).await
        }
    }

    async fn put(
        &self,
        name: &str,
        key: Option<String>,
        request: Request<Deadline<Incoming>>,
        caller: &Caller,
    ) -> Response<Body> {
        let mode = request.uri().query().and_then(|q| query(q, "mode"));
        if let Some(mode) = &mode
            && !valid_mode(mode)
        {
            return error(
                StatusCode::BAD_REQUEST,
                "INVALID_PARAM",
                "mode must be four octal digits starting with 0, such as 0644.",
            );
        }
        let body = match Limited::new(request.into_body(), self.max_body)
            .collect()
            .await
        {
            Ok(body) => body.to_bytes(),
            Err(e) if crate::transfer::timed_out(&*e) => {
                return error(
                    StatusCode::REQUEST_TIMEOUT,
                    "EXECUTION_ERROR",
                    "The body did not arrive in time (--ws-write-timeout-ms); nothing was \
                     written.",
                );
            }
            Err(_) => {
                return error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "INVALID_PARAM",
                    &format!(
                        "The body is over this server's limit of {} bytes; nothing was written.",
                        self.max_body
                    ),
                );
            }
        };
        // UTF-8 text goes as `content`, any other bytes as `content_base64`;
        // either is written byte for byte (`keep_format: false`), so the
        // file holds exactly the body.
        let body = String::from_utf8(Vec::from(body)).map_err(|e| e.into_bytes());
        // Bounded as a request of the port is: the body as it goes to the
        // tool, escaped in JSON or in base64, not only as it came.
        // The path and the request's own keys count too.
        let weight = match &body {
            Ok(text) => escaped_len(text.as_bytes()),
            Err(bytes) => bytes.len().div_ceil(3) * 4,
        };
        if weight + escaped_len(name.as_bytes()) + 96 > self.max_body {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "INVALID_PARAM",
                &format!(
                    "The body, as the request it becomes, is over this server's limit of {} \
                     bytes; nothing was written.",
                    self.max_body
                ),
            );
        }
        let mut arguments = match body {
            Ok(content) => json!({"path": name, "content": content, "keep_format": false}),
            Err(bytes) => {
                use base64::Engine as _;
                let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
                json!({"path": name, "content_base64": encoded})
            }
        };
        keyed(&mut arguments, key);
        // `write_file`, which takes a path absolute inside the root as
        // `view` and `DELETE` do (`Write` takes relative paths only).
        let envelope = self.call("write_file", arguments, caller).await;
        done(&envelope, true)
    }

    async fn delete(&self, name: &str, key: Option<String>, caller: &Caller) -> Response<Body> {
        if name.contains(['\n', '\r']) {
            return error(
                StatusCode::FORBIDDEN,
                "INVALID_PARAM",
                "A path with a line break cannot be deleted through a patch.",
            );
        }
        // Named as a patch names it: relative to the root (a patch trims
        // a path's blanks, and names no other root's file). The patch
        // resolves it as `rm` would: a link above the file is followed, a
        // link as the last name is the link, removed as itself.
        let rel = match name.strip_prefix('/') {
            Some(_) => std::path::Path::new(name)
                .strip_prefix(self.root.path())
                .ok()
                .and_then(|p| p.to_str()),
            None => Some(name),
        };
        let Some(rel) = rel.filter(|r| !r.is_empty() && r.trim() == *r) else {
            return error(
                StatusCode::FORBIDDEN,
                "INVALID_PARAM",
                "This path cannot be deleted through a patch (blanks at its ends, or a file \
                 outside the project root).",
            );
        };
        let patch = format!("*** Begin Patch\n*** Delete File: {rel}\n*** End Patch\n");
        let mut arguments = json!({"input": patch});
        keyed(&mut arguments, key);
        let envelope = self.call("apply_patch", arguments, caller).await;
        let code = envelope.error.as_ref().map(|e| e.code);
        if code == Some(write_tool_wire::ErrorCode::IsDirectory) {
            return error(
                StatusCode::CONFLICT,
                "IS_DIRECTORY",
                "write-tool deletes files, each as a change its journal can undo; it does not \
                 remove directories. Delete the files in it one by one.",
            );
        }
        done(&envelope, false)
    }
}

/// The `Idempotency-Key` header's value, if one was sent; a value that is
/// not text, or sent twice, is refused before anything is done.
fn idempotency_key(headers: &hyper::HeaderMap) -> Result<Option<String>, Box<Response<Body>>> {
    let mut values = headers.get_all(IDEMPOTENCY_KEY).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return match headers.contains_key(IDEMPOTENCY_KEY) {
            true => Err(Box::new(error(
                StatusCode::BAD_REQUEST,
                "INVALID_PARAM",
                "Idempotency-Key was sent more than once; nothing was done.",
            ))),
            false => Ok(None),
        };
    };
    match value.to_str() {
        Ok(key) => Ok(Some(key.to_owned())),
        Err(_) => Err(Box::new(error(
            StatusCode::BAD_REQUEST,
            "INVALID_PARAM",
            "Idempotency-Key must be printable ASCII; nothing was done.",
        ))),
    }
}

/// Give `arguments` the header's key; the tool checks it as it checks
/// the argument.
fn keyed(arguments: &mut Value, key: Option<String>) {
    if let Some(key) = key {
        arguments[write_tool_wire::request::IDEMPOTENCY_KEY] = Value::String(key);
    }
}

/// The length of `bytes` (UTF-8 text) as a JSON string's contents: what
/// the body weighs as the request the tool reads.
fn escaped_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .map(|&b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..0x20 => 6,
            _ => 1,
        })
        .sum()
}

/// The spec's `^0[0-7]{3}$`.
fn valid_mode(mode: &str) -> bool {
    let bytes = mode.as_bytes();
    bytes.len() == 4 && bytes[0] == b'0' && bytes[1..].iter().all(|b| (b'0'..=b'7').contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_paths_and_lengths() {
        assert!(valid_mode("0644") && valid_mode("0755"));
        for bad in ["644", "0648", "00644", "0x64", ""] {
            assert!(!valid_mode(bad), "{bad}");
        }
        assert_eq!(escaped_len(b"a\"\n\x01"), 1 + 2 + 2 + 6);
    }

    #[test]
    fn the_key_header_is_one_printable_value() {
        let mut headers = hyper::HeaderMap::new();
        assert_eq!(idempotency_key(&headers).ok(), Some(None));
        headers.append(IDEMPOTENCY_KEY, "run-1".parse().unwrap());
        assert_eq!(
            idempotency_key(&headers).ok(),
            Some(Some("run-1".to_owned()))
        );
        headers.append(IDEMPOTENCY_KEY, "run-2".parse().unwrap());
        assert!(idempotency_key(&headers).is_err());
        let mut headers = hyper::HeaderMap::new();
        headers.append(
            IDEMPOTENCY_KEY,
            hyper::header::HeaderValue::from_bytes(b"caf\xe9").unwrap(),
        );
        assert!(idempotency_key(&headers).is_err());
    }
}
