//! Crash safety: a writer killed with SIGKILL at random points leaves a database that opens,
//! passes SQLite's integrity check, and holds every run the writer reported written — each
//! one whole.
//!
//! The writer is this test executable run again with `CHILD_ENV` set and `--exact
//! crash_child`: it records runs in a loop and prints `written ID REP` after each commit.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use iolab_store::*;

use common::{assert_run_eq, record, Size};

const CHILD_ENV: &str = "IOLAB_STORE_CRASH_CHILD";
const KILLS: usize = 24;

/// Big enough that a transaction takes a while, so kills land inside commits too.
const SIZE: Size = Size {
    buckets: 100,
    intervals: 120,
    monitor_metrics: 6,
    samples: 150,
};

/// The writer. Does nothing unless the test below runs it.
#[test]
#[ignore = "child half of killed_writers_leave_finished_runs_intact, which runs it"]
fn crash_child() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let mut store = Store::open(&path).unwrap();
    let exp = match store.latest_experiment().unwrap() {
        Some(exp) => exp,
        None => store
            .create_experiment(&common::experiment("crash"))
            .unwrap(),
    };
    // A previous writer may have died between creating the experiment and its config.
    let config = match store.configs(exp).unwrap().first() {
        Some(c) => c.id,
        None => common::config(&mut store, exp, "x"),
    };
    let mut rep = store.resume_state(exp).unwrap()[0].next_repetition();
    let mut out = std::io::stdout().lock();
    loop {
        let id = store
            .record_run(&record(config, rep, RunStatus::Ok, SIZE))
            .unwrap();
        writeln!(out, "written {id} {rep}").unwrap();
        out.flush().unwrap();
        rep += 1;
    }
}

/// xorshift64*: enough randomness for kill times, no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

#[test]
fn killed_writers_leave_finished_runs_intact() {
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iolab.db");
    let mut reported: BTreeMap<RunId, u32> = BTreeMap::new();
    let mut kills_after_writes = 0;

    for round in 0..KILLS {
        let mut child = iolab_testkit::child_half("crash_child")
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let reader = thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let parsed = line.strip_prefix("written ").and_then(|rest| {
                    let (id, rep) = rest.split_once(' ')?;
                    Some((RunId(id.parse().ok()?), rep.parse::<u32>().ok()?))
                });
                if let Some(p) = parsed {
                    let _ = tx.send(p);
                }
            }
        });
        // One round in three kills at a random time after the start, which may fall in
        // process start-up, schema creation or the first run; the others wait for a first
        // run so that the kill lands among later ones, whatever the machine's load.
        let mut written = Vec::new();
        let after_start = round % 3 == 0;
        let delay = Duration::from_millis(rng.below(if after_start { 60 } else { 40 }));
        if !after_start {
            let first = rx
                .recv_timeout(Duration::from_secs(20))
                .expect("the writer wrote nothing within 20 s");
            written.push(first);
            kills_after_writes += 1;
        }
        thread::sleep(delay);
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        written.extend(rx.try_iter());
        eprintln!(
            "round {round}: killed {delay:?} after {}, {} runs reported",
            if after_start {
                "the start"
            } else {
                "the first run"
            },
            written.len()
        );
        reported.extend(written);

        let store = Store::open(&path).unwrap_or_else(|e| {
            panic!("round {round} (seed {seed}, killed after {delay:?}): reopening failed: {e}")
        });
        store
            .check_integrity()
            .unwrap_or_else(|e| panic!("round {round} (seed {seed}): {e}"));
        let Some(exp) = store.latest_experiment().unwrap() else {
            assert!(reported.is_empty());
            continue;
        };
        let runs = store.runs(exp).unwrap();
        let present: BTreeMap<RunId, u32> = runs.iter().map(|r| (r.id, r.repetition)).collect();
        for (id, rep) in &reported {
            assert_eq!(
                present.get(id),
                Some(rep),
                "round {round} (seed {seed}): run {id} was reported written but is gone"
            );
        }
        // Every run present is whole, reported or not (one may commit just before the kill).
        for r in &runs {
            let got = store.run(r.id).unwrap();
            assert_run_eq(&got, &record(r.config, r.repetition, RunStatus::Ok, SIZE));
        }
    }
    assert!(kills_after_writes >= KILLS / 2);
    assert!(
        reported.len() >= kills_after_writes,
        "{} runs",
        reported.len()
    );
}
