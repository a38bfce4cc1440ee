//! bonnie++ (`tool = "bonnie"`): `bonnie++ -d {dir} -q …` prints one CSV line (format 1.98,
//! 50 fields) on stdout and its text tables on stderr. Rates of the I/O phases are in K/s
//! (1024 bytes), seeks and file phases per second, CPU in percent, latencies with their unit
//! (`57219us`, `1343ms`, `2s`). A phase shorter than 0.5 s prints `+++++` (and `+++` for its
//! CPU): too fast to measure, so that figure is not set (never 0).

use std::borrow::Cow;

use iolab_metrics::{Better, MetricDef};

use crate::adapter::{
    expand_args, parse_number, Adapter, Claimed, Command, Invalid, Invocation, Key, OptError, Opts,
    Parsed, Placeholders, Raw, ToolRun,
};

pub struct Bonnie;

/// The CSV format this parser reads: it fixes the fields' order and units.
const FORMAT: &str = "1.98";
const FIELDS: usize = 50;
const TOO_FAST: &str = "+++++";

/// One phase: its CSV label (as bonnie++'s `bon_csv2html` names it), where its rate is, what
/// its rate is counted in and its metrics.
struct Phase {
    label: &'static str,
    /// Index of the rate field; the CPU field follows it.
    rate_at: usize,
    /// Index of the latency field.
    lat_at: usize,
    /// K/s (converted to MiB/s) or a count per second.
    kib: bool,
    rate: &'static str,
    cpu: &'static str,
    lat: &'static str,
}

macro_rules! phases {
    ($(($label:literal, $rate_at:expr, $lat_at:expr, $kib:expr, $rate:literal)),* $(,)?) => {
        [$(Phase {
            label: $label,
            rate_at: $rate_at,
            lat_at: $lat_at,
            kib: $kib,
            rate: concat!("bonnie_", $label, $rate),
            cpu: concat!("bonnie_", $label, "_cpu_pct"),
            lat: concat!("bonnie_", $label, "_lat_max_ns"),
        }),*]
    };
}

/// The twelve phases in the CSV's order: six I/O phases, then six file phases.
const PHASES: [Phase; 12] = phases![
    ("putc", 9, 38, true, "_mib_per_s"),
    ("put_block", 11, 39, true, "_mib_per_s"),
    ("rewrite", 13, 40, true, "_mib_per_s"),
    ("getc", 15, 41, true, "_mib_per_s"),
    ("get_block", 17, 42, true, "_mib_per_s"),
    ("seeks", 19, 43, false, "_per_s"),
    ("seq_create", 26, 44, false, "_per_s"),
    ("seq_stat", 28, 45, false, "_per_s"),
    ("seq_del", 30, 46, false, "_per_s"),
    ("ran_create", 32, 47, false, "_per_s"),
    ("ran_stat", 34, 48, false, "_per_s"),
    ("ran_del", 36, 49, false, "_per_s"),
];

/// The field of the file phases' first figure: the phases before it are the I/O phases.
const FILE_FIELDS: usize = 21;

/// The per-char phases, skipped by `fast`.
const PER_CHAR: [&str; 2] = ["putc", "getc"];

macro_rules! phase_metrics {
    ($(($label:literal, $rate:literal, $unit:literal, $title:literal, $what:literal)),* $(,)?) => {
        &[$(
            MetricDef::new(
                concat!("bonnie_", $label, $rate),
                $unit,
                Some(Better::Higher),
                concat!("bonnie++ ", $title),
                concat!($what, " as bonnie++ reports it in its CSV (not set where it prints +++++)"),
            ),
            MetricDef::new(
                concat!("bonnie_", $label, "_cpu_pct"),
                "%",
                Some(Better::Lower),
                concat!("bonnie++ ", $title, ": CPU"),
                concat!("bonnie++'s %CP of the `", $label, "` phase: its CPU time over its elapsed time"),
            ),
            MetricDef::new(
                concat!("bonnie_", $label, "_lat_max_ns"),
                "ns",
                Some(Better::Lower),
                concat!("bonnie++ ", $title, ": max latency"),
                concat!("the slowest operation of the `", $label, "` phase, from bonnie++'s latency field"),
            ),
        )*]
    };
}

