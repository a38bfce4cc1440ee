//! A v1 memory cgroup that caps the page cache of the engine's threads.
//!
//! Page-cache pages are charged to the memory cgroup of the task that brings them in; when
//! the cgroup reaches `memory.limit_in_bytes` the kernel reclaims from its own LRU lists
//! (Documentation/admin-guide/cgroup-v1/memory.rst). The limit counts anonymous memory too,
//! so leave room for the engine's buffers. Tasks are added by thread (`tasks`) or whole
//! process (`cgroup.procs`).
//!
//! The cgroup is created inside the memory cgroup this process is in (so any limit above
//! still applies), named `iolab-…`, and removed at teardown after moving its tasks back to
//! the parent. Only the v1 controller is supported: on these machines the v2 memory
//! controller is not available.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::util;
use iolab_sys::{mountinfo, self_cgroup};

/// A memory cgroup created by iolab for a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheCgroup {
    /// Its directory.
    pub path: PathBuf,
    /// Limit as the kernel stored it (rounded to pages).
    pub limit_bytes: u64,
}

impl CacheCgroup {
    /// Move one thread in (by TID).
    pub fn add_thread(&self, tid: i32) -> Result<()> {
        add_thread(&self.path, tid)
    }

    /// Move a whole process in (all its threads).
    pub fn add_process(&self, pid: u32) -> Result<()> {
        add_process(&self.path, pid)
    }

    /// Move the calling thread in.
    pub fn add_current_thread(&self) -> Result<()> {
        add_current_thread(&self.path)
    }

    /// Move the calling thread back to the parent cgroup (where iolab started).
    pub fn remove_current_thread(&self) -> Result<()> {
        let parent = self.path.parent().unwrap_or(Path::new("/"));
        add_current_thread(parent)
    }

    /// TIDs in it.
    pub fn tasks(&self) -> Result<Vec<i32>> {
        read_tasks(&self.path)
    }

    /// `memory.usage_in_bytes`.
    pub fn usage_bytes(&self) -> Result<u64> {
        read_u64(&self.path.join("memory.usage_in_bytes"))
    }

    /// `memory.max_usage_in_bytes`: the high-water mark.
    pub fn max_usage_bytes(&self) -> Result<u64> {
        read_u64(&self.path.join("memory.max_usage_in_bytes"))
    }
}

/// Move one thread (by TID) into the v1 cgroup `dir`.
pub(crate) fn add_thread(dir: &Path, tid: i32) -> Result<()> {
    let p = dir.join("tasks");
    util::write_value(&p, &tid.to_string()).map_err(|e| Error::io("write", p, e))
}

/// Move a whole process (all its threads) into the v1 cgroup `dir`.
pub(crate) fn add_process(dir: &Path, pid: u32) -> Result<()> {
    let p = dir.join("cgroup.procs");
    util::write_value(&p, &pid.to_string()).map_err(|e| Error::io("write", p, e))
}

/// Move the calling thread into the v1 cgroup `dir`.
pub(crate) fn add_current_thread(dir: &Path) -> Result<()> {
    // SAFETY: gettid has no failure mode.
    let tid = unsafe { libc::gettid() };
    add_thread(dir, tid)
}

/// TIDs in the v1 cgroup `dir`.
pub(crate) fn tasks_of(dir: &Path) -> Result<Vec<i32>> {
    read_tasks(dir)
}

fn read_u64(p: &Path) -> Result<u64> {
    let t = util::read_trimmed(p).map_err(|e| Error::io("read", p, e))?;
    t.trim()
        .parse()
        .map_err(|_| Error::io("parse", p, io::Error::other(format!("not a number: {t:?}"))))
}

fn read_tasks(dir: &Path) -> Result<Vec<i32>> {
    let p = dir.join("tasks");
    let t = std::fs::read_to_string(&p).map_err(|e| Error::io("read", &p, e))?;
    Ok(t.lines().filter_map(|l| l.trim().parse().ok()).collect())
}

/// Mount points of v1 hierarchies with `controller` (usually just
/// /sys/fs/cgroup/<controller>), with the cgroup path each mount's root corresponds to.
fn v1_mounts(controller: &str) -> Vec<(PathBuf, PathBuf)> {
    mountinfo::read()
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.fs_type == "cgroup" && m.super_options.split(',').any(|o| o == controller))
        .map(|m| (m.mount_point, m.root))
        .collect()
}

