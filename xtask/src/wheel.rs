//! The Python package: `packages/python` with the component inside, built
//! into a wheel by pip through the project's PEP 517 backend (flit_core,
//! which stamps every file with `SOURCE_DATE_EPOCH`).

use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use crate::dist::{Options, copy_tree, run, same_version};
use crate::release::{COMPONENT_FILE, Release, ZIP_EPOCH};

/// Build the wheel into `out`; its file name.
pub fn build(options: &Options, component: &[u8], out: &Path) -> Result<String> {
    let source = options.workspace.join("packages/python");
    let pyproject = source.join("pyproject.toml");
    let text =
        fs::read_to_string(&pyproject).with_context(|| format!("read {}", pyproject.display()))?;
    let declared = text
        .lines()
        .find_map(|l| l.strip_prefix("version = "))
        .map(|v| v.trim().trim_matches('"'));
    same_version(&pyproject, declared)?;

    let stage = options.work.join("python");
    if stage.exists() {
        fs::remove_dir_all(&stage)?;
    }
    copy_tree(&source, &stage)?;
    fs::write(stage.join("write_tool").join(COMPONENT_FILE), component)?;
    run(Command::new(&options.python)
        .args([
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "--quiet",
            "--wheel-dir",
        ])
        .arg(out)
        .arg(&stage)
        .env(
            "SOURCE_DATE_EPOCH",
            options.epoch.max(ZIP_EPOCH).to_string(),
        ))?;
    let file = Release::wheel_file();
    if !out.join(&file).is_file() {
        anyhow::bail!("pip built no {file} in {}", out.display());
    }
    Ok(file)
}
