//! IO500's scored phases in IO500's order (its standard mode: the optional find-easy,
//! find-hard, mdworkbench and ior-rnd4K phases are not run), what each runs and which score
//! group it counts in; the metrics each records, declared once.

use std::sync::LazyLock;

use iolab_metrics::{Better, MetricDef};

/// A phase's score group: bandwidth (GiB/s) or metadata (kIOPS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Bandwidth,
    Metadata,
}

/// Which of the four workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    IorEasy,
    IorHard,
    MdtestEasy,
    MdtestHard,
}

/// What a phase runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Ior(Workload, iolab_ior::Access),
    Mdtest(Workload, iolab_mdtest::Phase),
    Find,
}

/// One IO500 phase.
#[derive(Debug, Clone, Copy)]
pub struct PhaseDef {
    /// IO500's name (`ior-easy-write`).
    pub name: &'static str,
    /// The metrics' prefix and the series' name (`ior_easy_write`).
    pub key: &'static str,
    pub group: Group,
    /// A write phase: stonewalled, and IO500 wants it to run at least the stonewall's time.
    pub write: bool,
    pub step: Step,
}

impl PhaseDef {
    /// The suffix of its rate metric.
    pub fn rate(&self) -> &'static str {
        match self.group {
            Group::Bandwidth => "gib_per_s",
            Group::Metadata => "kiops",
        }
    }

    /// The suffix of its work metric (bytes, or items).
    pub fn work(&self) -> &'static str {
        match self.group {
            Group::Bandwidth => "bytes",
            Group::Metadata => "items",
        }
    }

    /// The unit IO500 prints its score in.
    pub fn unit(&self) -> &'static str {
        match self.group {
            Group::Bandwidth => "GiB/s",
            Group::Metadata => "kIOPS",
        }
    }
}

use iolab_ior::Access;
use iolab_mdtest::Phase as Md;
use Workload::*;

const fn ior(name: &'static str, key: &'static str, w: Workload, a: Access) -> PhaseDef {
    PhaseDef {
        name,
        key,
        group: Group::Bandwidth,
        write: matches!(a, Access::Write),
        step: Step::Ior(w, a),
    }
}

const fn md(name: &'static str, key: &'static str, w: Workload, p: Md) -> PhaseDef {
    PhaseDef {
        name,
        key,
        group: Group::Metadata,
        write: matches!(p, Md::Create),
        step: Step::Mdtest(w, p),
    }
}

/// IO500's phases in its order (its `phase-definitions.h`); the timestamp the find compares
/// with is taken after mdtest-easy-write.
pub const PHASES: [PhaseDef; 12] = [
    ior("ior-easy-write", "ior_easy_write", IorEasy, Access::Write),
    md(
        "mdtest-easy-write",
        "mdtest_easy_write",
        MdtestEasy,
        Md::Create,
    ),
    ior("ior-hard-write", "ior_hard_write", IorHard, Access::Write),
    md(
        "mdtest-hard-write",
        "mdtest_hard_write",
        MdtestHard,
        Md::Create,
    ),
    PhaseDef {
        name: "find",
        key: "find",
        group: Group::Metadata,
        write: false,
        step: Step::Find,
    },
    ior("ior-easy-read", "ior_easy_read", IorEasy, Access::Read),
    md("mdtest-easy-stat", "mdtest_easy_stat", MdtestEasy, Md::Stat),
    ior("ior-hard-read", "ior_hard_read", IorHard, Access::Read),
    md("mdtest-hard-stat", "mdtest_hard_stat", MdtestHard, Md::Stat),
    md(
        "mdtest-easy-delete",
        "mdtest_easy_delete",
        MdtestEasy,
        Md::Remove,
    ),
    md("mdtest-hard-read", "mdtest_hard_read", MdtestHard, Md::Read),
    md(
        "mdtest-hard-delete",
        "mdtest_hard_delete",
        MdtestHard,
        Md::Remove,
    ),
];

