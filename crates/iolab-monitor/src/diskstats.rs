//! `/proc/diskstats`: block-layer I/O counters per device, and the `iostat -x` columns
//! derived from two samples.
//!
//! Each line is `major minor name` followed by the fields of the kernel's
//! Documentation/admin-guide/iostats.rst, numbered f1..f17 there and here:
//!
//! | fields | kernel | line length |
//! |---|---|---|
//! | f1–f11: reads, writes, in-flight, busy time | all 2.6+ | 14 |
//! | f12–f15: discards | 4.18+ | 18 |
//! | f16–f17: flushes | 5.5+ | 20 |
//!
//! Quirks:
//! - Sectors are always 512 bytes, whatever the device's logical block size.
//! - Counts (f1–f3, f5–f7, f12–f14, f16) are `unsigned long` in the kernel: 64-bit on 64-bit
//!   kernels, 32-bit on 32-bit ones. Times in ms (f4, f8, f10, f11, f15, f17) are
//!   `unsigned int`, so they wrap at 2^32 ms (49.7 days) even on 64-bit kernels; f11 sums the
//!   time of all requests in flight and so wraps much sooner on a busy device. See
//!   [`DiskDelta::between`] for how wraps are undone.
//! - f9 (I/Os in flight) is a gauge, not a counter.
//! - Partitions of kernels before 2.6.25 had a 7-field line (4 counters); such lines are
//!   skipped, as `iostat -x` skips them.
//! - Since 5.0, f11 is the sum of f4, f8, f15 and f17 (per-request times), no longer a
//!   queue-time integral; `aqu-sz` is computed from it all the same, as sysstat does.

use std::time::Duration;

use iolab_sys::error::{parse_u64, read_to_string, Error, ParseError, ParseErrorKind};
use iolab_sys::DevT;

/// The file this module parses.
pub const PATH: &str = "/proc/diskstats";

/// Bytes per diskstats sector (fixed by the kernel, independent of the device).
pub const SECTOR_BYTES: u64 = 512;

/// Discard counters (f12–f15), kernel 4.18+.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiscardCounters {
    /// f12: discards completed.
    pub discards: u64,
    /// f13: discards merged.
    pub discards_merged: u64,
    /// f14: sectors discarded (512 B).
    pub sectors_discarded: u64,
    /// f15: ms spent on discards (32-bit, wraps).
    pub discard_ms: u64,
}

/// Flush counters (f16–f17), kernel 5.5+. Flushes are counted as the device driver sees them
/// (after the block layer merged them), not as issued by filesystems.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlushCounters {
    /// f16: flush requests completed.
    pub flushes: u64,
    /// f17: ms spent on flushes (32-bit, wraps).
    pub flush_ms: u64,
}

/// The counters of one diskstats line (or of a `/sys/block/NAME/stat` file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiskCounters {
    /// f1: reads completed (after merging).
    pub reads: u64,
    /// f2: reads merged into other requests before reaching the device.
    pub reads_merged: u64,
    /// f3: sectors read (512 B).
    pub sectors_read: u64,
    /// f4: ms spent by all reads, from issue to completion, summed over requests (32-bit).
    pub read_ms: u64,
    /// f5: writes completed (after merging).
    pub writes: u64,
    /// f6: writes merged.
    pub writes_merged: u64,
    /// f7: sectors written (512 B).
    pub sectors_written: u64,
    /// f8: ms spent by all writes, summed over requests (32-bit).
    pub write_ms: u64,
    /// f9: I/Os in flight right now (a gauge; the only field that goes down).
    pub in_flight: u64,
    /// f10: ms during which at least one I/O was in flight (busy time, 32-bit).
    pub io_ms: u64,
    /// f11: weighted ms doing I/O: sum of all requests' times (32-bit).
    pub weighted_io_ms: u64,
    /// f12–f15, absent before kernel 4.18.
    pub discard: Option<DiscardCounters>,
    /// f16–f17, absent before kernel 5.5.
    pub flush: Option<FlushCounters>,
}

/// One device's line of `/proc/diskstats`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskStat {
    /// Device number.
    pub dev: DevT,
    /// Kernel name (`vda`, `nvme0n1p2`, `loop3`, `dm-0`).
    pub name: String,
    /// Its counters.
    pub counters: DiskCounters,
}

/// A `/proc/diskstats` sample: every device, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diskstats {
    /// The devices.
    pub disks: Vec<DiskStat>,
}

impl Diskstats {
    /// The device with this kernel name.
    pub fn get(&self, name: &str) -> Option<&DiskStat> {
        self.disks.iter().find(|d| d.name == name)
    }

    /// The device with this number.
    pub fn get_dev(&self, dev: DevT) -> Option<&DiskStat> {
        self.disks.iter().find(|d| d.dev == dev)
    }

    /// Iterate over the devices.
    pub fn iter(&self) -> std::slice::Iter<'_, DiskStat> {
        self.disks.iter()
    }
}

