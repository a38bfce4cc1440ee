//! Micro tests: one access pattern under one sync mode, mobibench's semantics exactly
//! (docs/micro.md): a file per thread, fixed record size, each record visited
//! once per pass (random = a seeded permutation of all records).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How records are visited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Sequential overwrite of a pre-filled, synced file.
    Write,
    /// Random overwrite (a permutation of all records) of a pre-filled, synced file.
    Randwrite,
    /// Sequential read.
    Read,
    /// Random read (a permutation of all records).
    Randread,
    /// Allocating writes to a fresh file (unlinked first).
    Append,
}

impl Access {
    pub const ALL: [Access; 5] = [
        Access::Write,
        Access::Randwrite,
        Access::Read,
        Access::Randread,
        Access::Append,
    ];

    /// The names of [`Access::ALL`], in its order.
    pub const NAMES: [&'static str; 5] = ["write", "randwrite", "read", "randread", "append"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(text: &str) -> Option<Access> {
        Access::ALL.into_iter().find(|a| a.name() == text)
    }

    pub fn is_read(self) -> bool {
        matches!(self, Access::Read | Access::Randread)
    }

    pub fn is_random(self) -> bool {
        matches!(self, Access::Randread | Access::Randwrite)
    }
}

/// Durability mode: open flags, a per-record sync call, and the sync after the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SyncMode {
    #[serde(rename = "normal")]
    Normal,
    #[serde(rename = "osync")]
    Osync,
    #[serde(rename = "fsync")]
    Fsync,
    #[serde(rename = "direct")]
    Direct,
    #[serde(rename = "osync+direct")]
    OsyncDirect,
    #[serde(rename = "mmap")]
    Mmap,
    #[serde(rename = "mmap-async")]
    MmapAsync,
    #[serde(rename = "mmap-sync")]
    MmapSync,
    #[serde(rename = "fdatasync")]
    Fdatasync,
    #[serde(rename = "dsync")]
    Dsync,
}

/// Flags a sync mode adds to `open(2)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct OpenFlags {
    pub o_sync: bool,
    pub o_dsync: bool,
    pub o_direct: bool,
}

/// The call made after every record written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordSync {
    Fsync,
    Fdatasync,
    MsyncAsync,
    MsyncSync,
}

impl RecordSync {
    pub fn name(self) -> &'static str {
        match self {
            RecordSync::Fsync => "fsync",
            RecordSync::Fdatasync => "fdatasync",
            RecordSync::MsyncAsync => "msync(MS_ASYNC)",
            RecordSync::MsyncSync => "msync(MS_SYNC)",
        }
    }
}

/// The call that ends a write pass, inside the timed region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FinalSync {
    Fsync,
    MsyncSync,
}

impl SyncMode {
    pub const ALL: [SyncMode; 10] = [
        SyncMode::Normal,
        SyncMode::Osync,
        SyncMode::Fsync,
        SyncMode::Direct,
        SyncMode::OsyncDirect,
        SyncMode::Mmap,
        SyncMode::MmapAsync,
        SyncMode::MmapSync,
        SyncMode::Fdatasync,
        SyncMode::Dsync,
    ];