static METRICS: &[MetricDef] = phase_metrics![
    (
        "putc",
        "_mib_per_s",
        "MiB/s",
        "per-char output",
        "bytes written one `write` each per second, in MiB,"
    ),
    (
        "put_block",
        "_mib_per_s",
        "MiB/s",
        "block output",
        "bytes written a chunk per `write` per second, in MiB,"
    ),
    (
        "rewrite",
        "_mib_per_s",
        "MiB/s",
        "rewrite",
        "bytes read, changed and written back per second, in MiB,"
    ),
    (
        "getc",
        "_mib_per_s",
        "MiB/s",
        "per-char input",
        "bytes read one `read` each per second, in MiB,"
    ),
    (
        "get_block",
        "_mib_per_s",
        "MiB/s",
        "block input",
        "bytes read a chunk per `read` per second, in MiB,"
    ),
    (
        "seeks",
        "_per_s",
        "op/s",
        "random seeks",
        "seeks (lseek + chunk read, some rewritten) per second"
    ),
    (
        "seq_create",
        "_per_s",
        "op/s",
        "sequential create",
        "files created per second in creation order"
    ),
    (
        "seq_stat",
        "_per_s",
        "op/s",
        "sequential stat",
        "files stat()ed per second in readdir order"
    ),
    (
        "seq_del",
        "_per_s",
        "op/s",
        "sequential delete",
        "files deleted per second in readdir order"
    ),
    (
        "ran_create",
        "_per_s",
        "op/s",
        "random create",
        "files created per second in random order"
    ),
    (
        "ran_stat",
        "_per_s",
        "op/s",
        "random stat",
        "files stat()ed per second in random order"
    ),
    (
        "ran_del",
        "_per_s",
        "op/s",
        "random delete",
        "files deleted per second in random order"
    ),
];

static KEYS: &[Key] = &[
    Key {
        name: "size",
        doc: "`-s`: the test file's size in MiB (0 skips the I/O phases); bonnie++'s default is twice the RAM",
    },
    Key {
        name: "ram",
        doc: "`-r`: the RAM size in MiB bonnie++ assumes (it refuses a `size` under twice the RAM; 0 turns the check off)",
    },
    Key {
        name: "files",
        doc: "`-n`: the file phases' file count in multiples of 1024 (0 skips them; bonnie++'s default is 16)",
    },
    Key {
        name: "user",
        doc: "`-u`: the user bonnie++ runs as (default \"root\", which bonnie++ requires when run as root; \"\" leaves `-u` out)",
    },
    Key {
        name: "fast",
        doc: "`-f`: skip the per-char phases (default false)",
    },
];

impl Adapter for Bonnie {
    fn name(&self) -> &'static str {
        "bonnie"
    }

    fn program(&self) -> &'static str {
        "bonnie++"
    }

    fn install(&self) -> &'static str {
        "apt-get install bonnie++"
    }

    fn version_args(&self) -> &'static [&'static str] {
        // bonnie++ has no version option: its usage message ends with `Version: 2.00a`.
        &["-h"]
    }

    fn version(&self, printed: &str) -> Option<String> {
        printed
            .lines()
            .find_map(|l| l.trim().strip_prefix("Version:"))
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
        let size = opts.uint("size", 0, u64::MAX)?;
        let ram = opts.uint("ram", 0, u64::MAX)?;
        let files = opts.uint("files", 0, u64::MAX)?;
        let fast = opts.flag("fast")?.unwrap_or(false);
        let user = opts.str("user")?.unwrap_or("root").to_string();
        if let (Some(s), Some(r)) = (size, ram) {
            let min_size = r.saturating_mul(2);
            if s > 0 && r > 0 && s < min_size {
                let max_ram = s / 2;
                return Err(OptError::new(
                    "size",
                    format!(
                        "bonnie++ refuses a size of {s} MiB with ram = {r}: the file must be at \
                         least twice the RAM"
                    ),
                )
                .hint(format!(
                    "raise `size` to {min_size} or more, or lower `ram` to {max_ram} or less \
                     (ram = 0 turns bonnie++'s check off)"
                )));
            }
        }
        if size == Some(0) && files == Some(0) {
            return Err(OptError::new(
                "size",
                "size = 0 and files = 0 leave bonnie++ nothing to run",
            )
            .hint("give `size` (MiB) for the I/O phases or `files` for the file phases"));
        }
        opts.checked_args(false)?;
        opts.refuse_args(&[
            ("-d", "bonnie++ works in the run's directory `{dir}`"),
            ("-s", "set the size with `size`"),
            ("-r", "set the RAM size with `ram`"),
            ("-n", "set the file count with `files`"),
            ("-u", "set the user with `user`"),
            ("-f", "skip the per-char phases with `fast = true`"),
            (
                "-q",
                "iolab passes -q: the CSV line is the only output on stdout",
            ),
            ("-x", "one test per run: iolab repeats runs itself"),
        ])?;
        opts.refuse_unused_time("bonnie++")?;
        Ok(Box::new(BonnieRun {
            size,
            ram,
            files,
            user,
            fast,
            args: opts.args.clone(),
        }))
    }
}

