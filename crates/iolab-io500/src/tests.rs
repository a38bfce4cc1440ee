//! The io500 kind on real files: one process, and two ranks as threads of this process (a
//! real group: its barriers block) — every phase in IO500's order, what each moved, the
//! reordered reads, the find's count, the merge and the scores, the stonewall's counts
//! carried from the writes to the later phases, the caches' hook between phases, and the
//! data removed afterwards.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use iolab_kind::ranks::Threads;
use iolab_kind::record::testing;
use iolab_kind::{Event, NoSut, Origin, Ranks, RunCtx, RunFailure, RunHooks, Solo};
use iolab_store::{Metric, RunRecord};

use crate::kind::Io500Workload;
use crate::phases::{METRICS, PHASES};
use crate::{Io500Result, Io500Spec};

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("iolab-io500-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn entries(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Hooks that count what the runner is told.
#[derive(Default)]
struct Counted {
    between: u32,
    timed: (u32, u32),
    files: Vec<PathBuf>,
}

impl RunHooks for Counted {
    fn run_files(&mut self, files: Vec<PathBuf>) {
        self.files = files;
    }
    fn timed_start(&mut self) {
        self.timed.0 += 1;
    }
    fn timed_end(&mut self) {
        self.timed.1 += 1;
    }
    fn event(&mut self, _event: &Event<'_>) {}
    fn between_phases(&mut self) {
        self.between += 1;
    }
}

type Ran = (Result<Io500Result, RunFailure>, RunRecord, Counted);

fn run_one(w: &Io500Workload, dir: &Path, ranks: &dyn Ranks) -> Ran {
    let mut rec = testing::record();
    let mut hooks = Counted::default();
    let cancel = Arc::new(AtomicBool::new(false));
    let mut ctx = RunCtx {
        dir,
        seed: 5,
        number: 0,
        cancel: &cancel,
        hooks: &mut hooks,
        record: &mut rec,
        sut: &mut NoSut,
        ranks,
    };
    let out = iolab_kind::Workload::run(w, &mut ctx);
    (out, rec, hooks)
}

/// Runs `spec` on `size` ranks (one to a node) in `dir`.
fn on_ranks(size: usize, dir: &Path, spec: Io500Spec) -> Vec<Ran> {
    let (tx, rx) = std::sync::mpsc::channel();
    let w = Arc::new(Io500Workload::new(spec, Origin::File));
    for t in Threads::group(size, 1) {
        let (tx, w, dir) = (tx.clone(), Arc::clone(&w), dir.to_path_buf());
        std::thread::spawn(move || {
            let ran = run_one(&w, &dir, &t);
            if ran.0.is_err() {
                // What the runner does for a failed rank: the others end at their next sync.
                iolab_kind::Group::end(&t, true);
            }
            tx.send((t.rank(), ran)).unwrap();
        });
    }
    drop(tx);
    let mut out: Vec<(usize, Ran)> = (0..size)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(240))
                .expect("a rank hung")
        })
        .collect();
    out.sort_by_key(|(r, _)| *r);
    out.into_iter().map(|(_, r)| r).collect()
}

fn spec(dir: &Path, f: impl FnOnce(&mut Io500Spec)) -> Io500Spec {
    let mut s = Io500Spec::with_defaults(dir.to_path_buf(), 5);
    s.ior_easy_block = Some(4 << 20);
    s.ior_hard_segments = Some(20);
    s.mdtest_easy_items = Some(120);
    s.mdtest_hard_items = Some(120);
    f(&mut s);
    s
}

fn get(m: &[Metric], n: &str) -> f64 {
    m.iter()
        .find(|x| x.name == n)
        .unwrap_or_else(|| panic!("no {n}"))
        .value
}

/// mdtest-hard's files named `*01*`: file.mdtest.R.I of `ranks` ranks with `items` each.
fn named_01(ranks: u64, items: u64) -> usize {
    (0..ranks)
        .flat_map(|r| (0..items).map(move |i| format!("file.mdtest.{r}.{i}")))
        .filter(|n| n.contains("01"))
        .count()
}

