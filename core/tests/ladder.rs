//! The matching ladder's second round against real edits in four languages
//! (`core/tests/ladder/SOURCES.md`), perturbed the
//! ways models err, side by side with the peers' matchers (ported in
//! `matchers/`). `BENCHMARKS.md#edits-as-models-send-them` has the table
//! this prints.
//!
//! Every family runs twice: on the file as it is, and on the file with a
//! twin of the edit's region next to it (after or before), the twin differing
//! from the region in one line only — the line the perturbation touches
//! when it touches one — so that landing on the twin is a wrong place.
//!
//! The test fails if the ladder ever changes a wrong place, applies fewer
//! than 80% of the edits that should apply, joins or splits a line at an
//! edit's end, names the wrong lines in more than 5% of its refusals, or
//! falls behind any peer in any family.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;
use write_tool_core::edit::{self, Edit, EditError};

mod matchers;
use matchers::{Apply, codex_seek, exact_rule, gemini_replace, mcp_edit_file};

/// One edit of the corpus.
struct Source {
    language: String,
    file: String,
    at: usize,
    old: String,
    new: String,
}

/// One edit, perturbed.
struct Case {
    file: String,
    old: String,
    new: String,
    /// The file as it should be; `None` when no tool should apply it.
    expected: Option<String>,
    /// The region the edit replaces: first and last line, from 1.
    lines: (usize, usize),
    /// Where it lies in the file with `\n` breaks: start and end.
    region: (usize, usize),
    /// The edit's own old text is in the file more than once: only a
    /// guess applies it, right or wrong.
    ambiguous: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// The file is exactly as it should be.
    Correct,
    /// Changed only where it should, but not as it should.
    RightPlaceInexact,
    /// Refused: nothing changed.
    Refused,
    /// Changed somewhere it should not have.
    WrongPlace,
}

/// The families, and whether their edits should apply.
const FAMILIES: [(&str, bool); 20] = [
    ("as given", true),
    ("CRLF file", true),
    ("trailing spaces", true),
    ("tabs for spaces", true),
    ("lost indentation", true),
    ("curly quotes", true),
    ("cat -n numbers", true),
    ("arrow numbers", true),
    ("new text without final newline", true),
    ("old text without final newline", true),
    ("JSON-escaped", true),
    ("HTML entities", true),
    ("zero-width space", true),
    ("NBSP indentation", true),
    ("byte-order mark", true),
    ("blank line at both ends", true),
    ("mixed tabs and spaces", true),
    ("one wrong line", false),
    ("elided middle", false),
    ("forgotten line", false),
];

const TOOLS: [(&str, Apply); 5] = [
    ("write-tool", ladder),
    ("exact match", exact_rule),
    ("MCP edit_file", mcp_edit_file),
    ("Codex seek_sequence", codex_seek),
    ("gemini-cli replace", gemini_replace),
];

fn corpus() -> Vec<Source> {
    let text = include_str!("ladder/corpus.jsonl");
    let mut files = BTreeMap::new();
    let mut edits = Vec::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).expect("corpus line");
        let field = |k: &str| v[k].as_str().expect("corpus field").to_owned();
        match v["kind"].as_str() {
            Some("file") => {
                files.insert(field("file"), (field("language"), field("text")));
            }
            _ => edits.push((
                field("file"),
                v["at"].as_u64().expect("corpus offset") as usize,
                field("old"),
                field("new"),
            )),
        }
    }
    edits
        .into_iter()
        .map(|(path, at, old, new)| {
            let (language, file) = files[&path].clone();
            Source {
                language,
                file,
                at,
                old,
                new,
            }
        })
        .collect()
}

fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// `f` applied to every line of `text`, line breaks kept.
fn map_lines(text: &str, mut f: impl FnMut(usize, &str) -> String) -> String {
    text.split_inclusive('\n')
        .enumerate()
        .map(|(i, l)| {
            let (body, end) = l.strip_suffix('\n').map_or((l, ""), |b| (b, "\n"));
            format!("{}{end}", f(i, body))
        })
        .collect()
}

