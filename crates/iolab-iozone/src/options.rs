//! The iozone kind's one option table ([`OPTIONS`]), what the user asks for ([`IozoneSpec`]),
//! and the validated plan the run executes ([`IozonePlan`]).

use std::fmt;
use std::path::PathBuf;

use iolab_util::option::{OptionDef, OptionKind, OptionValue};
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Worded};
use serde::Serialize;

/// A test as iozone numbers it (`-i N`); most report two figures (the test and its re-test).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    Write = 0,
    Read = 1,
    Random = 2,
    Backward = 3,
    RecordRewrite = 4,
    Stride = 5,
    Fwrite = 6,
    Fread = 7,
    Mix = 8,
    Pwrite = 9,
    Pread = 10,
}

impl Test {
    pub const ALL: [Test; 11] = [
        Test::Write,
        Test::Read,
        Test::Random,
        Test::Backward,
        Test::RecordRewrite,
        Test::Stride,
        Test::Fwrite,
        Test::Fread,
        Test::Mix,
        Test::Pwrite,
        Test::Pread,
    ];

    /// The names of [`Test::ALL`], in its order (so `NAMES[n]` is iozone's `-i n`).
    pub const NAMES: [&'static str; 11] = [
        "write",
        "read",
        "random",
        "backward",
        "record-rewrite",
        "stride",
        "fwrite",
        "fread",
        "mix",
        "pwrite",
        "pread",
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// iozone's `-i` number.
    pub fn number(self) -> u8 {
        self as u8
    }

    /// A test by name or by iozone's number.
    pub fn parse(text: &str) -> Option<Test> {
        let text = text.trim();
        if let Ok(n) = text.parse::<usize>() {
            return Test::ALL.get(n).copied();
        }
        Test::ALL.into_iter().find(|t| t.name() == text)
    }

    /// The figures it reports, in the order it measures them.
    pub fn figures(self) -> &'static [Figure] {
        use Figure as F;
        match self {
            Test::Write => &[F::Write, F::Rewrite],
            Test::Read => &[F::Read, F::Reread],
            Test::Random => &[F::RandomRead, F::RandomWrite],
            Test::Backward => &[F::BackwardRead],
            Test::RecordRewrite => &[F::RecordRewrite],
            Test::Stride => &[F::StrideRead],
            Test::Fwrite => &[F::Fwrite, F::Refwrite],
            Test::Fread => &[F::Fread, F::Refread],
            Test::Mix => &[F::RandomMix],
            Test::Pwrite => &[F::Pwrite, F::Repwrite],
            Test::Pread => &[F::Pread, F::Repread],
        }
    }
}

impl fmt::Display for Test {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One measured figure: a timed pass of one test over every thread's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    Write,
    Rewrite,
    Read,
    Reread,
    RandomRead,
    RandomWrite,
    BackwardRead,
    RecordRewrite,
    StrideRead,
    Fwrite,
    Refwrite,
    Fread,
    Refread,
    RandomMix,
    Pwrite,
    Repwrite,
    Pread,
    Repread,
}

/// What a pass does with each record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
    /// Each thread reads or writes (random mix).
    PerThread,
}

impl Figure {
    /// Every figure, in the order of iozone's `-R` report.
    pub const ALL: [Figure; 18] = [
        Figure::Write,
        Figure::Rewrite,
        Figure::Read,
        Figure::Reread,
        Figure::RandomRead,
        Figure::RandomWrite,
        Figure::BackwardRead,
        Figure::RecordRewrite,
        Figure::StrideRead,
        Figure::Fwrite,
        Figure::Refwrite,
        Figure::Fread,
        Figure::Refread,
        Figure::RandomMix,
        Figure::Pwrite,
        Figure::Repwrite,
        Figure::Pread,
        Figure::Repread,
    ];

    /// The names of [`Figure::ALL`]: metric names start with them (`write_mib_per_s`).
    pub const NAMES: [&'static str; 18] = [
        "write",
        "rewrite",
        "read",
        "reread",
        "random_read",
        "random_write",
        "backward_read",
        "record_rewrite",
        "stride_read",
        "fwrite",
        "refwrite",
        "fread",
        "refread",
        "random_mix",
        "pwrite",
        "repwrite",
        "pread",
        "repread",
    ];

