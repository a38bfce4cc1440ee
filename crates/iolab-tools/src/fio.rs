//! fio (<https://github.com/axboe/fio>): runs a job file or an inline job with
//! `fio --output-format=json --output={out}/fio.json JOB`, in the run's directory (the exec
//! kind's working directory: fio lays out the files a job does not name there), and reads its
//! JSON.
//!
//! Why no `--directory={dir}`: fio applies a command-line `--directory` to every job of the
//! file (as a global option the job's own `directory` overrides), but it also puts it in front
//! of absolute file names: `filename=/dev/full` became `{dir}/dev/full`, a regular file (fio
//! 3.33). The working directory gives the same place for relative names and leaves absolute
//! ones alone.

use std::borrow::Cow;
use std::path::Path;

use iolab_metrics::{Better, MetricDef};
use serde_json::{Map, Value};

use crate::adapter::{
    number, Adapter, Claimed, Command, Invalid, Invocation, Key, OptError, Opts, Parsed,
    Placeholders, Raw, ToolRun,
};
use crate::template;

const TOOL: &str = "fio";
/// The result file, in `{out}`.
const OUTPUT: &str = "fio.json";
/// An inline job's file, in `{out}`.
const INLINE: &str = "job.fio";
/// fio's directions; trims count in the common totals only (they move no data through reads
/// or writes, so they are not in the claimed bytes either).
const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];
/// The percentiles fio lists by default, and the common metrics they fill.
const PERCENTILES: [(&str, &str); 4] = [
    ("50.000000", "lat_p50_ns"),
    ("90.000000", "lat_p90_ns"),
    ("99.000000", "lat_p99_ns"),
    ("99.900000", "lat_p999_ns"),
];
/// Options that would take fio's output away from the JSON file the parser reads.
const OUTPUT_OPTIONS: [&str; 4] = ["--output", "--minimal", "--append-terse", "--terse"];

/// The fio adapter (`tool = "fio"`).
#[derive(Debug)]
pub struct Fio;

const KEYS: &[Key] = &[
    Key {
        name: "job",
        doc: "the job: a job file (relative to the experiment file; fio expands ${IOLAB_DIR} \
              and the other environment variables in it) or the job's text (with a newline or \
              a `[`; iolab's placeholders such as {seed} are expanded in it)",
    },
    Key {
        name: "group",
        doc: "the reporting group to measure when the job has several (`stonewall`, \
              `new_group`), from 0",
    },
];

use Better::{Higher, Lower};

const METRICS: &[MetricDef] = &[
    MetricDef::new(
        "read_iops",
        "op/s",
        Some(Higher),
        "Read IOPS",
        "read I/Os per second, summed over fio's jobs (fio's read.iops)",
    ),
    MetricDef::new(
        "write_iops",
        "op/s",
        Some(Higher),
        "Write IOPS",
        "write I/Os per second, summed over fio's jobs (fio's write.iops)",
    ),
    MetricDef::new(
        "read_bytes_per_s",
        "B/s",
        Some(Higher),
        "Read bandwidth",
        "bytes read per second, summed over fio's jobs (fio's read.bw_bytes)",
    ),
    MetricDef::new(
        "write_bytes_per_s",
        "B/s",
        Some(Higher),
        "Write bandwidth",
        "bytes written per second, summed over fio's jobs (fio's write.bw_bytes)",
    ),
    MetricDef::new(
        "read_clat_mean_ns",
        "ns",
        Some(Lower),
        "Read completion latency",
        "mean completion latency of the reads (fio's read.clat_ns.mean), weighted by each \
         job's reads",
    ),
    MetricDef::new(
        "write_clat_mean_ns",
        "ns",
        Some(Lower),
        "Write completion latency",
        "mean completion latency of the writes (fio's write.clat_ns.mean), weighted by each \
         job's writes",
    ),
    MetricDef::new(
        "read_clat_p99_ns",
        "ns",
        Some(Lower),
        "Read p99 completion latency",
        "99th percentile of the reads' completion latency (fio's read.clat_ns.percentile \
         99.000000; the highest job's when fio reports several)",
    ),
    MetricDef::new(
        "write_clat_p99_ns",
        "ns",
        Some(Lower),
        "Write p99 completion latency",
        "99th percentile of the writes' completion latency (fio's write.clat_ns.percentile \
         99.000000; the highest job's when fio reports several)",
    ),
    MetricDef::new(
        "read_lat_mean_ns",
        "ns",
        Some(Lower),
        "Read total latency",
        "mean total latency of the reads, submission and completion (fio's read.lat_ns.mean), \
         weighted by each job's reads",
    ),
    MetricDef::new(
        "write_lat_mean_ns",
        "ns",
        Some(Lower),
        "Write total latency",
        "mean total latency of the writes, submission and completion (fio's \
         write.lat_ns.mean), weighted by each job's writes",
    ),
    MetricDef::new(
        "job_usr_cpu_pct",
        "%",
        None,
        "Job user CPU",
        "user CPU time of a fio job as a share of its run time (fio's usr_cpu), averaged \
         over the jobs fio reports",
    ),
    MetricDef::new(
        "job_sys_cpu_pct",
        "%",
        None,
        "Job system CPU",
        "system CPU time of a fio job as a share of its run time (fio's sys_cpu), averaged \
         over the jobs fio reports",
    ),
    MetricDef::new(
        "disk_util_pct",
        "%",
        None,
        "Disk utilisation",
        "the busiest disk's utilisation during the run, as fio measured it (fio's \
         disk_util[].util; not measured for a filesystem without a disk, such as tmpfs)",
    ),
];