#[test]
fn two_ranks_run_every_phase_and_the_merge_scores_them() {
    let _hang = iolab_testkit::timeout(300);
    let d = Dir::new("two");
    let s = spec(&d.0, |_| {});
    let ran = on_ranks(2, &d.0, s.clone());
    let mut recs = Vec::new();
    for (out, rec, hooks) in ran {
        let out = out.expect("the rank ran");
        assert_eq!(out.phases.len(), 12);
        let names: Vec<&str> = out.phases.iter().map(|p| p.def.name).collect();
        assert_eq!(names, PHASES.map(|p| p.name));
        // Caches dropped before every phase but the first (the timed region's start does).
        assert_eq!((hooks.between, hooks.timed), (11, (1, 1)));
        assert_eq!(hooks.files, [d.0.join("io500-data")]);
        testing::assert_declared(&rec, &METRICS);
        recs.push(rec);
    }
    let m = crate::merge::merge(&recs, s.stonewall);
    let easy = 2.0 * (4 << 20) as f64;
    assert_eq!(get(&m, "ior_easy_write.bytes"), easy);
    assert_eq!(get(&m, "ior_easy_read.bytes"), easy);
    let hard = 2.0 * 20.0 * 47008.0;
    assert_eq!(get(&m, "ior_hard_write.bytes"), hard);
    assert_eq!(get(&m, "ior_hard_read.bytes"), hard);
    // Each rank read the other's data, stamped as it wrote it.
    assert_eq!(get(&m, "ior_easy_read.stamp_errors"), 0.0);
    assert_eq!(get(&m, "ior_hard_read.stamp_errors"), 0.0);
    for p in [
        "mdtest_easy_write",
        "mdtest_easy_stat",
        "mdtest_easy_delete",
        "mdtest_hard_write",
        "mdtest_hard_stat",
        "mdtest_hard_read",
        "mdtest_hard_delete",
    ] {
        assert_eq!(get(&m, &format!("{p}.items")), 240.0, "{p}");
    }
    // The find looked at every file of the data directory (2 ior-easy files, the ior-hard
    // file, both mdtests' files) and found mdtest-hard's named *01*.
    assert_eq!(get(&m, "find.items"), 2.0 + 1.0 + 240.0 + 240.0);
    assert_eq!(get(&m, "find.found"), named_01(2, 120) as f64);
    // A phase's rate: every rank's work over the first start to the last end.
    for p in &PHASES {
        let (start, end) = recs.iter().fold((f64::INFINITY, 0f64), |(s, e), r| {
            let v = |n: &str| r.metrics.iter().find(|x| x.name == n).unwrap().value;
            (
                s.min(v(&format!("{}.start_s", p.key))),
                e.max(v(&format!("{}.end_s", p.key))),
            )
        });
        let work = get(&m, &format!("{}.{}", p.key, p.work()));
        let per = if p.rate() == "gib_per_s" {
            (1u64 << 30) as f64
        } else {
            1000.0
        };
        let want = work / per / (end - start);
        let got = get(&m, &format!("{}.{}", p.key, p.rate()));
        assert!(
            (got / want - 1.0).abs() < 1e-12,
            "{}: {got} vs {want}",
            p.name
        );
    }
    let rates = |unit: &str| -> Vec<f64> {
        PHASES
            .iter()
            .filter(|p| p.rate() == unit)
            .map(|p| get(&m, &format!("{}.{}", p.key, p.rate())))
            .collect()
    };
    let bw = rates("gib_per_s");
    let md = rates("kiops");
    assert_eq!((bw.len(), md.len()), (4, 8));
    let geo = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
    let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-9;
    assert!(close(get(&m, "io500.bw_gib_per_s"), geo(&bw)));
    assert!(close(get(&m, "io500.md_kiops"), geo(&md)));
    assert!(close(get(&m, "io500.score"), (geo(&bw) * geo(&md)).sqrt()));
    // A mini run's writes end long before IO500's 300 s: not a valid result.
    assert_eq!(get(&m, "io500.valid"), 0.0);
    assert_eq!(get(&m, "bytes"), 2.0 * (easy + hard));
    assert!(d.entries().is_empty(), "data left: {:?}", d.entries());
}

#[test]
fn one_process_records_its_own_scores() {
    let _hang = iolab_testkit::timeout(300);
    let d = Dir::new("solo");
    let (out, rec, hooks) = run_one(
        &Io500Workload::new(spec(&d.0, |_| {}), Origin::File),
        &d.0,
        &Solo,
    );
    let out = out.expect("the run ran");
    assert_eq!((out.rank, out.size), (0, 1));
    assert_eq!(hooks.between, 11);
    testing::assert_declared(&rec, &METRICS);
    let m = &rec.metrics;
    // One of each name.
    let mut names: Vec<&str> = m.iter().map(|x| x.name.as_str()).collect();
    names.sort_unstable();
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n, "a metric recorded twice");
    assert_eq!(get(m, "ior_easy_read.bytes"), (4 << 20) as f64);
    assert_eq!(get(m, "mdtest_hard_read.items"), 120.0);
    assert_eq!(get(m, "find.found"), named_01(1, 120) as f64);
    assert!(get(m, "io500.score") > 0.0);
    // What the merge of this one record gives is what the record holds.
    let merged = crate::merge::phases_and_scores(std::slice::from_ref(&rec), out.plan.stonewall);
    assert_eq!(get(&merged, "io500.score"), get(m, "io500.score"));
    assert!(d.entries().is_empty(), "data left: {:?}", d.entries());
}

#[test]
fn a_stonewall_carries_each_writes_count_to_the_later_phases() {
    let _hang = iolab_testkit::timeout(300);
    let d = Dir::new("stonewall");
    let s = spec(&d.0, |s| {
        s.stonewall = Duration::from_millis(1);
        s.ior_easy_block = Some(64 << 20);
        s.mdtest_easy_items = Some(5000);
        s.mdtest_hard_items = Some(5000);
    });
    let ran = on_ranks(2, &d.0, s.clone());
    let recs: Vec<RunRecord> = ran
        .into_iter()
        .map(|(o, r, _)| {
            o.expect("the rank ran");
            r
        })
        .collect();
    let m = crate::merge::merge(&recs, s.stonewall);
    // Whatever the stonewall stopped, the reads read and the later phases did what the
    // writes did (with wear-out every rank did as much as the busiest): the deletes left
    // nothing behind, or the trees' removal would have failed.
    assert_eq!(
        get(&m, "ior_easy_read.bytes"),
        get(&m, "ior_easy_write.bytes")
    );
    assert_eq!(
        get(&m, "ior_hard_read.bytes"),
        get(&m, "ior_hard_write.bytes")
    );
    assert!(get(&m, "ior_easy_write.bytes") <= 2.0 * (64 << 20) as f64);
    for w in ["mdtest_easy", "mdtest_hard"] {
        let made = get(&m, &format!("{w}_write.items"));
        assert!((2.0..=10000.0).contains(&made), "{w}: {made}");
        assert_eq!(get(&m, &format!("{w}_stat.items")), made, "{w}");
        assert_eq!(get(&m, &format!("{w}_delete.items")), made, "{w}");
    }
    assert_eq!(
        get(&m, "mdtest_hard_read.items"),
        get(&m, "mdtest_hard_write.items")
    );
    assert_eq!(get(&m, "io500.valid"), 0.0);
    assert!(d.entries().is_empty(), "data left: {:?}", d.entries());
}
