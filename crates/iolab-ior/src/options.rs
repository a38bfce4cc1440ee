//! The one option table of the ior kind (`ior = { … }` and `iolab ior`'s flags come from it),
//! the spec it fills, IO500's presets, and validation into a plan with IOR's own rules.

use std::path::{Path, PathBuf};
use std::time::Duration;

use iolab_util::option::{OptionDef, OptionKind, OptionValue};
use iolab_util::option_row;
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Worded};

/// IOR's transfer size (`-t`): 256 KiB.
pub const DEFAULT_TRANSFER: u64 = 256 << 10;
/// IOR's block size (`-b`): 1 MiB.
pub const DEFAULT_BLOCK: u64 = 1 << 20;
/// IO500's ior-easy transfer: 2 MiB.
pub const EASY_TRANSFER: u64 = 2 << 20;
/// ior-easy's block when none is given: IO500 writes a huge block for 300 s; a mini run
/// writes 64 MiB per rank.
pub const EASY_BLOCK: u64 = 64 << 20;
/// IO500's ior-hard record: 47008 bytes, transfer and block alike.
pub const HARD_RECORD: u64 = 47008;
/// ior-hard's segments when none are given (IO500 gives millions and a stonewall): about
/// 45 MiB per rank.
pub const HARD_SEGMENTS: u64 = 1000;

/// IO500's bandwidth phases as presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    None,
    /// File per process, 2 MiB transfers.
    Easy,
    /// One shared file, 47008-byte interleaved records.
    Hard,
}

impl Preset {
    pub const NAMES: [&'static str; 3] = ["none", "ior-easy", "ior-hard"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    fn parse(name: &str) -> Preset {
        match name {
            "ior-easy" => Preset::Easy,
            "ior-hard" => Preset::Hard,
            _ => Preset::None,
        }
    }
}

/// An ior run as the user asked for it, before validation. `None`: the preset's value (IOR's
/// default without one).
#[derive(Debug, Clone)]
pub struct IorSpec {
    pub dir: PathBuf,
    pub seed: u64,
    pub preset: Preset,
    pub transfer: Option<u64>,
    pub block: Option<u64>,
    pub segments: Option<u64>,
    pub file_per_process: Option<bool>,
    pub random: bool,
    pub fsync: Option<bool>,
    pub reorder: Option<bool>,
    pub reorder_offset: u64,
    pub write: bool,
    pub read: bool,
    pub stonewall: Option<Duration>,
    pub wear_out: Option<bool>,
    pub direct: bool,
    pub file: &'static str,
    pub keep: bool,
}

impl IorSpec {
    /// The table's defaults, in `dir` with `seed`.
    pub fn with_defaults(dir: PathBuf, seed: u64) -> IorSpec {
        let mut s = IorSpec {
            dir,
            seed,
            preset: Preset::None,
            transfer: None,
            block: None,
            segments: None,
            file_per_process: None,
            random: false,
            fsync: None,
            reorder: None,
            reorder_offset: 1,
            write: true,
            read: true,
            stonewall: None,
            wear_out: None,
            direct: false,
            file: "testFile",
            keep: false,
        };
        iolab_util::option::apply_defaults(OPTIONS, &mut s);
        s
    }
}

/// One option of the ior kind.
pub type IorOption = OptionDef<IorSpec>;

