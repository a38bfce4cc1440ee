//! `iolab run FILE` for a tool's own files (`iolab run job.fio`): one run of the tool under
//! iolab's runner — monitored, checked, stored — printed as a table of what it measured, or as
//! JSON (`iolab.exec/1`).

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::{ArgMatches, Command};
use iolab_kind::cli::{self, CommandError, FileRunner, Format, Host, RunArgs, Status, View};
use iolab_kind::output::SingleReport;
use iolab_kind::run::Event;
use iolab_kind::{Runs, DEFAULT_SEED};
use iolab_tools::{Adapter, Parsed};
use serde_json::{json, Map, Value};

use crate::kind::{self, Check};

/// The JSON schema of one run.
pub const SCHEMA: &str = "iolab.exec/1";

/// The formats of `iolab run FILE.fio`.
pub const FORMATS: &[Format] = &[cli::HUMAN, cli::JSON];

/// `iolab run FILE` for the files an adapter runs by themselves.
pub struct ToolFiles;

fn adapter_for(file: &str) -> Option<(&'static dyn Adapter, iolab_tools::FileKey)> {
    iolab_tools::ADAPTERS
        .iter()
        .find_map(|a| Some((*a, a.file_key()?)).filter(|(_, k)| file.ends_with(k.extension)))
}

impl FileRunner for ToolFiles {
    fn accepts(&self, file: &str) -> bool {
        adapter_for(file).is_some()
    }

    /// Its flags are the ones every workload file has (`--dir`, `--time`, `--seed`, the
    /// formats), which the runner of workload-language files adds.
    fn args(&self, cmd: Command) -> Command {
        cmd
    }

    fn given(&self, _m: &ArgMatches) -> Vec<String> {
        Vec::new()
    }

    fn run(&self, file: &str, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        let Some((adapter, key)) = adapter_for(file) else {
            return Err(CommandError::usage(format!(
                "{file}: no tool runs this file"
            )));
        };
        let seed = m
            .try_get_one::<u64>("seed")
            .ok()
            .flatten()
            .copied()
            .unwrap_or(DEFAULT_SEED);
        let dir = match m.try_get_one::<PathBuf>("dir").ok().flatten() {
            Some(d) => d.clone(),
            None => std::env::current_dir()
                .map_err(|e| CommandError::failed(format!("the current directory: {e}")))?,
        };
        let time = m.try_get_one::<Duration>("time").ok().flatten().copied();
        let mut exec = Map::new();
        exec.insert("tool".into(), json!(adapter.name()));
        exec.insert(key.key.into(), json!(file));
        if let Some(t) = time {
            exec.insert("time".into(), json!(format!("{}ms", t.as_millis())));
        }
        let workload_json = json!({ kind::KEY: Value::Object(exec) });
        let base = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let workload = iolab_kind::input::reread(&workload_json, kind::KEY, |cx, _t, e| {
            kind::read(cx, e, &base, Check::Program)
        })
        .map_err(|errs| {
            let e = errs.first();
            let err = CommandError::usage(format!("{file}: {}", e.message));
            match &e.hint {
                Some(h) => err.with_hint(h),
                None => err,
            }
        })?;
        let runs = Runs::one(
            format!("{} {file}", adapter.name()),
            file,
            dir,
            seed,
            workload,
            workload_json,
        );
        let args = RunArgs::from_matches(m, FORMATS);
        host.check_store(&args)?;
        let started_at = SystemTime::now();
        let run = cli::run_one(host, runs, &args, &mut Quiet, "interrupted")?;
        let stored = run.end.stored;
        let report = SingleReport::of(run, host.machine(), started_at);
        let tool = adapter.name();
        host.emit(&mut |out| {
            if args.human() {
                human(tool, file, &report, out)
            } else {
                let doc = json!({
                    "tool": tool,
                    "file": file,
                    "metrics": report.metrics.iter().map(|m| json!({
                        "name": m.name, "value": finite(m.value), "unit": m.unit,
                    })).collect::<Vec<_>>(),
                    "notes": report.result.notes,
                    "findings": report.findings,
                });
                iolab_kind::output::json::write(SCHEMA, &doc, out)
            }
        })?;
        if args.human() {
            host.epilogue(&report.findings, stored, &args.db);
        }
        Ok(())
    }
}

fn finite(v: f64) -> Value {
    if v.is_finite() {
        v.into()
    } else {
        Value::Null
    }
}

/// The tool's figures, one per line, then iolab's view of the run.
fn human(tool: &str, file: &str, r: &SingleReport<Parsed>, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{tool} {file}")?;
    let width = r
        .result
        .values
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0);
    for (name, _) in &r.result.values {
        let Some(m) = r.metrics.iter().find(|m| &m.name == name) else {
            continue;
        };
        writeln!(
            out,
            "  {name:<width$}  {}",
            iolab_util::units::format_quantity(m.value, &m.unit)
        )?;
    }
    for n in &r.result.notes {
        writeln!(out, "  note: {n}")?;
    }
    Ok(())
}

/// No progress of its own: the tool prints nothing while iolab keeps its output.
struct Quiet;

impl View for Quiet {
    fn event(&mut self, _status: &mut dyn Status, _event: &Event<'_>) {}
}
