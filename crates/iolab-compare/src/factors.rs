//! An experiment's factors and their levels, as its configurations carry them: each stored
//! configuration has `factors` (factor → the level's value), and the resolved specification
//! lists the factors with their levels in the experiment file's order.

use serde::Serialize;
use serde_json::{Map, Value};

/// A factor and its levels, in the experiment file's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Factor {
    pub name: String,
    pub levels: Vec<FactorLevel>,
}

/// One level of a factor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FactorLevel {
    /// As configuration labels write it ([`level_name`]).
    pub name: String,
    /// As stored with the configurations.
    pub value: Value,
}

impl Factor {
    /// The index of the level a configuration with these factor values has (`None`: it has no
    /// such factor, or a level this factor does not list).
    pub fn level_of(&self, factors: &Map<String, Value>) -> Option<usize> {
        let v = factors.get(&self.name)?;
        self.levels.iter().position(|l| &l.value == v)
    }
}

/// A level's name, as configuration labels write it: a scalar's text, a table level's
/// `name`, or `#i` (1-based) for a table without one.
pub fn level_name(v: &Value, index: usize) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(t) => match t.get("name") {
            Some(Value::String(s)) => s.clone(),
            _ => format!("#{}", index + 1),
        },
        other => other.to_string(),
    }
}

/// The experiment's factors. Factors and levels come from the resolved specification
/// (`factors`: `[{name, levels}]`, in the file's order): an experiment a command made has the
/// list empty, and no factors even when it gave its configurations some (a kind's matrix of
/// configurations drawn its own way, as heatmaps) — unless the command lists them. A level
/// only a configuration has is added in the order the configurations show it; without the
/// list at all (a database from before it), the configurations' factors are taken in that
/// order.
pub fn factors<'a>(
    spec: &Value,
    configs: impl IntoIterator<Item = &'a Map<String, Value>>,
) -> Vec<Factor> {
    let mut names: Vec<String> = Vec::new();
    let mut values: Vec<Vec<Value>> = Vec::new();
    let listed = spec.get("factors").and_then(Value::as_array);
    if let Some(list) = listed {
        for f in list {
            let (Some(name), Some(levels)) = (
                f.get("name").and_then(Value::as_str),
                f.get("levels").and_then(Value::as_array),
            ) else {
                continue;
            };
            names.push(name.to_string());
            values.push(levels.clone());
        }
    }
    for c in configs {
        if listed.is_none() {
            for name in c.keys() {
                if !names.contains(name) {
                    names.push(name.clone());
                    values.push(Vec::new());
                }
            }
        }
        for (name, vs) in names.iter().zip(values.iter_mut()) {
            if let Some(v) = c.get(name) {
                if !vs.contains(v) {
                    vs.push(v.clone());
                }
            }
        }
    }
    names
        .into_iter()
        .zip(values)
        .map(|(name, vs)| Factor {
            name,
            levels: vs
                .into_iter()
                .enumerate()
                .map(|(i, value)| FactorLevel {
                    name: level_name(&value, i),
                    value,
                })
                .collect(),
        })
        .collect()
}

/// `factor=level factor=level …` as (factor, level) indices into `factors`; `None` unless
/// every word names a factor and one of its levels.
pub fn parse_levels(factors: &[Factor], text: &str) -> Option<Vec<(usize, usize)>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    words
        .into_iter()
        .map(|w| {
            let (name, level) = w.split_once('=')?;
            let f = factors.iter().position(|f| f.name == name)?;
            let l = factors[f].levels.iter().position(|l| l.name == level)?;
            Some((f, l))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn listed_factors_keep_the_file_order() {
        let spec = json!({"factors": [
            {"name": "journal", "levels": ["ordered", "writeback", "journal"]},
            {"name": "dev", "levels": [{"name": "ssd", "x": 1}, {"x": 2}]},
        ]});
        let configs = [
            map(json!({"journal": "writeback", "dev": {"x": 2}})),
            map(json!({"journal": "other", "dev": {"name": "ssd", "x": 1}, "hidden": 1})),
        ];
        let f = factors(&spec, &configs);
        assert_eq!(f.len(), 2, "{f:?}");
        let names: Vec<&str> = f[0].levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["ordered", "writeback", "journal", "other"]);
        let names: Vec<&str> = f[1].levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["ssd", "#2"]);
        assert_eq!(f[0].level_of(&configs[0]), Some(1));
        assert_eq!(f[1].level_of(&configs[0]), Some(1));
        assert_eq!(f[0].level_of(&map(json!({}))), None);
        // Without the list, the configurations' factors in their order.
        let f = factors(&json!({}), &configs);
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["dev", "journal", "hidden"]);
        assert_eq!(f[2].levels[0].name, "1");
        let f = factors(&spec, &configs);
        assert_eq!(
            parse_levels(&f, "dev=#2 journal=ordered"),
            Some(vec![(1, 1), (0, 0)])
        );
        assert_eq!(parse_levels(&f, "journal=nope"), None);
        assert_eq!(parse_levels(&f, "nope=ordered"), None);
        assert_eq!(parse_levels(&f, ""), None);
    }
}
