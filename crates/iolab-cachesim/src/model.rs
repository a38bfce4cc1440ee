//! Device models: an estimated service time from the traffic a simulation sends to the
//! cache and origin devices.
//!
//! A device is described by a latency per request — by direction (read, write) and pattern
//! (random, sequential: a request for the block right after the previous request's block, or
//! the same block) — and a transfer rate per direction. A request of `n` bytes costs
//! `latency + n / rate`; the estimate is the sum over all requests to both devices, as if
//! each device served one request at a time and the two never overlapped (an upper bound
//! for a real cache that overlaps them; good for comparing configurations, which is what it
//! is for). Evictions of dirty blocks count as random requests.

use std::fmt;
use std::path::Path;

use iolab_kind::output::{json, DeviceFigures};
use serde::Serialize;

use crate::cache::Traffic;

/// Latencies and transfer rates of one device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeviceModel {
    /// Seconds per request: `[read, write][random, sequential]`.
    pub latency_s: [[f64; 2]; 2],
    /// Bytes per second: `[read, write]`.
    pub rate: [f64; 2],
}

/// The named models, rough figures of typical devices (not measurements of this machine:
/// measure yours and give the numbers, or a saved result that carries them).
pub const PRESETS: &[(&str, DeviceModel)] = &[
    (
        "hdd",
        DeviceModel {
            latency_s: [[8e-3, 1e-4], [8e-3, 1e-4]],
            rate: [150.0 * MIB, 150.0 * MIB],
        },
    ),
    (
        "ssd",
        DeviceModel {
            latency_s: [[1e-4, 2e-5], [5e-5, 2e-5]],
            rate: [500.0 * MIB, 450.0 * MIB],
        },
    ),
    (
        "nvme",
        DeviceModel {
            latency_s: [[2e-5, 5e-6], [1.5e-5, 5e-6]],
            rate: [3000.0 * MIB, 2000.0 * MIB],
        },
    ),
];

const MIB: f64 = 1024.0 * 1024.0;

/// The keys of a model description, in the order [`DeviceModel::parse`] documents them.
pub const KEYS: &[&str] = &[
    "read",
    "seq_read",
    "write",
    "seq_write",
    "read_rate",
    "write_rate",
];

impl DeviceModel {
    /// A preset by name.
    pub fn preset(name: &str) -> Option<DeviceModel> {
        PRESETS.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }

