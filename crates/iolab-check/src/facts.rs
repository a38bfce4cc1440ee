//! What the checks look at: [`RunFacts`] after a run, [`PlanFacts`] before one.
//!
//! Every fact is an `Option`: `None` means *unknown*, and a check that needs an unknown fact
//! stays silent rather than guess. The runner maps its own data (engine totals, monitor
//! samples, SUT state) into these plain structs; this crate knows none of their types.
//!
//! Byte counts are bytes (diskstats sectors × 512), times are nanoseconds on the monotonic
//! clock, percentages are 0–100.

use serde::{Deserialize, Serialize};

/// How the workload makes its dataset larger and its reads cold, in its own words: what
/// `cache-fit` proposes when the dataset fits in the cache. Each kind says it of itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DatasetAdvice {
    /// How to grow the dataset: `{needed}` stands for the size it must exceed (e.g.
    /// `192 MiB`) and `{value}` for a value the size parser takes (e.g. `193M`); e.g.
    /// ``raise `size` above {needed} (`size = "{value}"`)``.
    pub grow: Option<String>,
    /// Why the cache serves the reads, when the workload's own reads make it so (the reads
    /// follow the workload's own writes of the same files); default: the cache drop only
    /// makes first reads cold.
    pub why: Option<String>,
    /// The fixes besides growing the dataset and capping the cache, each as `; or …`, the
    /// sentence's end included (default: `; or read with O_DIRECT.`).
    pub other_fixes: Option<String>,
}

/// What the workload's timed region does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Reads only (`read`, `randread`).
    Read,
    /// Writes only (`write`, `randwrite`, `append`).
    Write,
    /// Both (most WML workloads).
    Mixed,
}

/// How far the durability the workload asked for reaches: which of its writes are made
/// durable, and when. `sync-not-durable` judges only [`SyncScope::EachWrite`] and
/// [`SyncScope::SomeWrites`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncScope {
    /// No sync at all: buffered writes, or no writes.
    Never,
    /// One sync that ends each write pass (a single-pattern test that syncs no record): the
    /// writes are made durable together at the end, and a block overwritten many times
    /// reaches the device once.
    EndOfPass,
    /// Syncs during the run that cover some of the writes, which ones is not known: WML
    /// `fsync`/`fsyncset` flowops, or `dsync` on some but not all writing flowops.
    SomeWrites,
    /// Every write is durable before the next one to its file is issued: a per-record
    /// fsync, fdatasync or msync(MS_SYNC), O_SYNC or O_DSYNC, or `dsync` on every writing
    /// WML flowop. `msync(MS_ASYNC)` makes nothing durable.
    EachWrite,
}

/// The block device under the run directory, over the timed region (deltas of
/// /proc/diskstats unless said otherwise). Leave it at its [`Default`] (all unknown) for a
/// filesystem without a device, such as tmpfs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceFacts {
    /// Kernel name, e.g. `loop3`, `vdb`, `nvme0n1`.
    pub name: Option<String>,
    /// Δ sectors read (field 3) × 512.
    pub read_bytes: Option<u64>,
    /// Δ sectors written (field 7) × 512.
    pub write_bytes: Option<u64>,
    /// Δ reads completed (field 1).
    pub reads: Option<u64>,
    /// Δ writes completed (field 5).
    pub writes: Option<u64>,
    /// Δ flush requests completed (field 16, Linux ≥ 5.5). Unknown on older kernels.
    pub flushes: Option<u64>,
    /// Writes issued with REQ_FUA, from the block tracer (`block_rq_issue` rwbs containing
    /// `F` on a write). Unknown unless the run was traced.
    pub fua_writes: Option<u64>,
    /// Average %util over the timed region (iostat -x: Δfield 10 / Δt(ms) · 100).
    pub util_avg_pct: Option<f64>,
    /// %util per monitor interval over the timed region.
    pub util_series_pct: Option<Vec<f64>>,
    /// `queue/write_cache` says `write back` (true) or `write through` (false). With a
    /// write-through cache the block layer drops flush requests, so zero flushes are normal.
    pub volatile_write_cache: Option<bool>,
    /// The device is a loop device.
    pub is_loop: Option<bool>,
    /// For a loop device: `loop/dio` (losetup's DIO column) — the backing file is accessed
    /// with direct I/O, bypassing the host's page cache.
    pub loop_direct_io: Option<bool>,
}

