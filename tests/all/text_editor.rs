//! Anthropic's text editor tool executed as it is
//! (`docs/contract.md#text-editor`): the `tool_use` blocks Claude sends
//! for `str_replace_based_edit_tool` (and `str_replace_editor`, whose
//! versions have `undo_edit`), answered in the words of Anthropic's
//! reference implementation, through the tool's own stages.
//!
//! The shapes and words are quoted from Anthropic's documentation
//! (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/text-editor-tool>:
//! "command", "path", "view_range", "old_str", "new_str", "file_text",
//! "insert_line") and its reference implementation
//! (`anthropics/anthropic-quickstarts`,
//! `computer-use-demo/computer_use_demo/tools/edit.py`: the answers'
//! texts). For `insert` the documentation names the text `new_str`, while
//! the models send `insert_text` (`anthropics/anthropic-sdk-python` issue
//! 1155): both are taken.

use serde_json::{Value, json};
use write_tool::ProjectPreopen;

use crate::support::Project;

/// A project whose root the component knows by its host path, so that
/// the absolute paths Claude sends name files in it, with the journal on
/// (as the CLI runs by default).
fn project() -> Project {
    Project::journaled_as(ProjectPreopen::HostPath)
}

/// The `tool_use` block Claude sends, with `input`.
fn tool_use(input: Value) -> Value {
    json!({"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name":
        "str_replace_based_edit_tool", "input": input})
}

const PRIMES: &str = "def is_prime(n):\n    if n < 2:\n        return False\n    for i in \
    range(2, n):\n        if n % i == 0:\n            return False\n    return True\n";

#[test]
fn view_answers_cat_n_of_the_file_or_its_range() {
    let p = project();
    p.write("primes.py", PRIMES);
    p.write("src/lib.rs", "x\n");
    p.write(".hidden", "x\n");
    let path = p.path("primes.py").display().to_string();
    let before = p.tree_but_seen();
    let env = p.call(tool_use(json!({"command": "view", "path": path})));
    env.assert_status("success");
    let numbered: String = PRIMES
        .lines()
        .enumerate()
        .map(|(i, line)| format!("{:>6}\t{line}\n", i + 1))
        .collect();
    assert_eq!(
        env.text,
        format!("Here's the result of running `cat -n` on {path}:\n{numbered}")
    );
    let env = p.call(tool_use(
        json!({"command": "view", "path": path, "view_range": [2, 3]}),
    ));
    assert_eq!(
        env.text,
        format!(
            "Here's the result of running `cat -n` on {path}:\n     2\t    if n < 2:\n     \
             3\t        return False\n"
        )
    );
    // The envelope is still the view's: its base and lock values.
    assert!(env.data().view.as_ref().unwrap().base.is_some());
    // A directory: its entries two levels deep, hidden ones left out.
    let root = p.root_dir().display().to_string();
    let env = p.call(tool_use(json!({"command": "view", "path": root})));
    assert_eq!(
        env.text,
        format!(
            "Here's the files and directories up to 2 levels deep in {root}, excluding hidden \
             items:\nprimes.py\nsrc/\nsrc/lib.rs\n"
        )
    );
    // A look changes nothing.
    assert_eq!(p.tree_but_seen(), before);
}

#[test]
fn str_replace_edits_once_and_shows_the_lines_around_the_change() {
    let p = project();
    p.write("primes.py", PRIMES);
    let path = p.path("primes.py").display().to_string();
    let env = p.call(tool_use(json!({"command": "str_replace", "path": path,
        "old_str": "for i in range(2, n):", "new_str": "for i in range(2, int(n ** 0.5) + 1):"})));
    env.assert_status("success");
    assert_eq!(
        env.text,
        format!(
            "The file {path} has been edited. Here's the result of running `cat -n` on a \
             snippet of {path}:\n     1\tdef is_prime(n):\n     2\t    if n < 2:\n     3\t     \
             \x20  return False\n     4\t    for i in range(2, int(n ** 0.5) + 1):\n     5\t     \
             \x20  if n % i == 0:\n     6\t            return False\n     7\t    return True\n\
             Review the changes and make sure they are as expected. Edit the file again if \
             necessary."
        )
    );
    assert_eq!(
        p.read_string("primes.py"),
        PRIMES.replace("range(2, n)", "range(2, int(n ** 0.5) + 1)")
    );
    // Recorded as any edit is: undoable.
    assert!(env.data().change_id.is_some(), "{env:#?}");
    // A `new_str` left out deletes the old text, as the reference does.
    let env = p.call(tool_use(
        json!({"command": "str_replace", "path": path, "old_str": "    return True\n"}),
    ));
    env.assert_status("success");
    assert!(!p.read_string("primes.py").contains("return True"));
}

