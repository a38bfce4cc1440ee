//! Factors, their levels, exclusion rules, and the matrix of configurations they span.

use serde_json::{Map, Value as Json};

use crate::plan::read::{join, Ctx};
use crate::plan::tree::{Entry, Node, Span, Value};
use iolab_util::suggest;

/// More configurations than this is almost certainly a mistake (and would take months).
pub(crate) const MAX_CONFIGS: usize = 10_000;

/// A factor: a name and its levels, in the order written.
#[derive(Debug, Clone)]
pub(crate) struct Factor {
    pub name: String,
    pub key_span: Span,
    pub levels: Vec<Level>,
    /// Whether the levels are tables (`${f.field}`) rather than scalars (`${f}`).
    pub tables: bool,
}

/// One level of a factor.
#[derive(Debug, Clone)]
pub(crate) struct Level {
    /// As it appears in labels: a scalar's text, a table's `name`, or `#i` (1-based).
    pub name: String,
    pub node: Node,
}

impl Level {
    /// The value a whole-string placeholder `${f}` stands for: a scalar, or the table without
    /// its `name` (which only labels the level).
    pub fn substitute_value(&self) -> Node {
        match &self.node.value {
            Value::Table(t) => {
                let mut t = t.clone();
                t.entries.retain(|e| e.key != "name");
                Node {
                    span: self.node.span.clone(),
                    value: Value::Table(t),
                }
            }
            _ => self.node.clone(),
        }
    }
}

/// A factor name must be usable in `${name}` and in labels `name=level`.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Reads `[factors]`. `None` if anything was wrong (the matrix would be meaningless).
pub(crate) fn read_factors(cx: &mut Ctx, entry: &Entry) -> Option<Vec<Factor>> {
    let before = cx.errors();
    let table = cx.table(entry, "factors")?;
    let mut factors = Vec::new();
    for e in &table.entries {
        let path = join("factors", &e.key);
        if !valid_name(&e.key) {
            cx.error_hint(
                &e.key_span,
                format!("`{}` is not a valid factor name", e.key),
                "use letters, digits, `_` and `-`, starting with a letter, e.g. `journal_mode`",
            );
            continue;
        }
        let Value::Array(items) = &e.node.value else {
            cx.error_hint(
                e.point(),
                format!(
                    "`{path}` must be a list of levels, not {}",
                    e.node.value.type_name()
                ),
                format!("write {} = [\"a\", \"b\"]", e.key),
            );
            continue;
        };
        if items.is_empty() {
            cx.error_hint(
                &e.node.span,
                format!("factor `{}` has no levels", e.key),
                "give it at least one level, or remove it",
            );
            continue;
        }
        if let Some(f) = read_levels(cx, e, items, &path) {
            factors.push(f);
        }
    }
    (cx.errors() == before).then_some(factors)
}

fn read_levels(cx: &mut Ctx, e: &Entry, items: &[Node], path: &str) -> Option<Factor> {
    let before = cx.errors();
    let tables = matches!(items[0].value, Value::Table(_));
    let mut levels: Vec<Level> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let name = match &item.value {
            Value::Table(t) if tables => match t.get("name") {
                None => format!("#{}", i + 1),
                Some(n) => match &n.node.value {
                    Value::String(s) => s.clone(),
                    other => {
                        cx.error(
                            &n.node.span,
                            format!(
                                "a level's `name` must be a string, not {}",
                                other.type_name()
                            ),
                        );
                        continue;
                    }
                },
            },
            Value::Float(f) if !f.is_finite() => {
                cx.error(
                    &item.span,
                    format!("a level must be a finite number, not {f}"),
                );
                continue;
            }
            Value::String(_) | Value::Integer(_) | Value::Float(_) | Value::Boolean(_)
                if !tables =>
            {
                item.value.scalar_text().unwrap_or_default()
            }
            Value::Table(_)
            | Value::String(_)
            | Value::Integer(_)
            | Value::Float(_)
            | Value::Boolean(_) => {
                cx.error_hint(
                    &item.span,
                    format!("the levels of `{path}` mix tables and single values"),
                    "make every level a table (with a `name`), or every level a single value",
                );
                continue;
            }
            Value::Array(_) | Value::Datetime(_) => {
                cx.error_hint(
                    &item.span,
                    format!(
                        "a level must be a string, number, boolean or table, not {}",
                        item.value.type_name()
                    ),
                    "to vary several settings together, make each level a table",
                );
                continue;
            }
        };
        if levels.iter().any(|l| l.name == name) {
            cx.error_hint(
                &item.span,
                format!("factor `{}` has two levels named `{name}`", e.key),
                "level names label the configurations, so they must differ",
            );
            continue;
        }
        levels.push(Level {
            name,
            node: item.clone(),
        });
    }
    (cx.errors() == before).then(|| Factor {
        name: e.key.clone(),
        key_span: e.key_span.clone(),
        levels,
        tables,
    })
}

