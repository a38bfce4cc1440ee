//! One rank's IO500 run: the data directory and the mdtest trees made untimed, then IO500's
//! twelve phases in its order inside one timed region, each started at a barrier of all
//! ranks and timed from its release, with the page cache dropped between them when the run
//! drops caches; the files removed afterwards. The ior and mdtest phases are those kinds'
//! own ([`iolab_ior::one_phase`], [`iolab_mdtest::Layout`]); the find is a walk of the data
//! directory here.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use iolab_engine::usage::Usage;
use iolab_ior::{Access, IorError, IorPlan};
use iolab_kind::{Ranks, RunCtx, RunFailure};
use iolab_mdtest::{Layout, MdtestError, Phase as Md};

use crate::options::Io500Plan;
use crate::phases::{PhaseDef, Step, Workload, PHASES, TIMESTAMP_AFTER};

/// The width of the find's progress series (the ior and mdtest phases' are those kinds').
pub const BUCKET_NS: u64 = 10_000_000;

/// The find's size criterion: mdtest-hard's files.
const FIND_SIZE: u64 = iolab_mdtest::HARD_BYTES;
/// The find's name criterion (IO500's `-name "*01*"`).
const FIND_NAME: &[u8] = b"01";

/// What one rank measured of one phase. Times are nanoseconds after the release of the
/// phase's barrier on this rank.
#[derive(Debug, Clone)]
pub struct PhaseOutcome {
    pub def: &'static PhaseDef,
    /// Bytes (bandwidth phases) or items (metadata phases; the find: files looked at).
    pub work: u64,
    /// Transfers of a bandwidth phase.
    pub ops: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// (operations, bytes) per `width_ns` from the release.
    pub progress: Vec<(u64, u64)>,
    pub width_ns: u64,
    /// Reads whose data was not the stamped writer's (ior reads).
    pub stamp_errors: u64,
    /// Files the find matched.
    pub found: u64,
}

/// One rank's run.
#[derive(Debug, Clone)]
pub struct Io500Result {
    pub plan: Io500Plan,
    pub rank: usize,
    pub size: usize,
    pub phases: Vec<PhaseOutcome>,
    /// The timed region on this rank.
    pub elapsed_ns: u64,
    pub cpu: iolab_kind::record::Cpu,
}

/// Why a run failed on this rank.
#[derive(Debug)]
pub enum Io500Error {
    Ior(&'static str, IorError),
    Mdtest(&'static str, MdtestError),
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    Ranks(RunFailure),
    Interrupted,
}

impl Io500Error {
    fn io<'a>(
        what: &'static str,
        path: &'a Path,
    ) -> impl FnOnce(std::io::Error) -> Io500Error + 'a {
        move |source| Io500Error::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }

    /// The run's failure: what went wrong in which phase, and what to do.
    pub fn failure(&self) -> RunFailure {
        let space = |e: Option<i32>| {
            (e == Some(libc::ENOSPC)).then(|| {
                "the target is full: give a smaller `scale` (or smaller sizes), or a larger \
                 target"
                    .to_string()
            })
        };
        match self {
            Io500Error::Ior(phase, e) => match e {
                IorError::Io { call, path, source } => {
                    RunFailure::failed(format!("{phase}: {call} {}: {source}", path.display()))
                        .hint(space(source.raw_os_error()))
                }
                IorError::Short { path, offset } => RunFailure::failed(format!(
                    "{phase}: {} ends before offset {offset}: something else changed it",
                    path.display()
                )),
                IorError::Interrupted => Io500Error::Interrupted.failure(),
                IorError::Ranks(f) => f.clone(),
            },
            Io500Error::Mdtest(_, MdtestError::Interrupted) => Io500Error::Interrupted.failure(),
            Io500Error::Mdtest(_, MdtestError::Ranks(m)) => RunFailure::failed(m.clone()),
            Io500Error::Mdtest(phase, e) => {
                RunFailure::failed(format!("{phase}: {e}")).hint(e.hint().map(str::to_string))
            }
            Io500Error::Io { what, path, source } => {
                RunFailure::failed(format!("{what} {}: {source}", path.display()))
                    .hint(space(source.raw_os_error()))
            }
            Io500Error::Ranks(f) => f.clone(),
            Io500Error::Interrupted => RunFailure {
                interrupted: true,
                ..RunFailure::failed("interrupted")
            },
        }
    }
}

