//! What is stored about the machine: the host with the experiment, and with every run the
//! storage under its directory and what iolab set up.

use super::*;

/// The host as stored with the experiment.
pub(super) fn host_environment() -> Value {
    serde_json::to_value(iolab_monitor::environment::HostEnv::once()).unwrap_or(Value::Null)
}

/// What a run stores as its environment: the machine and the storage under the run
/// directory as probed, plus what iolab set up.
pub(super) fn run_environment(config: &ConfigPlan, p: &Prepared) -> Value {
    let env = iolab_monitor::environment::Environment::probe(Some(&p.mountpoint));
    let machine = serde_json::to_value(&env).unwrap_or(Value::Null);
    let tunables: BTreeMap<String, Value> = p
        .tunables
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                json!({ "value": t.value, "original": t.original }),
            )
        })
        .collect();
    json!({
        "machine": machine,
        "sut": {
            "mountpoint": p.mountpoint,
            "fs": p.fs.map(|f| f.to_string()),
            "mount_options": p.mount.as_ref().map(|m| format!("{},{}", m.mount_options, m.super_options)),
            "device": p.device.as_ref().map(|d| d.name.clone()),
            // Which filesystem instance: a fresh mkfs gives a new UUID. Only for a
            // filesystem iolab made; a directory's device is not iolab's to probe.
            "fs_uuid": p.device.as_ref().filter(|_| p.fs.is_some()).and_then(|d| fs_uuid(&d.path)),
            "direct_io": p.direct_io,
            "tunables": tunables,
            "cache_limit_bytes": p.cgroup.as_ref().map(|c| c.limit_bytes),
            // The device the blkio limits are on (a partition's disk) and the limits.
            "throttle": p.throttle.as_ref().map(|t| json!({ "device": t.dev, "limits": t.limits })),
            "spec": serde_json::to_value(&config.sut_spec).unwrap_or(Value::Null),
        },
    })
}

/// The filesystem UUID on `dev` (blkid), if it has one.
pub(super) fn fs_uuid(dev: &Path) -> Option<String> {
    let out = std::process::Command::new("blkid")
        .args(["-p", "-o", "value", "-s", "UUID"])
        .arg(dev)
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}