    /// iozone's throughput-mode test order (its `throughput_tests` table).
    pub const THROUGHPUT_ORDER: [Figure; 13] = [
        Figure::Write,
        Figure::Rewrite,
        Figure::Read,
        Figure::Reread,
        Figure::BackwardRead,
        Figure::StrideRead,
        Figure::RandomRead,
        Figure::RandomMix,
        Figure::RandomWrite,
        Figure::Pwrite,
        Figure::Pread,
        Figure::Fwrite,
        Figure::Fread,
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(text: &str) -> Option<Figure> {
        Figure::ALL.into_iter().find(|f| f.name() == text)
    }

    /// The title of its block in iozone's `-R` report; random mix has none (iozone measures
    /// it only in throughput mode).
    pub fn report_title(self) -> Option<&'static str> {
        Some(match self {
            Figure::Write => "Writer report",
            Figure::Rewrite => "Re-writer report",
            Figure::Read => "Reader report",
            Figure::Reread => "Re-Reader report",
            Figure::RandomRead => "Random read report",
            Figure::RandomWrite => "Random write report",
            Figure::BackwardRead => "Backward read report",
            Figure::RecordRewrite => "Record rewrite report",
            Figure::StrideRead => "Stride read report",
            Figure::Fwrite => "Fwrite report",
            Figure::Refwrite => "Re-Fwrite report",
            Figure::Fread => "Fread report",
            Figure::Refread => "Re-Fread report",
            Figure::RandomMix => return None,
            Figure::Pwrite => "Pwrite report",
            Figure::Repwrite => "Re-Pwrite report",
            Figure::Pread => "Pread report",
            Figure::Repread => "Re-Pread report",
        })
    }

    /// The title of its block in iozone's `-b` workbook, capitalised unlike the `-R` text's;
    /// `None` where [`Figure::report_title`] is.
    pub fn workbook_title(self) -> Option<&'static str> {
        Some(match self {
            Figure::Write => "Writer Report",
            Figure::Rewrite => "Re-writer Report",
            Figure::Read => "Reader Report",
            Figure::Reread => "Re-reader Report",
            Figure::RandomRead => "Random Read Report",
            Figure::RandomWrite => "Random Write Report",
            Figure::BackwardRead => "Backward Read Report",
            Figure::RecordRewrite => "Record Rewrite Report",
            Figure::StrideRead => "Stride Read Report",
            Figure::Fwrite => "Fwrite Report",
            Figure::Refwrite => "Re-fwrite Report",
            Figure::Fread => "Fread Report",
            Figure::Refread => "Re-fread Report",
            Figure::RandomMix => return None,
            Figure::Pwrite => "Pwrite Report",
            Figure::Repwrite => "Re-pwrite Report",
            Figure::Pread => "Pread Report",
            Figure::Repread => "Re-pread Report",
        })
    }

    /// Whether it is a re-test (the second pass of a test over the same file), which iozone's
    /// `-+n` skips.
    pub fn is_retest(self) -> bool {
        matches!(
            self,
            Figure::Rewrite
                | Figure::Reread
                | Figure::Refwrite
                | Figure::Refread
                | Figure::Repwrite
                | Figure::Repread
        )
    }

    /// Its label in iozone's throughput-mode output (`Children see throughput for 2 initial
    /// writers`, the `-R` throughput rows); `None` for figures iozone measures only in single
    /// stream mode.
    pub fn throughput_label(self) -> Option<&'static str> {
        Some(match self {
            Figure::Write => "Initial write",
            Figure::Rewrite => "Rewrite",
            Figure::Read => "Read",
            Figure::Reread => "Re-read",
            Figure::BackwardRead => "Reverse Read",
            Figure::StrideRead => "Stride read",
            Figure::RandomRead => "Random read",
            Figure::RandomMix => "Mixed workload",
            Figure::RandomWrite => "Random write",
            Figure::Pwrite => "Pwrite",
            Figure::Pread => "Pread",
            Figure::Fwrite => "Fwrite",
            Figure::Fread => "Fread",
            _ => return None,
        })
    }

    /// A title for reports: `Random read`.
    pub fn title(self) -> &'static str {
        match self {
            Figure::Write => "Write",
            Figure::Rewrite => "Rewrite",
            Figure::Read => "Read",
            Figure::Reread => "Re-read",
            Figure::RandomRead => "Random read",
            Figure::RandomWrite => "Random write",
            Figure::BackwardRead => "Backward read",
            Figure::RecordRewrite => "Record rewrite",
            Figure::StrideRead => "Stride read",
            Figure::Fwrite => "Fwrite",
            Figure::Refwrite => "Re-fwrite",
            Figure::Fread => "Fread",
            Figure::Refread => "Re-fread",
            Figure::RandomMix => "Random mix",
            Figure::Pwrite => "Pwrite",
            Figure::Repwrite => "Re-pwrite",
            Figure::Pread => "Pread",
            Figure::Repread => "Re-pread",
        }
    }

    pub fn direction(self) -> Direction {
        match self {
            Figure::Write
            | Figure::Rewrite
            | Figure::RandomWrite
            | Figure::RecordRewrite
            | Figure::Fwrite
            | Figure::Refwrite
            | Figure::Pwrite
            | Figure::Repwrite => Direction::Write,
            Figure::RandomMix => Direction::PerThread,
            _ => Direction::Read,
        }
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the flush (fsync, then close) of each pass goes: both inside the timed region, only
/// the fsync, or neither. Every pass ends with both either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Flush {
    /// Inside the timed region (iolab's default; iozone `-e -c`): a write is done when its
    /// data is on stable storage.
    Included,
    /// The fsync inside the timed region, the close after it (iozone `-e` alone).
    Fsync,
    /// After the timed region (iozone's default, without `-e`/`-c`): writes are timed into the
    /// page cache only.
    Excluded,
}

