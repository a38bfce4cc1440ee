//! Under MPI ([`RunnerOptions::group`]): every rank loads the same plan; rank 0 runs the
//! schedule, tells the others each run (an [`Order`]) and stores; the other ranks follow.
//! Every rank runs each run on its own host with the same code as a run without MPI (its
//! own system under test, monitors and checks); the timed region starts at a barrier on all
//! of them, each kind syncs its own phases, and at the end rank 0 gathers every rank's record
//! and stores one run: counts added up, rates over the wall time from the first rank's start
//! to the last one's end, each rank's values and host kept in the run's environment.
//!
//! A rank that fails (preparing, running) tells the others at the next sync: every rank's run
//! ends, none waits for a rank that will not come, and the run is stored as failed with the
//! failing rank's reason. A rank killed outright is `mpirun`'s to report: it ends the others
//! with SIGTERM, which each takes as an interruption (clean-up, the experiment resumable).

use std::sync::Arc;

use iolab_kind::Group;
use serde::{Deserialize, Serialize};

use super::*;

/// The ranks of an MPI job, as the runner holds them.
#[derive(Clone)]
pub struct Ranked(pub Arc<dyn Group + Send + Sync>);

impl std::fmt::Debug for Ranked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rank {} of {}", self.0.rank(), self.0.size())
    }
}

/// What rank 0 tells the others to do next.
#[derive(Debug, Serialize, Deserialize)]
enum Order {
    Run {
        config: usize,
        repetition: u32,
        warmup: bool,
        number: u64,
    },
    Stop,
}

/// Why a rank's run failed, as it travels to rank 0.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Failure {
    message: String,
    hint: Option<String>,
    bad_input: bool,
    interrupted: bool,
    /// Only because another rank failed: not the reason to store.
    echo: bool,
}

/// What a rank tells rank 0 at a run's end.
#[derive(Debug, Serialize, Deserialize)]
struct Outcome {
    rank: usize,
    host: String,
    failure: Option<Failure>,
    /// The rank's record, a one-run database in hex (iolab_store::transfer).
    record: Option<String>,
    environment: Value,
    /// The timed region on the rank's clock (Unix ns): its start at the barrier's release,
    /// its end.
    timed: Option<[u64; 2]>,
}

/// Unix time in ns, for aligning the ranks' timed regions.
pub(super) fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The start-up handshake: every rank says whether it could set up and what its host is;
/// any rank's error ends every rank's experiment before anything runs. Gives every rank's
/// host environment (rank order).
pub(super) fn handshake(
    group: &Ranked,
    setup: Result<(), &RunnerError>,
) -> Result<Vec<Value>, RunnerError> {
    let g = &group.0;
    let mine = json!({
        "host": environment::host_environment(),
        "hostname": g.hosts()[g.rank()],
        "error": setup.err().map(|e| match e.hint() {
            Some(h) => format!("{e} ({h})"),
            None => e.to_string(),
        }),
    });
    let all = g
        .all_gather(mine.to_string().as_bytes())
        .map_err(|f| RunnerError::Ranks(f.message))?;
    let all: Vec<Value> = all
        .iter()
        .map(|b| serde_json::from_slice(b).unwrap_or(Value::Null))
        .collect();
    if setup.is_ok() {
        if let Some((r, v)) = all.iter().enumerate().find(|(_, v)| v["error"].is_string()) {
            return Err(RunnerError::Ranks(format!(
                "rank {r} (host {}) could not start: {}",
                v["hostname"].as_str().unwrap_or("?"),
                v["error"].as_str().unwrap_or("?")
            )));
        }
    }
    Ok(all.into_iter().map(|mut v| v["host"].take()).collect())
}

