//! Containers as an execution environment: any [`Command`] run inside cgroups with limits
//! and in new mount, pid, net, uts and ipc namespaces, the program itself PID 1.
//!
//! A [`ContainerSpec`] says what to limit; [`crate::Sut::prepare`] creates one cgroup per
//! hierarchy the container needs, named `iolab-ctr-…` inside iolab's own cgroup of that
//! hierarchy, journals each before making it ([`crate::Entry::Container`]), writes the
//! limits and reads them back; [`Container::spawn`] (or [`Container::command`]) then starts
//! a program inside. Teardown and `iolab recover` kill every process left in the cgroups and
//! remove them; namespaces and their mounts vanish with their processes.
//!
//! Each controller is taken from a cgroup v1 hierarchy where one is mounted, else from
//! cgroup v2 where the controller is enabled for iolab's children (`cgroup.subtree_control`
//! of iolab's own v2 cgroup). A controller no limit needs (usage only) is left out when the
//! machine has neither. The v2 files are written by the same code as v1's, from
//! [`limit_files`]; machines with v1 hierarchies exercise only the v1 side.
//!
//! How a program starts (in the child of `fork`, so only async-signal-safe calls, every
//! string made before): it sets `PR_SET_PDEATHSIG(SIGKILL)`, joins each cgroup
//! (`cgroup.procs`), unshares the namespaces and forks once more. The grandchild is PID 1 of
//! the new pid namespace: it makes `/` a private mount, mounts a fresh proc, sets the
//! hostname, brings `lo` up, enters the rootfs if there is one, and execs the program. The
//! middle process waits for it and ends the same way (exit status, or the same signal), so
//! the caller's [`Child`] reports the program's status. A step that fails is reported as
//! [`Error::ContainerStart`] naming it.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::cgroup;
use crate::error::{Error, Result, SpecError};
use crate::journal::Entry;
use crate::session::Tx;
use crate::throttle::{self, Charged, Throttle};
use crate::util::{self, NAME_PREFIX};
use iolab_sys::{mountinfo, self_cgroup, DevT};

/// What the machine cannot apply of a [`ContainerSpec`]: the field as the user writes it
/// (`environment.cpuset`), what is wrong and, when there is advice, a hint.
pub type Problem = SpecError;

/// The field prefix of a container's settings in the experiment file.
const FIELD: &str = "environment";

/// The CFS period iolab sets: a quota of [`ContainerSpec::cpus`] CPUs is that much of it.
pub const CFS_PERIOD_US: u64 = 100_000;

/// The smallest CFS quota the kernel takes (1 ms), so the smallest `cpus` is 0.01.
const MIN_QUOTA_US: u64 = 1_000;

/// The smallest memory limit iolab sets: below it not even a shell starts.
pub const MIN_MEMORY: u64 = 4 << 20;

/// How long an undo waits for the killed processes of a container to leave its cgroup.
pub const KILL_WAIT: Duration = Duration::from_secs(5);

/// The namespaces a container's program gets, as `describe` names them.
pub const NAMESPACES: [&str; 5] = ["mnt", "pid", "net", "uts", "ipc"];

/// The name prefix of container cgroups (recovery kills processes only in these).
const CTR_PREFIX: &str = "iolab-ctr-";

/// What a container limits and what it sees. Every limit is optional; usage is recorded
/// without limits too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContainerSpec {
    /// A CFS quota in CPUs (0.5: 50 ms in every 100 ms period). Not a share: the quota is a
    /// ceiling, not proportional under load.
    pub cpus: Option<f64>,
    /// The CPUs the container may run on.
    pub cpuset: Option<Vec<u32>>,
    /// Memory limit in bytes (and of memory plus swap, so swap does not hide it).
    pub memory: Option<u64>,
    /// The most processes and threads.
    pub pids: Option<u64>,
    /// blkio limits on the run's device.
    pub io: Option<Throttle>,
    /// The container's hostname.
    pub hostname: String,
    /// A directory with a root filesystem to run in (`pivot_root`), with a fresh /proc,
    /// the host's /dev and the run's target directory bind-mounted at the same path.
    pub rootfs: Option<PathBuf>,
    /// With a rootfs: host paths bind-mounted at the same path inside (the directory of
    /// the program to run, for instance).
    pub keep_paths: Vec<PathBuf>,
}

impl Default for ContainerSpec {
    fn default() -> Self {
        ContainerSpec {
            cpus: None,
            cpuset: None,
            memory: None,
            pids: None,
            io: None,
            hostname: "iolab".into(),
            rootfs: None,
            keep_paths: Vec::new(),
        }
    }
}

/// A cgroup controller a container uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Controller {
    /// CFS quota.
    Cpu,
    /// CPU usage (v1; v2's `cpu.stat` is always there).
    Cpuacct,
    /// CPUs and memory nodes.
    Cpuset,
    /// Memory limit and usage.
    Memory,
    /// Process count.
    Pids,
    /// Block I/O limits and usage (v2: `io`).
    Blkio,
}

impl Controller {
    /// Every controller, in the order cgroups are created.
    pub const ALL: [Controller; 6] = [
        Controller::Cpu,
        Controller::Cpuacct,
        Controller::Cpuset,
        Controller::Memory,
        Controller::Pids,
        Controller::Blkio,
    ];

    /// Its v1 name (`super_options` of the hierarchy's mount).
    pub fn v1_name(self) -> &'static str {
        match self {
            Controller::Cpu => "cpu",
            Controller::Cpuacct => "cpuacct",
            Controller::Cpuset => "cpuset",
            Controller::Memory => "memory",
            Controller::Pids => "pids",
            Controller::Blkio => "blkio",
        }
    }

    /// Its v2 name (`cgroup.controllers`).
    pub fn v2_name(self) -> &'static str {
        match self {
            Controller::Cpu | Controller::Cpuacct => "cpu",
            Controller::Cpuset => "cpuset",
            Controller::Memory => "memory",
            Controller::Pids => "pids",
            Controller::Blkio => "io",
        }
    }

    /// A file every v1 cgroup of it has, the root included.
    fn v1_probe(self) -> &'static str {
        match self {
            Controller::Cpu => "cpu.cfs_quota_us",
            Controller::Cpuacct => "cpuacct.usage",
            Controller::Cpuset => "cpuset.cpus",
            Controller::Memory => "memory.limit_in_bytes",
            Controller::Pids => "cgroup.procs",
            Controller::Blkio => "blkio.throttle.read_bps_device",
        }
    }

    /// The setting that needs it, as the user writes it.
    fn field(self) -> String {
        let f = match self {
            Controller::Cpu => "cpus",
            Controller::Cpuacct => return FIELD.into(),
            Controller::Cpuset => "cpuset",
            Controller::Memory => "memory",
            Controller::Pids => "pids",
            Controller::Blkio => "io",
        };
        format!("{FIELD}.{f}")
    }
}

