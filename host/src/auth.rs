//! Who may use the WebSocket port (`docs/contract.md#port-auth`): a bearer
//! token the operator gives in a file (RFC 6750), required on the
//! WebSocket handshake, `/mcp`, `/v1/*`, `/quiesce` and `/resume`; the
//! health probes stay open, and `/metrics` is the operator's choice
//! (`--metrics`, answered to local names only).
//!
//! Reaching the port is not enough to be trusted with it: in a pod every
//! process of the sandbox reaches `127.0.0.1`, the model's own shell
//! included, and on a shared machine so does every other user. A token
//! in a file only the tool's user (or the Kubernetes Secret's mount) can
//! read turns reach into a credential. `quiesce` and `resume` can take a
//! token of their own, so that whoever may write files need not be able
//! to pause every writer.
//!
//! Tokens are held as their SHA-256 and compared in constant time: the
//! process never keeps the secret, and the comparison leaks nothing of
//! its bytes through timing.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

/// The fewest bytes a token may have: 128 bits of a random hex string.
pub const MIN_TOKEN_BYTES: usize = 32;

/// One token, as its digest.
#[derive(Clone)]
pub struct Token([u8; 32]);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// The token `text` (its ends' blanks and line break dropped): at
    /// least [`MIN_TOKEN_BYTES`] of visible ASCII, as a bearer token's
    /// characters are (RFC 6750 §2.1).
    pub fn new(text: &str) -> anyhow::Result<Token> {
        let text = text.trim();
        if text.len() < MIN_TOKEN_BYTES {
            bail!(
                "a token needs at least {MIN_TOKEN_BYTES} characters (for example `openssl rand \
                 -hex 32`)"
            );
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            bail!("a token is visible ASCII only, no blanks inside");
        }
        Ok(Token(Sha256::digest(text.as_bytes()).into()))
    }

    /// The token in the file `path`.
    pub fn read(path: &Path) -> anyhow::Result<Token> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the token file {}", path.display()))?;
        Token::new(&text).with_context(|| format!("the token file {}", path.display()))
    }

    /// Whether `given` is this token, compared in constant time.
    fn is(&self, given: &str) -> bool {
        let given: [u8; 32] = Sha256::digest(given.as_bytes()).into();
        self.0
            .iter()
            .zip(given)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
    }
}

pub mod oauth;

pub use oauth::{OAuth, OAuthConfig};

/// The port's tokens; with none, the port is open to whoever reaches it
/// (loopback only: `serve` refuses to listen beyond it without one).
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    /// Required on every request but the probes'.
    pub port: Option<Token>,
    /// Required instead on `/quiesce` and `/resume`, where given.
    pub quiesce: Option<Token>,
    /// OAuth access tokens, taken beside the port's token where the
    /// operator configured an authorization server.
    pub oauth: Option<Arc<OAuth>>,
}

/// A request refused for want of a credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Why an OAuth access token was not taken, where one was given.
    pub oauth: Option<oauth::Refusal>,
}

/// Whom a request's credential speaks for: the unit the port shares its
/// call slots by (`docs/contract.md#port-auth`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Caller {
    /// The port's own token, or no credential where the port asks none:
    /// the operator, one caller however many connections it opens.
    #[default]
    Operator,
    /// An OAuth access token's subject (its `sub`, else its `client_id`).
    Subject(Arc<str>),
}

impl Caller {
    /// Whom an MCP call is for: where it came over the port, whom its
    /// check found (put in the HTTP request's parts, which rmcp hands to
    /// the handler); over stdio, the operator.
    pub(crate) fn of_mcp(extensions: &rmcp::model::Extensions) -> Caller {
        extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>())
            .cloned()
            .unwrap_or_default()
    }
}

/// A request let through: until when, and whom for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pass {
    /// An OAuth access token's expiry; `None`: the credential holds for
    /// good.
    pub until: Option<std::time::SystemTime>,
    /// Whom the credential speaks for.
    pub caller: Caller,
}

/// What a request may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Calls: the WebSocket, `/mcp`, `/v1/*`.
    Calls,
    /// `/quiesce` and `/resume`.
    Quiesce,
}

impl Tokens {
    /// Whether a request for `scope` whose `Authorization` header is
    /// `header` may go on.
    pub fn allows(&self, scope: Scope, header: Option<&[u8]>) -> bool {
        self.check(scope, header).is_ok()
    }