#[derive(Debug)]
struct BonnieRun {
    size: Option<u64>,
    ram: Option<u64>,
    files: Option<u64>,
    user: String,
    fast: bool,
    args: Vec<String>,
}

impl ToolRun for BonnieRun {
    /// bonnie++ counts no operations: block output, its headline figure.
    fn stop_metric(&self) -> Option<&str> {
        Some("bonnie_put_block_mib_per_s")
    }

    fn invocation(&self, at: &Placeholders) -> Invocation {
        let mut argv = vec![
            Bonnie.program().to_string(),
            "-d".into(),
            at.dir.clone(),
            "-q".into(),
        ];
        for (flag, v) in [("-s", self.size), ("-r", self.ram), ("-n", self.files)] {
            if let Some(v) = v {
                argv.extend([flag.to_string(), v.to_string()]);
            }
        }
        if !self.user.is_empty() {
            argv.extend(["-u".to_string(), self.user.clone()]);
        }
        if self.fast {
            argv.push("-f".into());
        }
        argv.extend(expand_args(&self.args, at));
        Invocation {
            main: Command::new(argv),
            // Killed mid-run, bonnie++ leaves its test file and file-phase directory.
            leftovers: vec![format!("{}/Bonnie.*", at.dir)],
            ..Invocation::default()
        }
    }

    fn metrics(&self) -> Cow<'static, [MetricDef]> {
        Cow::Borrowed(METRICS)
    }

    fn parse(&self, raw: &Raw) -> Result<Parsed, Invalid> {
        check_exit(raw)?;
        let out = raw.stdout_text();
        let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
        let line = match lines.as_slice() {
            [one] => one.trim(),
            [] => {
                return Err(Invalid::new("bonnie++ printed no CSV line on stdout")
                    .hint("iolab runs it with -q, which puts the CSV line alone on stdout"))
            }
            more => {
                return Err(Invalid::new(format!(
                    "bonnie++ printed {} lines on stdout where one CSV line was expected",
                    more.len()
                )))
            }
        };
        let f: Vec<&str> = line.split(',').collect();
        if f[0] != FORMAT {
            return Err(Invalid::new(format!(
                "bonnie++'s CSV is format {:?}; this parser reads format {FORMAT} (bonnie++ 1.98 to 2.00), whose fields and units it knows",
                f[0]
            )));
        }
        if f.len() != FIELDS {
            return Err(Invalid::new(format!(
                "bonnie++'s CSV line has {} fields; format {FORMAT} has {FIELDS}",
                f.len()
            )));
        }
        self.check_size(f[5])?;
        let io = self.size != Some(0);
        let file_phases = self.files != Some(0);
        let mut p = Parsed::default();
        let mut too_fast = Vec::new();
        let mut measured = 0;
        let mut lat_max: Option<f64> = None;
        for ph in &PHASES {
            let expected = if ph.rate_at < FILE_FIELDS {
                io && !(self.fast && PER_CHAR.contains(&ph.label))
            } else {
                file_phases
            };
            let (rate, cpu) = (f[ph.rate_at].trim(), f[ph.rate_at + 1].trim());
            match rate {
                "" if expected => {
                    return Err(Invalid::new(format!(
                        "bonnie++'s CSV has no `{}` rate (field {}), a phase this run asked for",
                        ph.label,
                        ph.rate_at + 1
                    )))
                }
                "" => {}
                TOO_FAST => too_fast.push(ph.label),
                r => {
                    let what = format!("bonnie++'s `{}` rate", ph.label);
                    let x = parse_number(r, &what, true)?;
                    p.set(ph.rate, if ph.kib { x / 1024.0 } else { x });
                    measured += 1;
                    if !cpu.starts_with('+') && !cpu.is_empty() {
                        let what = format!("bonnie++'s `{}` %CP", ph.label);
                        let c = parse_number(cpu, &what, false)?;
                        p.set(ph.cpu, c);
                    }
                }
            }
            if let Some(ns) = latency_ns(f[ph.lat_at].trim(), ph.label)? {
                p.set(ph.lat, ns);
                lat_max = Some(lat_max.map_or(ns, |m: f64| m.max(ns)));
            }
        }
        if measured == 0 {
            return Err(Invalid::new(format!(
                "every phase bonnie++ ran was too fast to measure (+++++ for {})",
                too_fast.join(", ")
            ))
            .hint("raise `size` (and `files`): bonnie++ prints no rate for a phase under 0.5 s"));
        }
        if !too_fast.is_empty() {
            p.notes.push(format!(
                "too fast to measure (under 0.5 s, bonnie++ printed +++++), not set: {}",
                too_fast.join(", ")
            ));
        }
        if let Some(m) = lat_max {
            p.set("lat_max_ns", m);
        }
        p.claimed = Claimed {
            // Every I/O phase ends with fsync + close inside its timing.
            flush_timed: io.then_some(true),
            direct: Some(self.args.iter().any(|a| a == "-D")),
            ..Claimed::default()
        };
        Ok(p)
    }
}

