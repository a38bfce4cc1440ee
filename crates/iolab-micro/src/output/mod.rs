//! Formats for `iolab micro`: human (a readable summary), JSON, and Mobibench's result lines.

pub mod human;
pub mod json;
pub mod mobibench;

use std::io::{self, Write};

use iolab_kind::cli::Format;
use iolab_kind::output::{Formatter, SingleReport};

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

/// The throughput the run stored, in bytes per second (NaN where nothing was measured): its
/// `mib_per_s`, which the formats print as the database holds it.
fn bytes_per_s(report: &MicroReport) -> f64 {
    report.metric("mib_per_s") * 1048576.0
}

/// The worker threads' CPU time the run stored as `metric` (`cpu_usr_s`, `cpu_sys_s`), in
/// percent of one core over the stored elapsed time; NaN over no time.
fn pct_of_core(report: &MicroReport, metric: &str) -> f64 {
    let elapsed_s = report.metric("elapsed_s");
    if elapsed_s > 0.0 {
        report.metric(metric) / elapsed_s * 100.0
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

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
            system_cpu: Some((t(100, 1000), t(180, 1500))),
            ..iolab_kind::output::testing::report(result, record.metrics)
        }
    }

    fn text(format: &str, report: &MicroReport) -> String {
        iolab_kind::output::testing::written(|out| write(format, report, out))
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

    #[test]
    fn a_run_over_no_time_prints_what_the_database_holds() {
        for access in [Access::Write, Access::Randread] {
            let r = report(result(access, SyncMode::Normal, 0, 0));
            // Nothing was measured: the database holds NaN, not 0.
            assert!(r.metric("mib_per_s").is_nan() && r.metric("ops_per_s").is_nan());
            let human = text("human", &r);
            assert!(
                human.contains("  elapsed     0.000 s, 0 records\n"),
                "{human}"
            );
            assert!(
                human.contains("  throughput  – MiB/s (– B/s), – IOPS\n"),
                "{human}"
            );
            assert!(
                human.contains("  latency     mean –  p50 –  p90 –  p99 –  p99.9 –  max –\n"),
                "{human}"
            );
            assert!(
                human.contains("  cpu         usr –  sys – of one core (0.030 s usr"),
                "{human}"
            );
            let json: serde_json::Value = serde_json::from_str(&text("json", &r)).unwrap();
            let result = &json["result"];
            for field in ["bytes_per_s", "mib_per_s", "iops"] {
                assert_eq!(result[field], serde_json::Value::Null, "{field}: {json}");
            }
            assert_eq!(result["cpu"]["usr_pct_of_core"], serde_json::Value::Null);
            assert_eq!(result["cpu"]["sys_pct_of_core"], serde_json::Value::Null);
            let mobibench = text("mobibench", &r);
            let time = "[TIME] :       0 sec 000000us. \tnan B/sec, \tnan KB/sec, \tnan MB/sec.";
            let iops = if access.is_random() {
                " nan IOPS(4KB) "
            } else {
                ""
            };
            assert!(
                mobibench.contains(&format!("{time}{iops}\n")),
                "{mobibench}"
            );
        }
    }
}
