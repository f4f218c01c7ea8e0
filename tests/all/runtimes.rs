//! The component as agent runtimes run it, not as the `write-tool` host
//! does: plain wasmtime, the project root preopened under its absolute host
//! path and nothing else, no settings, a fresh instance per call, the
//! arguments as JSON keyed by the WIT parameter names, and the result
//! wrapped as `{"result": …}` — what Wassette does with every export of a
//! component it loads (its `component2json` conversions).

use std::path::Path;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker, ResourceTable, Type, Val};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::support::{Envelope, Project, decode};

/// One compiled component for every test here.
struct Runtime {
    engine: Engine,
    component: Component,
    linker: Linker<State>,
}

struct State {
    ctx: WasiCtx,
    table: ResourceTable,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.ctx,
            table: &mut self.table,
        }
    }
}

fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        let engine = Engine::default();
        let component = Component::new(&engine, write_tool::COMPONENT).expect("component");
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).expect("WASI");
        Runtime {
            engine,
            component,
            linker,
        }
    })
}

/// What a runtime grants the component.
struct Grant {
    /// (host directory, the name the guest sees)
    preopens: Vec<(std::path::PathBuf, String)>,
    env: Vec<(String, String)>,
}

impl Grant {
    /// A policy's `storage.allow` of one directory: preopened under its own
    /// absolute path, read and write.
    fn directory(dir: &Path) -> Grant {
        let name = dir.to_str().expect("a UTF-8 path").to_owned();
        Grant {
            preopens: vec![(dir.to_path_buf(), name)],
            env: Vec::new(),
        }
    }
}

impl Runtime {
    /// Call the tool's export `function` with `arguments`, a JSON object
    /// keyed by the WIT parameter names, in a fresh instance.
    fn invoke(&self, grant: &Grant, function: &str, arguments: Value) -> Value {
        let mut builder = WasiCtxBuilder::new();
        for (host, guest) in &grant.preopens {
            builder
                .preopened_dir(host, guest, FsPerms::ReadWrite)
                .expect("preopen");
        }
        for (name, value) in &grant.env {
            builder.env(name, value);
        }
        let mut store = Store::new(
            &self.engine,
            State {
                ctx: builder.build(),
                table: ResourceTable::new(),
            },
        );
        let instance = self
            .linker
            .instantiate(&mut store, &self.component)
            .expect("instantiate");
        let interface = instance
            .get_export_index(&mut store, None, "tool")
            .expect("the tool interface");
        let index = instance
            .get_export_index(&mut store, Some(&interface), function)
            .unwrap_or_else(|| panic!("no export {function}"));
        let func = instance.get_func(&mut store, index).expect("a function");
        let ty = func.ty(&store);
        let params: Vec<Val> = ty
            .params()
            .map(|(name, ty)| to_val(&arguments[name], &ty))
            .collect();
        let mut results = vec![Val::Bool(false); ty.results().len()];
        func.call(&mut store, &params, &mut results)
            .expect("the call returns");
        json!({ "result": to_json(&results[0]) })
    }
}

/// A JSON argument as the WIT type wants it (the few types the tool takes).
fn to_val(value: &Value, ty: &Type) -> Val {
    match (ty, value) {
        (Type::String, Value::String(s)) => Val::String(s.clone()),
        (Type::Bool, Value::Bool(b)) => Val::Bool(*b),
        _ => panic!("argument {value} for {ty:?}"),
    }
}

/// A result as JSON: records as objects keyed by field name, enums as
/// their case names, options as the value or null.
fn to_json(val: &Val) -> Value {
    match val {
        Val::Bool(b) => json!(b),
        Val::U64(n) => json!(n),
        Val::S64(n) => json!(n),
        Val::List(items) => Value::Array(items.iter().map(to_json).collect()),
        Val::String(s) => json!(s),
        Val::Enum(case) => json!(case),
        Val::Option(None) => Value::Null,
        Val::Option(Some(inner)) => to_json(inner),
        Val::Record(fields) => Value::Object(
            fields
                .iter()
                .map(|(name, val)| (name.clone(), to_json(val)))
                .collect::<Map<String, Value>>(),
        ),
        other => panic!("unexpected result {other:?}"),
    }
}

/// `write` through the runtime: the typed envelope as JSON.
fn write(grant: &Grant, path: &str, content: &str, dry_run: bool) -> Value {
    let answer = runtime().invoke(
        grant,
        "write",
        json!({"path": path, "content": content, "dry-run": dry_run}),
    );
    answer["result"].clone()
}

/// `call` through the runtime, asking for the full form: the JSON
/// envelope, decoded.
fn call(grant: &Grant, mut arguments: Value) -> Envelope {
    match arguments.get_mut("arguments") {
        Some(inner) => inner["envelope"] = json!("full"),
        None => arguments["envelope"] = json!("full"),
    }
    decode(&call_raw(grant, &arguments))
}

