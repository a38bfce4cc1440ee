//! The seam between one tool and iolab's `exec` kind: an [`Adapter`] reads the tool's own keys
//! of `exec = { tool = "…", … }` into a validated [`ToolRun`]; a tool run says which commands
//! to start ([`Invocation`]) and reads what they left behind ([`Raw`]) into metrics
//! ([`Parsed`]) or the reason the output is not a valid result ([`Invalid`]).
//!
//! Adapters never start processes: the exec kind runs the commands (with a timeout, in the
//! run's directory, its process tree watched) and keeps the raw output with the run, so a
//! fixed parser can read old runs again (`iolab reparse`).

use std::borrow::Cow;
use std::fmt;

use iolab_metrics::MetricDef;
use serde_json::{Map, Value};

/// One tool iolab knows how to run and read.
pub trait Adapter: Sync {
    /// What `tool = "…"` names it (`fio`).
    fn name(&self) -> &'static str;
    /// The executable looked up on `PATH` when the user gives no `program` (`fio`).
    fn program(&self) -> &'static str;
    /// How to get the program when it is missing, in one phrase: `apt-get install fio`,
    /// `build it from https://github.com/…`.
    fn install(&self) -> &'static str;
    /// Arguments that make the program print its version (`["--version"]`); empty when it
    /// has none (the version is then recorded as unknown).
    fn version_args(&self) -> &'static [&'static str];
    /// The version in what the program printed for [`Adapter::version_args`] (stdout, then
    /// stderr, concatenated): default, its first non-empty line.
    fn version(&self, printed: &str) -> Option<String> {
        printed
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
    }
    /// The version of the parser: stored with every run, raised whenever what
    /// [`ToolRun::parse`] gives for the same output changes.
    fn parser_version(&self) -> u32;
    /// Its own keys in `exec = { … }` besides the exec kind's (`tool`, `program`, `args`,
    /// `env`, `timeout`, `time`), each with a one-line description for the docs and hints.
    fn keys(&self) -> &'static [Key];
    /// Every metric its runs can record besides iolab's common ones (the generic adapter's
    /// come from its options: none here).
    fn metrics(&self) -> &'static [MetricDef];
    /// Reads the tool's keys (and `args`, which most adapters accept) into a validated run.
    fn configure(&self, opts: &Opts) -> Result<Box<dyn ToolRun>, OptError>;
    /// The files of its own that `iolab run FILE` runs with it (fio's `.fio` job files):
    /// the file's extension and the key the file's path is given as. Default: none.
    fn file_key(&self) -> Option<FileKey> {
        None
    }
}

/// Files a tool runs by themselves: `iolab run job.fio` is `exec = { tool = "fio",
/// job = "job.fio" }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileKey {
    /// With its dot: `.fio`.
    pub extension: &'static str,
    /// The adapter's key that names the file.
    pub key: &'static str,
}

/// One key of an adapter.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub name: &'static str,
    pub doc: &'static str,
}

/// A tool's configuration, validated: what to run and how to read its output. Made again from
/// the stored workload when old runs are parsed again, so it holds only what [`Opts`] gave.
pub trait ToolRun: fmt::Debug + Send + Sync {
    /// The commands of one run. `at` gives the values of iolab's placeholders.
    fn invocation(&self, at: &Placeholders) -> Invocation;
    /// The metrics this run records besides iolab's common ones: the adapter's
    /// ([`Adapter::metrics`]) or, for the generic adapter, those its options declare.
    fn metrics(&self) -> Cow<'static, [MetricDef]>;
    /// Reads one run's output. `Err` when the output is not a valid result (the run is then
    /// stored as failed with the reason, never with a made-up number).
    fn parse(&self, raw: &Raw) -> Result<Parsed, Invalid>;
    /// Files of the user's the run reads, each with the key that names it (a fio job file):
    /// checked to exist when the experiment is loaded to run (not when old runs are read
    /// again), so that a mistyped path is a located error, not a failed run. Default: none.
    fn needs_files(&self) -> Vec<(&'static str, std::path::PathBuf)> {
        Vec::new()
    }
    /// The metric the stopping rule watches when the experiment names none: default
    /// iolab's throughput (`ops_per_s`), for a tool that gives it.
    fn stop_metric(&self) -> Option<&str> {
        None
    }
}

