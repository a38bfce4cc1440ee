//! The one option table of the mdtest kind (mdtest's settings in iolab's words), the spec it
//! fills, and validation into a plan.

use std::path::PathBuf;
use std::time::Duration;

use iolab_util::option::{OptionDef, OptionKind, OptionValue};
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Worded};
use serde::Serialize;

/// The phases a run may do, in mdtest's order (`phases` names them).
pub const PHASE_NAMES: [&str; 4] = ["create", "stat", "read", "remove"];

/// IO500's mdtest-hard file size: every file gets 3901 bytes written and read back.
pub const HARD_BYTES: u64 = 3901;

/// The largest bytes written or read per file: one buffer holds them.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// The IO500 metadata phases as presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Preset {
    None,
    /// Empty files, a directory per rank (`-F -u`).
    Easy,
    /// 3901-byte files written and read back, one shared directory (`-F -w 3901 -e 3901`).
    Hard,
}

impl Preset {
    pub const NAMES: [&'static str; 3] = ["none", "mdtest-easy", "mdtest-hard"];
    const ALL: [Preset; 3] = [Preset::None, Preset::Easy, Preset::Hard];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(text: &str) -> Option<Preset> {
        Self::ALL.into_iter().find(|p| p.name() == text)
    }
}

/// An mdtest run as the user asked for it, before validation.
#[derive(Debug, Clone, Serialize)]
pub struct MdtestSpec {
    pub dir: PathBuf,
    pub seed: u64,
    pub items: u64,
    pub unique_dir: bool,
    /// `None`: mdtest's 0, or with a preset one node on (IO500 reads another node's files).
    pub stride: Option<u64>,
    pub write_bytes: u64,
    pub read_bytes: u64,
    pub files_only: bool,
    pub dirs_only: bool,
    /// Bit set over [`PHASE_NAMES`].
    pub phases: u64,
    pub stonewall: Option<Duration>,
    pub branching: u64,
    pub depth: u64,
    pub sync: bool,
    pub preset: Preset,
}

impl MdtestSpec {
    pub fn with_defaults(dir: PathBuf, seed: u64) -> MdtestSpec {
        MdtestSpec {
            dir,
            seed,
            items: 1000,
            unique_dir: false,
            stride: None,
            write_bytes: 0,
            read_bytes: 0,
            files_only: false,
            dirs_only: false,
            phases: 0b1111,
            stonewall: None,
            branching: 1,
            depth: 0,
            sync: false,
            preset: Preset::None,
        }
    }
}

/// One option of the mdtest kind.
pub type MdtestOption = OptionDef<MdtestSpec>;

/// Every option, in the order help and docs list them (`original` is mdtest's flag, which
/// `iolab mdtest` takes).
pub const OPTIONS: &[MdtestOption] = &[
    OptionDef {
        name: "items",
        value_name: "N",
        kind: OptionKind::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        default: Some("1000"),
        aliases: &[],
        help: "Files (and directories) each rank creates, stats, reads and removes",
        original: "-n",
        apply: |s, v| {
            if let OptionValue::Count(n) = v {
                s.items = n
            }
        },
        get: |s| Some(OptionValue::Count(s.items)),
    },
    OptionDef {
        name: "unique_dir",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: Some("false"),
        aliases: &[],
        help: "A directory per rank (mdtest_tree.RANK.0) instead of one shared by all ranks",
        original: "-u",
        apply: |s, v| s.unique_dir = v.flag(),
        get: |s| Some(OptionValue::Flag(s.unique_dir)),
    },
    OptionDef {
        name: "stride",
        value_name: "N",
        kind: OptionKind::Count {
            min: 0,
            max: u32::MAX as u64,
        },
        default: None,
        aliases: &[],
        help: "Stat, read and remove the items of the rank this many places on, to defeat \
               the client's cache [default: 0; with a preset, the ranks of one node]",
        original: "-N",
        apply: |s, v| {
            if let OptionValue::Count(n) = v {
                s.stride = Some(n)
            }
        },
        get: |s| s.stride.map(OptionValue::Count),
    },
    OptionDef {
        name: "write_bytes",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: Some("0"),
        aliases: &[],
        help: "Bytes written to each file after it is created",
        original: "-w",
        apply: |s, v| s.write_bytes = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.write_bytes)),
    },
    OptionDef {
        name: "read_bytes",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: Some("0"),
        aliases: &[],
        help: "Bytes read from each file in the read phase (0: open and close only)",
        original: "-e",
        apply: |s, v| s.read_bytes = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.read_bytes)),
    },
    OptionDef {
        name: "files_only",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: Some("false"),
        aliases: &[],
        help: "Files only (neither this nor dirs_only: directories, then files)",
        original: "-F",
        apply: |s, v| s.files_only = v.flag(),
        get: |s| Some(OptionValue::Flag(s.files_only)),
    },
    OptionDef {
        name: "dirs_only",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: Some("false"),
        aliases: &[],
        help: "Directories only",
        original: "-D",
        apply: |s, v| s.dirs_only = v.flag(),
        get: |s| Some(OptionValue::Flag(s.dirs_only)),
    },
    OptionDef {
        name: "phases",
        value_name: "PHASES",
        kind: OptionKind::Set {
            names: &PHASE_NAMES,
            what: "phase",
        },
        default: Some("create,stat,read,remove"),
        aliases: &[],
        help: "Which phases run, in this order (mdtest -C, -T, -E, -r); read is for files only",
        original: "",
        apply: |s, v| s.phases = v.set_members().fold(0, |b, i| b | 1 << i),
        get: |s| Some(OptionValue::Set(s.phases)),
    },
    OptionDef {
        name: "stonewall",
        value_name: "DURATION",
        kind: OptionKind::Duration,
        default: None,
        aliases: &[],
        help: "Stop creating at this time, then every rank goes on to the most items any rank \
               had created, and the later phases do that many [default: none]",
        original: "-W",
        apply: |s, v| {
            if let OptionValue::Duration(d) = v {
                s.stonewall = Some(d)
            }
        },
        get: |s| s.stonewall.map(OptionValue::Duration),
    },
    OptionDef {
        name: "branching",
        value_name: "N",
        kind: OptionKind::Count { min: 1, max: 1024 },
        default: Some("1"),
        aliases: &[],
        help: "Branching factor of the directory tree (used with a depth above 0)",
        original: "-b",
        apply: |s, v| {
            if let OptionValue::Count(n) = v {
                s.branching = n
            }
        },
        get: |s| Some(OptionValue::Count(s.branching)),
    },
    OptionDef {
        name: "depth",
        value_name: "N",
        kind: OptionKind::Count { min: 0, max: 64 },
        default: Some("0"),
        aliases: &[],
        help: "Depth of the directory tree (only 0, the flat tree, so far)",
        original: "-z",
        apply: |s, v| {
            if let OptionValue::Count(n) = v {
                s.depth = n
            }
        },
        get: |s| Some(OptionValue::Count(s.depth)),
    },
    OptionDef {
        name: "sync",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: Some("false"),
        aliases: &[],
        help: "fsync each file after writing it",
        original: "-y",
        apply: |s, v| s.sync = v.flag(),
        get: |s| Some(OptionValue::Flag(s.sync)),
    },
    OptionDef {
        name: "preset",
        value_name: "PRESET",
        kind: OptionKind::Choice(&Preset::NAMES),
        default: Some("none"),
        aliases: &[],
        help: "IO500's phases: mdtest-easy (empty files, a directory per rank) or mdtest-hard \
               (3901-byte files written and read back, one shared directory)",
        original: "",
        apply: |s, v| s.preset = Preset::parse(v.name()).unwrap_or(s.preset),
        get: |s| Some(OptionValue::Name(s.preset.name())),
    },
];

