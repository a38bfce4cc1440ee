//! filebench (`tool = "filebench"`): a WML workload, given as a file or inline, is written to
//! `{out}/workload.f` with its `$dir` set to the run's directory (and its `run` to `time`), and
//! run as `filebench -f {out}/workload.f` under `setarch -R` (its worker processes map the
//! shared memory at the address the parent chose). Its result is the `IO Summary:` line and
//! the per-flowop lines above it; rates are in mb/s (MiB: filebench divides by 1024²) and
//! latencies in ms/op.
//!
//! filebench exits 0 after a syntax error and after a run that stopped early: a missing
//! `IO Summary` is what says the run failed.

use std::borrow::Cow;
use std::sync::LazyLock;

use iolab_metrics::{Better, MetricDef};
use regex::Regex;

use crate::adapter::{
    expand_args, parse_number, Adapter, Claimed, Command, Invalid, Invocation, Key, OptError, Opts,
    Parsed, Placeholders, Raw, ToolRun,
};

pub struct Filebench;

/// Where the workload is written in the run's scratch directory.
const WORKLOAD: &str = "workload.f";
const MIB: f64 = 1024.0 * 1024.0;

static METRICS: &[MetricDef] = &[
    MetricDef::new(
        "filebench_read_ops_per_s",
        "op/s",
        Some(Better::Higher),
        "filebench reads",
        "read flowops per second (the `rd` of filebench's IO Summary `rd/wr`)",
    ),
    MetricDef::new(
        "filebench_write_ops_per_s",
        "op/s",
        Some(Better::Higher),
        "filebench writes",
        "write flowops per second (the `wr` of filebench's IO Summary `rd/wr`)",
    ),
];

static KEYS: &[Key] = &[Key {
    name: "workload",
    doc: "the WML workload: a .f file (relative to the experiment file) or its text inline; its `$dir` is set to the run's directory and its `run` to `time`",
}];

static SET_DIR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^[ \t]*set[ \t]+\$dir[ \t]*=.*$").expect("valid regex"));
static RUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]*run([ \t]+[^ \t\r\n#]+)?[ \t]*$").expect("valid regex")
});
static PSRUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^[ \t]*psrun\b").expect("valid regex"));
static FLOWOP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]*flowop[ \t]+\S+[ \t]+.*?\bname[ \t]*=[ \t]*([^, \t\r\n]+)")
        .expect("valid regex")
});
static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"IO Summary:\s+(\S+) ops (\S+) ops/s (\S+)/(\S+) rd/wr\s+(\S+)mb/s\s+(\S+)ms/op")
        .expect("valid regex")
});
static FLOWOP_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+)\s+(\S+)ops\s+(\S+)ops/s\s+(\S+)mb/s\s+(\S+)ms/op\s+\[\S+ms - \s*\S+ms\]")
        .expect("valid regex")
});