/// An exclusion rule: configurations with all these (factor, level) pairs are left out.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub pairs: Vec<(usize, usize)>,
}

/// Reads `exclude` (an array of tables, inline or `[[exclude]]`).
pub(crate) fn read_exclude(cx: &mut Ctx, entry: &Entry, factors: &[Factor]) -> Option<Vec<Rule>> {
    let before = cx.errors();
    let Value::Array(items) = &entry.node.value else {
        cx.error_hint(
            entry.point(),
            format!(
                "`exclude` must be a list of tables, not {}",
                entry.node.value.type_name()
            ),
            "write exclude = [ { factor = \"level\", other = \"level\" } ]",
        );
        return None;
    };
    let names: Vec<&str> = factors.iter().map(|f| f.name.as_str()).collect();
    let mut rules = Vec::new();
    for item in items {
        let Value::Table(t) = &item.value else {
            cx.error_hint(
                &item.span,
                format!(
                    "an exclusion rule must be a table, not {}",
                    item.value.type_name()
                ),
                "write { factor = \"level\", … }",
            );
            continue;
        };
        if t.entries.is_empty() {
            cx.error(
                &item.span,
                "an empty exclusion rule would exclude everything",
            );
            continue;
        }
        let mut pairs = Vec::new();
        for e in &t.entries {
            let Some(fi) = factors.iter().position(|f| f.name == e.key) else {
                let hint = if factors.is_empty() {
                    "declare factors in [factors] first".to_string()
                } else {
                    suggest::did_you_mean_or_list(&e.key, names.iter().copied())
                };
                cx.error_hint(
                    &e.key_span,
                    format!("exclusion rule names an unknown factor `{}`", e.key),
                    hint,
                );
                continue;
            };
            let f = &factors[fi];
            let Some(text) = e.node.value.scalar_text() else {
                cx.error(
                    &e.node.span,
                    format!(
                        "an exclusion rule gives one level of `{}`, not {}",
                        f.name,
                        e.node.value.type_name()
                    ),
                );
                continue;
            };
            match f.levels.iter().position(|l| l.name == text) {
                Some(li) => pairs.push((fi, li)),
                None => cx.error_hint(
                    &e.node.span,
                    format!("factor `{}` has no level `{text}`", f.name),
                    suggest::did_you_mean_or_list(&text, f.levels.iter().map(|l| l.name.as_str())),
                ),
            }
        }
        rules.push(Rule { pairs });
    }
    (cx.errors() == before).then_some(rules)
}

/// Every combination of levels (as level indices, one per factor), the first factor varying
/// slowest, minus those an exclusion rule matches. One empty combination with no factors.
pub(crate) fn matrix(factors: &[Factor], rules: &[Rule]) -> Vec<Vec<usize>> {
    let mut combos: Vec<Vec<usize>> = vec![Vec::new()];
    for f in factors {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                (0..f.levels.len()).map(move |l| {
                    let mut c = c.clone();
                    c.push(l);
                    c
                })
            })
            .collect();
    }
    combos.retain(|c| {
        !rules
            .iter()
            .any(|r| r.pairs.iter().all(|&(f, l)| c[f] == l))
    });
    combos
}

/// The number of combinations before exclusion (saturating).
pub(crate) fn full_size(factors: &[Factor]) -> usize {
    factors
        .iter()
        .fold(1usize, |n, f| n.saturating_mul(f.levels.len()))
}

