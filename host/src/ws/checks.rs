//! What a WebSocket handshake must show (`docs/contract.md#port-auth`):
//! the port's credential, where it asks for one, and an `Origin` that is
//! not a web page's, unless allowed by name.

use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request};
use tokio_tungstenite::tungstenite::http::StatusCode;

use crate::probes;

/// Accept a handshake that carries the port's token, when it has one;
/// refuse anything else with 401 and the bearer challenge.
#[allow(clippy::result_large_err, reason = "tungstenite's callback signature")]
pub(super) fn check_token(
    request: &Request,
    tokens: &crate::auth::Tokens,
) -> Result<crate::auth::Pass, ErrorResponse> {
    let given = request.headers().get("authorization").map(|h| h.as_bytes());
    let refused = match tokens.check(crate::auth::Scope::Calls, given) {
        Ok(pass) => return Ok(pass),
        Err(refused) => refused,
    };
    let (status, challenge) = tokens.challenge(&refused);
    let mut response = ErrorResponse::new(Some(format!("{}\n", crate::auth::REFUSED)));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::UNAUTHORIZED);
    if let Ok(challenge) = challenge.parse() {
        response.headers_mut().insert("www-authenticate", challenge);
    }
    Err(response)
}

/// Accept no `Origin` (not a browser), a loopback origin, or one allowed
/// by name; refuse anything else with 403.
#[allow(clippy::result_large_err, reason = "tungstenite's callback signature")]
pub(super) fn check_origin(request: &Request, allowed: &[String]) -> Result<(), ErrorResponse> {
    let Some(origin) = request.headers().get("origin") else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or_default();
    if probes::origin_allowed(origin, allowed) {
        return Ok(());
    }
    let mut response = ErrorResponse::new(Some(format!(
        "origin {origin} is not allowed; start the server with --ws-origin {origin} to allow it\n"
    )));
    *response.status_mut() = StatusCode::FORBIDDEN;
    Err(response)
}

#[cfg(test)]
mod tests {
    use super::{Request, StatusCode, check_origin};
    use crate::probes::is_loopback_origin;

    fn handshake(origin: Option<&str>) -> Request {
        let mut request = Request::builder().uri("ws://127.0.0.1:1/");
        if let Some(origin) = origin {
            request = request.header("Origin", origin);
        }
        request.body(()).expect("request")
    }

    #[test]
    fn origins_not_loopback_need_to_be_named() {
        let named = ["https://tool.example.com".to_owned()];
        assert!(check_origin(&handshake(None), &[]).is_ok());
        assert!(check_origin(&handshake(Some("http://localhost:5173")), &[]).is_ok());
        assert!(check_origin(&handshake(Some("https://tool.example.com")), &named).is_ok());
        for (origin, allowed) in [
            ("https://tool.example.com", &[][..]),
            ("https://evil.example.com", &named[..]),
            ("https://tool.example.com.evil.com", &named[..]),
        ] {
            let refused = check_origin(&handshake(Some(origin)), allowed).expect_err(origin);
            assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        }
    }

    #[test]
    fn loopback_origins() {
        for ok in [
            "http://localhost",
            "http://localhost:5173",
            "https://127.0.0.1:8443",
            "http://127.9.9.9",
            "http://[::1]:8080",
            "http://LOCALHOST",
            // A browser reads hosts the WHATWG way, as `url` does.
            "http://0x7f.1",
        ] {
            assert!(is_loopback_origin(ok), "{ok}");
        }
        for bad in [
            "http://localhost.evil.com",
            "http://evil.com",
            "http://127.0.0.1.evil.com",
            "http://127.0.0.1:80@evil.com",
            "null",
            "file://",
            "http://[::1].evil.com",
            "http://10.0.0.1",
            "http://user@localhost",
            "http://localhost/path",
            "ws://localhost",
            "http://[::ffff:8.8.8.8]",
        ] {
            assert!(!is_loopback_origin(bad), "{bad}");
        }
    }
}
