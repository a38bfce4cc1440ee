//! A reader sees whole runs while another connection writes (WAL).

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use iolab_store::*;

use crate::common::{self, assert_run_eq, record, Size};

const RUNS: u32 = 30;
const SIZE: Size = Size {
    buckets: 50,
    intervals: 60,
    monitor_metrics: 4,
    samples: 100,
};

#[test]
fn a_reader_sees_only_whole_runs_while_a_writer_writes() {
    let _hang = iolab_testkit::timeout(300);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iolab.db");
    let (tx, rx) = mpsc::channel();
    let writer_path = path.clone();
    let writer = thread::spawn(move || {
        let mut store = Store::open(&writer_path).unwrap();
        let exp = store.create_experiment(&common::experiment("e")).unwrap();
        let config = common::config(&mut store, exp, "x");
        tx.send((exp, config)).unwrap();
        for rep in 0..RUNS {
            store
                .record_run(&record(config, rep, RunStatus::Ok, SIZE))
                .unwrap();
            thread::sleep(Duration::from_millis(3));
        }
    });
    let (exp, config) = rx.recv().unwrap();
    let reader = Store::open(&path).unwrap();
    let mut seen = Vec::new();
    loop {
        let done = writer.is_finished();
        let runs = reader.runs(exp).unwrap();
        for r in &runs {
            let got = reader.run(r.id).unwrap();
            assert_run_eq(&got, &record(config, r.repetition, RunStatus::Ok, SIZE));
        }
        let n = reader.ok_metric_values(config, "ops").unwrap().len();
        assert!(n >= runs.len(), "a snapshot never goes backwards");
        seen.push(runs.len());
        if done {
            break;
        }
    }
    writer.join().unwrap();
    assert_eq!(*seen.last().unwrap(), RUNS as usize);
    assert!(
        seen.iter().any(|&n| n > 0 && n < RUNS as usize),
        "the reader read while the writer wrote: {seen:?}"
    );
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
}