/// A per-flowop count, e.g. how often a flowop ran dry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowopCount {
    /// The flowop's name in the workload.
    pub flowop: String,
    pub count: u64,
}

/// The page cache around the drop before the timed region: /proc/meminfo before `sync` and
/// after `drop_caches`, and the run's own files (`cachestat(2)` or `mincore(2)`; estimated
/// from a sample when there are many).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CacheDropFacts {
    /// `Cached` before (includes `Shmem`).
    pub cached_before_bytes: u64,
    /// `Cached` after.
    pub cached_after_bytes: u64,
    /// `Shmem` (tmpfs, shared memory) before; unknown on kernels without the field.
    pub shmem_before_bytes: Option<u64>,
    /// `Shmem` after.
    pub shmem_after_bytes: Option<u64>,
    /// Regular files of the run (its data files; WML: its filesets).
    pub run_files: u64,
    /// Their size.
    pub run_bytes: u64,
    /// Bytes of them in the page cache before the drop.
    pub run_resident_before_bytes: u64,
    /// ... and after (the runner fails a run whose files stayed, unless they are on tmpfs).
    pub run_resident_after_bytes: u64,
}

impl CacheDropFacts {
    /// A lower bound of the page cache others added while iolab synced and dropped: the drop
    /// freed at least the run's own pages, so anything `Cached` holds beyond
    /// before − those came in meanwhile (others' frees only hide more of it).
    pub fn refill_bytes(&self) -> u64 {
        let run_freed = self
            .run_resident_before_bytes
            .saturating_sub(self.run_resident_after_bytes);
        self.cached_after_bytes
            .saturating_sub(self.cached_before_bytes.saturating_sub(run_freed))
    }

    /// How much `Shmem` grew during the drop (0 when it shrank or is unknown).
    pub fn shmem_growth_bytes(&self) -> u64 {
        self.shmem_after_bytes
            .zip(self.shmem_before_bytes)
            .map_or(0, |(a, b)| a.saturating_sub(b))
    }
}

/// How a configuration's repetitions ended, per the stopping rule (config-level).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoppingOutcome {
    /// The CI half-width reached the target.
    pub converged: bool,
    /// Measured runs of the configuration.
    pub runs: u32,
    /// Achieved 95% CI half-width / |mean| of the stopping metric (0.07 = 7%). `None` with
    /// fewer than two runs.
    pub rel_half_width: Option<f64>,
    /// The rule's target for that fraction (default 0.05).
    pub target: Option<f64>,
    /// The metric the rule watched, e.g. `ops_per_s`.
    pub metric: Option<String>,
    /// The rule's `min` runs (`repetitions.min`); fewer means the time budget cut the
    /// configuration short.
    #[serde(default)]
    pub min_runs: Option<u32>,
}

/// One separately timed pass of a run: a kind whose run is a sequence of tests, each with its
/// own figure (iozone's write, read, …; bonnie's phases), and no per-interval series.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimedPass {
    /// The pass's name as the run record's flowop row calls it, e.g. `write`, `re-read`.
    pub name: String,
    /// How long its timed part lasted.
    pub elapsed_ns: u64,
}