    /// [`Tokens::allows`], saying why not, and for how long and whom: an
    /// OAuth access token passes until it expires, for its subject; the
    /// port's token for good, for the operator. The port's token passes
    /// calls and, with no token of their own, quiesce and resume; an OAuth
    /// access token passes where the port's would.
    pub fn check(&self, scope: Scope, header: Option<&[u8]>) -> Result<Pass, Refused> {
        let given = bearer(header);
        if scope == Scope::Quiesce
            && let Some(own) = &self.quiesce
        {
            return match given {
                Some(given) if own.is(given) => Ok(Pass::default()),
                _ => Err(Refused { oauth: None }),
            };
        }
        if self.port.is_none() && self.oauth.is_none() {
            return Ok(Pass::default());
        }
        let Some(given) = given else {
            return Err(Refused { oauth: None });
        };
        if self.port.as_ref().is_some_and(|port| port.is(given)) {
            return Ok(Pass::default());
        }
        match &self.oauth {
            Some(oauth) => oauth
                .check(given)
                .map(|(until, subject)| Pass {
                    until: Some(until),
                    caller: Caller::Subject(subject.into()),
                })
                .map_err(|why| Refused { oauth: Some(why) }),
            None => Err(Refused { oauth: None }),
        }
    }

    /// The refusal's status and `WWW-Authenticate` value: 403 for a
    /// token without a scope it needs (RFC 6750 §3.1), else 401.
    pub fn challenge(&self, refused: &Refused) -> (u16, String) {
        let status = match refused.oauth {
            Some(oauth::Refusal::InsufficientScope) => 403,
            _ => 401,
        };
        let value = match &self.oauth {
            Some(oauth) => oauth.challenge(refused.oauth.as_ref()),
            None => CHALLENGE.to_owned(),
        };
        (status, value)
    }

    /// Whether any token is required.
    pub fn any(&self) -> bool {
        self.port.is_some() || self.quiesce.is_some() || self.oauth.is_some()
    }
}

/// The token of an `Authorization: Bearer …` header (the scheme's case
/// ignored, RFC 9110 §11.1).
fn bearer(header: Option<&[u8]>) -> Option<&str> {
    let header = std::str::from_utf8(header?).ok()?;
    let (scheme, token) = header.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// The `WWW-Authenticate` value of a refusal (RFC 6750 §3).
pub const CHALLENGE: &str = "Bearer realm=\"write-tool\"";

/// The message of a refusal.
pub const REFUSED: &str = "This port needs the operator's token: send `Authorization: Bearer \
                           <token>` (the token in the file given to --ws-token-file, or an \
                           access token of the authorization server its metadata names).";

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn only_the_token_as_a_bearer_passes() {
        let tokens = Tokens {
            port: Some(Token::new(&format!("{SECRET}\n")).unwrap()),
            quiesce: None,
            oauth: None,
        };
        let ok = format!("Bearer {SECRET}");
        assert!(tokens.allows(Scope::Calls, Some(ok.as_bytes())));
        assert!(tokens.allows(Scope::Calls, Some(format!("bearer {SECRET}").as_bytes())));
        assert!(tokens.allows(Scope::Quiesce, Some(ok.as_bytes())));
        for wrong in [
            None,
            Some(SECRET.to_owned()),
            Some(format!("Basic {SECRET}")),
            Some(format!("Bearer {SECRET}x")),
            Some("Bearer ".to_owned()),
            Some(format!("Bearer {}", &SECRET[1..])),
        ] {
            assert!(
                !tokens.allows(Scope::Calls, wrong.as_deref().map(str::as_bytes)),
                "{wrong:?}"
            );
        }
    }

    #[test]
    fn quiesce_takes_its_own_token_where_given() {
        let other = "fedcba9876543210fedcba9876543210";
        let tokens = Tokens {
            port: Some(Token::new(SECRET).unwrap()),
            quiesce: Some(Token::new(other).unwrap()),
            oauth: None,
        };
        let port = format!("Bearer {SECRET}");
        let quiesce = format!("Bearer {other}");
        assert!(!tokens.allows(Scope::Quiesce, Some(port.as_bytes())));
        assert!(tokens.allows(Scope::Quiesce, Some(quiesce.as_bytes())));
        assert!(!tokens.allows(Scope::Calls, Some(quiesce.as_bytes())));
        assert!(Tokens::default().allows(Scope::Calls, None));
    }

    #[test]
    fn a_short_or_blank_token_is_refused() {
        assert!(Token::new("short").is_err());
        assert!(Token::new("0123456789abcdef 0123456789abcdef").is_err());
        assert_eq!(format!("{:?}", Token::new(SECRET).unwrap()), "Token(..)");
    }
}