/// Refuses, before anything is touched, what the ranks cannot do together: run in a
/// container or a VM (whose worker has no ranks), or share a page-cache cap or a throttle.
pub(super) fn check_ranks(plan: &ExperimentPlan) -> Result<(), RunnerError> {
    if let Some(c) = plan
        .configs
        .iter()
        .find(|c| !matches!(c.sut.environment.kind, iolab_sut::EnvKind::Host))
    {
        return Err(RunnerError::Ranks(format!(
            "configuration {} runs in a {} (sut.environment), which runs under MPI do not \
             support: each rank's workload runs on its own host",
            c.label,
            c.sut.environment.name()
        )));
    }
    if let Some(c) = plan
        .configs
        .iter()
        .find(|c| c.sut.cache_limit.is_some() || c.sut.throttle.is_some())
    {
        return Err(RunnerError::Ranks(format!(
            "configuration {} caps the page cache or throttles the device (sut.cache_limit, \
             sut.throttle), which runs under MPI do not support: the cgroup would hold only \
             the ranks of the node that made it",
            c.label
        )));
    }
    Ok(())
}

/// Rank 0's: when dropped (the experiment is over, or could not go on), the other ranks are
/// told to stop.
pub(super) struct StopOnDrop<'a>(pub Option<&'a Ranked>);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(g) = self.0 {
            let _ =
                g.0.broadcast(Some(&serde_json::to_vec(&Order::Stop).unwrap_or_default()));
        }
    }
}

