//! One rank's run: IOR's files, offsets and sizes; the write phase then the read phase, each
//! started at a barrier and timed as IOR times it (open, transfers with the fsync, close),
//! relative to the barrier's release; stonewalling and wear-out; the hot loop is one
//! `pwrite`/`pread` per transfer on one aligned buffer.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::IntoRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iolab_engine::stats::{Bucket, IntervalRecorder, LatencyHistogram};
use iolab_kind::{Ranks, RunCtx, RunFailure, RunHooks};
use iolab_util::rng::Rng;

use crate::options::IorPlan;

/// The width of a phase's progress series: fine enough to interpolate where another rank
/// started or finished.
pub const PROGRESS_WIDTH: Duration = Duration::from_millis(10);

/// The alignment of the transfer buffer: O_DIRECT's on any device iolab meets.
const ALIGN: usize = 4096;

/// Which phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Write,
    Read,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::Write => "write",
            Access::Read => "read",
        }
    }
}

/// What one rank measured of one phase. Times are nanoseconds after the release of the
/// phase's barrier on this rank.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    pub access: Access,
    pub bytes: u64,
    pub ops: u64,
    /// The open started (IOR's open start: where the phase starts).
    pub start_ns: u64,
    pub open_ns: u64,
    /// The transfers (and the write phase's fsync).
    pub xfer_ns: u64,
    pub close_ns: u64,
    /// The close ended (where the phase ends).
    pub end_ns: u64,
    /// Latency of each transfer.
    pub latency: LatencyHistogram,
    /// Operations and bytes done per [`PROGRESS_WIDTH`] from the release.
    pub progress: Vec<Bucket>,
    /// Transfers done when the stonewall's deadline came (all of them without one).
    pub pairs_at_deadline: u64,
    pub stonewalled: bool,
    /// Reads whose data did not carry the stamp of the rank and offset they read (0 when
    /// the data came from this run's write phase).
    pub stamp_errors: u64,
    /// The rank stamped in the first transfer read (the writer of the data read).
    pub first_writer: Option<u64>,
}

impl PhaseResult {
    pub fn elapsed_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// One rank's run.
#[derive(Debug, Clone)]
pub struct IorResult {
    pub plan: IorPlan,
    pub rank: usize,
    pub size: usize,
    pub ranks_per_node: usize,
    /// The rank whose data this rank read.
    pub read_source: usize,
    pub write: Option<PhaseResult>,
    pub read: Option<PhaseResult>,
    /// CPU use of this rank's thread over the timed region.
    pub cpu: iolab_kind::record::Cpu,
}

impl IorResult {
    pub fn phases(&self) -> impl Iterator<Item = &PhaseResult> {
        self.write.iter().chain(self.read.iter())
    }

