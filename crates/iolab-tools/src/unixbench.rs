//! UnixBench (`tool = "unixbench"`, github kdlucas/byte-unixbench): `Run -c N -i I TESTS`
//! with `UB_OUTPUT_CSV=true` writes `{out}/unixbench.csv` (`Concurrency,<test titles>`, then
//! a row per `-c`) next to its text report `{out}/unixbench`, which gives each score's unit
//! and the index. Its file tests (`fstime`, `fsbuffer`, `fsdisk`) copy small files without
//! fsync: they measure the page cache and system calls, not the disk.

use std::borrow::Cow;

use iolab_metrics::{Better, MetricDef};

use crate::adapter::{
    expand_args, parse_number, Adapter, Command, Invalid, Invocation, Key, OptError, Opts, Parsed,
    Placeholders, Raw, ToolRun,
};

pub struct UnixBench;

/// `UB_OUTPUT_FILE_NAME`: the report's name in `{out}`; the CSV adds `.csv`.
const REPORT: &str = "unixbench";
const CSV: &str = "unixbench.csv";

/// One UnixBench test iolab reads: its name on `Run`'s command line, its title (the CSV's
/// column and the report's line), the unit its score is in, and its metric.
struct Test {
    name: &'static str,
    title: &'static str,
    unit: &'static str,
    metric: &'static str,
}

macro_rules! unixbench_tests {
    ($(($name:literal, $title:literal, $unit:tt, $metric:literal)),* $(,)?) => {
        const TESTS: &[Test] = &[$(Test { name: $name, title: $title, unit: $unit, metric: $metric }),*];
        static METRICS: &[MetricDef] = &[
            $(MetricDef::new(
                $metric,
                metric_unit($unit),
                Some(Better::Higher),
                concat!("UnixBench ", $title),
                concat!("UnixBench's score for `", $name, "` (", $title, "), in ", $unit, metric_note!($unit)),
            ),)*
            MetricDef::new(
                "unixbench_index",
                "",
                Some(Better::Higher),
                "UnixBench index",
                "UnixBench's System Benchmarks Index Score: the geometric mean of the tests' scores over their baselines × 10 (partial when the run is not the whole index)",
            ),
        ];
    };
}

/// The unit a score is recorded in: KBps becomes MiB/s.
const fn metric_unit(unit: &str) -> &'static str {
    match unit.as_bytes() {
        b"KBps" => "MiB/s",
        b"lps" => "loop/s",
        b"lpm" => "loop/min",
        _ => "MWIPS",
    }
}

/// What the description adds after the unit.
macro_rules! metric_note {
    ("KBps") => {
        " (KiB per second), recorded in MiB/s"
    };
    ($u:literal) => {
        ""
    };
}

