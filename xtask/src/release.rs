//! What every artifact says about the release: one place for the names,
//! the version and where the release is published.
//!
//! The names are derived from the workspace's `repository` so that a fork
//! that changes it publishes under its own: the MCP registry's name is that
//! host in reverse-DNS form (the registry proves a domain namespace by DNS),
//! the OCI references live under that host, and the bundle's download URL is
//! a release asset under the repository.

use anyhow::{Context, Result, bail};

/// The version of the workspace, which every artifact carries.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The workspace's `repository`: the source every artifact names.
pub const SOURCE: &str = env!("CARGO_PKG_REPOSITORY");

/// The workspace's license, as SPDX says it.
pub const LICENSE: &str = env!("CARGO_PKG_LICENSE");

/// One line on what the tool is, within the MCP registry's 100 characters.
pub const DESCRIPTION: &str =
    "Writes, edits and patches files in one project root: diffed, atomic, journaled, undoable.";

/// 1980-01-01: a zip entry (the wheel's and the bundle's) cannot be dated
/// before it, so an earlier epoch is taken as this.
pub const ZIP_EPOCH: u64 = 315_532_800;

/// The component's file name inside every artifact that carries it.
pub const COMPONENT_FILE: &str = "write_tool.wasm";

/// Where a release is published: the host of the repository and the path
/// under it, and what follows from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// `example.invalid` for `https://example.invalid/write-tool`.
    pub host: String,
    /// `write-tool` for `https://example.invalid/write-tool`.
    pub path: String,
    /// What the artifacts say where they need a date: `SOURCE_DATE_EPOCH`.
    pub epoch: u64,
}

impl Release {
    /// The release of this workspace at `epoch`.
    pub fn new(epoch: u64) -> Result<Release> {
        let rest = SOURCE
            .strip_prefix("https://")
            .context("the workspace's repository is not an https URL")?;
        let (host, path) = rest
            .split_once('/')
            .context("the workspace's repository has no path")?;
        if host.is_empty() || path.is_empty() {
            bail!("the workspace's repository names no host or no path: {SOURCE}");
        }
        Ok(Release {
            host: host.to_owned(),
            path: path.trim_end_matches('/').to_owned(),
            epoch,
        })
    }

    /// The MCP registry's name: the host reversed, then the project.
    pub fn mcp_name(&self) -> String {
        let reversed: Vec<&str> = self.host.split('.').rev().collect();
        format!("{}/{}", reversed.join("."), self.path.replace('/', "-"))
    }

    /// The OCI reference of the component artifact.
    pub fn component_image(&self) -> String {
        format!("{}/{}/component:{VERSION}", self.host, self.path)
    }

    /// The OCI reference of the sidecar image that `deploy/` runs.
    pub fn sidecar_image(&self) -> String {
        format!("{}/{}/sidecar:{VERSION}", self.host, self.path)
    }

    /// The download URL of a release asset.
    pub fn asset_url(&self, file: &str) -> String {
        format!("{SOURCE}/releases/download/v{VERSION}/{file}")
    }

    /// The bundle's file name.
    pub fn mcpb_file() -> String {
        format!("write-tool-{VERSION}-linux-x64.mcpb")
    }

    /// The wheel's file name (PEP 427: the distribution's name normalized).
    pub fn wheel_file() -> String {
        format!("write_tool-{VERSION}-py3-none-any.whl")
    }

    /// The npm package's file name, as `npm pack` names it.
    pub fn npm_file() -> String {
        format!("write-tool-{VERSION}.tgz")
    }

    /// The epoch as RFC 3339, for the OCI config's `created`.
    pub fn created(&self) -> String {
        rfc3339(self.epoch)
    }
}

/// The date the artifacts carry: `SOURCE_DATE_EPOCH` where it is set (the
/// reproducible-builds convention), else the time of the last commit, so
/// that two builds of one checkout agree without being told.
pub fn source_date_epoch(workspace: &std::path::Path) -> Result<u64> {
    if let Ok(value) = std::env::var("SOURCE_DATE_EPOCH") {
        return value
            .trim()
            .parse()
            .with_context(|| format!("SOURCE_DATE_EPOCH is not a number of seconds: {value:?}"));
    }
    let output = std::process::Command::new("git")
        .args(["log", "-1", "--format=%ct"])
        .current_dir(workspace)
        .output();
    match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .context("git printed no commit time"),
        // Outside a checkout (a source tarball) nothing says when: the
        // epoch itself, which is at least the same on every build.
        _ => Ok(0),
    }
}

/// Seconds since the epoch, in UTC, as RFC 3339 (`1970-01-01T00:00:00Z`).
pub fn rfc3339(epoch: u64) -> String {
    i64::try_from(epoch)
        .ok()
        .and_then(|secs| chrono::DateTime::from_timestamp(secs, 0))
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_rfc3339_in_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_170_210), "2026-12-02T00:10:10Z");
    }

    #[test]
    fn names_follow_the_repository() {
        let release = Release::new(0).expect("release");
        assert_eq!(release.host, "example.invalid");
        assert_eq!(release.mcp_name(), "invalid.example/write-tool");
        assert!(release.component_image().ends_with(&format!(":{VERSION}")));
    }
}