    /// The names of [`SyncMode::ALL`], in its order.
    pub const NAMES: [&'static str; 10] = [
        "normal",
        "osync",
        "fsync",
        "direct",
        "osync+direct",
        "mmap",
        "mmap-async",
        "mmap-sync",
        "fdatasync",
        "dsync",
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(text: &str) -> Option<SyncMode> {
        SyncMode::ALL.into_iter().find(|m| m.name() == text)
    }

    /// mobibench's numbering (its `-y` option), for `--format mobibench`. `dsync` is iolab's.
    pub fn mobibench_number(self) -> Option<u8> {
        // ALL lists mobibench's nine modes first, in its order (NORMAL … FDATASYNC).
        SyncMode::ALL[..9]
            .iter()
            .position(|&m| m == self)
            .map(|i| i as u8)
    }

    pub fn open_flags(self) -> OpenFlags {
        OpenFlags {
            o_sync: matches!(self, SyncMode::Osync | SyncMode::OsyncDirect),
            o_dsync: self == SyncMode::Dsync,
            o_direct: matches!(self, SyncMode::Direct | SyncMode::OsyncDirect),
        }
    }

    pub fn is_mmap(self) -> bool {
        matches!(
            self,
            SyncMode::Mmap | SyncMode::MmapAsync | SyncMode::MmapSync
        )
    }

    /// The per-record call after each write (none for reads).
    pub fn record_sync(self) -> Option<RecordSync> {
        match self {
            SyncMode::Fsync => Some(RecordSync::Fsync),
            SyncMode::Fdatasync => Some(RecordSync::Fdatasync),
            SyncMode::MmapAsync => Some(RecordSync::MsyncAsync),
            SyncMode::MmapSync => Some(RecordSync::MsyncSync),
            _ => None,
        }
    }

    pub fn final_sync(self) -> FinalSync {
        if self.is_mmap() {
            FinalSync::MsyncSync
        } else {
            FinalSync::Fsync
        }
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for SyncMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The I/O backend that issues the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// pread/pwrite: the default.
    #[default]
    Psync,
    /// read/write after lseek.
    Sync,
    /// Copies to and from a shared mapping.
    Mmap,
    /// io_uring with a queue depth.
    IoUring,
    /// No I/O at all: measures iolab itself.
    Null,
}

impl EngineKind {
    pub const ALL: [EngineKind; 5] = [
        EngineKind::Psync,
        EngineKind::Sync,
        EngineKind::Mmap,
        EngineKind::IoUring,
        EngineKind::Null,
    ];

    /// The names of [`EngineKind::ALL`], in its order.
    pub const NAMES: [&'static str; 5] = ["psync", "sync", "mmap", "io_uring", "null"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// Other spellings accepted for an engine's name: (alias, name).
    pub const ALIASES: &'static [(&'static str, &'static str)] =
        &[("uring", "io_uring"), ("io-uring", "io_uring")];

    pub fn parse(text: &str) -> Option<EngineKind> {
        let text = Self::ALIASES
            .iter()
            .find(|(alias, _)| *alias == text)
            .map_or(text, |(_, name)| name);
        EngineKind::ALL.into_iter().find(|e| e.name() == text)
    }

    /// What each backend can do, declared once here (next to its name, where validation can
    /// see it) and implemented in its own file under iolab-engine's `backend/`. Everything
    /// else asks these flags, never an engine's name.
    pub fn caps(self) -> EngineCaps {
        let none = EngineCaps::default();
        match self {
            EngineKind::Psync | EngineKind::Sync => none,
            EngineKind::Mmap => EngineCaps {
                mapped: true,
                ..none
            },
            EngineKind::IoUring => EngineCaps {
                queued: true,
                ..none
            },
            EngineKind::Null => EngineCaps {
                no_io: true,
                queued: true,
                ..none
            },
        }
    }

    /// The engine a micro test's sync mode runs on when none is given: the mapping one for the
    /// `mmap*` modes, the default otherwise.
    pub fn default_for(sync: SyncMode) -> EngineKind {
        if sync.is_mmap() {
            EngineKind::Mmap
        } else {
            EngineKind::default()
        }
    }
}

/// A backend's capability flags (fio's `FIO_NOIO`, `FIO_SYNCIO`, … of `struct ioengine_ops`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct EngineCaps {
    /// Does no I/O at all: opens, reads, writes and syncs nothing, so a run measures iolab
    /// itself (fio's `FIO_NOIO`/`FIO_DISKLESSIO`).
    pub no_io: bool,
    /// Can keep several requests in flight (an iodepth above 1). Without it every request
    /// returns when it is done (fio's `FIO_SYNCIO`).
    pub queued: bool,
    /// Moves data by copying to and from a shared mapping of the file: its syncs are
    /// `msync`, and it cannot bypass the page cache (no O_DIRECT).
    pub mapped: bool,
}

/// What written records contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataPattern {
    /// Zero bytes, like filebench and mobibench.
    #[default]
    Zeros,
    /// Seeded pseudo-random bytes (incompressible).
    Random,
}

impl DataPattern {
    pub const ALL: [DataPattern; 2] = [DataPattern::Zeros, DataPattern::Random];
    /// The names of [`DataPattern::ALL`], in its order.
    pub const NAMES: [&'static str; 2] = ["zeros", "random"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(text: &str) -> Option<DataPattern> {
        DataPattern::ALL.into_iter().find(|d| d.name() == text)
    }
}

pub use crate::option::{check_duration, OptionKind, OptionValue, MIN_DURATION};

/// One option of a micro test, declared once: `--NAME VALUE` for `iolab micro`,
/// `NAME = VALUE` in an experiment's `[workload] micro = { … }`, and a row of the option
/// tables in docs/micro.md and docs/experiments.md (a test keeps those in step).
pub type MicroOption = crate::option::OptionDef<MicroSpec>;

/// Every micro option, in the order help and docs list them. `dir` and `seed` are not here:
/// the runner sets them (from `--dir`/`--seed`, or the experiment's target and seed).
pub const OPTIONS: &[MicroOption] = &[
    MicroOption {
        name: "access",
        value_name: "ACCESS",
        kind: OptionKind::Choice(&Access::NAMES),
        default: Some("write"),
        aliases: &[],
        help: "Access pattern",
        original: "",
        apply: |s, v| s.access = Access::parse(v.name()).unwrap_or(s.access),
        get: |s| Some(OptionValue::Name(s.access.name())),
    },
    MicroOption {
        name: "sync",
        value_name: "SYNC",
        kind: OptionKind::Choice(&SyncMode::NAMES),
        default: Some("normal"),
        aliases: &[],
        help: "Sync mode",
        original: "",
        apply: |s, v| s.sync = SyncMode::parse(v.name()).unwrap_or(s.sync),
        get: |s| Some(OptionValue::Name(s.sync.name())),
    },
    MicroOption {
        name: "bs",
        value_name: "BS",
        kind: OptionKind::Size,
        default: Some("4k"),
        aliases: &[],
        help: "Record size (e.g. 4k, 1m)",
        original: "",
        apply: |s, v| s.bs = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.bs)),
    },
    MicroOption {
        name: "size",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: Some("64m"),
        aliases: &[],
        help: "Total data size, split evenly over the threads (e.g. 64m, 1g)",
        original: "",
        apply: |s, v| s.size = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.size)),
    },
    MicroOption {
        name: "threads",
        value_name: "THREADS",
        kind: OptionKind::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        default: Some("1"),
        aliases: &[],
        help: "Worker threads, each with its own file",
        original: "",
        apply: |s, v| s.threads = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.threads))),
    },
    MicroOption {
        name: "engine",
        value_name: "ENGINE",
        kind: OptionKind::Choice(&EngineKind::NAMES),
        default: None,
        aliases: EngineKind::ALIASES,
        help: "I/O engine [default: psync; mmap for mmap modes]",
        original: "",
        apply: |s, v| s.engine = EngineKind::parse(v.name()),
        get: |s| s.engine.map(|e| OptionValue::Name(e.name())),
    },
    MicroOption {
        name: "iodepth",
        value_name: "IODEPTH",
        kind: OptionKind::Count {
            min: 1,
            max: MAX_IODEPTH as u64,
        },
        default: None,
        aliases: &[],
        help: "Records in flight per thread, 1 to 4096 (io_uring only)",
        original: "",
        apply: |s, v| s.iodepth = Some(v.count_u32()),
        get: |s| s.iodepth.map(|n| OptionValue::Count(u64::from(n))),
    },
    MicroOption {
        name: "time",
        value_name: "DURATION",
        kind: OptionKind::Duration,
        default: None,
        aliases: &[],
        help: "Stop after this long even if records remain (e.g. 30s, 2m; at least 1ms)",
        original: "",
        apply: |s, v| {
            if let OptionValue::Duration(d) = v {
                s.time_limit = Some(d);
            }
        },
        get: |s| s.time_limit.map(OptionValue::Duration),
    },
    MicroOption {
        name: "loops",
        value_name: "LOOPS",
        kind: OptionKind::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        default: Some("1"),
        aliases: &[],
        help: "Visit every record this many times",
        original: "",
        apply: |s, v| s.loops = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.loops))),
    },
    MicroOption {
        name: "data",
        value_name: "DATA",
        kind: OptionKind::Choice(&DataPattern::NAMES),
        default: Some("zeros"),
        aliases: &[],
        help: "Contents of written records",
        original: "",
        apply: |s, v| s.data = DataPattern::parse(v.name()).unwrap_or(s.data),
        get: |s| Some(OptionValue::Name(s.data.name())),
    },
];

