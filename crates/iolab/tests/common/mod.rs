//! Shared helpers for the integration tests: run the built binary, and create (and always
//! remove) the real filesystems the tests need — tmpfs mounts and ext4 on loop devices.
#![allow(dead_code, unused_imports)] // each test binary uses some of these

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub use iolab_testkit::{is_root, require_root};

/// Seconds after which a command of a test counts as hung (it then ends with status 124).
pub const HUNG: u64 = 900;

/// The `iolab` binary built for these tests, failing with status 124 after [`HUNG`] seconds
/// instead of hanging the suite. Results go to a database of this test process's own (not
/// ./iolab.db in the source tree) unless a test passes its own `--db`.
pub fn iolab() -> Command {
    let mut c = iolab_testkit::bounded(env!("CARGO_BIN_EXE_iolab"), HUNG);
    c.env("IOLAB_DB", default_db());
    c
}

/// A database in a temporary directory of this process, removed when the process exits. Not
/// one shared file in /tmp: test runs of other checkouts (another schema version, another
/// user) must not meet in it.
fn default_db() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    extern "C" fn remove_dir() {
        if let Some(dir) = DIR.get() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("iolab-tests-")
            .tempdir()
            .expect("a temporary directory")
            .keep();
        // SAFETY: registers a plain function with no arguments, called once at exit.
        unsafe { libc::atexit(remove_dir) };
        dir
    })
    .join("iolab.db")
}

pub fn run(args: &[&str]) -> Output {
    iolab().args(args).output().expect("iolab runs")
}

/// A command that failed cleanly: exit `code`, `needle` in its message, no panic, and no
/// results on stdout.
pub fn assert_clean_failure(o: &Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "exit code; stderr: {err}");
    assert!(err.contains(needle), "expected `{needle}` in: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(o.stdout.is_empty(), "no results on failure");
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The contents of `<section id="{id}">` in a report's HTML.
pub fn html_section<'a>(html: &'a str, id: &str) -> &'a str {
    let s = &html[html
        .find(&format!("<section id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"))..];
    &s[..s.find("</section>").unwrap()]
}

