//! A sandboxed wasmtime host for the Write tool component.
//!
//! ```no_run
//! use write_tool::{Options, Root, WriteTool, ambient_authority};
//!
//! # fn main() -> wasmtime::Result<()> {
//! let tool = WriteTool::new(Options::default())?; // compiles the component once
//! let root = Root::open("/tmp/demo", ambient_authority())?; // opened once, by path, and held
//! let envelope = tool.call(&root, r#"{"path": "hello.txt", "content": "hi\n"}"#);
//! println!("{envelope}");
//! # Ok(())
//! # }
//! ```
//!
//! # How a call runs
//!
//! One [`wasmtime::Engine`] and one pre-instantiated component
//! ([`InstancePre`](wasmtime::component::InstancePre)) serve every call; each
//! call gets a fresh `Store` and instance, so nothing a call does survives
//! into the next. The guest sees the roots as preopens (the project root as
//! `.` and under its absolute names, other roots under theirs), the host's
//! options as `WRITE_TOOL_*` environment variables, and nothing else: no
//! other environment, no arguments, no stdin or stdout, no network. Its
//! stderr goes into a bounded in-memory pipe.
//!
//! # Limits
//!
//! [`Options`] bounds each call: the content size (refused by the guest with
//! `INVALID_PARAM`), the guest's linear memory, and the wall time (epoch
//! interruption). A call stopped by either of the last two is answered with
//! an `EXECUTION_ERROR` envelope; the host keeps serving.
//!
//! # Permission bits
//!
//! WASI 0.2 cannot change file modes, so a file the guest replaces would lose
//! its mode (an executable script would stop being executable). The host
//! reads the mode of the target before the call and puts it back on the new
//! file afterwards, through the same cap-std root. Hosts that offer only WASI
//! run the component unchanged, without this one guarantee.
//!
//! The host does not link the tool's logic: it treats the envelope as the
//! guest's output and only reads its `status` (and, for the permission bits,
//! its `data` and `context`).

#![deny(unsafe_code)]

#[allow(
    missing_debug_implementations,
    missing_docs,
    unused_qualifications,
    clippy::all,
    reason = "generated bindings"
)]
pub mod auth;
mod bindings;
mod cache;
mod calls;
mod cancel;
mod commit_gate;
mod engine;
mod envelope;
mod failure;
mod files;
mod hold;
mod http;
mod journal;
pub mod log;
pub mod mcp;
pub mod metrics;
mod modes;
mod options;
mod outcome;
pub mod probes;
pub mod providers;
mod quiesce;
mod sandbox;
mod session;
mod state;
mod sweeps;
mod tool;
mod transfer;
mod trust;
pub mod ws;

pub use bindings::exports::tool::{
    Context, Data, EditMatch, Envelope, ErrorCode, ErrorInfo, Operation, Stats,
    Status as TypedStatus, TextEdit, ViewData, ViewEnvelope, ViewKind,
};
pub use cache::CompileCache;
pub use cancel::Cancel;
pub use cap_std::{AmbientAuthority, ambient_authority};
pub use envelope::{invalid_request, request_too_long};
pub use journal::JournalChoice;

/// How long a server that drains (`docs/contract.md#drain`) waits, once
/// its calls are done, for a client to read their answers: a client that
/// never reads must not keep it from exiting.
pub const DRAIN_WRITE_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Remove the journals below `choice`'s base whose root is gone (deleted,
/// or made again): at most once an hour per base, best effort
/// (`docs/contract.md#journal`). Returns how many it removed.
pub fn journal_sweep(choice: &JournalChoice) -> usize {
    journal::sweep_orphans(choice)
}
pub use options::{MIN_MEMORY_LIMIT_BYTES, Options};
pub use sandbox::{ProjectPreopen, Root};
pub use session::Session;
pub use tool::WriteTool;
pub use write_tool_wire as wire;
pub use write_tool_wire::settings::Durability;

write_tool_wire::envelope_into_wit!(crate::bindings::exports::tool);

/// The README's code blocks in Rust, compiled by `cargo test` as
/// doctests (`host/tests/peers/readme.rs` runs the others).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// The guest component, built for `wasm32-wasip2` by `build.rs`.
pub const COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/write_tool_guest.wasm"));

/// [`COMPONENT`]'s key in the compile cache, hashed by `build.rs` the way
/// `cache.rs` hashes any other component, so that a one-shot process does
/// not hash the component at every start ([BENCHMARKS.md](../BENCHMARKS.md#start-up)).
const COMPONENT_KEY: &str = include!(concat!(env!("OUT_DIR"), "/component_key"));

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::component::Component;

    /// The world imports standard WASI 0.2 and nothing else, and exports
    /// the tool inside its interface (never `write` at world level).
    #[test]
    fn the_component_imports_only_wasi_0_2() {
        let engine = engine::engine(&Options::default()).unwrap();
        let component = Component::new(&engine, COMPONENT).unwrap();
        let ty = component.component_type();
        let imports: Vec<&str> = ty.imports(&engine).map(|(name, _)| name).collect();
        assert!(!imports.is_empty());
        for name in &imports {
            assert!(
                name.starts_with("wasi:") && name.contains("@0.2."),
                "unexpected import {name}"
            );
        }
        assert!(imports.iter().any(|n| n.starts_with("wasi:filesystem/")));
        assert!(
            !imports
                .iter()
                .any(|n| n.starts_with("wasi:sockets/") || n.starts_with("wasi:http/"))
        );
        let exports: Vec<&str> = ty.exports(&engine).map(|(name, _)| name).collect();
        assert_eq!(exports, ["tool"]);
    }
}
