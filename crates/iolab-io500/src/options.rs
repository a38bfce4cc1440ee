//! The one option table of the io500 kind (`io500 = { … }` and `iolab io500`'s flags come
//! from it), the spec it fills, and validation into a plan: the ior and mdtest kinds' IO500
//! presets in the run's data directory, sized for a mini run unless told otherwise.

use std::path::PathBuf;
use std::time::Duration;

use iolab_ior::{IorPlan, IorSpec};
use iolab_mdtest::{MdtestPlan, MdtestSpec};
use iolab_util::option::{OptionDef, OptionKind, OptionValue};
use iolab_util::option_row;
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Worded};

/// IO500's stonewall for a valid submission: every write phase runs at least this long.
pub const IO500_STONEWALL: Duration = Duration::from_secs(300);

/// ior-easy's transfer (IO500's): its block must be a multiple of it.
pub const EASY_TRANSFER: u64 = 2 << 20;

/// A mini run's sizes per rank at `scale` 1 (IO500's own are sized to outlast the
/// stonewall: 9920000 MiB blocks, 10 million segments, a million items).
pub const MINI_EASY_BLOCK: u64 = 64 << 20;
pub const MINI_HARD_SEGMENTS: u64 = 1000;
pub const MINI_EASY_ITEMS: u64 = 1000;
pub const MINI_HARD_ITEMS: u64 = 1000;

/// The data directory in the run's directory (IO500's `datadir`), and the timestamp file
/// beside it that the find's `-newer` compares with (IO500 keeps it with the results, out of
/// the walk).
pub const DATA_DIR: &str = "io500-data";
pub const TIMESTAMP_FILE: &str = "io500-timestamp";

/// An io500 run as the user asked for it. `None`: the mini size times `scale`.
#[derive(Debug, Clone)]
pub struct Io500Spec {
    pub dir: PathBuf,
    pub seed: u64,
    pub stonewall: Duration,
    pub scale: u64,
    pub ior_easy_block: Option<u64>,
    pub ior_hard_segments: Option<u64>,
    pub mdtest_easy_items: Option<u64>,
    pub mdtest_hard_items: Option<u64>,
}

impl Io500Spec {
    /// The table's defaults, in `dir` with `seed`.
    pub fn with_defaults(dir: PathBuf, seed: u64) -> Io500Spec {
        let mut s = Io500Spec {
            dir,
            seed,
            stonewall: IO500_STONEWALL,
            scale: 1,
            ior_easy_block: None,
            ior_hard_segments: None,
            mdtest_easy_items: None,
            mdtest_hard_items: None,
        };
        iolab_util::option::apply_defaults(OPTIONS, &mut s);
        s
    }
}

/// One option of the io500 kind.
pub type Io500Option = OptionDef<Io500Spec>;

fn count(v: OptionValue) -> u64 {
    match v {
        OptionValue::Count(n) => n,
        _ => 1,
    }
}

/// Every option, in the order help and docs list them; `original` is IO500's ini key.
pub const OPTIONS: &[Io500Option] = &[
    OptionDef {
        name: "stonewall",
        value_name: "DURATION",
        kind: OptionKind::Duration,
        default: Some("300s"),
        aliases: &[],
        help: "The write phases end this long after they started (then every rank catches up \
               with the busiest, IOR's and mdtest's wear-out); below IO500's 300s the run is \
               not a valid IO500 result, and says so",
        original: "[global] stonewall-time",
        apply: |s, v| {
            if let OptionValue::Duration(d) = v {
                s.stonewall = d
            }
        },
        get: |s| Some(OptionValue::Duration(s.stonewall)),
    },
    OptionDef {
        name: "scale",
        value_name: "N",
        kind: OptionKind::Count {
            min: 1,
            max: 1 << 20,
        },
        default: Some("1"),
        aliases: &[],
        help: "Multiplies the mini run's sizes per rank (64 MiB of ior-easy, 1000 segments of \
               ior-hard, 1000 items of each mdtest) where no size is given",
        original: "",
        apply: |s, v| s.scale = count(v),
        get: |s| Some(OptionValue::Count(s.scale)),
    },
    option_row!(
        size ior_easy_block?,
        "[ior-easy] blockSize",
        "ior-easy's bytes per rank, a multiple of its 2 MiB transfer [default: 64m × \
         scale]"
    ),
    option_row!(
        count ior_hard_segments? in 1..=u32::MAX as u64,
        "[ior-hard] segmentCount",
        "ior-hard's 47008-byte records per rank [default: 1000 × scale]"
    ),
    option_row!(
        count mdtest_easy_items? in 1..=u32::MAX as u64,
        "[mdtest-easy] n",
        "mdtest-easy's empty files per rank [default: 1000 × scale]"
    ),
    option_row!(
        count mdtest_hard_items? in 1..=u32::MAX as u64,
        "[mdtest-hard] n",
        "mdtest-hard's 3901-byte files per rank [default: 1000 × scale]"
    ),
];

