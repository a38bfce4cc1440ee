//! `iolab trace --syscalls`: the command's system calls per kind — a table like
//! `strace -c`'s (calls, errors, bytes, the commonest sizes) and the tracer's cost, or JSON.

use std::io::{self, Write};

use iolab_systrace::{SyscallCounts, SyscallKind};
use iolab_util::units::{format_bytes, format_ns, thousands};
use serde::Serialize;

use super::{command_line, Ran};
use crate::output::json::{Document, Kind};
use crate::output::Formatter;

#[derive(Debug, Serialize)]
pub struct SyscallReport {
    #[serde(flatten)]
    pub ran: Ran,
    pub syscalls: SyscallCounts,
}

impl Document for SyscallReport {
    const KIND: Kind = Kind::Syscalls;
}

/// How many size buckets a row shows, commonest first.
const SIZES_SHOWN: usize = 3;

/// The readable table.
pub struct SyscallTable;

impl Formatter<SyscallReport> for SyscallTable {
    fn write(&self, r: &SyscallReport, out: &mut dyn Write) -> io::Result<()> {
        let c = &r.syscalls;
        writeln!(
            out,
            "iolab trace --syscalls: {} {}, {:.3} s",
            thousands(c.tasks),
            if c.tasks == 1 { "task" } else { "tasks" },
            c.duration_ns as f64 / 1e9
        )?;
        command_line(&r.ran.command, r.ran.status, out)?;
        writeln!(
            out,
            "  {:<20} {:>12} {:>9} {:>11}  sizes (count × power-of-two bucket)",
            "syscall", "calls", "errors", "bytes"
        )?;
        for k in &c.kinds {
            row(out, &k.name, k.calls, k.errors, k.bytes, &sizes(k))?;
        }
        row(out, "total", c.calls, c.errors, Some(c.bytes), "")?;
        if c.tasks_missed > 0 {
            writeln!(
                out,
                "  warning: {} tasks could not be followed; their calls are missing",
                thousands(c.tasks_missed)
            )?;
        }
        if let Some(cost) = &c.cost {
            writeln!(
                out,
                "  cost         +{} per counted call (getppid {} → {}), ≈ {} in all;",
                format_ns(cost.counted_call_ns.max(0.0)),
                format_ns(cost.base_ns),
                format_ns(cost.base_ns + cost.counted_call_ns.max(0.0)),
                format_ns(cost.estimate_ns(c.calls) as f64)
            )?;
            writeln!(
                out,
                "               +{} per call of every other task while it ran (BPF on sys_exit, {})",
                format_ns(cost.any_call_ns.max(0.0)),
                c.mechanism
            )?;
        }
        Ok(())
    }
}

fn row(
    out: &mut dyn Write,
    name: &str,
    calls: u64,
    errors: u64,
    bytes: Option<u64>,
    sizes: &str,
) -> io::Result<()> {
    let line = format!(
        "  {name:<20} {:>12} {:>9} {:>11}  {sizes}",
        thousands(calls),
        thousands(errors),
        bytes.map(format_bytes).unwrap_or_default()
    );
    writeln!(out, "{}", line.trim_end())
}

/// `64 × 1 MiB, 3 × 16 B`: the commonest power-of-two buckets of the sizes returned.
fn sizes(k: &SyscallKind) -> String {
    let Some(h) = &k.sizes else {
        return String::new();
    };
    let mut buckets = h.buckets.clone();
    buckets.sort_by(|a, b| b.count.cmp(&a.count).then(b.low.cmp(&a.low)));
    let mut parts: Vec<String> = buckets
        .iter()
        .take(SIZES_SHOWN)
        .map(|b| format!("{} × {}", thousands(b.count), format_bytes(b.low)))
        .collect();
    if buckets.len() > SIZES_SHOWN {
        parts.push("…".into());
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::json::Json;
    use iolab_blocktrace::{Bucket, Pow2Histogram};
    use iolab_systrace::TracerCost;

    fn sample() -> SyscallReport {
        let write = SyscallKind {
            name: "write".into(),
            nr: Some(1),
            calls: 67,
            bytes: Some((64 << 20) + 100),
            errors: 0,
            sizes: Some(Pow2Histogram {
                buckets: vec![
                    Bucket { low: 1, count: 1 },
                    Bucket { low: 32, count: 2 },
                    Bucket {
                        low: 1 << 20,
                        count: 64,
                    },
                    Bucket {
                        low: 1 << 30,
                        count: 1,
                    },
                ],
            }),
        };
        let openat = SyscallKind {
            name: "openat".into(),
            nr: Some(257),
            calls: 35,
            bytes: None,
            errors: 16,
            sizes: None,
        };
        SyscallReport {
            ran: Ran::new(vec!["dd".into(), "bs=1M".into()], None, false),
            syscalls: SyscallCounts {
                kinds: vec![write, openat],
                calls: 102,
                errors: 16,
                bytes: (64 << 20) + 100,
                tasks: 2,
                tasks_missed: 0,
                duration_ns: 312_000_000,
                cost: Some(TracerCost {
                    base_ns: 120.0,
                    any_call_ns: 80.0,
                    counted_call_ns: 82.0,
                }),
                mechanism: "tp_btf",
            },
        }
    }

    #[test]
    fn table() {
        let mut out = Vec::new();
        SyscallTable.write(&sample(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "iolab trace --syscalls: 2 tasks, 0.312 s");
        assert_eq!(lines[1], "  command      dd bs=1M (still running)");
        assert_eq!(
            lines[3],
            "  write                          67         0    64.0 MiB  64 × 1 MiB, 2 × 32 B, 1 × 1 GiB, …"
        );
        assert_eq!(lines[4], "  openat                         35        16");
        assert_eq!(
            lines[5],
            "  total                         102        16    64.0 MiB"
        );
        assert!(
            lines[6]
                .contains("+82 ns per counted call (getppid 120 ns → 202 ns), ≈ 8.36 µs in all"),
            "{text}"
        );
        assert!(lines[7].contains("(BPF on sys_exit, tp_btf)"), "{text}");
        assert!(!text.lines().any(|l| l.ends_with(' ')), "{text}");
    }

    #[test]
    fn json() {
        let mut out = Vec::new();
        Json.write(&sample(), &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["schema"], "iolab.syscalls/1");
        assert_eq!(v["command"][0], "dd");
        assert_eq!(v["exit_status"], serde_json::Value::Null);
        let w = &v["syscalls"]["kinds"][0];
        assert_eq!((&w["name"], &w["calls"]), (&"write".into(), &67.into()));
        assert_eq!(w["sizes"]["buckets"][2]["count"], 64);
        assert_eq!(v["syscalls"]["kinds"][1]["bytes"], serde_json::Value::Null);
        assert_eq!(v["syscalls"]["cost"]["counted_call_ns"], 82.0);
        assert!(v.get("status").is_none());
    }
}
