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
pub mod template;

mod bonnie;
mod filebench;
mod iozone;
mod unixbench;

pub use adapter::{
    Adapter, Claimed, Command, Invalid, Invocation, Key, Network, OptError, Opts, Parsed,
    Placeholders, Raw, Server, ToolRun,
};

/// Every adapter, in the order help and docs list them.
pub static ADAPTERS: &[&dyn Adapter] = &[
    &unixbench::UnixBench,
    &bonnie::Bonnie,
    &iozone::Iozone,
    &filebench::Filebench,
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
            let mut opts = Opts::default();
            match a.name() {
                "unixbench" => opts.keys.insert("path".into(), "UnixBench".into()),
                "filebench" => opts.keys.insert("workload".into(), "run 1\n".into()),
                "bonnie" => opts.keys.insert("size".into(), 64.into()),
                _ => None,
            };
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
    fn every_adapter_is_documented() {
        let doc = |name: &str| {
            let p = format!("{}/../../docs/{name}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
        };
        let (harness, metrics) = (doc("harness.md"), doc("metrics.md"));
        for a in ADAPTERS {
            let head = format!("\n## {}\n", a.name());
            let Some(at) = harness.find(&head) else {
                panic!("docs/harness.md has no `## {}` section", a.name());
            };
            let section = &harness[at + head.len()..];
            let section = &section[..section.find("\n## ").unwrap_or(section.len())];
            for k in a.keys() {
                assert!(
                    section.contains(&format!("| `{}` |", k.name)),
                    "docs/harness.md's {} section does not describe its key `{}`",
                    a.name(),
                    k.name
                );
            }
            for m in a.metrics() {
                assert!(
                    metrics.contains(&format!("`{}`", m.name)),
                    "docs/metrics.md does not describe `{}`",
                    m.name
                );
            }
        }
    }
}
