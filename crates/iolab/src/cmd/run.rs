//! `iolab run FILE.f`: parse → validate → lower → run → print.

use std::collections::{BTreeSet, HashMap};
use std::io::IsTerminal;
use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use iolab_store::{RunStatus, Timestamp};
use serde_json::json;

use iolab_engine::fileset::{FilesetError, PopulateReport};
use iolab_engine::workload::{run_workload, RunOptions, WorkloadObserver};
use iolab_engine::EngineError;
use iolab_monitor::procstat::{self, CpuTimes};
use iolab_wml::{LowerOptions, Parsed, ValidateOptions};
use iolab_workload::model::{MasterAction, Workload};

use crate::cli::{PickArg, RunArgs};
use crate::cmd::db::{engine_failure, new_record, store_single, Single};
use crate::cmd::watch;
use crate::error::CliError;
use crate::fmt::thousands;
use crate::output::run::{write_run, RunFormat, RunReport};
use crate::output::Host;
use crate::term::StatusLine;
use iolab_experiment::monitor::Intent;
use iolab_experiment::monitor::Watch;

pub fn run(args: RunArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    if args.resume {
        return Err(
            CliError::usage("--resume continues an experiment (.toml file)")
                .with_hint("a workload run has nothing to resume; run it again"),
        );
    }
    let seed = args.seed.unwrap_or(1);
    let parsed = load(&args.file)?;
    check_sets(&parsed, &args.sets)?;
    let mut overrides = args.sets.clone();
    if let Some(d) = &args.dir {
        overrides.push(("dir".into(), d.display().to_string()));
    }
    let vopts = ValidateOptions {
        predefined: overrides.iter().map(|(k, _)| k.clone()).collect(),
    };
    // The parser's warnings and validation's, each once.
    let warnings: Vec<String> = iolab_wml::validate_with(&parsed, &vopts)
        .map_err(wml_errors)?
        .iter()
        .map(|w| w.to_string())
        .collect();
    let mut workload =
        iolab_wml::lower(&parsed, &LowerOptions { overrides }).map_err(wml_errors)?;
    if let Some(f) = args.size_scale {
        for fs in &mut workload.filesets {
            fs.size = std::mem::replace(&mut fs.size, iolab_workload::rv::Rv::Const(0)).scaled(f);
        }
    }
    // With the sizes final: I/O sizes against file sizes, located in the file.
    iolab_wml::check(&parsed, &workload).map_err(wml_errors)?;
    if let Some(d) = &args.dir {
        if !d.exists() {
            return Err(
                CliError::usage(format!("--dir {}: no such directory", d.display()))
                    .with_hint("create it first; iolab creates the filesets inside it"),
            );
        }
        if !d.is_dir() {
            return Err(
                CliError::usage(format!("--dir {}: is not a directory", d.display()))
                    .with_hint("--dir takes a directory; iolab creates the filesets inside it"),
            );
        }
    }
    // A database that cannot take the result is refused before anything runs (exit 2), not
    // after the run when its result would be lost.
    if !args.no_db {
        crate::cmd::db::open(&args.db.db)?;
    }
    let systems = system_locations(&parsed, &workload);
    if !args.quiet {
        for w in &warnings {
            say!("{w}");
        }
    }
    let format = if args.json {
        RunFormat::Json
    } else {
        args.format
    };
    let opts = RunOptions {
        duration: args.time,
        seed,
        pick_random: args.pick == PickArg::Random,
        populate_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cancel: Some(Arc::clone(&cancel)),
        engine: args.engine,
        iodepth: args.iodepth,
        run_system: !args.no_system,
    };
    let run_dir = args.dir.clone().unwrap_or_else(|| ".".into());
    let mut obs = CliObserver {
        status: StatusLine::new(std::io::stderr().is_terminal() && !args.quiet),
        quiet: args.quiet,
        cpu_start: None,
        cpu_end: None,
        watch: watch::watch(args.monitor.options(), &run_dir),
        systems,
    };
    let started_at = SystemTime::now();
    let started_ts = Timestamp::now();
    let single = || Single {
        db: &args.db.db,
        name: format!("run {}", args.file),
        source: parsed.file.clone(),
        spec: json!({
            "workload": {
                "wml": parsed.file,
                "set": args.sets,
                "time_s": args.time.map(|t| t.as_secs_f64()),
                "size_scale": args.size_scale,
                "pick": format!("{:?}", args.pick).to_lowercase(),
                "dir": args.dir,
                "engine": args.engine,
                "iodepth": args.iodepth,
            },
            "repetitions": { "min": 1, "max": 1, "metric": "ops_per_s" },
        }),
        factors: Default::default(),
        seed,
        started_at: started_ts,
        dir: &run_dir,
    };
    let result = match run_workload(&workload, &opts, &mut obs) {
        Ok(r) => r,
        Err(e) => {
            obs.status.clear();
            if let Some(err) = no_space(&parsed, &workload, &e, args.size_scale) {
                return Err(err);
            }
            let hint = run_hint(&e);
            let interrupted = if matches!(e, EngineError::Fileset(FilesetError::Interrupted)) {
                "interrupted while populating; the files it created were removed"
            } else {
                "interrupted; the files created so far are left in place"
            };
            let err = engine_failure((!args.no_db).then(single), e, interrupted);
            return Err(match hint {
                Some(h) => err.with_hint(h),
                None => err,
            });
        }
    };
    let mut rec = new_record();
    rec.run.elapsed_ns = result.elapsed_ns;
    iolab_experiment::record::add_workload(&mut rec, &result);
    let no_io = args.engine.unwrap_or_default().caps().no_io;
    let intent = iolab_experiment::monitor::wml_intent(
        &workload,
        Intent {
            no_io,
            ..Intent::default()
        },
    );
    let findings = watch::finish(&mut obs.watch, &mut rec, &intent, &run_dir);
    let stored = if args.no_db {
        None
    } else {
        Some(store_single(single(), RunStatus::Ok, None, rec)?)
    };
    let report = RunReport {
        source: parsed.file.clone(),
        seed,
        result,
        system_cpu: obs.cpu_start.zip(obs.cpu_end),
        host: Host::probe(),
        started_at,
        warnings,
        lathist: workload.lathist,
    };
    crate::output::emit(|out| write_run(format, &report, out))?;
    if !args.quiet && format == RunFormat::Human {
        crate::cmd::watch::print_findings(&findings, "");
        if let Some(id) = stored {
            say!("stored as experiment {} in {}", id.0, args.db.db.display());
        }
    }
    Ok(())
}