/// Parse the counter fields of a diskstats line (after the name) or of a sysfs `stat` file.
/// 11, 15, 17 or more values; more than 17 are ignored (fields of a future kernel).
fn parse_counters(
    file: &'static str,
    idx: usize,
    line: &str,
    f: &[&str],
    offset: usize,
) -> Result<DiskCounters, ParseError> {
    if f.len() < 11 || matches!(f.len(), 12..=14 | 16) {
        return Err(ParseError::at(
            file,
            idx,
            ParseErrorKind::FieldCount {
                expected: "14, 18 or 20 (11, 15 or 17 counters)",
                found: f.len() + offset,
            },
            line,
        ));
    }
    const NAMES: [&str; 17] = [
        "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12", "f13", "f14",
        "f15", "f16", "f17",
    ];
    let mut v = [0u64; 17];
    for ((slot, value), name) in v.iter_mut().zip(f).zip(NAMES) {
        *slot = parse_u64(file, idx, line, name, value)?;
    }
    Ok(DiskCounters {
        reads: v[0],
        reads_merged: v[1],
        sectors_read: v[2],
        read_ms: v[3],
        writes: v[4],
        writes_merged: v[5],
        sectors_written: v[6],
        write_ms: v[7],
        in_flight: v[8],
        io_ms: v[9],
        weighted_io_ms: v[10],
        discard: (f.len() >= 15).then_some(DiscardCounters {
            discards: v[11],
            discards_merged: v[12],
            sectors_discarded: v[13],
            discard_ms: v[14],
        }),
        flush: (f.len() >= 17).then_some(FlushCounters {
            flushes: v[15],
            flush_ms: v[16],
        }),
    })
}

/// Parse the text of `/proc/diskstats`.
pub fn parse(text: &str) -> Result<Diskstats, ParseError> {
    let mut disks = Vec::new();
    for (idx, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        // Old-kernel partition line: major minor name rio rsect wio wsect. Skipped.
        if f.len() == 7 {
            continue;
        }
        if f.len() < 3 {
            return Err(ParseError::at(
                PATH,
                idx,
                ParseErrorKind::FieldCount {
                    expected: "14, 18 or 20",
                    found: f.len(),
                },
                line,
            ));
        }
        let num = |i: usize, name: &str| -> Result<u32, ParseError> {
            f[i].parse::<u32>().map_err(|_| {
                ParseError::at(
                    PATH,
                    idx,
                    ParseErrorKind::BadNumber {
                        field: name.to_owned(),
                        value: f[i].to_owned(),
                    },
                    line,
                )
            })
        };
        disks.push(DiskStat {
            dev: DevT::new(num(0, "major")?, num(1, "minor")?),
            name: f[2].to_owned(),
            counters: parse_counters(PATH, idx, line, &f[3..], 3)?,
        });
    }
    Ok(Diskstats { disks })
}

/// Parse `/sys/block/NAME/stat` (or `/sys/class/block/NAME/stat`): the same counters as a
/// diskstats line, without major, minor and name.
pub fn parse_sysfs_stat(text: &str) -> Result<DiskCounters, ParseError> {
    const FILE: &str = "/sys/block/NAME/stat";
    let line = text.lines().next().unwrap_or("");
    let f: Vec<&str> = line.split_ascii_whitespace().collect();
    parse_counters(FILE, 0, line, &f, 0)
}

/// Read and parse `/proc/diskstats`.
pub fn read() -> Result<Diskstats, Error> {
    Ok(parse(&read_to_string(PATH)?)?)
}

/// Difference of a cumulative counter from `earlier` to `later`, undoing a 32-bit wrap.
///
/// Forward: the plain difference. Backwards, with `earlier` < 2^32: the counter may be a
/// 32-bit one that wrapped (all ms fields; every field on 32-bit kernels). Assuming at most
/// one wrap between samples (as fio's `safe_32bit_diff` does), the distance is
/// `2^32 + later − earlier`; it is accepted when below 2^31 (half the range, as in serial
/// number arithmetic, RFC 1982). A larger distance means the counter really stepped back a
/// little (older kernels could let f11 decrease; sysstat's iostat.c notes it), which counts
/// 0, as sysstat prints 0.00 for a column whose counter went backwards. Backwards from
/// ≥ 2^32 cannot be a 32-bit wrap and also counts 0. [`checked_counter_delta`] tells these
/// cases apart.
pub fn counter_delta(earlier: u64, later: u64) -> u64 {
    checked_counter_delta(earlier, later).unwrap_or(0)
}

/// [`counter_delta`], but `None` where the counter went backwards and a single 32-bit wrap
/// does not explain it (a reset, or a counter that stepped back): the interval says nothing
/// about that counter, and a periodic sampler skips it rather than report 0.
pub fn checked_counter_delta(earlier: u64, later: u64) -> Option<u64> {
    const WRAP: u64 = 1 << 32;
    if later >= earlier {
        Some(later - earlier)
    } else if earlier < WRAP {
        let d = WRAP - earlier + later;
        (d < WRAP / 2).then_some(d)
    } else {
        None
    }
}

/// How the earlier side of a [`DiskDelta`] was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// The earlier sample of the same device.
    Previous,
    /// No earlier sample of this device (it appeared during the interval, e.g. a loop or dm
    /// device set up mid-run, or a name now held by a different dev_t): its counters started
    /// at 0 when it was registered, within the interval, so they are taken whole, as iostat
    /// does for a device it has not seen before.
    FirstSeen,
    /// The device was removed and added again between the samples (detected as sysstat
    /// does: the I/O count fell and every sector counter fell or was 0): counters count
    /// from 0 again, so the later values are taken whole.
    Reset,
}