impl Adapter for Fio {
    fn name(&self) -> &'static str {
        TOOL
    }

    fn program(&self) -> &'static str {
        "fio"
    }

    fn install(&self) -> &'static str {
        "apt-get install fio"
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

    /// `iolab run job.fio` is `exec = { tool = "fio", job = "job.fio" }`.
    fn file_key(&self) -> Option<crate::FileKey> {
        Some(crate::FileKey {
            extension: ".fio",
            key: "job",
        })
    }

    fn configure(&self, opts: &Opts) -> Result<Box<dyn ToolRun>, OptError> {
        let has_time = opts.time_s.is_some();
        let job = match opts.str("job")? {
            None => {
                return Err(OptError::new("job", "fio needs a job").hint(
                    "job = \"randread.fio\" (a job file next to the experiment file) or the \
                     job's text: job = \"\"\"[randread]\\nrw=randread\\nsize=64m\"\"\"",
                ))
            }
            Some(s) if s.trim().is_empty() => {
                return Err(OptError::new("job", "the job is empty")
                    .hint("name a job file or write the job's text"))
            }
            // A file name has neither; a job's text has a section header.
            Some(s) if s.contains('\n') || s.contains('[') => {
                template::check(s, has_time, false).map_err(|e| {
                    OptError::new("job", format!("in the job's text: {}", e.message)).hint(e.hint)
                })?;
                Job::Inline(s.to_string())
            }
            Some(s) => {
                let path = opts.base.join(Path::new(s));
                let Some(path) = path.to_str() else {
                    return Err(OptError::new(
                        "job",
                        format!("the job file's path {path:?} is not UTF-8"),
                    ));
                };
                Job::File(path.to_string())
            }
        };
        let group = match opts.keys.get("group") {
            None => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                OptError::new("group", format!("expected a group number, found {v}"))
                    .hint("fio numbers its reporting groups from 0: group = 1")
            })?),
        };
        for a in &opts.args {
            template::check(a, has_time, false)
                .map_err(|e| OptError::new("args", format!("{a:?}: {}", e.message)).hint(e.hint))?;
            if let Some(o) = OUTPUT_OPTIONS.iter().find(|o| a.starts_with(*o)) {
                return Err(OptError::new(
                    "args",
                    format!(
                        "{a:?}: iolab reads fio's JSON from {{out}}/{OUTPUT}, `{o}` would \
                         change it"
                    ),
                )
                .hint("remove it: iolab keeps fio's JSON with every run"));
            }
        }
        let runtime_ms = match opts.time_s {
            None => None,
            Some(t) => {
                let ms = (t * 1000.0).round();
                // fio's runtime=0 means no limit: never pass it.
                if !(ms >= 1.0 && ms.is_finite()) {
                    return Err(OptError::new(
                        "time",
                        format!("{t} s is not a run time fio can take"),
                    )
                    .hint("give at least 1 ms: time = \"10s\""));
                }
                Some(ms as u64)
            }
        };
        Ok(Box::new(FioRun {
            job,
            group,
            args: opts.args.clone(),
            runtime_ms,
        }))
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Job {
    /// A job file's path (the experiment file's directory already joined to a relative one).
    File(String),
    /// A job's text, written to `{out}/job.fio`.
    Inline(String),
}

#[derive(Debug)]
struct FioRun {
    job: Job,
    group: Option<u64>,
    args: Vec<String>,
    runtime_ms: Option<u64>,
}

/// `template` expanded; [`Adapter::configure`] checked it, so it cannot fail.
fn expand(template: &str, at: &Placeholders) -> String {
    template::expand(template, at).unwrap_or_else(|_| template.to_string())
}

impl ToolRun for FioRun {
    fn needs_files(&self) -> Vec<(&'static str, std::path::PathBuf)> {
        match &self.job {
            Job::File(p) => vec![("job", p.into())],
            Job::Inline(_) => Vec::new(),
        }
    }

    fn invocation(&self, at: &Placeholders) -> Invocation {
        let mut inv = Invocation::default();
        let job = match &self.job {
            Job::File(path) => path.clone(),
            Job::Inline(text) => {
                inv.inputs
                    .push((INLINE.to_string(), expand(text, at).into_bytes()));
                format!("{}/{INLINE}", at.out)
            }
        };
        let mut argv = vec![
            Fio.program().to_string(),
            "--output-format=json".to_string(),
            format!("--output={}/{OUTPUT}", at.out),
            job,
        ];
        // After the job file they still apply to all its jobs (as global options), but a
        // job's own `runtime` wins.
        if let Some(ms) = self.runtime_ms {
            argv.push(format!("--runtime={ms}ms"));
            argv.push("--time_based".to_string());
        }
        argv.extend(self.args.iter().map(|a| expand(a, at)));
        inv.main = Command::new(argv);
        inv.outputs.push(OUTPUT.to_string());
        inv
    }

    fn metrics(&self) -> Cow<'static, [MetricDef]> {
        Cow::Borrowed(METRICS)
    }

    fn parse(&self, raw: &Raw) -> Result<Parsed, Invalid> {
        if raw.timed_out || raw.signal.is_some() {
            // A killed fio may have left a partial JSON: nothing in it is a result.
            raw.check_exit(TOOL)?;
        }
        let doc = raw.file(OUTPUT).map(document);
        // A failed job exits 1 too: its error says more than the exit code.
        if let Some(Ok(doc)) = &doc {
            job_errors(doc, raw)?;
        }
        raw.check_exit(TOOL)?;
        let doc = doc.unwrap_or_else(|| {
            Err(Invalid::new(format!("fio wrote no {{out}}/{OUTPUT}"))
                .hint("fio's `--output` was changed, or fio did not start the jobs"))
        })?;
        let mut p = read(&doc, self.group)?;
        if let Some(ms) = self.runtime_ms {
            p.notes.extend(time_ignored(&doc, ms));
        }
        Ok(p)
    }
}

/// The jobs for which `time` did not apply: a job file's own `runtime` or `time_based`, in
/// the job's section or its `[global]`, wins over the command line's (fio 3.33).
fn time_ignored(doc: &Value, ms: u64) -> Vec<String> {
    let global = doc.get("global options").and_then(Value::as_object);
    let jobs = doc.get("jobs").and_then(Value::as_array);
    let mut notes = Vec::new();
    for (i, job) in jobs.into_iter().flatten().enumerate() {
        let runtime = option(job, global, "runtime");
        let timed = option(job, global, "time_based").map_or(Some(true), flag);
        if runtime.and_then(fio_ms) != Some(ms as f64) || timed != Some(true) {
            notes.push(format!(
                "{} ran with runtime={} and time_based={} from the job file, not `time` ({ms} \
                 ms): the job file's settings win over the command line's",
                job_name(job, i),
                runtime.unwrap_or("none"),
                option(job, global, "time_based").unwrap_or("1")
            ));
        }
    }
    notes
}

/// A fio time in milliseconds: `2` (seconds), `2500ms`, `1m`.
fn fio_ms(v: &str) -> Option<f64> {
    let v = v.trim();
    let digits = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let n: f64 = v[..digits].parse().ok()?;
    let unit = match v[digits..].trim().to_ascii_lowercase().as_str() {
        "" | "s" => 1e3,
        "ms" => 1.0,
        "us" => 1e-3,
        "m" => 60e3,
        "h" => 3600e3,
        "d" => 86400e3,
        _ => return None,
    };
    Some(n * unit)
}

/// The JSON object in fio's output file. fio writes its error lines to the same file before
/// the JSON (`fio: pid=…, err=28/…` with `--thread`, fio#1685) and prints `nan` unquoted in
/// some fields: both are dealt with here so that the rest sees a plain document.
fn document(bytes: &[u8]) -> Result<Value, Invalid> {
    let text = String::from_utf8_lossy(bytes);
    let mut at = 0;
    let start = text.split_inclusive('\n').find_map(|line| {
        let here = at;
        at += line.len();
        line.trim_start().starts_with('{').then_some(here)
    });
    let Some(start) = start else {
        let first = text.lines().map(str::trim).find(|l| !l.is_empty());
        return Err(Invalid::new(match first {
            Some(l) => format!("{OUTPUT} holds no JSON, only {l:?}"),
            None => format!("{OUTPUT} is empty"),
        }));
    };
    // `"iops" : -nan,` → `"iops" : "-nan",`: the value then fails as text that is not a number,
    // naming its field, instead of the whole document failing to parse.
    let nan = regex::Regex::new(r"(:\s*)(-?(?:nan|inf))(\s*[,}\n])").expect("a valid regex");
    let text = nan.replace_all(&text[start..], "$1\"$2\"$3");
    match serde_json::from_str::<Value>(&text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(Invalid::new(format!("{OUTPUT} is JSON but not an object"))),
        Err(e) => Err(Invalid::new(format!(
            "{OUTPUT} is not complete JSON ({e}): fio was cut short or wrote something else"
        ))),
    }
}