/// A file path, or the name of a built-in workload (`fileserver`, `varmail.f`).
fn load(name: &str) -> Result<Parsed, CliError> {
    let path = std::path::Path::new(name);
    if path.exists() {
        return iolab_wml::parse_file(path).map_err(CliError::located);
    }
    let key = name.trim_end_matches(".f");
    match iolab_wml::builtin::find(key) {
        Some(w) => {
            iolab_wml::parse_str(&format!("{}.f", w.name), w.text).map_err(CliError::located)
        }
        None => Err(
            CliError::usage(format!("{name}: no such file or built-in workload"))
                .with_hint("`iolab workloads` lists the built-in ones"),
        ),
    }
}

/// `--set` overrides variables of the file: a name the file neither sets nor reads would be
/// silently ignored, so it is an error (a typo, or the wrong workload).
fn check_sets(parsed: &Parsed, sets: &[(String, String)]) -> Result<(), CliError> {
    let known = parsed.variables();
    for (name, value) in sets {
        if known.contains(name) {
            continue;
        }
        let hint = match iolab_workload::suggest::closest(name, known.iter().map(String::as_str)) {
            Some(c) => iolab_workload::suggest::suggestion(&format!("--set {c}={value}")),
            None if known.is_empty() => format!("{} has no variables", parsed.file),
            None => {
                let all: Vec<String> = known.iter().map(|k| format!("${k}")).collect();
                format!("its variables are {}", all.join(", "))
            }
        };
        return Err(CliError::usage(format!(
            "--set {name}={value}: {} has no variable `${name}`",
            parsed.file
        ))
        .with_hint(hint));
    }
    Ok(())
}

