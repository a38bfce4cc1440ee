//! A micro test as asked for ([`MicroSpec`]) and as run ([`MicroPlan`]): one access pattern
//! under one sync mode, mobibench's semantics exactly (docs/micro.md): a file per thread,
//! fixed record size, each record visited once per pass (random = a seeded permutation of
//! all records).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use iolab_engine::backend::{
    check_iodepth, DepthError, EngineKind, FinalSync, OpenFlags, RecordSync,
};
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Worded};
use serde::{Deserialize, Serialize};

use crate::options::OPTIONS;

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

impl fmt::Display for SyncMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The engine a sync mode runs on when none is given: the mapping one for the `mmap*`
/// modes, the default otherwise.
pub fn default_engine(sync: SyncMode) -> EngineKind {
    if sync.is_mmap() {
        EngineKind::Mmap
    } else {
        EngineKind::default()
    }
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
    #[error("{}", self.phrase())]
    ZeroBlockSize,
    #[error("{}", self.phrase())]
    ZeroSize { bs: u64 },
    #[error("{}", self.phrase())]
    ZeroThreads,
    #[error("{}", self.phrase())]
    SizeNotMultiple { size: u64, bs: u64, suggest: u64 },
    #[error("{}", self.phrase())]
    PerThreadNotMultiple {
        size: u64,
        threads: u32,
        per_thread: u64,
        bs: u64,
        suggest: u64,
    },
    #[error("{}", self.phrase())]
    MmapNeedsMmapEngine { sync: SyncMode, engine: EngineKind },
    #[error("{}", self.phrase())]
    MmapEngineNeedsMmapSync { sync: SyncMode },
    /// An iodepth out of range, or above 1 on an engine that cannot queue.
    #[error(transparent)]
    Depth(#[from] DepthError),
    #[error("{}", self.phrase())]
    ZeroLoops,
    #[error("{}", self.phrase())]
    ZeroTime,
    #[error("{}", self.phrase())]
    HugeBlockSize { bs: u64 },
}

impl Worded for MicroSpecError {
    fn phrase(&self) -> Phrase {
        match self {
            MicroSpecError::ZeroBlockSize => phrase!(
                "{} must be at least 1 byte",
                opt("bs"),
            ),
            MicroSpecError::ZeroSize { bs, .. } => phrase!(
                "{} must be at least one record ({} {})",
                opt("size"),
                opt("bs"),
                bs,
            ),
            MicroSpecError::ZeroThreads => phrase!(
                "{} must be at least 1",
                opt("threads"),
            ),
            MicroSpecError::SizeNotMultiple { size, bs, suggest, .. } => phrase!(
                "{} {} is not a multiple of {} {}: each thread must get whole records (try {} {})",
                opt("size"),
                size,
                opt("bs"),
                bs,
                opt("size"),
                suggest,
            ),
            MicroSpecError::PerThreadNotMultiple { size, threads, per_thread, bs, suggest, .. } => phrase!(
                "{} {} split over {} threads gives {} bytes per thread, not a multiple of {} {} (try {} {})",
                opt("size"),
                size,
                threads,
                per_thread,
                opt("bs"),
                bs,
                opt("size"),
                suggest,
            ),
            MicroSpecError::MmapNeedsMmapEngine { sync, engine, .. } => phrase!(
                "{} {} needs the mmap engine, not {} {} (drop {})",
                opt("sync"),
                sync,
                opt("engine"),
                engine,
                opt("engine"),
            ),
            MicroSpecError::MmapEngineNeedsMmapSync { sync, .. } => phrase!(
                "{} mmap goes with {} mmap, mmap-async or mmap-sync, not {} {}",
                opt("engine"),
                opt("sync"),
                opt("sync"),
                sync,
            ),
            MicroSpecError::ZeroLoops => phrase!(
                "{} must be at least 1",
                opt("loops"),
            ),
            MicroSpecError::ZeroTime => phrase!(
                "{} must be longer than zero",
                opt("time"),
            ),
            MicroSpecError::HugeBlockSize { bs, .. } => phrase!(
                "{} {} is larger than 1 GiB: records are held in memory, use a smaller {}",
                opt("bs"),
                bs,
                opt("bs"),
            ),
            MicroSpecError::Depth(d) => d.phrase(),
        }
    }
}

/// A validated micro test: everything its run needs, nothing left to interpret.
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
        iolab_util::option::apply_defaults(OPTIONS, &mut spec);
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
        let engine = self.engine.unwrap_or_else(|| default_engine(self.sync));
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
    use iolab_engine::backend::MAX_IODEPTH;

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
            Err(MicroSpecError::Depth(DepthError::NotQueued { .. }))
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
                Err(DepthError::OutOfRange(MAX_IODEPTH + 1))
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
    fn reads_never_sync() {
        let mut s = spec();
        s.access = Access::Randread;
        s.sync = SyncMode::Fsync;
        let plan = s.validate().unwrap();
        assert_eq!(plan.record_sync(), None);
        assert_eq!(plan.final_sync(), None);
    }
}