/// The option named `name`.
pub fn option(name: &str) -> Option<&'static Io500Option> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// What a validated spec runs: the four workloads' plans in the data directory.
#[derive(Debug, Clone)]
pub struct Io500Plan {
    pub dir: PathBuf,
    pub seed: u64,
    pub stonewall: Duration,
    /// Where the workloads' directories are (the find walks it).
    pub data: PathBuf,
    pub timestamp: PathBuf,
    pub ior_easy: IorPlan,
    pub ior_hard: IorPlan,
    pub mdtest_easy: MdtestPlan,
    pub mdtest_hard: MdtestPlan,
}

impl Io500Plan {
    /// Whether the stonewall is long enough for a valid IO500 result.
    pub fn full_stonewall(&self) -> bool {
        self.stonewall >= IO500_STONEWALL
    }

    /// Bytes of data each rank writes (for the check against the target's size).
    pub fn bytes_per_rank(&self) -> u64 {
        self.ior_easy.bytes_per_rank()
            + self.ior_hard.bytes_per_rank()
            + self.mdtest_hard.items * self.mdtest_hard.write_bytes
    }
}

/// Why a spec cannot run, naming the option at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Io500SpecError {
    EasyBlockNotMultiple(u64),
    /// A size times `scale` does not fit.
    TooLarge(&'static str),
}

impl Io500SpecError {
    /// The option at fault.
    pub fn key(&self) -> &'static str {
        match self {
            Io500SpecError::EasyBlockNotMultiple(_) => "ior_easy_block",
            Io500SpecError::TooLarge(k) => k,
        }
    }
}

impl std::fmt::Display for Io500SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.phrase().to_string())
    }
}

impl std::error::Error for Io500SpecError {}

impl Worded for Io500SpecError {
    fn phrase(&self) -> Phrase {
        match self {
            Io500SpecError::EasyBlockNotMultiple(b) => phrase!(
                "{} {} is not a multiple of ior-easy's 2 MiB transfer",
                opt("ior_easy_block"),
                b
            ),
            Io500SpecError::TooLarge(k) => phrase!(
                "{} times {} is more than a rank can do",
                opt(k),
                opt("scale")
            ),
        }
    }

    fn advice(&self) -> Option<Phrase> {
        Some(match self {
            Io500SpecError::EasyBlockNotMultiple(_) => {
                phrase!(
                    "give a whole number of 2 MiB, e.g. {} 64m",
                    opt("ior_easy_block")
                )
            }
            Io500SpecError::TooLarge(k) => {
                phrase!("make {} smaller, or give {} itself", opt("scale"), opt(k))
            }
        })
    }
}