/// Counter differences of one device over an interval, from which every `iostat -x`
/// column follows ([`DiskDelta::iostat`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskDelta {
    /// Device number (of the later sample).
    pub dev: DevT,
    /// Kernel name.
    pub name: String,
    /// Interval length (the monotonic clock between the two reads).
    pub dt: Duration,
    /// Where the earlier counters came from.
    pub baseline: Baseline,
    /// Differences of all cumulative counters (wraps undone, see [`counter_delta`]);
    /// `in_flight` is the later sample's gauge. Discard/flush groups are present when the
    /// later sample has them (an earlier sample without them counts as zeros).
    pub delta: DiskCounters,
}

fn sub_counters(e: &DiskCounters, l: &DiskCounters) -> DiskCounters {
    let d = |e, l| Some(counter_delta(e, l));
    // Cannot be None: `d` never is.
    try_sub_counters(e, l, d).unwrap_or_default()
}

/// Field-wise differences with `d`; `None` as soon as `d` gives `None` for one field.
fn try_sub_counters(
    e: &DiskCounters,
    l: &DiskCounters,
    d: impl Fn(u64, u64) -> Option<u64>,
) -> Option<DiskCounters> {
    Some(DiskCounters {
        reads: d(e.reads, l.reads)?,
        reads_merged: d(e.reads_merged, l.reads_merged)?,
        sectors_read: d(e.sectors_read, l.sectors_read)?,
        read_ms: d(e.read_ms, l.read_ms)?,
        writes: d(e.writes, l.writes)?,
        writes_merged: d(e.writes_merged, l.writes_merged)?,
        sectors_written: d(e.sectors_written, l.sectors_written)?,
        write_ms: d(e.write_ms, l.write_ms)?,
        in_flight: l.in_flight,
        io_ms: d(e.io_ms, l.io_ms)?,
        weighted_io_ms: d(e.weighted_io_ms, l.weighted_io_ms)?,
        discard: match l.discard {
            None => None,
            Some(ld) => {
                let ed = e.discard.unwrap_or_default();
                Some(DiscardCounters {
                    discards: d(ed.discards, ld.discards)?,
                    discards_merged: d(ed.discards_merged, ld.discards_merged)?,
                    sectors_discarded: d(ed.sectors_discarded, ld.sectors_discarded)?,
                    discard_ms: d(ed.discard_ms, ld.discard_ms)?,
                })
            }
        },
        flush: match l.flush {
            None => None,
            Some(lf) => {
                let ef = e.flush.unwrap_or_default();
                Some(FlushCounters {
                    flushes: d(ef.flushes, lf.flushes)?,
                    flush_ms: d(ef.flush_ms, lf.flush_ms)?,
                })
            }
        },
    })
}

impl DiskCounters {
    /// Add the differences `delta` (of a [`DiskDelta`]) to `self`, as a running total over
    /// several intervals (wraps and resets were already dealt with per interval, so a long
    /// window is the sum of its intervals). `in_flight` takes `delta`'s gauge; a discard or
    /// flush group present in either side is kept. Saturates instead of overflowing.
    pub fn accumulate(&mut self, delta: &DiskCounters) {
        let add = |a: &mut u64, b: u64| *a = a.saturating_add(b);
        add(&mut self.reads, delta.reads);
        add(&mut self.reads_merged, delta.reads_merged);
        add(&mut self.sectors_read, delta.sectors_read);
        add(&mut self.read_ms, delta.read_ms);
        add(&mut self.writes, delta.writes);
        add(&mut self.writes_merged, delta.writes_merged);
        add(&mut self.sectors_written, delta.sectors_written);
        add(&mut self.write_ms, delta.write_ms);
        self.in_flight = delta.in_flight;
        add(&mut self.io_ms, delta.io_ms);
        add(&mut self.weighted_io_ms, delta.weighted_io_ms);
        if let Some(x) = delta.discard {
            let t = self.discard.get_or_insert_with(Default::default);
            add(&mut t.discards, x.discards);
            add(&mut t.discards_merged, x.discards_merged);
            add(&mut t.sectors_discarded, x.sectors_discarded);
            add(&mut t.discard_ms, x.discard_ms);
        }
        if let Some(x) = delta.flush {
            let t = self.flush.get_or_insert_with(Default::default);
            add(&mut t.flushes, x.flushes);
            add(&mut t.flush_ms, x.flush_ms);
        }
    }
}

/// sysstat's test for "removed then inserted again" (iostat.c, write_stats): the sum of
/// completed reads, writes, discards and flushes fell, and each sector counter fell or was 0.
fn looks_reset(e: &DiskCounters, l: &DiskCounters) -> bool {
    let ios = |c: &DiskCounters| {
        c.reads + c.writes + c.discard.map_or(0, |d| d.discards) + c.flush.map_or(0, |f| f.flushes)
    };
    let fell = |e: u64, l: u64| e == 0 || l < e;
    ios(l) < ios(e)
        && fell(e.sectors_read, l.sectors_read)
        && fell(e.sectors_written, l.sectors_written)
        && fell(
            e.discard.map_or(0, |d| d.sectors_discarded),
            l.discard.map_or(0, |d| d.sectors_discarded),
        )
}

