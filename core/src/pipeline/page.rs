//! What `view` shows, as text (`docs/contract.md#view`): a file's lines
//! numbered as `cat -n` numbers them, which is the form models are trained
//! to read and to quote back, and a directory's entries — each bounded so
//! that one answer stays well inside what a client puts before a model.

/// Most lines one answer shows (Claude Code's `Read` shows as many).
pub(super) const MAX_LINES: u64 = 2_000;
/// Most characters of numbered lines one answer shows: under the 40,000
/// of an MCP text block (`host/src/mcp/tools.rs`), so that nothing cuts
/// the answer but the tool, which says where to go on.
pub(super) const MAX_CHARS: usize = 32_000;
/// Most characters shown of one line; a longer one is cut with a mark.
pub(super) const MAX_LINE_CHARS: usize = 2_000;
/// Most entries of a directory one answer lists.
pub(super) const MAX_ENTRIES: usize = 1_000;

/// One page of a file's lines.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Page {
    /// The numbered lines, each ending in `\n`.
    pub(super) body: String,
    /// The first and last line shown; `None` when none was.
    pub(super) lines: Option<[u64; 2]>,
    /// The file's lines.
    pub(super) total: u64,
    /// The first line asked for and not shown, when the page stopped short.
    pub(super) next: Option<u64>,
    /// The last line asked for (the file's last when the range ran past it).
    pub(super) until: u64,
}

/// The range starts after the file's last line.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct PastEnd {
    /// The file's lines.
    pub(super) total: u64,
}

/// How many lines `text` has: a last line without a line break counts.
pub(super) fn count_lines(text: &str) -> u64 {
    let breaks = text.bytes().filter(|&b| b == b'\n').count() as u64;
    breaks + u64::from(!text.is_empty() && !text.ends_with('\n'))
}

/// Lines `first` to `last` (to the end when `None`) of `text`, numbered,
/// at most [`MAX_LINES`] and [`MAX_CHARS`]. A line's ending is not shown
/// (the answer names the file's), nor a line's characters past
/// [`MAX_LINE_CHARS`].
pub(super) fn number(text: &str, first: u64, last: Option<u64>) -> Result<Page, PastEnd> {
    let total = count_lines(text);
    if first > total && total > 0 {
        return Err(PastEnd { total });
    }
    let until = last.map_or(total, |last| last.min(total));
    let mut body = String::new();
    let mut chars = 0;
    let mut shown = None;
    let mut next = None;
    for (n, line) in (1..)
        .zip(text.split('\n'))
        .take(usize::try_from(until).unwrap_or(usize::MAX))
    {
        if n < first {
            continue;
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        let numbered = numbered(n, line);
        let len = rendered_len(&numbered);
        let count = shown.map_or(0, |[from, _]: [u64; 2]| n - from);
        if shown.is_some() && (count >= MAX_LINES || chars + len > MAX_CHARS) {
            next = Some(n);
            break;
        }
        chars += len;
        body.push_str(&numbered);
        shown = Some([shown.map_or(n, |[from, _]| from), n]);
    }
    Ok(Page {
        body,
        lines: shown,
        total,
        next,
        until,
    })
}

/// How many characters `text` takes where it is shown escaped: as JSON
/// (a quote, a backslash or a tab in two, a control in six) or in an MCP
/// text block (a character a terminal would act on as `\u{…}`, up to ten),
/// whichever is longer. A page is bounded by this, not by its characters,
/// so that a file of control characters cannot make an answer larger.
fn rendered_len(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '\n' => 1,
            '"' | '\\' | '\t' => 2,
            c if write_tool_wire::printable::unprintable(c) => 10,
            _ => 1,
        })
        .sum()
}

/// Whether `c` is a control a terminal acts on (C0 but the tab, DEL, C1):
/// shown escaped in a view.
fn is_control(c: char) -> bool {
    c.is_control() && c != '\t'
}

/// One line as `cat -n` shows it: the number right-aligned in six columns,
/// a tab, the line (cut past [`MAX_LINE_CHARS`], with a mark that says by
/// how much). A control character (ESC, an OSC sequence's BEL, DEL, C1) is
/// shown as `\u{…}`, as every surface that hands text on to be printed
/// shows it: the file's bytes must not drive the terminal of whoever reads
/// the view. Only controls: joiners, soft hyphens and marks that ordinary
/// text holds (an emoji's ZWJ, Persian's ZWNJ) are shown as they are, so
/// that a view of them can be quoted back to an edit.
fn numbered(n: u64, line: &str) -> String {
    let shown = |line: &str| write_tool_wire::printable::escaped(line, is_control);
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => format!("{n:>6}\t{}\n", shown(line)),
        Some((at, _)) => {
            let more = line[at..].chars().count();
            format!(
                "{n:>6}\t{}… [{more} more characters on this line]\n",
                shown(&line[..at])
            )
        }
    }
}

