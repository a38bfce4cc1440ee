//! The system under test as an experiment writes it (raw, serde): parsed here, validated into
//! a [`SutPlan`] by [`SutSpec::validate`] / [`SutSpec::validate_all`] without looking at the
//! machine (or by [`SutSpec::validate_here`], which also looks, read-only, at the tunables
//! this machine has), and acted on by [`crate::Sut::prepare`].
//!
//! In TOML:
//!
//! ```toml
//! [sut]
//! target = { kind = "loop_image", size = "1G" }     # image_dir, direct_io = true, preallocate
//! fs = { kind = "ext4", mkfs_options = "-E lazy_itable_init=0", mount_options = "data=journal" }
//! cache_limit = "256M"                              # v1 memory cgroup for the engine ("none": no cap)
//! throttle = { read_iops = 150, write_iops = 150, read_bps = "100M", write_bps = "100M" }
//! cache = { kind = "dm-cache", size = "1G", block_size = "64K", mode = "writethrough" }
//! [sut.tunables]
//! "vm.dirty_expire_centisecs" = 500
//! "queue/scheduler" = "none"
//! ```
//!
//! Other targets: `{ kind = "directory", path = "/mnt/x" }`, `{ kind = "tmpfs", size = "2G" }`
//! (or `"25%"` of RAM), `{ kind = "block_device", path = "/dev/sdb", allow_destroy = true,
//! force = false }`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::blockdev::DevInfo;
use crate::container::ContainerSpec;
use crate::env::{self, EnvPlan, EnvironmentSpec};
use crate::error::{Error, Result, SpecError};
use crate::fs::FsKind;
use crate::mount::MountOptions;
use crate::plan::{FsPlan, SutPlan, TunableSetting};
use crate::size::parse_size;
use crate::stack::{self, CacheSpec};
use crate::target::{BlockDevice, Directory, LoopImage, Target, Tmpfs, TmpfsSize};
use crate::throttle::Throttle;
use crate::tunable::{self, Found, TunableName};
use crate::util;

/// Smallest loop image accepted.
pub const MIN_IMAGE_SIZE: u64 = 16 << 20;

/// Smallest cache limit accepted (the engine's own memory counts against it).
pub const MIN_CACHE_LIMIT: u64 = 8 << 20;

/// The SUT section of an experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SutSpec {
    /// Where the files live.
    pub target: TargetSpec,
    /// The filesystem to make (required for loop images and block devices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsSpec>,
    /// Kernel tunables for the run, by name (restored afterwards).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tunables: BTreeMap<String, TunableValue>,
    /// Page-cache cap for the engine (a v1 memory cgroup limit), e.g. `"256M"`; `"none"` is
    /// no cap, as when the key is left out (so that a factor can switch the cap off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_limit: Option<String>,
    /// Slow the target's device down for the engine (a v1 blkio cgroup): an origin that
    /// behaves like a disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle: Option<ThrottleSpec>,
    /// A block cache stacked on the target's device (dm-cache, bcache), where the kernel
    /// has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheSpec>,
    /// Where the workload runs: `"host"` (default), `"container"`, `"vm"`, or a table with
    /// the environment's settings ([`crate::env`]).
    #[serde(
        default,
        deserialize_with = "crate::env::deserialize_environment",
        skip_serializing_if = "Option::is_none"
    )]
    pub environment: Option<EnvironmentSpec>,
}

/// `throttle = { read_iops = 150, write_iops = 150, read_bps = "100M", write_bps = "100M" }`:
/// limits per second on the target's device, for the engine's threads (at least one).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThrottleSpec {
    /// Read requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_iops: Option<u64>,
    /// Write requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iops: Option<u64>,
    /// Read bytes per second: a number or a size (`"100M"`, binary units).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bps: Option<TunableValue>,
    /// Write bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bps: Option<TunableValue>,
}

/// The `cache_limit` that sets no cap.
pub const NO_CACHE_LIMIT: &str = "none";

/// A target as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TargetSpec {
    /// An existing directory.
    Directory {
        /// The directory.
        path: PathBuf,
    },
    /// A fresh tmpfs.
    Tmpfs {
        /// `"2G"` or `"25%"`.
        size: String,
    },
    /// A loop image iolab creates.
    LoopImage {
        /// `"1G"`.
        size: String,
        /// Directory for the image.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        image_dir: Option<PathBuf>,
        /// Attach with direct I/O.
        #[serde(default = "yes")]
        direct_io: bool,
        /// fallocate the image instead of leaving it sparse.
        #[serde(default)]
        preallocate: bool,
    },
    /// A named block device.
    BlockDevice {
        /// `/dev/sdb`.
        path: PathBuf,
        /// Allow formatting a device iolab did not create.
        #[serde(default)]
        allow_destroy: bool,
        /// Allow formatting over an existing signature.
        #[serde(default)]
        force: bool,
    },
}

fn yes() -> bool {
    true
}

