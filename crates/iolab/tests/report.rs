//! `iolab report`: a real (rootless) experiment into a temporary database, then its HTML,
//! Markdown and JSON reports; the HTML is also rendered by a headless Chromium with the
//! network blocked, when one is installed (CI installs it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn iolab(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iolab"));
    c.env("IOLAB_DB", dir.join("results.db"))
        .env("IOLAB_STATE_DIR", dir.join("state"));
    c
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Two configurations of a small buffered random-write test on a directory target: no root.
fn experiment(dir: &Path) {
    let target = dir.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let file = dir.join("exp.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "report test <&>"
seed = 5
[factors]
sync = ["normal", "fdatasync"]
[sut]
target = {{ kind = "directory", path = "{}" }}
[workload]
micro = {{ access = "randwrite", sync = "${{sync}}", bs = "4k", size = "8m" }}
[repetitions]
min = 3
max = 3
[procedure]
drop_caches = false
"#,
            target.display()
        ),
    )
    .unwrap();
    ok(&iolab(dir).arg("run").arg(&file).output().unwrap());
}

fn external_resources(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut found = Vec::new();
    for attr in ["src=", "href=", "url("] {
        for (i, _) in lower.match_indices(attr) {
            let rest = lower[i + attr.len()..].trim_start_matches(['"', '\'', ' ']);
            if rest.starts_with("http:") || rest.starts_with("https:") || rest.starts_with("//") {
                found.push(html[i..(i + 60).min(html.len())].to_string());
            }
        }
    }
    found
}

#[test]
fn report_of_a_real_experiment_in_every_format() {
    let tmp = tempfile::Builder::new()
        .prefix("iolab-report-test")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    experiment(dir);

    let html_path = dir.join("report.html");
    ok(&iolab(dir)
        .args(["report", "-o"])
        .arg(&html_path)
        .output()
        .unwrap());
    let html = std::fs::read_to_string(&html_path).unwrap();
    for id in [
        "experiment",
        "findings",
        "summary",
        "charts",
        "timeseries",
        "latency",
        "flowops",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no #{id}");
    }
    assert!(html.find("id=\"findings\"") < html.find("id=\"summary\""));
    assert!(html.matches("<svg").count() >= 4);
    assert!(html.contains("report test &lt;&amp;&gt;"));
    assert!(!html.contains("<script"), "no scripts needed");
    assert_eq!(external_resources(&html), Vec::<String>::new());
    assert!(html.contains("sync=normal") && html.contains("sync=fdatasync"));
    // No temporary file left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());

    let md = dir.join("report.md");
    ok(&iolab(dir)
        .args(["report", "1", "-o"])
        .arg(&md)
        .output()
        .unwrap());
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("## Summary") && md.contains("| sync=normal |"));

    let json = dir.join("out.txt");
    ok(&iolab(dir)
        .args(["report", "--format", "json", "-o"])
        .arg(&json)
        .output()
        .unwrap());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(v["format"], "iolab.report/1");
    assert_eq!(v["configs"].as_array().unwrap().len(), 2);

    // An unknown extension without --format is a usage error (exit 2), and writes nothing.
    let o = iolab(dir)
        .args(["report", "-o"])
        .arg(dir.join("r.pdf"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!dir.join("r.pdf").exists());

    chromium_renders(dir, &html_path);
}

fn chromium() -> Option<PathBuf> {
    let p = PathBuf::from("/usr/bin/chromium");
    if p.exists() {
        return Some(p);
    }
    // SAFETY: geteuid has no failure mode.
    if unsafe { libc::geteuid() } == 0 {
        let _ = Command::new("apt-get")
            .args(["install", "-y", "-q", "chromium"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output();
        if p.exists() {
            return Some(p);
        }
    }
    None
}

/// Renders the report in headless Chromium with every host unresolvable and a dead proxy:
/// the page must still render (it needs nothing from the network) without console errors.
fn chromium_renders(dir: &Path, html: &Path) {
    let Some(chromium) = chromium() else {
        if std::env::var_os("CI").is_some() {
            panic!("CI must have chromium installed (scripts/test.sh)");
        }
        eprintln!("skipping the browser check: chromium is not installed and we are not root");
        return;
    };
    let url = format!("file://{}", html.display());
    let browser = |extra: &[&str]| {
        Command::new(&chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--proxy-server=127.0.0.1:9",
                "--enable-logging=stderr",
                "--v=0",
            ])
            .args(extra)
            .arg(&url)
            .env("HOME", dir)
            .output()
            .expect("chromium runs")
    };
    let shot = dir.join("shot.png");
    let o = browser(&[
        &format!("--screenshot={}", shot.display()),
        "--window-size=1280,2400",
    ]);
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "chromium failed:\n{log}");
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    assert!(
        !log.contains("Uncaught") && !log.contains("ERROR:CONSOLE"),
        "{log}"
    );

    let o = browser(&["--dump-dom"]);
    let dom = String::from_utf8_lossy(&o.stdout);
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(
        !log.contains("Uncaught") && !log.contains("ERROR:CONSOLE"),
        "{log}"
    );
    for id in [
        "experiment",
        "findings",
        "summary",
        "charts",
        "timeseries",
        "latency",
        "flowops",
    ] {
        assert!(dom.contains(&format!("id=\"{id}\"")), "DOM has no #{id}");
    }
    assert!(dom.matches("<svg").count() >= 4);
}
