//! The line operations of a diff: exactly the ones `similar`'s
//! `TextDiff::diff_lines` with Myers gives, for a fraction of the work.
//!
//! `similar` (3.2.1, pinned) does four things for a line diff, and this
//! module does each more cheaply while handing the search itself to
//! `similar` (BENCHMARKS.md#the-diff):
//!
//! 1. **Split the lines** ([`super::lines()`]).
//! 2. **Number the lines** so that the search compares integers
//!    ([`super::numbering`]).
//! 3. **Reduce** before the search ([`super::preflight`]).
//! 4. **Search** with `similar`'s Myers, ported to count its work
//!    ([`super::myers`]), and clean up the result with `similar`'s own
//!    `Compact` and `Replace` hooks (here).
//!
//! The tests hold the result to `TextDiff`'s operations on inputs large
//! enough to be reduced and to take the search's shortcuts; an upgrade of
//! `similar` that changed any of this would fail them.

use std::convert::Infallible;

use similar::DiffOp;
use similar::algorithms::{Capture, Compact, DiffHook, Replace};

use super::limits::Budget;
use super::lines::same_bytes;
use super::myers::search;
use super::numbering::{NotNumbered, Numbered};
use super::preflight::{reduce_for_myers, search_reduced};

/// The Myers operations between two lists of lines, as
/// `similar::capture_diff(Algorithm::Myers, ..)` gives them while the
/// `budget` lasts, and whether they are coarse: the budget ran out, or the
/// lines could not be numbered for what the numbering may spend.
pub(super) fn line_ops(old: &[&str], new: &[&str], budget: &mut Budget) -> (Vec<DiffOp>, bool) {
    let (prefix, suffix) = common_ends(old, new);
    let old_middle = &old[prefix..old.len() - suffix];
    let new_middle = &new[prefix..new.len() - suffix];

    let mut d = Compact::new(Replace::new(Capture::new()), old, new);
    let mut flooded = false;
    let Ok(()) = (|| -> Result<(), Infallible> {
        if prefix > 0 {
            d.equal(0, 0, prefix)?;
        }
        let mut middle = Shift {
            d: &mut d,
            by: prefix,
        };
        let reduced = Numbered::new(old_middle, new_middle, budget).and_then(|numbered| {
            let reduced = reduce_for_myers(&numbered, budget)?;
            Ok((numbered, reduced))
        });
        match reduced {
            Ok((numbered, Some(reduced))) => {
                search_reduced(&mut middle, &numbered, &reduced, budget)?;
            }
            Ok((numbered, None)) => search(&mut middle, &numbered.old, &numbered.new, budget)?,
            // Search the lines themselves (more distinct lines than a
            // `u32` numbers, which no file within the size limits has).
            Err(NotNumbered::TooMany) => search(&mut middle, old_middle, new_middle, budget)?,
            // What the search gives for what is left when its budget is
            // spent: all of it deleted and inserted.
            Err(NotNumbered::OutOfBudget | NotNumbered::Flooded) => {
                flooded = true;
                middle.delete(0, old_middle.len(), 0)?;
                middle.insert(old_middle.len(), 0, new_middle.len())?;
            }
        }
        if suffix > 0 {
            d.equal(old.len() - suffix, new.len() - suffix, suffix)?;
        }
        d.finish()
    })();
    let coarse = flooded || budget.exhausted();
    (d.into_inner().into_inner().into_ops(), coarse)
}

/// How many lines `old` and `new` share at the start, and then at the end
/// of what is left.
fn common_ends(old: &[&str], new: &[&str]) -> (usize, usize) {
    let same = |(o, n): &(&&str, &&str)| same_bytes(o.as_bytes(), n.as_bytes());
    let prefix = old.iter().zip(new).take_while(same).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(same)
        .count();
    (prefix, suffix)
}

/// Passes operations on the middle lines on at their place among all
/// lines, and holds back `finish` (the common suffix comes after).
struct Shift<D> {
    d: D,
    by: usize,
}

impl<D: DiffHook> DiffHook for Shift<D> {
    type Error = D::Error;