impl DiskDelta {
    /// Differences from `earlier` to `later` (two samples of the same device: the caller
    /// matches them, [`deltas`] does it for whole samples) over `dt`.
    ///
    /// Wrapped 32-bit counters are undone field by field ([`counter_delta`]); a device that
    /// was removed and added again is detected and taken from zero ([`Baseline::Reset`]).
    ///
    /// Deviation from iostat, on purpose: where a 32-bit counter wrapped, sysstat prints 0.00
    /// for r/s, w/s, rkB/s, wkB/s, rrqm/s, wrqm/s, aqu-sz and %util (it tests "went
    /// backwards" and gives up) while it does undo the wrap for the await numerators (32-bit
    /// arithmetic); iolab undoes it everywhere, like fio. Outside wraps the numbers are the
    /// same.
    pub fn between(earlier: &DiskStat, later: &DiskStat, dt: Duration) -> DiskDelta {
        let (baseline, delta) = if looks_reset(&earlier.counters, &later.counters) {
            (Baseline::Reset, later.counters)
        } else {
            (
                Baseline::Previous,
                sub_counters(&earlier.counters, &later.counters),
            )
        };
        DiskDelta {
            dev: later.dev,
            name: later.name.clone(),
            dt,
            baseline,
            delta,
        }
    }

    /// [`between`](Self::between), but `None` when a counter went backwards in a way that
    /// neither a 32-bit wrap nor a re-added device explains ([`checked_counter_delta`]): the
    /// interval is unusable for this device (a periodic sampler skips it; `between` would
    /// count such a field as 0, as iostat prints 0.00).
    pub fn between_checked(
        earlier: &DiskStat,
        later: &DiskStat,
        dt: Duration,
    ) -> Option<DiskDelta> {
        let (baseline, delta) = if looks_reset(&earlier.counters, &later.counters) {
            (Baseline::Reset, later.counters)
        } else {
            (
                Baseline::Previous,
                try_sub_counters(&earlier.counters, &later.counters, checked_counter_delta)?,
            )
        };
        Some(DiskDelta {
            dev: later.dev,
            name: later.name.clone(),
            dt,
            baseline,
            delta,
        })
    }

    /// A device with no earlier sample: its counters are taken whole ([`Baseline::FirstSeen`]).
    pub fn first_seen(later: &DiskStat, dt: Duration) -> DiskDelta {
        DiskDelta {
            dev: later.dev,
            name: later.name.clone(),
            dt,
            baseline: Baseline::FirstSeen,
            delta: later.counters,
        }
    }

    /// Bytes read from the device in the interval.
    pub fn bytes_read(&self) -> u64 {
        self.delta.sectors_read * SECTOR_BYTES
    }

    /// Bytes written to the device in the interval.
    pub fn bytes_written(&self) -> u64 {
        self.delta.sectors_written * SECTOR_BYTES
    }

    /// Bytes discarded (`None` before kernel 4.18).
    pub fn bytes_discarded(&self) -> Option<u64> {
        self.delta
            .discard
            .map(|d| d.sectors_discarded * SECTOR_BYTES)
    }

    /// The `iostat -x` columns for this interval (see [`Iostat`]).
    pub fn iostat(&self) -> Iostat {
        let d = &self.delta;
        let secs = self.dt.as_secs_f64();
        let ms = secs * 1000.0;
        // Per-second and per-ms figures; a zero interval gives 0 rather than inf/NaN.
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let kb_s = |sectors: u64| per_s(sectors) / 2.0;
        let per_ms = |n: u64| if ms > 0.0 { n as f64 / ms } else { 0.0 };
        // Ratios over a count that did not move are 0, as in sysstat.
        let ratio = |num: u64, den: u64| {
            if den > 0 {
                num as f64 / den as f64
            } else {
                0.0
            }
        };
        let pct_merged = |merged: u64, done: u64| ratio(merged, merged + done) * 100.0;
        Iostat {
            r_s: per_s(d.reads),
            w_s: per_s(d.writes),
            rkb_s: kb_s(d.sectors_read),
            wkb_s: kb_s(d.sectors_written),
            rrqm_s: per_s(d.reads_merged),
            wrqm_s: per_s(d.writes_merged),
            rrqm_pct: pct_merged(d.reads_merged, d.reads),
            wrqm_pct: pct_merged(d.writes_merged, d.writes),
            r_await: ratio(d.read_ms, d.reads),
            w_await: ratio(d.write_ms, d.writes),
            rareq_sz: ratio(d.sectors_read, d.reads) / 2.0,
            wareq_sz: ratio(d.sectors_written, d.writes) / 2.0,
            aqu_sz: per_ms(d.weighted_io_ms),
            util: per_ms(d.io_ms) * 100.0,
            discard: d.discard.map(|x| DiscardIostat {
                d_s: per_s(x.discards),
                dkb_s: kb_s(x.sectors_discarded),
                drqm_s: per_s(x.discards_merged),
                drqm_pct: pct_merged(x.discards_merged, x.discards),
                d_await: ratio(x.discard_ms, x.discards),
                dareq_sz: ratio(x.sectors_discarded, x.discards) / 2.0,
            }),
            flush: d.flush.map(|x| FlushIostat {
                f_s: per_s(x.flushes),
                f_await: ratio(x.flush_ms, x.flushes),
            }),
        }
    }
}