/// The option called `name`.
pub fn option(name: &str) -> Option<&'static MicroOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// A micro test as the user asked for it, before validation.
#[derive(Debug, Clone, Serialize)]
pub struct MicroSpec {
    pub access: Access,
    pub sync: SyncMode,
    pub bs: u64,
    pub size: u64,
    pub threads: u32,
    pub dir: PathBuf,
    pub engine: Option<EngineKind>,
    pub iodepth: Option<u32>,
    pub time_limit: Option<Duration>,
    pub loops: u32,
    pub seed: u64,
    pub data: DataPattern,
}

/// Why a micro spec cannot run. Each message says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MicroSpecError {
    #[error("--bs must be at least 1 byte")]
    ZeroBlockSize,
    #[error("--size must be at least one record (--bs {bs})")]
    ZeroSize { bs: u64 },
    #[error("--threads must be at least 1")]
    ZeroThreads,
    #[error("--size {size} is not a multiple of --bs {bs}: each thread must get whole records (try --size {suggest})")]
    SizeNotMultiple { size: u64, bs: u64, suggest: u64 },
    #[error("--size {size} split over {threads} threads gives {per_thread} bytes per thread, not a multiple of --bs {bs} (try --size {suggest})")]
    PerThreadNotMultiple {
        size: u64,
        threads: u32,
        per_thread: u64,
        bs: u64,
        suggest: u64,
    },
    #[error("--sync {sync} needs the mmap engine, not --engine {engine} (drop --engine)")]
    MmapNeedsMmapEngine { sync: SyncMode, engine: EngineKind },
    #[error("--engine mmap goes with --sync mmap, mmap-async or mmap-sync, not --sync {sync}")]
    MmapEngineNeedsMmapSync { sync: SyncMode },
    #[error("--iodepth {iodepth} needs --engine io_uring: the {engine} engine issues one request at a time")]
    DepthNeedsUring { iodepth: u32, engine: EngineKind },
    #[error("--iodepth must be between 1 and 4096, not {0}")]
    BadDepth(u32),
    #[error("--loops must be at least 1")]
    ZeroLoops,
    #[error("--time must be longer than zero")]
    ZeroTime,
    #[error("--bs {bs} is larger than 1 GiB: records are held in memory, use a smaller --bs")]
    HugeBlockSize { bs: u64 },
}

