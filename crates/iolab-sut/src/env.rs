//! Where a run's workload executes: `[sut] environment`. `host` (the default) runs it in
//! iolab's own process, as always; `container` in a process iolab starts inside new cgroups
//! and namespaces; `vm` in a qemu guest whose disk is the run's target. Every environment can
//! pin the workload to a CPU set, so that environments compared with each other ran on the
//! same CPUs.
//!
//! ```toml
//! environment = "container"
//! environment = { kind = "container", cpuset = "1", cpus = 0.5, memory = "256M", pids = 512,
//!                 io = { write_bps = "10M" }, hostname = "bench", rootfs = "/srv/rootfs" }
//! environment = { kind = "vm", cpuset = "1", vcpus = 1, memory = "1G", cache = "none",
//!                 accel = "auto", kernel = "/boot/vmlinuz-6.1.0-28-amd64", timeout = "10m" }
//! ```

use std::path::PathBuf;
use std::time::Duration;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::container::ContainerSpec;
use crate::error::SpecError;
use crate::size::parse_size;
use crate::spec::{validate_throttle, TargetSpec, ThrottleSpec, TunableValue};

/// The environment as written: a kind (`"vm"`) or a table with a `kind`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentSpec {
    /// `host`, `container` or `vm`.
    pub kind: String,
    /// The level's name when the table is a factor's level (`env = [{ name = "pinned",
    /// kind = "container", … }]`); not used otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The CPUs the workload runs on (`"1"`, `"0-1"`, `2`), in every environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuset: Option<TunableValue>,
    /// Container: a CPU quota in CPUs (a CFS quota: `0.5` is half of one CPU's time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    /// Container: its memory limit; VM: the guest's memory (`"256M"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<TunableValue>,
    /// Container: the most processes and threads it may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<u64>,
    /// Container: limits on the target's block device (as `throttle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<ThrottleSpec>,
    /// Container: its hostname (default `iolab`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Container: a root filesystem directory to run in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rootfs: Option<PathBuf>,
    /// VM: virtual CPUs (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vcpus: Option<u32>,
    /// VM: the disk's cache mode on the host: `none` (default: O_DIRECT), `writeback`,
    /// `unsafe`, `directsync`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// VM: `auto` (default: KVM where it works, else TCG), `kvm`, `tcg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accel: Option<String>,
    /// VM: the guest's kernel (default: the one iolab finds, see docs/environments.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<PathBuf>,
    /// VM: how long a guest may take from start to power-off beyond the workload's planned
    /// time (default 5 minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
}

/// `environment = "vm"` is `environment = { kind = "vm" }`.
pub(crate) fn deserialize_environment<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<EnvironmentSpec>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<EnvironmentSpec>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an environment: \"host\", \"container\", \"vm\" or a table with a kind")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(EnvironmentSpec {
                kind: v.to_owned(),
                ..EnvironmentSpec::default()
            }))
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            EnvironmentSpec::deserialize(de::value::MapAccessDeserializer::new(map)).map(Some)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(V)
}

/// The kinds, as written.
pub const KINDS: [&str; 3] = ["host", "container", "vm"];

/// A validated environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EnvPlan {
    pub kind: EnvKind,
    /// The CPUs the workload runs on; `None`: wherever the kernel puts it.
    pub cpuset: Option<Vec<u32>>,
}

impl EnvPlan {
    /// `host`, `container` or `vm`.
    pub fn name(&self) -> &'static str {
        match self.kind {
            EnvKind::Host => "host",
            EnvKind::Container(_) => "container",
            EnvKind::Vm(_) => "vm",
        }
    }

    /// Whether the workload runs in iolab's own process.
    pub fn is_host(&self) -> bool {
        matches!(self.kind, EnvKind::Host)
    }
}

/// What kind of environment, with its settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EnvKind {
    #[default]
    Host,
    /// Its limits; its `cpuset` is the environment's.
    Container(ContainerSpec),
    Vm(VmPlan),
}

/// A VM's settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VmPlan {
    pub vcpus: u32,
    pub memory: u64,
    pub cache: VmCache,
    pub accel: VmAccel,
    pub kernel: Option<PathBuf>,
    /// Start to power-off, beyond the workload's planned time.
    pub timeout: Duration,
}

/// The VM disk's cache mode on the host (qemu's `cache=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VmCache {
    /// O_DIRECT on the host, flushes passed through: what the guest writes durably is durable.
    None,
    /// The host's page cache too, flushes passed through.
    Writeback,
    /// The host's page cache, flushes ignored: a guest's fsync is not durable.
    Unsafe,
    /// O_DIRECT and O_DSYNC on the host.
    Directsync,
}