/// Where the run executed (issue 28's factor): the host, a container (cgroups and
/// namespaces) or a virtual machine, with what its limits did over the timed region. Leave
/// it `None` for a run on the host whose environment was not recorded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EnvFacts {
    /// `host`, `container` or `vm`; empty when unknown.
    pub kind: String,
    /// The CPUs the workload may run on (the container's cpuset, the VM's pinned CPUs).
    pub cpuset: Option<Vec<u32>>,
    /// The CFS quota in CPUs (cfs_quota_us ÷ cfs_period_us; Docker's `--cpus`); `None`: no
    /// quota or unknown.
    pub cpu_quota_cpus: Option<f64>,
    /// Δ `nr_periods` of the container's `cpu.stat` over the run: scheduling periods in
    /// which it had runnable tasks.
    pub cpu_periods: Option<u64>,
    /// Δ `nr_throttled`: periods in which the quota ran out and its tasks waited.
    pub cpu_throttled_periods: Option<u64>,
    /// Δ `throttled_time` (ns): how long they waited, summed over the CPUs' run queues (it
    /// can exceed the run's elapsed time with several CPUs).
    pub cpu_throttled_ns: Option<u64>,
    /// The memory limit (v1 `memory.limit_in_bytes`, v2 `memory.max`).
    pub memory_limit_bytes: Option<u64>,
    /// Δ `memory.failcnt` over the run: how often the usage hit the limit (each time the
    /// kernel reclaimed inside the container).
    pub memory_failcnt: Option<u64>,
    /// The peak of the container's memory (`memory.max_usage_in_bytes`), page cache included.
    pub memory_peak_bytes: Option<u64>,
    /// Processes the memory limit's OOM killer ended (`memory.oom_control` `oom_kill`).
    pub oom_kills: Option<u64>,
    /// A VM's disk cache mode as qemu was given it: `none`, `writeback`, `unsafe` or
    /// `directsync`.
    pub vm_cache: Option<String>,
    /// A VM's accelerator: `kvm` (hardware virtualisation) or `tcg` (emulation).
    pub vm_accel: Option<String>,
    /// The clock source of the kernel the workload ran on (the guest's in a VM):
    /// `/sys/devices/system/clocksource/clocksource0/current_clocksource`.
    pub clocksource: Option<String>,
    /// That kernel's `available_clocksource`.
    pub available_clocksources: Option<Vec<String>>,
    /// The environments the experiment compares, each with the CPUs its workload ran on
    /// (`kind`, `cpuset`; a `None` set: unpinned), when there are several.
    pub compared: Option<Vec<(String, Option<Vec<u32>>)>>,
}

/// Under MPI: every rank of a run, in rank order (each rank's times on its own host's clock).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankFacts {
    /// Each rank's host name.
    pub hosts: Vec<String>,
    /// Each rank's timed region (Unix ns on its host's clock): its start at the release of
    /// the barrier all ranks start at, and its end.
    pub timed_unix_ns: Vec<[u64; 2]>,
    /// Each rank's host's kernel release (`uname -r`), when known.
    pub kernels: Vec<Option<String>>,
    /// Each rank's host's clock source, when known.
    pub clocksources: Vec<Option<String>>,
}

