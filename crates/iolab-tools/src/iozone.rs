//! iozone (`tool = "iozone"`): `iozone -R -i … -s … -r … -f {dir}/iozone.tmp` and its `-R`
//! report blocks: per test pass a `"Writer report"` line, a row of quoted record sizes, then a
//! row per file size (`"16384"   1656777`) in kB/s (1024 bytes). The fixed-width table above
//! them is never read: its columns merge when the numbers grow.

use std::borrow::Cow;

use iolab_metrics::{Better, MetricDef};

use crate::adapter::{
    expand_args, parse_number, Adapter, Claimed, Command, Invalid, Invocation, Key, OptError, Opts,
    Parsed, Placeholders, Raw, ToolRun,
};
use crate::template;

pub struct Iozone;

/// One pass of a test: the name of its `-R` block, its metric, and whether it writes.
struct Pass {
    report: &'static str,
    metric: &'static str,
    writes: bool,
    /// A second pass over the same file (`-+n` turns these off).
    retest: bool,
}

const fn pass(report: &'static str, metric: &'static str, writes: bool, retest: bool) -> Pass {
    Pass {
        report,
        metric,
        writes,
        retest,
    }
}

/// Each `-i` test iolab can read and the `-R` blocks it prints. Test 8 (random mix) has no
/// `-R` block; 11 and 12 (pwritev, preadv) are not built into iozone's Linux targets.
const TESTS: &[(u8, &[Pass])] = &[
    (
        0,
        &[
            pass("Writer", "iozone_write_mib_per_s", true, false),
            pass("Re-writer", "iozone_rewrite_mib_per_s", true, true),
        ],
    ),
    (
        1,
        &[
            pass("Reader", "iozone_read_mib_per_s", false, false),
            pass("Re-Reader", "iozone_reread_mib_per_s", false, true),
        ],
    ),
    (
        2,
        &[
            pass("Random read", "iozone_random_read_mib_per_s", false, false),
            pass("Random write", "iozone_random_write_mib_per_s", true, false),
        ],
    ),
    (
        3,
        &[pass(
            "Backward read",
            "iozone_backward_read_mib_per_s",
            false,
            false,
        )],
    ),
    (
        4,
        &[pass(
            "Record rewrite",
            "iozone_record_rewrite_mib_per_s",
            true,
            false,
        )],
    ),
    (
        5,
        &[pass(
            "Stride read",
            "iozone_stride_read_mib_per_s",
            false,
            false,
        )],
    ),
    (
        6,
        &[
            pass("Fwrite", "iozone_fwrite_mib_per_s", true, false),
            pass("Re-Fwrite", "iozone_refwrite_mib_per_s", true, true),
        ],
    ),
    (
        7,
        &[
            pass("Fread", "iozone_fread_mib_per_s", false, false),
            pass("Re-Fread", "iozone_refread_mib_per_s", false, true),
        ],
    ),
    (
        9,
        &[
            pass("Pwrite", "iozone_pwrite_mib_per_s", true, false),
            pass("Re-Pwrite", "iozone_repwrite_mib_per_s", true, true),
        ],
    ),
    (
        10,
        &[
            pass("Pread", "iozone_pread_mib_per_s", false, false),
            pass("Re-Pread", "iozone_repread_mib_per_s", false, true),
        ],
    ),
];

macro_rules! pass_metrics {
    ($(($name:literal, $title:literal, $what:literal)),* $(,)?) => {
        &[$(MetricDef::new(
            $name,
            "MiB/s",
            Some(Better::Higher),
            concat!("iozone ", $title),
            concat!("iozone's kB/s for the ", $what, " pass (its `-R` report) in MiB/s: the file's bytes over the pass's timed window, which includes the final fsync only with `flush = true`"),
        )),*]
    };
}

