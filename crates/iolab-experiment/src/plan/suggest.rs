//! "Did you mean …?" hints, on iolab-wml's edit distance.

pub(crate) use iolab_wml::suggest::closest;

/// "did you mean `x`?" when a candidate is close, else "expected one of `a`, `b`".
pub(crate) fn hint<'a, I>(word: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str> + Clone,
{
    match closest(word, candidates.clone()) {
        Some(c) => format!("did you mean `{c}`?"),
        None => format!("expected one of {}", list(candidates)),
    }
}

/// `` `a`, `b`, `c` ``.
pub(crate) fn list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    items
        .into_iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints() {
        let c = ["repetitions", "procedure", "workload"];
        assert_eq!(hint("repetition", c), "did you mean `repetitions`?");
        assert_eq!(
            hint("zzz", c),
            "expected one of `repetitions`, `procedure`, `workload`"
        );
    }
}
