//! The one option table of the bonnie kind, the spec it fills, and validation into a plan.

use std::path::PathBuf;

use iolab_util::option::{OptionDef, OptionKind, OptionValue};
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Worded};
use serde::Serialize;

use crate::phase::Phase;

/// bonnie++'s chunk size (`-s SIZE:CHUNK`, `-n …:CHUNK`): 8 KiB.
pub const DEFAULT_CHUNK: u64 = 8 << 10;
/// bonnie++'s seekers (`-s SIZE:CHUNK:SEEKS:PROCS`).
pub const DEFAULT_SEEKERS: u32 = 5;
/// bonnie++'s seeks.
pub const DEFAULT_SEEKS: u32 = 8192;
/// The most files (in units of 1024) bonnie++ takes: their names must fit in 1 GiB of memory
/// at 37 bytes a name (`-n` above this is refused by bonnie++ too).
pub const MAX_FILES_K: u32 = (1 << 20) / 37;
/// The most subdirectories for the file phases (bonnie++: 99,999; names are `%05d`).
pub const MAX_DIRS: u32 = 99_999;

/// Which groups of phases run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phases {
    /// Everything (bonnie++'s default).
    All,
    /// The file I/O phases only (bonnie++ `-n 0`).
    Io,
    /// The create/stat/delete phases only (bonnie++ `-s 0`).
    Files,
}

impl Phases {
    pub const NAMES: [&'static str; 3] = ["all", "io", "files"];
    const ALL: [Phases; 3] = [Phases::All, Phases::Io, Phases::Files];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(text: &str) -> Option<Phases> {
        Self::ALL.into_iter().find(|p| p.name() == text)
    }

    pub fn io(self) -> bool {
        self != Phases::Files
    }

    pub fn files(self) -> bool {
        self != Phases::Io
    }
}

/// A bonnie run as the user asked for it, before validation.
#[derive(Debug, Clone, Serialize)]
pub struct BonnieSpec {
    pub dir: PathBuf,
    pub seed: u64,
    /// The test file; `None`: twice the machine's memory, bonnie++'s rule.
    pub size: Option<u64>,
    pub chunk_size: u64,
    /// Bytes moved one at a time by the per-char phases; 0 skips them.
    pub char_size: u64,
    /// Files of the create/stat/delete phases, in units of 1024; 0 skips them.
    pub files: u32,
    pub max_file_size: u64,
    pub min_file_size: u64,
    pub dirs: u32,
    pub file_chunk_size: u64,
    pub seekers: u32,
    pub seeks: u32,
    pub phases: Phases,
    /// bonnie++'s `-b`: sync each seek's rewrite and each created or deleted file.
    pub sync: bool,
    /// O_DIRECT on every open of the test file (bonnie++'s `-D` sets it on the creating
    /// opens only).
    pub direct: bool,
}

/// One option of the bonnie kind (`iolab bonnie`, `bonnie = { … }`).
pub type BonnieOption = OptionDef<BonnieSpec>;

/// Every option, in the order help and docs list them. `dir` and `seed` are not here: the
/// runner sets them (`--dir`/`--seed`, or the experiment's target and seed).
pub const OPTIONS: &[BonnieOption] = &[
    OptionDef {
        name: "size",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: None,
        aliases: &[],
        help: "Size of the test file (bonnie++ -s) [default: twice the memory, bonnie++'s rule]",
        original: "",
        apply: |s, v| s.size = Some(v.bytes()),
        get: |s| s.size.map(OptionValue::Bytes),
    },
    OptionDef {
        name: "chunk_size",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: Some("8k"),
        aliases: &[],
        help: "Bytes per block read or write, and per timed chunk of the per-char phases",
        original: "",
        apply: |s, v| s.chunk_size = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.chunk_size)),
    },
    OptionDef {
        name: "char_size",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: Some("3m"),
        aliases: &[],
        help: "Bytes the per-char phases write and read one at a time (bonnie++ -f); 0 skips them",
        original: "",
        apply: |s, v| s.char_size = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.char_size)),
    },
    OptionDef {
        name: "seekers",
        value_name: "N",
        kind: OptionKind::Count { min: 1, max: 1024 },
        default: Some("5"),
        aliases: &[],
        help: "Concurrent seekers sharing the seeks, each with its own descriptor",
        original: "",
        apply: |s, v| s.seekers = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.seekers))),
    },
    OptionDef {
        name: "seeks",
        value_name: "N",
        kind: OptionKind::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        default: Some("8192"),
        aliases: &[],
        help: "Random seeks in all (an lseek and a chunk read each; one in ten also rewrites it)",
        original: "",
        apply: |s, v| s.seeks = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.seeks))),
    },
    OptionDef {
        name: "files",
        value_name: "N",
        kind: OptionKind::Count {
            min: 0,
            max: MAX_FILES_K as u64,
        },
        default: Some("16"),
        aliases: &[],
        help: "Files of the create/stat/delete phases, in units of 1024 (bonnie++ -n); 0 skips them",
        original: "",
        apply: |s, v| s.files = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.files))),
    },
    OptionDef {
        name: "max_file_size",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: Some("0"),
        aliases: &[],
        help: "Largest size of those files (0: empty files)",
        original: "",
        apply: |s, v| s.max_file_size = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.max_file_size)),
    },
    OptionDef {
        name: "min_file_size",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: Some("0"),
        aliases: &[],
        help: "Smallest size of those files (sizes are drawn uniformly between the two)",
        original: "",
        apply: |s, v| s.min_file_size = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.min_file_size)),
    },
    OptionDef {
        name: "dirs",
        value_name: "N",
        kind: OptionKind::Count {
            min: 1,
            max: MAX_DIRS as u64,
        },
        default: Some("1"),
        aliases: &[],
        help: "Directories the files are spread over",
        original: "",
        apply: |s, v| s.dirs = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.dirs))),
    },
    OptionDef {
        name: "file_chunk_size",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: Some("8k"),
        aliases: &[],
        help: "Bytes per write and read of those files' data",
        original: "",
        apply: |s, v| s.file_chunk_size = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.file_chunk_size)),
    },
    OptionDef {
        name: "phases",
        value_name: "PHASES",
        kind: OptionKind::Choice(&Phases::NAMES),
        default: Some("all"),
        aliases: &[],
        help: "Which phases run (io: the file I/O phases only, bonnie++ -n 0; files: create/stat/delete only, -s 0)",
        original: "",
        apply: |s, v| s.phases = Phases::parse(v.name()).unwrap_or(s.phases),
        get: |s| Some(OptionValue::Name(s.phases.name())),
    },
    OptionDef {
        name: "sync",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: Some("false"),
        aliases: &[],
        help: "No write buffering: fsync each rewrite of the seeks phase, each created file \
               and its directory, and the directory after each delete (the sequential phases \
               are unchanged, as in bonnie++ 2.00a)",
        original: "-b",
        apply: |s, v| s.sync = v.flag(),
        get: |s| Some(OptionValue::Flag(s.sync)),
    },
    OptionDef {
        name: "direct",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: Some("false"),
        aliases: &[],
        help: "O_DIRECT on every open of the test file: block write, rewrite, block read and \
               seeks bypass the page cache (bonnie++ -D sets it only when creating the file); \
               needs --char-size 0 and a --chunk-size in 512-byte units",
        original: "-D",
        apply: |s, v| s.direct = v.flag(),
        get: |s| Some(OptionValue::Flag(s.direct)),
    },
];

