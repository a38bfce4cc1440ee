//! The live tracer: a private tracefs instance with the block events of one device enabled,
//! and a thread that reads its `trace_pipe` into a [`Summarizer`].

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::device::TraceDevice;
use crate::error::TraceError;
use crate::event::Action;
use crate::save::RequestLog;
use crate::summary::{BlockTrace, Summarizer};
use crate::tracefs::{tracefs_root, Instance};
use iolab_sys::DevT;
use iolab_tracefile::TraceInfo;

/// The trace clock the tracer sets: `CLOCK_MONOTONIC`, the clock of `std::time::Instant`.
pub const TRACE_CLOCK: &str = "mono";

/// How long the reader sleeps in `poll(2)` when the pipe is empty.
const POLL_MS: i32 = 100;
/// How long [`BlockTracer::stop`] lets the reader drain what is left.
const DRAIN_LIMIT: Duration = Duration::from_secs(10);

/// Options of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceOptions {
    /// Ring buffer per CPU, KiB (`buffer_size_kb`). An event takes about 60–80 bytes; the
    /// reader empties the buffer at least 10 times a second. Default 8192.
    pub buffer_kb: u32,
    /// Keep every event in [`BlockTrace::records`] (for blkparse output). Default false.
    pub keep_records: bool,
    /// Length of the periods of [`BlockTrace::intervals`]. Default 1 s.
    pub interval: Duration,
    /// Also trace `block_bio_queue` (blkparse `Q`): bios as submitted, with their preflush
    /// and FUA flags before the flush machinery rewrites them. Default true.
    pub bio_events: bool,
    /// Also trace `block_rq_insert` (blkparse `I`), for queue times. Default true.
    pub insert_events: bool,
    /// Save every request (issue time, offset, length, op, flags, latency) to this file in
    /// iolab's trace format (docs/traces.md); [`BlockTrace::saved`] says what was written.
    /// Default none.
    pub save: Option<PathBuf>,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            buffer_kb: 8192,
            keep_records: false,
            interval: Duration::from_secs(1),
            bio_events: true,
            insert_events: true,
            save: None,
        }
    }
}

