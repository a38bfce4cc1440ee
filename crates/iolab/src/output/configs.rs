//! Naming a set of configurations in a few words, for outputs that print a message once for
//! all the configurations it applies to (`iolab check`, `iolab show`'s findings) instead of
//! once per configuration.

/// Labels listed by name before the rest is counted.
const LISTED: usize = 6;

/// Factor levels combined to name a set (`policy=lru write_policy=write-back`).
const MAX_LEVELS: usize = 3;

/// The levels a label is made of: its `name=level` words, and a leading `stage N` (labels
/// of an experiment's later stages) as one.
fn levels(label: &str) -> Vec<String> {
    let words: Vec<&str> = label.split_whitespace().collect();
    let mut out = Vec::new();
    let mut rest = &words[..];
    if let [first, n, tail @ ..] = rest {
        if *first == "stage" && n.parse::<u32>().is_ok() {
            out.push(format!("stage {n}"));
            rest = tail;
        }
    }
    out.extend(
        rest.iter()
            .filter(|w| w.contains('='))
            .map(|w| w.to_string()),
    );
    out
}

/// `set` (indices into `all`, the labels of every configuration) in a few words: the label of
/// a single one; `all 12 configurations`; `the 6 configurations with setup=seed` when up to
/// three factor levels pick out exactly that set; else the labels, the first few by name.
pub fn describe(set: &[usize], all: &[&str]) -> String {
    match set {
        [] => "no configuration".into(),
        [one] => all.get(*one).copied().unwrap_or("?").to_string(),
        _ if set.len() == all.len() => format!("all {} configurations", all.len()),
        _ => by_levels(set, all).unwrap_or_else(|| listed(set, all)),
    }
}

/// The fewest levels (at most [`MAX_LEVELS`]) shared by exactly the configurations of `set`.
fn by_levels(set: &[usize], all: &[&str]) -> Option<String> {
    let each: Vec<Vec<String>> = all.iter().map(|l| levels(l)).collect();
    let first = each.get(*set.first()?)?;
    // Only levels every member has can name the set.
    let common: Vec<&String> = first
        .iter()
        .filter(|lv| set.iter().all(|&i| each[i].contains(lv)))
        .collect();
    let picks = |chosen: &[&String]| -> Vec<usize> {
        (0..all.len())
            .filter(|&i| chosen.iter().all(|lv| each[i].contains(lv)))
            .collect()
    };
    let mut combos: Vec<Vec<&String>> = vec![Vec::new()];
    for _ in 0..MAX_LEVELS.min(common.len()) {
        let mut next = Vec::new();
        for c in &combos {
            // Extend in order, so that each combination is tried once.
            let from = c
                .last()
                .and_then(|l| common.iter().position(|x| x == l))
                .map_or(0, |p| p + 1);
            for lv in &common[from..] {
                let mut d = c.clone();
                d.push(*lv);
                if picks(&d) == set {
                    let names: Vec<&str> = d.iter().map(|s| s.as_str()).collect();
                    return Some(format!(
                        "the {} configurations with {}",
                        set.len(),
                        names.join(" ")
                    ));
                }
                next.push(d);
            }
        }
        combos = next;
    }
    None
}

fn listed(set: &[usize], all: &[&str]) -> String {
    let mut names: Vec<String> = set
        .iter()
        .take(LISTED)
        .map(|&i| all.get(i).copied().unwrap_or("?").to_string())
        .collect();
    let more = set.len().saturating_sub(LISTED);
    if more > 0 {
        names.push(format!("and {more} more"));
    }
    format!("{} configurations ({})", set.len(), names.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOURNAL: [&str; 4] = [
        "journal=ordered readers=1 setup=seed",
        "journal=ordered readers=1 setup=corrected",
        "journal=writeback readers=1 setup=seed",
        "journal=writeback readers=1 setup=corrected",
    ];

    #[test]
    fn one_all_or_by_the_levels_they_share() {
        assert_eq!(describe(&[1], &JOURNAL), JOURNAL[1]);
        assert_eq!(describe(&[0, 1, 2, 3], &JOURNAL), "all 4 configurations");
        assert_eq!(
            describe(&[0, 2], &JOURNAL),
            "the 2 configurations with setup=seed"
        );
        assert_eq!(
            describe(&[2, 3], &JOURNAL),
            "the 2 configurations with journal=writeback"
        );
    }

    #[test]
    fn several_levels_and_stages() {
        let all = [
            "stage 1 default",
            "stage 2 assoc=2 policy=lru",
            "stage 2 assoc=2 policy=fifo",
            "stage 2 assoc=4 policy=lru",
            "stage 2 assoc=4 policy=fifo",
        ];
        assert_eq!(
            describe(&[1, 2, 3, 4], &all),
            "the 4 configurations with stage 2"
        );
        assert_eq!(
            describe(&[1, 3], &all),
            "the 2 configurations with policy=lru"
        );
        assert_eq!(levels("stage 2 assoc=2"), ["stage 2", "assoc=2"]);
        assert_eq!(levels("default"), Vec::<String>::new());
    }

    #[test]
    fn otherwise_listed_the_first_few_by_name() {
        assert_eq!(
            describe(&[0, 3], &JOURNAL),
            "2 configurations (journal=ordered readers=1 setup=seed; \
             journal=writeback readers=1 setup=corrected)"
        );
        let many: Vec<String> = (0..10).map(|i| format!("n={i}")).collect();
        let all: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            describe(&[0, 1, 2, 3, 4, 5, 6, 7], &all),
            "8 configurations (n=0; n=1; n=2; n=3; n=4; n=5; and 2 more)"
        );
    }
}