/// A validated micro test: everything the engine needs, nothing left to interpret.
#[derive(Debug, Clone, Serialize)]
pub struct MicroPlan {
    pub access: Access,
    pub sync: SyncMode,
    pub engine: EngineKind,
    pub iodepth: u32,
    pub bs: u64,
    pub size: u64,
    pub threads: u32,
    pub file_size: u64,
    pub records_per_thread: u64,
    pub dir: PathBuf,
    pub time_limit: Option<Duration>,
    pub loops: u32,
    pub seed: u64,
    pub data: DataPattern,
}

impl MicroSpec {
    /// The defaults of [`OPTIONS`], in `dir` with `seed`.
    pub fn with_defaults(dir: PathBuf, seed: u64) -> MicroSpec {
        let mut spec = MicroSpec {
            access: Access::Write,
            sync: SyncMode::Normal,
            bs: 0,
            size: 0,
            threads: 0,
            dir,
            engine: None,
            iodepth: None,
            time_limit: None,
            loops: 0,
            seed,
            data: DataPattern::Zeros,
        };
        crate::option::apply_defaults(OPTIONS, &mut spec);
        spec
    }

    /// Checks everything that can be checked without touching the filesystem.
    pub fn validate(&self) -> Result<MicroPlan, MicroSpecError> {
        if self.bs == 0 {
            return Err(MicroSpecError::ZeroBlockSize);
        }
        if self.bs > 1 << 30 {
            return Err(MicroSpecError::HugeBlockSize { bs: self.bs });
        }
        if self.threads == 0 {
            return Err(MicroSpecError::ZeroThreads);
        }
        if self.size == 0 {
            return Err(MicroSpecError::ZeroSize { bs: self.bs });
        }
        if !self.size.is_multiple_of(self.bs) {
            return Err(MicroSpecError::SizeNotMultiple {
                size: self.size,
                bs: self.bs,
                suggest: nearest_multiple(self.size, self.bs),
            });
        }
        let per_thread = self.size / u64::from(self.threads);
        if !self.size.is_multiple_of(u64::from(self.threads)) || !per_thread.is_multiple_of(self.bs)
        {
            // bs ≤ 1 GiB and threads < 2³², so the product fits.
            let unit = self.bs * u64::from(self.threads);
            return Err(MicroSpecError::PerThreadNotMultiple {
                size: self.size,
                threads: self.threads,
                per_thread,
                bs: self.bs,
                suggest: nearest_multiple(self.size, unit),
            });
        }
        let engine = self
            .engine
            .unwrap_or_else(|| EngineKind::default_for(self.sync));
        let caps = engine.caps();
        // An engine that does no I/O goes with any mode.
        if !caps.no_io && self.sync.is_mmap() != caps.mapped {
            return Err(if caps.mapped {
                MicroSpecError::MmapEngineNeedsMmapSync { sync: self.sync }
            } else {
                MicroSpecError::MmapNeedsMmapEngine {
                    sync: self.sync,
                    engine,
                }
            });
        }
        let iodepth = self.iodepth.unwrap_or(1);
        check_iodepth(iodepth, engine)?;
        if self.loops == 0 {
            return Err(MicroSpecError::ZeroLoops);
        }
        if self.time_limit == Some(Duration::ZERO) {
            return Err(MicroSpecError::ZeroTime);
        }
        Ok(MicroPlan {
            access: self.access,
            sync: self.sync,
            engine,
            iodepth,
            bs: self.bs,
            size: self.size,
            threads: self.threads,
            file_size: per_thread,
            records_per_thread: per_thread / self.bs,
            dir: self.dir.clone(),
            time_limit: self.time_limit,
            loops: self.loops,
            seed: self.seed,
            data: self.data,
        })
    }
}

