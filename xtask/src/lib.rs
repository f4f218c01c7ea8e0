//! The release of write-tool: every artifact it ships, built from the tree
//! by one command, and the artifact's way through a registry.
//!
//! - [`mod@dist`] builds the OCI artifact (an image layout, [`oci`]), the
//!   Python wheel, the npm package, the MCP bundle and the MCP registry's
//!   `server.json`, all from the component the `write-tool` binary runs,
//!   and lists them with their digests in `dist.json`.
//! - [`registry::push`] sends the OCI artifact to a registry and, given a
//!   key, signs its manifest as cosign does ([`sign`]);
//!   [`registry::verify`] checks a signature and every blob before it says
//!   yes.
//!
//! `cargo xtask` (`.cargo/config.toml`) runs `src/main.rs`, which builds
//! the release binary first; the tests call these functions with the
//! binary under test.

pub mod dist;
mod mcpb;
mod npm;
pub mod oci;
pub mod registry;
pub mod release;
mod server_json;
pub mod sign;
mod wheel;

pub use dist::{Dist, Entry, Options, dist};
