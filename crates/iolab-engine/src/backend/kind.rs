//! What a workload asks of the backends, by name: which backend ([`EngineKind`], its
//! capabilities [`EngineCaps`]), how many requests in flight ([`check_iodepth`]), the flags a
//! file is opened with ([`OpenFlags`]) and the syncs after a record and at the end of a pass
//! ([`RecordSync`], [`FinalSync`]). Every kind's `engine` and `iodepth` options read their
//! values as [`parse_engine`] and [`parse_iodepth`] do.

use std::fmt;

use iolab_util::option::{OptionKind, OptionValue};
use serde::{Deserialize, Serialize};

/// The I/O backend that issues a workload's requests.
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
    /// see it) and implemented in its own file under `backend/`. Everything else asks these
    /// flags, never an engine's name.
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
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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

/// Flags added to `open(2)` for durability or to bypass the page cache.
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

use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Worded};

/// The deepest queue an engine keeps per thread.
pub const MAX_IODEPTH: u32 = 4096;

/// Why an iodepth cannot be used. Each message says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DepthError {
    #[error("{}", self.phrase())]
    OutOfRange(u32),
    #[error("{}", self.phrase())]
    NotQueued { iodepth: u32, engine: EngineKind },
}

impl Worded for DepthError {
    fn phrase(&self) -> Phrase {
        match self {
            DepthError::OutOfRange(d) => {
                phrase!("{} must be between 1 and 4096, not {}", opt("iodepth"), d)
            }
            DepthError::NotQueued { iodepth, engine } => phrase!(
                "{} {} needs {} io_uring: the {} engine issues one request at a time",
                opt("iodepth"),
                iodepth,
                opt("engine"),
                engine
            ),
        }
    }
}

/// An iodepth must be in 1..=[`MAX_IODEPTH`], and above 1 only on an engine that can queue.
pub fn check_iodepth(iodepth: u32, engine: EngineKind) -> Result<(), DepthError> {
    if !(1..=MAX_IODEPTH).contains(&iodepth) {
        return Err(DepthError::OutOfRange(iodepth));
    }
    if iodepth > 1 && !engine.caps().queued {
        return Err(DepthError::NotQueued { iodepth, engine });
    }
    Ok(())
}

/// How every `engine` option is written: an engine's name, or one of
/// [`EngineKind::ALIASES`].
pub const ENGINE_VALUE: OptionKind = OptionKind::Choice(&EngineKind::NAMES);

/// How every `iodepth` option is written: a whole number from 1 to [`MAX_IODEPTH`].
pub const IODEPTH_VALUE: OptionKind = OptionKind::Count {
    min: 1,
    max: MAX_IODEPTH as u64,
};

/// An `engine` option's value, as every such option takes it (the messages are the option
/// table's).
pub fn parse_engine(text: &str) -> Result<EngineKind, String> {
    match ENGINE_VALUE.parse(text, EngineKind::ALIASES)? {
        OptionValue::Name(n) => EngineKind::parse(n).ok_or_else(|| format!("no engine `{n}`")),
        _ => Err(format!("`{text}` is not an engine")),
    }
}

/// An `iodepth` option's value, as every such option takes it.
pub fn parse_iodepth(text: &str) -> Result<u32, String> {
    match IODEPTH_VALUE.parse(text, &[])? {
        OptionValue::Count(n) => u32::try_from(n).map_err(|e| e.to_string()),
        _ => Err(format!("`{text}` is not a depth")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for e in EngineKind::ALL {
            assert_eq!(EngineKind::parse(e.name()), Some(e));
            assert_eq!(parse_engine(e.name()), Ok(e));
        }
        assert_eq!(parse_engine("uring"), Ok(EngineKind::IoUring));
        assert!(parse_engine("aio")
            .unwrap_err()
            .starts_with("expected one of psync"));
    }

    #[test]
    fn depths_parse_as_every_iodepth_option_takes_them() {
        assert_eq!(parse_iodepth("32"), Ok(32));
        assert_eq!(
            parse_iodepth("0").unwrap_err(),
            "must be between 1 and 4096"
        );
        assert_eq!(
            check_iodepth(MAX_IODEPTH + 1, EngineKind::IoUring),
            Err(DepthError::OutOfRange(MAX_IODEPTH + 1))
        );
    }
}