impl Flush {
    pub const NAMES: [&'static str; 3] = ["included", "fsync", "excluded"];
    /// `iozone` names iozone's default.
    pub const ALIASES: &'static [(&'static str, &'static str)] = &[("iozone", "excluded")];

    pub fn name(self) -> &'static str {
        match self {
            Flush::Included => "included",
            Flush::Fsync => "fsync",
            Flush::Excluded => "excluded",
        }
    }

    pub fn parse(text: &str) -> Option<Flush> {
        match text {
            "included" => Some(Flush::Included),
            "fsync" => Some(Flush::Fsync),
            "excluded" | "iozone" => Some(Flush::Excluded),
            _ => None,
        }
    }
}

/// How the page cache of the files is emptied before every pass, untimed (iozone `-U`
/// remounts), so that reads and re-reads come from the device, not from memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Purge {
    /// Nothing: a pass reads what earlier passes left cached (iozone's default).
    None,
    /// `fdatasync` and `posix_fadvise(POSIX_FADV_DONTNEED)` on each data file: only the run's
    /// own pages go, no root needed.
    Fadvise,
    /// `syncfs`, then the kernel drops every clean page cache page (root; the whole machine).
    DropCaches,
    /// Unmount and mount the filesystem again (iozone `-U`): its page cache, dentries and
    /// inodes go. Experiments whose target iolab mounts only.
    Remount,
}

impl Purge {
    /// Every purge with its name, in the order help lists them.
    const ALL: [(Purge, &'static str); 4] = [
        (Purge::None, "none"),
        (Purge::Fadvise, "fadvise"),
        (Purge::DropCaches, "drop_caches"),
        (Purge::Remount, "remount"),
    ];
    pub const NAMES: [&'static str; 4] = [
        Purge::ALL[0].1,
        Purge::ALL[1].1,
        Purge::ALL[2].1,
        Purge::ALL[3].1,
    ];

    pub fn name(self) -> &'static str {
        Purge::ALL
            .iter()
            .find(|(p, _)| *p == self)
            .map_or("none", |(_, n)| n)
    }

    pub fn parse(text: &str) -> Option<Purge> {
        Purge::ALL.iter().find(|(_, n)| *n == text).map(|(p, _)| *p)
    }
}

/// One option of the iozone kind, declared once: `--NAME VALUE` for `iolab iozone` (dashes
/// for underscores), `NAME = VALUE` in `[workload] iozone = { … }`, and a row of the option
/// tables in docs/iozone.md and docs/experiments.md; `original` is iozone's own flag.
pub type IozoneOption = OptionDef<IozoneSpec>;

/// iozone's test numbers as other spellings of the names (`-i 2` is `random`).
const TEST_NUMBERS: &[(&str, &str)] = &[
    ("0", "write"),
    ("1", "read"),
    ("2", "random"),
    ("3", "backward"),
    ("4", "record-rewrite"),
    ("5", "stride"),
    ("6", "fwrite"),
    ("7", "fread"),
    ("8", "mix"),
    ("9", "pwrite"),
    ("10", "pread"),
];

