//! `iolab iozone --format iozone` parses like iozone's own `-R` report: the same block
//! titles in the same order, the same header of quoted record sizes, the same row labels and
//! the same number of values per row as real iozone 3.508 output captured in
//! tests/data/iozone/ (single stream, auto mode, throughput mode with one thread, two, or a
//! range of counts), with and without iozone's
//! CPU utilization blocks (`-+u`, iolab's `--cpu-utilization`).

mod common;

use std::path::Path;

use common::{run, stderr, stdout};

/// A parsed `-R` block.
#[derive(Debug, PartialEq)]
struct Block {
    title: String,
    header: Vec<String>,
    /// Row label (file size in kB) and how many values follow it.
    rows: Vec<(String, usize)>,
}

/// The blocks after `Excel output is below:`, parsed with the regexes scripts use:
/// `^"(.*) report"$` (or `^"(.*) CPU utilization report (Zero values should be ignored)"$`),
/// a header of `"N"` fields, rows `^"N"` followed by integers (kB/s) or, in the CPU blocks,
/// numbers with two decimals (percent).
fn excel_blocks(text: &str) -> Vec<Block> {
    let start = text
        .find("Excel output is below:")
        .expect("an Excel section");
    let mut blocks: Vec<Block> = Vec::new();
    for line in text[start..].lines().skip(1) {
        let t = line.trim_end();
        if t.is_empty() {
            continue;
        }
        if t.starts_with('"')
            && (t.ends_with(" report\"")
                || t.ends_with(" report (Zero values should be ignored)\""))
        {
            blocks.push(Block {
                title: t.trim_matches('"').to_string(),
                header: Vec::new(),
                rows: Vec::new(),
            });
            continue;
        }
        let b = blocks.last_mut().expect("a title before the data");
        if line.starts_with(' ') {
            b.header = t
                .split_whitespace()
                .map(|f| {
                    assert!(f.starts_with('"') && f.ends_with('"'), "{line:?}");
                    f.trim_matches('"').to_string()
                })
                .collect();
        } else {
            let mut fields = t.split_whitespace();
            let label = fields.next().unwrap();
            assert!(label.starts_with('"') && label.ends_with('"'), "{line:?}");
            let values: Vec<&str> = fields.collect();
            if b.title.contains("CPU utilization") {
                assert!(
                    values.iter().all(|v| v.parse::<f64>().is_ok()
                        && v.split_once('.').is_some_and(|(_, d)| d.len() == 2)),
                    "CPU% has two decimals: {line:?}"
                );
            } else {
                assert!(
                    values.iter().all(|v| v.parse::<u64>().is_ok()),
                    "kB/s are integers: {line:?}"
                );
            }
            b.rows
                .push((label.trim_matches('"').to_string(), values.len()));
        }
    }
    blocks
}

/// A throughput-mode block (`"Throughput report …"` or, with `-+u`, `"CPU utilization
/// report …"`): its three header lines (normalised) and its rows' labels with the number of
/// values.
fn throughput_block(text: &str, title: &str) -> (Vec<String>, Vec<(String, usize)>) {
    let start = text
        .find(&format!("\"{title} report Y-axis"))
        .unwrap_or_else(|| panic!("a {title} report"));
    let mut head = Vec::new();
    let mut rows = Vec::new();
    for line in text[start..].lines() {
        let t = line.trim_end();
        if t.is_empty() {
            continue;
        }
        if head.len() < 3 {
            head.push(t.replace("number of processes", "number of threads"));
            continue;
        }
        let Some(rest) = t.strip_prefix('"') else {
            break;
        };
        if rest.contains(" report Y-axis") {
            break; // the next block
        }
        let (label, values) = rest.split_once("\" ").expect("a quoted label");
        assert_eq!(label.len(), 16, "%15s and a space: {line:?}");
        let values: Vec<&str> = values.split_whitespace().collect();
        assert!(values.iter().all(|v| v.parse::<f64>().is_ok()), "{line:?}");
        rows.push((label.trim().to_string(), values.len()));
    }
    (head, rows)
}

