//! `iolab bonnie --format bonnie` prints bonnie++ 2.00's CSV line: the same 50 fields at the
//! same positions as real bonnie++ output captured in tests/data/bonnie++-2.00a.csv (each case
//! there with the bonnie++ command that printed it), empty where bonnie++ leaves a field
//! empty, a number where it prints a number — or `+++++`, which iolab replaces with the
//! number it measured. The human and JSON formats are checked for what they promise too.

mod common;

use common::{run, stderr, stdout};

const REAL: &str = include_str!("data/bonnie++-2.00a.csv");

/// A captured case: the bonnie++ arguments (from its `# bonnie++ …` comment) and its line.
struct Case {
    command: String,
    line: String,
}

fn cases() -> (Vec<String>, Vec<Case>) {
    let mut header = Vec::new();
    let mut cases = Vec::new();
    let mut command = None;
    for l in REAL.lines() {
        if let Some(c) = l.strip_prefix("# bonnie++ ") {
            command = Some(c.to_string());
        } else if l.starts_with("format_version,") {
            header = l.split(',').map(str::to_string).collect();
        } else if l.starts_with("1.98,") {
            cases.push(Case {
                command: command.take().expect("a command before each line"),
                line: l.to_string(),
            });
        }
    }
    (header, cases)
}

/// iolab's flags for a bonnie++ command line of the captured cases.
fn flags(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = command.split_whitespace().peekable();
    let mut per_char = true;
    while let Some(w) = words.next() {
        match w {
            "-s" => {
                let v = words.next().unwrap();
                let mut parts = v.split(':');
                let size = parts.next().unwrap();
                if size == "0" {
                    out.extend(["--phases".into(), "files".into()]);
                } else {
                    out.extend(["--size".into(), format!("{size}m")]);
                }
                if let Some(c) = parts.next() {
                    out.extend(["--chunk-size".into(), c.to_string()]);
                }
                if let Some(s) = parts.next() {
                    out.extend(["--seeks".into(), s.to_string()]);
                }
                if let Some(p) = parts.next() {
                    out.extend(["--seekers".into(), p.to_string()]);
                }
            }
            "-n" => {
                let v = words.next().unwrap();
                let mut parts = v.split(':');
                let n = parts.next().unwrap();
                if n == "0" {
                    out.extend(["--phases".into(), "io".into()]);
                } else {
                    out.extend(["--files".into(), n.to_string()]);
                }
                for flag in ["--max-file-size", "--min-file-size", "--dirs"] {
                    if let Some(x) = parts.next() {
                        out.extend([flag.into(), x.to_string()]);
                    }
                }
            }
            "-f" => per_char = false,
            "-z" => out.extend(["--seed".into(), words.next().unwrap().to_string()]),
            "-d" | "-r" | "-u" | "-m" | "-x" => {
                words.next();
            }
            _ => {}
        }
    }
    if !per_char {
        out.extend(["--char-size".into(), "0".into()]);
    }
    out
}

/// `iolab bonnie --format bonnie` in `dir` for a captured case, named as the captures are
/// (`-m testhost`).
fn csv_args(dir: &std::path::Path, case: &Case) -> Vec<String> {
    let mut args: Vec<String> = [
        "bonnie",
        "--dir",
        dir.to_str().unwrap(),
        "--format",
        "bonnie",
        "--machine",
        "testhost",
        "--no-db",
        "--no-monitor",
    ]
    .map(String::from)
    .into();
    args.extend(flags(&case.command));
    args
}

fn is_number(f: &str) -> bool {
    !f.is_empty() && f.parse::<f64>().is_ok()
}

fn is_latency(f: &str) -> bool {
    let digits = f.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &f[digits.len()..];
    !digits.is_empty() && digits.parse::<u64>().is_ok() && ["us", "ms", "s"].contains(&unit)
}

#[test]
fn the_csv_line_has_bonnies_fields_at_bonnies_positions() {
    let (mut header, cases) = cases();
    // bonnie++'s header line (-x) names 48 columns: it leaves out the seek count and the
    // seekers, which its lines print after the chunk size's (empty) column.
    assert_eq!(header.len(), 48, "bonnie++'s header: {header:?}");
    assert_eq!(header[6], "io_chunk_size");
    header.insert(7, "num_seeks".into());
    header.insert(8, "seek_procs".into());
    assert!(cases.len() >= 4, "captured cases");
    for case in cases {
        let real: Vec<&str> = case.line.split(',').collect();
        assert_eq!(real.len(), 50, "bonnie++ {}: {}", case.command, case.line);
        let dir = tempfile::tempdir().unwrap();
        let args = csv_args(dir.path(), &case);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let text = stdout(&o);
        assert_eq!(text.lines().count(), 1, "one line: {text}");
        let ours: Vec<&str> = text.trim_end().split(',').collect();
        assert_eq!(ours.len(), 50, "{args:?}: {text}");
        for (i, label) in header.iter().enumerate() {
            let (r, o) = (real[i], ours[i]);
            let ctx = format!(
                "field {} `{label}` for bonnie++ {}: bonnie++ `{r}`, iolab `{o}`\n{}\n{}",
                i + 1,
                case.command,
                case.line,
                text.trim_end()
            );
            match label.as_str() {
                "format_version" | "bonnie_version" | "file_size" | "num_seeks" | "seek_procs"
                | "num_files" | "max_size" | "min_size" | "num_dirs" | "file_chunk_size"
                | "io_chunk_size" | "concurrency" | "name" => assert_eq!(o, r, "{ctx}"),
                "seed" => assert!(is_number(o), "{ctx}"),
                l if l.ends_with("_latency") => {
                    assert_eq!(r.is_empty(), o.is_empty(), "{ctx}");
                    if !r.is_empty() {
                        assert!(is_latency(r) && is_latency(o), "{ctx}");
                    }
                }
                _ => {
                    // A rate or a %CPU: empty where bonnie++'s is, else a number (bonnie++'s
                    // +++++ and +++ included: iolab measures those phases).
                    assert_eq!(r.is_empty(), o.is_empty(), "{ctx}");
                    if !r.is_empty() {
                        assert!(is_number(r) || r.starts_with("+++"), "{ctx}");
                        assert!(is_number(o), "{ctx}");
                    }
                }
            }
        }
        assert!(common::entries(dir.path()).is_empty());
    }
}