static METRICS: &[MetricDef] = pass_metrics![
    ("iozone_write_mib_per_s", "write", "initial write (-i 0)"),
    ("iozone_rewrite_mib_per_s", "rewrite", "rewrite (-i 0)"),
    ("iozone_read_mib_per_s", "read", "read (-i 1)"),
    ("iozone_reread_mib_per_s", "re-read", "re-read (-i 1)"),
    (
        "iozone_random_read_mib_per_s",
        "random read",
        "random read (-i 2)"
    ),
    (
        "iozone_random_write_mib_per_s",
        "random write",
        "random write (-i 2)"
    ),
    (
        "iozone_backward_read_mib_per_s",
        "backward read",
        "backward read (-i 3)"
    ),
    (
        "iozone_record_rewrite_mib_per_s",
        "record rewrite",
        "record rewrite (-i 4)"
    ),
    (
        "iozone_stride_read_mib_per_s",
        "stride read",
        "stride read (-i 5)"
    ),
    ("iozone_fwrite_mib_per_s", "fwrite", "fwrite (-i 6)"),
    ("iozone_refwrite_mib_per_s", "re-fwrite", "re-fwrite (-i 6)"),
    ("iozone_fread_mib_per_s", "fread", "fread (-i 7)"),
    ("iozone_refread_mib_per_s", "re-fread", "re-fread (-i 7)"),
    ("iozone_pwrite_mib_per_s", "pwrite", "pwrite (-i 9)"),
    ("iozone_repwrite_mib_per_s", "re-pwrite", "re-pwrite (-i 9)"),
    ("iozone_pread_mib_per_s", "pread", "pread (-i 10)"),
    ("iozone_repread_mib_per_s", "re-pread", "re-pread (-i 10)"),
];

static KEYS: &[Key] = &[
    Key {
        name: "tests",
        doc: "`-i`: the tests to run, an array of numbers (default [0, 1]: write/rewrite, read/re-read); 0 must come first, it creates the file",
    },
    Key {
        name: "size",
        doc: "`-s`: the file size, \"16m\", \"1g\", \"512k\" or a number of KiB (iozone's default is 512 KiB)",
    },
    Key {
        name: "record",
        doc: "`-r`: the record size, \"64k\", \"1m\" or a number of KiB (iozone's default is 4 KiB)",
    },
    Key {
        name: "flush",
        doc: "`-e`: include fsync (and fflush) in the timing; without it writes are timed into the page cache (default false)",
    },
    Key {
        name: "direct",
        doc: "`-I`: O_DIRECT (default false)",
    },
    Key {
        name: "file",
        doc: "`-f`: the test file, a template (default \"{dir}/iozone.tmp\")",
    },
];

impl Adapter for Iozone {
    fn name(&self) -> &'static str {
        "iozone"
    }

    fn program(&self) -> &'static str {
        "iozone"
    }

    fn install(&self) -> &'static str {
        "build it from a mirror of iozone3's source (src/current: make linux-AMD64); Debian ships it in non-free"
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["-v"]
    }

    /// `Version $Revision: 3.465 $` → `3.465`.
    fn version(&self, printed: &str) -> Option<String> {
        let l = printed.lines().find(|l| l.contains("$Revision:"))?;
        let v = l.split("$Revision:").nth(1)?.trim().trim_end_matches('$');
        Some(v.trim().to_string()).filter(|v| !v.is_empty())
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
        let tests = tests(opts)?;
        let size = size_key(opts, "size")?;
        let record = size_key(opts, "record")?;
        let flush = opts.flag("flush")?.unwrap_or(false);
        let direct = opts.flag("direct")?.unwrap_or(false);
        let file = opts.str("file")?.unwrap_or("{dir}/iozone.tmp").to_string();
        template::check(&file, opts.time_s.is_some(), false)
            .map_err(|e| OptError::new("file", e.message).hint(e.hint))?;
        opts.checked_args(false)?;
        opts.refuse_args(&[
            ("-i", "choose the tests with `tests`"),
            ("-s", "set the file size with `size`"),
            ("-r", "set the record size with `record`"),
            ("-e", "include the fsync with `flush = true`"),
            ("-I", "ask for O_DIRECT with `direct = true`"),
            ("-f", "name the test file with `file`"),
            ("-R", "iolab passes -R: its report is what iolab reads"),
            (
                "-a",
                "one file size and one record size per run: make them factors of the experiment",
            ),
            (
                "-A",
                "one file size and one record size per run: make them factors of the experiment",
            ),
            (
                "-z",
                "one file size and one record size per run: make them factors of the experiment",
            ),
            ("-n", "one file size per run: set it with `size`"),
            ("-g", "one file size per run: set it with `size`"),
            ("-y", "one record size per run: set it with `record`"),
            ("-q", "one record size per run: set it with `record`"),
            ("-t", "throughput mode prints no -R blocks iolab can read"),
            (
                "-O",
                "iolab reads iozone's kB/s: drop -O (operations per second)",
            ),
            (
                "-N",
                "iolab reads iozone's kB/s: drop -N (microseconds per operation)",
            ),
        ])?;
        opts.refuse_unused_time("iozone")?;
        Ok(Box::new(IozoneRun {
            tests,
            size_kib: size.as_ref().map(|s| s.1),
            record_kib: record.as_ref().map(|r| r.1),
            size: size.map(|s| s.0),
            record: record.map(|r| r.0),
            flush,
            direct,
            file,
            args: opts.args.clone(),
        }))
    }
}

