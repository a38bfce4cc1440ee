//! Reading an experiment into an [`ExperimentPlan`]: what the runner executes. Pure: nothing on
//! the machine is created or changed (files are read, directories looked at).
//!
//! [`load`] builds a plan from an experiment file; [`single`] builds the one-configuration,
//! one-run plan of a kind's command (`iolab KIND …`, `iolab run FILE.f`). Every field of a
//! plan is already checked, so running it can only fail on the machine (mkfs, mount, I/O),
//! never on the input.

pub(crate) mod factors;
mod facts;
pub(crate) mod load;
pub mod single;
pub(crate) mod subst;
pub(crate) mod sut;

pub use iolab_kind::command::{Origin, UsageError};
pub(crate) use iolab_kind::input::{error, read, tree};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use iolab_metrics::MetricDef;
use iolab_stats::{Level, StoppingRule};
use iolab_sut::{SutPlan, SutSpec};
use serde_json::{Map, Value};

use iolab_kind::kind::DynWorkload;

pub use iolab_metrics::DEFAULT_METRIC;

pub use iolab_kind::DEFAULT_SEED;

/// A whole experiment, ready to run.
#[derive(Debug, Clone)]
pub struct ExperimentPlan {
    /// `name = …`, or the file stem; for a single run, a description of the command.
    pub name: String,
    /// The experiment file; for a single run, the workload file or the command.
    pub source: PathBuf,
    /// Seeds the run order and every run's seed (`seed = …`, default [`DEFAULT_SEED`]).
    pub seed: u64,
    /// The points of the matrix that are not excluded, in declaration order (the first
    /// factor varies slowest).
    pub configs: Vec<ConfigPlan>,
    pub repetitions: Repetitions,
    pub procedure: Procedure,
    /// The whole experiment after defaults and substitution, for the results database
    /// (`experiments.spec_json`): enough to understand and redo it.
    pub resolved: Value,
    /// The `[[then]]` stages, checked; each is read again by [`load::stage`] once the stage
    /// before it has run (its `${previous.trace}` is known only then).
    pub then: Vec<Stage>,
    /// The experiment file's text (`None` for a single run's plan): what a stage is read
    /// again from, and what a worker process (a run in a container or a VM) reads its
    /// workload from.
    pub(crate) text: Option<std::sync::Arc<str>>,
    /// For a stage: its index and the previous stage's trace ([`load::stage`]'s arguments).
    pub(crate) stage_at: Option<(usize, Option<PathBuf>)>,
    /// Whether this stage refers to `${previous.trace}`.
    pub uses_previous_trace: bool,
}

/// A `[[then]]` stage of an experiment file: an experiment of its own, run after the one
/// before it, into the same database.
#[derive(Debug, Clone)]
pub struct Stage {
    pub name: String,
    pub configs: usize,
    /// Whether its runs save block traces (what `${previous.trace}` of the next stage needs).
    pub saves_trace: bool,
    /// Whether it refers to the previous stage's trace.
    pub uses_previous_trace: bool,
}

impl Stage {
    pub(crate) fn of(plan: &ExperimentPlan) -> Stage {
        Stage {
            name: plan.name.clone(),
            configs: plan.configs.len(),
            saves_trace: plan.procedure.save_block_trace,
            uses_previous_trace: plan.uses_previous_trace,
        }
    }
}

impl ExperimentPlan {
    /// The experiment's row as the results database stores it.
    pub fn new_experiment(
        &self,
        source: String,
        created_at: iolab_store::Timestamp,
        iolab_version: String,
        host: Value,
    ) -> iolab_store::NewExperiment {
        iolab_store::NewExperiment {
            name: self.name.clone(),
            source,
            spec: self.resolved.clone(),
            seed: self.seed,
            created_at,
            iolab_version,
            host,
        }
    }