/// The largest record: records are held in memory, one buffer per thread.
pub const MAX_RECORD: u64 = 1 << 30;
/// The most threads in throughput mode.
pub const MAX_THREADS: u64 = 4096;

/// Every iozone option, in the order help and docs list them. `dir` and `seed` are not here:
/// the runner sets them.
pub const OPTIONS: &[IozoneOption] = &[
    OptionDef {
        name: "tests",
        original: "-i",
        value_name: "TESTS",
        kind: OptionKind::Set {
            names: &Test::NAMES,
            what: "test",
        },
        default: Some("write,read"),
        aliases: TEST_NUMBERS,
        help: "Tests, by name or iozone number, comma-separated: write (0), read (1), random (2), \
               backward (3), record-rewrite (4), stride (5), fwrite (6), fread (7), mix (8), \
               pwrite (9), pread (10); run in iozone's order",
        apply: |s, v| s.tests = v.set_members().map(|i| Test::ALL[i]).collect(),
        get: |s| {
            Some(OptionValue::set_of(
                s.tests
                    .iter()
                    .filter_map(|t| Test::ALL.iter().position(|a| a == t)),
            ))
        },
    },
    OptionDef {
        name: "size",
        original: "-s",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: Some("64m"),
        aliases: &[],
        help: "File size, per thread in throughput mode (e.g. 64m, 1g)",
        apply: |s, v| s.size = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.size)),
    },
    OptionDef {
        name: "record",
        original: "-r",
        value_name: "RECORD",
        kind: OptionKind::Size,
        default: Some("4k"),
        aliases: &[],
        help: "Record size: the bytes of each read or write call (e.g. 4k, 1m)",
        apply: |s, v| s.record = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.record)),
    },
    OptionDef {
        name: "flush",
        original: "-e -c / -e",
        value_name: "FLUSH",
        kind: OptionKind::Choice(&Flush::NAMES),
        default: Some("included"),
        aliases: Flush::ALIASES,
        help: "fsync + close of every pass inside the timing (included: iolab's default, iozone \
               -e -c), only the fsync inside it (fsync: iozone -e), or both after it (excluded, \
               alias iozone: iozone's default, which times writes into the page cache)",
        apply: |s, v| s.flush = Flush::parse(v.name()).unwrap_or(s.flush),
        get: |s| Some(OptionValue::Name(s.flush.name())),
    },
    OptionDef {
        name: "direct",
        original: "-I",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: None,
        aliases: &[],
        help: "Open the files with O_DIRECT (records must be multiples of 512 bytes)",
        apply: |s, v| s.direct = v.flag(),
        get: |s| Some(OptionValue::Flag(s.direct)),
    },
    OptionDef {
        name: "osync",
        original: "-o",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: None,
        aliases: &[],
        help: "Open the files for writing with O_SYNC",
        apply: |s, v| s.osync = v.flag(),
        get: |s| Some(OptionValue::Flag(s.osync)),
    },
    OptionDef {
        name: "threads",
        original: "-t",
        value_name: "THREADS",
        kind: OptionKind::Count {
            min: 1,
            max: MAX_THREADS,
        },
        default: Some("1"),
        aliases: &[],
        help: "Threads, each with its own file; above 1 is iozone's throughput mode",
        apply: |s, v| s.threads = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.threads))),
    },
    OptionDef {
        name: "throughput",
        original: "-t 1, -l 1 -u 1",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: None,
        aliases: &[],
        help: "iozone's throughput mode even with one thread (children see / parent sees \
               figures and iozone's throughput report); more than one thread always is",
        apply: |s, v| s.throughput = v.flag(),
        get: |s| Some(OptionValue::Flag(s.throughput)),
    },
    OptionDef {
        name: "stride",
        original: "-j",
        value_name: "RECORDS",
        kind: OptionKind::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        default: Some("17"),
        aliases: &[],
        help: "Stride read: records from one read to the next",
        apply: |s, v| s.stride = v.count_u32() as u64,
        get: |s| Some(OptionValue::Count(s.stride)),
    },
    OptionDef {
        name: "mix_read_percent",
        original: "-+p",
        value_name: "PERCENT",
        kind: OptionKind::Count { min: 0, max: 100 },
        default: None,
        aliases: &[],
        help: "Random mix: the share of threads that read (the first ones); unset, even threads \
               read and odd ones write",
        apply: |s, v| s.mix_read_percent = Some(v.count_u32() as u8),
        get: |s| s.mix_read_percent.map(|n| OptionValue::Count(u64::from(n))),
    },
    OptionDef {
        name: "stonewall",
        original: "-x",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: Some("true"),
        aliases: &[],
        help: "Throughput mode: when the first thread finishes, note every thread's bytes and \
               time so far (iozone's stone-walling; false is iozone -x)",
        apply: |s, v| s.stonewall = v.flag(),
        get: |s| Some(OptionValue::Flag(s.stonewall)),
    },
    OptionDef {
        name: "retests",
        original: "-+n",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: Some("true"),
        aliases: &[],
        help: "Run each test's second pass (rewrite, re-read, re-fwrite, re-fread, re-pwrite, \
               re-pread); false is iozone -+n",
        apply: |s, v| s.retests = v.flag(),
        get: |s| Some(OptionValue::Flag(s.retests)),
    },
    OptionDef {
        name: "purge",
        original: "-U",
        value_name: "HOW",
        kind: OptionKind::Choice(&Purge::NAMES),
        default: Some("none"),
        aliases: &[],
        help: "Before every pass, untimed, empty the page cache of the files: none; fadvise \
               (fdatasync + POSIX_FADV_DONTNEED on each file); drop_caches (syncfs, then the \
               whole page cache; root); remount (unmount and mount again, as iozone -U; \
               experiments whose target iolab mounts)",
        apply: |s, v| s.purge = Purge::parse(v.name()).unwrap_or(s.purge),
        get: |s| Some(OptionValue::Name(s.purge.name())),
    },
    OptionDef {
        name: "latency",
        original: "",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: Some("true"),
        aliases: &[],
        help: "Time every record (one clock read per record) for the latency percentiles; false \
               leaves only the pass's totals, as iozone",
        apply: |s, v| s.latency = v.flag(),
        get: |s| Some(OptionValue::Flag(s.latency)),
    },
];

