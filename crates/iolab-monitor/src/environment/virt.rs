//! Is this a virtual machine or a container, and which? Like `systemd-detect-virt`, from
//! several hints, all kept in [`Virtualization`] so that a wrong guess can be seen:
//!
//! - the `hypervisor` flag of `/proc/cpuinfo` (x86: CPUID leaf 1, ECX bit 31);
//! - the hypervisor's CPUID signature (leaf `0x4000_0000`: `KVMKVMKVM`, `Microsoft Hv`, …);
//! - DMI strings (`/sys/class/dmi/id/{sys_vendor,product_name,bios_vendor}`), absent on VMs
//!   without firmware tables (Firecracker) and on most non-x86 machines;
//! - `/sys/hypervisor/type` (Xen);
//! - for containers: `/run/systemd/container`, `container=` in PID 1's environment,
//!   `/run/.containerenv` (Podman), `/.dockerenv` (Docker), PID 1's cgroup path, and a
//!   kernel release naming Microsoft (WSL).

use serde::{Deserialize, Serialize};

use super::read_value;

/// Virtualization of this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Virtualization {
    /// The hypervisor: `kvm`, `qemu`, `vmware`, `xen`, `hyperv`, `virtualbox`, `amazon`,
    /// `google`, `bhyve`, `parallels`, …; `none` on bare metal; `unknown` when a hypervisor
    /// is present but unnamed, or when there is nothing to go on.
    pub hypervisor: String,
    /// Running in a virtual machine; `None` if that cannot be told.
    pub vm: Option<bool>,
    /// The `hypervisor` CPU flag; `None` if `/proc/cpuinfo` lists no flags (non-x86).
    pub hypervisor_flag: Option<bool>,
    /// The hypervisor's CPUID signature (x86 only, with the flag set).
    pub cpuid_vendor: Option<String>,
    /// `/sys/class/dmi/id/sys_vendor`.
    pub dmi_sys_vendor: Option<String>,
    /// `/sys/class/dmi/id/product_name`.
    pub dmi_product_name: Option<String>,
    /// `/sys/class/dmi/id/bios_vendor`.
    pub dmi_bios_vendor: Option<String>,
    /// `/sys/hypervisor/type`.
    pub sys_hypervisor_type: Option<String>,
    /// The container runtime this runs in (`docker`, `podman`, `lxc`, `systemd-nspawn`,
    /// `kubernetes`, `wsl`, …); `None` if no hint of one.
    pub container: Option<String>,
}

/// Hints of a container, read by [`Virtualization::probe`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContainerHints {
    /// Content of `/run/systemd/container`.
    pub systemd_container: Option<String>,
    /// `container=` of PID 1's environment (or, failing that, of this process).
    pub container_env: Option<String>,
    /// `/run/.containerenv` exists (Podman).
    pub containerenv: bool,
    /// `/.dockerenv` exists (Docker).
    pub dockerenv: bool,
    /// Text of `/proc/1/cgroup`.
    pub pid1_cgroup: Option<String>,
    /// Kernel release (`…-microsoft-standard-WSL2` on WSL).
    pub kernel_release: Option<String>,
}

/// The container runtime the hints point to, strongest hint first.
pub fn container_from_hints(h: &ContainerHints) -> Option<String> {
    let named = |s: &Option<String>| {
        s.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    if let Some(s) = named(&h.systemd_container).or_else(|| named(&h.container_env)) {
        return Some(s);
    }
    if h.containerenv {
        return Some("podman".into());
    }
    if h.dockerenv {
        return Some("docker".into());
    }
    if let Some(cg) = &h.pid1_cgroup {
        for (needle, kind) in [
            ("kubepods", "kubernetes"),
            ("/docker", "docker"),
            ("libpod", "podman"),
            ("/lxc", "lxc"),
        ] {
            if cg.contains(needle) {
                return Some(kind.into());
            }
        }
    }
    let wsl = h
        .kernel_release
        .as_deref()
        .is_some_and(|r| r.to_ascii_lowercase().contains("microsoft"));
    wsl.then(|| "wsl".into())
}

/// Hypervisor named by a CPUID signature (leaf `0x4000_0000`, EBX ECX EDX).
pub fn hypervisor_from_cpuid(vendor: &str) -> Option<&'static str> {
    Some(match vendor.trim_end_matches('\0') {
        "KVMKVMKVM" | "Linux KVM Hv" => "kvm",
        "TCGTCGTCGTCG" => "qemu",
        "XenVMMXenVMM" => "xen",
        "VMwareVMware" => "vmware",
        "Microsoft Hv" => "hyperv",
        "bhyve bhyve " => "bhyve",
        "VBoxVBoxVBox" => "virtualbox",
        " lrpepyh  vr" | "prl hyperv  " => "parallels",
        "ACRNACRNACRN" => "acrn",
        "QNXQVMBSQG" => "qnx",
        "Apple VZ" => "apple",
        _ => return None,
    })
}

