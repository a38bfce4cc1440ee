//! `iolab compare [ID]...`: every configuration against a baseline, per metric (the model and
//! its table are iolab-compare's; this is the edge: arguments, database, exit code).

use iolab_compare::{CompareError, Options};
use iolab_store::StoreError;

use crate::cli::DbArgs;
use crate::error::CliError;
use crate::output::compare::{CompareReport, ConfigContext};
use crate::output::{self, context};

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  iolab compare                          # the newest experiment: each factor's effect within the others\n  iolab compare 3 --baseline 'journal=ordered' --metric lat_p99_ns\n  iolab compare --flat                   # every configuration against the first one\n  iolab compare 4 7                      # pool two experiments (e.g. after `iolab import`)\n  iolab compare --fail-if-slower 5       # exit 1 on a regression of more than 5%\n\nWith factors, each level of each factor is compared with the baseline level within each\ncombination of the other factors, and the answer said in one sentence per factor and\nmetric. A difference is claimed only when Welch's p on the logarithms, Holm-adjusted over\nthe comparisons of a metric, is below 0.05 and the 95% interval of the ratio excludes 1;\n\"no effect within ±x %\" when that interval lies within ±5 % of 1; \"too few runs to tell\"\nwhen it spans 10× or more. When several experiments have a configuration of the same\nlabel, it is shown as #ID:label."
)]
pub struct CompareArgs {
    /// Experiment ids (as `iolab list` shows them) or uuids; several pool their
    /// configurations; default: the newest
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// The baseline: a configuration's label (its levels are each factor's baseline level),
    /// or `factor=level ...`; default: the first configuration, each factor's first level
    #[arg(long, value_name = "LABEL")]
    pub baseline: Option<String>,
    /// Every configuration against the baseline configuration in one table, instead of each
    /// factor within the others (the default when the experiment has factors)
    #[arg(long)]
    pub flat: bool,
    /// A metric to compare (repeatable; the first is the headline); default: the headline
    /// metrics recorded (ops_per_s, mib_per_s, lat_mean_ns, lat_p99_ns)
    #[arg(long = "metric", value_name = "M")]
    pub metrics: Vec<String>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Machine-readable output (the comparison model)
    #[arg(long)]
    pub json: bool,
    /// Exit with code 1 when a configuration is significantly slower than the baseline on
    /// the headline metric by more than PCT percent: the whole 95% interval of the ratio
    /// candidate/baseline lies below 1 − PCT/100 (higher-is-better metrics) or above
    /// 1 + PCT/100 (lower-is-better metrics)
    #[arg(long, value_name = "PCT")]
    pub fail_if_slower: Option<f64>,
}

/// A comparison error as the user gave the input: naming the flag at fault.
fn compare_error(e: CompareError) -> CliError {
    let flag = match &e {
        CompareError::UnknownBaseline { .. } | CompareError::AmbiguousBaseline { .. } => {
            "--baseline: "
        }
        CompareError::UnknownMetric { .. } => "--metric: ",
        CompareError::UnknownDirection { .. } | CompareError::BadThreshold(_) => {
            "--fail-if-slower: "
        }
        _ => "",
    };
    match e {
        CompareError::Store(StoreError::Missing { .. }) => CliError::usage(e),
        CompareError::Store(e) => CliError::failed(e),
        CompareError::UnknownMetric { .. } | CompareError::NoMetrics => {
            CliError::usage(format!("{flag}{e}"))
                .with_hint("`iolab show ID --json` lists the recorded metrics")
        }
        other => CliError::usage(format!("{flag}{other}")),
    }
}