#[test]
fn insert_puts_lines_after_the_line_named_by_insert_text_or_new_str() {
    let p = project();
    p.write("primes.py", PRIMES);
    let path = p.path("primes.py").display().to_string();
    let env = p.call(tool_use(
        json!({"command": "insert", "path": path, "insert_line": 0,
        "insert_text": "import math\n"}),
    ));
    env.assert_status("success");
    assert_eq!(
        env.text,
        format!(
            "The file {path} has been edited. Here's the result of running `cat -n` on a \
             snippet of the edited file:\n     1\timport math\n     2\tdef is_prime(n):\n     \
             3\t    if n < 2:\n     4\t        return False\nReview the changes and make sure \
             they are as expected (correct indentation, no duplicate lines, etc). Edit the file \
             again if necessary."
        )
    );
    // The documentation's name for the text, without a line break: made a
    // line of its own.
    p.call(tool_use(
        json!({"command": "insert", "path": path, "insert_line": 8,
        "new_str": "    # checked"}),
    ))
    .assert_status("success");
    assert_eq!(
        p.read_string("primes.py"),
        format!("import math\n{PRIMES}    # checked\n")
    );
    // A line past the last changes nothing, and says how many there are.
    let before = p.tree();
    let env = p.call(tool_use(
        json!({"command": "insert", "path": path, "insert_line": 42,
        "insert_text": "x\n"}),
    ));
    env.assert_error("INVALID_PARAM");
    assert_eq!(
        env.text,
        "The edit: invalid `insert_line` parameter: 42. It should be within the range of lines \
         of the file: [0, 9]. Nothing was changed."
    );
    assert_eq!(p.tree(), before);
}

#[test]
fn insert_is_an_edit_on_every_surface_the_tool_has() {
    let p = Project::journaled();
    p.write("a.txt", "one\nthree\n");
    // `Edit` and `MultiEdit` take `insert_line`, beside replacements.
    p.call(
        json!({"name": "Edit", "arguments": {"file_path": "a.txt", "old_string": "",
        "new_string": "two\n", "insert_line": 1}}),
    )
    .assert_status("success");
    assert_eq!(p.read_string("a.txt"), "one\ntwo\nthree\n");
    let env = p.call(
        json!({"name": "MultiEdit", "arguments": {"file_path": "a.txt", "edits": [
        {"old_string": "one", "new_string": "1"},
        {"insert_line": 3, "new_string": "four"}]}}),
    );
    env.assert_status("success");
    assert_eq!(env.data().edits[1].lines, [4]);
    assert_eq!(p.read_string("a.txt"), "1\ntwo\nthree\nfour\n");
    // Replacing and inserting at once is refused, changing nothing.
    let env = p.call(json!({"name": "Edit", "arguments": {"file_path": "a.txt",
        "old_string": "two", "new_string": "2", "insert_line": 1}}));
    env.assert_error("INVALID_PARAM");
    assert_eq!(p.read_string("a.txt"), "1\ntwo\nthree\nfour\n");
    // The typed interface's `insert`.
    let typed = crate::support::tool().insert(p.root(), "a.txt", 0, "zero", false);
    assert!(typed.error.is_none(), "{}", typed.text);
    assert_eq!(typed.data.expect("data").edits[0].lines, [1]);
    assert_eq!(p.read_string("a.txt"), "zero\n1\ntwo\nthree\nfour\n");
}

