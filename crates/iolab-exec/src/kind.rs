//! `[workload] exec = { tool = "fio", … }`: the keys every tool has (`tool`, `program`,
//! `args`, `env`, `time`, `timeout`), read with located errors; the rest go to the tool's
//! adapter ([`iolab_tools::Adapter::configure`]), whose mistakes are located at their key.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use iolab_kind::input::read::Ctx;
use iolab_kind::input::tree::{Entry, Table, Value};
use iolab_kind::{DynWorkload, Kind, LoadContext};
use iolab_metrics::MetricDef;
use iolab_tools::{template, Adapter, Opts};

use crate::run::ExecWorkload;

/// The `[workload]` key.
pub const KEY: &str = "exec";

/// The keys of `exec = { … }` that every tool has.
pub const COMMON_KEYS: &[&str] = &["tool", "program", "args", "env", "time", "timeout"];

/// The timeout of a run that sets none: generous, so that only a hung tool meets it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);

/// The exec kind.
pub struct ExecKind;

/// The kind's one value, as the registry lists it.
pub static EXEC: ExecKind = ExecKind;

impl Kind for ExecKind {
    fn key(&self) -> &'static str {
        KEY
    }
    fn noun(&self) -> &'static str {
        "runs of other tools"
    }
    fn example(&self) -> &'static str {
        "exec = { tool = \"fio\", job = \"job.fio\" }"
    }
    fn misplaced_hint(&self, key: &str) -> Option<&'static str> {
        match key {
            "time" | "timeout" => Some("give it inside exec = { … }"),
            _ => Some("give the tool's options inside exec = { … }"),
        }
    }
    fn metrics(&self) -> &'static [MetricDef] {
        all_metrics()
    }
    fn resolve(
        &self,
        cx: &mut Ctx,
        _section: &Table,
        entry: &Entry,
        at: &LoadContext,
    ) -> Option<Arc<dyn DynWorkload>> {
        read(cx, entry, at.base, Check::Program).map(|w| iolab_kind::erase(Arc::new(w)))
    }
}

/// Every adapter's metrics, once (a name two adapters share is one declaration: the tools
/// crate tests that they agree).
pub fn all_metrics() -> &'static [MetricDef] {
    static ALL: OnceLock<Vec<MetricDef>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut v: Vec<MetricDef> = Vec::new();
        for a in iolab_tools::ADAPTERS {
            for d in a.metrics() {
                if !v.iter().any(|x| x.name == d.name) {
                    v.push(d.clone());
                }
            }
        }
        v
    })
}

/// Whether reading looks for the program on this machine (a run does; reading a stored
/// workload again to parse old output does not need the tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Program,
    Nothing,
}

