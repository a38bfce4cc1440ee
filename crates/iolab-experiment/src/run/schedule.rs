//! The order of runs: rounds of configurations (shuffled with a seed per round, or in
//! declaration order), each run's seed, and the stopping rule's decision after each run.

use super::outcome::{config_findings, deterministic_outcome, outcome_of, single_outcome};
use super::*;

/// The seed of one run: a function of the experiment seed, the configuration and the
/// repetition only, so a resumed or repeated experiment gives each run the same seed. The
/// first measured run of the first configuration uses the experiment seed itself, so a
/// one-run experiment and a command's `--seed N` run with the same seed.
pub fn run_seed(experiment_seed: u64, config_index: usize, repetition: u32, warmup: bool) -> u64 {
    if (config_index, repetition, warmup) == (0, 0, false) {
        return experiment_seed;
    }
    mix64(
        experiment_seed
            ^ mix64(((config_index as u64) << 32) | u64::from(repetition))
            ^ if warmup { 0x5741_524d } else { 0 },
    )
}

/// The order of configurations in round `round` (indices into the plan).
pub fn round_order(order: Order, seed: u64, round: u32, configs: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..configs).collect();
    if order == Order::Random {
        let mut rng = Rng::stream(seed, 0x0a7d_0000 + u64::from(round));
        for i in (1..v.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
    v
}

impl Session<'_> {
    pub(super) fn rounds(
        &mut self,
        states: &mut [ConfigState],
        max: u32,
    ) -> Result<(), RunnerError> {
        let n = self.plan.configs.len();
        match self.plan.procedure.order {
            Order::Random => {
                for round in 0..max {
                    for i in round_order(Order::Random, self.plan.seed, round, n) {
                        if self.cancelled() {
                            return Ok(());
                        }
                        self.step(states, i, round)?;
                    }
                    if states.iter().all(|s| s.stopped) {
                        break;
                    }
                }
            }
            Order::Sequential => {
                for i in 0..n {
                    for round in 0..max {
                        if self.cancelled() {
                            return Ok(());
                        }
                        if states[i].stopped {
                            break;
                        }
                        self.step(states, i, round)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Repetition `rep` of configuration `i`, unless it is stopped or already done.
    pub(super) fn step(
        &mut self,
        states: &mut [ConfigState],
        i: usize,
        rep: u32,
    ) -> Result<(), RunnerError> {
        if states[i].stopped || states[i].ok.binary_search(&rep).is_ok() {
            return Ok(());
        }
        if !states[i].warmed_up {
            for w in 0..self.plan.procedure.warmup {
                let info = self.info(states, i, w, true);
                self.obs.run_started(&info);
                let (end, _) = self.one_run(i, w, true, None)?;
                self.obs.run_ended(&info, &end);
                if end.status != RunStatus::Ok {
                    return self.stop_failed(states, i, &end);
                }
            }
            states[i].warmed_up = true;
        }
        let info = self.info(states, i, rep, false);
        self.obs.run_started(&info);
        let t0 = Instant::now();
        let (mut end, _) = self.one_run(i, rep, false, Some(states[i].id))?;
        states[i].spent += t0.elapsed();
        match end.status {
            RunStatus::Ok => {
                self.ok += 1;
                let s = &mut states[i];
                s.ok.push(rep);
                s.ok.sort_unstable();
                if let Some(v) = end.metric.filter(|v| v.is_finite()) {
                    let _ = s.acc.push(v);
                }
                let deterministic = self.deterministic(i);
                let d = self.decide(s, deterministic);
                end.decision = Some(d);
                self.obs.run_ended(&info, &end);
                if d.is_stop() {
                    let single = self.plan.repetitions.is_single();
                    let exact = deterministic && matches!(d, Decision::Converged { .. });
                    let outcome = if exact {
                        deterministic_outcome(&d, &self.plan.repetitions.metric)
                    } else if single {
                        single_outcome()
                    } else {
                        outcome_of(&d, &self.plan.repetitions.metric, &s.acc)
                    };
                    self.store.set_config_outcome(s.id, &outcome)?;
                    // One run asked for is not a run that failed to converge, and the runs
                    // of a deterministic configuration that agree are exact, not too few.
                    let verdict = if single || exact {
                        Vec::new()
                    } else {
                        config_findings(&d, &self.plan.repetitions)
                    };
                    if !verdict.is_empty() {
                        self.store.add_config_findings(s.id, &verdict)?;
                    }
                    s.stopped = true;
                    self.obs.config_finished(&info.config, &outcome);
                    s.outcome = Some(outcome);
                }
                Ok(())
            }
            RunStatus::Interrupted => {
                self.interrupted += 1;
                self.obs.run_ended(&info, &end);
                Ok(())
            }
            RunStatus::Failed => {
                self.failed += 1;
                self.obs.run_ended(&info, &end);
                self.stop_failed(states, i, &end)
            }
        }
    }

    pub(super) fn deterministic(&self, i: usize) -> bool {
        self.plan.deterministic(i)
    }

    pub(super) fn decide(&self, s: &ConfigState, deterministic: bool) -> Decision {
        let rule = self.plan.repetitions.rule;
        if deterministic {
            return rule.decide_deterministic(&s.acc, s.spent, self.plan.repetitions.time_budget);
        }
        // Count runs, not finite values, toward `max`: a metric that is NaN in every run
        // (no latency samples, say) must still stop.
        if s.acc.count() < s.ok.len() as u64 && s.ok.len() as u64 >= rule.max {
            return Decision::NotConverged {
                reason: StopReason::MaxRuns,
                runs: s.ok.len() as u64,
                rel_half_width: s.acc.relative_half_width(rule.level),
            };
        }
        rule.decide(&s.acc, s.spent, self.plan.repetitions.time_budget)
    }

    pub(super) fn stop_failed(
        &mut self,
        states: &mut [ConfigState],
        i: usize,
        end: &RunEnd,
    ) -> Result<(), RunnerError> {
        if end.status == RunStatus::Interrupted {
            return Ok(());
        }
        let s = &mut states[i];
        let outcome = ConfigOutcome {
            converged: false,
            note: format!(
                "stopped: a run failed ({})",
                end.error.as_deref().unwrap_or("unknown error")
            ),
        };
        self.store.set_config_outcome(s.id, &outcome)?;
        s.stopped = true;
        self.obs
            .config_finished(&self.plan.configs[i].label, &outcome);
        s.outcome = Some(outcome);
        Ok(())
    }

    pub(super) fn info(&self, states: &[ConfigState], i: usize, rep: u32, warmup: bool) -> RunInfo {
        let max = self.plan.repetitions.rule.max;
        let done: u64 = states.iter().map(|s| s.ok.len() as u64).sum();
        let left: u64 = states
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.stopped)
            .map(|(j, s)| {
                // A deterministic configuration is planned for one run (its first value is
                // exact); only values that differ would make it repeat.
                let planned = if self.deterministic(j) && s.ok.is_empty() {
                    1
                } else {
                    max
                };
                planned.saturating_sub(s.ok.len() as u64)
            })
            .sum();
        let s = &states[i];
        let level = self.plan.repetitions.rule.level;
        let ci = s
            .acc
            .mean()
            .zip(s.acc.relative_half_width(level))
            .map(|(m, r)| (s.acc.count(), m, r));
        RunInfo {
            config: self.plan.configs[i].label.clone(),
            config_index: i,
            configs: self.plan.configs.len(),
            repetition: rep,
            warmup,
            max: u32::try_from(max).unwrap_or(u32::MAX),
            runs_done: done,
            runs_left_max: left,
            ci,
            mean_run_time: (!self.run_times.is_empty())
                .then(|| self.run_times.iter().sum::<Duration>() / self.run_times.len() as u32),
        }
    }
}
