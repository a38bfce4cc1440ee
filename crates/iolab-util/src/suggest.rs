//! "Did you mean …?" hints: the one edit distance, the one threshold and the one wording for
//! every name a user can mistype (WML commands and flowops, experiment keys and levels, `--set`
//! variables, filesystems, kernel tunables).

/// Optimal-string-alignment distance: Levenshtein plus adjacent transpositions, so that
/// `opnefile` is one edit from `openfile` and `dirty_ratoi` one from `dirty_ratio`.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The closest candidate, if it is close enough to be a plausible typo: at most one edit
/// for short words, a third of the length for long ones (three at most). The first of
/// equally close candidates wins; `word` itself is never suggested.
pub fn closest<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = (word.chars().count() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .map(|c| (distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The wording of a suggestion: "did you mean `x`?" (`x` as the user would write it).
pub fn suggestion(written: &str) -> String {
    format!("did you mean `{written}`?")
}

/// `Some("did you mean `x`?")` when a candidate is close enough.
pub fn did_you_mean<'a, I>(word: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    closest(word, candidates).map(suggestion)
}

/// "did you mean `x`?" when a candidate is close, else "expected one of `a`, `b`".
pub fn did_you_mean_or_list<'a, I>(word: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str> + Clone,
{
    did_you_mean(word, candidates.clone())
        .unwrap_or_else(|| format!("expected one of {}", list(candidates)))
}

/// `` `a`, `b`, `c` ``.
pub fn list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
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
    fn distances() {
        assert_eq!(distance("read", "read"), 0);
        assert_eq!(distance("readwholfile", "readwholefile"), 1);
        assert_eq!(distance("opnefile", "openfile"), 1);
        assert_eq!(distance("dirty_ratoi", "dirty_ratio"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    #[test]
    fn closest_respects_limit() {
        let c = ["readwholefile", "read", "write"];
        assert_eq!(closest("readwholfile", c), Some("readwholefile"));
        assert_eq!(closest("raed", c), Some("read"));
        assert_eq!(closest("zzzz", c), None);
        assert_eq!(closest("read", c), None, "the word itself is no suggestion");
        assert_eq!(
            did_you_mean("wrte", c).as_deref(),
            Some("did you mean `write`?")
        );
        let t = ["dirty_expire_centisecs", "dirty_ratio", "swappiness"];
        assert_eq!(
            closest("dirty_expire_centisec", t),
            Some("dirty_expire_centisecs")
        );
        assert_eq!(closest("zzzzzzzzzzzzzzzzzzzzzzzzzzzz", t), None);
    }

    #[test]
    fn hints_or_lists() {
        let c = ["repetitions", "procedure", "workload"];
        assert_eq!(
            did_you_mean_or_list("repetition", c),
            "did you mean `repetitions`?"
        );
        assert_eq!(
            did_you_mean_or_list("zzz", c),
            "expected one of `repetitions`, `procedure`, `workload`"
        );
        assert_eq!(suggestion("--set n=1"), "did you mean `--set n=1`?");
    }
}