/// The option called `name`.
pub fn option(name: &str) -> Option<&'static BonnieOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// Why a spec cannot run. Each message names the option ([`Worded`]: a flag on the command
/// line, a key in an experiment file) and says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BonnieSpecError {
    #[error("{}", self.phrase())]
    ZeroChunk,
    #[error("{}", self.phrase())]
    HugeChunk(u64),
    #[error("{}", self.phrase())]
    ZeroFileChunk,
    #[error("{}", self.phrase())]
    HugeFileChunk(u64),
    #[error("{}", self.phrase())]
    ZeroSize { chunk: u64 },
    #[error("{}", self.phrase())]
    SizeNotMultiple { size: u64, chunk: u64, suggest: u64 },
    #[error("{}", self.phrase())]
    CharSizeNotMultiple {
        char_size: u64,
        chunk: u64,
        suggest: u64,
    },
    #[error("{}", self.phrase())]
    CharSizeAboveSize { char_size: u64, size: u64 },
    #[error("{}", self.phrase())]
    MinAboveMax { min: u64, max: u64 },
    #[error("{}", self.phrase())]
    HugeFiles(u64),
    #[error("{}", self.phrase())]
    NoFiles,
    #[error("{}", self.phrase())]
    DirsAboveFiles { dirs: u32, files: u64 },
    #[error("{}", self.phrase())]
    UnknownMemory,
    #[error("{}", self.phrase())]
    DirectPerChar,
    #[error("{}", self.phrase())]
    DirectUnaligned { chunk: u64, suggest: u64 },
    #[error("{}", self.phrase())]
    DirectWithoutIo,
}