    /// Reads `PRESET`, `PRESET,key=value,…` or `key=value,…` (all six keys then): `read`,
    /// `seq_read`, `write`, `seq_write` are latencies (`8ms`, `100us`), `read_rate` and
    /// `write_rate` bytes per second (`150m`). A value `@FILE` takes the number from a saved
    /// iolab `--json` result with a mean latency and a throughput ([`DeviceFigures`]): its
    /// mean latency for a latency, its bytes per second for a rate; relative paths start at
    /// `base`.
    pub fn parse(text: &str, base: &Path) -> Result<DeviceModel, String> {
        let mut parts = text.split(',').map(str::trim).filter(|p| !p.is_empty());
        let mut model = DeviceModel {
            latency_s: [[f64::NAN; 2]; 2],
            rate: [f64::NAN; 2],
        };
        let mut rest: Vec<&str> = Vec::new();
        if let Some(first) = parts.next() {
            if first.contains('=') {
                rest.push(first);
            } else {
                model = DeviceModel::preset(first).ok_or_else(|| {
                    let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
                    format!(
                        "unknown device model `{first}`; {}",
                        iolab_util::suggest::did_you_mean_or_list(first, names)
                    )
                })?;
            }
        }
        rest.extend(parts);
        for kv in rest {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("`{kv}` is not key=value (keys: {})", KEYS.join(", ")))?;
            let (k, v) = (k.trim(), v.trim());
            if let Some(file) = v.strip_prefix('@') {
                let (mean_ns, bytes_per_s) =
                    saved_figures(&base.join(file)).map_err(|e| format!("`{k}`: {file}: {e}"))?;
                let slot = match k {
                    "read" => &mut model.latency_s[0][0],
                    "seq_read" => &mut model.latency_s[0][1],
                    "write" => &mut model.latency_s[1][0],
                    "seq_write" => &mut model.latency_s[1][1],
                    "read_rate" => &mut model.rate[0],
                    "write_rate" => &mut model.rate[1],
                    _ => {
                        return Err(format!(
                            "unknown key `{k}`; {}",
                            iolab_util::suggest::did_you_mean_or_list(k, KEYS.iter().copied())
                        ))
                    }
                };
                *slot = if k.ends_with("_rate") {
                    bytes_per_s
                } else {
                    mean_ns / 1e9
                };
                continue;
            }
            let latency = || -> Result<f64, String> {
                iolab_util::units::parse_duration(v)
                    .map(|d| d.as_secs_f64())
                    .map_err(|e| format!("`{k}`: {e}"))
            };
            let rate = || -> Result<f64, String> {
                match iolab_util::units::parse_size(v) {
                    Ok(0) => Err(format!("`{k}` must be above 0 bytes per second")),
                    Ok(b) => Ok(b as f64),
                    Err(e) => Err(format!("`{k}`: {e}")),
                }
            };
            match k {
                "read" => model.latency_s[0][0] = latency()?,
                "seq_read" => model.latency_s[0][1] = latency()?,
                "write" => model.latency_s[1][0] = latency()?,
                "seq_write" => model.latency_s[1][1] = latency()?,
                "read_rate" => model.rate[0] = rate()?,
                "write_rate" => model.rate[1] = rate()?,
                _ => {
                    return Err(format!(
                        "unknown key `{k}`; {}",
                        iolab_util::suggest::did_you_mean_or_list(k, KEYS.iter().copied())
                    ))
                }
            }
        }
        let missing: Vec<&str> = KEYS
            .iter()
            .zip([
                model.latency_s[0][0],
                model.latency_s[0][1],
                model.latency_s[1][0],
                model.latency_s[1][1],
                model.rate[0],
                model.rate[1],
            ])
            .filter(|(_, v)| v.is_nan())
            .map(|(k, _)| *k)
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "missing {} (start from a preset: {}, e.g. `hdd,read=10ms`)",
                missing.join(", "),
                PRESETS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(model)
    }

    /// Seconds this device needs for `t`.
    pub fn seconds(&self, t: &Traffic) -> f64 {
        let mut s = 0.0;
        for op in 0..2 {
            for pat in 0..2 {
                s += t.ops[op][pat] as f64 * self.latency_s[op][pat]
                    + t.bytes[op][pat] as f64 / self.rate[op];
            }
        }
        s
    }
}

/// When a write-back cache writes its dirty blocks to the origin, as the estimate prices it.
/// Either way a dirty block costs a random read from the cache device and a random write to
/// the origin (`writeback_s`); what differs is whether requests wait for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Writeback {
    /// When the block is evicted, on the path of the request that evicted it: the estimated
    /// service time includes it. On a hard-disk origin a dirty eviction costs a seek, where
    /// write-through's writes of a sequential stream are sequential: this is what makes
    /// write-back look slower than write-through.
    OnEviction,
    /// In the background, as dm-cache and bcache write dirty blocks back while the origin
    /// is idle: not in the estimated service time, which then assumes the origin has that
    /// much idle time (`writeback_s` says how much).
    Background,
}

impl Writeback {
    /// Every mode with its name, the default first.
    pub const ALL: [(&'static str, Writeback); 2] = [
        ("on-eviction", Writeback::OnEviction),
        ("background", Writeback::Background),
    ];

    /// Its name in options and results.
    pub fn name(self) -> &'static str {
        Writeback::ALL
            .iter()
            .find(|(_, w)| *w == self)
            .map_or("", |(n, _)| n)
    }

    /// The mode called `name`.
    pub fn from_name(name: &str) -> Option<Writeback> {
        Writeback::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, w)| *w)
    }
}

/// The traffic of `blocks` dirty evictions writing back `bytes`: a random read from the
/// cache device each, and a random write to the origin.
pub fn writeback_traffic(blocks: u64, bytes: u64) -> (Traffic, Traffic) {
    let mut cache = Traffic::default();
    cache.ops[0][0] = blocks;
    cache.bytes[0][0] = bytes;
    let mut origin = Traffic::default();
    origin.ops[1][0] = blocks;
    origin.bytes[1][0] = bytes;
    (cache, origin)
}

/// What a value `@FILE` must name.
const SAVED: &str = "a saved iolab `--json` result with a mean latency and a throughput";

