use thiserror::Error;

/// Why a statistic could not be computed. Each message says what was wrong and what is needed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum StatsError {
    /// Fewer values than the statistic needs (a variance needs two).
    #[error("need at least {needed} values, got {got}: repeat the measurement")]
    TooFewValues {
        /// Minimum number of values.
        needed: usize,
        /// Number of values given.
        got: usize,
    },
    /// A NaN or infinite value: it would silently poison every sum.
    #[error("value #{index} is {value}: statistics need finite numbers")]
    NonFinite {
        /// Position of the value in its input.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A finite value too large to compute with: powers of it overflow to infinity (1e308
    /// in another host's database).
    #[error(
        "value #{index} is {value:e}: too large for statistics (at most ±{:e}, beyond which \
         a variance squared overflows)",
        crate::Sample::MAX_MAGNITUDE
    )]
    TooLarge {
        /// Position of the value in its input.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A value ≤ 0 where the log scale is used.
    #[error("value #{index} is {value}: the log scale needs positive values")]
    NonPositive {
        /// Position of the value in its input.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A confidence level outside (0, 1).
    #[error("confidence level must lie strictly between 0 and 1 (e.g. 0.95), got {0}")]
    InvalidLevel(f64),
    /// A probability outside [0, 1] (or NaN).
    #[error("probability must lie in [0, 1], got {0}")]
    InvalidProbability(f64),
    /// Degrees of freedom that are not positive.
    #[error("degrees of freedom must be positive, got {0}")]
    InvalidDegreesOfFreedom(f64),
    /// The baseline (denominator) mean is zero, so a ratio to it means nothing.
    #[error("the baseline mean is zero: a ratio of means to it is undefined")]
    ZeroBaselineMean,
    /// A parameter of a rule is out of its domain.
    #[error("invalid {name}: {reason}")]
    InvalidParameter {
        /// Parameter name as the API spells it.
        name: &'static str,
        /// What is wrong and what is allowed.
        reason: String,
    },
}