/// The options of `exec = { … }` an adapter reads, as given (after the experiment's
/// `${factor}` substitution). Keys are checked against [`Adapter::keys`] before
/// [`Adapter::configure`] sees them.
#[derive(Debug, Clone, Default)]
pub struct Opts {
    /// The adapter's own keys.
    pub keys: Map<String, Value>,
    /// `args = [ … ]`: extra arguments, placeholders not yet expanded.
    pub args: Vec<String>,
    /// `time = "10s"` in seconds, when given: how long the tool should run (an adapter that
    /// can set its tool's run time passes it on).
    pub time_s: Option<f64>,
    /// The experiment file's directory: relative paths in the options start there.
    pub base: std::path::PathBuf,
}

impl Opts {
    /// Key `name` as a string: `Ok(None)` when absent, an error when not a string.
    pub fn str(&self, name: &str) -> Result<Option<&str>, OptError> {
        match self.keys.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(OptError::new(
                name,
                format!("expected a string, found {}", kind_of(v)),
            )),
        }
    }

    /// Key `name` as a whole number in `min..=max`: `Ok(None)` when absent.
    pub fn uint(&self, name: &str, min: u64, max: u64) -> Result<Option<u64>, OptError> {
        let Some(v) = self.keys.get(name) else {
            return Ok(None);
        };
        match v.as_u64() {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(OptError::new(
                name,
                format!("expected a whole number from {min} to {max}, found {v}"),
            )),
        }
    }

    /// Key `name` as a boolean: `Ok(None)` when absent.
    pub fn flag(&self, name: &str) -> Result<Option<bool>, OptError> {
        match self.keys.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(OptError::new(
                name,
                format!("expected true or false, found {}", kind_of(v)),
            )),
        }
    }

    /// Key `name` as one of `choices` (returned as the static choice): `Ok(None)` when absent.
    pub fn choice(
        &self,
        name: &str,
        choices: &[&'static str],
    ) -> Result<Option<&'static str>, OptError> {
        let Some(s) = self.str(name)? else {
            return Ok(None);
        };
        choices
            .iter()
            .copied()
            .find(|c| *c == s)
            .map(Some)
            .ok_or_else(|| {
                OptError::new(name, format!("unknown value {s:?}"))
                    .hint(format!("expected one of {}", choices.join(", ")))
            })
    }

    /// Key `name` as a quantity in the notation tools read: a number, or digits with one of
    /// the suffixes K, M, G, T (either case), above 0 (or 0 with `zero_ok`) and whole with
    /// `whole`. The text as given, for the tool's command line. `hint` says what the tool
    /// expects (tools tend to read a malformed quantity as 0 without a word).
    pub fn quantity(
        &self,
        name: &str,
        whole: bool,
        zero_ok: bool,
        hint: &str,
    ) -> Result<Option<String>, OptError> {
        let text = match self.keys.get(name) {
            None => return Ok(None),
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(v) => {
                return Err(OptError::new(
                    name,
                    format!(
                        "expected a number or a text such as \"128K\", found {}",
                        kind_of(v)
                    ),
                )
                .hint(hint))
            }
        };
        let digits = text.trim_end_matches(['k', 'K', 'm', 'M', 'g', 'G', 't', 'T']);
        let one_suffix = text.len() - digits.len() <= 1;
        let number_ok = if whole {
            digits.parse::<u64>().is_ok_and(|n| n > 0 || zero_ok)
        } else {
            digits
                .parse::<f64>()
                .is_ok_and(|x| x.is_finite() && (x > 0.0 || zero_ok && x == 0.0))
        };
        if one_suffix && number_ok {
            Ok(Some(text))
        } else {
            Err(
                OptError::new(name, format!("{text:?} is not a quantity this tool reads"))
                    .hint(hint),
            )
        }
    }

    /// `args`, their placeholders checked (`has_server`: the tool runs a server, so
    /// `{server}` has a value).
    pub fn checked_args(&self, has_server: bool) -> Result<Vec<String>, OptError> {
        for a in &self.args {
            crate::template::check(a, self.time_s.is_some(), has_server)
                .map_err(|e| OptError::new("args", e.message).hint(e.hint))?;
        }
        Ok(self.args.clone())
    }

    /// Refuses an argument the adapter sets itself or cannot read the output of: `refused`
    /// pairs an option (`-s`) with the hint given when `args` holds it, alone or with its
    /// value attached (`-s16m`).
    pub fn refuse_args(&self, refused: &[(&str, &str)]) -> Result<(), OptError> {
        for a in &self.args {
            if let Some((flag, hint)) = refused.iter().find(|(f, _)| a.starts_with(f)) {
                return Err(OptError::new(
                    "args",
                    format!("`{a}` is not accepted in `args` (`{flag}`)"),
                )
                .hint(*hint));
            }
        }
        Ok(())
    }

    /// For a tool without a run-time option: `time` is refused unless `args` use it as
    /// `{time}` (silently ignoring it would run the tool for its own time instead).
    pub fn refuse_unused_time(&self, tool: &str) -> Result<(), OptError> {
        if self.time_s.is_some() && !self.args.iter().any(|a| a.contains("{time}")) {
            return Err(OptError::new(
                "time",
                format!("{tool} has no run-time option that `time` could set"),
            )
            .hint("remove `time`, or pass it to the tool yourself with `{time}` in `args`"));
        }
        Ok(())
    }
}