impl ContainerSpec {
    /// Whether the spec sets a limit that needs `c` (without one, `c` only records usage
    /// and is left out where the machine lacks it).
    fn needs(&self, c: Controller) -> bool {
        match c {
            Controller::Cpu => self.cpus.is_some(),
            Controller::Cpuacct => false,
            Controller::Cpuset => self.cpuset.is_some(),
            Controller::Memory => self.memory.is_some(),
            Controller::Pids => self.pids.is_some(),
            Controller::Blkio => self.io.is_some(),
        }
    }

    /// What this machine cannot apply, each with the field it is about: a controller a
    /// limit needs that is neither a v1 hierarchy nor enabled in v2, a CPU that is not
    /// online, out-of-range values, a rootfs that is not a directory. Changes nothing; the
    /// runner calls it when it loads an experiment, so bad input stops before anything is
    /// created.
    pub fn machine_problems(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        let field = |f: &str| format!("{FIELD}.{f}");
        let online = online_cpus();
        if let Some(c) = self.cpus {
            if !c.is_finite() || c <= 0.0 {
                out.push(
                    SpecError::value(field("cpus"), format!("{c} CPUs is no quota"))
                        .hint(Some("give a number above 0: 0.5 is half a CPU".into())),
                );
            } else if c < MIN_QUOTA_US as f64 / CFS_PERIOD_US as f64 {
                out.push(SpecError::value(
                    field("cpus"),
                    format!(
                        "{c} CPUs is below the kernel's smallest quota, 0.01 (1 ms per 100 ms)"
                    ),
                ));
            } else if let Some(n) = online.as_ref().map(Vec::len) {
                if c > n as f64 {
                    out.push(
                        SpecError::value(
                            field("cpus"),
                            format!("{c} CPUs is more than the {n} online CPUs"),
                        )
                        .hint(Some(format!("at most {n}, or leave cpus out for no quota"))),
                    );
                }
            }
        }
        if let Some(set) = &self.cpuset {
            if set.is_empty() {
                out.push(SpecError::value(field("cpuset"), "no CPU listed"));
            }
            if let Some(on) = &online {
                let off: Vec<String> = set
                    .iter()
                    .filter(|c| !on.contains(c))
                    .map(u32::to_string)
                    .collect();
                if !off.is_empty() {
                    out.push(
                        SpecError::value(
                            field("cpuset"),
                            format!("CPU {} is not online", off.join(", ")),
                        )
                        .hint(Some(format!(
                            "online CPUs: {} (/sys/devices/system/cpu/online)",
                            cpu_list(on)
                        ))),
                    );
                }
            }
        }
        if let Some(m) = self.memory {
            if m < MIN_MEMORY {
                out.push(
                    SpecError::value(
                        field("memory"),
                        format!(
                            "{} is too little to start a program",
                            iolab_util::format_bytes(m)
                        ),
                    )
                    .hint(Some(format!(
                        "at least {}",
                        iolab_util::format_bytes(MIN_MEMORY)
                    ))),
                );
            }
        }
        if self.pids == Some(0) {
            out.push(
                SpecError::value(field("pids"), "0 processes: not even the program could run")
                    .hint(Some("at least 1".into())),
            );
        }
        if let Some(t) = &self.io {
            let set = [t.read_bps, t.write_bps, t.read_iops, t.write_iops];
            if set.iter().all(Option::is_none) {
                out.push(SpecError::value(
                    field("io"),
                    "no limit given (read_bps, write_bps, read_iops, write_iops)",
                ));
            }
            if set.contains(&Some(0)) {
                out.push(SpecError::value(
                    field("io"),
                    "a limit of 0 (blkio takes 0 as no limit)",
                ));
            }
        }
        if self.hostname.is_empty() || self.hostname.len() > 64 || self.hostname.contains('\0') {
            out.push(SpecError::value(
                field("hostname"),
                format!("{:?} is not a hostname (1 to 64 bytes)", self.hostname),
            ));
        }
        match &self.rootfs {
            Some(r) if !r.is_absolute() || !r.is_dir() => {
                out.push(SpecError::value(
                    field("rootfs"),
                    format!(
                        "{} is not a directory (an absolute path to a root filesystem)",
                        r.display()
                    ),
                ));
            }
            None if !self.keep_paths.is_empty() => out.push(SpecError::value(
                field("keep_paths"),
                "keep_paths are bind-mounted into a rootfs, and there is none",
            )),
            _ => {}
        }
        for p in &self.keep_paths {
            if !p.is_absolute() || !p.exists() {
                out.push(SpecError::value(
                    field("keep_paths"),
                    format!("{} does not exist (an absolute host path)", p.display()),
                ));
            }
        }
        for c in Controller::ALL.into_iter().filter(|c| self.needs(*c)) {
            if let Err(reason) = locate(c) {
                out.push(SpecError::value(c.field(), reason).hint(Some(format!(
                    "mount a v1 {} hierarchy, enable {} in cgroup v2, or leave {} out",
                    c.v1_name(),
                    c.v2_name(),
                    c.field()
                ))));
            }
        }
        out
    }
}

/// The online CPUs (`/sys/devices/system/cpu/online`, `0-3,6`).
fn online_cpus() -> Option<Vec<u32>> {
    parse_cpu_list(&std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?)
}

/// `0-3,6` → [0, 1, 2, 3, 6].
fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<u32>().ok()?..=b.parse::<u32>().ok()?),
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// [0, 1, 3] → `0,1,3` (the kernel takes lists; it shows ranges).
fn cpu_list(cpus: &[u32]) -> String {
    cpus.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Where a controller's cgroup goes: the parent directory and whether it is cgroup v2.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    parent: PathBuf,
    v2: bool,
}

/// The parent for a container's cgroup of `c`: iolab's own v1 cgroup of that controller,
/// else iolab's own v2 cgroup when `c` is enabled for its children; else why not.
fn locate(c: Controller) -> Result<Place, String> {
    if let Ok(parent) = cgroup::v1_parent_dir(c.v1_name(), c.v1_probe(), "a container") {
        return Ok(Place { parent, v2: false });
    }
    let v1: Vec<String> = Controller::ALL
        .iter()
        .filter(|o| cgroup::v1_parent_dir(o.v1_name(), o.v1_probe(), "").is_ok())
        .map(|o| o.v1_name().to_owned())
        .collect();
    let have = if v1.is_empty() {
        "the machine has no cgroup v1 hierarchy".to_owned()
    } else {
        format!(
            "the machine has cgroup v1 hierarchies for {} but none for {}",
            v1.join(", "),
            c.v1_name()
        )
    };
    match v2_dir() {
        None => Err(format!("{have}, and no cgroup v2 hierarchy is mounted")),
        Some(dir) => {
            let ctl = dir.join("cgroup.subtree_control");
            let enabled = std::fs::read_to_string(&ctl).unwrap_or_default();
            if enabled.split_whitespace().any(|e| e == c.v2_name()) {
                Ok(Place {
                    parent: dir,
                    v2: true,
                })
            } else {
                Err(format!(
                    "{have}; v2's {} controller is not enabled ({} has: {})",
                    c.v2_name(),
                    ctl.display(),
                    if enabled.trim().is_empty() {
                        "nothing"
                    } else {
                        enabled.trim()
                    }
                ))
            }
        }
    }
}