/// `tests`: distinct test numbers iolab can read, 0 first when present.
fn tests(opts: &Opts) -> Result<Vec<u8>, OptError> {
    let Some(v) = opts.keys.get("tests") else {
        return Ok(vec![0, 1]);
    };
    let known = || {
        TESTS
            .iter()
            .map(|(n, _)| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let list = v.as_array().ok_or_else(|| {
        OptError::new(
            "tests",
            format!(
                "expected an array of test numbers, found {}",
                crate::adapter::kind_of(v)
            ),
        )
        .hint("tests = [0, 1]")
    })?;
    let mut out: Vec<u8> = Vec::new();
    for t in list {
        let n = t
            .as_u64()
            .and_then(|n| u8::try_from(n).ok())
            .filter(|n| TESTS.iter().any(|(k, _)| k == n))
            .ok_or_else(|| {
                let why = match t.as_u64() {
                    Some(8) => "test 8 (random mix) prints no -R report block",
                    Some(11 | 12) => {
                        "tests 11 and 12 (pwritev, preadv) are not built into iozone on Linux"
                    }
                    _ => "not a test iolab can read",
                };
                OptError::new("tests", format!("{t}: {why}"))
                    .hint(format!("iolab reads tests {}", known()))
            })?;
        if out.contains(&n) {
            return Err(OptError::new("tests", format!("test {n} is listed twice")));
        }
        out.push(n);
    }
    if out.is_empty() {
        return Err(OptError::new("tests", "no test to run").hint("tests = [0, 1]"));
    }
    if out.iter().any(|n| *n != 0) && out[0] != 0 {
        return Err(OptError::new(
            "tests",
            "test 0 (write) must come first: it creates the file the other tests use",
        )
        .hint("tests = [0, …]"));
    }
    Ok(out)
}

/// An iozone size key (`"16m"`, `"1g"`, `"512k"`, or a number of KiB): the text iozone is
/// given and its value in KiB.
fn size_key(opts: &Opts, name: &str) -> Result<Option<(String, u64)>, OptError> {
    let text = match opts.keys.get(name) {
        None => return Ok(None),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) if n.as_u64().is_some() => n.to_string(),
        Some(v) => {
            return Err(OptError::new(
                name,
                format!("expected a size, found {}", crate::adapter::kind_of(v)),
            )
            .hint("\"16m\", or a number of KiB"))
        }
    };
    let bad = || {
        OptError::new(name, format!("{text:?} is not a size"))
            .hint("a number of KiB, or a number with k, m or g: \"64k\", \"16m\", \"1g\"")
    };
    let (num, mult) = match text.chars().last() {
        Some('k' | 'K') => (&text[..text.len() - 1], 1),
        Some('m' | 'M') => (&text[..text.len() - 1], 1 << 10),
        Some('g' | 'G') => (&text[..text.len() - 1], 1 << 20),
        _ => (text.as_str(), 1),
    };
    let kib = num
        .parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(bad)?;
    Ok(Some((text, kib)))
}

#[derive(Debug)]
struct IozoneRun {
    tests: Vec<u8>,
    size: Option<String>,
    record: Option<String>,
    size_kib: Option<u64>,
    record_kib: Option<u64>,
    flush: bool,
    direct: bool,
    file: String,
    args: Vec<String>,
}

impl ToolRun for IozoneRun {
    /// iozone counts no operations: the first test's first figure.
    fn stop_metric(&self) -> Option<&str> {
        let first = self.tests.first()?;
        TESTS
            .iter()
            .find(|(n, _)| n == first)
            .and_then(|(_, passes)| passes.first())
            .map(|p| p.metric)
    }

    fn invocation(&self, at: &Placeholders) -> Invocation {
        let mut argv = vec![Iozone.program().to_string(), "-R".into()];
        for t in &self.tests {
            argv.extend(["-i".to_string(), t.to_string()]);
        }
        for (flag, v) in [("-s", &self.size), ("-r", &self.record)] {
            if let Some(v) = v {
                argv.extend([flag.to_string(), v.clone()]);
            }
        }
        if self.flush {
            argv.push("-e".into());
        }
        if self.direct {
            argv.push("-I".into());
        }
        let file = expand_args(std::slice::from_ref(&self.file), at).remove(0);
        argv.extend(["-f".to_string(), file.clone()]);
        argv.extend(expand_args(&self.args, at));
        Invocation {
            main: Command::new(argv),
            // iozone removes its file when it finishes, not when it is killed.
            leftovers: vec![file],
            ..Invocation::default()
        }
    }

    fn metrics(&self) -> Cow<'static, [MetricDef]> {
        Cow::Borrowed(METRICS)
    }

    fn parse(&self, raw: &Raw) -> Result<Parsed, Invalid> {
        raw.check_exit("iozone").map_err(|e| {
            // iozone says why on stdout (`Can not open temp file: …`) and only perror's
            // half on stderr.
            match raw
                .stdout_text()
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
            {
                Some(l) if !e.reason.contains(l.trim()) => Invalid {
                    reason: format!("{}; iozone printed: {}", e.reason, l.trim()),
                    ..e
                },
                _ => e,
            }
        })?;
        let out = raw.stdout_text();
        check_unit(&out)?;
        let blocks = blocks(&out)?;
        let no_retests = out.contains("No retest option selected");
        let mut p = Parsed::default();
        let (mut read, mut written, mut seconds) = (0.0, 0.0, 0.0);
        for t in &self.tests {
            let passes = TESTS
                .iter()
                .find(|(n, _)| n == t)
                .map_or(&[][..], |(_, p)| *p);
            for ps in passes {
                if ps.retest && no_retests {
                    continue;
                }
                let Some(b) = blocks.iter().find(|b| b.name == ps.report) else {
                    return Err(Invalid::new(format!(
                        "iozone's output has no \"{} report\" block, though test {t} ran",
                        ps.report
                    )));
                };
                let (kib, rate) = self.cell(b)?;
                let bytes = kib as f64 * 1024.0;
                let bytes_per_s = rate * 1024.0;
                p.set(ps.metric, bytes_per_s / (1024.0 * 1024.0));
                seconds += bytes / bytes_per_s;
                if ps.writes {
                    written += bytes;
                } else {
                    read += bytes;
                }
            }
        }
        if no_retests {
            p.notes
                .push("iozone ran without its second passes (-+n): no re-test figures".into());
        }
        p.claimed = Claimed {
            read_bytes: Some(read),
            write_bytes: Some(written),
            seconds: Some(seconds),
            bytes_per_s: Some((read + written) / seconds),
            flush_timed: Some(self.flush),
            direct: Some(self.direct),
        };
        Ok(p)
    }
}