/// Everything the checks may look at after a run. Build it with `RunFacts::default()` and
/// fill in what is known.
///
/// `stopping` is about the whole configuration: set it only on the facts checked once the
/// configuration's repetitions have ended (a `RunFacts` with nothing but `stopping` set
/// gives exactly the config-level findings).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunFacts {
    // --- What was asked for -------------------------------------------------------------
    /// How the workload grows its dataset (the fix `cache-fit` proposes).
    pub dataset_advice: Option<DatasetAdvice>,
    pub access: Option<Access>,
    /// Reads are meant to hit the device: caches were dropped before the run, or the reads
    /// use O_DIRECT.
    pub reads_cold: Option<bool>,
    /// O_DIRECT requested for the data files.
    pub o_direct: Option<bool>,
    /// The workload empties its files' page cache before each of its passes (a purge between
    /// passes): every pass reads from the device whatever the cache could hold.
    pub cache_purged_each_pass: Option<bool>,
    /// Durability requested: fsync, fdatasync, O_SYNC, O_DSYNC or msync(MS_SYNC) — including
    /// a single sync at the end of a write pass (see [`Self::sync_scope`] for which writes).
    pub sync_requested: Option<bool>,
    /// Which writes were meant to be durable. `sync-not-durable` needs it (unknown: silent).
    pub sync_scope: Option<SyncScope>,
    /// The most writes that can be in flight to one file at once: with a file per thread,
    /// the queue depth (1 for the synchronous engines); WML, the number of
    /// threads (filesets are shared), unknown with `aiowrite`. One device write of a block
    /// can make all the synced writes to it in flight at that moment durable, so with
    /// [`SyncScope::EachWrite`] the device writes at least app bytes ÷ this.
    pub writes_in_flight_per_file: Option<u32>,

    // --- What the application did (engine counters over the timed region) ----------------
    pub app_read_bytes: Option<u64>,
    pub app_write_bytes: Option<u64>,
    /// Operations (records, transactions, flowop ops for WML).
    pub app_ops: Option<u64>,
    /// Whether `app_*` are what another tool claims (the `exec` kind): its own arithmetic,
    /// units and timing window, not iolab's counts.
    pub app_claimed: Option<bool>,
    /// The timed window of the write figures includes flushing the written data to the
    /// device (fio's `end_fsync`, iozone's `-e`, iolab's `flush = "included"`); `Some(false)`:
    /// the figure stops when the last write entered the page cache.
    pub flush_timed: Option<bool>,
    /// Of the write passes whose figures exclude their flush: their timed time, and the time
    /// their untimed flush (fsync, close) took after it (iolab's iozone with
    /// `flush = "excluded"`). Unknown for a tool that leaves the flush to write-back.
    pub untimed_flush: Option<UntimedFlush>,
    /// The time another tool says its figures are over (`app_claimed`): its rates are its
    /// bytes over this.
    pub claimed_seconds: Option<f64>,

    // --- What the system calls moved (the syscall view, `--trace-syscalls`) ----------------
    /// Bytes returned by the read family (read, pread64, readv, preadv, …) over the timed
    /// region, for the workload's whole process tree.
    pub syscall_read_bytes: Option<u64>,
    /// Bytes returned by the write family.
    pub syscall_write_bytes: Option<u64>,
    /// The workload moved data without read/write system calls (io_uring, mmap'd files):
    /// what the syscalls moved is then a lower bound.
    pub syscall_async_io: Option<bool>,
    /// The measured interval.
    pub elapsed_ns: Option<u64>,
    /// How long the timed region was planned to last (the workload's `time`, the WML's
    /// `run N`); unknown for workloads that run until their work is done.
    pub planned_ns: Option<u64>,
    /// The run's separately timed passes, each with its own figure (iozone's tests, bonnie's
    /// phases); `None` for kinds that time the run as one.
    pub passes: Option<Vec<TimedPass>>,
    /// Engine worker threads.
    pub engine_threads: Option<u32>,
    /// perf `task-clock` summed over the engine's worker threads (preferred).
    pub engine_task_clock_ns: Option<u64>,
    /// usr + sys CPU of the engine's worker threads (used when task-clock is unknown).
    pub engine_usr_sys_ns: Option<u64>,

    // --- Memory and caches ---------------------------------------------------------------
    /// Bytes in the files the workload touches (its `size`; WML: the filesets' bytes).
    pub dataset_bytes: Option<u64>,
    /// /proc/meminfo MemTotal.
    pub mem_total_bytes: Option<u64>,
    /// The memory cgroup's limit on the engine (v1 `memory.limit_in_bytes`; its "unlimited"
    /// value, 2^63 − 4096, may be passed as is).
    pub cgroup_cache_limit_bytes: Option<u64>,
    /// Under a cache cap: the peak of the memory of the engine's cgroup that was not page
    /// cache (buffers, stacks, kernel memory), which iolab added to the cgroup's limit.
    pub cache_cap_own_peak_bytes: Option<u64>,
    /// Under a cache cap: how often the cap's watcher found the engine's threads waiting for
    /// memory (the limit rose later than they allocated).
    pub cache_cap_waits: Option<u64>,
    /// The workload's own memory as estimated from its plan (I/O buffers and thread stacks
    /// of its threads). Before running only.
    pub engine_memory_bytes: Option<u64>,
    /// /proc/meminfo Cached at the start of the timed region.
    pub cached_at_start_bytes: Option<u64>,
    /// Caches were dropped (and the run's files checked to have left the page cache)
    /// before the run.
    pub caches_dropped: Option<bool>,
    /// What that drop saw of the page cache. Unknown when caches were not dropped.
    pub cache_drop: Option<CacheDropFacts>,

    // --- Storage -----------------------------------------------------------------------
    pub device: DeviceFacts,
    /// Filesystem type of the run directory as in /proc/self/mountinfo, e.g. `ext4`, `tmpfs`.
    pub fs_type: Option<String>,

    // --- The rest of the machine ---------------------------------------------------------
    /// All CPUs busy over the run, % of the machine (/proc/stat: 100 − idle − iowait − steal).
    pub cpu_busy_pct: Option<f64>,
    /// The engine's own CPU over the run, % of the machine (so others = busy − own).
    pub engine_cpu_pct: Option<f64>,
    /// Bytes other processes moved on the run's device (block tracer by pid, or their
    /// /proc/PID/io). The kernel threads working for the run — writeback of its dirty pages,
    /// the filesystem's journal thread — are not "others".
    pub other_io_bytes: Option<u64>,
    /// vm.dirty_expire_centisecs during the run.
    pub dirty_expire_centisecs: Option<u64>,
    /// vm.dirty_writeback_centisecs during the run.
    pub dirty_writeback_centisecs: Option<u64>,
    /// PSI memory `full` over the timed region (/proc/pressure/memory, the `total=`
    /// difference ÷ the sampled window): % of the time in which every non-idle task of the
    /// machine waited for memory (reclaim, refaults). Unknown without PSI or for a run
    /// shorter than one sampling interval.
    pub psi_memory_full_pct: Option<f64>,
    /// PSI memory `some` over the timed region: % of the time at least one task waited.
    pub psi_memory_some_pct: Option<f64>,

    // --- Inside the run ----------------------------------------------------------------
    /// Operations per interval as the engine recorded them: interval k covers
    /// [k·width, (k+1)·width) of the timed region, so the last one is partial when the run
    /// ended inside it. The checks keep only the full intervals
    /// ([`RunFacts::full_interval_ops`], from `elapsed_ns` and `interval_ns`): a partial
    /// interval's count looks like a drop in throughput.
    pub interval_ops: Option<Vec<f64>>,
    /// Width of one interval of `interval_ops`.
    pub interval_ns: Option<u64>,
    /// Per flowop: how often it found no file to work on (WML only).
    pub ran_dry: Option<Vec<FlowopCount>>,
    /// Running dry ends the thread: the WML's `set mode quit firstdone|alldone`, where it is
    /// how a workload says it is done (createfiles: every file exists), as in filebench.
    /// `false` for the default timeout mode, where iolab counts the miss and goes on.
    pub ran_dry_ends_thread: Option<bool>,
    /// WML `system` commands that were not run (`--no-system`); `Some(empty)` when none was
    /// skipped.
    pub skipped_system: Option<Vec<String>>,
    /// The run's device was throttled with write limits (`sut.throttle`, or a container's
    /// blkio limit `environment.io`); `Some(false)`: throttled, reads only.
    pub throttle_limits_writes: Option<bool>,
    /// Bytes of writes the throttle's (or the container's) blkio cgroup was charged over the
    /// timed region (the writes the limits applied to).
    pub throttle_charged_write_bytes: Option<u64>,

    // --- Where it ran --------------------------------------------------------------------
    /// The execution environment (host, container, VM) and what its limits did; `None`:
    /// not recorded.
    pub environment: Option<EnvFacts>,
    /// Under MPI: the run's ranks (`None` for a run of one process).
    pub ranks: Option<RankFacts>,

    // --- The configuration ----------------------------------------------------------------
    /// The stopping rule's outcome; see the type's note.
    pub stopping: Option<StoppingOutcome>,
}