/// An iodepth must be in 1..=4096, and above 1 only on an engine that can queue.
pub fn check_iodepth(iodepth: u32, engine: EngineKind) -> Result<(), MicroSpecError> {
    if !(1..=MAX_IODEPTH).contains(&iodepth) {
        return Err(MicroSpecError::BadDepth(iodepth));
    }
    if iodepth > 1 && !engine.caps().queued {
        return Err(MicroSpecError::DepthNeedsUring { iodepth, engine });
    }
    Ok(())
}

/// The deepest queue an engine keeps per thread.
pub const MAX_IODEPTH: u32 = 4096;

/// The multiple of `unit` to suggest for `size`: the next one up, or the one below when the
/// next one up does not fit in 64 bits; never 0 (one `unit`, when `size` is below it).
fn nearest_multiple(size: u64, unit: u64) -> u64 {
    size.div_ceil(unit)
        .checked_mul(unit)
        .unwrap_or(size / unit * unit)
        .max(unit)
}

impl MicroPlan {
    /// Whether the timed loop writes (and so ends with the final sync).
    pub fn writes(&self) -> bool {
        !self.access.is_read()
    }

    /// The per-record sync call, if any (reads never sync).
    pub fn record_sync(&self) -> Option<RecordSync> {
        if self.writes() {
            self.sync.record_sync()
        } else {
            None
        }
    }

