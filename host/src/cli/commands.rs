//! One function per one-shot command. Each gets what it needs already
//! built (the tool, the roots, the limits) and answers with an exit status.
//! The servers are in `serving.rs`, the journal's commands in
//! `journal.rs`.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::json;
use write_tool::providers::{self, Provider};
use write_tool::{COMPONENT, Root, WriteTool};

use super::input::{self, Request};
use super::output::{
    EXIT_ERROR_ENVELOPE, EXIT_OK, answer_person, emit, exit_code, with_flag_hints,
};
use super::serving::answer;

/// `write-tool schema`: the tool definition, or the tools in a
/// provider's format.
pub(crate) fn schema(
    tool: &WriteTool,
    provider: Option<Provider>,
    pretty: bool,
) -> anyhow::Result<u8> {
    let definition = match provider {
        None => tool.definition(),
        Some(provider) => providers::definitions(tool, provider).map(|d| d.to_string()),
    };
    let definition = definition
        .map_err(anyhow::Error::from)
        .context("cannot read the tool definition")?;
    emit(&mut io::stdout(), &definition, pretty)?;
    Ok(EXIT_OK)
}

/// `write-tool turn --provider P`: a model's turn on stdin, its tool calls
/// run in order, and what goes back to the API on stdout. Exits 1 when a
/// call failed (its answer says why, to the model too).
pub(crate) fn turn(
    tool: &WriteTool,
    root: &Root,
    provider: Provider,
    limit: usize,
    pretty: bool,
) -> anyhow::Result<u8> {
    let turn = match input::request(&mut io::stdin().lock(), limit, false)? {
        Some(Request::Complete(bytes)) => bytes,
        Some(Request::TooLong(limit)) => bail!("the model's turn is over {limit} bytes"),
        None => bail!("no model turn on stdin"),
    };
    let turn: serde_json::Value =
        serde_json::from_slice(&turn).context("the model's turn is not JSON")?;
    let calls = providers::calls(provider, &turn).map_err(anyhow::Error::msg)?;
    let mut answered = Vec::with_capacity(calls.len());
    let mut failed = false;
    for call in calls {
        let request = call.request.to_string();
        let started = std::time::Instant::now();
        let envelope = tool.call(root, &request);
        write_tool::log::call("turn", Some(&request), &envelope, started);
        failed |=
            write_tool::wire::Status::of_json(&envelope) == Some(write_tool::wire::Status::Error);
        answered.push((call, envelope));
    }
    let reply = providers::reply(provider, &answered);
    emit(&mut io::stdout(), &reply.to_string(), pretty)?;
    Ok(if failed { EXIT_ERROR_ENVELOPE } else { EXIT_OK })
}

/// The parameters `write-tool write` takes as flags.
pub(crate) struct WriteHow {
    pub(crate) dry_run: bool,
    pub(crate) create_only: bool,
    /// `--append`: the `append` tool, not `Write`.
    pub(crate) append: bool,
    pub(crate) keep_format: bool,
}

/// `write-tool write PATH`: one file, content from a flag, a file or stdin;
/// with `--append`, added at its end.
pub(crate) fn write(
    tool: &WriteTool,
    root: &Root,
    path: &str,
    how: WriteHow,
    content: Option<String>,
    content_file: Option<PathBuf>,
    pretty: bool,
) -> anyhow::Result<u8> {
    let content = input::content(content, content_file)?;
    let mut arguments = json!({ "path": path, "content": content, "dry_run": how.dry_run });
    // Only flags that were given: the echo then shows what was asked.
    if how.create_only {
        arguments["create_only"] = json!(true);
    }
    if !how.keep_format {
        arguments["keep_format"] = json!(false);
    }
    let arguments = match how.append {
        true => json!({"name": "append", "arguments": arguments}),
        false => arguments,
    }
    .to_string();
    let started = std::time::Instant::now();
    let envelope = tool.call_as_person(root, &arguments);
    write_tool::log::call("write", Some(&arguments), &envelope, started);
    answer_person(envelope, pretty)
}

/// One edit from `write-tool edit`'s flags.
#[derive(Debug)]
pub(crate) enum OneEdit {
    /// `--old`, `--new`, `--replace-all`.
    Replace(String, String, bool),
    /// `--insert-after`, `--new`.
    Insert(u64, String),
}

