//! `iolab mdtest`'s formats: mdtest's summary table (Max, Min, Mean and Std Dev of each
//! phase's rate over the iterations) with iolab's aggregates, and JSON.

use std::io::{self, Write};

use iolab_kind::cli::{Format, Single};
use iolab_store::Metric;
use serde_json::json;

use crate::run::{MdtestResult, Phase};

/// The stamp of `iolab mdtest --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.mdtest/1";

/// `iolab mdtest`'s formats, the default first.
pub const FORMATS: &[Format] = &[
    Format {
        name: "human",
        help: "mdtest's summary table (rates over the iterations) and the aggregates of the ranks",
    },
    iolab_kind::cli::JSON,
];

/// One iteration as the formats see it: its result on this rank and every metric stored
/// (under MPI the aggregates are all ranks').
pub struct Iteration {
    pub result: MdtestResult,
    pub metrics: Vec<Metric>,
}

impl From<Single<MdtestResult>> for Iteration {
    fn from(s: Single<MdtestResult>) -> Iteration {
        Iteration {
            result: s.output,
            metrics: s.end.metrics,
        }
    }
}

impl Iteration {
    /// The value of `PHASE.suffix`, when stored.
    pub fn get(&self, phase: Phase, suffix: &str) -> Option<f64> {
        let name = format!("{}.{suffix}", phase.name());
        self.metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.value)
    }
}

/// Max, min, mean and sample standard deviation (mdtest's columns); NaN-free input.
pub fn stats(v: &[f64]) -> (f64, f64, f64, f64) {
    let n = v.len() as f64;
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (max, min, mean, var.sqrt())
}

/// The phases any iteration ran, in order.
fn phases(its: &[Iteration]) -> Vec<Phase> {
    Phase::ALL
        .into_iter()
        .filter(|&p| its.iter().any(|i| i.get(p, "agg_ops_per_s").is_some()))
        .collect()
}

/// Writes `its` in `format` (one of [`FORMATS`]).
pub fn write(format: &str, its: &[Iteration], out: &mut dyn Write) -> io::Result<()> {
    match format {
        "json" => json_doc(its, out),
        _ => human(its, out),
    }
}

fn human(its: &[Iteration], out: &mut dyn Write) -> io::Result<()> {
    let Some(first) = its.first() else {
        return Ok(());
    };
    let r = &first.result;
    writeln!(
        out,
        "mdtest: {} ranks, {} items each, stride {}, in {}",
        r.ranks,
        r.items,
        r.stride,
        r.test_dir.display()
    )?;
    writeln!(out)?;
    writeln!(out, "SUMMARY rate: (of {} iterations)", its.len())?;
    writeln!(
        out,
        "   {:<22}{:>15}{:>15}{:>15}{:>15}",
        "Operation", "Max", "Min", "Mean", "Std Dev"
    )?;
    writeln!(
        out,
        "   {:<22}{:>15}{:>15}{:>15}{:>15}",
        "---------", "---", "---", "----", "-------"
    )?;
    let shown = phases(its);
    for &p in &shown {
        let v: Vec<f64> = its
            .iter()
            .filter_map(|i| i.get(p, "agg_ops_per_s"))
            .filter(|x| x.is_finite())
            .collect();
        if v.is_empty() {
            continue;
        }
        let (max, min, mean, sd) = stats(&v);
        writeln!(
            out,
            "   {:<22}{max:>15.3}{min:>15.3}{mean:>15.3}{sd:>15.3}",
            p.title()
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Aggregates of the ranks (op/s; mean of the iterations; docs/mdtest.md):"
    )?;
    writeln!(
        out,
        "   {:<22}{:>13}{:>13}{:>13}{:>13}{:>13}{:>13}",
        "Operation", "last-done", "window", "first-done", "rank min", "rank mean", "rank max"
    )?;
    for &p in &shown {
        let mean = |k: &str| {
            let v: Vec<f64> = its.iter().filter_map(|i| i.get(p, k)).collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        };
        writeln!(
            out,
            "   {:<22}{:>13.1}{:>13.1}{:>13.1}{:>13.1}{:>13.1}{:>13.1}",
            p.title(),
            mean("agg_ops_per_s"),
            mean("window_ops_per_s"),
            mean("first_done_ops_per_s"),
            mean("rank_min_ops_per_s"),
            mean("rank_mean_ops_per_s"),
            mean("rank_max_ops_per_s"),
        )?;
    }
    Ok(())
}

fn json_doc(its: &[Iteration], out: &mut dyn Write) -> io::Result<()> {
    let iterations: Vec<_> = its
        .iter()
        .map(|i| {
            let metrics: serde_json::Map<String, serde_json::Value> = i
                .metrics
                .iter()
                .filter(|m| {
                    Phase::ALL
                        .iter()
                        .any(|p| m.name.starts_with(&format!("{}.", p.name())))
                })
                .map(|m| (m.name.clone(), json!(m.value)))
                .collect();
            json!({ "result": i.result, "metrics": metrics })
        })
        .collect();
    let summary: Vec<_> = phases(its)
        .into_iter()
        .map(|p| {
            let v: Vec<f64> = its
                .iter()
                .filter_map(|i| i.get(p, "agg_ops_per_s"))
                .filter(|x| x.is_finite())
                .collect();
            let (max, min, mean, sd) = stats(&v);
            json!({
                "phase": p.name(),
                "operation": p.title(),
                "max": max, "min": min, "mean": mean, "std_dev": sd,
            })
        })
        .collect();
    let doc = json!({ "summary": summary, "iterations": iterations });
    iolab_kind::output::json::write(SCHEMA, &doc, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_mdtests_columns() {
        let (max, min, mean, sd) = stats(&[1.0, 3.0]);
        assert_eq!((max, min, mean), (3.0, 1.0, 2.0));
        assert!((sd - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(stats(&[5.0]).3, 0.0);
    }
}
