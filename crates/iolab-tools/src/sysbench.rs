//! sysbench 1.0: its `fileio` and `cpu` tests (`tool = "sysbench"`).
//!
//! fileio works on files it creates in its current directory: the run's setup is `sysbench
//! fileio … prepare`, the timed command `… run`, the cleanup `… cleanup`, all three with the
//! same file options and run by the exec kind in the run's directory (`{dir}`). cpu is one
//! command. The output is text only; the parser reads sysbench 1.0's stable labels, checks
//! the units they state (`read, MiB/s:`, `Latency (ms):`, `total time: …s`) and rejects an
//! output whose labels or units differ rather than misread it.

use std::borrow::Cow;

use iolab_metrics::{Better, MetricDef};
use serde_json::Value;

use crate::adapter::{
    self, expand_args, Adapter, Claimed, Command, Invalid, Invocation, Key, OptError, Opts, Parsed,
    Placeholders, Raw, ToolRun,
};

/// sysbench's adapter.
pub struct Sysbench;

static KEYS: &[Key] = &[
    Key {
        name: "test",
        doc: "\"fileio\" or \"cpu\" (required)",
    },
    Key {
        name: "threads",
        doc: "worker threads (`--threads`; default 1)",
    },
    Key {
        name: "file_test_mode",
        doc: "fileio: seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw (required with fileio)",
    },
    Key {
        name: "file_total_size",
        doc: "fileio: the files' total size, bytes or \"2G\" (sysbench's K/M/G/T are powers of 1024; default 2G)",
    },
    Key {
        name: "file_num",
        doc: "fileio: how many files (default 128)",
    },
    Key {
        name: "file_block_size",
        doc: "fileio: bytes per read or write, bytes or \"16K\" (default 16K)",
    },
    Key {
        name: "file_extra_flags",
        doc: "fileio: open flags, \"direct\", \"sync\", \"dsync\" or a list of them",
    },
    Key {
        name: "file_fsync_freq",
        doc: "fileio: fsync every N requests, 0 for never (default 100)",
    },
    Key {
        name: "file_fsync_end",
        doc: "fileio: fsync the files at the end of the test, inside its timed window (default true)",
    },
    Key {
        name: "cpu_max_prime",
        doc: "cpu: the primes searched per event go up to this number (default 10000)",
    },
];

static METRICS: &[MetricDef] = &[
    MetricDef::new(
        "events_per_s",
        "op/s",
        Some(Better::Higher),
        "Events",
        "sysbench's events per second (cpu: one prime search each)",
    ),
    MetricDef::new(
        "events",
        "",
        Some(Better::Higher),
        "Events",
        "sysbench's total number of events: for fileio its reads, writes and fsyncs",
    ),
    MetricDef::new(
        "reads_per_s",
        "op/s",
        Some(Better::Higher),
        "Reads",
        "sysbench fileio's reads per second (`reads/s:`)",
    ),
    MetricDef::new(
        "writes_per_s",
        "op/s",
        Some(Better::Higher),
        "Writes",
        "sysbench fileio's writes per second (`writes/s:`)",
    ),
    MetricDef::new(
        "fsyncs_per_s",
        "op/s",
        None,
        "Fsyncs",
        "sysbench fileio's fsync calls per second (`fsyncs/s:`), periodic and final",
    ),
    MetricDef::new(
        "fileio_read_mib_per_s",
        "MiB/s",
        Some(Better::Higher),
        "Read bandwidth",
        "sysbench fileio's bytes read per second, in MiB (`read, MiB/s:`)",
    ),
    MetricDef::new(
        "fileio_written_mib_per_s",
        "MiB/s",
        Some(Better::Higher),
        "Write bandwidth",
        "sysbench fileio's bytes written per second, in MiB (`written, MiB/s:`)",
    ),
];

const MODES: &[&str] = &["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"];
const FLAGS: &[&str] = &["direct", "sync", "dsync"];
const FILEIO_KEYS: &[&str] = &[
    "file_test_mode",
    "file_total_size",
    "file_num",
    "file_block_size",
    "file_extra_flags",
    "file_fsync_freq",
    "file_fsync_end",
];