impl VmCache {
    pub const NAMES: [&'static str; 4] = ["none", "writeback", "unsafe", "directsync"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    fn parse(s: &str) -> Option<VmCache> {
        Some(match s {
            "none" => VmCache::None,
            "writeback" => VmCache::Writeback,
            "unsafe" => VmCache::Unsafe,
            "directsync" => VmCache::Directsync,
            _ => return None,
        })
    }

    /// Whether a flush the guest makes is acknowledged before the host made it durable.
    pub fn acknowledges_unflushed(self) -> bool {
        self == VmCache::Unsafe
    }
}

/// How qemu runs the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VmAccel {
    /// KVM where it works here, else TCG.
    Auto,
    Kvm,
    /// Emulation: functional numbers, not performance.
    Tcg,
}

/// Default guest memory.
pub const VM_MEMORY: u64 = 1 << 30;
/// Default bound on a guest's life beyond its workload's planned time.
pub const VM_TIMEOUT: Duration = Duration::from_secs(300);
/// Smallest guest memory accepted (the kernel and iolab must fit).
pub const MIN_VM_MEMORY: u64 = 128 << 20;

const CONTAINER_KEYS: &[&str] = &["cpus", "memory", "pids", "io", "hostname", "rootfs"];
const VM_KEYS: &[&str] = &["vcpus", "memory", "cache", "accel", "kernel", "timeout"];

/// Validates `environment` (without looking at the machine beyond its own CPUs' numbering,
/// which [`check_here`] looks at).
pub(crate) fn validate(
    e: &EnvironmentSpec,
    target: &TargetSpec,
    errors: &mut Vec<SpecError>,
) -> Option<EnvPlan> {
    let before = errors.len();
    let given = given_keys(e);
    let allowed: &[&str] = match e.kind.as_str() {
        "host" => &[],
        "container" => CONTAINER_KEYS,
        "vm" => VM_KEYS,
        other => {
            errors.push(
                SpecError::value("environment.kind", format!("unknown environment {other:?}"))
                    .hint(Some(format!(
                        "one of {}",
                        KINDS.map(|k| format!("\"{k}\"")).join(", ")
                    ))),
            );
            return None;
        }
    };
    for k in given.iter().filter(|k| !allowed.contains(k)) {
        let owner = if CONTAINER_KEYS.contains(k) {
            "a container"
        } else {
            "a vm"
        };
        errors.push(
            SpecError::key(
                format!("environment.{k}"),
                format!(
                    "`{k}` is a setting of {owner}, not of a {} environment",
                    e.kind
                ),
            )
            .hint(Some("remove it, or change environment.kind".into())),
        );
    }
    let cpuset = e.cpuset.as_ref().and_then(|c| {
        let text = c.to_string();
        match iolab_sys::cpus::parse_cpu_list(&text) {
            Some(v) if !v.is_empty() => Some(v),
            _ => {
                errors.push(
                    SpecError::value("environment.cpuset", format!("{text:?} is not a CPU list"))
                        .hint(Some(
                            "CPU numbers and ranges, e.g. \"1\" or \"0-1,3\"".into(),
                        )),
                );
                None
            }
        }
    });
    let memory = |min: u64, errors: &mut Vec<SpecError>| {
        let m = e.memory.as_ref()?;
        let bytes = match m {
            TunableValue::Int(i) => u64::try_from(*i).map_err(|_| "must not be negative".into()),
            TunableValue::Text(s) => parse_size(s),
        };
        match bytes {
            Ok(b) if b < min => {
                errors.push(SpecError::value(
                    "environment.memory",
                    format!("{m} is too small: at least {} MiB", min >> 20),
                ));
                None
            }
            Ok(b) => Some(b),
            Err(msg) => {
                errors.push(SpecError::value("environment.memory", msg));
                None
            }
        }
    };
    let kind = match e.kind.as_str() {
        "container" => {
            let cpus = e.cpus.filter(|c| {
                let ok = c.is_finite() && *c > 0.0;
                if !ok {
                    errors.push(SpecError::value(
                        "environment.cpus",
                        "must be more than 0 CPUs (0.5 is half of one CPU's time)",
                    ));
                }
                ok
            });
            if e.pids == Some(0) {
                errors.push(SpecError::value(
                    "environment.pids",
                    "must be at least 1 (leave it out for no limit)",
                ));
            }
            let io =
                e.io.as_ref()
                    .and_then(|t| validate_throttle("environment.io", t, target, errors));
            let hostname = e.hostname.clone().unwrap_or_else(|| "iolab".into());
            if hostname.is_empty()
                || hostname.len() > 64
                || !hostname
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
            {
                errors.push(SpecError::value(
                    "environment.hostname",
                    format!(
                        "{hostname:?} is not a host name (letters, digits, '-', '.'; at most 64)"
                    ),
                ));
            }
            EnvKind::Container(ContainerSpec {
                cpus,
                cpuset: cpuset.clone(),
                memory: memory(crate::container::MIN_MEMORY, errors),
                pids: e.pids,
                io,
                hostname,
                rootfs: e.rootfs.clone(),
                keep_paths: Vec::new(),
            })
        }
        "vm" => {
            if !matches!(
                target,
                TargetSpec::LoopImage { .. } | TargetSpec::BlockDevice { .. }
            ) {
                errors.push(
                    SpecError::value(
                        "environment.kind",
                        "a VM sees the run's target as its virtio disk: the target must be a \
                         block device",
                    )
                    .hint(Some(
                        "use target = { kind = \"loop_image\", size = … }".into(),
                    )),
                );
            }
            if e.vcpus == Some(0) {
                errors.push(SpecError::value("environment.vcpus", "must be at least 1"));
            }
            let cache = match e.cache.as_deref() {
                None => Some(VmCache::None),
                Some(c) => VmCache::parse(c).or_else(|| {
                    errors.push(
                        SpecError::value("environment.cache", format!("unknown cache mode {c:?}"))
                            .hint(Some(format!("one of {}", VmCache::NAMES.join(", ")))),
                    );
                    None
                }),
            };
            let accel = match e.accel.as_deref() {
                None | Some("auto") => Some(VmAccel::Auto),
                Some("kvm") => Some(VmAccel::Kvm),
                Some("tcg") => Some(VmAccel::Tcg),
                Some(a) => {
                    errors.push(
                        SpecError::value("environment.accel", format!("unknown accelerator {a:?}"))
                            .hint(Some("auto, kvm or tcg".into())),
                    );
                    None
                }
            };
            let timeout = match e.timeout.as_deref() {
                None => Some(VM_TIMEOUT),
                Some(t) => match iolab_util::units::parse_duration(t) {
                    Ok(d) if !d.is_zero() => Some(d),
                    Ok(_) => {
                        errors.push(SpecError::value(
                            "environment.timeout",
                            "must be more than 0",
                        ));
                        None
                    }
                    Err(m) => {
                        errors.push(SpecError::value("environment.timeout", m.to_string()));
                        None
                    }
                },
            };
            let memory = memory(MIN_VM_MEMORY, errors).unwrap_or(VM_MEMORY);
            match (cache, accel, timeout) {
                (Some(cache), Some(accel), Some(timeout)) => EnvKind::Vm(VmPlan {
                    vcpus: e.vcpus.unwrap_or(1).max(1),
                    memory,
                    cache,
                    accel,
                    kernel: e.kernel.clone(),
                    timeout,
                }),
                _ => return None,
            }
        }
        _ => EnvKind::Host,
    };
    (errors.len() == before).then_some(EnvPlan { kind, cpuset })
}