/// Hints for a failed workload run where the engine's own name `iolab micro`'s flags
/// (--size, --bs), which `run` does not have.
fn run_hint(e: &EngineError) -> Option<&'static str> {
    match e {
        // Population errors carry fileset hints already.
        EngineError::Fileset(_) => None,
        _ => match e.os_error() {
            Some(libc::ENOSPC) => Some(
                "the filesystem is full: use a --dir with more space, or make the workload \
                 write less (smaller filesets with --set or --size-scale, a shorter --time)",
            ),
            Some(libc::EDQUOT) => Some(
                "a disk quota is exhausted: make the workload write less (smaller filesets \
                 with --set or --size-scale, a shorter --time)",
            ),
            Some(libc::EINVAL) => Some(
                "the kernel rejected the request: with `directio`, check that iosize is a \
                 multiple of the device's block size",
            ),
            _ => None,
        },
    }
}

/// The refusal of filesets that do not fit, located at the (first) fileset's `define`, with
/// what makes them fit: `--set` of the variables behind their entries, size and prealloc, or
/// a `--size-scale` that would.
fn no_space(
    parsed: &Parsed,
    w: &Workload,
    e: &EngineError,
    size_scale: Option<f64>,
) -> Option<CliError> {
    let EngineError::Fileset(FilesetError::NoSpace { filesets, avail }) = e else {
        return None;
    };
    let defs: Vec<&iolab_wml::FilesetDef> = parsed.filesets().collect();
    let mut at = None;
    let (mut attrs, mut vars) = (BTreeSet::new(), BTreeSet::new());
    let mut path_is_dir = true;
    for need in filesets {
        // Lowering keeps the definitions' order.
        let Some(def) = w
            .filesets
            .iter()
            .position(|f| f.name == need.name)
            .and_then(|i| defs.get(i))
        else {
            continue;
        };
        at.get_or_insert(def.span);
        for (attr, v) in def.size_variables() {
            attrs.insert(attr);
            vars.extend(v);
        }
        let mut path_vars = BTreeSet::new();
        if let Some(v) = iolab_wml::find_attr(&def.attrs, "path").and_then(|a| a.value.as_ref()) {
            v.variables(&mut path_vars);
        }
        path_is_dir &= path_vars.contains("dir");
    }
    let need = filesets.iter().fold(0u64, |t, n| t.saturating_add(n.bytes));
    let them = if filesets.len() == 1 { "it" } else { "them" };
    let mut ways = Vec::new();
    if !vars.is_empty() {
        let sets: Vec<String> = vars.iter().map(|v| format!("--set {v}=…")).collect();
        let attrs: Vec<String> = attrs.iter().map(|a| format!("`{a}`")).collect();
        ways.push(format!(
            "{} (behind {})",
            sets.join(" or "),
            attrs.join(", ")
        ));
    }
    // A margin for block rounding and metadata, which the byte count leaves out.
    let scale = size_scale.unwrap_or(1.0) * *avail as f64 / need as f64 * 0.9;
    if scale > 0.0 {
        ways.push(format!(
            "--size-scale {} (multiplies every file size)",
            two_digits_down(scale)
        ));
    }
    let elsewhere = if path_is_dir {
        "a --dir on a larger filesystem"
    } else {
        "a `path` on a larger filesystem"
    };
    let hint = if ways.is_empty() {
        format!("make {them} smaller, or use {elsewhere}")
    } else {
        format!(
            "make {them} smaller with {}; or use {elsewhere}",
            ways.join(", or ")
        )
    };
    let at = at.map_or(String::new(), |span| format!(":{span}"));
    Some(CliError::located(format!("{}{at}: error: {e}", parsed.file)).with_hint(hint))
}