impl BonnieRun {
    /// The CSV's file size (`256M`, `1G`, `512K`) is the size this run asked for.
    fn check_size(&self, field: &str) -> Result<(), Invalid> {
        let Some(want) = self.size.filter(|s| *s > 0) else {
            return Ok(());
        };
        let got = [('K', 1u64), ('M', 1 << 10), ('G', 1 << 20), ('T', 1 << 30)]
            .iter()
            .find_map(|(unit, kib)| {
                let n: u64 = field.strip_suffix(*unit)?.parse().ok()?;
                n.checked_mul(*kib)
            });
        match got {
            Some(g) if Some(g) == want.checked_mul(1 << 10) => Ok(()),
            Some(_) => Err(Invalid::new(format!(
                "bonnie++'s CSV says the file size was {field}, but this run asked for size = {want} (MiB)"
            ))),
            None => Err(Invalid::new(format!(
                "bonnie++'s CSV file size {field:?} is not a number with a K, M, G or T unit"
            ))),
        }
    }
}

/// bonnie++'s usage message follows every refusal: the reason is the text before it.
fn check_exit(raw: &Raw) -> Result<(), Invalid> {
    let Err(e) = raw.check_exit("bonnie++") else {
        return Ok(());
    };
    let err = raw.stderr_text();
    let Some((before, _)) = err.split_once("usage:") else {
        return Err(e);
    };
    let said: Vec<&str> = before
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if said.is_empty() {
        return Err(e);
    }
    let said = said.join(" / ");
    let code = raw
        .exit_code
        .map_or_else(String::new, |c| format!(" with code {c}"));
    let mut inv = Invalid::new(format!("bonnie++ refused to run{code}: {said}"));
    if said.contains("double RAM") {
        inv = inv.hint(
            "give `ram` (MiB) at most half of `size`, or `size` at least twice the machine's RAM",
        );
    } else if said.contains("Can't set") {
        inv = inv.hint("set `user` to the user iolab runs as (`-u root` needs root)");
    }
    Err(inv)
}

