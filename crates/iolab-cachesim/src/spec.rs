//! A cache simulation as the user writes it: the options of `iolab cachesim` and of
//! `[workload] cachesim = { … }`, declared once in [`OPTIONS`].
//!
//! Every value is text (a path, a policy with its parameters, `full` or a number of ways, a
//! device model), so this table is of its own kind rather than the numeric option table of
//! the engine's workloads; the command's flags, the experiment keys and the docs all come
//! from it.

use std::path::{Path, PathBuf};

use iolab_tracefile::{CsvSpec, Format};
use iolab_util::suggest;

use crate::model::DeviceModel;
use crate::{policy, Assoc, CacheConfig, ConfigError, WritePolicy};

/// One option of a cache simulation.
#[derive(Debug)]
pub struct SpecOption {
    /// The key (`block_size`); the flag is `--block-size`.
    pub name: &'static str,
    /// Shown in usage lines.
    pub value_name: &'static str,
    /// As it would be written; `None`: required.
    pub default: Option<&'static str>,
    /// One line of help.
    pub help: &'static str,
    /// Parses the text into the spec; relative paths in it start at the given directory
    /// (the experiment file's, or the current one).
    pub set: fn(&mut CachesimSpec, &str, &Path) -> Result<(), String>,
}

impl SpecOption {
    /// The command-line flag without its dashes.
    pub fn flag(&self) -> String {
        self.name.replace('_', "-")
    }
}

/// A cache simulation before validation.
#[derive(Debug, Clone, PartialEq)]
pub struct CachesimSpec {
    /// The trace file.
    pub trace: PathBuf,
    /// Its format; `None`: guessed from its magic or name.
    pub format: Option<Format>,
    /// The cache.
    pub cache: CacheConfig,
    /// The cache device's model.
    pub cache_device: DeviceModel,
    /// The origin device's model.
    pub origin_device: DeviceModel,
}

/// The options, in the order usage lines show them.
pub static OPTIONS: &[SpecOption] = &[
    SpecOption {
        name: "trace",
        value_name: "FILE",
        default: None,
        help: "the trace to simulate (iolab's format, libCacheSim's oracleGeneral or CSV)",
        set: |s, v, base| {
            if v.is_empty() {
                return Err("give the trace file's path".into());
            }
            s.trace = base.join(v);
            Ok(())
        },
    },
    SpecOption {
        name: "format",
        value_name: "FORMAT",
        default: Some("auto"),
        help: "the trace's format: auto (from its magic or name), iolab, oracleGeneral, csv, or csv:COLUMNS (libCacheSim's csv options, e.g. csv:obj-id-col=2,header=false)",
        set: |s, v, _| {
            s.format = parse_format(v)?;
            Ok(())
        },
    },
    SpecOption {
        name: "policy",
        value_name: "POLICY",
        default: Some("lru"),
        help: "the replacement policy, with parameters after a colon: lru, clock:m=4,s=0,i=1 (see docs/cachesim.md)",
        set: |s, v, _| {
            let (name, params) = parse_policy(v)?;
            s.cache.policy = name;
            s.cache.params = params;
            Ok(())
        },
    },
    SpecOption {
        name: "size",
        value_name: "SIZE",
        default: None,
        help: "the cache's capacity: 64m, 2g, or bytes",
        set: |s, v, _| {
            s.cache.size = size(v)?;
            Ok(())
        },
    },
    SpecOption {
        name: "block_size",
        value_name: "SIZE",
        default: Some("4k"),
        help: "the cache block size; block traces are split into blocks of this size",
        set: |s, v, _| {
            s.cache.block_size = size(v)?;
            Ok(())
        },
    },
    SpecOption {
        name: "assoc",
        value_name: "WAYS",
        default: Some("full"),
        help: "blocks per set: full (one set), or a number of ways (1 = direct-mapped)",
        set: |s, v, _| {
            s.cache.assoc = parse_assoc(v)?;
            Ok(())
        },
    },
    SpecOption {
        name: "write_policy",
        value_name: "POLICY",
        default: Some("write-through"),
        help: "what writes do: write-through, write-back or write-around",
        set: |s, v, _| {
            s.cache.write = WritePolicy::from_name(v).ok_or_else(|| {
                let names = WritePolicy::ALL.iter().map(|(n, _)| *n);
                format!("unknown write policy `{v}`; {}", suggest::did_you_mean_or_list(v, names))
            })?;
            Ok(())
        },
    },
    SpecOption {
        name: "cache_device",
        value_name: "MODEL",
        default: Some("ssd"),
        help: "the cache device's model for the service-time estimate: hdd, ssd, nvme, or PRESET,key=value,… (read, seq_read, write, seq_write latencies; read_rate, write_rate; a value @FILE takes it from a saved iolab `--json` result with a mean latency and a throughput)",
        set: |s, v, base| {
            s.cache_device = DeviceModel::parse(v, base)?;
            Ok(())
        },
    },
    SpecOption {
        name: "origin_device",
        value_name: "MODEL",
        default: Some("hdd"),
        help: "the origin device's model, written like --cache-device",
        set: |s, v, base| {
            s.origin_device = DeviceModel::parse(v, base)?;
            Ok(())
        },
    },
];