/// The index of the old text's line a one-line perturbation touches: its
/// longest.
fn target_line(old: &str) -> usize {
    old.lines()
        .enumerate()
        .max_by_key(|(i, l)| (l.trim().len(), std::cmp::Reverse(*i)))
        .map_or(0, |(i, _)| i)
}

/// The region's twin: the same lines, line `k` changed in one character.
fn twin(old: &str, k: usize) -> Option<String> {
    let mut changed = false;
    let out = map_lines(old, |i, l| {
        if i != k {
            return l.to_owned();
        }
        // The last letter or digit, bumped.
        let Some((at, c)) = l
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_ascii_alphanumeric())
        else {
            return l.to_owned();
        };
        changed = true;
        let bumped = match c {
            'z' => 'a',
            'Z' => 'A',
            '9' => '0',
            c => (c as u8 + 1) as char,
        };
        format!("{}{bumped}{}", &l[..at], &l[at + 1..])
    });
    changed.then_some(out)
}

fn json_escaped(text: &str) -> String {
    let s = serde_json::to_string(text).expect("a string");
    s[1..s.len() - 1].to_owned()
}

fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn comment(language: &str) -> &'static str {
    if language == "python" { "#" } else { "//" }
}

/// The file with every other line of 8 or more leading spaces written with
/// tabs for each 8: a file that mixes the two line by line.
fn mixed(file: &str) -> String {
    map_lines(file, |i, l| {
        let n = indent_of(l).len();
        if i % 2 == 0 && n >= 8 && !indent_of(l).contains('\t') {
            format!("{}{}{}", "\t".repeat(n / 8), " ".repeat(n % 8), &l[n..])
        } else {
            l.to_owned()
        }
    })
}

/// The cases one family makes of an edit (as the file is, and with a
/// twin), if it applies to it.
fn perturb(family: &str, src: &Source, with_twin: bool) -> Option<Case> {
    let (file, at, old, new) = (&src.file, src.at, src.old.as_str(), src.new.as_str());
    let k = target_line(old);
    // The file, with the twin right after the region when asked, or right
    // before it for every other edit (so that a tie broken by position
    // favours neither).
    let (file, at) = if with_twin {
        // A region that ends inside a line has no twin of whole lines.
        if !old.ends_with('\n') {
            return None;
        }
        let twin = twin(old, k)?;
        let end = at + old.len();
        if (at + old.len()) % 2 == 0 {
            (format!("{}{twin}{}", &file[..end], &file[end..]), at)
        } else {
            (
                format!("{}{twin}{}", &file[..at], &file[at..]),
                at + twin.len(),
            )
        }
    } else {
        (file.clone(), at)
    };
    let end = at + old.len();
    let after = file[end..].to_owned();
    let first = file[..at].matches('\n').count() + 1;
    let expected = format!("{}{new}{after}", &file[..at]);
    let mut case = Case {
        file: file.clone(),
        old: old.into(),
        new: new.into(),
        expected: Some(expected.clone()),
        lines: (first, first + old.lines().count() - 1),
        region: (at, end),
        ambiguous: file.matches(old).count() > 1,
    };
    match family {
        "CRLF file" => {
            case.file = file.replace('\n', "\r\n");
            case.expected = Some(expected.replace('\n', "\r\n"));
        }
        "mixed tabs and spaces" => {
            let mixed_file = mixed(&file);
            if mixed_file == file || mixed(old) == old || file.contains('\t') {
                return None;
            }
            // Judged with tabs read as 8 columns: the changed lines may be
            // spelled either way. The region starts a line, so the lines
            // before it are mixed as in the whole file.
            case.file = mixed_file;
            case.region = (mixed(&file[..at]).len(), mixed(&file[..end]).len());
        }
        "one wrong line" | "elided middle" | "forgotten line" => {
            case.old = should_refuse(family, old, k, &src.language)?;
            case.expected = None;
            if file.contains(&case.old) {
                return None;
            }
        }
        _ => (case.old, case.new) = slip(family, old, new, first, k, file.contains('\t'))?,
    }
    Some(case)
}