fn synced(r: Result<(), RunFailure>) -> Result<(), Io500Error> {
    r.map_err(Io500Error::Ranks)
}

/// The directories of the four workloads.
fn workload_dirs(plan: &Io500Plan) -> [&Path; 4] {
    [
        &plan.ior_easy.dir,
        &plan.ior_hard.dir,
        &plan.mdtest_easy.dir,
        &plan.mdtest_hard.dir,
    ]
}

/// Runs `plan` as rank `run.ranks.rank()`, calling the hooks around the timed region.
pub fn run(plan: &Io500Plan, run: &mut RunCtx<'_>) -> Result<Io500Result, Io500Error> {
    let ranks = run.ranks;
    let rank = ranks.rank();
    if rank == 0 {
        for d in workload_dirs(plan) {
            std::fs::create_dir_all(d).map_err(Io500Error::io("cannot make the directory", d))?;
        }
    }
    synced(ranks.barrier())?;
    let result = timed(plan, run);
    // The files go whatever happened: each rank its own ior-easy file, rank 0 the rest.
    let own = plan.ior_easy.file_of(rank);
    let _ = std::fs::remove_file(&own);
    match result {
        Ok(out) => {
            synced(ranks.barrier())?;
            if rank == 0 {
                std::fs::remove_dir_all(&plan.data)
                    .map_err(Io500Error::io("cannot remove the directory", &plan.data))?;
                std::fs::remove_file(&plan.timestamp)
                    .map_err(Io500Error::io("cannot remove", &plan.timestamp))?;
            }
            Ok(out)
        }
        Err(e) => {
            if rank == 0 {
                // Best effort: the run's failure is what the user needs to see.
                let _ = std::fs::remove_dir_all(&plan.data);
                let _ = std::fs::remove_file(&plan.timestamp);
            }
            Err(e)
        }
    }
}

/// The trees, the timed region with every phase, and the trees' removal.
fn timed(plan: &Io500Plan, run: &mut RunCtx<'_>) -> Result<Io500Result, Io500Error> {
    let ranks = run.ranks;
    let (rank, size, per_node) = (ranks.rank(), ranks.size(), ranks.ranks_per_node());
    let mut easy =
        Layout::make(&plan.mdtest_easy, ranks).map_err(|e| Io500Error::Mdtest("mdtest-easy", e))?;
    let mut hard =
        Layout::make(&plan.mdtest_hard, ranks).map_err(|e| Io500Error::Mdtest("mdtest-hard", e))?;
    run.hooks.run_files(vec![plan.data.clone()]);
    run.hooks.timed_start();
    let started = Instant::now();
    let usage = Usage::thread();
    let mut phases: Vec<PhaseOutcome> = Vec::with_capacity(PHASES.len());
    // Transfers each rank wrote, per ior workload: a read reads what its source wrote.
    let mut written: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    // Items each mdtest workload created (stonewalling may have made them fewer).
    let mut created = [plan.mdtest_easy.items, plan.mdtest_hard.items];
    let mut newer_than = SystemTime::UNIX_EPOCH;
    for def in &PHASES {
        if !phases.is_empty() {
            // IO500 drops the caches before every phase: here, between the previous phase's
            // end and this one's barrier, on every rank.
            synced(ranks.barrier())?;
            run.hooks.between_phases();
        }
        if run.cancel.load(Ordering::Relaxed) {
            return Err(Io500Error::Interrupted);
        }
        let outcome = match def.step {
            Step::Ior(w, access) => {
                let (ior, slot) = match w {
                    Workload::IorEasy => (&plan.ior_easy, 0),
                    _ => (&plan.ior_hard, 1),
                };
                let target = match access {
                    Access::Write => None,
                    Access::Read => written[slot]
                        .get(ior.read_source(rank, size, per_node))
                        .copied(),
                };
                let p = iolab_ior::one_phase(&phase_plan(ior, access), access, run, target)
                    .map_err(|e| Io500Error::Ior(def.name, e))?;
                if access == Access::Write {
                    written[slot] = gather(ranks, p.ops)?;
                }
                ior_outcome(def, &p)
            }
            Step::Mdtest(w, phase) => {
                let (md, layout, slot) = match w {
                    Workload::MdtestEasy => (&plan.mdtest_easy, &mut easy, 0),
                    _ => (&plan.mdtest_hard, &mut hard, 1),
                };
                let p = layout
                    .phase(md, phase, run, created[slot])
                    .map_err(|e| Io500Error::Mdtest(def.name, e))?;
                if phase == Md::Create {
                    created[slot] = p.items;
                }
                PhaseOutcome {
                    def,
                    work: p.items,
                    ops: p.items,
                    start_ns: p.start_ns,
                    end_ns: p.end_ns,
                    progress: p.buckets.iter().map(|&n| (n, 0)).collect(),
                    width_ns: iolab_mdtest::BUCKET_NS,
                    stamp_errors: 0,
                    found: 0,
                }
            }
            Step::Find => find(def, plan, run, newer_than)?,
        };
        phases.push(outcome);
        if def.name == TIMESTAMP_AFTER {
            newer_than = timestamp(plan, ranks)?;
        }
    }
    let elapsed_ns = started.elapsed().as_nanos() as u64;
    let cpu = (Usage::thread() - usage).cpu();
    run.hooks.timed_end();
    easy.remove(&plan.mdtest_easy, ranks)
        .map_err(|e| Io500Error::Mdtest("mdtest-easy", e))?;
    hard.remove(&plan.mdtest_hard, ranks)
        .map_err(|e| Io500Error::Mdtest("mdtest-hard", e))?;
    Ok(Io500Result {
        plan: plan.clone(),
        rank,
        size,
        phases,
        elapsed_ns,
        cpu,
    })
}