/// The option named `name`.
pub fn option(name: &str) -> Option<&'static IorOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// Every option, in the order help and docs list them; `original` is IOR's flag (the
/// `iolab ior` command reads IOR's command line through it). `dir` and `seed` are the
/// runner's.
pub const OPTIONS: &[IorOption] = &[
    OptionDef {
        name: "preset",
        value_name: "NAME",
        kind: OptionKind::Choice(&Preset::NAMES),
        default: Some("none"),
        aliases: &[],
        help:
            "IO500's settings: ior-easy (file per process, 2 MiB transfers, 64 MiB blocks unless \
               given), ior-hard (one shared file, 47008-byte transfers and blocks, 1000 segments \
               unless given); both fsync and read another node's data",
        original: "",
        apply: |s, v| s.preset = Preset::parse(v.name()),
        get: |s| Some(OptionValue::Name(s.preset.name())),
    },
    option_row!(
        size transfer?,
        "-t",
        "Bytes per write or read [default: 256k, IOR's; the preset's]"
    ),
    option_row!(
        size block?,
        "-b",
        "Contiguous bytes of each rank per segment, a multiple of the transfer [default: \
         1m, IOR's; the preset's]"
    ),
    option_row!(
        count segments? in 0..=u32::MAX as u64,
        "-s",
        "Segments: each holds one block of every rank [default: 1; ior-hard's 1000]"
    ),
    option_row!(
        flag file_per_process?,
        "-F",
        "One file per rank (FILE.00000000, …) instead of one shared file [default: false; \
         ior-easy's true]"
    ),
    option_row!(
        flag random = "false",
        "-z",
        "Transfers in a random order (from the run's seed), as IOR shuffles them"
    ),
    option_row!(
        flag fsync?,
        "-e",
        "fsync after the write phase's transfers, before close [default: false; the \
         presets' true]"
    ),
    option_row!(
        flag reorder?,
        "-C",
        "Read another node's data: rank r reads what rank (r + reorder_offset × ranks per \
         node) mod ranks wrote [default: false; the presets' true]"
    ),
    OptionDef {
        name: "reorder_offset",
        value_name: "NODES",
        kind: OptionKind::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        default: Some("1"),
        aliases: &[],
        help: "How many nodes away the reordered read reads",
        original: "-Q",
        apply: |s, v| {
            s.reorder_offset = match v {
                OptionValue::Count(n) => n,
                _ => 1,
            }
        },
        get: |s| Some(OptionValue::Count(s.reorder_offset)),
    },
    option_row!(
        flag write = "true",
        "-w",
        "Run the write phase"
    ),
    option_row!(
        flag read = "true",
        "-r",
        "Run the read phase"
    ),
    OptionDef {
        name: "stonewall",
        value_name: "DURATION",
        kind: OptionKind::Duration,
        default: None,
        aliases: &[],
        help: "End each phase at this time after its transfers started (unset: at the end of \
               the work)",
        original: "-D",
        apply: |s, v| {
            s.stonewall = match v {
                OptionValue::Duration(d) => Some(d),
                _ => None,
            }
        },
        get: |s| s.stonewall.map(OptionValue::Duration),
    },
    option_row!(
        flag wear_out?,
        "-O stoneWallingWearOut=1",
        "After the stonewall, every rank goes on until it has done as many transfers as \
         the busiest had [default: false; the presets' true with a stonewall]"
    ),
    option_row!(
        flag direct = "false",
        "--posix.odirect",
        "O_DIRECT on every open (transfers must suit the device's block size)"
    ),
    OptionDef {
        name: "file",
        value_name: "NAME",
        kind: OptionKind::Text,
        default: Some("testFile"),
        aliases: &[],
        help: "The test file, in the run's directory (file per process: NAME.00000000, …)",
        original: "-o",
        apply: |s, v| s.file = v.text(),
        get: |s| Some(OptionValue::Text(s.file)),
    },
    option_row!(
        flag keep = "false",
        "-k",
        "Keep the test files after the run (removed by default, outside the timed region)"
    ),
];

/// What a validated spec runs.
#[derive(Debug, Clone, PartialEq)]
pub struct IorPlan {
    pub dir: PathBuf,
    pub seed: u64,
    pub preset: Preset,
    pub transfer: u64,
    pub block: u64,
    pub segments: u64,
    pub file_per_process: bool,
    pub random: bool,
    pub fsync: bool,
    pub reorder: bool,
    pub reorder_offset: u64,
    pub write: bool,
    pub read: bool,
    pub stonewall: Option<Duration>,
    pub wear_out: bool,
    pub direct: bool,
    /// The test file's path (file per process: the stem of each rank's).
    pub file: PathBuf,
    pub keep: bool,
}

impl IorPlan {
    /// Transfers per block.
    pub fn per_block(&self) -> u64 {
        self.block / self.transfer
    }

    /// The file rank `rank` writes (IOR's names: `FILE.%08d` per process, else `FILE`).
    pub fn file_of(&self, rank: usize) -> PathBuf {
        if self.file_per_process {
            let mut name = self.file.clone().into_os_string();
            name.push(format!(".{rank:08}"));
            PathBuf::from(name)
        } else {
            self.file.clone()
        }
    }

    /// Bytes every rank writes (a shared file's random order spreads them unevenly, the same
    /// in all).
    pub fn bytes_per_rank(&self) -> u64 {
        self.segments * self.block
    }

    /// The rank whose data rank `rank` of `size` reads (`per_node` ranks to a node): its own,
    /// or with `reorder` the one `reorder_offset` nodes on, as IOR's `-C -Q` with tasks
    /// placed in blocks by node.
    pub fn read_source(&self, rank: usize, size: usize, per_node: usize) -> usize {
        if !self.reorder || size == 0 {
            return rank;
        }
        let shift = (self.reorder_offset as u128 * per_node.max(1) as u128) % size as u128;
        (rank + shift as usize) % size
    }
}

/// Why a spec cannot run, naming the options at fault.
#[derive(Debug, Clone, PartialEq)]
pub enum IorSpecError {
    ZeroTransfer,
    TransferNotWords(u64),
    ZeroBlock,
    BlockNotMultiple { block: u64, transfer: u64 },
    ZeroSegments,
    TooLarge,
    RandomOneTransferPerBlock(u64),
    RandomReorderShared,
    NothingToDo,
    WearOutWithoutStonewall,
    PresetFixes { preset: Preset, key: &'static str },
    BadFile(String),
}

impl std::fmt::Display for IorSpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.phrase().to_string())
    }
}