/// `args` (checked by [`Opts::checked_args`]) with `at`'s values in their placeholders.
pub fn expand_args(args: &[String], at: &Placeholders) -> Vec<String> {
    args.iter()
        // A checked template always expands; its text as given is the fallback that
        // cannot panic.
        .map(|a| crate::template::expand(a, at).unwrap_or_else(|_| a.clone()))
        .collect()
}

/// `a string`, `an array`, … for messages.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

/// A mistake in the adapter's options, located at its key by the exec kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptError {
    /// The key at fault (`job`, `metrics`); empty: the table as a whole.
    pub key: String,
    pub message: String,
    pub hint: Option<String>,
}

impl OptError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> OptError {
        OptError {
            key: key.into(),
            message: message.into(),
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> OptError {
        self.hint = Some(hint.into());
        self
    }
}

/// iolab's placeholders in command templates: `{dir}`, `{out}`, `{seed}`, `{time}`,
/// `{server}`, `{run}` (see [`crate::template`]). Every command also gets them in its
/// environment as `IOLAB_DIR`, `IOLAB_OUT`, `IOLAB_SEED`, `IOLAB_TIME`, `IOLAB_SERVER` and
/// `IOLAB_RUN` (fio expands `${IOLAB_DIR}` in job files).
#[derive(Debug, Clone, Default)]
pub struct Placeholders {
    /// The run's directory (the target's mount point or directory): where the tool does its
    /// I/O.
    pub dir: String,
    /// The run's scratch directory, outside the target: inputs and result files. Removed
    /// after the run (its result files kept in the database).
    pub out: String,
    /// The run's seed.
    pub seed: u64,
    /// `time` in whole seconds (at least 1), when given.
    pub time_s: Option<u64>,
    /// The address of the server the run's client talks to (iperf3), when there is one.
    pub server: Option<String>,
    /// The run's number within the experiment (0-based repetition).
    pub run: u64,
}

/// What one run starts, in order: `setup` commands (each must succeed), the `server` in the
/// background, the timed `main` command, then `cleanup` commands (always, even after a
/// failure). Every argument is already expanded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Invocation {
    pub setup: Vec<Command>,
    /// Started before `main`, waited for until `ready` appears in its output (or the port
    /// accepts), ended after `main` (SIGTERM, then SIGKILL).
    pub server: Option<Server>,
    pub main: Command,
    pub cleanup: Vec<Command>,
    /// Files written before `setup`, by name relative to the run's scratch directory
    /// (`{out}`): a job file given inline, a generated configuration.
    pub inputs: Vec<(String, Vec<u8>)>,
    /// Files that hold the tool's result, by name relative to `{out}` (or absolute): read
    /// into [`Raw::files`] after `main`.
    pub outputs: Vec<String>,
    /// Files or globs the tool leaves behind (filebench's `/tmp/filebench-shm-*`): removed
    /// after the run whatever happened.
    pub leftovers: Vec<String>,
    /// Where the server runs relative to the client.
    pub network: Network,
}

