//! `cargo xtask dist --out DIR`: every artifact, built from one component.
//!
//! The component comes from the `write-tool` binary itself (`write-tool
//! component -o`), so each artifact carries the bytes that binary runs, and
//! the bundle carries the binary. Everything is built in a folder beside
//! `DIR` and moved into place whole, so a failed build leaves the last dist
//! as it was; `DIR/dist.json` lists what was built, with digests.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::oci::{Artifact, hex};
use crate::release::{COMPONENT_FILE, Release, VERSION};
use crate::{mcpb, npm, server_json, wheel};

/// What a dist is built from and where it goes.
#[derive(Debug, Clone)]
pub struct Options {
    /// The folder that receives the artifacts.
    pub out: PathBuf,
    /// The `write-tool` binary whose component every artifact carries.
    pub binary: PathBuf,
    /// The workspace (for `packages/`).
    pub workspace: PathBuf,
    /// Scratch space kept between runs (the Node tools' install), where
    /// the wheel and the npm package are staged: one build at a time.
    pub work: PathBuf,
    /// The Python that runs the wheel's PEP 517 build.
    pub python: PathBuf,
    /// The release's date (`SOURCE_DATE_EPOCH`).
    pub epoch: u64,
}

/// One artifact in `dist.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Entry {
    /// `oci`, `wheel`, `npm`, `mcpb` or `server-json`.
    pub kind: String,
    /// Relative to the dist folder.
    pub file: String,
    /// The file's SHA-256; for the OCI layout, its manifest's.
    pub sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_digest: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_digest: Option<String>,
}

/// `dist.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Dist {
    pub version: String,
    /// The component's SHA-256, the same in every artifact that carries it.
    pub component_sha256: String,
    pub artifacts: Vec<Entry>,
}

impl Dist {
    /// The entry of `kind`.
    pub fn get(&self, kind: &str) -> Option<&Entry> {
        self.artifacts.iter().find(|e| e.kind == kind)
    }
}

/// The SHA-256 of `bytes`, in hex.
pub fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn sha256_file(path: &Path) -> Result<String> {
    Ok(sha256(
        &fs::read(path).with_context(|| format!("read {}", path.display()))?,
    ))
}

/// Run `command`; its output is the error where it fails.
pub fn run(command: &mut Command) -> Result<std::process::Output> {
    let output = command
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("cannot run {command:?}"))?;
    if !output.status.success() {
        bail!(
            "{command:?} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(output)
}

/// What `out` holds now: nothing, or a dist this command built (which it
/// replaces). Anything else, at any depth, is refused, named, and left
/// alone.
fn check_out(out: &Path) -> Result<bool> {
    match fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e).with_context(|| format!("cannot look at {}", out.display())),
        Ok(m) if !m.is_dir() => {
            bail!(
                "{} is not a directory; nothing was built or removed",
                out.display()
            )
        }
        Ok(_) => {}
    }
    let mut found = Vec::new();
    walk(out, Path::new(""), &mut found)?;
    if found.is_empty() {
        return Ok(false);
    }
    let earlier: Option<Dist> = fs::read(out.join("dist.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let Some(earlier) = earlier else {
        bail!(
            "{} holds files that are not a dist ({}); choose an empty or new folder. \
             Nothing was built or removed.",
            out.display(),
            shown(&found)
        );
    };
    let strangers: Vec<(String, bool)> = found
        .into_iter()
        .filter(|(name, is_file)| !of_a_dist(&earlier, name, *is_file))
        .collect();
    if !strangers.is_empty() {
        bail!(
            "{} holds a dist and other files ({}); move them away first. Nothing was built \
             or removed.",
            out.display(),
            shown(&strangers)
        );
    }
    Ok(true)
}

fn shown(found: &[(String, bool)]) -> String {
    let mut names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).take(10).collect();
    if found.len() > 10 {
        names.push("…");
    }
    names.join(", ")
}

/// Everything under `dir` (relative names, links not followed), and
/// whether each is a plain file; a folder is listed before what it holds.
fn walk(dir: &Path, rel: &Path, found: &mut Vec<(String, bool)>) -> Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir.join(rel))
        .with_context(|| format!("read {}", dir.join(rel).display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = rel.join(entry.file_name());
        let kind = entry.file_type()?;
        found.push((name.to_string_lossy().into_owned(), kind.is_file()));
        if kind.is_dir() {
            walk(dir, &name, found)?;
        }
    }
    Ok(())
}

/// Whether `name` is what the dist `earlier` wrote: its artifacts,
/// `dist.json`, and the OCI layout's own files.
fn of_a_dist(earlier: &Dist, name: &str, is_file: bool) -> bool {
    let artifact = earlier
        .artifacts
        .iter()
        .any(|e| e.kind != "oci" && e.file == name);
    let layout = match name.strip_prefix("oci/blobs/sha256/") {
        Some(hex) => is_file && hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => {
            matches!(name, "oci/oci-layout" | "oci/index.json") && is_file
                || matches!(name, "oci" | "oci/blobs" | "oci/blobs/sha256") && !is_file
        }
    };
    (artifact || name == "dist.json") && is_file || layout
}

