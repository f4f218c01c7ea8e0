//! Edits: old text replaced by new text in a file's decoded text
//! (`docs/contract.md#edit`, `#matching`).
//!
//! Each edit's old text is looked for on the rungs of a ladder
//! ([`Tolerance`]): byte for byte first, then forgiving one more kind of
//! slip per rung. A rung that finds exactly one place (or, with
//! `replace_all`, any number) decides; a rung that finds several places
//! for an edit without `replace_all` is an error, never a guess. On a
//! tolerant rung the new text is fitted to the file: lines the model left
//! as they were keep the file's own bytes, changed lines get the file's
//! indentation and line endings.
//!
//! Several edits apply in order, each to the result of the one before,
//! all or none; an edit that touches text an earlier one wrote is an
//! error that names both.

mod canon;
mod closest;
mod doubt;
mod error;
mod fast;
mod indent;
mod insert;
pub mod patch;
mod repair;
mod tolerant;
mod types;

use std::time::Instant;

use canon::Form;
pub use canon::Tolerance;
pub use closest::Closest;
use doubt::{skipped_neighbour, whole_lines_elsewhere};
pub use error::{EditError, Voice};
use insert::insert_at;
pub use repair::Repair;
use tolerant::tolerant;
use types::Region;
pub(crate) use types::line_numbers;
pub use types::{Edit, Edited, Matched};
use types::{has_indentation, has_line};

/// Apply `edits` to `text` in order. `deadline` bounds the search for the
/// closest region when an old text is nowhere.
pub fn apply(text: &str, edits: &[Edit], deadline: Instant) -> Result<Edited, EditError> {
    // An insert's place is a line number, which only the text as the
    // edits before it left it can say.
    if edits.iter().any(|e| e.insert_line.is_some()) {
        return sequence(text, edits, deadline);
    }
    // The fast path takes edits whose ends are fitted already.
    let fitted: Vec<Option<String>> = edits.iter().map(|e| fit_end(text, e)).collect();
    if fitted.iter().all(Option::is_none) {
        if let Some(done) = fast::all_at_once(text, edits) {
            return Ok(done);
        }
    } else {
        let owned: Vec<Edit> = edits
            .iter()
            .zip(&fitted)
            .map(|(e, f)| Edit {
                new: f.clone().unwrap_or_else(|| e.new.clone()),
                ..e.clone()
            })
            .collect();
        if let Some(mut done) = fast::all_at_once(text, &owned) {
            for (m, f) in done.matches.iter_mut().zip(&fitted) {
                if f.is_some() {
                    m.repairs.push(Repair::LineBreakAtEnd);
                }
            }
            return Ok(done);
        }
    }
    sequence(text, edits, deadline)
}

/// A new text whose end disagrees with its old text's would join two lines
/// or split one: the new text fitted, if it must be. An old text that ends
/// the file without a line break is the one place a new text may add one:
/// nothing follows to split off.
fn fit_end(text: &str, edit: &Edit) -> Option<String> {
    repair::fit_end(&edit.old, &edit.new)
        .filter(|_| edit.old.ends_with('\n') || !text.ends_with(edit.old.as_str()))
}