/// One command: the program (its name, looked up on `PATH`, or a path) and its arguments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Command {
    pub argv: Vec<String>,
    /// Set in its environment besides iolab's (`UB_OUTPUT_CSV=true`).
    pub env: Vec<(String, String)>,
    /// Runs it under `setarch $(uname -m) -R` (filebench needs its address space laid out
    /// the same way in every process it forks).
    pub no_aslr: bool,
}

impl Command {
    pub fn new<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> Command {
        Command {
            argv: argv.into_iter().map(Into::into).collect(),
            ..Command::default()
        }
    }

    /// The command line to start: `argv`, behind `setarch ARCH -R` when [`Command::no_aslr`].
    pub fn full_argv(&self) -> Vec<String> {
        let mut v = Vec::with_capacity(self.argv.len() + 3);
        if self.no_aslr {
            v.extend(["setarch", std::env::consts::ARCH, "-R"].map(String::from));
        }
        v.extend(self.argv.iter().cloned());
        v
    }
}

/// A server the run's client needs (iperf3 `-s`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Server {
    pub command: Command,
    /// The TCP port it listens on: the run waits until it accepts connections.
    pub port: u16,
}

/// Where a server runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Network {
    /// On the host's loopback: `{server}` is `127.0.0.1`.
    #[default]
    Loopback,
    /// In a network namespace of its own, joined to the client's by a veth pair iolab
    /// creates and removes: `{server}` is the server side's address.
    NamespacePair,
}

/// What a run of the tool left behind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Raw {
    /// The main command's exit code; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// It ran past its timeout and was killed.
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The contents of [`Invocation::outputs`] that existed, by the name given there.
    pub files: Vec<(String, Vec<u8>)>,
}

impl Raw {
    /// Standard output as text (invalid UTF-8 replaced).
    pub fn stdout_text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.stdout)
    }

    /// Standard error as text.
    pub fn stderr_text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.stderr)
    }

    /// Output file `name`'s contents.
    pub fn file(&self, name: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_slice())
    }

    /// The common validity rules every adapter applies first: the run was not killed, did
    /// not time out and exited 0. The message quotes the last lines of stderr (or stdout).
    pub fn check_exit(&self, tool: &str) -> Result<(), Invalid> {
        let tail = || last_lines(&self.stderr_text(), &self.stdout_text());
        if self.timed_out {
            return Err(
                Invalid::new(format!("{tool} ran past its timeout and was killed"))
                    .hint("raise `timeout` in exec = { … }, or shorten the tool's run"),
            );
        }
        if let Some(sig) = self.signal {
            return Err(Invalid::new(format!(
                "{tool} was ended by signal {sig}{}",
                tail()
            )));
        }
        match self.exit_code {
            Some(0) => Ok(()),
            Some(c) => Err(Invalid::new(format!(
                "{tool} exited with code {c}{}",
                tail()
            ))),
            None => Err(Invalid::new(format!("{tool} did not exit normally"))),
        }
    }
}