/// The directory in which iolab creates its cgroup: this process's own v1 memory cgroup.
pub fn parent_dir() -> Result<PathBuf> {
    v1_parent_dir("memory", "memory.limit_in_bytes", "iolab's page-cache cap")
}

/// This process's own cgroup of the v1 `controller`, which must have `probe` (a file the
/// caller needs); `needed_by` says who asks, for the error.
pub(crate) fn v1_parent_dir(controller: &str, probe: &str, needed_by: &str) -> Result<PathBuf> {
    let unavailable = |reason: String| Error::CgroupUnavailable { reason };
    let (mount, root) = v1_mounts(controller).into_iter().next().ok_or_else(|| {
        unavailable(format!(
            "no cgroup v1 {controller} hierarchy is mounted (look for `cgroup ... \
             {controller}` in /proc/mounts); {needed_by} needs the v1 {controller} controller"
        ))
    })?;
    let own = self_cgroup::read()
        .ok()
        .and_then(|t| self_cgroup::controller_path(&t, controller))
        .unwrap_or_else(|| "/".into());
    let rel = Path::new(&own)
        .strip_prefix(&root)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let dir = mount.join(rel);
    if !dir.join(probe).exists() {
        return Err(unavailable(format!("{} has no {probe}", dir.display())));
    }
    Ok(dir)
}

/// Whether `path` may be a cgroup iolab created (recovery checks journal entries): an
/// `iolab-…` directory inside a v1 memory or blkio hierarchy.
pub(crate) fn is_our_cgroup(path: &Path) -> bool {
    util::has_our_prefix(path)
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::RootDir
            )
        })
        && v1_mounts("memory")
            .into_iter()
            .chain(v1_mounts("blkio"))
            .any(|(m, _)| path.starts_with(&m) && path != m)
}

/// Set the limit on a created cgroup; returns the stored value.
pub(crate) fn set_limit(path: &Path, bytes: u64) -> Result<u64> {
    let p = path.join("memory.limit_in_bytes");
    util::write_value(&p, &bytes.to_string()).map_err(|e| Error::io("write", &p, e))?;
    read_u64(&p)
}

/// Undo: move the tasks to the parent and remove the directory.
pub(crate) fn remove(path: &Path) -> Result<bool> {
    if !path.exists() {
        return Ok(false);
    }
    let parent = path.parent().unwrap_or(Path::new("/"));
    for _ in 0..50 {
        for tid in read_tasks(path).unwrap_or_default() {
            // ESRCH: the task exited meanwhile.
            let _ = util::write_value(&parent.join("tasks"), &tid.to_string());
        }
        match std::fs::remove_dir(path) {
            Ok(()) => return Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            // EBUSY while exiting tasks are still being detached.
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(Error::io("remove cgroup", path, e)),
        }
    }
    Err(Error::io(
        "remove cgroup",
        path,
        io::Error::from_raw_os_error(libc::EBUSY),
    ))
}

/// Keeps a cache cap a cap on the page cache only, and keeps the kernel from killing iolab.
///
/// A v1 memory cgroup charges everything its tasks allocate: the page cache, which the cap is
/// for, but also the engine's own memory (buffers, `memsize`, thread stacks, page tables).
/// With 100 threads of a WML workload that alone filled a 128 MiB cap, and the kernel's OOM
/// killer then killed iolab itself, leaving its mounts and tunables behind. So:
/// * the cgroup's OOM killer is disabled (`memory.oom_control`): a task that cannot get
///   memory waits instead of being killed;
/// * a watcher thread, outside the cgroup and allocating nothing once started (the kernel
///   charges the process's pages to its main thread's cgroup), keeps the limit at the cap plus what is not page
///   cache (usage less the file LRU lists and the shared memory of `memory.stat`). The page
///   cache is then held to the cap while iolab's own memory never counts against it; a task
///   that outran the watcher and waits is released at the next look ([`HEADROOM`]);
/// * shared memory (tmpfs files) is page cache the kernel cannot evict without swap. When it
///   fills the cap and tasks wait, the watcher lifts the limit (nothing hangs) and reports an
///   [`CapUse::overrun`]: the run did not have the cap it asked for.
///
/// [`CapGuard::stop`] restores the plain limit and says what iolab's own memory came to.
pub struct CapGuard {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<CapUse>>,
}

