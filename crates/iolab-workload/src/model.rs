//! The general workload model: filesets, processes of threads of flowops, and how a run ends.
//!
//! Front ends (WML files today) lower into these types; the engine runs them. Every value is
//! resolved: numbers are numbers, random variables are [`Rv`]s sampled by the engine from the
//! run seed, names are indices. Nothing here refers back to source text except for messages.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::rv::Rv;

/// A whole workload, ready to run.
#[derive(Debug, Clone, Serialize)]
pub struct Workload {
    /// Where it came from (a file name), for messages and results.
    pub source: String,
    pub filesets: Vec<FilesetSpec>,
    pub processes: Vec<ProcessSpec>,
    pub run: RunSpec,
    /// Events per second of the global event generator that eventlimit/iopslimit/opslimit/
    /// bwlimit consume; `None` when the workload defines none (those flowops then do not wait).
    pub event_rate: Option<u64>,
    /// What the master does before the run starts, in order (echo/system/sleep lines that
    /// precede `run`).
    pub prelude: Vec<MasterAction>,
    /// filebench's `enable lathist`: its result lines end with each flowop's latency
    /// histogram. iolab keeps full histograms anyway; this only shapes filebench's format.
    pub lathist: bool,
}

/// When and how a run ends.
#[derive(Debug, Clone, Serialize)]
pub struct RunSpec {
    /// How long to run; `None` when the file has no `run` (the user must give `--time`).
    pub duration: Option<Duration>,
    pub quit: QuitMode,
    /// `psrun`: print statistics every period; `reset` = interval (negative period) stats.
    pub report_every: Option<(Duration, bool)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QuitMode {
    /// After the run time.
    Timeout,
    /// When every thread has finished (finishon*), or at the run time.
    AllDone,
    /// When the first thread finishes, or at the run time.
    FirstDone,
}

#[derive(Debug, Clone, Serialize)]
pub enum MasterAction {
    /// `create files`: populate the filesets now rather than at the start of the run.
    CreateFiles,
    Echo(String),
    System(String),
    Sleep(Duration),
}

/// A set of files (and leaf directories) under `path/name/`.
#[derive(Debug, Clone, Serialize)]
pub struct FilesetSpec {
    pub name: String,
    /// The parent directory; files live in `path/name/…`.
    pub path: PathBuf,
    pub entries: u64,
    /// Empty leaf directories, for makedir/removedir/listdir.
    pub leafdirs: u64,
    /// Bytes per file, sampled once per file at population.
    pub size: Rv,
    /// Entries per directory: a constant is the mean of a gamma-distributed width (see
    /// `dirgamma`); a random variable is drawn once per directory instead, as filebench does.
    pub dirwidth: Rv,
    /// Gamma shape ×1000 for the tree's width and depth (0 = fixed width).
    pub dirgamma: u32,
    /// Depth as a random variable, overriding dirwidth/dirgamma's depth.
    pub dirdepth: Option<Rv>,
    /// Percent of entries created (and filled) before the run.
    pub prealloc_pct: u8,
    /// Populate with several threads.
    pub paralloc: bool,
    /// Keep an existing tree, resizing files that are wrong.
    pub reuse: bool,
    /// With reuse: trust the existing tree without checking each file.
    pub trusttree: bool,
    pub readonly: bool,
    pub writeonly: bool,
    /// `define file`: one entry directly at `path/name`, no directory tree.
    pub single_file: bool,
}

/// A WML process: `instances` copies of its threads (iolab runs them as thread groups).
#[derive(Debug, Clone, Serialize)]
pub struct ProcessSpec {
    pub name: String,
    pub instances: u32,
    pub nice: i32,
    pub threads: Vec<ThreadSpec>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ThreadSpec {
    pub name: String,
    pub instances: u32,
    /// Per-thread buffer size (allocated lazily).
    pub memsize: u64,
    /// I/O priority class best-effort level 0–7, if set.
    pub ioprio: Option<u8>,
    /// Executed in order, in a loop, until the run ends or the thread finishes.
    pub flowops: Vec<FlowopSpec>,
}

/// One step of a thread's loop.
#[derive(Debug, Clone, Serialize)]
pub struct FlowopSpec {
    pub kind: FlowopKind,
    /// The statistics key: flowops with the same name in several threads are merged.
    pub name: String,
    /// Index into [`Workload::filesets`].
    pub fileset: Option<usize>,
    /// File descriptor slot 0–127; `None` = the shared slot 0 of filebench.
    pub fd: Option<u8>,
    /// Source slot for writewholefile.
    pub srcfd: Option<u8>,
    /// Bytes per I/O, sampled per op (0 = whole file where that means something).
    pub iosize: Rv,
    /// Bytes of the file that random offsets may fall in (0 = the whole file).
    pub workingset: Rv,
    pub random: bool,
    /// O_SYNC on open.
    pub dsync: bool,
    /// O_DIRECT on open.
    pub directio: bool,
    /// fadvise(RANDOM) on open.
    pub noreadahead: bool,
    /// Pick files with a per-thread rotor instead of the fileset's shared one.
    pub opennext: bool,
    /// Pick the entry with this random variable instead of round-robin.
    pub indexed: Option<Rv>,
    /// Repeat the flowop this many times per loop.
    pub iters: u32,
    /// The flowop's numeric argument (hog iterations, delay seconds, limits, counts…).
    pub value: Rv,
    /// Another flowop, by name: the block/semblock a wakeup/sempost signals, or the flowop
    /// whose count or bytes a limit or finishon* watches (`None` = all data flowops).
    pub target: Option<FlowopRef>,
    pub blocking: bool,
    pub highwater: u64,
    /// Where the workload defines it (`FILE:LINE:COL`), for errors during the run.
    #[serde(skip)]
    pub at: Option<String>,
}

/// A reference to a flowop by the name it has in statistics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlowopRef(pub String);

#[derive(Debug, Clone, Serialize)]
pub enum FlowopKind {
    Read,
    Write,
    AppendFile,
    AppendFileRand,
    ReadWholeFile,
    WriteWholeFile,
    CreateFile,
    OpenFile,
    CloseFile,
    DeleteFile,
    StatFile,
    Fsync,
    FsyncSet,
    MakeDir,
    RemoveDir,
    ListDir,
    AioWrite,
    AioWait,
    Block,
    Wakeup,
    SemBlock,
    SemPost,
    Hog,
    Delay,
    EventLimit,
    IopsLimit,
    OpsLimit,
    BwLimit,
    FinishOnCount,
    FinishOnBytes,
    Print(String),
    TestRandVar,
    /// A composite flowop: its steps run in order, `iters` times, and it is counted as one op.
    Composite(Vec<FlowopSpec>),
}

impl FlowopKind {
    /// Every built-in flowop, in the order of filebench's `flowop_library.c` followed by
    /// `fb_localfs.c`'s asynchronous ones; `print` with an empty text. A composite flowop is
    /// the workload's own, so it is not here. This is the one list of flowop names: the WML
    /// front end, the engine's statistics and the reports all read it.
    pub const ALL: [FlowopKind; 32] = [
        FlowopKind::Read,
        FlowopKind::Write,
        FlowopKind::AppendFile,
        FlowopKind::AppendFileRand,
        FlowopKind::ReadWholeFile,
        FlowopKind::WriteWholeFile,
        FlowopKind::CreateFile,
        FlowopKind::OpenFile,
        FlowopKind::CloseFile,
        FlowopKind::DeleteFile,
        FlowopKind::StatFile,
        FlowopKind::Fsync,
        FlowopKind::FsyncSet,
        FlowopKind::MakeDir,
        FlowopKind::RemoveDir,
        FlowopKind::ListDir,
        FlowopKind::AioWrite,
        FlowopKind::AioWait,
        FlowopKind::Block,
        FlowopKind::Wakeup,
        FlowopKind::SemBlock,
        FlowopKind::SemPost,
        FlowopKind::Hog,
        FlowopKind::Delay,
        FlowopKind::EventLimit,
        FlowopKind::IopsLimit,
        FlowopKind::OpsLimit,
        FlowopKind::BwLimit,
        FlowopKind::FinishOnCount,
        FlowopKind::FinishOnBytes,
        FlowopKind::Print(String::new()),
        FlowopKind::TestRandVar,
    ];