/// The first job whose `error` is not 0, as the run's reason.
fn job_errors(doc: &Value, raw: &Raw) -> Result<(), Invalid> {
    let Some(jobs) = doc.get("jobs").and_then(Value::as_array) else {
        return Ok(());
    };
    for (i, job) in jobs.iter().enumerate() {
        let code = job.get("error").and_then(Value::as_i64).unwrap_or(0);
        if code == 0 {
            continue;
        }
        // fio's own line names the file and the offset.
        let said = raw
            .stderr_text()
            .lines()
            .chain(String::from_utf8_lossy(raw.file(OUTPUT).unwrap_or_default()).lines())
            .map(str::trim)
            .find(|l| l.starts_with("fio: ") && !l.starts_with("fio: pid="))
            .map(|l| format!("; {l}"))
            .unwrap_or_default();
        return Err(Invalid::new(format!(
            "{} failed with error {code} ({}){said}",
            job_name(job, i),
            errno(code)
        ))
        .hint("the job's target is full, missing or refuses the I/O: fix it, or the job"));
    }
    Ok(())
}

/// `ENOSPC: No space left on device` for error 28.
fn errno(code: i64) -> String {
    let code = i32::try_from(code).ok();
    let text = code
        .map(|c| std::io::Error::from_raw_os_error(c).to_string())
        .unwrap_or_default();
    // io::Error says "No space left on device (os error 28)": the code is already said.
    let text = text.split(" (os error").next().unwrap_or_default();
    match code.and_then(iolab_util::errno::name) {
        Some(name) => format!("{name}: {text}"),
        None => text.to_string(),
    }
}

fn job_name(job: &Value, i: usize) -> String {
    match job.get("jobname").and_then(Value::as_str) {
        Some(n) => format!("fio's job `{n}` (jobs[{i}])"),
        None => format!("fio's jobs[{i}]"),
    }
}

/// One direction of one job, as fio reports it.
#[derive(Debug, Default, Clone)]
struct Dir {
    ops: f64,
    bytes: f64,
    iops: f64,
    bw_bytes: f64,
    runtime_ms: f64,
    /// Completion latency, when fio measured it.
    clat: Option<Lat>,
    /// Mean total latency (submission + completion), when measured.
    lat_mean: Option<f64>,
}

#[derive(Debug, Default, Clone)]
struct Lat {
    mean: f64,
    /// The I/Os it is over (the weight when merging jobs).
    n: f64,
    max: Option<f64>,
    /// By fio's percentile key (`99.000000`).
    pct: Vec<(String, f64)>,
}

impl Lat {
    fn pct(&self, key: &str) -> Option<f64> {
        self.pct.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// A count, rate or time fio always reports: numeric, finite, not negative.
fn count(v: Option<&Value>, what: &str) -> Result<f64, Invalid> {
    let x = number(v, what, false)?;
    if x < 0.0 {
        return Err(Invalid::new(format!("{what} is {x}, below 0")));
    }
    Ok(x)
}

/// `read`, `write` or `trim` of job `i`; `None` for a trim section fio did not write.
fn dir(job: &Value, what: &str, d: &str) -> Result<Option<Dir>, Invalid> {
    let what = format!("{what}.{d}");
    let Some(o) = job.get(d) else {
        if d == "trim" {
            return Ok(None);
        }
        return Err(Invalid::new(format!("{what} is missing")));
    };
    let field = |f: &str| count(o.get(f), &format!("{what}.{f}"));
    let ops = field("total_ios")?;
    let bytes = field("io_bytes")?;
    let mut r = Dir {
        ops,
        bytes,
        iops: field("iops")?,
        bw_bytes: field("bw_bytes")?,
        runtime_ms: field("runtime")?,
        ..Dir::default()
    };
    if ops == 0.0 && bytes == 0.0 {
        return Ok(Some(r));
    }
    // It moved data: its rates and time must say so.
    for f in ["iops", "bw_bytes", "runtime"] {
        number(o.get(f), &format!("{what}.{f}"), true)?;
    }
    // bw is KiB/s, truncated: a bw_bytes that disagrees means fio changed a unit (Phoronix's
    // parsers broke on fio's B/s against KB/s).
    if let Some(bw) = o.get("bw") {
        let kib = count(Some(bw), &format!("{what}.bw"))?;
        if (kib * 1024.0 - r.bw_bytes).abs() > 1024.0 + r.bw_bytes * 1e-6 {
            return Err(Invalid::new(format!(
                "{what}.bw_bytes ({} B/s) is not {what}.bw ({kib} KiB/s) in bytes: fio's units \
                 changed",
                r.bw_bytes
            ))
            .hint("this fio's JSON is not one the parser knows: report it with the output"));
        }
    }
    let clat = o
        .get("clat_ns")
        .ok_or_else(|| Invalid::new(format!("{what}.clat_ns is missing")))?;
    let mean = count(clat.get("mean"), &format!("{what}.clat_ns.mean"))?;
    // gtod_reduce and disable_clat leave the latencies at 0: not measured, not zero.
    let n = match clat.get("N") {
        Some(v) => count(Some(v), &format!("{what}.clat_ns.N"))?,
        None => ops,
    };
    if mean > 0.0 && n > 0.0 {
        let max = match clat.get("max") {
            Some(v) => Some(count(Some(v), &format!("{what}.clat_ns.max"))?),
            None => None,
        };
        let mut pct = Vec::new();
        if let Some(p) = clat.get("percentile").and_then(Value::as_object) {
            for (k, v) in p {
                pct.push((
                    k.clone(),
                    count(Some(v), &format!("{what}.clat_ns.percentile[{k:?}]"))?,
                ));
            }
        }
        r.clat = Some(Lat { mean, n, max, pct });
        if let Some(lat) = o.get("lat_ns") {
            let m = count(lat.get("mean"), &format!("{what}.lat_ns.mean"))?;
            r.lat_mean = (m > 0.0).then_some(m);
        }
    }
    Ok(Some(r))
}

/// One job entry of the measured group (a whole group with `group_reporting`).
struct JobStats {
    dirs: Vec<(&'static str, Dir)>,
    usr_cpu: Option<f64>,
    sys_cpu: Option<f64>,
    direct: Option<bool>,
    flush: Option<bool>,
}

impl JobStats {
    fn dir(&self, d: &str) -> Option<&Dir> {
        self.dirs.iter().find(|(n, _)| *n == d).map(|(_, x)| x)
    }
}

/// fio's boolean options are `0` or `1` (`direct=yes` is refused).
fn flag(v: &str) -> Option<bool> {
    v.trim().parse::<i64>().ok().map(|n| n != 0)
}

/// Option `key` of a job: its own, else the global one (fio's JSON lists what the job file
/// and the command line set, as text).
fn option<'a>(
    job: &'a Value,
    global: Option<&'a Map<String, Value>>,
    key: &str,
) -> Option<&'a str> {
    job.get("job options")
        .and_then(|o| o.get(key))
        .or_else(|| global.and_then(|g| g.get(key)))
        .and_then(Value::as_str)
}

fn job_stats(
    job: &Value,
    i: usize,
    global: Option<&Map<String, Value>>,
) -> Result<JobStats, Invalid> {
    let what = job_name(job, i);
    let mut dirs = Vec::new();
    for d in DIRECTIONS {
        if let Some(x) = dir(job, &what, d)? {
            dirs.push((d, x));
        }
    }
    if dirs.iter().all(|(_, x)| x.bytes == 0.0) {
        return Err(Invalid::new(format!("{what} moved no data"))
            .hint("check the job's size, runtime and rw"));
    }
    let cpu = |f: &str| match job.get(f) {
        None => Ok(None),
        Some(v) => count(Some(v), &format!("{what}.{f}")).map(Some),
    };
    let opt = |k: &str| option(job, global, k);
    let direct = match (opt("direct"), opt("buffered")) {
        (Some(v), _) => flag(v),
        (None, Some(v)) => flag(v).map(|b| !b),
        (None, None) => Some(false),
    };
    let flush = {
        let f = |k: &str| opt(k).map_or(Some(false), flag);
        match (f("end_fsync"), f("fsync_on_close")) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        }
    };
    Ok(JobStats {
        dirs,
        usr_cpu: cpu("usr_cpu")?,
        sys_cpu: cpu("sys_cpu")?,
        direct,
        flush,
    })
}

