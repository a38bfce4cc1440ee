//! Other tools' output parsers (crates/iolab-tools adapters). Input: the adapter's index in
//! `ADAPTERS`, the exit code, then stdout, stderr and the tool's two result files, separated
//! by NUL bytes (fio's `fio.json`, UnixBench's `unixbench.csv` and `unixbench` report).
#![no_main]

use std::sync::OnceLock;

use iolab_tools::{Opts, Raw, ToolRun, ADAPTERS};
use libfuzzer_sys::fuzz_target;

/// Options each adapter accepts (as iolab-tools' own tests configure them).
fn sample_opts(name: &str) -> Opts {
    let keys = match name {
        "unixbench" => serde_json::json!({"path": "UnixBench"}),
        "filebench" => serde_json::json!({"workload": "run 1\n"}),
        "bonnie" => serde_json::json!({"size": 64}),
        "fio" => serde_json::json!({"job": "[j]\nrw=read\nsize=1m\n"}),
        "sysbench" => serde_json::json!({"test": "cpu"}),
        "generic" => serde_json::json!({"command": ["true"], "metrics": [
            {"name": "x_per_s", "unit": "op/s", "better": "higher", "regex": "x: ([0-9.]+)"},
            {"name": "y_s", "unit": "s", "better": "lower", "source": "stderr",
             "regex": "([0-9.e+-]+) ([a-z]*)s", "units": {"": 1, "m": 1e-3, "u": 1e-6}}
        ]}),
        _ => serde_json::json!({}),
    };
    Opts {
        keys: keys.as_object().cloned().unwrap_or_default(),
        ..Opts::default()
    }
}

fn runs() -> &'static [Box<dyn ToolRun>] {
    static RUNS: OnceLock<Vec<Box<dyn ToolRun>>> = OnceLock::new();
    RUNS.get_or_init(|| {
        ADAPTERS
            .iter()
            .map(|a| {
                a.configure(&sample_opts(a.name()))
                    .unwrap_or_else(|e| panic!("{}: {e:?}", a.name()))
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let [which, code, rest @ ..] = data else {
        return;
    };
    let runs = runs();
    let run = &runs[usize::from(*which) % runs.len()];
    let mut parts = rest.splitn(4, |&b| b == 0);
    let mut next = || parts.next().unwrap_or_default().to_vec();
    let (stdout, stderr, file1, file2) = (next(), next(), next(), next());
    // 255 stands for a run a signal ended.
    let (exit_code, signal) = match code {
        255 => (None, Some(9)),
        c => (Some(i32::from(*c)), None),
    };
    let raw = Raw {
        exit_code,
        signal,
        timed_out: false,
        stdout,
        stderr,
        files: vec![
            ("fio.json".into(), file1.clone()),
            ("unixbench.csv".into(), file1),
            ("unixbench".into(), file2),
        ],
    };
    let _ = run.parse(&raw);
});