    /// The name a WML file writes the flowop with, which statistics report as its kind;
    /// `composite` for a composite flowop.
    pub fn name(&self) -> &'static str {
        match self {
            FlowopKind::Read => "read",
            FlowopKind::Write => "write",
            FlowopKind::AppendFile => "appendfile",
            FlowopKind::AppendFileRand => "appendfilerand",
            FlowopKind::ReadWholeFile => "readwholefile",
            FlowopKind::WriteWholeFile => "writewholefile",
            FlowopKind::CreateFile => "createfile",
            FlowopKind::OpenFile => "openfile",
            FlowopKind::CloseFile => "closefile",
            FlowopKind::DeleteFile => "deletefile",
            FlowopKind::StatFile => "statfile",
            FlowopKind::Fsync => "fsync",
            FlowopKind::FsyncSet => "fsyncset",
            FlowopKind::MakeDir => "makedir",
            FlowopKind::RemoveDir => "removedir",
            FlowopKind::ListDir => "listdir",
            FlowopKind::AioWrite => "aiowrite",
            FlowopKind::AioWait => "aiowait",
            FlowopKind::Block => "block",
            FlowopKind::Wakeup => "wakeup",
            FlowopKind::SemBlock => "semblock",
            FlowopKind::SemPost => "sempost",
            FlowopKind::Hog => "hog",
            FlowopKind::Delay => "delay",
            FlowopKind::EventLimit => "eventlimit",
            FlowopKind::IopsLimit => "iopslimit",
            FlowopKind::OpsLimit => "opslimit",
            FlowopKind::BwLimit => "bwlimit",
            FlowopKind::FinishOnCount => "finishoncount",
            FlowopKind::FinishOnBytes => "finishonbytes",
            FlowopKind::Print(_) => "print",
            FlowopKind::TestRandVar => "testrandvar",
            FlowopKind::Composite(_) => "composite",
        }
    }

