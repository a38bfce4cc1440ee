//! The SUT session: prepares a run, tears it down, and puts everything back on any exit.
//!
//! ```no_run
//! use iolab_sut::{Sut, SutOptions, SutSpec};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let spec: SutSpec = serde_json::from_str(
//!     r#"{"target":{"kind":"loop_image","size":"1G"},
//!         "fs":{"kind":"ext4","mount_options":"data=journal"},
//!         "tunables":{"vm.dirty_expire_centisecs":500}}"#)?;
//! let plan = spec.validate()?;
//! let sut = Sut::open(SutOptions::default())?;   // recovers a crashed session first
//! let handle = sut.handle();                       // for a signal-handling thread
//! let run = sut.prepare(&plan)?;                   // image, loop, mkfs, mount, tunables
//! // ... run the workload in run.mountpoint ...
//! sut.teardown(run).into_result()?;                // unmount, detach, delete, restore
//! # drop(handle); Ok(()) }
//! ```
//!
//! Each change is written to the journal before it is made (see [`crate::journal`]). A
//! [`Prepared`] run remembers which journal records are its own; [`Sut::teardown`] undoes
//! those, newest first. [`SutHandle::teardown_all`] (for a signal handler thread) and dropping
//! the [`Sut`] undo everything still outstanding. If the process dies instead, the journal
//! lets [`crate::recover`] do the same later; [`Sut::open`] runs it when it finds leftovers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::blockdev::DevInfo;
use crate::cgroup::{self, CacheCgroup};
use crate::container::{self, Container};
use crate::error::{Error, Result};
use crate::fs::{self, FsKind};
use crate::journal::{Entry, Journal, DEFAULT_JOURNAL};
use crate::loopdev::LoopDevice;
use crate::machine_lock::{self, TunablesLock};
use crate::mount::{self, MountOptions};
use crate::plan::{SutPlan, TunableSetting};
use crate::recover::{self, RecoverReport, UndoReport};
use crate::stack;
use crate::target::Acquired;
use crate::throttle::{self, Throttle, ThrottleCgroup};
use crate::tunable::{self, AppliedTunable};
use crate::undo::Outcome;
use crate::util;
use crate::workdir::{self, WorkDir};
use iolab_sys::mountinfo::{self, Mount};

/// Where a session keeps its journal, mount points and images.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SutOptions {
    /// The journal file (default `/var/lib/iolab/journal.json`).
    pub journal: PathBuf,
    /// Directory for mount points (default `/var/lib/iolab/mnt`); created if missing and
    /// left in place.
    pub mount_root: PathBuf,
    /// Default directory for loop images (default `/var/lib/iolab/images`): on a disk
    /// filesystem, since the loop device uses direct I/O.
    pub image_dir: PathBuf,
}

impl Default for SutOptions {
    fn default() -> Self {
        SutOptions {
            journal: DEFAULT_JOURNAL.into(),
            mount_root: "/var/lib/iolab/mnt".into(),
            image_dir: "/var/lib/iolab/images".into(),
        }
    }
}

impl SutOptions {
    /// Journal, mount points and images all under `dir` (tests, per-user state).
    pub fn under(dir: &Path) -> SutOptions {
        SutOptions {
            journal: dir.join("journal.json"),
            mount_root: dir.join("mnt"),
            image_dir: dir.join("images"),
        }
    }
}

struct Inner {
    journal: Journal,
    opts: SutOptions,
    /// Loop devices attached by this session, by the sequence number of their record; kept
    /// open so that (with autoclear) they stay attached exactly as long as needed.
    loops: BTreeMap<u64, LoopDevice>,
    closed: bool,
    /// Held from this session's first tunable change until it has put every one back.
    tunables_lock: Option<TunablesLock>,
}

impl Inner {
    fn undo(&mut self, seqs: Vec<u64>) -> UndoReport {
        let loops = &mut self.loops;
        let report = recover::undo_seqs(&mut self.journal, seqs, &mut |s| {
            loops.remove(&s);
        });
        if !self.journal.outstanding().any(|r| r.entry.is_tunable()) {
            self.tunables_lock = None;
        }
        report
    }

    fn undo_all(&mut self) -> UndoReport {
        let seqs = self.journal.outstanding().map(|r| r.seq).collect();
        self.undo(seqs)
    }
}