/// Hypervisor named by DMI strings (`sys_vendor`, `product_name`, `bios_vendor`).
pub fn hypervisor_from_dmi(
    sys_vendor: Option<&str>,
    product_name: Option<&str>,
    bios_vendor: Option<&str>,
) -> Option<&'static str> {
    const TABLE: &[(&str, &str)] = &[
        ("KVM", "kvm"),
        ("OpenStack", "kvm"),
        ("KubeVirt", "kvm"),
        ("Amazon EC2", "amazon"),
        ("QEMU", "qemu"),
        ("VMware", "vmware"),
        ("VMW", "vmware"),
        ("innotek GmbH", "virtualbox"),
        ("VirtualBox", "virtualbox"),
        ("Xen", "xen"),
        ("Bochs", "bochs"),
        ("Parallels", "parallels"),
        ("BHYVE", "bhyve"),
        ("Hyper-V", "hyperv"),
        ("Apple Virtualization", "apple"),
        ("Google Compute Engine", "google"),
    ];
    for s in [sys_vendor, product_name, bios_vendor]
        .into_iter()
        .flatten()
    {
        if let Some((_, kind)) = TABLE.iter().find(|(p, _)| s.starts_with(p)) {
            return Some(kind);
        }
    }
    let hyperv = sys_vendor == Some("Microsoft Corporation")
        && product_name.is_some_and(|p| p.starts_with("Virtual Machine"));
    hyperv.then_some("hyperv")
}

/// The hypervisor's CPUID signature, if the CPU says it runs under one (x86 only).
pub fn cpuid_hypervisor_vendor() -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        // SAFETY: CPUID exists on every x86_64 CPU; leaves 1 and 0x4000_0000 only read.
        // (`__cpuid` is a safe function in newer Rust, hence the allow.)
        #[allow(unused_unsafe)]
        let leaf1 = unsafe { __cpuid(1) };
        if leaf1.ecx & (1 << 31) == 0 {
            return None;
        }
        // SAFETY: as above; with the hypervisor bit set, leaf 0x4000_0000 is the
        // hypervisor's.
        #[allow(unused_unsafe)]
        let r = unsafe { __cpuid(0x4000_0000) };
        let mut b = Vec::with_capacity(12);
        for reg in [r.ebx, r.ecx, r.edx] {
            b.extend_from_slice(&reg.to_le_bytes());
        }
        let s = String::from_utf8_lossy(&b)
            .trim_end_matches('\0')
            .to_owned();
        (!s.is_empty()).then_some(s)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

impl Virtualization {
    /// Probe this machine. `hypervisor_flag` comes from `/proc/cpuinfo` (see
    /// [`super::CpuInfo`]); `kernel_release` is used for WSL.
    pub fn probe(hypervisor_flag: Option<bool>, kernel_release: Option<&str>) -> Self {
        let dmi = |f: &str| read_value(format!("/sys/class/dmi/id/{f}"));
        let container_env = super::read_text("/proc/1/environ")
            .and_then(|t| {
                t.split('\0')
                    .find_map(|kv| kv.strip_prefix("container=").map(str::to_owned))
            })
            .or_else(|| std::env::var("container").ok());
        let hints = ContainerHints {
            systemd_container: read_value("/run/systemd/container"),
            container_env,
            containerenv: std::path::Path::new("/run/.containerenv").exists(),
            dockerenv: std::path::Path::new("/.dockerenv").exists(),
            pid1_cgroup: super::read_text("/proc/1/cgroup"),
            kernel_release: kernel_release.map(str::to_owned),
        };
        let mut v = Virtualization {
            hypervisor: String::new(),
            vm: None,
            hypervisor_flag,
            cpuid_vendor: cpuid_hypervisor_vendor(),
            dmi_sys_vendor: dmi("sys_vendor"),
            dmi_product_name: dmi("product_name"),
            dmi_bios_vendor: dmi("bios_vendor"),
            sys_hypervisor_type: read_value("/sys/hypervisor/type"),
            container: container_from_hints(&hints),
        };
        (v.hypervisor, v.vm) = v.classify();
        v
    }