/// How long write passes took with and without the flush their figures leave out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UntimedFlush {
    /// The passes' timed regions, summed.
    pub timed_ns: u64,
    /// Their flushes after the timed regions, summed.
    pub flush_ns: u64,
}

/// What can be known before running (`iolab check EXPERIMENT.toml`): the workload's intent,
/// the dataset, the machine's memory and tunables, the storage's setup.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlanFacts {
    /// See [`RunFacts::dataset_advice`].
    pub dataset_advice: Option<DatasetAdvice>,
    pub access: Option<Access>,
    /// `procedure.drop_caches`, or O_DIRECT reads.
    pub reads_cold: Option<bool>,
    pub o_direct: Option<bool>,
    /// See [`RunFacts::cache_purged_each_pass`].
    pub cache_purged_each_pass: Option<bool>,
    pub sync_requested: Option<bool>,
    /// Which writes are meant to be durable.
    pub sync_scope: Option<SyncScope>,
    pub dataset_bytes: Option<u64>,
    pub mem_total_bytes: Option<u64>,
    /// `sut.cache_limit`, if any.
    pub cgroup_cache_limit_bytes: Option<u64>,
    /// See [`RunFacts::engine_memory_bytes`].
    pub engine_memory_bytes: Option<u64>,
    /// The workload's `time`, when it has one.
    pub duration_ns: Option<u64>,
    /// Width of the interval series the run will record (default 1 s).
    pub interval_ns: Option<u64>,
    /// The value the run will see (the tunable set by the experiment, or the machine's).
    pub dirty_expire_centisecs: Option<u64>,
    pub dirty_writeback_centisecs: Option<u64>,
    pub fs_type: Option<String>,
    pub device_name: Option<String>,
    pub is_loop: Option<bool>,
    /// For a loop device: it will be attached with direct I/O (`direct_io` of a loop image).
    pub loop_direct_io: Option<bool>,
    /// `sut.throttle` limits writes (`Some(false)`: throttled, reads only).
    pub throttle_limits_writes: Option<bool>,
    /// The environment the run will execute in, as planned (its kind, limits, a VM's cache
    /// mode and accelerator); nothing measured.
    pub environment: Option<EnvFacts>,
}