/// A session on the system under test. Dropping it undoes everything still outstanding.
pub struct Sut {
    shared: Arc<Mutex<Inner>>,
    startup: Option<RecoverReport>,
}

/// A cloneable, `Send` handle for a signal-handling thread.
#[derive(Clone)]
pub struct SutHandle {
    shared: Arc<Mutex<Inner>>,
}

fn lock(shared: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    // A panic elsewhere must not stop the restore.
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

impl SutHandle {
    /// Undo everything outstanding (newest first) and refuse further `prepare` calls. Safe to
    /// call from another thread at any time, e.g. on SIGINT/SIGTERM; waits for a `prepare`
    /// in progress to finish its current step list first.
    pub fn teardown_all(&self) -> UndoReport {
        let mut inner = lock(&self.shared);
        inner.closed = true;
        inner.undo_all()
    }
}

impl Sut {
    /// Open a session: lock the journal (fails with [`Error::JournalBusy`] if another iolab
    /// is running) and undo whatever a crashed session left there.
    pub fn open(opts: SutOptions) -> Result<Sut> {
        let mut journal = Journal::open(&opts.journal)?;
        let startup = (!journal.is_clear()).then(|| recover::recover(&mut journal));
        Ok(Sut {
            shared: Arc::new(Mutex::new(Inner {
                journal,
                opts,
                loops: BTreeMap::new(),
                closed: false,
                tunables_lock: None,
            })),
            startup,
        })
    }

    /// A session that may only use what is there (an existing directory as a target): no
    /// journal, so no lock and no recovery, and any change a `prepare` would make is refused.
    /// For plans of which [`SutPlan::changes_machine`] is false, which then run side by side
    /// with other iolab sessions.
    pub fn in_place(opts: SutOptions) -> Sut {
        Sut {
            shared: Arc::new(Mutex::new(Inner {
                journal: Journal::detached(),
                opts,
                loops: BTreeMap::new(),
                closed: false,
                tunables_lock: None,
            })),
            startup: None,
        }
    }

    /// What opening the session recovered from a crashed one (`None`: nothing was left).
    pub fn startup_recovery(&self) -> Option<&RecoverReport> {
        self.startup.as_ref()
    }

    /// A handle for a signal-handling thread.
    pub fn handle(&self) -> SutHandle {
        SutHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Prepare the system for one run: create/attach/format/mount the target, set tunables,
    /// create the cache cgroup. On error, whatever was done is undone before returning.
    pub fn prepare(&self, plan: &SutPlan) -> Result<Prepared> {
        let mut inner = lock(&self.shared);
        if inner.closed {
            return Err(Error::TornDown);
        }
        if inner.journal.is_detached() && plan.changes_machine() {
            return Err(Error::Conflict {
                path: inner.opts.journal.clone(),
                problem: "this session keeps no journal, so it may not change the machine".into(),
            });
        }
        let mut tx = Tx {
            inner: &mut inner,
            seqs: Vec::new(),
        };
        match prepare_in(&mut tx, plan) {
            Ok(mut p) => {
                p.seqs = std::mem::take(&mut tx.seqs);
                Ok(p)
            }
            Err(e) => {
                let seqs = std::mem::take(&mut tx.seqs);
                // Best effort; what fails stays in the journal for teardown_all / recover.
                let _ = inner.undo(seqs);
                Err(e)
            }
        }
    }

    /// Undo one run's changes, newest first. Failures are in the report (and stay in the
    /// journal, to be retried by [`SutHandle::teardown_all`], drop, or `recover`).
    pub fn teardown(&self, prepared: Prepared) -> UndoReport {
        lock(&self.shared).undo(prepared.seqs)
    }

    /// Unmount and mount the run's filesystem again with the same options (drops its cached
    /// inodes and pages; e.g. between a workload's write and read phases).
    /// Returns how long the unmount (which writes back the filesystem's dirty data) and the
    /// mount took.
    pub fn remount(&self, prepared: &mut Prepared) -> Result<Remounted> {
        let inner = lock(&self.shared);
        if inner.closed {
            return Err(Error::TornDown);
        }
        let Some((source, fstype, opts)) = prepared
            .mount_args
            .as_ref()
            .filter(|_| !prepared.handed_over)
        else {
            return Err(Error::Conflict {
                path: prepared.mountpoint.clone(),
                problem: "iolab did not mount this target here, so it does not remount it".into(),
            });
        };
        let t0 = std::time::Instant::now();
        let how = mount::unmount(&prepared.mountpoint)?;
        let unmount = t0.elapsed();
        mount::mount(source, &prepared.mountpoint, fstype, opts)?;
        let mount = t0.elapsed() - unmount;
        prepared.mount = read_mount(&prepared.mountpoint);
        if matches!(how, mount::Unmounted::Lazy) {
            return Err(Error::Conflict {
                path: prepared.mountpoint.clone(),
                problem:
                    "the filesystem was busy and was only detached, so the remount kept its caches"
                        .into(),
            });
        }
        Ok(Remounted { unmount, mount })
    }

    /// Unmounts the run's filesystem from this machine so that another kernel (a VM's, with
    /// the device as its disk) can mount it: the device, the filesystem type and the mount
    /// options, as [`HandedOver`]. A target handed over before (a kept one) is handed over
    /// again as it is. Fails for a target iolab did not mount (a directory, a tmpfs: memory
    /// of this kernel's that no other kernel can see).
    pub fn hand_over(&self, prepared: &mut Prepared) -> Result<HandedOver> {
        let mut inner = lock(&self.shared);
        if inner.closed {
            return Err(Error::TornDown);
        }
        let (Some((source, fstype, opts)), Some(device)) = (&prepared.mount_args, &prepared.device)
        else {
            return Err(Error::Conflict {
                path: prepared.mountpoint.clone(),
                problem: "only a filesystem iolab made on a block device can be handed to \
                          another kernel"
                    .into(),
            });
        };
        let handed = HandedOver {
            device: device.path.clone(),
            fstype: fstype.clone(),
            options: opts.text.clone(),
        };
        if prepared.handed_over {
            return Ok(handed);
        }
        let seq = prepared.seqs.iter().copied().find(|s| {
            matches!(inner.journal.get(*s).map(|r| &r.entry),
                Some(Entry::Mount { target, source: src, .. })
                    if *target == prepared.mountpoint && src == source)
        });
        mount::unmount(&prepared.mountpoint)?;
        if let Some(seq) = seq {
            inner.journal.mark_undone(seq)?;
            prepared.seqs.retain(|s| *s != seq);
        }
        prepared.handed_over = true;
        prepared.mount = None;
        Ok(handed)
    }

    /// Undo everything outstanding and close the session.
    pub fn close(self) -> UndoReport {
        self.handle().teardown_all()
    }

    /// The journal's path.
    pub fn journal_path(&self) -> PathBuf {
        lock(&self.shared).journal.path().to_owned()
    }

    /// Makes `path` and its missing parents for a workload that puts its files there
    /// (filebench creates a fileset's missing `path`): `None` when it exists. The topmost
    /// directory made is journalled before it is made, when the session keeps a journal, so
    /// that a crash is recovered like any other change; remove it after the run with
    /// [`Sut::remove_work_dir`].
    pub fn make_work_dir(&self, path: &Path) -> Result<Option<WorkDir>> {
        let mut inner = lock(&self.shared);
        if inner.journal.is_detached() {
            return workdir::make_work_dir(path);
        }
        let Some(top) = workdir::topmost_missing(path)? else {
            return Ok(None);
        };
        let seq = inner.journal.append(Entry::WorkDir { path: top.clone() })?;
        let since = inner.journal.get(seq).map_or(0, |r| r.time);
        match workdir::create(path, &top) {
            Ok(id) => Ok(Some(WorkDir {
                path: top,
                since,
                seq: Some(seq),
                id,
            })),
            Err(e) => {
                // `create` removed what it made.
                let _ = inner.journal.mark_undone(seq);
                let _ = inner.journal.clear_if_done();
                Err(e)
            }
        }
    }

    /// Removes a directory [`Sut::make_work_dir`] made, with everything in it, and marks it
    /// undone in the journal. On failure it stays outstanding, for teardown and `recover`.
    pub fn remove_work_dir(&self, dir: WorkDir) -> Result<Outcome> {
        let outcome = workdir::remove(&dir.path, dir.since, Some(dir.id))?;
        if let Some(seq) = dir.seq {
            let mut inner = lock(&self.shared);
            inner.journal.mark_undone(seq)?;
            let _ = inner.journal.clear_if_done();
        }
        Ok(outcome)
    }
}

impl Drop for Sut {
    fn drop(&mut self) {
        let _ = self.handle().teardown_all();
    }
}

/// How long a [`Sut::remount`] took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remounted {
    /// The unmount, including its writeback.
    pub unmount: std::time::Duration,
    pub mount: std::time::Duration,
}

/// A prepared run.
#[derive(Debug)]
pub struct Prepared {
    /// Where the workload's files go.
    pub mountpoint: PathBuf,
    /// The block device under it, if any (for loop images: the loop device, with its
    /// backing image).
    pub device: Option<DevInfo>,
    /// The filesystem iolab made, if it made one (tmpfs for a tmpfs target).
    pub fs: Option<FsKind>,
    /// The mount as the kernel shows it, read back after mounting (effective options).
    pub mount: Option<Mount>,
    /// For loop images: whether direct I/O is on.
    pub direct_io: Option<bool>,
    /// Tunables set for this run, with their original values.
    pub tunables: Vec<AppliedTunable>,
    /// The page-cache cgroup, if a cache limit was asked for. Add the engine's threads.
    pub cgroup: Option<CacheCgroup>,
    /// The blkio cgroup throttling the device, if `throttle` was asked for. Add the
    /// engine's threads.
    pub throttle: Option<ThrottleCgroup>,
    /// The container the run executes in, if the plan has one: start programs in it
    /// with [`Container::spawn`].
    pub container: Option<Container>,
    mount_args: Option<(String, String, MountOptions)>,
    /// Unmounted from this machine for another kernel ([`Sut::hand_over`]).
    handed_over: bool,
    seqs: Vec<u64>,
}

/// A filesystem handed to another kernel: what it mounts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandedOver {
    /// The block device on this machine (the VM's disk).
    pub device: PathBuf,
    /// `ext4`, `xfs`, …
    pub fstype: String,
    /// The mount options as written.
    pub options: String,
}

