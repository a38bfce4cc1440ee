//! The `[workload]` section: a WML file, a built-in workload, or a micro test. Its shape is
//! checked once; each configuration's substituted section is then read and the workload
//! checked the way `iolab run` / `iolab micro` would (parse, validate, lower with a stand-in
//! `$dir`), without touching the machine.

use std::path::{Path, PathBuf};

use iolab_wml::{LowerOptions, ValidateOptions, WmlError};
use iolab_workload::micro::{Access, DataPattern, EngineKind, MicroSpec, MicroSpecError, SyncMode};

use crate::error::ExperimentError;
use crate::plan::{WmlPlan, WorkloadPlan};
use crate::read::{join, Ctx};
use crate::tree::{Entry, Node, Span, Table, Value};
use iolab_workload::suggest;

/// Stands in for the run directory, which the runner knows only when it prepares the SUT.
pub(crate) const PLACEHOLDER_DIR: &str = "/nonexistent-iolab-dir";

const KEYS: &[&str] = &[
    "wml",
    "builtin",
    "micro",
    "set",
    "time",
    "size_scale",
    "pick",
];
const KINDS: &[&str] = &["wml", "builtin", "micro"];
/// Keys that only make sense for WML workloads.
const WML_ONLY: &[&str] = &["set", "time", "size_scale", "pick"];
const MICRO_KEYS: &[&str] = &[
    "access", "sync", "bs", "size", "threads", "engine", "iodepth", "time", "loops", "data",
];
const PICKS: &[&str] = &["round-robin", "random"];

/// Which kind of workload the section names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Wml,
    Builtin,
    Micro,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Wml => "wml",
            Kind::Builtin => "builtin",
            Kind::Micro => "micro",
        }
    }
}

/// Checks the keys of `[workload]` (before substitution); `None` after an error.
pub(crate) fn check_shape(cx: &mut Ctx, entry: Option<&Entry>) -> Option<Kind> {
    let Some(entry) = entry else {
        cx.error_hint(
            &(0..0),
            "the experiment has no [workload] section",
            "add [workload] with wml = \"file.f\", builtin = \"webserver\" or micro = { … }",
        );
        return None;
    };
    let before = cx.errors();
    let t = cx.table(entry, "workload")?;
    cx.unknown_keys(t, KEYS, "workload");
    let kinds: Vec<&Entry> = t
        .entries
        .iter()
        .filter(|e| KINDS.contains(&e.key.as_str()))
        .collect();
    let kind = match kinds.as_slice() {
        [] => {
            cx.error_hint(
                &entry.key_span,
                "[workload] names no workload",
                "give one of wml = \"file.f\", builtin = \"webserver\" or micro = { … }",
            );
            return None;
        }
        [first, second, ..] => {
            cx.error_hint(
                &second.key_span,
                format!(
                    "`workload.{}` and `workload.{}` are both given",
                    first.key, second.key
                ),
                "a workload is exactly one of wml, builtin or micro",
            );
            return None;
        }
        [one] => match one.key.as_str() {
            "wml" => Kind::Wml,
            "builtin" => Kind::Builtin,
            _ => Kind::Micro,
        },
    };
    if kind == Kind::Micro {
        for e in t
            .entries
            .iter()
            .filter(|e| WML_ONLY.contains(&e.key.as_str()))
        {
            let hint = if e.key == "time" {
                "give a micro test's time limit inside it: micro = { …, time = \"30s\" }"
            } else {
                "remove it: micro tests have no WML variables, filesets or file picking"
            };
            cx.error_hint(
                &e.key_span,
                format!(
                    "`workload.{}` applies to WML workloads, not micro tests",
                    e.key
                ),
                hint,
            );
        }
    }
    (cx.errors() == before).then_some(kind)
}

/// Reads one configuration's substituted `[workload]` table and checks the workload.
/// `target_bytes` is the target's capacity when known (tmpfs and loop image sizes).
pub(crate) fn resolve(
    cx: &mut Ctx,
    w: &Node,
    kind: Kind,
    base: &Path,
    target_bytes: Option<u64>,
) -> Option<WorkloadPlan> {
    let t = w.value.as_table()?;
    let entry = t.get(kind.key())?;
    match kind {
        Kind::Micro => micro(cx, entry, target_bytes).map(WorkloadPlan::Micro),
        Kind::Wml | Kind::Builtin => wml(cx, t, entry, kind, base).map(WorkloadPlan::Wml),
    }
}

