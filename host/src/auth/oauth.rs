//! The port as an OAuth 2.1 resource server (`docs/contract.md#port-auth`),
//! as the MCP authorization spec asks of a remote server: it serves its
//! protected-resource metadata (RFC 9728), so that a client learns which
//! authorization server to get a token from, and takes access tokens that
//! are JWTs (RFC 9068) signed by that server's keys, issued by it (`iss`),
//! for this resource (`aud`, RFC 8707), not expired, and with the scopes
//! the operator requires.
//!
//! The keys are read from a file the operator gives (the authorization
//! server's JWKS document), not fetched: a sidecar may have no way out of
//! its pod, and a key fetched on demand is a key an attacker who can steer
//! the fetch chooses. Only asymmetric algorithms are taken, the one the
//! key names where it names one: a shared-secret (HS*) key in a JWKS would
//! let whoever read the document mint tokens.

use std::path::Path;

use anyhow::{Context as _, bail};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::json;

/// Where the metadata is served, before the resource's own path
/// (RFC 9728 §3.1).
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// How far the clocks of this server and the authorization server may
/// differ, in seconds.
const LEEWAY_SECONDS: u64 = 60;

/// How long "never" is, for a token whose `exp` no clock holds.
const FOREVER: std::time::Duration = std::time::Duration::from_secs(100 * 365 * 24 * 3600);

/// What the operator configures.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    /// The authorization server's issuer identifier: a token's `iss`.
    pub issuer: String,
    /// This server's resource identifier (the URL clients reach `/mcp`
    /// by): a token's `aud` must name it.
    pub resource: String,
    /// The authorization server's keys: a JWKS document.
    pub jwks: JwkSet,
    /// Scopes a token must carry, each of them.
    pub scopes: Vec<String>,
}

impl OAuthConfig {
    /// The configuration with the keys in the JWKS file `jwks`.
    pub fn read(
        issuer: String,
        resource: String,
        jwks: &Path,
        scopes: Vec<String>,
    ) -> anyhow::Result<OAuthConfig> {
        let text = std::fs::read_to_string(jwks)
            .with_context(|| format!("cannot read the JWKS file {}", jwks.display()))?;
        let jwks: JwkSet = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a JWKS document", jwks.display()))?;
        let config = OAuthConfig {
            issuer,
            resource,
            jwks,
            scopes,
        };
        config.check()?;
        Ok(config)
    }

    fn check(&self) -> anyhow::Result<()> {
        for (what, url) in [("issuer", &self.issuer), ("resource", &self.resource)] {
            let parsed =
                url::Url::parse(url).with_context(|| format!("the OAuth {what} {url:?}"))?;
            if !matches!(parsed.scheme(), "https" | "http") || parsed.fragment().is_some() {
                bail!("the OAuth {what} {url:?} must be an http(s) URL without a fragment");
            }
        }
        // RFC 6749 §3.3's scope-token: it goes into a challenge's quoted
        // `scope`, and a token's scopes are split at spaces.
        for scope in &self.scopes {
            let token_char =
                |b: u8| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b);
            if scope.is_empty() || !scope.bytes().all(token_char) {
                bail!(
                    "the OAuth scope {scope:?} is not a scope: visible ASCII, no blank, quote or backslash"
                );
            }
        }
        let usable = self.jwks.keys.iter().filter(|k| algorithm_of(k).is_some());
        if usable.count() == 0 {
            bail!(
                "the JWKS has no key this server takes (RSA, EC P-256/P-384 or Ed25519, \
                 for signatures; never a shared secret)"
            );
        }
        Ok(())
    }
}

/// The algorithms a key of this kind signs with, the one it names where
/// it names one; `None` for a key this server never takes.
fn algorithm_of(jwk: &Jwk) -> Option<Vec<Algorithm>> {
    use jsonwebtoken::jwk::{AlgorithmParameters as P, EllipticCurve, KeyAlgorithm as K};
    let family = match &jwk.algorithm {
        P::RSA(_) => vec![
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        P::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => return None,
        },
        P::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => vec![Algorithm::EdDSA],
        _ => return None,
    };
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != jsonwebtoken::jwk::PublicKeyUse::Signature)
    {
        return None;
    }
    let named = jwk.common.key_algorithm.map(|alg| match alg {
        K::RS256 => Some(Algorithm::RS256),
        K::RS384 => Some(Algorithm::RS384),
        K::RS512 => Some(Algorithm::RS512),
        K::PS256 => Some(Algorithm::PS256),
        K::PS384 => Some(Algorithm::PS384),
        K::PS512 => Some(Algorithm::PS512),
        K::ES256 => Some(Algorithm::ES256),
        K::ES384 => Some(Algorithm::ES384),
        K::EdDSA => Some(Algorithm::EdDSA),
        _ => None,
    });
    match named {
        None => Some(family),
        Some(Some(alg)) if family.contains(&alg) => Some(vec![alg]),
        Some(_) => None,
    }
}