/// Metric `name` of an exported run (`iolab export`'s `configs[].runs[]`).
pub fn run_metric(run: &Value, name: &str) -> Option<f64> {
    run["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)?["value"]
        .as_f64()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn sh(cmd: &str, args: &[&str]) -> String {
    let o = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        o.status.success(),
        "{cmd} {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A tmpfs mounted on a fresh temporary directory; unmounted on drop.
pub struct Tmpfs {
    pub dir: tempfile::TempDir,
}

impl Tmpfs {
    pub fn new(options: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        sh(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                options,
                "iolab-test",
                dir.path().to_str().unwrap(),
            ],
        );
        Tmpfs { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// ext4 on a loop device (attached with --direct-io=on so that the host page cache does not
/// absorb the device's I/O) over a sparse image; everything is undone on drop.
pub struct LoopFs {
    pub image: PathBuf,
    pub device: String,
    pub mnt: tempfile::TempDir,
    _image_dir: tempfile::TempDir,
}

impl LoopFs {
    pub fn ext4(size: &str) -> LoopFs {
        // The image lives on the root filesystem, not on a tmpfs: direct I/O to it must reach
        // a real block device.
        let image_dir = tempfile::Builder::new()
            .prefix("iolab-test-img")
            .tempdir_in("/var/tmp")
            .unwrap();
        let image = image_dir.path().join("fs.img");
        sh("truncate", &["-s", size, image.to_str().unwrap()]);
        let device = sh(
            "losetup",
            &["-f", "--show", "--direct-io=on", image.to_str().unwrap()],
        );
        let mnt = tempfile::tempdir().unwrap();
        let fs = LoopFs {
            image,
            device,
            mnt,
            _image_dir: image_dir,
        };
        sh("mkfs.ext4", &["-F", "-q", &fs.device]);
        sh("mount", &[&fs.device, fs.mnt.path().to_str().unwrap()]);
        fs
    }

    pub fn path(&self) -> &Path {
        self.mnt.path()
    }

    /// The device's name in /proc/diskstats (`loop3`).
    pub fn name(&self) -> &str {
        self.device.trim_start_matches("/dev/")
    }

    pub fn counters(&self) -> iolab_monitor::diskstats::DiskCounters {
        iolab_monitor::diskstats::read()
            .expect("/proc/diskstats")
            .get(self.name())
            .expect("loop device in /proc/diskstats")
            .counters
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

pub fn drop_caches() {
    std::fs::write("/proc/sys/vm/drop_caches", "3").expect("drop caches");
}

/// Names of the entries in `dir`.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A scratch area: the experiment file, its database and iolab's state (journal, mount
/// points, images) all inside one temporary directory on the root filesystem (loop images
/// need a disk filesystem under them for direct I/O).
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::Builder::new()
                .prefix("iolab-test")
                .tempdir_in("/var/tmp")
                .unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn db(&self) -> PathBuf {
        self.path().join("results.db")
    }

    pub fn state(&self) -> PathBuf {
        self.path().join("state")
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Experiment file `name` whose `text` has `{target}` where a directory of the scratch
    /// space goes (created here): a rootless experiment's `sut.target`.
    pub fn directory_experiment(&self, name: &str, text: &str) -> PathBuf {
        let target = self.path().join("target");
        std::fs::create_dir_all(&target).unwrap();
        self.write(name, &text.replace("{target}", target.to_str().unwrap()))
    }

    /// The HTML report of the latest experiment, written to the scratch space and read back.
    pub fn report_html(&self) -> String {
        let html = self.path().join("report.html");
        let o = self.run(&["report", "-o", html.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(&html).unwrap()
    }

    pub fn cmd(&self) -> Command {
        let mut c = iolab();
        c.env("IOLAB_DB", self.db())
            .env("IOLAB_STATE_DIR", self.state());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    pub fn show(&self) -> Value {
        let o = self.run(&["show", "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    /// The newest experiment, exported as JSON.
    pub fn latest(&self) -> Value {
        let o = self.run(&["export", "--format", "json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    /// Runs the experiment file `f`, which must succeed and leave nothing mounted or
    /// attached; its configurations as exported, each with its one ok run:
    /// `(label, run)`.
    pub fn run_ok_once(&self, f: &Path) -> Vec<(String, Value)> {
        let o = self.run(&["run", f.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            self.mounts().is_empty(),
            "left mounted: {:?}",
            self.mounts()
        );
        assert!(self.loops().is_empty(), "left attached: {:?}", self.loops());
        self.latest()["configs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let label = c["label"].as_str().unwrap().to_string();
                let run = c["runs"][0].clone();
                assert_eq!(run["status"], "ok", "{label}: {}", run["error"]);
                (label, run)
            })
            .collect()
    }

    /// iolab's mounts (under its mount root).
    pub fn mounts(&self) -> Vec<Mount> {
        mounts_under(&self.state().join("mnt"))
    }

    /// Loop devices whose backing file is under this scratch directory.
    pub fn loops(&self) -> Vec<String> {
        let o = Command::new("losetup").arg("-a").output().unwrap();
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.contains(self.path().to_str().unwrap()))
            .map(str::to_owned)
            .collect()
    }
}

pub use iolab_sys::mountinfo::Mount;

/// Mounts whose mount point is under `root`, from /proc/self/mountinfo.
pub fn mounts_under(root: &Path) -> Vec<Mount> {
    iolab_sys::mountinfo::read()
        .unwrap()
        .into_iter()
        .filter(|m| m.mount_point.starts_with(root))
        .collect()
}

/// Renders the HTML report `html` in headless Chromium with every host unresolvable and a
/// dead proxy: the page must still render (it needs nothing from the network) without
/// console errors. Returns the DOM it rendered.
pub fn chromium_dom(dir: &Path, html: &Path) -> String {
    let url = format!("file://{}", html.display());
    let browser = |extra: &[&str]| {
        iolab_testkit::bounded("chromium", HUNG)
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
    dom.into_owned()
}

/// [`chromium_dom`], and the rendered page has the sections `ids` and its charts.
pub fn chromium_renders(dir: &Path, html: &Path, ids: &[&str]) {
    let dom = chromium_dom(dir, html);
    for id in ids {
        assert!(dom.contains(&format!("id=\"{id}\"")), "DOM has no #{id}");
    }
    assert!(dom.matches("<svg").count() >= 4);
}

/// The calls in `strace -f -o FILE` output made by threads other than the main one, as
/// (thread id, call text), without resumed (`<...`) and exit (`+++`) lines. The main thread
/// is the first line's: trace `execve` so that it comes first.
pub fn strace_thread_calls(text: &str) -> Vec<(&str, &str)> {
    let mut main_pid = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((pid, call)) = line.split_once(' ') else {
            continue;
        };
        let main = *main_pid.get_or_insert(pid);
        let call = call.trim_start();
        if pid == main || call.starts_with("<...") || call.starts_with("+++") {
            continue;
        }
        out.push((pid, call));
    }
    out
}

/// Checks that the lists an example file names in its comment are what the `iolab filelist`
/// commands given there write, byte for byte: the commands are read from the comment itself
/// (`#   iolab filelist …`, `\` continuing a line), so the comment cannot drift from the
/// files. `scan` is skipped: it lists this machine's files, not a fixed input.
#[allow(dead_code)]
pub fn assert_example_lists_generated(example: &str) {
    let text = std::fs::read_to_string(examples().join(example)).unwrap();
    let mut commands = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let Some(comment) = line.strip_prefix('#') else {
            continue;
        };
        let part = comment.split(" # ").next().unwrap().trim();
        if pending.is_empty() && !part.starts_with("iolab filelist ") {
            continue;
        }
        pending.push_str(part.trim_end_matches('\\'));
        pending.push(' ');
        if !part.ends_with('\\') {
            let command = std::mem::take(&mut pending);
            commands.push(command.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    let checked: Vec<_> = commands.iter().filter(|c| !c.contains(" scan ")).collect();
    assert!(
        !checked.is_empty(),
        "{example} gives no `iolab filelist` command to check"
    );
    let d = tempfile::tempdir().unwrap();
    let repo = examples().join("..");
    for command in checked {
        let words: Vec<&str> = command.split_whitespace().skip(1).collect();
        let o_at = words.iter().position(|w| *w == "-o").expect("an -o FILE");
        let list = repo.join(words[o_at + 1]);
        let out = d.path().join("list");
        let mut args: Vec<String> = words
            .iter()
            .map(|w| {
                if w.starts_with("examples/") {
                    repo.join(w).to_str().unwrap().to_string()
                } else {
                    w.to_string()
                }
            })
            .collect();
        args[o_at + 1] = out.to_str().unwrap().to_string();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&args);
        assert!(o.status.success(), "`{command}`: {}", stderr(&o));
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&list).unwrap(),
            "{} is not what `{command}` makes",
            list.display()
        );
    }
}

/// The repository's examples/ directory.
#[allow(dead_code)]
pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Copies an example's replay lists (`examples/<dir>/{install,boot,days}.list`) to
/// `<to>/<dir>/`, where an example file copied to `to` finds them.
#[allow(dead_code)]
pub fn copy_example_lists(dir: &str, to: &Path) {
    let lists = to.join(dir);
    std::fs::create_dir(&lists).unwrap();
    for l in ["install.list", "boot.list", "days.list"] {
        std::fs::copy(examples().join(dir).join(l), lists.join(l)).unwrap();
    }
}

/// A two-configuration experiment of the null engine on directory `data` (no root, under a
/// second): `bs` 4k vs 8k, 3 runs each, for tests of what iolab does with stored results.
pub fn null_experiment(data: &Path) -> String {
    format!(
        r#"
name = "null"
[factors]
bs = ["4k", "8k"]
[sut]
target = {{ kind = "directory", path = "{}" }}
[workload]
micro = {{ access = "write", bs = "${{bs}}", size = "1m", engine = "null", loops = 20 }}
[repetitions]
min = 3
max = 3
[procedure]
drop_caches = false
"#,
        data.display()
    )
}
