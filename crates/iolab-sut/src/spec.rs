//! The system under test as an experiment writes it (raw, serde): parsed here, validated into
//! a [`SutPlan`] by [`SutSpec::validate`] without looking at the machine, and acted on by
//! [`crate::Sut::prepare`].
//!
//! In TOML:
//!
//! ```toml
//! [sut]
//! target = { kind = "loop_image", size = "1G" }     # image_dir, direct_io = true, preallocate
//! fs = { kind = "ext4", mkfs_options = "-E lazy_itable_init=0", mount_options = "data=journal" }
//! cache_limit = "256M"                              # v1 memory cgroup for the engine
//! [sut.tunables]
//! "vm.dirty_expire_centisecs" = 500
//! "queue/scheduler" = "none"
//! ```
//!
//! Other targets: `{ kind = "directory", path = "/mnt/x" }`, `{ kind = "tmpfs", size = "2G" }`
//! (or `"25%"` of RAM), `{ kind = "block_device", path = "/dev/sdb", allow_destroy = true,
//! force = false }`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fs::FsKind;
use crate::mount::MountOptions;
use crate::plan::{FsPlan, SutPlan, TunableSetting};
use crate::size::parse_size;
use crate::target::{BlockDevice, Directory, LoopImage, Target, Tmpfs, TmpfsSize};
use crate::tunable::TunableName;
use crate::util;

/// Smallest loop image accepted.
pub const MIN_IMAGE_SIZE: u64 = 16 << 20;

/// Smallest cache limit accepted (the engine's own memory counts against it).
pub const MIN_CACHE_LIMIT: u64 = 8 << 20;

/// The SUT section of an experiment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Page-cache cap for the engine (a v1 memory cgroup limit), e.g. `"256M"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_limit: Option<String>,
}

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
    /// Check everything that can be checked without the machine, and resolve to a plan.
    pub fn validate(&self) -> Result<SutPlan> {
        let target = validate_target(&self.target)?;
        let fs = self.fs.as_ref().map(validate_fs).transpose()?;
        match (&target, &fs) {
            (Target::Directory(_), Some(_)) => {
                return Err(Error::spec(
                    "fs",
                    "a directory target uses the filesystem it is on; to test a given \
                     filesystem, use a loop_image target",
                ))
            }
            (Target::Tmpfs(_), Some(f)) if f.kind != FsKind::Tmpfs => {
                return Err(Error::spec(
                    "fs.kind",
                    format!("a tmpfs target is tmpfs, not {}", f.kind),
                ))
            }
            (Target::Tmpfs(_), Some(f)) if !f.mkfs_options.is_empty() => {
                return Err(Error::spec("fs.mkfs_options", "tmpfs has no mkfs"))
            }
            (Target::LoopImage(_) | Target::BlockDevice(_), None) => {
                return Err(Error::spec(
                    "fs",
                    "this target needs a filesystem, e.g. fs = { kind = \"ext4\" }",
                ))
            }
            (Target::LoopImage(_) | Target::BlockDevice(_), Some(f)) if f.kind == FsKind::Tmpfs => {
                return Err(Error::spec(
                    "fs.kind",
                    "tmpfs lives in memory; use target = { kind = \"tmpfs\", size = ... }",
                ))
            }
            _ => {}
        }
        if let (Target::LoopImage(l), Some(f)) = (&target, &fs) {
            let min = f.kind.imp().min_size();
            if l.size < min {
                return Err(Error::spec(
                    "target.size",
                    format!(
                        "{} needs at least {} MiB; make the image larger",
                        f.kind,
                        min.div_ceil(1 << 20)
                    ),
                ));
            }
        }
        let mut tunables = Vec::new();
        for (name, value) in &self.tunables {
            let field = format!("tunables.{name:?}");
            let parsed = TunableName::parse(name).map_err(|m| Error::spec(&field, m))?;
            let value = value.to_string();
            if value.trim().is_empty() || value.contains('\n') {
                return Err(Error::spec(field, "the value must be one non-empty line"));
            }
            if parsed.needs_device() && matches!(target, Target::Tmpfs(_)) {
                return Err(Error::spec(
                    field,
                    "a tmpfs target has no block device to tune",
                ));
            }
            tunables.push(TunableSetting {
                name: parsed,
                value: value.trim().to_owned(),
            });
        }
        let cache_limit = match &self.cache_limit {
            None => None,
            Some(s) => {
                let b = parse_size(s).map_err(|m| Error::spec("cache_limit", m))?;
                if b < MIN_CACHE_LIMIT {
                    return Err(Error::spec(
                        "cache_limit",
                        format!(
                            "{s} is too small: the limit also counts the engine's own memory; \
                             use at least {} MiB",
                            MIN_CACHE_LIMIT >> 20
                        ),
                    ));
                }
                Some(b)
            }
        };
        Ok(SutPlan {
            target,
            fs,
            tunables,
            cache_limit,
        })
    }
}

fn validate_target(t: &TargetSpec) -> Result<Target> {
    Ok(match t {
        TargetSpec::Directory { path } => {
            util::utf8_path("target.path", path)?;
            Target::Directory(Directory { path: path.clone() })
        }
        TargetSpec::Tmpfs { size } => {
            let size = match size.trim().strip_suffix('%') {
                Some(p) => match p.trim().parse::<u8>() {
                    Ok(p) if (1..=100).contains(&p) => TmpfsSize::PercentOfRam(p),
                    _ => {
                        return Err(Error::spec(
                            "target.size",
                            format!("{size:?}: a percentage of RAM must be 1% to 100%"),
                        ))
                    }
                },
                None => {
                    TmpfsSize::Bytes(parse_size(size).map_err(|m| Error::spec("target.size", m))?)
                }
            };
            Target::Tmpfs(Tmpfs { size })
        }
        TargetSpec::LoopImage {
            size,
            image_dir,
            direct_io,
            preallocate,
        } => {
            let size = parse_size(size).map_err(|m| Error::spec("target.size", m))?;
            if size < MIN_IMAGE_SIZE {
                return Err(Error::spec(
                    "target.size",
                    format!("a loop image must be at least {} MiB", MIN_IMAGE_SIZE >> 20),
                ));
            }
            if let Some(d) = image_dir {
                util::utf8_path("target.image_dir", d)?;
            }
            Target::LoopImage(LoopImage {
                size,
                image_dir: image_dir.clone(),
                direct_io: *direct_io,
                preallocate: *preallocate,
            })
        }
        TargetSpec::BlockDevice {
            path,
            allow_destroy,
            force,
        } => {
            if !path.is_absolute() {
                return Err(Error::spec(
                    "target.path",
                    "a block device is named by its absolute path, e.g. /dev/sdb",
                ));
            }
            Target::BlockDevice(BlockDevice {
                path: path.clone(),
                allow_destroy: *allow_destroy,
                force: *force,
            })
        }
    })
}

fn validate_fs(f: &FsSpec) -> Result<FsPlan> {
    let kind: FsKind = f.kind.parse().map_err(|m| Error::spec("fs.kind", m))?;
    let mount =
        MountOptions::parse(&f.mount_options).map_err(|m| Error::spec("fs.mount_options", m))?;
    kind.imp()
        .check_mount_options(&mount)
        .map_err(|m| Error::spec("fs.mount_options", m))?;
    Ok(FsPlan {
        kind,
        mkfs_options: f.mkfs_options.to_args(),
        mount,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> SutSpec {
        serde_json::from_str(json).unwrap()
    }

    fn err(json: &str) -> String {
        spec(json).validate().unwrap_err().to_string()
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
                .contains("did you mean \"ext4\"")
        );
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
