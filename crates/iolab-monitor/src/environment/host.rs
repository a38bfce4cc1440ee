//! The machine: kernel, OS, CPU, memory, clock source, virtualization, cgroups, and the
//! `vm.*` sysctls (plus a few others that change I/O results).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::block::parse_choice;
use super::read_value;
use super::virt::Virtualization;
use iolab_sys::meminfo;
use iolab_sys::mountinfo::{self, Mount};

/// The machine a run ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostEnv {
    /// Host name (`/proc/sys/kernel/hostname`).
    pub hostname: Option<String>,
    /// Kernel release (`/proc/sys/kernel/osrelease`), e.g. `6.1.0-18-amd64`.
    pub kernel_release: Option<String>,
    /// Kernel version string (`/proc/sys/kernel/version`), e.g.
    /// `#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)`.
    pub kernel_version: Option<String>,
    /// Machine architecture (`uname -m`), e.g. `x86_64`.
    pub arch: Option<String>,
    /// `PRETTY_NAME` of `/etc/os-release` (or `NAME VERSION`), e.g.
    /// `Debian GNU/Linux 12 (bookworm)`.
    pub os: Option<String>,
    /// `ID` of `/etc/os-release`, e.g. `debian`.
    pub os_id: Option<String>,
    /// `VERSION_ID` of `/etc/os-release`, e.g. `12`.
    pub os_version_id: Option<String>,
    /// CPU model (`model name` of `/proc/cpuinfo`, or the architecture's equivalent).
    pub cpu_model: Option<String>,
    /// Online logical CPUs (`/sys/devices/system/cpu/online`).
    pub logical_cpus: Option<u32>,
    /// CPUs this process may use (affinity and cgroup CPU quota).
    pub available_parallelism: Option<u32>,
    /// `cpu MHz` of the first CPU in `/proc/cpuinfo`, when listed.
    pub cpu_mhz: Option<f64>,
    /// cpufreq governor of CPU 0 (`scaling_governor`), when cpufreq is present.
    pub cpufreq_governor: Option<String>,
    /// Online NUMA nodes.
    pub numa_nodes: Option<u32>,
    /// Current clock source, e.g. `tsc`, `kvm-clock`.
    pub clocksource: Option<String>,
    /// `MemTotal`, bytes.
    pub mem_total_bytes: Option<u64>,
    /// `SwapTotal`, bytes.
    pub swap_total_bytes: Option<u64>,
    /// Transparent huge pages mode (`always`, `madvise`, `never`).
    pub transparent_hugepage: Option<String>,
    /// Virtual machine and container.
    pub virtualization: Virtualization,
    /// cgroup hierarchy in use.
    pub cgroup: Option<CgroupVersion>,
    /// Boot time, seconds since the Unix epoch (`btime` of `/proc/stat`).
    pub boot_time_unix: Option<u64>,
    /// Seconds since boot (`/proc/uptime`).
    pub uptime_secs: Option<f64>,
    /// Every readable one-line `vm.*` sysctl, plus [`EXTRA_SYSCTLS`], by dotted name
    /// (`vm.dirty_expire_centisecs` → `"3000"`); values as written, tabs included.
    pub sysctls: BTreeMap<String, String>,
}

/// Which cgroup hierarchies are mounted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CgroupVersion {
    /// Only cgroup v1 controllers.
    V1,
    /// The unified (v2) hierarchy only.
    V2,
    /// v1 controllers with v2 beside them (e.g. at `/sys/fs/cgroup/unified`).
    Hybrid,
}

/// Sysctls outside `vm.*` recorded with every run.
pub const EXTRA_SYSCTLS: &[&str] = &[
    "kernel.sched_autogroup_enabled",
    "kernel.numa_balancing",
    "kernel.perf_event_paranoid",
    "kernel.nmi_watchdog",
    "kernel.io_uring_disabled",
    "fs.aio-max-nr",
    "fs.file-max",
    "fs.nr_open",
];

/// `vm.*` files not recorded: reading `stat_refresh` flushes per-CPU counters (a side
/// effect), and the others are write-only actions.
const SKIPPED_VM: &[&str] = &["stat_refresh", "drop_caches", "compact_memory"];

/// What `/proc/cpuinfo` tells about the CPUs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CpuInfo {
    /// The model of the first CPU: `model name` (x86), else `cpu model` (MIPS), `Processor`
    /// (old ARM), `cpu` (POWER), `uarch` (RISC-V), `Model` (boards).
    pub model_name: Option<String>,
    /// `cpu MHz` of the first CPU.
    pub mhz: Option<f64>,
    /// Number of `processor` entries.
    pub processors: u32,
    /// Whether the first `flags` line has `hypervisor`; `None` without a `flags` line.
    pub hypervisor_flag: Option<bool>,
}