impl Adapter for Sysbench {
    fn name(&self) -> &'static str {
        "sysbench"
    }

    fn program(&self) -> &'static str {
        "sysbench"
    }

    fn install(&self) -> &'static str {
        "apt-get install sysbench"
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
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
        let test = match opts.choice("test", &["fileio", "cpu"])? {
            None => {
                return Err(OptError::new("test", "sysbench needs a test")
                    .hint("test = \"fileio\" or test = \"cpu\""))
            }
            Some("cpu") => {
                if let Some(k) = FILEIO_KEYS.iter().find(|k| opts.keys.contains_key(**k)) {
                    return Err(OptError::new(*k, "applies to test = \"fileio\" only"));
                }
                Test::Cpu {
                    max_prime: opts.uint("cpu_max_prime", 1, u32::MAX.into())?,
                }
            }
            Some(_) => {
                if opts.keys.contains_key("cpu_max_prime") {
                    return Err(OptError::new(
                        "cpu_max_prime",
                        "applies to test = \"cpu\" only",
                    ));
                }
                Test::Fileio(fileio_options(opts)?)
            }
        };
        Ok(Box::new(SysbenchRun {
            test,
            threads: opts.uint("threads", 1, u32::MAX.into())?,
            args: opts.checked_args(false)?,
        }))
    }
}

/// A size: sysbench ignores a suffix it does not know, so iolab checks.
fn size(opts: &Opts, key: &str) -> Result<Option<String>, OptError> {
    opts.quantity(
        key,
        true,
        false,
        "a number of bytes above 0, or whole digits with K, M, G or T (powers of 1024)",
    )
}

/// fileio's `--file-*` options from the keys, in the order given there.
fn fileio_options(opts: &Opts) -> Result<Vec<String>, OptError> {
    let Some(mode) = opts.choice("file_test_mode", MODES)? else {
        return Err(
            OptError::new("file_test_mode", "sysbench fileio needs a test mode")
                .hint(format!("one of {}", MODES.join(", "))),
        );
    };
    let mut out = vec![format!("--file-test-mode={mode}")];
    if let Some(s) = size(opts, "file_total_size")? {
        out.push(format!("--file-total-size={s}"));
    }
    if let Some(n) = opts.uint("file_num", 1, u32::MAX.into())? {
        out.push(format!("--file-num={n}"));
    }
    if let Some(s) = size(opts, "file_block_size")? {
        out.push(format!("--file-block-size={s}"));
    }
    if let Some(flags) = extra_flags(opts)? {
        out.push(format!("--file-extra-flags={flags}"));
    }
    if let Some(n) = opts.uint("file_fsync_freq", 0, i32::MAX as u64)? {
        out.push(format!("--file-fsync-freq={n}"));
    }
    if let Some(on) = opts.flag("file_fsync_end")? {
        out.push(format!(
            "--file-fsync-end={}",
            if on { "on" } else { "off" }
        ));
    }
    Ok(out)
}

/// `file_extra_flags`: one flag or a list, as sysbench's comma-separated list.
fn extra_flags(opts: &Opts) -> Result<Option<String>, OptError> {
    let key = "file_extra_flags";
    let given: Vec<&Value> = match opts.keys.get(key) {
        None => return Ok(None),
        Some(Value::Array(a)) => a.iter().collect(),
        Some(v) => vec![v],
    };
    let mut flags = Vec::new();
    for v in given {
        match v.as_str().filter(|s| FLAGS.contains(s)) {
            Some(f) => flags.push(f),
            None => {
                return Err(OptError::new(key, format!("unknown flag {v}"))
                    .hint(format!("one or a list of {}", FLAGS.join(", "))))
            }
        }
    }
    Ok(Some(flags.join(",")))
}

#[derive(Debug)]
enum Test {
    /// The `--file-*` options, the same for prepare, run and cleanup.
    Fileio(Vec<String>),
    Cpu {
        max_prime: Option<u64>,
    },
}

/// A configured sysbench run.
#[derive(Debug)]
struct SysbenchRun {
    test: Test,
    threads: Option<u64>,
    args: Vec<String>,
}

impl SysbenchRun {
    fn command(&self, test: &str, step: &str, rest: &[String]) -> Command {
        let mut argv = vec![Sysbench.program().to_string(), test.to_string()];
        argv.extend_from_slice(rest);
        argv.push(step.to_string());
        Command::new(argv)
    }
}

