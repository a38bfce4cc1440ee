//! The generic adapter (`tool = "generic"`): any program nobody wrote an adapter for. The user
//! gives the command and, per metric, where its number is: a regular expression over stdout,
//! stderr or a result file, or a JSON pointer into JSON output. The parser only reads what it
//! was told to; everything else about validity is the exit code and the metrics found.
//!
//! A number's unit is the user's to declare and cannot be read from a free-form output, so a
//! regex's match is taken in a fixed unit (`scale` converts it) — unless the regex captures
//! the unit too and a `units` table says what each spelling is worth (dd's `kB/s`, `MB/s`,
//! `GB/s` change with the speed): an unknown spelling is refused, never guessed.

use std::borrow::Cow;
use std::path::{Component, Path};

use iolab_metrics::{Better, MetricDef};
use regex::Regex;
use serde_json::{Map, Value};

use crate::adapter::{
    check_number, kind_of, number, Adapter, Command, Invalid, Invocation, Key, OptError, Opts,
    Parsed, Placeholders, Raw, ToolRun,
};
use crate::template;

/// The generic adapter.
#[derive(Debug)]
pub struct Generic;

const KEYS: &[Key] = &[
    Key {
        name: "command",
        doc: "the program and its arguments, an array (required); iolab's placeholders ({dir}, \
              {out}, {seed}, {time}, {run}) are expanded in each",
    },
    Key {
        name: "metrics",
        doc: "the numbers to read, an array of tables { name, unit, better = \"higher\" | \
              \"lower\", regex = \"…\" (one capture group) or json = \"/pointer\", source = \
              \"stdout\" | \"stderr\" | \"file:NAME\", units, scale, required, title, \
              description }",
    },
    Key {
        name: "ok_exit",
        doc: "the exit codes that mean success (default [0])",
    },
];

/// The keys of one table of `metrics`.
const METRIC_KEYS: &[&str] = &[
    "name",
    "unit",
    "better",
    "regex",
    "json",
    "source",
    "units",
    "scale",
    "required",
    "title",
    "description",
];

impl Adapter for Generic {
    fn name(&self) -> &'static str {
        "generic"
    }

    /// None of its own: a run's program is its `command[0]`.
    fn program(&self) -> &'static str {
        ""
    }

    fn install(&self) -> &'static str {
        "install the program `command` names"
    }

    /// Programs have no common way to say their version: recorded as unknown.
    fn version_args(&self) -> &'static [&'static str] {
        &[]
    }

    fn parser_version(&self) -> u32 {
        1
    }

    fn keys(&self) -> &'static [Key] {
        KEYS
    }

    /// Its metrics come from its options ([`ToolRun::metrics`]).
    fn metrics(&self) -> &'static [MetricDef] {
        &[]
    }

    fn configure(&self, opts: &Opts) -> Result<Box<dyn ToolRun>, OptError> {
        let has_time = opts.time_s.is_some();
        let check = |key: &str, what: String, t: &str| {
            template::check(t, has_time, false)
                .map_err(|e| OptError::new(key, format!("{what}: {}", e.message)).hint(e.hint))
        };
        let command = match opts.keys.get("command") {
            None => return Err(
                OptError::new("command", "the generic adapter needs a command").hint(
                    "command = [\"dd\", \"if=/dev/zero\", \"of={dir}/f\", \"bs=1M\", \"count=64\"]",
                ),
            ),
            Some(Value::Array(a)) => a,
            Some(v) => {
                return Err(OptError::new(
                    "command",
                    format!("expected an array of strings, found {}", kind_of(v)),
                )
                .hint("command = [\"program\", \"arg\", …]: one string per argument"))
            }
        };
        let mut argv = Vec::new();
        for (i, a) in command.iter().enumerate() {
            let Value::String(s) = a else {
                return Err(OptError::new(
                    "command",
                    format!("command[{i}] is {}, not a string", kind_of(a)),
                ));
            };
            check("command", format!("command[{i}]"), s)?;
            argv.push(s.clone());
        }
        if argv.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(OptError::new("command", "the command names no program")
                .hint("its first string is the program: command = [\"dd\", …]"));
        }
        for a in &opts.args {
            check("args", format!("{a:?}"), a)?;
        }
        let ok_exit = match opts.keys.get("ok_exit") {
            None => vec![0],
            Some(Value::Array(a)) if !a.is_empty() => a
                .iter()
                .map(|c| c.as_i64().and_then(|c| i32::try_from(c).ok()))
                .collect::<Option<Vec<i32>>>()
                .ok_or_else(|| {
                    OptError::new("ok_exit", "expected exit codes (integers)")
                        .hint("ok_exit = [0, 1]")
                })?,
            Some(_) => {
                return Err(
                    OptError::new("ok_exit", "expected a non-empty array of exit codes")
                        .hint("ok_exit = [0, 1]"),
                )
            }
        };
        let metrics = match opts.keys.get("metrics") {
            None => Vec::new(),
            Some(Value::Array(a)) => {
                let mut out: Vec<Metric> = Vec::new();
                for (i, t) in a.iter().enumerate() {
                    let m = metric(i, t, &argv[0])?;
                    if out.iter().any(|o| o.def.name == m.def.name) {
                        return Err(OptError::new(
                            "metrics",
                            format!("metrics[{i}]: `{}` is declared twice", m.def.name),
                        )
                        .hint("give each metric a name of its own"));
                    }
                    out.push(m);
                }
                out
            }
            Some(v) => {
                return Err(OptError::new(
                    "metrics",
                    format!("expected an array of tables, found {}", kind_of(v)),
                ))
            }
        };
        argv.extend(opts.args.iter().cloned());
        Ok(Box::new(GenericRun {
            argv,
            metrics,
            ok_exit,
        }))
    }
}

