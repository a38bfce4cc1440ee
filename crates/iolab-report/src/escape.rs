//! Escaping for HTML text and attribute values (both quote kinds, so a value is safe in
//! either), and for Markdown table cells.

use std::borrow::Cow;

/// `&`, `<`, `>`, `"` and `'` as character references; control characters other than tab
/// and line breaks (which HTML does not allow raw, and a name from another host's database
/// may hold) as the visible text `\u{1b}`, as the terminal output shows them; everything
/// else unchanged.
pub fn escape_html(s: &str) -> Cow<'_, str> {
    let s = iolab_util::text::escape_controls(s, |c| !matches!(c, '\t' | '\n' | '\r'));
    if !s.contains(['&', '<', '>', '"', '\'']) {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A Markdown table cell: pipes escaped, line breaks as spaces, HTML-special characters
/// escaped (GitHub renders inline HTML in tables), control characters as in
/// [`escape_html`].
pub fn escape_md(s: &str) -> String {
    let s = iolab_util::text::escape_controls(s, |c| !matches!(c, '\t' | '\n' | '\r'));
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escapes_every_special_character() {
        assert_eq!(
            escape_html(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert!(matches!(escape_html("plain ünïcode"), Cow::Borrowed(_)));
        assert_eq!(escape_html("&amp;"), "&amp;amp;");
    }

    #[test]
    fn control_characters_are_shown_not_passed_through() {
        assert_eq!(
            escape_html("a\u{1b}[2J\0b\u{9b}\tc\n"),
            "a\\u{1b}[2J\\u{0}b\\u{9b}\tc\n"
        );
    }

    #[test]
    fn markdown_cells_cannot_break_the_table() {
        assert_eq!(escape_md("a|b\nc<d>"), "a\\|b c&lt;d&gt;");
        assert_eq!(escape_md("x\u{1b}[2J"), "x\\u{1b}[2J");
    }
}
