//! Every system call fails, one at a time (issue 30; docs/robustness.md "Failing every
//! system call"): a one-configuration experiment with two repetitions runs under
//! `strace --inject=CALLS:error=ERRNO:when=N` for N = 1, 2, 3, … until N is past the last such
//! call of every thread (strace counts per thread: the run in which nothing was injected ends
//! the loop). After each run the invariants below hold, whatever was hit: iolab's results
//! database, its journal, its run files, its loop images, the workload's files or the
//! machine's /proc and /sys.
//!
//! 1. The exit code is a documented one (0, 1 or 2; never 101, a panic, or a signal), and
//!    "panicked" is nowhere on stderr. Exit 0 means the experiment is done with both runs
//!    ok; exit 2 (bad input: an unreadable experiment file is one) means nothing was stored.
//! 2. The results database, when there is one, passes `PRAGMA integrity_check` and holds
//!    exactly the runs iolab reported finished: the `config 1/1 … · run R of ≤2: …` lines on
//!    stderr, each with its repetition and status (ok, FAILED, interrupted). iolab prints a
//!    run's line after its transaction committed; a line cut short because the injected
//!    write was one of stderr's may be missing, so then the stored runs may exceed the
//!    reported ones, never the other way round.
//! 3. `iolab recover` exits 0 and nothing of the run is left: no mount or loop device under
//!    the scratch directory, no temporary file (`*.tmp`, a pending block trace).
//! 4. The experiment is then completed: `iolab run --resume` when the database holds it
//!    unfinished, `iolab run` when it holds nothing of it. That exits 0, and the experiment
//!    is done with exactly the planned runs: one ok run of each repetition.
//!
//! N steps by one up to [`STEP_BY_ONE`], then by half of itself: the calls past the first
//! forty are mostly the workload's and the monitors', one like the other.
//! `IOLAB_SYSCALL_FAULTS=full` (bench/syscall-faults.sh) steps by one to the end and runs the
//! whole matrix; `quick` runs the whole matrix stepping as CI does (`--quick`).

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use common::{mounts_under, stderr, Scratch};

/// N steps by one up to here, then geometrically (CI); `full` steps by one throughout.
const STEP_BY_ONE: u64 = 40;

/// A run under strace that takes longer than this has hung.
const HANG_SECS: u64 = 300;

/// What runs: the experiment's workload and target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workload {
    /// `micro` on an existing directory: no root needed.
    Micro,
    /// A WML file (`.f`) on an existing directory.
    Wml,
    /// `micro` on ext4 on a loop image that iolab makes, mounts and removes, with the block
    /// trace saved (root): the journal, mounts, the trace's rename.
    MicroLoop,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Micro => "micro",
            Workload::Wml => "wml",
            Workload::MicroLoop => "micro-loop",
        }
    }
}

/// Sets of system calls injected together (strace counts each call of a set on its own).
/// `?` lets strace skip a name this architecture does not have.
const WRITE: &str = "write,pwrite64";
const FSYNC: &str = "fsync,fdatasync";
const OPENAT: &str = "openat";
const MKDIR: &str = "?mkdir,mkdirat";
const RENAME: &str = "?rename,renameat,?renameat2";
const MOUNT: &str = "mount";
/// The journal's own sync (the workloads here sync with fsync).
const FDATASYNC: &str = "fdatasync";

