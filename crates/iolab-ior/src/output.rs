//! `iolab ior`'s formats: human (IOR's result lines and its "Summary of all tests" table,
//! then the aggregates across ranks) and JSON (`iolab.ior/1`, docs/json.md). Both print the
//! stored metrics: under MPI those are the ranks' merged ones.

use std::io::{self, Write};

use iolab_kind::cli::Format;
use iolab_kind::output::SingleReport;
use serde_json::json;

use crate::IorResult;

/// One report per iteration (IOR's `-i`).
pub type IorReport = SingleReport<IorResult>;

/// The stamp of `iolab ior --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.ior/1";

/// `iolab ior`'s formats, the default first.
pub const FORMATS: &[Format] = &[
    Format {
        name: "human",
        help: "IOR's result lines and summary table, then the aggregates across ranks",
    },
    iolab_kind::cli::JSON,
];

/// Writes `reports` in `format`.
pub fn write(format: &str, reports: &[IorReport], out: &mut dyn Write) -> io::Result<()> {
    match format {
        "json" => json(reports, out),
        _ => human(reports, out),
    }
}

const PHASES: [&str; 2] = ["write", "read"];

fn stats(v: &[f64]) -> (f64, f64, f64, f64) {
    let n = v.len() as f64;
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = v.iter().sum::<f64>() / n;
    // IOR's standard deviation is the population's.
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    (max, min, mean, sd)
}

