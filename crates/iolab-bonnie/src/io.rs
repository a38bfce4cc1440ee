//! The file I/O phases, each with exactly bonnie++ 2.00's calls (docs/bonnie.md):
//!
//! | phase | untimed before | timed, per chunk | timed at the end |
//! |---|---|---|---|
//! | putc | `unlink`, `open(O_RDWR\|O_CREAT\|O_EXCL)` | `write(fd, &c, 1)` × chunk | `fsync`, `close` |
//! | put_block | `unlink`, `open(O_RDWR\|O_CREAT\|O_EXCL)` | `write` of a chunk | `fsync`, `close` |
//! | rewrite | `open(O_RDWR)`, `lseek(0)` | `read`, `lseek(-chunk, SEEK_CUR)`, `write` | `fsync`, `close` |
//! | getc | `open(O_RDWR)` | `read(fd, &c, 1)` × chunk | `fsync`, `close` |
//! | get_block | `open(O_RDWR)`, `lseek(0)` | `read` of a chunk | `fsync`, `close` |
//! | seeks | each seeker: `open(O_RDWR)` | `lseek` + `read`; 1 in 10: `lseek` + `write` | `fsync`, `close` per seeker |
//!
//! With `direct`, every open of the test file above adds O_DIRECT; with `sync` (bonnie++
//! `-b`), a seek's rewrite is followed by `fsync`.
//!
//! The per-char phases are timed a chunk at a time (bonnie++'s latency is per chunk too):
//! a clock read per byte would cost more than the byte's system call is worth measuring.

use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use iolab_engine::buffer::AlignedBuf;
use iolab_engine::gate::{spawn_failed, worker_builder, AbortOnPanic, Gate};
use iolab_engine::nocancel;
use iolab_engine::stats::LatencyHistogram;
use iolab_engine::usage::{CpuMark, Usage};
use iolab_engine::EngineError;
use iolab_util::rng::{mix64, Rng};

use crate::error::BonnieError;
use crate::phase::Phase;
use crate::run::{io_err, PhaseResult, Worker};

/// An open descriptor, closed when dropped (after a failure); a phase ends with
/// [`Fd::sync_close`] inside its timing.
pub(crate) struct Fd(pub RawFd);

