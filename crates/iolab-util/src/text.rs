//! Text from strangers shown safely: a control character (an escape sequence that clears a
//! terminal, NUL, a C1 control) becomes visible text instead of acting.

use std::borrow::Cow;

/// `s` with every control character for which `escape` is true written as `\u{1b}` (its
/// code in hex), the one form the terminal output and the reports both show.
pub fn escape_controls(s: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    let hit = |c: char| c.is_control() && escape(c);
    if !s.chars().any(hit) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if hit(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_visible() {
        let all = |_| true;
        assert_eq!(
            escape_controls("a\u{1b}[2J\0\u{9b}é", all),
            "a\\u{1b}[2J\\u{0}\\u{9b}é"
        );
        assert!(matches!(
            escape_controls("plain ünïcode", all),
            Cow::Borrowed(_)
        ));
        assert_eq!(escape_controls("a\tb\n", |c| c != '\n'), "a\\u{9}b\n");
    }
}
