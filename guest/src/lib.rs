//! The Write tool as a WebAssembly component: glue only.
//!
//! Each export reads the host's settings (environment variables) and roots
//! (preopens), turns its WIT arguments into a `write_tool_core` request,
//! and turns the envelope back into WIT or JSON. Every failure is an
//! envelope; nothing here may panic, since a panic is a trap.

#[allow(
    unsafe_code,
    missing_debug_implementations,
    unused_qualifications,
    clippy::all,
    reason = "generated bindings"
)]
mod bindings;

use bindings::exports::tool as wit;
use write_tool_core::wire::settings::Settings;
use write_tool_core::wire::{echo, messages};
use write_tool_core::{Config, Request, Roots, ToolError, environment, parse_call, preopens};

/// What a call runs with: the host's configuration and roots.
struct Setup {
    config: Config,
    roots: Roots,
}

/// The host's settings and roots, or why the tool cannot run with them.
fn setup() -> Result<Setup, ToolError> {
    let config = Settings::from_env(environment())
        .map_err(|e| e.to_string())
        .and_then(|settings| Config::from_settings(&settings).map_err(|e| e.to_string()))
        .map_err(|e| {
            ToolError::execution(format!(
                "{}{e}. Nothing was written.",
                messages::INVALID_SETTINGS
            ))
        })?;
    let roots = Roots::from_preopens(preopens()).ok_or_else(|| {
        ToolError::execution(
            "The host gave the tool no directory: preopen the project root. Nothing was written.",
        )
    })?;
    Ok(Setup { config, roots })
}

/// The exported component.
#[derive(Debug)]
pub struct Component;

impl wit::Guest for Component {
    fn write(path: String, content: String, dry_run: bool) -> wit::Envelope {
        let envelope = match setup() {
            Ok(Setup { config, roots }) => {
                let request = Request::new(path, content, dry_run);
                write_tool_core::write(&roots, &request, &config)
            }
            Err(err) => err.into_envelope(0, echo::typed(&path, &content, dry_run), None),
        };
        envelope.into()
    }

    fn call(arguments: String) -> String {
        match setup() {
            Ok(Setup { config, roots }) => write_tool_core::call(&roots, arguments, &config),
            Err(err) => err.into_envelope(0, parse_call(&arguments).0, None),
        }
        .to_json()
    }

    fn definition() -> String {
        write_tool_core::definition().to_string()
    }
}

// The exports are the component's, for wasm32-wasip2; a native build of
// this crate (`cargo build --workspace`) leaves them out, since their names
// are not valid symbols for the native linker.
#[cfg(target_family = "wasm")]
bindings::export!(Component with_types_in bindings);

write_tool_wire::envelope_into_wit!(crate::bindings::exports::tool);