/// The Excel section's lines (from `Excel output is below:`, or from the throughput report
/// on) with every unquoted number, and the spaces before it, as ` N`: what a script's
/// regexes see of the layout — quotes, labels, blank lines, trailing spaces. ("processes"
/// reads "threads", as iozone -T prints it.)
fn skeleton(text: &str) -> Vec<String> {
    let start = text
        .find("Excel output is below:")
        .or_else(|| text.find("\"Throughput report"))
        .expect("an Excel section");
    let mut lines: Vec<String> = text[start..]
        .lines()
        .take_while(|l| !l.starts_with("iozone test complete"))
        // iolab runs threads: iozone -T's word.
        .map(|line| line.replace("number of processes", "number of threads"))
        .map(|line| {
            let mut out = String::new();
            let mut quoted = false;
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '"' {
                    quoted = !quoted;
                }
                if !quoted && (c == ' ' || c.is_ascii_digit()) {
                    // A run of spaces then a number, or a number: ` N`.
                    let mut run = String::from(c);
                    while let Some(&d) = chars.peek() {
                        if d == ' ' && run.trim().is_empty() || d.is_ascii_digit() || d == '.' {
                            run.push(d);
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    if run.trim().is_empty() {
                        out.push_str(&run);
                    } else {
                        out.push_str(" N");
                    }
                    continue;
                }
                out.push(c);
            }
            out
        })
        .collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}

fn captured(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/iozone")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn iolab_iozone(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut a = vec![
        "iozone",
        "--dir",
        dir.path().to_str().unwrap(),
        "--no-db",
        "--no-monitor",
        "--format",
        "iozone",
        "--latency",
        "false",
    ];
    a.extend_from_slice(args);
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// `iolab iozone --format iozone` over 1 MiB files in 4 KiB records: `tests` and `extra`.
fn small(tests: &str, extra: &[&str]) -> String {
    let mut a = vec!["--tests", tests, "--size", "1m", "--record", "4k"];
    a.extend_from_slice(extra);
    iolab_iozone(&a)
}

/// The blocks of a captured real output and of `iolab iozone ARGS` (split on spaces):
/// (want, got).
fn both(capture: &str, args: &str) -> (Vec<Block>, Vec<Block>) {
    let args: Vec<&str> = args.split_whitespace().collect();
    (
        excel_blocks(&captured(capture)),
        excel_blocks(&iolab_iozone(&args)),
    )
}

#[test]
fn single_stream_blocks_match_iozone() {
    // iozone -R -i 0 -i 1 -s 1m -r 4k
    let want = excel_blocks(&captured("iozone-3.508-single.txt"));
    let got = excel_blocks(&small("write,read", &[]));
    assert_eq!(want.len(), 4);
    assert_eq!(got, want);
}

#[test]
fn auto_mode_blocks_match_iozone() {
    // iozone -a -R -i 0 -i 1 -g 1m
    let (want, got) = both(
        "iozone-3.508-auto.txt",
        "--auto --auto-max-size 1m --tests write,read",
    );
    assert_eq!(want[0].header.len(), 13, "4 kB … 16 MB");
    assert_eq!(want[0].rows.len(), 5, "64 kB … 1 MB");
    assert_eq!(got, want);
}

#[test]
fn auto_mode_bounds_match_iozone() {
    // iozone -a -n 256k -g 1m -y 8k -q 64k -R -i 0
    let (want, got) = both(
        "iozone-3.508-auto-bounds.txt",
        "--auto --auto-min-size 256k --auto-max-size 1m --auto-min-record 8k \
         --auto-max-record 64k --tests write",
    );
    assert_eq!(want[0].header, ["8", "16", "32", "64"]);
    assert_eq!(want[0].rows.len(), 3, "256 kB … 1 MB");
    assert_eq!(got, want);
}

#[test]
fn record_bounds_keep_the_small_records_of_large_files_as_iozone_does() {
    // iozone -a -n 32m -g 32m -y 4k -q 8k -R -i 0: with -y or -q, a 32 MiB file still takes
    // 4 KiB records (without them, files above 16 MiB start at 64 KiB).
    let (want, got) = both(
        "iozone-3.508-auto-records.txt",
        "--auto --auto-min-size 32m --auto-max-size 32m --auto-min-record 4k \
         --auto-max-record 8k --tests write",
    );
    assert_eq!(want[0].rows, [("32768".to_string(), 2)]);
    assert_eq!(got, want);
}

#[test]
fn throughput_block_matches_iozone() {
    // iozone -R -t 2 -i 0 -i 1 -s 1m -r 4k
    let (want_head, want_rows) = throughput_block(&captured("iozone-3.508-tp.txt"), "Throughput");
    let (got_head, got_rows) =
        throughput_block(&small("write,read", &["--threads", "2"]), "Throughput");
    assert_eq!(got_head, want_head);
    assert_eq!(
        want_rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["Initial write", "Rewrite", "Read", "Re-read"]
    );
    assert_eq!(got_rows, want_rows);
}

#[test]
fn a_range_of_thread_counts_is_one_block_with_a_column_per_count_as_iozone_prints_it() {
    // iozone -R -l 1 -u 3 -i 0 -i 1 -s 1m -r 4k
    let (want_head, want_rows) =
        throughput_block(&captured("iozone-3.508-tp-range.txt"), "Throughput");
    let text = small("write,read", &["--threads", "1", "--threads-max", "3"]);
    let (got_head, got_rows) = throughput_block(&text, "Throughput");
    assert_eq!(got_head, want_head);
    assert_eq!(
        want_rows,
        ["Initial write", "Rewrite", "Read", "Re-read"].map(|l| (l.to_string(), 3))
    );
    assert_eq!(got_rows, want_rows);
    assert_eq!(text.matches("report Y-axis").count(), 1, "{text}");
}

#[test]
fn one_thread_in_throughput_mode_prints_iozones_throughput_blocks() {
    // iozone -+u -R -t 1 -i 0 -s 1m -r 4k (the same as -l 1 -u 1)
    let text = captured("iozone-3.508-tp-one.txt");
    let got_text = small("write", &["--throughput", "--cpu-utilization"]);
    assert!(!got_text.contains("Excel output is below"), "{got_text}");
    for title in ["Throughput", "CPU utilization"] {
        let (want_head, want_rows) = throughput_block(&text, title);
        let (got_head, got_rows) = throughput_block(&got_text, title);
        assert_eq!(want_rows.len(), 2, "{title}");
        assert_eq!((got_head, got_rows), (want_head, want_rows), "{title}");
    }
}

#[test]
fn single_stream_cpu_blocks_match_iozone() {
    // iozone -+u -R -i 0 -i 1 -i 2 -s 1m -r 4k
    let want = excel_blocks(&captured("iozone-3.508-cpu.txt"));
    let got = excel_blocks(&small("write,read,random", &["--cpu-utilization"]));
    assert_eq!(want.len(), 12, "6 throughput blocks, then 6 CPU blocks");
    assert_eq!(
        want[6].title,
        "Writer CPU utilization report (Zero values should be ignored)"
    );
    assert_eq!(got, want);
}

#[test]
fn auto_mode_cpu_blocks_match_iozone() {
    // iozone -a -+u -R -i 0 -g 1m
    let (want, got) = both(
        "iozone-3.508-auto-cpu.txt",
        "--auto --auto-max-size 1m --tests write --cpu-utilization",
    );
    assert_eq!(want.len(), 4);
    assert_eq!(want[2].header.len(), 13, "4 kB … 16 MB");
    assert_eq!(want[2].rows.len(), 5, "64 kB … 1 MB");
    assert_eq!(got, want);
}

#[test]
fn throughput_cpu_block_matches_iozone() {
    // iozone -+u -R -t 2 -i 0 -i 1 -s 1m -r 4k
    let text = captured("iozone-3.508-tp-cpu.txt");
    let got_text = small("write,read", &["--threads", "2", "--cpu-utilization"]);
    for title in ["Throughput", "CPU utilization"] {
        let (want_head, want_rows) = throughput_block(&text, title);
        let (got_head, got_rows) = throughput_block(&got_text, title);
        assert_eq!(got_head, want_head, "{title}");
        assert_eq!(want_rows.len(), 4, "{title}");
        assert_eq!(got_rows, want_rows, "{title}");
    }
    // iozone prints the CPU block after the throughput block.
    assert!(got_text.find("\"Throughput report") < got_text.find("\"CPU utilization report"));
}

#[test]
fn without_the_flag_there_are_no_cpu_blocks() {
    let got = iolab_iozone(&["--tests", "write", "--size", "64k", "--record", "4k"]);
    assert!(!got.contains("CPU utilization"), "{got}");
    let got = iolab_iozone(&["--threads", "2", "--tests", "write", "--size", "64k"]);
    assert!(!got.contains("CPU utilization"), "{got}");
}

#[test]
fn ops_blocks_match_iozone() {
    // iozone -O -R -i 0 -i 1 -s 1m -r 4k
    let want = excel_blocks(&captured("iozone-3.508-ops.txt"));
    let got = excel_blocks(&small("write,read", &["--ops"]));
    assert_eq!(want.len(), 4);
    assert_eq!(got, want);
    // iozone -O -R -t 2 -i 0 -s 1m -r 4k
    let (want_head, want_rows) =
        throughput_block(&captured("iozone-3.508-tp-ops.txt"), "Throughput");
    assert_eq!(want_head[2], "\"Output is in ops/sec\"");
    let (got_head, got_rows) =
        throughput_block(&small("write", &["--threads", "2", "--ops"]), "Throughput");
    assert_eq!(got_head, want_head);
    assert_eq!(got_rows, want_rows);
}

#[test]
fn skipped_retests_print_as_zero_as_iozone_does() {
    // iozone -+n -R -i 0 -i 1 -i 2 -s 1m -r 4k
    let want = excel_blocks(&captured("iozone-3.508-noretest.txt"));
    let text = small("write,read,random", &["--retests", "false"]);
    let got = excel_blocks(&text);
    assert_eq!(want.len(), 6);
    assert_eq!(got, want);
    for title in ["Re-writer report", "Re-Reader report"] {
        let block = &text[text.find(&format!("\"{title}\"")).unwrap()..];
        assert_eq!(block.lines().nth(2), Some("\"1024\"   0 "), "{title}");
    }
    // iozone -+n -R -t 2 -i 0 -i 1 -s 1m -r 4k
    let (want_head, want_rows) =
        throughput_block(&captured("iozone-3.508-tp-noretest.txt"), "Throughput");
    let text = small("write,read", &["--threads", "2", "--retests", "false"]);
    let (got_head, got_rows) = throughput_block(&text, "Throughput");
    assert_eq!((got_head, got_rows), (want_head, want_rows));
    assert!(text.contains("\"        Rewrite \"       0.00 "), "{text}");
}

#[test]
fn the_layout_matches_iozones_line_for_line() {
    for (capture, tests, extra) in [
        ("iozone-3.508-single.txt", "write,read", &[][..]),
        (
            "iozone-3.508-cpu.txt",
            "write,read,random",
            &["--cpu-utilization"][..],
        ),
        ("iozone-3.508-ops.txt", "write,read", &["--ops"][..]),
        ("iozone-3.508-us.txt", "write,read", &["--us-per-op"][..]),
        (
            "iozone-3.508-noretest.txt",
            "write,read,random",
            &["--retests", "false"][..],
        ),
        (
            "iozone-3.508-tp-cpu.txt",
            "write,read",
            &["--threads", "2", "--cpu-utilization"][..],
        ),
        (
            "iozone-3.508-tp-range.txt",
            "write,read",
            &["--threads", "1", "--threads-max", "3"][..],
        ),
        (
            "iozone-3.508-tp-one.txt",
            "write",
            &["--throughput", "--cpu-utilization"][..],
        ),
    ] {
        let want = skeleton(&captured(capture));
        let got = skeleton(&small(tests, extra));
        assert!(want.len() > 4, "{capture}: {want:?}");
        assert_eq!(got, want, "{capture}");
    }
}

/// A cell of a BIFF2 worksheet: row, column and a label's text or a number.
#[derive(Debug, Clone, PartialEq)]
enum XlsCell {
    Label(u16, u16, String),
    Number(u16, u16, f64),
}

/// The cells of a BIFF2 stream as iozone -b writes it (BOF, LABEL and NUMBER records, EOF),
/// checking the record framing on the way.
fn xls_cells(bytes: &[u8]) -> Vec<XlsCell> {
    let mut cells = Vec::new();
    let mut i = 0;
    let mut kinds = Vec::new();
    while i < bytes.len() {
        assert!(i + 4 <= bytes.len(), "a record header at {i}");
        let kind = u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        let len = usize::from(u16::from_le_bytes([bytes[i + 2], bytes[i + 3]]));
        let body = &bytes[i + 4..i + 4 + len];
        let rc = || {
            (
                u16::from_le_bytes([body[0], body[1]]),
                u16::from_le_bytes([body[2], body[3]]),
            )
        };
        match kind {
            0x0009 => assert_eq!(body, [2, 0, 0x10, 0], "BOF: Excel 2 worksheet"),
            0x0004 => {
                let (r, c) = rc();
                let n = usize::from(body[7]);
                let text = std::str::from_utf8(&body[8..8 + n]).unwrap().to_string();
                cells.push(XlsCell::Label(r, c, text));
            }
            0x0003 => {
                let (r, c) = rc();
                assert_eq!(len, 15, "NUMBER: 7 bytes of cell, an IEEE double");
                let v = f64::from_le_bytes(body[7..15].try_into().unwrap());
                cells.push(XlsCell::Number(r, c, v));
            }
            0x000a => assert_eq!(len, 0),
            other => panic!("record type {other:#x}"),
        }
        kinds.push(kind);
        i += 4 + len;
    }
    assert_eq!(kinds.first(), Some(&0x0009), "starts with BOF");
    assert_eq!(kinds.last(), Some(&0x000a), "ends with EOF");
    cells
}

/// The cells with what a run measures blanked: the command line (row 0), and the numbers
/// that are not a record size (a grid's header row) or a file size (column 0). iozone's
/// "processes" reads "threads", as iolab runs threads (iozone -T's word).
fn xls_shape(cells: &[XlsCell]) -> Vec<XlsCell> {
    let headers: Vec<u16> = cells
        .iter()
        .filter_map(|c| match c {
            XlsCell::Label(r, 0, t) if t.ends_with("Report") || t.ends_with("ignored)") => {
                Some(r + 1)
            }
            _ => None,
        })
        .collect();
    cells
        .iter()
        .map(|c| match c {
            XlsCell::Label(0, 0, _) => XlsCell::Label(0, 0, "COMMAND".into()),
            XlsCell::Label(r, c, t) => XlsCell::Label(
                *r,
                *c,
                t.replace("number of processes", "number of threads"),
            ),
            XlsCell::Number(r, c, v) if *c == 0 || headers.contains(r) => {
                XlsCell::Number(*r, *c, *v)
            }
            XlsCell::Number(r, c, v) => {
                assert!(v.is_finite() && *v >= 0.0, "({r}, {c}): {v}");
                XlsCell::Number(*r, *c, -1.0)
            }
        })
        .collect()
}

#[test]
fn the_excel_workbook_has_iozones_cells_where_iozone_puts_them() {
    for (capture, args) in [
        // iozone -R -b F -i 0 -i 1 -s 1m -r 4k
        (
            "iozone-3.508-single.xls",
            "--tests write,read --size 1m --record 4k",
        ),
        // iozone -+u -R -b F -i 0 -i 1 -i 2 -s 1m -r 4k
        (
            "iozone-3.508-cpu.xls",
            "--tests write,read,random --size 1m --record 4k --cpu-utilization",
        ),
        // iozone -a -g 1m -R -b F -i 0 -i 1
        (
            "iozone-3.508-auto.xls",
            "--auto --auto-max-size 1m --tests write,read",
        ),
        // iozone -+u -R -b F -l 1 -u 3 -i 0 -i 1 -s 1m -r 4k
        (
            "iozone-3.508-tp-range.xls",
            "--tests write,read --size 1m --record 4k --threads 1 --threads-max 3 \
             --cpu-utilization",
        ),
    ] {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/iozone")
            .join(capture);
        let want = xls_shape(&xls_cells(&std::fs::read(&p).unwrap()));
        let out = tempfile::tempdir().unwrap();
        let book = out.path().join("out.xls");
        let mut a: Vec<&str> = args.split_whitespace().collect();
        a.extend(["--excel", book.to_str().unwrap()]);
        // --format iozone too: the text and the workbook come from one run.
        let text = iolab_iozone(&a);
        let got = xls_cells(&std::fs::read(&book).unwrap());
        assert!(
            matches!(&got[0], XlsCell::Label(0, 0, t) if t.contains("iozone")),
            "{capture}: the command line first: {:?}",
            got[0]
        );
        assert!(want.len() > 8, "{capture}: {want:?}");
        assert_eq!(xls_shape(&got), want, "{capture}");
        // The workbook holds the figures the text shows (rates truncated alike).
        if capture == "iozone-3.508-single.xls" {
            let writer = text
                .lines()
                .skip_while(|l| *l != "\"Writer report\"")
                .nth(2);
            let kbs: f64 = writer
                .unwrap()
                .split_whitespace()
                .nth(1)
                .unwrap()
                .parse()
                .unwrap();
            assert!(got.contains(&XlsCell::Number(5, 1, kbs)), "{text}\n{got:?}");
        }
    }
}

#[test]
fn a_bad_excel_destination_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (path, needle) in [
        (
            "/nonexistent-iolab/out.xls",
            "directory /nonexistent-iolab does not exist",
        ),
        (d, "is a directory"),
    ] {
        let o = run(&[
            "iozone",
            "--dir",
            d,
            "--excel",
            path,
            "--no-db",
            "--no-monitor",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
    // A worksheet has 256 columns; a throughput row's values start in the third.
    let book = dir.path().join("x.xls");
    let o = run(&[
        "iozone",
        "--dir",
        d,
        "--threads-max",
        "300",
        "--excel",
        book.to_str().unwrap(),
        "--no-db",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("300 thread counts need 300 columns"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn a_range_of_thread_counts_is_reported_against_the_thread_count() {
    let _hang = iolab_testkit::timeout(300);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let html = dir.path().join("r.html");
    // `iolab iozone --threads 1 --threads-max MAX` stored in its own database: its output,
    // then its HTML report.
    let range = |max: &str| {
        let db = dir.path().join(format!("r{max}.db"));
        let (data, db_s) = (data.to_str().unwrap(), db.to_str().unwrap());
        let o = run(&[
            "iozone",
            "--dir",
            data,
            "--tests",
            "write",
            "--size",
            "256k",
            "--threads",
            "1",
            "--threads-max",
            max,
            "--latency",
            "false",
            "--no-monitor",
            "--db",
            db_s,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let r = run(&["report", "--db", db_s, "-o", html.to_str().unwrap()]);
        assert!(r.status.success(), "{}", stderr(&r));
        (stdout(&o), std::fs::read_to_string(&html).unwrap())
    };
    let (text, report) = range("3");
    // The table ends with iolab's figure per test and thread count.
    let table = &text[text
        .find("MiB/s (iolab's figure) by threads")
        .expect("a table by threads")..];
    let head: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(head, ["test", "1", "2", "3"]);
    let write: Vec<&str> = table.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(write.len(), 4, "{table}");
    assert!(write[1..]
        .iter()
        .all(|v| v.parse::<f64>().is_ok_and(|x| x > 0.0)));
    // Each metric against the thread count, 1 … 3; no grids of one cell per count.
    let sweep = &report[report
        .find("<section id=\"sweep\">")
        .expect("a sweep section")..];
    assert!(sweep.contains("threads"), "the factor is named");
    assert!(!report.contains("id=\"iozone\""), "no one-cell heatmaps");

    // Two counts draw no sweep (it takes three levels): the grids stay.
    let (_, report) = range("2");
    assert!(!report.contains("<section id=\"sweep\">"));
    assert!(
        report.contains("id=\"iozone\""),
        "the grids, one per thread count"
    );
    assert!(report.contains("write, 2 threads"), "named by their count");
}