impl std::error::Error for IorSpecError {}

impl Worded for IorSpecError {
    fn phrase(&self) -> Phrase {
        match self {
            IorSpecError::ZeroTransfer => phrase!("{} must be more than 0", opt("transfer")),
            IorSpecError::TransferNotWords(t) => phrase!(
                "{} {} is not a multiple of 8 bytes (IOR's rule)",
                opt("transfer"),
                t
            ),
            IorSpecError::ZeroBlock => phrase!("{} must be more than 0", opt("block")),
            IorSpecError::BlockNotMultiple { block, transfer } => phrase!(
                "{} {} is not a multiple of {} {}",
                opt("block"),
                block,
                opt("transfer"),
                transfer
            ),
            IorSpecError::ZeroSegments => phrase!("{} must be more than 0", opt("segments")),
            IorSpecError::TooLarge => phrase!(
                "{} × {} × ranks does not fit in a file offset",
                opt("segments"),
                opt("block")
            ),
            IorSpecError::RandomOneTransferPerBlock(b) => phrase!(
                "{} with one transfer per block ({} {}) shuffles nothing: IOR refuses it",
                opt("random"),
                opt("block"),
                b
            ),
            IorSpecError::RandomReorderShared => phrase!(
                "{} and {} on one shared file: IOR refuses the pair",
                opt("random"),
                opt("reorder")
            ),
            IorSpecError::NothingToDo => phrase!(
                "neither {} nor {}: the run would do nothing",
                opt("write"),
                opt("read")
            ),
            IorSpecError::WearOutWithoutStonewall => phrase!(
                "{} needs {}: it continues after the stonewall's deadline",
                opt("wear_out"),
                opt("stonewall")
            ),
            IorSpecError::PresetFixes { preset, key } => {
                phrase!("{} {} fixes {}", opt("preset"), preset.name(), opt(key))
            }
            IorSpecError::BadFile(f) => phrase!(
                "{} {:?} is not a file name in the run's directory",
                opt("file"),
                f
            ),
        }
    }

    fn advice(&self) -> Option<Phrase> {
        Some(match self {
            IorSpecError::ZeroTransfer | IorSpecError::TransferNotWords(_) => {
                phrase!(
                    "give e.g. {} 1m or {} 47008",
                    opt("transfer"),
                    opt("transfer")
                )
            }
            IorSpecError::ZeroBlock | IorSpecError::BlockNotMultiple { .. } => phrase!(
                "make {} a whole number of transfers, e.g. 64 × {}",
                opt("block"),
                opt("transfer")
            ),
            IorSpecError::ZeroSegments => phrase!("give {} 1 or more", opt("segments")),
            IorSpecError::TooLarge => phrase!(
                "use fewer {} or a smaller {}",
                opt("segments"),
                opt("block")
            ),
            IorSpecError::RandomOneTransferPerBlock(_) => phrase!(
                "make {} several transfers long, or drop {}",
                opt("block"),
                opt("random")
            ),
            IorSpecError::RandomReorderShared => {
                phrase!("drop one of them, or give {}", opt("file_per_process"))
            }
            IorSpecError::NothingToDo => phrase!("set {} or {}", opt("write"), opt("read")),
            IorSpecError::WearOutWithoutStonewall => {
                phrase!(
                    "give {} (e.g. 30s), or drop {}",
                    opt("stonewall"),
                    opt("wear_out")
                )
            }
            IorSpecError::PresetFixes { key, .. } => phrase!(
                "remove {}, or {} to choose it yourself",
                opt(key),
                opt("preset")
            )
            .then(Phrase::text(" none")),
            IorSpecError::BadFile(_) => {
                phrase!("give a plain name such as testFile for {}", opt("file"))
            }
        })
    }
}