fn wml(cx: &mut Ctx, t: &Table, entry: &Entry, kind: Kind, base: &Path) -> Option<WmlPlan> {
    let before = cx.errors();
    let path = join("workload", kind.key());
    let name = cx.string(entry, &path);
    let mut sets = Vec::new();
    if let Some(e) = t.get("set") {
        if let Some(st) = cx.table(e, "workload.set") {
            for s in &st.entries {
                let var = s.key.trim_start_matches('$');
                if var == "dir" {
                    cx.error_hint(
                        &s.key_span,
                        "`$dir` is set by the runner to the prepared directory",
                        "remove it from `workload.set`",
                    );
                    continue;
                }
                match &s.node.value {
                    v @ (Value::String(_)
                    | Value::Integer(_)
                    | Value::Float(_)
                    | Value::Boolean(_)) => {
                        sets.push((var.to_string(), v.scalar_text().unwrap_or_default()));
                    }
                    v => cx.error(
                        &s.node.span,
                        format!(
                            "`{}` must be a string, number or boolean, not {}",
                            join("workload.set", &s.key),
                            v.type_name()
                        ),
                    ),
                }
            }
        }
    }
    let duration = t.get("time").and_then(|e| cx.duration(e, "workload.time"));
    let size_scale = t.get("size_scale").and_then(|e| {
        let f = cx.number(e, "workload.size_scale")?;
        if f > 0.0 {
            Some(f)
        } else {
            cx.error(
                &e.node.span,
                format!("`workload.size_scale` must be greater than 0, not {f}"),
            );
            None
        }
    });
    let pick_random = t
        .get("pick")
        .and_then(|e| cx.choice(e, "workload.pick", PICKS))
        .is_some_and(|p| p == "random");
    let name = name?;
    let (source, file, text) = match kind {
        Kind::Builtin => match iolab_wml::builtin::find(name) {
            Some(b) => (
                format!("builtin:{}", b.name),
                PathBuf::from(format!("builtin:{}", b.name)),
                b.text.to_string(),
            ),
            None => {
                let names = iolab_wml::builtin::BUILTIN.iter().map(|b| b.name);
                cx.error_hint(
                    &entry.node.span,
                    format!("`{path}`: no built-in workload is called {name:?}"),
                    suggest::did_you_mean_or_list(name, names),
                );
                return None;
            }
        },
        _ => {
            let file = base.join(name);
            match std::fs::read(&file) {
                // filebench reads bytes; a stray Latin-1 byte in a comment should not reject
                // a file (as iolab_wml::parse_file).
                Ok(bytes) => {
                    // Stored with every run: without `..` segments.
                    let file = std::fs::canonicalize(&file).unwrap_or(file);
                    (
                        file.display().to_string(),
                        file,
                        String::from_utf8_lossy(&bytes).into_owned(),
                    )
                }
                Err(e) => {
                    let stem = Path::new(name).file_stem().map(|s| s.to_string_lossy());
                    let hint = match stem.as_deref().and_then(iolab_wml::builtin::find) {
                        Some(b) => format!(
                            "the path is relative to the experiment file's directory; for the \
                             shipped workload write builtin = {:?}",
                            b.name
                        ),
                        None => "the path is relative to the experiment file's directory".into(),
                    };
                    cx.error_hint(
                        &entry.node.span,
                        format!("`{path}`: cannot read {}: {e}", file.display()),
                        hint,
                    );
                    return None;
                }
            }
        }
    };
    if cx.errors() > before {
        return None;
    }
    let (line, col) = cx.src.line_col(entry.node.span.start);
    let named_at = format!(
        "the workload named by `{path}` at {}:{line}:{col}",
        cx.src.path.display()
    );
    let wml_errors = |cx: &mut Ctx, errs: Vec<WmlError>| {
        for e in errs {
            cx.push(wml_error(&file, e, &named_at));
        }
    };
    let parsed = match iolab_wml::parse_str(&source, &text) {
        Ok(p) => p,
        Err(e) => {
            wml_errors(cx, vec![e]);
            return None;
        }
    };
    // A `set` of a variable the workload does not have would silently run its defaults.
    if let Some(st) = t.get("set").and_then(|e| e.node.value.as_table()) {
        let known = parsed.variables();
        for s in &st.entries {
            let var = s.key.trim_start_matches('$');
            if var != "dir" && !known.contains(var) {
                cx.error_hint(
                    &s.key_span,
                    format!(
                        "`{}`: {source} has no variable ${var}",
                        join("workload.set", &s.key)
                    ),
                    suggest::did_you_mean_or_list(var, known.iter().map(String::as_str)),
                );
            }
        }
        if cx.errors() > before {
            return None;
        }
    }
    let mut predefined: Vec<String> = sets.iter().map(|(k, _)| k.clone()).collect();
    predefined.push("dir".into());
    if let Err(errs) = iolab_wml::validate_with(&parsed, &ValidateOptions { predefined }) {
        wml_errors(cx, errs.into_vec());
        return None;
    }
    let mut overrides = sets.clone();
    overrides.push(("dir".into(), PLACEHOLDER_DIR.into()));
    let lowered = match iolab_wml::lower(&parsed, &LowerOptions { overrides }) {
        Ok(w) => w,
        Err(errs) => {
            wml_errors(cx, errs.into_vec());
            return None;
        }
    };
    // What only the lowered workload shows (an fd opened twice, an iosize beyond its working
    // set), judged at the size the runs will use.
    let mut scaled = lowered.clone();
    if let Some(f) = size_scale {
        for fs in &mut scaled.filesets {
            fs.size = std::mem::replace(&mut fs.size, iolab_workload::rv::Rv::Const(0)).scaled(f);
        }
    }
    if let Err(errs) = iolab_wml::check(&parsed, &scaled) {
        wml_errors(cx, errs.into_vec());
        return None;
    }
    if lowered.run.duration.is_none() && duration.is_none() {
        cx.error_hint(
            &entry.node.span,
            format!("{source} has no `run` command, so its run time is unknown"),
            "give it in [workload]: time = \"60s\"",
        );
        return None;
    }
    Some(WmlPlan {
        source,
        text,
        sets,
        duration,
        size_scale,
        pick_random,
    })
}