/// The value all agree on, or `None`.
fn agree(mut it: impl Iterator<Item = Option<bool>>) -> Option<bool> {
    let first = it.next()??;
    it.all(|x| x == Some(first)).then_some(first)
}

fn read(doc: &Value, group: Option<u64>) -> Result<Parsed, Invalid> {
    let jobs = match doc.get("jobs") {
        Some(Value::Array(j)) if !j.is_empty() => j,
        Some(Value::Array(_)) => {
            return Err(Invalid::new(format!("{OUTPUT} lists no jobs"))
                .hint("the job file defines no job besides [global]?"))
        }
        _ => return Err(Invalid::new(format!("{OUTPUT} has no `jobs`"))),
    };
    let global = doc.get("global options").and_then(Value::as_object);
    let mut of_job = Vec::new();
    let mut groups = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let g = count(job.get("groupid"), &format!("{}.groupid", job_name(job, i)))? as u64;
        of_job.push(g);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let listed = || {
        groups
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let measured = match group {
        Some(g) if groups.contains(&g) => g,
        Some(g) => {
            return Err(Invalid::new(format!(
                "fio reported no group {g} (its groups: {})",
                listed()
            ))
            .hint("`group` numbers fio's reporting groups from 0"))
        }
        None if groups.len() == 1 => groups[0],
        None => {
            return Err(Invalid::new(format!(
                "fio reported {} groups ({}): jobs of different groups may have run one after \
                 another (stonewall), so their rates do not add up",
                groups.len(),
                listed()
            ))
            .hint("set group = N in exec = { … } to measure one of them"))
        }
    };
    let mut stats = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        if of_job[i] == measured {
            stats.push(job_stats(job, i, global)?);
        }
    }

    let mut p = Parsed::default();
    if groups.len() > 1 {
        p.notes.push(format!(
            "fio reported groups {}: only group {measured} is measured",
            listed()
        ));
    }
    let all = || stats.iter().flat_map(|s| s.dirs.iter());
    let active = || all().filter(|(_, d)| d.ops > 0.0 || d.bytes > 0.0);
    p.set("ops", all().map(|(_, d)| d.ops).sum());
    p.set("bytes", all().map(|(_, d)| d.bytes).sum());
    p.set("ops_per_s", all().map(|(_, d)| d.iops).sum());
    p.set(
        "mib_per_s",
        all().map(|(_, d)| d.bw_bytes).sum::<f64>() / f64::from(1u32 << 20),
    );

    // Latency: means merge exactly (weighted by each job's I/Os); percentiles do not, so
    // the common ones are the dominant direction's, and over several job entries the highest
    // (an upper bound: a mixture's percentile never exceeds its parts' largest).
    let lats: Vec<&Lat> = active().filter_map(|(_, d)| d.clat.as_ref()).collect();
    if lats.is_empty() {
        p.notes.push(
            "fio measured no completion latency (gtod_reduce or disable_clat?): the latency \
             metrics are not set"
                .into(),
        );
    } else {
        p.set("lat_mean_ns", weighted(lats.iter().map(|l| (l.mean, l.n))));
        if let Some(max) = lats.iter().map(|l| l.max).collect::<Option<Vec<_>>>() {
            p.set("lat_max_ns", max.into_iter().fold(0.0, f64::max));
        }
    }
    let ops_of = |d: &str| -> f64 { stats.iter().filter_map(|s| s.dir(d)).map(|x| x.ops).sum() };
    let dominant = DIRECTIONS
        .into_iter()
        .fold(("read", -1.0), |best, d| {
            let n = ops_of(d);
            if n > best.1 {
                (d, n)
            } else {
                best
            }
        })
        .0;
    let entries = |d: &str| -> Vec<&Dir> {
        stats
            .iter()
            .filter_map(|s| s.dir(d))
            .filter(|x| x.ops > 0.0 || x.bytes > 0.0)
            .collect()
    };
    let highest = |dirs: &[&Dir], key: &str| -> Option<f64> {
        dirs.iter()
            .map(|x| x.clat.as_ref().and_then(|l| l.pct(key)))
            .collect::<Option<Vec<f64>>>()
            .filter(|v| !v.is_empty())
            .map(|v| v.into_iter().fold(0.0, f64::max))
    };
    let dom = entries(dominant);
    for (key, name) in PERCENTILES {
        if let Some(v) = highest(&dom, key) {
            p.set(name, v);
        }
    }
    if dom.len() > 1 && p.get("lat_p99_ns").is_some() {
        p.notes.push(format!(
            "lat_p99_ns and the other percentiles are the highest of {} jobs' {dominant} \
             percentiles (fio merges them only with group_reporting)",
            dom.len()
        ));
    }

    for d in ["read", "write"] {
        let xs = entries(d);
        if xs.is_empty() {
            continue;
        }
        p.set(&format!("{d}_iops"), xs.iter().map(|x| x.iops).sum());
        p.set(
            &format!("{d}_bytes_per_s"),
            xs.iter().map(|x| x.bw_bytes).sum(),
        );
        if let Some(ls) = xs
            .iter()
            .map(|x| x.clat.as_ref())
            .collect::<Option<Vec<_>>>()
        {
            p.set(
                &format!("{d}_clat_mean_ns"),
                weighted(ls.iter().map(|l| (l.mean, l.n))),
            );
            if let Some(v) = highest(&xs, "99.000000") {
                p.set(&format!("{d}_clat_p99_ns"), v);
            }
            if let Some(means) = xs.iter().map(|x| x.lat_mean).collect::<Option<Vec<_>>>() {
                let ws = ls.iter().map(|l| l.n);
                p.set(
                    &format!("{d}_lat_mean_ns"),
                    weighted(means.into_iter().zip(ws)),
                );
            }
        }
    }

    for (name, f) in [
        (
            "job_usr_cpu_pct",
            (|s: &JobStats| s.usr_cpu) as fn(&JobStats) -> Option<f64>,
        ),
        ("job_sys_cpu_pct", |s| s.sys_cpu),
    ] {
        if let Some(v) = stats.iter().map(f).collect::<Option<Vec<_>>>() {
            p.set(name, v.iter().sum::<f64>() / v.len() as f64);
        }
    }
    if let Some(disks) = doc.get("disk_util").and_then(Value::as_array) {
        let mut util: Option<f64> = None;
        for (k, disk) in disks.iter().enumerate() {
            let u = count(disk.get("util"), &format!("fio's disk_util[{k}].util"))?;
            util = Some(util.map_or(u, |m| m.max(u)));
        }
        if let Some(u) = util {
            p.set("disk_util_pct", u);
        }
    }

    let sum =
        |d: &str, f: fn(&Dir) -> f64| -> f64 { stats.iter().filter_map(|s| s.dir(d)).map(f).sum() };
    let wrote = || {
        stats
            .iter()
            .filter(|s| s.dir("write").is_some_and(|w| w.bytes > 0.0))
    };
    p.claimed = Claimed {
        read_bytes: Some(sum("read", |d| d.bytes)),
        write_bytes: Some(sum("write", |d| d.bytes)),
        seconds: Some(all().map(|(_, d)| d.runtime_ms).fold(0.0, f64::max) / 1000.0),
        bytes_per_s: Some(sum("read", |d| d.bw_bytes) + sum("write", |d| d.bw_bytes)),
        // Only the jobs that wrote have anything to flush.
        flush_timed: agree(wrote().map(|s| s.flush)),
        direct: agree(stats.iter().map(|s| s.direct)),
    };
    if p.claimed.direct.is_none() {
        p.notes
            .push("fio's jobs do not agree on `direct`: the claim leaves it open".into());
    }
    Ok(p)
}