unixbench_tests![
    (
        "dhry2reg",
        "Dhrystone 2 using register variables",
        "lps",
        "unixbench_dhry2reg"
    ),
    (
        "whetstone-double",
        "Double-Precision Whetstone",
        "MWIPS",
        "unixbench_whetstone_double"
    ),
    (
        "syscall",
        "System Call Overhead",
        "lps",
        "unixbench_syscall"
    ),
    (
        "context1",
        "Pipe-based Context Switching",
        "lps",
        "unixbench_context1"
    ),
    ("pipe", "Pipe Throughput", "lps", "unixbench_pipe"),
    ("spawn", "Process Creation", "lps", "unixbench_spawn"),
    ("execl", "Execl Throughput", "lps", "unixbench_execl"),
    (
        "fstime-w",
        "File Write 1024 bufsize 2000 maxblocks",
        "KBps",
        "unixbench_fstime_w_mib_per_s"
    ),
    (
        "fstime-r",
        "File Read 1024 bufsize 2000 maxblocks",
        "KBps",
        "unixbench_fstime_r_mib_per_s"
    ),
    (
        "fstime",
        "File Copy 1024 bufsize 2000 maxblocks",
        "KBps",
        "unixbench_fstime_mib_per_s"
    ),
    (
        "fsbuffer-w",
        "File Write 256 bufsize 500 maxblocks",
        "KBps",
        "unixbench_fsbuffer_w_mib_per_s"
    ),
    (
        "fsbuffer-r",
        "File Read 256 bufsize 500 maxblocks",
        "KBps",
        "unixbench_fsbuffer_r_mib_per_s"
    ),
    (
        "fsbuffer",
        "File Copy 256 bufsize 500 maxblocks",
        "KBps",
        "unixbench_fsbuffer_mib_per_s"
    ),
    (
        "fsdisk-w",
        "File Write 4096 bufsize 8000 maxblocks",
        "KBps",
        "unixbench_fsdisk_w_mib_per_s"
    ),
    (
        "fsdisk-r",
        "File Read 4096 bufsize 8000 maxblocks",
        "KBps",
        "unixbench_fsdisk_r_mib_per_s"
    ),
    (
        "fsdisk",
        "File Copy 4096 bufsize 8000 maxblocks",
        "KBps",
        "unixbench_fsdisk_mib_per_s"
    ),
    (
        "shell1",
        "Shell Scripts (1 concurrent)",
        "lpm",
        "unixbench_shell1"
    ),
    (
        "shell8",
        "Shell Scripts (8 concurrent)",
        "lpm",
        "unixbench_shell8"
    ),
    (
        "shell16",
        "Shell Scripts (16 concurrent)",
        "lpm",
        "unixbench_shell16"
    ),
    ("arithoh", "Arithoh", "lps", "unixbench_arithoh"),
    ("short", "Arithmetic Test (short)", "lps", "unixbench_short"),
    ("int", "Arithmetic Test (int)", "lps", "unixbench_int"),
    ("long", "Arithmetic Test (long)", "lps", "unixbench_long"),
    ("float", "Arithmetic Test (float)", "lps", "unixbench_float"),
    (
        "double",
        "Arithmetic Test (double)",
        "lps",
        "unixbench_double"
    ),
    (
        "dc",
        "Dc: sqrt(2) to 99 decimal places",
        "lpm",
        "unixbench_dc"
    ),
    (
        "hanoi",
        "Recursion Test -- Tower of Hanoi",
        "lps",
        "unixbench_hanoi"
    ),
    (
        "grep",
        "Grep a large file (system's grep)",
        "lpm",
        "unixbench_grep"
    ),
    (
        "sysexec",
        "Exec System Call Overhead",
        "lps",
        "unixbench_sysexec"
    ),
];

static KEYS: &[Key] = &[
    Key {
        name: "path",
        doc: "UnixBench's directory, where its `Run` script is (relative to the experiment file); required: Run builds and finds its programs there",
    },
    Key {
        name: "tests",
        doc: "the tests to run, by the names Run takes (default [\"fstime\", \"dhry2reg\"], about a minute)",
    },
    Key {
        name: "copies",
        doc: "`-c`: copies of each test run at once (default 1); scores are their sum",
    },
    Key {
        name: "iterations",
        doc: "`-i`: passes of each long test (default 1; UnixBench's own is 10, and a third of it for its short tests)",
    },
];

impl Adapter for UnixBench {
    fn name(&self) -> &'static str {
        "unixbench"
    }

    fn program(&self) -> &'static str {
        "Run"
    }

    fn install(&self) -> &'static str {
        "build it from https://github.com/kdlucas/byte-unixbench (make in UnixBench/) and give its directory as `path`"
    }

    fn version_args(&self) -> &'static [&'static str] {
        // Run has no version option (any unknown option is an error); the version is in its
        // report, which `parse` notes.
        &[]
    }

    fn parser_version(&self) -> u32 {
        1
    }

    fn keys(&self) -> &'static [Key] {
        KEYS
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn configure(&self, opts: &Opts) -> Result<Box<dyn ToolRun>, OptError> {
        let Some(path) = opts.str("path")? else {
            return Err(OptError::new("path", "UnixBench needs its directory").hint(
                "path = \"/opt/byte-unixbench/UnixBench\": the directory holding Run and pgms/",
            ));
        };
        // Absolute: Run is started from the run's directory, and `make -C` must find it.
        let dir = std::path::absolute(opts.base.join(path))
            .map_err(|e| OptError::new("path", format!("cannot make {path:?} absolute: {e}")))?;
        let dir = dir.to_string_lossy().into_owned();
        if dir.contains('\'') {
            return Err(OptError::new(
                "path",
                format!("{dir:?} has a single quote, which Run's make command cannot take"),
            ));
        }
        let tests = tests(opts)?;
        let copies = opts.uint("copies", 1, u64::MAX)?.unwrap_or(1);
        let iterations = opts.uint("iterations", 1, u64::MAX)?.unwrap_or(1);
        opts.checked_args(false)?;
        opts.refuse_args(&[
            ("-c", "set the copies with `copies`"),
            ("-i", "set the iterations with `iterations`"),
            (
                "-q",
                "iolab reads Run's report and CSV files, not what it prints",
            ),
            (
                "-v",
                "iolab reads Run's report and CSV files, not what it prints",
            ),
            (
                "-b",
                "iolab reads Run's report and CSV files, not what it prints",
            ),
        ])?;
        if let Some(a) = opts.args.iter().find(|a| !a.starts_with('-')) {
            return Err(OptError::new(
                "args",
                format!("`{a}`: tests go in `tests`, where iolab knows their units"),
            )
            .hint(format!("tests = [\"{a}\"]")));
        }
        opts.refuse_unused_time("UnixBench")?;
        Ok(Box::new(UnixBenchRun {
            dir,
            tests,
            copies,
            iterations,
            args: opts.args.clone(),
        }))
    }
}

