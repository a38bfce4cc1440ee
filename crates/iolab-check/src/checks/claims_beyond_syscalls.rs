//! `claims-beyond-syscalls`: a tool says it read or wrote more than its system calls moved.
//!
//! Needs: `app_read_bytes` / `app_write_bytes` (what the tool claims: the `exec` kind) and
//! `syscall_read_bytes` / `syscall_write_bytes` (the syscall view, `--trace-syscalls`, over
//! the same timed region and the tool's whole process tree). Silent when `syscall_async_io`
//! (io_uring, mmap'd files: their bytes move without read/write calls) and for iolab's own
//! kinds (`app_claimed` not `Some(true)`: iolab counts what its calls returned).
//!
//! Fires (warning) when, for reads or writes, claimed > syscalls × (1 + [`SLACK`]) +
//! [`SLACK_BYTES`]: the tool's arithmetic (a unit, a scale), or a timing window that its
//! numbers do not share with its calls.

use crate::format::ratio;
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "claims-beyond-syscalls";

/// A tool's own counting may round (fio's KiB, a last partial block) or include a ramp the
/// tracer saw too: 10 % is beyond any rounding, and a unit mistake (kB vs KiB: 2.4 %) is
/// caught by the adapters' unit checks, not here.
pub const SLACK: f64 = 0.10;

/// Small claims are not worth a warning: a megabyte of difference is a file's metadata or a
/// warm-up the tool counted.
pub const SLACK_BYTES: u64 = 1 << 20;

/// See the [module documentation](self).
pub struct ClaimsBeyondSyscalls;

impl Check for ClaimsBeyondSyscalls {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        if f.app_claimed != Some(true) || f.syscall_async_io == Some(true) {
            return None;
        }
        let beyond = |claimed: Option<u64>, moved: Option<u64>| {
            let (c, m) = (claimed?, moved?);
            (c as f64 > m as f64 * (1.0 + SLACK) + SLACK_BYTES as f64).then_some((c, m))
        };
        let (dir, (claimed, moved)) = beyond(f.app_write_bytes, f.syscall_write_bytes)
            .map(|x| ("wrote", x))
            .or_else(|| beyond(f.app_read_bytes, f.syscall_read_bytes).map(|x| ("read", x)))?;
        let times = ratio(claimed, moved);
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "direction": if dir == "wrote" { "write" } else { "read" },
                "claimed_bytes": claimed,
                "syscall_bytes": moved,
                "ratio": times,
                "slack": SLACK,
            }),
            explanation: format!(
                "The tool says it {dir} {}, but the system calls of its processes moved {}{}: \
                 its number is not what its calls did — its arithmetic or units, or a timing \
                 window its calls do not share (work counted before or after what was traced).",
                format_bytes(claimed),
                format_bytes(moved),
                times.map_or(String::new(), |r| format!(" ({r:.2}× less)")),
            ),
            fix: "Compare the tool's raw output (`iolab reparse`, the stored stdout) with the \
                  syscall view; quote the syscall or device figures rather than the claim."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev, MIB};

    fn claimed(read: u64, write: u64, sys_read: u64, sys_write: u64) -> RunFacts {
        let mut f = testutil::cold_read();
        f.app_claimed = Some(true);
        f.app_read_bytes = Some(read);
        f.app_write_bytes = Some(write);
        f.syscall_read_bytes = Some(sys_read);
        f.syscall_write_bytes = Some(sys_write);
        f
    }

    #[test]
    fn fires_when_a_tool_claims_more_than_its_calls_moved() {
        let x = ClaimsBeyondSyscalls
            .check(&claimed(0, 512 * MIB, 0, 256 * MIB))
            .expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "direction"), "write");
        assert_eq!(ev(&x, "claimed_bytes"), 512 * MIB);
        assert!(x.explanation.contains("512 MiB"), "{}", x.explanation);
        assert!(x.explanation.contains("2.00× less"), "{}", x.explanation);
        let r = ClaimsBeyondSyscalls
            .check(&claimed(100 * MIB, 0, 10 * MIB, 0))
            .expect("fires on reads");
        assert_eq!(ev(&r, "direction"), "read");
    }

    #[test]
    fn silent_within_the_slack_for_async_io_and_for_iolabs_own_counts() {
        assert_eq!(
            ClaimsBeyondSyscalls.check(&claimed(0, 105 * MIB, 0, 100 * MIB)),
            None
        );
        let mut f = claimed(0, 512 * MIB, 0, 256 * MIB);
        f.syscall_async_io = Some(true);
        assert_eq!(ClaimsBeyondSyscalls.check(&f), None);
        f.syscall_async_io = None;
        f.app_claimed = Some(false);
        assert_eq!(ClaimsBeyondSyscalls.check(&f), None);
        f.app_claimed = Some(true);
        f.syscall_write_bytes = None;
        assert_eq!(ClaimsBeyondSyscalls.check(&f), None);
    }
}
