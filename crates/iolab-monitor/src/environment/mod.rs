//! The environment of a run: what machine it ran on and what storage lay under its directory,
//! as serde structs stored with every result ("kernel, CPU, memory, virtualization, device
//! model, filesystem, mount options, scheduler, all tunables").
//!
//! | type | what | sources |
//! |---|---|---|
//! | [`HostEnv`] | kernel, OS, CPU, memory, clock source, virtualization, cgroups, `vm.*` sysctls | `/proc/sys`, `/proc/cpuinfo`, `/proc/meminfo`, `/etc/os-release`, `/sys/devices/system`, `/sys/class/dmi/id` |
//! | [`Virtualization`] | hypervisor and container hints | CPUID, `hypervisor` CPU flag, DMI, `/.dockerenv`, … |
//! | [`StorageEnv`] | the mount holding a path, its block device, `statvfs(3)` | `/proc/self/mountinfo`, `/sys/dev/block` |
//! | [`BlockEnv`] | one block device: model, size, queue settings and scheduler, loop / dm details | `/sys/class/block/NAME` |
//!
//! Probing never fails and never panics: whatever cannot be read or does not have the expected
//! shape is `None` (or left out of a map). Every file is only read, never written; files whose
//! reading has side effects (`vm.stat_refresh`) are skipped. The pure parsers (`parse_*`) take
//! the text of one file and are tested on captured text.

mod block;
mod host;
mod storage;
mod virt;

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use block::{parse_choice, BlockEnv, DmEnv, QueueEnv};
pub use host::{
    cgroup_version, parse_btime, parse_cpu_list, parse_cpuinfo, parse_os_release, parse_uptime,
    read_sysctls, CgroupVersion, CpuInfo, HostEnv, EXTRA_SYSCTLS,
};
pub use iolab_sys::block::LoopAttrs;
pub use storage::{FsStats, MountEnv, StorageEnv};
pub use virt::{
    container_from_hints, cpuid_hypervisor_vendor, hypervisor_from_cpuid, hypervisor_from_dmi,
    ContainerHints, Virtualization,
};

/// Everything stored about the environment of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// The machine.
    pub host: HostEnv,
    /// The storage under the run's directory, when one was given.
    pub storage: Option<StorageEnv>,
}

impl Environment {
    /// Probe the machine and, if `path` is given, the filesystem and device holding it.
    pub fn probe(path: Option<&Path>) -> Self {
        Environment {
            host: HostEnv::probe(),
            storage: path.map(StorageEnv::probe),
        }
    }

    /// Compact JSON for the results database.
    pub fn to_json(&self) -> String {
        to_json(self, false)
    }

    /// Indented JSON, for people.
    pub fn to_json_pretty(&self) -> String {
        to_json(self, true)
    }
}

/// Serialize to JSON. Cannot fail for these types (string keys, no non-UTF-8 data, non-finite
/// floats become `null`); should it ever, the result is a JSON object naming the error.
fn to_json<T: Serialize>(v: &T, pretty: bool) -> String {
    let r = if pretty {
        serde_json::to_string_pretty(v)
    } else {
        serde_json::to_string(v)
    };
    r.unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string())
}

/// Most bytes read from one /proc or /sys file; everything probed here is far smaller.
const MAX_FILE: u64 = 1 << 20;

/// The text of a small file (lossy UTF-8), or `None` if it cannot be read.
pub(crate) fn read_text(path: impl AsRef<Path>) -> Option<String> {
    let mut buf = Vec::new();
    std::fs::File::open(path.as_ref())
        .and_then(|f| f.take(MAX_FILE).read_to_end(&mut buf))
        .ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// A file's value with surrounding whitespace removed; `None` if unreadable or empty.
pub(crate) fn read_value(path: impl AsRef<Path>) -> Option<String> {
    read_text(path).and_then(|t| nonempty(t.trim()))
}

/// A file holding one unsigned number.
pub(crate) fn read_u64(path: impl AsRef<Path>) -> Option<u64> {
    read_value(path)?.parse().ok()
}

/// A file holding `0` or `1` (or `N`/`Y`).
pub(crate) fn read_bool(path: impl AsRef<Path>) -> Option<bool> {
    iolab_sys::block::parse_bool(&read_value(path)?)
}

/// `Some(s)` unless `s` is empty.
pub(crate) fn nonempty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// A path as text (lossy for non-UTF-8 names, which JSON cannot hold).
pub(crate) fn path_string(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_whole_environment_to_json() {
        let env = Environment::probe(Some(Path::new("/")));
        let json = env.to_json();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(v["host"]["kernel_release"].is_string(), "{json}");
        assert!(v["storage"]["mount"]["fs_type"].is_string(), "{json}");
        let back: Environment = serde_json::from_str(&json).unwrap();
        // (Floats are compared loosely: without serde_json's `float_roundtrip` a value may
        // come back one ULP off.)
        assert_eq!(back.storage, env.storage);
        assert_eq!(back.host.sysctls, env.host.sysctls);
        assert_eq!(back.host.virtualization, env.host.virtualization);
        assert!(env.to_json_pretty().contains('\n'));
        let none = Environment::probe(None);
        assert!(none.storage.is_none());
        assert!(none.to_json().contains("\"storage\":null"));
    }

    #[test]
    fn value_helpers() {
        assert_eq!(read_value("/nonexistent/iolab"), None);
        assert_eq!(read_u64("/proc/sys/kernel/osrelease"), None);
        assert!(read_value("/proc/sys/kernel/osrelease").is_some());
        assert_eq!(nonempty(""), None);
    }
}