impl Session<'_> {
    fn group(&self) -> Option<&Arc<dyn Group + Send + Sync>> {
        self.opts.group.as_ref().map(|r| &r.0)
    }

    /// The run's system under test. Under MPI, ranks on one node share it: the node's first
    /// rank prepares it (makes and mounts the filesystem, sets the tunables) and tells the
    /// others its directory, which they use as it is; it tears it down once every rank's run
    /// has ended (`rank_end`).
    pub(super) fn prepare(&mut self, config: &ConfigPlan) -> Result<Prepared, RunFailure> {
        let failed = |e: iolab_sut::Error| RunFailure {
            bad_input: e.is_bad_input(),
            ..RunFailure::failed(format!("preparing the system under test: {e}"))
        };
        let shared = self
            .group()
            .filter(|g| g.ranks_per_node() > 1 && config.sut.changes_machine())
            .cloned();
        let Some(g) = shared else {
            return self.sut.prepare(&config.sut).map_err(failed);
        };
        let leader = g.leader() == g.rank();
        let mine = leader.then(|| self.sut.prepare(&config.sut));
        let dir = match &mine {
            Some(Ok(p)) => p.mountpoint.display().to_string(),
            _ => String::new(),
        };
        let dirs = g.as_ranks().all_gather(dir.as_bytes());
        if let Some(mine) = mine {
            return mine.map_err(failed);
        }
        let theirs = dirs?
            .get(g.leader())
            .map(|d| String::from_utf8_lossy(d).into_owned())
            .filter(|d| !d.is_empty())
            .ok_or_else(|| {
                RunFailure::failed(format!(
                    "rank {}, which prepares this node's system under test, could not",
                    g.leader()
                ))
            })?;
        let plan = iolab_sut::SutPlan {
            target: iolab_sut::Target::Directory(iolab_sut::target::Directory {
                path: theirs.into(),
            }),
            fs: None,
            tunables: Vec::new(),
            cache_limit: None,
            throttle: None,
            cache: None,
            environment: config.sut.environment.clone(),
            container: None,
        };
        self.sut.prepare(&plan).map_err(failed)
    }

    /// Rank 0: tells the others which run comes next, before preparing it. A run all ranks
    /// start clean.
    pub(super) fn rank_order(&self, config: usize, repetition: u32, warmup: bool, number: u64) {
        let Some(g) = self.group() else { return };
        g.reset();
        if g.rank() == 0 {
            let order = Order::Run {
                config,
                repetition,
                warmup,
                number,
            };
            // A cancelled broadcast is the run's end too: the run sees the cancel flag.
            let _ = g.broadcast(Some(&serde_json::to_vec(&order).unwrap_or_default()));
        }
    }

    /// The run's last sync, before the node's system under test is torn down: whether any
    /// rank failed.
    pub(super) fn rank_end(&self, failed: bool) -> bool {
        self.group().is_some_and(|g| g.end(failed))
    }

    /// Every rank's outcome to rank 0, which makes the run's record of them: `outcome` and
    /// `environment` become the whole run's (on rank 0; the others keep their own).
    pub(super) fn rank_gather(
        &mut self,
        config: &ConfigPlan,
        outcome: &mut Result<RunRecord, RunFailure>,
        environment: &mut Value,
    ) {
        let Some(g) = self.group().cloned() else {
            return;
        };
        let timed = self.timed.take();
        let scratch = std::env::temp_dir();
        // A record that cannot travel is this rank's failure, with the reason.
        let packed = match outcome.as_ref() {
            Ok(r) => Some(iolab_store::transfer::run_to_bytes(r, &scratch)),
            Err(_) => None,
        };
        if let Some(Err(e)) = &packed {
            *outcome = Err(RunFailure::failed(format!(
                "packing this rank's record for rank 0: {e}"
            )));
        }
        let mine = Outcome {
            rank: g.rank(),
            host: g.hosts()[g.rank()].clone(),
            failure: outcome.as_ref().err().map(|f| Failure {
                message: f.message.clone(),
                hint: f.hint.clone(),
                bad_input: f.bad_input,
                interrupted: f.interrupted,
                echo: f.message == iolab_kind::ranks::other_rank_failed().message,
            }),
            record: packed
                .and_then(Result::ok)
                .map(|b| iolab_store::transfer::to_hex(&b)),
            environment: environment.clone(),
            timed,
        };
        let gathered = match g.gather(&serde_json::to_vec(&mine).unwrap_or_default()) {
            Ok(Some(all)) => all,
            Ok(None) => return,
            Err(f) => {
                *outcome = Err(f);
                return;
            }
        };
        let all: Vec<Outcome> = gathered
            .iter()
            .filter_map(|b| serde_json::from_slice(b).ok())
            .collect();
        if all.len() != g.size() {
            *outcome = Err(RunFailure::failed(format!(
                "{} of {} ranks sent their run's outcome",
                all.len(),
                g.size()
            )));
            return;
        }
        *environment = merged_environment(std::mem::take(environment), &all);
        if let Some(f) = first_failure(&all) {
            *outcome = Err(f);
            return;
        }
        let mut records = Vec::with_capacity(all.len());
        for o in &all {
            let rec = o
                .record
                .as_deref()
                .and_then(iolab_store::transfer::from_hex)
                .ok_or_else(|| "it is not hex".to_string())
                .and_then(|b| {
                    iolab_store::transfer::run_from_bytes(&b, &scratch).map_err(|e| e.to_string())
                });
            match rec {
                Ok(r) => records.push(r),
                Err(e) => {
                    *outcome = Err(RunFailure::failed(format!(
                        "rank {}'s record could not be read back: {e}",
                        o.rank
                    )));
                    return;
                }
            }
        }
        // Every rank's own values, beside the run's (which are all ranks' together).
        if let Some(ranks) = environment.get_mut("ranks").and_then(Value::as_array_mut) {
            for (r, rec) in ranks.iter_mut().zip(&records) {
                let own: serde_json::Map<String, Value> = rec
                    .metrics
                    .iter()
                    .map(|m| (m.name.clone(), json!(m.value)))
                    .collect();
                r["metrics"] = Value::Object(own);
            }
        }
        let spans: Vec<Option<[u64; 2]>> = all.iter().map(|o| o.timed).collect();
        let mut merged = merge(&records, &spans, config.workload.as_ref());
        merged.findings.extend(rank_findings(&all, &spans));
        *outcome = Ok(merged);
    }

    /// A rank other than 0: runs what rank 0 orders until it says stop (or the run is
    /// cancelled), each run as rank 0 runs it.
    pub(super) fn follow(&mut self, states: &mut [ConfigState]) -> Result<(), RunnerError> {
        let Some(g) = self.group().cloned() else {
            return Ok(());
        };
        loop {
            let Ok(bytes) = g.broadcast(None) else {
                return Ok(());
            };
            match serde_json::from_slice::<Order>(&bytes) {
                Ok(Order::Run {
                    config,
                    repetition,
                    warmup,
                    number,
                }) if config < states.len() => {
                    self.runs = number.saturating_sub(1);
                    let id = (!warmup).then_some(states[config].id);
                    let info = self.info(states, config, repetition, warmup);
                    self.obs.run_started(&info);
                    let (end, _) = self.one_run(config, repetition, warmup, id)?;
                    self.obs.run_ended(&info, &end);
                    match end.status {
                        RunStatus::Ok => self.ok += 1,
                        RunStatus::Failed => self.failed += 1,
                        RunStatus::Interrupted => self.interrupted += 1,
                    }
                }
                Ok(Order::Run { config, .. }) => {
                    return Err(RunnerError::Ranks(format!(
                        "rank 0 ordered configuration {config}, which this rank's plan does \
                         not have: the ranks read different experiment files"
                    )))
                }
                Ok(Order::Stop) => return Ok(()),
                Err(e) => {
                    return Err(RunnerError::Ranks(format!(
                        "rank 0's order could not be read: {e}"
                    )))
                }
            }
        }
    }
}