/// What a read-only look at this machine refuses: CPUs it does not have, a kernel or root
/// filesystem that is not there.
pub(crate) fn check_here(e: &EnvironmentSpec, plan: &EnvPlan, errors: &mut Vec<SpecError>) {
    if let (Some(set), Ok(online)) = (&plan.cpuset, iolab_sys::cpus::online()) {
        let missing: Vec<u32> = set
            .iter()
            .copied()
            .filter(|c| !online.contains(c))
            .collect();
        if !missing.is_empty() {
            errors.push(
                SpecError::value(
                    "environment.cpuset",
                    format!(
                        "CPU {} is not online on this machine",
                        iolab_sys::cpus::format_cpu_list(&missing)
                    ),
                )
                .hint(Some(format!(
                    "this machine's CPUs are {}",
                    iolab_sys::cpus::format_cpu_list(&online)
                ))),
            );
        }
    }
    if let EnvKind::Container(c) = &plan.kind {
        // What `validate` judged already (the CPUs above, for every kind) is said once.
        for p in c.machine_problems() {
            if p.field != "environment.cpuset" && !errors.iter().any(|e| e.field == p.field) {
                errors.push(p);
            }
        }
    }
    if let (EnvKind::Vm(_), Some(k)) = (&plan.kind, &e.kernel) {
        if !k.is_file() {
            errors.push(
                SpecError::value(
                    "environment.kernel",
                    format!("{} is not a file", k.display()),
                )
                .hint(Some(
                    "a kernel image (vmlinuz); leave the key out for the one iolab finds".into(),
                )),
            );
        }
    }
}