/// The ior plan of one phase: IO500 stonewalls the writes only (its reads read everything
/// the writes wrote, `-D` is not on their command line).
fn phase_plan(ior: &IorPlan, access: Access) -> IorPlan {
    match access {
        Access::Write => ior.clone(),
        Access::Read => IorPlan {
            stonewall: None,
            wear_out: false,
            ..ior.clone()
        },
    }
}

fn gather(ranks: &dyn Ranks, v: u64) -> Result<Vec<u64>, Io500Error> {
    let all = ranks
        .all_gather(&v.to_le_bytes())
        .map_err(Io500Error::Ranks)?;
    Ok(all
        .iter()
        .map(|b| u64::from_le_bytes(b.as_slice().try_into().unwrap_or([0; 8])))
        .collect())
}

fn ior_outcome(def: &'static PhaseDef, p: &iolab_ior::PhaseResult) -> PhaseOutcome {
    PhaseOutcome {
        def,
        work: p.bytes,
        ops: p.ops,
        start_ns: p.start_ns,
        end_ns: p.end_ns,
        progress: p.progress.iter().map(|b| (b.ops, b.bytes)).collect(),
        width_ns: iolab_ior::run::PROGRESS_WIDTH.as_nanos() as u64,
        stamp_errors: p.stamp_errors,
        found: 0,
    }
}

/// IO500's timestamp phase: rank 0 makes the file the find's `-newer` compares with; every
/// rank learns its time.
fn timestamp(plan: &Io500Plan, ranks: &dyn Ranks) -> Result<SystemTime, Io500Error> {
    let at = &plan.timestamp;
    if ranks.rank() == 0 {
        std::fs::File::create(at).map_err(Io500Error::io("cannot create", at))?;
        // File times are a clock tick coarse (up to 10 ms): files of the next phases made in
        // the same tick would not be newer than the timestamp, as they are in IO500's long
        // phases.
        std::thread::sleep(Duration::from_millis(20));
    }
    synced(ranks.barrier())?;
    std::fs::metadata(at)
        .and_then(|m| m.modified())
        .map_err(Io500Error::io("cannot stat", at))
}

