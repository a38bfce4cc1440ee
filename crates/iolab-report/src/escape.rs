//! Escaping for HTML text and attribute values (both quote kinds, so a value is safe in
//! either), and for Markdown table cells.

use std::borrow::Cow;

/// `&`, `<`, `>`, `"` and `'` as character references; everything else unchanged.
pub fn escape_html(s: &str) -> Cow<'_, str> {
    if !s.contains(['&', '<', '>', '"', '\'']) {
        return Cow::Borrowed(s);
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
/// escaped (GitHub renders inline HTML in tables).
pub fn escape_md(s: &str) -> String {
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
    fn markdown_cells_cannot_break_the_table() {
        assert_eq!(escape_md("a|b\nc<d>"), "a\\|b c&lt;d&gt;");
    }
}