impl Adapter for Filebench {
    fn name(&self) -> &'static str {
        "filebench"
    }

    fn program(&self) -> &'static str {
        "filebench"
    }

    fn install(&self) -> &'static str {
        "build it from https://github.com/filebench/filebench (libtoolize, aclocal, autoheader, automake --add-missing, autoconf, ./configure, make, make install)"
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["-h"]
    }

    /// `Filebench version 1.5-alpha3` → `1.5-alpha3`.
    fn version(&self, printed: &str) -> Option<String> {
        printed
            .lines()
            .find_map(|l| l.trim().strip_prefix("Filebench version"))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
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
        let Some(w) = opts.str("workload")? else {
            return Err(OptError::new("workload", "filebench needs a workload")
                .hint("workload = \"fileserver.f\" (a WML file next to the experiment file), or its text inline"));
        };
        let (text, source) = if w.contains('\n') {
            (w.to_string(), "the inline workload".to_string())
        } else {
            let path = opts.base.join(w);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                OptError::new("workload", format!("cannot read {}: {e}", path.display()))
                    .hint("a path relative to the experiment file, or the WML text inline (it has several lines)")
            })?;
            (text, path.display().to_string())
        };
        let runs = RUN.find_iter(&text).count();
        if runs > 1 {
            return Err(OptError::new(
                "workload",
                format!("{source} has {runs} `run` commands; iolab reads one IO Summary per run"),
            )
            .hint("keep one `run`: iolab repeats runs itself"));
        }
        if PSRUN.is_match(&text) {
            return Err(OptError::new(
                "workload",
                format!("{source} runs with `psrun`, which prints an IO Summary per period"),
            )
            .hint("use `run` (iolab reads one IO Summary per run)"));
        }
        if runs == 0 && opts.time_s.is_none() {
            return Err(OptError::new(
                "workload",
                format!(
                    "{source} has no `run` command: filebench would load it and stop \
                     without a result"
                ),
            )
            .hint(
                "set `time = \"10s\"` (iolab appends `run 10`), or end the workload with `run 10`",
            ));
        }
        opts.checked_args(false)?;
        opts.refuse_args(&[("-f", "give the workload with `workload`")])?;
        let mut names: Vec<String> = Vec::new();
        for c in FLOWOP.captures_iter(&text) {
            let n = metric_part(&c[1]);
            if !names.contains(&n) {
                names.push(n);
            }
        }
        Ok(Box::new(FilebenchRun {
            dir_prepended: !SET_DIR.is_match(&text),
            text,
            metrics: flowop_metrics(&names),
            args: opts.args.clone(),
        }))
    }
}

/// A flowop's name as part of a metric name: lower case, `_` for anything else than a
/// letter or digit.
fn metric_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The adapter's metrics and three per flowop of the workload.
fn flowop_metrics(names: &[String]) -> Vec<MetricDef> {
    let mut v = METRICS.to_vec();
    for n in names {
        let def =
            |suffix: &str, unit: &'static str, better, title: String, what: String| MetricDef {
                name: Cow::Owned(format!("filebench_flowop_{n}_{suffix}")),
                unit: Cow::Borrowed(unit),
                better: Some(better),
                title: Cow::Owned(title),
                description: Cow::Owned(what),
                headline: false,
                exact: false,
            };
        v.push(def(
            "ops_per_s",
            "op/s",
            Better::Higher,
            format!("filebench {n}"),
            format!("operations per second of flowop `{n}` (filebench's per-operation breakdown)"),
        ));
        v.push(def(
            "mib_per_s",
            "MiB/s",
            Better::Higher,
            format!("filebench {n}: bandwidth"),
            format!("MiB per second flowop `{n}` moved (filebench's mb/s)"),
        ));
        v.push(def(
            "lat_mean_ns",
            "ns",
            Better::Lower,
            format!("filebench {n}: mean latency"),
            format!("mean latency of flowop `{n}` (filebench's ms/op)"),
        ));
    }
    v
}

#[derive(Debug)]
struct FilebenchRun {
    text: String,
    /// The workload sets no `$dir`: iolab puts `set $dir=…` first, so filebench's line
    /// numbers are one more than the workload's.
    dir_prepended: bool,
    metrics: Vec<MetricDef>,
    args: Vec<String>,
}

impl FilebenchRun {
    /// The workload as filebench runs it: `$dir` is the run's directory; with `time`, the
    /// `run` command runs that long (replaced in place, or appended, so that line numbers
    /// stay the workload's).
    fn workload(&self, at: &Placeholders) -> String {
        let set_dir = format!("set $dir={}", at.dir);
        let mut text = if self.dir_prepended {
            format!("{set_dir}\n{}", self.text)
        } else {
            SET_DIR
                .replace_all(&self.text, regex::NoExpand(&set_dir))
                .into_owned()
        };
        if let Some(t) = at.time_s {
            let run = format!("run {t}");
            if RUN.is_match(&text) {
                text = RUN.replace_all(&text, regex::NoExpand(&run)).into_owned();
            } else {
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&run);
                text.push('\n');
            }
        }
        text
    }
}

