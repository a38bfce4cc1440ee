//! Runs of the mdtest kind on real files, with ranks as threads ([`Threads`]): the layout
//! mdtest makes, counts that add up, neighbours' items, stonewalling, and a failing rank.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use iolab_kind::ranks::Threads;
use iolab_kind::record::testing;
use iolab_kind::{Group, NoSut, Origin, Ranks, RunCtx, RunFailure, Solo, Workload};
use iolab_store::RunRecord;

use crate::{MdtestSpec, MdtestWorkload, Phase, TEST_DIR};

type Outcome = Result<(crate::MdtestResult, RunRecord), RunFailure>;

fn run_on(ranks: &dyn Ranks, spec: &MdtestSpec, dir: &Path) -> Outcome {
    let w = MdtestWorkload::new(spec.clone(), Origin::File);
    let cancel = Arc::new(AtomicBool::new(false));
    let mut record = testing::record();
    let out = w.run(&mut RunCtx {
        dir,
        seed: 1,
        number: 0,
        cancel: &cancel,
        hooks: &mut (),
        record: &mut record,
        sut: &mut NoSut,
        ranks,
    })?;
    Ok((out, record))
}

/// Every rank runs `spec` in `dir` on its own thread, then ends the run as the runner does
/// (a failed rank's end tells the others); a rank that hangs fails the test.
fn on_threads(size: usize, spec: &MdtestSpec, dir: &Path) -> Vec<Outcome> {
    let (tx, rx) = std::sync::mpsc::channel();
    for t in Threads::group(size, 1) {
        let (tx, spec, dir) = (tx.clone(), spec.clone(), dir.to_path_buf());
        std::thread::spawn(move || {
            t.reset();
            let out = run_on(&t, &spec, &dir);
            t.end(out.is_err());
            tx.send((t.rank(), out)).unwrap();
        });
    }
    drop(tx);
    let mut out: Vec<(usize, Outcome)> = (0..size)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(120))
                .expect("a rank hung")
        })
        .collect();
    out.sort_by_key(|(r, _)| *r);
    out.into_iter().map(|(_, o)| o).collect()
}

fn spec(items: u64) -> MdtestSpec {
    let mut s = MdtestSpec::with_defaults("/unused".into(), 1);
    s.items = items;
    s.files_only = true;
    s
}

fn get(rec: &RunRecord, name: &str) -> f64 {
    rec.metrics
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .value
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn creates_leave_each_ranks_files_where_mdtest_puts_them() {
    for (size, unique, stride) in [(2, true, 0), (4, true, 1), (4, false, 0), (2, false, 1)] {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = spec(7);
        s.unique_dir = unique;
        s.stride = Some(stride);
        s.phases = 0b0001;
        let out = on_threads(size, &s, tmp.path());
        let test_dir = tmp.path().join(TEST_DIR);
        let mut total = 0.0;
        for (r, o) in out.iter().enumerate() {
            let (res, rec) = o.as_ref().unwrap();
            assert_eq!(res.phases.len(), 1);
            total += get(rec, "create.items");
            let tree = if unique {
                // mdtest creates in the tree of the rank a stride on, naming the files after
                // itself.
                format!("mdtest_tree.{}.0", (r as u64 + stride) % size as u64)
            } else {
                "mdtest_tree.0".into()
            };
            let have = files_in(&test_dir.join(&tree));
            for i in 0..7 {
                let f = format!("file.mdtest.{r}.{i}");
                assert!(have.contains(&f), "{size} ranks: no {tree}/{f} in {have:?}");
            }
        }
        assert_eq!(total, (7 * size) as f64, "{size} ranks");
        let trees = files_in(&test_dir);
        let want: Vec<String> = if unique {
            (0..size).map(|r| format!("mdtest_tree.{r}.0")).collect()
        } else {
            vec!["mdtest_tree.0".into()]
        };
        assert_eq!(trees, want);
    }
}

#[test]
fn a_whole_run_reads_the_neighbours_files_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = spec(20);
    s.unique_dir = true;
    s.stride = Some(1);
    s.write_bytes = 3901;
    s.read_bytes = 3901;
    let out = on_threads(4, &s, tmp.path());
    for o in &out {
        let (res, rec) = o.as_ref().unwrap();
        let phases: Vec<Phase> = res.phases.iter().map(|p| p.phase).collect();
        assert_eq!(
            phases,
            [Phase::Create, Phase::Stat, Phase::Read, Phase::Remove]
        );
        assert_eq!(get(rec, "read.items"), 20.0);
        assert_eq!(get(rec, "bytes"), 2.0 * 20.0 * 3901.0);
    }
    assert!(
        files_in(tmp.path()).is_empty(),
        "the test directory is gone"
    );
}