/// What a preset fixes and what it gives when unset: (transfer, block, segments, file per
/// process, fsync, reorder).
struct Defaults {
    transfer: u64,
    block: Option<u64>,
    segments: u64,
    file_per_process: bool,
    fixed: bool,
    fsync: bool,
    reorder: bool,
}

fn defaults(p: Preset) -> Defaults {
    match p {
        Preset::None => Defaults {
            transfer: DEFAULT_TRANSFER,
            block: Some(DEFAULT_BLOCK),
            segments: 1,
            file_per_process: false,
            fixed: false,
            fsync: false,
            reorder: false,
        },
        Preset::Easy => Defaults {
            transfer: EASY_TRANSFER,
            block: Some(EASY_BLOCK),
            segments: 1,
            file_per_process: true,
            fixed: true,
            fsync: true,
            reorder: true,
        },
        Preset::Hard => Defaults {
            transfer: HARD_RECORD,
            block: Some(HARD_RECORD),
            segments: HARD_SEGMENTS,
            file_per_process: false,
            fixed: true,
            fsync: true,
            reorder: true,
        },
    }
}

impl IorSpec {
    /// The plan, or what IOR would refuse (and what iolab adds: a file name that stays in
    /// the run's directory).
    pub fn validate(&self) -> Result<IorPlan, IorSpecError> {
        let d = defaults(self.preset);
        let preset = self.preset;
        // A preset is IO500's phase: the keys that make it that phase are not the user's.
        if d.fixed {
            if self
                .file_per_process
                .is_some_and(|f| f != d.file_per_process)
            {
                return Err(IorSpecError::PresetFixes {
                    preset,
                    key: "file_per_process",
                });
            }
            if self.transfer.is_some_and(|t| t != d.transfer) {
                return Err(IorSpecError::PresetFixes {
                    preset,
                    key: "transfer",
                });
            }
            if preset == Preset::Hard && self.block.is_some_and(|b| b != HARD_RECORD) {
                return Err(IorSpecError::PresetFixes {
                    preset,
                    key: "block",
                });
            }
        }
        let transfer = self.transfer.unwrap_or(d.transfer);
        let block = self.block.or(d.block).unwrap_or(DEFAULT_BLOCK);
        let segments = self.segments.unwrap_or(d.segments);
        let file_per_process = self.file_per_process.unwrap_or(d.file_per_process);
        let reorder = self.reorder.unwrap_or(d.reorder);
        if transfer == 0 {
            return Err(IorSpecError::ZeroTransfer);
        }
        if !transfer.is_multiple_of(8) {
            return Err(IorSpecError::TransferNotWords(transfer));
        }
        if block == 0 {
            return Err(IorSpecError::ZeroBlock);
        }
        if !block.is_multiple_of(transfer) {
            return Err(IorSpecError::BlockNotMultiple { block, transfer });
        }
        if segments == 0 {
            return Err(IorSpecError::ZeroSegments);
        }
        // A shared file of up to 2^20 ranks must have offsets that fit.
        if segments
            .checked_mul(block)
            .and_then(|b| b.checked_mul(1 << 20))
            .is_none_or(|b| b > i64::MAX as u64)
        {
            return Err(IorSpecError::TooLarge);
        }
        if self.random && block == transfer {
            return Err(IorSpecError::RandomOneTransferPerBlock(block));
        }
        if self.random && reorder && !file_per_process {
            return Err(IorSpecError::RandomReorderShared);
        }
        if !self.write && !self.read {
            return Err(IorSpecError::NothingToDo);
        }
        if self.wear_out == Some(true) && self.stonewall.is_none() {
            return Err(IorSpecError::WearOutWithoutStonewall);
        }
        let name = Path::new(self.file);
        let plain = !self.file.is_empty()
            && !self.file.contains('\0')
            && !self.file.ends_with('/')
            && name.is_relative()
            && name
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !plain {
            return Err(IorSpecError::BadFile(self.file.to_string()));
        }
        Ok(IorPlan {
            dir: self.dir.clone(),
            seed: self.seed,
            preset,
            transfer,
            block,
            segments,
            file_per_process,
            random: self.random,
            fsync: self.fsync.unwrap_or(d.fsync),
            reorder,
            reorder_offset: self.reorder_offset,
            write: self.write,
            read: self.read,
            stonewall: self.stonewall,
            wear_out: self.wear_out.unwrap_or(d.fixed && self.stonewall.is_some()),
            direct: self.direct,
            file: self.dir.join(name),
            keep: self.keep,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> IorSpec {
        IorSpec::with_defaults("/d".into(), 1)
    }

    #[test]
    fn defaults_are_iors() {
        let p = spec().validate().unwrap();
        assert_eq!((p.transfer, p.block, p.segments), (256 << 10, 1 << 20, 1));
        assert!(!p.file_per_process && p.write && p.read && !p.fsync && !p.reorder);
        assert_eq!(p.file, PathBuf::from("/d/testFile"));
        assert_eq!(p.file_of(3), PathBuf::from("/d/testFile"));
    }

    #[test]
    fn presets_are_io500s_phases() {
        let mut s = spec();
        s.preset = Preset::Easy;
        let p = s.validate().unwrap();
        assert_eq!((p.transfer, p.block), (2 << 20, 64 << 20));
        assert!(p.file_per_process && p.fsync && p.reorder && !p.wear_out);
        assert_eq!(p.file_of(12), PathBuf::from("/d/testFile.00000012"));
        s.stonewall = Some(Duration::from_secs(300));
        assert!(s.validate().unwrap().wear_out);
        s.preset = Preset::Hard;
        let p = s.validate().unwrap();
        assert_eq!((p.transfer, p.block, p.segments), (47008, 47008, 1000));
        assert!(!p.file_per_process);
        s.file_per_process = Some(true);
        assert_eq!(
            s.validate().unwrap_err(),
            IorSpecError::PresetFixes {
                preset: Preset::Hard,
                key: "file_per_process"
            }
        );
    }

    #[test]
    fn iors_refusals_name_the_option() {
        let check = |f: &dyn Fn(&mut IorSpec), e: IorSpecError| {
            let mut s = spec();
            f(&mut s);
            assert_eq!(s.validate().unwrap_err(), e);
        };
        check(&|s| s.transfer = Some(0), IorSpecError::ZeroTransfer);
        check(
            &|s| s.transfer = Some(1000 + 4),
            IorSpecError::TransferNotWords(1004),
        );
        check(
            &|s| s.block = Some(300 << 10),
            IorSpecError::BlockNotMultiple {
                block: 300 << 10,
                transfer: 256 << 10,
            },
        );
        check(&|s| s.segments = Some(0), IorSpecError::ZeroSegments);
        check(
            &|s| {
                s.random = true;
                s.block = Some(256 << 10)
            },
            IorSpecError::RandomOneTransferPerBlock(256 << 10),
        );
        check(
            &|s| {
                s.random = true;
                s.reorder = Some(true)
            },
            IorSpecError::RandomReorderShared,
        );
        check(
            &|s| {
                s.write = false;
                s.read = false
            },
            IorSpecError::NothingToDo,
        );
        check(
            &|s| s.wear_out = Some(true),
            IorSpecError::WearOutWithoutStonewall,
        );
        check(&|s| s.file = "../x", IorSpecError::BadFile("../x".into()));
        let e = IorSpecError::BlockNotMultiple {
            block: 3,
            transfer: 2,
        };
        assert_eq!(e.to_string(), "--block 3 is not a multiple of --transfer 2");
    }

    #[test]
    fn reorder_reads_the_rank_a_node_on() {
        let mut s = spec();
        s.reorder = Some(true);
        let p = s.validate().unwrap();
        // 4 ranks, 2 per node: rank 0 reads rank 2's data (the other node).
        assert_eq!(
            (0..4).map(|r| p.read_source(r, 4, 2)).collect::<Vec<_>>(),
            [2, 3, 0, 1]
        );
        s.reorder = Some(false);
        assert_eq!(s.validate().unwrap().read_source(1, 4, 2), 1);
    }
}