pub fn run(args: CompareArgs) -> Result<(), CliError> {
    if let Some(pct) = args.fail_if_slower {
        if !(pct.is_finite() && pct >= 0.0) {
            return Err(CliError::usage(format!(
                "--fail-if-slower takes a percentage ≥ 0, got {pct}"
            )));
        }
    }
    let store = super::db::open_existing(&args.db.db)?;
    let ids = if args.ids.is_empty() {
        vec![super::db::resolve(&store, None)?]
    } else {
        args.ids
            .iter()
            .map(|s| super::db::resolve(&store, Some(s)))
            .collect::<Result<Vec<_>, _>>()?
    };
    let loaded = iolab_compare::load(&store, &ids).map_err(compare_error)?;
    if loaded.configs.is_empty() {
        return Err(CliError::usage(CompareError::NoConfigs));
    }
    if loaded.configs.len() == 1 && !args.json {
        say!(
            "iolab: note: only one configuration, so nothing to compare it with; give several \
             experiments (`iolab compare ID1 ID2`) to set configurations of different ones side by side"
        );
    }
    let names = if args.metrics.is_empty() {
        iolab_compare::default_metrics(&loaded.configs, &loaded.metrics)
    } else {
        args.metrics.clone()
    };
    // Directions from the metrics' stored definitions (unknown for monitor metrics).
    let mut options = Options::new(
        names
            .iter()
            .map(|m| iolab_compare::metric_spec(m, &loaded.metrics))
            .collect(),
    );
    options.baseline = args.baseline.clone();
    let comparison = iolab_compare::compare(&loaded.configs, &options).map_err(compare_error)?;
    let answers = iolab_compare::answers(&loaded.configs, &loaded.factors, &options)
        .map_err(compare_error)?;
    let answers = (!answers.factors.is_empty()).then_some(answers);
    let regressions = match args.fail_if_slower {
        Some(pct) => Some((pct, comparison.slower_than(pct).map_err(compare_error)?)),
        None => None,
    };
    // Each experiment's findings, read once.
    let mut findings = std::collections::BTreeMap::new();
    for &id in &ids {
        findings.insert(id, store.findings(id).map_err(super::db::store_error)?);
    }
    let configs = loaded
        .configs
        .iter()
        .map(|c| ConfigContext {
            label: c.label.clone(),
            experiment: c.experiment,
            system: context::system_means(&c.metrics),
            findings: context::count_checks(
                findings[&c.experiment]
                    .iter()
                    .filter(|f| f.config == c.config),
            ),
        })
        .collect();
    let report = CompareReport {
        experiments: loaded.experiments,
        comparison,
        answers,
        configs,
    };
    output::print_json_or(
        args.json,
        &output::compare::Human { flat: args.flat },
        &report,
    )?;
    match regressions {
        Some((pct, r)) if !r.is_empty() => {
            let list: Vec<String> = r
                .iter()
                .map(|r| {
                    format!(
                        "{} (ratio {} [{}, {}], limit {})",
                        r.label,
                        iolab_compare::fmt_num(r.ratio),
                        iolab_compare::fmt_num(r.ratio_ci[0]),
                        iolab_compare::fmt_num(r.ratio_ci[1]),
                        iolab_compare::fmt_num(r.limit)
                    )
                })
                .collect();
            Err(CliError::failed(format!(
                "slower than baseline {:?} by more than {pct}% on {}: {}",
                report.comparison.baseline,
                r[0].metric,
                list.join("; ")
            )))
        }
        _ => Ok(()),
    }
}

/// The comparison of an experiment's configurations against the first one on its stopping
/// metric, for the end of `iolab run EXPERIMENT.toml` (nothing with fewer than two
/// configurations).
pub fn write_summary(
    store: &iolab_store::Store,
    id: iolab_store::ExperimentId,
    metric: &str,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let Ok(loaded) = iolab_compare::load(store, &[id]) else {
        return Ok(());
    };
    if loaded.configs.len() < 2 {
        return Ok(());
    }
    let options = Options::new(vec![iolab_compare::metric_spec(metric, &loaded.metrics)]);
    match iolab_compare::compare(&loaded.configs, &options) {
        Ok(c) => {
            writeln!(out)?;
            iolab_compare::render_text(&c, out)
        }
        Err(_) => Ok(()),
    }
}