/// iolab's own cgroup v2 directory (`0::/path` under the cgroup2 mount).
fn v2_dir() -> Option<PathBuf> {
    let mount = mountinfo::read()
        .ok()?
        .into_iter()
        .find(|m| m.fs_type == "cgroup2")?;
    let own = self_cgroup::read()
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("0::").map(str::to_owned))?;
    let rel = Path::new(&own)
        .strip_prefix(&mount.root)
        .ok()?
        .to_path_buf();
    Some(mount.mount_point.join(rel))
}

/// A cgroup directory of a container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CgroupDir {
    /// The directory.
    pub path: PathBuf,
    /// Whether it is cgroup v2 (else a v1 hierarchy).
    pub v2: bool,
    /// The controllers iolab uses in it.
    pub controllers: Vec<Controller>,
}

/// One limit file to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitFile {
    /// The controller the file belongs to.
    pub controller: Controller,
    /// The file's name.
    pub file: &'static str,
    /// What to write.
    pub value: String,
    /// Written only when the file exists (swap accounting may be off).
    pub optional: bool,
}

/// The limit files of `spec`, in the order they must be written, for cgroup v1 or v2.
/// `dev`: the device `io` limits; `parent_cpuset`: the parent's (cpus, mems) — a v1
/// cpuset takes no task before both are set.
pub fn limit_files(
    spec: &ContainerSpec,
    v2: bool,
    dev: Option<DevT>,
    parent_cpuset: Option<(&str, &str)>,
) -> Vec<LimitFile> {
    let mut out = Vec::new();
    let mut add = |controller, file, value: String, optional| {
        out.push(LimitFile {
            controller,
            file,
            value,
            optional,
        })
    };
    let quota = spec
        .cpus
        .map(|c| ((c * CFS_PERIOD_US as f64).round() as u64).max(MIN_QUOTA_US));
    let cpus = spec.cpuset.as_deref().map(cpu_list);
    if v2 {
        if let Some(q) = quota {
            add(
                Controller::Cpu,
                "cpu.max",
                format!("{q} {CFS_PERIOD_US}"),
                false,
            );
        }
        if let Some(c) = cpus {
            add(Controller::Cpuset, "cpuset.cpus", c, false);
        }
        if let Some(m) = spec.memory {
            add(Controller::Memory, "memory.max", m.to_string(), false);
            add(Controller::Memory, "memory.swap.max", "0".into(), true);
        }
        if let Some(p) = spec.pids {
            add(Controller::Pids, "pids.max", p.to_string(), false);
        }
        if let (Some(t), Some(dev)) = (&spec.io, dev) {
            let keys: Vec<String> = [
                ("rbps", t.read_bps),
                ("wbps", t.write_bps),
                ("riops", t.read_iops),
                ("wiops", t.write_iops),
            ]
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
            .collect();
            add(
                Controller::Blkio,
                "io.max",
                format!("{dev} {}", keys.join(" ")),
                false,
            );
        }
        return out;
    }
    if let Some((parent_cpus, parent_mems)) = parent_cpuset {
        add(
            Controller::Cpuset,
            "cpuset.mems",
            parent_mems.to_owned(),
            false,
        );
        add(
            Controller::Cpuset,
            "cpuset.cpus",
            cpus.unwrap_or_else(|| parent_cpus.to_owned()),
            false,
        );
    }
    if let Some(q) = quota {
        add(
            Controller::Cpu,
            "cpu.cfs_period_us",
            CFS_PERIOD_US.to_string(),
            false,
        );
        add(Controller::Cpu, "cpu.cfs_quota_us", q.to_string(), false);
    }
    if let Some(m) = spec.memory {
        // memory+swap may not be below memory: memory first.
        add(
            Controller::Memory,
            "memory.limit_in_bytes",
            m.to_string(),
            false,
        );
        add(
            Controller::Memory,
            "memory.memsw.limit_in_bytes",
            m.to_string(),
            true,
        );
    }
    if let Some(p) = spec.pids {
        add(Controller::Pids, "pids.max", p.to_string(), false);
    }
    if let (Some(t), Some(dev)) = (&spec.io, dev) {
        for (file, v) in t.files() {
            add(Controller::Blkio, file, format!("{dev} {v}"), false);
        }
    }
    out
}

/// A container's cgroups, ready to run programs in ([`Container::spawn`]).
#[derive(Debug, Clone)]
pub struct Container {
    /// What was asked for.
    pub spec: ContainerSpec,
    /// Its cgroups (one per v1 hierarchy; one v2 directory).
    pub dirs: Vec<CgroupDir>,
    /// The device whose I/O is limited and counted (a partition's whole disk).
    pub dev: Option<DevT>,
    /// The limit files as the kernel holds them (read back after writing: it rounds).
    pub limits: BTreeMap<String, String>,
    /// The run's target directory (bind-mounted into a rootfs).
    pub target: PathBuf,
    failure: Arc<FailPage>,
}

/// Creates the container's cgroups for a run whose files are in `target` (journalled,
/// before each is made) and writes the limits.
pub(crate) fn create(
    tx: &mut Tx<'_>,
    spec: &ContainerSpec,
    dev: Option<DevT>,
    target: &Path,
) -> Result<Container> {
    if spec.io.is_some() && dev.is_none() {
        return Err(Error::spec(
            Controller::Blkio.field(),
            "the target has no block device to limit; use a loop_image or block_device target",
        ));
    }
    let mut places: Vec<(Place, Vec<Controller>)> = Vec::new();
    for c in Controller::ALL {
        let wanted = spec.needs(c) || (c != Controller::Blkio || dev.is_some());
        if !wanted {
            continue;
        }
        let place = match locate(c) {
            Ok(p) => p,
            Err(_) if !spec.needs(c) => continue,
            Err(reason) => return Err(Error::spec(c.field(), reason)),
        };
        // Joined v1 hierarchies (cpu,cpuacct) and v2 are one directory.
        match places.iter_mut().find(|(p, _)| *p == place) {
            Some((_, cs)) => cs.push(c),
            None => places.push((place, vec![c])),
        }
    }
    let name = format!("{CTR_PREFIX}{}", &util::unique_name()[NAME_PREFIX.len()..]);
    let failure = Arc::new(FailPage::new()?);
    let mut ctr = Container {
        spec: spec.clone(),
        dirs: Vec::new(),
        dev,
        limits: BTreeMap::new(),
        target: target.to_owned(),
        failure,
    };
    for (place, controllers) in places {
        let path = place.parent.join(&name);
        let seq = tx.record(Entry::Container { path: path.clone() })?;
        if let Err(e) = std::fs::create_dir(&path) {
            tx.abandon(seq);
            return Err(Error::io("create cgroup", &path, e));
        }
        let parent_cpuset = if !place.v2 && controllers.contains(&Controller::Cpuset) {
            let read = |f: &str| {
                let p = place.parent.join(f);
                util::read_trimmed(&p).map_err(|e| Error::io("read", p, e))
            };
            Some((read("cpuset.cpus")?, read("cpuset.mems")?))
        } else {
            None
        };
        let files = limit_files(
            spec,
            place.v2,
            dev,
            parent_cpuset
                .as_ref()
                .map(|(c, m)| (c.as_str(), m.as_str())),
        );
        for f in files.iter().filter(|f| controllers.contains(&f.controller)) {
            let p = path.join(f.file);
            if f.optional && !p.exists() {
                continue;
            }
            util::write_value(&p, &f.value).map_err(|e| Error::io("write", &p, e))?;
            let back = util::read_trimmed(&p).map_err(|e| Error::io("read", &p, e))?;
            ctr.limits.insert(f.file.to_owned(), back);
        }
        ctr.dirs.push(CgroupDir {
            path,
            v2: place.v2,
            controllers,
        });
    }
    Ok(ctr)
}

