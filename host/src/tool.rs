//! [`WriteTool`]: the compiled component, and one call from arguments to
//! envelope.

mod run;

use std::time::Instant;

use wasmtime::Store;
use wasmtime::component::{Linker, ResourceTable};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use write_tool_wire::envelope::elapsed_ms;
use write_tool_wire::request::path_of;
use write_tool_wire::settings;
use write_tool_wire::{Envelope, ErrorCode, Form, echo, messages};

use crate::Session;
use crate::bindings::WriteToolPre;
use crate::bindings::exports::tool::{
    Envelope as Typed, ErrorCode as TypedCode, ErrorInfo, Guest, Status, TextEdit, ViewEnvelope,
};
use crate::cache::Load;
use crate::cancel::Cancel;
use crate::commit_gate;
use crate::engine::{Watchdog, engine};
use crate::failure::Failure;
use crate::outcome::Outcome;
use crate::state::{HostState, MemoryLimit};
use crate::sweeps::Sweeps;
use crate::{COMPONENT, COMPONENT_KEY, MIN_MEMORY_LIMIT_BYTES, Options, Root};
use run::{Caller, Run, settings_of};

/// The compiled component and the engine that runs it. Cheap to share
/// between threads; each call is independent.
pub struct WriteTool {
    pre: WriteToolPre<HostState>,
    options: Options,
    /// The options the guest reads, as the environment variables that
    /// carry them (`docs/contract.md#host-config`).
    env: Vec<(&'static str, String)>,
    watchdog: Watchdog,
    sweeps: Sweeps,
    /// The guest memory every call in flight holds (`crate::state`).
    memory: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl std::fmt::Debug for WriteTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteTool")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl WriteTool {
    /// Compile the embedded component (or load it from the compile cache
    /// that `options.cache` names).
    pub fn new(options: Options) -> wasmtime::Result<WriteTool> {
        Self::build(COMPONENT, Some(COMPONENT_KEY), options)
    }

    /// Compile (or load from the cache) a component given as bytes, for
    /// example a `.wasm` built separately.
    pub fn from_component_bytes(bytes: &[u8], options: Options) -> wasmtime::Result<WriteTool> {
        Self::build(bytes, None, options)
    }

    /// The tool for `bytes`, whose cache key is `key` if known.
    fn build(bytes: &[u8], key: Option<&str>, options: Options) -> wasmtime::Result<WriteTool> {
        // Settings that would fail open or fail every call: refused now.
        if options.timeout.is_zero() {
            return Err(wasmtime::Error::msg(
                "the time bound of a call must be longer than zero: every call would fail",
            ));
        }
        if let Some(blank) = options
            .protect
            .iter()
            .find(|p| p.trim().trim_matches('/').is_empty())
        {
            return Err(wasmtime::Error::msg(format!(
                "protect pattern {blank:?} is empty: it would protect nothing"
            )));
        }
        let engine = engine(&options)?;
        // A server copies the artifact in; a one-shot process maps it.
        let load = if options.pool_instances {
            Load::Copy
        } else {
            Load::Map
        };
        let component = options
            .cache
            .component(&engine, bytes, key, load)
            .map_err(|err| {
                if options.memory_limit_bytes < MIN_MEMORY_LIMIT_BYTES {
                    err.context(format!(
                        "the memory limit of {} bytes is below the component's initial memory \
                     (at least {MIN_MEMORY_LIMIT_BYTES} bytes)",
                        options.memory_limit_bytes
                    ))
                } else {
                    err
                }
            })?;
        let mut linker = Linker::<HostState>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        commit_gate::add_to_linker(&mut linker)?;
        let pre = WriteToolPre::new(linker.instantiate_pre(&component)?)?;
        let tool = WriteTool {
            watchdog: Watchdog::start(&engine, options.timeout),
            pre,
            env: settings_of(&options).to_env(),
            options,
            sweeps: Sweeps::default(),
            memory: std::sync::Arc::default(),
        };
        tool.check_config()?;
        Ok(tool)
    }

    /// The options every call runs with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Run a tool call given as raw JSON (the arguments object, or
    /// `{"name": "Write", "arguments": …}`) and return the envelope JSON.
    ///
    /// Always returns an envelope: failures of the guest itself (time bound,
    /// memory cap, trap) become `EXECUTION_ERROR` envelopes.
    pub fn call(&self, root: &Root, arguments: &str) -> String {
        self.call_gated(root, arguments, None, None, Caller::Model)
    }

    /// [`call`](Self::call) for the host's own commands (`write-tool undo`,
    /// `history`, `checkpoint`, `journal`): reverting and the journal's
    /// `history`, `verify` and `gc` requests are allowed whatever
    /// [`Options::model_revert`] says. Never hand this to a model.
    pub fn call_as_host(&self, root: &Root, arguments: &str) -> String {
        self.call_gated(root, arguments, None, None, Caller::Host)
    }

    /// [`call`](Self::call) for a person's own command at the command line
    /// (`write-tool write`, `edit`, `patch`, `write-many`): the journal
    /// records the change as a person's, which a model may not undo
    /// (`docs/contract.md#journal`). Never hand this to a model.
    pub fn call_as_person(&self, root: &Root, arguments: &str) -> String {
        self.call_gated(root, arguments, None, None, Caller::Person)
    }

    /// [`call`](Self::call), for a call its client may cancel: once
    /// `cancel` is set, the call stops at its commit point if it has not
    /// passed it, with nothing written, and answers with an
    /// `EXECUTION_ERROR` that says so (`docs/contract.md#cancellation`).
    /// Nothing else stops it: a dry run, which has no commit point, is
    /// answered as usual.
    pub fn call_cancellable(&self, root: &Root, arguments: &str, cancel: &Cancel) -> String {
        self.call_gated(root, arguments, Some(cancel), None, Caller::Model)
    }

    /// [`call`](Self::call) as part of `session` (`docs/contract.md#session`):
    /// a write takes as its base the version the session last viewed, and
    /// with [`Options::read_first`] a write or edit of an existing file the
    /// session has not viewed is refused. `cancel` as in
    /// [`call_cancellable`](Self::call_cancellable).
    pub fn call_in(
        &self,
        root: &Root,
        arguments: &str,
        session: &Session,
        cancel: Option<&Cancel>,
    ) -> String {
        self.call_gated(root, arguments, cancel, Some(session), Caller::Model)
    }

    fn call_gated(
        &self,
        root: &Root,
        arguments: &str,
        cancel: Option<&Cancel>,
        session: Option<&Session>,
        caller: Caller,
    ) -> String {
        let start = Instant::now();
        let path = path_of(arguments);
        let sweep = path
            .as_deref()
            .is_none_or(|p| self.sweeps.needed(root.path(), p));
        let run = Run {
            sweep,
            cancel,
            session,
            caller,
        };
        let result = self.invoke(root, run, |guest, store| guest.call_call(store, arguments));
        match result {
            Ok(json) => {
                // A call with no one path may be a revert that made files
                // again (`crate::modes`).
                if path.is_none()
                    && root.journal_dir().is_some()
                    && let Ok(envelope) = Envelope::from_json(&json)
                    && let Some(id) = envelope.data.as_ref().and_then(|d| d.change_id.as_deref())
                {
                    crate::modes::after_revert(root, id);
                }
                if sweep {
                    // A guest's envelope always decodes; if it did not,
                    // there would be nothing to act on.
                    if let Ok(envelope) = Envelope::from_json(&json) {
                        self.after_call(root, path.as_deref(), sweep, (&envelope).into());
                    }
                }
                json
            }
            Err(failure) => {
                self.after_failure(root, path.as_deref());
                let echo = echo::raw(arguments);
                // The form the guest would have answered in.
                let form = Form::asked(&echo)
                    .or(self.options.envelope)
                    .unwrap_or(match caller {
                        Caller::Model => Form::Compact,
                        Caller::Person | Caller::Host => Form::Full,
                    });
                Envelope::error(
                    ErrorCode::ExecutionError,
                    failure.message(&self.options),
                    elapsed_ms(start),
                    echo,
                    None,
                )
                .in_form(form)
                .to_json()
            }
        }
    }

    /// Write `content` to `path` through the typed interface.
    pub fn write(&self, root: &Root, path: &str, content: &str, dry_run: bool) -> Typed {
        self.typed(
            root,
            path,
            || echo::typed(path, content, dry_run),
            |guest, store| guest.call_write(store, path, content, dry_run),
        )
    }

    /// Edit the file at `path` through the typed interface (`edit`).
    pub fn edit(&self, root: &Root, path: &str, edits: &[TextEdit], dry_run: bool) -> Typed {
        self.typed(
            root,
            path,
            || serde_json::json!({"path": path, "dry_run": dry_run}),
            |guest, store| guest.call_edit(store, path, edits, dry_run),
        )
    }

    /// Insert `text` after line `line` (0: before the first) of the file
    /// at `path` through the typed interface (`insert`).
    pub fn insert(&self, root: &Root, path: &str, line: u64, text: &str, dry_run: bool) -> Typed {
        self.typed(
            root,
            path,
            || serde_json::json!({"path": path, "insert_line": line, "dry_run": dry_run}),
            |guest, store| guest.call_insert(store, path, line, text, dry_run),
        )
    }

    /// Show the file or directory at `path` through the typed interface
    /// (`view`): lines `first_line` (from 1) to `last_line` (none: the
    /// end). Changes nothing, so sweeps nothing.
    pub fn view(
        &self,
        root: &Root,
        path: &str,
        first_line: u64,
        last_line: Option<u64>,
    ) -> ViewEnvelope {
        let start = Instant::now();
        let view = |guest: &Guest, store: &mut Store<HostState>| {
            guest.call_view(store, path, first_line, last_line)
        };
        match self.invoke(root, Run::model(false), view) {
            Ok(answer) => answer,
            Err(failure) => {
                let message = failure.message(&self.options);
                ViewEnvelope {
                    status: Status::Error,
                    view: None,
                    text: message.clone(),
                    time_ms: elapsed_ms(start),
                    path_resolved: None,
                    error: Some(ErrorInfo {
                        code: TypedCode::ExecutionError,
                        message,
                    }),
                }
            }
        }
    }

    /// A typed call that changes the file at `path`: its mode kept, its
    /// directory's sweep remembered; a guest that died answers with an
    /// `EXECUTION_ERROR` envelope echoing `echo()`.
    fn typed(
        &self,
        root: &Root,
        path: &str,
        echo: impl FnOnce() -> serde_json::Value,
        f: impl FnOnce(&Guest, &mut Store<HostState>) -> wasmtime::Result<Typed>,
    ) -> Typed {
        let start = Instant::now();
        let sweep = self.sweeps.needed(root.path(), path);
        match self.invoke(root, Run::model(sweep), f) {
            Ok(envelope) => {
                self.after_call(root, Some(path), sweep, (&envelope).into());
                envelope
            }
            Err(failure) => {
                self.after_failure(root, Some(path));
                Envelope::error(
                    ErrorCode::ExecutionError,
                    failure.message(&self.options),
                    elapsed_ms(start),
                    echo(),
                    None,
                )
                .into()
            }
        }
    }

    /// After a call that answered: remember that its directory was swept
    /// if it wrote.
    fn after_call(&self, root: &Root, path: Option<&str>, sweep: bool, outcome: Outcome<'_>) {
        if let (true, Some(path)) = (sweep, path)
            && outcome.wrote()
        {
            self.sweeps.done(root.path(), path);
        }
    }

    /// After a call whose guest died: it may have left a temp file, so the
    /// next write to that directory sweeps again.
    fn after_failure(&self, root: &Root, path: Option<&str>) {
        if let Some(path) = path {
            self.sweeps.forget(root.path(), path);
        }
    }

    /// Let the guest validate the options once, so that a bad `protect`
    /// pattern is a construction error rather than a failure of every call.
    /// Only patterns can be invalid: without any, there is nothing to check
    /// (and a one-shot process saves an instantiation).
    fn check_config(&self) -> wasmtime::Result<()> {
        if self.options.protect.is_empty() {
            return Ok(());
        }
        let mut builder = wasmtime_wasi::WasiCtxBuilder::new();
        builder.envs(&self.env);
        let mut store = self.store(builder.build(), None);
        let instance = self.pre.instantiate(&mut store)?;
        let json = instance.tool().call_call(&mut store, "{}")?;
        match Envelope::from_json(&json)?.error {
            Some(error) if error.message.starts_with(messages::INVALID_SETTINGS) => {
                Err(wasmtime::Error::msg(error.message))
            }
            _ => Ok(()),
        }
    }

    /// The tool definition JSON (name, description, parameter schema).
    pub fn definition(&self) -> wasmtime::Result<String> {
        // The definition touches no files: the guest gets no preopen at all.
        let mut store = self.store(wasmtime_wasi::WasiCtxBuilder::new().build(), None);
        let instance = self.pre.instantiate(&mut store)?;
        instance.tool().call_definition(&mut store)
    }

    fn store(&self, wasi: wasmtime_wasi::WasiCtx, cancel: Option<&Cancel>) -> Store<HostState> {
        let mut store = Store::new(
            self.pre.engine(),
            HostState {
                wasi,
                table: ResourceTable::new(),
                limits: MemoryLimit::new(
                    self.options.memory_limit_bytes,
                    std::sync::Arc::clone(&self.memory),
                ),
                deadline: None,
                cancel: cancel.cloned(),
                committed: false,
                journal_id: None,
                holds_lock: false,
                journal_links: Vec::new(),
            },
        );
        store.limiter(|state| &mut state.limits);
        store.data_mut().deadline = self.watchdog.arm(&mut store, self.options.timeout);
        store
    }

    /// Run `f` in a fresh instance configured for `root`; `sweep` is the
    /// guest's `WRITE_TOOL_SWEEP_TEMPS` (see [`Sweeps`]), `cancel` the
    /// flag its commit point reads (`commit_gate`).
    fn invoke<R>(
        &self,
        root: &Root,
        run: Run<'_>,
        f: impl FnOnce(&Guest, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, Failure> {
        let Run {
            sweep,
            cancel,
            session,
            caller,
        } = run;
        let stderr = MemoryOutputPipe::new(self.options.stderr_capacity);
        let journal = root.journal_env();
        let wasi = if sweep && journal.is_none() && caller == Caller::Model {
            root.wasi_ctx(stderr, self.options.read_only, &self.env)
        } else {
            let mut env = self.env.clone();
            if !sweep {
                env.push((settings::SWEEP_TEMPS, "false".to_owned()));
            }
            if let Some((name, protect)) = journal {
                if let Some(dir) = root.journal_dir() {
                    dir.clear_dead_lock();
                }
                if let Some(holder) = crate::journal::holder() {
                    env.push((settings::HOLDER, holder));
                }
                env.push((settings::JOURNAL, name));
                if !protect.is_empty() {
                    match env.iter_mut().find(|(k, _)| *k == settings::PROTECT) {
                        Some((_, globs)) => {
                            globs.push('\n');
                            globs.push_str(&protect.join("\n"));
                        }
                        None => env.push((settings::PROTECT, protect.join("\n"))),
                    }
                }
            }
            if caller != Caller::Model {
                env.push((settings::PERSON, "true".to_owned()));
            }
            if let Some(session) = session {
                env.push((settings::SESSION, session.id().to_owned()));
            }
            if caller == Caller::Host {
                env.retain(|(k, _)| *k != settings::REVERT);
                env.push((settings::REVERT, "true".to_owned()));
                env.push((settings::ADMIN, "true".to_owned()));
            }
            root.wasi_ctx(stderr, self.options.read_only, &env)
        };
        let mut store = self.store(wasi, cancel);
        store.data_mut().journal_id = root.journal_dir().map(crate::journal::JournalDir::id);
        let result = (|| {
            let instance = self.pre.instantiate(&mut store)?;
            f(instance.tool(), &mut store)
        })();
        result.map_err(|err| {
            // A guest stopped while it held the journal's lock never
            // released it: the next call must not wait for it to go stale.
            if store.data().holds_lock
                && let Some(journal) = root.journal_dir()
            {
                journal.release_lock();
            }
            let failure = Failure::of(err, store.data());
            failure.log();
            failure
        })
    }
}