#[test]
fn create_makes_a_new_file_with_its_directories_and_never_replaces_one() {
    let p = project();
    p.write("primes.py", PRIMES);
    let path = p.path("pkg/new.py").display().to_string();
    let env = p.call(tool_use(
        json!({"command": "create", "path": path, "file_text": "x = 1\n"}),
    ));
    env.assert_status("success");
    assert_eq!(env.text, format!("File created successfully at: {path}"));
    assert_eq!(p.read_string("pkg/new.py"), "x = 1\n");
    let before = p.tree();
    let old = p.path("primes.py").display().to_string();
    let env = p.call(tool_use(
        json!({"command": "create", "path": old, "file_text": "gone\n"}),
    ));
    env.assert_status("error");
    assert_eq!(
        env.text,
        format!("File already exists at: {old}. Cannot overwrite files using command `create`.")
    );
    assert_eq!(p.tree(), before);
}

#[test]
fn undo_edit_steps_back_through_the_files_own_changes_from_the_journal() {
    let p = project();
    let path = p.path("a.py").display().to_string();
    let undo = || {
        p.call(
            json!({"type": "tool_use", "id": "toolu_2", "name": "str_replace_editor",
            "input": {"command": "undo_edit", "path": path}}),
        )
    };
    p.call(tool_use(
        json!({"command": "create", "path": path, "file_text": "a\nb\n"}),
    ))
    .assert_status("success");
    p.call(tool_use(
        json!({"command": "str_replace", "path": path, "old_str": "b", "new_str": "B"}),
    ))
    .assert_status("success");
    p.write("other.txt", "another file's change, by another call\n");
    p.call(json!({"path": "other.txt", "content": "changed\n"}))
        .assert_status("success");
    let env = undo();
    env.assert_status("success");
    assert_eq!(
        env.text,
        format!(
            "Last edit to {path} undone successfully. Here's the result of running `cat -n` on \
             a snippet of {path}:\n     1\ta\n     2\tb\n"
        )
    );
    assert_eq!(p.read_string("a.py"), "a\nb\n");
    // The other file's later change is not this file's to undo.
    assert_eq!(p.read_string("other.txt"), "changed\n");
    // Again: the create goes, as the file did not exist before it.
    undo().assert_status("success");
    assert!(!p.exists("a.py"));
    let before = p.tree();
    let env = undo();
    env.assert_status("error");
    assert_eq!(env.text, format!("No edit history found for {path}."));
    assert_eq!(p.tree(), before);
}

#[test]
fn undo_edit_never_undoes_another_files_change_with_it() {
    let p = project();
    p.call(json!({"name": "write_many", "arguments": {"writes": [
        {"path": "a.txt", "content": "a\n"}, {"path": "b.txt", "content": "b\n"}]}}))
        .assert_status("success");
    let before = p.tree();
    let env = p.call(tool_use(json!({"command": "undo_edit", "path": "a.txt"})));
    env.assert_error("INVALID_PARAM");
    assert!(
        env.text.contains("changed other files too") && env.text.contains("revert"),
        "{}",
        env.text
    );
    assert_eq!(p.tree(), before);
    // Without a journal there is nothing to undo from.
    let bare = Project::new();
    bare.write("a.txt", "a\n");
    let env = bare.call(tool_use(json!({"command": "undo_edit", "path": "a.txt"})));
    env.assert_error("PERMISSION_DENIED");
    assert!(env.text.contains("keeps no journal"), "{}", env.text);
    assert_eq!(bare.read_string("a.txt"), "a\n");
}

#[test]
fn undo_edit_keeps_what_changed_since_and_what_a_person_did() {
    let p = project();
    p.call(tool_use(
        json!({"command": "create", "path": "a.py", "file_text": "a\n"}),
    ))
    .assert_status("success");
    p.call(tool_use(
        json!({"command": "str_replace", "path": "a.py", "old_str": "a", "new_str": "b"}),
    ))
    .assert_status("success");
    // A dry run of an undo says what it would do and does nothing.
    let before = p.tree();
    let env = p.call(tool_use(
        json!({"command": "undo_edit", "path": "a.py", "dry_run": true}),
    ));
    env.assert_status("partial");
    assert_eq!(p.tree(), before);
    // Changed by hand since: the undo would lose it, so it is refused.
    p.write("a.py", "by hand\n");
    let env = p.call(tool_use(json!({"command": "undo_edit", "path": "a.py"})));
    env.assert_error("CONFLICT");
    assert_eq!(p.read_string("a.py"), "by hand\n");
    // A person's change is not the model's to undo.
    let person = crate::support::tool().call_as_person(
        p.root(),
        &json!({"path": "b.txt", "content": "person\n"}).to_string(),
    );
    assert!(person.contains("\"success\""), "{person}");
    let env = p.call(tool_use(json!({"command": "undo_edit", "path": "b.txt"})));
    env.assert_status("error");
    assert_eq!(p.read_string("b.txt"), "person\n");
}