/// The option called `name`.
pub fn option(name: &str) -> Option<&'static MdtestOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// Why a spec cannot run: each message names the option at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MdtestSpecError {
    #[error("{}", self.phrase())]
    FilesAndDirsOnly,
    #[error("{}", self.phrase())]
    Deep(u64),
    #[error("{}", self.phrase())]
    NoPhase,
    #[error("{}", self.phrase())]
    NothingToRead,
    #[error("{}", self.phrase())]
    HugeBytes(&'static str, u64),
    #[error("{}", self.phrase())]
    ShortRead { read: u64, write: u64 },
    #[error("{}", self.phrase())]
    BytesWithDirs(&'static str),
    #[error("{}", self.phrase())]
    SyncWithoutWrite,
    #[error("{}", self.phrase())]
    StonewallWithoutCreate,
    #[error("{}", self.phrase())]
    PresetConflict {
        preset: &'static str,
        key: &'static str,
    },
}

impl MdtestSpecError {
    /// The option at fault.
    pub fn key(&self) -> &'static str {
        match self {
            MdtestSpecError::FilesAndDirsOnly => "dirs_only",
            MdtestSpecError::Deep(_) => "depth",
            MdtestSpecError::NoPhase | MdtestSpecError::NothingToRead => "phases",
            MdtestSpecError::HugeBytes(k, _) | MdtestSpecError::BytesWithDirs(k) => k,
            MdtestSpecError::ShortRead { .. } => "read_bytes",
            MdtestSpecError::SyncWithoutWrite => "sync",
            MdtestSpecError::StonewallWithoutCreate => "stonewall",
            MdtestSpecError::PresetConflict { key, .. } => key,
        }
    }
}