/// `: <the last 3 non-empty lines of err, else of out>`, or nothing: what a tool said last
/// before it failed, for messages.
pub fn last_lines(err: &str, out: &str) -> String {
    let pick = if err.trim().is_empty() { out } else { err };
    let lines: Vec<&str> = pick
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let from = lines.len().saturating_sub(3);
    format!(": {}", lines[from..].join(" / "))
}

/// What a valid output says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// Values by metric name, in the declared unit: the tool's own metrics
    /// ([`ToolRun::metrics`]) and those of iolab's common ones it gives (`ops_per_s`,
    /// `mib_per_s`, `ops`, `bytes`, `lat_mean_ns`, `lat_p99_ns`, …). The exec kind fills
    /// `elapsed_s` and the CPU figures from the process tree itself; a common metric the tool
    /// does not give is stored as not measured (NaN), never as 0.
    pub values: Vec<(String, f64)>,
    /// What the tool claims it moved, for the three views (claimed, syscalls, device).
    pub claimed: Claimed,
    /// Things worth saying about this output that do not make it invalid.
    pub notes: Vec<String>,
}

impl Parsed {
    /// Sets metric `name`.
    pub fn set(&mut self, name: &str, value: f64) {
        match self.values.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) => *v = value,
            None => self.values.push((name.to_string(), value)),
        }
    }

    /// Metric `name`'s value, if set.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

/// What a tool says it read and wrote, and over how long: `None` for what it does not say.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Claimed {
    pub read_bytes: Option<f64>,
    pub write_bytes: Option<f64>,
    /// The time its rates are over.
    pub seconds: Option<f64>,
    /// Its headline rate in bytes per second, as it reports it.
    pub bytes_per_s: Option<f64>,
    /// Whether its timed window includes flushing written data to the device (fio's
    /// `end_fsync`, iozone's `-e`); `None` when not known.
    pub flush_timed: Option<bool>,
    /// Whether it asked for direct I/O (bypassing the page cache).
    pub direct: Option<bool>,
}

/// Why an output is not a valid result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub reason: String,
    pub hint: Option<String>,
}

impl Invalid {
    pub fn new(reason: impl Into<String>) -> Invalid {
        Invalid {
            reason: reason.into(),
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Invalid {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)?;
        if let Some(h) = &self.hint {
            write!(f, " ({h})")?;
        }
        Ok(())
    }
}

/// A number where one is required: present, numeric, finite and, with `positive`, above 0.
/// `what` names it in the message (`fio's jobs[0].read.iops`).
pub fn number(v: Option<&Value>, what: &str, positive: bool) -> Result<f64, Invalid> {
    let x = match v {
        None | Some(Value::Null) => return Err(Invalid::new(format!("{what} is missing"))),
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => {
            return Err(Invalid::new(format!(
                "{what} is the text {s:?}, not a number"
            )))
        }
        Some(other) => {
            return Err(Invalid::new(format!(
                "{what} is {}, not a number",
                kind_of(other)
            )))
        }
    };
    check_number(x, what, positive)
}

/// A number read from a tool's text where one is required, checked as [`number`] does; the
/// message quotes the text.
pub fn parse_number(text: &str, what: &str, positive: bool) -> Result<f64, Invalid> {
    check_number(text.trim().parse().ok(), what, positive).map_err(|e| Invalid {
        reason: format!("{} (read {text:?})", e.reason),
        ..e
    })
}

/// A parsed number checked as [`number`] does.
pub fn check_number(x: Option<f64>, what: &str, positive: bool) -> Result<f64, Invalid> {
    match x {
        Some(x) if x.is_finite() && (!positive || x > 0.0) => Ok(x),
        Some(x) if x.is_finite() => Err(Invalid::new(format!(
            "{what} is {x}, where a result must be above 0"
        ))),
        _ => Err(Invalid::new(format!("{what} is not a finite number"))),
    }
}
