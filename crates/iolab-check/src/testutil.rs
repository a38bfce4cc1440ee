//! Realistic facts of healthy runs, for tests to spoil one fact at a time.

use crate::{Access, DatasetAdvice, DeviceFacts, EnvFacts, Finding, RunFacts, SyncScope};
use serde_json::Value;

pub(crate) const GIB: u64 = 1 << 30;
pub(crate) const MIB: u64 = 1 << 20;
pub(crate) const SEC: u64 = 1_000_000_000;

/// 4 threads reading 1 GiB at random in 4 KiB records for 20 s on an ext4 loop
/// image attached with direct I/O, caches dropped, page cache capped at 256 MiB: the device
/// read what the application read (plus readahead), was busy, nobody else was around.
pub(crate) fn cold_read() -> RunFacts {
    RunFacts {
        dataset_advice: Some(DatasetAdvice {
            grow: Some("raise `size` above {needed} (`size = \"{value}\"`)".into()),
            ..DatasetAdvice::default()
        }),
        access: Some(Access::Read),
        reads_cold: Some(true),
        o_direct: Some(false),
        cache_purged_each_pass: Some(false),
        sync_requested: Some(false),
        sync_scope: Some(SyncScope::Never),
        writes_in_flight_per_file: Some(1),
        app_read_bytes: Some(GIB),
        app_write_bytes: Some(0),
        app_ops: Some(262_144),
        app_claimed: Some(false),
        flush_timed: None,
        untimed_flush: None,
        claimed_seconds: None,
        syscall_read_bytes: None,
        syscall_write_bytes: None,
        syscall_async_io: None,
        elapsed_ns: Some(20 * SEC),
        planned_ns: Some(20 * SEC),
        passes: None,
        engine_threads: Some(4),
        engine_task_clock_ns: Some(6 * SEC),
        engine_usr_sys_ns: Some(5_800_000_000),
        dataset_bytes: Some(GIB),
        mem_total_bytes: Some(8 * GIB),
        cgroup_cache_limit_bytes: Some(256 * MIB),
        cache_cap_own_peak_bytes: None,
        cache_cap_waits: None,
        engine_memory_bytes: None,
        cached_at_start_bytes: Some(180 * MIB),
        caches_dropped: Some(true),
        cache_drop: None,
        device: DeviceFacts {
            name: Some("loop0".into()),
            read_bytes: Some(1128 * MIB),
            write_bytes: Some(0),
            reads: Some(270_000),
            writes: Some(0),
            flushes: Some(0),
            fua_writes: None,
            util_avg_pct: Some(87.5),
            util_series_pct: Some(vec![
                80.0, 88.0, 89.0, 90.0, 87.0, 88.0, 89.0, 88.0, 87.0, 89.0,
            ]),
            volatile_write_cache: Some(true),
            is_loop: Some(true),
            loop_direct_io: Some(true),
        },
        fs_type: Some("ext4".into()),
        cpu_busy_pct: Some(9.0),
        engine_cpu_pct: Some(7.5),
        other_io_bytes: Some(0),
        dirty_expire_centisecs: Some(3000),
        dirty_writeback_centisecs: Some(500),
        psi_memory_full_pct: Some(0.4),
        psi_memory_some_pct: Some(1.1),
        interval_ops: Some(
            (0..20)
                .map(|i| 13_100.0 + [0.0, 120.0, -80.0, 40.0][i % 4])
                .collect(),
        ),
        interval_ns: Some(SEC),
        ran_dry: None,
        ran_dry_ends_thread: None,
        skipped_system: None,
        throttle_limits_writes: None,
        throttle_charged_write_bytes: None,
        environment: None,
        ranks: None,
        stopping: None,
    }
}

