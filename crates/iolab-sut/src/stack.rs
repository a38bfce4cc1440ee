//! Block caches stacked on the origin: dm-cache (device-mapper's `cache` target, what
//! lvmcache sets up) and bcache. The specification is parsed and validated everywhere; the
//! kernel support is detected read-only, and a kernel without it gets a clear error before
//! anything is changed (as for f2fs). Setting the caches up is not implemented yet: it was
//! built on machines whose kernels have neither, where it could not be tested.
//!
//! dm-cache, in its table line `cache <metadata dev> <cache dev> <origin dev> <block
//! sectors> <#features> <features> <policy> <#policy args>`: block size 32 KiB to 1 GiB in
//! multiples of 32 KiB; mode writeback (the kernel's default), writethrough or passthrough;
//! policy smq (the default; promotes only blocks hit repeatedly) or cleaner (writes dirty
//! blocks back, then passes through).
//!
//! bcache: `make-bcache --block B --bucket S`; `/sys/block/bcacheN/bcache/cache_mode`
//! writethrough (default), writeback, writearound or none; `sequential_cutoff` (4 MiB by
//! default: larger sequential I/O bypasses the cache; 0 caches everything, what benchmarks
//! usually want); the cache set's `cache_replacement_policy` lru, fifo or random.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, SpecError};
use crate::size::parse_size;

/// A stacked cache as written: `cache = { kind = "dm-cache", size = "1G", ... }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum CacheSpec {
    /// device-mapper's cache target.
    DmCache {
        /// Size of a loop image iolab creates as the cache device (or give `device`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<String>,
        /// An existing fast device to use as the cache device.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<PathBuf>,
        /// Cache block size (32K to 1G, a multiple of 32K).
        #[serde(default = "dm_block")]
        block_size: String,
        /// writeback, writethrough or passthrough.
        #[serde(default = "writeback")]
        mode: String,
        /// smq or cleaner.
        #[serde(default = "smq")]
        policy: String,
    },
    /// bcache.
    Bcache {
        /// Size of a loop image iolab creates as the cache device (or give `device`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<String>,
        /// An existing fast device to use as the cache device.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<PathBuf>,
        /// Block size (a power of two from 512 B to 64 KiB).
        #[serde(default = "bcache_block")]
        block_size: String,
        /// writethrough, writeback, writearound or none.
        #[serde(default = "writethrough")]
        mode: String,
        /// lru, fifo or random.
        #[serde(default = "lru")]
        replacement: String,
        /// Sequential I/O larger than this bypasses the cache ("0": never).
        #[serde(default = "cutoff")]
        sequential_cutoff: String,
    },
}

fn dm_block() -> String {
    "64K".into()
}
fn bcache_block() -> String {
    "4K".into()
}
fn writeback() -> String {
    "writeback".into()
}
fn writethrough() -> String {
    "writethrough".into()
}
fn smq() -> String {
    "smq".into()
}
fn lru() -> String {
    "lru".into()
}
fn cutoff() -> String {
    "4M".into()
}

/// Where the cache lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheDevice {
    /// A loop image of this many bytes.
    Image(u64),
    /// An existing device.
    Device(PathBuf),
}

/// A validated stacked cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StackedCache {
    /// dm-cache.
    DmCache {
        /// The cache device.
        device: CacheDevice,
        /// Block size, bytes.
        block_size: u64,
        /// `writeback`, `writethrough`, `passthrough`.
        mode: String,
        /// `smq`, `cleaner`.
        policy: String,
    },
    /// bcache.
    Bcache {
        /// The cache device.
        device: CacheDevice,
        /// Block size, bytes.
        block_size: u64,
        /// `writethrough`, `writeback`, `writearound`, `none`.
        mode: String,
        /// `lru`, `fifo`, `random`.
        replacement: String,
        /// Bytes.
        sequential_cutoff: u64,
    },
}

impl StackedCache {
    /// `dm-cache` or `bcache`.
    pub fn kind(&self) -> &'static str {
        match self {
            StackedCache::DmCache { .. } => "dm-cache",
            StackedCache::Bcache { .. } => "bcache",
        }
    }

    /// dm-cache's table line for these devices (sizes in 512-byte sectors).
    pub fn dm_table(
        &self,
        origin_sectors: u64,
        metadata: &Path,
        cache: &Path,
        origin: &Path,
    ) -> Option<String> {
        let StackedCache::DmCache {
            block_size,
            mode,
            policy,
            ..
        } = self
        else {
            return None;
        };
        let features = if mode == "writeback" {
            "0".to_string()
        } else {
            format!("1 {mode}")
        };
        Some(format!(
            "0 {origin_sectors} cache {} {} {} {} {features} {policy} 0",
            metadata.display(),
            cache.display(),
            origin.display(),
            block_size / 512
        ))
    }
}