/// The option called `name`.
pub fn option(name: &str) -> Option<&'static IozoneOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// The iozone tests as the user asked for them, before validation.
#[derive(Debug, Clone, Serialize)]
pub struct IozoneSpec {
    pub tests: Vec<Test>,
    pub size: u64,
    pub record: u64,
    pub flush: Flush,
    pub direct: bool,
    pub osync: bool,
    pub threads: u32,
    /// Throughput mode with one thread too (more than one always is).
    pub throughput: bool,
    pub stride: u64,
    pub mix_read_percent: Option<u8>,
    pub stonewall: bool,
    pub retests: bool,
    pub purge: Purge,
    pub latency: bool,
    pub dir: PathBuf,
    pub seed: u64,
}

/// Why an iozone spec cannot run. Each message names the option ([`Worded`], worded by each
/// front end) and says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IozoneSpecError {
    #[error("{}", self.phrase())]
    NoTests,
    #[error("{}", self.phrase())]
    ZeroRecord,
    #[error("{}", self.phrase())]
    HugeRecord { record: u64 },
    #[error("{}", self.phrase())]
    ZeroSize { record: u64 },
    #[error("{}", self.phrase())]
    RecordLargerThanFile { record: u64, size: u64 },
    #[error("{}", self.phrase())]
    SizeNotMultiple {
        size: u64,
        record: u64,
        suggest: u64,
    },
    #[error("{}", self.phrase())]
    ZeroThreads,
    #[error("{}", self.phrase())]
    UnalignedDirect { record: u64, suggest: u64 },
    #[error("{}", self.phrase())]
    ZeroStride,
    #[error("{}", self.phrase())]
    BadPercent(u8),
}