/// 256 MiB written in 4 KiB records, each followed by fsync, on ext4 over a virtio disk
/// with a volatile write cache: every record reached the device with a flush behind it,
/// plus ext4's journal.
pub(crate) fn sync_write() -> RunFacts {
    RunFacts {
        dataset_advice: Some(DatasetAdvice {
            grow: Some("raise `size` above {needed} (`size = \"{value}\"`)".into()),
            ..DatasetAdvice::default()
        }),
        access: Some(Access::Write),
        reads_cold: Some(true),
        o_direct: Some(false),
        cache_purged_each_pass: Some(false),
        sync_requested: Some(true),
        sync_scope: Some(SyncScope::EachWrite),
        writes_in_flight_per_file: Some(1),
        app_read_bytes: Some(0),
        app_write_bytes: Some(256 * MIB),
        app_ops: Some(65_536),
        app_claimed: Some(false),
        flush_timed: Some(true),
        untimed_flush: None,
        claimed_seconds: None,
        syscall_read_bytes: None,
        syscall_write_bytes: None,
        syscall_async_io: None,
        elapsed_ns: Some(40 * SEC),
        planned_ns: None,
        passes: None,
        engine_threads: Some(1),
        engine_task_clock_ns: Some(3_200_000_000),
        engine_usr_sys_ns: None,
        dataset_bytes: Some(256 * MIB),
        mem_total_bytes: Some(8 * GIB),
        cgroup_cache_limit_bytes: None,
        cache_cap_own_peak_bytes: None,
        cache_cap_waits: None,
        engine_memory_bytes: None,
        cached_at_start_bytes: Some(420 * MIB),
        caches_dropped: Some(true),
        cache_drop: None,
        device: DeviceFacts {
            name: Some("vdb".into()),
            read_bytes: Some(MIB),
            write_bytes: Some(560 * MIB),
            reads: Some(40),
            writes: Some(131_000),
            flushes: Some(65_600),
            fua_writes: None,
            util_avg_pct: Some(64.0),
            util_series_pct: None,
            volatile_write_cache: Some(true),
            is_loop: Some(false),
            loop_direct_io: None,
        },
        fs_type: Some("ext4".into()),
        cpu_busy_pct: Some(6.0),
        engine_cpu_pct: Some(3.0),
        other_io_bytes: Some(0),
        dirty_expire_centisecs: Some(3000),
        dirty_writeback_centisecs: Some(500),
        psi_memory_full_pct: Some(0.4),
        psi_memory_some_pct: Some(1.1),
        interval_ops: Some(vec![1640.0; 40]),
        interval_ns: Some(SEC),
        ran_dry: None,
        ran_dry_ends_thread: None,
        skipped_system: None,
        throttle_limits_writes: None,
        throttle_charged_write_bytes: None,
        environment: None,
        ranks: None,
        stopping: None,
    }
}

/// A container whose limits the run stayed within: a 2-CPU quota the engine's 4 threads
/// (6 s of CPU in 20 s) never used up, a 1 GiB memory limit with a 300 MiB peak.
pub(crate) fn container() -> EnvFacts {
    EnvFacts {
        kind: "container".into(),
        cpuset: None,
        cpu_quota_cpus: Some(2.0),
        cpu_periods: Some(200),
        cpu_throttled_periods: Some(0),
        cpu_throttled_ns: Some(0),
        memory_limit_bytes: Some(GIB),
        memory_failcnt: Some(0),
        memory_peak_bytes: Some(300 * MIB),
        oom_kills: Some(0),
        vm_cache: None,
        vm_accel: None,
        clocksource: Some("tsc".into()),
        available_clocksources: Some(vec!["tsc".into(), "hpet".into(), "acpi_pm".into()]),
        compared: None,
    }
}

/// A KVM guest whose disk bypasses the host's page cache (`cache=none`), on kvm-clock.
pub(crate) fn vm() -> EnvFacts {
    EnvFacts {
        kind: "vm".into(),
        vm_cache: Some("none".into()),
        vm_accel: Some("kvm".into()),
        clocksource: Some("kvm-clock".into()),
        available_clocksources: Some(vec!["kvm-clock".into(), "tsc".into(), "acpi_pm".into()]),
        ..EnvFacts::default()
    }
}

/// `facts` run in `env`.
pub(crate) fn within(facts: RunFacts, env: EnvFacts) -> RunFacts {
    RunFacts {
        environment: Some(env),
        ranks: None,
        ..facts
    }
}

/// The finding's evidence field, which must exist.
#[track_caller]
pub(crate) fn ev<'a>(f: &'a Finding, key: &str) -> &'a Value {
    match &f.evidence[key] {
        Value::Null => panic!("no evidence `{key}` in {:#}", f.evidence),
        v => v,
    }
}

/// The finding's evidence field as a number.
#[track_caller]
pub(crate) fn ev_f64(f: &Finding, key: &str) -> f64 {
    ev(f, key)
        .as_f64()
        .unwrap_or_else(|| panic!("evidence `{key}` is not a number"))
}

/// `a` and `b` agree to 1e-9 relative.
#[track_caller]
pub(crate) fn close(a: f64, b: f64) {
    assert!(
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0),
        "{a} != {b}"
    );
}