    /// The hypervisor and whether this is a VM, from the raw hints in `self`: the CPUID
    /// signature, then DMI, then `/sys/hypervisor/type`, then the CPU flag alone.
    pub fn classify(&self) -> (String, Option<bool>) {
        let named = self
            .cpuid_vendor
            .as_deref()
            .and_then(hypervisor_from_cpuid)
            .or_else(|| {
                hypervisor_from_dmi(
                    self.dmi_sys_vendor.as_deref(),
                    self.dmi_product_name.as_deref(),
                    self.dmi_bios_vendor.as_deref(),
                )
            })
            .or(match self.sys_hypervisor_type.as_deref() {
                Some("xen") => Some("xen"),
                _ => None,
            });
        match (named, self.hypervisor_flag) {
            (Some(n), _) => (n.to_owned(), Some(true)),
            (None, Some(true)) => ("unknown".to_owned(), Some(true)),
            (None, Some(false)) => ("none".to_owned(), Some(false)),
            (None, None) => ("unknown".to_owned(), None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(flag: Option<bool>) -> Virtualization {
        Virtualization {
            hypervisor: String::new(),
            vm: None,
            hypervisor_flag: flag,
            cpuid_vendor: None,
            dmi_sys_vendor: None,
            dmi_product_name: None,
            dmi_bios_vendor: None,
            sys_hypervisor_type: None,
            container: None,
        }
    }

    #[test]
    fn classify_hypervisor() {
        assert_eq!(raw(Some(false)).classify(), ("none".into(), Some(false)));
        assert_eq!(raw(Some(true)).classify(), ("unknown".into(), Some(true)));
        assert_eq!(raw(None).classify(), ("unknown".into(), None));

        let mut v = raw(Some(true));
        v.dmi_sys_vendor = Some("QEMU".into());
        v.dmi_product_name = Some("Standard PC (Q35 + ICH9, 2009)".into());
        assert_eq!(v.classify().0, "qemu");
        v.cpuid_vendor = Some("KVMKVMKVM".into());
        assert_eq!(v.classify().0, "kvm", "CPUID names the accelerator");

        let mut v = raw(Some(true));
        v.dmi_sys_vendor = Some("Microsoft Corporation".into());
        v.dmi_product_name = Some("Virtual Machine".into());
        assert_eq!(v.classify(), ("hyperv".into(), Some(true)));

        let mut v = raw(None);
        v.dmi_sys_vendor = Some("VMware, Inc.".into());
        assert_eq!(v.classify(), ("vmware".into(), Some(true)));

        let mut v = raw(None);
        v.sys_hypervisor_type = Some("xen".into());
        assert_eq!(v.classify().0, "xen");

        let mut v = raw(Some(false));
        v.dmi_sys_vendor = Some("Dell Inc.".into());
        v.dmi_product_name = Some("PowerEdge R650".into());
        assert_eq!(v.classify(), ("none".into(), Some(false)));
    }

    #[test]
    fn cpuid_signatures() {
        assert_eq!(hypervisor_from_cpuid("KVMKVMKVM\0\0\0"), Some("kvm"));
        assert_eq!(hypervisor_from_cpuid("Microsoft Hv"), Some("hyperv"));
        assert_eq!(hypervisor_from_cpuid("VMwareVMware"), Some("vmware"));
        assert_eq!(hypervisor_from_cpuid("XenVMMXenVMM"), Some("xen"));
        assert_eq!(hypervisor_from_cpuid("GenuineIntel"), None);
        assert_eq!(hypervisor_from_dmi(None, None, None), None);
        assert_eq!(hypervisor_from_dmi(None, None, Some("SeaBIOS")), None);
        assert_eq!(
            hypervisor_from_dmi(Some("Amazon EC2"), Some("m5.large"), None),
            Some("amazon")
        );
    }

    #[test]
    fn container_hints() {
        let none = ContainerHints::default();
        assert_eq!(container_from_hints(&none), None);
        let docker = ContainerHints {
            dockerenv: true,
            ..Default::default()
        };
        assert_eq!(container_from_hints(&docker).as_deref(), Some("docker"));
        let nspawn = ContainerHints {
            systemd_container: Some("systemd-nspawn\n".into()),
            dockerenv: true,
            ..Default::default()
        };
        assert_eq!(
            container_from_hints(&nspawn).as_deref(),
            Some("systemd-nspawn")
        );
        let podman = ContainerHints {
            container_env: Some("".into()),
            containerenv: true,
            ..Default::default()
        };
        assert_eq!(container_from_hints(&podman).as_deref(), Some("podman"));
        let k8s = ContainerHints {
            pid1_cgroup: Some("0::/kubepods/besteffort/pod1/abc\n".into()),
            ..Default::default()
        };
        assert_eq!(container_from_hints(&k8s).as_deref(), Some("kubernetes"));
        let host_cgroup = ContainerHints {
            pid1_cgroup: Some("0::/init.scope\n".into()),
            kernel_release: Some("6.1.0-18-amd64".into()),
            ..Default::default()
        };
        assert_eq!(container_from_hints(&host_cgroup), None);
        let wsl = ContainerHints {
            kernel_release: Some("5.15.153.1-microsoft-standard-WSL2".into()),
            ..Default::default()
        };
        assert_eq!(container_from_hints(&wsl).as_deref(), Some("wsl"));
    }

    #[test]
    fn probe_this_machine() {
        let flag = super::super::read_text("/proc/cpuinfo")
            .map(|t| super::super::parse_cpuinfo(&t))
            .and_then(|c| c.hypervisor_flag);
        let v = Virtualization::probe(flag, None);
        if flag == Some(true) {
            assert_eq!(v.vm, Some(true));
            assert_ne!(v.hypervisor, "none");
        }
        if flag == Some(false) {
            assert_eq!(v.cpuid_vendor, None, "{v:?}");
        }
    }
}