/// Deltas of every device of `later`, matched to `earlier` by name and device number.
///
/// A device absent from `earlier` (or whose name now belongs to another dev_t) gets
/// [`DiskDelta::first_seen`]; a device present only in `earlier` (removed during the
/// interval) has no delta.
pub fn deltas(earlier: &Diskstats, later: &Diskstats, dt: Duration) -> Vec<DiskDelta> {
    later
        .disks
        .iter()
        .map(|l| match earlier.get(&l.name) {
            Some(e) if e.dev == l.dev => DiskDelta::between(e, l, dt),
            _ => DiskDelta::first_seen(l, dt),
        })
        .collect()
}

/// The columns of sysstat's `iostat -x` (kB = 1024 bytes, times in ms).
///
/// Formulas (Δ = difference over the interval, Δt its length), as in docs/metrics.md and
/// sysstat's `write_ext_stat` / `compute_ext_disk_stats`:
///
/// | column | formula |
/// |---|---|
/// | r/s, w/s | Δf1/Δt, Δf5/Δt |
/// | rkB/s, wkB/s | Δf3/Δt/2, Δf7/Δt/2 |
/// | rrqm/s, wrqm/s | Δf2/Δt, Δf6/Δt |
/// | %rrqm, %wrqm | Δf2/(Δf2+Δf1)·100, Δf6/(Δf6+Δf5)·100 |
/// | r_await, w_await | Δf4/Δf1, Δf8/Δf5 |
/// | rareq-sz, wareq-sz | Δf3/Δf1/2, Δf7/Δf5/2 |
/// | aqu-sz | Δf11/Δt(ms) |
/// | %util | Δf10/Δt(ms)·100 |
///
/// A ratio whose denominator did not move is 0 (sysstat prints 0.00). `%util` is the share
/// of time with at least one request in flight: it says little for devices that serve
/// requests in parallel (SSDs, NVMe, RAID), which can be "100 %" busy and far from
/// saturated.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Iostat {
    /// r/s: reads completed per second.
    pub r_s: f64,
    /// w/s: writes completed per second.
    pub w_s: f64,
    /// rkB/s: KiB read per second.
    pub rkb_s: f64,
    /// wkB/s: KiB written per second.
    pub wkb_s: f64,
    /// rrqm/s: reads merged per second.
    pub rrqm_s: f64,
    /// wrqm/s: writes merged per second.
    pub wrqm_s: f64,
    /// %rrqm: share of read requests merged.
    pub rrqm_pct: f64,
    /// %wrqm: share of write requests merged.
    pub wrqm_pct: f64,
    /// r_await: mean read time, ms (queue + device).
    pub r_await: f64,
    /// w_await: mean write time, ms.
    pub w_await: f64,
    /// rareq-sz: mean read size, KiB.
    pub rareq_sz: f64,
    /// wareq-sz: mean write size, KiB.
    pub wareq_sz: f64,
    /// aqu-sz: mean number of requests in flight.
    pub aqu_sz: f64,
    /// %util: percent of the interval with at least one request in flight.
    pub util: f64,
    /// Discard columns (kernel 4.18+).
    pub discard: Option<DiscardIostat>,
    /// Flush columns (kernel 5.5+).
    pub flush: Option<FlushIostat>,
}

/// iostat -x discard columns: f12–f15 the way f1–f4 give the read columns.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DiscardIostat {
    /// d/s: Δf12/Δt.
    pub d_s: f64,
    /// dkB/s: Δf14/Δt/2.
    pub dkb_s: f64,
    /// drqm/s: Δf13/Δt.
    pub drqm_s: f64,
    /// %drqm: Δf13/(Δf13+Δf12)·100.
    pub drqm_pct: f64,
    /// d_await: Δf15/Δf12, ms.
    pub d_await: f64,
    /// dareq-sz: Δf14/Δf12/2, KiB.
    pub dareq_sz: f64,
}

