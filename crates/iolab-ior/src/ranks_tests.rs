//! The ior kind's multi-rank logic with ranks as threads of this process (a real group: its
//! barriers block), on real files: each rank's offsets, the merge, wear-out, stonewalled
//! reads and reordered reads.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use iolab_kind::ranks::Threads;
use iolab_kind::record::testing;
use iolab_kind::table::TableRun;
use iolab_kind::{NoSut, Origin, Ranks, RunCtx, RunFailure, Workload};
use iolab_store::{Metric, RunRecord};

use crate::kind::{IorTable, IorWorkload, METRICS};
use crate::run::{read_stamp, Pace};
use crate::{IorResult, IorSpec};

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("iolab-ior-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

type Ran = (Result<IorResult, RunFailure>, RunRecord);

/// Runs `spec` on `size` ranks (`per_node` to a node) in `dir`, slowed by `pace`.
fn on_ranks(size: usize, per_node: usize, dir: &Path, spec: IorSpec, pace: Pace) -> Vec<Ran> {
    let (tx, rx) = std::sync::mpsc::channel();
    let w = Arc::new(IorWorkload::new(spec, Origin::File));
    for t in Threads::group(size, per_node) {
        let (tx, w, pace, dir) = (tx.clone(), Arc::clone(&w), pace.clone(), dir.to_path_buf());
        std::thread::spawn(move || {
            let mut rec = testing::record();
            let cancel = Arc::new(AtomicBool::new(false));
            let mut ctx = RunCtx {
                dir: &dir,
                seed: 5,
                number: 0,
                cancel: &cancel,
                hooks: &mut (),
                record: &mut rec,
                sut: &mut NoSut,
                ranks: &t,
            };
            let out = if pace.0.is_empty() {
                w.run(&mut ctx)
            } else {
                run_paced(&w.spec, &mut ctx, pace)
            };
            if out.is_err() {
                // What the runner does for a failed rank: the others end at their next sync.
                iolab_kind::Group::end(&t, true);
            }
            let rank = t.rank();
            tx.send((rank, (out, rec))).unwrap();
        });
    }
    drop(tx);
    let mut out: Vec<(usize, Ran)> = (0..size)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(120))
                .expect("a rank hung")
        })
        .collect();
    out.sort_by_key(|(r, _)| *r);
    out.into_iter().map(|(_, r)| r).collect()
}

/// One rank's run as the workload's ([`IorWorkload`]), its transfers slowed by `pace`.
fn run_paced(spec: &IorSpec, run: &mut RunCtx<'_>, pace: Pace) -> Result<IorResult, RunFailure> {
    let mut spec = spec.clone();
    IorTable::place(&mut spec, run.dir, run.seed);
    let plan = spec.validate().expect("a valid spec");
    let out = crate::run::run_paced(&plan, run, pace)
        .map_err(|e| IorTable::failure(&e, &spec, Origin::File))?;
    IorTable::record(run.record, &out);
    Ok(out)
}

fn spec(dir: &Path, f: impl FnOnce(&mut IorSpec)) -> IorSpec {
    let mut s = IorSpec::with_defaults(dir.to_path_buf(), 5);
    s.transfer = Some(4096);
    s.block = Some(4 * 4096);
    s.segments = Some(3);
    s.keep = true;
    f(&mut s);
    s
}

fn get(m: &[Metric], n: &str) -> f64 {
    m.iter()
        .find(|x| x.name == n)
        .unwrap_or_else(|| panic!("no {n}"))
        .value
}

fn ok(ran: Vec<Ran>) -> (Vec<IorResult>, Vec<RunRecord>) {
    ran.into_iter()
        .map(|(o, r)| (o.expect("the rank ran"), r))
        .unzip()
}

#[test]
fn every_rank_writes_exactly_its_offsets_and_the_merge_adds_up() {
    let _hang = iolab_testkit::timeout(300);
    for size in [2, 4] {
        for fpp in [true, false] {
            let d = Dir::new(&format!("offsets-{size}-{fpp}"));
            let s = spec(&d.0, |s| s.file_per_process = Some(fpp));
            let (outs, recs) = ok(on_ranks(size, 1, &d.0, s, Pace::default()));
            for r in &recs {
                testing::assert_declared(r, METRICS);
            }
            let (t, b, segs) = (4096u64, 4 * 4096u64, 3u64);
            let per_rank = b * segs;
            let m = crate::merge::merge(&recs);
            let all = (per_rank * size as u64) as f64;
            assert_eq!(get(&m, "write.bytes"), all, "size {size} fpp {fpp}");
            assert_eq!(get(&m, "read.bytes"), all);
            assert_eq!(get(&m, "bytes"), 2.0 * all);
            assert_eq!(get(&m, "write.ops"), all / t as f64);
            assert_eq!(get(&m, "read.stamp_errors"), 0.0);
            // IOR's rate is all bytes over the first start to the last end.
            let wall = get(&m, "write.end_s") - get(&m, "write.start_s");
            let want = all / 1048576.0 / wall;
            assert!((get(&m, "write.mib_per_s") / want - 1.0).abs() < 1e-9);
            assert!(get(&m, "write.last_done_mib_per_s") == get(&m, "write.mib_per_s"));
            assert!(get(&m, "write.rank_min_mib_per_s") <= get(&m, "write.rank_max_mib_per_s"));
            // Each transfer carries its writer's rank and its offset, where IOR puts it.
            let files: Vec<(PathBuf, Option<usize>)> = if fpp {
                (0..size)
                    .map(|r| (outs[0].plan.file_of(r), Some(r)))
                    .collect()
            } else {
                vec![(outs[0].plan.file_of(0), None)]
            };
            for (f, owner) in files {
                let data = std::fs::read(&f).unwrap();
                let len = if fpp {
                    per_rank
                } else {
                    per_rank * size as u64
                };
                assert_eq!(data.len() as u64, len, "{}", f.display());
                for (i, chunk) in data.chunks(t as usize).enumerate() {
                    let off = i as u64 * t;
                    let writer = owner.map_or((off / b) as usize % size, |r| r);
                    assert_eq!(read_stamp(chunk), (off, Some(writer as u64)), "{off}");
                }
            }
        }
    }
}