    /// Configuration `i`'s `[workload]` section as stored with the experiment (substituted,
    /// with what its kind adds): what the kind's `from_stored` reads again.
    pub fn stored_workload(&self, i: usize) -> &Value {
        &self.resolved["configs"][i]["workload"]
    }

    /// Whether configuration `i` stops after one exact run: its workload is deterministic and
    /// the stopping metric is one of its exact ones (a simulation's speed is not).
    pub fn deterministic(&self, i: usize) -> bool {
        let metric = &self.repetitions.metric;
        self.configs[i].workload.deterministic()
            && self
                .metrics()
                .iter()
                .any(|d| d.exact && d.name == metric.as_str())
    }

    /// The definitions of every metric its runs record: the common ones, then its workload
    /// kind's own (every configuration has the same kind).
    pub fn metrics(&self) -> Vec<MetricDef> {
        let Some(w) = self.configs.first().map(|c| &c.workload) else {
            return iolab_metrics::with_common(&[]);
        };
        let mut defs = iolab_metrics::with_common_as(w.metrics(), w.common_as());
        if !w.common_headline() {
            for d in defs.iter_mut().take(iolab_metrics::COMMON.len()) {
                d.headline = false;
            }
        }
        defs
    }
}

/// When to stop repeating a configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Repetitions {
    /// min (default 3), max (default 20), target (default 0.05), level 95%. `min = max = 1`
    /// is a single run: no interval, no stopping rule ([`Repetitions::once`]).
    pub rule: StoppingRule,
    /// A metric of the plan ([`ExperimentPlan::metrics`]) with a direction; default
    /// [`DEFAULT_METRIC`].
    pub metric: String,
    /// Time spent on one configuration's runs after which it stops unconverged.
    pub time_budget: Option<Duration>,
}

impl Repetitions {
    /// One run per configuration.
    pub fn once() -> Repetitions {
        Repetitions {
            // Built directly: StoppingRule::new refuses min < 2, which an interval needs;
            // a single run has no interval.
            rule: StoppingRule {
                min: 1,
                max: 1,
                target: StoppingRule::default().target,
                level: Level::P95,
            },
            metric: DEFAULT_METRIC.into(),
            time_budget: None,
        }
    }

    /// A single run: nothing to converge.
    pub fn is_single(&self) -> bool {
        self.rule.max == 1
    }

    /// As stored in the resolved experiment.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "min": self.rule.min,
            "max": self.rule.max,
            "target": self.rule.target,
            "level": self.rule.level.get(),
            "metric": self.metric,
            "time_budget_s": self.time_budget.map(|d| d.as_secs_f64()),
        })
    }
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
    /// Keep each measured run's request-level block trace in iolab's trace format, in
    /// `<results DB>.traces/run-<run id>.iolt` (default false; needs root).
    pub save_block_trace: bool,
    /// Count the workload's system calls and the bytes they moved over every run's timed
    /// region (the syscall view; default false; needs root).
    pub trace_syscalls: bool,
}

impl Default for Procedure {
    fn default() -> Self {
        Procedure {
            order: Order::Random,
            fresh_fs: true,
            warmup: 0,
            drop_caches: true,
            save_block_trace: false,
            trace_syscalls: false,
        }
    }
}

impl Procedure {
    /// As stored in the resolved experiment.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "order": match self.order {
                Order::Random => "random",
                Order::Sequential => "sequential",
            },
            "fresh_fs": self.fresh_fs,
            "warmup": self.warmup,
            "drop_caches": self.drop_caches,
            "save_block_trace": self.save_block_trace,
            "trace_syscalls": self.trace_syscalls,
        })
    }
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
    /// The validated workload, of one of the kinds in [`crate::kind`].
    pub workload: Arc<dyn DynWorkload>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_run_has_no_stopping_rule() {
        let r = Repetitions::once();
        assert!(r.is_single());
        assert_eq!((r.rule.min, r.rule.max), (1, 1));
        assert_eq!(r.metric, DEFAULT_METRIC);
    }
}
