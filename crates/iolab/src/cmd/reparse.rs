//! `iolab reparse [ID]`: the raw output every run of another tool kept, read again by this
//! build's parsers; says what changed and, with `--apply`, stores the changed values.

use std::io::Write;

use iolab_exec::reparse::{reparse, ReparseError, Verdict};

use crate::cli::ReparseArgs;
use crate::error::CliError;

pub fn run(args: ReparseArgs) -> Result<(), CliError> {
    let mut store = super::db::open_existing(&args.db.db)?;
    let id = super::db::resolve(&store, args.id.as_deref())?;
    let runs = reparse(&mut store, id, args.apply).map_err(|e| match e {
        ReparseError::Store(e) => super::db::store_error(e),
        e @ ReparseError::NotExec { .. } => CliError::usage(e.to_string())
            .with_hint("reparse reads experiments whose workload is exec = { tool = … }"),
        e => CliError::failed(e.to_string()),
    })?;
    if args.json {
        let v: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| {
                let (verdict, detail) = match &r.verdict {
                    Verdict::Same => ("same", serde_json::Value::Null),
                    Verdict::Changed(c) => (
                        "changed",
                        c.iter()
                            .map(|(n, a, b)| serde_json::json!({"metric": n, "stored": finite(*a), "now": finite(*b)}))
                            .collect(),
                    ),
                    Verdict::NowInvalid(why) => ("now-invalid", why.clone().into()),
                    Verdict::NowValid => ("now-valid", serde_json::Value::Null),
                    Verdict::StillInvalid(why) => ("still-invalid", why.clone().into()),
                };
                serde_json::json!({
                    "run": r.run.0, "config": r.config, "repetition": r.repetition,
                    "tool": r.tool, "stored_parser": r.stored_parser, "parser": r.parser,
                    "verdict": verdict, "detail": detail,
                })
            })
            .collect();
        let doc = serde_json::json!({"applied": args.apply, "runs": v});
        return crate::output::emit(|out| {
            crate::output::json::write(crate::output::json::Kind::Reparse, &doc, out)
        });
    }
    crate::output::emit(|out| human(&runs, args.apply, out))
}

fn human(
    runs: &[iolab_exec::reparse::RunReparse],
    apply: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let (mut same, mut changed, mut flipped) = (0, 0, 0);
    for r in runs {
        let head = format!(
            "run {} ({} #{}, {} parser {}{})",
            r.run.0,
            r.config,
            r.repetition + 1,
            r.tool,
            r.parser,
            if r.stored_parser == r.parser {
                String::new()
            } else {
                format!(", stored with {}", r.stored_parser)
            }
        );
        match &r.verdict {
            Verdict::Same => same += 1,
            Verdict::Changed(c) => {
                changed += 1;
                writeln!(out, "{head}: {} value(s) changed", c.len())?;
                for (n, a, b) in c {
                    writeln!(out, "  {n}: {} -> {}", show(*a), show(*b))?;
                }
            }
            Verdict::NowInvalid(why) => {
                flipped += 1;
                writeln!(out, "{head}: stored as valid, now rejected: {why}")?;
            }
            Verdict::NowValid => {
                flipped += 1;
                writeln!(
                    out,
                    "{head}: stored as failed, now reads as valid (run it again to store it)"
                )?;
            }
            Verdict::StillInvalid(_) => {}
        }
    }
    writeln!(
        out,
        "{} run(s) read again: {same} unchanged, {changed} with changed values{}, {flipped} whose validity changed",
        runs.len(),
        if apply && changed > 0 { " (stored)" } else { "" }
    )?;
    if changed > 0 && !apply {
        writeln!(
            out,
            "(nothing was stored: add --apply to store the changed values)"
        )?;
    }
    Ok(())
}

fn show(v: f64) -> String {
    if v.is_nan() {
        "not measured".into()
    } else {
        format!("{v}")
    }
}

fn finite(v: f64) -> serde_json::Value {
    if v.is_finite() {
        v.into()
    } else {
        serde_json::Value::Null
    }
}