/// A WML error keeps its own file and location; the hint says which experiment line led
/// there when the error has no advice of its own.
fn wml_error(file: &Path, e: WmlError, named_at: &str) -> ExperimentError {
    let hint = e.hint.unwrap_or_else(|| format!("in {named_at}"));
    ExperimentError::new(file, e.span.line, e.span.col, e.message).hint(hint)
}

fn micro(cx: &mut Ctx, entry: &Entry, target_bytes: Option<u64>) -> Option<MicroSpec> {
    let before = cx.errors();
    let t = cx.table(entry, "workload.micro")?;
    cx.unknown_keys(t, MICRO_KEYS, "workload.micro");
    let key = |k: &str| format!("workload.micro.{k}");
    let parsed = |cx: &mut Ctx, k: &str, names: Vec<&'static str>| -> Option<&'static str> {
        let e = t.get(k)?;
        cx.choice(e, &key(k), &names)
    };
    let access = parsed(cx, "access", Access::ALL.iter().map(|a| a.name()).collect())
        .and_then(Access::parse)
        .unwrap_or(Access::Write);
    let sync = parsed(cx, "sync", SyncMode::ALL.iter().map(|s| s.name()).collect())
        .and_then(SyncMode::parse)
        .unwrap_or(SyncMode::Normal);
    let engine = parsed(
        cx,
        "engine",
        EngineKind::ALL.iter().map(|e| e.name()).collect(),
    )
    .and_then(EngineKind::parse);
    let data = match parsed(cx, "data", vec!["zeros", "random"]) {
        Some("random") => DataPattern::Random,
        _ => DataPattern::Zeros,
    };
    let size_of = |cx: &mut Ctx, k: &str, default: u64| {
        t.get(k).map_or(Some(default), |e| cx.size(e, &key(k)))
    };
    let bs = size_of(cx, "bs", 4 << 10);
    let size = size_of(cx, "size", 64 << 20);
    let int = |cx: &mut Ctx, k: &str| {
        t.get(k)
            .and_then(|e| cx.integer(e, &key(k), 0, i64::from(u32::MAX)))
            .map(|i| i as u32)
    };
    let threads = int(cx, "threads");
    let iodepth = int(cx, "iodepth");
    let loops = int(cx, "loops");
    let time_limit = t.get("time").and_then(|e| cx.duration(e, &key("time")));
    if cx.errors() > before {
        return None;
    }
    let spec = MicroSpec {
        access,
        sync,
        bs: bs?,
        size: size?,
        threads: threads.unwrap_or(1),
        dir: PLACEHOLDER_DIR.into(),
        engine,
        iodepth,
        time_limit,
        loops: loops.unwrap_or(1),
        // The runner gives every run its own seed.
        seed: 0,
        data,
    };
    let at = |k: &str| -> Span {
        t.get(k)
            .map_or(entry.key_span.clone(), |e| e.node.span.clone())
    };
    if let Err(e) = spec.validate() {
        let k = match e {
            MicroSpecError::ZeroBlockSize | MicroSpecError::HugeBlockSize { .. } => "bs",
            MicroSpecError::ZeroSize { .. }
            | MicroSpecError::SizeNotMultiple { .. }
            | MicroSpecError::PerThreadNotMultiple { .. } => "size",
            MicroSpecError::ZeroThreads => "threads",
            MicroSpecError::MmapNeedsMmapEngine { .. } => "engine",
            MicroSpecError::MmapEngineNeedsMmapSync { .. } => {
                if t.get("sync").is_some() {
                    "sync"
                } else {
                    "engine"
                }
            }
            MicroSpecError::DepthNeedsUring { .. } | MicroSpecError::BadDepth(_) => "iodepth",
            MicroSpecError::ZeroLoops => "loops",
            MicroSpecError::ZeroTime => "time",
        };
        // The messages are written for the command line (`--size`); the keys here are
        // spelled the same without the dashes.
        let message = e.to_string().replace("--", "");
        cx.error(&at(k), format!("`{}`: {message}", key(k)));
        return None;
    }
    if let Some(cap) = target_bytes.filter(|&cap| spec.size > cap) {
        cx.error_hint(
            &at("size"),
            format!(
                "`{}`: {} of data do not fit on the {} target",
                key("size"),
                iolab_workload::format_bytes(spec.size),
                iolab_workload::format_bytes(cap)
            ),
            "make the target larger or the micro test smaller",
        );
        return None;
    }
    Some(spec)
}