/// The mean of `(value, weight)` pairs.
fn weighted(it: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (s, w) = it.fold((0.0, 0.0), |(s, w), (x, n)| (s + x * n, w + n));
    s / w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{raw, read as data};

    fn run(job: &str) -> Box<dyn ToolRun> {
        let mut o = Opts::default();
        o.keys.insert("job".into(), job.into());
        Fio.configure(&o).unwrap()
    }

    /// The run captured as `testdata/fio/<name>.*`, exit code `code`.
    fn captured(name: &str, code: i32) -> Raw {
        let mut r = raw(&format!("fio/{name}"), code);
        r.files
            .push((OUTPUT.into(), data(&format!("fio/{name}.json"))));
        r
    }

    fn parse(name: &str, code: i32) -> Result<Parsed, Invalid> {
        run("job.fio").parse(&captured(name, code))
    }

    /// The capture with `from` replaced by `to` in its JSON (once: the edit must hit).
    fn edited(name: &str, from: &str, to: &str) -> Result<Parsed, Invalid> {
        let mut r = captured(name, 0);
        let text = String::from_utf8(r.files[0].1.clone()).unwrap();
        assert_eq!(text.matches(from).count(), 1, "{from:?} in {name}.json");
        r.files[0].1 = text.replacen(from, to, 1).into_bytes();
        run("job.fio").parse(&r)
    }

    fn assert_close(p: &Parsed, name: &str, want: f64) {
        let got = p.get(name).unwrap_or_else(|| panic!("{name} is not set"));
        assert!(
            (got - want).abs() <= want.abs() * 1e-12,
            "{name}: {got} != {want}"
        );
    }

    #[test]
    fn randread_gives_fio_s_numbers() {
        let p = parse("randread", 0).unwrap();
        // From testdata/fio/randread.json, jobs[0].read.
        assert_eq!(p.get("ops"), Some(2_092_282.0));
        assert_eq!(p.get("bytes"), Some(8_569_987_072.0));
        assert_eq!(p.get("ops_per_s"), Some(1_045_618.190905));
        assert_close(&p, "mib_per_s", 4_282_852_109.0 / 1_048_576.0);
        assert_eq!(p.get("lat_mean_ns"), Some(807.101689));
        assert_eq!(p.get("lat_p50_ns"), Some(724.0));
        assert_eq!(p.get("lat_p90_ns"), Some(900.0));
        assert_eq!(p.get("lat_p99_ns"), Some(1096.0));
        assert_eq!(p.get("lat_p999_ns"), Some(1528.0));
        assert_eq!(p.get("lat_max_ns"), Some(5_422_409.0));
        assert_eq!(p.get("read_iops"), Some(1_045_618.190905));
        assert_eq!(p.get("read_bytes_per_s"), Some(4_282_852_109.0));
        assert_eq!(p.get("read_clat_mean_ns"), Some(807.101689));
        assert_eq!(p.get("read_clat_p99_ns"), Some(1096.0));
        assert_eq!(p.get("read_lat_mean_ns"), Some(822.129172));
        assert_eq!(p.get("job_usr_cpu_pct"), Some(26.8));
        assert_eq!(p.get("job_sys_cpu_pct"), Some(64.1));
        // Not measured, so not set: no writes, no disk under tmpfs.
        for m in ["write_iops", "write_clat_mean_ns", "disk_util_pct"] {
            assert_eq!(p.get(m), None, "{m}");
        }
        assert_eq!(
            p.claimed,
            Claimed {
                read_bytes: Some(8_569_987_072.0),
                write_bytes: Some(0.0),
                seconds: Some(2.001),
                bytes_per_s: Some(4_282_852_109.0),
                flush_timed: None,
                direct: Some(false),
            }
        );
        assert!(p.notes.is_empty(), "{:?}", p.notes);
    }

    #[test]
    fn a_group_reported_mixed_job_sums_its_directions() {
        let p = parse("randrw-group", 0).unwrap();
        // One entry for both jobs (group_reporting): read 1080512 ios, write 464812.
        assert_eq!(p.get("ops"), Some(1_080_512.0 + 464_812.0));
        assert_eq!(p.get("bytes"), Some(4_425_777_152.0 + 1_903_869_952.0));
        assert_close(&p, "ops_per_s", 1_076_207.171315 + 462_960.159363);
        assert_close(
            &p,
            "mib_per_s",
            (4_408_144_573.0 + 1_896_284_812.0) / 1_048_576.0,
        );
        // The mean over every I/O; the percentiles are the reads' (more of them).
        assert_close(
            &p,
            "lat_mean_ns",
            (1005.854485 * 1_080_512.0 + 1002.09631 * 464_812.0) / (1_080_512.0 + 464_812.0),
        );
        assert_eq!(p.get("lat_p99_ns"), Some(1012.0));
        assert_eq!(p.get("lat_max_ns"), Some(16_062_779.0));
        assert_eq!(p.get("read_iops"), Some(1_076_207.171315));
        assert_eq!(p.get("write_iops"), Some(462_960.159363));
        assert_eq!(p.get("write_bytes_per_s"), Some(1_896_284_812.0));
        assert_eq!(p.get("write_clat_mean_ns"), Some(1002.09631));
        assert_eq!(p.get("write_clat_p99_ns"), Some(964.0));
        assert_eq!(p.get("write_lat_mean_ns"), Some(1054.128693));
        assert_eq!(p.get("job_usr_cpu_pct"), Some(24.862706));
        assert_eq!(p.claimed.read_bytes, Some(4_425_777_152.0));
        assert_eq!(p.claimed.write_bytes, Some(1_903_869_952.0));
        assert_eq!(p.claimed.seconds, Some(1.004));
        assert_eq!(
            p.claimed.bytes_per_s,
            Some(4_408_144_573.0 + 1_896_284_812.0)
        );
        assert_eq!(p.claimed.flush_timed, Some(false));
        assert!(p.notes.is_empty(), "{:?}", p.notes);
    }

    #[test]
    fn separate_jobs_add_up_and_their_options_are_read() {
        let p = parse("two-jobs", 0).unwrap();
        // reader: 8192 reads, 33554432 B in 16 ms; writer: 2048 writes, 8388608 B in 7 ms.
        assert_eq!(p.get("ops"), Some(8192.0 + 2048.0));
        assert_eq!(p.get("ops_per_s"), Some(512_000.0 + 292_571.428571));
        assert_eq!(p.get("read_bytes_per_s"), Some(2_097_152_000.0));
        assert_eq!(p.get("write_bytes_per_s"), Some(1_198_372_571.0));
        assert_close(
            &p,
            "lat_mean_ns",
            (1730.543091 * 8192.0 + 2856.370605 * 2048.0) / 10240.0,
        );
        // Reads dominate: the reader's percentiles.
        assert_eq!(p.get("lat_p99_ns"), Some(29_824.0));
        assert_eq!(p.get("lat_max_ns"), Some(4_035_450.0));
        assert_eq!(p.get("write_clat_p99_ns"), Some(1304.0));
        // The mean of the two jobs' shares: reader 0 % and 60 %, writer 16.666667 % and 0 %.
        assert_eq!(p.get("job_usr_cpu_pct"), Some((0.0 + 16.666667) / 2.0));
        assert_eq!(p.get("job_sys_cpu_pct"), Some(30.0));
        // `direct=1` is global; `fsync_on_close=1` the writer's, the only job that wrote.
        assert_eq!(p.claimed.direct, Some(true));
        assert_eq!(p.claimed.flush_timed, Some(true));
        assert_eq!(p.claimed.seconds, Some(0.016));
        assert_eq!(p.claimed.read_bytes, Some(33_554_432.0));
        assert_eq!(p.claimed.write_bytes, Some(8_388_608.0));
    }

    #[test]
    fn several_job_entries_give_the_highest_percentile_and_say_so() {
        // The writer made the dominant direction by giving it more I/Os than the reader.
        let p = edited("two-jobs", "\"total_ios\" : 2048,", "\"total_ios\" : 9000,").unwrap();
        assert_eq!(p.get("lat_p99_ns"), Some(1304.0));
        assert!(p.notes.is_empty(), "one entry per direction: {:?}", p.notes);
        // Two entries for the same direction: the highest of their p99s, with a note.
        let mut r = captured("two-jobs", 0);
        let mut doc: Value = serde_json::from_slice(&r.files[0].1).unwrap();
        let reader = doc["jobs"][0].clone();
        let mut twin = reader.clone();
        twin["read"]["clat_ns"]["percentile"]["99.000000"] = 40_000.into();
        doc["jobs"] = Value::Array(vec![reader, twin]);
        r.files[0].1 = serde_json::to_vec(&doc).unwrap();
        let p = run("j").parse(&r).unwrap();
        assert_eq!(p.get("lat_p99_ns"), Some(40_000.0));
        assert_eq!(p.get("read_clat_p99_ns"), Some(40_000.0));
        assert_eq!(p.get("ops"), Some(2.0 * 8192.0));
        assert!(p.notes[0].contains("highest of 2 jobs'"), "{:?}", p.notes);
    }

    #[test]
    fn end_fsync_and_disk_util_are_read() {
        let p = parse("write-fsync", 0).unwrap();
        assert_eq!(p.get("write_iops"), Some(70_534.192_27));
        assert_eq!(p.get("write_bytes_per_s"), Some(4_622_528_824.0));
        assert_eq!(p.get("write_clat_p99_ns"), Some(39_168.0));
        assert_eq!(p.get("disk_util_pct"), Some(69.2));
        assert_eq!(p.get("read_iops"), None);
        assert_eq!(
            p.claimed,
            Claimed {
                read_bytes: Some(0.0),
                write_bytes: Some(4_664_131_584.0),
                seconds: Some(1.009),
                bytes_per_s: Some(4_622_528_824.0),
                flush_timed: Some(true),
                direct: Some(false),
            }
        );
    }

    #[test]
    fn a_bad_option_is_the_exit_code_with_fio_s_message() {
        let e = parse("bad-option", 1).unwrap_err();
        assert_eq!(
            e.reason,
            "fio exited with code 1: fio: failed parsing bs=banana"
        );
        let e = parse("unknown-option", 1).unwrap_err();
        assert!(
            e.reason.contains("unrecognized option '--bogus-option=1'"),
            "{e}"
        );
        // Had it exited 0, the file still holds no JSON.
        let e = parse("bad-option", 0).unwrap_err();
        assert_eq!(
            e.reason,
            "fio.json holds no JSON, only \"fio: failed parsing bs=banana\""
        );
    }

    #[test]
    fn a_job_error_names_the_errno_and_the_job() {
        let want = "fio's job `full` (jobs[0]) failed with error 28 (ENOSPC: No space left on \
                    device); fio: io_u error on file /dev/full: No space left on device: write \
                    offset=0, buflen=4096";
        assert_eq!(parse("dev-full", 1).unwrap_err().reason, want);
        // With --thread fio writes its error lines into the JSON file, before the JSON.
        assert_eq!(parse("dev-full-thread", 1).unwrap_err().reason, want);
        let r = captured("dev-full-thread", 1);
        assert!(r.files[0].1.starts_with(b"fio: io_u error"));
        // The error counts even when fio exits 0.
        let e = parse("dev-full", 0).unwrap_err();
        assert!(e.reason.contains("error 28 (ENOSPC"), "{e}");
    }

    #[test]
    fn a_missing_or_truncated_json_is_invalid() {
        let mut r = captured("randread", 0);
        r.files.clear();
        let e = run("j").parse(&r).unwrap_err();
        assert_eq!(e.reason, "fio wrote no {out}/fio.json");
        let full = data("fio/randread.json");
        r.files
            .push((OUTPUT.into(), full[..full.len() / 2].to_vec()));
        let e = run("j").parse(&r).unwrap_err();
        assert!(
            e.reason.starts_with("fio.json is not complete JSON (EOF"),
            "{e}"
        );
        r.files[0].1 = Vec::new();
        assert_eq!(run("j").parse(&r).unwrap_err().reason, "fio.json is empty");
    }

    #[test]
    fn jobs_must_be_listed() {
        let e = edited("dev-full", "\"jobs\" : [", "\"jobs\" : [], \"x\" : [").unwrap_err();
        assert_eq!(e.reason, "fio.json lists no jobs");
        let e = edited("randread", "\"jobs\"", "\"jobz\"").unwrap_err();
        assert_eq!(e.reason, "fio.json has no `jobs`");
    }

    #[test]
    fn a_required_number_that_is_missing_text_or_nan_is_named() {
        let e = edited("randread", "\"iops\" : 1045618.190905,", "").unwrap_err();
        assert_eq!(
            e.reason,
            "fio's job `randread` (jobs[0]).read.iops is missing"
        );
        let e = edited(
            "randread",
            "\"iops\" : 1045618.190905,",
            "\"iops\" : \"fast\",",
        )
        .unwrap_err();
        assert_eq!(
            e.reason,
            "fio's job `randread` (jobs[0]).read.iops is the text \"fast\", not a number"
        );
        // fio prints nan unquoted, which is not JSON: the field is named, not the document.
        let e = edited("randread", "\"iops\" : 1045618.190905,", "\"iops\" : -nan,").unwrap_err();
        assert_eq!(
            e.reason,
            "fio's job `randread` (jobs[0]).read.iops is the text \"-nan\", not a number"
        );
        let e = edited("randread", "\"mean\" : 807.101689,", "\"mean\" : nan,").unwrap_err();
        assert!(
            e.reason.contains("read.clat_ns.mean is the text \"nan\""),
            "{e}"
        );
        // A stray nan in a field the parser does not read is harmless.
        let p = edited(
            "randread",
            "\"iops_stddev\" : 70558.139856,",
            "\"iops_stddev\" : -nan,",
        )
        .unwrap();
        assert_eq!(p.get("read_iops"), Some(1_045_618.190905));
    }

    #[test]
    fn a_job_that_moved_nothing_or_was_too_short_to_rate_is_invalid() {
        let zero = data("fio/randread.json");
        let text = String::from_utf8(zero).unwrap();
        let mut doc: Value = serde_json::from_str(&text).unwrap();
        for f in ["io_bytes", "total_ios", "iops", "bw_bytes", "bw", "runtime"] {
            doc["jobs"][0]["read"][f] = 0.into();
        }
        let mut r = captured("randread", 0);
        r.files[0].1 = serde_json::to_vec(&doc).unwrap();
        let e = run("j").parse(&r).unwrap_err();
        assert_eq!(e.reason, "fio's job `randread` (jobs[0]) moved no data");
        let e = edited("randread", "\"runtime\" : 2001,", "\"runtime\" : 0,").unwrap_err();
        assert_eq!(
            e.reason,
            "fio's job `randread` (jobs[0]).read.runtime is 0, where a result must be above 0"
        );
    }

    #[test]
    fn bw_bytes_must_be_bw_in_bytes() {
        // As if fio had written bw_bytes in KiB/s.
        let e = edited(
            "randread",
            "\"bw_bytes\" : 4282852109,",
            "\"bw_bytes\" : 4182472,",
        )
        .unwrap_err();
        assert!(
            e.reason.contains("read.bw_bytes (4182472 B/s) is not"),
            "{e}"
        );
    }

    #[test]
    fn unmeasured_latency_is_left_unset() {
        // gtod_reduce=1: fio reports 0 for every latency.
        let mut r = captured("randread", 0);
        let mut doc: Value = serde_json::from_slice(&r.files[0].1).unwrap();
        doc["jobs"][0]["read"]["clat_ns"] =
            serde_json::json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
        r.files[0].1 = serde_json::to_vec(&doc).unwrap();
        let p = run("j").parse(&r).unwrap();
        for m in [
            "lat_mean_ns",
            "lat_p99_ns",
            "lat_max_ns",
            "read_clat_mean_ns",
        ] {
            assert_eq!(p.get(m), None, "{m}");
        }
        assert_eq!(p.get("read_iops"), Some(1_045_618.190905));
        assert!(
            p.notes[0].contains("no completion latency"),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn several_groups_need_group() {
        let mut r = captured("two-jobs", 0);
        let mut doc: Value = serde_json::from_slice(&r.files[0].1).unwrap();
        doc["jobs"][1]["groupid"] = 1.into();
        r.files[0].1 = serde_json::to_vec(&doc).unwrap();
        let e = run("j").parse(&r).unwrap_err();
        assert!(e.reason.starts_with("fio reported 2 groups (0, 1)"), "{e}");
        let mut o = Opts::default();
        o.keys.insert("job".into(), "j".into());
        o.keys.insert("group".into(), 1.into());
        let p = Fio.configure(&o).unwrap().parse(&r).unwrap();
        assert_eq!(p.get("ops"), Some(2048.0));
        assert_eq!(p.get("read_iops"), None);
        assert_eq!(p.claimed.write_bytes, Some(8_388_608.0));
        assert_eq!(
            p.notes,
            ["fio reported groups 0, 1: only group 1 is measured"]
        );
        o.keys.insert("group".into(), 2.into());
        let e = Fio.configure(&o).unwrap().parse(&r).unwrap_err();
        assert_eq!(e.reason, "fio reported no group 2 (its groups: 0, 1)");
    }

    #[test]
    fn a_killed_fio_is_invalid_whatever_its_file_says() {
        let mut r = captured("randread", 0);
        r.exit_code = None;
        r.signal = Some(9);
        let e = run("j").parse(&r).unwrap_err();
        assert_eq!(e.reason, "fio was ended by signal 9");
        r.signal = None;
        r.timed_out = true;
        assert!(run("j").parse(&r).is_err());
    }

    fn at() -> Placeholders {
        Placeholders {
            dir: "/mnt/t".into(),
            out: "/tmp/o".into(),
            seed: 42,
            time_s: Some(3),
            ..Placeholders::default()
        }
    }

    fn opts(keys: Value, args: &[&str], time_s: Option<f64>) -> Opts {
        Opts {
            keys: keys.as_object().unwrap().clone(),
            args: args.iter().map(|s| s.to_string()).collect(),
            time_s,
            base: "/exp".into(),
        }
    }

    #[test]
    fn a_job_file_is_found_next_to_the_experiment_and_time_becomes_runtime() {
        let o = opts(
            serde_json::json!({"job": "jobs/rr.fio"}),
            &["--randseed={seed}", "--iodepth=4"],
            Some(2.5),
        );
        let inv = Fio.configure(&o).unwrap().invocation(&at());
        assert_eq!(
            inv.main.argv,
            [
                "fio",
                "--output-format=json",
                "--output=/tmp/o/fio.json",
                "/exp/jobs/rr.fio",
                "--runtime=2500ms",
                "--time_based",
                "--randseed=42",
                "--iodepth=4",
            ]
        );
        assert_eq!(inv.outputs, ["fio.json"]);
        assert!(inv.inputs.is_empty());
        // An absolute path stays; no time, no runtime.
        let o = opts(serde_json::json!({"job": "/etc/rr.fio"}), &[], None);
        let inv = Fio.configure(&o).unwrap().invocation(&at());
        assert_eq!(inv.main.argv[3..], ["/etc/rr.fio"]);
    }

    #[test]
    fn an_inline_job_is_written_to_out_with_placeholders_expanded() {
        let o = opts(
            serde_json::json!({"job": "[rr]\nrw=randread\nrandseed={seed}\nsize=1m\n"}),
            &[],
            None,
        );
        let inv = Fio.configure(&o).unwrap().invocation(&at());
        assert_eq!(inv.main.argv[3], "/tmp/o/job.fio");
        assert_eq!(
            inv.inputs,
            [(
                "job.fio".to_string(),
                b"[rr]\nrw=randread\nrandseed=42\nsize=1m\n".to_vec()
            )]
        );
        // One line with a section header is text too.
        let o = opts(serde_json::json!({"job": "[rr] "}), &[], None);
        let inv = Fio.configure(&o).unwrap().invocation(&at());
        assert_eq!(inv.inputs[0].1, b"[rr] ");
    }

    #[test]
    fn bad_options_are_refused_at_their_key() {
        let err = |keys: Value, args: &[&str], t: Option<f64>| {
            Fio.configure(&opts(keys, args, t)).unwrap_err()
        };
        let e = err(serde_json::json!({}), &[], None);
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            ("job", "fio needs a job")
        );
        let e = err(serde_json::json!({"job": 3}), &[], None);
        assert_eq!(e.message, "expected a string, found a number");
        let e = err(serde_json::json!({"job": " "}), &[], None);
        assert_eq!(e.message, "the job is empty");
        let e = err(serde_json::json!({"job": "[a]\nsize={size}\n"}), &[], None);
        assert_eq!(e.key, "job");
        assert!(e.message.contains("unknown placeholder `{size}`"), "{e:?}");
        let e = err(
            serde_json::json!({"job": "[a]\nruntime={time}\n"}),
            &[],
            None,
        );
        assert!(e.message.contains("`time` is not set"), "{e:?}");
        let e = err(serde_json::json!({"job": "j", "group": -1}), &[], None);
        assert_eq!(e.key, "group");
        let e = err(
            serde_json::json!({"job": "j"}),
            &["--output-format=normal"],
            None,
        );
        assert_eq!(e.key, "args");
        assert!(e.message.contains("`--output`"), "{e:?}");
        let e = err(serde_json::json!({"job": "j"}), &["--minimal"], None);
        assert_eq!(e.key, "args");
        let e = err(
            serde_json::json!({"job": "j"}),
            &["--server={server}"],
            None,
        );
        assert!(e.message.contains("runs no server"), "{e:?}");
        let e = err(serde_json::json!({"job": "j"}), &[], Some(0.0001));
        assert_eq!(e.key, "time");
    }

    #[test]
    fn time_that_the_job_file_overrode_is_a_note() {
        let timed = |name: &str, t: f64| {
            let o = opts(serde_json::json!({"job": "j"}), &[], Some(t));
            Fio.configure(&o)
                .unwrap()
                .parse(&captured(name, 0))
                .unwrap()
        };
        // randread ran with --runtime=2 --time_based on the command line: what `time = "2s"`
        // passes (as 2000ms).
        assert!(timed("randread", 2.0).notes.is_empty());
        assert_eq!(
            timed("randread", 3.0).notes,
            [
                "fio's job `randread` (jobs[0]) ran with runtime=2 and time_based=1 from the job \
              file, not `time` (3000 ms): the job file's settings win over the command line's"
            ]
        );
        // randrw-group's [global] has runtime=1 and time_based (listed without a value).
        assert!(timed("randrw-group", 1.0).notes.is_empty());
        assert_eq!(timed("randrw-group", 5.0).notes.len(), 1);
        assert_eq!(fio_ms("2500ms"), Some(2500.0));
        assert_eq!(fio_ms("1m"), Some(60e3));
        assert_eq!(fio_ms("2x"), None);
    }

    #[test]
    fn the_docs_describe_every_key_and_metric() {
        let section = crate::testdata::doc_section("harness.md", "fio");
        for k in KEYS {
            assert!(
                section.contains(&format!("| `{}` |", k.name)),
                "docs/harness.md, fio: no row for `{}`",
                k.name
            );
        }
        let metrics = crate::testdata::doc_section("metrics.md", "Other benchmarks (`exec`)");
        for m in METRICS {
            assert!(
                section.contains(&format!("`{}`", m.name))
                    && metrics.contains(&format!("`{}`", m.name)),
                "docs/harness.md and docs/metrics.md must describe `{}`",
                m.name
            );
        }
    }

    #[test]
    fn the_version_is_fio_s_first_line() {
        assert_eq!(Fio.version("fio-3.33\n").as_deref(), Some("fio-3.33"));
    }

    /// Runs the adapter's command with the real fio, as the exec kind does: in `{dir}` with
    /// iolab's variables set. A job file's `${IOLAB_DIR}` is expanded by fio; a job without
    /// a directory or file name does its I/O in the working directory; an absolute file name
    /// is left alone (a `--directory` would have moved it under `{dir}`).
    #[test]
    #[ignore = "needs fio (apt-get install fio)"]
    fn the_real_fio_runs_the_invocation_in_dir() {
        let tmp = std::env::temp_dir().join(format!("iolab-tools-fio-{}", std::process::id()));
        let (dir, out, other) = (tmp.join("dir"), tmp.join("out"), tmp.join("other"));
        for d in [&dir, &out, &other] {
            std::fs::create_dir_all(d).unwrap();
        }
        let file = tmp.join("env.fio");
        std::fs::write(
            &file,
            format!(
                "[global]\nrw=write\nbs=4k\nsize=64k\n[env]\nfilename=${{IOLAB_DIR}}/from-env\n\
                 [abs]\nfilename={}/abs\n[plain]\n",
                other.display()
            ),
        )
        .unwrap();
        let at = Placeholders {
            dir: dir.to_str().unwrap().into(),
            out: out.to_str().unwrap().into(),
            ..Placeholders::default()
        };
        let o = opts(
            serde_json::json!({"job": file.to_str().unwrap()}),
            &[],
            Some(0.5),
        );
        let tool = Fio.configure(&o).unwrap();
        let inv = tool.invocation(&at);
        let st = std::process::Command::new(&inv.main.argv[0])
            .args(&inv.main.argv[1..])
            .current_dir(&dir)
            .env("IOLAB_DIR", &at.dir)
            .output()
            .unwrap();
        let raw = Raw {
            exit_code: st.status.code(),
            stdout: st.stdout,
            stderr: st.stderr,
            files: vec![(OUTPUT.into(), std::fs::read(out.join(OUTPUT)).unwrap())],
            ..Raw::default()
        };
        let p = tool.parse(&raw);
        let mut in_dir: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        in_dir.sort();
        let abs = other.join("abs").exists();
        std::fs::remove_dir_all(&tmp).unwrap();
        let p = p.unwrap();
        assert_eq!(in_dir, ["from-env", "plain.0.0"]);
        assert!(
            abs,
            "filename={}/abs was not written there",
            other.display()
        );
        assert!(p.get("write_iops").unwrap() > 0.0);
        // fio took `time` after the job file as a global option.
        let doc: Value = serde_json::from_slice(&raw.files[0].1).unwrap();
        assert_eq!(doc["global options"]["runtime"], "500ms");
    }
}