/// `tests`: distinct names of tests iolab knows (their units and metrics).
fn tests(opts: &Opts) -> Result<Vec<&'static Test>, OptError> {
    let Some(v) = opts.keys.get("tests") else {
        return Ok(["fstime", "dhry2reg"]
            .iter()
            .filter_map(|n| TESTS.iter().find(|t| t.name == *n))
            .collect());
    };
    let known = || TESTS.iter().map(|t| t.name).collect::<Vec<_>>().join(", ");
    let Some(list) = v.as_array().filter(|l| !l.is_empty()) else {
        return Err(OptError::new(
            "tests",
            format!(
                "expected a non-empty array of test names, found {}",
                crate::adapter::kind_of(v)
            ),
        )
        .hint("tests = [\"fstime\", \"dhry2reg\"]"));
    };
    let mut out: Vec<&'static Test> = Vec::new();
    for t in list {
        let name = t.as_str().unwrap_or_default();
        let Some(test) = TESTS.iter().find(|k| k.name == name) else {
            return Err(OptError::new(
                "tests",
                format!(
                    "{t} is not a UnixBench test iolab reads (groups such as \"index\" are \
                     listed one by one; the graphics tests need X)"
                ),
            )
            .hint(format!("one of {}", known())));
        };
        if out.iter().any(|o| o.name == name) {
            return Err(OptError::new("tests", format!("{name:?} is listed twice")));
        }
        out.push(test);
    }
    Ok(out)
}

#[derive(Debug)]
struct UnixBenchRun {
    dir: String,
    tests: Vec<&'static Test>,
    copies: u64,
    iterations: u64,
    args: Vec<String>,
}

impl std::fmt::Debug for Test {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl ToolRun for UnixBenchRun {
    /// UnixBench counts no operations: the first test's score.
    fn stop_metric(&self) -> Option<&str> {
        self.tests.first().map(|t| t.metric)
    }

    fn invocation(&self, at: &Placeholders) -> Invocation {
        let mut argv = vec![
            format!("{}/{}", self.dir, UnixBench.program()),
            "-c".into(),
            self.copies.to_string(),
            "-i".into(),
            self.iterations.to_string(),
        ];
        argv.extend(expand_args(&self.args, at));
        argv.extend(self.tests.iter().map(|t| t.name.to_string()));
        let env = [
            ("UB_OUTPUT_CSV", "true".to_string()),
            ("UB_RESULTDIR", at.out.clone()),
            ("UB_TMPDIR", at.dir.clone()),
            ("UB_OUTPUT_FILE_NAME", REPORT.to_string()),
            // Run runs `$MAKE check` (and `$MAKE all`) in the current directory before
            // testing; from anywhere else it aborts with `"make all" failed`.
            ("MAKE", format!("make -C '{}'", self.dir)),
        ];
        Invocation {
            main: Command {
                env: env.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                ..Command::new(argv)
            },
            outputs: vec![CSV.into(), REPORT.into()],
            // Run writes `kill_run` (a script that kills it) into UB_TMPDIR and never removes
            // it; fstime's files stay there when it is killed.
            leftovers: ["kill_run", "dummy0-*", "dummy1-*"]
                .iter()
                .map(|f| format!("{}/{f}", at.dir))
                .collect(),
            ..Invocation::default()
        }
    }