#[test]
fn random_shared_offsets_fill_the_file_once() {
    let _hang = iolab_testkit::timeout(300);
    let d = Dir::new("random");
    let s = spec(&d.0, |s| s.random = true);
    let (outs, recs) = ok(on_ranks(3, 1, &d.0, s, Pace::default()));
    let m = crate::merge::merge(&recs);
    assert_eq!(get(&m, "write.bytes"), (3 * 3 * 4 * 4096) as f64);
    let data = std::fs::read(outs[0].plan.file_of(0)).unwrap();
    assert_eq!(data.len(), 3 * 3 * 4 * 4096);
    for (i, chunk) in data.chunks(4096).enumerate() {
        assert_eq!(read_stamp(chunk).0, i as u64 * 4096);
    }
    assert_eq!(get(&m, "read.stamp_errors"), 0.0);
}

#[test]
fn reordered_reads_read_the_data_of_the_rank_a_node_on() {
    let _hang = iolab_testkit::timeout(300);
    for (size, per_node, fpp) in [(2, 1, true), (4, 2, true), (4, 2, false)] {
        let d = Dir::new(&format!("reorder-{size}-{per_node}-{fpp}"));
        let s = spec(&d.0, |s| {
            s.file_per_process = Some(fpp);
            s.reorder = Some(true)
        });
        let (outs, _) = ok(on_ranks(size, per_node, &d.0, s, Pace::default()));
        for (r, o) in outs.iter().enumerate() {
            let from = (r + per_node) % size;
            let read = o.read.as_ref().unwrap();
            // The writer's rank as the data read says it.
            assert_eq!(read.first_writer, Some(from as u64), "rank {r} of {size}");
            assert_eq!(read.stamp_errors, 0);
        }
    }
}

#[test]
fn wear_out_ends_every_rank_with_the_busiest_ranks_count() {
    let _hang = iolab_testkit::timeout(300);
    let d = Dir::new("wearout");
    let s = spec(&d.0, |s| {
        s.block = Some(4096 * 2000);
        s.segments = Some(1);
        s.stonewall = Some(Duration::from_millis(200));
        s.wear_out = Some(true);
        s.file_per_process = Some(true);
    });
    // Rank 1 is five times slower than rank 0.
    let pace = Pace(vec![Duration::from_millis(1), Duration::from_millis(5)]);
    let (outs, recs) = ok(on_ranks(2, 1, &d.0, s, pace));
    let w: Vec<_> = outs.iter().map(|o| o.write.as_ref().unwrap()).collect();
    assert_eq!(w[0].ops, w[1].ops, "every rank did as much as the busiest");
    assert!(w[1].pairs_at_deadline < w[0].pairs_at_deadline);
    assert_eq!(
        w[0].ops, w[0].pairs_at_deadline,
        "the busiest stops at the deadline"
    );
    assert!(
        w[0].ops < 2000,
        "the deadline came before the end of the work"
    );
    for o in &outs {
        let r = o.read.as_ref().unwrap();
        assert_eq!(r.stamp_errors, 0);
    }
    let m = crate::merge::merge(&recs);
    assert_eq!(get(&m, "write.ops"), 2.0 * w[0].ops as f64);
}

#[test]
fn a_read_after_a_stonewalled_write_reads_what_its_source_wrote() {
    let _hang = iolab_testkit::timeout(300);
    let d = Dir::new("stonewall");
    let s = spec(&d.0, |s| {
        s.block = Some(4096 * 2000);
        s.segments = Some(1);
        s.stonewall = Some(Duration::from_millis(200));
        s.file_per_process = Some(true);
        s.reorder = Some(true);
    });
    let pace = Pace(vec![Duration::from_millis(1), Duration::from_millis(5)]);
    let (outs, _) = ok(on_ranks(2, 1, &d.0, s, pace));
    let w: Vec<u64> = outs.iter().map(|o| o.write.as_ref().unwrap().ops).collect();
    assert!(
        w[1] < w[0],
        "without wear-out each rank stops at the deadline"
    );
    for (r, o) in outs.iter().enumerate() {
        let read = o.read.as_ref().unwrap();
        // Rank r reads rank r+1's data: as much as that rank wrote (no read stonewall hit
        // first: reads are not paced slower than the writes were).
        let source_wrote = w[(r + 1) % 2];
        assert!(read.ops <= source_wrote);
        if !read.stonewalled {
            assert_eq!(read.ops, source_wrote, "rank {r}");
        }
        assert_eq!(read.stamp_errors, 0);
    }
}

#[test]
fn a_failing_rank_ends_the_others() {
    let _hang = iolab_testkit::timeout(300);
    let d = Dir::new("fail");
    // Read only, of files that are not there: every rank fails at its open, or at the next
    // sync after another's failure; none hangs.
    let s = spec(&d.0, |s| {
        s.write = false;
        s.file_per_process = Some(true)
    });
    let ran = on_ranks(2, 1, &d.0, s, Pace::default());
    for (o, _) in &ran {
        let e = o.as_ref().unwrap_err();
        assert!(
            e.message.contains("open") || e.message.contains("another rank"),
            "{}",
            e.message
        );
    }
}
