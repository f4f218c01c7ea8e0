//! Multi-file patches in the format OpenAI's models emit for
//! `apply_patch` (`docs/contract.md#patch`):
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path          then every line `+text`
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path       (optional, right after Update)
//! @@ optional context line    then lines ` context`, `-old`, `+new`
//! *** End of File             (optional: the hunk ends the file)
//! *** End Patch
//! ```
//!
//! Parsing is as lenient as the models' own tooling: markers may carry
//! surrounding whitespace, the whole may sit in a `<<'EOF'` heredoc, and
//! the first hunk of an update may leave out its `@@`. Hunks of a file
//! apply in order, each after the one before; a hunk's old lines are
//! taken at their first place, byte for byte, after that point (the
//! format's own rule), else on a tolerant rung of the ladder only where
//! that rung finds exactly one place.
//!
//! `types.rs` holds the parts, `parse.rs` reads the text, `apply.rs`
//! applies an update's hunks.

mod apply;
mod parse;
mod types;

pub use apply::apply_hunks;
pub use parse::parse;
pub use types::{FileOp, Hunk, HunkError, ParseError, Patch};

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use std::time::Instant;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(1)
    }

    #[test]
    fn the_models_patch_parses_into_file_operations() {
        let patch = "*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n-print(\"Hi\")\n+print(\"Hello, world!\")\n*** Delete File: obsolete.txt\n*** End Patch\n";
        let parsed = parse(patch).unwrap();
        assert_eq!(
            parsed.ops,
            [
                FileOp::Add {
                    path: "hello.txt".into(),
                    content: "Hello world\n".into()
                },
                FileOp::Update {
                    path: "src/app.py".into(),
                    move_to: Some("src/main.py".into()),
                    hunks: vec![Hunk {
                        context: Some("def greet():".into()),
                        old: vec!["print(\"Hi\")".into()],
                        new: vec!["print(\"Hello, world!\")".into()],
                        end_of_file: false,
                    }],
                },
                FileOp::Delete {
                    path: "obsolete.txt".into()
                },
            ]
        );
        let heredoc = format!("<<'EOF'\n{patch}EOF\n");
        assert_eq!(parse(&heredoc).unwrap(), parsed);
    }

    #[test]
    fn malformed_patches_say_where() {
        assert_eq!(parse("hello").unwrap_err().line, 1);
        let err = parse("*** Begin Patch\n*** Frobnicate: x\n*** End Patch").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("not a file operation"), "{err:?}");
        let err = parse("*** Begin Patch\n*** Update File: a\n*** End Patch").unwrap_err();
        assert!(err.message.contains("no hunk"), "{err:?}");
        let err =
            parse("*** Begin Patch\n*** Update File: a\n@@\n-x\n?y\n*** End Patch").unwrap_err();
        assert_eq!(err.line, 5);
    }

    #[test]
    fn a_hunk_line_whose_text_starts_with_stars_is_no_marker() {
        let patch = "*** Begin Patch\n*** Update File: a.c\n@@\n /***\n- *** old rule\n \
                     *** kept\n+*** new rule\n  *** End Patchy\n *** End of File\n*** End Patch\n";
        let parsed = parse(patch).unwrap();
        let FileOp::Update { hunks, .. } = &parsed.ops[0] else {
            panic!("an update: {parsed:?}");
        };
        assert_eq!(hunks.len(), 1);
        assert_eq!(
            hunks[0].old,
            ["/***", " *** old rule", "*** kept", " *** End Patchy"]
        );
        assert!(hunks[0].end_of_file, "an indented marker is still one");
    }

    fn hunk(context: Option<&str>, old: &[&str], new: &[&str]) -> Hunk {
        Hunk {
            context: context.map(str::to_owned),
            old: old.iter().map(|s| (*s).to_owned()).collect(),
            new: new.iter().map(|s| (*s).to_owned()).collect(),
            end_of_file: false,
        }
    }

    #[test]
    fn hunks_apply_in_order_after_their_context() {
        let text = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
        let done = apply_hunks(
            text,
            &[hunk(Some("fn b() {"), &["    x();"], &["    y();"])],
            soon(),
        )
        .unwrap();
        assert_eq!(done.text, "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n");
        assert_eq!(done.matches[0].lines, [5]);
        // Without context, the first place after the hunks before.
        let done = apply_hunks(
            text,
            &[
                hunk(None, &["    x();"], &["    one();"]),
                hunk(None, &["    x();"], &["    two();"]),
            ],
            soon(),
        )
        .unwrap();
        assert_eq!(
            done.text,
            "fn a() {\n    one();\n}\nfn b() {\n    two();\n}\n"
        );
    }

    #[test]
    fn a_hunk_that_does_not_apply_shows_the_closest_region() {
        let text = "alpha\nbeta\ngamma\ndelta\n";
        let err = apply_hunks(
            text,
            &[hunk(None, &["beta", "gamma!", "delta"], &["x"])],
            soon(),
        )
        .unwrap_err();
        let message = err.message("f.txt", 1);
        assert!(message.starts_with("The hunk: the old lines"), "{message}");
        assert!(
            !message.contains("lines was") && !message.contains("lines is "),
            "{message}"
        );
        assert!(message.contains("Closest: lines 2-4"), "{message}");
        let err = apply_hunks(text, &[hunk(Some("omega"), &["beta"], &["b"])], soon());
        assert!(matches!(err, Err(HunkError::ContextNotFound { .. })));
    }

    #[test]
    fn pure_additions_go_after_their_context_or_at_the_end() {
        let text = "a\r\nb\r\n";
        let done = apply_hunks(text, &[hunk(Some("a"), &[], &["new"])], soon()).unwrap();
        assert_eq!(done.text, "a\r\nnew\r\nb\r\n");
        let done = apply_hunks(text, &[hunk(None, &[], &["z"])], soon()).unwrap();
        assert_eq!(done.text, "a\r\nb\r\nz\r\n");
    }
}