/// The edits applied one by one, in order, each to the result of the one
/// before.
fn sequence(text: &str, edits: &[Edit], deadline: Instant) -> Result<Edited, EditError> {
    let mut current = text.to_owned();
    // What earlier edits wrote, in `current`: start, end, which edit.
    let mut written: Vec<(usize, usize, usize)> = Vec::new();
    let mut matches = Vec::with_capacity(edits.len());
    for (index, edit) in edits.iter().enumerate() {
        let (tolerance, regions, repairs) = if let Some(line) = edit.insert_line {
            (
                Tolerance::Exact,
                vec![insert_at(&current, line, &edit.new, index)?],
                Vec::new(),
            )
        } else {
            replaced(&current, text, edit, index, deadline)?
        };
        for r in &regions {
            if let Some(&(_, _, other)) = written
                .iter()
                .find(|&&(s, e, _)| r.start < e.max(s + 1) && s < r.end)
            {
                return Err(EditError::Overlap { index, other });
            }
        }
        // An insert's place is the line its text starts on.
        let lines = match edit.insert_line {
            Some(line) => vec![line + 1],
            None => line_numbers(&current, regions.iter().map(|r| r.start)),
        };
        let grown: usize = regions.iter().map(|r| r.replacement.len()).sum();
        let mut out = String::with_capacity(current.len() + grown);
        let mut last = 0;
        let mut wrote = Vec::with_capacity(regions.len());
        for r in &regions {
            out.push_str(&current[last..r.start]);
            let at = out.len();
            out.push_str(&r.replacement);
            wrote.push((at, out.len(), index));
            last = r.end;
        }
        out.push_str(&current[last..]);
        for w in &mut written {
            let moved: isize = regions
                .iter()
                .filter(|r| r.end <= w.0)
                .map(|r| r.replacement.len() as isize - (r.end - r.start) as isize)
                .sum();
            w.0 = w.0.saturating_add_signed(moved);
            w.1 = w.1.saturating_add_signed(moved);
        }
        written.extend(wrote);
        current = out;
        matches.push(Matched {
            tolerance,
            lines,
            repairs,
        });
    }
    Ok(Edited {
        text: current,
        matches,
    })
}

/// Where an edit applies: the rung that found it, its places, and what was
/// repaired first.
type Found = (Tolerance, Vec<Region>, Vec<Repair>);

/// Where a replacing edit applies in `current` (`text` as the edits before
/// it left it), or why it does not.
fn replaced(
    current: &str,
    text: &str,
    edit: &Edit,
    index: usize,
    deadline: Instant,
) -> Result<Found, EditError> {
    if edit.old.is_empty() {
        return Err(EditError::EmptyOld(index));
    }
    let fitted = fit_end(current, edit);
    if edit.old == *fitted.as_ref().unwrap_or(&edit.new) {
        return Err(EditError::Same(index));
    }
    if let Some(found) = locate_repaired(current, edit, index)? {
        return Ok(found);
    }
    let consumed = index > 0 && text.contains(edit.old.as_str());
    // A line that stands for lines left out, unless the file has it (a
    // Python stub's `...`).
    let gap = edit
        .old
        .lines()
        .position(|l| repair::is_elision(l) && !has_line(current, l.trim()));
    Err(EditError::NotFound {
        index,
        closest: if consumed {
            None
        } else if let Some(gap) = gap {
            closest::around_gap(current, &edit.old, gap, deadline)
                .or_else(|| closest::find(current, &edit.old, deadline))
        } else {
            closest::find(current, &edit.old, deadline)
        },
        consumed,
        gap: gap.filter(|_| !consumed),
    })
}

/// [`locate`] with the new text's end fitted, and when the old text is
/// nowhere as it came, the same with each [`Repair`] whose mark it shows,
/// alone, then all of them together.
fn locate_repaired(text: &str, edit: &Edit, index: usize) -> Result<Option<Found>, EditError> {
    let marked: Vec<Repair> = repair::ORDER
        .into_iter()
        .filter(|r| r.apply(&edit.old, &edit.new).is_some())
        .collect();
    let mut tries: Vec<Vec<Repair>> = vec![Vec::new()];
    tries.extend(marked.iter().map(|&r| vec![r]));
    if marked.len() > 1 {
        tries.push(marked);
    }
    for mut repairs in tries {
        let mut tried = edit.clone();
        for r in &repairs {
            if let Some((o, n)) = r.apply(&tried.old, &tried.new) {
                (tried.old, tried.new) = (o, n);
            }
        }
        if let Some(fitted) = fit_end(text, &tried) {
            tried.new = fitted;
            repairs.push(Repair::LineBreakAtEnd);
        }
        if tried.old == tried.new || tried.old.is_empty() {
            continue;
        }
        let Some((tolerance, regions)) = locate(text, &tried, index, false)? else {
            continue;
        };
        // Blank lines taken off an end: the file's line just past the
        // place must not be one the new text has and the old text lacks,
        // or the old text likely skipped it.
        if repairs.contains(&Repair::BlankEnds)
            && regions
                .iter()
                .any(|r| skipped_neighbour(text, r, &tried.old, &tried.new))
        {
            continue;
        }
        // Numbered lines, or a blank line before the text, said where a
        // line starts: a place inside a line is not one of them.
        let anchored = repairs.contains(&Repair::LineNumbers)
            || (repairs.contains(&Repair::BlankEnds)
                && edit.old.starts_with(['\n', '\r', ' ', '\t']));
        if anchored
            && regions
                .iter()
                .any(|r| r.start > 0 && text.as_bytes()[r.start - 1] != b'\n')
        {
            continue;
        }
        return Ok(Some((tolerance, regions, repairs)));
    }
    Ok(None)
}