    fn equal(&mut self, old_index: usize, new_index: usize, len: usize) -> Result<(), D::Error> {
        self.d.equal(old_index + self.by, new_index + self.by, len)
    }

    fn delete(
        &mut self,
        old_index: usize,
        old_len: usize,
        new_index: usize,
    ) -> Result<(), D::Error> {
        self.d
            .delete(old_index + self.by, old_len, new_index + self.by)
    }

    fn insert(
        &mut self,
        old_index: usize,
        new_index: usize,
        new_len: usize,
    ) -> Result<(), D::Error> {
        self.d
            .insert(old_index + self.by, new_index + self.by, new_len)
    }

    fn replace(
        &mut self,
        old_index: usize,
        old_len: usize,
        new_index: usize,
        new_len: usize,
    ) -> Result<(), D::Error> {
        self.d
            .replace(old_index + self.by, old_len, new_index + self.by, new_len)
    }

    fn finish(&mut self) -> Result<(), D::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::lines::lines;
    use crate::diff::preflight::reduce_for_myers;
    use proptest::prelude::*;
    use similar::Algorithm;

    /// What `TextDiff` gives: the operations these must equal.
    fn text_diff_ops(old: &str, new: &str) -> Vec<DiffOp> {
        similar::TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .diff_lines(old, new)
            .ops()
            .to_vec()
    }

    fn ops(old: &str, new: &str) -> Vec<DiffOp> {
        let (ops, coarse) = line_ops(&lines(old), &lines(new), &mut Budget::new(u64::MAX));
        assert!(!coarse);
        ops
    }

    /// Whether the middle lines of `old` and `new` get reduced.
    fn reduces(old: &str, new: &str) -> bool {
        let (old, new) = (lines(old), lines(new));
        let (prefix, suffix) = common_ends(&old, &new);
        let budget = &mut Budget::new(u64::MAX);
        let numbered = Numbered::new(
            &old[prefix..old.len() - suffix],
            &new[prefix..new.len() - suffix],
            budget,
        )
        .expect("few lines");
        reduce_for_myers(&numbered, budget)
            .expect("budget enough")
            .is_some()
    }

    /// A text of `tokens`: below 4 a frequent line, else a numbered one
    /// (which may repeat), framed by a first and last line of its own so
    /// that `similar` looks for lines to set aside.
    fn text(side: &str, tokens: &[u16]) -> String {
        let mut text = format!("{side} head\n");
        for &token in tokens {
            match token {
                0 => text.push_str("}\n"),
                1 => text.push('\n'),
                2 => text.push_str("    {\n"),
                3 => text.push_str("        return;\n"),
                n => text.push_str(&format!("line {n}\n")),
            }
        }
        text.push_str(&format!("{side} tail\n"));
        text
    }

    /// `tokens` with `edits` applied: at `at`, remove `remove` tokens and
    /// put `block` in their place.
    fn edited(tokens: &[u16], edits: &[(usize, usize, Vec<u16>)]) -> Vec<u16> {
        let mut tokens = tokens.to_vec();
        for (at, remove, block) in edits {
            let at = at % (tokens.len() + 1);
            let end = (at + remove).min(tokens.len());
            tokens.splice(at..end, block.iter().copied());
        }
        tokens
    }

    /// Numbered lines, some of them frequent (4 lines, each about 40
    /// times in 850) and some about as frequent as the limit at which the
    /// reduction starts to investigate them (8 lines, each about 30 times).
    fn token() -> impl Strategy<Value = u16> {
        prop_oneof![2 => 0u16..4, 3 => 4u16..12, 5 => 12u16..3_000]
    }

    /// A block written in place of old lines: lines the old text does not
    /// have, among frequent ones, so that the reduction sets the new lines
    /// aside and has to decide about the frequent ones between them.
    fn block() -> impl Strategy<Value = Vec<u16>> {
        proptest::collection::vec(prop_oneof![1 => 0u16..4, 3 => 3_000u16..9_000], 0..60)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Inputs large enough for the reduction, with frequent lines that
        /// the reduction must investigate: the same operations as
        /// `TextDiff`.
        #[test]
        fn reduced_inputs_give_text_diffs_ops(
            // At most 8 × 24 lines removed: both sides stay above the
            // 512 lines below which nothing is reduced.
            tokens in proptest::collection::vec(token(), 720..1_000),
            edits in proptest::collection::vec((0usize..1_000, 0usize..24, block()), 1..8),
        ) {
            let (old, new) = (text("old", &tokens), text("new", &edited(&tokens, &edits)));
            prop_assert!(reduces(&old, &new));
            prop_assert_eq!(ops(&old, &new), text_diff_ops(&old, &new));
        }
    }

