//! One run's record carried between processes: a run that executes in a container or a
//! virtual machine measures there and the runner stores it here. The record travels as a
//! one-run results database (its bytes, as hex text on a line-based channel) and is read
//! back with the store's own queries, so every metric, series, finding and output arrives
//! exactly as written, through the code that reads any database.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::error::{Result, StoreError};
use crate::store::Store;
use crate::types::{NewConfig, NewExperiment, RunRecord, Timestamp};

/// `record` as the bytes of a one-run database, written in (and removed from) `scratch`.
pub fn run_to_bytes(record: &RunRecord, scratch: &Path) -> Result<Vec<u8>> {
    let path = scratch_file(scratch);
    let bytes = (|| {
        let mut store = Store::open(&path)?;
        let experiment = store.create_experiment(&NewExperiment {
            name: "one run".into(),
            source: String::new(),
            spec: json!({}),
            seed: record.run.seed,
            created_at: record.run.started_at,
            iolab_version: String::new(),
            host: json!({}),
        })?;
        let config = store.add_config(&NewConfig {
            experiment,
            label: "run".into(),
            factors: Default::default(),
        })?;
        let mut rec = record.clone();
        rec.run.config = config;
        store.record_run(&rec)?;
        drop(store);
        std::fs::read(&path).map_err(|e| StoreError::Transfer {
            path: path.clone(),
            source: e,
        })
    })();
    remove(&path);
    bytes
}

/// The record [`run_to_bytes`] wrote (its `run.config` is 0: the caller's to set).
pub fn run_from_bytes(bytes: &[u8], scratch: &Path) -> Result<RunRecord> {
    let path = scratch_file(scratch);
    let record = (|| {
        std::fs::write(&path, bytes).map_err(|e| StoreError::Transfer {
            path: path.clone(),
            source: e,
        })?;
        let store = Store::open_existing(&path)?;
        let id = store
            .latest_experiment()?
            .and_then(|e| store.runs(e).ok())
            .and_then(|runs| runs.first().map(|r| r.id))
            .ok_or_else(|| StoreError::Transfer {
                path: path.clone(),
                source: std::io::Error::other("the run's database holds no run"),
            })?;
        Ok(store.run(id)?.into_record(crate::ConfigId(0)))
    })();
    remove(&path);
    record
}

/// Lower-case hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// The bytes of hex text; `None` if it is not hex.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    let t = text.as_bytes();
    if !t.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    t.chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

fn scratch_file(dir: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let now = Timestamp::now().0;
    dir.join(format!("iolab-run-{}-{now}-{n}.db", std::process::id()))
}

fn remove(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Finding, Metric, NewRun, RunOutput, RunStatus, Series, Severity};

    #[test]
    fn a_record_arrives_as_it_was_written() {
        let mut rec = RunRecord::new(NewRun {
            config: crate::ConfigId(0),
            repetition: 3,
            seed: 42,
            status: RunStatus::Ok,
            error: None,
            started_at: Timestamp(1_700_000_000_000_000_000),
            ended_at: Timestamp(1_700_000_002_000_000_000),
            elapsed_ns: 2_000_000_000,
            environment: json!({"kernel": "6.1.0", "environment": {"kind": "vm"}}),
        });
        rec.metrics.push(Metric::new("throughput", 1234.5, "op/s"));
        rec.metrics.push(Metric::new("latency_p50", f64::NAN, "ns"));
        rec.series.push(Series {
            name: "io".into(),
            width_ns: 1_000_000_000,
            ops: vec![10, 20],
            bytes: vec![40960, 81920],
        });
        rec.findings.push(Finding {
            check: "tcg".into(),
            severity: Severity::Warning,
            evidence: json!({"accel": "tcg"}),
            explanation: "functional, not performance".into(),
            fix: "run it under KVM".into(),
        });
        rec.outputs.push(RunOutput {
            name: "stdout".into(),
            content: vec![0, 159, 146, 150, b'\n'],
        });
        let dir = std::env::temp_dir();
        let bytes = run_to_bytes(&rec, &dir).unwrap();
        let text = to_hex(&bytes);
        let back = run_from_bytes(&from_hex(&text).unwrap(), &dir).unwrap();
        let metric = |name: &str| back.metrics.iter().find(|m| m.name == name).unwrap();
        assert_eq!(metric("throughput"), &rec.metrics[0]);
        assert!(metric("latency_p50").value.is_nan());
        assert_eq!(back.series, rec.series);
        assert_eq!(back.findings, rec.findings);
        assert_eq!(back.outputs, rec.outputs);
        assert_eq!(back.run, rec.run);
    }

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_hex() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(from_hex(&to_hex(&all)).unwrap(), all);
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex("zz"), None);
    }
}