/// Reads `exec = { … }` (`entry`), every mistake reported in `cx`.
pub fn read(cx: &mut Ctx, entry: &Entry, base: &Path, check: Check) -> Option<ExecWorkload> {
    let before = cx.errors();
    let t = cx.table(entry, KEY)?;
    let names = iolab_tools::names();
    let Some(tool_entry) = t.get("tool") else {
        cx.error_hint(
            &entry.key_span,
            "`exec` needs `tool`: the adapter that runs and reads the program",
            format!(
                "tool = {}; `generic` reads any program's output with a regex or a JSON \
                 pointer per metric",
                names.join(" | ")
            ),
        );
        return None;
    };
    let adapter = iolab_tools::find(cx.choice(tool_entry, "exec.tool", &names)?)?;
    let mut known: Vec<&str> = COMMON_KEYS.to_vec();
    known.extend(adapter.keys().iter().map(|k| k.name));
    cx.unknown_keys(t, &known, KEY);

    let program = t.get("program").and_then(|e| cx.string(e, "exec.program"));
    let args = t.get("args").map(|e| strings(cx, e, "exec.args"));
    let env = t.get("env").and_then(|e| env(cx, e));
    let time = t.get("time").and_then(|e| cx.duration(e, "exec.time"));
    let timeout = t
        .get("timeout")
        .and_then(|e| cx.duration(e, "exec.timeout"));
    let args = args.flatten().unwrap_or_default();
    if let Some(e) = t.get("args") {
        for a in &args {
            if let Err(err) = template::check(a, time.is_some(), true) {
                cx.error_hint(e.point(), format!("`exec.args`: {}", err.message), err.hint);
            }
        }
    }
    if cx.errors() > before {
        return None;
    }
    let mut keys = serde_json::Map::new();
    for e in &t.entries {
        if !COMMON_KEYS.contains(&e.key.as_str()) {
            keys.insert(e.key.clone(), e.node.to_json());
        }
    }
    let opts = Opts {
        keys,
        args,
        time_s: time.map(|d| d.as_secs_f64()),
        base: base.to_path_buf(),
    };
    let run = match adapter.configure(&opts) {
        Ok(r) => r,
        Err(e) => {
            let at = t.get(&e.key).map_or(&entry.key_span, |k| k.point());
            let path = if e.key.is_empty() {
                KEY.to_string()
            } else {
                format!("{KEY}.{}", e.key)
            };
            let message = format!("`{path}`: {}", e.message);
            match e.hint {
                Some(h) => cx.error_hint(at, message, h),
                None => cx.error(at, message),
            }
            return None;
        }
    };
    // The program is what the main command starts: the adapter's (`fio`), one its options
    // locate (UnixBench's `Run` in its `path`), or the generic adapter's `command`.
    let program = program.map(str::to_string).unwrap_or_else(|| {
        run.invocation(&iolab_tools::Placeholders::default())
            .main
            .argv
            .first()
            .cloned()
            .unwrap_or_else(|| adapter.program().to_string())
    });
    if check == Check::Program {
        for (key, path) in run.needs_files() {
            if !path.is_file() {
                let at = t.get(key).map_or(&entry.key_span, |e| e.point());
                cx.error_hint(
                    at,
                    format!("`{KEY}.{key}`: {}: no such file", path.display()),
                    "a relative path starts at the experiment file's directory",
                );
                return None;
            }
        }
    }
    let found = match check {
        Check::Program => match locate(&program) {
            Some(p) => Some(p),
            None => {
                let at = t
                    .get("program")
                    .map_or(tool_entry.node.span.clone(), |e| e.node.span.clone());
                cx.error_hint(
                    &at,
                    format!(
                        "`{program}` ({} for `tool = \"{}\"`) is not on this machine",
                        if t.get("program").is_some() {
                            "the program given"
                        } else {
                            "the program"
                        },
                        adapter.name()
                    ),
                    format!(
                        "{}; or set program = \"/path/to/{}\"",
                        adapter.install(),
                        std::path::Path::new(&program)
                            .file_name()
                            .map_or(program.clone(), |n| n.to_string_lossy().into_owned())
                    ),
                );
                return None;
            }
        },
        Check::Nothing => None,
    };
    Some(ExecWorkload::new(
        adapter,
        run,
        program,
        found,
        env.unwrap_or_default(),
        time,
        timeout.unwrap_or(DEFAULT_TIMEOUT),
    ))
}

/// An array of strings.
fn strings(cx: &mut Ctx, e: &Entry, path: &str) -> Option<Vec<String>> {
    let Value::Array(items) = &e.node.value else {
        cx.error(
            e.point(),
            format!(
                "`{path}` must be an array of strings, not {}",
                e.node.value.type_name()
            ),
        );
        return None;
    };
    let mut out = Vec::with_capacity(items.len());
    for n in items {
        match &n.value {
            Value::String(s) => out.push(s.clone()),
            Value::Integer(i) => out.push(i.to_string()),
            other => {
                cx.error(
                    &n.span,
                    format!(
                        "`{path}`: each argument must be a string, not {}",
                        other.type_name()
                    ),
                );
                return None;
            }
        }
    }
    Some(out)
}

/// `env = { NAME = "value", … }`.
fn env(cx: &mut Ctx, e: &Entry) -> Option<Vec<(String, String)>> {
    let t = cx.table(e, "exec.env")?;
    let mut out = Vec::new();
    for v in &t.entries {
        let ok_name = !v.key.is_empty()
            && !v.key.starts_with(|c: char| c.is_ascii_digit())
            && v.key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok_name {
            cx.error_hint(
                &v.key_span,
                format!(
                    "`exec.env`: {:?} is not an environment variable name",
                    v.key
                ),
                "letters, digits and `_`, not starting with a digit",
            );
            continue;
        }
        if v.key.starts_with("IOLAB_") {
            cx.error_hint(
                &v.key_span,
                format!("`exec.env`: {} is iolab's own", v.key),
                "iolab sets IOLAB_DIR, IOLAB_OUT, IOLAB_SEED, IOLAB_TIME, IOLAB_SERVER and \
                 IOLAB_RUN for every command",
            );
            continue;
        }
        match v.node.value.scalar_text() {
            Some(s) => out.push((v.key.clone(), s)),
            None => cx.error(
                v.point(),
                format!("`exec.env.{}` must be a string or a number", v.key),
            ),
        }
    }
    Some(out)
}

/// `program` as the shell would find it: a path as it is, else the first executable of that
/// name on `PATH`.
pub fn locate(program: &str) -> Option<PathBuf> {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| executable(p))
}

/// The adapter named `tool`.
pub fn adapter(tool: &str) -> Option<&'static dyn Adapter> {
    iolab_tools::find(tool)
}