/// How far the limit is raised at once when tasks wait for memory with nothing left to
/// reclaim (their own memory outran the watcher).
pub const HEADROOM: u64 = 16 << 20;

/// How far iolab's own memory may fall before the limit follows it down: a limit that
/// chased every freed buffer would be written every look. The page cache may exceed the cap
/// by this much at most.
const SLACK: u64 = 1 << 20;

/// How often the watcher looks.
const WATCH_EVERY: Duration = Duration::from_millis(20);

/// What a run's tasks used besides the page cache, and how the limit followed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CapUse {
    /// The cap on the page cache.
    pub cap_bytes: u64,
    /// The highest memory of the cgroup that was not page cache (anonymous, kernel).
    pub own_peak_bytes: u64,
    /// The highest limit the watcher set.
    pub limit_peak_bytes: u64,
    /// Times the watcher found the cgroup out of memory (tasks waiting for it).
    pub oom_waits: u64,
    /// The most shared memory (tmpfs files, shared mappings) the cgroup held. It is page
    /// cache, so it counts against the cap, but the kernel cannot evict it without swap.
    pub shmem_peak_bytes: u64,
    /// Shared memory filled the cap and tasks waited on it: the watcher lifted the limit
    /// so that nothing hangs, and the run did not have the cap it asked for.
    pub overrun: bool,
}

impl CacheCgroup {
    /// Starts the [`CapGuard`]. Call it from a thread that is *not* in the cgroup (before the
    /// engine's thread joins it): the watcher must never wait on the cgroup's memory itself.
    pub fn guard(&self) -> Result<CapGuard> {
        let p = self.path.join("memory.oom_control");
        util::write_value(&p, "1").map_err(|e| Error::io("write", &p, e))?;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (dir, cap, flag) = (self.path.clone(), self.limit_bytes, stop.clone());
        let thread = std::thread::Builder::new()
            .name("iolab-cap".into())
            .spawn(move || watch_cap(&dir, cap, &flag))
            .map_err(|e| Error::io("start the cache cap's watcher", &self.path, e))?;
        Ok(CapGuard {
            stop,
            thread: Some(thread),
        })
    }
}

impl CapGuard {
    /// Stops the watcher and returns what it saw. The limit stays where it was last: the
    /// cgroup's tasks are done, and the cgroup is removed at teardown.
    pub fn stop(mut self) -> CapUse {
        self.finish()
    }

    fn finish(&mut self) -> CapUse {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for CapGuard {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.finish();
        }
    }
}

fn watch_cap(dir: &Path, cap: u64, stop: &std::sync::atomic::AtomicBool) -> CapUse {
    let mut seen = CapUse {
        cap_bytes: cap,
        limit_peak_bytes: cap,
        ..CapUse::default()
    };
    // A v1 memory cgroup charges a process's user pages to the cgroup of its main thread,
    // which the engine's thread is: a page this thread faulted in while the cgroup is out of
    // memory would make it wait on itself. So everything the loop needs is set up here —
    // the files opened, one buffer of a fixed size — and the loop allocates nothing.
    let open = |name: &str, write: bool| {
        std::fs::OpenOptions::new()
            .read(!write)
            .write(write)
            .open(dir.join(name))
            .ok()
    };
    let (Some(usage_f), Some(stat_f), Some(oom_f), Some(limit_f)) = (
        open("memory.usage_in_bytes", false),
        open("memory.stat", false),
        open("memory.oom_control", false),
        open("memory.limit_in_bytes", true),
    ) else {
        return seen;
    };
    let mut buf = vec![0u8; 64 << 10];
    let mut limit = cap;
    loop {
        let usage = read_at(&usage_f, &mut buf)
            .and_then(|t| t.trim().parse::<u64>().ok())
            .unwrap_or(0);
        let (file, shmem) = read_at(&stat_f, &mut buf).map_or((0, 0), page_cache_bytes);
        let own = usage.saturating_sub(file + shmem);
        let under_oom = read_at(&oom_f, &mut buf).is_some_and(oom_waiting);
        seen.own_peak_bytes = seen.own_peak_bytes.max(own);
        seen.shmem_peak_bytes = seen.shmem_peak_bytes.max(shmem);
        if under_oom {
            seen.oom_waits += 1;
        }
        if !seen.overrun && under_oom && shmem + HEADROOM >= cap {
            // Unevictable pages fill the cap: no limit short of their size lets the tasks
            // go on, so lift it and say so rather than chase them.
            seen.overrun = true;
            if write_number(&limit_f, UNLIMITED) {
                seen.limit_peak_bytes = UNLIMITED;
            }
        }
        // No slack above the cap: memory the engine allocates between two looks takes pages
        // from the cache (they are reclaimable), which the next look gives back. Raise at
        // once; lower when the own memory fell by more than the slack.
        let want = cap + own;
        if !seen.overrun && (want > limit || want + SLACK < limit || under_oom) {
            let target = if under_oom {
                want.max(limit + HEADROOM)
            } else {
                want
            };
            if write_number(&limit_f, target) {
                limit = target;
                seen.limit_peak_bytes = seen.limit_peak_bytes.max(limit);
            }
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return seen;
        }
        std::thread::sleep(WATCH_EVERY);
    }
}