    #[test]
    fn a_long_common_prefix_and_suffix_are_not_numbered() {
        let body: String = (0..2_000).map(|i| format!("line {i}\n")).collect();
        let old = format!("{body}old\n{body}");
        let new = format!("{body}new\nnewer\n{body}");
        assert_eq!(ops(&old, &new), text_diff_ops(&old, &new));
        let (old, new) = (lines(&old), lines(&new));
        let numbered = Numbered::new(
            &old[2_000..2_001],
            &new[2_000..2_002],
            &mut Budget::new(u64::MAX),
        )
        .expect("numbered");
        assert_eq!((numbered.old.len(), numbered.new.len()), (1, 2));
    }

    #[test]
    fn one_side_empty() {
        for (old, new) in [
            ("", "a\nb\n"),
            ("a\nb\n", ""),
            ("x\n", "x\na\nb\n"),
            ("x\na\n", "x\n"),
        ] {
            assert_eq!(ops(old, new), text_diff_ops(old, new), "{old:?} {new:?}");
        }
    }

    /// One side empty between the common ends: nothing to number or search,
    /// so no budget is needed.
    #[test]
    fn lines_only_added_need_no_budget() {
        let mut new = vec!["a\n"];
        new.extend(std::iter::repeat_n("x\n", 600));
        let (ops, coarse) = line_ops(&["a\n"], &new, &mut Budget::new(0));
        assert!(!coarse);
        assert_eq!(
            ops,
            [
                DiffOp::Equal {
                    old_index: 0,
                    new_index: 0,
                    len: 1
                },
                DiffOp::Insert {
                    old_index: 1,
                    new_index: 1,
                    new_len: 600
                },
            ]
        );
    }

    /// The reduction reads around frequent lines: it is charged for that,
    /// and stops when the budget runs out.
    #[test]
    fn the_reduction_is_charged_to_the_budget() {
        let old = text(
            "old",
            &(0..900)
                .map(|i| [0, 5_000 + i][i as usize % 2])
                .collect::<Vec<_>>(),
        );
        let new = text(
            "new",
            &(0..900)
                .map(|i| [0, 9_000 + i][i as usize % 2])
                .collect::<Vec<_>>(),
        );
        let (old, new) = (lines(&old), lines(&new));
        let numbered = Numbered::new(&old, &new, &mut Budget::new(u64::MAX)).expect("numbered");
        let mut unlimited = Budget::new(u64::MAX);
        assert!(
            reduce_for_myers(&numbered, &mut unlimited)
                .expect("budget enough")
                .is_some()
        );
        let needed = u64::MAX - unlimited.left();
        assert!(needed > 2 * 902, "a step a line and the reads: {needed}");
        let mut short = Budget::new(needed - 1);
        assert!(reduce_for_myers(&numbered, &mut short).is_err());
        assert!(short.exhausted());
    }

    #[test]
    fn no_budget_gives_the_coarse_diff() {
        let (old, new) = (
            ["same\n", "a\n", "b\n", "c\n", "end\n"],
            ["same\n", "c\n", "a\n", "b\n", "x\n", "end\n"],
        );
        let (ops, coarse) = line_ops(&old, &new, &mut Budget::new(0));
        assert!(coarse);
        assert_eq!(
            ops,
            [
                DiffOp::Equal {
                    old_index: 0,
                    new_index: 0,
                    len: 1
                },
                DiffOp::Replace {
                    old_index: 1,
                    old_len: 3,
                    new_index: 1,
                    new_len: 4
                },
                DiffOp::Equal {
                    old_index: 4,
                    new_index: 5,
                    len: 1
                },
            ]
        );
    }
}
