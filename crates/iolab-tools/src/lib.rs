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
mod bonnie;
mod filebench;
mod fio;
mod generic;
mod iozone;
mod iperf3;
mod sysbench;
pub mod template;
mod unixbench;

pub use adapter::{
    Adapter, Claimed, Command, FileKey, Invalid, Invocation, Key, Network, OptError, Opts, Parsed,
    Placeholders, Raw, Server, ToolRun,
};

/// Every adapter, in the order help and docs list them.
pub static ADAPTERS: &[&dyn Adapter] = &[
    &fio::Fio,
    &iperf3::Iperf3,
    &sysbench::Sysbench,
    &unixbench::UnixBench,
    &bonnie::Bonnie,
    &iozone::Iozone,
    &filebench::Filebench,
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

    /// Options each adapter accepts, for the tests that go over every adapter.
    fn sample_opts(name: &str) -> Opts {
        let keys = match name {
            "unixbench" => serde_json::json!({"path": "UnixBench"}),
            "filebench" => serde_json::json!({"workload": "run 1\n"}),
            "bonnie" => serde_json::json!({"size": 64}),
            "fio" => serde_json::json!({"job": "[j]\nrw=read\nsize=1m\n"}),
            "sysbench" => serde_json::json!({"test": "cpu"}),
            "generic" => serde_json::json!({"command": ["true"], "metrics": [
                {"name": "x_per_s", "unit": "op/s", "better": "higher", "regex": "x: ([0-9.]+)"}
            ]}),
            _ => serde_json::json!({}),
        };
        Opts {
            keys: keys.as_object().cloned().unwrap_or_default(),
            ..Opts::default()
        }
    }

    #[test]
    fn the_metric_a_tool_run_asks_the_stopping_rule_to_watch_is_its_own() {
        for a in ADAPTERS {
            let run = a.configure(&sample_opts(a.name())).unwrap();
            let Some(m) = run.stop_metric() else { continue };
            let defs = run.metrics();
            let d = defs
                .iter()
                .chain(iolab_metrics::COMMON)
                .find(|d| d.name == m)
                .unwrap_or_else(|| panic!("{}: `{m}` is not one of its metrics", a.name()));
            assert!(d.better.is_some(), "{}: `{m}` has no direction", a.name());
        }
    }

    #[test]
    fn garbage_is_invalid_output_not_a_panic() {
        let bonnie = format!("1.98,2.00a,vm,1,1,25€{}", ",€".repeat(44));
        let outputs: [&[u8]; 7] = [
            b"",
            b"\xff\xfe\x00garbage\n",
            "€€€\n\"Writer report\"\n\"€\"\n\"1€\" €\n".as_bytes(),
            bonnie.as_bytes(),
            b"Output is in kBytes/sec\nExcel output is below:\n\"Writer report\"\n",
            "IO Summary: € ops € ops/s €/€ rd/wr €mb/s €ms/op\n".as_bytes(),
            b"Concurrency,\n,\n",
        ];
        for a in ADAPTERS {
            let opts = sample_opts(a.name());
            let run = a.configure(&opts).unwrap();
            for out in outputs {
                let raw = Raw {
                    exit_code: Some(0),
                    stdout: out.to_vec(),
                    stderr: out.to_vec(),
                    files: vec![
                        ("unixbench.csv".into(), out.to_vec()),
                        ("unixbench".into(), out.to_vec()),
                    ],
                    ..Raw::default()
                };
                assert!(
                    run.parse(&raw).is_err(),
                    "{} read {:?}",
                    a.name(),
                    String::from_utf8_lossy(out)
                );
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
                assert!(
                    metrics.contains(&format!("`{}`", m.name)),
                    "docs/metrics.md does not describe {}'s `{}`",
                    a.name(),
                    m.name
                );
            }
        }
    }
}
