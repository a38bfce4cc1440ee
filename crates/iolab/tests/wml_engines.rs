//! WML workloads on every engine (`iolab run … --engine E [--iodepth N]`): the same op counts
//! and bytes per flowop as psync, the syscalls each engine is meant to issue (strace), and
//! engine options that do not go together refused before anything runs.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::stderr;

/// One thread, every data flowop kind, ending after exactly ten loops (110 data ops). The
/// files it reads whole are only ever overwritten in place, so that their size, and so the
/// bytes of `whole-read`, stay the layout's (what the null engine assumes).
const DETERMINISTIC: &str = "\
set mode quit alldone
define fileset name=data,path=$dir,size=64k,entries=4,dirwidth=10,prealloc=100
define fileset name=new,path=$dir,size=32k,entries=50,dirwidth=10,prealloc=0
define fileset name=log,path=$dir,size=8k,entries=1,dirwidth=10,prealloc=100
define process name=p {
  thread name=t {
    flowop openfile name=open,filesetname=data,fd=1
    flowop read name=rand-read,fd=1,iosize=4k,random
    flowop read name=seq-read,fd=1,iosize=16k,iters=5
    flowop write name=rand-write,fd=1,iosize=4k,random
    flowop fsync name=sync,fd=1
    flowop closefile name=close,fd=1
    flowop readwholefile name=whole-read,filesetname=data,fd=2,iosize=16k
    flowop closefile name=close2,fd=2
    flowop createfile name=create,filesetname=new,fd=3
    flowop writewholefile name=whole-write,fd=3,iosize=8k
    flowop closefile name=close3,fd=3
    flowop appendfile name=append,filesetname=log,fd=4,iosize=1k
    flowop aiowrite name=aio,filesetname=data,fd=5,iosize=4k,random
    flowop aiowait name=aiowait
    flowop finishoncount name=done,value=110
  }
}
";

fn workload(dir: &Path, text: &str) -> PathBuf {
    let f = dir.join("w.f");
    std::fs::write(&f, text).unwrap();
    f
}