/// The failure to store: the first rank's own (not one that failed only because another
/// did), named by rank and host.
fn first_failure(all: &[Outcome]) -> Option<RunFailure> {
    let failed: Vec<&Outcome> = all.iter().filter(|o| o.failure.is_some()).collect();
    let o = failed
        .iter()
        .find(|o| o.failure.as_ref().is_some_and(|f| !f.echo))
        .or(failed.first())?;
    let f = o.failure.clone()?;
    let others = failed.len() - 1;
    Some(RunFailure {
        message: format!(
            "rank {} (host {}): {}{}",
            o.rank,
            o.host,
            f.message,
            if others > 0 {
                format!(
                    " ({others} other rank{} ended with it)",
                    if others == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            }
        ),
        hint: f.hint,
        bad_input: f.bad_input,
        interrupted: f.interrupted,
        located: false,
    })
}

/// Rank 0's environment with every rank's: `ranks[]` of `{rank, host, timed, environment}`.
fn merged_environment(mut env: Value, all: &[Outcome]) -> Value {
    let ranks: Vec<Value> = all
        .iter()
        .map(|o| {
            json!({
                "rank": o.rank,
                "host": o.host,
                "timed_unix_ns": o.timed,
                "failed": o.failure.as_ref().map(|f| &f.message),
                "environment": if o.rank == 0 { Value::Null } else { o.environment.clone() },
            })
        })
        .collect();
    match &mut env {
        Value::Object(m) => {
            m.insert("ranks".into(), Value::Array(ranks));
        }
        _ => env = json!({ "ranks": ranks }),
    }
    env
}

/// How a metric of every rank becomes the run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Combine {
    /// Counts, bytes, CPU time: the ranks' total.
    Sum,
    /// The slowest rank's (latency percentiles, maxima).
    Max,
    /// The ranks' mean.
    Mean,
    /// Rank 0's (its host's monitors: the others' are in the environment).
    First,
}

/// How the ranks' values of metric `name` become the run's, by who declares it (not by how
/// it is named): a common metric by what it measures; one of the kind's own is rank 0's when
/// the kind divides the work among the ranks (its `merge_ranks` gives the run's figures; the
/// rest are per rank), and otherwise, every rank having run the whole workload, the ranks'
/// total (a percentage: their mean); what neither declares is a monitor's (`cpu.usr_pct`,
/// `disk.loop0.util_pct`, the syscall trace's), rank 0's host's.
fn combine(name: &str, workload: &dyn iolab_kind::DynWorkload) -> Combine {
    let percent = |unit: &str| unit == "%" || unit.ends_with("pct");
    if let Some(d) = iolab_metrics::find(iolab_metrics::COMMON, name) {
        return match (&*d.name, &*d.unit) {
            ("lat_mean_ns", _) => Combine::Mean,
            // Latency percentiles and the maximum.
            (_, "ns") => Combine::Max,
            (_, u) if percent(u) => Combine::Mean,
            _ => Combine::Sum,
        };
    }
    match iolab_metrics::find(workload.metrics(), name) {
        Some(_) if workload.divides_among_ranks() => Combine::First,
        Some(d) if percent(&d.unit) => Combine::Mean,
        Some(_) => Combine::Sum,
        None => Combine::First,
    }
}