/// The old and new text as a model sends them with one slip of `family`:
/// `first` is the region's first line, `k` the line a one-line slip
/// touches, `tabs` whether the file has tabs.
fn slip(
    family: &str,
    old: &str,
    new: &str,
    first: usize,
    k: usize,
    tabs: bool,
) -> Option<(String, String)> {
    let numbered =
        |text: &str, mark: &str| map_lines(text, |i, l| format!("{:>6}{mark}{l}", first + i));
    let same = |o: String| Some((o, new.to_owned()));
    match family {
        "as given" => same(old.into()),
        "trailing spaces" => same(map_lines(old, |_, l| {
            if l.trim().is_empty() {
                l.to_owned()
            } else {
                format!("{l}  ")
            }
        })),
        "tabs for spaces" => {
            let to_tabs = |t: &str| {
                map_lines(t, |_, l| {
                    let n = indent_of(l).len();
                    format!("{}{}{}", "\t".repeat(n / 4), " ".repeat(n % 4), &l[n..])
                })
            };
            (!tabs && to_tabs(old) != old).then(|| (to_tabs(old), to_tabs(new)))
        }
        "lost indentation" => lost_indentation(old, new),
        "curly quotes" => {
            let mut open = false;
            let curly: String = old
                .chars()
                .map(|c| {
                    if c != '"' {
                        return c;
                    }
                    open = !open;
                    if open { '\u{201C}' } else { '\u{201D}' }
                })
                .collect();
            (curly != old).then(|| (curly, new.to_owned()))
        }
        "cat -n numbers" => same(numbered(old, "\t")),
        "arrow numbers" => Some((numbered(old, "→"), numbered(new, "→"))),
        // Only where the text then ends inside a line: one ending in a
        // blank line would lose the blank line, not its end.
        "new text without final newline" => {
            let stripped = new
                .strip_suffix('\n')
                .filter(|n| !n.is_empty() && !n.ends_with('\n'))?;
            Some((old.to_owned(), stripped.to_owned()))
        }
        "old text without final newline" => {
            let stripped = old.strip_suffix('\n').filter(|o| !o.ends_with('\n'))?;
            (!new.is_empty()).then(|| (stripped.to_owned(), new.to_owned()))
        }
        "JSON-escaped" => Some((json_escaped(old), json_escaped(new))),
        "HTML entities" => {
            let escaped = html_escaped(old);
            (escaped != old).then(|| (escaped, html_escaped(new)))
        }
        "zero-width space" => same(map_lines(old, |i, l| {
            if i == k && l.len() > 2 {
                let mid = l
                    .char_indices()
                    .nth(l.chars().count() / 2)
                    .map_or(0, |(b, _)| b);
                format!("{}\u{200B}{}", &l[..mid], &l[mid..])
            } else {
                l.to_owned()
            }
        })),
        "NBSP indentation" => {
            let nbsp = |t: &str| {
                map_lines(t, |_, l| {
                    let n = indent_of(l);
                    format!("{}{}", n.replace(' ', "\u{A0}"), &l[n.len()..])
                })
            };
            let indented = old.lines().any(|l| !indent_of(l).is_empty());
            (indented && !old.contains('\t')).then(|| (nbsp(old), nbsp(new)))
        }
        "byte-order mark" => same(format!("\u{FEFF}{old}")),
        "blank line at both ends" => Some((format!("{old}\n"), format!("{new}\n"))),
        _ => unreachable!("{family}"),
    }
}

/// Old and new text with their common indentation gone, when the new text
/// has as much to lose.
fn lost_indentation(old: &str, new: &str) -> Option<(String, String)> {
    let min = |t: &str| {
        t.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| indent_of(l).len())
            .min()
    };
    let m = min(old)?;
    if m == 0 || min(new).unwrap_or(m) < m {
        return None;
    }
    let dedent = |t: &str| map_lines(t, |_, l| l[indent_of(l).len().min(m)..].to_owned());
    Some((dedent(old), dedent(new)))
}