/// The mean latency (ns) and bytes per second of a saved iolab `--json` result: any stamped
/// document whose `result` carries a device's figures ([`DeviceFigures`]).
fn saved_figures(path: &Path) -> Result<(f64, f64), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
    let Some(schema) = doc["schema"].as_str().filter(|s| json::is_schema(s)) else {
        return Err(format!("not {SAVED} (it has no iolab `schema` stamp)"));
    };
    match DeviceFigures::of(&doc["result"]) {
        Some(f) if f.latency.mean_ns > 0.0 && f.bytes_per_s > 0.0 => {
            Ok((f.latency.mean_ns, f.bytes_per_s))
        }
        _ => Err(format!("not {SAVED} (a {schema} result without them)")),
    }
}

impl fmt::Display for DeviceModel {
    /// The `key=value` form [`DeviceModel::parse`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = |s: f64| format!("{}us", (s * 1e6 * 1000.0).round() / 1000.0);
        write!(
            f,
            "read={},seq_read={},write={},seq_write={},read_rate={},write_rate={}",
            us(self.latency_s[0][0]),
            us(self.latency_s[0][1]),
            us(self.latency_s[1][0]),
            us(self.latency_s[1][1]),
            self.rate[0].round() as u64,
            self.rate[1].round() as u64
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_parse_from_presets_and_keys() {
        let hdd = DeviceModel::parse("hdd", Path::new("")).unwrap();
        assert_eq!(hdd.latency_s[0][0], 8e-3);
        let m = DeviceModel::parse("hdd, read=10ms, write_rate=1m", Path::new("")).unwrap();
        assert_eq!(m.latency_s[0][0], 0.01);
        assert_eq!(m.rate[1], 1048576.0);
        assert_eq!(
            DeviceModel::parse(&m.to_string(), Path::new("")).unwrap(),
            m
        );
        assert!(DeviceModel::parse("hdx", Path::new(""))
            .unwrap_err()
            .contains("hdd"));
        assert!(DeviceModel::parse("read=1ms", Path::new(""))
            .unwrap_err()
            .contains("missing seq_read"));
        assert!(DeviceModel::parse("ssd,raed=1ms", Path::new(""))
            .unwrap_err()
            .contains("read"));
    }

    #[test]
    fn values_come_from_saved_micro_results() {
        let dir = std::env::temp_dir().join(format!("iolab-cachesim-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("rr.json"),
            r#"{"schema": "iolab.micro/1", "result": {"latency": {"mean_ns": 250000.0}, "bytes_per_s": 16384000.0}}"#,
        )
        .unwrap();
        std::fs::write(dir.join("x.json"), r#"{"schema": "iolab.run/1"}"#).unwrap();
        let m = DeviceModel::parse("hdd,read=@rr.json,read_rate=@rr.json", &dir).unwrap();
        assert_eq!(m.latency_s[0][0], 250e-6);
        assert_eq!(m.rate[0], 16384000.0);
        assert!(DeviceModel::parse("hdd,read=@x.json", &dir)
            .unwrap_err()
            .contains("a saved iolab `--json` result with a mean latency and a throughput"));
        assert!(DeviceModel::parse("hdd,read=@none.json", &dir).is_err());
        // Any stamped result that carries the figures will do; a document without a stamp
        // will not.
        std::fs::write(
            dir.join("other.json"),
            r#"{"schema": "iolab.other/2", "result": {"latency": {"mean_ns": 1000.0}, "bytes_per_s": 2e6}}"#,
        )
        .unwrap();
        let m = DeviceModel::parse("hdd,write=@other.json,write_rate=@other.json", &dir).unwrap();
        assert_eq!((m.latency_s[1][0], m.rate[1]), (1e-6, 2e6));
        std::fs::write(dir.join("bare.json"), r#"{"result": {"bytes_per_s": 1.0}}"#).unwrap();
        assert!(DeviceModel::parse("hdd,read=@bare.json", &dir)
            .unwrap_err()
            .contains("no iolab `schema` stamp"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn service_time_is_latency_plus_transfer() {
        let m = DeviceModel::parse(
            "read=1ms,seq_read=100us,write=2ms,seq_write=200us,read_rate=1m,write_rate=2m",
            Path::new(""),
        )
        .unwrap();
        let t = Traffic {
            ops: [[2, 1], [1, 0]],
            bytes: [[1 << 20, 0], [2 << 20, 0]],
        };
        // reads: 2 × 1 ms + 1 × 0.1 ms + 1 MiB at 1 MiB/s; write: 2 ms + 2 MiB at 2 MiB/s.
        let want = 0.002 + 0.0001 + 1.0 + 0.002 + 1.0;
        assert!((m.seconds(&t) - want).abs() < 1e-12);
    }
}
