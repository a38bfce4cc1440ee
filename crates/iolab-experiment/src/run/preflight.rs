//! Before anything is touched: what the plan needs root for, and whether the machine can
//! make its filesystems and may format its devices.

use super::*;

/// Reasons this plan needs root, if any (checked before anything is touched).
pub fn root_requirements(plan: &ExperimentPlan) -> Vec<String> {
    use iolab_sut::Target;
    let mut why = Vec::new();
    if plan.procedure.drop_caches {
        why.push("dropping the page cache (procedure.drop_caches = true)".to_string());
    }
    if let Some(c) = plan.configs.first() {
        match &c.sut.target {
            Target::Directory(_) => {}
            Target::Tmpfs(_) => why.push("mounting a tmpfs".into()),
            Target::LoopImage(_) => why.push("attaching a loop device and mounting it".into()),
            Target::BlockDevice(_) => why.push("formatting and mounting a block device".into()),
        }
    }
    if plan.configs.iter().any(|c| !c.sut.tunables.is_empty()) {
        why.push("setting kernel tunables".into());
    }
    if plan.configs.iter().any(|c| c.sut.cache_limit.is_some()) {
        why.push("creating a memory cgroup (sut.cache_limit)".into());
    }
    if plan.procedure.save_block_trace {
        why.push("tracing the block layer (procedure.save_block_trace = true)".into());
    }
    for w in plan.configs.iter().filter_map(|c| c.workload.needs_root()) {
        if !why.contains(&w) {
            why.push(w);
        }
    }
    why
}

pub(super) fn is_root() -> bool {
    // SAFETY: geteuid has no failure mode.
    unsafe { libc::geteuid() == 0 }
}

/// Refuses, before the experiment is stored or anything is changed, a filesystem this
/// machine cannot make or mount (no mkfs.xfs, no f2fs in the kernel), and a named block device
/// that may not be formatted (mounted, backs `/`, in use, not allowed, or signed). The same
/// checks run again at each `prepare`, since the device could change in between.
pub(super) fn preflight(plan: &ExperimentPlan) -> Result<(), RunnerError> {
    let mut kinds = std::collections::BTreeSet::new();
    for c in &plan.configs {
        if let Some(f) = &c.sut.fs {
            if kinds.insert(f.kind.name()) {
                iolab_sut::availability(f.kind).require()?;
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for c in &plan.configs {
        if let iolab_sut::Target::BlockDevice(b) = &c.sut.target {
            if seen.insert(b.path.clone()) {
                iolab_sut::safety::check_block_device(&b.path, b.allow_destroy, b.force, |_| {
                    false
                })?;
            }
        }
    }
    Ok(())
}