/// The old text of a family no tool should apply: one line wrong, the
/// middle elided, one line forgotten.
fn should_refuse(family: &str, old: &str, k: usize, language: &str) -> Option<String> {
    let all: Vec<&str> = old.split_inclusive('\n').collect();
    match family {
        "one wrong line" => Some(map_lines(old, |i, l| {
            if i == k {
                format!("{}_x", l.trim_end())
            } else {
                l.to_owned()
            }
        })),
        "elided middle" => {
            if all.len() < 4 {
                return None;
            }
            let gap = format!("{}{} ...\n", indent_of(all[1]), comment(language));
            Some(format!("{}{gap}{}", all[0], all[all.len() - 1]))
        }
        "forgotten line" => {
            let drop = (1..all.len().saturating_sub(1)).find(|&i| !all[i].trim().is_empty())?;
            Some(
                all.iter()
                    .enumerate()
                    .filter(|(i, _)| *i != drop)
                    .map(|(_, l)| *l)
                    .collect(),
            )
        }
        _ => unreachable!("{family}"),
    }
}

fn ladder(file: &str, old: &str, new: &str) -> Option<String> {
    edit::apply(file, &[one(old, new)], soon())
        .ok()
        .map(|e| e.text)
}

fn one(old: &str, new: &str) -> Edit {
    Edit::replace(old, new, false)
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(1)
}

/// Tabs read as 8 columns, `\r\n` as `\n`.
fn columns(text: &str) -> String {
    map_lines(&text.replace("\r\n", "\n"), |_, l| {
        let n = indent_of(l);
        let mut col = 0;
        for c in n.chars() {
            col = if c == '\t' {
                (col / 8 + 1) * 8
            } else {
                col + 1
            };
        }
        format!("{}{}", " ".repeat(col), &l[n.len()..])
    })
}

fn judge(family: &str, case: &Case, result: Option<String>) -> Outcome {
    let Some(result) = result else {
        return Outcome::Refused;
    };
    let Some(expected) = case.expected.as_deref() else {
        return Outcome::WrongPlace;
    };
    if expected == result
        || (family == "mixed tabs and spaces" && columns(expected) == columns(&result))
    {
        return Outcome::Correct;
    }
    // A final line break added to a file without one (Codex writes every
    // file with one) changes the format, not the place.
    if result.strip_suffix('\n') == Some(expected) || expected.strip_suffix('\n') == Some(&result) {
        return Outcome::RightPlaceInexact;
    }
    // The region and its surroundings compared with `\n` breaks and tabs
    // read as columns: a tool that rewrites line endings changed the
    // format, not the place.
    let (got, file) = (columns(&result), columns(&case.file));
    let (start, end) = case.region;
    let (file_before, file_after) = {
        let plain = case.file.replace("\r\n", "\n");
        (columns(&plain[..start]), columns(&plain[end..]))
    };
    let _ = file;
    if got.starts_with(&file_before)
        && got.ends_with(&file_after)
        && got.len() >= file_before.len() + file_after.len()
    {
        Outcome::RightPlaceInexact
    } else {
        Outcome::WrongPlace
    }
}

/// A miss of the ladder, for a person tuning it.
fn show(outcome: Outcome, case: &Case, with_twin: bool) -> String {
    let got = ladder(&case.file, &case.old, &case.new);
    let err = edit::apply(&case.file, &[one(&case.old, &case.new)], soon()).err();
    let around = got.map(|g| {
        g.lines()
            .skip(case.lines.0.saturating_sub(2))
            .take(case.lines.1 - case.lines.0 + 4)
            .collect::<Vec<_>>()
            .join("\n")
    });
    format!(
        "--- {outcome:?} twin={with_twin} lines {:?}\nold: {:?}\nnew: {:?}\nerr: {err:?}\n\
         region now: {around:?}",
        case.lines, case.old, case.new
    )
}

/// Whether a refusal names the region: the lines it gives overlap it and
/// lie within two lines of it.
fn names_region(case: &Case, err: &EditError) -> bool {
    let (first, last) = case.lines;
    let near = |l: u64| (l as usize) + 2 >= first && (l as usize) <= last + 2;
    match err {
        EditError::NotFound {
            closest: Some(c), ..
        } => std::iter::once((c.first_line, c.last_line))
            .chain(c.also.iter().copied())
            .any(|(a, b)| a + 2 >= first && b <= last + 2 && a <= last && b >= first),
        EditError::Ambiguous { lines, .. } => lines.iter().any(|&l| near(l)),
        EditError::Disagree { exact, other, .. } => near(*exact) || near(*other),
        _ => false,
    }
}