/// The places `edit` changes in `text`, and the rung that found them;
/// `None` when no rung finds any.
/// `first_exact`: several exact places are no error, the first is taken
/// (a patch hunk's rule: hunks are in file order).
fn locate(
    text: &str,
    edit: &Edit,
    index: usize,
    first_exact: bool,
) -> Result<Option<(Tolerance, Vec<Region>)>, EditError> {
    let ambiguous = |tolerance, starts: Vec<usize>| EditError::Ambiguous {
        index,
        tolerance,
        lines: line_numbers(text, starts.into_iter()),
    };
    let mut exact: Vec<usize> = memchr::memmem::find_iter(text.as_bytes(), edit.old.as_bytes())
        .scan(0, |next, at| {
            // Places that do not overlap, first first.
            let keep = at >= *next;
            if keep {
                *next = at + edit.old.len();
            }
            Some(keep.then_some(at))
        })
        .flatten()
        .collect();
    if exact.len() > 1 && first_exact {
        exact.truncate(1);
    }
    if exact.len() > 1 && !edit.replace_all {
        return Err(ambiguous(Tolerance::Exact, exact));
    }
    if let [start] = exact[..]
        && !edit.replace_all
        && !first_exact
        && let Some(other) = whole_lines_elsewhere(text, &edit.old, start)
    {
        return Err(EditError::Disagree {
            index,
            exact: line_numbers(text, [start].into_iter())[0],
            other: line_numbers(text, [other].into_iter())[0],
        });
    }
    if !exact.is_empty() {
        let regions = exact
            .into_iter()
            .map(|start| Region {
                start,
                end: start + edit.old.len(),
                replacement: edit.new.clone(),
                indent_kept: true,
            })
            .collect();
        return Ok(Some((Tolerance::Exact, regions)));
    }
    let mut before: Option<(Form, Form)> = None;
    for level in &Tolerance::LADDER[1..] {
        let level = *level;
        let forms = (Form::of(text, level), Form::of(&edit.old, level));
        // A rung that forgets nothing more of these texts finds nothing
        // more.
        let same = before
            .as_ref()
            .is_some_and(|(t, o)| t.text == forms.0.text && o.text == forms.1.text);
        let (form, old) = &forms;
        if !same && !old.text.trim().is_empty() {
            let mut regions = tolerant(text, edit, form, &old.text, level);
            // Places that differ only in indentation, where the old text's
            // (it has some) is the file's at exactly one: that one (a rung
            // that keeps indentation would have found only it). An old text
            // without indentation tells nothing.
            if regions.len() > 1
                && !edit.replace_all
                && level == Tolerance::LookAlikes
                && has_indentation(&edit.old)
                && regions.iter().filter(|r| r.indent_kept).count() == 1
            {
                regions.retain(|r| r.indent_kept);
            }
            if regions.len() > 1 && !edit.replace_all {
                return Err(ambiguous(level, regions.iter().map(|r| r.start).collect()));
            }
            if !regions.is_empty() {
                return Ok(Some((level, regions)));
            }
        }
        before = Some(forms);
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// One edit without `replace_all`.
    pub(super) fn edit(old: &str, new: &str) -> Edit {
        Edit::replace(old, new, false)
    }

    fn run(text: &str, edits: &[Edit]) -> Result<Edited, EditError> {
        apply(text, edits, Instant::now() + Duration::from_secs(1))
    }

    #[test]
    fn an_insert_puts_whole_lines_after_the_line_it_names() {
        let text = "a\nb\nc\n";
        let at = |line: u64, new: &str| run(text, &[Edit::insert(line, new)]).map(|e| e.text);
        assert_eq!(at(0, "x\n").unwrap(), "x\na\nb\nc\n");
        assert_eq!(at(2, "x").unwrap(), "a\nb\nx\nc\n");
        assert_eq!(at(3, "x\ny\n").unwrap(), "a\nb\nc\nx\ny\n");
        assert_eq!(at(3, "x").unwrap(), "a\nb\nc\nx\n");
        // The last line without a break gets one before the text.
        let open = "a\nb";
        let end = run(open, &[Edit::insert(2, "x")]).unwrap();
        assert_eq!(end.text, "a\nb\nx");
        assert_eq!(end.matches[0].lines, [3]);
        // A file of CRLF lines gets CRLF where a break is added.
        let crlf = run("a\r\nb\r\n", &[Edit::insert(1, "x")]).unwrap();
        assert_eq!(crlf.text, "a\r\nx\r\nb\r\n");
        assert_eq!(run("", &[Edit::insert(0, "x")]).unwrap().text, "x");
        // In the middle of a file whose last line has no break, and after
        // that line in the file's own ending.
        assert_eq!(
            run("a\nb", &[Edit::insert(1, "x")]).unwrap().text,
            "a\nx\nb"
        );
        assert_eq!(
            run("a\r\nb", &[Edit::insert(2, "x")]).unwrap().text,
            "a\r\nb\r\nx"
        );
    }

    #[test]
    fn an_insert_past_the_last_line_or_of_nothing_is_refused() {
        let err = run("a\nb\n", &[Edit::insert(3, "x")]).unwrap_err();
        assert_eq!(
            err,
            EditError::InsertLine {
                index: 0,
                line: 3,
                total: 2
            }
        );
        assert!(
            err.message("f", 1).contains("[0, 2]"),
            "{}",
            err.message("f", 1)
        );
        assert_eq!(
            run("a\n", &[Edit::insert(1, "")]).unwrap_err(),
            EditError::Same(0)
        );
    }

    #[test]
    fn an_insert_counts_lines_as_the_edits_before_it_left_them() {
        let edits = [edit("a\n", "a\na2\n"), Edit::insert(2, "x")];
        let done = run("a\nb\n", &edits).unwrap();
        assert_eq!(done.text, "a\na2\nx\nb\n");
        assert_eq!(done.matches[1].lines, [3]);
        // An insert inside text an earlier edit wrote overlaps it.
        let inside = [edit("b\n", "b1\nb2\n"), Edit::insert(2, "x")];
        assert_eq!(
            run("a\nb\n", &inside).unwrap_err(),
            EditError::Overlap { index: 1, other: 0 }
        );
    }

    fn one(text: &str, old: &str, new: &str) -> (String, Tolerance) {
        let done = run(text, &[edit(old, new)]).unwrap();
        (done.text, done.matches[0].tolerance)
    }

    #[test]
    fn an_exact_match_is_replaced_as_given() {
        let (text, how) = one("a\nb\nc\n", "b\n", "B\n");
        assert_eq!((text.as_str(), how), ("a\nB\nc\n", Tolerance::Exact));
    }

    #[test]
    fn lf_old_text_in_a_crlf_file_keeps_the_file_crlf() {
        let (text, how) = one("a\r\n  b\r\nc\r\n", "a\n  b\nc\n", "a\n  b2\n  extra\nc\n");
        assert_eq!(text, "a\r\n  b2\r\n  extra\r\nc\r\n");
        assert_eq!(how, Tolerance::LineEndings);
    }

    #[test]
    fn trailing_spaces_the_model_lost_stay_on_lines_it_kept() {
        let (text, how) = one("x = 1   \ny = 2\n", "x = 1\ny = 2\n", "x = 1\ny = 3\n");
        assert_eq!(text, "x = 1   \ny = 3\n");
        assert_eq!(how, Tolerance::TrailingWhitespace);
    }

    #[test]
    fn lost_indentation_is_given_back_to_the_new_text() {
        let file = "class A:\n    def f(self):\n        return 1\n";
        let (text, how) = one(
            file,
            "def f(self):\n    return 1\n",
            "def f(self):\n    x = 2\n    return x\n",
        );
        assert_eq!(
            text,
            "class A:\n    def f(self):\n        x = 2\n        return x\n"
        );
        assert_eq!(how, Tolerance::Indentation);
    }

    #[test]
    fn spaces_for_tabs_are_written_as_tabs() {
        let file = "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n";
        let (text, how) = one(
            file,
            "    if x {\n        y()\n    }\n",
            "    if x {\n        y()\n        z()\n    }\n",
        );
        assert_eq!(text, "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n");
        assert_eq!(how, Tolerance::Indentation);
    }

    #[test]
    fn curly_quotes_match_straight_ones_and_unchanged_lines_keep_theirs() {
        let file = "say(\u{201C}hi\u{201D})\nn = 1\n";
        let (text, how) = one(file, "say(\"hi\")\nn = 1\n", "say(\"hi\")\nn = 2\n");
        assert_eq!(text, "say(\u{201C}hi\u{201D})\nn = 2\n");
        assert_eq!(how, Tolerance::LookAlikes);
    }

    #[test]
    fn several_places_without_replace_all_is_an_error_with_their_lines() {
        let err = run("x\ny\nx\n", &[edit("x", "z")]).unwrap_err();
        assert_eq!(
            err,
            EditError::Ambiguous {
                index: 0,
                tolerance: Tolerance::Exact,
                lines: vec![1, 3]
            }
        );
        assert!(err.message("f", 1).contains("at lines 1, 3"));
        let mut all = edit("x", "z");
        all.replace_all = true;
        assert_eq!(run("x\ny\nx\n", &[all]).unwrap().text, "z\ny\nz\n");
    }

    #[test]
    fn an_ambiguous_tolerant_match_is_an_error_not_a_guess() {
        let err = run("  a\n  b\nc\n    a\n    b\n", &[edit("a\nb\n", "q\n")]).unwrap_err();
        assert!(
            matches!(&err, EditError::Ambiguous { tolerance: Tolerance::Indentation, lines, .. } if *lines == vec![1, 4]),
            "{err:?}"
        );
    }

    #[test]
    fn indentation_that_does_not_shift_uniformly_is_no_match() {
        let err = run("if a:\n    b\n", &[edit("if a:\nb\n", "if a:\nc\n")]).unwrap_err();
        assert!(matches!(err, EditError::NotFound { .. }), "{err:?}");
    }

    #[test]
    fn no_match_shows_the_closest_region() {
        let file = "fn main() {\n    let a = 1;\n    let b = 2;\n    print(a + b);\n}\n";
        let err = run(
            file,
            &[edit(
                "    let a = 1;\n    let b = 3;\n    print(a + b);\n",
                "",
            )],
        )
        .unwrap_err();
        let text = err.message("m.rs", 1);
        assert!(text.contains("Closest: lines 2-4"), "{text}");
        assert!(text.contains("-    let b = 3;\n+    let b = 2;"), "{text}");
        assert!(
            text.ends_with("\n     print(a + b);\nCopy the old text from the file as it is now."),
            "{text}"
        );
        let nowhere = EditError::NotFound {
            index: 0,
            closest: None,
            consumed: false,
            gap: None,
        };
        assert_eq!(
            nowhere.message("m.rs", 1),
            "The edit: the old text is not in 'm.rs', even allowing for whitespace, look-alikes and \
             escapes. Nothing was changed.\nCopy the old text from the file as it is now."
        );
    }

    #[test]
    fn edits_apply_in_order_and_overlaps_name_both() {
        let done = run("a b c\n", &[edit("a", "x"), edit("x b", "y")]);
        assert_eq!(done.unwrap_err(), EditError::Overlap { index: 1, other: 0 });
        let done = run("a b c\n", &[edit("a", "x"), edit("c", "z")]).unwrap();
        assert_eq!(done.text, "x b z\n");
        let err = run("a b\n", &[edit("a b", "q"), edit("a", "r")]).unwrap_err();
        assert!(
            matches!(err, EditError::NotFound { consumed: true, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn empty_or_unchanging_edits_are_refused() {
        assert_eq!(
            run("a", &[edit("", "b")]).unwrap_err(),
            EditError::EmptyOld(0)
        );
        assert_eq!(run("a", &[edit("a", "a")]).unwrap_err(), EditError::Same(0));
    }

    fn repaired(text: &str, old: &str, new: &str) -> (String, Tolerance, Vec<Repair>) {
        let mut done = run(text, &[edit(old, new)]).unwrap();
        let m = done.matches.remove(0);
        (done.text, m.tolerance, m.repairs)
    }

    #[test]
    fn a_new_text_without_the_old_texts_last_break_joins_no_lines() {
        let (text, _, repairs) = repaired("a\nb\nc\n", "b\n", "B");
        assert_eq!(text, "a\nB\nc\n");
        assert_eq!(repairs, [Repair::LineBreakAtEnd]);
        let (text, _, _) = repaired("x = f(1); y\n", "f(1)", "f(2)\n");
        assert_eq!(text, "x = f(2); y\n", "nor splits one");
        // At the end of the file nothing is split: a final break is added.
        let (text, _, repairs) = repaired("a\n#endif", "#endif", "#endif\n");
        assert_eq!((text.as_str(), repairs), ("a\n#endif\n", vec![]));
        // The fast path too, with several edits.
        let done = run(
            "a\nb\nc\nd\ne\nf\ng\nh\n",
            &[edit("b\n", "B"), edit("g\n", "G")],
        )
        .unwrap();
        assert_eq!(done.text, "a\nB\nc\nd\ne\nf\nG\nh\n");
    }

    #[test]
    fn viewer_line_numbers_are_taken_off_when_every_line_has_one() {
        let file = "def f():\n    x = 1\n    return x\n";
        let (text, how, repairs) = repaired(
            file,
            "     2\t    x = 1\n     3\t    return x\n",
            "     2\t    x = 2\n     3\t    return x\n",
        );
        assert_eq!(text, "def f():\n    x = 2\n    return x\n");
        assert_eq!(
            (how, repairs),
            (Tolerance::Exact, vec![Repair::LineNumbers])
        );
        let (text, _, _) = repaired(file, "     2→    x = 1\n", "    x = 3\n");
        assert_eq!(text, "def f():\n    x = 3\n    return x\n");
    }

    #[test]
    fn json_escaped_texts_are_read_once_only_when_the_file_lacks_them() {
        let file = "if (a) {\n\tputs(\"x\");\n}\n";
        let (text, _, repairs) = repaired(
            file,
            r#"if (a) {\n\tputs(\"x\");\n}"#,
            r#"if (a) {\n\tputs(\"y\");\n}"#,
        );
        assert_eq!(text, "if (a) {\n\tputs(\"y\");\n}\n");
        assert_eq!(repairs, [Repair::JsonEscapes]);
        // Escapes the file has are the file's text.
        let (text, _, repairs) = repaired("s = \"a\\n\"\n", "\"a\\n\"", "\"b\\n\"");
        assert_eq!((text.as_str(), repairs), ("s = \"b\\n\"\n", vec![]));
    }

    #[test]
    fn html_entities_and_blank_ends_are_repaired() {
        let (text, _, repairs) = repaired(
            "if a < b && c:\n    go()\n",
            "if a &lt; b &amp;&amp; c:\n",
            "if a &lt;= b:\n",
        );
        assert_eq!(
            (text.as_str(), repairs),
            ("if a <= b:\n    go()\n", vec![Repair::HtmlEntities])
        );
        let (text, _, repairs) = repaired("a\nb\nc\n", "b\n\n", "B\n\n");
        assert_eq!(
            (text.as_str(), repairs),
            ("a\nB\nc\n", vec![Repair::BlankEnds])
        );
    }

    #[test]
    fn invisible_characters_and_unicode_spaces_are_ignored_and_not_written() {
        let file = "fn main() {\n    let total = 1;\n}\n";
        let (text, how, _) = repaired(
            file,
            "    let tot\u{200B}al = 1;\n",
            "    let tot\u{200B}al = 2;\n",
        );
        assert_eq!(text, "fn main() {\n    let total = 2;\n}\n");
        assert_eq!(how, Tolerance::LookAlikes);
        let (text, _, _) = repaired(
            file,
            "\u{A0}\u{A0}\u{A0}\u{A0}let total = 1;\n}\n",
            "\u{A0}\u{A0}\u{A0}\u{A0}let total = 3;\n}\n",
        );
        assert_eq!(text, "fn main() {\n    let total = 3;\n}\n");
        // Tabs stay tabs around them.
        let file = "class A:\n\tdef send(self):\n\t\tpass\n";
        let (text, _, _) = repaired(
            file,
            "\u{FEFF}\tdef se\u{200B}nd(self):\n\t\tpass\n",
            "\tdef send(self):\n\t\treturn 1\n",
        );
        assert_eq!(text, "class A:\n\tdef send(self):\n\t\treturn 1\n");
    }

    #[test]
    fn of_look_alike_places_the_one_at_the_old_texts_own_indentation_is_taken() {
        let file = "a:\n    say(\u{201C}x\u{201D})\nb:\n        say(\u{201C}x\u{201D})\n";
        let (text, how, _) = repaired(file, "    say(\"x\")\n", "    say(\"y\")\n");
        assert_eq!(
            text,
            "a:\n    say(\"y\")\nb:\n        say(\u{201C}x\u{201D})\n"
        );
        assert_eq!(how, Tolerance::LookAlikes);
    }

    #[test]
    fn an_old_text_without_indentation_among_look_alike_places_is_ambiguous() {
        let file = "say(\u{201C}x\u{201D})\ndef f():\n    say(\u{201C}x\u{201D})\n";
        let err = run(file, &[edit("say(\"x\")", "say(\"y\")")]).unwrap_err();
        assert!(
            matches!(&err, EditError::Ambiguous { lines, .. } if *lines == vec![1, 3]),
            "{err:?}"
        );
    }

    #[test]
    fn repairs_that_said_where_a_line_starts_do_not_land_inside_one() {
        let err = run("barfoo = 1\n", &[edit("\nfoo = 1", "\nfoo = 2")]).unwrap_err();
        assert!(matches!(err, EditError::NotFound { .. }), "{err:?}");
        let err = run(
            "discount = 0\n",
            &[edit("     3\tcount = 0\n", "     3\tcount = 1\n")],
        )
        .unwrap_err();
        assert!(matches!(err, EditError::NotFound { .. }), "{err:?}");
    }

    #[test]
    fn a_blank_end_is_not_taken_off_past_a_line_the_old_text_skipped() {
        // The old text left out `b`, which the new text keeps.
        let err = run("a\nb\n\nc\n", &[edit("a\n\n", "a2\nb\n\n")]).unwrap_err();
        assert!(matches!(err, EditError::NotFound { .. }), "{err:?}");
    }

    #[test]
    fn invisible_characters_the_model_means_are_written() {
        // A curly quote sends the edit to the look-alike rung; the joiners
        // of the family emoji are the model's, not a slip.
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}";
        let (text, how, _) = repaired(
            "say(\u{201C}x\u{201D})\n",
            "say(\"x\")\n",
            &format!("say(\"{family}\")\n"),
        );
        assert_eq!(text, format!("say(\"{family}\")\n"));
        assert_eq!(how, Tolerance::LookAlikes);
    }

    #[test]
    fn an_ellipsis_the_file_has_is_no_gap() {
        let file = "def f():\n    ...\n\ndef g():\n    pass\n";
        let err = run(file, &[edit("def f():\n    ...\n    x = 1\n", "y\n")]).unwrap_err();
        assert!(
            matches!(err, EditError::NotFound { gap: None, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn a_blank_first_line_is_not_the_end_of_a_line_with_text() {
        // The old text's first line is blank (with spaces); the file's line
        // before the meant place is not: no place on any rung.
        let file = "a\n  \n  b {\n    c\n";
        let err = run(file, &[edit("  \n    c\n", "    d\n")]).unwrap_err();
        assert!(matches!(err, EditError::NotFound { .. }), "{err:?}");
    }

    #[test]
    fn an_exact_place_inside_a_line_with_whole_lines_elsewhere_is_refused() {
        // The meant line has a trailing space the model did not copy.
        let file = "discount = 0\nx = 1\n    count = 0 \n";
        let err = run(file, &[edit("count = 0\n", "count = 1\n")]).unwrap_err();
        assert_eq!(
            err,
            EditError::Disagree {
                index: 0,
                exact: 1,
                other: 3
            }
        );
        assert!(
            err.message("f", 1).contains("inside line 1"),
            "{}",
            err.message("f", 1)
        );
        // Inside a line and nowhere else whole: applied.
        let (text, _, _) = repaired("x = f(1)\n", "f(1)", "f(2)");
        assert_eq!(text, "x = f(2)\n");
    }

    #[test]
    fn an_elided_old_text_is_refused_with_the_region_around_the_gap() {
        let file = "fn a() {\n    one();\n    two();\n    three();\n}\nfn b() {}\n";
        let err = run(
            file,
            &[edit("fn a() {\n    one();\n    // ...\n}\n", "fn a() {}\n")],
        )
        .unwrap_err();
        let EditError::NotFound {
            gap: Some(2),
            closest: Some(c),
            ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!((c.first_line, c.last_line), (1, 5));
        let text = err.message("f.rs", 1);
        assert!(
            text.contains("leaves lines out at its line 3") && text.contains("lines 1-5"),
            "{text}"
        );
    }

    proptest::proptest! {
        /// Whatever the file and the slip, an edit lands where the old
        /// text truly is, or nowhere.
        #[test]
        fn an_edit_never_lands_in_a_wrong_place(
            lines in proptest::collection::vec("[ \t]{0,3}[abc\u{201C}\"-]{0,3}[ ]{0,2}", 1..12),
            from in 0usize..12,
            len in 1usize..4,
        ) {
            let file = lines.join("\n") + "\n";
            let from = from % lines.len();
            let to = (from + len).min(lines.len());
            let old: String = lines[from..to].iter().map(|l| format!("{}\n", l.trim())).collect();
            if let Ok(done) = run(&file, &[edit(&old, "MARK\n")]) {
                // The replaced region, read back from the result.
                let mark = done.text.find("MARK").unwrap();
                let tolerance = done.matches[0].tolerance;
                // On the indentation rungs the mark was indented the file's way.
                let start = if tolerance >= Tolerance::Indentation {
                    done.text[..mark].rfind('\n').map_or(0, |n| n + 1)
                } else {
                    mark
                };
                let end = file.len() - (done.text.len() - mark - "MARK\n".len());
                proptest::prop_assert_eq!(&done.text[..start], &file[..start]);
                // The old text as the repairs that found it left it.
                let mut old = old.clone();
                for r in &done.matches[0].repairs {
                    if let Some((o, _)) = r.apply(&old, "MARK\n") {
                        old = o;
                    }
                }
                let form = |s: &str| Form::of(s, tolerance).text;
                proptest::prop_assert_eq!(form(&file[start..end]), form(&old), "{:?}", tolerance);
            }
        }
    }
}