fn given_keys(e: &EnvironmentSpec) -> Vec<&'static str> {
    let mut k = Vec::new();
    let mut given = |name: &'static str, is: bool| {
        if is {
            k.push(name)
        }
    };
    given("cpus", e.cpus.is_some());
    given("memory", e.memory.is_some());
    given("pids", e.pids.is_some());
    given("io", e.io.is_some());
    given("hostname", e.hostname.is_some());
    given("rootfs", e.rootfs.is_some());
    given("vcpus", e.vcpus.is_some());
    given("cache", e.cache.is_some());
    given("accel", e.accel.is_some());
    given("kernel", e.kernel.is_some());
    given("timeout", e.timeout.is_some());
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SutSpec;

    const LOOP: &str = r#""target":{"kind":"loop_image","size":"256M"},"fs":{"kind":"ext4"}"#;

    fn plan(env: &str) -> Result<EnvPlan, Vec<String>> {
        let s: SutSpec = serde_json::from_str(&format!(r#"{{{LOOP},"environment":{env}}}"#))
            .map_err(|e| vec![e.to_string()])?;
        s.validate_all()
            .map(|p| p.environment)
            .map_err(|e| e.into_iter().map(|e| e.to_string()).collect())
    }

    #[test]
    fn a_kind_alone_or_a_table() {
        assert_eq!(plan(r#""vm""#).unwrap().name(), "vm");
        assert_eq!(plan(r#""host""#).unwrap(), EnvPlan::default());
        let c = plan(
            r#"{"kind":"container","cpuset":"1","cpus":0.5,"memory":"256M","pids":64,
               "io":{"write_bps":"10M"}}"#,
        )
        .unwrap();
        assert_eq!(c.cpuset, Some(vec![1]));
        let EnvKind::Container(l) = c.kind else {
            panic!("not a container: {c:?}")
        };
        assert_eq!(
            (l.cpus, l.memory, l.pids, l.hostname.as_str()),
            (Some(0.5), Some(256 << 20), Some(64), "iolab")
        );
        assert_eq!(l.io.unwrap().write_bps, Some(10 << 20));
        let v =
            plan(r#"{"kind":"vm","vcpus":2,"cache":"unsafe","accel":"tcg","cpuset":1}"#).unwrap();
        let EnvKind::Vm(v) = v.kind else {
            panic!("not a vm")
        };
        assert_eq!(
            (v.vcpus, v.memory, v.cache, v.accel),
            (2, VM_MEMORY, VmCache::Unsafe, VmAccel::Tcg)
        );
        assert!(v.cache.acknowledges_unflushed());
    }

    #[test]
    fn mistakes_name_their_key() {
        let e = plan(r#""jail""#).unwrap_err();
        assert!(
            e[0].starts_with("environment.kind: unknown environment \"jail\""),
            "{e:?}"
        );
        assert!(e[0].contains("\"host\", \"container\", \"vm\""), "{e:?}");
        let e = plan(r#"{"kind":"container","vcpus":2,"cpus":0,"cpuset":"x"}"#).unwrap_err();
        assert!(
            e.iter()
                .any(|m| m.starts_with("environment.vcpus: `vcpus` is a setting of a vm")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|m| m.starts_with("environment.cpus: must be more than 0")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|m| m.starts_with("environment.cpuset: \"x\" is not a CPU list")),
            "{e:?}"
        );
        let e = plan(r#"{"kind":"vm","cache":"fast","memory":"1M"}"#).unwrap_err();
        assert!(
            e.iter()
                .any(|m| m.starts_with("environment.cache: unknown cache mode \"fast\"")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|m| m.starts_with("environment.memory: 1M is too small")),
            "{e:?}"
        );
        // Unknown keys are serde's to refuse.
        assert!(
            plan(r#"{"kind":"vm","disk":"x"}"#).unwrap_err()[0].contains("unknown field `disk`")
        );
    }

    #[test]
    fn a_vm_needs_a_block_device_and_environments_bring_their_own_limits() {
        let s: SutSpec =
            serde_json::from_str(r#"{"target":{"kind":"tmpfs","size":"1G"},"environment":"vm"}"#)
                .unwrap();
        let e = s.validate_all().unwrap_err();
        assert!(
            e[0].to_string()
                .contains("the target must be a block device"),
            "{e:?}"
        );
        let s: SutSpec = serde_json::from_str(&format!(
            r#"{{{LOOP},"cache_limit":"64M","environment":"container"}}"#
        ))
        .unwrap();
        let e = s.validate_all().unwrap_err();
        assert!(e[0].to_string().contains("environment.memory"), "{e:?}");
    }

    #[test]
    fn cpus_this_machine_lacks_are_refused_here() {
        let s: SutSpec = serde_json::from_str(&format!(
            r#"{{{LOOP},"environment":{{"kind":"container","cpuset":"4000"}}}}"#
        ))
        .unwrap();
        assert!(s.validate_all().is_ok());
        let e = s.validate_here().unwrap_err();
        assert!(
            e[0].to_string()
                .starts_with("environment.cpuset: CPU 4000 is not online"),
            "{e:?}"
        );
    }
}
