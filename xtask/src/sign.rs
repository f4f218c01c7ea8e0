//! cosign's key-based signature of a manifest, made and checked.
//!
//! The format is cosign's own (sigstore `cosign` `specs/SIGNATURE_SPEC.md`),
//! which `cosign verify --key` reads: a "simple signing" payload naming the
//! manifest's digest, signed with ECDSA P-256 over SHA-256 (the signature
//! ASN.1 DER, then base64), stored as the one layer of a manifest tagged
//! `sha256-<hex>.sig` in the same repository, the signature in the layer's
//! `dev.cosignproject.cosign/signature` annotation.
//!
//! The tag, not the OCI 1.1 referrers API: every registry has tags, Debian's
//! distribution 2.8 has no referrers API, and the tag is where cosign looks
//! first. Keys are PEM: a PKCS #8 private key (what `openssl genpkey`
//! writes and `cosign import-key-pair` takes) and the SubjectPublicKeyInfo
//! public key that `cosign.pub` is.

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use p256::ecdsa::signature::{Signer as _, Verifier as _};
use p256::ecdsa::{DerSignature, SigningKey, VerifyingKey};
use p256::pkcs8::{DecodePrivateKey as _, DecodePublicKey as _};
use serde_json::Value;

use crate::oci::{Descriptor, MANIFEST_TYPE, Manifest, digest};

/// The payload layer's type.
pub const PAYLOAD_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation that holds the signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The payload's `critical.type`.
const SIGNATURE_KIND: &str = "cosign container image signature";
/// The signature manifest's config type (cosign writes an image config).
const IMAGE_CONFIG_TYPE: &str = "application/vnd.oci.image.config.v1+json";

/// The tag under which cosign keeps the signatures of `manifest_digest`.
pub fn signature_tag(manifest_digest: &str) -> String {
    format!("{}.sig", manifest_digest.replace(':', "-"))
}

/// The simple-signing payload for `manifest_digest` at `repository`
/// (`HOST[:PORT]/REPO`, cosign's `docker-reference`).
pub fn payload(repository: &str, manifest_digest: &str) -> Vec<u8> {
    let value = serde_json::json!({
        "critical": {
            "identity": {"docker-reference": repository},
            "image": {"docker-manifest-digest": manifest_digest},
            "type": SIGNATURE_KIND,
        },
        "optional": null,
    });
    serde_json::to_vec(&value).unwrap_or_default()
}

/// A signature manifest, ready to push: its bytes and the blobs it names.
#[derive(Debug)]
pub struct SignatureImage {
    pub manifest: Vec<u8>,
    pub config: Vec<u8>,
    pub payload: Vec<u8>,
}

/// Sign `manifest_digest` with the PEM private key `key`.
pub fn sign(key: &str, repository: &str, manifest_digest: &str) -> Result<SignatureImage> {
    let key = SigningKey::from_pkcs8_pem(key)
        .context("the signing key is not a PEM PKCS #8 ECDSA P-256 private key")?;
    let payload = payload(repository, manifest_digest);
    let signature: DerSignature = key.sign(&payload);
    let encoded = base64::engine::general_purpose::STANDARD.encode(signature.as_bytes());
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "",
        "config": {},
        "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}],
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": [digest(&payload)]},
    }))?;
    let mut layer = Descriptor::of(PAYLOAD_TYPE, &payload);
    layer
        .annotations
        .insert(SIGNATURE_ANNOTATION.into(), encoded);
    let manifest = serde_json::to_vec(&Manifest {
        schema_version: 2,
        media_type: MANIFEST_TYPE.into(),
        artifact_type: None,
        config: Descriptor::of(IMAGE_CONFIG_TYPE, &config),
        layers: vec![layer],
        annotations: Default::default(),
    })?;
    Ok(SignatureImage {
        manifest,
        config,
        payload,
    })
}

/// The public key in `pem`.
pub fn public_key(pem: &str) -> Result<VerifyingKey> {
    VerifyingKey::from_public_key_pem(pem)
        .context("the key is not a PEM ECDSA P-256 public key (SubjectPublicKeyInfo)")
}

/// Whether `payload` (already checked against its digest) carries a
/// signature by `key` in `annotation` and names `manifest_digest` at
/// `repository` (`HOST[:PORT]/REPO`: a signature made for another
/// repository, copied beside this one, is not this one's); the error says
/// which part failed.
pub fn check(
    key: &VerifyingKey,
    payload: &[u8],
    annotation: Option<&String>,
    manifest_digest: &str,
    repository: &str,
) -> Result<()> {
    let annotation = annotation.context("the signature layer carries no signature")?;
    let der = base64::engine::general_purpose::STANDARD
        .decode(annotation.trim())
        .context("the signature is not base64")?;
    let signature = DerSignature::try_from(der.as_slice())
        .context("the signature is not an ASN.1 DER ECDSA signature")?;
    key.verify(payload, &signature)
        .map_err(|_| anyhow::anyhow!("the signature was not made with this key"))?;
    let value: Value = serde_json::from_slice(payload).context("the signed payload is not JSON")?;
    if value["critical"]["type"] != SIGNATURE_KIND {
        bail!("the signed payload is not a cosign image signature");
    }
    let signed = value["critical"]["image"]["docker-manifest-digest"]
        .as_str()
        .unwrap_or("");
    if signed != manifest_digest {
        bail!(
            "the signature is for the manifest {signed}, not for {manifest_digest}: \
             the manifest was swapped"
        );
    }
    let signed_for = value["critical"]["identity"]["docker-reference"]
        .as_str()
        .unwrap_or("");
    if signed_for != repository {
        bail!("the signature was made for {signed_for}, not for {repository}");
    }
    Ok(())
}