/// Parse `/proc/cpuinfo`. Lines without `:` and unknown keys are ignored.
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    const MODEL_KEYS: &[&str] = &[
        "model name",
        "cpu model",
        "Processor",
        "cpu",
        "uarch",
        "Model",
    ];
    let mut info = CpuInfo::default();
    let mut model: Option<(usize, String)> = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => info.processors += 1,
            "cpu MHz" if info.mhz.is_none() => info.mhz = value.parse().ok(),
            "flags" if info.hypervisor_flag.is_none() => {
                info.hypervisor_flag =
                    Some(value.split_ascii_whitespace().any(|f| f == "hypervisor"));
            }
            _ => {}
        }
        if let Some(rank) = MODEL_KEYS.iter().position(|k| *k == key) {
            if !value.is_empty() && model.as_ref().is_none_or(|(r, _)| rank < *r) {
                model = Some((rank, value.to_owned()));
            }
        }
    }
    info.model_name = model.map(|(_, m)| m);
    info
}

/// Parse `os-release(5)`: `KEY=value` lines, values unquoted (shell-style double or single
/// quotes; `\"`, `\\`, `` \` `` and `\$` unescaped inside double quotes). Comments and lines
/// without `=` are ignored.
pub fn parse_os_release(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = if let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            let mut s = String::with_capacity(inner.len());
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                match (c, chars.clone().next()) {
                    ('\\', Some(n @ ('"' | '\\' | '`' | '$'))) => {
                        s.push(n);
                        chars.next();
                    }
                    _ => s.push(c),
                }
            }
            s
        } else if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
            inner.to_owned()
        } else {
            value.to_owned()
        };
        out.insert(key.trim().to_owned(), value);
    }
    out
}

pub use iolab_sys::cpus::parse_cpu_list;

/// First field of `/proc/uptime`: seconds since boot.
pub fn parse_uptime(text: &str) -> Option<f64> {
    text.split_ascii_whitespace().next()?.parse().ok()
}

/// `btime` of `/proc/stat`: boot time, seconds since the Unix epoch.
pub fn parse_btime(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// The cgroup hierarchy in use, from the mount table: v2 if `/sys/fs/cgroup` itself is
/// cgroup2; otherwise by which types are mounted anywhere.
pub fn cgroup_version(mounts: &[Mount]) -> Option<CgroupVersion> {
    let top = mounts
        .iter()
        .rev()
        .find(|m| m.mount_point == Path::new("/sys/fs/cgroup"));
    if top.is_some_and(|m| m.fs_type == "cgroup2") {
        return Some(CgroupVersion::V2);
    }
    let v1 = mounts.iter().any(|m| m.fs_type == "cgroup");
    let v2 = mounts.iter().any(|m| m.fs_type == "cgroup2");
    match (v1, v2) {
        (true, true) => Some(CgroupVersion::Hybrid),
        (true, false) => Some(CgroupVersion::V1),
        (false, true) => Some(CgroupVersion::V2),
        (false, false) => None,
    }
}

/// A one-line sysctl file's value (trailing newline removed); `None` if unreadable or
/// longer than one line.
fn read_sysctl_file(path: &Path) -> Option<String> {
    let text = super::read_text(path)?;
    let v = text.strip_suffix('\n').unwrap_or(&text);
    (!v.contains('\n')).then(|| v.to_owned())
}

/// Every readable one-line `vm.*` sysctl and the [`EXTRA_SYSCTLS`] that exist, read from
/// `proc_sys` (normally `/proc/sys`).
pub fn read_sysctls(proc_sys: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir(proc_sys.join("vm")) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_file = e.file_type().map(|t| t.is_file()).unwrap_or(false);
            if !is_file || SKIPPED_VM.contains(&name.as_str()) {
                continue;
            }
            if let Some(v) = read_sysctl_file(&e.path()) {
                out.insert(format!("vm.{name}"), v);
            }
        }
    }
    for name in EXTRA_SYSCTLS {
        if let Some(v) = read_sysctl_file(&proc_sys.join(name.replace('.', "/"))) {
            out.insert((*name).to_owned(), v);
        }
    }
    out
}

