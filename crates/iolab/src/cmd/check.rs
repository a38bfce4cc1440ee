//! `iolab check EXPERIMENT.toml`: validate the file and judge, per configuration, what can be
//! judged before running (the dataset against the page cache, a loop device without direct
//! I/O, runs shorter than the writeback interval). Nothing is run or changed.

use crate::cli::CheckArgs;
use crate::error::CliError;
use crate::output;
use crate::output::check::{self, CheckReport, ConfigCheck};

pub fn run(args: CheckArgs) -> Result<(), CliError> {
    let plan = iolab_experiment::load(&args.file)
        .map_err(|errs| CliError::usage(errs.to_string().trim_end()))?;
    let mut configs = Vec::with_capacity(plan.configs.len());
    let stages = 1 + plan.then.len();
    for k in 0..stages {
        let stage_plan;
        let p = if k == 0 {
            &plan
        } else {
            stage_plan = iolab_experiment::stage(&plan, k, None)
                .map_err(|errs| CliError::usage(errs.to_string().trim_end()))?;
            &stage_plan
        };
        for c in &p.configs {
            let facts = p.pre_run_facts(c);
            configs.push(ConfigCheck {
                label: if stages > 1 {
                    format!("stage {} {}", k + 1, c.label)
                } else {
                    c.label.clone()
                },
                findings: iolab_check::pre_run_checks(&facts)
                    .into_iter()
                    .map(iolab_experiment::run::monitor::to_store)
                    .collect(),
            });
        }
    }
    let report = CheckReport {
        file: args.file.display().to_string(),
        configs,
    };
    output::print_json_or(args.json, &check::Human, &report)
}
