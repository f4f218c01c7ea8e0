//! The Write tool as a WebAssembly component: glue only.
//!
//! Each export turns its WIT arguments into a `write_tool_core` request, runs
//! it against the roots the host preopened, and turns the envelope back
//! into WIT or JSON. Every failure is an envelope; nothing here may panic,
//! since a panic is a trap.

#[allow(
    unsafe_code,
    missing_debug_implementations,
    unused_qualifications,
    clippy::all,
    reason = "generated bindings"
)]
mod bindings;

use std::sync::Mutex;

use bindings::exports::write_tool::tool::tool as wit;
use write_tool_core::fs::{Durability, sys};
use write_tool_core::protect::Protection;
use write_tool_core::roots::{self, AllowedRoot, Roots};
use write_tool_core::wire::{Envelope, ErrorCode};
use write_tool_core::{Config, Request};

/// The name of the project root's preopen.
const PROJECT_PREOPEN: &str = ".";

/// What `configure` set; defaults until then.
#[derive(Debug, Default)]
struct Setup {
    config: Config,
    /// Absolute spellings of the project root.
    project_names: Vec<String>,
    /// Other roots: their preopen name and absolute spellings.
    others: Vec<(String, Vec<String>)>,
}

static SETUP: Mutex<Option<Setup>> = Mutex::new(None);

/// Run `f` with the current setup and the roots the host preopened, or
/// answer that there is no project root.
fn with_roots(f: impl FnOnce(&Roots, &Config) -> Envelope) -> Envelope {
    let guard = SETUP
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let default = Setup::default();
    let setup = guard.as_ref().unwrap_or(&default);
    match open_roots(setup) {
        Some(roots) => f(&roots, &setup.config),
        None => Envelope::refused(
            ErrorCode::ExecutionError,
            format!("The host gave the tool no project root: preopen it as '{PROJECT_PREOPEN}'."),
        ),
    }
}

/// The roots of one call: the project root's preopen and each other root's.
fn open_roots(setup: &Setup) -> Option<Roots> {
    let mut preopens = sys::preopens();
    let mut take = |name: &str| {
        let at = preopens.iter().position(|(_, n)| n == name)?;
        Some(preopens.swap_remove(at).0)
    };
    let project = AllowedRoot {
        dir: take(PROJECT_PREOPEN)?,
        names: setup.project_names.clone(),
    };
    let others = setup
        .others
        .iter()
        .filter_map(|(preopen, names)| {
            Some(AllowedRoot {
                dir: take(preopen)?,
                names: names.clone(),
            })
        })
        .collect();
    Some(Roots { project, others })
}

/// The exported component.
#[derive(Debug)]
pub struct Component;

impl wit::Guest for Component {
    fn configure(config: wit::Config) -> Result<(), String> {
        let others: Vec<(String, Vec<String>)> = config
            .other_roots
            .into_iter()
            .map(|root| (root.preopen, root.names))
            .collect();
        roots::check_names(
            &config.root_names,
            others.iter().map(|(p, n)| (p.as_str(), &n[..])),
        )?;
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
            ..Config::default()
        }
        .with_diff_timeout_ms(config.diff_timeout_ms);
        let mut guard = SETUP
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *guard = Some(Setup {
            config: core,
            project_names: config.root_names,
            others,
        });
        Ok(())
    }

    fn write(path: String, content: String, dry_run: bool) -> wit::Envelope {
        let request = Request::new(path, content, dry_run);
        with_roots(|roots, config| write_tool_core::write(roots, &request, config)).into()
    }

    fn call(arguments: String) -> String {
        with_roots(|roots, config| write_tool_core::call(roots, arguments, config)).to_json()
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
