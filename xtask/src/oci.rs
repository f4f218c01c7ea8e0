//! The component as an OCI artifact, written as an OCI image layout
//! (`oci-layout`, `index.json`, `blobs/sha256/…`).
//!
//! The shape is the CNCF TAG Runtime's Wasm OCI artifact, as `wkg oci push`
//! writes it and Wassette reads it: a config of type
//! `application/vnd.wasm.config.v0+json` (`architecture: "wasm"`, `os:
//! "wasip2"`, the layer digests and the component's imports and exports),
//! the component as a layer of type `application/wasm`, and Wassette's
//! policy layer (`application/vnd.wasm.policy.v1+yaml`) granting the
//! storage the component needs and nothing else.
//!
//! Every JSON document is written here byte for byte (keys in a fixed
//! order, no whitespace), so the manifest's digest is a function of the
//! component and the release alone, and `push` sends these very bytes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::release::{COMPONENT_FILE, DESCRIPTION, LICENSE, Release, SOURCE, VERSION};

/// The manifest's own type.
pub const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The index's type.
pub const INDEX_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// The Wasm artifact's config.
pub const CONFIG_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component's layer.
pub const WASM_TYPE: &str = "application/wasm";
/// Wassette's permission policy.
pub const POLICY_TYPE: &str = "application/vnd.wasm.policy.v1+yaml";
/// The manifest's `artifactType` (OCI 1.1), as wkg and the CNCF spec say
/// for a WASI 0.2 component.
pub const ARTIFACT_TYPE: &str = "application/vnd.wasm.component.v1+wasm";

/// The directory the policy grants: the project root the sidecar image
/// and agent-sandbox pods mount (`Containerfile`'s `--root`). A host that
/// grants another directory says so when it loads the component
/// (README, "Wassette").
pub const GRANTED_ROOT: &str = "/workspace";

/// A content descriptor (OCI image spec, `descriptor.md`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl Descriptor {
    /// The descriptor of `bytes`.
    pub fn of(media_type: &str, bytes: &[u8]) -> Descriptor {
        Descriptor {
            media_type: media_type.to_owned(),
            digest: digest(bytes),
            size: bytes.len() as u64,
            annotations: BTreeMap::new(),
        }
    }

    fn titled(mut self, title: &str) -> Descriptor {
        self.annotations
            .insert("org.opencontainers.image.title".into(), title.into());
        self
    }
}

/// An image manifest (OCI image spec, `manifest.md`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub schema_version: u32,
    pub media_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    pub config: Descriptor,
    pub layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// `sha256:` and the hex digest of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", crate::dist::sha256(bytes))
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The artifact, in memory: every blob by digest, and the manifest's bytes.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The manifest's bytes, as pushed.
    pub manifest: Vec<u8>,
    /// The manifest, parsed.
    pub parsed: Manifest,
    /// Config and layers by digest.
    pub blobs: BTreeMap<String, Vec<u8>>,
}

impl Artifact {
    /// The artifact of `component` for `release`.
    pub fn build(component: &[u8], release: &Release) -> Result<Artifact> {
        let wasm = Descriptor::of(WASM_TYPE, component).titled(COMPONENT_FILE);
        let policy_bytes = policy().into_bytes();
        let policy = Descriptor::of(POLICY_TYPE, &policy_bytes).titled("policy.yaml");
        let (imports, exports) = world(component)?;
        let config_bytes = serde_json::to_vec(&serde_json::json!({
            "created": release.created(),
            "architecture": "wasm",
            "os": "wasip2",
            "layerDigests": [wasm.digest],
            "component": {"exports": exports, "imports": imports, "target": null},
        }))?;
        let config = Descriptor::of(CONFIG_TYPE, &config_bytes);
        let parsed = Manifest {
            schema_version: 2,
            media_type: MANIFEST_TYPE.into(),
            artifact_type: Some(ARTIFACT_TYPE.into()),
            config: config.clone(),
            layers: vec![wasm, policy],
            annotations: annotations(release),
        };
        let manifest = serde_json::to_vec(&parsed)?;
        let blobs = BTreeMap::from([
            (config.digest, config_bytes),
            (parsed.layers[0].digest.clone(), component.to_vec()),
            (parsed.layers[1].digest.clone(), policy_bytes),
        ]);
        Ok(Artifact {
            manifest,
            parsed,
            blobs,
        })
    }

    /// The manifest's digest.
    pub fn digest(&self) -> String {
        digest(&self.manifest)
    }

    /// The component layer's digest.
    pub fn component_digest(&self) -> &str {
        &self.parsed.layers[0].digest
    }