    /// The built-in flowop called `name` (`print` with an empty text), or `None`.
    pub fn parse(name: &str) -> Option<FlowopKind> {
        FlowopKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The names of [`FlowopKind::ALL`], in that order.
    pub fn names() -> impl Iterator<Item = &'static str> {
        FlowopKind::ALL.into_iter().map(|k| k.name())
    }

    /// Flowops that move file data (the denominators of filebench's summary and of
    /// finishoncount/finishonbytes without a target).
    pub fn is_io(&self) -> bool {
        matches!(
            self,
            FlowopKind::Read
                | FlowopKind::Write
                | FlowopKind::AppendFile
                | FlowopKind::AppendFileRand
                | FlowopKind::ReadWholeFile
                | FlowopKind::WriteWholeFile
                | FlowopKind::AioWrite
        )
    }

    /// Whether the flowop reads data (filebench's "rd" count).
    pub fn is_read(&self) -> bool {
        matches!(self, FlowopKind::Read | FlowopKind::ReadWholeFile)
    }

    /// Whether the flowop writes data (filebench's "wr" count).
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            FlowopKind::Write
                | FlowopKind::AppendFile
                | FlowopKind::AppendFileRand
                | FlowopKind::WriteWholeFile
                | FlowopKind::AioWrite
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flowop_name_is_distinct_and_parses_back() {
        let mut names: Vec<&str> = FlowopKind::names().collect();
        for n in &names {
            assert_eq!(FlowopKind::parse(n).map(|k| k.name()), Some(*n));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FlowopKind::ALL.len());
        assert_eq!(FlowopKind::parse("composite").map(|k| k.name()), None);
        assert_eq!(FlowopKind::Composite(Vec::new()).name(), "composite");
    }
}