/// The run's record from every rank's (rank order) and their timed regions (Unix ns).
/// Counts add up; `ops_per_s` and `mib_per_s` are the total over the wall time from the first
/// rank's start to the last one's end (the honest aggregate); `elapsed_s` is that wall time;
/// latency percentiles are the slowest rank's, the mean is weighted by operations; the
/// kind's [`iolab_kind::Workload::merge_ranks`] replaces what it computes itself. Rank 0's
/// series, monitors and flowops stay (every rank's values are in `ranks.*` metrics and the
/// environment).
fn merge(
    records: &[RunRecord],
    spans: &[Option<[u64; 2]>],
    workload: &dyn iolab_kind::DynWorkload,
) -> RunRecord {
    let mut out = records[0].clone();
    let value =
        |r: &RunRecord, name: &str| r.metrics.iter().find(|m| m.name == name).map(|m| m.value);
    let starts: Vec<u64> = spans.iter().flatten().map(|s| s[0]).collect();
    let ends: Vec<u64> = spans.iter().flatten().map(|s| s[1]).collect();
    let wall_s = match (starts.iter().min(), ends.iter().max()) {
        (Some(a), Some(b)) if b > a && starts.len() == records.len() => Some((b - a) as f64 / 1e9),
        _ => None,
    };
    let ops: Vec<f64> = records
        .iter()
        .map(|r| value(r, "ops").unwrap_or(0.0))
        .collect();
    let total_ops: f64 = ops.iter().sum();
    for m in &mut out.metrics {
        let vals: Vec<f64> = records.iter().filter_map(|r| value(r, &m.name)).collect();
        if vals.len() != records.len() {
            continue;
        }
        m.value = match m.name.as_str() {
            "elapsed_s" => wall_s.unwrap_or_else(|| vals.iter().cloned().fold(0.0, f64::max)),
            "ops_per_s" | "mib_per_s" => {
                let counter = if m.name == "ops_per_s" {
                    "ops"
                } else {
                    "bytes"
                };
                let total: f64 = records.iter().filter_map(|r| value(r, counter)).sum();
                let scale = if m.name == "mib_per_s" {
                    1048576.0
                } else {
                    1.0
                };
                match wall_s {
                    Some(w) => total / scale / w,
                    None => vals.iter().sum(),
                }
            }
            "lat_mean_ns" if total_ops > 0.0 => {
                vals.iter().zip(&ops).map(|(v, n)| v * n).sum::<f64>() / total_ops
            }
            name => match combine(name, workload) {
                Combine::Sum => vals.iter().sum(),
                Combine::Max => vals.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
                Combine::Mean => vals.iter().sum::<f64>() / vals.len() as f64,
                Combine::First => m.value,
            },
        };
    }
    // Each rank's own rate, and the spread of the ranks' timed regions.
    let mut extra = Vec::new();
    for name in ["ops_per_s", "mib_per_s"] {
        let per: Vec<f64> = records.iter().filter_map(|r| value(r, name)).collect();
        if per.len() == records.len() && !per.is_empty() {
            let unit = out
                .metrics
                .iter()
                .find(|m| m.name == name)
                .map(|m| m.unit.clone())
                .unwrap_or_default();
            let min = per.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = per.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let mean = per.iter().sum::<f64>() / per.len() as f64;
            for (k, v) in [("min", min), ("max", max), ("mean", mean)] {
                extra.push(Metric::new(format!("ranks.{name}_{k}"), v, &unit));
            }
        }
    }
    extra.push(Metric::new("ranks.count", records.len() as f64, ""));
    if starts.len() == records.len() && !starts.is_empty() {
        let (s0, s1) = (starts.iter().min().unwrap(), starts.iter().max().unwrap());
        let (e0, e1) = (ends.iter().min().unwrap(), ends.iter().max().unwrap());
        extra.push(Metric::new(
            "ranks.start_skew_s",
            (s1 - s0) as f64 / 1e9,
            "s",
        ));
        extra.push(Metric::new(
            "ranks.end_spread_s",
            (e1 - e0) as f64 / 1e9,
            "s",
        ));
        extra.push(Metric::new(
            "ranks.all_running_s",
            e0.saturating_sub(*s1) as f64 / 1e9,
            "s",
        ));
    }
    out.metrics.extend(extra);
    for m in workload.merge_ranks(records) {
        match out.metrics.iter_mut().find(|o| o.name == m.name) {
            Some(o) => *o = m,
            None => out.metrics.push(m),
        }
    }
    out
}