/// The last line of a page that stopped short: which lines are left and
/// the two ways to ask for them.
pub(super) fn more(page: &Page) -> Option<String> {
    let next = page.next?;
    let end = if page.until == page.total {
        "-1".to_owned()
    } else {
        page.until.to_string()
    };
    Some(format!(
        "(Lines {next}-{} not shown, to keep the answer short: view_range [{next}, {end}] or \
         offset {next} shows them.)",
        page.until
    ))
}

/// A directory's page as it fills: its own entries, each with its
/// children, one line each (a directory's with a final `/`), at most
/// [`MAX_ENTRIES`] lines and [`MAX_CHARS`].
#[derive(Debug, Default)]
pub(super) struct Entries {
    /// The lines taken, each ending in `\n`.
    body: String,
    lines: usize,
    /// The first own entry not shown, when the page stopped before the
    /// last one asked for.
    pub(super) next: Option<u64>,
    /// The entry that alone overflowed the page, and how many of its
    /// children were left out.
    pub(super) inside: Option<(String, usize)>,
}

impl Entries {
    /// Take own entry number `at` with its children (`group`, the entry's
    /// own line first) if it fits; `false` when the page is full, which
    /// it then ends before `at`. An entry that alone does not fit is cut
    /// after the lines that do.
    pub(super) fn take(&mut self, group: Vec<String>, at: u64) -> bool {
        let size: usize = group.iter().map(|e| e.len() + 1).sum();
        let fits = |lines: usize, chars: usize| lines <= MAX_ENTRIES && chars <= MAX_CHARS;
        if fits(self.lines + group.len(), self.body.len() + size) {
            self.push_all(group);
            return true;
        }
        if self.lines > 0 {
            self.next = Some(at);
            return false;
        }
        let name = group.first().cloned().unwrap_or_default();
        let mut left = group.len();
        for line in group {
            // The entry's own line always: a page shows at least one entry.
            if self.lines > 0 && !fits(self.lines + 1, self.body.len() + line.len() + 1) {
                break;
            }
            self.push_all([line]);
            left -= 1;
        }
        self.inside = Some((name, left));
        true
    }

    /// How many more lines the page can take.
    pub(super) fn room(&self) -> usize {
        MAX_ENTRIES.saturating_sub(self.lines)
    }

    fn push_all(&mut self, lines: impl IntoIterator<Item = String>) {
        for line in lines {
            self.body.push_str(&line);
            self.body.push('\n');
            self.lines += 1;
        }
    }

    /// The answer's text: what is shown, then where the rest is. A whole
    /// directory on one page reads as it always has.
    /// `own` entries (from `first`, of `total`) were shown, `until` the
    /// last one asked for.
    pub(super) fn text(&self, display: &str, [first, own, until, total]: [u64; 4]) -> String {
        let body = &self.body;
        let mut text = if (first == 1 && self.next.is_none()) || own == 0 {
            let noun = if self.lines == 1 { "entry" } else { "entries" };
            format!(
                "'{display}': {} {noun}, two levels deep (hidden ones left out):\n{body}",
                self.lines
            )
        } else {
            format!(
                "'{display}': entries {first}-{} of its {total}, two levels deep (hidden ones \
                 left out):\n{body}",
                first + own - 1
            )
        };
        if let Some((name, left)) = self.inside.as_ref().filter(|(_, left)| *left > 0) {
            text.push_str(&format!(
                "({left} more inside '{name}' not shown, to keep the answer short: view it to \
                 see its entries.)\n"
            ));
        }
        if let Some(next) = self.next {
            text.push_str(&format!(
                "(Entries {next}-{until} not shown, to keep the answer short: offset {next} \
                 shows them.)"
            ));
        }
        text.truncate(text.trim_end_matches('\n').len());
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_numbered_as_cat_n_numbers_them() {
        let page = number("a\r\nb\n\nd", 1, None).unwrap();
        assert_eq!(page.body, "     1\ta\n     2\tb\n     3\t\n     4\td\n");
        assert_eq!((page.lines, page.total, page.next), (Some([1, 4]), 4, None));
        let page = number("a\nb\nc\n", 2, Some(2)).unwrap();
        assert_eq!(page.body, "     2\tb\n");
        assert_eq!((page.lines, page.total), (Some([2, 2]), 3));
        let page = number("a\nb\n", 2, Some(90)).unwrap();
        assert_eq!((page.lines, page.until), (Some([2, 2]), 2), "clamped");
        assert_eq!(number("a\nb\n", 3, None), Err(PastEnd { total: 2 }));
        let empty = number("", 1, None).unwrap();
        assert_eq!(
            (empty.lines, empty.total, empty.body.as_str()),
            (None, 0, "")
        );
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines("a\nb\n"), 2);
        assert_eq!(count_lines("\n"), 1);
    }

