//! The peers' edit matchers, ported from their sources so the edit corpora
//! (`edits.rs`, `ladder.rs`) can run them on the same cases as the ladder.
//! Each takes the file, the old text and the new text, and gives the new
//! file or `None` when it refuses.
//!
//! - `exact_rule`: the rule most agents use (Claude Code's Edit, the
//!   Anthropic text editor tool): the old text exactly once.
//! - `mcp_edit_file`: `applyFileEdits` of the npm MCP filesystem server
//!   (`@modelcontextprotocol/server-filesystem`, `lib.ts`).
//! - `codex_seek`: Codex's `apply_patch` update of one chunk
//!   (`codex-rs/apply-patch/src/lib.rs` `derive_new_contents_from_chunks`
//!   with `seek_sequence.rs`), the old and new text as the chunk's lines.
//! - `gemini_replace`: gemini-cli's `replace` without its LLM fixer
//!   (`packages/core/src/tools/edit.ts` `calculateReplacement` as of
//!   2026-08-21: exact, flexible, regex, then fuzzy), one occurrence
//!   required as its `allow_multiple` default does.

#![allow(dead_code, reason = "each test crate uses some of them")]

/// A tool's edit: the file, old and new text in; the new file out, or
/// `None` when it refused.
pub type Apply = fn(&str, &str, &str) -> Option<String>;

/// The exact-match rule: the old text must be in the file exactly once.
pub fn exact_rule(file: &str, old: &str, new: &str) -> Option<String> {
    (file.matches(old).count() == 1).then(|| file.replacen(old, new, 1))
}

/// The MCP filesystem server's `applyFileEdits`, ported for one edit:
/// line endings normalized to `\n`; the first occurrence replaced; else
/// the first window of lines equal when trimmed, re-indented its way.
pub fn mcp_edit_file(file: &str, old: &str, new: &str) -> Option<String> {
    let content = file.replace("\r\n", "\n");
    let old = old.replace("\r\n", "\n");
    let new = new.replace("\r\n", "\n");
    if content.contains(&old) {
        return Some(content.replacen(&old, &new, 1));
    }
    let lead = |l: &str| l[..l.len() - js_trim_start(l).len()].to_owned();
    let old_lines: Vec<&str> = old.split('\n').collect();
    let content_lines: Vec<&str> = content.split('\n').collect();
    if content_lines.len() < old_lines.len() {
        return None;
    }
    for i in 0..=content_lines.len() - old_lines.len() {
        let window = &content_lines[i..i + old_lines.len()];
        if old_lines
            .iter()
            .zip(window)
            .all(|(o, c)| js_trim(o) == js_trim(c))
        {
            let original = lead(content_lines[i]);
            let new_lines: Vec<String> = new
                .split('\n')
                .enumerate()
                .map(|(j, line)| {
                    if j == 0 {
                        return format!("{original}{}", js_trim_start(line));
                    }
                    let old_indent = old_lines.get(j).map(|l| lead(l)).unwrap_or_default();
                    let new_indent = lead(line);
                    if !old_indent.is_empty() && !new_indent.is_empty() {
                        let rel = new_indent.len().saturating_sub(old_indent.len());
                        return format!("{original}{}{}", " ".repeat(rel), js_trim_start(line));
                    }
                    line.to_owned()
                })
                .collect();
            let mut out: Vec<String> = content_lines[..i].iter().map(|s| (*s).into()).collect();
            out.extend(new_lines);
            out.extend(
                content_lines[i + old_lines.len()..]
                    .iter()
                    .map(|s| (*s).into()),
            );
            return Some(out.join("\n"));
        }
    }
    None
}

/// Codex's `seek_sequence`: the first place at or after `start` where the
/// pattern's lines are, exactly, then ignoring trailing whitespace, then
/// trimmed, then with typographic punctuation and odd spaces as ASCII.
fn seek_sequence(lines: &[String], pattern: &[String], start: usize, eof: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let search_start = if eof && lines.len() >= pattern.len() {
        lines.len() - pattern.len()
    } else {
        start
    };
    let last = lines.len().saturating_sub(pattern.len());
    let pass = |eq: &dyn Fn(&str, &str) -> bool| {
        (search_start..=last).find(|&i| {
            pattern
                .iter()
                .enumerate()
                .all(|(p, pat)| eq(&lines[i + p], pat))
        })
    };
    fn normalise(s: &str) -> String {
        s.trim()
            .chars()
            .map(|c| match c {
                '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
                | '\u{2212}' => '-',
                '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
                '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
                '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
                | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
                | '\u{3000}' => ' ',
                other => other,
            })
            .collect()
    }
    pass(&|a, b| a == b)
        .or_else(|| pass(&|a, b| a.trim_end() == b.trim_end()))
        .or_else(|| pass(&|a, b| a.trim() == b.trim()))
        .or_else(|| pass(&|a, b| normalise(a) == normalise(b)))
}