impl Worded for MdtestSpecError {
    fn phrase(&self) -> Phrase {
        match self {
            MdtestSpecError::FilesAndDirsOnly => phrase!(
                "{} and {} together run nothing: give one, or neither for directories then files",
                opt("files_only"),
                opt("dirs_only"),
            ),
            MdtestSpecError::Deep(d) => phrase!(
                "{} {} is not supported yet: iolab's mdtest runs the flat tree (mdtest's default, {} 0)",
                opt("depth"),
                d,
                opt("depth"),
            ),
            MdtestSpecError::NoPhase => phrase!(
                "{} names no phase: give some of create, stat, read, remove",
                opt("phases"),
            ),
            MdtestSpecError::NothingToRead => phrase!(
                "{} read alone with {} runs nothing: directories are not read (add stat or remove, or drop {})",
                opt("phases"),
                opt("dirs_only"),
                opt("dirs_only"),
            ),
            MdtestSpecError::HugeBytes(k, n) => phrase!(
                "{} {} is larger than 1 GiB: one buffer holds it, use a smaller one",
                opt(k),
                n,
            ),
            MdtestSpecError::ShortRead { read, write } => phrase!(
                "{} {} is more than {} {}: every read would come up short (mdtest warns on each); read at most what was written",
                opt("read_bytes"),
                read,
                opt("write_bytes"),
                write,
            ),
            MdtestSpecError::BytesWithDirs(k) => phrase!(
                "{} applies to files, and {} runs directories only: drop one of them",
                opt(k),
                opt("dirs_only"),
            ),
            MdtestSpecError::SyncWithoutWrite => phrase!(
                "{} syncs each file after its write, and {} is 0: give {} (e.g. 3901) or drop {}",
                opt("sync"),
                opt("write_bytes"),
                opt("write_bytes"),
                opt("sync"),
            ),
            MdtestSpecError::StonewallWithoutCreate => phrase!(
                "{} stops the create phase, which {} leaves out: add create or drop {}",
                opt("stonewall"),
                opt("phases"),
                opt("stonewall"),
            ),
            MdtestSpecError::PresetConflict { preset, key } => phrase!(
                "{} {} sets {} itself: drop {} (or the preset)",
                opt("preset"),
                preset,
                opt(key),
                opt(key),
            ),
        }
    }
}

/// A validated mdtest run.
#[derive(Debug, Clone, Serialize)]
pub struct MdtestPlan {
    pub dir: PathBuf,
    pub items: u64,
    pub unique_dir: bool,
    /// `None`: the ranks of one node (a preset's rule), known when the run starts.
    pub stride: Option<u64>,
    pub write_bytes: u64,
    pub read_bytes: u64,
    pub files: bool,
    pub dirs: bool,
    pub create: bool,
    pub stat: bool,
    pub read: bool,
    pub remove: bool,
    pub stonewall: Option<Duration>,
    pub sync: bool,
    pub preset: Preset,
}

