//! The MCP registry's entry (`server.json`, schema 2025-12-11; the schema
//! is vendored in `xtask/schemas/`, where its source is said).
//!
//! It lists the two ways an MCP client runs the server itself: the bundle
//! (`mcpb`, with the digest the registry requires), and the sidecar image
//! of `deploy/` run as a stdio server with the project mounted at
//! `/workspace` (a client runs `docker run -i --rm` with the arguments
//! given here). `remotes` names the sidecar's Streamable HTTP endpoint,
//! `/mcp` on its port, with the host templated: every sandbox has its own.
//! The Python and npm packages are libraries that embed the component, not
//! servers, so they are not listed.

use std::fs;
use std::path::Path;

use anyhow::Result;
use serde_json::json;

use crate::release::{DESCRIPTION, Release, SOURCE, VERSION};

/// The schema this entry is written against.
pub const SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The file's name in the dist.
pub const FILE: &str = "server.json";

/// Write `server.json` into `out`; its file name.
pub fn build(release: &Release, mcpb_sha256: &str, out: &Path) -> Result<String> {
    let value = json!({
        "$schema": SCHEMA,
        "name": release.mcp_name(),
        "title": "write-tool",
        "description": DESCRIPTION,
        "version": VERSION,
        "repository": {"url": SOURCE, "source": "git"},
        "websiteUrl": SOURCE,
        "packages": [
            {
                "registryType": "mcpb",
                "identifier": release.asset_url(&Release::mcpb_file()),
                "version": VERSION,
                "fileSha256": mcpb_sha256,
                "transport": {"type": "stdio"},
            },
            {
                "registryType": "oci",
                "identifier": release.sidecar_image(),
                "transport": {"type": "stdio"},
                "runtimeHint": "docker",
                "runtimeArguments": [
                    {
                        "type": "named",
                        "name": "--mount",
                        // Quoted as the CSV docker reads `--mount` with: a
                        // comma in the path cannot add a field of its own.
                        "value": "type=bind,\"src={project_dir}\",dst=/workspace",
                        "variables": {
                            "project_dir": {
                                "description": "The one directory the tools may read and change",
                                "isRequired": true,
                                "format": "filepath",
                            },
                        },
                    },
                ],
                "packageArguments": [
                    {"type": "named", "name": "--root", "value": "/workspace"},
                    {"type": "positional", "value": "mcp"},
                ],
            },
        ],
        "remotes": [
            {
                "type": "streamable-http",
                "url": "http://{sidecar}/mcp",
                "variables": {
                    "sidecar": {
                        "description": "The sandbox's write-tool sidecar, HOST:PORT (its --ws address)",
                        "isRequired": true,
                        "default": "127.0.0.1:8080",
                    },
                },
            },
        ],
    });
    let mut bytes = serde_json::to_vec_pretty(&value)?;
    bytes.push(b'\n');
    fs::write(out.join(FILE), bytes)?;
    Ok(FILE.into())
}