/// The changes of one `prepare`, in progress. Targets record through it.
pub(crate) struct Tx<'a> {
    inner: &'a mut Inner,
    seqs: Vec<u64>,
}

impl Tx<'_> {
    /// Write a change to the journal (before making it).
    pub(crate) fn record(&mut self, entry: Entry) -> Result<u64> {
        let seq = self.inner.journal.append(entry)?;
        self.seqs.push(seq);
        Ok(seq)
    }

    /// A recorded change that was not made after all (and whose undo must not run, e.g. a
    /// name that turned out to exist already).
    pub(crate) fn abandon(&mut self, seq: u64) {
        self.seqs.retain(|s| *s != seq);
        let _ = self.inner.journal.mark_undone(seq);
    }

    /// Keep a loop device open for the session.
    pub(crate) fn keep_loop(&mut self, seq: u64, dev: LoopDevice) {
        self.inner.loops.insert(seq, dev);
    }

    pub(crate) fn options(&self) -> &SutOptions {
        &self.inner.opts
    }

    /// Images of loop devices this session has attached.
    pub(crate) fn our_images(&self) -> Vec<PathBuf> {
        self.inner
            .journal
            .outstanding()
            .filter(|r| r.pid == std::process::id())
            .filter_map(|r| match &r.entry {
                Entry::Loop { image } => Some(image.clone()),
                _ => None,
            })
            .collect()
    }

    /// Create a fresh mount point and mount `source` there.
    pub(crate) fn mount_fresh(
        &mut self,
        source: &str,
        fstype: &str,
        opts: &MountOptions,
    ) -> Result<PathBuf> {
        let root = mount::ensure_dir(&self.inner.opts.mount_root.clone())?;
        let dir = root.join(util::unique_name());
        let seq = self.record(Entry::Mkdir { path: dir.clone() })?;
        if let Err(e) = mount::make_dir(&dir) {
            self.abandon(seq);
            return Err(e);
        }
        self.record(Entry::Mount {
            source: source.to_owned(),
            target: dir.clone(),
            fstype: fstype.to_owned(),
        })?;
        mount::mount(source, &dir, fstype, opts)?;
        Ok(dir)
    }

    fn set_tunable(&mut self, t: &TunableSetting, dev: Option<&DevInfo>) -> Result<AppliedTunable> {
        let name = t.name.to_string();
        let path = t
            .name
            .resolve(dev)
            .map_err(|m| Error::spec(format!("tunables.{name:?}"), m))?;
        if self.inner.tunables_lock.is_none() {
            // Machine-wide, whatever this session's journal: the tunables are.
            self.inner.tunables_lock = Some(TunablesLock::acquire(
                &machine_lock::path(),
                machine_lock::WAIT,
            )?);
        }
        // Read after the lock: another session's value is put back by now.
        let original = tunable::check_exists(&t.name, &path)?;
        match tunable::dirty_pair(&path) {
            Some((bytes_path, ratio_path)) => {
                let bytes = tunable::read(&bytes_path)?;
                let ratio = tunable::read(&ratio_path)?;
                self.record(Entry::DirtyLimit {
                    bytes_path,
                    bytes,
                    ratio_path,
                    ratio,
                })?;
            }
            None => {
                self.record(Entry::Tunable {
                    path: path.clone(),
                    original: original.clone(),
                })?;
            }
        }
        let value = tunable::write_checked(&name, &path, &t.value)?;
        Ok(AppliedTunable {
            name,
            path,
            original,
            value,
        })
    }

    fn create_cgroup(&mut self, limit: u64) -> Result<CacheCgroup> {
        let parent = cgroup::parent_dir()?;
        let path = parent.join(util::unique_name());
        let seq = self.record(Entry::Cgroup { path: path.clone() })?;
        if let Err(e) = std::fs::create_dir(&path) {
            self.abandon(seq);
            return Err(Error::io("create cgroup", &path, e));
        }
        let limit_bytes = cgroup::set_limit(&path, limit)?;
        Ok(CacheCgroup { path, limit_bytes })
    }

    fn create_throttle(&mut self, limits: &Throttle, device: &DevInfo) -> Result<ThrottleCgroup> {
        let parent = throttle::parent_dir()?;
        let path = parent.join(util::unique_name());
        let seq = self.record(Entry::Cgroup { path: path.clone() })?;
        if let Err(e) = std::fs::create_dir(&path) {
            self.abandon(seq);
            return Err(Error::io("create cgroup", &path, e));
        }
        let dev = throttle::throttle_dev(&device.name, &device.queue_name, device.dev);
        throttle::set_limits(&path, dev, limits)?;
        Ok(ThrottleCgroup {
            path,
            dev,
            limits: *limits,
        })
    }
}

