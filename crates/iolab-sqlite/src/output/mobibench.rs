//! Mobibench's DB-mode report, label for label, so scripts written for Mobibench keep
//! working: its set-up block, a `[DB information of db …]` block per database of the first
//! thread, and its result block — `[CPU] : Active,Idle,IoWait : a b c`,
//! `[TIME] :%8ld sec %06ldus. \t%.2f Transactions/sec` and (one thread only, as Mobibench)
//! `[CON SWITCHES] : total voluntary`. Its spellings are kept ("teset", "Messurement").
//!
//! The CPU line is system-wide with Mobibench's arithmetic ([`iolab_kind::output::mobibench`]);
//! the context switches are the worker's own.

use std::io::{self, Write};

use iolab_kind::output::mobibench::{cpu_line, printf_fixed, switches_line, time_fields};
use iolab_kind::output::Formatter;

use super::SqliteReport;

pub struct Mobibench;

const RULE: &str = "-----------------------------------------";

impl Formatter<SqliteReport> for Mobibench {
    fn write(&self, report: &SqliteReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        let p = &r.plan;
        writeln!(out, "{RULE}\n[mobibench measurement setup]\n{RULE}")?;
        writeln!(out, "DB teset mode enabled.")?;
        if let Some(d) = p.sleep {
            writeln!(out, "DB time interval : {} ms", d.as_millis())?;
        }
        writeln!(out, "Operation : {}", p.mode.mobibench_number())?;
        // Mobibench runs exactly its count; a run `time` ended says what it did.
        let per_thread = if r.time_limited {
            r.threads.first().map_or(0, |t| t.transactions)
        } else {
            p.transactions_of(0)
        };
        writeln!(out, "Transactions per thread: {per_thread}")?;
        writeln!(out, "# of Tables : {}", p.tables)?;
        writeln!(out, "# of Databases : {}", p.databases)?;
        writeln!(out, "# of Threads : {}", p.threads)?;
        for d in 0..p.databases {
            writeln!(
                out,
                "{RULE}\n[DB information of db {}]\n{RULE}",
                p.db_file(0, d).display()
            )?;
            writeln!(out, "sqlite_version={}", r.library.version)?;
            writeln!(out, "page_size={}", r.settings.page_size)?;
            writeln!(out, "journal_mode={}", r.settings.journal_mode)?;
            writeln!(out, "synchronous={}", r.settings.synchronous)?;
        }
        writeln!(out, "{RULE}\n[Messurement Result]\n{RULE}")?;
        cpu_line(report.system_cpu, out)?;
        let (sec, usec, _) = time_fields(r.elapsed_ns, r.transactions);
        // The stored rate; over no time it is NaN, which Mobibench's printf writes `nan`.
        let rate = printf_fixed(report.metric("ops_per_s"), 2);
        writeln!(
            out,
            "[TIME] :{sec:>8} sec {usec:06}us. \t{rate} Transactions/sec"
        )?;
        if p.threads == 1 {
            switches_line(&r.usage.cpu(), out)?;
        }
        Ok(())
    }
}