impl ToolRun for FilebenchRun {
    fn invocation(&self, at: &Placeholders) -> Invocation {
        let mut argv = vec![
            Filebench.program().to_string(),
            "-f".into(),
            format!("{}/{WORKLOAD}", at.out),
        ];
        argv.extend(expand_args(&self.args, at));
        Invocation {
            main: Command {
                no_aslr: true,
                ..Command::new(argv)
            },
            inputs: vec![(WORKLOAD.into(), self.workload(at).into_bytes())],
            // Its shared-memory file, left when filebench is killed (186 MB).
            leftovers: vec!["/tmp/filebench-shm-*".into()],
            ..Invocation::default()
        }
    }

    fn metrics(&self) -> Cow<'static, [MetricDef]> {
        Cow::Owned(self.metrics.clone())
    }

    fn parse(&self, raw: &Raw) -> Result<Parsed, Invalid> {
        raw.check_exit("filebench")?;
        let out = raw.stdout_text();
        let said = self.said(raw);
        let summaries: Vec<&str> = out.lines().filter(|l| l.contains("IO Summary:")).collect();
        let line = match summaries.as_slice() {
            [one] => *one,
            [] => {
                let why = if said.is_empty() {
                    String::new()
                } else {
                    format!("; it said: {}", said.join(" / "))
                };
                let mut inv = Invalid::new(format!(
                    "filebench printed no IO Summary (it exits 0 after a syntax error or a run that stopped early){why}"
                ));
                if self.dir_prepended && said.iter().any(|s| s.contains("line ")) {
                    inv = inv.hint("its line numbers count the `set $dir=…` line iolab put first: subtract one");
                }
                return Err(inv);
            }
            more => {
                return Err(Invalid::new(format!(
                    "filebench printed {} IO Summary lines; iolab reads one per run",
                    more.len()
                )))
            }
        };
        let Some(c) = SUMMARY.captures(line) else {
            return Err(Invalid::new(format!(
                "filebench's IO Summary is not in the form `N ops X ops/s R/W rd/wr M mb/s L ms/op`: {:?}",
                line.trim()
            )));
        };
        let num = |i: usize, what: &str, positive: bool| {
            let what = format!("filebench's IO Summary {what}");
            parse_number(&c[i], &what, positive)
        };
        let ops = num(1, "ops", true)?;
        let ops_per_s = num(2, "ops/s", true)?;
        let rd = num(3, "rd", false)?;
        let wr = num(4, "wr", false)?;
        let mb_s = num(5, "mb/s", false)?;
        let ms_op = num(6, "ms/op", false)?;
        let mut p = Parsed::default();
        p.set("ops", ops);
        p.set("ops_per_s", ops_per_s);
        p.set("mib_per_s", mb_s);
        if ms_op > 0.0 {
            p.set("lat_mean_ns", ms_op * 1e6);
        } else {
            p.notes
                .push("the mean latency is under filebench's 0.001 ms resolution: not set".into());
        }
        p.set("filebench_read_ops_per_s", rd);
        p.set("filebench_write_ops_per_s", wr);
        self.flowops(&out, &mut p)?;
        p.notes
            .extend(said.into_iter().map(|s| format!("filebench said: {s}")));
        p.claimed = Claimed {
            // The statistics window is ops / (ops/s): filebench rounds `Run took` to seconds.
            seconds: Some(ops / ops_per_s),
            bytes_per_s: Some(mb_s * MIB),
            ..Claimed::default()
        };
        Ok(p)
    }
}

impl FilebenchRun {
    /// What filebench said besides its progress: stderr (its errors and warnings, without
    /// the timestamp, continuation lines joined) and stdout's warnings.
    fn said(&self, raw: &Raw) -> Vec<String> {
        let mut said: Vec<String> = Vec::new();
        for l in raw.stderr_text().lines() {
            if l.trim().is_empty() {
                continue;
            }
            if l.starts_with([' ', '\t']) {
                if let Some(last) = said.last_mut() {
                    last.push(' ');
                    last.push_str(l.trim());
                    continue;
                }
            }
            said.push(strip_time(l).to_string());
        }
        for l in raw.stdout_text().lines() {
            let t = strip_time(l);
            if t.starts_with("Warning") || t.contains("rror") || t.contains("NO VALID RESULTS") {
                said.push(t.to_string());
            }
        }
        said
    }

