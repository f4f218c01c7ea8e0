//! The artifact in a registry: pushed (and signed), pulled back and
//! verified, with `oci-client` (the client wasm-pkg-tools and Wassette
//! use) speaking the OCI distribution protocol.
//!
//! Plain HTTP only for loopback addresses: a registry anywhere else is
//! spoken to over TLS, and one that does not answer TLS is an error, not a
//! reason to fall back.

use std::net::IpAddr;
use std::path::Path;

use anyhow::{Context, Result, bail};
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

use crate::oci::{Artifact, CONFIG_TYPE, MANIFEST_TYPE, Manifest, POLICY_TYPE, WASM_TYPE, digest};
use crate::sign;

/// What a push left in the registry.
#[derive(Debug, Clone)]
pub struct Published {
    /// `HOST[:PORT]/REPO:TAG`, as given.
    pub reference: String,
    /// The manifest's digest, which the registry reported back.
    pub digest: String,
    /// The signature's tag, where the push signed.
    pub signature: Option<String>,
}

/// What a verify checked.
#[derive(Debug, Clone)]
pub struct Verified {
    pub digest: String,
    pub component_digest: String,
    /// The component's bytes, every one checked.
    pub component: Vec<u8>,
}

/// Parse `HOST[:PORT]/REPO:TAG` (an `oci://` prefix allowed).
pub fn reference(text: &str) -> Result<Reference> {
    let text = text.strip_prefix("oci://").unwrap_or(text);
    let reference: Reference = text
        .parse()
        .with_context(|| format!("not an OCI reference (HOST[:PORT]/REPO:TAG): {text}"))?;
    Ok(reference)
}