impl TraceOptions {
    fn validate(&self) -> Result<(), TraceError> {
        if self.buffer_kb < 16 || self.buffer_kb > 1 << 20 {
            return Err(TraceError::BadOption(
                "buffer_kb must be between 16 and 1048576 (KiB per CPU)",
            ));
        }
        if self.interval < Duration::from_micros(1) {
            return Err(TraceError::BadOption("interval must be at least 1 µs"));
        }
        Ok(())
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds, the `mono` trace clock.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// A running trace. [`BlockTracer::stop`] ends it and returns the summary; dropping it
/// without `stop` ends it too. Either way the tracefs instance is removed.
#[derive(Debug)]
pub struct BlockTracer {
    device: TraceDevice,
    events: Vec<String>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<Result<Summarizer, TraceError>>>,
    // Dropped after `Drop::drop` joined the reader (which holds trace_pipe open).
    instance: Instance,
}

impl BlockTracer {
    /// Start tracing `device` (see [`TraceDevice::resolve`]). Needs root and a mounted
    /// tracefs.
    pub fn start(device: &TraceDevice, opts: &TraceOptions) -> Result<BlockTracer, TraceError> {
        opts.validate()?;
        let root = tracefs_root()?;
        Self::start_in(&root, device, opts)
    }

    /// Start tracing the device with this number.
    pub fn start_dev(dev: DevT, opts: &TraceOptions) -> Result<BlockTracer, TraceError> {
        opts.validate()?;
        Self::start(&TraceDevice::from_dev(dev)?, opts)
    }

    fn start_in(
        root: &Path,
        device: &TraceDevice,
        opts: &TraceOptions,
    ) -> Result<BlockTracer, TraceError> {
        for required in [Action::Issue, Action::Complete] {
            if !root
                .join("events/block")
                .join(required.event_name())
                .exists()
            {
                return Err(TraceError::EventMissing(required.event_name()));
            }
        }
        let instance = Instance::create(root)?;
        instance.write("tracing_on", "0")?;
        instance.write("buffer_size_kb", &opts.buffer_kb.to_string())?;
        instance.write("trace_clock", TRACE_CLOCK)?;
        let mut events = Vec::new();
        for (action, wanted) in [
            (Action::Issue, true),
            (Action::Complete, true),
            (Action::Requeue, true),
            (Action::Insert, opts.insert_events),
            (Action::Queue, opts.bio_events),
        ] {
            let name = action.event_name();
            if !wanted || !instance.path().join("events/block").join(name).exists() {
                continue;
            }
            let filter = if action == Action::Queue {
                device.bio_filter()
            } else {
                device.request_filter()
            };
            instance.write(&format!("events/block/{name}/filter"), &filter)?;
            instance.write(&format!("events/block/{name}/enable"), "1")?;
            events.push(name.to_owned());
        }
        let pipe_path = instance.path().join("trace_pipe");
        let pipe = File::options()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&pipe_path)
            .map_err(|e| TraceError::io("open", &pipe_path, e))?;
        // Whole microseconds, like the event timestamps, so relative times stay round.
        let start_ns = monotonic_ns() / 1000 * 1000;
        let mut summarizer = Summarizer::new(
            device.clone(),
            start_ns,
            u64::try_from(opts.interval.as_nanos()).unwrap_or(u64::MAX),
            opts.keep_records,
        );
        if let Some(path) = &opts.save {
            summarizer.set_log(RequestLog::create(path, &trace_info(device, start_ns))?);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let reader = std::thread::Builder::new()
            .name("iolab-blocktrace".into())
            .spawn(move || read_loop(pipe, pipe_path, summarizer, &stop2))
            .map_err(|e| TraceError::io("start a reader thread for", instance.path(), e))?;
        let tracer = BlockTracer {
            device: device.clone(),
            events,
            stop,
            reader: Some(reader),
            instance,
        };
        tracer.instance.write("tracing_on", "1")?;
        Ok(tracer)
    }

    /// The device traced.
    pub fn device(&self) -> &TraceDevice {
        &self.device
    }

    /// The tracefs instance directory (removed when the tracer stops or is dropped).
    pub fn instance_path(&self) -> &Path {
        self.instance.path()
    }

    /// Stop tracing, read what is left in the buffer, remove the instance and summarize.
    pub fn stop(mut self) -> Result<BlockTrace, TraceError> {
        let off = self.instance.write("tracing_on", "0");
        let stop_ns = monotonic_ns();
        let summarizer = self.join_reader();
        let cpu_stats = self.instance.cpu_stats();
        self.instance.remove()?;
        off?;
        let mut summarizer = summarizer?;
        let saved = summarizer.take_log().map(RequestLog::finish).transpose()?;
        let mut trace = summarizer.finish(
            stop_ns,
            TRACE_CLOCK,
            cpu_stats?,
            std::mem::take(&mut self.events),
        );
        trace.saved = saved;
        Ok(trace)
    }

    fn join_reader(&mut self) -> Result<Summarizer, TraceError> {
        self.stop.store(true, Ordering::Release);
        match self.reader.take() {
            Some(h) => h.join().map_err(|_| TraceError::ReaderPanicked)?,
            None => Err(TraceError::ReaderPanicked),
        }
    }
}

impl Drop for BlockTracer {
    fn drop(&mut self) {
        if self.reader.is_some() {
            let _ = self.instance.write("tracing_on", "0");
            let _ = self.join_reader();
        }
        // `instance` is dropped next: rmdir.
    }
}

/// The header of a saved trace of `device`.
fn trace_info(device: &TraceDevice, start_ns: u64) -> TraceInfo {
    let lbs = Path::new("/sys/dev/block")
        .join(device.disk_dev.to_string())
        .join("queue/logical_block_size");
    let sector_size = std::fs::read_to_string(lbs)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .filter(|n| n.is_power_of_two())
        .unwrap_or(512);
    TraceInfo {
        device: device.name.clone(),
        major: device.dev.major,
        minor: device.dev.minor,
        sector_size,
        partition_offset: device.partition.map_or(0, |p| p.start.saturating_mul(512)),
        start_ns,
    }
}

/// Wait until the pipe has data or `ms` passed.
fn poll_wait(file: &File, ms: i32) {
    let mut fds = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for an fd we own, for the duration of the call.
    let r = unsafe { libc::poll(&mut fds, 1, ms) };
    if r < 0 {
        std::thread::sleep(Duration::from_millis(ms as u64));
    }
}

fn feed(s: &mut Summarizer, pending: &mut Vec<u8>, data: &[u8]) {
    let mut rest = data;
    while let Some(i) = rest.iter().position(|&b| b == b'\n') {
        if pending.is_empty() {
            s.push_line(&String::from_utf8_lossy(&rest[..i]));
        } else {
            pending.extend_from_slice(&rest[..i]);
            s.push_line(&String::from_utf8_lossy(pending));
            pending.clear();
        }
        rest = &rest[i + 1..];
    }
    pending.extend_from_slice(rest);
}

fn read_loop(
    mut file: File,
    path: PathBuf,
    mut s: Summarizer,
    stop: &AtomicBool,
) -> Result<Summarizer, TraceError> {
    let mut buf = vec![0u8; 1 << 16];
    let mut pending = Vec::new();
    let mut deadline = None;
    loop {
        // Read once more after the stop request: everything recorded before it is drained.
        let stopping = stop.load(Ordering::Acquire);
        if stopping && deadline.is_none() {
            deadline = Some(Instant::now() + DRAIN_LIMIT);
        }
        match file.read(&mut buf) {
            Ok(0) if stopping => break,
            Ok(0) => poll_wait(&file, POLL_MS),
            Ok(n) => {
                feed(&mut s, &mut pending, &buf[..n]);
                if deadline.is_some_and(|d| Instant::now() > d) {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if stopping {
                    break;
                }
                poll_wait(&file, POLL_MS);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TraceError::io("read", path, e)),
        }
    }
    if !pending.is_empty() {
        s.push_line(&String::from_utf8_lossy(&pending));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked() {
        let _hang = iolab_testkit::timeout(120);
        assert!(TraceOptions::default().validate().is_ok());
        let o = TraceOptions {
            buffer_kb: 0,
            ..Default::default()
        };
        assert!(matches!(o.validate(), Err(TraceError::BadOption(_))));
        let o = TraceOptions {
            interval: Duration::ZERO,
            ..Default::default()
        };
        assert!(matches!(
            BlockTracer::start(&TraceDevice::whole("x", DevT::new(1, 1)), &o),
            Err(TraceError::BadOption(_))
        ));
    }

    #[test]
    fn lines_split_across_reads() {
        let mut s = Summarizer::new(
            TraceDevice::whole("loop1", DevT::new(7, 1)),
            0,
            1 << 30,
            true,
        );
        let mut pending = Vec::new();
        let text = b"a-1 [000] ..... 1.000000: block_rq_issue: 7,1 W 4096 () 0 + 8 [a]\na-1 [000] ..... 1.000010: block_rq_complete: 7,1 W () 0 + 8 [0]\n";
        let (x, y) = text.split_at(30);
        feed(&mut s, &mut pending, x);
        feed(&mut s, &mut pending, y);
        assert!(pending.is_empty());
        let t = s.finish(2_000_000_000, "mono", Vec::new(), Vec::new());
        assert_eq!(t.records.len(), 2);
        assert_eq!(t.writes.latency.unwrap().count, 1);
    }

    #[test]
    fn monotonic_matches_instant_clock() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(b >= a && a > 0);
    }
}