impl Worded for BonnieSpecError {
    fn phrase(&self) -> Phrase {
        match self {
            BonnieSpecError::ZeroChunk => phrase!(
                "{} must be at least 1 byte",
                opt("chunk_size"),
            ),
            BonnieSpecError::HugeChunk(n) => phrase!(
                "{} {} is larger than 1 GiB: chunks are held in memory, use a smaller one",
                opt("chunk_size"),
                n,
            ),
            BonnieSpecError::ZeroFileChunk => phrase!(
                "{} must be at least 1 byte",
                opt("file_chunk_size"),
            ),
            BonnieSpecError::HugeFileChunk(n) => phrase!(
                "{} {} is larger than 1 GiB: use a smaller one",
                opt("file_chunk_size"),
                n,
            ),
            BonnieSpecError::ZeroSize { chunk, .. } => phrase!(
                "{} must be at least one chunk ({} {})",
                opt("size"),
                opt("chunk_size"),
                chunk,
            ),
            BonnieSpecError::SizeNotMultiple { size, chunk, suggest, .. } => phrase!(
                "{} {} is not a multiple of {} {}: the phases move whole chunks (try {} {})",
                opt("size"),
                size,
                opt("chunk_size"),
                chunk,
                opt("size"),
                suggest,
            ),
            BonnieSpecError::CharSizeNotMultiple { char_size, chunk, suggest, .. } => phrase!(
                "{} {} is not a multiple of {} {}: the per-char phases are timed a chunk at a time (try {} {})",
                opt("char_size"),
                char_size,
                opt("chunk_size"),
                chunk,
                opt("char_size"),
                suggest,
            ),
            BonnieSpecError::CharSizeAboveSize { char_size, size, .. } => phrase!(
                "{} {} is larger than {} {}: the per-char phases write and read the test file",
                opt("char_size"),
                char_size,
                opt("size"),
                size,
            ),
            BonnieSpecError::MinAboveMax { min, max, .. } => phrase!(
                "{} {} is larger than {} {}",
                opt("min_file_size"),
                min,
                opt("max_file_size"),
                max,
            ),
            BonnieSpecError::HugeFiles(n) => phrase!(
                "{} {} is larger than 1 GiB: use smaller files or fewer of them",
                opt("max_file_size"),
                n,
            ),
            BonnieSpecError::NoFiles => phrase!(
                "{} 0 with {} files runs nothing: give {}, or {} all",
                opt("files"),
                opt("phases"),
                opt("files"),
                opt("phases"),
            ),
            BonnieSpecError::DirsAboveFiles { dirs, files, .. } => phrase!(
                "{} {} is more than the {} files: every directory needs a file",
                opt("dirs"),
                dirs,
                files,
            ),
            BonnieSpecError::UnknownMemory => phrase!(
                "cannot tell the machine's memory for the default {} (twice the memory): give {}",
                opt("size"),
                opt("size"),
            ),
            BonnieSpecError::DirectPerChar => phrase!(
                "{} needs {} 0: the per-char phases move one byte per call, which O_DIRECT refuses on a block device's filesystem (bonnie++ -D fails there with \"Can't write() - disk full?\"; bonnie++ -f is {} 0)",
                opt("direct"),
                opt("char_size"),
                opt("char_size"),
            ),
            BonnieSpecError::DirectUnaligned { chunk, suggest, .. } => phrase!(
                "{} needs {} to be a multiple of 512 bytes, not {} (O_DIRECT moves whole device blocks; try {} {})",
                opt("direct"),
                opt("chunk_size"),
                chunk,
                opt("chunk_size"),
                suggest,
            ),
            BonnieSpecError::DirectWithoutIo => phrase!(
                "{} with {} files does nothing: O_DIRECT applies to the I/O phases' test file, not to the create/stat/delete files (bonnie++ -D neither); drop {} or run {} all",
                opt("direct"),
                opt("phases"),
                opt("direct"),
                opt("phases"),
            ),
        }
    }
}