impl IozoneRun {
    /// The one cell of a block: its file size (KiB) and rate (kB/s), checked against the
    /// sizes this run asked for.
    fn cell(&self, b: &Block) -> Result<(u64, f64), Invalid> {
        let name = &b.name;
        let [record] = b.records.as_slice() else {
            return Err(Invalid::new(format!(
                "iozone's \"{name} report\" has {} record sizes ({}); iolab reads one file size and one record size per run",
                b.records.len(),
                b.records.join(", ")
            )));
        };
        let [(kib, values)] = b.rows.as_slice() else {
            return Err(Invalid::new(format!(
                "iozone's \"{name} report\" has {} file sizes; iolab reads one per run",
                b.rows.len()
            )));
        };
        let [value] = values.as_slice() else {
            return Err(Invalid::new(format!(
                "iozone's \"{name} report\" row \"{kib}\" has {} values for 1 record size",
                values.len()
            )));
        };
        let record_kib: u64 = record.parse().map_err(|_| {
            Invalid::new(format!(
                "iozone's \"{name} report\" record size {record:?} is not a number"
            ))
        })?;
        if let Some(want) = self.record_kib.filter(|w| *w != record_kib) {
            return Err(Invalid::new(format!(
                "iozone's \"{name} report\" is headed by a record size of {record_kib} KiB, but this run asked for {want} KiB"
            )));
        }
        let kib: u64 = kib.parse().map_err(|_| {
            Invalid::new(format!(
                "iozone's \"{name} report\" file size {kib:?} is not a number"
            ))
        })?;
        if let Some(want) = self.size_kib.filter(|w| *w != kib) {
            return Err(Invalid::new(format!(
                "iozone's \"{name} report\" is for a {kib} KiB file, but this run asked for {want} KiB"
            )));
        }
        let what = format!("iozone's \"{name} report\" value");
        let rate = parse_number(value, &what, true)?;
        Ok((kib, rate))
    }
}