/// `call` through the runtime: the JSON envelope as it came.
fn call_raw(grant: &Grant, arguments: &Value) -> String {
    let answer = runtime().invoke(grant, "call", json!({"arguments": arguments.to_string()}));
    answer["result"]
        .as_str()
        .expect("a string result")
        .to_owned()
}

#[test]
fn the_exports_are_the_tool_and_nothing_a_model_could_loosen() {
    let rt = runtime();
    let ty = rt.component.component_type();
    let exports: Vec<&str> = ty.exports(&rt.engine).map(|(name, _)| name).collect();
    assert_eq!(exports, ["tool"]);
    let Some(ComponentItem::ComponentInstance(tool)) =
        ty.get_export(&rt.engine, "tool").map(|export| export.ty)
    else {
        panic!("the tool interface is an instance");
    };
    let functions: Vec<&str> = tool
        .exports(&rt.engine)
        .filter(|(_, item)| matches!(item.ty, ComponentItem::ComponentFunc(_)))
        .map(|(name, _)| name)
        .collect();
    // Reverting and checkpoints change files only as the journal recorded
    // them; a host that keeps them from the model says so in a setting
    // (`WRITE_TOOL_REVERT=false`).
    assert_eq!(
        functions,
        [
            "write",
            "call",
            "edit",
            "insert",
            "apply-patch",
            "write-many",
            "revert",
            "checkpoint",
            "view",
            "definition"
        ]
    );
}

/// Undo under plain wasmtime: the journal granted as one more preopen
/// and named by `WRITE_TOOL_JOURNAL`, as Wassette, the wasmtime CLI or
/// wasmtime-py would grant it. No path a call gives reaches it: not its
/// absolute name, not `..`, not a link from the root.
#[test]
fn undo_works_with_the_journal_granted_as_a_preopen_that_no_path_reaches() {
    let p = Project::new();
    let journal = p.base().join("journal");
    std::fs::create_dir(&journal).expect("journal");
    let mut grant = Grant::directory(&p.root_dir());
    grant.preopens.push((journal.clone(), "journal".to_owned()));
    grant
        .env
        .push(("WRITE_TOOL_JOURNAL".to_owned(), "journal".to_owned()));
    p.write("a.txt", "one\n");
    let written = write(&grant, "a.txt", "two\n", false);
    let id = written["data"]["change-id"]
        .as_str()
        .expect("a change id")
        .to_owned();
    let reverted = runtime().invoke(&grant, "revert", json!({"change-id": id, "dry-run": false}));
    assert_eq!(reverted["result"]["status"], "success", "{reverted}");
    assert_eq!(p.read_string("a.txt"), "one\n");
    let mark = runtime().invoke(&grant, "checkpoint", json!({"name": "here"}));
    assert_eq!(mark["result"]["data"]["operation"], "checkpoint", "{mark}");
    p.symlink(journal.to_str().expect("utf-8"), "into-journal");
    let before = crate::support::Tree::of(&journal);
    let absolute = format!("{}/log", journal.display());
    for (tool, path) in [
        ("write_file", absolute.as_str()),
        ("Write", "../journal/log"),
        ("Write", "into-journal/log"),
    ] {
        let env = call(
            &grant,
            json!({"name": tool, "arguments": {"path": path, "content": "forged"}}),
        );
        env.assert_error("ACCESS_DENIED");
    }
    assert_eq!(crate::support::Tree::of(&journal), before);
    // The preopen's own name is no path: `journal/log` is the project's.
    let env = call(
        &grant,
        json!({"name": "write_file", "arguments": {"path": "journal/log", "content": "mine"}}),
    );
    assert_eq!(env.code(), None, "{}", env.text);
    assert_eq!(p.read_string("journal/log"), "mine");
}

#[test]
fn writes_under_a_root_preopened_by_its_host_path() {
    let p = Project::new();
    let grant = Grant::directory(&p.root_dir());
    let created = write(&grant, "src/a.py", "print(1)\n", false);
    assert_eq!(created["status"], "success", "{created}");
    assert_eq!(created["data"]["operation"], "create");
    assert_eq!(created["context"]["path-resolved"], "src/a.py");
    assert_eq!(p.read_string("src/a.py"), "print(1)\n");

    let preview = write(&grant, "src/a.py", "print(2)\n", true);
    assert_eq!(preview["status"], "partial");
    assert_eq!(
        preview["data"]["diff-preview"],
        "--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-print(1)\n+print(2)\n"
    );
    assert_eq!(p.read_string("src/a.py"), "print(1)\n", "a dry run");

    let updated = write(&grant, "src/a.py", "print(2)\n", false);
    assert_eq!(
        updated["text"],
        "Updated 'src/a.py' (+1/-1 lines, 9 bytes)."
    );
    assert_eq!(p.read_string("src/a.py"), "print(2)\n");
}