impl ToolRun for SysbenchRun {
    fn invocation(&self, at: &Placeholders) -> Invocation {
        let mut opts = match &self.test {
            Test::Fileio(files) => files.clone(),
            Test::Cpu { max_prime } => max_prime
                .iter()
                .map(|n| format!("--cpu-max-prime={n}"))
                .collect(),
        };
        if let Some(n) = self.threads {
            opts.push(format!("--threads={n}"));
        }
        if let Some(t) = at.time_s {
            opts.push(format!("--time={t}"));
        }
        // sysbench's default is the 95th: iolab records the 99th.
        opts.push("--percentile=99".into());
        opts.extend(expand_args(&self.args, at));
        match &self.test {
            Test::Fileio(files) => Invocation {
                setup: vec![self.command("fileio", "prepare", files)],
                main: self.command("fileio", "run", &opts),
                cleanup: vec![self.command("fileio", "cleanup", files)],
                // Left behind if the cleanup never ran (a killed run).
                leftovers: vec![format!("{}/test_file.*", at.dir)],
                ..Invocation::default()
            },
            Test::Cpu { .. } => Invocation {
                main: self.command("cpu", "run", &opts),
                ..Invocation::default()
            },
        }
    }

    fn metrics(&self) -> Cow<'static, [MetricDef]> {
        Cow::Borrowed(METRICS)
    }

    fn parse(&self, raw: &Raw) -> Result<Parsed, Invalid> {
        // sysbench 1.0 prints its FATAL lines on stdout.
        let text = format!("{}{}", raw.stdout_text(), raw.stderr_text());
        let fatal = text
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("FATAL:"));
        if text.contains("Did you forget to run the prepare step?") {
            return Err(Invalid::new(format!(
                "sysbench fileio found no test files: the prepare step did not run in this directory ({})",
                fatal.unwrap_or("no FATAL line")
            ))
            .hint("iolab runs `sysbench fileio … prepare` as the setup in {dir}; keep the file_* options in the keys, not in `args`, so prepare and run see the same files"));
        }
        raw.check_exit("sysbench")?;
        if let Some(f) = fatal {
            return Err(Invalid::new(format!("sysbench failed: {f}")));
        }
        let out = Output::new(&text);
        let mut p = Parsed::default();

        let general = out
            .section("General statistics:")
            .ok_or_else(|| no_summary("General statistics:"))?;
        let total_time = general.seconds("total time:")?;
        let events = general.number("total number of events:", true)?;
        p.set("events", events);

        match self.test {
            Test::Cpu { .. } => {
                let cpu = out
                    .section("CPU speed:")
                    .ok_or_else(|| no_summary("CPU speed:"))?;
                let per_s = cpu.number("events per second:", true)?;
                p.set("events_per_s", per_s);
                p.set("ops_per_s", per_s);
                p.set("ops", events);
            }
            Test::Fileio(_) => {
                let ops = out
                    .section("File operations:")
                    .ok_or_else(|| no_summary("File operations:"))?;
                let reads = ops.number("reads/s:", false)?;
                let writes = ops.number("writes/s:", false)?;
                let fsyncs = ops.number("fsyncs/s:", false)?;
                if reads + writes == 0.0 {
                    return Err(Invalid::new(
                        "sysbench fileio did no reads and no writes (reads/s and writes/s are 0)",
                    ));
                }
                let put = out
                    .section("Throughput:")
                    .ok_or_else(|| no_summary("Throughput:"))?;
                let read_mib = put.rate("read")?;
                let written_mib = put.rate("written")?;
                p.set("reads_per_s", reads);
                p.set("writes_per_s", writes);
                p.set("fsyncs_per_s", fsyncs);
                p.set("fileio_read_mib_per_s", read_mib);
                p.set("fileio_written_mib_per_s", written_mib);
                // Reads and writes, as fio counts I/O operations; fsyncs are in `events`.
                p.set("ops_per_s", reads + writes);
                p.set("mib_per_s", read_mib + written_mib);
                p.claimed = Claimed {
                    // Derived: sysbench prints rates only, over its total time.
                    read_bytes: Some(read_mib * MIB * total_time),
                    write_bytes: Some(written_mib * MIB * total_time),
                    seconds: Some(total_time),
                    bytes_per_s: Some((read_mib + written_mib) * MIB),
                    direct: out.open_flags().map(|f| f.contains("directio")),
                    flush_timed: (writes > 0.0).then(|| out.flushes()),
                };
            }
        }
        latency(&out, events, &mut p)?;
        Ok(p)
    }
}