/// The option called `name`.
pub fn option(name: &str) -> Option<&'static SpecOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

fn size(v: &str) -> Result<u64, String> {
    iolab_util::units::parse_size(v).map_err(|e| e.to_string())
}

/// `auto`, a format name, or `csv:COLUMNS`.
pub fn parse_format(v: &str) -> Result<Option<Format>, String> {
    if v == "auto" {
        return Ok(None);
    }
    if let Some(cols) = v.strip_prefix("csv:") {
        return CsvSpec::parse(cols).map(|c| Some(Format::Csv(c)));
    }
    Format::parse(v).map(Some).ok_or_else(|| {
        let names = ["auto", "iolab", "oracleGeneral", "csv"];
        format!(
            "unknown trace format `{v}`; {}",
            suggest::did_you_mean_or_list(v, names)
        )
    })
}

/// `full` or a whole number of ways.
pub fn parse_assoc(v: &str) -> Result<Assoc, String> {
    if v == "full" {
        return Ok(Assoc::Full);
    }
    match v.parse::<u64>() {
        Ok(0) => Err("the associativity must be at least 1 way".into()),
        Ok(n) => Ok(Assoc::Ways(n)),
        Err(_) => Err(format!("`{v}` is neither `full` nor a number of ways")),
    }
}

/// `NAME` or `NAME:key=value,…`, the name checked against the registry (with a suggestion)
/// and the parameters against its declaration.
pub fn parse_policy(v: &str) -> Result<(String, Vec<(String, f64)>), String> {
    let (name, rest) = v.split_once(':').unwrap_or((v, ""));
    let name = name.trim();
    let Some(def) = policy::find(name) else {
        // Names are case-insensitive: suggest for the lower-case spelling, among the names
        // and the aliases; the list shows the names only.
        let lower = name.to_ascii_lowercase();
        let hint = suggest::did_you_mean(&lower, policy::POLICIES.iter().flat_map(|p| p.names()))
            .unwrap_or_else(|| {
                let names = policy::POLICIES.iter().map(|p| p.name);
                format!("expected one of {}", suggest::list(names))
            });
        return Err(format!("unknown replacement policy `{name}`; {hint}"));
    };
    let mut params = Vec::new();
    for kv in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, val) = kv
            .split_once('=')
            .ok_or_else(|| format!("`{kv}` is not key=value (e.g. {}:m=4)", def.name))?;
        let x: f64 = val
            .trim()
            .parse()
            .map_err(|_| format!("`{kv}`: `{}` is not a number", val.trim()))?;
        params.push((k.trim().to_string(), x));
    }
    def.params(&params).map_err(|e| match e {
        policy::ParamError::Unknown { ref known, .. } if known.is_empty() => {
            format!("{e} (it has none)")
        }
        policy::ParamError::Unknown {
            ref name,
            ref known,
            ..
        } => {
            format!(
                "{e}; {}",
                suggest::did_you_mean_or_list(name, known.iter().copied())
            )
        }
        other => other.to_string(),
    })?;
    Ok((def.name.to_string(), params))
}

/// The policy as [`parse_policy`] reads it: `clock:m=4,s=0,i=1`.
pub fn policy_text(cache: &CacheConfig) -> String {
    if cache.params.is_empty() {
        return cache.policy.clone();
    }
    let ps: Vec<String> = cache
        .params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!("{}:{}", cache.policy, ps.join(","))
}

/// A spec that cannot run, with the option to blame.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct SpecError {
    /// The option (`size`, `assoc`).
    pub option: &'static str,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub hint: Option<String>,
}

impl CachesimSpec {
    /// The defaults of [`OPTIONS`] (the trace and size unset).
    pub fn with_defaults() -> CachesimSpec {
        let mut s = CachesimSpec {
            trace: PathBuf::new(),
            format: None,
            cache: CacheConfig {
                size: 0,
                block_size: 4096,
                assoc: Assoc::Full,
                write: WritePolicy::WriteThrough,
                policy: "lru".into(),
                params: Vec::new(),
            },
            cache_device: DeviceModel::preset("ssd").expect("preset"),
            origin_device: DeviceModel::preset("hdd").expect("preset"),
        };
        for o in OPTIONS {
            if let Some(d) = o.default {
                // The defaults are tested to parse.
                let _ = (o.set)(&mut s, d, Path::new(""));
            }
        }
        s
    }

    /// Checks that the cache can be built (and the trace is named).
    pub fn validate(&self) -> Result<(), SpecError> {
        self.check_inputs()?;
        self.cache.validate().map_err(config_error)
    }

    /// The checks of [`CachesimSpec::validate`] that do not build the cache.
    pub(crate) fn check_inputs(&self) -> Result<(), SpecError> {
        if self.trace.as_os_str().is_empty() {
            return Err(SpecError {
                option: "trace",
                message: "no trace given".into(),
                hint: Some("name the trace file to simulate".into()),
            });
        }
        if self.cache.size == 0 {
            return Err(SpecError {
                option: "size",
                message: "no cache size given".into(),
                hint: Some("give the cache's capacity, e.g. 64m".into()),
            });
        }
        if matches!(self.format, Some(Format::Iolab)) {
            if let Err(e) = iolab_tracefile::check_block_size(self.cache.block_size) {
                return Err(SpecError {
                    option: "block_size",
                    message: e,
                    hint: Some("iolab traces are split into blocks of this size".into()),
                });
            }
        }
        Ok(())
    }
}