/// The checks set a host's device against the work of the run, but under MPI every rank on a
/// node moves that node's device (and fills its page cache): a rank's own bytes, operations
/// and dataset become its node's, summed over the ranks that share it (`leader`). Left as
/// they are when another rank failed (no exchange then).
pub(super) fn node_totals(
    ranks: &dyn iolab_kind::Ranks,
    leader: usize,
    facts: &mut iolab_check::RunFacts,
) {
    // Every rank exchanges (a collective), whatever its node's count.
    if ranks.size() <= 1 {
        return;
    }
    let mine = json!([
        leader,
        facts.app_read_bytes,
        facts.app_write_bytes,
        facts.app_ops,
        facts.dataset_bytes
    ]);
    let Ok(all) = ranks.all_gather(mine.to_string().as_bytes()) else {
        return;
    };
    let node: Vec<Value> = all
        .iter()
        .filter_map(|b| serde_json::from_slice::<Value>(b).ok())
        .filter(|v| v[0].as_u64() == Some(leader as u64))
        .collect();
    let sum = |i: usize| -> Option<u64> { node.iter().map(|v| v[i].as_u64()).sum::<Option<u64>>() };
    facts.app_read_bytes = sum(1);
    facts.app_write_bytes = sum(2);
    facts.app_ops = sum(3);
    facts.dataset_bytes = sum(4);
}