fn human(reports: &[IorReport], out: &mut dyn Write) -> io::Result<()> {
    let Some(first) = reports.first() else {
        return Ok(());
    };
    let r = &first.result;
    let p = &r.plan;
    writeln!(out, "Options:")?;
    writeln!(out, "api                 : POSIX")?;
    writeln!(out, "test filename       : {}", p.file.display())?;
    writeln!(
        out,
        "access              : {}",
        if p.file_per_process {
            "file-per-process"
        } else {
            "single-shared-file"
        }
    )?;
    writeln!(
        out,
        "ordering in a file  : {}",
        if p.random { "random" } else { "sequential" }
    )?;
    writeln!(
        out,
        "ordering inter file : {}",
        if p.reorder {
            format!("constant task offset = {}", p.reorder_offset)
        } else {
            "no tasks offsets".into()
        }
    )?;
    writeln!(out, "tasks               : {}", r.size)?;
    writeln!(out, "clients per node    : {}", r.ranks_per_node)?;
    writeln!(out, "repetitions         : {}", reports.len())?;
    writeln!(out, "xfersize            : {}", p.transfer)?;
    writeln!(out, "blocksize           : {}", p.block)?;
    writeln!(out, "segments            : {}", p.segments)?;
    writeln!(
        out,
        "aggregate filesize  : {}",
        iolab_util::units::format_bytes(p.bytes_per_rank() * r.size as u64)
    )?;
    if let Some(d) = p.stonewall {
        writeln!(
            out,
            "stonewallingTime    : {}{}",
            iolab_util::units::duration_text(d),
            if p.wear_out { " (wear-out)" } else { "" }
        )?;
    }
    writeln!(out)?;
    writeln!(out, "Results:")?;
    writeln!(out)?;
    writeln!(
        out,
        "access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   close(s)   total(s)   iter"
    )?;
    writeln!(
        out,
        "------    ---------  ----       ----------  ---------- ---------  --------   --------   --------   --------   ----"
    )?;
    for (i, rep) in reports.iter().enumerate() {
        for ph in PHASES {
            let m = |n: &str| rep.metric(&format!("{ph}.{n}"));
            if m("bytes").is_nan() {
                continue;
            }
            let total = m("elapsed_s");
            let xfer = (total - m("open_s") - m("close_s")).max(0.0);
            writeln!(
                out,
                "{:<10}{:<11.2}{:<11.2}{:<12.6}{:<11.0}{:<11.2}{:<11.6}{:<11.6}{:<11.6}{:<11.6}{}",
                ph,
                m("mib_per_s"),
                m("ops_per_s"),
                m("lat_mean_ns") / 1e9,
                p.block as f64 / 1024.0,
                p.transfer as f64 / 1024.0,
                m("open_s"),
                xfer,
                m("close_s"),
                total,
                i
            )?;
        }
    }
    writeln!(out)?;
    writeln!(out, "Summary of all tests:")?;
    writeln!(
        out,
        "Operation   Max(MiB)   Min(MiB)  Mean(MiB)     StdDev   Max(OPs)   Min(OPs)  Mean(OPs)     StdDev    Mean(s) #Tasks tPN reps fPP reord reordoff segcnt   blksiz    xsize aggs(MiB)   API"
    )?;
    for ph in PHASES {
        let col = |n: &str| -> Vec<f64> {
            reports
                .iter()
                .map(|r| r.metric(&format!("{ph}.{n}")))
                .filter(|v| !v.is_nan())
                .collect()
        };
        let bw = col("mib_per_s");
        if bw.is_empty() {
            continue;
        }
        let (bmax, bmin, bmean, bsd) = stats(&bw);
        let (omax, omin, omean, osd) = stats(&col("ops_per_s"));
        let (_, _, tmean, _) = stats(&col("elapsed_s"));
        let (_, _, bytes, _) = stats(&col("bytes"));
        writeln!(
            out,
            "{:<9} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.5} {:>6} {:>3} {:>4} {:>3} {:>5} {:>8} {:>6} {:>8} {:>8} {:>9.1} POSIX",
            ph,
            bmax,
            bmin,
            bmean,
            bsd,
            omax,
            omin,
            omean,
            osd,
            tmean,
            r.size,
            r.ranks_per_node,
            reports.len(),
            u8::from(p.file_per_process),
            u8::from(p.reorder),
            p.reorder_offset,
            p.segments,
            p.block,
            p.transfer,
            bytes / 1048576.0,
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Across ranks (mean of the repetitions, MiB/s; docs/ior.md says which to quote):"
    )?;
    writeln!(
        out,
        "Operation       IOR's  all-running (window s)  first-done  last-done  slowest rank  fastest rank  mean rank"
    )?;
    for ph in PHASES {
        let mean = |n: &str| {
            let v: Vec<f64> = reports
                .iter()
                .map(|r| r.metric(&format!("{ph}.{n}")))
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        if mean("bytes").is_nan() {
            continue;
        }
        writeln!(
            out,
            "{:<9} {:>11.2} {:>12.2} ({:>7.3}) {:>11.2} {:>10.2} {:>13.2} {:>13.2} {:>10.2}",
            ph,
            mean("mib_per_s"),
            mean("window_mib_per_s"),
            mean("window_s"),
            mean("first_done_mib_per_s"),
            mean("last_done_mib_per_s"),
            mean("rank_min_mib_per_s"),
            mean("rank_max_mib_per_s"),
            mean("rank_mean_mib_per_s"),
        )?;
    }
    Ok(())
}

fn json(reports: &[IorReport], out: &mut dyn Write) -> io::Result<()> {
    let Some(first) = reports.first() else {
        return Ok(());
    };
    let r = &first.result;
    let p = &r.plan;
    let iterations: Vec<_> = reports
        .iter()
        .map(|rep| {
            let phases: serde_json::Map<String, serde_json::Value> = PHASES
                .iter()
                .filter(|ph| !rep.metric(&format!("{ph}.bytes")).is_nan())
                .map(|ph| {
                    let prefix = format!("{ph}.");
                    let m: serde_json::Map<String, serde_json::Value> = rep
                        .metrics
                        .iter()
                        .filter_map(|m| {
                            let n = m.name.strip_prefix(&prefix)?;
                            Some((n.to_string(), json!(m.value)))
                        })
                        .collect();
                    (ph.to_string(), serde_json::Value::Object(m))
                })
                .collect();
            json!({
                "phases": phases,
                "mib_per_s": rep.metric("mib_per_s"),
                "elapsed_s": rep.metric("elapsed_s"),
                "findings": rep.findings,
                "system": rep.system,
            })
        })
        .collect();
    let doc = json!({
        "host": first.host,
        "plan": {
            "preset": p.preset.name(),
            "file": p.file,
            "transfer": p.transfer,
            "block": p.block,
            "segments": p.segments,
            "file_per_process": p.file_per_process,
            "random": p.random,
            "fsync": p.fsync,
            "reorder": p.reorder,
            "reorder_offset": p.reorder_offset,
            "write": p.write,
            "read": p.read,
            "stonewall_s": p.stonewall.map(|d| d.as_secs_f64()),
            "wear_out": p.wear_out,
            "direct": p.direct,
        },
        "ranks": r.size,
        "ranks_per_node": r.ranks_per_node,
        "iterations": iterations,
    });
    iolab_kind::output::json::write(SCHEMA, &doc, out)
}