/// Codex's `apply_patch` of one update chunk whose old lines are the old
/// text's and new lines the new text's: the file split on `\n`, the chunk
/// found by `seek_sequence` (first place, no uniqueness check), retried
/// without a trailing empty line, replaced, and a final newline ensured.
pub fn codex_seek(file: &str, old: &str, new: &str) -> Option<String> {
    let as_lines = |t: &str| {
        let mut l: Vec<String> = t.split('\n').map(str::to_owned).collect();
        if l.last().is_some_and(String::is_empty) {
            l.pop();
        }
        l
    };
    let lines = as_lines(file);
    let mut pattern = as_lines(old);
    let mut replacement = as_lines(new);
    if pattern.is_empty() {
        return None;
    }
    let mut found = seek_sequence(&lines, &pattern, 0, false);
    if found.is_none() && pattern.last().is_some_and(String::is_empty) {
        pattern.pop();
        if replacement.last().is_some_and(String::is_empty) {
            replacement.pop();
        }
        found = seek_sequence(&lines, &pattern, 0, false);
    }
    let at = found?;
    let mut out = lines;
    out.splice(at..at + pattern.len(), replacement);
    if !out.last().is_some_and(String::is_empty) {
        out.push(String::new());
    }
    Some(out.join("\n"))
}

/// gemini-cli's `restoreTrailingNewline`.
fn restore_trailing_newline(original: &str, modified: String) -> String {
    match (original.ends_with('\n'), modified.ends_with('\n')) {
        (true, false) => modified + "\n",
        (false, true) => modified[..modified.len() - 1].to_owned(),
        _ => modified,
    }
}

/// gemini-cli's `applyIndentation`: the new lines re-indented from the
/// first line's indentation to `target`.
fn apply_indentation(lines: &[&str], target: &str) -> Vec<String> {
    let lead = |l: &str| l[..l.len() - l.trim_start_matches([' ', '\t']).len()].to_owned();
    let reference = lines.first().map(|l| lead(l)).unwrap_or_default();
    lines
        .iter()
        .map(|line| {
            if js_trim(line).is_empty() {
                String::new()
            } else if let Some(rest) = line.strip_prefix(reference.as_str()) {
                format!("{target}{rest}")
            } else {
                format!("{target}{}", line.trim_start())
            }
        })
        .collect()
}

/// JavaScript's whitespace (`String.prototype.trim`, regex `\s`): Unicode
/// White_Space and U+FEFF, without U+0085.
fn js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}'
}

fn js_trim(s: &str) -> &str {
    s.trim_matches(js_space)
}

fn js_trim_start(s: &str) -> &str {
    s.trim_start_matches(js_space)
}

/// gemini-cli's `replace` strategies in order, one occurrence required:
/// the file's `\r\n` read as `\n` first, as its caller does, and written
/// back with `\r\n` when the file had any (`detectLineEnding`).
pub fn gemini_replace(file: &str, old: &str, new: &str) -> Option<String> {
    let done = gemini_strategies(file, old, new)?;
    Some(if file.contains("\r\n") {
        done.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        done
    })
}