/// `uname(2)`: (nodename, release, version, machine).
fn uname() -> Option<[String; 4]> {
    // SAFETY: all-zero bytes are a valid `utsname` (arrays of c_char).
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some([
        field(&u.nodename),
        field(&u.release),
        field(&u.version),
        field(&u.machine),
    ])
}

impl HostEnv {
    /// Probe this machine.
    /// The host as probed the first time this process asked: what describes an experiment and
    /// a command's output, probed once.
    pub fn once() -> &'static HostEnv {
        static HOST: std::sync::OnceLock<HostEnv> = std::sync::OnceLock::new();
        HOST.get_or_init(HostEnv::probe)
    }

    pub fn probe() -> Self {
        let uts = uname();
        let from_uname = |i: usize| uts.as_ref().and_then(|u| super::nonempty(&u[i]));
        let kernel_release = read_value("/proc/sys/kernel/osrelease").or_else(|| from_uname(1));
        let os = super::read_text("/etc/os-release")
            .or_else(|| super::read_text("/usr/lib/os-release"))
            .map(|t| parse_os_release(&t))
            .unwrap_or_default();
        let cpu = super::read_text("/proc/cpuinfo")
            .map(|t| parse_cpuinfo(&t))
            .unwrap_or_default();
        let mem = meminfo::read().ok();
        let online = |p: &str| {
            read_value(p)
                .and_then(|t| parse_cpu_list(&t))
                .map(|l| l.len() as u32)
        };
        let pretty = os.get("PRETTY_NAME").cloned().or_else(|| {
            let name = os.get("NAME")?;
            Some(match os.get("VERSION") {
                Some(v) => format!("{name} {v}"),
                None => name.clone(),
            })
        });
        HostEnv {
            hostname: read_value("/proc/sys/kernel/hostname").or_else(|| from_uname(0)),
            kernel_version: read_value("/proc/sys/kernel/version").or_else(|| from_uname(2)),
            arch: from_uname(3),
            os: pretty,
            os_id: os.get("ID").cloned(),
            os_version_id: os.get("VERSION_ID").cloned(),
            cpu_model: cpu.model_name.clone(),
            logical_cpus: online("/sys/devices/system/cpu/online")
                .filter(|n| *n > 0)
                .or((cpu.processors > 0).then_some(cpu.processors)),
            available_parallelism: std::thread::available_parallelism()
                .ok()
                .and_then(|n| u32::try_from(n.get()).ok()),
            cpu_mhz: cpu.mhz,
            cpufreq_governor: read_value("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            numa_nodes: online("/sys/devices/system/node/online").filter(|n| *n > 0),
            clocksource: read_value(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            ),
            mem_total_bytes: mem.as_ref().map(|m| m.mem_total),
            swap_total_bytes: mem.as_ref().map(|m| m.swap_total),
            transparent_hugepage: read_value("/sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|t| parse_choice(&t).0),
            virtualization: Virtualization::probe(cpu.hypervisor_flag, kernel_release.as_deref()),
            cgroup: cgroup_version(&mountinfo::read().unwrap_or_default()),
            boot_time_unix: super::read_text("/proc/stat").and_then(|t| parse_btime(&t)),
            uptime_secs: super::read_text("/proc/uptime").and_then(|t| parse_uptime(&t)),
            sysctls: read_sysctls(Path::new("/proc/sys")),
            kernel_release,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_sys::mountinfo::parse as parse_mountinfo;

    const CPUINFO: &str = include_str!("../../tests/fixtures/proc_cpuinfo.txt");

    #[test]
    fn cpuinfo_of_a_vm() {
        let c = parse_cpuinfo(CPUINFO);
        assert_eq!(c.model_name.as_deref(), Some("AMD EPYC"));
        assert_eq!(c.mhz, Some(2445.426));
        assert_eq!(c.processors, 2);
        assert_eq!(c.hypervisor_flag, Some(true));
    }

    #[test]
    fn cpuinfo_of_bare_metal_and_other_arches() {
        let metal = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6338\n\
                     flags\t\t: fpu vme de pse tsc msr hypervisorx\n\nprocessor\t: 1\n";
        let c = parse_cpuinfo(metal);
        assert_eq!(c.hypervisor_flag, Some(false));
        assert_eq!(c.mhz, None);
        assert_eq!(c.processors, 2);
        assert_eq!(c.model_name.as_deref(), Some("Intel(R) Xeon(R) Gold 6338"));

        let power = "processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\n\
                     clock\t\t: 2300.000000MHz\n\ntimebase\t: 512000000\nmodel\t\t: IBM pSeries\n";
        let c = parse_cpuinfo(power);
        assert_eq!(c.hypervisor_flag, None);
        assert_eq!(
            c.model_name.as_deref(),
            Some("POWER9 (architected), altivec supported")
        );

        let arm = "processor\t: 0\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd\nCPU part\t: 0xd0c\n\n\
                   Model\t\t: Raspberry Pi 4\n";
        let c = parse_cpuinfo(arm);
        assert_eq!(c.model_name.as_deref(), Some("Raspberry Pi 4"));
        assert_eq!(c.hypervisor_flag, None);

        let odd = parse_cpuinfo("garbage\ncpu MHz : fast\n:\n");
        assert_eq!(odd, CpuInfo::default());
    }

    #[test]
    fn os_release() {
        let text = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n\
                    VERSION_ID=\"12\"\nID=debian\n# comment=x\n\nVARIANT='Server Edition'\n\
                    ODD=\"say \\\"hi\\\" \\\\ \\$HOME \\n\"\nnoequals\n";
        let m = parse_os_release(text);
        assert_eq!(m["PRETTY_NAME"], "Debian GNU/Linux 12 (bookworm)");
        assert_eq!(m["ID"], "debian");
        assert_eq!(m["VERSION_ID"], "12");
        assert_eq!(m["VARIANT"], "Server Edition");
        assert_eq!(m["ODD"], "say \"hi\" \\ $HOME \\n");
        assert!(!m.contains_key("# comment"));
        assert_eq!(m.len(), 6);
    }

    #[test]
    fn small_files() {
        assert_eq!(parse_uptime("8819.12 6687.66\n"), Some(8819.12));
        assert_eq!(parse_uptime(""), None);
        assert_eq!(
            parse_btime("cpu  1 2\nctxt 5\nbtime 1700000000\n"),
            Some(1_700_000_000)
        );
        assert_eq!(parse_btime("cpu 1\n"), None);
    }

    #[test]
    fn cgroup_versions() {
        let line =
            |id: u32, point: &str, ty: &str| format!("{id} 1 0:{id} / {point} rw - {ty} {ty} rw\n");
        let v2 = line(30, "/sys/fs/cgroup", "cgroup2");
        assert_eq!(
            cgroup_version(&parse_mountinfo(&v2).unwrap()),
            Some(CgroupVersion::V2)
        );
        let hybrid = line(31, "/sys/fs/cgroup", "tmpfs")
            + &line(32, "/sys/fs/cgroup/cpu", "cgroup")
            + &line(41, "/sys/fs/cgroup/unified", "cgroup2");
        assert_eq!(
            cgroup_version(&parse_mountinfo(&hybrid).unwrap()),
            Some(CgroupVersion::Hybrid)
        );
        let v1 = line(31, "/sys/fs/cgroup", "tmpfs") + &line(32, "/sys/fs/cgroup/cpu", "cgroup");
        assert_eq!(
            cgroup_version(&parse_mountinfo(&v1).unwrap()),
            Some(CgroupVersion::V1)
        );
        assert_eq!(cgroup_version(&[]), None);
        assert_eq!(
            serde_json::to_string(&CgroupVersion::Hybrid).unwrap(),
            "\"hybrid\""
        );
    }

    #[test]
    fn sysctls_of_this_machine() {
        let s = read_sysctls(Path::new("/proc/sys"));
        assert!(s.contains_key("vm.dirty_ratio"), "{s:?}");
        assert!(s.contains_key("vm.swappiness"));
        assert!(!s.contains_key("vm.stat_refresh"));
        assert!(!s.contains_key("vm.drop_caches"));
        assert!(s
            .keys()
            .all(|k| k.starts_with("vm.") || EXTRA_SYSCTLS.contains(&k.as_str())));
        assert!(read_sysctls(Path::new("/nonexistent")).is_empty());
    }

    #[test]
    fn probe_this_machine() {
        let h = HostEnv::probe();
        assert!(h.kernel_release.is_some());
        assert!(h.kernel_version.is_some());
        assert!(h.hostname.is_some());
        assert!(h.arch.is_some());
        assert!(h.logical_cpus.unwrap() >= 1);
        assert!(h.mem_total_bytes.unwrap() > 0);
        assert!(h.swap_total_bytes.is_some());
        assert!(h.uptime_secs.unwrap() > 0.0);
        assert!(h.boot_time_unix.is_some());
        assert!(!h.virtualization.hypervisor.is_empty());
        assert!(h.sysctls.contains_key("vm.dirty_expire_centisecs"));
    }
}