    /// The per-flowop lines between `Per-Operation Breakdown` and the IO Summary.
    fn flowops(&self, out: &str, p: &mut Parsed) -> Result<(), Invalid> {
        let Some((_, tail)) = out.split_once("Per-Operation Breakdown") else {
            return Err(Invalid::new(
                "filebench's output has an IO Summary but no Per-Operation Breakdown",
            ));
        };
        for l in tail.lines().skip(1) {
            if l.contains("IO Summary:") {
                break;
            }
            let Some(c) = FLOWOP_LINE.captures(l) else {
                return Err(Invalid::new(format!(
                    "a line of filebench's per-operation breakdown is not in the form `name N ops X ops/s M mb/s L ms/op [min - max]`: {:?}",
                    l.trim()
                )));
            };
            let name = &c[1];
            let num = |i: usize, what: &str| {
                let what = format!("filebench's {what} of flowop {name}");
                parse_number(&c[i], &what, false)
            };
            let (n, rate, mb, ms) = (
                num(2, "ops")?,
                num(3, "ops/s")?,
                num(4, "mb/s")?,
                num(5, "ms/op")?,
            );
            let m = format!("filebench_flowop_{}", metric_part(name));
            if !self
                .metrics
                .iter()
                .any(|d| d.name == format!("{m}_ops_per_s"))
            {
                p.notes.push(format!(
                    "flowop {name} is not named in the workload: its figures are not recorded"
                ));
                continue;
            }
            p.set(&format!("{m}_ops_per_s"), rate);
            p.set(&format!("{m}_mib_per_s"), mb);
            if n > 0.0 && ms > 0.0 {
                p.set(&format!("{m}_lat_mean_ns"), ms * 1e6);
            }
        }
        Ok(())
    }
}

