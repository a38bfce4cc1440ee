//! iolab-tools: other benchmarks under iolab's harness. One [`Adapter`] per tool, each in a
//! file of its own, knows how to run the tool (a command template with iolab's
//! placeholders, [`template`]) and how to read what it printed: a versioned parser with
//! validity rules (exit code, error fields, a missing summary, sentinels, a non-numeric, zero
//! or NaN value where a number is required, units checked, never guessed) that says why an
//! output is not a result instead of giving a wrong number.
//!
//! The `exec` workload kind (iolab-exec) runs the commands and stores the raw output with
//! each run; this crate starts no process, so its parsers are tested on captured output of
//! the real tools (`testdata/`).
//!
//! Adding a tool: a file here implementing [`Adapter`], a line in [`ADAPTERS`], its captures
//! and parser tests, and its section in docs/harness.md.

pub mod adapter;
mod iperf3;
mod sysbench;
pub mod template;

mod fio;
mod generic;

pub use adapter::{
    Adapter, Claimed, Command, FileKey, Invalid, Invocation, Key, Network, OptError, Opts, Parsed,
    Placeholders, Raw, Server, ToolRun,
};

/// Every adapter, in the order help and docs list them.
pub static ADAPTERS: &[&dyn Adapter] = &[
    &fio::Fio,
    &iperf3::Iperf3,
    &sysbench::Sysbench,
    &generic::Generic,
];

/// The adapter `tool = "name"` selects.
pub fn find(name: &str) -> Option<&'static dyn Adapter> {
    ADAPTERS.iter().copied().find(|a| a.name() == name)
}

/// The names of every adapter, for messages.
pub fn names() -> Vec<&'static str> {
    ADAPTERS.iter().map(|a| a.name()).collect()
}

#[cfg(test)]
#[allow(dead_code)] // the adapters' parser tests use it
pub(crate) mod testdata {
    //! Captured output of the real tools, kept in `testdata/<tool>/`.

    use crate::adapter::Raw;

    /// The bytes of `testdata/<path>`.
    pub fn read(path: &str) -> Vec<u8> {
        let p = format!("{}/testdata/{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    /// A run that exited 0 having printed `text` on stdout.
    pub fn stdout(text: &str) -> Raw {
        Raw {
            exit_code: Some(0),
            stdout: text.as_bytes().to_vec(),
            ..Raw::default()
        }
    }

    /// Options with `keys` (a JSON object) and nothing else.
    pub fn opts(keys: serde_json::Value) -> crate::Opts {
        crate::Opts {
            keys: keys.as_object().cloned().unwrap_or_default(),
            ..crate::Opts::default()
        }
    }

    /// `got` is `want` to within 1e-12 of it: serde_json's fast float parsing can be one
    /// unit in the last place off the printed decimal.
    pub fn close(got: Option<f64>, want: f64) {
        let got = got.expect("a value");
        assert!(
            (got - want).abs() <= want.abs() * 1e-12,
            "{got} is not {want}"
        );
    }

    /// docs/`file`'s section `## title`, up to the next `## `.
    pub fn doc_section(file: &str, title: &str) -> String {
        let p = format!("{}/../../docs/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
        let head = format!("\n## {title}\n");
        let start = text
            .find(&head)
            .unwrap_or_else(|| panic!("docs/{file} has no section `## {title}`"));
        let rest = &text[start + head.len()..];
        rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
    }

    /// A run that exited with `code`, its stdout and stderr read from `testdata/<stem>.stdout`
    /// and `.stderr` (a missing one is empty).
    pub fn raw(stem: &str, code: i32) -> Raw {
        let opt = |ext: &str| {
            let p = format!("{}/testdata/{stem}.{ext}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read(p).unwrap_or_default()
        };
        Raw {
            exit_code: Some(code),
            stdout: opt("stdout"),
            stderr: opt("stderr"),
            ..Raw::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adapters_have_distinct_names_and_consistent_metrics() {
        let mut names = names();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "two adapters share a name");
        // The exec kind declares the union of its adapters' metrics: a name two adapters
        // share must mean the same thing.
        let all: Vec<_> = ADAPTERS.iter().flat_map(|a| a.metrics()).collect();
        for a in &all {
            assert!(
                iolab_metrics::find(iolab_metrics::COMMON, &a.name).is_none(),
                "{} redeclares a common metric",
                a.name
            );
            for b in &all {
                if a.name == b.name {
                    assert_eq!(a, b, "{} is declared two ways", a.name);
                }
            }
        }
    }

    #[test]
    fn every_adapter_has_a_section_naming_its_keys_and_metrics() {
        let doc = |name: &str| {
            let p = format!("{}/../../docs/{name}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
        };
        let harness = doc("harness.md");
        let metrics = doc("metrics.md");
        for a in ADAPTERS {
            let head = format!("\n## {}\n", a.name());
            let from = harness
                .find(&head)
                .unwrap_or_else(|| panic!("docs/harness.md has no `## {}`", a.name()));
            let rest = &harness[from + head.len()..];
            let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
            for k in a.keys() {
                assert!(
                    section.contains(&format!("`{}`", k.name)),
                    "docs/harness.md, ## {}: no `{}`",
                    a.name(),
                    k.name
                );
            }
            for m in a.metrics() {
                for text in [section, metrics.as_str()] {
                    assert!(
                        text.contains(&format!("`{}`", m.name)),
                        "{}'s `{}` is not documented",
                        a.name(),
                        m.name
                    );
                }
            }
        }
    }
}