/// Where a metric's text is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    Stdout,
    Stderr,
    /// A file the program wrote in `{out}`, by its name there.
    File(String),
}

impl Source {
    fn text(&self) -> String {
        match self {
            Source::Stdout => "stdout".into(),
            Source::Stderr => "stderr".into(),
            Source::File(f) => format!("{{out}}/{f}"),
        }
    }

    fn bytes<'r>(&self, raw: &'r Raw) -> Option<&'r [u8]> {
        match self {
            Source::Stdout => Some(&raw.stdout),
            Source::Stderr => Some(&raw.stderr),
            Source::File(f) => raw.file(f),
        }
    }
}

#[derive(Debug)]
enum How {
    /// The last match's first group is the number; with `units`, the second group its unit,
    /// and the table its factor.
    Regex {
        re: Regex,
        units: Option<Vec<(String, f64)>>,
    },
    /// A JSON pointer (RFC 6901).
    Json(String),
}

#[derive(Debug)]
struct Metric {
    /// A common metric's own declaration, or the one the options make.
    def: MetricDef,
    common: bool,
    how: How,
    source: Source,
    scale: f64,
    required: bool,
}

/// Reads `metrics[i]`.
fn metric(i: usize, t: &Value, program: &str) -> Result<Metric, OptError> {
    let Value::Object(t) = t else {
        return Err(OptError::new(
            "metrics",
            format!("metrics[{i}] is {}, not a table", kind_of(t)),
        )
        .hint("metrics = [{ name = \"…\", unit = \"…\", better = \"higher\", regex = \"…\" }]"));
    };
    let at = |msg: String| OptError::new("metrics", format!("metrics[{i}]: {msg}"));
    if let Some(k) = t.keys().find(|k| !METRIC_KEYS.contains(&k.as_str())) {
        return Err(at(format!("unknown key `{k}`"))
            .hint(format!("a metric's keys are {}", METRIC_KEYS.join(", "))));
    }
    let text = |k: &str| -> Result<Option<String>, OptError> {
        match t.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(at(format!("`{k}` must be a string, found {}", kind_of(v)))),
        }
    };
    let name = text("name")?.ok_or_else(|| at("`name` is missing".into()))?;
    let named = |msg: String| at(format!("`{name}`: {msg}"));
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        return Err(
            named("a metric's name is lowercase letters, digits and `_`".into())
                .hint("e.g. copy_bytes_per_s"),
        );
    }
    let unit = text("unit")?.ok_or_else(|| {
        named("`unit` is missing".into()).hint("unit = \"B/s\" (\"\" for a plain count)")
    })?;
    let better = match text("better")?.as_deref() {
        Some(b) => Better::parse(b)
            .ok_or_else(|| named(format!("better = {b:?}: expected \"higher\" or \"lower\"")))?,
        None => {
            return Err(named("`better` is missing".into())
                .hint("better = \"higher\" for a rate, \"lower\" for a time or latency"))
        }
    };
    let source = match text("source")?.as_deref() {
        None | Some("stdout") => Source::Stdout,
        Some("stderr") => Source::Stderr,
        Some(s) => match s.strip_prefix("file:") {
            Some(f) if is_plain_relative(f) => Source::File(f.to_string()),
            _ => {
                return Err(named(format!(
                    "source = {s:?}: expected \"stdout\", \"stderr\" or \"file:NAME\" with NAME \
                     a file in {{out}}"
                ))
                .hint("write the result file to {out} in the command: source = \"file:r.json\""))
            }
        },
    };
    let units = match t.get("units") {
        None => None,
        Some(Value::Object(u)) if !u.is_empty() => Some(unit_table(u).map_err(named)?),
        Some(v) => {
            return Err(named(format!(
                "`units` must be a table of factors, found {}",
                kind_of(v)
            ))
            .hint("units = { kB = 1e3, MB = 1e6, GB = 1e9 }"))
        }
    };
    let how = match (text("regex")?, text("json")?) {
        (Some(r), None) => {
            let re = Regex::new(&r).map_err(|e| named(format!("bad regex: {e}")))?;
            let groups = re.captures_len() - 1;
            let want = if units.is_some() { 2 } else { 1 };
            if groups != want {
                let hint = if units.is_some() {
                    "with `units`, the first group is the number and the second its unit"
                } else {
                    "one group, the number: make the others non-capturing `(?:…)`; a unit that \
                     changes (kB/s, MB/s) needs a second group and units = { kB = 1e3, MB = 1e6 }"
                };
                return Err(named(format!(
                    "the regex {r:?} has {groups} capture groups, it needs {want}"
                ))
                .hint(hint));
            }
            How::Regex { re, units }
        }
        (None, Some(p)) => {
            if units.is_some() {
                return Err(named(
                    "`units` reads a regex's second group: a JSON value has \
                                  none"
                        .into(),
                )
                .hint("use scale to convert a JSON value's unit"));
            }
            if !(p.is_empty() || p.starts_with('/')) {
                return Err(named(format!("json = {p:?} is not a JSON pointer"))
                    .hint("a pointer starts with `/`: json = \"/end/sum/bits_per_second\""));
            }
            How::Json(p)
        }
        (Some(_), Some(_)) => return Err(named("give `regex` or `json`, not both".into())),
        (None, None) => {
            return Err(
                named("`regex` or `json` is missing: where is the number?".into())
                    .hint("regex = \"copied, .* s, ([0-9.]+) GB/s\" or json = \"/result/value\""),
            )
        }
    };
    let scale = match t.get("scale") {
        None => 1.0,
        Some(v) => match v.as_f64() {
            Some(s) if s.is_finite() && s != 0.0 => s,
            _ => {
                return Err(
                    named(format!("scale = {v}: expected a number other than 0"))
                        .hint("scale = 1e-9 turns nanoseconds into seconds"),
                )
            }
        },
    };
    let required = match t.get("required") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(named(format!(
                "`required` must be true or false, found {v}"
            )))
        }
    };
    let (title, description) = (text("title")?, text("description")?);
    // A common metric keeps iolab's meaning: its unit and direction are fixed.
    if let Some(c) = iolab_metrics::find(iolab_metrics::COMMON, &name) {
        if c.unit != unit.as_str() || c.better != Some(better) {
            let b = c.better.map_or("none", Better::as_str);
            return Err(named(format!(
                "is iolab's common metric in {:?} with better = {b:?}, not in {unit:?} with \
                 better = {:?}",
                c.unit,
                better.as_str()
            ))
            .hint(format!(
                "declare unit = {:?} (scale converts the number), or pick another name",
                c.unit
            )));
        }
        if title.is_some() || description.is_some() {
            return Err(
                named("a common metric's title and description are iolab's".into())
                    .hint("remove `title` and `description`, or pick another name"),
            );
        }
        return Ok(Metric {
            def: c.clone(),
            common: true,
            how,
            source,
            scale,
            required,
        });
    }
    // The exec kind declares every adapter's metrics: a name must mean one thing.
    for a in crate::ADAPTERS {
        if let Some(d) = a.metrics().iter().find(|d| d.name == name.as_str()) {
            return Err(named(format!(
                "is {}'s metric ({}): a name means one thing in iolab",
                a.name(),
                d.description
            ))
            .hint("pick another name"));
        }
    }
    let description = description.unwrap_or_else(|| {
        let how = match &how {
            How::Regex { re, .. } => format!("the regex `{re}`"),
            How::Json(p) => format!("the JSON pointer `{p}`"),
        };
        format!("read from {program}'s {} by {how}", source.text())
    });
    let def = MetricDef {
        name: Cow::Owned(name.clone()),
        unit: Cow::Owned(unit),
        better: Some(better),
        title: Cow::Owned(title.unwrap_or(name)),
        description: Cow::Owned(description),
        // The user declared it because it is the result.
        headline: true,
        exact: false,
    };
    Ok(Metric {
        def,
        common: false,
        how,
        source,
        scale,
        required,
    })
}