impl Io500Spec {
    /// The plan: IO500's four workloads (the ior and mdtest kinds' presets) with this run's
    /// sizes and stonewall, each in its directory of the data directory (IO500's names).
    pub fn validate(&self) -> Result<Io500Plan, Io500SpecError> {
        let scaled = |given: Option<u64>, mini: u64, key: &'static str| match given {
            Some(v) => Ok(v),
            None => mini
                .checked_mul(self.scale)
                .ok_or(Io500SpecError::TooLarge(key)),
        };
        let easy_block = scaled(self.ior_easy_block, MINI_EASY_BLOCK, "ior_easy_block")?;
        if easy_block == 0 || !easy_block.is_multiple_of(EASY_TRANSFER) {
            return Err(Io500SpecError::EasyBlockNotMultiple(easy_block));
        }
        let hard_segments = scaled(
            self.ior_hard_segments,
            MINI_HARD_SEGMENTS,
            "ior_hard_segments",
        )?;
        let data = self.dir.join(DATA_DIR);
        let ior = |preset, sub: &str, file: &'static str, key: &'static str| {
            let mut s = IorSpec::with_defaults(data.join(sub), self.seed);
            s.preset = preset;
            s.file = file;
            s.stonewall = Some(self.stonewall);
            // The io500 run removes its files when it is done with them.
            s.keep = true;
            match preset {
                iolab_ior::Preset::Easy => s.block = Some(easy_block),
                _ => s.segments = Some(hard_segments),
            }
            s.validate().map_err(|_| Io500SpecError::TooLarge(key))
        };
        let ior_easy = ior(
            iolab_ior::Preset::Easy,
            "ior-easy",
            "ior_file_easy",
            "ior_easy_block",
        )?;
        let ior_hard = ior(
            iolab_ior::Preset::Hard,
            "ior-hard",
            "file",
            "ior_hard_segments",
        )?;
        let mdtest = |preset, sub: &str, given, mini, key| {
            let mut s = MdtestSpec::with_defaults(data.join(sub), self.seed);
            s.preset = preset;
            s.items = scaled(given, mini, key)?;
            s.stonewall = Some(self.stonewall);
            // The presets leave nothing else to refuse.
            s.validate().map_err(|_| Io500SpecError::TooLarge(key))
        };
        let mdtest_easy = mdtest(
            iolab_mdtest::Preset::Easy,
            "mdtest-easy",
            self.mdtest_easy_items,
            MINI_EASY_ITEMS,
            "mdtest_easy_items",
        )?;
        let mdtest_hard = mdtest(
            iolab_mdtest::Preset::Hard,
            "mdtest-hard",
            self.mdtest_hard_items,
            MINI_HARD_ITEMS,
            "mdtest_hard_items",
        )?;
        Ok(Io500Plan {
            dir: self.dir.clone(),
            seed: self.seed,
            stonewall: self.stonewall,
            timestamp: self.dir.join(TIMESTAMP_FILE),
            data,
            ior_easy,
            ior_hard,
            mdtest_easy,
            mdtest_hard,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Io500Spec {
        Io500Spec::with_defaults("/d".into(), 1)
    }

    #[test]
    fn the_defaults_are_a_mini_run_with_io500s_stonewall() {
        let p = spec().validate().unwrap();
        assert_eq!(p.stonewall, IO500_STONEWALL);
        assert!(p.full_stonewall());
        assert_eq!((p.ior_easy.transfer, p.ior_easy.block), (2 << 20, 64 << 20));
        assert!(p.ior_easy.file_per_process && p.ior_easy.reorder && p.ior_easy.wear_out);
        assert_eq!(
            p.ior_easy.file,
            PathBuf::from("/d/io500-data/ior-easy/ior_file_easy")
        );
        assert_eq!(
            (p.ior_hard.transfer, p.ior_hard.block, p.ior_hard.segments),
            (47008, 47008, 1000)
        );
        assert!(!p.ior_hard.file_per_process && p.ior_hard.reorder && p.ior_hard.wear_out);
        assert!(p.mdtest_easy.unique_dir && p.mdtest_easy.write_bytes == 0);
        assert!(!p.mdtest_hard.unique_dir && p.mdtest_hard.write_bytes == 3901);
        assert_eq!(p.mdtest_hard.stonewall, Some(IO500_STONEWALL));
        assert_eq!(
            p.mdtest_easy.dir,
            PathBuf::from("/d/io500-data/mdtest-easy")
        );
    }

    #[test]
    fn scale_multiplies_what_is_not_given() {
        let mut s = spec();
        s.scale = 3;
        s.mdtest_hard_items = Some(7);
        let p = s.validate().unwrap();
        assert_eq!(p.ior_easy.block, 3 * (64 << 20));
        assert_eq!(p.ior_hard.segments, 3000);
        assert_eq!((p.mdtest_easy.items, p.mdtest_hard.items), (3000, 7));
        s.stonewall = Duration::from_secs(5);
        assert!(!s.validate().unwrap().full_stonewall());
    }

    #[test]
    fn refusals_name_the_option() {
        let mut s = spec();
        s.ior_easy_block = Some(3 << 20);
        let e = s.validate().unwrap_err();
        assert_eq!(e.key(), "ior_easy_block");
        assert!(e.to_string().contains("--ior-easy-block 3145728"), "{e}");
        let mut s = spec();
        s.scale = u64::MAX / 2;
        assert_eq!(s.validate().unwrap_err().key(), "ior_easy_block");
    }
}