/// A latency field: `12345us`, `12ms`, `3s`; empty: not given (bonnie++ leaves it out for a
/// phase that did not run).
fn latency_ns(field: &str, phase: &str) -> Result<Option<f64>, Invalid> {
    if field.is_empty() {
        return Ok(None);
    }
    let digits = field.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let scale = match &field[digits.len()..] {
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "ns" => 1.0,
        u => {
            return Err(Invalid::new(format!(
                "bonnie++'s `{phase}` latency {field:?} has the unit {u:?}; known: us, ms, s"
            )))
        }
    };
    let what = format!("bonnie++'s `{phase}` latency");
    let x = parse_number(digits, &what, false)?;
    Ok(Some(x * scale))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::raw;

    fn run(keys: serde_json::Value) -> Box<dyn ToolRun> {
        let opts = Opts {
            keys: keys.as_object().cloned().unwrap_or_default(),
            ..Opts::default()
        };
        Bonnie.configure(&opts).unwrap()
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs().max(1.0))
    }

    #[test]
    fn a_run_on_disk_gives_its_rates_in_mib_and_leaves_plus_cells_unset() {
        // 1.98,2.00a,vm,1,1795918424,1G,,8192,5,1984,99,297473,88,1933845,68,2922,99,
        // +++++,+++,+++++,+++,16,,,,,15146,99,+++++,+++,… latencies 4542us,2181us,348us,
        // 3326us,57us,4081us,816us,270us,2238us,4425us,59us,1982us
        let r = run(serde_json::json!({"size": 1024, "ram": 512, "files": 16}));
        let p = r.parse(&raw("bonnie/disk", 0)).unwrap();
        assert!(close(p.get("bonnie_putc_mib_per_s"), 1984.0 / 1024.0));
        assert!(close(
            p.get("bonnie_put_block_mib_per_s"),
            297473.0 / 1024.0
        ));
        assert!(close(p.get("bonnie_rewrite_mib_per_s"), 1933845.0 / 1024.0));
        assert!(close(p.get("bonnie_getc_mib_per_s"), 2922.0 / 1024.0));
        assert_eq!(p.get("bonnie_put_block_cpu_pct"), Some(88.0));
        assert_eq!(p.get("bonnie_seq_create_per_s"), Some(15146.0));
        assert_eq!(p.get("bonnie_seq_create_cpu_pct"), Some(99.0));
        // +++++: not set, never 0.
        for m in [
            "bonnie_get_block_mib_per_s",
            "bonnie_get_block_cpu_pct",
            "bonnie_seeks_per_s",
        ] {
            assert_eq!(p.get(m), None, "{m}");
        }
        assert_eq!(p.get("bonnie_putc_lat_max_ns"), Some(4_542_000.0));
        assert_eq!(p.get("bonnie_get_block_lat_max_ns"), Some(57_000.0));
        assert_eq!(p.get("bonnie_ran_del_lat_max_ns"), Some(1_982_000.0));
        assert_eq!(p.get("lat_max_ns"), Some(4_542_000.0));
        let note = &p.notes[0];
        assert!(note.contains("get_block, seeks, seq_stat"), "{note}");
        assert_eq!(p.claimed.flush_timed, Some(true));
        assert_eq!(p.claimed.direct, Some(false));
    }

    #[test]
    fn a_small_run_on_tmpfs_has_its_per_char_rates_only() {
        // 1.98,2.00a,vm,1,1795929530,256M,,8192,5,1920,91,+++++,+++,+++++,+++,3040,99,…
        let r = run(serde_json::json!({"size": 256, "ram": 128, "files": 1}));
        let p = r.parse(&raw("bonnie/tmpfs-small", 0)).unwrap();
        assert!(close(p.get("bonnie_putc_mib_per_s"), 1920.0 / 1024.0));
        assert_eq!(p.get("bonnie_putc_cpu_pct"), Some(91.0));
        assert!(close(p.get("bonnie_getc_mib_per_s"), 3040.0 / 1024.0));
        assert_eq!(p.get("bonnie_seq_create_per_s"), None);
        assert_eq!(p.get("bonnie_ran_stat_lat_max_ns"), Some(2_000.0));
        assert_eq!(p.get("lat_max_ns"), Some(11_826_000.0));
        let rates = p
            .values
            .iter()
            .filter(|(n, _)| n.ends_with("_per_s"))
            .count();
        assert_eq!(rates, 2);
    }

    #[test]
    fn all_plus_cells_are_not_a_result() {
        let r = run(serde_json::json!({"size": 64, "ram": 0, "files": 0, "fast": true}));
        let e = r.parse(&raw("bonnie/all-plus", 0)).unwrap_err();
        assert!(e.reason.contains("too fast to measure"), "{e}");
        assert!(
            e.reason.contains("put_block, rewrite, get_block, seeks"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_figure_the_run_asked_for_is_invalid() {
        // The all-plus capture ran with -f and -n 0: its per-char and file fields are empty.
        let r = run(serde_json::json!({"size": 64, "ram": 0, "files": 0}));
        let e = r.parse(&raw("bonnie/all-plus", 0)).unwrap_err();
        assert!(e.reason.contains("no `putc` rate (field 10)"), "{e}");
        let r = run(serde_json::json!({"size": 64, "ram": 0, "fast": true}));
        let e = r.parse(&raw("bonnie/all-plus", 0)).unwrap_err();
        assert!(e.reason.contains("no `seq_create` rate"), "{e}");
    }

    #[test]
    fn the_ram_refusal_names_bonnies_reason_not_its_usage() {
        let r = run(serde_json::json!({"size": 64}));
        let e = r.parse(&raw("bonnie/refused", 1)).unwrap_err();
        assert_eq!(
            e.reason,
            "bonnie++ refused to run with code 1: File size should be double RAM for good results, RAM is 24104M."
        );
        assert!(e.hint.unwrap().contains("`ram`"));
        let e = r.parse(&raw("bonnie/nodir", 1)).unwrap_err();
        assert!(e.reason.contains("Can't change to directory"), "{e}");
    }

    #[test]
    fn the_csv_is_checked_against_the_run() {
        let r = run(serde_json::json!({"size": 512, "ram": 128}));
        let e = r.parse(&raw("bonnie/tmpfs-small", 0)).unwrap_err();
        assert!(e.reason.contains("file size was 256M"), "{e}");
        let mut bad = raw("bonnie/tmpfs-small", 0);
        bad.stdout = String::from_utf8(bad.stdout)
            .unwrap()
            .replace("1.98,", "1.97,")
            .into_bytes();
        let e = run(serde_json::json!({})).parse(&bad).unwrap_err();
        assert!(e.reason.contains("format \"1.97\""), "{e}");
        let mut bad = raw("bonnie/tmpfs-small", 0);
        bad.stdout = String::from_utf8(bad.stdout)
            .unwrap()
            .replace("11826us", "11826xs")
            .into_bytes();
        let e = run(serde_json::json!({})).parse(&bad).unwrap_err();
        assert!(e.reason.contains("unit \"xs\""), "{e}");
        let mut bad = raw("bonnie/tmpfs-small", 0);
        bad.stdout = String::from_utf8(bad.stdout)
            .unwrap()
            .replace(",1920,", ",19x0,")
            .into_bytes();
        let e = run(serde_json::json!({})).parse(&bad).unwrap_err();
        assert!(
            e.reason.contains("`putc` rate") && e.reason.contains("19x0"),
            "{e}"
        );
        let e = run(serde_json::json!({}))
            .parse(&raw("bonnie/refused", 0))
            .unwrap_err();
        assert!(e.reason.contains("no CSV line"), "{e}");
    }

    #[test]
    fn the_command_carries_the_keys() {
        let opts = Opts {
            keys: serde_json::json!({"size": 256, "ram": 128, "files": 1, "fast": true})
                .as_object()
                .cloned()
                .unwrap(),
            args: vec!["-z".into(), "{seed}".into()],
            ..Opts::default()
        };
        let at = Placeholders {
            dir: "/mnt/t".into(),
            seed: 9,
            ..Placeholders::default()
        };
        let inv = Bonnie.configure(&opts).unwrap().invocation(&at);
        assert_eq!(
            inv.main.argv.join(" "),
            "bonnie++ -d /mnt/t -q -s 256 -r 128 -n 1 -u root -f -z 9"
        );
        assert_eq!(inv.leftovers, ["/mnt/t/Bonnie.*"]);
    }

    #[test]
    fn options_bonnie_would_refuse_are_refused_first() {
        let bad = |keys: serde_json::Value, args: &[&str]| {
            let opts = Opts {
                keys: keys.as_object().cloned().unwrap(),
                args: args.iter().map(|a| a.to_string()).collect(),
                ..Opts::default()
            };
            Bonnie.configure(&opts).unwrap_err()
        };
        let e = bad(serde_json::json!({"size": 100, "ram": 64}), &[]);
        assert_eq!(e.key, "size");
        assert!(e.hint.unwrap().contains("128"));
        assert_eq!(bad(serde_json::json!({"size": "1g"}), &[]).key, "size");
        assert_eq!(bad(serde_json::json!({"fast": 1}), &[]).key, "fast");
        let e = bad(serde_json::json!({}), &["-s", "64"]);
        assert_eq!(e.key, "args");
        assert!(e.hint.unwrap().contains("`size`"));
        assert_eq!(bad(serde_json::json!({}), &["{nope}"]).key, "args");
        let opts = Opts {
            time_s: Some(5.0),
            ..Opts::default()
        };
        assert_eq!(Bonnie.configure(&opts).unwrap_err().key, "time");
    }

    #[test]
    fn the_version_is_read_from_the_usage_message() {
        let printed = String::from_utf8(crate::testdata::read("bonnie/refused.stderr")).unwrap();
        assert_eq!(Bonnie.version(&printed).as_deref(), Some("2.00a"));
    }
}
