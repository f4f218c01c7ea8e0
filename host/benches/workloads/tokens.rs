//! `-- tokens`: what a model pays to read each kind of answer, in
//! characters and in tokens of a real tokenizer that works offline
//! (OpenAI's `o200k_base`, shipped inside `tiktoken-rs`; Anthropic's is not
//! published), against the answers two peers give for the same change:
//! the npm MCP filesystem server (`@modelcontextprotocol/server-filesystem`:
//! `write_file`, `edit_file`) and gemini-cli's `write_file` and `replace`
//! (`packages/core/src/tools/{write-file,edit}.ts`, `diff-utils.ts`), their
//! answer texts ported from their sources below.
//!
//! write-tool's answer is the envelope as the component returns it (its
//! compact form): what a model reads from `serve` and, over MCP, as
//! `structuredContent` (Claude Code, Codex); and, in the next column, the
//! MCP text block, which clients without structured content show
//! (`docs/contract.md#mcp`).

use serde_json::{Value, json};
use similar::TextDiff;
use write_tool::{JournalChoice, Options, Root, WriteTool, ambient_authority};

/// Where every tool is told the project is, for answers that name
/// absolute paths.
const PROJECT: &str = "/home/dev/project";

/// A 60-line module, the kind of file agents change most.
fn module() -> String {
    let mut text =
        String::from("\"\"\"Orders: totals, discounts and receipts.\"\"\"\n\nimport math\n\n");
    for i in 0..8 {
        text.push_str(&format!(
            "\ndef step_{i}(order, rate):\n    \"\"\"Apply step {i} to the order.\"\"\"\n    total = order.total * rate\n    if total > {limit}:\n        total = math.floor(total)\n    return total\n",
            limit = 100 * (i + 1)
        ));
    }
    text
}

/// One answer kind: the request, and the peers' answers to the same change
/// (`None`: the peer has no such call).
struct Kind {
    name: &'static str,
    request: Value,
    mcp: Option<String>,
    gemini: Option<String>,
}

pub(crate) fn tokens(tool: &WriteTool) {
    let bpe = tiktoken_rs::o200k_base().expect("the o200k_base vocabulary ships in the crate");
    let count = |s: &str| bpe.encode_with_special_tokens(s).len();
    let file = module();
    let kinds = kinds(&file);
    println!(
        "| answer | write-tool chars | tokens | its MCP text block chars | tokens | MCP filesystem chars | tokens | gemini-cli chars | tokens |\n|---|---|---|---|---|---|---|---|---|"
    );
    let cell = |a: &Option<String>| match a {
        Some(a) => format!("{} | {}", a.chars().count(), count(a)),
        None => "— | —".to_owned(),
    };
    for kind in kinds {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("orders.py"), &file).expect("setup");
        // The journal on, as the CLI and servers keep it by default: the
        // answers carry their change id.
        let journal = tempfile::tempdir().expect("tempdir");
        let options = Options {
            journal: JournalChoice::In(journal.path().to_path_buf()),
            ..Options::default()
        };
        let root = Root::open(dir.path(), ambient_authority()).expect("root");
        let root = options.attach_journal(root).expect("journal");
        let answer = tool.call(&root, &kind.request.to_string());
        let block = write_tool_wire::Envelope::from_json(&answer)
            .expect("the component answers with an envelope")
            .for_model(usize::MAX);
        // `WRITE_TOOL_TOKENS_SHOW=1` prints every answer, the peers' too.
        if std::env::var_os("WRITE_TOOL_TOKENS_SHOW").is_some() {
            println!("{answer}\n{block:?}\n{:?}\n{:?}", kind.mcp, kind.gemini);
        }
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            kind.name,
            answer.chars().count(),
            count(&answer),
            cell(&Some(block)),
            cell(&kind.mcp),
            cell(&kind.gemini)
        );
    }
}