fn one_of(field: &str, value: &str, allowed: &[&str], errors: &mut Vec<SpecError>) -> bool {
    if allowed.contains(&value) {
        return true;
    }
    errors.push(SpecError::value(
        field,
        format!("{value:?} is not one of {}", allowed.join(", ")),
    ));
    false
}

fn device_of(
    size: &Option<String>,
    device: &Option<PathBuf>,
    errors: &mut Vec<SpecError>,
) -> Option<CacheDevice> {
    match (size, device) {
        (Some(_), Some(_)) | (None, None) => {
            errors.push(SpecError::value(
                "cache",
                "give the cache device as size = \"1G\" (a loop image iolab creates) or \
                 device = \"/dev/nvme0n1p2\", one of them",
            ));
            None
        }
        (Some(s), None) => parse_size(s)
            .map_err(|m| errors.push(SpecError::value("cache.size", m)))
            .ok()
            .map(CacheDevice::Image),
        (None, Some(d)) if !d.is_absolute() => {
            errors.push(SpecError::value(
                "cache.device",
                "a device is named by its absolute path, e.g. /dev/nvme0n1p2",
            ));
            None
        }
        (None, Some(d)) => Some(CacheDevice::Device(d.clone())),
    }
}

/// Validate a stacked cache without looking at the machine.
pub fn validate(spec: &CacheSpec, errors: &mut Vec<SpecError>) -> Option<StackedCache> {
    let before = errors.len();
    let size = |field: &str, s: &str, errors: &mut Vec<SpecError>| {
        parse_size(s)
            .map_err(|m| errors.push(SpecError::value(field, m)))
            .ok()
    };
    let cache = match spec {
        CacheSpec::DmCache {
            size: sz,
            device,
            block_size,
            mode,
            policy,
        } => {
            let device = device_of(sz, device, errors);
            let block = size("cache.block_size", block_size, errors);
            if let Some(b) = block {
                if !(32 << 10..=1 << 30).contains(&b) || !b.is_multiple_of(32 << 10) {
                    errors.push(SpecError::value(
                        "cache.block_size",
                        format!(
                            "dm-cache blocks are 32K to 1G in multiples of 32K, not {block_size}"
                        ),
                    ));
                }
            }
            one_of(
                "cache.mode",
                mode,
                &["writeback", "writethrough", "passthrough"],
                errors,
            );
            one_of("cache.policy", policy, &["smq", "cleaner"], errors);
            StackedCache::DmCache {
                device: device?,
                block_size: block?,
                mode: mode.clone(),
                policy: policy.clone(),
            }
        }
        CacheSpec::Bcache {
            size: sz,
            device,
            block_size,
            mode,
            replacement,
            sequential_cutoff,
        } => {
            let device = device_of(sz, device, errors);
            let block = size("cache.block_size", block_size, errors);
            if let Some(b) = block {
                if !(512..=64 << 10).contains(&b) || !b.is_power_of_two() {
                    errors.push(SpecError::value(
                        "cache.block_size",
                        format!(
                            "bcache blocks are a power of two from 512 to 64K, not {block_size}"
                        ),
                    ));
                }
            }
            one_of(
                "cache.mode",
                mode,
                &["writethrough", "writeback", "writearound", "none"],
                errors,
            );
            one_of(
                "cache.replacement",
                replacement,
                &["lru", "fifo", "random"],
                errors,
            );
            let cutoff = size("cache.sequential_cutoff", sequential_cutoff, errors);
            StackedCache::Bcache {
                device: device?,
                block_size: block?,
                mode: mode.clone(),
                replacement: replacement.clone(),
                sequential_cutoff: cutoff?,
            }
        }
    };
    (errors.len() == before).then_some(cache)
}

/// Whether this kernel has what `kind` needs, read-only: device-mapper is in `/proc/misc`
/// (the kernel registers its control device there) and its `cache` target is loaded or
/// loadable; bcache shows `/sys/fs/bcache`. `Err` says what is missing.
pub fn availability(kind: &str) -> Result<(), String> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "?".into());
    match kind {
        "dm-cache" => {
            let misc = std::fs::read_to_string("/proc/misc").unwrap_or_default();
            if !has_misc(&misc, "device-mapper") {
                return Err(format!(
                    "the running kernel ({release}) has no device-mapper: `device-mapper` is \
                     not in /proc/misc and /dev/mapper/control is {}; dm-cache needs a kernel \
                     built with CONFIG_BLK_DEV_DM and CONFIG_DM_CACHE (or their modules: \
                     modprobe dm-cache)",
                    if Path::new("/dev/mapper/control").exists() {
                        "there but unused"
                    } else {
                        "missing"
                    }
                ));
            }
            Ok(())
        }
        "bcache" => {
            if !Path::new("/sys/fs/bcache").is_dir() {
                return Err(format!(
                    "the running kernel ({release}) has no bcache: /sys/fs/bcache does not \
                     exist; bcache needs a kernel built with CONFIG_BCACHE (or its module: \
                     modprobe bcache)"
                ));
            }
            Ok(())
        }
        other => Err(format!("unknown cache kind {other:?}")),
    }
}