/// iostat -x flush columns.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FlushIostat {
    /// f/s: Δf16/Δt.
    pub f_s: f64,
    /// f_await: Δf17/Δf16, ms.
    pub f_await: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = include_str!("../tests/fixtures/proc_diskstats_a.txt");
    const B: &str = include_str!("../tests/fixtures/proc_diskstats_b.txt");

    fn assert_close(what: &str, got: f64, want: f64) {
        let tol = 1e-12 * want.abs().max(1.0);
        assert!((got - want).abs() <= tol, "{what}: got {got}, want {want}");
    }

    #[test]
    fn parses_captured_20_field_file() {
        let s = parse(A).unwrap();
        assert_eq!(s.disks.len(), 10);
        let vda = s.get("vda").unwrap();
        assert_eq!(vda.dev, DevT::new(254, 0));
        assert_eq!(
            vda.counters,
            DiskCounters {
                reads: 31703,
                reads_merged: 6432,
                sectors_read: 3196978,
                read_ms: 34001,
                writes: 4696,
                writes_merged: 12593,
                sectors_written: 1244224,
                write_ms: 4048,
                in_flight: 0,
                io_ms: 10740,
                weighted_io_ms: 38671,
                discard: Some(DiscardCounters {
                    discards: 3499,
                    discards_merged: 86,
                    sectors_discarded: 166568,
                    discard_ms: 573,
                }),
                flush: Some(FlushCounters {
                    flushes: 669,
                    flush_ms: 48,
                }),
            }
        );
        assert_eq!(s.get_dev(DevT::new(7, 3)).unwrap().name, "loop3");
        assert_eq!(s.get_dev(DevT::new(253, 0)).unwrap().name, "zram0");
        assert!(s.get("sda").is_none());
    }

    /// Every iostat -x column from two captured samples, against values worked out by hand
    /// (exact fractions) from the spec's formulas with Δt = 2.5 s.
    ///
    /// vda a→b: Δf1 276, Δf2 4, Δf3 8680, Δf4 44, Δf5 112, Δf6 411, Δf7 11856, Δf8 51,
    /// f9 0, Δf10 56, Δf11 98, Δf12 4, Δf13 0, Δf14 8192, Δf15 2, Δf16 2, Δf17 0.
    #[test]
    fn iostat_columns_from_captured_samples() {
        let a = parse(A).unwrap();
        let b = parse(B).unwrap();
        let dt = Duration::from_millis(2500);
        let d = DiskDelta::between(a.get("vda").unwrap(), b.get("vda").unwrap(), dt);
        assert_eq!(d.baseline, Baseline::Previous);
        assert_eq!(d.bytes_read(), 8680 * 512);
        assert_eq!(d.bytes_written(), 11856 * 512);
        assert_eq!(d.bytes_discarded(), Some(8192 * 512));
        let io = d.iostat();
        assert_close("r/s", io.r_s, 110.4); // 276 / 2.5
        assert_close("w/s", io.w_s, 44.8); // 112 / 2.5
        assert_close("rkB/s", io.rkb_s, 1736.0); // 8680 / 2.5 / 2
        assert_close("wkB/s", io.wkb_s, 2371.2); // 11856 / 2.5 / 2
        assert_close("rrqm/s", io.rrqm_s, 1.6); // 4 / 2.5
        assert_close("wrqm/s", io.wrqm_s, 164.4); // 411 / 2.5
        assert_close("%rrqm", io.rrqm_pct, 1.428_571_428_571_428_6); // 4/280·100 = 10/7
        assert_close("%wrqm", io.wrqm_pct, 78.585_086_042_065_02); // 411/523·100
        assert_close("r_await", io.r_await, 0.159_420_289_855_072_45); // 44/276 = 11/69
        assert_close("w_await", io.w_await, 0.455_357_142_857_142_85); // 51/112
        assert_close("rareq-sz", io.rareq_sz, 15.724_637_681_159_42); // 8680/276/2
        assert_close("wareq-sz", io.wareq_sz, 52.928_571_428_571_43); // 11856/112/2
        assert_close("aqu-sz", io.aqu_sz, 0.0392); // 98 / 2500 ms
        assert_close("%util", io.util, 2.24); // 56 / 2500 ms · 100
        let dc = io.discard.unwrap();
        assert_close("d/s", dc.d_s, 1.6); // 4 / 2.5
        assert_close("dkB/s", dc.dkb_s, 1638.4); // 8192 / 2.5 / 2
        assert_close("drqm/s", dc.drqm_s, 0.0);
        assert_close("%drqm", dc.drqm_pct, 0.0);
        assert_close("d_await", dc.d_await, 0.5); // 2 / 4
        assert_close("dareq-sz", dc.dareq_sz, 1024.0); // 8192 / 4 / 2
        let fl = io.flush.unwrap();
        assert_close("f/s", fl.f_s, 0.8); // 2 / 2.5
        assert_close("f_await", fl.f_await, 0.0); // 0 / 2

        // An idle device: every column 0, no NaN.
        let l0 = DiskDelta::between(a.get("loop0").unwrap(), b.get("loop0").unwrap(), dt);
        let z = l0.iostat();
        assert_eq!(z.r_await, 0.0);
        assert_eq!(z.rrqm_pct, 0.0);
        assert_eq!(z.util, 0.0);
        assert_eq!(z.discard.unwrap().dareq_sz, 0.0);
    }

    #[test]
    fn fourteen_and_eighteen_field_lines() {
        let text = "   8       0 sda 100 10 8000 50 200 20 16000 70 1 400 900\n\
                    8       1 sda1 1 2 3 4 5 6 7 8 0 10 11 12 13 14 15\n\
                    8       2 sda2 1 2 3 4 5 6 7 8 0 10 11 12 13 14 15 16 17 18 19\n";
        let s = parse(text).unwrap();
        let sda = &s.get("sda").unwrap().counters;
        assert_eq!(sda.weighted_io_ms, 900);
        assert_eq!(sda.in_flight, 1);
        assert_eq!(sda.discard, None);
        assert_eq!(sda.flush, None);
        let sda1 = &s.get("sda1").unwrap().counters;
        assert_eq!(sda1.discard.unwrap().discard_ms, 15);
        assert_eq!(sda1.flush, None);
        // More than 20 fields: a newer kernel's extra fields are ignored.
        let sda2 = &s.get("sda2").unwrap().counters;
        assert_eq!(sda2.flush.unwrap().flush_ms, 17);

        let a = parse("8 0 sda 100 10 8000 50 200 20 16000 70 1 400 900\n").unwrap();
        let b = parse("8 0 sda 150 10 9000 100 200 20 16000 70 0 900 1400\n").unwrap();
        let io = DiskDelta::between(&a.disks[0], &b.disks[0], Duration::from_secs(1)).iostat();
        assert_eq!(io.discard, None);
        assert_eq!(io.flush, None);
        assert_close("r/s", io.r_s, 50.0);
        assert_close("rkB/s", io.rkb_s, 500.0);
        assert_close("r_await", io.r_await, 1.0);
        assert_close("rareq-sz", io.rareq_sz, 10.0);
        assert_close("%util", io.util, 50.0);
        assert_close("aqu-sz", io.aqu_sz, 0.5);
    }

    #[test]
    fn old_partition_lines_are_skipped() {
        let text = "   3    0 hda 446216 784926 9550688 4382310 424847 312726 5922052 19310380 0 3376340 23705160\n\
                    3    1 hda1 35486 38030 38030 38030\n";
        let s = parse(text).unwrap();
        assert_eq!(s.disks.len(), 1);
        assert!(s.get("hda1").is_none());
    }

    #[test]
    fn parse_errors() {
        let e = parse("8 0 sda 1 2 3\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(matches!(
            e.kind,
            ParseErrorKind::FieldCount { found: 6, .. }
        ));
        let e = parse("8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n8 1 sda1 1 2 3 4 5 x 7 8 9 10 11\n")
            .unwrap_err();
        assert_eq!(e.line, Some(2));
        assert_eq!(
            e.kind,
            ParseErrorKind::BadNumber {
                field: "f6".into(),
                value: "x".into()
            }
        );
        let e = parse("x 0 sda 1 2 3 4 5 6 7 8 9 10 11\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::BadNumber { .. }));
        let e = parse("8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13\n").unwrap_err();
        assert!(matches!(
            e.kind,
            ParseErrorKind::FieldCount { found: 16, .. }
        ));
    }

    #[test]
    fn sysfs_stat_file() {
        let c = parse_sysfs_stat(
            "   31985     6436  3206042    34046     4808    13004  1256080     4099        0    10796    38771     3503       86   174760      575      671       48\n",
        )
        .unwrap();
        assert_eq!(c.reads, 31985);
        assert_eq!(c.flush.unwrap().flushes, 671);
        let e = parse_sysfs_stat("1 2 3\n").unwrap_err();
        assert!(matches!(
            e.kind,
            ParseErrorKind::FieldCount { found: 3, .. }
        ));
    }

    #[test]
    fn counter_delta_rules() {
        assert_eq!(counter_delta(10, 25), 15);
        // 32-bit wrap: 4294967000 → 200 is 296 + 200 = 496 ms later.
        assert_eq!(counter_delta(4_294_967_000, 200), 496);
        assert_eq!(counter_delta(u32::MAX as u64, 4), 5);
        // A small step back is not a wrap: 0, like sysstat.
        assert_eq!(counter_delta(1000, 990), 0);
        // Backwards from a 64-bit-only value: 0.
        assert_eq!(counter_delta(5_000_000_000, 100), 0);
    }

    fn disk(name: &str, f: [u64; 17]) -> DiskStat {
        let line = format!(
            "8 0 {name} {}",
            f.iter().map(u64::to_string).collect::<Vec<_>>().join(" ")
        );
        parse(&line).unwrap().disks.remove(0)
    }

    #[test]
    fn wrapped_ms_fields_are_undone() {
        let a = disk(
            "sdb",
            [
                1000,
                0,
                8000,
                4_294_967_200,
                10,
                0,
                80,
                5,
                2,
                4_294_967_000,
                4_294_960_000,
                0,
                0,
                0,
                0,
                0,
                0,
            ],
        );
        let b = disk(
            "sdb",
            [
                1100, 0, 8800, 104, 10, 0, 80, 5, 0, 504, 12_704, 0, 0, 0, 0, 0, 0,
            ],
        );
        let d = DiskDelta::between(&a, &b, Duration::from_secs(1));
        assert_eq!(d.baseline, Baseline::Previous);
        assert_eq!(d.delta.read_ms, 200); // 96 to the wrap + 104
        assert_eq!(d.delta.io_ms, 800); // 296 + 504
        assert_eq!(d.delta.weighted_io_ms, 20_000); // 7296 + 12704
        assert_eq!(d.delta.in_flight, 0);
        let io = d.iostat();
        assert_close("r_await", io.r_await, 2.0);
        assert_close("%util", io.util, 80.0);
        assert_close("aqu-sz", io.aqu_sz, 20.0);
    }

    #[test]
    fn device_re_added_counts_from_zero() {
        let a = disk(
            "loop5",
            [
                5000, 0, 80000, 900, 300, 0, 2400, 90, 0, 1000, 990, 0, 0, 0, 0, 7, 1,
            ],
        );
        let b = disk(
            "loop5",
            [40, 0, 640, 8, 2, 0, 16, 1, 0, 20, 9, 0, 0, 0, 0, 0, 0],
        );
        let d = DiskDelta::between(&a, &b, Duration::from_secs(2));
        assert_eq!(d.baseline, Baseline::Reset);
        assert_eq!(d.delta, b.counters);
        assert_close("r/s", d.iostat().r_s, 20.0);
    }

    #[test]
    fn device_appearing_mid_run() {
        let a = parse(A).unwrap();
        let mut b = parse(B).unwrap();
        b.disks.push(disk(
            "loop8",
            [12, 0, 96, 3, 0, 0, 0, 0, 0, 4, 3, 0, 0, 0, 0, 0, 0],
        ));
        // Same name, other device number: a different device.
        b.disks[0].dev = DevT::new(7, 100);
        let ds = deltas(&a, &b, Duration::from_secs(1));
        assert_eq!(ds.len(), b.disks.len());
        let loop8 = ds.iter().find(|d| d.name == "loop8").unwrap();
        assert_eq!(loop8.baseline, Baseline::FirstSeen);
        assert_eq!(loop8.delta.reads, 12);
        assert_close("r/s", loop8.iostat().r_s, 12.0);
        assert_eq!(ds[0].baseline, Baseline::FirstSeen);
        let vda = ds.iter().find(|d| d.name == "vda").unwrap();
        assert_eq!(vda.baseline, Baseline::Previous);
        assert_eq!(vda.delta.reads, 276);
    }

    #[test]
    fn zero_interval_gives_zero_rates() {
        let a = parse(A).unwrap();
        let b = parse(B).unwrap();
        let io = DiskDelta::between(&a.disks[8], &b.disks[8], Duration::ZERO).iostat();
        assert_eq!(io.r_s, 0.0);
        assert_eq!(io.util, 0.0);
        assert_close("r_await", io.r_await, 44.0 / 276.0);
    }

    #[test]
    fn checked_delta_tells_wrap_from_step_back() {
        assert_eq!(checked_counter_delta(10, 25), Some(15));
        assert_eq!(checked_counter_delta(4_294_967_000, 200), Some(496));
        assert_eq!(checked_counter_delta(1000, 990), None);
        assert_eq!(checked_counter_delta(5_000_000_000, 100), None);
        assert_eq!(checked_counter_delta(5_000_000_000, 4_999_999_999), None);

        let a = disk(
            "sdb",
            [
                100,
                0,
                800,
                4_294_967_290,
                0,
                0,
                0,
                0,
                0,
                50,
                60,
                0,
                0,
                0,
                0,
                0,
                0,
            ],
        );
        let b = disk(
            "sdb",
            [101, 0, 808, 4, 0, 0, 0, 0, 0, 60, 70, 0, 0, 0, 0, 0, 0],
        );
        let d = DiskDelta::between_checked(&a, &b, Duration::from_secs(1)).unwrap();
        assert_eq!(d.delta.read_ms, 10);
        // f10 stepped back by 1 (not a wrap, not a re-added device): unusable interval,
        // where `between` would count that field as 0.
        let c = disk(
            "sdb",
            [102, 0, 816, 8, 0, 0, 0, 0, 0, 59, 80, 0, 0, 0, 0, 0, 0],
        );
        assert_eq!(
            DiskDelta::between_checked(&b, &c, Duration::from_secs(1)),
            None
        );
        assert_eq!(
            DiskDelta::between(&b, &c, Duration::from_secs(1))
                .delta
                .io_ms,
            0
        );
        // A re-added device still counts from zero.
        let z = disk("sdb", [1, 0, 8, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0]);
        let r = DiskDelta::between_checked(&c, &z, Duration::from_secs(1)).unwrap();
        assert_eq!(r.baseline, Baseline::Reset);
        assert_eq!(r.delta, z.counters);
    }

    #[test]
    fn accumulate_sums_intervals() {
        let a = parse(A).unwrap();
        let b = parse(B).unwrap();
        let whole =
            DiskDelta::between(a.get("vda").unwrap(), b.get("vda").unwrap(), Duration::ZERO);
        let mut mid = a.get("vda").unwrap().clone();
        mid.counters.reads += 100;
        mid.counters.io_ms += 20;
        let d1 = DiskDelta::between(a.get("vda").unwrap(), &mid, Duration::ZERO);
        let d2 = DiskDelta::between(&mid, b.get("vda").unwrap(), Duration::ZERO);
        let mut sum = DiskCounters::default();
        sum.accumulate(&d1.delta);
        sum.accumulate(&d2.delta);
        assert_eq!(sum, whole.delta);
        // Groups absent before appear with the first delta that has them.
        let mut old = DiskCounters::default();
        assert_eq!(old.flush, None);
        old.accumulate(&whole.delta);
        assert_eq!(old.flush.unwrap().flushes, 2);
    }

    #[test]
    fn reads_this_machine() {
        let s = read().unwrap();
        assert!(!s.disks.is_empty());
        assert_eq!(
            DevT::from_raw(libc::makedev(259, 70000)),
            DevT::new(259, 70000)
        );
    }

    /// Names and numbers in diskstats are the ones sysfs gives.
    #[test]
    fn real_sysfs_agrees_with_diskstats() {
        let sys = iolab_sys::SysBlock::system();
        let ds = read().unwrap();
        for d in ds.disks.iter().take(20) {
            if sys.exists(&d.name) {
                assert_eq!(sys.dev(&d.name).unwrap(), d.dev, "{}", d.name);
                assert_eq!(
                    sys.name_of(d.dev).unwrap().as_deref(),
                    Some(d.name.as_str())
                );
            }
        }
    }
}
