//! Characters that could act on a terminal or make text read as something
//! else, and text with them shown as escapes: for every surface that hands
//! text on to be printed (the CLI's output, the MCP text block).

/// Whether `c` could act on a terminal, or make text read as something
/// else: a control (C0, DEL, C1), a line or paragraph separator, a
/// direction control or an invisible format character.
pub fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

/// `text` with every [`unprintable`] character shown as `\u{XXXX}`; line
/// breaks and tabs too unless `keep_lines`.
pub fn printable(text: &str, keep_lines: bool) -> String {
    escaped(text, |c| {
        unprintable(c) && !(keep_lines && matches!(c, '\n' | '\t'))
    })
}

/// `text` with every character `escape` picks shown as `\u{XXXX}`: the one
/// form of an escape every surface shows (a view escapes fewer characters
/// than [`printable`], in the same form).
pub fn escaped(text: &str, escape: impl Fn(char) -> bool) -> String {
    if !text.contains(&escape) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if escape(c) {
                format!("\\u{{{:X}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}
