//! A cache simulation as the user writes it: the options of `iolab cachesim` and of
//! `[workload] cachesim = { … }`, declared once in [`OPTIONS`] (the one option type,
//! [`OptionDef`]), read into [`CachesimSettings`] and resolved into the [`CachesimSpec`] a
//! simulation runs ([`CachesimTable`] ties them together for the readers of option tables).
//!
//! Most values are text (a path, a policy with its parameters, `full` or a number of ways, a
//! device model): [`OptionKind::Text`], whose meaning [`CachesimSettings::resolve`] checks.

use std::fmt;
use std::path::{Path, PathBuf};

use iolab_kind::table::OptionTable;
use iolab_kind::LoadContext;
use iolab_tracefile::{CsvSpec, Format};
use iolab_util::option::{apply_defaults, intern, OptionDef, OptionKind, OptionValue};
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Worded};
use iolab_util::suggest;

use crate::model::{DeviceModel, Writeback};
use crate::{policy, Assoc, CacheConfig, ConfigError, WritePolicy};

/// One option of a cache simulation.
pub type CachesimOption = OptionDef<CachesimSettings>;

/// A cache simulation before validation: the options as given.
#[derive(Debug, Clone, PartialEq)]
pub struct CachesimSettings {
    /// The trace file; relative to [`CachesimSettings::base`] once the settings are placed.
    pub trace: &'static str,
    pub format: &'static str,
    pub policy: &'static str,
    /// Bytes; 0 until given.
    pub size: u64,
    pub block_size: u64,
    pub assoc: &'static str,
    pub write_policy: &'static str,
    pub writeback: &'static str,
    pub cache_device: &'static str,
    pub origin_device: &'static str,
    /// Where relative paths in the device models (`@FILE`) start: the experiment file's
    /// directory, or the current one.
    pub base: PathBuf,
}

/// A cache simulation: the trace and the cache, validated piece by piece.
#[derive(Debug, Clone, PartialEq)]
pub struct CachesimSpec {
    /// The trace file.
    pub trace: PathBuf,
    /// Its format; `None`: guessed from its magic or name.
    pub format: Option<Format>,
    /// The cache.
    pub cache: CacheConfig,
    /// When a write-back cache's dirty blocks are written to the origin, for the estimate.
    pub writeback: Writeback,
    /// The cache device's model.
    pub cache_device: DeviceModel,
    /// The origin device's model.
    pub origin_device: DeviceModel,
}

/// The options, in the order usage lines show them.
pub static OPTIONS: &[CachesimOption] = &[
    CachesimOption {
        name: "trace",
        value_name: "FILE",
        kind: OptionKind::Text,
        default: None,
        aliases: &[],
        help: "the trace to simulate (iolab's format, libCacheSim's oracleGeneral or CSV)",
        original: "",
        apply: |s, v| s.trace = v.text(),
        get: |s| (!s.trace.is_empty()).then_some(OptionValue::Text(s.trace)),
    },
    CachesimOption {
        name: "format",
        value_name: "FORMAT",
        kind: OptionKind::Text,
        default: Some("auto"),
        aliases: &[],
        help: "the trace's format: auto (from its magic or name), iolab, oracleGeneral, csv, or csv:COLUMNS (libCacheSim's csv options, e.g. csv:obj-id-col=2,header=false)",
        original: "",
        apply: |s, v| s.format = v.text(),
        get: |s| Some(OptionValue::Text(s.format)),
    },
    CachesimOption {
        name: "policy",
        value_name: "POLICY",
        kind: OptionKind::Text,
        default: Some("lru"),
        aliases: &[],
        help: "the replacement policy, with parameters after a colon: lru, clock:m=4,s=0,i=1 (see docs/cachesim.md)",
        original: "",
        apply: |s, v| s.policy = v.text(),
        get: |s| Some(OptionValue::Text(s.policy)),
    },
    CachesimOption {
        name: "size",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: None,
        aliases: &[],
        help: "the cache's capacity: 64m, 2g, or bytes",
        original: "",
        apply: |s, v| s.size = v.bytes(),
        get: |s| (s.size > 0).then_some(OptionValue::Bytes(s.size)),
    },
    CachesimOption {
        name: "block_size",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: Some("4k"),
        aliases: &[],
        help: "the cache block size; block traces are split into blocks of this size",
        original: "",
        apply: |s, v| s.block_size = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.block_size)),
    },
    CachesimOption {
        name: "assoc",
        value_name: "WAYS",
        kind: OptionKind::Text,
        default: Some("full"),
        aliases: &[],
        help: "blocks per set: full (one set), or a number of ways (1 = direct-mapped)",
        original: "",
        apply: |s, v| s.assoc = v.text(),
        get: |s| Some(OptionValue::Text(s.assoc)),
    },
    CachesimOption {
        name: "write_policy",
        value_name: "POLICY",
        kind: OptionKind::Text,
        default: Some("write-through"),
        aliases: &[],
        help: "what writes do: write-through, write-back or write-around",
        original: "",
        apply: |s, v| s.write_policy = v.text(),
        get: |s| Some(OptionValue::Text(s.write_policy)),
    },
    CachesimOption {
        name: "writeback",
        value_name: "WHEN",
        kind: OptionKind::Text,
        default: Some("on-eviction"),
        aliases: &[],
        help: "when write-back writes dirty blocks to the origin, for the service-time estimate: on-eviction (on the request's path) or background (in the origin's idle time, outside the estimate)",
        original: "",
        apply: |s, v| s.writeback = v.text(),
        get: |s| Some(OptionValue::Text(s.writeback)),
    },
    CachesimOption {
        name: "cache_device",
        value_name: "MODEL",
        kind: OptionKind::Text,
        default: Some("ssd"),
        aliases: &[],
        help: "the cache device's model for the service-time estimate: hdd, ssd, nvme, or PRESET,key=value,… (read, seq_read, write, seq_write latencies; read_rate, write_rate; a value @FILE takes it from a saved iolab `--json` result with a mean latency and a throughput)",
        original: "",
        apply: |s, v| s.cache_device = v.text(),
        get: |s| Some(OptionValue::Text(s.cache_device)),
    },
    CachesimOption {
        name: "origin_device",
        value_name: "MODEL",
        kind: OptionKind::Text,
        default: Some("hdd"),
        aliases: &[],
        help: "the origin device's model, written like --cache-device",
        original: "",
        apply: |s, v| s.origin_device = v.text(),
        get: |s| Some(OptionValue::Text(s.origin_device)),
    },
];