/// Build every artifact into `options.out`.
pub fn dist(options: &Options, say: &mut dyn FnMut(&str)) -> Result<Dist> {
    check_out(&options.out)?;
    let release = Release::new(options.epoch)?;
    let component = component(&options.binary, &options.work)?;
    let stage = staging(&options.out, "partial")?;
    let dist = match build(options, &release, &component, &stage) {
        Ok(dist) => dist,
        Err(e) => {
            let _ = fs::remove_dir_all(&stage);
            return Err(e);
        }
    };
    // Looked at again: the folder may have changed while the build ran.
    let replaces = match check_out(&options.out) {
        Ok(replaces) => replaces,
        Err(e) => {
            let _ = fs::remove_dir_all(&stage);
            return Err(e);
        }
    };
    if replaces {
        say(&format!("replacing the dist in {}", options.out.display()));
        // The earlier dist is moved aside before the new one moves in, and
        // removed last: a kill in between leaves both, named.
        let aside = staging(&options.out, "old")?;
        fs::rename(&options.out, &aside)
            .with_context(|| format!("move the earlier dist in {} aside", options.out.display()))?;
        fs::rename(&stage, &options.out).with_context(|| {
            format!(
                "move the dist into {} (the earlier one is in {})",
                options.out.display(),
                aside.display()
            )
        })?;
        fs::remove_dir_all(&aside)
            .with_context(|| format!("remove the earlier dist, moved to {}", aside.display()))?;
    } else {
        if options.out.exists() {
            fs::remove_dir(&options.out)?;
        }
        fs::rename(&stage, &options.out)
            .with_context(|| format!("move the dist into {}", options.out.display()))?;
    }
    for entry in &dist.artifacts {
        say(&format!(
            "{:<12} {}",
            entry.kind,
            options.out.join(&entry.file).display()
        ));
    }
    Ok(dist)
}

/// A new folder of a name no one else uses, beside `out` (on the same
/// file system, so that it moves into place by a rename).
fn staging(out: &Path, what: &str) -> Result<PathBuf> {
    let name = out
        .file_name()
        .context("the output folder has no name")?
        .to_string_lossy();
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(parent).with_context(|| format!("create {}", parent.display()))?;
    let dir = tempfile::Builder::new()
        .prefix(&format!(".{name}.{what}-"))
        .tempdir_in(parent)
        .with_context(|| format!("make a folder in {}", parent.display()))?;
    Ok(dir.keep())
}

/// The component, as `write-tool component` writes it.
fn component(binary: &Path, work: &Path) -> Result<Vec<u8>> {
    fs::create_dir_all(work)?;
    let path = work.join(COMPONENT_FILE);
    run(Command::new(binary).args(["component", "-o"]).arg(&path))?;
    fs::read(&path).with_context(|| format!("read {}", path.display()))
}

fn build(options: &Options, release: &Release, component: &[u8], stage: &Path) -> Result<Dist> {
    let mut artifacts = Vec::new();

    let artifact = Artifact::build(component, release)?;
    artifact.write_layout(&stage.join("oci"))?;
    artifacts.push(Entry {
        kind: "oci".into(),
        file: "oci".into(),
        sha256: sha256(&artifact.manifest),
        manifest_digest: Some(artifact.digest()),
        component_digest: Some(artifact.component_digest().to_owned()),
    });

    let wheel = wheel::build(options, component, stage)?;
    artifacts.push(file_entry("wheel", stage, &wheel)?);

    let npm = npm::build(options, component, stage)?;
    artifacts.push(file_entry("npm", stage, &npm)?);

    let mcpb = mcpb::build(options, release, stage)?;
    let mcpb_entry = file_entry("mcpb", stage, &mcpb)?;
    let server = server_json::build(release, &mcpb_entry.sha256, stage)?;
    artifacts.push(mcpb_entry);
    artifacts.push(file_entry("server-json", stage, &server)?);

    let dist = Dist {
        version: VERSION.into(),
        component_sha256: sha256(component),
        artifacts,
    };
    let mut json = serde_json::to_vec_pretty(&dist)?;
    json.push(b'\n');
    fs::write(stage.join("dist.json"), json)?;
    Ok(dist)
}

fn file_entry(kind: &str, stage: &Path, file: &str) -> Result<Entry> {
    Ok(Entry {
        kind: kind.into(),
        file: file.into(),
        sha256: sha256_file(&stage.join(file))?,
        manifest_digest: None,
        component_digest: None,
    })
}

/// Copy the files of `from` into `to` (made), leaving out what a build or
/// an install left there.
pub fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    let mut entries: Vec<_> = fs::read_dir(from)
        .with_context(|| format!("read {}", from.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let skip = name.to_str().is_some_and(|n| {
            matches!(n, "__pycache__" | "node_modules" | "gen" | "dist" | "build")
                || n.ends_with(".wasm")
                || n.ends_with(".egg-info")
        });
        if skip {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &to.join(&name))?;
        } else if kind.is_file() {
            fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

/// The version a package's manifest declares must be the workspace's.
pub fn same_version(file: &Path, declared: Option<&str>) -> Result<()> {
    if declared != Some(VERSION) {
        bail!(
            "{} declares version {}, the workspace {VERSION}: make them agree",
            file.display(),
            declared.unwrap_or("none")
        );
    }
    Ok(())
}
