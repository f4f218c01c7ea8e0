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
use std::sync::Arc;
use write_tool_core::wire::settings::Settings;
use write_tool_core::wire::{Form, echo, messages};

use write_tool_core::edit::Edit;
use write_tool_core::journal::{Bounds, Journal};
use write_tool_core::{
    Config, EditRequest, ManyRequest, Request, RevertRequest, RevertTarget, Roots, ToolError,
    ViewRequest, environment, parse_call, preopens,
};

/// What a call runs with: the host's configuration and roots.
struct Setup {
    config: Config,
    roots: Roots,
}

/// The host's settings and roots, or why the tool cannot run with them.
/// The preopen `WRITE_TOOL_JOURNAL` names is the journal, never a root.
fn setup() -> Result<Setup, ToolError> {
    let invalid = |e: String| {
        ToolError::execution(format!(
            "{}{e}. Nothing was written.",
            messages::INVALID_SETTINGS
        ))
    };
    let settings = Settings::from_env(environment()).map_err(|e| invalid(e.to_string()))?;
    let mut config = Config::from_settings(&settings).map_err(|e| invalid(e.to_string()))?;
    let mut preopens = preopens();
    if let Some(name) = &settings.journal {
        let Some(at) = preopens.iter().position(|(_, n)| n == name) else {
            return Err(invalid(format!(
                "WRITE_TOOL_JOURNAL names '{name}', which is not a directory the host preopened"
            )));
        };
        let (dir, _) = preopens.remove(at);
        // Other preopens of the same directory would make it a root too.
        if preopens.iter().any(|(other, _)| other.is_same(&dir)) {
            return Err(invalid(
                "the journal's directory is also preopened as a root".to_owned(),
            ));
        }
        let bounds = Bounds {
            max_bytes: settings.journal_max_bytes,
            max_changes: settings.journal_max_changes,
            max_age_ms: i64::try_from(settings.journal_max_age_days.saturating_mul(86_400_000))
                .unwrap_or(i64::MAX),
        };
        let journal = Journal::open(dir, bounds, settings.holder.clone())
            .map_err(|e| ToolError::journal(&format!("its directory could not be set up ({e})")))?;
        config.journal = Some(Arc::new(journal));
    }
    let roots = Roots::from_preopens(preopens).ok_or_else(|| {
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
            Err(err) => {
                let echo = parse_call(&arguments).0;
                // Without settings, only the call can ask for the full form.
                let form = Form::asked(&echo).unwrap_or_default();
                err.into_envelope(0, echo, None).in_form(form)
            }
        }
        .to_json()
    }

    fn edit(path: String, edits: Vec<wit::TextEdit>, dry_run: bool) -> wit::Envelope {
        let edits = edits
            .into_iter()
            .map(|e| Edit::replace(e.old_text, e.new_text, e.replace_all))
            .collect();
        edited(path, edits, dry_run)
    }

    fn insert(path: String, line: u64, text: String, dry_run: bool) -> wit::Envelope {
        edited(path, vec![Edit::insert(line, text)], dry_run)
    }

    fn apply_patch(patch: String, dry_run: bool) -> wit::Envelope {
        let echo = serde_json::json!({"dry_run": dry_run});
        let request = match write_tool_core::parse_patch(&patch, dry_run) {
            Ok(request) => request,
            Err(err) => return err.into_envelope(0, echo, None).into(),
        };
        let envelope = match setup() {
            Ok(Setup { config, roots }) => write_tool_core::apply_patch(&roots, &request, &config),
            Err(err) => err.into_envelope(0, echo, None),
        };
        envelope.into()
    }

    fn write_many(writes: Vec<wit::FileWrite>, dry_run: bool) -> wit::Envelope {
        let request = ManyRequest {
            writes: writes
                .into_iter()
                .map(|w| Request::new(w.path, w.content, dry_run))
                .collect(),
            dry_run,
        };
        let envelope = match setup() {
            Ok(Setup { config, roots }) => write_tool_core::write_many(&roots, &request, &config),
            Err(err) => err.into_envelope(0, serde_json::json!({"dry_run": dry_run}), None),
        };
        envelope.into()
    }

    fn revert(change_id: String, dry_run: bool) -> wit::Envelope {
        let target = if change_id.trim().is_empty() {
            RevertTarget::Latest
        } else {
            RevertTarget::Change(change_id.trim().to_owned())
        };
        let request = RevertRequest {
            target,
            dry_run,
            force: false,
        };
        let envelope = match setup() {
            Ok(Setup { config, roots }) => write_tool_core::revert(&roots, &request, &config),
            Err(err) => err.into_envelope(
                0,
                serde_json::json!({"change_id": change_id, "dry_run": dry_run}),
                None,
            ),
        };
        envelope.into()
    }

    fn checkpoint(name: String) -> wit::Envelope {
        let envelope = match setup() {
            Ok(Setup { config, roots }) => write_tool_core::checkpoint(&roots, &name, &config),
            Err(err) => err.into_envelope(0, serde_json::json!({"checkpoint": name}), None),
        };
        envelope.into()
    }

    fn view(path: String, first_line: u64, last_line: Option<u64>) -> wit::ViewEnvelope {
        let request = ViewRequest::new(path, first_line, last_line);
        let envelope = match setup() {
            Ok(Setup { config, roots }) => write_tool_core::view(&roots, &request, &config),
            Err(err) => err.into_envelope(0, serde_json::json!({"path": request.path}), None),
        };
        envelope.into()
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

/// Edit the file at `path` through the typed interface.
fn edited(path: String, edits: Vec<Edit>, dry_run: bool) -> wit::Envelope {
    let request = EditRequest {
        request: Request::new(path, String::new(), dry_run),
        edits,
    };
    let envelope = match setup() {
        Ok(Setup { config, roots }) => write_tool_core::edit(&roots, &request, &config),
        Err(err) => err.into_envelope(
            0,
            serde_json::json!({"path": request.request.path, "dry_run": dry_run}),
            None,
        ),
    };
    envelope.into()
}