/// A filesystem as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsSpec {
    /// `ext4`, `xfs`, `btrfs`, `f2fs`, `tmpfs`.
    pub kind: String,
    /// mkfs options: one string split at white space, or a list of arguments.
    #[serde(default)]
    pub mkfs_options: ArgList,
    /// mount options, `a,b=c`.
    #[serde(default)]
    pub mount_options: String,
}

/// Command-line arguments as a string or a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ArgList {
    /// Split at white space (no quoting).
    Line(String),
    /// Taken as is.
    List(Vec<String>),
}

impl Default for ArgList {
    fn default() -> Self {
        ArgList::List(Vec::new())
    }
}

impl ArgList {
    /// The arguments.
    pub fn to_args(&self) -> Vec<String> {
        match self {
            ArgList::Line(s) => s.split_whitespace().map(str::to_owned).collect(),
            ArgList::List(v) => v.clone(),
        }
    }
}

/// A tunable's value: TOML/JSON integers and strings are both fine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TunableValue {
    /// `500`.
    Int(i64),
    /// `"mq-deadline"`.
    Text(String),
}

impl std::fmt::Display for TunableValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TunableValue::Int(i) => write!(f, "{i}"),
            TunableValue::Text(s) => f.write_str(s),
        }
    }
}

impl SutSpec {
    /// Check everything that can be checked without the machine, and resolve to a plan; the
    /// first mistake found (see [`SutSpec::validate_all`] for all of them).
    pub fn validate(&self) -> Result<SutPlan> {
        self.validate_all().map_err(first)
    }

    /// Like [`SutSpec::validate`], with every independent mistake: a bad target size, a
    /// filesystem too large for the image, a bad cache limit and each bad tunable are all
    /// reported (never an empty list). A mistake that makes a later check meaningless skips
    /// it: mount options are not judged for a directory target, which takes no filesystem.
    pub fn validate_all(&self) -> Result<SutPlan, Vec<SpecError>> {
        self.check(false)
    }

    /// Like [`SutSpec::validate_all`], plus what a read-only look at this machine shows about
    /// the tunables: each must exist here (with the closest existing name as a hint), must be
    /// readable back (so it can be restored), and a sysctl holding an integer must be given
    /// one. Device tunables are looked up only when the device is known before the run (a
    /// block_device target, or a directory on one); a loop image's device is not. Nothing is
    /// changed.
    pub fn validate_here(&self) -> Result<SutPlan, Vec<SpecError>> {
        self.check(true)
    }

    fn check(&self, here: bool) -> Result<SutPlan, Vec<SpecError>> {
        let mut errors = Vec::new();
        let target = validate_target(&self.target, &mut errors);
        let fs = match (&self.target, &self.fs) {
            (_, None) => None,
            (TargetSpec::Directory { .. }, Some(_)) => {
                errors.push(SpecError::value(
                    "fs",
                    "a directory target uses the filesystem it is on; to test a given \
                     filesystem, use a loop_image target",
                ));
                None
            }
            (_, Some(f)) => validate_fs(f, &mut errors),
        };
        if let Some(target) = &target {
            check_target_fs(target, self.fs.is_some(), fs.as_ref(), &mut errors);
        }
        let tunes_device = self
            .tunables
            .keys()
            .any(|n| TunableName::parse(n).is_ok_and(|t| t.needs_device()));
        let device = if here && tunes_device {
            known_device(&self.target)
        } else {
            KnownDevice::Unknown
        };
        let mut tunables = Vec::new();
        for (name, value) in &self.tunables {
            if let Some(t) = validate_tunable(name, value, target.as_ref(), &mut errors) {
                if here {
                    check_tunable_here(name, &t, &device, &mut errors);
                }
                tunables.push(t);
            }
        }
        let cache_limit = self.cache_limit.as_ref().filter(|s| *s != NO_CACHE_LIMIT);
        let cache_limit = cache_limit.and_then(|s| {
            let checked = parse_size(s).and_then(|b| {
                if b < MIN_CACHE_LIMIT {
                    Err(format!(
                        "{s} is too small: a page cache that small holds little more than the \
                         filesystem's own metadata; use at least {} MiB",
                        MIN_CACHE_LIMIT >> 20
                    ))
                } else {
                    Ok(b)
                }
            });
            checked
                .map_err(|m| errors.push(SpecError::value("cache_limit", m)))
                .ok()
        });
        let throttle = self
            .throttle
            .as_ref()
            .and_then(|t| validate_throttle("throttle", t, &self.target, &mut errors));
        let cache = self.cache.as_ref().and_then(|c| {
            let before = errors.len();
            if !matches!(
                self.target,
                TargetSpec::LoopImage { .. } | TargetSpec::BlockDevice { .. }
            ) {
                errors.push(SpecError::value(
                    "cache",
                    "a cache is stacked on the target's block device: use a loop_image or \
                     block_device target",
                ));
            }
            let c = stack::validate(c, &mut errors)?;
            if here && errors.len() == before {
                if let Err(e) = stack::require(&c) {
                    let message = match e {
                        Error::FsUnavailable { reason, .. } => reason,
                        other => other.to_string(),
                    };
                    errors.push(SpecError::value("cache.kind", message));
                }
            }
            Some(c)
        });
        let environment = match &self.environment {
            None => Some(EnvPlan::default()),
            Some(e) => {
                let plan = env::validate(e, &self.target, &mut errors);
                if let Some(p) = plan.as_ref().filter(|p| !p.is_host()) {
                    // The container's or the VM's own limits apply to the workload there;
                    // iolab's cgroups for the engine in its own process would not.
                    for (key, given, instead) in [
                        ("cache_limit", cache_limit.is_some(), "environment.memory"),
                        ("throttle", throttle.is_some(), "environment.io"),
                    ] {
                        if given {
                            errors.push(
                                SpecError::key(
                                    key,
                                    format!(
                                        "`{key}` limits iolab's own process; the workload runs \
                                         in a {}",
                                        p.name()
                                    ),
                                )
                                .hint(Some(
                                    if p.name() == "container" {
                                        format!("give the container's limit as {instead}")
                                    } else {
                                        "remove it: a VM's memory is environment.memory".into()
                                    },
                                )),
                            );
                        }
                    }
                    if here {
                        env::check_here(e, p, &mut errors);
                    }
                }
                if let (Some(p), true) = (&plan, here) {
                    if p.is_host() {
                        env::check_here(e, p, &mut errors);
                    }
                }
                plan
            }
        };
        // The container that `prepare` makes: the environment's, with its CPU set.
        let container = environment.as_ref().and_then(|e| match &e.kind {
            env::EnvKind::Container(c) => Some(ContainerSpec {
                cpuset: e.cpuset.clone(),
                ..c.clone()
            }),
            _ => None,
        });
        match (target, environment) {
            (Some(target), Some(environment)) if errors.is_empty() => Ok(SutPlan {
                target,
                fs,
                tunables,
                cache_limit,
                throttle,
                cache,
                environment,
                container,
            }),
            _ => Err(errors),
        }
    }
}