impl PlanFacts {
    /// The plan as the facts of a run that has not happened: what is planned is filled in,
    /// everything measured is unknown. The planned duration becomes `elapsed_ns`.
    pub fn to_run_facts(&self) -> RunFacts {
        RunFacts {
            dataset_advice: self.dataset_advice.clone(),
            access: self.access,
            reads_cold: self.reads_cold,
            o_direct: self.o_direct,
            cache_purged_each_pass: self.cache_purged_each_pass,
            sync_requested: self.sync_requested,
            sync_scope: self.sync_scope,
            elapsed_ns: self.duration_ns,
            planned_ns: self.duration_ns,
            dataset_bytes: self.dataset_bytes,
            mem_total_bytes: self.mem_total_bytes,
            cgroup_cache_limit_bytes: self.cgroup_cache_limit_bytes,
            engine_memory_bytes: self.engine_memory_bytes,
            device: DeviceFacts {
                name: self.device_name.clone(),
                is_loop: self.is_loop,
                loop_direct_io: self.loop_direct_io,
                ..DeviceFacts::default()
            },
            fs_type: self.fs_type.clone(),
            dirty_expire_centisecs: self.dirty_expire_centisecs,
            dirty_writeback_centisecs: self.dirty_writeback_centisecs,
            interval_ns: self.interval_ns,
            throttle_limits_writes: self.throttle_limits_writes,
            environment: self.environment.clone(),
            ..RunFacts::default()
        }
    }
}

/// A trailing interval short of its full width by at most width ÷ this still counts as full:
/// clock conversions round by nanoseconds, and a thousandth of an interval is no partial one.
pub const FULL_INTERVAL_SLACK_DIVISOR: u64 = 1000;