/// The option called `name`.
pub fn option(name: &str) -> Option<&'static CachesimOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

impl CachesimSettings {
    /// The defaults of [`OPTIONS`] (no trace, no size), relative paths starting at `base`.
    pub fn with_defaults(base: PathBuf) -> CachesimSettings {
        let mut s = CachesimSettings {
            trace: "",
            format: "",
            policy: "",
            size: 0,
            block_size: 0,
            assoc: "",
            write_policy: "",
            writeback: "",
            cache_device: "",
            origin_device: "",
            base,
        };
        apply_defaults(OPTIONS, &mut s);
        s
    }

    /// Each option's meaning, checked and named by its option, then the cache as a whole.
    pub fn resolve(&self) -> Result<CachesimSpec, SpecError> {
        let at = |option: &'static str| move |message: String| SpecError::new(option, message);
        if self.trace.is_empty() {
            return Err(SpecError::missing(
                "trace",
                "name the trace file to simulate",
            ));
        }
        if self.size == 0 {
            return Err(SpecError::missing(
                "size",
                "give the cache's capacity, e.g. 64m",
            ));
        }
        let (policy, params) = parse_policy(self.policy).map_err(at("policy"))?;
        let write = WritePolicy::from_name(self.write_policy).ok_or_else(|| {
            let names = WritePolicy::ALL.iter().map(|(n, _)| *n);
            SpecError::new(
                "write_policy",
                format!(
                    "unknown write policy `{}`; {}",
                    self.write_policy,
                    suggest::did_you_mean_or_list(self.write_policy, names)
                ),
            )
        })?;
        let writeback = Writeback::from_name(self.writeback).ok_or_else(|| {
            let names = Writeback::ALL.iter().map(|(n, _)| *n);
            SpecError::new(
                "writeback",
                format!(
                    "unknown write-back mode `{}`; {}",
                    self.writeback,
                    suggest::did_you_mean_or_list(self.writeback, names)
                ),
            )
        })?;
        let spec = CachesimSpec {
            trace: PathBuf::from(self.trace),
            writeback,
            format: parse_format(self.format).map_err(at("format"))?,
            cache: CacheConfig {
                size: self.size,
                block_size: self.block_size,
                assoc: parse_assoc(self.assoc).map_err(at("assoc"))?,
                write,
                policy,
                params,
            },
            cache_device: DeviceModel::parse(self.cache_device, &self.base)
                .map_err(at("cache_device"))?,
            origin_device: DeviceModel::parse(self.origin_device, &self.base)
                .map_err(at("origin_device"))?,
        };
        spec.validate()?;
        Ok(spec)
    }
}

/// The table's readers' view of cache simulations (`cachesim = { … }`, `iolab cachesim`).
pub struct CachesimTable;