    /// The sync after the loop, inside the timed region (reads have none).
    pub fn final_sync(&self) -> Option<FinalSync> {
        self.writes().then(|| self.sync.final_sync())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> MicroSpec {
        MicroSpec {
            access: Access::Randwrite,
            sync: SyncMode::Normal,
            bs: 4096,
            size: 1 << 20,
            threads: 1,
            dir: PathBuf::from("/tmp"),
            engine: None,
            iodepth: None,
            time_limit: None,
            loops: 1,
            seed: 1,
            data: DataPattern::Zeros,
        }
    }

    #[test]
    fn names_round_trip() {
        for a in Access::ALL {
            assert_eq!(Access::parse(a.name()), Some(a));
        }
        for m in SyncMode::ALL {
            assert_eq!(SyncMode::parse(m.name()), Some(m));
        }
        for e in EngineKind::ALL {
            assert_eq!(EngineKind::parse(e.name()), Some(e));
        }
    }

    #[test]
    fn mode_table_matches_spec() {
        use SyncMode::*;
        assert_eq!(
            Osync.open_flags(),
            OpenFlags {
                o_sync: true,
                ..Default::default()
            }
        );
        assert_eq!(
            Direct.open_flags(),
            OpenFlags {
                o_direct: true,
                ..Default::default()
            }
        );
        assert_eq!(
            OsyncDirect.open_flags(),
            OpenFlags {
                o_sync: true,
                o_direct: true,
                o_dsync: false
            }
        );
        assert_eq!(
            Dsync.open_flags(),
            OpenFlags {
                o_dsync: true,
                ..Default::default()
            }
        );
        assert_eq!(Fsync.record_sync(), Some(RecordSync::Fsync));
        assert_eq!(Fdatasync.record_sync(), Some(RecordSync::Fdatasync));
        assert_eq!(MmapAsync.record_sync(), Some(RecordSync::MsyncAsync));
        assert_eq!(MmapSync.record_sync(), Some(RecordSync::MsyncSync));
        for m in [Normal, Osync, Direct, OsyncDirect, Mmap, Dsync] {
            assert_eq!(m.record_sync(), None, "{m}");
        }
        assert_eq!(Mmap.final_sync(), FinalSync::MsyncSync);
        assert_eq!(Fdatasync.final_sync(), FinalSync::Fsync);
        assert_eq!(Fdatasync.mobibench_number(), Some(8));
        assert_eq!(Normal.mobibench_number(), Some(0));
        assert_eq!(Dsync.mobibench_number(), None);
    }

    #[test]
    fn validation() {
        let plan = spec().validate().unwrap();
        assert_eq!(plan.engine, EngineKind::Psync);
        assert_eq!(plan.records_per_thread, 256);

        let mut s = spec();
        s.size = 4096 * 3 + 1;
        assert!(matches!(
            s.validate(),
            Err(MicroSpecError::SizeNotMultiple { suggest: 16384, .. })
        ));
        s.size = 4096 * 3;
        s.threads = 2;
        assert!(matches!(
            s.validate(),
            Err(MicroSpecError::PerThreadNotMultiple { suggest: 16384, .. })
        ));
        let mut s = spec();
        s.bs = 0;
        assert_eq!(s.validate().unwrap_err(), MicroSpecError::ZeroBlockSize);
        let mut s = spec();
        s.sync = SyncMode::MmapSync;
        assert_eq!(s.validate().unwrap().engine, EngineKind::Mmap);
        s.engine = Some(EngineKind::IoUring);
        assert!(matches!(
            s.validate(),
            Err(MicroSpecError::MmapNeedsMmapEngine { .. })
        ));
        let mut s = spec();
        s.engine = Some(EngineKind::Mmap);
        assert!(matches!(
            s.validate(),
            Err(MicroSpecError::MmapEngineNeedsMmapSync { .. })
        ));
        let mut s = spec();
        s.iodepth = Some(8);
        assert!(matches!(
            s.validate(),
            Err(MicroSpecError::DepthNeedsUring { .. })
        ));
        s.engine = Some(EngineKind::IoUring);
        assert_eq!(s.validate().unwrap().iodepth, 8);
    }

    #[test]
    fn capabilities_decide_what_goes_with_an_engine() {
        for engine in EngineKind::ALL {
            let caps = engine.caps();
            let mut s = spec();
            s.engine = Some(engine);
            s.sync = SyncMode::MmapSync;
            assert_eq!(s.validate().is_ok(), caps.mapped || caps.no_io, "{engine}");
            s.sync = SyncMode::Fdatasync;
            assert_eq!(s.validate().is_ok(), !caps.mapped || caps.no_io, "{engine}");
            s.iodepth = Some(2);
            assert_eq!(
                s.validate().is_ok(),
                caps.queued && (!caps.mapped || caps.no_io),
                "{engine}"
            );
            assert_eq!(check_iodepth(2, engine).is_ok(), caps.queued, "{engine}");
            assert!(check_iodepth(1, engine).is_ok(), "{engine}");
            assert_eq!(
                check_iodepth(MAX_IODEPTH + 1, engine),
                Err(MicroSpecError::BadDepth(MAX_IODEPTH + 1))
            );
        }
        // A mapping moves one record at a time; nothing does I/O and maps at once.
        assert!(EngineKind::ALL
            .iter()
            .all(|e| !(e.caps().mapped && (e.caps().queued || e.caps().no_io))));
    }

    #[test]
    fn suggested_sizes_never_overflow() {
        let mut s = spec();
        s.size = u64::MAX;
        let suggest = match s.validate() {
            Err(MicroSpecError::SizeNotMultiple { suggest, .. }) => suggest,
            other => panic!("{other:?}"),
        };
        assert_eq!(suggest, u64::MAX / 4096 * 4096);
        // 2⁶⁴ − 4096 is not a multiple of 7 × 4096, and the next multiple up overflows.
        s.size = u64::MAX - 4095;
        s.threads = 7;
        match s.validate() {
            Err(MicroSpecError::PerThreadNotMultiple { suggest, .. }) => {
                assert!(suggest > 0 && suggest.is_multiple_of(7 * 4096), "{suggest}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(nearest_multiple(10, 4096), 4096);
        assert_eq!(nearest_multiple(4097, 4096), 8192);
    }

    #[test]
    fn option_table_defaults_parse_and_match_the_spec_defaults() {
        for o in OPTIONS {
            if let Some(d) = o.default {
                assert!(o.parse(d).is_ok(), "{}: default {d:?}", o.name);
            }
        }
        let s = MicroSpec::with_defaults(PathBuf::from("/d"), 7);
        assert_eq!(
            (s.access, s.sync, s.data),
            (Access::Write, SyncMode::Normal, DataPattern::Zeros)
        );
        assert_eq!((s.bs, s.size, s.threads, s.loops), (4096, 64 << 20, 1, 1));
        assert_eq!(
            (s.engine, s.iodepth, s.time_limit, s.seed),
            (None, None, None, 7)
        );
        assert!(s.validate().is_ok());
    }

    #[test]
    fn option_values_are_parsed_and_applied() {
        let mut s = MicroSpec::with_defaults(PathBuf::from("/d"), 1);
        for (name, text) in [
            ("access", "randread"),
            ("engine", "uring"),
            ("iodepth", "32"),
            ("time", "2s"),
            ("bs", "8k"),
        ] {
            let o = option(name).unwrap();
            o.apply(&mut s, o.parse(text).unwrap());
        }
        assert_eq!(s.access, Access::Randread);
        assert_eq!(s.engine, Some(EngineKind::IoUring));
        assert_eq!(s.iodepth, Some(32));
        assert_eq!(s.time_limit, Some(Duration::from_secs(2)));
        assert_eq!(s.bs, 8192);
        let err = |n: &str, t: &str| option(n).unwrap().parse(t).unwrap_err();
        assert_eq!(err("threads", "0"), "must be at least 1");
        assert_eq!(
            err("threads", "5000000000"),
            "must be between 1 and 4294967295"
        );
        assert_eq!(err("iodepth", "0"), "must be between 1 and 4096");
        assert_eq!(err("loops", "-1"), "`-1` is not a whole number (e.g. 4)");
        assert!(err("access", "sideways").starts_with("expected one of write, randwrite"));
        assert_eq!(err("time", "0s"), "must be longer than zero");
        assert_eq!(err("time", "1us"), "`1us` is too short: give at least 1ms");
        assert!(err("bs", "4q").contains("is not a size"));
    }

    #[test]
    fn reads_never_sync() {
        let mut s = spec();
        s.access = Access::Randread;
        s.sync = SyncMode::Fsync;
        let plan = s.validate().unwrap();
        assert_eq!(plan.record_sync(), None);
        assert_eq!(plan.final_sync(), None);
    }
}
