//! iolab's placeholders in a tool's command template: `{dir}` (the run's directory, where
//! the tool does its I/O), `{out}` (the run's scratch directory, outside the target),
//! `{seed}`, `{time}` (the `time` option in whole seconds), `{server}` (the address of the
//! run's server), `{run}` (the repetition, from 0). `{{` and `}}` are literal braces. The
//! experiment's factors are substituted before this (`${factor}`), so a template can use both.

use crate::adapter::Placeholders;

/// Every placeholder, for messages and docs.
pub const NAMES: &[&str] = &["dir", "out", "seed", "time", "server", "run"];

/// A mistake in a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    pub message: String,
    pub hint: String,
}

/// Checks `template` without values: every placeholder is known and braces are balanced.
/// `has_time` and `has_server` say whether `{time}` and `{server}` will have values.
pub fn check(template: &str, has_time: bool, has_server: bool) -> Result<(), TemplateError> {
    scan(template, |name| match name {
        "time" if !has_time => Err(TemplateError {
            message: "`{time}` is used but `time` is not set".into(),
            hint: "add time = \"10s\" to exec = { … }".into(),
        }),
        "server" if !has_server => Err(TemplateError {
            message: "`{server}` is used but this tool runs no server".into(),
            hint: "`{server}` is the address of iperf3's server".into(),
        }),
        n if NAMES.contains(&n) => Ok(String::new()),
        n => Err(unknown(n)),
    })
    .map(drop)
}

/// `template` with the placeholders replaced by `at`'s values. Call [`check`] first: a
/// placeholder without a value here expands to nothing.
pub fn expand(template: &str, at: &Placeholders) -> Result<String, TemplateError> {
    scan(template, |name| {
        Ok(match name {
            "dir" => at.dir.clone(),
            "out" => at.out.clone(),
            "seed" => at.seed.to_string(),
            "time" => at.time_s.map(|t| t.to_string()).unwrap_or_default(),
            "server" => at.server.clone().unwrap_or_default(),
            "run" => at.run.to_string(),
            n => return Err(unknown(n)),
        })
    })
}

fn unknown(name: &str) -> TemplateError {
    TemplateError {
        message: format!("unknown placeholder `{{{name}}}`"),
        hint: format!(
            "iolab's placeholders are {}; write `{{{{` and `}}}}` for literal braces",
            NAMES
                .iter()
                .map(|n| format!("`{{{n}}}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn scan(
    t: &str,
    mut value: impl FnMut(&str) -> Result<String, TemplateError>,
) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
        } else if tail.starts_with('}') {
            return Err(TemplateError {
                message: format!("a lone `}}` in {t:?}"),
                hint: "write `}}` for a literal brace".into(),
            });
        } else {
            let Some(end) = tail.find('}') else {
                return Err(TemplateError {
                    message: format!("`{{` without its `}}` in {t:?}"),
                    hint: "write `{{` for a literal brace".into(),
                });
            };
            out.push_str(&value(&tail[1..end])?);
            rest = &tail[end + 1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Placeholders {
        Placeholders {
            dir: "/mnt/x".into(),
            out: "/tmp/o".into(),
            seed: 7,
            time_s: Some(5),
            server: Some("10.0.0.1".into()),
            run: 2,
        }
    }

    #[test]
    fn placeholders_expand_and_braces_escape() {
        let s = expand(
            "--directory={dir} --output={out}/j --seed={seed} -t {time} {{x}} -c {server}#{run}",
            &at(),
        );
        assert_eq!(
            s.unwrap(),
            "--directory=/mnt/x --output=/tmp/o/j --seed=7 -t 5 {x} -c 10.0.0.1#2"
        );
    }

    #[test]
    fn an_unknown_placeholder_is_named_with_the_known_ones() {
        let e = check("--dir={directory}", true, true).unwrap_err();
        assert_eq!(e.message, "unknown placeholder `{directory}`");
        assert!(e.hint.contains("`{dir}`"), "{}", e.hint);
        assert!(expand("{nope}", &at()).is_err());
    }

    #[test]
    fn time_and_server_need_values() {
        assert!(check("-t {time}", false, false)
            .unwrap_err()
            .message
            .contains("`time`"));
        assert!(check("-c {server}", true, false).is_err());
        assert!(check("-t {time} -c {server}", true, true).is_ok());
    }

    #[test]
    fn unbalanced_braces_are_errors() {
        assert!(check("a{b", true, true).is_err());
        assert!(check("a}b", true, true).is_err());
        assert!(check("json {{\"a\": 1}}", true, true).is_ok());
    }
}