impl MdtestSpec {
    pub fn validate(&self) -> Result<MdtestPlan, MdtestSpecError> {
        let mut s = self.clone();
        if s.preset != Preset::None {
            let (unique, bytes) = match s.preset {
                Preset::Easy => (true, 0),
                _ => (false, HARD_BYTES),
            };
            let conflict = |key| MdtestSpecError::PresetConflict {
                preset: self.preset.name(),
                key,
            };
            // A key the preset sets may be given only with the preset's own value.
            if s.unique_dir != unique && s.unique_dir {
                return Err(conflict("unique_dir"));
            }
            if s.dirs_only {
                return Err(conflict("dirs_only"));
            }
            for (key, v) in [("write_bytes", s.write_bytes), ("read_bytes", s.read_bytes)] {
                if v != 0 && v != bytes {
                    return Err(conflict(key));
                }
            }
            s.unique_dir = unique;
            s.files_only = true;
            s.write_bytes = bytes;
            s.read_bytes = bytes;
        }
        if s.files_only && s.dirs_only {
            return Err(MdtestSpecError::FilesAndDirsOnly);
        }
        if s.depth > 0 {
            return Err(MdtestSpecError::Deep(s.depth));
        }
        let has = |i: usize| s.phases & (1 << i) != 0;
        if s.phases & 0b1111 == 0 {
            return Err(MdtestSpecError::NoPhase);
        }
        let files = !s.dirs_only;
        let dirs = !s.files_only;
        if !files && s.phases & 0b1111 == 0b0100 {
            return Err(MdtestSpecError::NothingToRead);
        }
        for (k, v) in [("write_bytes", s.write_bytes), ("read_bytes", s.read_bytes)] {
            if v > MAX_FILE_BYTES {
                return Err(MdtestSpecError::HugeBytes(k, v));
            }
            if v > 0 && !files {
                return Err(MdtestSpecError::BytesWithDirs(k));
            }
        }
        if s.read_bytes > s.write_bytes && has(2) {
            return Err(MdtestSpecError::ShortRead {
                read: s.read_bytes,
                write: s.write_bytes,
            });
        }
        if s.sync && s.write_bytes == 0 {
            return Err(MdtestSpecError::SyncWithoutWrite);
        }
        if s.stonewall.is_some() && !has(0) {
            return Err(MdtestSpecError::StonewallWithoutCreate);
        }
        Ok(MdtestPlan {
            dir: s.dir.clone(),
            items: s.items,
            unique_dir: s.unique_dir,
            stride: match (s.stride, s.preset) {
                (Some(n), _) => Some(n),
                (None, Preset::None) => Some(0),
                (None, _) => None,
            },
            write_bytes: s.write_bytes,
            read_bytes: s.read_bytes,
            files,
            dirs,
            create: has(0),
            stat: has(1),
            read: has(2) && files,
            remove: has(3),
            stonewall: s.stonewall,
            sync: s.sync,
            preset: s.preset,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> MdtestSpec {
        MdtestSpec::with_defaults("/d".into(), 1)
    }

    #[test]
    fn presets_are_io500s_phases() {
        let mut s = spec();
        s.preset = Preset::Hard;
        let p = s.validate().unwrap();
        assert!(p.files && !p.dirs && !p.unique_dir);
        assert_eq!((p.write_bytes, p.read_bytes), (3901, 3901));
        assert_eq!(p.stride, None, "one node on, known at run time");
        s.preset = Preset::Easy;
        let p = s.validate().unwrap();
        assert!(p.files && !p.dirs && p.unique_dir);
        assert_eq!((p.write_bytes, p.read_bytes), (0, 0));
        s.write_bytes = 10;
        assert_eq!(s.validate().unwrap_err().key(), "write_bytes");
    }

    #[test]
    fn errors_name_the_option_at_fault() {
        let bad = |f: &dyn Fn(&mut MdtestSpec)| {
            let mut s = spec();
            f(&mut s);
            s.validate().unwrap_err()
        };
        let e = bad(&|s| {
            s.files_only = true;
            s.dirs_only = true
        });
        assert_eq!(e.key(), "dirs_only");
        assert!(e.to_string().contains("--files-only"), "{e}");
        assert_eq!(bad(&|s| s.depth = 2).key(), "depth");
        assert_eq!(bad(&|s| s.read_bytes = 10).key(), "read_bytes");
        assert_eq!(bad(&|s| s.sync = true).key(), "sync");
        assert_eq!(bad(&|s| s.phases = 0).key(), "phases");
        let e = bad(&|s| {
            s.phases = 0b0010;
            s.stonewall = Some(Duration::from_secs(1))
        });
        assert_eq!(e.key(), "stonewall");
    }

    #[test]
    fn by_default_directories_then_files_in_all_four_phases() {
        let p = spec().validate().unwrap();
        assert!(p.files && p.dirs && p.create && p.stat && p.read && p.remove);
        assert_eq!(p.stride, Some(0));
    }
}