/// The largest limit a v1 memory cgroup takes (it rounds down to pages): no limit.
const UNLIMITED: u64 = i64::MAX as u64;

/// The whole of a cgroup file read from its start into `buf` (pread: no allocation).
fn read_at<'a>(f: &std::fs::File, buf: &'a mut [u8]) -> Option<&'a str> {
    use std::os::unix::fs::FileExt;
    let n = f.read_at(buf, 0).ok()?;
    std::str::from_utf8(&buf[..n]).ok()
}

/// Writes `n` in decimal to a cgroup file, formatted on the stack.
fn write_number(f: &std::fs::File, n: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    f.write_at(&digits[i..], 0).is_ok()
}

/// The page cache of a v1 `memory.stat`, hierarchical: its file LRU lists, and the shared
/// memory (tmpfs) that sits on the anonymous lists because only swap can take it out.
fn page_cache_bytes(stat: &str) -> (u64, u64) {
    let mut file = 0;
    let mut shmem = 0;
    for (k, v) in stat.lines().filter_map(|l| l.split_once(' ')) {
        let Ok(v) = v.trim().parse::<u64>() else {
            continue;
        };
        match k {
            "total_inactive_file" | "total_active_file" => file += v,
            "total_shmem" => shmem = v,
            _ => {}
        }
    }
    (file, shmem)
}

/// `under_oom 1` in `memory.oom_control`: tasks are waiting for memory.
fn oom_waiting(text: &str) -> bool {
    text.lines().any(|l| {
        l.split_once(' ')
            .is_some_and(|(k, v)| k == "under_oom" && v.trim() == "1")
    })
}

#[cfg(test)]
mod cap_tests {
    use super::*;

    #[test]
    fn page_cache_is_the_file_lru_lists_and_shared_memory() {
        let stat = "cache 100\nrss 5\nshmem 3\ninactive_file 1\nactive_file 2\n\
                    total_inactive_file 4096\ntotal_active_file 8192\ntotal_rss 77\n\
                    total_shmem 65536\n";
        assert_eq!(page_cache_bytes(stat), (12288, 65536));
        assert_eq!(page_cache_bytes(""), (0, 0));
    }

    #[test]
    fn numbers_are_written_in_decimal() {
        let p = std::env::temp_dir().join(format!("iolab-limit-test-{}", std::process::id()));
        for n in [0u64, 7, 134_217_728, u64::MAX] {
            std::fs::write(&p, "").unwrap();
            let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            assert!(write_number(&f, n));
            assert_eq!(std::fs::read_to_string(&p).unwrap(), n.to_string());
        }
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn under_oom_is_read_from_oom_control() {
        assert!(oom_waiting("oom_kill_disable 1\nunder_oom 1\noom_kill 0\n"));
        assert!(!oom_waiting(
            "oom_kill_disable 1\nunder_oom 0\noom_kill 0\n"
        ));
        assert!(!oom_waiting(""));
    }
}
