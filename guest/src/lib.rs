//! The Write tool as a WebAssembly component: glue only.
//!
//! Each export turns its WIT arguments into a `write_tool_core` request, runs
//! it against `.` (the host's single preopen, the project root) and turns the
//! envelope back into WIT or JSON. Every failure is an envelope; nothing here
//! may panic, since a panic is a trap.

#[allow(
    unsafe_code,
    missing_debug_implementations,
    unused_qualifications,
    clippy::all,
    reason = "generated bindings"
)]
mod bindings;

use std::path::Path;
use std::sync::Mutex;

use bindings::exports::write_tool::tool::tool as wit;
use write_tool_core::fs::Durability;
use write_tool_core::protect::Protection;
use write_tool_core::roots::{AllowedRoot, AllowedRoots};
use write_tool_core::{Config, Request};

/// The project root as the component sees it: the preopen named `.`.
const ROOT: &str = ".";

/// Limits set by `configure`; defaults until then.
static CONFIG: Mutex<Option<Config>> = Mutex::new(None);

/// Run `f` with the current configuration.
fn with_config<R>(f: impl FnOnce(&Config) -> R) -> R {
    let guard = CONFIG
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match guard.as_ref() {
        Some(config) => f(config),
        None => f(&Config::default()),
    }
}

/// The exported component.
#[derive(Debug)]
pub struct Component;

impl wit::Guest for Component {
    fn configure(config: wit::Config) -> Result<(), String> {
        let core = Config {
            max_content_bytes: config.max_content_bytes,
            allow_empty: config.allow_empty,
            protection: Protection::new(config.default_protect, &config.protect)?,
            read_only: config.read_only,
            durability: match config.durability {
                wit::Durability::Full => Durability::Full,
                wit::Durability::File => Durability::File,
                wit::Durability::None => Durability::None,
            },
            sweep_temps: config.sweep_temps,
            roots: AllowedRoots {
                project: config.root_names,
                others: config
                    .other_roots
                    .into_iter()
                    .map(|root| AllowedRoot {
                        dir: root.preopen.into(),
                        names: root.names,
                    })
                    .collect(),
            },
            ..Config::default()
        }
        .with_diff_timeout_ms(config.diff_timeout_ms);
        core.roots.check()?;
        let mut guard = CONFIG
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *guard = Some(core);
        Ok(())
    }

    fn write(path: String, content: String, dry_run: bool) -> wit::Envelope {
        let request = Request::new(path, content, dry_run);
        with_config(|config| write_tool_core::write(Path::new(ROOT), &request, config)).into()
    }

    fn call(arguments: String) -> String {
        with_config(|config| write_tool_core::call(Path::new(ROOT), arguments, config)).to_json()
    }

    fn definition() -> String {
        write_tool_core::definition::definition().to_string()
    }
}

// Natively (a `cargo build --workspace` on the build machine) the export
// names, which contain `:`, are not valid linker symbols.
#[cfg(target_family = "wasm")]
bindings::export!(Component with_types_in bindings);

write_tool_wire::envelope_into_wit!(crate::bindings::exports::write_tool::tool::tool);