impl OptionTable for CachesimTable {
    type Spec = CachesimSettings;
    type Plan = CachesimSpec;
    type Error = SpecError;
    const KIND: &'static str = crate::kind::KEY;
    const TOOL: &'static str = "libCacheSim";

    fn options() -> &'static [CachesimOption] {
        OPTIONS
    }

    /// A simulation has no directory or seed of its own; relative paths start at the
    /// current directory until the settings are placed.
    fn defaults(_dir: PathBuf, _seed: u64) -> CachesimSettings {
        CachesimSettings::with_defaults(PathBuf::new())
    }

    fn validate(s: &CachesimSettings) -> Result<CachesimSpec, SpecError> {
        s.resolve()
    }

    fn fault(e: &SpecError, _given: &dyn Fn(&str) -> bool) -> &'static str {
        e.option
    }

    /// Relative paths start at the experiment file's directory.
    fn fit_to(s: &mut CachesimSettings, at: &LoadContext) {
        place(s, at.base);
    }
}

/// Makes the settings' relative paths start at `base`: the trace now, the device models'
/// `@FILE`s when they are resolved.
pub fn place(s: &mut CachesimSettings, base: &Path) {
    if !s.trace.is_empty() {
        s.trace = intern(&base.join(s.trace).to_string_lossy());
    }
    s.base = base.to_path_buf();
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

/// A spec that cannot run, with the option to blame ([`Worded`]: `--assoc: …` on the command
/// line, `` `workload.cachesim.assoc`: … `` in an experiment file).
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    /// The option (`size`, `assoc`).
    pub option: &'static str,
    /// What is wrong; empty: the option is missing.
    pub message: String,
    /// What to do.
    pub hint: Option<String>,
}

impl SpecError {
    fn new(option: &'static str, message: String) -> SpecError {
        SpecError {
            option,
            message,
            hint: None,
        }
    }

    fn missing(option: &'static str, hint: &str) -> SpecError {
        SpecError {
            option,
            message: String::new(),
            hint: Some(hint.into()),
        }
    }
}

impl Worded for SpecError {
    fn phrase(&self) -> Phrase {
        if self.message.is_empty() {
            phrase!("{} is missing", opt(self.option))
        } else {
            phrase!("{}: {}", opt(self.option), &self.message)
        }
    }

    fn advice(&self) -> Option<Phrase> {
        self.hint.clone().map(Phrase::text)
    }
}

/// In the command line's words.
impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.phrase().fmt(f)
    }
}

impl std::error::Error for SpecError {}

impl CachesimSpec {
    /// The defaults of [`OPTIONS`] (the trace and size unset; a test keeps them in step).
    pub fn with_defaults() -> CachesimSpec {
        CachesimSpec {
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
            writeback: Writeback::OnEviction,
            cache_device: DeviceModel::preset("ssd").expect("preset"),
            origin_device: DeviceModel::preset("hdd").expect("preset"),
        }
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
                o.parse(d).unwrap_or_else(|e| panic!("{}: {e}", o.name));
            }
        }
        // The table's defaults are the spec's.
        let mut s = CachesimSettings::with_defaults(PathBuf::new());
        s.trace = "t";
        s.size = 1 << 20;
        let mut want = CachesimSpec::with_defaults();
        want.trace = "t".into();
        want.cache.size = 1 << 20;
        assert_eq!(s.resolve().unwrap(), want);
        iolab_kind::table::testing::get_undoes_apply::<CachesimTable>();
    }

    #[test]
    fn each_text_is_checked_and_named_by_its_option() {
        let mut s = CachesimSettings::with_defaults(PathBuf::new());
        s.trace = "t";
        assert_eq!(s.resolve().unwrap_err().to_string(), "--size is missing");
        s.size = 1 << 20;
        for (name, text, want) in [
            (
                "policy",
                "lfuu",
                "--policy: unknown replacement policy `lfuu`; did you mean `lfu`",
            ),
            (
                "write_policy",
                "write-behind",
                "--write-policy: unknown write policy `write-behind`",
            ),
            (
                "assoc",
                "many",
                "--assoc: `many` is neither `full` nor a number of ways",
            ),
            ("format", "xml", "--format: unknown trace format `xml`"),
            (
                "origin_device",
                "hdd,raed=1ms",
                "--origin-device: unknown key `raed`",
            ),
        ] {
            let mut bad = s.clone();
            let o = option(name).unwrap();
            o.apply(&mut bad, o.parse(text).unwrap());
            let e = bad.resolve().unwrap_err();
            assert_eq!(e.option, name);
            assert!(e.to_string().starts_with(want), "{e}");
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