/// What a container used (`None`: not recorded on this machine).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ContainerStats {
    /// CPU time, ns (`cpuacct.usage`; v2 `cpu.stat` usage_usec).
    pub cpu_usage_ns: Option<u64>,
    /// CFS periods that elapsed with tasks runnable (`cpu.stat` nr_periods).
    pub nr_periods: Option<u64>,
    /// Periods in which the quota ran out (nr_throttled).
    pub nr_throttled: Option<u64>,
    /// Time throttled, ns.
    pub throttled_ns: Option<u64>,
    /// The most memory charged at once (`memory.max_usage_in_bytes`; v2 `memory.peak`).
    pub memory_max_usage_bytes: Option<u64>,
    /// Times the memory limit was hit (`memory.failcnt`; v2 `memory.events` max).
    pub memory_failcnt: Option<u64>,
    /// Processes the kernel's OOM killer ended (`oom_kill`).
    pub oom_kills: Option<u64>,
    /// The most processes at once (`pids.peak`).
    pub pids_peak: Option<u64>,
    /// Forks refused by the pids limit (`pids.events` max).
    pub pids_max_events: Option<u64>,
    /// Block I/O charged on the run's device.
    pub io: Option<Charged>,
}

impl Container {
    /// The directory of the cgroup that has `c`.
    fn dir_of(&self, c: Controller) -> Option<&CgroupDir> {
        self.dirs.iter().find(|d| d.controllers.contains(&c))
    }

    fn read(&self, c: Controller, file: &str) -> Option<String> {
        std::fs::read_to_string(self.dir_of(c)?.path.join(file)).ok()
    }

    /// The host PID of the program [`Container::spawn`] started, given the spawned child's
    /// PID (the middle process that waits for it): the one in the container whose parent
    /// that is. `None` before it runs or after it ended.
    pub fn program_pid(&self, middle: u32) -> Option<u32> {
        self.pids().into_iter().find(|&p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|st| {
                    // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
                    let rest = &st[st.rfind(')')? + 1..];
                    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(middle)
        })
    }

    /// Processes in the container (host PIDs), from the first cgroup.
    pub fn pids(&self) -> Vec<u32> {
        self.dirs
            .first()
            .map_or_else(Vec::new, |d| procs_of(&d.path))
    }

    /// What the container used so far.
    pub fn stats(&self) -> ContainerStats {
        let num = |c, f| self.read(c, f).and_then(|t| t.trim().parse::<u64>().ok());
        let key = |c, f, k| self.read(c, f).and_then(|t| keyed(&t, k));
        let v2 = |c| self.dir_of(c).is_some_and(|d| d.v2);
        let mut s = ContainerStats::default();
        if v2(Controller::Cpu) || v2(Controller::Cpuacct) {
            let us = |k| key(Controller::Cpu, "cpu.stat", k).map(|v| v * 1000);
            s.cpu_usage_ns = us("usage_usec");
            s.throttled_ns = us("throttled_usec");
        } else {
            s.cpu_usage_ns = num(Controller::Cpuacct, "cpuacct.usage");
            s.throttled_ns = key(Controller::Cpu, "cpu.stat", "throttled_time");
        }
        s.nr_periods = key(Controller::Cpu, "cpu.stat", "nr_periods");
        s.nr_throttled = key(Controller::Cpu, "cpu.stat", "nr_throttled");
        if v2(Controller::Memory) {
            s.memory_max_usage_bytes = num(Controller::Memory, "memory.peak");
            s.memory_failcnt = key(Controller::Memory, "memory.events", "max");
            s.oom_kills = key(Controller::Memory, "memory.events", "oom_kill");
        } else {
            s.memory_max_usage_bytes = num(Controller::Memory, "memory.max_usage_in_bytes");
            s.memory_failcnt = num(Controller::Memory, "memory.failcnt");
            s.oom_kills = key(Controller::Memory, "memory.oom_control", "oom_kill");
        }
        s.pids_peak = num(Controller::Pids, "pids.peak");
        s.pids_max_events = key(Controller::Pids, "pids.events", "max");
        if let Some(dev) = self.dev {
            s.io = if v2(Controller::Blkio) {
                self.read(Controller::Blkio, "io.stat")
                    .map(|t| parse_io_stat(&t, dev))
            } else {
                self.dir_of(Controller::Blkio)
                    .and_then(|d| throttle::charged_in(&d.path, dev).ok())
            };
        }
        s
    }

    /// Its v1 blkio cgroup as the run's throttle (what it is charged on the run's device,
    /// its `io` limits), for the monitors; `None` without a device or under cgroup v2.
    pub fn blkio(&self) -> Option<crate::ThrottleCgroup> {
        let d = self.dir_of(Controller::Blkio).filter(|d| !d.v2)?;
        Some(crate::ThrottleCgroup {
            path: d.path.clone(),
            dev: self.dev?,
            limits: self.spec.io.unwrap_or_default(),
        })
    }

    /// Processes the OOM killer ended in the container so far.
    pub fn oom_kills(&self) -> u64 {
        self.stats().oom_kills.unwrap_or(0)
    }

    /// Whether the memory limit ended a process: the run's result is not the workload's.
    pub fn oom_killed(&self) -> bool {
        self.oom_kills() > 0
    }

    /// The memory limit as the kernel holds it.
    pub fn memory_limit(&self) -> Option<u64> {
        ["memory.limit_in_bytes", "memory.max"]
            .iter()
            .find_map(|f| self.limits.get(*f)?.parse().ok())
    }