/// `throttle = { ... }`: at least one limit, each positive, on a target with a device of
/// its own.
pub(crate) fn validate_throttle(
    field: &str,
    t: &ThrottleSpec,
    target: &TargetSpec,
    errors: &mut Vec<SpecError>,
) -> Option<Throttle> {
    let before = errors.len();
    if !matches!(
        target,
        TargetSpec::LoopImage { .. } | TargetSpec::BlockDevice { .. }
    ) {
        errors.push(
            SpecError::key(
                field,
                "throttling slows the target's block device down: a tmpfs has none, and a \
                 directory's device is shared with the rest of the machine",
            )
            .hint(Some("use a loop_image or block_device target".into())),
        );
    }
    let iops = |field: &str, v: Option<u64>, errors: &mut Vec<SpecError>| match v {
        Some(0) => {
            errors.push(SpecError::value(
                field,
                "must be at least 1 (leave the key out for no limit)",
            ));
            None
        }
        v => v,
    };
    let bps = |field: &str, v: &Option<TunableValue>, errors: &mut Vec<SpecError>| {
        let bytes = match v.as_ref()? {
            TunableValue::Int(i) => u64::try_from(*i).map_err(|_| "must not be negative".into()),
            TunableValue::Text(s) => parse_size(s),
        };
        match bytes {
            Ok(0) => {
                errors.push(SpecError::value(
                    field,
                    "must be at least 1 byte per second (leave the key out for no limit)",
                ));
                None
            }
            Ok(b) => Some(b),
            Err(m) => {
                errors.push(SpecError::value(field, m));
                None
            }
        }
    };
    let plan = Throttle {
        read_iops: iops(&format!("{field}.read_iops"), t.read_iops, errors),
        write_iops: iops(&format!("{field}.write_iops"), t.write_iops, errors),
        read_bps: bps(&format!("{field}.read_bps"), &t.read_bps, errors),
        write_bps: bps(&format!("{field}.write_bps"), &t.write_bps, errors),
    };
    if errors.len() == before && plan.files().is_empty() {
        errors.push(SpecError::value(
            field,
            "give at least one of read_iops, write_iops, read_bps, write_bps",
        ));
    }
    (errors.len() == before).then_some(plan)
}

/// The first of a non-empty list of mistakes, as an [`Error`].
fn first(errors: Vec<SpecError>) -> Error {
    errors.into_iter().next().map_or_else(
        || Error::spec("", "invalid specification (no reason recorded)"),
        Error::from,
    )
}

