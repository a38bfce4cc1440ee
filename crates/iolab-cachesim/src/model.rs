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
/// measure yours with `iolab micro` and give the numbers).
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
    /// `write_rate` bytes per second (`150m`).
    pub fn parse(text: &str) -> Result<DeviceModel, String> {
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
                        iolab_workload::suggest::did_you_mean_or_list(first, names)
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
            let latency = || -> Result<f64, String> {
                iolab_workload::parse_duration(v)
                    .map(|d| d.as_secs_f64())
                    .map_err(|e| format!("`{k}`: {e}"))
            };
            let rate = || -> Result<f64, String> {
                match iolab_workload::parse_size(v) {
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
                        iolab_workload::suggest::did_you_mean_or_list(k, KEYS.iter().copied())
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
        let hdd = DeviceModel::parse("hdd").unwrap();
        assert_eq!(hdd.latency_s[0][0], 8e-3);
        let m = DeviceModel::parse("hdd, read=10ms, write_rate=1m").unwrap();
        assert_eq!(m.latency_s[0][0], 0.01);
        assert_eq!(m.rate[1], 1048576.0);
        assert_eq!(DeviceModel::parse(&m.to_string()).unwrap(), m);
        assert!(DeviceModel::parse("hdx").unwrap_err().contains("hdd"));
        assert!(DeviceModel::parse("read=1ms")
            .unwrap_err()
            .contains("missing seq_read"));
        assert!(DeviceModel::parse("ssd,raed=1ms")
            .unwrap_err()
            .contains("read"));
    }

    #[test]
    fn service_time_is_latency_plus_transfer() {
        let m = DeviceModel::parse(
            "read=1ms,seq_read=100us,write=2ms,seq_write=200us,read_rate=1m,write_rate=2m",
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