/// The experiment file and what it needs in the scratch directory; returns its path.
fn experiment(s: &Scratch, w: Workload, scale: u64) -> PathBuf {
    let target = s.path().join("target");
    std::fs::create_dir_all(&target).unwrap();
    let reps = "[repetitions]\nmin = 2\nmax = 2\n";
    let micro = format!(
        "micro = {{ access = \"write\", sync = \"fsync\", bs = \"4k\", size = \"{}k\" }}",
        256 * scale
    );
    let text = match w {
        Workload::Micro => format!(
            "name = \"faults micro\"\nseed = 3\n[sut]\ntarget = {{ kind = \"directory\", path = \
             \"{}\" }}\n[workload]\n{micro}\n{reps}[procedure]\ndrop_caches = false\n",
            target.display()
        ),
        Workload::Wml => {
            // Files made, appended, synced, read and deleted in directories of a fileset:
            // a fixed count of operations, so the calls per run hardly vary.
            s.write(
                "tiny.f",
                &format!(
                    "define fileset name=fs,path=$dir,size=16k,entries=16,dirwidth=4,prealloc=50\n\
                     define process name=p {{\n  thread name=t {{\n\
                     flowop createfile name=create,filesetname=fs,fd=1\n\
                     flowop appendfilerand name=append,iosize=4k,fd=1\n\
                     flowop fsync name=sync,fd=1\n\
                     flowop closefile name=close,fd=1\n\
                     flowop openfile name=open,filesetname=fs,fd=1\n\
                     flowop readwholefile name=read,fd=1,iosize=4k\n\
                     flowop closefile name=close2,fd=1\n\
                     flowop deletefile name=delete,filesetname=fs\n\
                     flowop finishoncount name=done,value={}\n  }}\n}}\n\
                     set mode quit alldone\nrun 60\n",
                    100 * scale
                ),
            );
            format!(
                "name = \"faults wml\"\nseed = 3\n[sut]\ntarget = {{ kind = \"directory\", path = \
                 \"{}\" }}\n[workload]\nwml = \"tiny.f\"\n{reps}[procedure]\ndrop_caches = false\n",
                target.display()
            )
        }
        Workload::MicroLoop => format!(
            "name = \"faults loop\"\nseed = 3\n[sut]\ntarget = {{ kind = \"loop_image\", size = \
             \"32M\" }}\nfs = {{ kind = \"ext4\" }}\n[workload]\n{micro}\n{reps}[procedure]\n\
             save_block_trace = true\n"
        ),
    };
    s.write("faults.toml", &text)
}

/// One system call that strace failed: the call and what it named (`-y`'s path of its
/// descriptor, or its path argument).
#[derive(Debug, Clone)]
struct Injected {
    line: String,
}

impl Injected {
    /// A write to iolab's stderr (a progress line may be cut short).
    fn hit_stderr(&self, err_file: &Path) -> bool {
        self.line.contains(&format!("<{}>", err_file.display()))
    }
}

/// The runs iolab reported finished: (repetition, status) from its `… · run R of ≤M: …`
/// lines, in order.
fn reported_runs(err: &str) -> Vec<(u64, String)> {
    let mut runs = Vec::new();
    for line in err.lines().filter(|l| l.starts_with("config ")) {
        let Some((_, rest)) = line.split_once(" · run ") else {
            continue;
        };
        let Some((rep, rest)) = rest.split_once(" of ≤") else {
            continue;
        };
        let Some((_, what)) = rest.split_once(": ") else {
            continue;
        };
        let Ok(rep) = rep.parse::<u64>() else {
            continue;
        };
        let status = if what.starts_with("FAILED") {
            "failed"
        } else if what.starts_with("interrupted") {
            "interrupted"
        } else {
            "ok"
        };
        runs.push((rep - 1, status.to_string()));
    }
    runs
}

/// The experiments (status) and runs (repetition, status, error) in a database, after
/// checking its integrity; `None` when there is no database file.
#[allow(clippy::type_complexity)]
fn stored(db: &Path) -> Option<(Vec<String>, Vec<(u64, String, Option<String>)>)> {
    if !db.exists() {
        return None;
    }
    let conn = rusqlite::Connection::open(db)
        .unwrap_or_else(|e| panic!("{} does not open: {e}", db.display()));
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("integrity_check of {}: {e}", db.display()));
    assert_eq!(check, "ok", "{} is damaged", db.display());
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    if version == 0 {
        // Created, never upgraded: no table yet.
        return Some((Vec::new(), Vec::new()));
    }
    let experiments = conn
        .prepare("SELECT status FROM experiments ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let runs = conn
        .prepare("SELECT repetition, status, error FROM runs ORDER BY id")
        .unwrap()
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)? as u64,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    Some((experiments, runs))
}

/// Temporary files iolab may leave only while it runs.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else if name.ends_with(".tmp") || name.contains("pending") {
                found.push(p);
            }
        }
    }
    found
}

fn loop_devices_under(dir: &Path) -> Vec<String> {
    let o = Command::new("losetup").arg("-a").output();
    let Ok(o) = o else { return Vec::new() };
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains(&*dir.to_string_lossy()))
        .map(str::to_string)
        .collect()
}

/// What one run with its N-th call failed did.
struct Iteration {
    code: Option<i32>,
    injected: Vec<Injected>,
}