/// `x` rounded down to two significant digits, written without noise (0.45, 0.012, 3.4).
fn two_digits_down(x: f64) -> String {
    let magnitude = x.log10().floor() as i32;
    let step = 10f64.powi(magnitude - 1);
    let decimals = (1 - magnitude).max(0) as usize;
    format!("{:.decimals$}", (x / step).floor() * step)
}

/// Where each `system "cmd"` of the prelude is written (FILE:LINE:COL), for the warning when
/// it fails.
fn system_locations(parsed: &Parsed, w: &Workload) -> HashMap<String, String> {
    let spans = parsed.live_commands().iter().filter_map(|c| match c.kind {
        iolab_wml::CommandKind::System(_) => Some(c.span),
        _ => None,
    });
    let commands = w.prelude.iter().filter_map(|a| match a {
        MasterAction::System(cmd) => Some(cmd.clone()),
        _ => None,
    });
    commands
        .zip(spans)
        .map(|(cmd, span)| (cmd, format!("{}:{span}", parsed.file)))
        .collect()
}

fn wml_errors(errs: iolab_wml::WmlErrors) -> CliError {
    let n = errs.len();
    let mut msg = errs.to_string();
    if n > 1 {
        msg.push_str(&format!("\n{n} errors"));
    }
    CliError::located(msg)
}

struct CliObserver {
    status: StatusLine,
    quiet: bool,
    cpu_start: Option<CpuTimes>,
    cpu_end: Option<CpuTimes>,
    watch: Watch,
    /// `system` commands → where they are written.
    systems: HashMap<String, String>,
}

impl WorkloadObserver for CliObserver {
    fn populating(&mut self, fileset: &str) {
        self.status
            .show(format_args!("populating fileset {fileset}…"));
    }

    fn populated(&mut self, _fileset: &str, _report: &PopulateReport) {
        self.status.clear();
    }

    fn echo(&mut self, text: &str) {
        if !self.quiet {
            self.status.clear();
            say!("{text}");
        }
    }

    fn system(&mut self, command: &str) {
        if !self.quiet {
            self.status.clear();
            say!("running: {command}");
        }
    }

    fn system_skipped(&mut self, command: &str) {
        if !self.quiet {
            self.status.clear();
            let at = self.systems.get(command).map_or("", String::as_str);
            say!("{at}: warning: `system \"{command}\"` not run (--no-system)");
        }
    }

    fn system_failed(&mut self, command: &str, status: std::process::ExitStatus) {
        self.status.clear();
        let at = self.systems.get(command).map_or("", String::as_str);
        let how = match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(sig)) => format!("was killed by signal {sig}"),
            _ => format!("failed ({status})"),
        };
        say!("{at}: warning: `system \"{command}\"` {how}");
    }

    fn started(&mut self, _threads: usize) {
        self.cpu_start = procstat::read().ok().map(|s| s.total);
    }

    fn ready(&mut self) {
        self.watch.start();
    }

    fn progress(&mut self, ops: u64, elapsed: Duration, planned: Duration) {
        if elapsed < Duration::from_secs(1) {
            return;
        }
        self.status.show(format_args!(
            "running: {:.0} of {:.0} s, {} data ops ({} /s)",
            elapsed.as_secs_f64(),
            planned.as_secs_f64(),
            thousands(ops),
            thousands((ops as f64 / elapsed.as_secs_f64()) as u64)
        ));
    }

    fn report(&mut self, ops: u64, _bytes: u64, elapsed: Duration) {
        if !self.quiet {
            self.status.clear();
            say!(
                "{:.3}: {} data ops, {:.1} ops/s",
                elapsed.as_secs_f64(),
                thousands(ops),
                ops as f64 / elapsed.as_secs_f64()
            );
        }
    }

    fn finished(&mut self) {
        self.watch.stop();
        self.cpu_end = procstat::read().ok().map(|s| s.total);
        self.status.clear();
    }
}
