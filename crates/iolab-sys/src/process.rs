//! Who a process is, beyond its PID: the boot it runs in (`/proc/sys/kernel/random/boot_id`)
//! and its start time in clock ticks since boot (field 22 of `/proc/PID/stat`). A PID is
//! reused once its process ends; the triple is not. Used to tell an experiment whose process
//! is still running from one whose process was killed (`kill -9`, the OOM killer, a power
//! cut), which cannot say so itself.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// One process, recognisable after its PID has been reused or the machine rebooted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessIdentity {
    /// The host's name (`uname -n`), to leave processes of other machines undecided.
    pub host: String,
    /// The kernel's boot id: another value means the machine was rebooted since.
    pub boot_id: String,
    pub pid: u32,
    /// Start time in clock ticks after boot.
    pub start_ticks: u64,
}

/// Whether the process a [`ProcessIdentity`] names is still running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    /// It ended (its PID is free or belongs to another process), or the machine rebooted.
    Gone,
    /// Another machine's process (an imported database): this one cannot tell.
    Unknown,
}

impl ProcessIdentity {
    /// The calling process.
    pub fn current() -> Option<Self> {
        let pid = std::process::id();
        Some(Self {
            host: hostname()?,
            boot_id: boot_id()?,
            pid,
            start_ticks: start_ticks(pid)?,
        })
    }

    /// Whether it still runs, judged on this machine.
    pub fn liveness(&self) -> Liveness {
        let (Some(host), Some(boot)) = (hostname(), boot_id()) else {
            return Liveness::Unknown;
        };
        if host != self.host {
            return Liveness::Unknown;
        }
        if boot != self.boot_id {
            return Liveness::Gone;
        }
        match start_ticks(self.pid) {
            Some(t) if t == self.start_ticks => Liveness::Alive,
            _ => Liveness::Gone,
        }
    }
}

fn hostname() -> Option<String> {
    read_trimmed(Path::new("/proc/sys/kernel/hostname"))
}

fn boot_id() -> Option<String> {
    read_trimmed(Path::new("/proc/sys/kernel/random/boot_id"))
}

fn read_trimmed(p: &Path) -> Option<String> {
    let s = std::fs::read_to_string(p).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// Field 22 (`starttime`) of `/proc/PID/stat`; `None` when there is no such process.
fn start_ticks(pid: u32) -> Option<u64> {
    parse_start_ticks(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The command name (field 2) is in parentheses and may hold spaces and `)`: count fields
/// from the last `)`.
fn parse_start_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // After ")": field 3 (state) is the first; starttime is field 22.
    rest.split_whitespace().nth(22 - 3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_ticks_counts_fields_after_the_last_parenthesis() {
        let stat = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 \
                    1000 10 18446744073709551615";
        assert_eq!(parse_start_ticks(stat), Some(98765));
        assert_eq!(parse_start_ticks("1 (x) S 1"), None);
        assert_eq!(parse_start_ticks("garbage"), None);
    }

    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not() {
        let me = ProcessIdentity::current().expect("/proc is mounted");
        assert_eq!(me.liveness(), Liveness::Alive);
        let earlier = ProcessIdentity {
            start_ticks: me.start_ticks.wrapping_sub(1),
            ..me.clone()
        };
        assert_eq!(earlier.liveness(), Liveness::Gone);
        let rebooted = ProcessIdentity {
            boot_id: "another-boot".into(),
            ..me.clone()
        };
        assert_eq!(rebooted.liveness(), Liveness::Gone);
        let elsewhere = ProcessIdentity {
            host: format!("{}-not-here", me.host),
            ..me
        };
        assert_eq!(elsewhere.liveness(), Liveness::Unknown);
    }

    #[test]
    fn an_ended_child_is_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let id = ProcessIdentity {
            start_ticks: start_ticks(pid).unwrap_or(0),
            pid,
            ..ProcessIdentity::current().unwrap()
        };
        child.wait().unwrap();
        assert_eq!(id.liveness(), Liveness::Gone);
    }
}