/// The claims read beside those `Validation` checks.
#[derive(Deserialize)]
struct Claims {
    /// When it expires, in seconds since the epoch (checked present and
    /// in the future by `Validation`).
    exp: u64,
    /// RFC 9068's space-separated scopes.
    #[serde(default)]
    scope: Option<String>,
    /// The array form some servers use instead.
    #[serde(default)]
    scp: Option<Vec<String>>,
    /// Whom the token speaks for (RFC 9068 §2.2), the unit the port's
    /// call slots are shared by.
    #[serde(default)]
    sub: Option<String>,
    /// The client it was issued to, where it names no subject.
    #[serde(default)]
    client_id: Option<String>,
}

/// A resource server over one configuration.
#[derive(Debug)]
pub struct OAuth {
    config: OAuthConfig,
    /// Where the metadata is served on this port, beside the bare
    /// well-known name: the name followed by the resource's path.
    metadata_path: String,
    /// The same, as the URL a client is told.
    metadata_url: String,
}

/// Why a token was not taken: said to the client in the challenge's
/// `error_description`, never with the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not a token of this server's authorization server for this
    /// resource, or not valid now.
    InvalidToken(&'static str),
    /// Valid, but without a scope the operator requires.
    InsufficientScope,
}

impl OAuth {
    /// The resource server of `config`, whose resource is a URL
    /// ([`OAuthConfig::read`] checks it).
    pub fn new(config: OAuthConfig) -> OAuth {
        let resource = url::Url::parse(&config.resource).expect("checked at start");
        let metadata_path = format!("{WELL_KNOWN}{}", resource.path().trim_end_matches('/'));
        let metadata_url = format!("{}{metadata_path}", resource.origin().ascii_serialization());
        OAuth {
            config,
            metadata_path,
            metadata_url,
        }
    }