    fn metrics(&self) -> Cow<'static, [MetricDef]> {
        Cow::Borrowed(METRICS)
    }

    fn parse(&self, raw: &Raw) -> Result<Parsed, Invalid> {
        raw.check_exit("UnixBench").map_err(|e| {
            if raw.stderr_text().contains("\"make all\" failed") {
                e.hint("UnixBench's programs are not built: run make in its directory (`path`)")
            } else {
                e
            }
        })?;
        let csv = text(raw, CSV)?;
        let report = text(raw, REPORT)?;
        let mut lines = csv.lines().filter(|l| !l.trim().is_empty());
        let Some(head) = lines.next() else {
            return Err(Invalid::new(format!(
                "UnixBench's {CSV} is empty: it stopped before finishing its tests"
            )));
        };
        let titles: Vec<&str> = head.split(',').collect();
        if titles[0] != "Concurrency" {
            return Err(Invalid::new(format!(
                "UnixBench's {CSV} does not start with `Concurrency,`: {head:?}"
            )));
        }
        let rows: Vec<&str> = lines.collect();
        let [row] = rows.as_slice() else {
            return Err(Invalid::new(format!(
                "UnixBench's {CSV} has {} rows under its titles; one run with -c {} gives one",
                rows.len(),
                self.copies
            )));
        };
        let cells: Vec<&str> = row.split(',').collect();
        if cells.len() != titles.len() {
            return Err(Invalid::new(format!(
                "UnixBench's {CSV} row has {} cells for {} titles",
                cells.len(),
                titles.len()
            )));
        }
        if cells[0].trim() != self.copies.to_string() {
            return Err(Invalid::new(format!(
                "UnixBench's {CSV} row is for concurrency {}, but this run asked for -c {}",
                cells[0], self.copies
            )));
        }
        let mut p = Parsed::default();
        for t in &self.tests {
            let Some(i) = titles.iter().position(|c| c.trim() == t.title) else {
                return Err(Invalid::new(format!(
                    "UnixBench's {CSV} has no column for `{}` ({}): it did not run",
                    t.name, t.title
                )));
            };
            let what = format!("UnixBench's `{}` score", t.name);
            let score = parse_number(cells[i], &what, true)?;
            let (unit, reported) = report_line(&report, t)?;
            if unit != t.unit {
                return Err(Invalid::new(format!(
                    "UnixBench's report gives `{}` in {unit:?}; iolab reads it in {:?}",
                    t.name, t.unit
                )));
            }
            if (reported - score).abs() > 0.05 + 1e-9 * score {
                return Err(Invalid::new(format!(
                    "UnixBench's report says {reported} {unit} for `{}`, its CSV {score}",
                    t.name
                )));
            }
            p.set(
                t.metric,
                if unit == "KBps" {
                    score / 1024.0
                } else {
                    score
                },
            );
        }
        if let Some((index, partial)) = index(&report) {
            p.set("unixbench_index", index);
            if partial {
                p.notes.push(
                    "the index is UnixBench's partial one: over the tests run, not its whole index set"
                        .into(),
                );
            }
        }
        if let Some(v) = report
            .lines()
            .find_map(|l| l.trim().strip_prefix("BYTE UNIX Benchmarks (Version "))
        {
            p.notes
                .push(format!("UnixBench version {}", v.trim_end_matches(')')));
        }
        Ok(p)
    }
}

/// Output file `name` as text, or why it is missing.
fn text(raw: &Raw, name: &str) -> Result<String, Invalid> {
    raw.file(name)
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .ok_or_else(|| {
            Invalid::new(format!(
                "UnixBench left no {name} in the run's scratch directory"
            ))
            .hint("UB_OUTPUT_CSV needs UnixBench 5.1.4 or later (github kdlucas/byte-unixbench)")
        })
}