    #[test]
    fn a_page_stops_at_its_bounds_and_says_how_to_go_on() {
        let text = "a\n".repeat(5_000);
        let page = number(&text, 1, None).unwrap();
        assert_eq!(page.lines, Some([1, MAX_LINES]));
        assert_eq!(page.next, Some(MAX_LINES + 1));
        assert_eq!(
            more(&page).unwrap(),
            "(Lines 2001-5000 not shown, to keep the answer short: view_range [2001, -1] or \
             offset 2001 shows them.)"
        );
        let page = number(&text, 10, Some(4_000)).unwrap();
        assert_eq!(page.next, Some(2_010));
        assert!(more(&page).unwrap().contains("view_range [2010, 4000]"));

        let wide: String = (0..100)
            .map(|_| format!("{}\n", "x".repeat(1_000)))
            .collect();
        let page = number(&wide, 1, None).unwrap();
        assert!(page.body.chars().count() <= MAX_CHARS);
        let [_, last] = page.lines.unwrap();
        assert_eq!(page.next, Some(last + 1));
        assert_eq!(last, 31, "31 lines of 1,008 characters fit");

        let long = "y".repeat(MAX_LINE_CHARS + 5);
        let page = number(&long, 1, None).unwrap();
        assert!(page.body.ends_with("… [5 more characters on this line]\n"));
        assert_eq!(page.next, None);
        assert_eq!(more(&page), None);
    }

    #[test]
    fn a_page_of_characters_shown_escaped_is_bounded_as_shown() {
        let controls: String = (0..100)
            .map(|_| format!("{}\n", "\u{1}".repeat(1_000)))
            .collect();
        let page = number(&controls, 1, None).unwrap();
        let [_, last] = page.lines.unwrap();
        // Each control shown as `\u{1}`, six characters in JSON.
        assert_eq!(last, 5, "five lines of 1,000 controls, escaped, fit");
        assert!(!page.body.contains('\u{1}'), "shown escaped");
        assert!(rendered_len(&page.body) <= MAX_CHARS);
        assert_eq!(rendered_len("a\t\"\u{7}\n"), 1 + 2 + 2 + 10 + 1);
    }

    #[test]
    fn a_files_terminal_sequences_are_shown_escaped_and_its_tabs_kept() {
        let text = "\u{1b}[31mred\u{1b}[0m\tok\n\u{1b}]0;title\u{7}\u{9b}\u{7f}\u{200d}x\n";
        let page = number(text, 1, None).unwrap();
        assert_eq!(
            page.body,
            "     1\t\\u{1B}[31mred\\u{1B}[0m\tok\n     2\t\\u{1B}]0;title\\u{7}\\u{9B}\\u{7F}\u{200d}x\n"
        );
        // Past the line's cut too.
        let long = format!(
            "{}\u{1b}]0;x\u{7}{}",
            "a".repeat(MAX_LINE_CHARS - 5),
            "b".repeat(10)
        );
        let page = number(&long, 1, None).unwrap();
        let line = page.body.trim_end_matches('\n');
        assert!(
            !line.contains(is_control),
            "{:?}",
            &line[MAX_LINE_CHARS - 5..]
        );
        assert!(page.body.contains("\\u{1B}]0;x"), "escaped before the cut");
    }

    #[test]
    fn a_listing_stops_at_its_bounds() {
        let mut page = Entries::default();
        let mut taken = 0;
        for at in 1..=1_500u64 {
            if !page.take(vec![format!("f{at}")], at) {
                break;
            }
            taken += 1;
        }
        assert_eq!((taken, page.next), (MAX_ENTRIES, Some(1_001)));
        let text = page.text("d", [1, 1_000, 1_500, 1_500]);
        assert!(
            text.starts_with("'d': entries 1-1000 of its 1500,"),
            "{text}"
        );
        assert!(text.ends_with("offset 1001 shows them.)"), "{text}");
        // One entry alone over the page: cut inside it, the next page after it.
        let mut page = Entries::default();
        let big: Vec<String> = (0..1_200).map(|n| format!("big/f{n}")).collect();
        assert!(page.take(big, 1));
        assert!(!page.take(vec!["small".into()], 2));
        assert_eq!((page.lines, page.next), (MAX_ENTRIES, Some(2)));
        assert_eq!(page.inside, Some(("big/f0".into(), 200)));
        let mut page = Entries::default();
        assert!(page.take(vec!["f0".into(), "f1".into()], 1));
        assert_eq!(
            page.text("d", [1, 1, 1, 1]),
            "'d': 2 entries, two levels deep (hidden ones left out):\nf0\nf1"
        );
    }
}