/// `units = { kB = 1e3, … }`: positive finite factors by spelling.
fn unit_table(u: &Map<String, Value>) -> Result<Vec<(String, f64)>, String> {
    u.iter()
        .map(|(k, v)| match v.as_f64() {
            Some(f) if f.is_finite() && f > 0.0 => Ok((k.clone(), f)),
            _ => Err(format!("units.{k} = {v}: expected a factor above 0")),
        })
        .collect()
}

/// `r.json`, `logs/r.txt`: inside `{out}`.
fn is_plain_relative(f: &str) -> bool {
    !f.is_empty()
        && Path::new(f)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

#[derive(Debug)]
struct GenericRun {
    argv: Vec<String>,
    metrics: Vec<Metric>,
    ok_exit: Vec<i32>,
}

impl GenericRun {
    /// The program's name for messages (`dd`).
    fn program(&self) -> &str {
        let p = &self.argv[0];
        Path::new(p)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(p)
    }

    fn check_exit(&self, raw: &Raw) -> Result<(), Invalid> {
        let tool = self.program();
        if self.ok_exit == [0] || raw.timed_out || raw.signal.is_some() {
            return raw.check_exit(tool);
        }
        if raw.exit_code.is_some_and(|c| self.ok_exit.contains(&c)) {
            return Ok(());
        }
        let accepted = format!("ok_exit accepts {:?}", self.ok_exit);
        raw.check_exit(tool).map_err(|e| e.hint(accepted.clone()))?;
        Err(Invalid::new(format!("{tool} exited with code 0")).hint(accepted))
    }
}

impl ToolRun for GenericRun {
    /// The first declared metric that a required match gives (every run has it).
    fn stop_metric(&self) -> Option<&str> {
        self.metrics
            .iter()
            .find(|m| m.required && m.def.better.is_some())
            .map(|m| m.def.name.as_ref())
    }

    fn invocation(&self, at: &Placeholders) -> Invocation {
        // configure checked every template: expanding cannot fail.
        let argv = self
            .argv
            .iter()
            .map(|a| template::expand(a, at).unwrap_or_else(|_| a.clone()));
        let mut outputs: Vec<String> = Vec::new();
        for m in &self.metrics {
            if let Source::File(f) = &m.source {
                if !outputs.contains(f) {
                    outputs.push(f.clone());
                }
            }
        }
        Invocation {
            main: Command::new(argv),
            outputs,
            ..Invocation::default()
        }
    }

    fn metrics(&self) -> Cow<'static, [MetricDef]> {
        Cow::Owned(
            self.metrics
                .iter()
                .filter(|m| !m.common)
                .map(|m| m.def.clone())
                .collect(),
        )
    }

    fn parse(&self, raw: &Raw) -> Result<Parsed, Invalid> {
        self.check_exit(raw)?;
        let mut p = Parsed::default();
        // Each JSON source is parsed once, whatever number of metrics read it.
        let mut docs: Vec<(Source, Value)> = Vec::new();
        for m in &self.metrics {
            let name = &m.def.name;
            let src = m.source.text();
            let Some(bytes) = m.source.bytes(raw) else {
                if m.required {
                    return Err(Invalid::new(format!(
                        "{} did not write {src}, where metric `{name}` is",
                        self.program()
                    )));
                }
                p.notes
                    .push(format!("{src} was not written: `{name}` is not set"));
                continue;
            };
            let found = match &m.how {
                How::Regex { re, units } => {
                    let text = String::from_utf8_lossy(bytes);
                    match re.captures_iter(&text).last() {
                        None => None,
                        Some(c) => {
                            let got = c.get(1).map_or("", |g| g.as_str()).trim();
                            let what = format!("metric `{name}` ({src} matched {got:?})");
                            let x = check_number(got.parse::<f64>().ok(), &what, false).map_err(
                                |_| {
                                    Invalid::new(format!(
                                        "metric `{name}`: the regex matched {got:?} in {src}, \
                                         not a finite number"
                                    ))
                                },
                            )?;
                            let factor = match units {
                                None => 1.0,
                                Some(u) => {
                                    let said = c.get(2).map_or("", |g| g.as_str()).trim();
                                    let known = u.iter().find(|(k, _)| k == said);
                                    known.map(|(_, f)| *f).ok_or_else(|| {
                                        Invalid::new(format!(
                                            "metric `{name}`: the unit {said:?} in {src} is \
                                             not in `units` ({})",
                                            u.iter()
                                                .map(|(k, _)| k.as_str())
                                                .collect::<Vec<_>>()
                                                .join(", ")
                                        ))
                                        .hint("add it to units = { … } with its factor")
                                    })?
                                }
                            };
                            Some(x * factor)
                        }
                    }
                }
                How::Json(ptr) => {
                    let doc = match docs.iter().find(|(s, _)| *s == m.source) {
                        Some((_, d)) => d,
                        None => {
                            let d = serde_json::from_slice::<Value>(bytes).map_err(|e| {
                                Invalid::new(format!(
                                    "{src} is not JSON ({e}), where metric `{name}` is"
                                ))
                            })?;
                            docs.push((m.source.clone(), d));
                            &docs[docs.len() - 1].1
                        }
                    };
                    match doc.pointer(ptr) {
                        None => None,
                        Some(v) => Some(number(
                            Some(v),
                            &format!("metric `{name}` ({ptr} in {src})"),
                            false,
                        )?),
                    }
                }
            };
            let Some(x) = found else {
                let how = match &m.how {
                    How::Regex { re, .. } => format!("the regex `{re}` matched nothing"),
                    How::Json(ptr) => format!("{ptr} is not there"),
                };
                if m.required {
                    return Err(Invalid::new(format!("metric `{name}`: {how} in {src}"))
                        .hint("the program's output changed, or the run did not get that far"));
                }
                p.notes.push(format!("`{name}` is not set: {how} in {src}"));
                continue;
            };
            let v = check_number(
                Some(x * m.scale),
                &format!("metric `{name}` after its scale"),
                false,
            )?;
            p.set(name, v);
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{raw, read};
    use serde_json::json;

    fn configure(keys: Value) -> Result<Box<dyn ToolRun>, OptError> {
        Generic.configure(&Opts {
            keys: keys.as_object().unwrap().clone(),
            ..Opts::default()
        })
    }

    fn err(keys: Value) -> OptError {
        configure(keys).unwrap_err()
    }

    /// dd's rate, with the unit dd chose for it read from the output.
    fn dd() -> Box<dyn ToolRun> {
        configure(json!({
            "command": ["dd", "if=/dev/zero", "of={dir}/dd.out", "bs=1M", "count=64"],
            "metrics": [
                { "name": "copy_bytes_per_s", "unit": "B/s", "better": "higher",
                  "source": "stderr",
                  "regex": r"copied, [0-9.e+-]+ s, ([0-9.]+) ([A-Za-z]*B)/s",
                  "units": { "B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9 } },
                { "name": "copy_s", "unit": "s", "better": "lower", "source": "stderr",
                  "regex": r"copied, ([0-9.e+-]+) s," },
                { "name": "bytes", "unit": "B", "better": "higher", "source": "stderr",
                  "regex": r"(?m)^([0-9]+) bytes? " },
            ]
        }))
        .unwrap()
    }

    #[test]
    fn dd_s_rate_is_read_in_the_unit_dd_printed() {
        // testdata/generic/dd-64m.stderr: "67108864 bytes (67 MB, 64 MiB) copied, 0.0234429 s,
        // 2.9 GB/s".
        let p = dd().parse(&raw("generic/dd-64m", 0)).unwrap();
        assert_eq!(p.get("copy_bytes_per_s"), Some(2.9e9));
        assert_eq!(p.get("copy_s"), Some(0.0234429));
        assert_eq!(p.get("bytes"), Some(67_108_864.0));
        // "100 bytes copied, 9.7496e-05 s, 1.0 MB/s"
        let p = dd().parse(&raw("generic/dd-100b", 0)).unwrap();
        assert_eq!(p.get("copy_bytes_per_s"), Some(1.0e6));
        assert_eq!(p.get("copy_s"), Some(9.7496e-05));
        assert_eq!(p.get("bytes"), Some(100.0));
        // "1 byte copied, 2.0771e-05 s, 48.1 kB/s"
        let p = dd().parse(&raw("generic/dd-1b", 0)).unwrap();
        assert_eq!(p.get("copy_bytes_per_s"), Some(48.1e3));
        assert_eq!(p.get("bytes"), Some(1.0));
        assert!(p.notes.is_empty());
    }

    #[test]
    fn a_unit_missing_from_units_is_refused_not_guessed() {
        let mut r = raw("generic/dd-64m", 0);
        r.stderr = String::from_utf8(r.stderr)
            .unwrap()
            .replace("2.9 GB/s", "2.9 TB/s")
            .into_bytes();
        let e = dd().parse(&r).unwrap_err();
        assert_eq!(
            e.reason,
            "metric `copy_bytes_per_s`: the unit \"TB\" in stderr is not in `units` (B, GB, MB, kB)"
        );
    }

    #[test]
    fn a_second_group_without_units_is_refused() {
        // The unit as a second group is read only through `units`.
        let e = err(json!({
            "command": ["dd"],
            "metrics": [{ "name": "rate", "unit": "MB/s", "better": "higher",
                          "regex": r"s, ([0-9.]+) ([kMG]?B)/s" }]
        }));
        assert_eq!(e.key, "metrics");
        assert_eq!(
            e.message,
            "metrics[0]: `rate`: the regex \"s, ([0-9.]+) ([kMG]?B)/s\" has 2 capture groups, it \
             needs 1"
        );
        assert!(e.hint.unwrap().contains("units = {"));
        // A fixed unit works on the output in that unit, and says why it fails on another.
        let fixed = configure(json!({
            "command": ["dd"],
            "metrics": [{ "name": "rate", "unit": "MB/s", "better": "higher",
                          "source": "stderr", "regex": r"s, ([0-9.]+) MB/s" }]
        }))
        .unwrap();
        assert_eq!(
            fixed.parse(&raw("generic/dd-100b", 0)).unwrap().get("rate"),
            Some(1.0)
        );
        let e = fixed.parse(&raw("generic/dd-64m", 0)).unwrap_err();
        assert_eq!(
            e.reason,
            "metric `rate`: the regex `s, ([0-9.]+) MB/s` matched nothing in stderr"
        );
    }

    #[test]
    fn the_exit_code_decides_first() {
        let e = dd().parse(&raw("generic/dd-missing", 1)).unwrap_err();
        assert_eq!(
            e.reason,
            "dd exited with code 1: dd: failed to open 'missing': No such file or directory"
        );
        let ok1 =
            |codes: Value| configure(json!({ "command": ["/bin/dd"], "ok_exit": codes })).unwrap();
        assert!(ok1(json!([0, 1]))
            .parse(&raw("generic/dd-missing", 1))
            .is_ok());
        let e = ok1(json!([1]))
            .parse(&raw("generic/dd-64m", 0))
            .unwrap_err();
        assert_eq!(e.reason, "dd exited with code 0");
        assert_eq!(e.hint.as_deref(), Some("ok_exit accepts [1]"));
        let e = ok1(json!([1]))
            .parse(&raw("generic/dd-64m", 2))
            .unwrap_err();
        assert!(e.reason.starts_with("dd exited with code 2"), "{e}");
    }

    #[test]
    fn stress_ng_s_bogo_ops_from_stderr_and_its_yaml_file() {
        let t = configure(json!({
            "command": ["stress-ng", "--cpu", "1", "--timeout", "1s", "--metrics-brief",
                        "--yaml", "{out}/stress.yaml"],
            "metrics": [
                { "name": "ops_per_s", "unit": "op/s", "better": "higher", "source": "stderr",
                  "regex": r"metrc: \[\d+\] cpu\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)" },
                { "name": "bogo_ops", "unit": "", "better": "higher",
                  "source": "file:stress.yaml", "regex": r"bogo-ops: (\d+)" },
            ]
        }))
        .unwrap();
        let inv = t.invocation(&Placeholders {
            out: "/o".into(),
            ..Placeholders::default()
        });
        assert_eq!(inv.main.argv[7], "/o/stress.yaml");
        assert_eq!(inv.outputs, ["stress.yaml"]);
        // A common metric is set but not declared again.
        assert_eq!(
            t.metrics()
                .iter()
                .map(|d| d.name.as_ref())
                .collect::<Vec<_>>(),
            ["bogo_ops"]
        );
        let mut r = raw("generic/stress-ng-cpu", 0);
        r.files
            .push(("stress.yaml".into(), read("generic/stress-ng-yaml.yaml")));
        let p = t.parse(&r).unwrap();
        // stress-ng-cpu.stderr: "cpu 2195 1.00 0.99 0.00 2190.96 2212.98";
        // stress-ng-yaml.yaml: "bogo-ops: 2130".
        assert_eq!(p.get("ops_per_s"), Some(2190.96));
        assert_eq!(p.get("bogo_ops"), Some(2130.0));
        r.files.clear();
        let e = t.parse(&r).unwrap_err();
        assert_eq!(
            e.reason,
            "stress-ng did not write {out}/stress.yaml, where metric `bogo_ops` is"
        );
    }

    fn fio_json() -> Box<dyn ToolRun> {
        configure(json!({
            "command": ["fio", "--output-format=json", "--name=seqread", "--rw=read"],
            "metrics": [
                { "name": "seq_read_iops", "unit": "op/s", "better": "higher",
                  "json": "/jobs/0/read/iops" },
                { "name": "seq_read_runtime_s", "unit": "s", "better": "lower",
                  "json": "/jobs/0/read/runtime", "scale": 0.001 },
                { "name": "seq_read_trims", "unit": "", "better": "higher",
                  "json": "/jobs/0/trim/nothing", "required": false },
            ]
        }))
        .unwrap()
    }

    #[test]
    fn json_pointers_read_a_real_json_output() {
        // fio-stdout.stdout: read.iops 51200.000000, read.runtime 5 (ms).
        let p = fio_json().parse(&raw("generic/fio-stdout", 0)).unwrap();
        assert_eq!(p.get("seq_read_iops"), Some(51200.0));
        assert_eq!(p.get("seq_read_runtime_s"), Some(5.0 * 0.001));
        assert_eq!(p.get("seq_read_trims"), None);
        assert_eq!(
            p.notes,
            ["`seq_read_trims` is not set: /jobs/0/trim/nothing is not there in stdout"]
        );
    }

    #[test]
    fn json_values_that_are_not_numbers_are_invalid() {
        let t = fio_json();
        let mut r = raw("generic/fio-stdout", 0);
        let text = String::from_utf8(r.stdout.clone()).unwrap();
        r.stdout = text
            .replacen("\"iops\" : 51200.000000", "\"iops\" : \"51200\"", 1)
            .into_bytes();
        let e = t.parse(&r).unwrap_err();
        assert_eq!(
            e.reason,
            "metric `seq_read_iops` (/jobs/0/read/iops in stdout) is the text \"51200\", not a \
             number"
        );
        r.stdout = text.as_bytes()[..100].to_vec();
        let e = t.parse(&r).unwrap_err();
        assert!(e.reason.starts_with("stdout is not JSON (EOF"), "{e}");
        let e = t.parse(&raw("generic/dd-64m", 0)).unwrap_err();
        assert!(e.reason.starts_with("stdout is not JSON"), "{e}");
    }

    #[test]
    fn matched_text_that_is_not_a_finite_number_is_invalid() {
        let t = configure(json!({
            "command": ["x"],
            "metrics": [{ "name": "rate", "unit": "B/s", "better": "higher",
                          "regex": r"rate: (\S+)" }]
        }))
        .unwrap();
        let out = |s: &str| Raw {
            exit_code: Some(0),
            stdout: s.as_bytes().to_vec(),
            ..Raw::default()
        };
        for bad in ["1,5", "NaN", "inf", "fast"] {
            let e = t.parse(&out(&format!("rate: {bad}\n"))).unwrap_err();
            assert_eq!(
                e.reason,
                format!("metric `rate`: the regex matched {bad:?} in stdout, not a finite number")
            );
        }
        // The last match is the result (progress lines come before the summary).
        let p = t.parse(&out("rate: 1\nrate: 2\nrate: 3e3\n")).unwrap();
        assert_eq!(p.get("rate"), Some(3000.0));
        // Required: no match is no result.
        let e = t.parse(&out("nothing\n")).unwrap_err();
        assert!(e.reason.contains("matched nothing in stdout"), "{e}");
    }

    #[test]
    fn bad_options_are_refused_with_their_reason() {
        let metric = |m: Value| err(json!({ "command": ["x"], "metrics": [m] }));
        let e = metric(json!({ "name": "r", "unit": "", "better": "higher", "regex": "(a" }));
        assert_eq!(e.key, "metrics");
        assert!(
            e.message
                .starts_with("metrics[0]: `r`: bad regex: regex parse error"),
            "{}",
            e.message
        );
        assert!(e.message.contains("unclosed group"), "{}", e.message);
        let e = metric(json!({ "name": "r", "unit": "", "better": "higher", "regex": "a" }));
        assert!(
            e.message.contains("has 0 capture groups, it needs 1"),
            "{}",
            e.message
        );
        // A common name only in its unit and direction.
        let e = metric(
            json!({ "name": "mib_per_s", "unit": "MB/s", "better": "higher",
                               "regex": "(.)" }),
        );
        assert_eq!(
            e.message,
            "metrics[0]: `mib_per_s`: is iolab's common metric in \"MiB/s\" with better = \
             \"higher\", not in \"MB/s\" with better = \"higher\""
        );
        let e = metric(
            json!({ "name": "lat_p99_ns", "unit": "ns", "better": "higher",
                               "regex": "(.)" }),
        );
        assert!(e.message.contains("better = \"lower\""), "{}", e.message);
        // Another adapter's metric.
        let e = metric(
            json!({ "name": "read_iops", "unit": "op/s", "better": "higher",
                               "regex": "(.)" }),
        );
        assert!(e.message.contains("is fio's metric"), "{}", e.message);
        // Twice the same name.
        let e = err(json!({ "command": ["x"], "metrics": [
            { "name": "r", "unit": "", "better": "higher", "regex": "(.)" },
            { "name": "r", "unit": "", "better": "higher", "json": "/r" },
        ]}));
        assert_eq!(e.message, "metrics[1]: `r` is declared twice");
        for (m, want) in [
            (
                json!({ "unit": "", "better": "higher", "regex": "(.)" }),
                "`name` is missing",
            ),
            (
                json!({ "name": "R", "unit": "", "better": "higher", "regex": "(.)" }),
                "lowercase letters",
            ),
            (
                json!({ "name": "r", "better": "higher", "regex": "(.)" }),
                "`unit` is missing",
            ),
            (
                json!({ "name": "r", "unit": "", "regex": "(.)" }),
                "`better` is missing",
            ),
            (
                json!({ "name": "r", "unit": "", "better": "more", "regex": "(.)" }),
                "expected \"higher\" or \"lower\"",
            ),
            (
                json!({ "name": "r", "unit": "", "better": "higher" }),
                "`regex` or `json` is missing",
            ),
            (
                json!({ "name": "r", "unit": "", "better": "higher", "regex": "(.)", "json": "/a" }),
                "not both",
            ),
            (
                json!({ "name": "r", "unit": "", "better": "higher", "json": "a" }),
                "not a JSON pointer",
            ),
            (
                json!({ "name": "r", "unit": "", "better": "higher", "json": "/a",
                     "units": { "k": 1e3 } }),
                "a JSON value has none",
            ),
            (
                json!({ "name": "r", "unit": "", "better": "higher", "regex": "(.)",
                     "source": "file:../r" }),
                "expected \"stdout\"",
            ),
            (
                json!({ "name": "r", "unit": "", "better": "higher", "regex": "(.)",
                     "source": "file:/tmp/r" }),
                "expected \"stdout\"",
            ),
            (
                json!({ "name": "r", "unit": "", "better": "higher", "regex": "(.)", "scale": 0 }),
                "other than 0",
            ),
            (
                json!({ "name": "r", "unit": "", "better": "higher", "regex": "(.)(.)",
                     "units": { "k": -1 } }),
                "units.k = -1",
            ),
            (
                json!({ "name": "r", "unit": "", "better": "higher", "regex": "(.)",
                     "required": "yes" }),
                "`required` must be",
            ),
            (
                json!({ "name": "r", "unit": "", "better": "higher", "regex": "(.)", "rgx": "" }),
                "unknown key `rgx`",
            ),
        ] {
            let e = metric(m);
            assert!(e.message.contains(want), "{want:?} not in {:?}", e.message);
        }
        let e = err(json!({ "metrics": [] }));
        assert_eq!(e.key, "command");
        let e = err(json!({ "command": [] }));
        assert_eq!(e.message, "the command names no program");
        let e = err(json!({ "command": "dd if=x" }));
        assert_eq!(e.message, "expected an array of strings, found a string");
        let e = err(json!({ "command": ["dd", "of={dri}/x"] }));
        assert_eq!(e.message, "command[1]: unknown placeholder `{dri}`");
        let e = err(json!({ "command": ["dd", "-t", "{time}"] }));
        assert!(e.message.contains("`time` is not set"), "{}", e.message);
        let e = err(json!({ "command": ["dd"], "ok_exit": [] }));
        assert_eq!(e.key, "ok_exit");
        let e = err(json!({ "command": ["dd"], "ok_exit": ["0"] }));
        assert_eq!(e.key, "ok_exit");
    }

    #[test]
    fn declared_metrics_are_owned_definitions_with_defaults() {
        let d = dd().metrics();
        let names: Vec<_> = d.iter().map(|m| m.name.as_ref()).collect();
        // `bytes` is a common metric: set, not declared.
        assert_eq!(names, ["copy_bytes_per_s", "copy_s"]);
        assert_eq!(d[0].unit, "B/s");
        assert_eq!(d[0].title, "copy_bytes_per_s");
        assert_eq!(d[1].better, Some(Better::Lower));
        assert_eq!(
            d[1].description,
            "read from dd's stderr by the regex `copied, ([0-9.e+-]+) s,`"
        );
        assert!(d[0].headline);
        let t = configure(json!({ "command": ["x"], "metrics": [
            { "name": "r", "unit": "s", "better": "lower", "json": "/t",
              "title": "Run time", "description": "the tool's own time" }]}))
        .unwrap();
        assert_eq!(t.metrics()[0].title, "Run time");
        assert_eq!(t.metrics()[0].description, "the tool's own time");
    }

    #[test]
    fn the_docs_describe_every_key() {
        let section = crate::testdata::doc_section("harness.md", "generic");
        for k in KEYS
            .iter()
            .map(|k| k.name)
            .chain(METRIC_KEYS.iter().copied())
        {
            // `title` and `description` share a row.
            assert!(
                section.contains(&format!("| `{k}`")) || section.contains(&format!(", `{k}` |")),
                "docs/harness.md, generic: no row for `{k}`"
            );
        }
    }

    #[test]
    fn the_command_is_expanded_and_args_follow_it() {
        let t = Generic
            .configure(&Opts {
                keys: json!({ "command": ["dd", "of={dir}/f.{run}", "seed={seed}"] })
                    .as_object()
                    .unwrap()
                    .clone(),
                args: vec!["count={time}".into()],
                time_s: Some(2.0),
                ..Opts::default()
            })
            .unwrap();
        let inv = t.invocation(&Placeholders {
            dir: "/mnt".into(),
            seed: 9,
            time_s: Some(2),
            run: 3,
            ..Placeholders::default()
        });
        assert_eq!(inv.main.argv, ["dd", "of=/mnt/f.3", "seed=9", "count=2"]);
        assert!(inv.outputs.is_empty() && inv.inputs.is_empty());
    }
}