impl Worded for IozoneSpecError {
    fn phrase(&self) -> Phrase {
        match self {
            IozoneSpecError::NoTests => phrase!(
                "{} names no test",
                opt("tests"),
            ),
            IozoneSpecError::ZeroRecord => phrase!(
                "{} must be at least 1 byte",
                opt("record"),
            ),
            IozoneSpecError::HugeRecord { record, .. } => phrase!(
                "{} {} is larger than 1 GiB: records are held in memory, use a smaller {}",
                opt("record"),
                record,
                opt("record"),
            ),
            IozoneSpecError::ZeroSize { record, .. } => phrase!(
                "{} must be at least one record ({} {})",
                opt("size"),
                opt("record"),
                record,
            ),
            IozoneSpecError::RecordLargerThanFile { record, size, .. } => phrase!(
                "{} {} is larger than the file ({} {}): give a {} of at most {}",
                opt("record"),
                record,
                opt("size"),
                size,
                opt("record"),
                size,
            ),
            IozoneSpecError::SizeNotMultiple { size, record, suggest, .. } => phrase!(
                "{} {} is not a multiple of {} {}: a file is whole records (try {} {})",
                opt("size"),
                size,
                opt("record"),
                record,
                opt("size"),
                suggest,
            ),
            IozoneSpecError::ZeroThreads => phrase!(
                "{} must be at least 1",
                opt("threads"),
            ),
            IozoneSpecError::UnalignedDirect { record, suggest, .. } => phrase!(
                "{} needs {} to be a multiple of 512 bytes, not {} (O_DIRECT transfers whole device blocks; try {} {})",
                opt("direct"),
                opt("record"),
                record,
                opt("record"),
                suggest,
            ),
            IozoneSpecError::ZeroStride => phrase!(
                "{} must be at least 1",
                opt("stride"),
            ),
            IozoneSpecError::BadPercent(n) => phrase!(
                "{} must be between 0 and 100, not {}",
                opt("mix_read_percent"),
                n,
            ),
        }
    }
}

impl IozoneSpecError {
    /// The option at fault.
    pub fn option(&self) -> &'static str {
        match self {
            IozoneSpecError::NoTests => "tests",
            IozoneSpecError::ZeroRecord
            | IozoneSpecError::HugeRecord { .. }
            | IozoneSpecError::RecordLargerThanFile { .. }
            | IozoneSpecError::UnalignedDirect { .. } => "record",
            IozoneSpecError::ZeroSize { .. } | IozoneSpecError::SizeNotMultiple { .. } => "size",
            IozoneSpecError::ZeroThreads => "threads",
            IozoneSpecError::ZeroStride => "stride",
            IozoneSpecError::BadPercent(_) => "mix_read_percent",
        }
    }
}

/// Validated iozone tests: everything the run needs, nothing left to interpret.
#[derive(Debug, Clone, Serialize)]
pub struct IozonePlan {
    pub tests: Vec<Test>,
    pub size: u64,
    pub record: u64,
    pub records: u64,
    pub flush: Flush,
    pub direct: bool,
    pub osync: bool,
    pub threads: u32,
    /// Throughput mode with one thread too (more than one always is).
    pub throughput: bool,
    pub stride: u64,
    pub mix_read_percent: Option<u8>,
    pub stonewall: bool,
    /// false: the re-test figures are skipped (iozone `-+n`).
    pub retests: bool,
    /// Done before every pass, untimed.
    pub purge: Purge,
    pub latency: bool,
    pub dir: PathBuf,
    pub seed: u64,
}

/// The O_DIRECT alignment checked before running (the kernel's EINVAL tells about devices
/// with larger blocks).
pub const DIRECT_ALIGN: u64 = 512;

/// iozone's throughput mode: more than one thread, or asked for with one.
fn throughput_mode(threads: u32, asked: bool) -> bool {
    threads > 1 || asked
}

impl IozoneSpec {
    /// Whether the run is in iozone's throughput mode (see [`IozonePlan::throughput_mode`]).
    pub fn throughput_mode(&self) -> bool {
        throughput_mode(self.threads, self.throughput)
    }

    /// The defaults of [`OPTIONS`], in `dir` with `seed`.
    pub fn with_defaults(dir: PathBuf, seed: u64) -> IozoneSpec {
        let mut spec = IozoneSpec {
            tests: Vec::new(),
            size: 0,
            record: 0,
            flush: Flush::Included,
            direct: false,
            osync: false,
            threads: 0,
            throughput: false,
            stride: 0,
            mix_read_percent: None,
            stonewall: false,
            retests: true,
            purge: Purge::None,
            latency: false,
            dir,
            seed,
        };
        for o in OPTIONS {
            if let Some(d) = o.default {
                // The defaults are tested to parse.
                if let Ok(v) = o.parse(d) {
                    o.apply(&mut spec, v);
                }
            }
        }
        spec
    }