/// How many intervals of `width_ns` fit entirely into `elapsed_ns` (interval k covers
/// [k·width, (k+1)·width) from the start of the timed region), with the slack of
/// [`FULL_INTERVAL_SLACK_DIVISOR`]. `None` for a zero width.
pub fn full_intervals(elapsed_ns: u64, width_ns: u64) -> Option<u64> {
    (width_ns > 0)
        .then(|| elapsed_ns.saturating_add(width_ns / FULL_INTERVAL_SLACK_DIVISOR) / width_ns)
}

impl RunFacts {
    /// [`Self::interval_ops`] without the intervals the run did not fill: a trailing partial
    /// interval (the run ended inside it) is left out, and so is anything past `elapsed_ns`.
    /// `None` unless the series, `elapsed_ns` and a non-zero `interval_ns` are known — which
    /// intervals are full cannot be told without them.
    pub fn full_interval_ops(&self) -> Option<&[f64]> {
        let series = self.interval_ops.as_deref()?;
        let full = full_intervals(self.elapsed_ns?, self.interval_ns?)?;
        let full = usize::try_from(full).unwrap_or(usize::MAX);
        Some(&series[..series.len().min(full)])
    }

    /// The run reads: from the byte count when known, else from the access pattern.
    pub(crate) fn does_reads(&self) -> Option<bool> {
        match (self.app_read_bytes, self.access) {
            (Some(b), _) => Some(b > 0),
            (None, Some(a)) => Some(a != Access::Write),
            (None, None) => None,
        }
    }

    /// The run writes: from the byte count when known, else from the access pattern.
    pub(crate) fn does_writes(&self) -> Option<bool> {
        match (self.app_write_bytes, self.access) {
            (Some(b), _) => Some(b > 0),
            (None, Some(a)) => Some(a != Access::Read),
            (None, None) => None,
        }
    }

    /// The memory that could cache the dataset: min(MemTotal, cgroup limit) of those known.
    pub(crate) fn cache_capacity_bytes(&self) -> Option<u64> {
        match (self.mem_total_bytes, self.cgroup_cache_limit_bytes) {
            (Some(m), Some(c)) => Some(m.min(c)),
            (m, c) => m.or(c),
        }
    }

    /// The engine's CPU time and where it came from (`task-clock` preferred).
    pub(crate) fn engine_cpu_ns(&self) -> Option<(u64, &'static str)> {
        self.engine_task_clock_ns
            .map(|ns| (ns, "task-clock"))
            .or(self.engine_usr_sys_ns.map(|ns| (ns, "usr+sys")))
    }