/// `factor=level` pairs joined by a space, or `default` without factors.
pub(crate) fn label(factors: &[Factor], combo: &[usize]) -> String {
    if factors.is_empty() {
        return "default".into();
    }
    factors
        .iter()
        .zip(combo)
        .map(|(f, &l)| format!("{}={}", f.name, f.levels[l].name))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Factor name → the level's value.
pub(crate) fn values(factors: &[Factor], combo: &[usize]) -> Map<String, Json> {
    factors
        .iter()
        .zip(combo)
        .map(|(f, &l)| (f.name.clone(), f.levels[l].node.to_json()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::error::Source;
    use crate::plan::tree;
    use std::path::Path;

    /// Factors and rules of `text`, or the error messages.
    fn read(text: &str) -> Result<(Vec<Factor>, Vec<Rule>), Vec<String>> {
        let src = Source::new(Path::new("t.toml"), text);
        let root = tree::parse(text).ok().unwrap();
        let t = root.value.as_table().unwrap();
        let mut cx = Ctx::new(&src);
        let factors = read_factors(&mut cx, t.get("factors").unwrap());
        let rules = match (t.get("exclude"), &factors) {
            (Some(e), Some(f)) => read_exclude(&mut cx, e, f),
            _ => Some(Vec::new()),
        };
        match (factors, rules) {
            (Some(f), Some(r)) if cx.errors() == 0 => Ok((f, r)),
            _ => Err(cx.diag.errors.iter().map(|e| e.to_string()).collect()),
        }
    }

    #[test]
    fn cross_product_first_factor_slowest() {
        let (f, r) = read("[factors]\na = [\"x\", \"y\"]\nb = [1, 2, 3]\n").unwrap();
        let m = matrix(&f, &r);
        let labels: Vec<String> = m.iter().map(|c| label(&f, c)).collect();
        assert_eq!(
            labels,
            ["a=x b=1", "a=x b=2", "a=x b=3", "a=y b=1", "a=y b=2", "a=y b=3"]
        );
        assert_eq!(full_size(&f), 6);
        assert_eq!(values(&f, &m[4])["b"], serde_json::json!(2));
    }

    #[test]
    fn exclusion_matches_all_pairs_and_table_levels_by_name() {
        let (f, r) = read(
            "exclude = [ { a = \"y\", c = \"big\" }, { b = 1 } ]\n[factors]\na = [\"x\", \"y\"]\nb = [1, 2]\n\
             c = [ { name = \"small\", n = 1 }, { name = \"big\", n = 2 } ]\n",
        )
        .unwrap();
        let labels: Vec<String> = matrix(&f, &r).iter().map(|c| label(&f, c)).collect();
        assert_eq!(
            labels,
            ["a=x b=2 c=small", "a=x b=2 c=big", "a=y b=2 c=small"]
        );
    }

    #[test]
    fn unnamed_table_levels_are_numbered() {
        let (f, _) =
            read("[factors]\nc = [ { n = 1 }, { name = \"two\", n = 2 }, { n = 3 } ]\n").unwrap();
        let names: Vec<&str> = f[0].levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["#1", "two", "#3"]);
        assert!(f[0].tables);
        // `${c}` stands for the table without its name.
        let v = f[0].levels[1].substitute_value().to_json();
        assert_eq!(v, serde_json::json!({"n": 2}));
    }

    #[test]
    fn no_factors_is_one_default_config() {
        assert_eq!(matrix(&[], &[]), vec![Vec::<usize>::new()]);
        assert_eq!(label(&[], &[]), "default");
    }

    #[test]
    fn bad_factors_are_located() {
        let e = read("[factors]\na = []\n").unwrap_err();
        assert_eq!(e, ["t.toml:2:5: factor `a` has no levels\n  hint: give it at least one level, or remove it"]);
        let e = read("[factors]\na = [1, \"1\"]\n").unwrap_err();
        assert!(
            e[0].starts_with("t.toml:2:9: factor `a` has two levels named `1`"),
            "{e:?}"
        );
        let e = read("[factors]\na = [1, {n = 1}]\n").unwrap_err();
        assert!(
            e[0].starts_with("t.toml:2:9: the levels of `factors.a` mix"),
            "{e:?}"
        );
        let e = read("exclude = [{ b = 1 }]\n[factors]\na = [1]\n").unwrap_err();
        assert!(
            e[0].starts_with("t.toml:1:14: exclusion rule names an unknown factor `b`"),
            "{e:?}"
        );
        let e = read("exclude = [{ a = 2 }]\n[factors]\na = [1]\n").unwrap_err();
        assert!(
            e[0].starts_with("t.toml:1:18: factor `a` has no level `2`"),
            "{e:?}"
        );
    }
}
