//! The terminal summary.

use std::io::{self, Write};

use iolab_kind::output::{fixed, thousands, write_system_and_switches, Formatter};
use iolab_util::{units::format_bytes, units::format_ns};

use super::SqliteReport;

pub struct Human;

fn plural(n: u64, one: &str) -> String {
    format!("{} {one}{}", thousands(n), if n == 1 { "" } else { "s" })
}

impl Formatter<SqliteReport> for Human {
    fn write(&self, report: &SqliteReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        let p = &r.plan;
        let s = &r.settings;
        writeln!(
            out,
            "iolab sqlite: {} / journal {} / synchronous {} / {} × {} / {} / seed {}",
            p.mode,
            p.journal,
            p.synchronous,
            plural(p.tables.into(), "table"),
            plural(p.databases.into(), "database"),
            plural(p.threads.into(), "thread"),
            p.seed
        )?;
        writeln!(
            out,
            "  sqlite      {}, page size {}, journal_mode {}, synchronous {}, auto_vacuum {}, \
             temp_store {}",
            r.library.version,
            s.page_size,
            s.journal_mode,
            s.synchronous,
            s.auto_vacuum,
            s.temp_store
        )?;
        if let Some(dir) = r.files.first().and_then(|f| f.parent()) {
            writeln!(
                out,
                "  files       {}/iolab-sqlite.THREAD.DB.db (new for the run, removed after it)",
                dir.display()
            )?;
        }
        // The figures are the stored metrics (`–` where the database holds NaN: nothing was
        // measured), so that the summary and `iolab show` never disagree.
        let m = |name: &str| report.metric(name);
        let elapsed_s = m("elapsed_s");
        let limited = if r.time_limited {
            format!(
                " of {} planned, stopped by --time",
                thousands(p.transactions)
            )
        } else {
            String::new()
        };
        writeln!(
            out,
            "  elapsed     {} s, {}{limited} (set-up before it: {:.3} s)",
            fixed(elapsed_s, 3),
            plural(r.transactions, "transaction"),
            r.setup_ns as f64 / 1e9
        )?;
        writeln!(
            out,
            "  throughput  {} transactions/s",
            fixed(m("ops_per_s"), 1)
        )?;
        writeln!(out, "  latency     {}", report.latency_line())?;
        if p.checkpoints() {
            writeln!(
                out,
                "  checkpoint  {} (after the last transaction, in the elapsed time)",
                format_ns(m("checkpoint_ns"))
            )?;
        }
        let per_tx = |name: &str| fixed(m(name), 2);
        writeln!(
            out,
            "  syscalls    per transaction: {} fsync ({} of the directory), {} unlink, \
             {} ftruncate, {} write ({})",
            per_tx("fsyncs_per_tx"),
            per_tx("dir_fsyncs_per_tx"),
            per_tx("unlinks_per_tx"),
            per_tx("ftruncates_per_tx"),
            per_tx("writes_per_tx"),
            format_bytes(r.per_transaction(r.calls.write_bytes).round() as u64)
        )?;
        // Of one core: CPU seconds over the elapsed seconds (none over no time).
        let (usr_s, sys_s) = (m("cpu_usr_s"), m("cpu_sys_s"));
        let pct = |cpu_s: f64| {
            if elapsed_s > 0.0 {
                format!("{:.1}%", cpu_s / elapsed_s * 100.0)
            } else {
                "–".into()
            }
        };
        writeln!(
            out,
            "  cpu         usr {}  sys {} of one core ({} s usr, {} s sys), {} a transaction",
            pct(usr_s),
            pct(sys_s),
            fixed(usr_s, 3),
            fixed(sys_s, 3),
            format_ns(r.per_transaction(r.usage.cpu_ns()))
        )?;
        let system = report.system_cpu.map(|(a, b)| b.percent_since(&a));
        write_system_and_switches(out, system, &r.usage.cpu())
    }
}