/// A target and its filesystem together: which targets take which filesystems, and whether a
/// loop image is large enough for its filesystem.
fn check_target_fs(
    target: &Target,
    fs_given: bool,
    fs: Option<&FsPlan>,
    errors: &mut Vec<SpecError>,
) {
    match (target, fs) {
        (Target::Tmpfs(_), Some(f)) if f.kind != FsKind::Tmpfs => errors.push(SpecError::value(
            "fs.kind",
            format!("a tmpfs target is tmpfs, not {}", f.kind),
        )),
        (Target::Tmpfs(_), Some(f)) if !f.mkfs_options.is_empty() => {
            errors.push(SpecError::value("fs.mkfs_options", "tmpfs has no mkfs"))
        }
        (Target::LoopImage(_) | Target::BlockDevice(_), None) if !fs_given => {
            errors.push(SpecError::value(
                "fs",
                "this target needs a filesystem, e.g. fs = { kind = \"ext4\" }",
            ))
        }
        (Target::LoopImage(_) | Target::BlockDevice(_), Some(f)) if f.kind == FsKind::Tmpfs => {
            errors.push(SpecError::value(
                "fs.kind",
                "tmpfs lives in memory; use target = { kind = \"tmpfs\", size = ... }",
            ))
        }
        (Target::LoopImage(l), Some(f)) => {
            let min = f.kind.imp().min_size();
            if l.size < min {
                errors.push(
                    SpecError::value(
                        "target.size",
                        format!("{} needs at least {} MiB", f.kind, min.div_ceil(1 << 20)),
                    )
                    .hint(Some("make the image larger".into())),
                );
            }
        }
        _ => {}
    }
}

/// One tunable as written: its name parsed and its value one line.
fn validate_tunable(
    name: &str,
    value: &TunableValue,
    target: Option<&Target>,
    errors: &mut Vec<SpecError>,
) -> Option<TunableSetting> {
    let field = tunable_field(name);
    let before = errors.len();
    let parsed = TunableName::parse(name)
        .map_err(|m| errors.push(SpecError::key(&field, m)))
        .ok();
    let value = value.to_string();
    if value.trim().is_empty() || value.contains('\n') {
        errors.push(SpecError::value(
            &field,
            "the value must be one non-empty line",
        ));
    }
    if let (Some(n), Some(Target::Tmpfs(_))) = (&parsed, target) {
        if n.needs_device() {
            errors.push(SpecError::key(
                &field,
                "a tmpfs target has no block device to tune",
            ));
        }
    }
    match parsed {
        Some(name) if errors.len() == before => Some(TunableSetting {
            name,
            value: value.trim().to_owned(),
        }),
        _ => None,
    }
}

fn tunable_field(name: &str) -> String {
    format!("tunables.{name:?}")
}

/// The block device of a target, as far as it can be known before the run.
enum KnownDevice {
    /// Found: device tunables are files of its queue.
    Known(DevInfo),
    /// The target certainly has none (a directory on tmpfs or overlayfs): device tunables
    /// cannot work. The text says why.
    None(String),
    /// Not known until the run (a loop image), or not findable now (a missing device or
    /// directory, reported elsewhere).
    Unknown,
}

fn known_device(target: &TargetSpec) -> KnownDevice {
    match target {
        TargetSpec::BlockDevice { path, .. } => std::fs::canonicalize(path)
            .ok()
            .and_then(|p| DevInfo::of_path(&p).ok())
            .map_or(KnownDevice::Unknown, KnownDevice::Known),
        TargetSpec::Directory { path } if path.is_dir() => match DevInfo::of_file(path) {
            Some(d) => KnownDevice::Known(d),
            None => KnownDevice::None(format!(
                "{} is on a filesystem without a block device (tmpfs, overlayfs, btrfs…)",
                path.display()
            )),
        },
        _ => KnownDevice::Unknown,
    }
}

/// The read-only look at one tunable on this machine (see [`SutSpec::validate_here`]).
fn check_tunable_here(
    written: &str,
    t: &TunableSetting,
    device: &KnownDevice,
    errors: &mut Vec<SpecError>,
) {
    let field = tunable_field(written);
    let path = match (t.name.needs_device(), device) {
        (false, _) => t.name.resolve(None),
        (true, KnownDevice::Known(d)) => t.name.resolve(Some(d)),
        (true, KnownDevice::None(why)) => {
            errors.push(
                SpecError::key(
                    &field,
                    format!("{} is a block-device setting, but {why}", t.name),
                )
                .hint(Some(
                    "use a loop_image or block_device target to tune a device".into(),
                )),
            );
            return;
        }
        (true, KnownDevice::Unknown) => return,
    };
    let path = match path {
        Ok(p) => p,
        Err(m) => return errors.push(SpecError::key(&field, m)),
    };
    match tunable::look_up(&t.name, &path) {
        Err(u) => errors.push(
            SpecError::key(&field, format!("{} ({})", u.message, path.display())).hint(u.hint),
        ),
        Ok(Found::Unreadable(_)) => {}
        Ok(Found::Value(current)) => {
            if let Err(u) = tunable::check_value(&t.name, &path, &current, &t.value) {
                errors.push(SpecError::value(&field, u.message).hint(u.hint));
            }
        }
    }
}