    /// Checks everything that can be checked without touching the filesystem.
    pub fn validate(&self) -> Result<IozonePlan, IozoneSpecError> {
        if self.tests.is_empty() {
            return Err(IozoneSpecError::NoTests);
        }
        if self.record == 0 {
            return Err(IozoneSpecError::ZeroRecord);
        }
        if self.record > MAX_RECORD {
            return Err(IozoneSpecError::HugeRecord {
                record: self.record,
            });
        }
        if self.size == 0 {
            return Err(IozoneSpecError::ZeroSize {
                record: self.record,
            });
        }
        if self.record > self.size {
            return Err(IozoneSpecError::RecordLargerThanFile {
                record: self.record,
                size: self.size,
            });
        }
        if !self.size.is_multiple_of(self.record) {
            return Err(IozoneSpecError::SizeNotMultiple {
                size: self.size,
                record: self.record,
                suggest: self.size.div_ceil(self.record).saturating_mul(self.record),
            });
        }
        if self.threads == 0 {
            return Err(IozoneSpecError::ZeroThreads);
        }
        if self.direct && !self.record.is_multiple_of(DIRECT_ALIGN) {
            return Err(IozoneSpecError::UnalignedDirect {
                record: self.record,
                suggest: self.record.div_ceil(DIRECT_ALIGN) * DIRECT_ALIGN,
            });
        }
        if self.stride == 0 {
            return Err(IozoneSpecError::ZeroStride);
        }
        if let Some(p) = self.mix_read_percent.filter(|&p| p > 100) {
            return Err(IozoneSpecError::BadPercent(p));
        }
        let mut tests = self.tests.clone();
        tests.sort_unstable();
        tests.dedup();
        Ok(IozonePlan {
            tests,
            size: self.size,
            record: self.record,
            records: self.size / self.record,
            flush: self.flush,
            direct: self.direct,
            osync: self.osync,
            threads: self.threads,
            throughput: self.throughput,
            stride: self.stride,
            mix_read_percent: self.mix_read_percent,
            stonewall: self.stonewall,
            retests: self.retests,
            purge: self.purge,
            latency: self.latency,
            dir: self.dir.clone(),
            seed: self.seed,
        })
    }
}

impl IozonePlan {
    /// The figures the run measures, in order.
    pub fn figures(&self) -> impl Iterator<Item = Figure> + '_ {
        self.test_figures()
            .filter(move |f| self.retests || !f.is_retest())
    }

    /// Every figure of the tests asked for, the re-tests that `retests = false` skips
    /// included (iozone's `-R` report prints them as 0).
    pub fn test_figures(&self) -> impl Iterator<Item = Figure> + '_ {
        self.tests.iter().flat_map(|t| t.figures().iter().copied())
    }

    /// Whether any pass writes.
    pub fn writes(&self) -> bool {
        self.figures().any(|f| f.direction() != Direction::Read)
    }

    /// Whether any pass reads.
    pub fn reads(&self) -> bool {
        self.figures().any(|f| f.direction() != Direction::Write)
    }

    /// Whether thread `t` reads in the random mix: the first `percent`% of the threads, or
    /// the even ones when no percentage is given (iozone's `thread_mix_test`).
    pub fn mix_reader(&self, t: u32) -> bool {
        match self.mix_read_percent {
            Some(p) => u64::from(t) < u64::from(p) * u64::from(self.threads) / 100,
            None => t.is_multiple_of(2),
        }
    }

    /// Whether this is iozone's throughput mode: more than one thread, or asked for.
    pub fn throughput_mode(&self) -> bool {
        throughput_mode(self.threads, self.throughput)
    }
}