#[test]
fn stat_with_a_stride_looks_at_the_neighbours_items() {
    for stride in [0, 1] {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = spec(5);
        s.stride = Some(stride);
        s.phases = 0b0001;
        on_threads(2, &s, tmp.path())
            .into_iter()
            .for_each(|o| drop(o.unwrap()));
        // Rank 1's files go: whoever stats them fails.
        let tree = tmp.path().join(TEST_DIR).join("mdtest_tree.0");
        for i in 0..5 {
            std::fs::remove_file(tree.join(format!("file.mdtest.1.{i}"))).unwrap();
        }
        s.phases = 0b0010;
        let out = on_threads(2, &s, tmp.path());
        let failed = out
            .iter()
            .position(|o| {
                o.as_ref()
                    .is_err_and(|e| e.message.contains("file.mdtest.1.0"))
            })
            .expect("a rank failed on rank 1's file");
        // Stride 0: rank 1 stats its own; stride 1: rank 0 stats rank 1's.
        assert_eq!(failed, if stride == 0 { 1 } else { 0 }, "stride {stride}");
        assert!(
            out.iter().all(Result::is_err),
            "every rank's run ends in error"
        );
    }
}

#[test]
fn a_failing_rank_ends_every_ranks_run_without_a_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = spec(10);
    s.unique_dir = true;
    // A directory where rank 1's fourth file is to be made.
    let tree = tmp.path().join(TEST_DIR).join("mdtest_tree.1.0");
    std::fs::create_dir_all(tree.join("file.mdtest.1.3")).unwrap();
    let out = on_threads(4, &s, tmp.path());
    let e = out[1].as_ref().unwrap_err();
    assert!(e.message.contains("cannot create the file"), "{e:?}");
    assert!(e.message.contains("file.mdtest.1.3"), "{e:?}");
    for (r, o) in out.iter().enumerate() {
        assert!(o.is_err(), "rank {r} ended well");
    }
}

#[test]
fn a_missing_target_fails_every_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let gone = tmp.path().join("gone");
    let out = on_threads(2, &spec(3), &gone);
    assert!(out[0]
        .as_ref()
        .is_err_and(|e| e.message.contains("cannot make the directory")));
    assert!(out[1].is_err());
}

#[test]
fn after_a_stonewall_every_rank_does_the_most_items_any_rank_made() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = spec(20_000);
    s.stonewall = Some(Duration::from_millis(1));
    let out = on_threads(4, &s, tmp.path());
    let counts: Vec<(f64, f64, f64)> = out
        .iter()
        .map(|o| {
            let (_, rec) = o.as_ref().unwrap();
            (
                get(rec, "create.items"),
                get(rec, "stat.items"),
                get(rec, "remove.items"),
            )
        })
        .collect();
    let (c, _, _) = counts[0];
    assert!(counts.iter().all(|&x| x == (c, c, c)), "{counts:?}");
    let most = out
        .iter()
        .map(|o| get(&o.as_ref().unwrap().1, "create.stonewall_items"))
        .fold(0.0, f64::max);
    assert_eq!(
        c, most,
        "everyone went on to the most done at the stonewall"
    );
    assert!(files_in(tmp.path()).is_empty());
}

#[test]
fn a_run_records_every_declared_metric() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = spec(50);
    s.files_only = false;
    s.write_bytes = 100;
    s.read_bytes = 100;
    s.stonewall = Some(Duration::from_secs(600));
    let (res, rec) = run_on(&Solo, &s, tmp.path()).unwrap();
    assert_eq!(res.phases.len(), 7);
    testing::assert_declared(&rec, &crate::METRICS);
    // One rank: its aggregates are its own figures.
    assert_eq!(
        get(&rec, "create.agg_ops_per_s"),
        get(&rec, "create.ops_per_s")
    );
    assert_eq!(get(&rec, "ops"), 7.0 * 50.0);
    assert_eq!(rec.series.len(), 7);
    assert_eq!(
        rec.series[3].ops.iter().sum::<u64>(),
        50,
        "the progress series counts every item"
    );
}

#[test]
fn the_merge_of_ranks_adds_their_items_up() {
    let tmp = tempfile::tempdir().unwrap();
    let out = on_threads(2, &spec(30), tmp.path());
    let recs: Vec<RunRecord> = out.into_iter().map(|o| o.unwrap().1).collect();
    let merged = crate::merge::merge(&recs);
    let m = |n: &str| merged.iter().find(|m| m.name == n).unwrap().value;
    let last_end = recs
        .iter()
        .map(|r| get(r, "create.end_s"))
        .fold(0.0, f64::max);
    let first_start = recs
        .iter()
        .map(|r| get(r, "create.start_s"))
        .fold(f64::INFINITY, f64::min);
    let want = 60.0 / (last_end - first_start);
    assert!((m("create.agg_ops_per_s") - want).abs() < 1e-9 * want);
    assert!(m("create.rank_min_ops_per_s") <= m("create.rank_max_ops_per_s"));
}