/// Whether `/proc/misc` text (`236 device-mapper`) lists `name`.
pub fn has_misc(text: &str, name: &str) -> bool {
    text.lines()
        .any(|l| l.split_whitespace().nth(1) == Some(name))
}

/// Before preparing a run with a stacked cache: the kernel must have it; and iolab does not
/// set one up yet. Either way an error that says which, before anything is changed.
pub(crate) fn require(cache: &StackedCache) -> Result<()> {
    let kind = cache.kind();
    availability(kind).map_err(|reason| Error::FsUnavailable { fs: kind, reason })?;
    Err(Error::FsUnavailable {
        fs: kind,
        reason: format!(
            "this kernel has {kind}, but this iolab does not set up {kind} yet (it was built \
             where no kernel had it to test with); the specification is valid"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> Result<StackedCache, Vec<String>> {
        let spec: CacheSpec = serde_json::from_str(json).unwrap();
        let mut errors = Vec::new();
        validate(&spec, &mut errors).ok_or_else(|| {
            errors
                .into_iter()
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect()
        })
    }

    #[test]
    fn dm_cache_specs() {
        let c =
            check(r#"{"kind":"dm-cache","size":"1G","block_size":"256K","mode":"writethrough"}"#)
                .unwrap();
        assert_eq!(
            c,
            StackedCache::DmCache {
                device: CacheDevice::Image(1 << 30),
                block_size: 256 << 10,
                mode: "writethrough".into(),
                policy: "smq".into()
            }
        );
        assert_eq!(
            c.dm_table(
                2097152,
                Path::new("/dev/loop1"),
                Path::new("/dev/loop2"),
                Path::new("/dev/loop3")
            )
            .unwrap(),
            "0 2097152 cache /dev/loop1 /dev/loop2 /dev/loop3 512 1 writethrough smq 0"
        );
        let e = check(r#"{"kind":"dm-cache","size":"1G","block_size":"48K","policy":"lfu"}"#)
            .unwrap_err();
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].starts_with("cache.block_size: dm-cache blocks are 32K to 1G"));
        assert!(e[1].starts_with("cache.policy: \"lfu\" is not one of smq, cleaner"));
        let e = check(r#"{"kind":"dm-cache"}"#).unwrap_err();
        assert!(e[0].contains("one of them"), "{e:?}");
        let e = check(r#"{"kind":"dm-cache","device":"sdb"}"#).unwrap_err();
        assert!(e[0].starts_with("cache.device"), "{e:?}");
        assert!(serde_json::from_str::<CacheSpec>(r#"{"kind":"dm-cache","assoc":2}"#).is_err());
        assert!(serde_json::from_str::<CacheSpec>(r#"{"kind":"flashcache"}"#).is_err());
    }

    #[test]
    fn bcache_specs() {
        let c = check(r#"{"kind":"bcache","device":"/dev/nvme0n1p2","sequential_cutoff":"0"}"#)
            .unwrap();
        assert_eq!(
            c,
            StackedCache::Bcache {
                device: CacheDevice::Device("/dev/nvme0n1p2".into()),
                block_size: 4096,
                mode: "writethrough".into(),
                replacement: "lru".into(),
                sequential_cutoff: 0
            }
        );
        let e = check(
            r#"{"kind":"bcache","size":"1G","block_size":"3K","mode":"write-back","replacement":"lfu"}"#,
        )
        .unwrap_err();
        assert_eq!(e.len(), 3, "{e:?}");
    }

    #[test]
    fn misc_devices() {
        let misc = " 58 memory_bandwidth\n236 device-mapper\n183 hw_random\n";
        assert!(has_misc(misc, "device-mapper"));
        assert!(!has_misc(" 58 memory_bandwidth\n", "device-mapper"));
    }

    /// This machine's kernel has neither: the error says so (where a kernel has them, the
    /// test checks the other message).
    #[test]
    fn kernels_without_the_cache_get_a_clear_error() {
        for json in [
            r#"{"kind":"dm-cache","size":"1G"}"#,
            r#"{"kind":"bcache","size":"1G"}"#,
        ] {
            let c = check(json).unwrap();
            let e = require(&c).unwrap_err().to_string();
            let kind = c.kind();
            match availability(kind) {
                Err(why) => {
                    assert!(e.contains("has no"), "{e}");
                    assert!(e.contains(&why), "{e}");
                }
                Ok(()) => assert!(e.contains("does not set up"), "{e}"),
            }
            assert!(e.starts_with(&format!("{kind} is not available on this machine: ")));
        }
    }
}
