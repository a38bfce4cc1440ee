//! micro's one option table: `--NAME VALUE` for `iolab micro`, `NAME = VALUE` in an
//! experiment's `[workload] micro = { … }`. The `engine` and `iodepth` options are written as
//! every kind's are (the engine's [`ENGINE_VALUE`], [`IODEPTH_VALUE`]).

use iolab_engine::backend::{EngineKind, ENGINE_VALUE, IODEPTH_VALUE};
use iolab_util::option::{OptionDef, OptionKind, OptionValue};

use crate::spec::{Access, DataPattern, MicroSpec, SyncMode};

/// One option of a micro test, declared once: `--NAME VALUE` for `iolab micro`,
/// `NAME = VALUE` in an experiment's `[workload] micro = { … }`, and a row of the option
/// tables in docs/micro.md and docs/experiments.md (a test keeps those in step).
pub type MicroOption = OptionDef<MicroSpec>;

/// Every micro option, in the order help and docs list them. `dir` and `seed` are not here:
/// the runner sets them (from `--dir`/`--seed`, or the experiment's target and seed).
pub const OPTIONS: &[MicroOption] = &[
    MicroOption {
        name: "access",
        value_name: "ACCESS",
        kind: OptionKind::Choice(&Access::NAMES),
        default: Some("write"),
        aliases: &[],
        help: "Access pattern",
        original: "",
        apply: |s, v| s.access = Access::parse(v.name()).unwrap_or(s.access),
        get: |s| Some(OptionValue::Name(s.access.name())),
    },
    MicroOption {
        name: "sync",
        value_name: "SYNC",
        kind: OptionKind::Choice(&SyncMode::NAMES),
        default: Some("normal"),
        aliases: &[],
        help: "Sync mode",
        original: "",
        apply: |s, v| s.sync = SyncMode::parse(v.name()).unwrap_or(s.sync),
        get: |s| Some(OptionValue::Name(s.sync.name())),
    },
    MicroOption {
        name: "bs",
        value_name: "BS",
        kind: OptionKind::Size,
        default: Some("4k"),
        aliases: &[],
        help: "Record size (e.g. 4k, 1m)",
        original: "",
        apply: |s, v| s.bs = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.bs)),
    },
    MicroOption {
        name: "size",
        value_name: "SIZE",
        kind: OptionKind::Size,
        default: Some("64m"),
        aliases: &[],
        help: "Total data size, split evenly over the threads (e.g. 64m, 1g)",
        original: "",
        apply: |s, v| s.size = v.bytes(),
        get: |s| Some(OptionValue::Bytes(s.size)),
    },
    MicroOption {
        name: "threads",
        value_name: "THREADS",
        kind: OptionKind::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        default: Some("1"),
        aliases: &[],
        help: "Worker threads, each with its own file",
        original: "",
        apply: |s, v| s.threads = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.threads))),
    },
    MicroOption {
        name: "engine",
        value_name: "ENGINE",
        kind: ENGINE_VALUE,
        default: None,
        aliases: EngineKind::ALIASES,
        help: "I/O engine [default: psync; mmap for mmap modes]",
        original: "",
        apply: |s, v| s.engine = EngineKind::parse(v.name()),
        get: |s| s.engine.map(|e| OptionValue::Name(e.name())),
    },
    MicroOption {
        name: "iodepth",
        value_name: "IODEPTH",
        kind: IODEPTH_VALUE,
        default: None,
        aliases: &[],
        help: "Records in flight per thread, 1 to 4096 (io_uring only)",
        original: "",
        apply: |s, v| s.iodepth = Some(v.count_u32()),
        get: |s| s.iodepth.map(|n| OptionValue::Count(u64::from(n))),
    },
    MicroOption {
        name: "time",
        value_name: "DURATION",
        kind: OptionKind::Duration,
        default: None,
        aliases: &[],
        help: "Stop after this long even if records remain (e.g. 30s, 2m; at least 1ms)",
        original: "",
        apply: |s, v| {
            if let OptionValue::Duration(d) = v {
                s.time_limit = Some(d);
            }
        },
        get: |s| s.time_limit.map(OptionValue::Duration),
    },
    MicroOption {
        name: "loops",
        value_name: "LOOPS",
        kind: OptionKind::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        default: Some("1"),
        aliases: &[],
        help: "Visit every record this many times",
        original: "",
        apply: |s, v| s.loops = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.loops))),
    },
    MicroOption {
        name: "data",
        value_name: "DATA",
        kind: OptionKind::Choice(&DataPattern::NAMES),
        default: Some("zeros"),
        aliases: &[],
        help: "Contents of written records",
        original: "",
        apply: |s, v| s.data = DataPattern::parse(v.name()).unwrap_or(s.data),
        get: |s| Some(OptionValue::Name(s.data.name())),
    },
];

/// The option called `name`.
pub fn option(name: &str) -> Option<&'static MicroOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;

    #[test]
    fn option_table_defaults_parse_and_match_the_spec_defaults() {
        for o in OPTIONS {
            if let Some(d) = o.default {
                assert!(o.parse(d).is_ok(), "{}: default {d:?}", o.name);
            }
        }
        let s = MicroSpec::with_defaults(PathBuf::from("/d"), 7);
        assert_eq!(
            (s.access, s.sync, s.data),
            (Access::Write, SyncMode::Normal, DataPattern::Zeros)
        );
        assert_eq!((s.bs, s.size, s.threads, s.loops), (4096, 64 << 20, 1, 1));
        assert_eq!(
            (s.engine, s.iodepth, s.time_limit, s.seed),
            (None, None, None, 7)
        );
        assert!(s.validate().is_ok());
    }

    #[test]
    fn option_values_are_parsed_and_applied() {
        let mut s = MicroSpec::with_defaults(PathBuf::from("/d"), 1);
        for (name, text) in [
            ("access", "randread"),
            ("engine", "uring"),
            ("iodepth", "32"),
            ("time", "2s"),
            ("bs", "8k"),
        ] {
            let o = option(name).unwrap();
            o.apply(&mut s, o.parse(text).unwrap());
        }
        assert_eq!(s.access, Access::Randread);
        assert_eq!(s.engine, Some(EngineKind::IoUring));
        assert_eq!(s.iodepth, Some(32));
        assert_eq!(s.time_limit, Some(Duration::from_secs(2)));
        assert_eq!(s.bs, 8192);
        let err = |n: &str, t: &str| option(n).unwrap().parse(t).unwrap_err();
        assert_eq!(err("threads", "0"), "must be at least 1");
        assert_eq!(
            err("threads", "5000000000"),
            "must be between 1 and 4294967295"
        );
        assert_eq!(err("iodepth", "0"), "must be between 1 and 4096");
        assert_eq!(err("loops", "-1"), "`-1` is not a whole number (e.g. 4)");
        assert!(err("access", "sideways").starts_with("expected one of write, randwrite"));
        assert_eq!(err("time", "0s"), "must be longer than zero");
        assert_eq!(err("time", "1us"), "`1us` is too short: give at least 1ms");
        assert!(err("bs", "4q").contains("is not a size"));
    }
}