    /// Why a run failed when [`Container::oom_killed`]: which limit, what the kernel did.
    pub fn oom_message(&self) -> Option<String> {
        let n = self.oom_kills();
        (n > 0).then(|| {
            format!(
                "the container's memory limit ({}) was reached: the kernel's OOM killer ended \
                 {n} process{} of the run (raise environment.memory, or give the workload less \
                 to hold in memory)",
                self.memory_limit()
                    .map_or_else(|| "?".into(), iolab_util::format_bytes),
                if n == 1 { "" } else { "es" }
            )
        })
    }

    /// Resets the high-water marks (memory peak and limit hits) between runs.
    pub fn reset_peaks(&self) -> Result<()> {
        if let Some(d) = self.dir_of(Controller::Memory) {
            let files: &[&str] = if d.v2 {
                &["memory.peak"]
            } else {
                &["memory.max_usage_in_bytes", "memory.failcnt"]
            };
            for f in files {
                let p = d.path.join(f);
                util::write_value(&p, "0").map_err(|e| Error::io("write", &p, e))?;
            }
        }
        Ok(())
    }

    /// The container for a report: cgroup version and paths, the limits as the kernel holds
    /// them, namespaces, hostname, rootfs.
    pub fn describe(&self) -> serde_json::Value {
        let v1 = self.dirs.iter().any(|d| !d.v2);
        let v2 = self.dirs.iter().any(|d| d.v2);
        serde_json::json!({
            "cgroup_version": match (v1, v2) { (true, true) => "v1+v2", (false, true) => "v2", _ => "v1" },
            "cgroups": self.dirs,
            "limits": self.limits,
            "device": self.dev.map(|d| d.to_string()),
            "namespaces": NAMESPACES,
            "hostname": self.spec.hostname,
            "rootfs": self.spec.rootfs,
            "keep_paths": self.spec.keep_paths,
        })
    }

    /// Makes `cmd` run inside: its process joins every cgroup of the container, unshares
    /// the mount, pid, net, uts and ipc namespaces, and the program is PID 1 of the new pid
    /// namespace with a fresh /proc, the container's hostname and `lo` up (and the rootfs,
    /// if any). With a rootfs, missing mount points for the target and `keep_paths` are
    /// created in it (empty directories or files), and `cmd`'s working directory is entered
    /// again after `pivot_root`.
    ///
    /// The program and the process that waits for it get `PR_SET_PDEATHSIG(SIGKILL)`: if
    /// iolab dies, the container dies. The death signal follows the *thread* that spawned,
    /// so that thread must outlive the child. Signals other than SIGKILL sent to the
    /// program from outside reach it only if it handles them (it is its namespace's init);
    /// [`Child::kill`] on the returned child ends it.
    ///
    /// A failure of one of those steps makes `spawn` fail with that step's OS error;
    /// [`Container::spawn_error`] names the step ([`Container::spawn`] does it for you).
    /// One spawn at a time per container: the failure record is shared.
    pub fn command(&self, cmd: &mut Command) -> Result<()> {
        let launch = Launch::new(self, cmd.get_current_dir())?;
        self.failure.clear();
        // SAFETY: `Launch::run` makes only async-signal-safe calls on data prepared above.
        unsafe {
            cmd.pre_exec(move || launch.run());
        }
        Ok(())
    }

    /// [`Container::command`] and spawn: the program running inside, or which step failed.
    pub fn spawn(&self, cmd: &mut Command) -> Result<Child> {
        self.command(cmd)?;
        cmd.spawn().map_err(|e| self.spawn_error(cmd, e))
    }

    /// The error of a failed spawn of a [`Container::command`]: the step that failed.
    pub fn spawn_error(&self, cmd: &Command, error: io::Error) -> Error {
        let (step, index) = self.failure.get();
        let program = cmd.get_program().to_string_lossy();
        let nth = |v: &[PathBuf]| {
            v.get(index)
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        };
        let procs: Vec<PathBuf> = self
            .dirs
            .iter()
            .map(|d| d.path.join("cgroup.procs"))
            .collect();
        let rootfs = self
            .spec
            .rootfs
            .as_ref()
            .map(|r| r.display().to_string())
            .unwrap_or_default();
        let step = match step {
            Step::None => format!("executing {program}"),
            Step::DeathSignal => "setting PR_SET_PDEATHSIG".into(),
            Step::ParentGone => "starting: the thread that spawned it had already ended".into(),
            Step::JoinCgroup => format!("joining cgroup {}", nth(&procs)),
            Step::Unshare => "unsharing the mount, pid, net, uts and ipc namespaces".into(),
            Step::Fork => "forking PID 1 of the new pid namespace".into(),
            Step::MountPrivate => "making / a private mount".into(),
            Step::Hostname => format!("setting the hostname to {:?}", self.spec.hostname),
            Step::Loopback => "bringing up the loopback interface lo".into(),
            Step::BindRoot => format!("bind-mounting the rootfs {rootfs} on itself"),
            Step::BindDev => format!("bind-mounting /dev into the rootfs {rootfs}"),
            Step::BindPath => format!(
                "bind-mounting {} into the rootfs {rootfs}",
                nth(&self.bind_sources())
            ),
            Step::MountProc => "mounting a fresh proc on /proc".into(),
            Step::PivotRoot => format!("pivot_root into {rootfs}"),
            Step::Chdir => format!(
                "entering the working directory {}",
                cmd.get_current_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default()
            ),
        };
        Error::ContainerStart { step, error }
    }

    /// Host paths bind-mounted into a rootfs: the target directory, then `keep_paths`.
    fn bind_sources(&self) -> Vec<PathBuf> {
        std::iter::once(self.target.clone())
            .chain(self.spec.keep_paths.iter().cloned())
            .collect()
    }
}

/// The value of `key` in `key value` lines (cpu.stat, memory.oom_control, pids.events).
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// A device's line of a v2 `io.stat`: `8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0`.
fn parse_io_stat(text: &str, dev: DevT) -> Charged {
    let want = dev.to_string();
    let mut c = Charged::default();
    for l in text.lines() {
        let mut it = l.split_whitespace();
        if it.next() != Some(&want) {
            continue;
        }
        for kv in it {
            let Some((k, v)) = kv.split_once('=') else {
                continue;
            };
            let v = v.parse().unwrap_or(0);
            match k {
                "rbytes" => c.read_bytes = v,
                "wbytes" => c.write_bytes = v,
                "rios" => c.reads = v,
                "wios" => c.writes = v,
                _ => {}
            }
        }
    }
    c
}

fn procs_of(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Whether `path` may be a container cgroup iolab created (recovery checks journal
/// entries before it kills anything): an `iolab-ctr-…` directory below the root of a
/// cgroup v1 or v2 hierarchy.
pub(crate) fn is_ours(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.as_bytes().starts_with(CTR_PREFIX.as_bytes()))
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::RootDir))
        && mountinfo::read().unwrap_or_default().iter().any(|m| {
            (m.fs_type == "cgroup" || m.fs_type == "cgroup2")
                && path.starts_with(&m.mount_point)
                && path != m.mount_point
        })
}