#[derive(Default)]
struct Tally {
    /// (family, tool, outcome) → count
    counts: BTreeMap<(&'static str, &'static str, Outcome), usize>,
    /// The same over the cases whose old text is in the file once.
    unambiguous: BTreeMap<(&'static str, &'static str, Outcome), usize>,
    ambiguous_cases: usize,
    cases: BTreeMap<&'static str, usize>,
    /// The ladder's wrong places and inexact answers: family and old text.
    wrong: Vec<(&'static str, String)>,
    inexact: Vec<(&'static str, String)>,
    refusals: usize,
    named: usize,
    unnamed: Vec<(&'static str, String)>,
    slowest: Duration,
    /// The misses `LADDER_SHOW` asked for.
    shown: Vec<String>,
    /// Each tool's time over every case.
    time: BTreeMap<&'static str, Duration>,
}

impl Tally {
    /// Every tool on one case.
    fn count(&mut self, family: &'static str, case: &Case, with_twin: bool) {
        *self.cases.entry(family).or_default() += 1;
        self.ambiguous_cases += usize::from(case.ambiguous);
        for (name, tool) in TOOLS {
            let started = Instant::now();
            let outcome = judge(family, case, tool(&case.file, &case.old, &case.new));
            *self.counts.entry((family, name, outcome)).or_default() += 1;
            if !case.ambiguous {
                *self.unambiguous.entry((family, name, outcome)).or_default() += 1;
            }
            *self.time.entry(name).or_default() += started.elapsed();
            if name != "write-tool" {
                continue;
            }
            self.slowest = self.slowest.max(started.elapsed());
            // `LADDER_SHOW=<family>` prints the ladder's misses there.
            if std::env::var("LADDER_SHOW").is_ok_and(|f| f == family)
                && outcome != Outcome::Correct
            {
                self.shown.push(show(outcome, case, with_twin));
            }
            match outcome {
                Outcome::WrongPlace => self.wrong.push((family, case.old.clone())),
                Outcome::RightPlaceInexact => self.inexact.push((family, case.old.clone())),
                Outcome::Refused => {
                    let err = edit::apply(&case.file, &[one(&case.old, &case.new)], soon())
                        .expect_err("refused");
                    self.refusals += 1;
                    if names_region(case, &err) {
                        self.named += 1;
                    } else {
                        self.unnamed.push((family, format!("{err:?}")));
                    }
                }
                Outcome::Correct => {}
            }
        }
    }

    fn get(&self, family: &str, tool: &str, o: Outcome) -> usize {
        self.counts
            .iter()
            .filter(|((f, t, oo), _)| *f == family && *t == tool && *oo == o)
            .map(|(_, n)| n)
            .sum()
    }

    fn clear(&self, family: &str, tool: &str, o: Outcome) -> usize {
        self.unambiguous
            .get(&(family, tool, o))
            .copied()
            .unwrap_or(0)
    }

    fn total(&self, tool: &str, o: Outcome, should: bool) -> usize {
        FAMILIES
            .iter()
            .filter(|(_, s)| *s == should)
            .map(|(f, _)| self.get(f, tool, o))
            .sum()
    }

    fn cases(&self, should: bool) -> usize {
        FAMILIES
            .iter()
            .filter(|(_, s)| *s == should)
            .map(|(f, _)| self.cases.get(f).copied().unwrap_or(0))
            .sum()
    }

    fn table(&self) -> String {
        let mut t = String::from("| family | cases |");
        for (name, _) in TOOLS {
            t.push_str(&format!(" {name} |"));
        }
        t.push_str("\n|---|---|");
        t.push_str(&"---|".repeat(TOOLS.len()));
        t.push('\n');
        for (family, should) in FAMILIES {
            t.push_str(&format!(
                "| {family} | {} |",
                self.cases.get(family).copied().unwrap_or(0)
            ));
            for (name, _) in TOOLS {
                let c = |o| self.get(family, name, o);
                if should {
                    t.push_str(&format!(
                        " {} / {} / {} / {} |",
                        c(Outcome::Correct),
                        c(Outcome::RightPlaceInexact),
                        c(Outcome::Refused),
                        c(Outcome::WrongPlace)
                    ));
                } else {
                    t.push_str(&format!(
                        " refused {} / wrong {} |",
                        c(Outcome::Refused),
                        c(Outcome::WrongPlace) + c(Outcome::RightPlaceInexact)
                    ));
                }
            }
            t.push('\n');
        }
        let should = self.cases(true);
        t.push_str(&format!(
            "\nApplied at the right place, exactly as meant, on the first try, over the {should} \
             cases that should apply:"
        ));
        for (name, _) in TOOLS {
            let wrong = self.total(name, Outcome::WrongPlace, true)
                + self.total(name, Outcome::WrongPlace, false)
                + self.total(name, Outcome::RightPlaceInexact, false);
            t.push_str(&format!(
                " {name} {:.1}% (wrong places {wrong});",
                100.0 * self.total(name, Outcome::Correct, true) as f64 / should as f64
            ));
        }
        t.push_str(&format!(
            "\nCases whose edit's own old text is in the file more than once (only a guess \
             applies them): {}.",
            self.ambiguous_cases
        ));
        let mut missed: BTreeMap<&str, usize> = BTreeMap::new();
        for (family, _) in &self.unnamed {
            *missed.entry(family).or_default() += 1;
        }
        t.push_str(&format!(
            "\nwrite-tool's refusals naming the edit's lines: {} of {} ({:.1}%); the others by \
             family: {missed:?}.\n",
            self.named,
            self.refusals,
            100.0 * self.named as f64 / self.refusals.max(1) as f64
        ));
        t
    }
}

#[test]
fn the_second_round_applies_four_in_five_real_imperfect_edits_and_never_in_a_wrong_place() {
    let sources = corpus();
    assert!(sources.len() >= 150, "corpus has {} edits", sources.len());
    let mut tally = Tally::default();
    for (family, _) in FAMILIES {
        for with_twin in [false, true] {
            for src in &sources {
                // A perturbation that makes the old and new text one is no
                // edit.
                let Some(case) = perturb(family, src, with_twin).filter(|c| c.old != c.new) else {
                    continue;
                };
                tally.count(family, &case, with_twin);
            }
        }
    }
    for miss in &tally.shown {
        println!("{miss}");
    }
    let table = tally.table();
    println!(
        "{table}\nslowest ladder call: {:?}; time per tool: {:?}",
        tally.slowest, tally.time
    );
    assert!(
        tally.wrong.is_empty(),
        "wrong places: {:#?}\n{table}",
        tally.wrong
    );
    let should = tally.cases(true);
    let mine = tally.total("write-tool", Outcome::Correct, true);
    assert!(mine * 100 >= should * 80, "{table}");
    // Each family of slips applied at least 85% as meant (93-99% when
    // measured, mixed tabs and spaces and tabs for spaces 89-90%): losing
    // any one repair or rung fails here, not only in the total.
    for (family, should) in FAMILIES {
        let cases = tally.cases.get(family).copied().unwrap_or(0);
        if should {
            assert!(
                tally.get(family, "write-tool", Outcome::Correct) * 100 >= cases * 85,
                "{family}\n{table}"
            );
        }
    }
    // No line joined or split at an edit's end.
    for family in [
        "new text without final newline",
        "old text without final newline",
    ] {
        assert_eq!(
            tally.get(family, "write-tool", Outcome::RightPlaceInexact),
            0,
            "{table}"
        );
    }
    assert!(
        tally.named * 100 >= tally.refusals * 95,
        "unnamed: {:#?}\n{table}",
        &tally.unnamed[..tally.unnamed.len().min(10)]
    );
    // Ahead of (or level with) every peer in every family: more applied
    // as meant where the edit's own old text is in the file once (where
    // it is there twice, a peer that takes the first place is right only
    // by luck), and no more wrong places anywhere.
    for (family, should) in FAMILIES {
        for (name, _) in &TOOLS[1..] {
            if should {
                assert!(
                    tally.clear(family, "write-tool", Outcome::Correct)
                        >= tally.clear(family, name, Outcome::Correct),
                    "{family}: {name}\n{table}"
                );
            }
            assert!(
                tally.get(family, "write-tool", Outcome::WrongPlace)
                    <= tally.get(family, name, Outcome::WrongPlace),
                "{family}: {name}\n{table}"
            );
        }
    }
}