impl Fd {
    pub fn openat(
        dir: RawFd,
        name: &CStr,
        flags: libc::c_int,
        mode: libc::mode_t,
    ) -> io::Result<Fd> {
        loop {
            // SAFETY: a NUL-terminated name; the descriptor is owned by the returned Fd.
            let fd = unsafe { libc::openat(dir, name.as_ptr(), flags, libc::c_uint::from(mode)) };
            if fd >= 0 {
                return Ok(Fd(fd));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    pub fn open(path: &CStr, flags: libc::c_int) -> io::Result<Fd> {
        Fd::openat(libc::AT_FDCWD, path, flags, 0o600)
    }

    /// `fsync` then `close`, as bonnie++ ends every I/O phase.
    pub fn sync_close(self) -> io::Result<()> {
        let fd = self.0;
        std::mem::forget(self);
        let e = fsync(fd).err();
        // SAFETY: a plain call on a descriptor this Fd owned.
        let closed = unsafe { libc::close(fd) };
        match e {
            Some(e) => Err(e),
            None if closed != 0 => Err(io::Error::last_os_error()),
            None => Ok(()),
        }
    }

    /// `close` alone.
    pub fn close(self) -> io::Result<()> {
        let fd = self.0;
        std::mem::forget(self);
        // SAFETY: a plain call on a descriptor this Fd owned.
        if unsafe { libc::close(fd) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours; errors cannot be reported from a drop.
        unsafe { libc::close(self.0) };
    }
}

/// Runs `call(done)` until `len` bytes are done, retrying after EINTR; `call` moves bytes
/// from offset `done` and returns what the system call returned.
#[inline]
fn all(
    len: usize,
    mut call: impl FnMut(usize) -> isize,
    short: fn() -> io::Error,
) -> io::Result<()> {
    let mut done = 0;
    while done < len {
        let n = call(done);
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(short());
        }
        done += n as usize;
    }
    Ok(())
}

/// `fsync` of a descriptor the caller owns (bonnie++'s `-b`).
#[inline]
pub(crate) fn fsync(fd: RawFd) -> io::Result<()> {
    // SAFETY: a plain syscall on an open descriptor.
    if unsafe { nocancel::fsync(fd) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes all of `buf` at the file position (one `write` unless the kernel takes less).
#[inline]
pub(crate) fn write_full(fd: RawFd, buf: &[u8]) -> io::Result<()> {
    all(
        buf.len(),
        // SAFETY: the pointer and length stay inside `buf`.
        |done| unsafe { nocancel::write(fd, buf[done..].as_ptr().cast(), buf.len() - done) },
        || io::ErrorKind::WriteZero.into(),
    )
}

/// Fills all of `buf` from the file position (one `read` unless the kernel gives less); the
/// end of the file before that is an error.
#[inline]
pub(crate) fn read_full(fd: RawFd, buf: &mut [u8]) -> io::Result<()> {
    let len = buf.len();
    let ptr = buf.as_mut_ptr();
    all(
        len,
        // SAFETY: the pointer and length stay inside `buf`, borrowed for the whole call.
        |done| unsafe { nocancel::read(fd, ptr.add(done).cast(), len - done) },
        || {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file ended early: something else truncated it",
            )
        },
    )
}

#[inline]
fn lseek(fd: RawFd, offset: i64, whence: libc::c_int) -> io::Result<()> {
    // SAFETY: a plain call on an open descriptor.
    if unsafe { nocancel::lseek(fd, offset, whence) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The slow path of a 1-byte transfer that did not move its byte.
#[cold]
fn byte_failed(n: isize) -> io::Error {
    if n < 0 {
        io::Error::last_os_error()
    } else if n == 0 {
        io::Error::new(io::ErrorKind::UnexpectedEof, "the file ended early")
    } else {
        io::Error::other("moved more than one byte")
    }
}

/// A buffer of one chunk.
fn chunk_buf(len: u64) -> Result<AlignedBuf, BonnieError> {
    AlignedBuf::zeroed(len).map_err(|e| EngineError::alloc("a chunk", e).into())
}

/// Runs the I/O phases that the plan asks for, in bonnie++'s order.
pub(crate) fn run(w: &mut Worker<'_, '_>) -> Result<(), BonnieError> {
    let plan = w.plan().clone();
    let chunk = plan.chunk_size as usize;
    let path = w.shared.path.clone();
    let cpath = w.shared.cpath.clone();
    let err = |op, e| io_err(op, &path, e);
    let direct = if plan.direct { libc::O_DIRECT } else { 0 };
    let create = |w: &mut Worker<'_, '_>| -> Result<Fd, BonnieError> {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(err("unlink", e)),
        }
        let fd = Fd::open(&cpath, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | direct)
            .map_err(|e| iolab_engine::files::create_error(&path, &plan.dir, e))?;
        w.made_file = true;
        Ok(fd)
    };
    let open = || Fd::open(&cpath, libc::O_RDWR | direct).map_err(|e| err("open", e));
    let mut buf = chunk_buf(plan.chunk_size)?;

    if plan.runs(Phase::Putc) {
        let fd = create(w)?;
        timed_chunks(
            w,
            Phase::Putc,
            fd,
            plan.char_chunks(),
            plan.char_size,
            |fd| {
                for i in 0..chunk {
                    let c = (i & 0x7f) as u8;
                    // SAFETY: one byte from a local.
                    let n = unsafe { nocancel::write(fd, (&c as *const u8).cast(), 1) };
                    if n != 1 {
                        return Err(err("write", byte_failed(n)));
                    }
                }
                Ok(())
            },
        )?;
    }

    if plan.runs(Phase::PutBlock) {
        let fd = create(w)?;
        let b = &mut buf.as_mut_slice()[..chunk];
        let mut next = 0;
        timed_chunks(w, Phase::PutBlock, fd, plan.chunks(), plan.size, |fd| {
            b[next] = b[next].wrapping_add(1);
            next = (next + 1) % chunk;
            write_full(fd, b).map_err(|e| err("write", e))
        })?;
    }

    if plan.runs(Phase::Rewrite) {
        let fd = open()?;
        lseek(fd.0, 0, libc::SEEK_SET).map_err(|e| err("lseek", e))?;
        let b = &mut buf.as_mut_slice()[..chunk];
        let back = -(chunk as i64);
        let mut next = 0;
        // bonnie++ counts the file once: its rate is the file size over the time.
        timed_chunks(w, Phase::Rewrite, fd, plan.chunks(), plan.size, |fd| {
            read_full(fd, b).map_err(|e| err("read", e))?;
            b[next] = b[next].wrapping_add(1);
            next = (next + 1) % chunk;
            lseek(fd, back, libc::SEEK_CUR).map_err(|e| err("lseek", e))?;
            write_full(fd, b).map_err(|e| err("write", e))
        })?;
    }

    if plan.runs(Phase::Getc) {
        let fd = open()?;
        let mut c = 0u8;
        timed_chunks(
            w,
            Phase::Getc,
            fd,
            plan.char_chunks(),
            plan.char_size,
            |fd| {
                for _ in 0..chunk {
                    // SAFETY: one byte into a local.
                    let n = unsafe { nocancel::read(fd, (&mut c as *mut u8).cast(), 1) };
                    if n != 1 {
                        return Err(err("read", byte_failed(n)));
                    }
                }
                Ok(())
            },
        )?;
    }

    if plan.runs(Phase::GetBlock) {
        let fd = open()?;
        lseek(fd.0, 0, libc::SEEK_SET).map_err(|e| err("lseek", e))?;
        let b = &mut buf.as_mut_slice()[..chunk];
        timed_chunks(w, Phase::GetBlock, fd, plan.chunks(), plan.size, |fd| {
            read_full(fd, b).map_err(|e| err("read", e))
        })?;
    }

    if plan.runs(Phase::Seeks) {
        let r = seeks(w)?;
        w.done += r.ops;
        w.shared.seeks_claimed.store(0, Ordering::Relaxed);
        w.shared.progress.store(w.done, Ordering::Relaxed);
        w.results.push(r);
        if w.shared.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Interrupted.into());
        }
    }
    Ok(())
}

/// One timed I/O phase of `n` chunks on `fd`: `chunk(fd)` issues one chunk's calls and is
/// timed as one operation; the `fsync` + `close` that end the phase are inside its timing.
fn timed_chunks(
    w: &mut Worker<'_, '_>,
    phase: Phase,
    fd: Fd,
    n: u64,
    bytes: u64,
    mut chunk: impl FnMut(RawFd) -> Result<(), BonnieError>,
) -> Result<(), BonnieError> {
    let clock = w.clock();
    let mut lat = LatencyHistogram::default();
    let s = w.start();
    for _ in 0..n {
        let t0 = clock.ticks();
        chunk(fd.0)?;
        lat.record(clock.ns(clock.ticks() - t0));
        w.tick()?;
    }
    fd.sync_close()
        .map_err(|e| io_err("fsync", &w.shared.path, e))?;
    w.finish(phase, s, n, bytes, lat);
    Ok(())
}

/// What one seeker did.
#[derive(Default)]
struct Seeker {
    ops: u64,
    bytes: u64,
    latency: LatencyHistogram,
    cpu_ns: u64,
    usage: Usage,
    /// Clock ticks when its `close` returned.
    end: u64,
}

/// The seek phase: `seekers` threads, each with its own descriptor of the file, take seek
/// numbers from one shared counter until all are taken (bonnie++'s children read tickets
/// from one pipe). Seek `k`'s chunk and whether it is rewritten derive from the seed and
/// `k` alone, so the same run does the same seeks whichever seeker takes them. Timed from
/// the release of the seekers to the last one's `close`.
fn seeks(w: &mut Worker<'_, '_>) -> Result<PhaseResult, BonnieError> {
    let shared = w.shared;
    let plan = shared.plan;
    let n = plan.seekers as usize;
    let ready = Gate::new(n + 1);
    let go = Gate::new(n + 1);
    let abort = AtomicBool::new(false);
    let base = Rng::stream(plan.seed, 2).next_u64();
    shared.seeks_claimed.store(0, Ordering::Relaxed);
    let clock = shared.clock;
    let seeker = |_: usize| -> Result<Seeker, BonnieError> {
        let _guard = AbortOnPanic([&ready, &go]);
        iolab_engine::fdtable::make_private();
        let direct = if plan.direct { libc::O_DIRECT } else { 0 };
        let setup = Fd::open(&shared.cpath, libc::O_RDWR | direct)
            .map_err(|e| io_err("open", &shared.path, e))
            .and_then(|fd| Ok((fd, chunk_buf(plan.chunk_size)?)));
        if !(ready.wait() && go.wait()) {
            return Ok(Seeker::default());
        }
        let (fd, mut buf) = setup?;
        let chunk = plan.chunk_size as usize;
        let b = &mut buf.as_mut_slice()[..chunk];
        let chunks = plan.chunks();
        let fail = |op, e| {
            abort.store(true, Ordering::Relaxed);
            io_err(op, &shared.path, e)
        };
        let mut me = Seeker::default();
        let cpu0 = CpuMark::now();
        loop {
            let k = shared.seeks_claimed.fetch_add(1, Ordering::Relaxed);
            if k >= u64::from(plan.seeks)
                || abort.load(Ordering::Relaxed)
                || shared.cancel.load(Ordering::Relaxed)
            {
                break;
            }
            let x = mix64(base ^ k);
            let rewrite = x.is_multiple_of(10);
            let at = (x / 10 % chunks * plan.chunk_size) as i64;
            let t0 = clock.ticks();
            lseek(fd.0, at, libc::SEEK_SET).map_err(|e| fail("lseek", e))?;
            read_full(fd.0, b).map_err(|e| fail("read", e))?;
            if rewrite {
                let i = (x as usize) % chunk;
                b[i] = b[i].wrapping_sub(1);
                lseek(fd.0, at, libc::SEEK_SET).map_err(|e| fail("lseek", e))?;
                write_full(fd.0, b).map_err(|e| fail("write", e))?;
                if plan.sync {
                    fsync(fd.0).map_err(|e| fail("fsync", e))?;
                }
                me.bytes += plan.chunk_size;
            }
            me.latency.record(clock.ns(clock.ticks() - t0));
            me.ops += 1;
            me.bytes += plan.chunk_size;
        }
        fd.sync_close().map_err(|e| fail("fsync", e))?;
        me.end = clock.ticks();
        (me.usage, me.cpu_ns) = cpu0.since();
        Ok(me)
    };
    let (start, outcomes) = thread::scope(|s| {
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            let seeker = &seeker;
            match worker_builder(format!("iolab-seek{i}"), i, None)
                .spawn_scoped(s, move || seeker(i))
            {
                Ok(h) => handles.push(h),
                Err(e) => {
                    abort.store(true, Ordering::Relaxed);
                    return (
                        0,
                        vec![Err(spawn_failed([&ready, &go], handles, n, e).into())],
                    );
                }
            }
        }
        if !ready.wait() {
            go.abort();
        }
        let start = clock.ticks();
        go.wait();
        let out: Vec<Result<Seeker, BonnieError>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|p| Err(EngineError::from_panic(p).into()))
            })
            .collect();
        (start, out)
    });
    if shared.cancel.load(Ordering::Relaxed) {
        return Err(EngineError::Interrupted.into());
    }
    let mut r = PhaseResult {
        phase: Phase::Seeks,
        elapsed_ns: 0,
        ops: 0,
        bytes: 0,
        cpu_ns: 0,
        usage: Usage::default(),
        latency: LatencyHistogram::default(),
        timing_error_ns: w.timing_error_ns,
        threads: plan.seekers,
    };
    let mut end = start;
    for o in outcomes {
        let s = o?;
        r.ops += s.ops;
        r.bytes += s.bytes;
        r.cpu_ns += s.cpu_ns;
        r.usage = r.usage + s.usage;
        r.latency.merge(&s.latency);
        end = end.max(s.end);
    }
    r.elapsed_ns = clock.ns(end - start);
    Ok(r)
}