    /// This rank's time in its phases (the time between them is not the workload's).
    pub fn elapsed_ns(&self) -> u64 {
        self.phases().map(PhaseResult::elapsed_ns).sum()
    }
}

/// Why a run failed.
#[derive(Debug)]
pub enum IorError {
    Io {
        call: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// A read found the file shorter than what was written.
    Short {
        path: PathBuf,
        offset: u64,
    },
    Interrupted,
    /// A sync with the other ranks failed (one of them failed).
    Ranks(RunFailure),
}

impl IorError {
    fn io<'a>(call: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> IorError + 'a {
        move |source| IorError::Io {
            call,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Test-only slowing of ranks: a sleep after each transfer, by rank (a rank's real work
/// made slower, the filesystem untouched).
#[derive(Debug, Clone, Default)]
pub(crate) struct Pace(pub Vec<Duration>);

/// The transfer buffer: `len` bytes aligned for O_DIRECT, allocated once per run.
struct Buffer {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Buffer {
    fn new(len: u64, seed: u64) -> Buffer {
        let layout = std::alloc::Layout::from_size_align(len.max(1) as usize, ALIGN)
            .expect("a transfer fits in memory");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let mut b = Buffer { ptr, layout };
        // Data that does not compress, as IOR's is not all zeros.
        Rng::new(seed).fill(b.bytes_mut());
        b
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr holds layout.size() initialised bytes for the buffer's life, and
        // `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// The offsets of one rank's transfers, IOR's: transfer `p` is transfer `p % per_segment` of
/// segment `p / per_segment`; a segment holds one block of every rank (a shared file) or is
/// one block (a file per process).
#[derive(Debug, Clone)]
pub struct Offsets {
    transfer: u64,
    stride: u64,
    segments: u64,
    base: u64,
    /// Random order: the offsets inside a segment, shuffled.
    order: Option<Vec<u64>>,
    per_segment: u64,
}

impl Offsets {
    /// The offsets of the data rank `source` of `size` writes.
    pub fn of(plan: &IorPlan, source: usize, size: usize) -> Offsets {
        let per_block = plan.per_block();
        let stride = if plan.file_per_process {
            plan.block
        } else {
            plan.block * size as u64
        };
        let base = if plan.file_per_process {
            0
        } else {
            plan.block * source as u64
        };
        let order = plan.random.then(|| {
            let mut order: Vec<u64> = if plan.file_per_process {
                (0..per_block).map(|j| j * plan.transfer).collect()
            } else {
                // As IOR: every transfer slot of a segment goes to a rank drawn from a
                // generator all ranks seed alike, so the slots are dealt out exactly once.
                let mut deal = Rng::stream(plan.seed, u64::MAX);
                (0..per_block * size as u64)
                    .filter(|_| deal.below(size as u64) == source as u64)
                    .map(|slot| slot * plan.transfer)
                    .collect()
            };
            let mut rng = Rng::stream(plan.seed, source as u64);
            for i in (1..order.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                order.swap(i, j);
            }
            order
        });
        let per_segment = order.as_ref().map_or(per_block, |o| o.len() as u64);
        Offsets {
            transfer: plan.transfer,
            stride,
            segments: plan.segments,
            base,
            order,
            per_segment,
        }
    }

    /// Transfers in all.
    pub fn count(&self) -> u64 {
        self.per_segment * self.segments
    }

    #[inline]
    pub fn at(&self, p: u64) -> u64 {
        let (segment, j) = (p / self.per_segment, p % self.per_segment);
        let within = match &self.order {
            Some(o) => o[j as usize],
            None => self.base + j * self.transfer,
        };
        (segment % self.segments) * self.stride + within
    }
}

/// Runs `plan` as rank `run.ranks.rank()`, between `timed_start` and `timed_end`.
pub fn run(plan: &IorPlan, run: &mut RunCtx<'_>) -> Result<IorResult, IorError> {
    run_paced(plan, run, Pace::default())
}

pub(crate) fn run_paced(
    plan: &IorPlan,
    run: &mut RunCtx<'_>,
    pace: Pace,
) -> Result<IorResult, IorError> {
    let ranks = run.ranks;
    let (rank, size, per_node) = (ranks.rank(), ranks.size(), ranks.ranks_per_node());
    let source = plan.read_source(rank, size, per_node);
    let mine = plan.file_of(rank);
    let theirs = plan.file_of(source);
    let owner = plan.file_per_process || rank == 0;
    if plan.write && owner {
        // A file of an earlier run, removed before the phase (IOR's RemoveFile); the
        // write phase's barrier orders this before every rank's open.
        remove_earlier(&mine)?;
    }
    let mut files = vec![mine.clone()];
    if plan.read && theirs != mine {
        files.push(theirs.clone());
    }
    run.hooks.run_files(files);
    let mut buf = Buffer::new(plan.transfer, plan.seed ^ rank as u64);
    let result = (|| {
        run.hooks.timed_start();
        let cpu = iolab_engine::usage::Usage::thread();
        let mut out = IorResult {
            plan: plan.clone(),
            rank,
            size,
            ranks_per_node: per_node,
            read_source: source,
            write: None,
            read: None,
            cpu: Default::default(),
        };
        // What each rank wrote, for the reads after a stonewalled write.
        let mut written: Option<Vec<u64>> = None;
        if plan.write {
            let offs = Offsets::of(plan, rank, size);
            let w = phase(
                plan,
                Access::Write,
                &mine,
                &offs,
                offs.count(),
                rank as u64,
                &mut buf,
                run.hooks,
                ranks,
                run.cancel,
                pace_of(&pace, rank),
            )?;
            let all = ranks
                .all_gather(&w.ops.to_le_bytes())
                .map_err(IorError::Ranks)?;
            written = Some(
                all.iter()
                    .map(|b| u64::from_le_bytes(b.as_slice().try_into().unwrap_or([0; 8])))
                    .collect(),
            );
            out.write = Some(w);
            if plan.read {
                run.hooks.between_phases();
            }
        }
        if plan.read {
            let offs = Offsets::of(plan, source, size);
            let target = written
                .as_ref()
                .and_then(|w| w.get(source).copied())
                .unwrap_or(offs.count());
            out.read = Some(phase(
                plan,
                Access::Read,
                &theirs,
                &offs,
                target,
                source as u64,
                &mut buf,
                run.hooks,
                ranks,
                run.cancel,
                pace_of(&pace, rank),
            )?);
        }
        out.cpu = (iolab_engine::usage::Usage::thread() - cpu).cpu();
        run.hooks.timed_end();
        Ok(out)
    })();
    match result {
        Ok(out) => {
            // No rank removes a file another still reads.
            ranks.barrier().map_err(IorError::Ranks)?;
            if !plan.keep && plan.write && owner {
                std::fs::remove_file(&mine).map_err(IorError::io("unlink", &mine))?;
            }
            Ok(out)
        }
        Err(e) => {
            if !plan.keep && plan.write && owner {
                // Best effort: the run's failure is what the user needs to see.
                let _ = std::fs::remove_file(&mine);
            }
            Err(e)
        }
    }
}

/// One phase of `plan` on this rank, inside a timed region the caller holds: IO500 runs the
/// write and the read of its two IOR workloads apart, between other workloads' phases. A
/// write removes an earlier run's file first (ordered before every rank's open by the
/// phase's barrier) and writes this rank's data; a read reads the data of the rank
/// [`IorPlan::read_source`] names, `target` transfers of it (all of them when `None`: what
/// that rank wrote unless a stonewall stopped it). Removing the files afterwards is the
/// caller's.
pub fn one_phase(
    plan: &IorPlan,
    access: Access,
    run: &mut RunCtx<'_>,
    target: Option<u64>,
) -> Result<PhaseResult, IorError> {
    let ranks = run.ranks;
    let (rank, size) = (ranks.rank(), ranks.size());
    let source = match access {
        Access::Write => rank,
        Access::Read => plan.read_source(rank, size, ranks.ranks_per_node()),
    };
    let path = plan.file_of(source);
    if access == Access::Write && (plan.file_per_process || rank == 0) {
        remove_earlier(&path)?;
    }
    let offs = Offsets::of(plan, source, size);
    let mut buf = Buffer::new(plan.transfer, plan.seed ^ rank as u64);
    phase(
        plan,
        access,
        &path,
        &offs,
        target.unwrap_or(offs.count()).min(offs.count()),
        source as u64,
        &mut buf,
        run.hooks,
        ranks,
        run.cancel,
        None,
    )
}

/// Removes the file an earlier run left, if any.
fn remove_earlier(path: &Path) -> Result<(), IorError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(IorError::io("unlink", path)(e)),
        _ => Ok(()),
    }
}

fn pace_of(pace: &Pace, rank: usize) -> Option<Duration> {
    pace.0.get(rank).copied().filter(|d| !d.is_zero())
}

/// One phase of one rank: barrier, open, `target` transfers (fewer at a stonewall, then as
/// many as the busiest rank with wear-out), fsync when asked, close.
#[allow(clippy::too_many_arguments)]
fn phase(
    plan: &IorPlan,
    access: Access,
    path: &Path,
    offs: &Offsets,
    target: u64,
    writer: u64,
    buf: &mut Buffer,
    hooks: &mut dyn RunHooks,
    ranks: &dyn Ranks,
    cancel: &AtomicBool,
    pace: Option<Duration>,
) -> Result<PhaseResult, IorError> {
    ranks.barrier().map_err(IorError::Ranks)?;
    let release = Instant::now();
    let ns = |t: Instant| t.saturating_duration_since(release).as_nanos() as u64;
    let open_start = Instant::now();
    let mut o = OpenOptions::new();
    match access {
        Access::Write => o.write(true).create(true).truncate(plan.file_per_process),
        Access::Read => o.read(true),
    };
    if plan.direct {
        o.custom_flags(libc::O_DIRECT);
    }
    let file = o.open(path).map_err(IorError::io("open", path))?;
    let open_end = Instant::now();
    let mut latency = LatencyHistogram::default();
    let expected = (target / 64).max(16) as usize;
    let mut progress = IntervalRecorder::new(release, PROGRESS_WIDTH, expected);
    let deadline = plan.stonewall.map(|d| open_end + d);
    let mut io = Io {
        file: &file,
        path,
        access,
        writer,
        stamp_errors: 0,
        first_writer: None,
    };
    let mut p = 0u64;
    let mut prev = open_end;
    let mut stonewalled = false;
    let t = plan.transfer;
    let mut last_shown = open_end;
    while p < target {
        io.transfer(buf.bytes_mut(), offs.at(p), p == 0)?;
        p += 1;
        if let Some(d) = pace {
            std::thread::sleep(d);
        }
        let now = Instant::now();
        latency.record(now.duration_since(prev).as_nanos() as u64);
        prev = now;
        progress.add(now, 1, t);
        // A relaxed load per transfer costs nothing beside a system call.
        if cancel.load(Ordering::Relaxed) {
            return Err(IorError::Interrupted);
        }
        if p & 255 == 0 && now.duration_since(last_shown) >= Duration::from_millis(100) {
            last_shown = now;
            hooks.records(p, target, now.duration_since(open_end));
        }
        if deadline.is_some_and(|d| now >= d) {
            stonewalled = p < target;
            break;
        }
    }
    let pairs_at_deadline = p;
    if plan.wear_out && plan.stonewall.is_some() {
        // Every rank goes on until it has done what the busiest did by the deadline.
        let most = ranks.sync_max(p).map_err(IorError::Ranks)?.min(target);
        while p < most {
            io.transfer(buf.bytes_mut(), offs.at(p), false)?;
            p += 1;
            let now = Instant::now();
            latency.record(now.duration_since(prev).as_nanos() as u64);
            prev = now;
            progress.add(now, 1, t);
            if cancel.load(Ordering::Relaxed) {
                return Err(IorError::Interrupted);
            }
        }
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(IorError::Interrupted);
    }
    if access == Access::Write && plan.fsync {
        file.sync_all().map_err(IorError::io("fsync", path))?;
    }
    let (stamp_errors, first_writer) = (io.stamp_errors, io.first_writer);
    let close_start = Instant::now();
    let fd = file.into_raw_fd();
    // SAFETY: fd is the file's own descriptor, given up by into_raw_fd and closed once.
    if unsafe { libc::close(fd) } != 0 {
        return Err(IorError::io("close", path)(io::Error::last_os_error()));
    }
    let close_end = Instant::now();
    Ok(PhaseResult {
        access,
        bytes: p * t,
        ops: p,
        start_ns: ns(open_start),
        open_ns: open_end.duration_since(open_start).as_nanos() as u64,
        xfer_ns: close_start.duration_since(open_end).as_nanos() as u64,
        close_ns: close_end.duration_since(close_start).as_nanos() as u64,
        end_ns: ns(close_end),
        latency,
        progress: progress.finish(close_end),
        pairs_at_deadline,
        stonewalled,
        stamp_errors,
        first_writer,
    })
}

/// The transfers of one phase on one file.
struct Io<'a> {
    file: &'a File,
    path: &'a Path,
    access: Access,
    /// The rank whose data this is.
    writer: u64,
    stamp_errors: u64,
    first_writer: Option<u64>,
}

impl Io<'_> {
    /// One transfer at `offset`: one `pwrite` or `pread` (more only when the kernel moves
    /// less than asked). Each transfer is stamped with its offset and its writer's rank in
    /// its first 16 bytes (IOR stamps its offset in its data too), so a read can tell whose
    /// data it got.
    #[inline]
    fn transfer(&mut self, buf: &mut [u8], offset: u64, first: bool) -> Result<(), IorError> {
        match self.access {
            Access::Write => {
                stamp(buf, offset, self.writer);
                let mut done = 0;
                while done < buf.len() {
                    let n = self
                        .file
                        .write_at(&buf[done..], offset + done as u64)
                        .map_err(IorError::io("pwrite", self.path))?;
                    if n == 0 {
                        return Err(IorError::io("pwrite", self.path)(io::Error::from(
                            io::ErrorKind::WriteZero,
                        )));
                    }
                    done += n;
                }
            }
            Access::Read => {
                let mut done = 0;
                while done < buf.len() {
                    let n = self
                        .file
                        .read_at(&mut buf[done..], offset + done as u64)
                        .map_err(IorError::io("pread", self.path))?;
                    if n == 0 {
                        return Err(IorError::Short {
                            path: self.path.to_path_buf(),
                            offset,
                        });
                    }
                    done += n;
                }
                let (off, writer) = read_stamp(buf);
                if first {
                    self.first_writer = writer;
                }
                if off != offset || writer.is_some_and(|w| w != self.writer) {
                    self.stamp_errors += 1;
                }
            }
        }
        Ok(())
    }
}

#[inline]
fn stamp(buf: &mut [u8], offset: u64, writer: u64) {
    if buf.len() >= 8 {
        buf[..8].copy_from_slice(&offset.to_le_bytes());
    }
    if buf.len() >= 16 {
        buf[8..16].copy_from_slice(&writer.to_le_bytes());
    }
}

/// The offset and writer a transfer's data is stamped with.
pub fn read_stamp(buf: &[u8]) -> (u64, Option<u64>) {
    let word = |r: std::ops::Range<usize>| {
        buf.get(r)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    (word(0..8).unwrap_or(u64::MAX), word(8..16))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::IorSpec;

    fn plan(f: impl FnOnce(&mut IorSpec)) -> IorPlan {
        let mut s = IorSpec::with_defaults("/d".into(), 7);
        f(&mut s);
        s.validate().unwrap()
    }

    #[test]
    fn offsets_are_iors() {
        // Shared file: segment × block × ranks + rank × block + t × transfer.
        let p = plan(|s| {
            s.transfer = Some(8);
            s.block = Some(16);
            s.segments = Some(2)
        });
        let o = Offsets::of(&p, 1, 3);
        let got: Vec<u64> = (0..o.count()).map(|i| o.at(i)).collect();
        assert_eq!(got, [16, 24, 64, 72]);
        let p = plan(|s| {
            s.transfer = Some(8);
            s.block = Some(16);
            s.segments = Some(2);
            s.file_per_process = Some(true)
        });
        let o = Offsets::of(&p, 1, 3);
        assert_eq!((0..4).map(|i| o.at(i)).collect::<Vec<_>>(), [0, 8, 16, 24]);
    }

    #[test]
    fn random_offsets_cover_each_slot_once() {
        for fpp in [true, false] {
            let p = plan(|s| {
                s.transfer = Some(8);
                s.block = Some(64);
                s.segments = Some(3);
                s.random = true;
                s.file_per_process = Some(fpp)
            });
            let size = 3;
            let mut all: Vec<(usize, u64)> = Vec::new();
            for r in 0..size {
                let o = Offsets::of(&p, r, size);
                all.extend((0..o.count()).map(|i| (r, o.at(i))));
            }
            let mut offs: Vec<(usize, u64)> = all
                .iter()
                .map(|&(r, o)| (if fpp { r } else { 0 }, o))
                .collect();
            offs.sort();
            offs.dedup();
            assert_eq!(offs.len(), 3 * 3 * 8, "fpp={fpp}");
            // Not in order.
            let o = Offsets::of(&p, 0, size);
            let seq: Vec<u64> = (0..o.count()).map(|i| o.at(i)).collect();
            let mut sorted = seq.clone();
            sorted.sort();
            assert_ne!(seq, sorted, "fpp={fpp}");
        }
    }
}