/// A validated bonnie run: everything the engine needs.
#[derive(Debug, Clone, Serialize)]
pub struct BonniePlan {
    pub dir: PathBuf,
    pub seed: u64,
    /// The test file's size (0 when the I/O phases do not run).
    pub size: u64,
    /// Whether `size` came from bonnie++'s rule (twice the memory) rather than the user.
    pub size_from_memory: bool,
    pub chunk_size: u64,
    /// 0 when the per-char phases do not run.
    pub char_size: u64,
    /// Files of the file phases (units × 1024; 0 when they do not run).
    pub files: u64,
    /// The same in bonnie++'s units of 1024.
    pub files_k: u32,
    pub max_file_size: u64,
    pub min_file_size: u64,
    pub dirs: u32,
    pub file_chunk_size: u64,
    pub seekers: u32,
    pub seeks: u32,
    pub phases: Phases,
    /// bonnie++'s `-b` ("no write buffering"): an `fsync` after each rewrite of the seeks
    /// phase; in the create phases an `fsync` of the file and of its directory before its
    /// `close`; in the delete phases an `fsync` of the directory after each `unlink`.
    pub sync: bool,
    /// O_DIRECT on every open of the test file: the block phases and the seeks bypass the
    /// page cache (bonnie++'s `-D` sets it on the creating opens only, so its rewrite, reads
    /// and seeks are cached). The file phases are unaffected, as in bonnie++.
    pub direct: bool,
}

/// The multiple of `unit` to suggest for `size`: the next one up, never 0.
fn next_multiple(size: u64, unit: u64) -> u64 {
    size.div_ceil(unit)
        .checked_mul(unit)
        .unwrap_or(size / unit * unit)
        .max(unit)
}

/// The machine's memory (bonnie++ asks sysconf the same way).
fn memory_bytes() -> Option<u64> {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages > 0 && page > 0).then(|| pages as u64 * page as u64)
}

impl BonnieSpec {
    /// The defaults of [`OPTIONS`], in `dir` with `seed`.
    pub fn with_defaults(dir: PathBuf, seed: u64) -> BonnieSpec {
        let mut spec = BonnieSpec {
            dir,
            seed,
            size: None,
            chunk_size: 0,
            char_size: 0,
            files: 0,
            max_file_size: 0,
            min_file_size: 0,
            dirs: 0,
            file_chunk_size: 0,
            seekers: 0,
            seeks: 0,
            phases: Phases::All,
            sync: false,
            direct: false,
        };
        for o in OPTIONS {
            if let Some(v) = o.default.and_then(|d| o.parse(d).ok()) {
                o.apply(&mut spec, v);
            }
        }
        spec
    }

    /// The test file's size: the one given, or twice the memory.
    fn resolved_size(&self) -> Result<(u64, bool), BonnieSpecError> {
        match self.size {
            Some(s) => Ok((s, false)),
            None => {
                let mem = memory_bytes().ok_or(BonnieSpecError::UnknownMemory)?;
                // Whole chunks, rounded up.
                Ok((next_multiple(mem.saturating_mul(2), self.chunk_size), true))
            }
        }
    }