/// The record visited at step `i` of iozone's stride read over `records` records with a
/// stride of `stride` records, from the record visited at step `i - 1` (`prev`, with
/// `wraps` the times the pass has wrapped so far): read a record, skip `stride - 1`; when
/// the next read would reach the last record, start again one record further than the last
/// start (iozone's `read_stride_perf_test`).
pub fn stride_next(prev: u64, wraps: &mut u64, records: u64, stride: u64) -> u64 {
    // After reading `prev` the file position is at `prev + 1` records.
    if (prev + 1).saturating_add(stride) >= records.saturating_sub(1) {
        *wraps += 1;
        if records <= stride {
            0
        } else {
            *wraps % records
        }
    } else {
        prev + stride
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> IozoneSpec {
        IozoneSpec::with_defaults(PathBuf::from("/tmp"), 1)
    }

    #[test]
    fn names_and_numbers_round_trip() {
        for t in Test::ALL {
            assert_eq!(Test::parse(t.name()), Some(t));
            assert_eq!(Test::parse(&t.number().to_string()), Some(t));
        }
        for f in Figure::ALL {
            assert_eq!(Figure::parse(f.name()), Some(f));
        }
        assert_eq!(Test::parse("11"), None);
        assert_eq!(Test::parse("sideways"), None);
        // Every figure belongs to exactly one test.
        for f in Figure::ALL {
            let owners = Test::ALL
                .iter()
                .filter(|t| t.figures().contains(&f))
                .count();
            assert_eq!(owners, 1, "{f}");
        }
    }

    #[test]
    fn test_lists_run_in_iozone_order() {
        let tests = option("tests").unwrap();
        let mut s = spec();
        tests.apply(&mut s, tests.parse("2, read,0,random").unwrap());
        assert_eq!(s.tests, vec![Test::Write, Test::Read, Test::Random]);
        let e = tests.parse("write,nope").unwrap_err();
        assert!(e.starts_with("unknown test `nope`"), "{e}");
        assert!(e.contains("stride (5)"), "{e}");
    }

    #[test]
    fn flags_are_the_names_with_dashes() {
        for o in OPTIONS {
            assert_eq!(o.flag(), o.name.replace('_', "-"));
        }
    }

    #[test]
    fn defaults_parse_and_validate() {
        for o in OPTIONS {
            if let Some(d) = o.default {
                assert!(o.parse(d).is_ok(), "{}: default {d:?}", o.name);
            }
        }
        let s = spec();
        assert_eq!(s.tests, vec![Test::Write, Test::Read]);
        assert_eq!(
            (s.size, s.record, s.threads, s.stride),
            (64 << 20, 4096, 1, 17)
        );
        assert_eq!(s.flush, Flush::Included);
        assert!(s.stonewall && s.latency && !s.direct && !s.osync);
        let p = s.validate().unwrap();
        assert_eq!(p.records, 16384);
    }

    #[test]
    fn bad_input_is_a_typed_error_naming_the_option() {
        let mut s = spec();
        s.record = 8192;
        s.size = 4096;
        let e = s.validate().unwrap_err();
        assert_eq!(
            e,
            IozoneSpecError::RecordLargerThanFile {
                record: 8192,
                size: 4096
            }
        );
        assert_eq!(e.option(), "record");
        let mut s = spec();
        s.size = 10_000;
        let e = s.validate().unwrap_err();
        assert!(matches!(
            e,
            IozoneSpecError::SizeNotMultiple { suggest: 12288, .. }
        ));
        assert_eq!(e.option(), "size");
        let mut s = spec();
        s.direct = true;
        s.record = 1000;
        s.size = 1000 * 8;
        assert!(matches!(
            s.validate(),
            Err(IozoneSpecError::UnalignedDirect { suggest: 1024, .. })
        ));
        let mut s = spec();
        s.tests.clear();
        assert_eq!(s.validate().unwrap_err(), IozoneSpecError::NoTests);
        let flush = option("flush").unwrap();
        assert_eq!(
            flush.parse("iozone"),
            Ok(iolab_util::option::OptionValue::Name("excluded"))
        );
        assert!(option("threads").unwrap().parse("0").is_err());
    }

    #[test]
    fn mix_roles_follow_iozone() {
        let mut s = spec();
        s.threads = 4;
        let p = s.validate().unwrap();
        let roles: Vec<bool> = (0..4).map(|t| p.mix_reader(t)).collect();
        assert_eq!(roles, [true, false, true, false]);
        s.mix_read_percent = Some(75);
        let p = s.validate().unwrap();
        let roles: Vec<bool> = (0..4).map(|t| p.mix_reader(t)).collect();
        assert_eq!(roles, [true, true, true, false]);
    }

    #[test]
    fn stride_read_moves_by_stride_and_wraps_one_further() {
        // 100 records, stride 17: 0, 17, 34, 51, 68; 68+1+17 = 86 < 99, so 85; then 85+18
        // reaches the end: wrap to 1.
        let mut wraps = 0;
        let mut at = 0;
        let mut seen = vec![at];
        for _ in 0..7 {
            at = stride_next(at, &mut wraps, 100, 17);
            seen.push(at);
        }
        assert_eq!(seen, [0, 17, 34, 51, 68, 85, 1, 18]);
        // Fewer records than the stride: always the first.
        let mut wraps = 0;
        assert_eq!(stride_next(0, &mut wraps, 4, 17), 0);
    }
}