fn run_once(s: &Scratch, w: Workload, calls: &str, errno: &str, n: u64, scale: u64) -> Iteration {
    let file = experiment(s, w, scale);
    let log = s.path().join("strace.log");
    let out = s.path().join("run.out");
    let err = s.path().join("run.err");
    let t0 = Instant::now();
    let status = iolab_testkit::bounded("strace", HANG_SECS)
        .args(["-f", "-qq", "-y", "--seccomp-bpf", "-o"])
        .arg(&log)
        .args(["-e", &format!("trace={calls}")])
        .arg(format!("--inject={calls}:error={errno}:when={n}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args(["run"])
        .arg(&file)
        .env("IOLAB_DB", s.db())
        .env("IOLAB_STATE_DIR", s.state())
        // cargo's library path would make the dynamic loader's search of it the first few
        // dozen openat calls, ahead of iolab's own.
        .env_remove("LD_LIBRARY_PATH")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .status()
        .expect("strace runs");
    let what = format!("{} {calls} {errno} N={n}", w.name());
    assert_ne!(
        status.code(),
        Some(124),
        "{what}: hung (no end after {HANG_SECS} s)"
    );
    let text = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(
        !text.starts_with("strace:"),
        "{what}: strace failed: {text}"
    );
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    let injected: Vec<Injected> = log_text
        .lines()
        .filter(|l| l.contains("(INJECTED)"))
        .map(|l| Injected {
            line: l.chars().take(240).collect(),
        })
        .collect();
    let context = || {
        format!(
            "{what} ({:.1} s)\ninjected: {:#?}\nstderr:\n{text}",
            t0.elapsed().as_secs_f64(),
            injected
        )
    };

    // 1. The exit code.
    let code = status.code();
    // The documented codes (`iolab --help`'s table), less 130: nothing sent a signal.
    let documented = iolab_kind::cli::EXIT_CODES
        .iter()
        .any(|&(c, _)| code == Some(i32::from(c)) && c != iolab_kind::cli::EXIT_INTERRUPTED);
    assert!(
        documented,
        "exit {code:?} (documented: 0, 1, 2; 130 only on a signal): {}",
        context()
    );
    assert!(!text.contains("panicked"), "a panic: {}", context());
    assert!(
        !text.contains("as a bug"),
        "a failing disk called a bug: {}",
        context()
    );
    // A write to stderr that failed may have taken iolab's message with it.
    let cut = injected.iter().any(|i| i.hit_stderr(&err));
    if code == Some(1) && !cut {
        assert!(
            text.contains("error:"),
            "exit 1 without an error message: {}",
            context()
        );
    }

    // 2. The database: intact, and exactly the reported runs.
    let db = stored(&s.db());
    let reported = reported_runs(&text);
    let runs: Vec<(u64, String)> = db
        .as_ref()
        .map(|(_, r)| r.iter().map(|(a, b, _)| (*a, b.clone())).collect())
        .unwrap_or_default();
    if cut {
        let mut left = runs.clone();
        for r in &reported {
            let i = left.iter().position(|x| x == r).unwrap_or_else(|| {
                panic!("reported {r:?} is not stored ({runs:?}): {}", context())
            });
            left.remove(i);
        }
    } else {
        assert_eq!(runs, reported, "stored runs ≠ reported runs: {}", context());
    }
    let experiments = db.as_ref().map(|(e, _)| e.clone()).unwrap_or_default();
    match code {
        Some(0) => {
            assert_eq!(experiments, ["done"], "exit 0: {}", context());
            assert_eq!(
                runs,
                [(0, "ok".to_string()), (1, "ok".to_string())],
                "exit 0: {}",
                context()
            );
        }
        Some(2) => assert!(
            experiments.is_empty(),
            "exit 2 (nothing run or changed) with an experiment stored: {}",
            context()
        ),
        _ => {}
    }

    // 3. `iolab recover` leaves nothing of the run.
    let o = s.run(&["recover"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "recover: {}\n{}",
        stderr(&o),
        context()
    );
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let mounts = mounts_under(s.path());
    assert!(mounts.is_empty(), "left mounted: {mounts:?}: {}", context());
    let loops = loop_devices_under(s.path());
    assert!(
        loops.is_empty(),
        "loop devices left: {loops:?}: {}",
        context()
    );
    let tmp = leftovers(s.path());
    assert!(
        tmp.is_empty(),
        "temporary files left: {tmp:?}: {}",
        context()
    );

    // 4. The experiment completes.
    if code != Some(0) {
        let unfinished = experiments.iter().any(|e| e != "done");
        let mut args = vec!["run", file.to_str().unwrap()];
        if unfinished {
            args.push("--resume");
        }
        let o = s.run(&args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?} after the fault: {}\n{}",
            stderr(&o),
            context()
        );
        let (experiments, after) = stored(&s.db()).expect("a database after the rerun");
        let done = experiments.iter().filter(|e| *e == "done").count();
        assert_eq!(
            done,
            1,
            "one done experiment: {experiments:?}: {}",
            context()
        );
        assert_eq!(
            experiments.len(),
            1,
            "the rerun resumed, not started another: {experiments:?}: {}",
            context()
        );
        let mut ok: Vec<u64> = after.iter().filter(|r| r.1 == "ok").map(|r| r.0).collect();
        ok.sort_unstable();
        assert_eq!(ok, [0, 1], "the planned runs: {after:?}: {}", context());
        // The runs of the faulty session are kept as they were.
        assert_eq!(
            after[..runs.len()]
                .iter()
                .map(|(a, b, _)| (*a, b.clone()))
                .collect::<Vec<_>>(),
            runs,
            "{}",
            context()
        );
    }
    Iteration { code, injected }
}

/// What a case did, for the summary.
#[derive(Debug, Default)]
struct Summary {
    iterations: u64,
    last_n: u64,
    exits: BTreeMap<i32, u64>,
    injected: u64,
    seconds: f64,
}

/// `IOLAB_SYSCALL_FAULTS`: `full` (every N) or `quick` (N as in CI) runs the whole matrix.
fn matrix() -> Option<&'static str> {
    match std::env::var("IOLAB_SYSCALL_FAULTS").as_deref() {
        Ok("full") => Some("full"),
        Ok("quick") => Some("quick"),
        _ => None,
    }
}

/// Bigger workloads (bench/syscall-faults.sh --scale): sizes and counts times this.
fn scale() -> u64 {
    std::env::var("IOLAB_SYSCALL_FAULTS_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&v| v >= 1)
        .unwrap_or(1)
}

/// The next N: by one up to [`STEP_BY_ONE`] (every N in `full`), then half as much again.
fn next_n(n: u64, every: bool) -> u64 {
    if every || n < STEP_BY_ONE {
        n + 1
    } else {
        n + n / 2
    }
}

/// Fails the N-th of `calls` with `errno` for N = 1, 2, … until a run injects nothing.
fn sweep(w: Workload, calls: &str, errno: &str) -> Summary {
    iolab_testkit::require_tool("strace");
    let every = matrix() == Some("full");
    let t0 = Instant::now();
    let mut sum = Summary::default();
    let mut n = 1;
    loop {
        let s = Scratch::new();
        let it = run_once(&s, w, calls, errno, n, scale());
        if std::env::var_os("IOLAB_SYSCALL_FAULTS_VERBOSE").is_some() {
            eprintln!(
                "N={n} exit {:?}: {:?}",
                it.code,
                it.injected.first().map(|i| &i.line)
            );
        }
        sum.iterations += 1;
        sum.last_n = n;
        *sum.exits.entry(it.code.unwrap_or(-1)).or_default() += 1;
        sum.injected += it.injected.len() as u64;
        if it.injected.is_empty() {
            break;
        }
        n = next_n(n, every);
        assert!(n < 1_000_000, "no end to the calls");
    }
    sum.seconds = t0.elapsed().as_secs_f64();
    let line = format!(
        "syscall-faults: {:<10} {:<28} {:<6} iterations {:>4}  last N {:>6}  injected {:>5}  exits {:?}  {:.0} s",
        w.name(),
        calls,
        errno,
        sum.iterations,
        sum.last_n,
        sum.injected,
        sum.exits,
        sum.seconds
    );
    eprintln!("{line}");
    let exits: Vec<String> = sum.exits.iter().map(|(c, n)| format!("{c}:{n}")).collect();
    summary_row(&format!(
        "{}\t{calls}\t{errno}\t{}\t{}\t{}\t{}\t{:.0}\n",
        w.name(),
        sum.iterations,
        sum.last_n,
        sum.injected,
        exits.join(" "),
        sum.seconds
    ));
    sum
}

/// A row of bench/syscall-faults.sh's table, to `$IOLAB_SYSCALL_FAULTS_SUMMARY`: one write of
/// one tab-separated row with O_APPEND, so that rows of parallel tests do not interleave.
fn summary_row(row: &str) {
    use std::io::Write as _;
    if let Some(path) = std::env::var_os("IOLAB_SYSCALL_FAULTS_SUMMARY") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        let _ = f.write_all(row.as_bytes());
    }
}

const ERRNOS: [&str; 3] = ["EIO", "ENOSPC", "EINTR"];

/// The whole matrix (`IOLAB_SYSCALL_FAULTS=full` or `quick`): every workload × set × errno.
#[test]
#[ignore = "needs root, strace and hours: bench/syscall-faults.sh runs it"]
fn full_matrix() {
    if matrix().is_none() {
        eprintln!(
            "set IOLAB_SYSCALL_FAULTS=full or quick (bench/syscall-faults.sh) to run the whole \
             matrix"
        );
        return;
    }
    iolab_testkit::require_root();
    // Every case runs, and the broken ones are listed at the end.
    let mut broken = String::new();
    for w in [Workload::Micro, Workload::Wml, Workload::MicroLoop] {
        let mut sets = vec![WRITE, FSYNC, OPENAT, MKDIR, RENAME];
        if w == Workload::MicroLoop {
            sets.push(MOUNT);
        }
        for calls in sets {
            for errno in ERRNOS {
                // `--only` of the bench script: the cases whose name contains it.
                let name = format!("{} {calls} {errno}", w.name());
                if std::env::var("IOLAB_SYSCALL_FAULTS_ONLY").is_ok_and(|o| !name.contains(&o)) {
                    continue;
                }
                if let Err(e) = std::panic::catch_unwind(|| sweep(w, calls, errno)) {
                    let why = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    let first = why.lines().next().unwrap_or_default().to_string();
                    let _ = writeln!(broken, "{} {calls} {errno}: {first}", w.name());
                    summary_row(&format!(
                        "{}\t{calls}\t{errno}\tBROKEN: {first}\n",
                        w.name()
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken invariants:\n{broken}");
}

// CI's matrix: every set of calls and every errno for each workload, errnos rotated, and one
// sweep per test so that they run side by side.

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn micro_write_eio() {
    sweep(Workload::Micro, WRITE, "EIO");
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn micro_fsync_enospc() {
    sweep(Workload::Micro, FSYNC, "ENOSPC");
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn micro_openat_eintr() {
    sweep(Workload::Micro, OPENAT, "EINTR");
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn wml_write_enospc() {
    sweep(Workload::Wml, WRITE, "ENOSPC");
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn wml_fsync_eintr() {
    sweep(Workload::Wml, FSYNC, "EINTR");
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn wml_openat_eio() {
    sweep(Workload::Wml, OPENAT, "EIO");
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn wml_mkdir_enospc() {
    sweep(Workload::Wml, MKDIR, "ENOSPC");
}

#[test]
#[ignore = "needs root and strace: loop devices, mkfs, mount, block tracing"]
fn loop_mount_rename_mkdir() {
    iolab_testkit::require_root();
    sweep(Workload::MicroLoop, MOUNT, "EIO");
    sweep(Workload::MicroLoop, RENAME, "ENOSPC");
    sweep(Workload::MicroLoop, MKDIR, "EINTR");
}

#[test]
#[ignore = "needs root and strace: loop devices, mkfs, mount, block tracing"]
fn loop_fdatasync_eio() {
    iolab_testkit::require_root();
    sweep(Workload::MicroLoop, FDATASYNC, "EIO");
}

/// Found by failing openat on the loop image's workload (bench/syscall-faults.sh): a run that
/// failed while its block trace was being saved left the trace as `.pending-PID-N.iolt` in
/// the traces directory for ever. Every thread's first openat fails here: the micro worker's
/// is its data file, after the tracer started.
#[test]
#[ignore = "needs root and strace: loop devices, mkfs, mount, block tracing"]
fn a_failed_run_leaves_no_pending_block_trace() {
    iolab_testkit::require_root();
    iolab_testkit::require_tool("strace");
    let s = Scratch::new();
    // run_once checks that no temporary file is left.
    let it = run_once(&s, Workload::MicroLoop, OPENAT, "EIO", 1, 1);
    assert_eq!(it.code, Some(1));
    assert!(
        it.injected.iter().any(|i| i.line.contains("iolab-micro.0")),
        "{:?}",
        it.injected
    );
}

#[test]
fn reported_runs_are_read_from_the_progress_lines() {
    let err = "experiment 1 in x.db\nconfig 1/1 default · run 1 of ≤2: ops_per_s 197.3\n    \
               warning [x]: y\nconfig 1/1 default · run 2 of ≤2: FAILED: EIO\n\
               config 1/1 default · run 2 of ≤2: interrupted\nconfig 1/1 default · run 1 of";
    assert_eq!(
        reported_runs(err),
        [
            (0, "ok".to_string()),
            (1, "failed".to_string()),
            (1, "interrupted".to_string())
        ]
    );
    assert_eq!(next_n(3, false), 4);
    assert_eq!(next_n(40, false), 60);
    assert_eq!(next_n(40, true), 41);
}