#[test]
fn a_dry_run_and_the_commands_own_parameters_are_kept() {
    let p = project();
    p.write("a.txt", "one\n");
    let before = p.tree();
    // A dry run is told in the tool's words: nothing was created.
    let env = p.call(tool_use(
        json!({"command": "create", "path": "new.txt", "file_text": "x\n", "dry_run": true}),
    ));
    env.assert_status("partial");
    assert!(!env.text.starts_with("File created"), "{}", env.text);
    let typed = crate::support::tool().insert(p.root(), "a.txt", 0, "zero", true);
    assert_eq!(typed.data.map(|d| d.applied), Some(false));
    assert_eq!(p.tree(), before);
    // A client that sends every field sends `null` for those it leaves.
    p.call(tool_use(
        json!({"command": "str_replace", "path": "a.txt", "old_str": "one",
        "new_str": "two", "insert_line": null, "file_text": null, "view_range": null}),
    ))
    .assert_status("success");
    assert_eq!(p.read_string("a.txt"), "two\n");
    let env = p.call(tool_use(
        json!({"command": "insert", "path": "a.txt", "insert_line": 0}),
    ));
    assert_eq!(
        env.text,
        "Parameter `insert_text` is required for command: insert"
    );
    let env = p.call(json!({"name": "Edit", "arguments": {"file_path": "a.txt",
        "insert_line": 0, "new_string": "x", "replace_all": true}}));
    env.assert_error("INVALID_PARAM");
    // The change made is the one the command shows: no `edits` of
    // another shape in its place.
    p.call(tool_use(
        json!({"command": "str_replace", "path": "a.txt", "old_str": "two",
        "new_str": "2", "edits": [{"old_string": "two", "new_string": "hidden"}]}),
    ))
    .assert_status("success");
    assert_eq!(p.read_string("a.txt"), "2\n");
    // A write that happens to carry a `command` key is a write.
    p.call(json!({"path": "w.txt", "content": "w\n", "command": "view"}))
        .assert_status("success");
    assert_eq!(p.read_string("w.txt"), "w\n");
    let env = p.call(
        json!({"type": "tool_use", "id": "t", "name": "str_replace_editor",
        "input": {"command": "rename", "path": "a.txt"}}),
    );
    assert!(env.text.ends_with("insert, undo_edit"), "{}", env.text);
    // An old text is repeated at most 400 characters.
    let long = "z".repeat(500);
    let env = p.call(tool_use(
        json!({"command": "str_replace", "path": "a.txt", "old_str": long, "new_str": "x"}),
    ));
    let quoted = format!("`{}…`", "z".repeat(400));
    assert!(env.text.contains(&quoted), "{}", env.text);
    assert_eq!(p.read_string("a.txt"), "2\n");
}