/// The phase after which the find's timestamp is taken.
pub const TIMESTAMP_AFTER: &str = "mdtest-easy-write";

/// A metric's suffix and what it is: (suffix, unit, better, title, description).
type Def = (
    &'static str,
    &'static str,
    Option<Better>,
    &'static str,
    &'static str,
);

/// What every phase records.
const TIMES: &[Def] = &[
    ("start_s", "s", None, "start",
     "when the rank started the phase, from the release of the phase's barrier (merged: the first rank's)"),
    ("end_s", "s", None, "end",
     "when the rank ended the phase, from the release of the phase's barrier (merged: the last rank's)"),
    ("elapsed_s", "s", None, "time",
     "the first rank's start to the last rank's end (IO500's phase time)"),
];

const BANDWIDTH: &[Def] = &[
    ("gib_per_s", "GiB/s", Some(Better::Higher), "bandwidth",
     "IO500's score of the phase: all ranks' bytes over the first start to the last end, in GiB/s"),
    ("bytes", "B", None, "bytes", "bytes the phase moved (all ranks)"),
    ("ops", "", None, "transfers", "transfers of the phase (all ranks)"),
];

const METADATA: &[Def] = &[
    ("kiops", "kIOPS", Some(Better::Higher), "rate",
     "IO500's score of the phase: all ranks' items over the first start to the last end, in thousands per second"),
    ("items", "", None, "items", "items the phase did (all ranks; the find: files it looked at)"),
];

const READ: &[Def] = &[(
    "stamp_errors",
    "",
    Some(Better::Lower),
    "foreign data",
    "transfers whose data was not what the write phase stamped (IO500's -R check: 0 in a valid run)",
)];

const FIND: &[Def] = &[(
    "found",
    "",
    None,
    "found",
    "files the find matched: newer than the timestamp, 3901 bytes, named *01* (0 makes the run invalid)",
)];

/// The run's scores.
pub const SCORE: &[MetricDef] = &[
    MetricDef::new(
        "io500.score",
        "",
        Some(Better::Higher),
        "IO500 score",
        "IO500's total: the square root of the bandwidth score times the metadata score",
    )
    .headline(),
    MetricDef::new(
        "io500.bw_gib_per_s",
        "GiB/s",
        Some(Better::Higher),
        "IO500 bandwidth",
        "the geometric mean of the bandwidth phases' GiB/s",
    )
    .headline(),
    MetricDef::new(
        "io500.md_kiops",
        "kIOPS",
        Some(Better::Higher),
        "IO500 metadata",
        "the geometric mean of the metadata phases' kIOPS",
    )
    .headline(),
    MetricDef::new(
        "io500.valid",
        "",
        None,
        "valid IO500 result",
        "1 when the run keeps IO500's rules (a stonewall of at least 300 s that every write phase \
         outlasted, a find that found files, no foreign data read), else 0",
    ),
];

/// What io500 runs record besides the common metrics: per phase `KEY.SUFFIX`, then the
/// scores.
pub static METRICS: LazyLock<Vec<MetricDef>> = LazyLock::new(|| {
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let mut v = Vec::new();
    for p in &PHASES {
        let own: &[Def] = match (p.group, p.step) {
            (Group::Bandwidth, Step::Ior(_, Access::Read)) => READ,
            (Group::Metadata, Step::Find) => FIND,
            _ => &[],
        };
        let rates = match p.group {
            Group::Bandwidth => BANDWIDTH,
            Group::Metadata => METADATA,
        };
        for &(suffix, unit, better, title, what) in rates.iter().chain(TIMES).chain(own) {
            v.push(MetricDef::new(
                leak(format!("{}.{suffix}", p.key)),
                unit,
                better,
                leak(format!("{}: {title}", p.name)),
                what,
            ));
        }
    }
    v.extend(SCORE.iter().cloned());
    v
});

/// The phase called `name` (IO500's name).
pub fn phase(name: &str) -> Option<&'static PhaseDef> {
    PHASES.iter().find(|p| p.name == name)
}