#[test]
fn absolute_paths_name_their_relative_form_and_change_nothing() {
    let p = Project::new();
    let root = p.root_dir();
    let grant = Grant::directory(&root);
    let before = p.tree();
    let absolute = format!("{}/src/b.py", root.display());
    let refused = write(&grant, &absolute, "x", false);
    assert_eq!(refused["error"]["code"], "invalid-param");
    assert_eq!(
        refused["text"],
        "Absolute path not allowed. Use relative path: 'src/b.py'."
    );
    assert_eq!(p.tree(), before);
    // `write_file` may name it so: the host granted that directory.
    let env = call(
        &grant,
        json!({"name": "write_file", "arguments": {"path": absolute, "content": "b\n"}}),
    );
    assert_eq!(env.text, format!("Successfully wrote to {absolute}"));
    assert_eq!(env.context.path_resolved.as_deref(), Some("src/b.py"));
    assert_eq!(p.read_string("src/b.py"), "b\n");
}

#[test]
fn escapes_and_git_are_refused_and_change_nothing() {
    let p = Project::new();
    p.write(".git/config", "[core]\n");
    p.symlink("../outside", "out");
    let grant = Grant::directory(&p.root_dir());
    let before = p.tree();
    for (path, code) in [
        ("../outside/x.txt", "access-denied"),
        ("out/x.txt", "access-denied"),
        (".git/config", "access-denied"),
        (".GIT/hooks/pre-commit", "access-denied"),
        ("/etc/passwd", "invalid-param"),
    ] {
        for dry_run in [false, true] {
            let answer = write(&grant, path, "pwned\n", dry_run);
            assert_eq!(answer["error"]["code"], code, "{path}: {answer}");
        }
    }
    // Whatever the arguments say, they cannot lift the protection: a
    // setting is the host's, not a parameter.
    let env = call(
        &grant,
        json!({"path": ".git/config", "content": "x", "default_protect": false, "protect_git": false}),
    );
    env.assert_error("ACCESS_DENIED");
    assert_eq!(env.text, "Path is protected.");
    assert_eq!(p.tree(), before);
}

#[test]
fn settings_come_from_the_environment_and_bad_ones_refuse_every_call() {
    let p = Project::new();
    let mut grant = Grant::directory(&p.root_dir());
    grant.env = vec![("WRITE_TOOL_ALLOW_EMPTY".into(), "true".into())];
    let env = call(&grant, json!({"path": "empty.txt", "content": ""}));
    env.assert_status("success");
    // A runtime that says nothing gets the compact form; one that sets
    // WRITE_TOOL_ENVELOPE gets what it set.
    let compact: Value = serde_json::from_str(&call_raw(
        &grant,
        &json!({"path": "b.txt", "content": "b\n"}),
    ))
    .expect("an envelope");
    assert!(
        compact.get("stats").is_none() && compact["status"] == "success",
        "{compact}"
    );
    grant
        .env
        .push(("WRITE_TOOL_ENVELOPE".into(), "full".into()));
    let full: Value = serde_json::from_str(&call_raw(
        &grant,
        &json!({"path": "c.txt", "content": "c\n"}),
    ))
    .expect("an envelope");
    assert_eq!(full["stats"]["bytes_written"], 2, "{full}");
    assert_eq!(p.read("empty.txt"), b"");

    for (name, value) in [
        ("WRITE_TOOL_READ_ONLY", "yes"),
        ("WRITE_TOOL_READONLY", "true"),
        ("WRITE_TOOL_PROTECT", "a["),
        ("WRITE_TOOL_ENVELOPE", "short"),
    ] {
        grant.env = vec![(name.into(), value.into())];
        let before = p.tree();
        let env = call(&grant, json!({"path": "a.txt", "content": "a\n"}));
        env.assert_error("EXECUTION_ERROR");
        assert!(
            env.text.starts_with("The host's settings are invalid: "),
            "{name}: {}",
            env.text
        );
        assert_eq!(env.context.params_input["path"], "a.txt");
        assert_eq!(p.tree(), before, "{name}");
    }
}

#[test]
fn no_preopen_is_an_error_not_a_trap() {
    let grant = Grant {
        preopens: Vec::new(),
        env: Vec::new(),
    };
    let env = call(&grant, json!({"path": "a.txt", "content": "a\n"}));
    env.assert_error("EXECUTION_ERROR");
    assert!(env.text.contains("no directory"), "{}", env.text);
}

#[test]
fn the_definition_is_the_models_schema() {
    let empty = tempfile::tempdir().expect("tempdir");
    let grant = Grant::directory(empty.path());
    let answer = runtime().invoke(&grant, "definition", json!({}));
    let definition: Value =
        serde_json::from_str(answer["result"].as_str().expect("text")).expect("JSON");
    assert_eq!(definition["name"], "Write");
    assert_eq!(
        definition["parameters"]["required"],
        json!(["path", "content"])
    );
}