#[test]
fn the_human_table_shows_file_rates_and_the_json_every_phase() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let base = [
        "bonnie",
        "--dir",
        d,
        "--size",
        "1m",
        "--char-size",
        "64k",
        "--files",
        "1",
        "--seeks",
        "100",
        "--no-db",
        "--no-monitor",
    ];
    let o = run(&base);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let tables = text.split("\n  phase ").next().unwrap();
    assert!(
        !tables.split_whitespace().any(|w| w.starts_with("+++")),
        "no +++++ cell: {text}"
    );
    // The file table's result row: six rates (and CPUs), not the file count six times.
    let row = text
        .lines()
        .skip_while(|l| !l.contains("-Create-- --Read---"))
        .nth(2)
        .expect("the file table's row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells.len(), 13, "files + 6 × (rate, %CP): {row}");
    assert_eq!(cells[0], "1");
    assert!(
        cells[1..]
            .iter()
            .step_by(2)
            .all(|c| c.parse::<u64>().is_ok_and(|n| n > 1)),
        "{row}"
    );
    assert!(
        text.contains("shorter than 0.5 s, where bonnie++ prints +++++"),
        "{text}"
    );

    let mut json = base.to_vec();
    json.push("--json");
    let o = run(&json);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "iolab.bonnie/1");
    let phases = v["result"]["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 12);
    for p in phases {
        assert!(p["rate"].as_f64().unwrap() > 0.0, "{p}");
        assert!(p["short"].is_boolean(), "{p}");
        assert!(p["rel_error"].as_f64().unwrap() < 0.01, "{p}");
    }
    assert!(common::entries(dir.path()).is_empty());
}

/// What `tool` (bon_csv2txt or bon_csv2html, from bonnie++ 2.00a) prints for `line`.
fn bonnie_tool(tool: &str, line: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(tool)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{tool} on {line}: {}", stderr(&o));
    stdout(&o)
}

/// bon_csv2txt's text with every word that holds a digit or a `+` (a figure, `+++++`,
/// `64M::8192:5`) as `N`: the table's shape, labels and all.
fn txt_shape(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| {
            l.split_whitespace()
                .map(|w| {
                    if w.contains(|c: char| c.is_ascii_digit() || c == '+') {
                        "N".to_string()
                    } else {
                        w.to_string()
                    }
                })
                .collect()
        })
        .collect()
}

/// bon_csv2html's page without its text and cell colours: the tags, in order.
fn html_shape(html: &str) -> Vec<String> {
    html.split('<')
        .skip(1)
        .map(|t| {
            let tag = t.split('>').next().unwrap();
            match tag.find(" bgcolor=") {
                Some(i) => {
                    let rest = &tag[i + 10..];
                    let end = rest.find('"').map_or(rest.len(), |e| e + 1);
                    format!("{}{}", &tag[..i], &rest[end..])
                }
                None => tag.to_string(),
            }
        })
        .collect()
}

#[test]
#[ignore = "needs bon_csv2txt and bon_csv2html from bonnie++ (scripts/test.sh installs it as root)"]
fn bonnies_own_report_tools_read_iolabs_line_as_they_read_bonnies() {
    iolab_testkit::require_tool("bon_csv2txt");
    iolab_testkit::require_tool("bon_csv2html");
    let (_, cases) = cases();
    for case in cases {
        let dir = tempfile::tempdir().unwrap();
        let args = csv_args(dir.path(), &case);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let ours = stdout(&o);
        let ours = ours.trim_end();

        let (real_txt, our_txt) = (
            bonnie_tool("bon_csv2txt", &case.line),
            bonnie_tool("bon_csv2txt", ours),
        );
        assert_eq!(
            txt_shape(&our_txt),
            txt_shape(&real_txt),
            "bon_csv2txt for bonnie++ {}:\n{real_txt}\niolab:\n{our_txt}",
            case.command
        );
        // Where bonnie++ printed `+++++` (which bon_csv2txt shows as `0k +++`), iolab's
        // measured figure is there instead.
        assert!(!our_txt.contains("+++"), "{our_txt}");

        let (real_html, our_html) = (
            bonnie_tool("bon_csv2html", &case.line),
            bonnie_tool("bon_csv2html", ours),
        );
        assert!(real_html.contains("<table"), "{real_html}");
        assert_eq!(
            html_shape(&our_html),
            html_shape(&real_html),
            "bon_csv2html for bonnie++ {}",
            case.command
        );
    }
}
