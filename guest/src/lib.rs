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
use write_tool_core::envelope::{self, Envelope};
use write_tool_core::fs::Durability;
use write_tool_core::protect::Protection;
use write_tool_core::roots::{AllowedRoot, AllowedRoots};
use write_tool_core::{Config, ErrorCode, Request};

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
        to_wit(with_config(|config| {
            write_tool_core::write(Path::new(ROOT), &request, config)
        }))
    }

    fn call(arguments: String) -> String {
        with_config(|config| write_tool_core::call(Path::new(ROOT), arguments, config)).to_json()
    }

    fn definition() -> String {
        write_tool_core::definition::definition().to_string()
    }
}

bindings::export!(Component with_types_in bindings);

fn to_wit(env: Envelope) -> wit::Envelope {
    let write = env.stats.write;
    wit::Envelope {
        status: match env.status {
            envelope::Status::Success => wit::Status::Success,
            envelope::Status::Partial => wit::Status::Partial,
            envelope::Status::Error => wit::Status::Error,
        },
        data: env.data.map(|d| wit::Data {
            applied: d.applied,
            operation: match d.operation {
                envelope::Operation::Create => wit::Operation::Create,
                envelope::Operation::Update => wit::Operation::Update,
            },
            diff_preview: d.diff_preview,
            diff_truncated: d.diff_truncated,
        }),
        text: env.text,
        stats: wit::Stats {
            time_ms: env.stats.time_ms,
            bytes_written: write.map(|w| w.bytes_written),
            original_size: write.map(|w| w.original_size),
            new_size: write.map(|w| w.new_size),
            lines_added: write.map(|w| w.lines_added),
            lines_removed: write.map(|w| w.lines_removed),
        },
        context: wit::Context {
            cwd: env.context.cwd.to_owned(),
            params_input: env.context.params_input.to_string(),
            path_resolved: env.context.path_resolved,
        },
        error: env.error.map(|e| wit::ErrorInfo {
            code: match e.code {
                ErrorCode::InvalidParam => wit::ErrorCode::InvalidParam,
                ErrorCode::AccessDenied => wit::ErrorCode::AccessDenied,
                ErrorCode::PermissionDenied => wit::ErrorCode::PermissionDenied,
                ErrorCode::IsDirectory => wit::ErrorCode::IsDirectory,
                ErrorCode::Conflict => wit::ErrorCode::Conflict,
                _ => wit::ErrorCode::ExecutionError,
            },
            message: e.message,
        }),
    }
}
