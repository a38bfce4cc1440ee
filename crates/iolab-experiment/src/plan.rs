//! The validated experiment: what the runner executes. Built by [`crate::load`] from an
//! experiment file; every field is already checked, so running it can only fail on the
//! machine (mkfs, mount, I/O), never on the input.

use std::path::PathBuf;
use std::time::Duration;

use iolab_stats::StoppingRule;
use iolab_sut::{SutPlan, SutSpec};
use iolab_workload::micro::MicroSpec;
use serde_json::{Map, Value};

/// Run metrics every run records (name, unit, whether higher is better). `repetitions.metric`
/// must be one of these.
pub const METRICS: &[(&str, &str, bool)] = &[
    ("ops_per_s", "op/s", true),
    ("mib_per_s", "MiB/s", true),
    ("ops", "", true),
    ("bytes", "B", true),
    ("lat_mean_ns", "ns", false),
    ("lat_p50_ns", "ns", false),
    ("lat_p90_ns", "ns", false),
    ("lat_p99_ns", "ns", false),
    ("lat_p999_ns", "ns", false),
    ("lat_max_ns", "ns", false),
    ("cpu_usr_s", "s", false),
    ("cpu_sys_s", "s", false),
    ("elapsed_s", "s", false),
];

/// The headline metric when the file names none.
pub const DEFAULT_METRIC: &str = "ops_per_s";

/// A whole experiment, ready to run.
#[derive(Debug, Clone)]
pub struct ExperimentPlan {
    /// `name = …`, or the file stem.
    pub name: String,
    /// The experiment file.
    pub source: PathBuf,
    /// Seeds the run order and every run's seed (`seed = …`, default 1).
    pub seed: u64,
    /// The points of the matrix that are not excluded, in declaration order (the first
    /// factor varies slowest).
    pub configs: Vec<ConfigPlan>,
    pub repetitions: Repetitions,
    pub procedure: Procedure,
    /// The whole experiment after defaults and substitution, for the results database
    /// (`experiments.spec_json`): enough to understand and redo it.
    pub resolved: Value,
}

/// When to stop repeating a configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Repetitions {
    /// min (default 3), max (default 20), target (default 0.05), level 95%.
    pub rule: StoppingRule,
    /// One of [`METRICS`]; default [`DEFAULT_METRIC`].
    pub metric: String,
    /// Time spent on one configuration's runs after which it stops unconverged.
    pub time_budget: Option<Duration>,
}

/// How runs are scheduled and prepared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Procedure {
    pub order: Order,
    /// A fresh filesystem (mkfs + mount) for every run (default), or one per configuration
    /// reused by its runs.
    pub fresh_fs: bool,
    /// Unrecorded runs of each configuration before its first measured one (default 0).
    pub warmup: u32,
    /// Drop the page cache (and check that it fell) before every run (default true).
    pub drop_caches: bool,
}

/// The order of runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Round by round, configurations in a seeded random order within each round
    /// (default): drift spreads over all configurations.
    Random,
    /// Round by round, configurations in declaration order.
    Sequential,
}

/// One point of the matrix.
#[derive(Debug, Clone)]
pub struct ConfigPlan {
    /// Unique within the experiment, e.g. `journal=ordered readers=100`.
    pub label: String,
    /// Factor name → the level's value (for a table level, the whole table).
    pub factors: Map<String, Value>,
    /// The SUT section after substitution, as written (stored with the run).
    pub sut_spec: SutSpec,
    /// The validated SUT.
    pub sut: SutPlan,
    pub workload: WorkloadPlan,
}

/// What runs in the prepared directory.
#[derive(Debug, Clone)]
pub enum WorkloadPlan {
    /// A filebench workload.
    Wml(WmlPlan),
    /// A micro test; `dir` is replaced by the run's directory.
    Micro(MicroSpec),
}

/// A WML workload, checked by parsing, validating and lowering it with a stand-in `$dir`.
#[derive(Debug, Clone)]
pub struct WmlPlan {
    /// The file (resolved relative to the experiment file) or `builtin:NAME`.
    pub source: String,
    /// Its text (read once, so the file cannot change under a running experiment).
    pub text: String,
    /// Variable overrides after substitution (`$dir` is set by the runner).
    pub sets: Vec<(String, String)>,
    /// Run time (overrides the file's `run N`; required when it has none).
    pub duration: Option<Duration>,
    /// Multiply every fileset's file sizes by this factor.
    pub size_scale: Option<f64>,
    /// Pick files at random instead of round-robin.
    pub pick_random: bool,
}