    /// Checks everything that can be checked without touching the filesystem.
    pub fn validate(&self) -> Result<BonniePlan, BonnieSpecError> {
        const GIB: u64 = 1 << 30;
        use BonnieSpecError as E;
        if self.chunk_size == 0 {
            return Err(E::ZeroChunk);
        }
        if self.chunk_size > GIB {
            return Err(E::HugeChunk(self.chunk_size));
        }
        let (mut size, size_from_memory) = (0, self.size.is_none());
        let mut char_size = 0;
        if self.phases.io() {
            size = self.resolved_size()?.0;
            if size == 0 {
                return Err(E::ZeroSize {
                    chunk: self.chunk_size,
                });
            }
            if !size.is_multiple_of(self.chunk_size) {
                return Err(E::SizeNotMultiple {
                    size,
                    chunk: self.chunk_size,
                    suggest: next_multiple(size, self.chunk_size),
                });
            }
            char_size = self.char_size;
            if !char_size.is_multiple_of(self.chunk_size) {
                return Err(E::CharSizeNotMultiple {
                    char_size,
                    chunk: self.chunk_size,
                    suggest: next_multiple(char_size, self.chunk_size),
                });
            }
            if char_size > size {
                return Err(E::CharSizeAboveSize { char_size, size });
            }
            if self.direct && char_size > 0 {
                return Err(E::DirectPerChar);
            }
            if self.direct && !self.chunk_size.is_multiple_of(512) {
                // The next multiple of 512 that still divides the file, else 4 KiB or 512.
                let up = next_multiple(self.chunk_size, 512);
                let suggest = [up, 4096, 512]
                    .into_iter()
                    .find(|c| size.is_multiple_of(*c))
                    .unwrap_or(512);
                return Err(E::DirectUnaligned {
                    chunk: self.chunk_size,
                    suggest,
                });
            }
        }
        if self.direct && !self.phases.io() {
            return Err(E::DirectWithoutIo);
        }
        let mut files = 0;
        if self.phases.files() {
            if self.files == 0 && self.phases == Phases::Files {
                return Err(E::NoFiles);
            }
            files = u64::from(self.files) * 1024;
            if self.file_chunk_size == 0 {
                return Err(E::ZeroFileChunk);
            }
            if self.file_chunk_size > GIB {
                return Err(E::HugeFileChunk(self.file_chunk_size));
            }
            if self.min_file_size > self.max_file_size {
                return Err(E::MinAboveMax {
                    min: self.min_file_size,
                    max: self.max_file_size,
                });
            }
            if self.max_file_size > GIB {
                return Err(E::HugeFiles(self.max_file_size));
            }
            if files > 0 && u64::from(self.dirs) > files {
                return Err(E::DirsAboveFiles {
                    dirs: self.dirs,
                    files,
                });
            }
        }
        Ok(BonniePlan {
            dir: self.dir.clone(),
            seed: self.seed,
            size,
            size_from_memory: size_from_memory && size > 0,
            chunk_size: self.chunk_size,
            char_size,
            files,
            files_k: if files > 0 { self.files } else { 0 },
            max_file_size: self.max_file_size,
            min_file_size: self.min_file_size,
            dirs: self.dirs,
            file_chunk_size: self.file_chunk_size,
            seekers: self.seekers,
            seeks: self.seeks,
            phases: self.phases,
            sync: self.sync,
            direct: self.direct,
        })
    }
}

impl BonniePlan {
    /// Whether `phase` runs.
    pub fn runs(&self, phase: Phase) -> bool {
        match phase {
            Phase::Putc | Phase::Getc => self.char_size > 0,
            Phase::PutBlock | Phase::Rewrite | Phase::GetBlock | Phase::Seeks => self.size > 0,
            _ => self.files > 0,
        }
    }