    /// Write the artifact as an OCI image layout into `dir`, which must not
    /// exist yet; the manifest is tagged with the version.
    pub fn write_layout(&self, dir: &Path) -> Result<()> {
        let blobs = dir.join("blobs/sha256");
        fs::create_dir_all(&blobs).with_context(|| format!("create {}", blobs.display()))?;
        fs::write(dir.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#)?;
        let mut descriptor = Descriptor::of(MANIFEST_TYPE, &self.manifest);
        descriptor
            .annotations
            .insert("org.opencontainers.image.ref.name".into(), VERSION.into());
        let index = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": INDEX_TYPE,
            "manifests": [descriptor],
        });
        fs::write(dir.join("index.json"), serde_json::to_vec(&index)?)?;
        for (digest, bytes) in self.blobs.iter().chain([(&self.digest(), &self.manifest)]) {
            fs::write(blob_path(dir, digest)?, bytes)?;
        }
        Ok(())
    }

    /// Read the artifact back from the image layout at `dir`, checking
    /// every blob against its digest.
    pub fn read_layout(dir: &Path) -> Result<Artifact> {
        let index: serde_json::Value = serde_json::from_slice(
            &fs::read(dir.join("index.json"))
                .with_context(|| format!("{} is not an OCI image layout", dir.display()))?,
        )?;
        let manifests = index["manifests"]
            .as_array()
            .context("index.json lists no manifests")?;
        let [entry] = manifests.as_slice() else {
            bail!("index.json lists {} manifests, not one", manifests.len());
        };
        let descriptor: Descriptor = serde_json::from_value(entry.clone())?;
        let manifest = read_blob(dir, &descriptor.digest)?;
        let parsed: Manifest = serde_json::from_slice(&manifest)?;
        let mut blobs = BTreeMap::new();
        for d in parsed.layers.iter().chain([&parsed.config]) {
            blobs.insert(d.digest.clone(), read_blob(dir, &d.digest)?);
        }
        Ok(Artifact {
            manifest,
            parsed,
            blobs,
        })
    }
}

/// The path of the blob `digest` in the layout at `dir`.
fn blob_path(dir: &Path, digest: &str) -> Result<PathBuf> {
    let hex = digest
        .strip_prefix("sha256:")
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .with_context(|| format!("not a sha256 digest: {digest}"))?;
    Ok(dir.join("blobs/sha256").join(hex))
}

fn read_blob(dir: &Path, digest: &str) -> Result<Vec<u8>> {
    let path = blob_path(dir, digest)?;
    let bytes = fs::read(&path).with_context(|| format!("read {}", path.display()))?;
    if self::digest(&bytes) != digest {
        bail!(
            "the blob {digest} in {} does not hash to its name",
            dir.display()
        );
    }
    Ok(bytes)
}

/// The standard `org.opencontainers.image.*` annotations.
fn annotations(release: &Release) -> BTreeMap<String, String> {
    [
        ("title", "write-tool"),
        ("description", DESCRIPTION),
        ("version", VERSION),
        ("source", SOURCE),
        ("licenses", LICENSE),
        ("created", &release.created()),
    ]
    .into_iter()
    .map(|(k, v)| (format!("org.opencontainers.image.{k}"), v.to_owned()))
    .collect()
}

/// Wassette's policy (its `docs/reference/permissions.md`): read and write
/// in the one directory granted as the project root. No network, and no
/// environment: every setting the component reads from its environment is
/// the host's to give, and a policy that granted one would let a model's
/// runtime loosen the tool (`docs/contract.md#hosts`).
pub fn policy() -> String {
    format!(
        "version: \"1.0\"\n\
         description: \"write-tool: read and write files in one project directory, nothing else\"\n\
         permissions:\n\
         \x20 storage:\n\
         \x20   allow:\n\
         \x20     - uri: \"fs://{GRANTED_ROOT}\"\n\
         \x20       access: [\"read\", \"write\"]\n"
    )
}

/// The component's imports and exports, as `wasi:filesystem/types@0.2.6`.
fn world(component: &[u8]) -> Result<(Vec<String>, Vec<String>)> {
    let decoded =
        wit_parser::decoding::decode(component).context("the component does not decode")?;
    let wit_parser::decoding::DecodedWasm::Component(resolve, world) = decoded else {
        bail!("the bytes are a WIT package, not a component");
    };
    let world = &resolve.worlds[world];
    let names = |items: &wit_parser::IndexMap<wit_parser::WorldKey, wit_parser::WorldItem>| {
        items
            .keys()
            .map(|key| resolve.name_world_key(key))
            .collect::<Vec<_>>()
    };
    Ok((names(&world.imports), names(&world.exports)))
}