/// Undo: SIGKILL every process in the cgroup until none is left (at most [`KILL_WAIT`]),
/// then remove it. `Ok(false)`: it did not exist.
pub(crate) fn remove(path: &Path) -> Result<bool> {
    if !path.exists() {
        return Ok(false);
    }
    let deadline = Instant::now() + KILL_WAIT;
    loop {
        let pids = procs_of(path);
        if pids.is_empty() {
            match std::fs::remove_dir(path) {
                Ok(()) => return Ok(true),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
                // EBUSY while exiting tasks are still being detached.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < deadline => {}
                Err(e) => return Err(Error::io("remove cgroup", path, e)),
            }
        } else if Instant::now() >= deadline {
            let list: Vec<String> = pids.iter().map(u32::to_string).collect();
            return Err(Error::Conflict {
                path: path.to_owned(),
                problem: format!(
                    "processes {} were killed but had not left after {} s (in uninterruptible \
                     sleep on I/O?); run `iolab recover` again",
                    list.join(", "),
                    KILL_WAIT.as_secs()
                ),
            });
        } else {
            kill_members(path, &pids);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// SIGKILL the processes `pids` read from the cgroup at `path` that are still in it. A
/// pidfd pins each process first, so a PID reused after its process exited is not hit.
fn kill_members(path: &Path, pids: &[u32]) {
    let fds: Vec<(u32, libc::c_int)> = pids
        .iter()
        .filter_map(|&p| {
            // SAFETY: pidfd_open takes a pid and flags.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, p as libc::pid_t, 0) };
            (fd >= 0).then_some((p, fd as libc::c_int))
        })
        .collect();
    let still = procs_of(path);
    for (pid, fd) in fds {
        if still.contains(&pid) {
            // SAFETY: a pidfd we opened; no siginfo.
            unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    fd,
                    libc::SIGKILL,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                );
            }
        }
        // SAFETY: our fd.
        unsafe { libc::close(fd) };
    }
}

/// The steps of starting a program inside, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
enum Step {
    None = 0,
    DeathSignal,
    ParentGone,
    JoinCgroup,
    Unshare,
    Fork,
    MountPrivate,
    Hostname,
    Loopback,
    BindRoot,
    BindDev,
    BindPath,
    MountProc,
    PivotRoot,
    Chdir,
}

impl Step {
    const ALL: [Step; 15] = [
        Step::None,
        Step::DeathSignal,
        Step::ParentGone,
        Step::JoinCgroup,
        Step::Unshare,
        Step::Fork,
        Step::MountPrivate,
        Step::Hostname,
        Step::Loopback,
        Step::BindRoot,
        Step::BindDev,
        Step::BindPath,
        Step::MountProc,
        Step::PivotRoot,
        Step::Chdir,
    ];
}

/// A page shared with the forked children (`MAP_SHARED`): which step failed, so that the
/// parent can name it (a failed `pre_exec` reaches `spawn` as an errno only).
#[derive(Debug)]
struct FailPage {
    ptr: *mut libc::c_void,
}

// SAFETY: the page is only accessed through atomics.
unsafe impl Send for FailPage {}
// SAFETY: as above.
unsafe impl Sync for FailPage {}

const PAGE: usize = 4096;

impl FailPage {
    fn new() -> Result<FailPage> {
        // SAFETY: an anonymous shared mapping, checked below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(Error::io(
                "map",
                "a shared page",
                io::Error::last_os_error(),
            ));
        }
        Ok(FailPage { ptr })
    }

    fn slots(&self) -> (&AtomicU32, &AtomicU32, &AtomicI32) {
        // SAFETY: the page is mapped for our lifetime, zeroed, aligned; three 4-byte slots.
        unsafe {
            let p = self.ptr as *const u32;
            (
                &*(p as *const AtomicU32),
                &*(p.add(1) as *const AtomicU32),
                &*(p.add(2) as *const AtomicI32),
            )
        }
    }

    fn clear(&self) {
        let (s, i, e) = self.slots();
        s.store(0, Ordering::SeqCst);
        i.store(0, Ordering::SeqCst);
        e.store(0, Ordering::SeqCst);
    }

    /// Async-signal-safe: stores only.
    fn set(&self, step: Step, index: usize, errno: i32) {
        let (s, i, e) = self.slots();
        i.store(index as u32, Ordering::SeqCst);
        e.store(errno, Ordering::SeqCst);
        s.store(step as u32, Ordering::SeqCst);
    }

    fn get(&self) -> (Step, usize) {
        let (s, i, _) = self.slots();
        let step = s.load(Ordering::SeqCst);
        let step = Step::ALL
            .into_iter()
            .find(|x| *x as u32 == step)
            .unwrap_or(Step::None);
        (step, i.load(Ordering::SeqCst) as usize)
    }
}

impl Drop for FailPage {
    fn drop(&mut self) {
        // SAFETY: our mapping.
        unsafe { libc::munmap(self.ptr, PAGE) };
    }
}

/// Everything the forked children need, made before the fork.
struct Launch {
    parent: libc::pid_t,
    procs: Vec<CString>,
    hostname: CString,
    proc_dir: CString,
    rootfs: Option<RootLaunch>,
    cwd: Option<CString>,
    failure: Arc<FailPage>,
}

struct RootLaunch {
    root: CString,
    dev: CString,
    /// (host path, its mount point inside the rootfs).
    binds: Vec<(CString, CString)>,
}

fn c_path(p: &Path) -> Result<CString> {
    util::cstring(p).map_err(|e| Error::io("use", p, e))
}

impl Launch {
    fn new(ctr: &Container, cwd: Option<&Path>) -> Result<Launch> {
        let procs = ctr
            .dirs
            .iter()
            .map(|d| c_path(&d.path.join("cgroup.procs")))
            .collect::<Result<_>>()?;
        let hostname = util::cstr(&ctr.spec.hostname)
            .map_err(|e| Error::io("use the hostname", &ctr.spec.hostname, e))?;
        let (proc_dir, rootfs) = match &ctr.spec.rootfs {
            None => (c_path(Path::new("/proc"))?, None),
            Some(root) => {
                let inside = |p: &Path| root.join(p.strip_prefix("/").unwrap_or(p));
                let mut binds = Vec::new();
                for src in ctr.bind_sources() {
                    let dst = inside(&src);
                    make_mount_point(&src, &dst)?;
                    binds.push((c_path(&src)?, c_path(&dst)?));
                }
                for d in ["proc", "dev"] {
                    make_mount_point(Path::new("/").join(d).as_path(), &root.join(d))?;
                }
                (
                    c_path(&root.join("proc"))?,
                    Some(RootLaunch {
                        root: c_path(root)?,
                        dev: c_path(&root.join("dev"))?,
                        binds,
                    }),
                )
            }
        };
        let cwd = match (&rootfs, cwd) {
            (Some(_), Some(d)) => Some(c_path(d)?),
            _ => None,
        };
        Ok(Launch {
            // SAFETY: getpid has no failure mode.
            parent: unsafe { libc::getpid() },
            procs,
            hostname,
            proc_dir,
            rootfs,
            cwd,
            failure: Arc::clone(&ctr.failure),
        })
    }