const MIB: f64 = 1024.0 * 1024.0;

fn no_summary(section: &str) -> Invalid {
    Invalid::new(format!(
        "sysbench printed no summary (no `{section}` section): the run was cut short, or its output is not sysbench 1.0's"
    ))
}

/// The `Latency (ms):` section: the mean from `sum:` over the events (`avg:` has two
/// decimals of a millisecond, 0.00 on tmpfs), the 99th percentile and the maximum, unless
/// printed as 0.00 (below what sysbench prints: not measured, not 0).
fn latency(out: &Output, events: f64, p: &mut Parsed) -> Result<(), Invalid> {
    let (unit, lat) = out
        .section_with_unit("Latency (")
        .ok_or_else(|| no_summary("Latency (ms):"))?;
    if unit != "ms" {
        return Err(Invalid::new(format!(
            "sysbench's latency is in `{unit}`, not the `ms` this parser reads"
        )));
    }
    let ns = |ms: f64| ms * 1e6;
    let sum = lat.number("sum:", false)?;
    if sum > 0.0 {
        p.set("lat_mean_ns", ns(sum / events));
    }
    let max = lat.number("max:", false)?;
    if max > 0.0 {
        p.set("lat_max_ns", ns(max));
    }
    match lat.find_suffix("th percentile:") {
        Some(("99", value)) => {
            let p99 = number_in(value, "sysbench's `99th percentile:`", false)?;
            if p99 > 0.0 {
                p.set("lat_p99_ns", ns(p99));
            } else {
                p.notes.push(
                    "sysbench printed the 99th percentile as 0.00 ms (below its 0.01 ms resolution): lat_p99_ns is not recorded"
                        .into(),
                );
            }
        }
        Some((n, _)) => p.notes.push(format!(
            "sysbench reported the {n}th percentile, not the 99th (`--percentile` in args?): lat_p99_ns is not recorded"
        )),
        None => p.notes.push(
            "sysbench printed no percentile (percentile stats disabled): lat_p99_ns is not recorded"
                .into(),
        ),
    }
    Ok(())
}

/// sysbench's text output, read by label.
struct Output<'a> {
    lines: Vec<&'a str>,
}

impl<'a> Output<'a> {
    fn new(text: &'a str) -> Output<'a> {
        Output {
            lines: text.lines().map(str::trim).collect(),
        }
    }

    /// The lines after the heading `title` up to the next blank line.
    fn section(&self, title: &str) -> Option<Section<'a>> {
        let at = self.lines.iter().position(|l| *l == title)?;
        Some(self.until_blank(at + 1, title.trim_end_matches(':').to_string()))
    }

    /// A section headed `<prefix>UNIT):`, and its unit.
    fn section_with_unit(&self, prefix: &str) -> Option<(&'a str, Section<'a>)> {
        let at = self.lines.iter().position(|l| l.starts_with(prefix))?;
        let unit = self.lines[at]
            .strip_prefix(prefix)?
            .strip_suffix("):")
            .unwrap_or(self.lines[at]);
        let name = self.lines[at].trim_end_matches(':').to_string();
        Some((unit, self.until_blank(at + 1, name)))
    }

    fn until_blank(&self, from: usize, name: String) -> Section<'a> {
        let lines = self.lines[from..]
            .iter()
            .copied()
            .take_while(|l| !l.is_empty())
            .collect();
        Section { name, lines }
    }

    /// The `Extra file open flags:` line's value.
    fn open_flags(&self) -> Option<&'a str> {
        self.lines
            .iter()
            .find_map(|l| l.strip_prefix("Extra file open flags:"))
    }

    /// Whether the header says written data is flushed within the timed window: periodic
    /// fsync, fsync after each write, fsync at the end (sysbench stops its clock after
    /// each thread's final fsync), or files opened sync/dsync.
    fn flushes(&self) -> bool {
        self.lines.iter().any(|l| {
            l.starts_with("Periodic FSYNC enabled")
                || l.starts_with("Calling fsync() at the end of test, Enabled")
                || l.starts_with("Calling fsync() after each write operation")
        }) || self
            .open_flags()
            .is_some_and(|f| f.split_whitespace().any(|w| w == "sync" || w == "dsync"))
    }
}