    /// Whether `token` is an access token this server takes; until when,
    /// if it is (its `exp`), and whom it speaks for (its `sub`, else its
    /// `client_id`).
    pub fn check(&self, token: &str) -> Result<(std::time::SystemTime, String), Refusal> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| Refusal::InvalidToken("the token is not a JWT"))?;
        // RFC 9068 types an access token `at+jwt`; many servers still say
        // `JWT` or nothing. A token typed as anything else (an ID token,
        // a logout token) is not one, whatever its audience (RFC 8725
        // §3.11).
        let typed = header.typ.as_deref().map(str::to_ascii_lowercase);
        if !matches!(
            typed.as_deref(),
            None | Some("jwt" | "at+jwt" | "application/at+jwt")
        ) {
            return Err(Refusal::InvalidToken(
                "the token is not an access token (its typ)",
            ));
        }
        let keys = &self.config.jwks.keys;
        let key = match &header.kid {
            Some(kid) => self.config.jwks.find(kid),
            None if keys.len() == 1 => keys.first(),
            None => None,
        }
        .ok_or(Refusal::InvalidToken(
            "the token is signed by no key of the authorization server",
        ))?;
        if !algorithm_of(key).is_some_and(|algs| algs.contains(&header.alg)) {
            return Err(Refusal::InvalidToken(
                "the token is signed with an algorithm its key does not take",
            ));
        }
        let decoding = DecodingKey::from_jwk(key)
            .map_err(|_| Refusal::InvalidToken("the token's key cannot be used"))?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY_SECONDS;
        let data = jsonwebtoken::decode::<Claims>(token, &decoding, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as E;
            Refusal::InvalidToken(match e.kind() {
                E::ExpiredSignature => "the token has expired",
                E::ImmatureSignature => "the token is not valid yet",
                E::InvalidIssuer => "the token is from another issuer",
                E::InvalidAudience => "the token is for another resource",
                E::InvalidSignature => "the token's signature does not verify",
                E::MissingRequiredClaim(_) => "the token lacks exp, iss or aud",
                _ => "the token is not a valid access token",
            })
        })?;
        let claims = data.claims;
        let held: Vec<&str> = claims
            .scope
            .as_deref()
            .map(|s| s.split(' ').collect())
            .or_else(|| {
                claims
                    .scp
                    .as_ref()
                    .map(|s| s.iter().map(String::as_str).collect())
            })
            .unwrap_or_default();
        if self
            .config
            .scopes
            .iter()
            .all(|s| held.contains(&s.as_str()))
        {
            let until = std::time::Duration::from_secs(claims.exp);
            // An `exp` past what the clock can hold is as good as never.
            let until = std::time::UNIX_EPOCH
                .checked_add(until)
                .unwrap_or_else(|| std::time::SystemTime::now() + FOREVER);
            // A subject and a client are named apart, so that a client
            // whose id is some user's subject does not share the user's
            // slots.
            let caller = match (claims.sub, claims.client_id) {
                (Some(sub), _) => format!("sub:{sub}"),
                (None, Some(client)) => format!("client:{client}"),
                (None, None) => String::new(),
            };
            Ok((until, caller))
        } else {
            Err(Refusal::InsufficientScope)
        }
    }

    /// Where the metadata is, as a URL (RFC 9728 §3.1: the well-known
    /// name put between the resource's host and its path).
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// Whether `path` is where the metadata is served: the well-known
    /// name alone, or followed by the resource's path.
    pub fn serves(&self, path: &str) -> bool {
        path == WELL_KNOWN || path == self.metadata_path
    }

    /// The metadata document (RFC 9728 §2).
    pub fn metadata(&self) -> String {
        let mut doc = json!({
            "resource": self.config.resource,
            "authorization_servers": [self.config.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "write-tool",
        });
        if !self.config.scopes.is_empty() {
            doc["scopes_supported"] = json!(self.config.scopes);
        }
        doc.to_string()
    }

    /// The `WWW-Authenticate` value of a refusal (RFC 6750 §3, RFC 9728
    /// §5.1): where the metadata is, and why the token given was not
    /// taken.
    pub fn challenge(&self, refusal: Option<&Refusal>) -> String {
        let mut value = format!(
            "Bearer realm=\"write-tool\", resource_metadata=\"{}\"",
            self.metadata_url()
        );
        match refusal {
            Some(Refusal::InvalidToken(why)) => value.push_str(&format!(
                ", error=\"invalid_token\", error_description=\"{why}\""
            )),
            Some(Refusal::InsufficientScope) => value.push_str(&format!(
                ", error=\"insufficient_scope\", scope=\"{}\"",
                self.config.scopes.join(" ")
            )),
            None => {}
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(jwks: &str) -> OAuthConfig {
        OAuthConfig {
            issuer: "https://auth.example".into(),
            resource: "https://sandbox.example/team/mcp".into(),
            jwks: serde_json::from_str(jwks).expect("a JWKS"),
            scopes: vec!["files".into()],
        }
    }

    const ED: &str = r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"ed"}"#;

    /// Signature keys only, each with the algorithms of its kind, the one
    /// it names where it names one; never a shared secret.
    #[test]
    fn only_asymmetric_signature_keys_are_taken() {
        let keys = |jwks: &str| -> Vec<Option<Vec<Algorithm>>> {
            config(jwks).jwks.keys.iter().map(algorithm_of).collect()
        };
        assert_eq!(
            keys(&format!(r#"{{"keys":[{ED}]}}"#)),
            [Some(vec![Algorithm::EdDSA])]
        );
        let secret = r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#;
        assert_eq!(keys(secret), [None]);
        assert!(config(secret).check().is_err());
        let for_encryption = ED.replace(r#""kid":"ed""#, r#""kid":"ed","use":"enc""#);
        assert_eq!(keys(&format!(r#"{{"keys":[{for_encryption}]}}"#)), [None]);
        let misnamed = ED.replace(r#""kid":"ed""#, r#""kid":"ed","alg":"RS256""#);
        assert_eq!(keys(&format!(r#"{{"keys":[{misnamed}]}}"#)), [None]);
        assert!(config(&format!(r#"{{"keys":[{ED}]}}"#)).check().is_ok());
    }

    /// RFC 9728 §3.1: the well-known name between the host and the
    /// resource's path; both forms served.
    #[test]
    fn the_metadata_is_where_rfc_9728_puts_it() {
        let oauth = OAuth::new(config(&format!(r#"{{"keys":[{ED}]}}"#)));
        assert_eq!(
            oauth.metadata_url(),
            "https://sandbox.example/.well-known/oauth-protected-resource/team/mcp"
        );
        assert!(oauth.serves("/.well-known/oauth-protected-resource"));
        assert!(oauth.serves("/.well-known/oauth-protected-resource/team/mcp"));
        assert!(!oauth.serves("/.well-known/oauth-protected-resource/other"));
        let doc: serde_json::Value = serde_json::from_str(&oauth.metadata()).expect("JSON");
        assert_eq!(
            doc["authorization_servers"],
            json!(["https://auth.example"])
        );
        assert_eq!(doc["scopes_supported"], json!(["files"]));
        assert_eq!(
            oauth.check("not.a.jwt"),
            Err(Refusal::InvalidToken("the token is not a JWT"))
        );
    }
}