    /// The phases that run, in order.
    pub fn phases(&self) -> impl Iterator<Item = Phase> + '_ {
        Phase::ALL.into_iter().filter(|&p| self.runs(p))
    }

    /// Chunks of the test file.
    pub fn chunks(&self) -> u64 {
        self.size / self.chunk_size
    }

    /// Chunks the per-char phases move.
    pub fn char_chunks(&self) -> u64 {
        self.char_size / self.chunk_size
    }

    /// Timed operations of `phase` (chunks, seeks or files).
    pub fn ops(&self, phase: Phase) -> u64 {
        if !self.runs(phase) {
            return 0;
        }
        match phase {
            Phase::Putc | Phase::Getc => self.char_chunks(),
            Phase::PutBlock | Phase::Rewrite | Phase::GetBlock => self.chunks(),
            Phase::Seeks => u64::from(self.seeks),
            _ => self.files,
        }
    }

    /// Timed operations of the whole run.
    pub fn planned_ops(&self) -> u64 {
        Phase::ALL.iter().map(|&p| self.ops(p)).sum()
    }

    /// The most bytes the run keeps on the filesystem at once: the test file, or the files
    /// of the file phases at their largest (the test file is removed before they start).
    pub fn dataset_bytes(&self) -> u64 {
        self.size.max(self.files.saturating_mul(self.max_file_size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> BonnieSpec {
        let mut s = BonnieSpec::with_defaults(PathBuf::from("/tmp"), 1);
        s.size = Some(64 << 20);
        s
    }

    #[test]
    fn defaults_are_bonnies() {
        let s = BonnieSpec::with_defaults(PathBuf::from("/d"), 3);
        assert_eq!(s.size, None);
        assert_eq!((s.chunk_size, s.char_size), (8192, 3 << 20));
        assert_eq!(
            (s.files, s.max_file_size, s.min_file_size, s.dirs),
            (16, 0, 0, 1)
        );
        assert_eq!((s.seekers, s.seeks), (5, 8192));
        assert_eq!(s.phases, Phases::All);
        for o in OPTIONS {
            if let Some(d) = o.default {
                assert!(o.parse(d).is_ok(), "{}: {d}", o.name);
            }
        }
        let p = spec().validate().unwrap();
        assert_eq!(p.files, 16 * 1024);
        assert_eq!(p.chunks(), 8192);
        assert_eq!(p.char_chunks(), 384);
        assert_eq!(p.phases().count(), 12);
        assert_eq!(p.planned_ops(), 2 * 384 + 3 * 8192 + 8192 + 6 * 16 * 1024);
    }

    #[test]
    fn the_default_size_is_twice_the_memory() {
        let mut s = spec();
        s.size = None;
        let p = s.validate().unwrap();
        assert!(p.size_from_memory);
        assert!(p.size >= 2 * memory_bytes().unwrap());
        assert!(p.size.is_multiple_of(8192));
    }

    #[test]
    fn bad_values_are_refused_with_a_suggestion() {
        use BonnieSpecError as E;
        let mut s = spec();
        s.size = Some(10_000);
        assert_eq!(
            s.validate().unwrap_err(),
            E::SizeNotMultiple {
                size: 10_000,
                chunk: 8192,
                suggest: 16384
            }
        );
        let mut s = spec();
        s.char_size = 5000;
        assert!(matches!(
            s.validate(),
            Err(E::CharSizeNotMultiple { suggest: 8192, .. })
        ));
        let mut s = spec();
        s.char_size = 128 << 20;
        assert!(matches!(s.validate(), Err(E::CharSizeAboveSize { .. })));
        let mut s = spec();
        s.direct = true;
        assert_eq!(s.validate().unwrap_err(), E::DirectPerChar);
        s.char_size = 0;
        assert!(s.validate().unwrap().direct);
        s.chunk_size = 1000;
        // 64 chunks: 1024 does not divide the file, 4096 does not either, 512 does; 1024
        // chunks: 1024 does.
        for (chunks, suggest) in [(64, 512), (1024, 1024)] {
            s.size = Some(1000 * chunks);
            let want = E::DirectUnaligned {
                chunk: 1000,
                suggest,
            };
            assert_eq!(s.validate().unwrap_err(), want);
        }
        let mut s = spec();
        s.direct = true;
        s.phases = Phases::Files;
        assert_eq!(s.validate().unwrap_err(), E::DirectWithoutIo);
        let mut s = spec();
        s.min_file_size = 10;
        assert!(matches!(s.validate(), Err(E::MinAboveMax { .. })));
        let mut s = spec();
        s.chunk_size = 0;
        assert_eq!(s.validate().unwrap_err(), E::ZeroChunk);
        let mut s = spec();
        s.size = Some(0);
        assert!(matches!(s.validate(), Err(E::ZeroSize { .. })));
        let mut s = spec();
        s.files = 0;
        s.phases = Phases::Files;
        assert_eq!(s.validate().unwrap_err(), E::NoFiles);
        let mut s = spec();
        s.files = 1;
        s.dirs = 2000;
        assert!(matches!(s.validate(), Err(E::DirsAboveFiles { .. })));
        // The file phases' settings do not matter when they do not run, nor the I/O
        // phases' when those do not.
        let mut s = spec();
        s.phases = Phases::Io;
        s.min_file_size = 10;
        let p = s.validate().unwrap();
        assert_eq!(p.files, 0);
        assert!(!p.runs(Phase::SeqCreate) && p.runs(Phase::Seeks));
        let mut s = spec();
        s.phases = Phases::Files;
        s.size = Some(10_000);
        let p = s.validate().unwrap();
        assert_eq!((p.size, p.char_size), (0, 0));
        assert_eq!(p.phases().next(), Some(Phase::SeqCreate));
        // Per-char phases skipped with a char_size of 0.
        let mut s = spec();
        s.char_size = 0;
        let p = s.validate().unwrap();
        assert!(!p.runs(Phase::Putc) && !p.runs(Phase::Getc) && p.runs(Phase::PutBlock));
    }

    #[test]
    fn values_parse_from_the_table() {
        let mut s = spec();
        for (name, text) in [("chunk_size", "4k"), ("seekers", "3"), ("phases", "io")] {
            let o = option(name).unwrap();
            o.apply(&mut s, o.parse(text).unwrap());
        }
        assert_eq!((s.chunk_size, s.seekers, s.phases), (4096, 3, Phases::Io));
        let err = |n: &str, t: &str| option(n).unwrap().parse(t).unwrap_err();
        assert_eq!(err("seekers", "0"), "must be between 1 and 1024");
        assert!(err("phases", "some").starts_with("expected one of all, io, files"));
        assert_eq!(option("char_size").unwrap().flag(), "char-size");
    }
}