/// The lines of one section of the output.
struct Section<'a> {
    name: String,
    lines: Vec<&'a str>,
}

impl<'a> Section<'a> {
    /// The text after `label` on its line.
    fn value(&self, label: &str) -> Result<&'a str, Invalid> {
        self.lines
            .iter()
            .find_map(|l| l.strip_prefix(label))
            .map(str::trim)
            .ok_or_else(|| {
                Invalid::new(format!(
                    "sysbench's `{}` section has no `{label}` line",
                    self.name
                ))
            })
    }

    fn number(&self, label: &str, positive: bool) -> Result<f64, Invalid> {
        number_in(
            self.value(label)?,
            &format!("sysbench's `{label}`"),
            positive,
        )
    }

    /// `total time: 2.0041s`: seconds, the unit checked.
    fn seconds(&self, label: &str) -> Result<f64, Invalid> {
        let v = self.value(label)?;
        let digits = v
            .strip_suffix('s')
            .filter(|d| d.parse::<f64>().is_ok())
            .ok_or_else(|| {
                Invalid::new(format!(
                    "sysbench's `{label}` is {v:?}, not in seconds (`…s`)"
                ))
            })?;
        number_in(digits, &format!("sysbench's `{label}`"), true)
    }

    /// `read, MiB/s: 2609.77`: the unit in the label must be MiB/s.
    fn rate(&self, what: &str) -> Result<f64, Invalid> {
        let prefix = format!("{what}, ");
        let line = self
            .lines
            .iter()
            .find(|l| l.starts_with(&prefix))
            .ok_or_else(|| {
                Invalid::new(format!(
                    "sysbench's `{}` section has no `{what}, MiB/s:` line",
                    self.name
                ))
            })?;
        let (label, value) = line.split_once(':').unwrap_or((line, ""));
        let unit = &label[prefix.len()..];
        if unit != "MiB/s" {
            return Err(Invalid::new(format!(
                "sysbench's {what} throughput is in `{unit}`, not the `MiB/s` this parser reads"
            )));
        }
        number_in(value.trim(), &format!("sysbench's `{what}, MiB/s:`"), false)
    }

    /// `<n>th percentile: <value>` as (n, value).
    fn find_suffix(&self, label: &str) -> Option<(&'a str, &'a str)> {
        self.lines.iter().find_map(|l| {
            let (head, value) = l.split_once(label)?;
            Some((head.trim(), value.trim()))
        })
    }
}

