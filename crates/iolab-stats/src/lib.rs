//! Pure statistics for iolab: no I/O, no printing.
//!
//! What is computed, and why, is described for users in docs/statistics.md:
//!
//! * [`Welford`] keeps running sums so the confidence interval can be updated after every run
//!   (Welford 1962; merging per Chan, Golub & LeVeque 1979).
//! * [`Summary`] gives n, mean, standard deviation, CV, median, min, max and the confidence
//!   interval of the mean with the exact Student-t quantile, never 1.96 ([`StudentT`]).
//! * [`StoppingRule`] decides after each repetition whether the interval is narrow enough.
//! * [`compare`](compare::compare) sets two configurations side by side: ratio of means with a
//!   Fieller interval, Welch's t-test, Mann–Whitney U, Holm's adjustment, and a [`Verdict`].
//! * [`outliers`] flags (never drops) runs outside Tukey's fences or 3 scaled MADs.
//! * [`steady`] applies the SNIA SSS PTS steady-state rule to an interval series.
//! * [`bootstrap`] gives percentile bootstrap intervals from a seeded generator ([`Rng`]).
//!
//! Inputs that statistics cannot use are rejected by construction: a [`Sample`] holds at least
//! two finite values, a [`Level`] lies strictly between 0 and 1, and errors are typed
//! ([`StatsError`]).
//!
//! ```
//! use iolab_stats::{compare, CompareOptions, Decision, Level, Sample, StoppingRule, Summary,
//!                   Verdict, Welford};
//! use std::time::Duration;
//!
//! // Repeat until the 95% interval is within 5% of the mean.
//! let rule = StoppingRule::default();
//! let mut acc = Welford::new();
//! for mib_s in [812.0, 798.0, 805.0] {
//!     acc.push(mib_s)?;
//!     if let Decision::Converged { runs, .. } = rule.decide(&acc, Duration::ZERO, None) {
//!         assert_eq!(runs, 3);
//!     }
//! }
//!
//! let a = Sample::new(vec![812.0, 798.0, 805.0])?;
//! let b = Sample::new(vec![901.0, 915.0, 893.0])?;
//! let s = Summary::new(&a, Level::P95);
//! assert!(s.ci.contains(805.0));
//! let c = compare(&a, &b, CompareOptions::default())?;
//! assert_eq!(c.verdict, Verdict::Faster);
//! # Ok::<(), iolab_stats::StatsError>(())
//! ```

pub mod bootstrap;
pub mod compare;
pub mod dist;
mod error;
pub mod interval;
pub mod outliers;
pub mod quantile;
pub mod sample;
pub mod steady;
pub mod stopping;
pub mod summary;
pub mod welford;

pub use bootstrap::Bootstrap;
pub use compare::{
    compare, compare_family, holm_adjust, mann_whitney_u, ratio_of_means, welch_t_test,
    CompareOptions, Comparison, MannWhitney, PositiveRatio, RatioOfMeans, Verdict, WelchTest,
};
pub use dist::{normal_cdf, normal_quantile, StudentT};
pub use error::StatsError;
pub use interval::{Interval, Level};
pub use iolab_util::xoshiro::Rng;
pub use outliers::{detect_outliers, OutlierReport};
pub use sample::Sample;
pub use steady::{SteadyStateRule, WindowCheck};
pub use stopping::{Decision, StopReason, StoppingRule};
pub use summary::{t_interval, Summary};
pub use welford::Welford;

/// Result alias used throughout the crate.
pub type Result<T, E = StatsError> = std::result::Result<T, E>;