/// `iolab run` arguments for a short run in `data`, without samplers or database.
fn run_args(file: &str, data: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "run".into(),
        file.into(),
        "--dir".into(),
        data.display().to_string(),
        "--json".into(),
        "-q".into(),
        "--no-monitor".into(),
        "--no-db".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn run_json(file: &str, data: &Path, extra: &[&str]) -> serde_json::Value {
    let o = common::iolab()
        .args(run_args(file, data, extra))
        .output()
        .unwrap();
    assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// (name, ops, bytes) of every flowop.
fn counts(v: &serde_json::Value) -> Vec<(String, u64, u64)> {
    v["result"]["flowops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                f["ops"].as_u64().unwrap(),
                f["bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

const ENGINES: [&[&str]; 7] = [
    &["--engine", "psync"],
    &["--engine", "sync"],
    &["--engine", "mmap"],
    &["--engine", "io_uring"],
    &["--engine", "io_uring", "--iodepth", "4"],
    &["--engine", "null"],
    &["--engine", "null", "--iodepth", "3"],
];

#[test]
fn every_engine_counts_the_ops_and_bytes_psync_counts() {
    let dir = tempfile::tempdir().unwrap();
    let f = workload(dir.path(), DETERMINISTIC);
    let f = f.to_str().unwrap();
    let psync = run_json(f, dir.path(), &["--time", "60s"]);
    let want = counts(&psync);
    let get = |name: &str| want.iter().find(|c| c.0 == name).unwrap().clone();
    // Ten loops; each whole read is four full 16 KiB chunks, each seq-read 16 KiB (the fifth
    // of a loop's five hits the end of the 64 KiB file and wraps).
    assert_eq!(get("done").1, 10, "{want:?}");
    assert_eq!(get("whole-read"), ("whole-read".into(), 10, 10 * 65536));
    assert_eq!(get("seq-read"), ("seq-read".into(), 50, 40 * 16384));
    assert_eq!(get("whole-write"), ("whole-write".into(), 10, 10 * 32768));
    assert_eq!(get("aio"), ("aio".into(), 10, 10 * 4096));
    assert_eq!(psync["result"]["engine"]["name"], "psync");
    assert!(psync["result"]["iolab_cost"].is_null());
    for engine in ENGINES {
        let v = run_json(f, dir.path(), &[&["--time", "60s"], engine].concat());
        assert_eq!(counts(&v), want, "{engine:?}");
        assert_eq!(v["result"]["engine"]["name"], engine[1], "{engine:?}");
        let no_io = engine[1] == "null";
        assert_eq!(v["result"]["engine"]["caps"]["no_io"], no_io, "{engine:?}");
        assert_eq!(
            v["result"]["iolab_cost"].is_object(),
            no_io,
            "only an engine without I/O reports iolab's own cost: {engine:?}"
        );
    }
}

/// Calls of the workload's worker threads (those that take a private fd table), by name, and
/// every thread's calls as text.
struct Traced {
    workers: HashMap<String, usize>,
    all: String,
    stdout: Vec<u8>,
}

impl Traced {
    fn n(&self, call: &str) -> usize {
        self.workers.get(call).copied().unwrap_or(0)
    }
}

fn strace(args: &[String], calls: &str) -> Traced {
    let out = tempfile::NamedTempFile::new().unwrap();
    let o = iolab_testkit::bounded("strace", common::HUNG)
        .args(["-f", "-qq", "-e", &format!("trace=unshare,{calls}"), "-o"])
        .arg(out.path())
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let all = std::fs::read_to_string(out.path()).unwrap();
    let lines: Vec<(&str, &str)> = all
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(pid, call)| (pid, call.trim_start()))
        .collect();
    let workers: Vec<&str> = lines
        .iter()
        .filter(|(_, c)| c.starts_with("unshare(CLONE_FILES"))
        .map(|(p, _)| *p)
        .collect();
    assert!(!workers.is_empty(), "no worker thread traced: {all}");
    let mut counts = HashMap::new();
    for (pid, call) in &lines {
        if workers.contains(pid) && !call.starts_with("<...") {
            let name = call.split('(').next().unwrap_or("").to_string();
            *counts.entry(name).or_default() += 1;
        }
    }
    Traced {
        workers: counts,
        all,
        stdout: o.stdout,
    }
}

const DATA_CALLS: &str = "read,write,pread64,pwrite64,preadv,pwritev,readv,writev,lseek,\
                          openat,fsync,fdatasync,io_uring_setup,io_uring_enter";

fn webserver(data: &Path, extra: &[&str]) -> Vec<String> {
    run_args(
        "webserver",
        data,
        &[
            &["--time", "1s", "--set", "nfiles=20", "--set", "nthreads=2"],
            extra,
        ]
        .concat(),
    )
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn io_uring_moves_the_file_data_through_the_ring() {
    iolab_testkit::require_tool("strace");
    let dir = tempfile::tempdir().unwrap();
    let t = strace(
        &webserver(dir.path(), &["--engine", "io_uring"]),
        DATA_CALLS,
    );
    assert!(t.n("io_uring_enter") > 0, "{:?}", t.workers);
    // One ring per worker thread, whatever the number of files it opens.
    assert_eq!(t.n("io_uring_setup"), 2, "{:?}", t.workers);
    for call in ["read", "write", "pread64", "pwrite64", "readv", "writev"] {
        assert_eq!(t.n(call), 0, "{call} in a worker: {:?}", t.workers);
    }
    // Appends find the end of the log with lseek; the data goes through the ring.
    assert!(t.n("lseek") > 0, "{:?}", t.workers);
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn null_does_no_io_and_reports_iolabs_own_cost() {
    iolab_testkit::require_tool("strace");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let t = strace(&webserver(&data, &["--engine", "null"]), DATA_CALLS);
    for (call, n) in &t.workers {
        assert!(
            call == "unshare" || *n == 0,
            "{call} ×{n} in a worker: {:?}",
            t.workers
        );
    }
    // No thread touched the data directory: nothing was populated, opened or read.
    let data_s = data.display().to_string();
    assert!(
        !t.all.lines().any(|l| l.contains(&data_s)),
        "{}",
        t.all
            .lines()
            .filter(|l| l.contains(&data_s))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);
    let v: serde_json::Value = serde_json::from_slice(&t.stdout).unwrap();
    let cost = &v["result"]["iolab_cost"];
    let flowops = cost["flowops"].as_u64().unwrap();
    assert!(flowops > 0, "{cost}");
    // webserver's flowops are all counted in the IO summary, but for the composite.
    assert_eq!(flowops, v["result"]["io_summary"]["ops"].as_u64().unwrap());
    assert!(cost["cpu_ns_per_flowop"].as_f64().unwrap() > 0.0, "{cost}");
    assert!(cost["flowops_per_s"].as_f64().unwrap() > 0.0, "{cost}");

    // And in the human output, named as what it is.
    let mut args = webserver(&data, &["--engine", "null"]);
    args.retain(|a| a != "--json");
    let o = common::iolab().args(&args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = common::stdout(&o);
    assert!(text.contains(", null engine"), "{text}");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("iolab cost"))
        .unwrap_or_else(|| panic!("no iolab cost line: {text}"));
    assert!(
        line.contains("flowops/s") && line.contains("per flowop"),
        "{line}"
    );
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn psync_issues_the_syscalls_it_always_did() {
    iolab_testkit::require_tool("strace");
    let dir = tempfile::tempdir().unwrap();
    let f = workload(dir.path(), DETERMINISTIC);
    let args = run_args(f.to_str().unwrap(), dir.path(), &["--time", "60s"]);
    let t = strace(&args, DATA_CALLS);
    // rand-read 10 + seq-read 50 + whole-read 10 × (4 chunks + the read that finds the end).
    assert_eq!(t.n("pread64"), 110, "{:?}", t.workers);
    // rand-write 10 + whole-write 10 × 4 chunks.
    assert_eq!(t.n("pwrite64"), 50, "{:?}", t.workers);
    // Appends: lseek to the end, then write.
    assert_eq!((t.n("lseek"), t.n("write")), (10, 10), "{:?}", t.workers);
    assert_eq!(t.n("read"), 0, "{:?}", t.workers);
    assert_eq!(t.n("fsync"), 10, "{:?}", t.workers);
    // The aio flowops on their own ring: each aiowrite starts its write, each aiowait reaps.
    assert_eq!(t.n("io_uring_setup"), 1, "{:?}", t.workers);
    assert_eq!(t.n("io_uring_enter"), 20, "{:?}", t.workers);

    // On io_uring the same workload moves every byte through one ring, the aio writes too.
    let args = run_args(
        f.to_str().unwrap(),
        dir.path(),
        &["--time", "60s", "--engine", "io_uring"],
    );
    let t = strace(&args, DATA_CALLS);
    assert_eq!(t.n("io_uring_setup"), 1, "{:?}", t.workers);
    for call in ["read", "write", "pread64", "pwrite64"] {
        assert_eq!(t.n(call), 0, "{call}: {:?}", t.workers);
    }
}

#[test]
fn engine_options_that_do_not_go_together_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let refused = |extra: &[&str], text: &str, msg: &str, hint: &str| {
        let f = workload(dir.path(), text);
        let mut args = run_args(f.to_str().unwrap(), &data, extra);
        args.retain(|a| a != "--json" && a != "-q");
        let o = common::iolab().args(&args).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(msg), "{extra:?}: {err}");
        assert!(err.contains(hint), "{extra:?}: {err}");
        assert_eq!(
            std::fs::read_dir(&data).unwrap().count(),
            0,
            "{extra:?}: files were created"
        );
    };
    let reader = "define fileset name=fs,path=$dir,size=8k,entries=2,prealloc\n\
                  define process name=p { thread name=t { flowop read name=r,filesetname=fs,iosize=4k,directio } }\n";
    refused(
        &["--time", "1s", "--iodepth", "8"],
        reader,
        "--iodepth 8 needs --engine io_uring: the psync engine issues one request at a time",
        "add --engine io_uring",
    );
    refused(
        &["--time", "1s", "--engine", "sync", "--iodepth", "2"],
        reader,
        "the sync engine issues one request at a time",
        "drop --iodepth",
    );
    refused(
        &["--time", "1s", "--engine", "mmap"],
        reader,
        "flowop `r` asks for directio, which the mmap engine cannot do",
        "set directio off",
    );
    // An experiment takes its engine from its file, not from the command line.
    let o = common::iolab()
        .args(["run", "x.toml", "--engine", "null"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--engine/--iodepth (set workload.engine"),
        "{}",
        stderr(&o)
    );
    // What the engine can do runs.
    let ok = workload(
        dir.path(),
        &reader
            .replace(",directio", "")
            .replace("read name=r", "readwholefile name=r"),
    );
    let v = run_json(
        ok.to_str().unwrap(),
        &data,
        &["--time", "200ms", "--engine", "io_uring", "--iodepth", "8"],
    );
    assert_eq!(v["result"]["engine"]["iodepth"], 8);
    assert!(counts(&v)[0].1 > 0);
    // aiowrite's directio holds on mmap: its writes go to the thread's io_uring.
    let aio = workload(
        dir.path(),
        &reader
            .replace("read name=r", "aiowrite name=r")
            .replace(",directio", ",random,directio"),
    );
    let v = run_json(
        aio.to_str().unwrap(),
        &data,
        &["--time", "200ms", "--engine", "mmap"],
    );
    assert!(counts(&v)[0].1 > 0);
}

/// The built-in webserver (workloads/webserver.f, as `iolab run webserver` embeds it), ended
/// by work rather than by time: each worker thread stops after `loops` appends to the access
/// log (`set mode quit alldone`), so that what it writes is bounded however fast the machine
/// is. The file's `run` time is left as a cap only.
fn webserver_for_loops(loops: u32) -> String {
    let builtin = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../workloads/webserver.f"
    ));
    let append = "flowop appendfilerand name=access-log,filesetname=logs,iosize=$logsize,fd=2\n";
    assert!(builtin.contains(append), "webserver.f has no `{append}`");
    format!("set mode quit alldone\n{builtin}").replace(
        append,
        &format!("{append}    flowop finishoncount name=done,target=access-log,value={loops}\n"),
    )
}

/// The issue's acceptance on a real tmpfs: webserver on io_uring and on null.
#[test]
#[ignore = "needs root: mounts a tmpfs"]
fn webserver_runs_on_io_uring_and_null_on_tmpfs() {
    common::require_root();
    // Bounded by work, not by a run time: 1 s of appends filled a 64 MiB tmpfs on a fast
    // machine. 4 threads × 100 appends of at most 16 KiB ($logsize) is at most 6.25 MiB of
    // log beside 50 pages of ~16 KiB.
    let fs = common::Tmpfs::new("size=64m");
    let dir = tempfile::tempdir().unwrap();
    let file = workload(dir.path(), &webserver_for_loops(100));
    for engine in ["io_uring", "null"] {
        let v = run_json(
            file.to_str().unwrap(),
            fs.path(),
            &[
                "--set",
                "nfiles=50",
                "--set",
                "nthreads=4",
                "--engine",
                engine,
            ],
        );
        assert_eq!(v["result"]["engine"]["name"], engine);
        let ops = v["result"]["io_summary"]["ops"].as_u64().unwrap();
        assert!(ops > 0, "{engine}: {v}");
        assert_eq!(v["result"]["iolab_cost"].is_object(), engine == "null");
        // It ended by work: every thread's appends, no more.
        let appends = counts(&v).into_iter().find(|c| c.0 == "access-log");
        assert_eq!(appends.map(|c| c.1), Some(4 * 100), "{engine}: {v}");
    }
}
