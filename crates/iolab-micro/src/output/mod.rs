//! Formats for `iolab micro`: human (a readable summary), JSON, and Mobibench's result lines.

pub mod human;
pub mod json;
pub mod mobibench;

use std::io::{self, Write};

use iolab_kind::cli::Format;
use iolab_kind::output::{Formatter, SingleReport};
use iolab_monitor::procstat::CpuPercent;

use crate::MicroResult;

/// A micro run as its formats see it.
pub type MicroReport = SingleReport<MicroResult>;

/// The stamp of `iolab micro --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.micro/1";

/// `iolab micro`'s formats, the default first.
pub const FORMATS: &[Format] = &[
    iolab_kind::cli::HUMAN,
    iolab_kind::cli::JSON,
    Format {
        name: "mobibench",
        help: "Mobibench's result lines ([CPU], [TIME], [CON SWITCHES])",
    },
];

/// Writes `report` in the format named `format` (one of [`FORMATS`]).
pub fn write(format: &str, report: &MicroReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<MicroReport> = match format {
        "json" => &json::Json,
        "mobibench" => &mobibench::Mobibench,
        _ => &human::Human,
    };
    f.write(report, out)
}

/// Numbers every format derives the same way.
pub struct Derived {
    pub elapsed_s: f64,
    pub bytes_per_s: f64,
    pub iops: f64,
    /// Worker CPU time over elapsed time, in percent of one core.
    pub usr_pct: f64,
    pub sys_pct: f64,
    pub system: Option<CpuPercent>,
}

/// The numbers a micro test's formats derive the same way.
pub fn derived(report: &MicroReport) -> Derived {
    let r = &report.result;
    let elapsed_s = r.elapsed_ns as f64 / 1e9;
    let per_s = |x: f64| if elapsed_s > 0.0 { x / elapsed_s } else { 0.0 };
    Derived {
        elapsed_s,
        bytes_per_s: per_s(r.bytes as f64),
        iops: per_s(r.ops as f64),
        usr_pct: per_s(r.usage.user_ns as f64 / 1e9) * 100.0,
        sys_pct: per_s(r.usage.sys_ns as f64 / 1e9) * 100.0,
        system: report.system_cpu.map(|(a, b)| b.percent_since(&a)),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::UNIX_EPOCH;

    use iolab_engine::stats::{Bucket, LatencyHistogram};
    use iolab_engine::usage::Usage;
    use iolab_monitor::procstat::CpuTimes;

    use super::*;
    use crate::{Access, MicroSpec, SyncMode, ThreadSummary};

    /// A run of `ops` records of 4 KiB (latencies from 200 µs up, 1 µs apart; per-record
    /// syncs from 100 µs up, 0.5 µs apart, when the sync mode has them) over `elapsed_ns`.
    fn result(access: Access, sync: SyncMode, elapsed_ns: u64, ops: u64) -> MicroResult {
        let mut s = MicroSpec::with_defaults(PathBuf::from("/d"), 1);
        s.access = access;
        s.sync = sync;
        let mut latency = LatencyHistogram::default();
        let mut sync_latency = LatencyHistogram::default();
        for i in 0..ops {
            latency.record(200_000 + i * 1000);
            if sync.record_sync().is_some() {
                sync_latency.record(100_000 + i * 500);
            }
        }
        let usage = Usage {
            user_ns: 30_000_000,
            sys_ns: 120_000_000,
            voluntary_switches: 12,
            involuntary_switches: 3,
            minor_faults: 7,
            major_faults: 1,
        };
        MicroResult {
            plan: s.validate().unwrap(),
            elapsed_ns,
            ops,
            bytes: ops * 4096,
            latency,
            sync_latency,
            final_sync_ns: 1_500_000,
            interval_ns: 1_000_000_000,
            intervals: vec![Bucket {
                ops,
                bytes: ops * 4096,
            }],
            usage,
            threads: vec![ThreadSummary {
                ops,
                bytes: ops * 4096,
                elapsed_ns,
                usage,
            }],
            files: vec![PathBuf::from("/d/iolab-micro.0")],
            reused_files: true,
            time_limited: false,
        }
    }

    /// The report of `result` with the metrics its run stores, the machine's CPUs 13.8%
    /// active over the run.
    fn report(result: MicroResult) -> MicroReport {
        let mut record = iolab_kind::record::testing::record();
        crate::kind::add_record(&mut record, &result);
        let t = |user, idle| CpuTimes {
            user,
            nice: 1,
            system: 20,
            idle,
            iowait: 5,
            irq: 0,
            softirq: 0,
            steal: 0,
            guest: 0,
            guest_nice: 0,
        };
        SingleReport {
            result,
            system_cpu: Some((t(100, 1000), t(180, 1500))),
            host: Default::default(),
            started_at: UNIX_EPOCH,
            findings: Vec::new(),
            system: Default::default(),
            metrics: record.metrics,
        }
    }

    fn text(format: &str, report: &MicroReport) -> String {
        let mut out = Vec::new();
        write(format, report, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Every format writes what the binary's formats wrote before they moved here, byte for
    /// byte (the files were written by them): the JSON's `result.latency` and
    /// `result.bytes_per_s`, which the device figures write, included.
    #[test]
    fn the_formats_write_what_they_always_wrote() {
        let golden = [
            (
                "randwrite-fsync",
                Access::Randwrite,
                SyncMode::Fsync,
                [
                    include_str!("golden/randwrite-fsync.human"),
                    include_str!("golden/randwrite-fsync.json"),
                    include_str!("golden/randwrite-fsync.mobibench"),
                ],
            ),
            (
                "read",
                Access::Read,
                SyncMode::Normal,
                [
                    include_str!("golden/read.human"),
                    include_str!("golden/read.json"),
                    include_str!("golden/read.mobibench"),
                ],
            ),
        ];
        for (name, access, sync, want) in golden {
            let r = report(result(access, sync, 1_234_567_891, 1000));
            for (format, want) in FORMATS.iter().zip(want) {
                let want = want.replace("@VERSION@", env!("CARGO_PKG_VERSION"));
                assert_eq!(text(format.name, &r), want, "{name} {}", format.name);
            }
            // What a reader of saved results takes back: the device's figures.
            let doc: serde_json::Value = serde_json::from_str(&text("json", &r)).unwrap();
            let f = iolab_kind::output::DeviceFigures::of(&doc["result"]).unwrap();
            assert_eq!(f.latency, r.result.latency.summary());
            assert_eq!(f.bytes_per_s, 4096.0 * 1000.0 / 1.234567891);
        }
    }
}