/// The answer kinds, on `file`.
fn kinds(file: &str) -> Vec<Kind> {
    let edited = file.replacen(
        "total = order.total * rate\n    if total > 300",
        "total = order.total * rate * 0.9\n    if total > 300",
        1,
    );
    let old = "    total = order.total * rate\n    if total > 300:\n";
    let new = "    total = order.total * rate * 0.9\n    if total > 300:\n";
    let abs = format!("{PROJECT}/orders.py");
    vec![
        Kind {
            name: "create (1 KiB file)",
            request: json!({"path": "notes/todo.md", "content": "- [ ] x\n".repeat(128)}),
            mcp: Some("Successfully wrote to notes/todo.md".into()),
            gemini: Some(format!(
                "Successfully created and wrote to new file: {PROJECT}/notes/todo.md."
            )),
        },
        Kind {
            name: "update (whole file, one line changed)",
            request: json!({"path": "orders.py", "content": edited}),
            mcp: Some("Successfully wrote to orders.py".into()),
            gemini: Some(format!("Successfully overwrote file: {abs}.")),
        },
        Kind {
            name: "edit (one line)",
            request: json!({"file_path": "orders.py", "old_string": old, "new_string": new}),
            mcp: Some(mcp_diff(&abs, file, &edited)),
            gemini: Some(format!(
                "Successfully modified file: {abs} (1 replacements). Here is the updated code:\n{}",
                gemini_snippet(file, &edited, 5)
            )),
        },
        Kind {
            name: "edit, dry run",
            request: json!({"file_path": "orders.py", "old_string": old, "new_string": new, "dry_run": true}),
            mcp: Some(mcp_diff(&abs, file, &edited)),
            gemini: None,
        },
        Kind {
            name: "patch (one hunk)",
            request: json!({"name": "apply_patch", "arguments": {"input": format!(
                "*** Begin Patch\n*** Update File: orders.py\n@@ def step_2(order, rate):\n-{}\n+{}\n*** End Patch\n",
                old.lines().next().unwrap_or_default(), new.lines().next().unwrap_or_default())}}),
            mcp: None,
            gemini: None,
        },
        Kind {
            name: "refusal: old text not found",
            request: json!({"file_path": "orders.py", "old_string": old.replace("rate", "rates"), "new_string": new}),
            mcp: Some(format!(
                "Error: Could not find exact match for edit:\n{}",
                old.replace("rate", "rates")
            )),
            gemini: Some(format!(
                "Failed to edit, 0 occurrences found for old_string in {abs}. Ensure you're not escaping content incorrectly and check whitespace, indentation, and context. Use read_file tool to verify."
            )),
        },
        Kind {
            name: "refusal: old text in several places",
            request: json!({"file_path": "orders.py", "old_string": "        total = math.floor(total)\n", "new_string": "        total = math.ceil(total)\n"}),
            // The MCP server takes the first place: an answer of success.
            mcp: None,
            gemini: Some(format!(
                "Failed to edit, Expected 1 occurrence but found 8 for old_string in file: {abs}. If you intended to replace multiple occurrences, set 'allow_multiple' to true."
            )),
        },
        Kind {
            name: "refusal: path outside the root",
            request: json!({"path": "../etc/passwd", "content": "x\n"}),
            mcp: Some(format!(
                "Error: Access denied - path outside allowed directories: /home/dev/etc/passwd not in {PROJECT}"
            )),
            gemini: None,
        },
    ]
}

/// The MCP filesystem server's `edit_file` answer: jsdiff's
/// `createTwoFilesPatch(path, path, old, new, 'original', 'modified')`
/// (four lines of context) in a fenced block.
fn mcp_diff(path: &str, old: &str, new: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let hunks = diff.unified_diff().context_radius(4).to_string();
    format!(
        "```diff\nIndex: {path}\n===================================================================\n--- {path}\toriginal\n+++ {path}\tmodified\n{hunks}```\n\n"
    )
}

/// gemini-cli's `getDiffContextSnippet`: the new file's changed lines with
/// `context` lines around them, `...` for what lies between.
fn gemini_snippet(old: &str, new: &str, context: usize) -> String {
    let new_lines: Vec<&str> = new.split('\n').collect();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let diff = TextDiff::from_lines(old, new);
    for op in diff.ops() {
        let range = op.new_range();
        match op.tag() {
            similar::DiffTag::Equal => {}
            similar::DiffTag::Delete => ranges.push((range.start, range.start)),
            _ => ranges.push((range.start, range.end)),
        }
    }
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in ranges {
        let (s, e) = (
            s.saturating_sub(context),
            (e + context).min(new_lines.len()),
        );
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    let mut parts = Vec::new();
    let mut last = 0;
    for (s, e) in merged {
        if s > last {
            parts.push("...".to_owned());
        }
        parts.push(new_lines[s..e].join("\n"));
        last = e;
    }
    if last < new_lines.len() {
        parts.push("...".to_owned());
    }
    parts.join("\n")
}
