//! `iolab io500`'s formats: human (IO500's result list: a `[RESULT]` line per phase, then
//! `[SCORE ]`, and why the run is not a valid IO500 result when it is not) and JSON
//! (`iolab.io500/1`, docs/json.md). Both print the stored metrics: under MPI those are the
//! ranks' merged ones.

use std::io::{self, Write};

use iolab_kind::cli::Format;
use iolab_kind::output::SingleReport;
use serde_json::json;

use crate::merge::invalid;
use crate::phases::PHASES;
use crate::Io500Result;

/// One io500 run's report.
pub type Io500Report = SingleReport<Io500Result>;

/// The stamp of `iolab io500 --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.io500/1";

/// `iolab io500`'s formats, the default first.
pub const FORMATS: &[Format] = &[
    Format {
        name: "human",
        help: "IO500's result list: a [RESULT] line per phase, then [SCORE ]",
    },
    iolab_kind::cli::JSON,
];

/// Writes `report` in `format`.
pub fn write(format: &str, report: &Io500Report, out: &mut dyn Write) -> io::Result<()> {
    match format {
        "json" => json_doc(report, out),
        _ => human(report, out),
    }
}

/// Whether phase `p`'s own figures keep IO500's rules (a write outlasts the stonewall).
fn phase_valid(report: &Io500Report, p: &crate::phases::PhaseDef) -> bool {
    let stonewall = report.result.plan.stonewall.as_secs_f64();
    !(p.write && report.metric(&format!("{}.elapsed_s", p.key)) < stonewall)
}

fn human(report: &Io500Report, out: &mut dyn Write) -> io::Result<()> {
    let r = &report.result;
    let plan = &r.plan;
    writeln!(
        out,
        "IO500 with iolab: {} rank{}, stonewall {}, ior-easy {} per rank, ior-hard {} × 47008 \
         bytes, mdtest-easy {} and mdtest-hard {} files per rank",
        r.size,
        if r.size == 1 { "" } else { "s" },
        iolab_util::units::duration_text(plan.stonewall),
        iolab_util::units::format_bytes(plan.ior_easy.block),
        plan.ior_hard.segments,
        plan.mdtest_easy.items,
        plan.mdtest_hard.items,
    )?;
    for p in &PHASES {
        let score = report.metric(&format!("{}.{}", p.key, p.rate()));
        writeln!(
            out,
            "[RESULT] {:>20} {:>15.6} {} : time {:.3} seconds{}",
            p.name,
            score,
            p.unit(),
            report.metric(&format!("{}.elapsed_s", p.key)),
            if phase_valid(report, p) {
                ""
            } else {
                " [INVALID]"
            }
        )?;
    }
    let why = invalid(plan.stonewall, &|n| report.metric(n));
    writeln!(
        out,
        "[SCORE ] Bandwidth {:.6} GiB/s : IOPS {:.6} kiops : TOTAL {:.6}{}",
        report.metric("io500.bw_gib_per_s"),
        report.metric("io500.md_kiops"),
        report.metric("io500.score"),
        if why.is_empty() { "" } else { " [INVALID]" }
    )?;
    if !why.is_empty() {
        writeln!(out)?;
        writeln!(out, "Not a valid IO500 result:")?;
        for w in &why {
            writeln!(out, "  - {w}")?;
        }
    }
    Ok(())
}

fn json_doc(report: &Io500Report, out: &mut dyn Write) -> io::Result<()> {
    let r = &report.result;
    let plan = &r.plan;
    let phases: Vec<_> = PHASES
        .iter()
        .map(|p| {
            let m = |n: &str| report.metric(&format!("{}.{n}", p.key));
            json!({
                "phase": p.name,
                "score": m(p.rate()),
                "unit": p.unit(),
                "time_s": m("elapsed_s"),
                p.work(): m(p.work()),
                "valid": phase_valid(report, p),
            })
        })
        .collect();
    let why = invalid(plan.stonewall, &|n| report.metric(n));
    let doc = json!({
        "host": report.host,
        "ranks": r.size,
        "plan": {
            "stonewall_s": plan.stonewall.as_secs_f64(),
            "ior_easy_block": plan.ior_easy.block,
            "ior_hard_segments": plan.ior_hard.segments,
            "mdtest_easy_items": plan.mdtest_easy.items,
            "mdtest_hard_items": plan.mdtest_hard.items,
        },
        "phases": phases,
        "bw_gib_per_s": report.metric("io500.bw_gib_per_s"),
        "md_kiops": report.metric("io500.md_kiops"),
        "score": report.metric("io500.score"),
        "valid": why.is_empty(),
        "invalid": why,
        "findings": report.findings,
        "system": report.system,
    });
    iolab_kind::output::json::write(SCHEMA, &doc, out)
}