/// `0.007: syntax error …` → `syntax error …`.
fn strip_time(l: &str) -> &str {
    let t = l.trim();
    match t.split_once(": ") {
        Some((ts, rest))
            if !ts.is_empty() && ts.chars().all(|c| c.is_ascii_digit() || c == '.') =>
        {
            rest
        }
        _ => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::raw;

    fn opts(keys: serde_json::Value) -> Opts {
        Opts {
            keys: keys.as_object().cloned().unwrap_or_default(),
            base: format!("{}/testdata/filebench", env!("CARGO_MANIFEST_DIR")).into(),
            ..Opts::default()
        }
    }

    fn run(workload: &str) -> Box<dyn ToolRun> {
        Filebench
            .configure(&opts(serde_json::json!({ "workload": workload })))
            .unwrap()
    }

    #[test]
    fn a_fileserver_run_gives_its_summary_and_each_flowop() {
        // IO Summary: 643843 ops 212648.399 ops/s 19331/38665 rd/wr 594.0mb/s 0.015ms/op
        let r = run("fileserver.f");
        let p = r.parse(&raw("filebench/fileserver", 0)).unwrap();
        assert_eq!(p.get("ops"), Some(643843.0));
        assert_eq!(p.get("ops_per_s"), Some(212648.399));
        assert_eq!(p.get("mib_per_s"), Some(594.0));
        assert_eq!(p.get("lat_mean_ns"), Some(0.015 * 1e6));
        assert_eq!(p.get("filebench_read_ops_per_s"), Some(19331.0));
        assert_eq!(p.get("filebench_write_ops_per_s"), Some(38665.0));
        // readfile1  58530ops  19331ops/s 295.3mb/s  0.012ms/op [0.001ms - 78.313ms]
        assert_eq!(p.get("filebench_flowop_readfile1_ops_per_s"), Some(19331.0));
        assert_eq!(p.get("filebench_flowop_readfile1_mib_per_s"), Some(295.3));
        assert_eq!(
            p.get("filebench_flowop_readfile1_lat_mean_ns"),
            Some(0.012 * 1e6)
        );
        assert_eq!(p.get("filebench_flowop_statfile1_mib_per_s"), Some(0.0));
        // Eleven flowops, three figures each, and the six of the summary.
        assert_eq!(p.values.len(), 11 * 3 + 6);
        let declared = r.metrics();
        for (n, _) in &p.values {
            assert!(
                declared.iter().any(|d| d.name == *n)
                    || iolab_metrics::find(iolab_metrics::COMMON, n).is_some(),
                "{n} is not declared"
            );
        }
        assert_eq!(p.claimed.seconds, Some(643843.0 / 212648.399));
        assert_eq!(p.claimed.bytes_per_s, Some(594.0 * MIB));
        assert!(p.notes.is_empty(), "{:?}", p.notes);
    }

    #[test]
    fn a_random_read_run_names_its_flowop_as_a_metric() {
        // rand-read1  982383ops  489863ops/s 3827.1mb/s  0.002ms/op
        let r = run("randomread.f");
        assert!(r
            .metrics()
            .iter()
            .any(|d| d.name == "filebench_flowop_rand_read1_ops_per_s"));
        let p = r.parse(&raw("filebench/randomread", 0)).unwrap();
        assert_eq!(p.get("filebench_flowop_rand_read1_mib_per_s"), Some(3827.1));
        assert_eq!(
            p.get("filebench_flowop_rand_read1_lat_mean_ns"),
            Some(2000.0)
        );
        assert_eq!(p.get("ops_per_s"), Some(489862.503));
        assert_eq!(p.get("filebench_write_ops_per_s"), Some(0.0));
    }

    #[test]
    fn a_syntax_error_exits_0_and_is_named() {
        let r = run("syntax.f");
        let e = r.parse(&raw("filebench/syntax", 0)).unwrap_err();
        assert!(e.reason.contains("no IO Summary"), "{e}");
        assert!(
            e.reason.contains("syntax error at 'randomm' around line 7"),
            "{e}"
        );
        assert!(
            e.reason
                .contains("Warning: no run command in the WML script!"),
            "{e}"
        );
        // syntax.f sets its own $dir: its line numbers are filebench's.
        assert_eq!(e.hint, None);
    }

    #[test]
    fn a_run_that_stopped_early_is_invalid_with_filebenchs_reason() {
        let r = run("stopped-early.f");
        let e = r.parse(&raw("filebench/stopped-early", 0)).unwrap_err();
        assert!(
            e.reason.contains("WARNING! Run stopped early: flowop createfile1-1 could not obtain a file. Please reduce runtime"),
            "{e}"
        );
    }

    #[test]
    fn a_fileset_that_does_not_fit_exits_1_with_filebenchs_reason() {
        let e = run("nospace.f")
            .parse(&raw("filebench/nospace", 1))
            .unwrap_err();
        assert!(
            e.reason.starts_with("filebench exited with code 1: "),
            "{e}"
        );
        assert!(
            e.reason
                .contains("Failed to create filesets around line 20"),
            "{e}"
        );
    }

    #[test]
    fn the_summary_is_checked() {
        let edit = |from: &str, to: &str| {
            let mut r = raw("filebench/fileserver", 0);
            r.stdout = String::from_utf8(r.stdout)
                .unwrap()
                .replace(from, to)
                .into_bytes();
            run("fileserver.f").parse(&r).unwrap_err()
        };
        let e = edit("IO Summary: 643843 ops", "IO Summary: 0 ops");
        assert!(e.reason.contains("IO Summary ops is 0"), "{e}");
        let e = edit("594.0mb/s", "594.0MB/s");
        assert!(e.reason.contains("not in the form"), "{e}");
        let e = edit("212648.399 ops/s", "nan ops/s");
        assert!(e.reason.contains("ops/s is not a finite number"), "{e}");
        let e = edit("295.3mb/s", "295.3kb/s");
        assert!(e.reason.contains("per-operation breakdown"), "{e}");
        let e = edit(
            "4.146: IO Summary",
            "4.146: IO Summary: 1 ops 1 ops/s 0/0 rd/wr 0.0mb/s 0.1ms/op\n4.146: IO Summary",
        );
        assert!(e.reason.contains("2 IO Summary lines"), "{e}");
    }

    #[test]
    fn the_workload_gets_the_runs_dir_and_time() {
        let o = Opts {
            time_s: Some(5.0),
            ..opts(serde_json::json!({ "workload": "fileserver.f" }))
        };
        let at = Placeholders {
            dir: "/mnt/t".into(),
            out: "/tmp/o".into(),
            time_s: Some(5),
            ..Placeholders::default()
        };
        let inv = Filebench.configure(&o).unwrap().invocation(&at);
        assert_eq!(inv.main.argv, ["filebench", "-f", "/tmp/o/workload.f"]);
        assert!(inv.main.no_aslr);
        assert_eq!(inv.leftovers, ["/tmp/filebench-shm-*"]);
        let (name, text) = &inv.inputs[0];
        assert_eq!(name, "workload.f");
        let text = String::from_utf8(text.clone()).unwrap();
        let original = String::from_utf8(crate::testdata::read("filebench/fileserver.f")).unwrap();
        // Same lines, two of them changed in place.
        assert_eq!(text.lines().count(), original.lines().count());
        assert!(text.contains("\nset $dir=/mnt/t\n"), "{text}");
        assert!(text.ends_with("\nrun 5\n"), "{text}");
        assert!(
            !text.contains("classic-cap") && !text.contains("run 3"),
            "{text}"
        );

        // Inline, without $dir or run: both are added, $dir first.
        let inline = "define file name=f1,path=$dir,size=1m,prealloc\ndefine process name=p\n{\n  thread name=t,memsize=1m\n  {\n    flowop read name=r1,filename=f1,iosize=4k\n  }\n}\n";
        let o = Opts {
            time_s: Some(2.0),
            ..opts(serde_json::json!({ "workload": inline }))
        };
        let r = Filebench.configure(&o).unwrap();
        let text = String::from_utf8(r.invocation(&at).inputs[0].1.clone()).unwrap();
        assert!(text.starts_with("set $dir=/mnt/t\ndefine file"), "{text}");
        assert!(text.ends_with("}\nrun 5\n"), "{text}");
        let mut syntax = raw("filebench/syntax", 0);
        syntax.stdout.clear();
        let e = r.parse(&syntax).unwrap_err();
        assert!(e.hint.unwrap().contains("subtract one"));
    }

    #[test]
    fn workloads_iolab_cannot_run_are_refused() {
        let bad = |keys: serde_json::Value, time: Option<f64>| {
            let o = Opts {
                time_s: time,
                ..opts(keys)
            };
            Filebench.configure(&o).unwrap_err()
        };
        assert_eq!(bad(serde_json::json!({}), None).key, "workload");
        let e = bad(serde_json::json!({"workload": "missing.f"}), None);
        assert!(e.message.contains("missing.f"), "{e:?}");
        let e = bad(
            serde_json::json!({"workload": "define file name=f\nrun 1\nrun 2\n"}),
            None,
        );
        assert!(e.message.contains("2 `run` commands"), "{e:?}");
        let e = bad(
            serde_json::json!({"workload": "define file name=f\n"}),
            None,
        );
        assert!(e.message.contains("no `run`"), "{e:?}");
        let e = bad(
            serde_json::json!({"workload": "define file name=f\npsrun -1 3\n"}),
            None,
        );
        assert!(e.message.contains("`psrun`"), "{e:?}");
    }

    #[test]
    fn the_version_is_read_from_its_help() {
        let h = "Usage: filebench {-f <wmlscript> | -h | -c [cvartype]}\n\n  Filebench version 1.5-alpha3\n";
        assert_eq!(Filebench.version(h).as_deref(), Some("1.5-alpha3"));
    }
}
