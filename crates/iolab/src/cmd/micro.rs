//! `iolab micro`: validate, run, print.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use iolab_engine::micro::run_micro_cancellable;
use iolab_engine::Observer;
use iolab_monitor::procstat::{self, CpuTimes};
use iolab_store::{RunStatus, Timestamp};
use iolab_workload::micro::MicroSpec;
use serde_json::json;

use crate::cli::{Format, MicroArgs};
use crate::cmd::db::{engine_failure, new_record, store_single, Single};
use crate::cmd::watch;
use crate::error::CliError;
use crate::fmt::thousands;
use crate::output::{self, Host, MicroReport};
use crate::term::StatusLine;
use iolab_experiment::monitor::Intent;
use iolab_experiment::monitor::Watch;

pub fn run(args: MicroArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    let spec = MicroSpec {
        access: args.access,
        sync: args.sync,
        bs: args.bs,
        size: args.size,
        threads: args.threads,
        dir: args.dir.clone(),
        engine: args.engine,
        iodepth: args.iodepth,
        time_limit: args.time,
        loops: args.loops,
        seed: args.seed,
        data: args.data.into(),
    };
    let plan = spec.validate().map_err(CliError::usage)?;
    let format = if args.json { Format::Json } else { args.format };
    // A database that cannot take the result is refused before anything runs (exit 2), not
    // after the run when its result would be lost.
    if !args.no_db {
        crate::cmd::db::open(&args.db.db)?;
    }

    let mut obs = CliObserver {
        status: StatusLine::new(std::io::stderr().is_terminal()),
        cpu_start: None,
        cpu_end: None,
        watch: watch::watch(args.monitor.options(), &args.dir),
    };
    let started_at = SystemTime::now();
    let single = || Single {
        db: &args.db.db,
        name: format!(
            "micro {} {} bs={} size={} threads={}",
            spec.access.name(),
            spec.sync.name(),
            args.bs,
            args.size,
            args.threads
        ),
        source: "iolab micro".into(),
        spec: json!({ "workload": { "micro": &spec }, "repetitions": { "min": 1, "max": 1, "metric": "ops_per_s" } }),
        factors: Default::default(),
        seed: args.seed,
        started_at: Timestamp::from_system_time(started_at),
        dir: &args.dir,
    };
    let result = match run_micro_cancellable(&plan, &mut obs, &cancel) {
        Ok(r) => r,
        Err(e) => {
            obs.status.clear();
            return Err(engine_failure(
                (!args.no_db).then(single),
                e,
                "interrupted; files created for this run were removed",
            ));
        }
    };
    let mut rec = new_record();
    rec.run.elapsed_ns = result.elapsed_ns;
    iolab_experiment::record::add_micro(&mut rec, &result);
    let intent = iolab_experiment::monitor::micro_intent(&plan, Intent::default());
    let findings = watch::finish(&mut obs.watch, &mut rec, &intent, &args.dir);
    let stored = if args.no_db {
        None
    } else {
        Some(store_single(single(), RunStatus::Ok, None, rec)?)
    };
    let report = MicroReport {
        result,
        system_cpu: obs.cpu_start.zip(obs.cpu_end),
        host: Host::probe(),
        started_at,
    };
    output::emit(|out| output::write_micro(format, &report, out))?;
    if format == Format::Human {
        crate::cmd::watch::print_findings(&findings, "");
        if let Some(id) = stored {
            say!("stored as experiment {} in {}", id.0, args.db.db.display());
        }
    }
    if args.remove_files {
        for f in &report.result.files {
            std::fs::remove_file(f)
                .map_err(|e| CliError::failed(format!("cannot remove {}: {e}", f.display())))?;
        }
    }
    Ok(())
}

/// Shows fill progress on a terminal and samples system CPU at the edges of the timed region.
struct CliObserver {
    status: StatusLine,
    cpu_start: Option<CpuTimes>,
    cpu_end: Option<CpuTimes>,
    watch: Watch,
}

impl Observer for CliObserver {
    fn preparing(&mut self, done: u64, total: u64) {
        if !self.status.enabled() || total < 64 << 20 {
            return;
        }
        // One update per 64 MiB keeps the terminal quiet and the cost invisible.
        if done.is_multiple_of(64 << 20) || done == total {
            self.status.show(format_args!(
                "preparing files: {} of {} MiB ({}%)",
                done >> 20,
                total >> 20,
                done * 100 / total
            ));
        }
    }

    fn progress(&mut self, done: u64, planned: u64, elapsed: Duration) {
        // Short runs finish before anyone could read a progress line.
        if !self.status.enabled() || elapsed < Duration::from_secs(1) || planned == 0 {
            return;
        }
        let rate = done as f64 / elapsed.as_secs_f64();
        let left = if rate > 0.0 {
            format!(
                ", ~{:.0} s left",
                (planned - done.min(planned)) as f64 / rate
            )
        } else {
            String::new()
        };
        self.status.show(format_args!(
            "running: {}% ({} of {} record{}), {} records/s{left}",
            done * 100 / planned,
            thousands(done),
            thousands(planned),
            if planned == 1 { "" } else { "s" },
            thousands(rate as u64)
        ));
    }

    fn started(&mut self) {
        self.status.keep();
        self.cpu_start = procstat::read().ok().map(|s| s.total);
        self.watch.start();
    }

    fn finished(&mut self) {
        self.watch.stop();
        self.status.clear();
        self.cpu_end = procstat::read().ok().map(|s| s.total);
    }
}