#[test]
fn failures_are_told_in_the_references_words_and_change_nothing() {
    let p = project();
    p.write("primes.py", PRIMES);
    let path = p.path("primes.py").display().to_string();
    let missing = p.path("nope.py").display().to_string();
    let root = p.root_dir().display().to_string();
    let before = p.tree();
    let cases = [
        (
            json!({"command": "view", "path": missing}),
            format!("The path {missing} does not exist. Please provide a valid path."),
        ),
        (
            json!({"command": "str_replace", "path": missing, "old_str": "a", "new_str": "b"}),
            format!("The path {missing} does not exist. Please provide a valid path."),
        ),
        (
            json!({"command": "str_replace", "path": root, "old_str": "a", "new_str": "b"}),
            format!(
                "The path {root} is a directory and only the `view` command can be used on \
                 directories"
            ),
        ),
        (
            json!({"command": "str_replace", "path": path, "old_str": "return False",
                "new_str": "return 0"}),
            "No replacement was performed. Multiple occurrences of old_str `return False` in \
             lines [3, 6]. Please ensure it is unique"
                .to_owned(),
        ),
        (
            // Each line once, however often it holds the old text.
            json!({"command": "str_replace", "path": path, "old_str": "n", "new_str": "m"}),
            "No replacement was performed. Multiple occurrences of old_str `n` in lines [1, 2, \
             3, 4, 5, 6, 7]. Please ensure it is unique"
                .to_owned(),
        ),
        (
            json!({"command": "str_replace", "path": path, "old_str": "return None",
                "new_str": "return 0"}),
            format!(
                "No replacement was performed, old_str `return None` did not appear verbatim in \
                 {path}."
            ),
        ),
        (
            json!({"command": "str_replace", "path": path, "new_str": "x"}),
            "Parameter `old_str` is required for command: str_replace".to_owned(),
        ),
        (
            json!({"command": "create", "path": missing}),
            "Parameter `file_text` is required for command: create".to_owned(),
        ),
        (
            json!({"command": "insert", "path": path, "insert_text": "x"}),
            "Parameter `insert_line` is required for command: insert".to_owned(),
        ),
        (
            json!({"command": "rename", "path": path}),
            "Unrecognized command rename. The allowed commands for the \
             str_replace_based_edit_tool tool are: view, create, str_replace, insert"
                .to_owned(),
        ),
    ];
    for (input, words) in cases {
        let env = p.call(tool_use(input.clone()));
        env.assert_status("error");
        // The first line is the reference's; a closest region may follow.
        assert_eq!(env.text.lines().next(), Some(words.as_str()), "{input}");
    }
    assert_eq!(p.tree(), before);
}

#[test]
fn the_sandbox_and_the_protected_places_hold_for_every_command() {
    let p = project();
    p.write(".git/config", "[core]\n");
    let outside = p.base().join("outside/secret.txt").display().to_string();
    let before = p.tree();
    for input in [
        json!({"command": "view", "path": outside}),
        json!({"command": "str_replace", "path": outside, "old_str": "outside", "new_str": "x"}),
        json!({"command": "insert", "path": outside, "insert_line": 0, "insert_text": "x"}),
        json!({"command": "create", "path": p.base().join("outside/new.txt"), "file_text": "x"}),
        json!({"command": "view", "path": ".git/config"}),
        json!({"command": "insert", "path": ".git/config", "insert_line": 0, "insert_text": "x"}),
    ] {
        let env = p.call(tool_use(input.clone()));
        env.assert_error("ACCESS_DENIED");
        // Nothing of the file's content is told.
        assert!(
            !env.text.contains("outside secret"),
            "{input}: {}",
            env.text
        );
    }
    assert_eq!(p.tree(), before);
    assert!(!p.base().join("outside/new.txt").exists());
}

#[test]
fn every_shape_of_the_call_is_taken_and_a_tolerant_match_says_so() {
    let p = project();
    p.write("a.txt", "if x:\n    y = 1\n");
    // The arguments alone, and a `{"name", "arguments"}` call.
    p.call(
        json!({"command": "str_replace", "path": "a.txt", "old_str": "y = 1",
        "new_str": "y = 2"}),
    )
    .assert_status("success");
    let env = p.call(json!({"name": "str_replace_editor", "arguments":
        {"command": "str_replace", "path": "a.txt", "old_str": "if x:   \n    y = 2",
         "new_str": "if x:\n    y = 3"}}));
    env.assert_status("success");
    assert_eq!(p.read_string("a.txt"), "if x:\n    y = 3\n");
    // What the reference would not have matched is said after its words.
    let (_, note) = env.text.split_once("\nNote: ").expect("a note");
    assert!(note.contains("trailing whitespace"), "{}", env.text);
    // The definition offers the tool as Anthropic defines it.
    let definition = crate::support::tool().definition().expect("definition");
    let definition: Value = serde_json::from_str(&definition).expect("JSON");
    assert_eq!(
        definition["anthropic_tools"],
        json!([{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}])
    );
}