fn gemini_strategies(file: &str, old: &str, new: &str) -> Option<String> {
    let content = file.replace("\r\n", "\n");
    let search = old.replace("\r\n", "\n");
    let replace = new.replace("\r\n", "\n");
    if search.is_empty() {
        return None;
    }
    // Exact.
    let exact = content.matches(search.as_str()).count();
    if exact > 1 {
        return None;
    }
    if exact == 1 {
        let done = content.replace(search.as_str(), &replace);
        return Some(restore_trailing_newline(&content, done));
    }
    // Flexible: windows of lines equal when trimmed, every one replaced.
    let mut source: Vec<String> = content.split_inclusive('\n').map(str::to_owned).collect();
    let stripped: Vec<&str> = search.split('\n').map(js_trim).collect();
    let replace_lines: Vec<&str> = replace.split('\n').collect();
    let mut occurrences = 0;
    let mut i = 0;
    while i + stripped.len() <= source.len() {
        let window = &source[i..i + stripped.len()];
        if window.iter().zip(&stripped).all(|(l, s)| js_trim(l) == *s) {
            occurrences += 1;
            let first = &window[0];
            let indent = &first[..first.len() - first.trim_start_matches([' ', '\t']).len()];
            let mut text = apply_indentation(&replace_lines, indent).join("\n");
            if !new.is_empty() && window[window.len() - 1].ends_with('\n') && !text.ends_with('\n')
            {
                text.push('\n');
            }
            source.splice(i..i + stripped.len(), [text]);
        }
        i += 1;
    }
    if occurrences > 0 {
        return (occurrences == 1).then(|| restore_trailing_newline(&content, source.concat()));
    }
    // Regex: tokens split at delimiters and whitespace, joined by `\s*`.
    let mut processed = search.clone();
    for d in ['(', ')', ':', '[', ']', '{', '}', '>', '<', '='] {
        processed = processed.replace(d, &format!(" {d} "));
    }
    let tokens: Vec<String> = processed.split_whitespace().map(regex::escape).collect();
    if !tokens.is_empty() {
        let pattern = format!(r"(?m)^([ \t]*){}", tokens.join(r"\s*"));
        if let Ok(re) = regex::Regex::new(&pattern) {
            let count = re.find_iter(&content).count();
            if count > 0 {
                if count != 1 {
                    return None;
                }
                let lines: Vec<&str> = replace.split('\n').collect();
                let done = re
                    .replace(&content, |caps: &regex::Captures<'_>| {
                        apply_indentation(&lines, caps.get(1).map_or("", |m| m.as_str())).join("\n")
                    })
                    .into_owned();
                return Some(restore_trailing_newline(&content, done));
            }
        }
    }
    gemini_fuzzy(&content, &search, &replace)
}

/// gemini-cli's `calculateFuzzyReplacement`: windows of lines within a 10%
/// weighted edit distance (whitespace at a tenth), best first, without
/// overlaps; the distance is `fast-levenshtein`'s, over UTF-16 units.
fn gemini_fuzzy(content: &str, search: &str, replace: &str) -> Option<String> {
    const THRESHOLD: f64 = 0.1;
    const WHITESPACE_PENALTY: f64 = 0.1;
    if search.encode_utf16().count() < 10 {
        return None;
    }
    let source: Vec<&str> = content.split_inclusive('\n').collect();
    let search_lines: Vec<&str> = search.split_inclusive('\n').map(|l| l.trim_end()).collect();
    let n = search_lines.len();
    if n == 0 || source.len() < n {
        return None;
    }
    let units = search.encode_utf16().count() as f64;
    if source.len() as f64 * units * units > 400_000_000.0 {
        return None;
    }
    let block = search_lines.join("\n");
    let block16: Vec<u16> = block.encode_utf16().collect();
    let strip = |s: &str| -> Vec<u16> {
        s.chars()
            .filter(|c| !js_space(*c))
            .collect::<String>()
            .encode_utf16()
            .collect()
    };
    let block_stripped = strip(&block);
    let distance = |a: &[u16], b: &[u16]| {
        rapidfuzz::distance::levenshtein::distance(a.iter().copied(), b.iter().copied())
    };
    let mut candidates: Vec<(usize, f64)> = Vec::new();
    for i in 0..=source.len() - n {
        let window: Vec<&str> = source[i..i + n]
            .iter()
            .map(|l| l.trim_end_matches(js_space))
            .collect();
        let text = window.join("\n");
        let text16: Vec<u16> = text.encode_utf16().collect();
        let len_diff = (text16.len() as f64 - block16.len() as f64).abs();
        if len_diff / block16.len() as f64 > THRESHOLD / WHITESPACE_PENALTY {
            continue;
        }
        let raw = distance(&text16, &block16) as f64;
        let norm = distance(&strip(&text), &block_stripped) as f64;
        let score = (norm + (raw - norm) * WHITESPACE_PENALTY) / block16.len() as f64;
        if score <= THRESHOLD {
            candidates.push((i, score));
        }
    }
    candidates.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let mut selected: Vec<(usize, f64)> = Vec::new();
    for c in candidates {
        if !selected.iter().any(|m| m.0.abs_diff(c.0) < n) {
            selected.push(c);
        }
    }
    // One occurrence required, as for every strategy.
    let [(at, _)] = selected[..] else {
        return None;
    };
    let first = source[at];
    let indent = &first[..first.len() - first.trim_start_matches([' ', '\t']).len()];
    let lines: Vec<&str> = replace.split('\n').collect();
    let mut text = apply_indentation(&lines, indent).join("\n");
    if source[at + n - 1].ends_with('\n') {
        text.push('\n');
    }
    let mut out: Vec<String> = source.iter().map(|s| (*s).to_owned()).collect();
    out.splice(at..at + n, [text]);
    Some(restore_trailing_newline(content, out.concat()))
}