fn validate_target(t: &TargetSpec, errors: &mut Vec<SpecError>) -> Option<Target> {
    let mut fail = |field: &str, message: String| {
        errors.push(SpecError::value(field, message));
    };
    match t {
        TargetSpec::Directory { path } => {
            utf8(&mut fail, "target.path", path)?;
            Some(Target::Directory(Directory { path: path.clone() }))
        }
        TargetSpec::Tmpfs { size } => {
            let size = match size.trim().strip_suffix('%') {
                Some(p) => match p.trim().parse::<u8>() {
                    Ok(p) if (1..=100).contains(&p) => TmpfsSize::PercentOfRam(p),
                    _ => {
                        fail(
                            "target.size",
                            format!("{size:?}: a percentage of RAM must be 1% to 100%"),
                        );
                        return None;
                    }
                },
                None => {
                    TmpfsSize::Bytes(parse_size(size).map_err(|m| fail("target.size", m)).ok()?)
                }
            };
            Some(Target::Tmpfs(Tmpfs { size }))
        }
        TargetSpec::LoopImage {
            size,
            image_dir,
            direct_io,
            preallocate,
        } => {
            let dir_ok = match image_dir {
                Some(d) => utf8(&mut fail, "target.image_dir", d).is_some(),
                None => true,
            };
            let size = parse_size(size).map_err(|m| fail("target.size", m)).ok()?;
            // Still a target when too small: the filesystem's own minimum is checked too.
            if size < MIN_IMAGE_SIZE {
                fail(
                    "target.size",
                    format!("a loop image must be at least {} MiB", MIN_IMAGE_SIZE >> 20),
                );
            }
            dir_ok.then(|| {
                Target::LoopImage(LoopImage {
                    size,
                    image_dir: image_dir.clone(),
                    direct_io: *direct_io,
                    preallocate: *preallocate,
                })
            })
        }
        TargetSpec::BlockDevice {
            path,
            allow_destroy,
            force,
        } => {
            if !path.is_absolute() {
                fail(
                    "target.path",
                    "a block device is named by its absolute path, e.g. /dev/sdb".into(),
                );
                return None;
            }
            Some(Target::BlockDevice(BlockDevice {
                path: path.clone(),
                allow_destroy: *allow_destroy,
                force: *force,
            }))
        }
    }
}

/// The path as UTF-8, or a mistake recorded for `field`.
fn utf8(fail: &mut impl FnMut(&str, String), field: &str, p: &Path) -> Option<()> {
    match util::utf8_path(field, p) {
        Ok(_) => Some(()),
        Err(Error::InvalidSpec { message, .. }) => {
            fail(field, message);
            None
        }
        Err(other) => {
            fail(field, other.to_string());
            None
        }
    }
}

