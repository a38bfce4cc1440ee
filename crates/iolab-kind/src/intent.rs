//! What a workload means to do, as the checks need to know it: each kind fills an [`Intent`]
//! from its validated plan, the runner adds what the procedure did, and the checks judge
//! the run against it.

use iolab_check::{Access, DatasetAdvice, PlanFacts, SyncScope};

/// What the workload meant to do, for the checks.
#[derive(Debug, Clone, Default)]
pub struct Intent {
    /// How the workload grows its dataset and makes its reads cold, in its own words.
    pub dataset_advice: Option<DatasetAdvice>,
    pub access: Option<Access>,
    pub o_direct: bool,
    pub sync_requested: bool,
    /// Which writes are meant to be durable (`RunFacts::sync_scope`).
    pub sync_scope: Option<SyncScope>,
    /// The most writes in flight to one file at once (`RunFacts::writes_in_flight_per_file`).
    pub writes_in_flight_per_file: Option<u32>,
    /// Bytes of files the workload works on.
    pub dataset_bytes: Option<u64>,
    pub threads: Option<u32>,
    /// The workload's own memory, estimated (`RunFacts::engine_memory_bytes`).
    pub engine_memory_bytes: Option<u64>,
    /// Page cache dropped right before the timed region.
    pub caches_dropped: bool,
    pub cache_limit: Option<u64>,
    /// No I/O happens (the null engine): nothing to check.
    pub no_io: bool,
    /// The workload means its reads to reach the device whatever the cache held before the
    /// run: a workload that reads the files it has just written makes only files larger than the cache
    /// make that so.
    pub reads_meant_cold: bool,
    /// The workload empties its files' page cache before each of its passes.
    pub cache_purged_each_pass: bool,
    /// The WML `system` commands the run skipped (`--no-system`); `None` for kinds without
    /// them.
    pub skipped_system: Option<Vec<String>>,
}

impl Intent {
    /// What the checks know of the workload from its intent alone — the same before it runs
    /// (`iolab check`) and after (the runner adds what it measured).
    pub fn facts(&self) -> PlanFacts {
        PlanFacts {
            dataset_advice: self.dataset_advice.clone(),
            access: self.access,
            reads_cold: Some(self.caches_dropped || self.o_direct || self.reads_meant_cold),
            o_direct: Some(self.o_direct),
            cache_purged_each_pass: Some(self.cache_purged_each_pass),
            sync_requested: Some(self.sync_requested),
            sync_scope: self.sync_scope,
            dataset_bytes: self.dataset_bytes,
            cgroup_cache_limit_bytes: self.cache_limit,
            engine_memory_bytes: self.engine_memory_bytes,
            ..PlanFacts::default()
        }
    }
}