    /// Records the failed step (with errno) and returns the error for `pre_exec`.
    fn fail(&self, step: Step, index: usize) -> io::Error {
        let e = io::Error::last_os_error();
        self.failure.set(step, index, e.raw_os_error().unwrap_or(0));
        e
    }

    /// The `pre_exec` hook, in the forked child.
    fn run(&self) -> io::Result<()> {
        // SAFETY (whole function): raw syscalls on C strings made before the fork.
        unsafe {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(self.fail(Step::DeathSignal, 0));
            }
            if libc::getppid() != self.parent {
                *libc::__errno_location() = libc::ESRCH;
                return Err(self.fail(Step::ParentGone, 0));
            }
            for (i, p) in self.procs.iter().enumerate() {
                // "0": the writing process itself (v1 and v2).
                if write_file(p, b"0") != 0 {
                    return Err(self.fail(Step::JoinCgroup, i));
                }
            }
            let ns = libc::CLONE_NEWNS
                | libc::CLONE_NEWPID
                | libc::CLONE_NEWNET
                | libc::CLONE_NEWUTS
                | libc::CLONE_NEWIPC;
            if libc::unshare(ns) != 0 {
                return Err(self.fail(Step::Unshare, 0));
            }
            match libc::fork() {
                -1 => Err(self.fail(Step::Fork, 0)),
                0 => self.inside(),
                pid => wait_and_exit(pid),
            }
        }
    }

    /// PID 1 of the new namespaces, before exec.
    fn inside(&self) -> io::Result<()> {
        // SAFETY: raw syscalls on C strings made before the fork (async-signal-safe).
        unsafe {
            let null = std::ptr::null::<libc::c_char>();
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(self.fail(Step::DeathSignal, 0));
            }
            // Mounts made here must not propagate back to the host.
            if libc::mount(
                null,
                c"/".as_ptr(),
                null,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return Err(self.fail(Step::MountPrivate, 0));
            }
            if libc::sethostname(self.hostname.as_ptr(), self.hostname.as_bytes().len()) != 0 {
                return Err(self.fail(Step::Hostname, 0));
            }
            if loopback_up() != 0 {
                return Err(self.fail(Step::Loopback, 0));
            }
            let bind = libc::MS_BIND | libc::MS_REC;
            if let Some(r) = &self.rootfs {
                // pivot_root wants the new root to be a mount point.
                if libc::mount(
                    r.root.as_ptr(),
                    r.root.as_ptr(),
                    null,
                    bind,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(self.fail(Step::BindRoot, 0));
                }
                if libc::mount(
                    c"/dev".as_ptr(),
                    r.dev.as_ptr(),
                    null,
                    bind,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(self.fail(Step::BindDev, 0));
                }
                for (i, (src, dst)) in r.binds.iter().enumerate() {
                    if libc::mount(src.as_ptr(), dst.as_ptr(), null, bind, std::ptr::null()) != 0 {
                        return Err(self.fail(Step::BindPath, i));
                    }
                }
            }
            let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            if libc::mount(
                c"proc".as_ptr(),
                self.proc_dir.as_ptr(),
                c"proc".as_ptr(),
                proc_flags,
                std::ptr::null(),
            ) != 0
            {
                return Err(self.fail(Step::MountProc, 0));
            }
            if let Some(r) = &self.rootfs {
                // pivot_root(".", "."): the old root ends up on top of the new one and is
                // detached at once; nothing of the host's tree stays reachable.
                if libc::chdir(r.root.as_ptr()) != 0
                    || libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) != 0
                    || libc::umount2(c".".as_ptr(), libc::MNT_DETACH) != 0
                    || libc::chdir(c"/".as_ptr()) != 0
                {
                    return Err(self.fail(Step::PivotRoot, 0));
                }
                if let Some(d) = &self.cwd {
                    if libc::chdir(d.as_ptr()) != 0 {
                        return Err(self.fail(Step::Chdir, 0));
                    }
                }
            }
            Ok(())
        }
    }
}

/// The middle process: waits for PID 1 and ends as it did. Never returns.
fn wait_and_exit(pid: libc::pid_t) -> ! {
    // SAFETY: async-signal-safe calls on our own child and our own signal state.
    unsafe {
        // Its copies of the parent's descriptors (the spawn's error pipe above all) would keep
        // `spawn` waiting until the program ends.
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        let mut status = 0;
        loop {
            let r = libc::waitpid(pid, &mut status, 0);
            if r == pid {
                break;
            }
            if r == -1 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// open, write, close; 0 or -1 with errno set. Async-signal-safe.
fn write_file(path: &CString, data: &[u8]) -> libc::c_int {
    // SAFETY: a valid C string and buffer; the fd is ours.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return -1;
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let errno = *libc::__errno_location();
        libc::close(fd);
        if n != data.len() as isize {
            *libc::__errno_location() = if n < 0 { errno } else { libc::EIO };
            return -1;
        }
        0
    }
}

/// `ip link set lo up` without `ip`: SIOCSIFFLAGS on a datagram socket. Async-signal-safe.
fn loopback_up() -> libc::c_int {
    // SAFETY: a zeroed ifreq is valid; the socket is ours.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return -1;
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        req.ifr_name[0] = b'l' as libc::c_char;
        req.ifr_name[1] = b'o' as libc::c_char;
        let mut r = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req);
        if r == 0 {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            r = libc::ioctl(fd, libc::SIOCSIFFLAGS, &req);
        }
        let errno = *libc::__errno_location();
        libc::close(fd);
        *libc::__errno_location() = errno;
        if r == 0 {
            0
        } else {
            -1
        }
    }
}

