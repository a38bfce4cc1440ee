//! The terminal summary.

use std::io::{self, Write};

use iolab_kind::output::{latency_line, thousands, write_system_and_switches, Formatter};
use iolab_workload::{format_bytes, format_ns};

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
        let elapsed_s = r.elapsed_ns as f64 / 1e9;
        let per_s = |x: f64| if elapsed_s > 0.0 { x / elapsed_s } else { 0.0 };
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
            "  elapsed     {elapsed_s:.3} s, {}{limited} (set-up before it: {:.3} s)",
            plural(r.transactions, "transaction"),
            r.setup_ns as f64 / 1e9
        )?;
        writeln!(
            out,
            "  throughput  {:.1} transactions/s",
            per_s(r.transactions as f64)
        )?;
        let l = r.latency.summary();
        writeln!(out, "  latency     {}", latency_line(&l))?;
        if p.checkpoints() {
            writeln!(
                out,
                "  checkpoint  {} (after the last transaction, in the elapsed time)",
                format_ns(r.checkpoint_ns as f64)
            )?;
        }
        let c = &r.calls;
        let per = |n: u64| r.per_transaction(n);
        writeln!(
            out,
            "  syscalls    per transaction: {:.2} fsync ({:.2} of the directory), {:.2} unlink, \
             {:.2} ftruncate, {:.2} write ({})",
            per(c.fsync),
            per(c.dir_fsync),
            per(c.unlink),
            per(c.ftruncate),
            per(c.write),
            format_bytes(per(c.write_bytes).round() as u64)
        )?;
        let cpu_per_tx = per(r.usage.cpu_ns());
        writeln!(
            out,
            "  cpu         usr {:.1}%  sys {:.1}% of one core ({:.3} s usr, {:.3} s sys), {} a transaction",
            per_s(r.usage.user_ns as f64 / 1e9) * 100.0,
            per_s(r.usage.sys_ns as f64 / 1e9) * 100.0,
            r.usage.user_ns as f64 / 1e9,
            r.usage.sys_ns as f64 / 1e9,
            format_ns(cpu_per_tx)
        )?;
        let system = report.system_cpu.map(|(a, b)| b.percent_since(&a));
        write_system_and_switches(out, system, &r.usage.cpu())
    }
}