fn validate_fs(f: &FsSpec, errors: &mut Vec<SpecError>) -> Option<FsPlan> {
    let kind = f
        .kind
        .parse::<FsKind>()
        .map_err(|m| errors.push(SpecError::value("fs.kind", m)));
    let mount = MountOptions::parse(&f.mount_options)
        .map_err(|m| errors.push(SpecError::value("fs.mount_options", m)));
    let (Ok(kind), Ok(mount)) = (kind, mount) else {
        return None;
    };
    if let Err(m) = kind.imp().check_mount_options(&mount) {
        errors.push(SpecError::value("fs.mount_options", m));
        return None;
    }
    Some(FsPlan {
        kind,
        mkfs_options: f.mkfs_options.to_args(),
        mount,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::At;

    fn spec(json: &str) -> SutSpec {
        serde_json::from_str(json).unwrap()
    }

    fn err(json: &str) -> String {
        spec(json).validate().unwrap_err().to_string()
    }

    const LOOP: &str = r#""target":{"kind":"loop_image","size":"256M"},"fs":{"kind":"ext4"}"#;

    fn all_errors(json: &str) -> Vec<String> {
        spec(json)
            .validate_all()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn throttle_limits() {
        let p = spec(&format!(
            r#"{{{LOOP},"throttle":{{"read_iops":150,"write_iops":150,"read_bps":"100M","write_bps":1048576}}}}"#
        ))
        .validate()
        .unwrap();
        assert_eq!(
            p.throttle,
            Some(Throttle {
                read_iops: Some(150),
                write_iops: Some(150),
                read_bps: Some(100 << 20),
                write_bps: Some(1 << 20)
            })
        );
        assert!(p.changes_machine());
        let e = all_errors(&format!(
            r#"{{{LOOP},"throttle":{{"read_iops":0,"read_bps":"fast","write_bps":-5}}}}"#
        ));
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(
            e[0].starts_with("throttle.read_iops: must be at least 1"),
            "{e:?}"
        );
        assert!(
            e[1].starts_with("throttle.read_bps: \"fast\" is not a size"),
            "{e:?}"
        );
        assert!(
            e[2].starts_with("throttle.write_bps: must not be negative"),
            "{e:?}"
        );
        let e = all_errors(&format!(r#"{{{LOOP},"throttle":{{}}}}"#));
        assert_eq!(
            e,
            ["throttle: give at least one of read_iops, write_iops, read_bps, write_bps"]
        );
        let e = spec(r#"{"target":{"kind":"tmpfs","size":"1G"},"throttle":{"read_iops":10}}"#)
            .validate_all()
            .unwrap_err();
        assert_eq!(e[0].at, At::Key);
        assert!(e[0].message.contains("a tmpfs has none"), "{e:?}");
        assert!(serde_json::from_str::<SutSpec>(&format!(
            r#"{{{LOOP},"throttle":{{"iops":10}}}}"#
        ))
        .is_err());
    }

    #[test]
    fn stacked_caches_are_validated_and_detected() {
        let p = spec(&format!(
            r#"{{{LOOP},"cache":{{"kind":"bcache","size":"512M","mode":"writeback"}}}}"#
        ))
        .validate()
        .unwrap();
        assert_eq!(p.cache.as_ref().map(|c| c.kind()), Some("bcache"));
        let e = all_errors(&format!(
            r#"{{{LOOP},"cache":{{"kind":"dm-cache","size":"1G","block_size":"4K"}}}}"#
        ));
        assert!(
            e[0].starts_with("cache.block_size: dm-cache blocks are 32K"),
            "{e:?}"
        );
        let e = all_errors(
            r#"{"target":{"kind":"tmpfs","size":"1G"},"cache":{"kind":"bcache","size":"1G"}}"#,
        );
        assert!(e[0].starts_with("cache: a cache is stacked"), "{e:?}");
        // With a look at the machine: this kernel's answer, located at cache.kind.
        let e = spec(&format!(
            r#"{{{LOOP},"cache":{{"kind":"dm-cache","size":"1G"}}}}"#
        ))
        .validate_here()
        .unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].field, "cache.kind");
        assert!(
            e[0].message.contains("has no device-mapper")
                || e[0].message.contains("does not set up"),
            "{e:?}"
        );
    }

    #[test]
    fn loop_image_with_ext4_and_tunables() {
        let p = spec(
            r#"{"target":{"kind":"loop_image","size":"256M"},
                "fs":{"kind":"ext4","mkfs_options":"-E lazy_itable_init=0","mount_options":"data=journal"},
                "tunables":{"vm.dirty_expire_centisecs":500,"queue/scheduler":"none"},
                "cache_limit":"64M"}"#,
        )
        .validate()
        .unwrap();
        match &p.target {
            Target::LoopImage(l) => {
                assert_eq!(l.size, 256 << 20);
                assert!(l.direct_io, "direct I/O is the default");
                assert!(!l.preallocate);
            }
            other => panic!("{other:?}"),
        }
        let fs = p.fs.unwrap();
        assert_eq!(fs.kind, FsKind::Ext4);
        assert_eq!(fs.mkfs_options, ["-E", "lazy_itable_init=0"]);
        assert_eq!(fs.mount.get("data"), Some("journal"));
        assert_eq!(p.tunables.len(), 2);
        assert_eq!(p.tunables[1].value, "500");
        assert_eq!(p.cache_limit, Some(64 << 20));
    }

    /// Sizes go through the one parser every size of iolab goes through: `1.5G` is a cache
    /// limit as it is a workload's `size` (it was refused here).
    #[test]
    fn sizes_take_fractions_of_a_unit_as_everywhere() {
        let p = spec(r#"{"target":{"kind":"tmpfs","size":"1.5G"},"cache_limit":"1.5G"}"#)
            .validate()
            .unwrap();
        assert_eq!(p.cache_limit, Some(3 << 29));
        match &p.target {
            Target::Tmpfs(t) => assert_eq!(t.size, TmpfsSize::Bytes(3 << 29)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cache_limit_none_is_no_cap() {
        let p = spec(r#"{"target":{"kind":"tmpfs","size":"1G"},"cache_limit":"none"}"#)
            .validate()
            .unwrap();
        assert_eq!(p.cache_limit, None);
        assert!(
            err(r#"{"target":{"kind":"tmpfs","size":"1G"},"cache_limit":"nope"}"#)
                .contains("cache_limit")
        );
    }

    #[test]
    fn inconsistent_specs_are_refused_with_advice() {
        assert!(err(r#"{"target":{"kind":"loop_image","size":"1G"}}"#).contains("fs = {"));
        assert!(
            err(r#"{"target":{"kind":"directory","path":"/x"},"fs":{"kind":"ext4"}}"#)
                .contains("loop_image")
        );
        assert!(
            err(r#"{"target":{"kind":"loop_image","size":"100M"},"fs":{"kind":"xfs"}}"#)
                .contains("xfs needs at least 300 MiB")
        );
        assert!(err(r#"{"target":{"kind":"loop_image","size":"1G"},"fs":{"kind":"ext4","mount_options":"data=fast"}}"#)
            .contains("data=writeback"));
        assert!(err(r#"{"target":{"kind":"loop_image","size":"1G"},"fs":{"kind":"ext4","mount_options":"remount"}}"#)
            .contains("not allowed"));
        assert!(err(
            r#"{"target":{"kind":"tmpfs","size":"1G"},"tunables":{"queue/scheduler":"none"}}"#
        )
        .contains("no block device"));
        assert!(err(r#"{"target":{"kind":"tmpfs","size":"150%"}}"#).contains("1% to 100%"));
        assert!(
            err(r#"{"target":{"kind":"block_device","path":"sdb"},"fs":{"kind":"ext4"}}"#)
                .contains("absolute")
        );
        assert!(
            err(r#"{"target":{"kind":"tmpfs","size":"1G"},"cache_limit":"1M"}"#)
                .contains("too small")
        );
        assert!(
            err(r#"{"target":{"kind":"tmpfs","size":"1G"},"tunables":{"vm.drop_caches":3}}"#)
                .contains("action")
        );
        assert!(
            err(r#"{"target":{"kind":"loop_image","size":"1G"},"fs":{"kind":"ext5"}}"#)
                .contains("did you mean `ext4`")
        );
    }

    /// `(field, at, message)` of every mistake, in the order found.
    fn all(json: &str, here: bool) -> Vec<(String, At, String)> {
        let s = spec(json);
        let r = if here {
            s.validate_here()
        } else {
            s.validate_all()
        };
        r.unwrap_err()
            .into_iter()
            .map(|e| (e.field, e.at, e.message))
            .collect()
    }

    #[test]
    fn independent_mistakes_are_all_reported() {
        let e = all(
            r#"{"target":{"kind":"loop_image","size":"8m"},"fs":{"kind":"xfs"},
                "cache_limit":"1m","tunables":{"vm..x":1,"vm.dirty_ratio":""}}"#,
            false,
        );
        let fields: Vec<(&str, At)> = e.iter().map(|(f, a, _)| (f.as_str(), *a)).collect();
        assert_eq!(
            fields,
            [
                ("target.size", At::Value),
                ("target.size", At::Value),
                ("tunables.\"vm..x\"", At::Key),
                ("tunables.\"vm.dirty_ratio\"", At::Value),
                ("cache_limit", At::Value),
            ],
            "{e:?}"
        );
        assert!(
            e[0].2.contains("a loop image must be at least 16 MiB"),
            "{e:?}"
        );
        assert!(e[1].2.contains("xfs needs at least 300 MiB"), "{e:?}");
        assert!(e[4].2.contains("too small"), "{e:?}");
        // validate() gives the first of them.
        let first = spec(r#"{"target":{"kind":"loop_image","size":"8m"},"fs":{"kind":"xfs"}}"#)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(first.contains("16 MiB"), "{first}");
    }

    #[test]
    fn a_tunable_can_have_a_bad_name_and_a_bad_value() {
        let e = all(
            r#"{"target":{"kind":"tmpfs","size":"1G"},"tunables":{"queue/../x":" "}}"#,
            false,
        );
        assert_eq!(e.len(), 2, "{e:?}");
        assert_eq!((e[0].1, e[1].1), (At::Key, At::Value), "{e:?}");
    }

    #[test]
    fn mistakes_that_make_later_checks_meaningless_are_not_repeated() {
        // A directory takes no filesystem: its mount options are not judged as well.
        let e = all(
            r#"{"target":{"kind":"directory","path":"/x"},
                "fs":{"kind":"ext4","mount_options":"data=fast"}}"#,
            false,
        );
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].0, "fs");
        // A bad filesystem is not also missing.
        let e = all(
            r#"{"target":{"kind":"loop_image","size":"1G"},"fs":{"kind":"ext5"}}"#,
            false,
        );
        assert_eq!(e.len(), 1, "{e:?}");
        // An unreadable size has no minimum to miss.
        let e = all(
            r#"{"target":{"kind":"loop_image","size":"big"},"fs":{"kind":"xfs"}}"#,
            false,
        );
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].2.contains("not a size"), "{e:?}");
    }

    #[test]
    fn validate_here_looks_up_the_tunables_on_this_machine() {
        if !Path::new("/proc/sys/vm/dirty_ratio").is_file() {
            return iolab_testkit::not_run("no /proc/sys here");
        }
        let json = r#"{"target":{"kind":"tmpfs","size":"1G"},
            "tunables":{"vm.nonexistent":3,"vm.dirty_ratio":"abc","vm.dirty_ratoi":5}}"#;
        // Without looking, all three are fine.
        assert!(spec(json).validate_all().is_ok());
        let e = spec(json).validate_here().unwrap_err();
        assert_eq!(e.len(), 3, "{e:?}");
        assert_eq!(e[0].field, "tunables.\"vm.dirty_ratio\"");
        assert_eq!(e[0].at, At::Value);
        assert!(e[0].message.contains("takes an integer"), "{e:?}");
        assert_eq!(e[1].field, "tunables.\"vm.dirty_ratoi\"");
        assert_eq!(e[1].at, At::Key);
        assert!(
            e[1].message.starts_with("no such tunable on this kernel"),
            "{e:?}"
        );
        assert_eq!(e[1].hint.as_deref(), Some("did you mean `vm.dirty_ratio`?"));
        assert_eq!(e[2].field, "tunables.\"vm.nonexistent\"");
        assert!(
            e[2].message
                .contains("no such tunable on this kernel (/proc/sys/vm/nonexistent)"),
            "{e:?}"
        );
        // Good names and values pass, also as absolute paths.
        let ok = spec(
            r#"{"target":{"kind":"tmpfs","size":"1G"},
                "tunables":{"vm.dirty_ratio":20,"/proc/sys/vm/dirty_background_ratio":"10"}}"#,
        );
        assert!(ok.validate_here().is_ok());
    }

    #[test]
    fn validate_here_skips_device_tunables_of_a_device_not_known_yet() {
        let s = spec(
            r#"{"target":{"kind":"loop_image","size":"64M"},"fs":{"kind":"ext4"},
                "tunables":{"queue/no_such_attribute":"1"}}"#,
        );
        assert!(s.validate_here().is_ok());
    }

    #[test]
    fn validate_here_looks_up_device_tunables_of_a_named_block_device() {
        // Any block device of this machine: only looked at, never used.
        let dev = std::fs::read_dir("/sys/block").ok().and_then(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| Path::new("/dev").join(e.file_name()))
                .find(|p| DevInfo::of_path(p).is_ok())
        });
        let Some(dev) = dev else {
            return iolab_testkit::not_run("no block device in /sys/block here");
        };
        let json = |tunable: &str| {
            format!(
                r#"{{"target":{{"kind":"block_device","path":"{}"}},"fs":{{"kind":"ext4"}},
                    "tunables":{{"{tunable}":"1"}}}}"#,
                dev.display()
            )
        };
        assert!(spec(&json("queue/read_ahead_kb")).validate_here().is_ok());
        let e = spec(&json("queue/read_ahead_kbb"))
            .validate_here()
            .unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].at, At::Key);
        assert!(e[0].message.starts_with("no such tunable"), "{e:?}");
        assert_eq!(
            e[0].hint.as_deref(),
            Some("did you mean `queue/read_ahead_kb`?")
        );
    }

    #[test]
    fn validate_here_finds_a_directory_without_a_block_device() {
        // /dev is a devtmpfs: no block device under it.
        if DevInfo::of_file(Path::new("/dev")).is_some() {
            return iolab_testkit::not_run("/dev is on a block device here");
        }
        let e = spec(
            r#"{"target":{"kind":"directory","path":"/dev"},"tunables":{"queue/scheduler":"none"}}"#,
        )
        .validate_here()
        .unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].at, At::Key);
        assert!(e[0].message.contains("without a block device"), "{e:?}");
    }

    #[test]
    fn unknown_fields_are_errors() {
        assert!(serde_json::from_str::<SutSpec>(
            r#"{"target":{"kind":"tmpfs","size":"1G","colour":"red"}}"#
        )
        .is_err());
        assert!(serde_json::from_str::<SutSpec>(
            r#"{"target":{"kind":"block_device","path":"/dev/sdb","allow_destory":true}}"#
        )
        .is_err());
    }

    #[test]
    fn block_device_flags_default_to_safe() {
        let p =
            spec(r#"{"target":{"kind":"block_device","path":"/dev/sdb"},"fs":{"kind":"ext4"}}"#)
                .validate()
                .unwrap();
        assert_eq!(
            p.target,
            Target::BlockDevice(BlockDevice {
                path: "/dev/sdb".into(),
                allow_destroy: false,
                force: false
            })
        );
    }

    #[test]
    fn tmpfs_sizes() {
        let p = spec(r#"{"target":{"kind":"tmpfs","size":"25%"}}"#)
            .validate()
            .unwrap();
        assert_eq!(
            p.target,
            Target::Tmpfs(Tmpfs {
                size: TmpfsSize::PercentOfRam(25)
            })
        );
        let p = spec(r#"{"target":{"kind":"tmpfs","size":"1G"},"fs":{"kind":"tmpfs","mount_options":"huge=always"}}"#)
            .validate()
            .unwrap();
        assert_eq!(
            p.target,
            Target::Tmpfs(Tmpfs {
                size: TmpfsSize::Bytes(1 << 30)
            })
        );
    }

    #[test]
    fn mkfs_options_as_list() {
        let p = spec(r#"{"target":{"kind":"loop_image","size":"1G"},"fs":{"kind":"ext4","mkfs_options":["-L","my label"]}}"#)
            .validate()
            .unwrap();
        assert_eq!(p.fs.unwrap().mkfs_options, ["-L", "my label"]);
    }
}