/// iozone states its unit once, in the header; `-O` and `-N` change it.
fn check_unit(out: &str) -> Result<(), Invalid> {
    let Some(line) = out.lines().find(|l| l.contains("Output is in ")) else {
        return Err(Invalid::new(
            "iozone's output does not say its unit (no \"Output is in …\" line)",
        ));
    };
    let unit = line.split("Output is in ").nth(1).unwrap_or("").trim();
    if unit != "kBytes/sec" {
        return Err(Invalid::new(format!(
            "iozone's output is in {unit:?}; iolab reads kBytes/sec"
        ))
        .hint("drop -O or -N from args"));
    }
    Ok(())
}

/// One `-R` block: `"Writer report"`, its record sizes, and per file size the values.
#[derive(Debug)]
struct Block {
    name: String,
    records: Vec<String>,
    rows: Vec<(String, Vec<String>)>,
}

fn unquote(s: &str) -> Option<&str> {
    s.strip_prefix('"')?.strip_suffix('"')
}

/// The report blocks after `Excel output is below:`.
fn blocks(out: &str) -> Result<Vec<Block>, Invalid> {
    let Some((_, tail)) = out.split_once("Excel output is below:") else {
        return Err(Invalid::new(
            "iozone printed no -R report (no \"Excel output is below:\" line)",
        ));
    };
    let mut blocks: Vec<Block> = Vec::new();
    let mut lines = tail.lines().map(str::trim).peekable();
    while let Some(l) = lines.next() {
        let Some(name) = unquote(l).and_then(|n| n.strip_suffix(" report")) else {
            continue;
        };
        let Some(head) = lines.next() else {
            return Err(Invalid::new(format!(
                "iozone's \"{name} report\" ends before its record sizes"
            )));
        };
        let records: Option<Vec<String>> = head
            .split_whitespace()
            .map(|r| unquote(r).map(str::to_string))
            .collect();
        let Some(records) = records else {
            return Err(Invalid::new(format!(
                "iozone's \"{name} report\" record sizes are not quoted numbers: {head:?}"
            )));
        };
        let mut rows = Vec::new();
        while let Some(row) = lines.peek().copied().filter(|r| r.starts_with('"')) {
            let mut cells = row.split_whitespace();
            let kib = cells.next().and_then(unquote);
            match kib {
                Some(k) if !row.ends_with(" report\"") => {
                    rows.push((k.to_string(), cells.map(str::to_string).collect()));
                    lines.next();
                }
                _ => break,
            }
        }
        blocks.push(Block {
            name: name.to_string(),
            records,
            rows,
        });
    }
    Ok(blocks)
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
        Iozone.configure(&opts).unwrap()
    }

    fn sized() -> Box<dyn ToolRun> {
        run(serde_json::json!({"tests": [0, 1], "size": "16m", "record": "64k"}))
    }

    const MIB: f64 = 1024.0 * 1024.0;

    #[test]
    fn write_and_read_give_each_pass_in_mib_per_s() {
        // "Writer report" 1656777, "Re-writer report" 8762103, "Reader report" 16786208,
        // "Re-Reader report" 17580683 kB/s for a 16384 KiB file, 64 KiB records.
        let p = sized().parse(&raw("iozone/write-read", 0)).unwrap();
        assert_eq!(p.get("iozone_write_mib_per_s"), Some(1656777.0 / 1024.0));
        assert_eq!(p.get("iozone_rewrite_mib_per_s"), Some(8762103.0 / 1024.0));
        assert_eq!(p.get("iozone_read_mib_per_s"), Some(16786208.0 / 1024.0));
        assert_eq!(p.get("iozone_reread_mib_per_s"), Some(17580683.0 / 1024.0));
        assert_eq!(p.values.len(), 4);
        let c = p.claimed;
        assert_eq!(c.write_bytes, Some(2.0 * 16.0 * MIB));
        assert_eq!(c.read_bytes, Some(2.0 * 16.0 * MIB));
        let secs =
            16384.0 * (1.0 / 1656777.0 + 1.0 / 8762103.0 + 1.0 / 16786208.0 + 1.0 / 17580683.0);
        assert!((c.seconds.unwrap() - secs).abs() < 1e-12, "{c:?}");
        assert!((c.bytes_per_s.unwrap() - 64.0 * MIB / secs).abs() < 1e-3);
        assert_eq!(c.flush_timed, Some(false));
        assert_eq!(c.direct, Some(false));
    }

    #[test]
    fn flush_is_claimed_as_timed() {
        let r = run(serde_json::json!({"size": "16m", "record": "64k", "flush": true}));
        let p = r.parse(&raw("iozone/flush", 0)).unwrap();
        assert_eq!(p.get("iozone_write_mib_per_s"), Some(3065807.0 / 1024.0));
        assert_eq!(p.get("iozone_reread_mib_per_s"), Some(12429352.0 / 1024.0));
        assert_eq!(p.claimed.flush_timed, Some(true));
    }

    #[test]
    fn a_block_whose_header_does_not_match_its_row_is_invalid() {
        // `-y9x` made iozone head its blocks with records "9" "18" "36" over one value
        // measured with 64 KiB records.
        let r = run(serde_json::json!({"tests": [0], "size": "16m"}));
        let e = r.parse(&raw("iozone/rows-short", 0)).unwrap_err();
        assert!(e.reason.contains("3 record sizes (9, 18, 36)"), "{e}");
    }

    #[test]
    fn the_blocks_are_checked_against_the_run() {
        let r = run(serde_json::json!({"size": "16m", "record": "128k"}));
        let e = r.parse(&raw("iozone/write-read", 0)).unwrap_err();
        assert!(
            e.reason
                .contains("record size of 64 KiB, but this run asked for 128 KiB"),
            "{e}"
        );
        let r = run(serde_json::json!({"size": "32m"}));
        let e = r.parse(&raw("iozone/write-read", 0)).unwrap_err();
        assert!(
            e.reason
                .contains("16384 KiB file, but this run asked for 32768"),
            "{e}"
        );
        let r = run(serde_json::json!({"tests": [0, 1, 2]}));
        let e = r.parse(&raw("iozone/write-read", 0)).unwrap_err();
        assert!(e.reason.contains("no \"Random read report\" block"), "{e}");
        let mut bad = raw("iozone/write-read", 0);
        bad.stdout = String::from_utf8(bad.stdout)
            .unwrap()
            .replace("\"16384\"   8762103", "\"16384\"   0")
            .into_bytes();
        let e = sized().parse(&bad).unwrap_err();
        assert!(e.reason.contains("\"Re-writer report\" value is 0"), "{e}");
    }

    #[test]
    fn without_retests_the_second_passes_are_not_set() {
        let r = run(serde_json::json!({"size": "1m", "record": "64k"}));
        let p = r.parse(&raw("iozone/noretest", 0)).unwrap();
        assert_eq!(p.get("iozone_write_mib_per_s"), Some(2813041.0 / 1024.0));
        assert_eq!(p.get("iozone_read_mib_per_s"), Some(11903823.0 / 1024.0));
        assert_eq!(p.get("iozone_rewrite_mib_per_s"), None);
        assert_eq!(p.claimed.write_bytes, Some(MIB));
        assert!(p.notes[0].contains("-+n"));
    }

    #[test]
    fn another_unit_is_refused() {
        let r = run(serde_json::json!({"tests": [0], "size": "1m", "record": "64k"}));
        let e = r.parse(&raw("iozone/ops-mode", 0)).unwrap_err();
        assert!(e.reason.contains("\"operations per second.\""), "{e}");
    }

    #[test]
    fn failures_name_iozones_reason() {
        let e = sized().parse(&raw("iozone/missingdir", 44)).unwrap_err();
        assert!(e.reason.starts_with("iozone exited with code 44"), "{e}");
        assert!(e.reason.contains("No such file or directory"), "{e}");
        assert!(e.reason.contains("Can not open temp file"), "{e}");
        let e = sized().parse(&raw("iozone/badopt", 255)).unwrap_err();
        assert!(e.reason.contains("invalid option"), "{e}");
        // The missing-directory run exited early: at 0 it would still have no report.
        let e = sized().parse(&raw("iozone/missingdir", 0)).unwrap_err();
        assert!(e.reason.contains("no -R report"), "{e}");
    }

    #[test]
    fn the_command_carries_the_keys() {
        let opts = Opts {
            keys: serde_json::json!({"tests": [0, 2], "size": 2048, "record": "4k", "flush": true, "direct": true})
                .as_object()
                .cloned()
                .unwrap(),
            args: vec!["-w".into()],
            ..Opts::default()
        };
        let at = Placeholders {
            dir: "/mnt/t".into(),
            ..Placeholders::default()
        };
        let inv = Iozone.configure(&opts).unwrap().invocation(&at);
        assert_eq!(
            inv.main.argv.join(" "),
            "iozone -R -i 0 -i 2 -s 2048 -r 4k -e -I -f /mnt/t/iozone.tmp -w"
        );
        assert_eq!(inv.leftovers, ["/mnt/t/iozone.tmp"]);
    }

    #[test]
    fn options_iolab_cannot_read_are_refused() {
        let bad = |keys: serde_json::Value, args: &[&str]| {
            let opts = Opts {
                keys: keys.as_object().cloned().unwrap(),
                args: args.iter().map(|a| a.to_string()).collect(),
                ..Opts::default()
            };
            Iozone.configure(&opts).unwrap_err()
        };
        let e = bad(serde_json::json!({"tests": [0, 8]}), &[]);
        assert!(e.message.contains("random mix"), "{e:?}");
        assert!(bad(serde_json::json!({"tests": [1, 0]}), &[])
            .message
            .contains("first"));
        assert!(bad(serde_json::json!({"tests": [0, 0]}), &[])
            .message
            .contains("twice"));
        assert_eq!(bad(serde_json::json!({"tests": 0}), &[]).key, "tests");
        assert_eq!(bad(serde_json::json!({"size": "16q"}), &[]).key, "size");
        assert_eq!(bad(serde_json::json!({"record": "0k"}), &[]).key, "record");
        assert_eq!(bad(serde_json::json!({"file": "{tmp}/x"}), &[]).key, "file");
        assert!(bad(serde_json::json!({}), &["-a"])
            .hint
            .unwrap()
            .contains("factors"));
        assert!(bad(serde_json::json!({}), &["-O"])
            .hint
            .unwrap()
            .contains("kB/s"));
    }

    #[test]
    fn the_version_is_its_revision() {
        assert_eq!(
            Iozone.version("\t'Iozone' Filesystem Benchmark Program\n\n        Version $Revision: 3.465 $\n").as_deref(),
            Some("3.465")
        );
    }
}