/// Whether rank `rank` of `size` looks at entry `name`: the entries of each directory are
/// shared out by a hash of their name, so every rank reads every directory and examines its
/// share of the entries (pfind's hashed parallel walk of one large directory).
fn mine(name: &[u8], rank: usize, size: usize) -> bool {
    // FNV-1a: the same on every rank and host.
    let h = name.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    h % size.max(1) as u64 == rank as u64
}

/// IO500's find: a walk of the data directory counting the files newer than the timestamp,
/// of mdtest-hard's size, with `01` in their name; its rate is every file looked at over the
/// time, as IO500 rates pfind.
fn find(
    def: &'static PhaseDef,
    plan: &Io500Plan,
    run: &mut RunCtx<'_>,
    newer_than: SystemTime,
) -> Result<PhaseOutcome, Io500Error> {
    let ranks = run.ranks;
    let (rank, size) = (ranks.rank(), ranks.size());
    synced(ranks.barrier())?;
    let release = Instant::now();
    let mut progress: Vec<(u64, u64)> = Vec::new();
    let (mut total, mut found) = (0u64, 0u64);
    let mut dirs = vec![plan.data.clone()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).map_err(Io500Error::io("cannot read", &dir))?;
        for entry in entries {
            let entry = entry.map_err(Io500Error::io("cannot read", &dir))?;
            let kind = entry
                .file_type()
                .map_err(Io500Error::io("cannot stat", &entry.path()))?;
            if kind.is_dir() {
                dirs.push(entry.path());
                continue;
            }
            let name = entry.file_name();
            if !mine(name.as_bytes(), rank, size) {
                continue;
            }
            total += 1;
            if matches_name(&name) {
                // The stat only for a name that matches: the cheap test first, as pfind.
                let m = entry
                    .metadata()
                    .map_err(Io500Error::io("cannot stat", &entry.path()))?;
                if m.len() == FIND_SIZE && m.modified().is_ok_and(|t| t > newer_than) {
                    found += 1;
                }
            }
            let b = (release.elapsed().as_nanos() as u64 / BUCKET_NS) as usize;
            if b >= progress.len() {
                progress.resize(b + 1, (0, 0));
            }
            progress[b].0 += 1;
            if total & 1023 == 0 && run.cancel.load(Ordering::Relaxed) {
                return Err(Io500Error::Interrupted);
            }
        }
    }
    let end_ns = release.elapsed().as_nanos() as u64;
    Ok(PhaseOutcome {
        def,
        work: total,
        ops: total,
        start_ns: 0,
        end_ns,
        progress,
        width_ns: BUCKET_NS,
        stamp_errors: 0,
        found,
    })
}

fn matches_name(name: &OsStr) -> bool {
    name.as_bytes()
        .windows(FIND_NAME.len())
        .any(|w| w == FIND_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_one_ranks() {
        for size in 1..5 {
            for i in 0..200u32 {
                let name = format!("file.mdtest.{}.{i}", i % 3);
                let owners = (0..size)
                    .filter(|&r| mine(name.as_bytes(), r, size))
                    .count();
                assert_eq!(owners, 1, "{name} of {size}");
            }
        }
    }

    #[test]
    fn only_the_writes_are_stonewalled() {
        let plan = crate::Io500Spec::with_defaults("/d".into(), 1)
            .validate()
            .unwrap();
        for ior in [&plan.ior_easy, &plan.ior_hard] {
            let w = phase_plan(ior, Access::Write);
            assert_eq!(w.stonewall, Some(crate::IO500_STONEWALL));
            assert!(w.wear_out);
            let r = phase_plan(ior, Access::Read);
            assert_eq!((r.stonewall, r.wear_out), (None, false));
            assert_eq!(
                (r.transfer, r.segments, r.reorder),
                (ior.transfer, ior.segments, true)
            );
        }
    }

    #[test]
    fn the_name_test_is_io500s_glob() {
        assert!(matches_name(OsStr::new("file.mdtest.1.101")));
        assert!(matches_name(OsStr::new("01")));
        assert!(!matches_name(OsStr::new("file.mdtest.0.10")));
    }
}