/// A [`ConfigError`] with the option it comes from and advice.
pub fn config_error(e: ConfigError) -> SpecError {
    let (option, hint) = match &e {
        ConfigError::ZeroBlockSize => ("block_size", None),
        ConfigError::BlockSizeDoesNotDivide { size, block_size } => (
            "block_size",
            Some(format!(
                "make the cache size a multiple of the block size (e.g. {} B) or pick a block size that divides {size} B",
                (size / block_size).max(1) * block_size
            )),
        ),
        ConfigError::BlockCount { .. } => ("size", None),
        ConfigError::ZeroWays => ("assoc", None),
        ConfigError::AssocTooLarge { blocks, .. } => (
            "assoc",
            Some(format!("at most {blocks} ways (the cache's blocks), or `full`")),
        ),
        ConfigError::AssocDoesNotDivide { blocks, .. } => (
            "assoc",
            Some(format!("pick a number of ways that divides {blocks} (a power of two for power-of-two caches)")),
        ),
        ConfigError::UnknownPolicy(_) | ConfigError::Param(_) => ("policy", None),
    };
    SpecError {
        option,
        message: e.to_string(),
        hint,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse() {
        for o in OPTIONS {
            if let Some(d) = o.default {
                let mut s = CachesimSpec::with_defaults();
                (o.set)(&mut s, d, Path::new("")).unwrap_or_else(|e| panic!("{}: {e}", o.name));
            }
        }
    }

    #[test]
    fn policies_parse_with_parameters_and_suggestions() {
        assert_eq!(
            parse_policy("clock:m=4, i=4").unwrap(),
            ("clock".into(), vec![("m".into(), 4.0), ("i".into(), 4.0)])
        );
        assert!(parse_policy("lruu")
            .unwrap_err()
            .contains("did you mean `lru`"));
        // libCacheSim's names, in any case, are the policies'.
        assert_eq!(parse_policy("TwoQ:ain=0.5").unwrap().0, "2q");
        assert_eq!(parse_policy("Second-Chance").unwrap().0, "clock");
        assert!(parse_policy("twoqq")
            .unwrap_err()
            .contains("did you mean `twoq`"));
        assert!(parse_policy("S3-FIFOO")
            .unwrap_err()
            .contains("did you mean `s3-fifo`"));
        assert!(parse_policy("nothing").unwrap_err().contains("`smq`"));
        assert!(parse_policy("clock:n=2").unwrap_err().contains("`m`"));
        assert!(parse_policy("clock:m=300").unwrap_err().contains("255"));
        assert!(parse_policy("lru:x=1").unwrap_err().contains("has none"));
        let mut c = CachesimSpec::with_defaults().cache;
        c.policy = "clock".into();
        c.params = vec![("m".into(), 4.0)];
        assert_eq!(parse_policy(&policy_text(&c)).unwrap().1, c.params);
    }

    #[test]
    fn impossible_caches_name_their_option() {
        let mut s = CachesimSpec::with_defaults();
        s.trace = "t".into();
        s.cache.size = 1 << 20;
        s.cache.assoc = Assoc::Ways(512);
        assert_eq!(s.validate().unwrap_err().option, "assoc");
        s.cache.assoc = Assoc::Full;
        s.cache.block_size = 3000;
        let e = s.validate().unwrap_err();
        assert_eq!(e.option, "block_size");
        assert!(e.message.contains("does not divide"), "{e}");
    }
}

#[cfg(test)]
mod docs {
    const DOC: &str = include_str!("../../../docs/cachesim.md");

    #[test]
    fn the_docs_describe_every_policy_and_option() {
        for p in crate::POLICIES {
            let row = format!("| `{}` |", p.name);
            let line = DOC
                .lines()
                .find(|l| l.starts_with(&row))
                .unwrap_or_else(|| panic!("docs/cachesim.md has no row for policy `{}`", p.name));
            for alias in p.aliases {
                assert!(
                    line.contains(&format!("`{alias}`")),
                    "the row of policy `{}` does not name its alias `{alias}`",
                    p.name
                );
            }
            for param in p.params {
                assert!(
                    DOC.contains(&format!("`{}` (", param.name)),
                    "docs/cachesim.md does not describe `{}`'s parameter `{}`",
                    p.name,
                    param.name
                );
            }
        }
        for o in super::OPTIONS {
            let row = format!("| `{}` | ", o.name);
            let line = DOC
                .lines()
                .find(|l| l.starts_with(&row))
                .unwrap_or_else(|| panic!("docs/cachesim.md has no row for option `{}`", o.name));
            let default = o
                .default
                .map_or("required".to_string(), |d| format!("`{d}`"));
            assert!(
                line.contains(&default),
                "option `{}`: default {default}",
                o.name
            );
        }
    }
}