/// `write-tool edit PATH`: one edit from the flags, or the JSON array of
/// edits on stdin.
pub(crate) fn edit(
    tool: &WriteTool,
    root: &Root,
    path: &str,
    single: Option<OneEdit>,
    dry_run: bool,
    limit: usize,
    pretty: bool,
) -> anyhow::Result<u8> {
    let started = std::time::Instant::now();
    let edit = |edits: serde_json::Value| {
        let arguments = json!({"file_path": path, "edits": edits, "dry_run": dry_run});
        tool.call_as_person(
            root,
            &json!({"name": "Edit", "arguments": arguments}).to_string(),
        )
    };
    let envelope = match single {
        Some(OneEdit::Replace(old, new, replace_all)) => edit(json!([
            {"old_string": old, "new_string": new, "replace_all": replace_all}
        ])),
        Some(OneEdit::Insert(line, new)) => edit(json!([{"insert_line": line, "new_string": new}])),
        None => input::from_stdin(
            limit,
            "edit --edits-json read nothing on stdin: give a JSON array of edits.",
            |bytes| match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(edits @ serde_json::Value::Array(_)) => Ok(edit(edits)),
                _ => Err("edit --edits-json reads a JSON array of edits on stdin: \
                          [{\"old_string\": …, \"new_string\": …}, …]."),
            },
        )?,
    };
    logged(&envelope, "edit", started, pretty)
}

/// `write-tool view PATH`: a file's lines or a directory's entries.
pub(crate) fn view(
    tool: &WriteTool,
    root: &Root,
    path: &str,
    from: Option<u64>,
    to: Option<u64>,
    pretty: bool,
) -> anyhow::Result<u8> {
    let started = std::time::Instant::now();
    let range = json!([from.unwrap_or(1), to.map_or(json!(-1), |to| json!(to))]);
    let arguments = json!({"path": path, "view_range": range});
    let envelope = tool.call_as_person(
        root,
        &json!({"name": "view", "arguments": arguments}).to_string(),
    );
    logged(&envelope, "view", started, pretty)
}

/// Log the call, print its envelope and say the exit code.
fn logged(
    envelope: &str,
    surface: &'static str,
    started: std::time::Instant,
    pretty: bool,
) -> anyhow::Result<u8> {
    write_tool::log::call(surface, None, envelope, started);
    answer_person(envelope.to_owned(), pretty)
}

/// `write-tool patch`: the patch on stdin.
pub(crate) fn patch(
    tool: &WriteTool,
    root: &Root,
    dry_run: bool,
    limit: usize,
    pretty: bool,
) -> anyhow::Result<u8> {
    let started = std::time::Instant::now();
    let envelope = input::from_stdin(
        limit,
        "patch read nothing on stdin: give the patch ('*** Begin Patch' … '*** End Patch').",
        |bytes| match String::from_utf8(bytes) {
            Ok(patch) => {
                let arguments = json!({"input": patch, "dry_run": dry_run});
                let request = json!({"name": "apply_patch", "arguments": arguments});
                Ok(tool.call_as_person(root, &request.to_string()))
            }
            Err(_) => Err("patch reads the patch as UTF-8 text on stdin."),
        },
    )?;
    logged(&envelope, "patch", started, pretty)
}

/// `write-tool call`: one request, all of stdin.
pub(crate) fn call(
    tool: &WriteTool,
    root: &Root,
    limit: usize,
    pretty: bool,
) -> anyhow::Result<u8> {
    let request = input::request(&mut io::stdin().lock(), limit, false)?
        .unwrap_or(Request::Complete(Vec::new()));
    let envelope = with_flag_hints(answer(tool, root, request, "call", None));
    emit(&mut io::stdout(), &envelope, pretty)?;
    Ok(exit_code(&envelope))
}

/// `write-tool component`: the embedded `.wasm`, byte for byte.
/// `-o -` means stdout, as it does for most tools that write a file.
pub(crate) fn component(out: Option<&Path>) -> anyhow::Result<u8> {
    match out.filter(|path| *path != Path::new("-")) {
        Some(path) => std::fs::write(path, COMPONENT)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None if io::stdout().is_terminal() => {
            bail!("the component is binary; give -o FILE, or redirect stdout to a file");
        }
        None => io::stdout()
            .lock()
            .write_all(COMPONENT)
            .context("cannot write to stdout")?,
    }
    Ok(EXIT_OK)
}