fn read_mount(point: &Path) -> Option<Mount> {
    let mounts = mountinfo::read().ok()?;
    mountinfo::top_mount_at(&mounts, point).cloned()
}

fn prepare_in(tx: &mut Tx<'_>, plan: &SutPlan) -> Result<Prepared> {
    // Everything that can fail without changing the machine comes first.
    let mkfs_program = match (&plan.fs, plan.target.needs_mkfs()) {
        (Some(f), true) => {
            let a = fs::availability(f.kind);
            a.require()?;
            a.mkfs
        }
        _ => None,
    };
    for t in &plan.tunables {
        if !t.name.needs_device() {
            let name = t.name.to_string();
            let path = t
                .name
                .resolve(None)
                .map_err(|m| Error::spec(format!("tunables.{name:?}"), m))?;
            tunable::check_exists(&t.name, &path)?;
        }
    }
    if plan.cache_limit.is_some() {
        cgroup::parent_dir()?;
    }
    if plan.throttle.is_some() {
        throttle::parent_dir()?;
    }
    if let Some(c) = &plan.cache {
        stack::require(c)?;
    }
    if let Some(c) = &plan.container {
        if let Some(p) = c.machine_problems().into_iter().next() {
            return Err(p.into());
        }
    }

    let acquired = plan.target.as_acquire().acquire(tx, plan.fs.as_ref())?;
    let mut prepared = Prepared {
        mountpoint: PathBuf::new(),
        device: None,
        fs: None,
        mount: None,
        direct_io: None,
        tunables: Vec::new(),
        cgroup: None,
        throttle: None,
        container: None,
        mount_args: None,
        handed_over: false,
        seqs: Vec::new(),
    };
    match acquired {
        Acquired::Ready { mountpoint, device } => {
            prepared.mountpoint = mountpoint;
            prepared.device = device;
            if let crate::target::Target::Tmpfs(t) = &plan.target {
                let opts = plan
                    .fs
                    .as_ref()
                    .map(|f| f.mount.clone())
                    .unwrap_or_default()
                    .with_default("size", &t.size.to_string());
                prepared.fs = Some(FsKind::Tmpfs);
                let source = read_mount(&prepared.mountpoint)
                    .map(|m| m.source)
                    .unwrap_or_default();
                prepared.mount_args = Some((source, "tmpfs".into(), opts));
            }
        }
        Acquired::Device {
            device,
            nodiscard,
            direct_io,
        } => {
            let f = plan
                .fs
                .as_ref()
                .expect("validated: device targets have a filesystem");
            let program = mkfs_program.expect("availability checked");
            fs::mkfs(f.kind, &program, &device.path, &f.mkfs_options, nodiscard)?;
            let source = device.path.to_string_lossy().into_owned();
            prepared.mountpoint = tx.mount_fresh(&source, f.kind.name(), &f.mount)?;
            prepared.fs = Some(f.kind);
            prepared.direct_io = direct_io;
            prepared.mount_args = Some((source, f.kind.name().into(), f.mount.clone()));
            prepared.device = Some(device);
        }
    }
    prepared.mount = prepared
        .mount_args
        .as_ref()
        .and_then(|_| read_mount(&prepared.mountpoint));
    for t in &plan.tunables {
        let applied = tx.set_tunable(t, prepared.device.as_ref())?;
        prepared.tunables.push(applied);
    }
    if let Some(limit) = plan.cache_limit {
        prepared.cgroup = Some(tx.create_cgroup(limit)?);
    }
    if let Some(limits) = &plan.throttle {
        let Some(device) = &prepared.device else {
            return Err(Error::spec(
                "throttle",
                "the target has no block device to throttle",
            ));
        };
        prepared.throttle = Some(tx.create_throttle(limits, device)?);
    }
    if let Some(c) = &plan.container {
        let dev = prepared
            .device
            .as_ref()
            .map(|d| throttle::throttle_dev(&d.name, &d.queue_name, d.dev));
        prepared.container = Some(container::create(tx, c, dev, &prepared.mountpoint)?);
    }
    Ok(prepared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_types_can_cross_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Sut>();
        send_sync::<SutHandle>();
        send_sync::<Prepared>();
        send_sync::<UndoReport>();
    }

    fn plan(json: &str) -> SutPlan {
        serde_json::from_str::<crate::SutSpec>(json)
            .unwrap()
            .validate()
            .unwrap()
    }

    #[test]
    fn an_in_place_session_uses_a_directory_and_refuses_changes() {
        let dir = std::env::temp_dir();
        let d = plan(&format!(
            r#"{{"target":{{"kind":"directory","path":{:?}}}}}"#,
            dir.display().to_string()
        ));
        assert!(!d.changes_machine());
        let state = dir.join(format!("iolab-in-place-{}", std::process::id()));
        let sut = Sut::in_place(SutOptions::under(&state));
        let p = sut.prepare(&d).unwrap();
        assert_eq!(p.mountpoint, dir.canonicalize().unwrap());
        assert!(sut.teardown(p).failures().next().is_none());
        // Two at once: no lock is taken.
        let _other = Sut::in_place(SutOptions::under(&state));

        let t = plan(r#"{"target":{"kind":"tmpfs","size":"16M"}}"#);
        assert!(t.changes_machine());
        let err = sut.prepare(&t).unwrap_err();
        assert!(err.to_string().contains("keeps no journal"), "{err}");
        assert!(
            !state.exists(),
            "nothing is written for an in-place session"
        );
    }

    #[test]
    fn options_under_a_directory() {
        let o = SutOptions::under(Path::new("/x"));
        assert_eq!(o.journal, PathBuf::from("/x/journal.json"));
        assert_eq!(o.mount_root, PathBuf::from("/x/mnt"));
        assert_eq!(o.image_dir, PathBuf::from("/x/images"));
        assert_eq!(
            SutOptions::default().journal,
            PathBuf::from(DEFAULT_JOURNAL)
        );
    }
}
