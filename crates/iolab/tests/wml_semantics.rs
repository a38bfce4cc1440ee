//! WML semantics with exact expectations, on small filesets in a temporary directory: what
//! the engine does is read back from strace (offsets, sizes, the order of picked files), from
//! the files it left behind, and from its JSON results.

mod common;

use std::path::{Path, PathBuf};

use common::stderr;

/// Writes a workload into `dir` and returns its path.
fn workload(dir: &Path, text: &str) -> PathBuf {
    let f = dir.join("w.f");
    std::fs::write(&f, text).unwrap();
    f
}

fn run_json(f: &Path, data: &Path, extra: &[&str]) -> serde_json::Value {
    let o = common::iolab()
        .arg("run")
        .arg(f)
        .arg("--dir")
        .arg(data)
        .args(["--json", "-q"])
        // Only the engine's threads: no sampler thread, no database writes.
        .args(["--no-monitor", "--no-db"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn flowop<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    v["result"]["flowops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no flowop {name}"))
}

/// Runs under `strace -f` and returns the traced calls of threads other than the main one.
fn strace(f: &Path, data: &Path, calls: &str, extra: &[&str]) -> Vec<String> {
    let out = data.join("strace.out");
    let o = iolab_testkit::bounded("strace", common::HUNG)
        // execve is traced so that the first line is always the main thread's.
        .args(["-f", "-qq", "-e", &format!("trace=execve,{calls}"), "-o"])
        .arg(&out)
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .arg("run")
        .arg(f)
        .arg("--dir")
        .arg(data)
        .args(["--json", "-q"])
        // Only the engine's threads: no sampler thread, no database writes.
        .args(["--no-monitor", "--no-db"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    let mut main = None;
    text.lines()
        .filter_map(|l| {
            let (pid, call) = l.split_once(' ')?;
            let m = main.get_or_insert_with(|| pid.to_string());
            (pid != m && !call.trim_start().starts_with("<..."))
                .then(|| call.trim_start().to_string())
        })
        .collect()
}

/// The n-th numeric argument of a traced call (`pread64(3, "…", 4096, 8192) = 4096`).
fn arg_u64(call: &str, n: usize) -> u64 {
    let inner = &call[call.find('(').unwrap() + 1..call.rfind(')').unwrap()];
    let parts: Vec<&str> = inner.rsplitn(4, ", ").collect();
    // rsplitn gives the last arguments first.
    parts[parts.len() - 1 - n]
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{call}"))
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn files_are_picked_round_robin() {
    iolab_testkit::require_tool("strace");
    let dir = tempfile::tempdir().unwrap();
    let f = workload(
        dir.path(),
        "define fileset name=fs,path=$dir,size=1k,entries=5,dirwidth=10,prealloc=100\n\
         define process name=p { thread name=t { flowop statfile name=s,filesetname=fs } }\n",
    );
    let calls = strace(&f, dir.path(), "statx,newfstatat", &["--time", "1s"]);
    let picked: Vec<String> = calls
        .iter()
        .filter(|c| c.contains("/fs/"))
        .map(|c| {
            c.split('"')
                .nth(1)
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(picked.len() > 50, "{picked:?}");
    for (k, name) in picked.iter().enumerate() {
        assert_eq!(name, &format!("{:08}", k % 5 + 1), "pick {k}: {picked:?}");
    }
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn appendfilerand_writes_less_than_iosize() {
    iolab_testkit::require_tool("strace");
    let dir = tempfile::tempdir().unwrap();
    let f = workload(
        dir.path(),
        "define file name=log,path=$dir,size=0,prealloc\n\
         define process name=p { thread name=t { flowop appendfilerand name=a,filesetname=log,iosize=1000 } }\n",
    );
    let calls = strace(&f, dir.path(), "write", &["--time", "1s"]);
    let sizes: Vec<u64> = calls
        .iter()
        .filter(|c| {
            c.starts_with("write(") && !c.starts_with("write(1,") && !c.starts_with("write(2,")
        })
        .map(|c| arg_u64(c, 2))
        .collect();
    assert!(sizes.len() > 200, "{}", sizes.len());
    assert!(sizes.iter().all(|&s| (1..1000).contains(&s)), "{sizes:?}");
    let mean = sizes.iter().sum::<u64>() as f64 / sizes.len() as f64;
    assert!(
        (400.0..600.0).contains(&mean),
        "mean append {mean}, expected ≈ 500"
    );
    // The file grew by exactly what was written.
    let len = std::fs::metadata(dir.path().join("log")).unwrap().len();
    assert_eq!(len, sizes.iter().sum::<u64>());
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn random_reads_are_aligned_and_inside_the_working_set() {
    iolab_testkit::require_tool("strace");
    let dir = tempfile::tempdir().unwrap();
    let f = workload(
        dir.path(),
        "define file name=big,path=$dir,size=1m,prealloc\n\
         define process name=p { thread name=t { flowop read name=r,filesetname=big,iosize=4k,workingset=256k,random } }\n",
    );
    let calls = strace(&f, dir.path(), "pread64", &["--time", "1s"]);
    let offsets: Vec<u64> = calls.iter().map(|c| arg_u64(c, 3)).collect();
    assert!(offsets.len() > 1000, "{}", offsets.len());
    assert!(
        offsets
            .iter()
            .all(|o| o % 4096 == 0 && o + 4096 <= 256 << 10),
        "offsets outside"
    );
    assert_eq!(
        offsets.iter().max(),
        Some(&((256 << 10) - 4096)),
        "the last block is reachable"
    );
    assert_eq!(offsets.iter().min(), Some(&0));
}

#[test]
fn readwholefile_is_one_op_with_all_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let f = workload(
        dir.path(),
        "define fileset name=fs,path=$dir,size=64k,entries=10,dirwidth=10,prealloc=100\n\
         define process name=p { thread name=t {\n\
           flowop openfile name=o,filesetname=fs,fd=1\n\
           flowop readwholefile name=r,fd=1,iosize=4k\n\
           flowop closefile name=c,fd=1 } }\n",
    );
    let v = run_json(&f, dir.path(), &["--time", "1s"]);
    let r = flowop(&v, "r");
    let ops = r["ops"].as_u64().unwrap();
    assert!(ops > 100);
    assert_eq!(r["bytes"].as_u64().unwrap(), ops * 65536);
}

fn file_sizes(root: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else {
                out.push((e.path(), m.len()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn prealloc_percentage_and_gamma_mean_over_10000_files() {
    let dir = tempfile::tempdir().unwrap();
    let f = workload(
        dir.path(),
        "set $sz = randvar(type=gamma, mean=16384, gamma=1500)\n\
         define fileset name=fs,path=$dir,size=$sz,entries=10000,dirwidth=100,prealloc=60\n\
         define fileset name=all,path=$dir,size=$sz,entries=10000,dirwidth=100,prealloc=100\n\
         define process name=p { thread name=t { flowop hog name=h,value=1 } }\n",
    );
    run_json(&f, dir.path(), &["--time", "1s"]);
    let some = file_sizes(&dir.path().join("fs")).len() as f64;
    // Each entry is preallocated with probability 60% (filebench's per-entry draw): 4σ band.
    assert!(
        (5800.0..6200.0).contains(&some),
        "{some} of 10000 preallocated"
    );
    let all = file_sizes(&dir.path().join("all"));
    assert_eq!(all.len(), 10000);
    let mean = all.iter().map(|(_, s)| *s as f64).sum::<f64>() / 10000.0;
    assert!((mean / 16384.0 - 1.0).abs() < 0.05, "gamma mean {mean}");
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn same_seed_same_sizes_and_offsets() {
    iolab_testkit::require_tool("strace");
    let text = "set $sz = randvar(type=gamma, mean=65536, gamma=1500, min=4096)\n\
                define fileset name=fs,path=$dir,size=$sz,entries=50,dirwidth=10,prealloc=100\n\
                define process name=p { thread name=t { flowop read name=r,filesetname=fs,iosize=4k,random,fd=1\n\
                flowop finishoncount name=done,value=300 } }\nset mode quit alldone\nrun 20\n";
    let sample = |seed: &str| {
        let dir = tempfile::tempdir().unwrap();
        let f = workload(dir.path(), text);
        let calls = strace(&f, dir.path(), "pread64", &["--seed", seed]);
        let offsets: Vec<u64> = calls.iter().map(|c| arg_u64(c, 3)).collect();
        let sizes: Vec<u64> = file_sizes(&dir.path().join("fs"))
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        (sizes, offsets)
    };
    let a = sample("7");
    let b = sample("7");
    let c = sample("8");
    assert_eq!(a.1.len(), 300);
    assert_eq!(a, b, "same seed");
    assert_ne!(a.0, c.0, "another seed, other sizes");
    assert_ne!(a.1, c.1, "another seed, other offsets");
}

#[test]
fn finishoncount_counts_io_flowops_only() {
    let dir = tempfile::tempdir().unwrap();
    let f = workload(
        dir.path(),
        "define file name=f,path=$dir,size=64k,prealloc\n\
         define process name=p { thread name=t {\n\
           flowop read name=r,filesetname=f,iosize=4k,random\n\
           flowop statfile name=s,filesetname=f\n\
           flowop finishoncount name=done,value=100 } }\n\
         set mode quit alldone\nrun 30\n",
    );
    let v = run_json(&f, dir.path(), &[]);
    // filebench would count the stats too and stop after 50 loops.
    assert_eq!(flowop(&v, "r")["ops"], 100);
    assert_eq!(flowop(&v, "s")["ops"], 100);
    assert_eq!(v["result"]["finished_threads"], 1);
    // Not a timing threshold: without alldone the run lasts its 30 s.
    assert!(
        v["result"]["elapsed_ns"].as_u64().unwrap() < 30_000_000_000,
        "alldone ended the run"
    );
}

#[test]
fn appends_do_not_change_the_size_a_recreated_file_is_written_at() {
    // Regression: appends used to grow the entry's recorded size, so a file deleted and
    // created again was written whole at the grown size (filebench keeps the layout size).
    let dir = tempfile::tempdir().unwrap();
    let f = workload(
        dir.path(),
        "define fileset name=fs,path=$dir,size=64k,entries=20,dirwidth=10,prealloc=50\n\
         define process name=p { thread name=t {\n\
           flowop createfile name=create,filesetname=fs,fd=1\n\
           flowop writewholefile name=write-whole,fd=1,srcfd=1,iosize=16k\n\
           flowop closefile name=close1,fd=1\n\
           flowop openfile name=open,filesetname=fs,fd=1\n\
           flowop appendfilerand name=append,iosize=8k,fd=1\n\
           flowop closefile name=close2,fd=1\n\
           flowop deletefile name=delete,filesetname=fs } }\n",
    );
    let v = run_json(&f, dir.path(), &["--time", "2s"]);
    let w = flowop(&v, "write-whole");
    let ops = w["ops"].as_u64().unwrap();
    assert!(ops > 100, "{ops}");
    assert_eq!(w["bytes"].as_u64().unwrap(), ops * 65536);
    assert!(flowop(&v, "append")["bytes"].as_u64().unwrap() > 0);
}

#[test]
fn system_output_goes_to_stderr_and_a_failure_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let f = workload(
        dir.path(),
        "define file name=f,path=$dir,size=4k,prealloc\n\
         define process name=p { thread name=t { flowop statfile name=s,filesetname=f } }\n\
         system \"echo from-system; echo \\\"it's\\\"\"\n\
         system \"exit 3\"\n\
         run 1\n",
    );
    let o = common::iolab()
        .arg("run")
        .arg(&f)
        .arg("--dir")
        .arg(dir.path())
        .args(["--json", "--no-monitor", "--no-db"])
        .output()
        .unwrap();
    let err = stderr(&o);
    // filebench goes on after a failing command; so does iolab, but says so.
    assert!(o.status.success(), "{err}");
    let out = common::stdout(&o);
    assert!(
        !out.contains("from-system"),
        "the command's output is on stdout: {out}"
    );
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("stdout is only the JSON");
    assert!(err.contains("from-system\nit's\n"), "{err}");
    assert!(err.contains("running: echo from-system"), "{err}");
    assert!(
        err.contains(&format!(
            "{}:4:1: warning: `system \"exit 3\"` exited with status 3",
            f.display()
        )),
        "{err}"
    );
    assert!(!err.contains("exited with status 0"), "{err}");
}

/// `--no-system` (an untrusted file): its `system` commands do not run, each is reported.
#[test]
fn no_system_skips_and_reports_each_command() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("MARKER");
    let f = workload(
        dir.path(),
        &format!(
            "define file name=f,path=$dir,size=4k,prealloc\n\
             define process name=p {{ thread name=t {{ flowop statfile name=s,filesetname=f }} }}\n\
             system \"touch {m}\"\n\
             system \"touch {m}.2\"\n\
             run 1\n",
            m = marker.display()
        ),
    );
    let o = common::iolab()
        .arg("run")
        .arg(&f)
        .arg("--dir")
        .arg(dir.path())
        .args(["--no-system", "--no-monitor", "--no-db"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!marker.exists(), "a skipped command ran");
    for (line, m) in [
        (3, marker.display().to_string()),
        (4, format!("{}.2", marker.display())),
    ] {
        let w = format!(
            "{}:{line}:1: warning: `system \"touch {m}\"` not run (--no-system)",
            f.display()
        );
        assert!(err.contains(&w), "{err}");
    }
    assert!(!err.contains("running: touch"), "{err}");
}

/// A long `sleep` in the prelude does not hold up Ctrl-C.
#[test]
fn ctrl_c_interrupts_a_sleep() {
    let dir = tempfile::tempdir().unwrap();
    let f = workload(
        dir.path(),
        "define file name=f,path=$dir,size=4k,prealloc\n\
         define process name=p { thread name=t { flowop statfile name=s,filesetname=f } }\n\
         sleep 100\n\
         run 1\n",
    );
    let child = common::iolab()
        .arg("run")
        .arg(&f)
        .arg("--dir")
        .arg(dir.path())
        .args(["--no-monitor", "--no-db"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    // Not a timing threshold: a sleep that held up Ctrl-C would end after its 100 s.
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(100),
        "took {:?}: the sleep ran to its end",
        t0.elapsed()
    );
}

#[test]
fn arithmetic_without_spaces_and_with_parentheses_sizes_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let f = workload(
        dir.path(),
        "set $xx = 8k\n\
         set $half=$xx/2\n\
         set $third=(($xx+4k)/3)\n\
         define fileset name=a,path=$dir,size=$half,entries=2,dirwidth=2,prealloc\n\
         define fileset name=b,path=$dir,size=$third,entries=2,dirwidth=2,prealloc\n\
         define fileset name=c,path=$dir,size=8k/2,entries=2,dirwidth=2,prealloc\n\
         define process name=p { thread name=t { flowop statfile name=s,filesetname=a } }\n",
    );
    // `8k/2` is not arithmetic outside `set`: it stays an error there.
    let o = common::iolab()
        .arg("run")
        .arg(&f)
        .arg("--dir")
        .arg(dir.path())
        .args(["--time", "1s", "--no-db"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(":6:40: error: arithmetic in the value of `size`"),
        "{}",
        stderr(&o)
    );
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("size=8k/2", "size=$half");
    std::fs::write(&f, text).unwrap();
    run_json(&f, dir.path(), &["--time", "1s"]);
    for (fileset, size) in [("a", 4096), ("b", 4096), ("c", 4096)] {
        let sizes = file_sizes(&dir.path().join(fileset));
        assert_eq!(sizes.len(), 2, "{fileset}: {sizes:?}");
        assert!(
            sizes.iter().all(|(_, s)| *s == size),
            "{fileset}: {sizes:?}"
        );
    }
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let f = workload(
        dir.path(),
        "\u{feff}define file name=f,path=$dir,size=4k,prealloc\n\
         define process name=p { thread name=t { flowop statfile name=s,filesetname=f } }\n\
         run 1\n",
    );
    let v = run_json(&f, dir.path(), &[]);
    assert!(flowop(&v, "s")["ops"].as_u64().unwrap() > 0);
}

/// Issue 11: `enable lathist` was ignored by `--format filebench`; filebench ends each
/// Per-Operation Breakdown line with the flowop's 64 power-of-two latency buckets.
#[test]
fn enable_lathist_adds_filebench_s_histogram_columns() {
    let dir = tempfile::tempdir().unwrap();
    let text = "define file name=f,path=$dir,size=4k,prealloc\n\
                define process name=p { thread name=t {\n\
                  flowop statfile name=s,filesetname=f\n\
                  flowop read name=r,filesetname=f,iosize=4k } }\n\
                run 1\n";
    let mut lines = Vec::new();
    for enable in ["", "enable lathist\n"] {
        let f = workload(dir.path(), &format!("{enable}{text}"));
        let o = common::iolab()
            .arg("run")
            .arg(&f)
            .arg("--dir")
            .arg(dir.path())
            .args(["--format", "filebench", "-q", "--no-monitor", "--no-db"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let out = String::from_utf8(o.stdout).unwrap();
        let flowops: Vec<String> = out
            .lines()
            .filter(|l| l.starts_with("s ") || l.starts_with("r "))
            .map(str::to_string)
            .collect();
        assert_eq!(flowops.len(), 2, "{out}");
        lines.push(flowops);
    }
    for l in &lines[0] {
        assert!(l.ends_with("ms]"), "without lathist: {l}");
    }
    for l in &lines[1] {
        let (head, hist) = l.split_once("ms]\t[ ").unwrap_or_else(|| panic!("{l}"));
        let ops: u64 = head
            .split_whitespace()
            .nth(1)
            .unwrap()
            .trim_end_matches("ops")
            .parse()
            .unwrap();
        let counts: Vec<u64> = hist
            .strip_suffix(" ]")
            .unwrap_or_else(|| panic!("{l}"))
            .split(' ')
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(counts.len(), 64, "{l}");
        assert_eq!(counts.iter().sum::<u64>(), ops, "{l}");
    }
}