/// `Dhrystone 2 using register variables       75074795.3 lps   (10.0 s, 1 samples)`: the
/// unit and the score of test `t` in the report's results.
fn report_line(report: &str, t: &Test) -> Result<(String, f64), Invalid> {
    let line = report
        .lines()
        .filter_map(|l| l.strip_prefix(t.title))
        .find(|rest| rest.contains(" samples)"));
    let Some(rest) = line else {
        return Err(Invalid::new(format!(
            "UnixBench's report has no result line for `{}` ({}), which gives its unit",
            t.name, t.title
        )));
    };
    let mut words = rest.split_whitespace();
    let (Some(score), Some(unit)) = (words.next(), words.next()) else {
        return Err(Invalid::new(format!(
            "UnixBench's report line for `{}` has no score and unit: {rest:?}",
            t.name
        )));
    };
    let what = format!("UnixBench's reported `{}` score", t.name);
    let score = parse_number(score, &what, true)?;
    Ok((unit.to_string(), score))
}

/// `System Benchmarks Index Score (Partial Only)   3975.4`.
fn index(report: &str) -> Option<(f64, bool)> {
    let line = report
        .lines()
        .find(|l| l.starts_with("System Benchmarks Index Score"))?;
    let value = line.split_whitespace().last()?.parse::<f64>().ok()?;
    Some((value, line.contains("(Partial Only)"))).filter(|(v, _)| v.is_finite() && *v > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{raw, read};

    fn opts(keys: serde_json::Value) -> Opts {
        let mut o = Opts {
            keys: keys.as_object().cloned().unwrap_or_default(),
            base: "/opt".into(),
            ..Opts::default()
        };
        o.keys
            .insert("path".into(), "byte-unixbench/UnixBench".into());
        o
    }

    fn run(keys: serde_json::Value) -> Box<dyn ToolRun> {
        UnixBench.configure(&opts(keys)).unwrap()
    }

    /// A capture's stdout and stderr with its result files under the adapter's names.
    fn capture(stem: &str, code: i32) -> Raw {
        let mut r = raw(&format!("unixbench/{stem}"), code);
        r.files = vec![
            (CSV.into(), read(&format!("unixbench/{stem}.csv"))),
            (REPORT.into(), read(&format!("unixbench/{stem}.report"))),
        ];
        r
    }

    #[test]
    fn a_short_run_gives_each_score_in_its_unit() {
        // 1,75074795.3,972843.0 under Dhrystone 2 …, File Copy 1024 bufsize 2000 maxblocks;
        // the report: 75074795.3 lps, 972843.0 KBps, Index Score (Partial Only) 3975.4.
        let p = run(serde_json::json!({}))
            .parse(&capture("short", 0))
            .unwrap();
        assert_eq!(p.get("unixbench_dhry2reg"), Some(75074795.3));
        assert_eq!(p.get("unixbench_fstime_mib_per_s"), Some(972843.0 / 1024.0));
        assert_eq!(p.get("unixbench_index"), Some(3975.4));
        let fstime = METRICS
            .iter()
            .find(|d| d.name == "unixbench_fstime_mib_per_s");
        assert!(fstime
            .unwrap()
            .description
            .ends_with("in KBps (KiB per second), recorded in MiB/s"));
        assert_eq!(p.values.len(), 3);
        assert!(
            p.notes.iter().any(|n| n.contains("partial")),
            "{:?}",
            p.notes
        );
        assert!(
            p.notes.iter().any(|n| n == "UnixBench version 6.0.0"),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn a_run_killed_midway_is_invalid() {
        let r = run(serde_json::json!({}));
        let mut killed = capture("killed", 0);
        killed.exit_code = None;
        killed.signal = Some(15);
        let e = r.parse(&killed).unwrap_err();
        assert!(
            e.reason.starts_with("UnixBench was ended by signal 15"),
            "{e}"
        );
        // What it leaves: an empty CSV (Run opens it first) and a report without results.
        let e = r.parse(&capture("killed", 0)).unwrap_err();
        assert!(e.reason.contains("unixbench.csv is empty"), "{e}");
        let mut no_csv = capture("killed", 0);
        no_csv.files.remove(0);
        let e = r.parse(&no_csv).unwrap_err();
        assert!(e.reason.contains("no unixbench.csv"), "{e}");
    }

    #[test]
    fn an_unknown_test_is_runs_error() {
        let e = run(serde_json::json!({}))
            .parse(&raw("unixbench/unknown", 255))
            .unwrap_err();
        assert_eq!(
            e.reason,
            "UnixBench exited with code 255: Run: unknown test \"nope\""
        );
    }

    #[test]
    fn the_csv_and_report_are_checked() {
        let r = run(serde_json::json!({"tests": ["dhry2reg", "pipe"]}));
        let e = r.parse(&capture("short", 0)).unwrap_err();
        assert!(
            e.reason.contains("no column for `pipe` (Pipe Throughput)"),
            "{e}"
        );
        let r = run(serde_json::json!({"copies": 2}));
        let e = r.parse(&capture("short", 0)).unwrap_err();
        assert!(
            e.reason
                .contains("concurrency 1, but this run asked for -c 2"),
            "{e}"
        );
        let edit = |file: usize, from: &str, to: &str| {
            let mut c = capture("short", 0);
            let t = String::from_utf8(c.files[file].1.clone())
                .unwrap()
                .replace(from, to);
            c.files[file].1 = t.into_bytes();
            run(serde_json::json!({})).parse(&c).unwrap_err()
        };
        let e = edit(1, "972843.0 KBps", "972843.0 MBps");
        assert!(e.reason.contains("in \"MBps\""), "{e}");
        let e = edit(1, "75074795.3 lps", "75074790.3 lps");
        assert!(e.reason.contains("its CSV 75074795.3"), "{e}");
        let e = edit(0, "1,75074795.3,972843.0", "1,75074795.3,0.0");
        assert!(e.reason.contains("`fstime` score is 0"), "{e}");
        let e = edit(0, "1,75074795.3,972843.0", "1,75074795.3");
        assert!(
            e.reason.contains("1 cells") || e.reason.contains("2 cells"),
            "{e}"
        );
        let e = edit(
            0,
            "1,75074795.3,972843.0",
            "1,75074795.3,972843.0\n2,1.0,1.0",
        );
        assert!(e.reason.contains("2 rows"), "{e}");
    }

    #[test]
    fn the_command_runs_from_anywhere() {
        let o = Opts {
            args: vec!["-q".into()],
            ..opts(serde_json::json!({}))
        };
        assert_eq!(UnixBench.configure(&o).unwrap_err().key, "args");
        let r = run(serde_json::json!({"tests": ["syscall"], "copies": 2, "iterations": 3}));
        let at = Placeholders {
            dir: "/mnt/t".into(),
            out: "/tmp/o".into(),
            ..Placeholders::default()
        };
        let inv = r.invocation(&at);
        assert_eq!(
            inv.main.argv.join(" "),
            "/opt/byte-unixbench/UnixBench/Run -c 2 -i 3 syscall"
        );
        let env: Vec<String> = inv
            .main
            .env
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        assert_eq!(
            env,
            [
                "UB_OUTPUT_CSV=true",
                "UB_RESULTDIR=/tmp/o",
                "UB_TMPDIR=/mnt/t",
                "UB_OUTPUT_FILE_NAME=unixbench",
                "MAKE=make -C '/opt/byte-unixbench/UnixBench'",
            ]
        );
        assert_eq!(inv.outputs, ["unixbench.csv", "unixbench"]);
        assert_eq!(
            inv.leftovers,
            ["/mnt/t/kill_run", "/mnt/t/dummy0-*", "/mnt/t/dummy1-*"]
        );
    }

    #[test]
    fn options_are_checked() {
        let bad = |keys: serde_json::Value| UnixBench.configure(&opts(keys)).unwrap_err();
        assert!(bad(serde_json::json!({"tests": ["index"]}))
            .message
            .contains("one by one"));
        assert!(bad(serde_json::json!({"tests": ["pipe", "pipe"]}))
            .message
            .contains("twice"));
        assert_eq!(bad(serde_json::json!({"tests": []})).key, "tests");
        assert_eq!(bad(serde_json::json!({"copies": 0})).key, "copies");
        let e = UnixBench.configure(&Opts::default()).unwrap_err();
        assert_eq!(e.key, "path");
        let o = Opts {
            args: vec!["pipe".into()],
            ..opts(serde_json::json!({}))
        };
        assert!(UnixBench
            .configure(&o)
            .unwrap_err()
            .message
            .contains("`tests`"));
        let o = Opts {
            time_s: Some(10.0),
            ..opts(serde_json::json!({}))
        };
        assert_eq!(UnixBench.configure(&o).unwrap_err().key, "time");
    }
}