/// A number printed by sysbench: numeric, finite, not negative, and above 0 with
/// `positive`.
fn number_in(text: &str, what: &str, positive: bool) -> Result<f64, Invalid> {
    let x = text
        .parse::<f64>()
        .map_err(|_| Invalid::new(format!("{what} is {text:?}, not a number")))?;
    let x = adapter::check_number(Some(x), what, positive)?;
    if x < 0.0 {
        return Err(Invalid::new(format!("{what} is {x}, below 0")));
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{close, opts, raw, stdout};
    use serde_json::json;

    fn try_run(keys: Value) -> Result<Box<dyn ToolRun>, OptError> {
        Sysbench.configure(&opts(keys))
    }

    fn fileio() -> Box<dyn ToolRun> {
        try_run(json!({"test": "fileio", "file_test_mode": "rndrw"})).unwrap()
    }

    fn cpu() -> Box<dyn ToolRun> {
        try_run(json!({"test": "cpu"})).unwrap()
    }

    fn text(stem: &str) -> String {
        String::from_utf8(crate::testdata::read(&format!("sysbench/{stem}.stdout"))).unwrap()
    }

    #[test]
    fn fileio_rndrw_gives_the_outputs_numbers() {
        let p = fileio().parse(&raw("sysbench/rndrw", 0)).unwrap();
        assert_eq!(p.get("reads_per_s"), Some(167025.30));
        assert_eq!(p.get("writes_per_s"), Some(111349.86));
        assert_eq!(p.get("fsyncs_per_s"), Some(11136.48));
        assert_eq!(p.get("fileio_read_mib_per_s"), Some(2609.77));
        assert_eq!(p.get("fileio_written_mib_per_s"), Some(1739.84));
        close(p.get("ops_per_s"), 167025.30 + 111349.86);
        close(p.get("mib_per_s"), 2609.77 + 1739.84);
        assert_eq!(p.get("events"), Some(580450.0));
        // sum 1867.89 ms over 580450 events; avg: prints 0.00.
        close(p.get("lat_mean_ns"), 1867.89e6 / 580450.0);
        close(p.get("lat_max_ns"), 28.12e6);
        // `99th percentile: 0.00`: below the printed resolution, not a measured 0.
        assert_eq!(p.get("lat_p99_ns"), None);
        assert!(p.notes[0].contains("0.00 ms"), "{:?}", p.notes);
        // fileio prints no events per second and no count of its reads and writes.
        assert_eq!(p.get("events_per_s"), None);
        assert_eq!(p.get("ops"), None);
        let c = p.claimed;
        close(c.read_bytes, 2609.77 * MIB * 2.0041);
        close(c.write_bytes, 1739.84 * MIB * 2.0041);
        assert_eq!(c.seconds, Some(2.0041));
        close(c.bytes_per_s, (2609.77 + 1739.84) * MIB);
        assert_eq!(c.direct, Some(false));
        assert_eq!(c.flush_timed, Some(true));
    }

    #[test]
    fn fileio_seqwr_with_only_the_final_fsync_is_flush_timed() {
        let p = fileio().parse(&raw("sysbench/seqwr", 0)).unwrap();
        assert_eq!(p.get("reads_per_s"), Some(0.0));
        assert_eq!(p.get("writes_per_s"), Some(369550.39));
        assert_eq!(p.get("fsyncs_per_s"), Some(2.0));
        assert_eq!(p.get("fileio_read_mib_per_s"), Some(0.0));
        assert_eq!(p.get("fileio_written_mib_per_s"), Some(5774.22));
        assert_eq!(p.get("events"), Some(739944.0));
        close(p.get("lat_mean_ns"), 1853.47e6 / 739944.0);
        close(p.get("lat_max_ns"), 34.71e6);
        assert_eq!(p.claimed.read_bytes, Some(0.0));
        close(p.claimed.write_bytes, 5774.22 * MIB * 2.0014);
        assert_eq!(p.claimed.flush_timed, Some(true));
        // Without "Calling fsync() at the end of test" the window has no flush.
        let t = text("seqwr").replace("Calling fsync() at the end of test, Enabled.\n", "");
        let p = fileio().parse(&stdout(&t)).unwrap();
        assert_eq!(p.claimed.flush_timed, Some(false));
        let t = text("seqwr").replace("flags: (none)", "flags: directio");
        assert_eq!(
            fileio().parse(&stdout(&t)).unwrap().claimed.direct,
            Some(true)
        );
    }

    #[test]
    fn cpu_gives_events_per_second_and_latency() {
        let p = cpu().parse(&raw("sysbench/cpu", 0)).unwrap();
        assert_eq!(p.get("events_per_s"), Some(3378.38));
        assert_eq!(p.get("ops_per_s"), Some(3378.38));
        assert_eq!(p.get("events"), Some(6760.0));
        assert_eq!(p.get("ops"), Some(6760.0));
        close(p.get("lat_mean_ns"), 1996.61e6 / 6760.0);
        close(p.get("lat_p99_ns"), 4.25e6);
        close(p.get("lat_max_ns"), 33.21e6);
        assert_eq!(p.get("mib_per_s"), None);
        assert_eq!(p.claimed, Claimed::default());
        assert!(p.notes.is_empty(), "{:?}", p.notes);
    }

    #[test]
    fn fileio_without_prepare_names_the_missing_step() {
        let e = fileio().parse(&raw("sysbench/no-prepare", 1)).unwrap_err();
        assert_eq!(
            e.reason,
            "sysbench fileio found no test files: the prepare step did not run in this directory (FATAL: Cannot open file 'test_file.0' errno = 2 (No such file or directory))"
        );
        assert!(e.hint.unwrap().contains("prepare"));
    }

    #[test]
    fn a_run_cut_short_has_no_summary() {
        // SIGINT: sysbench dies without a summary.
        let mut r = raw("sysbench/cpu-interrupted", 0);
        let e = cpu().parse(&r).unwrap_err();
        assert_eq!(
            e.reason,
            "sysbench printed no summary (no `General statistics:` section): the run was cut short, or its output is not sysbench 1.0's"
        );
        r.exit_code = None;
        r.signal = Some(2);
        let e = cpu().parse(&r).unwrap_err();
        assert!(
            e.reason.starts_with("sysbench was ended by signal 2"),
            "{e}"
        );
    }

    #[test]
    fn changed_units_are_rejected_not_misread() {
        let t = text("rndrw").replace("read, MiB/s:", "read, MB/s:");
        let e = fileio().parse(&stdout(&t)).unwrap_err();
        assert_eq!(
            e.reason,
            "sysbench's read throughput is in `MB/s`, not the `MiB/s` this parser reads"
        );
        let t = text("rndrw").replace("written, MiB/s:", "written, KiB/s:");
        let e = fileio().parse(&stdout(&t)).unwrap_err();
        assert!(e.reason.contains("`KiB/s`"), "{e}");
        let t = text("cpu").replace("Latency (ms):", "Latency (us):");
        let e = cpu().parse(&stdout(&t)).unwrap_err();
        assert_eq!(
            e.reason,
            "sysbench's latency is in `us`, not the `ms` this parser reads"
        );
        let t = text("cpu").replace("2.0001s", "2000.1ms");
        let e = cpu().parse(&stdout(&t)).unwrap_err();
        assert!(e.reason.contains("not in seconds"), "{e}");
    }

    #[test]
    fn a_newer_output_format_is_no_summary() {
        // sysbench after 1.0 prints `read: IOPS=… MiB/s (… MB/s)` under `Throughput:`.
        let t = text("rndrw");
        let from = t.find("File operations:").unwrap();
        let to = t.find("General statistics:").unwrap();
        let newer = format!(
            "{}Throughput:\n         read:  IOPS=167025.30 2609.77 MiB/s (2736.55 MB/s)\n         write: IOPS=111349.86 1739.84 MiB/s (1824.36 MB/s)\n         fsync: IOPS=11136.48\n\n{}",
            &t[..from],
            &t[to..]
        );
        let e = fileio().parse(&stdout(&newer)).unwrap_err();
        assert!(e.reason.contains("no `File operations:` section"), "{e}");
    }

    #[test]
    fn bad_numbers_are_invalid() {
        let t = text("cpu").replace("3378.38", "nan");
        let e = cpu().parse(&stdout(&t)).unwrap_err();
        assert_eq!(
            e.reason,
            "sysbench's `events per second:` is not a finite number"
        );
        let t = text("cpu").replace("3378.38", "lots");
        let e = cpu().parse(&stdout(&t)).unwrap_err();
        assert_eq!(
            e.reason,
            "sysbench's `events per second:` is \"lots\", not a number"
        );
        let t = text("cpu").replace("6760\n", "0\n");
        let e = cpu().parse(&stdout(&t)).unwrap_err();
        assert!(e.reason.contains("where a result must be above 0"), "{e}");
        let t = text("rndrw")
            .replace("167025.30", "0.00")
            .replace("111349.86", "0.00");
        let e = fileio().parse(&stdout(&t)).unwrap_err();
        assert!(e.reason.contains("no reads and no writes"), "{e}");
        let t = text("rndrw").replace("    fsyncs/s:                     11136.48\n", "");
        let e = fileio().parse(&stdout(&t)).unwrap_err();
        assert_eq!(
            e.reason,
            "sysbench's `File operations` section has no `fsyncs/s:` line"
        );
    }

    #[test]
    fn a_fatal_line_with_exit_0_is_invalid() {
        let t = format!("{}FATAL: something broke\n", text("cpu"));
        let e = cpu().parse(&stdout(&t)).unwrap_err();
        assert_eq!(e.reason, "sysbench failed: FATAL: something broke");
        let e = cpu().parse(&raw("sysbench/cpu", 2)).unwrap_err();
        assert!(e.reason.starts_with("sysbench exited with code 2"), "{e}");
    }

    #[test]
    fn another_percentile_is_a_note() {
        let t = text("cpu").replace("99th percentile", "95th percentile");
        let p = cpu().parse(&stdout(&t)).unwrap();
        assert_eq!(p.get("lat_p99_ns"), None);
        assert!(p.notes[0].contains("95th"), "{:?}", p.notes);
    }

    #[test]
    fn fileio_runs_prepare_run_and_cleanup_with_the_same_files() {
        let o = Opts {
            args: vec!["--rand-seed={seed}".into()],
            time_s: Some(2.0),
            ..opts(json!({
                "test": "fileio", "file_test_mode": "rndrw", "file_total_size": "64M",
                "file_num": 4, "file_block_size": 4096, "file_extra_flags": ["direct", "dsync"],
                "file_fsync_freq": 0, "file_fsync_end": false, "threads": 2,
            }))
        };
        let r = Sysbench.configure(&o).unwrap();
        let at = Placeholders {
            dir: "/mnt/t".into(),
            seed: 9,
            time_s: Some(2),
            ..Placeholders::default()
        };
        let inv = r.invocation(&at);
        let files = [
            "--file-test-mode=rndrw",
            "--file-total-size=64M",
            "--file-num=4",
            "--file-block-size=4096",
            "--file-extra-flags=direct,dsync",
            "--file-fsync-freq=0",
            "--file-fsync-end=off",
        ];
        let step = |s: &'static str| {
            let mut v = vec!["sysbench", "fileio"];
            v.extend(files);
            v.push(s);
            v
        };
        assert_eq!(inv.setup.len(), 1);
        assert_eq!(inv.setup[0].argv, step("prepare"));
        assert_eq!(inv.cleanup[0].argv, step("cleanup"));
        let mut main = vec!["sysbench", "fileio"];
        main.extend(files);
        main.extend([
            "--threads=2",
            "--time=2",
            "--percentile=99",
            "--rand-seed=9",
            "run",
        ]);
        assert_eq!(inv.main.argv, main);
        assert_eq!(inv.leftovers, ["/mnt/t/test_file.*"]);
    }

    #[test]
    fn cpu_is_one_command() {
        let r = try_run(json!({"test": "cpu", "cpu_max_prime": 20000})).unwrap();
        let inv = r.invocation(&Placeholders::default());
        assert!(inv.setup.is_empty() && inv.cleanup.is_empty());
        assert_eq!(
            inv.main.argv,
            [
                "sysbench",
                "cpu",
                "--cpu-max-prime=20000",
                "--percentile=99",
                "run"
            ]
        );
        assert!(inv.leftovers.is_empty());
    }

    #[test]
    fn bad_keys_are_named() {
        let key = |keys: Value| try_run(keys).unwrap_err().key;
        assert_eq!(key(json!({})), "test");
        assert_eq!(key(json!({"test": "memory"})), "test");
        assert_eq!(key(json!({"test": "fileio"})), "file_test_mode");
        assert_eq!(
            key(json!({"test": "fileio", "file_test_mode": "randrw"})),
            "file_test_mode"
        );
        assert_eq!(key(json!({"test": "cpu", "file_num": 4})), "file_num");
        assert_eq!(
            key(json!({"test": "fileio", "file_test_mode": "seqwr", "cpu_max_prime": 5})),
            "cpu_max_prime"
        );
        let e =
            try_run(json!({"test": "fileio", "file_test_mode": "seqwr", "file_total_size": "2GB"}))
                .unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            (
                "file_total_size",
                "\"2GB\" is not a quantity this tool reads"
            )
        );
        assert_eq!(
            key(
                json!({"test": "fileio", "file_test_mode": "seqwr", "file_extra_flags": "odirect"})
            ),
            "file_extra_flags"
        );
        assert_eq!(key(json!({"test": "cpu", "threads": 0})), "threads");
        let o = Opts {
            args: vec!["--time={time}".into()],
            ..opts(json!({"test": "cpu"}))
        };
        assert_eq!(Sysbench.configure(&o).unwrap_err().key, "args");
    }
}