    /// The run directory is on tmpfs (or ramfs): there is no block device under it.
    pub(crate) fn on_memory_fs(&self) -> Option<bool> {
        self.fs_type
            .as_deref()
            .map(|t| matches!(t, "tmpfs" | "ramfs"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_facts_fill_the_planned_part_only() {
        let plan = PlanFacts {
            access: Some(Access::Write),
            sync_scope: Some(SyncScope::EachWrite),
            duration_ns: Some(30_000_000_000),
            is_loop: Some(true),
            loop_direct_io: Some(false),
            fs_type: Some("ext4".into()),
            ..PlanFacts::default()
        };
        let f = plan.to_run_facts();
        assert_eq!(f.elapsed_ns, Some(30_000_000_000));
        assert_eq!(f.sync_scope, Some(SyncScope::EachWrite));
        assert_eq!(f.device.is_loop, Some(true));
        assert_eq!(f.device.loop_direct_io, Some(false));
        assert_eq!(f.device.write_bytes, None);
        assert_eq!(f.app_write_bytes, None);
        assert_eq!(f.does_writes(), Some(true));
        assert_eq!(f.does_reads(), Some(false));
    }

    #[test]
    fn the_planned_environment_is_carried_and_partial_json_leaves_the_rest_unknown() {
        let plan: PlanFacts =
            serde_json::from_str(r#"{"environment": {"kind": "vm", "vm_accel": "tcg"}}"#).unwrap();
        let env = plan.to_run_facts().environment.expect("carried");
        assert_eq!(env.kind, "vm");
        assert_eq!(env.vm_accel.as_deref(), Some("tcg"));
        assert_eq!(env.vm_cache, None);
        assert_eq!(env.cpu_throttled_periods, None);
        assert_eq!(PlanFacts::default().to_run_facts().environment, None);
    }

    #[test]
    fn a_trailing_partial_interval_is_not_full() {
        // The review's run: 4.256 s in 1 s intervals, the 181 covers 0.256 s.
        let mut f = RunFacts {
            interval_ops: Some(vec![737.0, 729.0, 1464.0, 985.0, 181.0]),
            interval_ns: Some(1_000_000_000),
            elapsed_ns: Some(4_256_023_069),
            ..RunFacts::default()
        };
        assert_eq!(
            f.full_interval_ops(),
            Some(&[737.0, 729.0, 1464.0, 985.0][..])
        );
        // Exactly five intervals' time, or a hair (< 1/1000 of the width) short: all full.
        f.elapsed_ns = Some(5_000_000_000);
        assert_eq!(f.full_interval_ops().map(<[f64]>::len), Some(5));
        f.elapsed_ns = Some(4_999_000_000);
        assert_eq!(f.full_interval_ops().map(<[f64]>::len), Some(5));
        f.elapsed_ns = Some(4_998_999_999);
        assert_eq!(f.full_interval_ops().map(<[f64]>::len), Some(4));
        // More time than intervals: every recorded interval is full.
        f.elapsed_ns = Some(9_000_000_000);
        assert_eq!(f.full_interval_ops().map(<[f64]>::len), Some(5));
        // A run shorter than one interval has no full one.
        f.elapsed_ns = Some(9_000_000);
        assert_eq!(f.full_interval_ops(), Some(&[][..]));
        // Unknown elapsed time or width: cannot tell.
        f.elapsed_ns = None;
        assert_eq!(f.full_interval_ops(), None);
        f.elapsed_ns = Some(5_000_000_000);
        f.interval_ns = Some(0);
        assert_eq!(f.full_interval_ops(), None);
        assert_eq!(full_intervals(1_250_000_000, 1_000_000_000), Some(1));
        assert_eq!(full_intervals(u64::MAX, 1), Some(u64::MAX));
    }

    #[test]
    fn byte_counts_win_over_the_access_pattern() {
        let f = RunFacts {
            access: Some(Access::Mixed),
            app_read_bytes: Some(0),
            ..RunFacts::default()
        };
        assert_eq!(f.does_reads(), Some(false));
        assert_eq!(f.does_writes(), Some(true));
        assert_eq!(RunFacts::default().does_reads(), None);
    }

    #[test]
    fn cache_capacity_is_the_smaller_known_limit() {
        let mut f = RunFacts {
            mem_total_bytes: Some(8 << 30),
            ..RunFacts::default()
        };
        assert_eq!(f.cache_capacity_bytes(), Some(8 << 30));
        f.cgroup_cache_limit_bytes = Some(256 << 20);
        assert_eq!(f.cache_capacity_bytes(), Some(256 << 20));
        f.cgroup_cache_limit_bytes = Some(9_223_372_036_854_771_712); // v1 "unlimited"
        assert_eq!(f.cache_capacity_bytes(), Some(8 << 30));
        f.mem_total_bytes = None;
        f.cgroup_cache_limit_bytes = Some(64 << 20);
        assert_eq!(f.cache_capacity_bytes(), Some(64 << 20));
    }

    #[test]
    fn facts_round_trip_through_json_with_missing_fields_unknown() {
        let f: RunFacts = serde_json::from_str(r#"{"app_read_bytes": 4096}"#).unwrap();
        assert_eq!(f.app_read_bytes, Some(4096));
        assert_eq!(f.device, DeviceFacts::default());
        let back: RunFacts = serde_json::from_value(serde_json::to_value(&f).unwrap()).unwrap();
        assert_eq!(back, f);
    }
}
