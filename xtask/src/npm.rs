//! The Node package: `packages/node` with the component transpiled by jco
//! (`--instantiation sync`, so that every call gets an instance of its
//! own), packed by `npm pack` (which stamps every entry with one fixed
//! date, so the tarball is the same for the same files).

use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::dist::{Options, copy_tree, run, same_version};
use crate::release::{COMPONENT_FILE, Release};

/// Build the package's tarball into `out`; its file name.
pub fn build(options: &Options, component: &[u8], out: &Path) -> Result<String> {
    let source = options.workspace.join("packages/node");
    let manifest = source.join("package.json");
    let package: serde_json::Value = serde_json::from_slice(
        &fs::read(&manifest).with_context(|| format!("read {}", manifest.display()))?,
    )?;
    same_version(&manifest, package["version"].as_str())?;

    let stage = options.work.join("node");
    tools(&source, &stage)?;
    // Everything but the installed tools is laid anew.
    for name in ["gen", "index.js", "index.d.ts", "README.md", COMPONENT_FILE] {
        let path = stage.join(name);
        if path.is_dir() {
            fs::remove_dir_all(&path)?;
        } else if path.exists() {
            fs::remove_file(&path)?;
        }
    }
    copy_tree(&source, &stage)?;
    fs::write(stage.join(COMPONENT_FILE), component)?;
    run(Command::new(stage.join("node_modules/.bin/jco"))
        .current_dir(&stage)
        .args([
            "transpile",
            COMPONENT_FILE,
            "-o",
            "gen",
            "--name",
            "write_tool",
        ])
        .args(["--instantiation", "sync", "--quiet"]))?;
    normalize_modes(&stage)?;
    run(Command::new("npm")
        .current_dir(&stage)
        .args(["pack", "--silent", "--pack-destination"])
        .arg(fs::canonicalize(out)?))?;
    let file = Release::npm_file();
    if !out.join(&file).is_file() {
        bail!("npm pack wrote no {file} in {}", out.display());
    }
    Ok(file)
}

/// Every file packed 0644 and every folder 0755: `npm pack` keeps the
/// modes the files have, which the umask of the build decided.
fn normalize_modes(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name() == "node_modules" {
            continue;
        }
        let kind = entry.file_type()?;
        let mode = if kind.is_dir() { 0o755 } else { 0o644 };
        if kind.is_dir() || kind.is_file() {
            fs::set_permissions(entry.path(), fs::Permissions::from_mode(mode))?;
        }
        if kind.is_dir() {
            normalize_modes(&entry.path())?;
        }
    }
    Ok(())
}

/// jco and the shim in `stage/node_modules`, as `package-lock.json` pins
/// them; installed again only when the lock changes.
fn tools(source: &Path, stage: &Path) -> Result<()> {
    let lock = fs::read(source.join("package-lock.json"))
        .context("packages/node has no package-lock.json")?;
    let marker = stage.join("node_modules/.installed-lock");
    if fs::read(&marker).is_ok_and(|m| m == lock) {
        return Ok(());
    }
    if stage.exists() {
        fs::remove_dir_all(stage)?;
    }
    fs::create_dir_all(stage)?;
    for name in ["package.json", "package-lock.json"] {
        fs::copy(source.join(name), stage.join(name))?;
    }
    run(Command::new("npm").current_dir(stage).args([
        "ci",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
    ]))?;
    fs::write(marker, lock)?;
    Ok(())
}