/// What the checks say about the ranks (iolab-check's `RankFacts`): their start skew, a
/// straggler, hosts that differ.
fn rank_findings(all: &[Outcome], spans: &[Option<[u64; 2]>]) -> Vec<iolab_store::Finding> {
    let Some(timed) = spans.iter().copied().collect::<Option<Vec<_>>>() else {
        return Vec::new();
    };
    let host = |o: &Outcome, key: &str| {
        o.environment["machine"]["host"][key]
            .as_str()
            .map(str::to_owned)
    };
    let facts = iolab_check::RunFacts {
        ranks: Some(iolab_check::RankFacts {
            hosts: all.iter().map(|o| o.host.clone()).collect(),
            timed_unix_ns: timed,
            kernels: all.iter().map(|o| host(o, "kernel_release")).collect(),
            clocksources: all.iter().map(|o| host(o, "clocksource")).collect(),
        }),
        ..iolab_check::RunFacts::default()
    };
    iolab_check::run_checks(&facts)
        .into_iter()
        .map(monitor::to_store)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_kind::record::testing::record;

    fn rank(ops: f64, bytes: f64, p99: f64, mean: f64, cpu: f64) -> RunRecord {
        let mut r = record();
        for (n, v, u) in [
            ("ops", ops, ""),
            ("bytes", bytes, "B"),
            ("ops_per_s", ops / 2.0, "op/s"),
            ("mib_per_s", bytes / 1048576.0 / 2.0, "MiB/s"),
            ("elapsed_s", 2.0, "s"),
            ("lat_p99_ns", p99, "ns"),
            ("lat_mean_ns", mean, "ns"),
            ("cpu_usr_s", cpu, "s"),
            ("cpu.usr_pct", cpu * 10.0, "%"),
        ] {
            r.metrics.push(Metric::new(n, v, u));
        }
        r
    }

    fn get(r: &RunRecord, name: &str) -> f64 {
        r.metrics
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("{name} missing"))
            .value
    }

    /// A kind that declares `declared`, divides its work among the ranks or not, and merges
    /// `ops` itself (1000 a rank) or nothing.
    #[derive(Debug)]
    struct Own {
        declared: &'static [iolab_metrics::MetricDef],
        divides: bool,
        merges_ops: bool,
    }
    impl iolab_kind::Workload for Own {
        type Output = ();
        fn kind(&self) -> &'static str {
            "own"
        }
        fn metrics(&self) -> &[iolab_metrics::MetricDef] {
            self.declared
        }
        fn intent(&self, base: iolab_kind::Intent) -> iolab_kind::Intent {
            base
        }
        fn planned_duration(&self) -> Option<Duration> {
            None
        }
        fn run(&self, _run: &mut RunCtx<'_>) -> Result<(), RunFailure> {
            Ok(())
        }
        fn merge_ranks(&self, ranks: &[RunRecord]) -> Vec<Metric> {
            match self.merges_ops {
                true => vec![Metric::new("ops", ranks.len() as f64 * 1000.0, "")],
                false => Vec::new(),
            }
        }
        fn divides_among_ranks(&self) -> bool {
            self.divides
        }
    }

    #[test]
    fn counts_add_up_and_rates_are_over_the_first_start_to_the_last_end() {
        let recs = [
            rank(100.0, 1048576.0 * 10.0, 50.0, 10.0, 1.0),
            rank(300.0, 1048576.0 * 30.0, 90.0, 20.0, 2.0),
        ];
        // Rank 1 starts 1 s after rank 0 and ends 4 s after rank 0 started.
        let spans = [
            Some([1_000_000_000, 3_000_000_000]),
            Some([2_000_000_000, 5_000_000_000]),
        ];
        let w = iolab_kind::erase(Own {
            declared: &[],
            divides: false,
            merges_ops: true,
        });
        let m = merge(&recs, &spans, w.as_ref());
        assert_eq!(get(&m, "bytes"), 1048576.0 * 40.0);
        assert_eq!(get(&m, "elapsed_s"), 4.0);
        assert_eq!(get(&m, "mib_per_s"), 10.0, "40 MiB over the 4 s wall time");
        assert_eq!(get(&m, "ops_per_s"), 100.0);
        assert_eq!(get(&m, "lat_p99_ns"), 90.0, "the slowest rank's");
        assert_eq!(get(&m, "lat_mean_ns"), 17.5, "weighted by operations");
        assert_eq!(get(&m, "cpu_usr_s"), 3.0);
        assert_eq!(get(&m, "cpu.usr_pct"), 10.0, "rank 0's host's monitors");
        assert_eq!(get(&m, "ranks.mib_per_s_min"), 5.0);
        assert_eq!(get(&m, "ranks.mib_per_s_max"), 15.0);
        assert_eq!(get(&m, "ranks.count"), 2.0);
        assert_eq!(get(&m, "ranks.start_skew_s"), 1.0);
        assert_eq!(get(&m, "ranks.end_spread_s"), 2.0);
        assert_eq!(get(&m, "ranks.all_running_s"), 1.0);
        assert_eq!(get(&m, "ops"), 2000.0, "the kind's own merge wins");
    }

    /// A kind's own metrics, named with a dot or without.
    const DECLARED: &[iolab_metrics::MetricDef] = &[
        iolab_metrics::MetricDef::new("write.ops", "", None, "Writes", "writes"),
        iolab_metrics::MetricDef::new("files", "", None, "Files", "files"),
        iolab_metrics::MetricDef::new("busy_pct", "%", None, "Busy", "busy"),
    ];

    /// What the kind declares decides, not the name: its own metrics add up (a percentage is
    /// averaged) when every rank ran the whole workload, and are rank 0's when the kind
    /// divides the work (its merge gives the run's); a monitor's is rank 0's host's.
    #[test]
    fn a_kinds_own_metrics_merge_as_it_declares_them_and_monitors_are_rank_0s() {
        let recs = [(1.0, 10.0), (3.0, 30.0)].map(|(n, pct)| {
            let mut r = record();
            for (name, v, u) in [
                ("write.ops", n, ""),
                ("files", n, ""),
                ("busy_pct", pct, "%"),
                ("disk.vda.util_pct", pct, "%"),
            ] {
                r.metrics.push(Metric::new(name, v, u));
            }
            r
        });
        let merged = |divides| {
            let w = iolab_kind::erase(Own {
                declared: DECLARED,
                divides,
                merges_ops: false,
            });
            let m = merge(&recs, &[None, None], w.as_ref());
            ["write.ops", "files", "busy_pct", "disk.vda.util_pct"].map(|n| get(&m, n))
        };
        assert_eq!(
            merged(false),
            [4.0, 4.0, 20.0, 10.0],
            "every rank ran it all"
        );
        assert_eq!(
            merged(true),
            [1.0, 1.0, 10.0, 10.0],
            "the kind divided the work"
        );
    }

    /// Ranks 0 and 1 share a node, rank 2 has its own: each judges its node's device by its
    /// node's work.
    #[test]
    fn the_checks_see_the_work_of_every_rank_on_the_node() {
        let (tx, rx) = std::sync::mpsc::channel();
        for t in iolab_kind::ranks::Threads::group(3, 2) {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let r = iolab_kind::Ranks::rank(&t) as u64;
                let mut facts = iolab_check::RunFacts {
                    app_write_bytes: Some(100 * (r + 1)),
                    app_read_bytes: Some(7),
                    app_ops: Some(1),
                    dataset_bytes: Some(1000),
                    ..Default::default()
                };
                node_totals(&t, iolab_kind::Group::leader(&t), &mut facts);
                tx.send((r, facts)).unwrap();
            });
        }
        drop(tx);
        let mut got: Vec<_> = (0..3)
            .map(|_| {
                rx.recv_timeout(Duration::from_secs(60))
                    .expect("a rank hung")
            })
            .collect();
        got.sort_by_key(|(r, _)| *r);
        for (r, f) in &got[..2] {
            assert_eq!(f.app_write_bytes, Some(300), "rank {r}: ranks 0 and 1");
            assert_eq!((f.app_read_bytes, f.app_ops), (Some(14), Some(2)));
            assert_eq!(f.dataset_bytes, Some(2000));
        }
        assert_eq!(got[2].1.app_write_bytes, Some(300), "rank 2 alone");
        assert_eq!(got[2].1.dataset_bytes, Some(1000));
    }

    #[test]
    fn the_stored_failure_is_the_rank_that_failed_not_those_that_ended_with_it() {
        let out = |rank: usize, failure: Option<(&str, bool)>| Outcome {
            rank,
            host: format!("h{rank}"),
            failure: failure.map(|(m, echo)| Failure {
                message: m.into(),
                hint: Some("free space".into()),
                bad_input: false,
                interrupted: false,
                echo,
            }),
            record: None,
            environment: Value::Null,
            timed: None,
        };
        let all = [
            out(0, Some(("another rank failed", true))),
            out(1, None),
            out(2, Some(("writing: No space left on device", false))),
            out(3, Some(("another rank failed", true))),
        ];
        let f = first_failure(&all).unwrap();
        assert_eq!(
            f.message,
            "rank 2 (host h2): writing: No space left on device (2 other ranks ended with it)"
        );
        assert_eq!(f.hint.as_deref(), Some("free space"));
        assert!(first_failure(&[out(0, None), out(1, None)]).is_none());
    }
}