/// Whether `registry` (`HOST[:PORT]`) is a loopback address, the one place
/// plain HTTP is spoken.
pub fn is_loopback(registry: &str) -> bool {
    let host = match registry.rsplit_once(':') {
        // `[::1]:5000`, `127.0.0.1:5000`, `localhost:5000`
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => registry,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn client(reference: &Reference) -> Client {
    // reqwest's TLS takes its crypto from the process-wide provider; a
    // second install (a second call) is refused and harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let registry = reference.resolve_registry().to_owned();
    let protocol = if is_loopback(&registry) {
        ClientProtocol::HttpsExcept(vec![registry])
    } else {
        ClientProtocol::Https
    };
    Client::new(ClientConfig {
        protocol,
        connect_timeout: Some(std::time::Duration::from_secs(10)),
        read_timeout: Some(std::time::Duration::from_secs(60)),
        ..ClientConfig::default()
    })
}

/// The credentials in `REGISTRY_USERNAME` and `REGISTRY_PASSWORD`, if set.
fn auth() -> RegistryAuth {
    match (
        std::env::var("REGISTRY_USERNAME"),
        std::env::var("REGISTRY_PASSWORD"),
    ) {
        (Ok(user), Ok(password)) => RegistryAuth::Basic(user, password),
        _ => RegistryAuth::Anonymous,
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the I/O runtime")
}

/// Push the image layout at `layout` to `to`, signing its manifest with the
/// PEM private key `sign_key` if given. Nothing is reported as published
/// unless every blob and the manifest were accepted and the registry hands
/// back the manifest's own digest.
pub fn push(layout: &Path, to: &str, sign_key: Option<&str>) -> Result<Published> {
    let artifact = Artifact::read_layout(layout)?;
    let reference = reference(to)?;
    if reference.tag().is_none() || reference.digest().is_some() {
        bail!("push to a tag (HOST[:PORT]/REPO:TAG), not to {to}");
    }
    // Sign before anything is sent: a bad key refuses with the registry
    // untouched.
    let repository = format!("{}/{}", reference.registry(), reference.repository());
    let signature = sign_key
        .map(|key| sign::sign(key, &repository, &artifact.digest()))
        .transpose()?;
    let client = client(&reference);
    let where_ = reference.whole();
    runtime()?.block_on(async {
        client
            .auth(&reference, &auth(), RegistryOperation::Push)
            .await
            .with_context(|| format!("the registry at {where_} refused or did not answer"))?;
        for (digest, bytes) in &artifact.blobs {
            client
                .push_blob(&reference, bytes.clone(), digest)
                .await
                .with_context(|| format!("the registry at {where_} refused the blob {digest}"))?;
        }
        let digest = put_manifest(&client, &reference, &artifact.manifest).await?;
        let signature = match signature {
            None => None,
            Some(image) => {
                let tag = sign::signature_tag(&digest);
                let at = Reference::with_tag(
                    reference.registry().into(),
                    reference.repository().into(),
                    tag.clone(),
                );
                for blob in [&image.config, &image.payload] {
                    client
                        .push_blob(&at, blob.clone(), &crate::oci::digest(blob))
                        .await
                        .with_context(|| {
                            format!("the registry refused the signature's blobs at {tag}")
                        })?;
                }
                put_manifest(&client, &at, &image.manifest).await?;
                Some(tag)
            }
        };
        Ok(Published {
            reference: to.to_owned(),
            digest,
            signature,
        })
    })
}

/// Put `manifest` at `reference` and check that the registry now serves
/// exactly those bytes there.
async fn put_manifest(client: &Client, reference: &Reference, manifest: &[u8]) -> Result<String> {
    let ours = digest(manifest);
    client
        .push_manifest_raw(
            reference,
            manifest.to_vec(),
            http::HeaderValue::from_static(MANIFEST_TYPE),
        )
        .await
        .with_context(|| format!("the registry refused the manifest at {}", reference.whole()))?;
    let (bytes, theirs) = client
        .pull_manifest_raw(reference, &auth(), &[MANIFEST_TYPE])
        .await
        .with_context(|| {
            format!(
                "the manifest just pushed to {} cannot be read back",
                reference.whole()
            )
        })?;
    if digest(&bytes) != ours || theirs != ours {
        bail!(
            "the registry at {} serves {theirs} where {ours} was pushed",
            reference.whole()
        );
    }
    Ok(ours)
}

/// Check the artifact at `at` before anything of it is used: the manifest
/// is what `key` signed, every blob hashes to its digest and has its size,
/// and the layers are what a component artifact holds.
pub fn verify(at: &str, key: &str) -> Result<Verified> {
    let key = sign::public_key(key)?;
    let reference = reference(at)?;
    let client = client(&reference);
    runtime()?.block_on(async {
        let auth = auth();
        client
            .auth(&reference, &auth, RegistryOperation::Pull)
            .await
            .with_context(|| format!("the registry at {at} refused or did not answer"))?;
        let (bytes, _) = client
            .pull_manifest_raw(&reference, &auth, &[MANIFEST_TYPE])
            .await
            .with_context(|| format!("no manifest at {at}"))?;
        let manifest_digest = digest(&bytes);
        if let Some(pinned) = reference.digest()
            && pinned != manifest_digest
        {
            bail!("the registry served a manifest that hashes to {manifest_digest}, not {pinned}");
        }
        let manifest: Manifest =
            serde_json::from_slice(&bytes).context("the manifest is not an OCI image manifest")?;
        signed(&client, &reference, &key, &manifest_digest).await?;
        same_release(&reference, &manifest)?;
        if manifest.config.media_type != CONFIG_TYPE {
            bail!(
                "the config is {}, not a Wasm config",
                manifest.config.media_type
            );
        }
        let mut component = None;
        for layer in manifest.layers.iter().chain([&manifest.config]) {
            let blob = blob(&client, &reference, layer).await?;
            if layer.media_type == WASM_TYPE {
                if component.is_some() {
                    bail!("the manifest holds more than one component layer");
                }
                component = Some((layer.digest.clone(), blob));
            } else if layer.media_type != POLICY_TYPE && layer.media_type != CONFIG_TYPE {
                bail!("the manifest holds a layer of type {}", layer.media_type);
            }
        }
        let (component_digest, component) =
            component.context("the manifest holds no component layer (application/wasm)")?;
        Ok(Verified {
            digest: manifest_digest,
            component_digest,
            component,
        })
    })
}

/// Whether one of the signatures cosign keeps for `manifest_digest` is by
/// `key` and names that digest.
async fn signed(
    client: &Client,
    reference: &Reference,
    key: &p256::ecdsa::VerifyingKey,
    manifest_digest: &str,
) -> Result<()> {
    let tag = sign::signature_tag(manifest_digest);
    let at = Reference::with_tag(
        reference.registry().into(),
        reference.repository().into(),
        tag.clone(),
    );
    let Ok((bytes, _)) = client
        .pull_manifest_raw(&at, &auth(), &[MANIFEST_TYPE])
        .await
    else {
        bail!("the artifact is not signed: there is no signature at the tag {tag}");
    };
    let manifest: Manifest = serde_json::from_slice(&bytes)
        .context("the signature's manifest is not an OCI manifest")?;
    let mut refusals = Vec::new();
    for layer in manifest
        .layers
        .iter()
        .filter(|l| l.media_type == sign::PAYLOAD_TYPE)
    {
        let payload = blob(client, &at, layer).await?;
        match sign::check(
            key,
            &payload,
            layer.annotations.get(sign::SIGNATURE_ANNOTATION),
            manifest_digest,
            &format!("{}/{}", reference.registry(), reference.repository()),
        ) {
            Ok(()) => return Ok(()),
            Err(e) => refusals.push(e.to_string()),
        }
    }
    if refusals.is_empty() {
        bail!("the signature at {tag} holds no cosign signature");
    }
    bail!("no signature at {tag} verifies: {}", refusals.join("; "))
}

/// The most a blob of `media_type` may be before it is fetched: a
/// registry (or whoever can push a signature tag) must not be able to make
/// a verify hold more than this in memory. A component is a few MiB; the
/// rest are small JSON and YAML documents.
fn most(media_type: &str) -> u64 {
    if media_type == WASM_TYPE {
        256 << 20
    } else {
        1 << 20
    }
}

/// The blob `digest` of `media_type`, checked against it and against
/// `size`, read no further than `size` (itself bounded by [`most`]).
async fn blob(
    client: &Client,
    reference: &Reference,
    descriptor: &crate::oci::Descriptor,
) -> Result<Vec<u8>> {
    use futures_util::StreamExt as _;
    let (digest, size) = (&descriptor.digest, descriptor.size);
    if size > most(&descriptor.media_type) {
        bail!(
            "the blob {digest} is said to be {size} bytes, more than a {} may be",
            descriptor.media_type
        );
    }
    let mut stream = client
        .pull_blob_stream(reference, digest.as_str())
        .await
        .with_context(|| format!("cannot fetch the blob {digest}"))?
        .stream;
    let mut bytes = Vec::new();
    let mut failed = None;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => {
                if (bytes.len() + chunk.len()) as u64 > size {
                    bail!("the blob {digest} is longer than the {size} bytes its manifest says");
                }
                bytes.extend_from_slice(&chunk);
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    if crate::oci::digest(&bytes) != *digest {
        if bytes.len() as u64 == size {
            bail!(
                "the blob {digest} the registry served does not hash to its digest: it was altered"
            );
        }
        let why = failed.map(|e| format!(": {e}")).unwrap_or_default();
        bail!(
            "the blob {digest} came short, {} of {size} bytes{why}",
            bytes.len()
        );
    }
    Ok(bytes)
}

/// A tag that names a version must find that version's manifest: an older
/// release, signed in its day, put under a newer tag is refused.
fn same_release(reference: &Reference, manifest: &Manifest) -> Result<()> {
    let Some(tag) = reference.tag() else {
        return Ok(());
    };
    let named = tag.strip_prefix('v').unwrap_or(tag);
    if !named.starts_with(|c: char| c.is_ascii_digit()) {
        return Ok(());
    }
    let version = manifest
        .annotations
        .get("org.opencontainers.image.version")
        .map_or("none", String::as_str);
    if version != named {
        bail!(
            "the tag {tag} names a version, and the signed manifest under it is of version {version}"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_for_loopback_only() {
        for yes in [
            "127.0.0.1:5000",
            "localhost:5000",
            "[::1]:5000",
            "127.8.9.1",
            "localhost",
        ] {
            assert!(is_loopback(yes), "{yes}");
        }
        for no in [
            "10.0.0.1:5000",
            "ghcr.io",
            "example.invalid:443",
            "127.0.0.1.example.com",
        ] {
            assert!(!is_loopback(no), "{no}");
        }
    }
}
