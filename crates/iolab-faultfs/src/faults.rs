//! The faults a test arms: which calls they match, when they start, and what they do. Kept
//! apart from the filesystem so that every operation asks one place.

use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The calls a fault can hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `read` (and every way the kernel reads a file's pages for the process).
    Read,
    /// `write` (and the write-back of a shared mapping).
    Write,
    /// `fsync` and `fdatasync` of a file, and `fsync` of a directory.
    Fsync,
}

/// What a fault does to a call it hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The call fails with this errno (`libc::EIO`, `libc::ENOSPC`, …).
    Fail(i32),
    /// The call blocks until the faults are cleared ([`crate::FaultFs::clear_faults`]: it then
    /// goes through), or until a power cut or the unmount (it then fails with EIO).
    Stall,
}

/// A fault: the calls `op` on files whose path (relative to the mount's root) contains
/// `path_contains` pass `after` times, then every later one meets `action`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub op: Op,
    /// A substring of the path under the mount point; empty matches every file.
    pub path_contains: String,
    /// Matching calls that go through before the fault starts.
    pub after: u64,
    pub action: Action,
}

impl Fault {
    /// Every matching call from the first on.
    pub fn new(op: Op, path_contains: &str, action: Action) -> Fault {
        Fault {
            op,
            path_contains: path_contains.to_string(),
            after: 0,
            action,
        }
    }

    /// The first `n` matching calls go through.
    pub fn after(mut self, n: u64) -> Fault {
        self.after = n;
        self
    }

    fn matches(&self, op: Op, path: &Path) -> bool {
        self.op == op
            && (self.path_contains.is_empty()
                || path.to_string_lossy().contains(&self.path_contains))
    }
}

/// One call a fault hit, as the test may want to check it was the one it meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub op: Op,
    /// Relative to the mount's root.
    pub path: String,
    pub action: Action,
}

#[derive(Debug, Default)]
struct State {
    /// Each fault with the matching calls it has seen.
    rules: Vec<(Fault, u64)>,
    /// Bumped to release the stalled calls.
    generation: u64,
    stalled: usize,
    hits: Vec<Hit>,
    /// Calls seen, by op (read, write, fsync).
    calls: [u64; 3],
    /// After a power cut or during the unmount: every call fails.
    dead: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Faults {
    state: Mutex<State>,
    changed: Condvar,
}

impl Faults {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere cannot leave the plain counters here half-updated.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn add(&self, fault: Fault) {
        self.lock().rules.push((fault, 0));
    }

    /// Removes every fault and lets the stalled calls go through.
    pub(crate) fn clear(&self) {
        let mut s = self.lock();
        s.rules.clear();
        s.generation += 1;
        self.changed.notify_all();
    }

    /// From now on every call fails with EIO, the stalled ones too.
    pub(crate) fn kill(&self) {
        let mut s = self.lock();
        s.dead = true;
        s.generation += 1;
        self.changed.notify_all();
    }

    pub(crate) fn is_dead(&self) -> bool {
        self.lock().dead
    }

    pub(crate) fn stalled(&self) -> usize {
        self.lock().stalled
    }

    pub(crate) fn calls(&self, op: Op) -> u64 {
        self.lock().calls[op as usize]
    }

    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.lock().hits.clone()
    }

    /// Waits until at least one call is stalled; false if `timeout` passed first.
    pub(crate) fn wait_stalled(&self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        let mut s = self.lock();
        while s.stalled == 0 {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            s = self
                .changed
                .wait_timeout(s, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// Whether the call `op` on `path` goes through (`Ok`) or fails with an errno; a stalled
    /// call returns only once released.
    pub(crate) fn check(&self, op: Op, path: &Path) -> Result<(), i32> {
        let mut s = self.lock();
        if s.dead {
            return Err(libc::EIO);
        }
        s.calls[op as usize] += 1;
        let mut action = None;
        for (fault, seen) in s.rules.iter_mut() {
            if fault.matches(op, path) {
                *seen += 1;
                if *seen > fault.after && action.is_none() {
                    action = Some(fault.action);
                }
            }
        }
        let Some(action) = action else {
            return Ok(());
        };
        s.hits.push(Hit {
            op,
            path: path.to_string_lossy().into_owned(),
            action,
        });
        match action {
            Action::Fail(errno) => Err(errno),
            Action::Stall => {
                let generation = s.generation;
                s.stalled += 1;
                self.changed.notify_all();
                while s.generation == generation {
                    s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                s.stalled -= 1;
                if s.dead {
                    Err(libc::EIO)
                } else {
                    Ok(())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_fault_starts_after_its_count_and_only_for_its_op_and_files() {
        let f = Faults::default();
        f.add(Fault::new(Op::Write, "cfg-a", Action::Fail(libc::ENOSPC)).after(2));
        let a = Path::new("cfg-a/f0");
        let b = Path::new("cfg-b/f0");
        assert_eq!(f.check(Op::Write, a), Ok(()));
        assert_eq!(f.check(Op::Read, a), Ok(()), "reads are not counted");
        assert_eq!(f.check(Op::Write, b), Ok(()), "other files are not counted");
        assert_eq!(f.check(Op::Write, a), Ok(()));
        assert_eq!(f.check(Op::Write, a), Err(libc::ENOSPC));
        assert_eq!(f.check(Op::Write, a), Err(libc::ENOSPC), "and stays");
        assert_eq!(f.check(Op::Write, b), Ok(()));
        assert_eq!(f.hits().len(), 2);
        assert_eq!(f.calls(Op::Write), 6);
        assert_eq!(f.calls(Op::Read), 1);
        assert_eq!(f.hits()[0].path, "cfg-a/f0");
        f.clear();
        assert_eq!(f.check(Op::Write, a), Ok(()));
    }

    #[test]
    fn a_stalled_call_goes_through_when_released_and_fails_when_killed() {
        let f = Arc::new(Faults::default());
        f.add(Fault::new(Op::Fsync, "", Action::Stall));
        let g = Arc::clone(&f);
        let t = std::thread::spawn(move || g.check(Op::Fsync, Path::new("x")));
        assert!(f.wait_stalled(Duration::from_secs(60)));
        f.clear();
        assert_eq!(t.join().unwrap(), Ok(()));
        assert_eq!(f.stalled(), 0);

        f.add(Fault::new(Op::Fsync, "", Action::Stall));
        let g = Arc::clone(&f);
        let t = std::thread::spawn(move || g.check(Op::Fsync, Path::new("x")));
        assert!(f.wait_stalled(Duration::from_secs(60)));
        f.kill();
        assert_eq!(t.join().unwrap(), Err(libc::EIO));
        assert_eq!(f.check(Op::Read, Path::new("y")), Err(libc::EIO));
    }
}