/// A mount point for `src` at `dst` in a rootfs: an empty directory (or file, for a file)
/// and its missing parents, unless it exists.
fn make_mount_point(src: &Path, dst: &Path) -> Result<()> {
    if dst.exists() {
        return Ok(());
    }
    let (dir, file) = if src.is_dir() {
        (dst, None)
    } else {
        (dst.parent().unwrap_or(dst), Some(dst))
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create mount point", dir, e))?;
    if let Some(f) = file {
        std::fs::File::create(f).map_err(|e| Error::io("create mount point", f, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ContainerSpec {
        ContainerSpec {
            cpus: Some(0.5),
            cpuset: Some(vec![0, 1]),
            memory: Some(256 << 20),
            pids: Some(64),
            io: Some(Throttle {
                write_bps: Some(10_000_000),
                read_iops: Some(150),
                ..Throttle::default()
            }),
            ..ContainerSpec::default()
        }
    }

    fn pairs(files: &[LimitFile]) -> Vec<(&str, &str, bool)> {
        files
            .iter()
            .map(|f| (f.file, f.value.as_str(), f.optional))
            .collect()
    }

    #[test]
    fn v2_limit_files() {
        let files = limit_files(&spec(), true, Some(DevT::new(7, 3)), None);
        assert_eq!(
            pairs(&files),
            [
                ("cpu.max", "50000 100000", false),
                ("cpuset.cpus", "0,1", false),
                ("memory.max", "268435456", false),
                ("memory.swap.max", "0", true),
                ("pids.max", "64", false),
                ("io.max", "7:3 wbps=10000000 riops=150", false),
            ]
        );
        assert!(limit_files(&ContainerSpec::default(), true, None, None).is_empty());
        // No device: no io.max (prepare refuses io without one).
        let no_dev = limit_files(&spec(), true, None, None);
        assert!(no_dev.iter().all(|f| f.file != "io.max"));
    }

    #[test]
    fn v1_limit_files() {
        let files = limit_files(&spec(), false, Some(DevT::new(7, 3)), Some(("0-3", "0")));
        assert_eq!(
            pairs(&files),
            [
                ("cpuset.mems", "0", false),
                ("cpuset.cpus", "0,1", false),
                ("cpu.cfs_period_us", "100000", false),
                ("cpu.cfs_quota_us", "50000", false),
                ("memory.limit_in_bytes", "268435456", false),
                ("memory.memsw.limit_in_bytes", "268435456", true),
                ("pids.max", "64", false),
                ("blkio.throttle.write_bps_device", "7:3 10000000", false),
                ("blkio.throttle.read_iops_device", "7:3 150", false),
            ]
        );
        // Without a cpuset the parent's CPUs are copied: a v1 cpuset takes no task before.
        let plain = limit_files(&ContainerSpec::default(), false, None, Some(("0-1", "0")));
        assert_eq!(
            pairs(&plain),
            [("cpuset.mems", "0", false), ("cpuset.cpus", "0-1", false)]
        );
    }

    #[test]
    fn a_tiny_quota_is_the_kernels_smallest() {
        let s = ContainerSpec {
            cpus: Some(0.001),
            ..ContainerSpec::default()
        };
        assert_eq!(limit_files(&s, true, None, None)[0].value, "1000 100000");
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,6\n"), Some(vec![0, 1, 2, 3, 6]));
        assert_eq!(parse_cpu_list("0\n"), Some(vec![0]));
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(cpu_list(&[0, 2]), "0,2");
    }

    #[test]
    fn stat_files_parse() {
        let cpu = "nr_periods 12\nnr_throttled 3\nthrottled_time 4500\n";
        assert_eq!(keyed(cpu, "nr_throttled"), Some(3));
        assert_eq!(keyed(cpu, "nr_periods"), Some(12));
        assert_eq!(keyed(cpu, "nr_bursts"), None);
        let oom = "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n";
        assert_eq!(keyed(oom, "oom_kill"), Some(1));
        assert_eq!(keyed("max 7\n", "max"), Some(7));
        let io = "8:0 rbytes=10 wbytes=20 rios=1 wios=2 dbytes=0 dios=0\n\
                  7:3 rbytes=4096 wbytes=8192 rios=3 wios=4 dbytes=0 dios=0\n";
        assert_eq!(
            parse_io_stat(io, DevT::new(7, 3)),
            Charged {
                read_bytes: 4096,
                write_bytes: 8192,
                reads: 3,
                writes: 4
            }
        );
        assert_eq!(parse_io_stat(io, DevT::new(9, 9)), Charged::default());
    }

    #[test]
    fn values_out_of_range_are_problems_with_their_field() {
        let s = ContainerSpec {
            cpus: Some(0.0),
            cpuset: Some(vec![0, 99]),
            memory: Some(1 << 20),
            pids: Some(0),
            hostname: String::new(),
            keep_paths: vec!["/nonexistent-iolab-path".into()],
            ..ContainerSpec::default()
        };
        let fields: Vec<String> = s.machine_problems().into_iter().map(|p| p.field).collect();
        for f in [
            "environment.cpus",
            "environment.cpuset",
            "environment.memory",
            "environment.pids",
            "environment.hostname",
            "environment.keep_paths",
        ] {
            assert!(fields.iter().any(|x| x == f), "{f} missing in {fields:?}");
        }
        let cpuset = s
            .machine_problems()
            .into_iter()
            .find(|p| p.field == "environment.cpuset")
            .unwrap();
        assert!(cpuset.message.contains("CPU 99 is not online"), "{cpuset}");
        assert!(cpuset.hint.unwrap().contains("online CPUs: 0"));
        let too_many = ContainerSpec {
            cpus: Some(4096.0),
            ..ContainerSpec::default()
        };
        assert!(too_many.machine_problems()[0]
            .message
            .contains("online CPUs"));
    }

    #[test]
    fn the_spec_reads_from_json_with_defaults() {
        let s: ContainerSpec =
            serde_json::from_str(r#"{"cpus":0.5,"memory":268435456,"io":{"write_bps":10}}"#)
                .unwrap();
        assert_eq!(s.hostname, "iolab");
        assert_eq!(s.cpus, Some(0.5));
        assert_eq!(s.io.unwrap().write_bps, Some(10));
        assert!(serde_json::from_str::<ContainerSpec>(r#"{"cpu":1}"#).is_err());
    }

    #[test]
    fn only_iolab_container_cgroups_are_ours() {
        assert!(!is_ours(Path::new("/sys/fs/cgroup/memory")));
        assert!(!is_ours(Path::new("/tmp/iolab-ctr-1-0-abc")));
        assert!(!is_ours(Path::new("/sys/fs/cgroup/memory/iolab-1-0-abc")));
        assert!(!is_ours(Path::new("/sys/fs/cgroup/memory/../iolab-ctr-1")));
        if Path::new("/sys/fs/cgroup/memory").is_dir() {
            assert!(is_ours(Path::new(
                "/sys/fs/cgroup/memory/iolab-ctr-1-0-abc"
            )));
        }
    }

    #[test]
    fn the_failure_page_is_shared_with_a_child() {
        let page = FailPage::new().unwrap();
        // SAFETY: the child only stores to the page and exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            page.set(Step::BindPath, 2, libc::ENOENT);
            unsafe { libc::_exit(0) };
        }
        let mut st = 0;
        // SAFETY: our child.
        unsafe { libc::waitpid(pid, &mut st, 0) };
        assert_eq!(page.get(), (Step::BindPath, 2));
        page.clear();
        assert_eq!(page.get(), (Step::None, 0));
    }
}
