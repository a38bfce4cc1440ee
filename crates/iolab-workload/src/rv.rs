//! Random variables of WML: filebench's `randvar(...)` and `cvar(...)`, sampled from the run's
//! seeded generator.
//!
//! A random variable is evaluated each time its attribute is read (a fileset's size once per
//! file, an iosize once per op), so [`Rv::sample`] runs in the engine's hot loop: it allocates
//! nothing, takes no locks and loops only in rejection samplers whose expected number of rounds
//! is below 1.1 (gamma) or 1.3 (normal).
//!
//! Semantics follow filebench 1.5-alpha3 (`fb_random.c`, `fb_cvar.c`, `cvars/cvar-*.c`,
//! `cvars/mtwist/randistrs.c`), except where noted below and in [`Cvar`]:
//!
//! * `randvar` values are rounded to the *nearest* multiple of `round` (C `round()`, halves away
//!   from zero); without `round` the value is truncated to an integer.
//! * `cvar` values are truncated to an integer, then rounded to the nearest multiple of `round`
//!   with halves going *down*; then clamped to `[min, max]`.
//! * Every result is finally truncated towards zero to a `u64`; negative values become 0
//!   (filebench reaches the same through its default cvar `min` of `DBL_MIN`).
//! * filebench cannot seed its cvars (its issue #92); iolab draws everything from the run's
//!   [`Rng`], so `--seed` reproduces every value.

use serde::Serialize;

use iolab_util::math::ln_gamma;
use iolab_util::rng::Rng;

/// A number-valued attribute that may be random.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Rv {
    Const(u64),
    /// `randvar(type=uniform, min=, mean=, round=)`: uniform on `[min, 2·mean − min)`.
    Uniform {
        min: f64,
        mean: f64,
        round: u64,
    },
    /// `randvar(type=gamma, min=, mean=, gamma=, round=)`: `min` plus a gamma variate of shape
    /// `k = gamma / 1000` and scale `(mean − min) / k`, so the mean is `mean`.
    ///
    /// `gamma` is the WML attribute *as written*, i.e. the shape ×1000 (filebench's default is
    /// 1500, shape 1.5). filebench's default `mean`, when the attribute is absent, is
    /// `gamma / 1000` (with `min` 0 that is a gamma of scale 1).
    Gamma {
        min: f64,
        mean: f64,
        gamma: f64,
        round: u64,
    },
    /// `randvar(type=tabular, randtable={{percent, low, high}, …}, round=)`: a row picked with
    /// probability `percent / 100`, then a value uniform on `[low, high)`.
    ///
    /// filebench (`randdist_init`, `rand_table_get`) also rescales a table value `x` to
    /// `(x − tmin) · (mean − min) / (tmean − tmin) + min`, where `tmin` is the smallest `low`
    /// (0% rows included), `tmean` the table's mean, `mean` defaults to `tmean` and `min` to 0.
    /// That is the identity when `min = tmin` and `mean` is unset, as in every workload
    /// filebench ships; this variant has no `min` or `mean` and always means the identity.
    Tabular {
        rows: Vec<TableRow>,
        round: u64,
    },
    /// Another variable's values multiplied by `factor` (rounded to the nearest integer):
    /// the command line's `--size-scale`, to run a workload whose sizes are written into it on
    /// a smaller filesystem.
    Scaled {
        inner: Box<Rv>,
        factor: f64,
    },
    /// `cvar(type=cvar-X, parameters=…, min=, max=, round=)`.
    Cvar {
        dist: Cvar,
        min: Option<f64>,
        max: Option<f64>,
        round: u64,
    },
}

/// One `{percent, low, high}` row of a tabular randvar.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableRow {
    pub percent: f64,
    pub low: f64,
    pub high: f64,
}

/// The distribution of a `cvar`, parameterised exactly as filebench's cvar libraries are.
///
/// Two parameterisations differ from the textbook names, and iolab keeps filebench's so that
/// existing workloads produce the same numbers:
///
/// * `Erlang { shape, rate }`: filebench passes `rate` as the *mean of the whole distribution*
///   (`rds_erlang(state, shape, rate)` returns `−rate · ln(U₁⋯U_shape) / shape`), so the mean
///   is `rate`, not `shape / rate`.
/// * `Lognormal { shape, scale }`: `exp(N(μ = scale, σ = shape))`: `scale` is the mean μ of the
///   underlying normal (not `e^μ`), `shape` its standard deviation σ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Cvar {
    /// Sum of `shape` exponentials of mean `rate / shape` each; mean `rate` (see above).
    Erlang { shape: u32, rate: f64 },
    /// Exponential with the given mean.
    Exponential { mean: f64 },
    /// Gamma with shape `shape` (filebench's `gamma` parameter, *not* ×1000 here) and scale
    /// `mean / shape`.
    Gamma { mean: f64, shape: f64 },
    /// `exp(N(scale, shape²))`; mean `exp(scale + shape²/2)`.
    Lognormal { shape: f64, scale: f64 },
    /// Normal with mean `mean` and standard deviation `sigma`.
    Normal { mean: f64, sigma: f64 },
    /// Triangular on `[lower, upper]` peaking at `mode`.
    Triangular { lower: f64, upper: f64, mode: f64 },
    /// Uniform on `[lower, upper)`.
    Uniform { lower: f64, upper: f64 },
    /// Weibull: `scale · (−ln U)^(1/shape)`; mean `scale · Γ(1 + 1/shape)`.
    Weibull { shape: f64, scale: f64 },
}

/// Each cvar kind (the part after `cvar-`), its parameters in filebench's spelling, and the
/// default filebench uses when a parameter is missing (`cvars/cvar-*.h`, `cvars/cvar-gamma.c`).
pub const CVAR_KINDS: &[(&str, &[(&str, f64)])] = &[
    ("erlang", &[("shape", 1.0), ("rate", 1.0)]),
    ("exponential", &[("mean", 1.0)]),
    ("gamma", &[("mean", 4096.0), ("gamma", 1.5)]),
    ("lognormal", &[("shape", 1.0), ("scale", 1.0)]),
    ("normal", &[("mean", 0.0), ("sigma", 1.0)]),
    (
        "triangular",
        &[("lower", 0.0), ("upper", 1.0), ("mode", 0.5)],
    ),
    ("uniform", &[("lower", 0.0), ("upper", 1.0)]),
    ("weibull", &[("shape", 1.0), ("scale", 1.0)]),
];

/// Why a random variable, or a cvar's parameter string, is not usable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RvError {
    #[error("unknown cvar type `cvar-{kind}`; use one of {}", kind_list())]
    UnknownCvar { kind: String },
    #[error(
        "`cvar-{kind}` has no parameter `{key}`; it takes {}",
        param_list(kind)
    )]
    UnknownParameter { kind: &'static str, key: String },
    #[error("parameter `{key}` of `cvar-{kind}` has no value; write it as `{key}:<number>`")]
    MissingValue { kind: &'static str, key: String },
    #[error(
        "parameter `{key}` of `cvar-{kind}` needs a finite number, found `{value}`; \
         write it as `{key}:<number>` (no unit suffixes)"
    )]
    NotANumber {
        kind: &'static str,
        key: String,
        value: String,
    },
    #[error("parameter `{key}` of `cvar-{kind}` is given twice; keep one")]
    DuplicateParameter { kind: &'static str, key: String },
    #[error("empty parameter name in `{params}`; write parameters as `key:value;key:value`")]
    EmptyKey { params: String },
    #[error("`{param}` of {what} is {value}, not a finite number; give a number")]
    NotFinite {
        what: &'static str,
        param: &'static str,
        value: f64,
    },
    #[error(
        "{what}: mean {mean} is below min {min}; set mean ≥ min (values start at min and \
         average mean)"
    )]
    MeanBelowMin {
        what: &'static str,
        mean: f64,
        min: f64,
    },
    #[error(
        "gamma randvar: gamma is {gamma}, but must be > 0; it is the shape ×1000 \
         (1500, the default, means shape 1.5)"
    )]
    NonPositiveGamma { gamma: f64 },
    #[error(
        "tabular randvar has no rows; add {{percent, low, high}} rows whose percents sum to 100"
    )]
    EmptyTable,
    #[error("randtable row {row}: percent {percent} is outside 0..=100; use a percentage")]
    PercentOutOfRange { row: usize, percent: f64 },
    #[error("randtable percentages sum to {sum}, not 100; adjust the rows so they add up to 100")]
    PercentSum { sum: f64 },
    #[error("randtable row {row}: low {low} is above high {high}; swap them")]
    LowAboveHigh { row: usize, low: f64, high: f64 },
    #[error("cvar: min {min} is above max {max}; swap them or drop one")]
    MinAboveMax { min: f64, max: f64 },
    #[error("`cvar-{kind}`: {param} is {value}, but {rule}")]
    OutOfRange {
        kind: &'static str,
        param: &'static str,
        value: f64,
        rule: &'static str,
    },
}

fn kind_list() -> String {
    let names: Vec<String> = CVAR_KINDS
        .iter()
        .map(|(k, _)| format!("cvar-{k}"))
        .collect();
    names.join(", ")
}

fn param_list(kind: &str) -> String {
    let params = CVAR_KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[][..], |(_, p)| *p);
    let names: Vec<String> = params
        .iter()
        .map(|(p, d)| format!("`{p}` (default {d})"))
        .collect();
    names.join(", ")
}

impl Rv {
    pub fn constant(v: u64) -> Rv {
        Rv::Const(v)
    }

    pub fn as_const(&self) -> Option<u64> {
        match self {
            Rv::Const(v) => Some(*v),
            _ => None,
        }
    }

    /// This variable with every value multiplied by `factor` (constants stay constants).
    pub fn scaled(self, factor: f64) -> Rv {
        match self {
            Rv::Const(v) => Rv::Const((v as f64 * factor).round() as u64),
            other => Rv::Scaled {
                inner: Box::new(other),
                factor,
            },
        }
    }

    /// Draws one value: the distribution's sample, rounded as filebench rounds it, clamped to
    /// `[min, max]` for a cvar, and truncated to a non-negative integer (negatives give 0).
    ///
    /// Call [`Rv::validate`] first: invalid parameters do not panic or hang here, but give
    /// meaningless values.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            Rv::Const(v) => *v,
            // `as` truncates towards zero and saturates: negatives and NaN give 0, as documented.
            other => other.sample_f64(rng) as u64,
        }
    }

    /// Draws one value as [`Rv::sample`] does, but before truncation to an integer: what
    /// filebench's `avd_get_dbl` gives, for a fileset's random `dirwidth`.
    #[inline]
    pub fn sample_f64(&self, rng: &mut Rng) -> f64 {
        match self {
            Rv::Const(v) => *v as f64,
            Rv::Scaled { inner, factor } => (inner.sample(rng) as f64 * factor).round(),
            Rv::Uniform { min, mean, round } => {
                round_nearest(min + rng.next_f64() * 2.0 * (mean - min), *round)
            }
            Rv::Gamma {
                min,
                mean,
                gamma,
                round,
            } => {
                let k = gamma / 1000.0;
                let scale = (mean - min) / k;
                round_nearest(min + scale * gamma_unit(rng, k), *round)
            }
            Rv::Tabular { rows, round } => round_nearest(sample_table(rows, rng), *round),
            Rv::Cvar {
                dist,
                min,
                max,
                round,
            } => {
                let mut v = round_cvar(dist.sample(rng), *round);
                // filebench clamps with `if < min … else if > max`; the same for a valid pair.
                if let Some(lo) = *min {
                    if v < lo {
                        v = lo;
                    }
                }
                if let Some(hi) = *max {
                    if v > hi {
                        v = hi;
                    }
                }
                v
            }
        }
    }

    /// The expected value before rounding, clamping and truncation to an integer (for sizing
    /// datasets, e.g. a fileset's total bytes).
    pub fn mean(&self) -> f64 {
        match self {
            Rv::Const(v) => *v as f64,
            Rv::Scaled { inner, factor } => inner.mean() * factor,
            Rv::Uniform { mean, .. } | Rv::Gamma { mean, .. } => *mean,
            Rv::Tabular { rows, .. } => {
                let total: f64 = rows.iter().map(|r| r.percent).sum();
                if total <= 0.0 {
                    return 0.0;
                }
                rows.iter()
                    .map(|r| r.percent * (r.low + r.high) / 2.0)
                    .sum::<f64>()
                    / total
            }
            Rv::Cvar { dist, .. } => dist.mean(),
        }
    }

    /// Checks the parameters; the error says what to change.
    pub fn validate(&self) -> Result<(), RvError> {
        match self {
            Rv::Const(_) => Ok(()),
            Rv::Scaled { inner, factor } => {
                finite("size scale", "factor", *factor)?;
                inner.validate()
            }
            Rv::Uniform { min, mean, .. } => {
                let what = "uniform randvar";
                finite(what, "min", *min)?;
                finite(what, "mean", *mean)?;
                if mean < min {
                    return Err(RvError::MeanBelowMin {
                        what,
                        mean: *mean,
                        min: *min,
                    });
                }
                Ok(())
            }
            Rv::Gamma {
                min, mean, gamma, ..
            } => {
                let what = "gamma randvar";
                finite(what, "min", *min)?;
                finite(what, "mean", *mean)?;
                finite(what, "gamma", *gamma)?;
                if *gamma <= 0.0 {
                    return Err(RvError::NonPositiveGamma { gamma: *gamma });
                }
                if mean < min {
                    return Err(RvError::MeanBelowMin {
                        what,
                        mean: *mean,
                        min: *min,
                    });
                }
                Ok(())
            }
            Rv::Tabular { rows, .. } => {
                if rows.is_empty() {
                    return Err(RvError::EmptyTable);
                }
                let what = "tabular randvar";
                for (i, r) in rows.iter().enumerate() {
                    let row = i + 1;
                    finite(what, "percent", r.percent)?;
                    finite(what, "low", r.low)?;
                    finite(what, "high", r.high)?;
                    if !(0.0..=100.0).contains(&r.percent) {
                        return Err(RvError::PercentOutOfRange {
                            row,
                            percent: r.percent,
                        });
                    }
                    if r.low > r.high {
                        return Err(RvError::LowAboveHigh {
                            row,
                            low: r.low,
                            high: r.high,
                        });
                    }
                }
                let sum: f64 = rows.iter().map(|r| r.percent).sum();
                if (sum - 100.0).abs() > 0.01 {
                    return Err(RvError::PercentSum { sum });
                }
                Ok(())
            }
            Rv::Cvar { dist, min, max, .. } => {
                if let Some(lo) = *min {
                    finite("cvar", "min", lo)?;
                }
                if let Some(hi) = *max {
                    finite("cvar", "max", hi)?;
                }
                if let (Some(lo), Some(hi)) = (*min, *max) {
                    if lo > hi {
                        return Err(RvError::MinAboveMax { min: lo, max: hi });
                    }
                }
                dist.validate()
            }
        }
    }
}

impl Cvar {
    /// Parses filebench's parameter string for `cvar-<kind>`: `key:value` pairs separated by
    /// `;` (e.g. `mean:16384;gamma:1.5`), missing parameters taking filebench's defaults (see
    /// [`CVAR_KINDS`]), and validates the result.
    ///
    /// `kind` may be given with or without its `cvar-` prefix. Empty items (`a:1;;b:2`, a
    /// trailing `;`) are skipped, and whitespace around keys and values is ignored. Stricter
    /// than filebench, which reads values with `atof` (`16k` silently becomes 16): a value must
    /// be a plain finite number, and Erlang's `shape` a whole number.
    pub fn from_params(kind: &str, params: &str) -> Result<Cvar, RvError> {
        let kind = kind.strip_prefix("cvar-").unwrap_or(kind);
        let &(kind, spec) =
            CVAR_KINDS
                .iter()
                .find(|(k, _)| *k == kind)
                .ok_or_else(|| RvError::UnknownCvar {
                    kind: kind.to_owned(),
                })?;
        let mut given: [Option<f64>; 3] = [None; 3];
        for item in params.split(';') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (key, value) = match item.split_once(':') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (item, None),
            };
            if key.is_empty() {
                return Err(RvError::EmptyKey {
                    params: params.to_owned(),
                });
            }
            let Some(idx) = spec.iter().position(|(p, _)| *p == key) else {
                return Err(RvError::UnknownParameter {
                    kind,
                    key: key.to_owned(),
                });
            };
            let value = match value {
                Some(v) if !v.is_empty() => v,
                _ => {
                    return Err(RvError::MissingValue {
                        kind,
                        key: key.to_owned(),
                    })
                }
            };
            let x = match value.parse::<f64>() {
                Ok(x) if x.is_finite() => x,
                _ => {
                    return Err(RvError::NotANumber {
                        kind,
                        key: key.to_owned(),
                        value: value.to_owned(),
                    })
                }
            };
            if given[idx].replace(x).is_some() {
                return Err(RvError::DuplicateParameter {
                    kind,
                    key: key.to_owned(),
                });
            }
        }
        let p = |i: usize| given[i].unwrap_or(spec[i].1);
        let cvar = match kind {
            "erlang" => {
                let shape = p(0);
                if shape.fract() != 0.0 || !(1.0..=f64::from(u32::MAX)).contains(&shape) {
                    return Err(RvError::OutOfRange {
                        kind,
                        param: "shape",
                        value: shape,
                        rule: "it must be a whole number ≥ 1 (the number of exponential stages)",
                    });
                }
                Cvar::Erlang {
                    shape: shape as u32,
                    rate: p(1),
                }
            }
            "exponential" => Cvar::Exponential { mean: p(0) },
            "gamma" => Cvar::Gamma {
                mean: p(0),
                shape: p(1),
            },
            "lognormal" => Cvar::Lognormal {
                shape: p(0),
                scale: p(1),
            },
            "normal" => Cvar::Normal {
                mean: p(0),
                sigma: p(1),
            },
            "triangular" => Cvar::Triangular {
                lower: p(0),
                upper: p(1),
                mode: p(2),
            },
            "uniform" => Cvar::Uniform {
                lower: p(0),
                upper: p(1),
            },
            "weibull" => Cvar::Weibull {
                shape: p(0),
                scale: p(1),
            },
            _ => unreachable!("every kind of CVAR_KINDS is matched"),
        };
        cvar.validate()?;
        Ok(cvar)
    }

    /// The kind's name as written after `cvar-`.
    pub fn kind(&self) -> &'static str {
        match self {
            Cvar::Erlang { .. } => "erlang",
            Cvar::Exponential { .. } => "exponential",
            Cvar::Gamma { .. } => "gamma",
            Cvar::Lognormal { .. } => "lognormal",
            Cvar::Normal { .. } => "normal",
            Cvar::Triangular { .. } => "triangular",
            Cvar::Uniform { .. } => "uniform",
            Cvar::Weibull { .. } => "weibull",
        }
    }

    /// One raw draw, before rounding and clamping.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match *self {
            Cvar::Erlang { shape, rate } => {
                let k = shape.max(1); // filebench treats shape ≤ 1 as 1
                let stage_mean = rate / f64::from(k);
                if k <= 4 {
                    // The textbook construction, as filebench's: a sum of k exponentials
                    // (as logs, so that a long product of uniforms cannot underflow).
                    let mut s = 0.0;
                    for _ in 0..k {
                        s -= open_unit(rng).ln();
                    }
                    stage_mean * s
                } else {
                    // Same distribution, Gamma(k, rate/k), in O(1) for a large shape.
                    stage_mean * gamma_unit(rng, f64::from(k))
                }
            }
            Cvar::Exponential { mean } => -mean * open_unit(rng).ln(),
            Cvar::Gamma { mean, shape } => mean / shape * gamma_unit(rng, shape),
            Cvar::Lognormal { shape, scale } => (scale + shape * std_normal(rng)).exp(),
            Cvar::Normal { mean, sigma } => mean + sigma * std_normal(rng),
            Cvar::Triangular { lower, upper, mode } => {
                if upper <= lower {
                    return lower; // filebench divides by zero here and returns NaN
                }
                // Inverse of the CDF (as filebench's rds_triangular).
                let m = (mode - lower) / (upper - lower);
                let u = rng.next_f64();
                let t = if u <= m {
                    (m * u).sqrt()
                } else {
                    1.0 - ((1.0 - m) * (1.0 - u)).sqrt()
                };
                lower + (upper - lower) * t
            }
            Cvar::Uniform { lower, upper } => lower + rng.next_f64() * (upper - lower),
            Cvar::Weibull { shape, scale } => scale * (-open_unit(rng).ln()).powf(1.0 / shape),
        }
    }

    /// The distribution's expected value.
    pub fn mean(&self) -> f64 {
        match *self {
            Cvar::Erlang { rate, .. } => rate,
            Cvar::Exponential { mean } | Cvar::Gamma { mean, .. } | Cvar::Normal { mean, .. } => {
                mean
            }
            Cvar::Lognormal { shape, scale } => (scale + shape * shape / 2.0).exp(),
            Cvar::Triangular { lower, upper, mode } => (lower + upper + mode) / 3.0,
            Cvar::Uniform { lower, upper } => (lower + upper) / 2.0,
            Cvar::Weibull { shape, scale } => scale * ln_gamma(1.0 + 1.0 / shape).exp(),
        }
    }

    /// Checks that the parameters are in range; the error says what to change.
    pub fn validate(&self) -> Result<(), RvError> {
        let kind = self.kind();
        let what = match self {
            Cvar::Erlang { .. } => "cvar-erlang",
            Cvar::Exponential { .. } => "cvar-exponential",
            Cvar::Gamma { .. } => "cvar-gamma",
            Cvar::Lognormal { .. } => "cvar-lognormal",
            Cvar::Normal { .. } => "cvar-normal",
            Cvar::Triangular { .. } => "cvar-triangular",
            Cvar::Uniform { .. } => "cvar-uniform",
            Cvar::Weibull { .. } => "cvar-weibull",
        };
        let bad = |param, value, rule| {
            Err(RvError::OutOfRange {
                kind,
                param,
                value,
                rule,
            })
        };
        match *self {
            Cvar::Erlang { shape, rate } => {
                finite(what, "rate", rate)?;
                if shape < 1 {
                    return bad("shape", f64::from(shape), "it must be a whole number ≥ 1");
                }
                if rate <= 0.0 {
                    return bad("rate", rate, "it must be > 0 (in filebench it is the mean)");
                }
            }
            Cvar::Exponential { mean } => {
                finite(what, "mean", mean)?;
                if mean < 0.0 {
                    return bad("mean", mean, "it must be ≥ 0");
                }
            }
            Cvar::Gamma { mean, shape } => {
                finite(what, "mean", mean)?;
                finite(what, "gamma", shape)?;
                if shape <= 0.0 {
                    return bad("gamma", shape, "it must be > 0 (it is the shape, e.g. 1.5)");
                }
                if mean < 0.0 {
                    return bad("mean", mean, "it must be ≥ 0");
                }
            }
            Cvar::Lognormal { shape, scale } => {
                finite(what, "shape", shape)?;
                finite(what, "scale", scale)?;
                if shape < 0.0 {
                    return bad(
                        "shape",
                        shape,
                        "it must be ≥ 0 (it is σ of the underlying normal)",
                    );
                }
            }
            Cvar::Normal { mean, sigma } => {
                finite(what, "mean", mean)?;
                finite(what, "sigma", sigma)?;
                if sigma < 0.0 {
                    return bad("sigma", sigma, "it must be ≥ 0 (a standard deviation)");
                }
            }
            Cvar::Triangular { lower, upper, mode } => {
                finite(what, "lower", lower)?;
                finite(what, "upper", upper)?;
                finite(what, "mode", mode)?;
                if lower > upper {
                    return bad("lower", lower, "it must be ≤ upper; swap lower and upper");
                }
                if !(lower..=upper).contains(&mode) {
                    return bad("mode", mode, "it must lie between lower and upper");
                }
            }
            Cvar::Uniform { lower, upper } => {
                finite(what, "lower", lower)?;
                finite(what, "upper", upper)?;
                if lower > upper {
                    return bad("lower", lower, "it must be ≤ upper; swap lower and upper");
                }
            }
            Cvar::Weibull { shape, scale } => {
                finite(what, "shape", shape)?;
                finite(what, "scale", scale)?;
                if shape <= 0.0 {
                    return bad("shape", shape, "it must be > 0");
                }
                if scale < 0.0 {
                    return bad("scale", scale, "it must be ≥ 0");
                }
            }
        }
        Ok(())
    }
}

fn finite(what: &'static str, param: &'static str, value: f64) -> Result<(), RvError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(RvError::NotFinite { what, param, value })
    }
}

/// randvar rounding (`fb_random.c`): `round(x / r) · r`, nearest multiple, halves away from 0.
#[inline]
fn round_nearest(x: f64, round: u64) -> f64 {
    if round == 0 {
        return x;
    }
    let r = round as f64;
    (x / r).round() * r
}

/// cvar rounding (`fb_cvar.c`, `get_cvar_value`): truncate to an integer, then take the nearest
/// multiple of `round`, a tie going to the lower one.
#[inline]
fn round_cvar(x: f64, round: u64) -> f64 {
    if round == 0 {
        return x;
    }
    let r = round as f64;
    let n = x.trunc();
    let lower = n - n.rem_euclid(r);
    let upper = lower + r;
    if n - lower > upper - n {
        upper
    } else {
        lower
    }
}

/// A tabular draw: a row chosen in proportion to its percent, then uniform on `[low, high)`.
#[inline]
fn sample_table(rows: &[TableRow], rng: &mut Rng) -> f64 {
    let total: f64 = rows.iter().map(|r| r.percent).sum();
    let target = rng.next_f64() * total;
    let mut acc = 0.0;
    let mut pick = None;
    for r in rows {
        if r.percent > 0.0 {
            acc += r.percent;
            pick = Some(r);
            if target < acc {
                break;
            }
        }
    }
    match pick {
        Some(r) => r.low + rng.next_f64() * (r.high - r.low),
        None => 0.0,
    }
}

/// Uniform on (0, 1]: safe to take the logarithm of.
#[inline]
fn open_unit(rng: &mut Rng) -> f64 {
    1.0 - rng.next_f64()
}

/// A standard normal variate by Marsaglia's polar method (Marsaglia & Bray, "A convenient
/// method for generating normal variables", SIAM Review 6(3), 1964; Law & Kelton, as used by
/// filebench's `rds_normal`). The pair's second variate is dropped: keeping it would need state
/// outside the shared, immutable `Rv`.
#[inline]
pub fn std_normal(rng: &mut Rng) -> f64 {
    loop {
        let x = 2.0 * rng.next_f64() - 1.0;
        let y = 2.0 * rng.next_f64() - 1.0;
        let s = x * x + y * y;
        if s < 1.0 && s > 0.0 {
            return x * (-2.0 * s.ln() / s).sqrt();
        }
    }
}

/// A Gamma(k, 1) variate by Marsaglia & Tsang, "A simple method for generating gamma
/// variables", ACM TOMS 26(3), 2000: squeeze-and-reject on `d·(1 + c·x)³` with a standard normal
/// `x`, `d = k − 1/3`, `c = 1/√(9d)`; for `k < 1`, the paper's boost `Gamma(k + 1) · U^(1/k)`.
///
/// filebench uses Knuth's algorithms A (k > 1) and G (k ≤ 1) from TAOCP vol. 2 instead; the
/// distribution is the same. A shape that is not a positive finite number gives 0 rather than
/// an endless loop.
#[inline]
pub fn gamma_unit(rng: &mut Rng, k: f64) -> f64 {
    if k.is_nan() || k <= 0.0 || k.is_infinite() {
        return 0.0;
    }
    if k < 1.0 {
        let u = open_unit(rng);
        return gamma_unit(rng, k + 1.0) * u.powf(1.0 / k);
    }
    let d = k - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = std_normal(rng);
        let t = 1.0 + c * x;
        if t <= 0.0 {
            continue;
        }
        let v = t * t * t;
        let u = rng.next_f64();
        let x2 = x * x;
        if u < 1.0 - 0.0331 * x2 * x2 || u.ln() < 0.5 * x2 + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

#[cfg(test)]
mod scale_tests {
    use super::*;

    #[test]
    fn scaling_multiplies_samples_and_means() {
        assert_eq!(Rv::Const(1000).scaled(0.5), Rv::Const(500));
        let g = Rv::Gamma {
            min: 0.0,
            mean: 1e6,
            gamma: 1500.0,
            round: 0,
        };
        let s = g.clone().scaled(0.001);
        assert!((s.mean() - 1000.0).abs() < 1e-9);
        let (mut a, mut b) = (Rng::new(5), Rng::new(5));
        for _ in 0..1000 {
            let x = g.sample(&mut a) as f64 * 0.001;
            assert!((s.sample(&mut b) as f64 - x).abs() <= 1.0);
        }
        assert!(s.validate().is_ok());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 100_000;

    fn moments(xs: impl Iterator<Item = f64>) -> (f64, f64) {
        let (mut n, mut mean, mut m2) = (0.0, 0.0, 0.0);
        // Welford's online algorithm: stable without storing the samples.
        for x in xs {
            n += 1.0;
            let d = x - mean;
            mean += d / n;
            m2 += d * (x - mean);
        }
        (mean, (m2 / (n - 1.0)).sqrt())
    }

    fn rv_moments(rv: &Rv, seed: u64, n: usize) -> (f64, f64) {
        let mut rng = Rng::new(seed);
        moments((0..n).map(|_| rv.sample(&mut rng) as f64))
    }

    fn cvar_moments(c: &Cvar, seed: u64) -> (f64, f64) {
        let mut rng = Rng::new(seed);
        moments((0..N).map(|_| c.sample(&mut rng)))
    }

    fn assert_close(what: &str, got: f64, want: f64, rel: f64) {
        let err = (got - want).abs() / want.abs();
        assert!(
            err <= rel,
            "{what}: got {got}, want {want} (off by {:.3}%)",
            err * 100.0
        );
    }

    fn cvar(dist: Cvar) -> Rv {
        Rv::Cvar {
            dist,
            min: None,
            max: None,
            round: 0,
        }
    }

    #[test]
    fn constant_is_constant() {
        let mut rng = Rng::new(1);
        let rv = Rv::constant(4096);
        assert!((0..100).all(|_| rv.sample(&mut rng) == 4096));
        assert_eq!(rv.mean(), 4096.0);
        assert_eq!(rv.as_const(), Some(4096));
        assert!(rv.validate().is_ok());
    }

    #[test]
    fn uniform_randvar_mean_sd_and_range() {
        let (min, mean) = (1024.0, 16384.0);
        let rv = Rv::Uniform {
            min,
            mean,
            round: 0,
        };
        rv.validate().unwrap();
        let (m, sd) = rv_moments(&rv, 7, N);
        assert_close("mean", m, rv.mean(), 0.02);
        let width = 2.0 * (mean - min);
        assert_close("sd", sd, width / 12f64.sqrt(), 0.02);
        let mut rng = Rng::new(8);
        let (mut lo, mut hi) = (u64::MAX, 0);
        for _ in 0..N {
            let v = rv.sample(&mut rng);
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let top = (2.0 * mean - min) as u64;
        assert!(lo >= min as u64 && hi <= top, "range {lo}..={hi}");
        // and it actually covers the range
        assert!(lo < min as u64 + 100 && hi > top - 100, "range {lo}..={hi}");
    }

    #[test]
    fn gamma_randvar_mean_within_5_percent_over_10000_files() {
        // The acceptance criterion, for filebench's default shape and a shape < 1.
        for gamma in [1500.0, 500.0] {
            for seed in 1..=5 {
                let rv = Rv::Gamma {
                    min: 0.0,
                    mean: 16384.0,
                    gamma,
                    round: 0,
                };
                let (m, _) = rv_moments(&rv, seed, 10_000);
                assert_close(&format!("gamma {gamma} seed {seed}"), m, 16384.0, 0.05);
            }
        }
    }

    #[test]
    fn gamma_randvar_mean_sd_and_min() {
        for (gamma, seed) in [(1500.0, 11), (500.0, 12), (100.0, 13), (20_000.0, 14)] {
            let (min, mean) = (1024.0, 5632.0);
            let rv = Rv::Gamma {
                min,
                mean,
                gamma,
                round: 0,
            };
            rv.validate().unwrap();
            let mut rng = Rng::new(seed);
            let xs: Vec<u64> = (0..N).map(|_| rv.sample(&mut rng)).collect();
            assert!(
                xs.iter().all(|&x| x >= min as u64),
                "below min with gamma {gamma}"
            );
            let (m, sd) = moments(xs.iter().map(|&x| x as f64));
            assert_close(&format!("mean, gamma {gamma}"), m, rv.mean(), 0.02);
            // Gamma(k, θ): sd = θ·√k with θ = (mean − min) / k.
            let k = gamma / 1000.0;
            assert_close(
                &format!("sd, gamma {gamma}"),
                sd,
                (mean - min) / k.sqrt(),
                0.03,
            );
        }
    }

    #[test]
    fn gamma_randvar_with_mean_equal_to_min_is_constant() {
        let rv = Rv::Gamma {
            min: 512.0,
            mean: 512.0,
            gamma: 1500.0,
            round: 0,
        };
        rv.validate().unwrap();
        let mut rng = Rng::new(3);
        assert!((0..1000).all(|_| rv.sample(&mut rng) == 512));
    }

    fn netsfs_filesize() -> Rv {
        // netsfs.f's $filesize table, in bytes.
        let k = 1024.0;
        let rows = [
            (33.0, 1.0, 1.0),
            (21.0, 1.0, 3.0),
            (13.0, 3.0, 5.0),
            (10.0, 5.0, 11.0),
            (8.0, 11.0, 21.0),
            (5.0, 21.0, 43.0),
            (4.0, 43.0, 85.0),
            (3.0, 85.0, 171.0),
            (2.0, 171.0, 341.0),
            (1.0, 341.0, 1707.0),
        ];
        let rows = rows.iter().map(|&(percent, l, h)| TableRow {
            percent,
            low: l * k,
            high: h * k,
        });
        Rv::Tabular {
            rows: rows.collect(),
            round: 0,
        }
    }

    #[test]
    fn tabular_row_frequencies_within_one_percent() {
        let rv = netsfs_filesize();
        rv.validate().unwrap();
        let Rv::Tabular { rows, .. } = &rv else {
            unreachable!()
        };
        let mut counts = vec![0usize; rows.len()];
        let mut rng = Rng::new(21);
        for _ in 0..N {
            let v = rv.sample(&mut rng) as f64;
            // Rows overlap only at their edges; the first row that holds v is the one drawn
            // except on a boundary value, which has probability ~0.
            let i = rows
                .iter()
                .position(|r| r.low <= v && (v < r.high || r.low == r.high && v == r.low))
                .unwrap_or_else(|| panic!("{v} is in no row"));
            counts[i] += 1;
        }
        for (r, c) in rows.iter().zip(&counts) {
            let pct = *c as f64 * 100.0 / N as f64;
            assert!((pct - r.percent).abs() <= 1.0, "row {r:?}: {pct}%");
        }
    }

    #[test]
    fn tabular_mean_and_zero_percent_rows() {
        let rows = vec![
            TableRow {
                percent: 0.0,
                low: 1.0,
                high: 7.0,
            },
            TableRow {
                percent: 50.0,
                low: 9000.0,
                high: 15000.0,
            },
            TableRow {
                percent: 50.0,
                low: 17000.0,
                high: 23000.0,
            },
        ];
        let rv = Rv::Tabular { rows, round: 0 };
        rv.validate().unwrap();
        assert_close("table mean", rv.mean(), 16000.0, 1e-12);
        let mut rng = Rng::new(5);
        assert!(
            (0..N).all(|_| rv.sample(&mut rng) >= 9000),
            "a 0% row was drawn"
        );
        let (m, _) = rv_moments(&rv, 6, N);
        assert_close("mean", m, rv.mean(), 0.02);
        let (m, _) = rv_moments(&netsfs_filesize(), 9, N);
        assert_close("netsfs mean", m, netsfs_filesize().mean(), 0.02);
    }

    #[test]
    fn tabular_tolerates_float_slack_in_percents() {
        let rows = vec![
            TableRow {
                percent: 33.333,
                low: 1.0,
                high: 1.0,
            },
            TableRow {
                percent: 33.333,
                low: 2.0,
                high: 2.0,
            },
            TableRow {
                percent: 33.333,
                low: 3.0,
                high: 3.0,
            },
        ];
        let rv = Rv::Tabular { rows, round: 0 };
        rv.validate().unwrap();
        let mut rng = Rng::new(4);
        let mut seen = [0; 4];
        for _ in 0..30_000 {
            seen[rv.sample(&mut rng) as usize] += 1;
        }
        assert_eq!(seen[0], 0);
        assert!(
            seen[1..].iter().all(|&c| (9_500..10_500).contains(&c)),
            "{seen:?}"
        );
    }

    #[test]
    fn randvar_rounds_to_nearest_multiple() {
        assert_eq!(round_nearest(1535.0, 1024), 1024.0);
        assert_eq!(round_nearest(1536.0, 1024), 2048.0); // halves away from zero, like C round()
        assert_eq!(round_nearest(511.9, 1024), 0.0);
        assert_eq!(round_nearest(1234.5, 0), 1234.5);
        let rv = Rv::Uniform {
            min: 1024.0,
            mean: 65536.0,
            round: 1024,
        };
        let mut rng = Rng::new(2);
        let mut saw_top = false;
        for _ in 0..N {
            let v = rv.sample(&mut rng);
            assert!(v.is_multiple_of(1024), "{v}");
            assert!((1024..=130_048).contains(&v), "{v}");
            saw_top |= v == 130_048;
        }
        assert!(saw_top, "rounding to nearest reaches 2·mean − min");
        let rv = Rv::Gamma {
            min: 512.0,
            mean: 16384.0,
            gamma: 1500.0,
            round: 512,
        };
        let mut rng = Rng::new(2);
        assert!((0..10_000).all(|_| rv.sample(&mut rng).is_multiple_of(512)));
    }

    #[test]
    fn randvar_without_round_truncates() {
        let rv = Rv::Uniform {
            min: 10.0,
            mean: 10.5,
            round: 0,
        };
        let mut rng = Rng::new(1);
        assert!((0..1000).all(|_| rv.sample(&mut rng) == 10));
    }

    #[test]
    fn cvar_rounds_truncate_then_nearest_with_ties_down() {
        assert_eq!(round_cvar(1535.9, 1024), 1024.0); // truncated to 1535 first
        assert_eq!(round_cvar(1536.0, 1024), 1024.0); // a tie goes down
        assert_eq!(round_cvar(1537.0, 1024), 2048.0);
        assert_eq!(round_cvar(4096.0, 1024), 4096.0);
        assert_eq!(round_cvar(-1.5, 4), 0.0);
        assert_eq!(round_cvar(7.7, 0), 7.7);
        let rv = Rv::Cvar {
            dist: Cvar::Uniform {
                lower: 4096.0,
                upper: 8192.0,
            },
            min: None,
            max: None,
            round: 1000,
        };
        let mut rng = Rng::new(3);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..10_000 {
            seen.insert(rv.sample(&mut rng));
        }
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            [4000, 5000, 6000, 7000, 8000]
        );
    }

    #[test]
    fn cvar_clamps_to_min_and_max_after_rounding() {
        let rv = Rv::Cvar {
            dist: Cvar::Normal {
                mean: 1000.0,
                sigma: 500.0,
            },
            min: Some(800.0),
            max: Some(1200.0),
            round: 100,
        };
        rv.validate().unwrap();
        let mut rng = Rng::new(4);
        let xs: Vec<u64> = (0..N).map(|_| rv.sample(&mut rng)).collect();
        assert!(xs
            .iter()
            .all(|x| (800..=1200).contains(x) && x.is_multiple_of(100)));
        assert!(xs.contains(&800) && xs.contains(&1200));
        // Clamping is the last step: a min that is not a multiple of round stays as given.
        let rv = Rv::Cvar {
            dist: Cvar::Uniform {
                lower: 0.0,
                upper: 10.0,
            },
            min: Some(50.0),
            max: None,
            round: 100,
        };
        assert!((0..100).all(|_| rv.sample(&mut rng) == 50));
    }

    #[test]
    fn negative_values_become_zero() {
        let rv = cvar(Cvar::Normal {
            mean: 0.0,
            sigma: 1000.0,
        });
        let mut rng = Rng::new(5);
        let xs: Vec<u64> = (0..10_000).map(|_| rv.sample(&mut rng)).collect();
        let zeros = xs.iter().filter(|&&x| x == 0).count();
        assert!((4_800..5_300).contains(&zeros), "{zeros} zeros");
        assert!(xs.iter().all(|&x| x < 10_000));
        // A negative min with nothing below it still gives 0, never a wrapped huge value.
        let rv = Rv::Cvar {
            dist: Cvar::Uniform {
                lower: -10.0,
                upper: -5.0,
            },
            min: Some(-20.0),
            max: None,
            round: 4,
        };
        assert!((0..100).all(|_| rv.sample(&mut rng) == 0));
    }

    #[test]
    fn cvar_means_and_sds() {
        use std::f64::consts::PI;
        // (dist, expected sd)
        let cases: Vec<(Cvar, f64)> = vec![
            (
                Cvar::Erlang {
                    shape: 1,
                    rate: 8192.0,
                },
                8192.0,
            ),
            (
                Cvar::Erlang {
                    shape: 4,
                    rate: 8192.0,
                },
                8192.0 / 2.0,
            ),
            (
                Cvar::Erlang {
                    shape: 25,
                    rate: 8192.0,
                },
                8192.0 / 5.0,
            ),
            (Cvar::Exponential { mean: 4096.0 }, 4096.0),
            (
                Cvar::Gamma {
                    mean: 16384.0,
                    shape: 1.5,
                },
                16384.0 / 1.5f64.sqrt(),
            ),
            (
                Cvar::Gamma {
                    mean: 16384.0,
                    shape: 0.5,
                },
                16384.0 / 0.5f64.sqrt(),
            ),
            (
                Cvar::Gamma {
                    mean: 16384.0,
                    shape: 100.0,
                },
                1638.4,
            ),
            (
                Cvar::Lognormal {
                    shape: 0.5,
                    scale: 9.0,
                },
                ((0.25f64.exp() - 1.0) * (18.0f64 + 0.25).exp()).sqrt(),
            ),
            (
                Cvar::Normal {
                    mean: 16384.0,
                    sigma: 2048.0,
                },
                2048.0,
            ),
            (
                Cvar::Triangular {
                    lower: 1000.0,
                    upper: 9000.0,
                    mode: 2000.0,
                },
                ((1e6f64 + 81e6 + 4e6 - 9e6 - 2e6 - 18e6) / 18.0).sqrt(),
            ),
            (
                Cvar::Uniform {
                    lower: 4096.0,
                    upper: 8192.0,
                },
                4096.0 / 12f64.sqrt(),
            ),
            (
                Cvar::Weibull {
                    shape: 1.0,
                    scale: 5000.0,
                },
                5000.0,
            ),
            (
                Cvar::Weibull {
                    shape: 2.0,
                    scale: 5000.0,
                },
                5000.0 * (1.0 - PI / 4.0).sqrt(),
            ),
            (
                Cvar::Weibull {
                    shape: 0.5,
                    scale: 5000.0,
                },
                5000.0 * 20f64.sqrt(),
            ),
        ];
        for (i, (c, sd_want)) in cases.iter().enumerate() {
            c.validate().unwrap();
            let (m, sd) = cvar_moments(c, 100 + i as u64);
            assert_close(&format!("mean of {c:?}"), m, c.mean(), 0.02);
            assert_close(&format!("sd of {c:?}"), sd, *sd_want, 0.04);
            // Through Rv, with truncation to integers: still within 2% at these magnitudes.
            let (m, _) = rv_moments(&cvar(c.clone()), 200 + i as u64, N);
            assert_close(&format!("integer mean of {c:?}"), m, c.mean(), 0.02);
        }
    }

    #[test]
    fn closed_form_means() {
        use std::f64::consts::PI;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(close(
            Cvar::Erlang {
                shape: 3,
                rate: 12.0
            }
            .mean(),
            12.0
        ));
        assert!(close(
            Cvar::Lognormal {
                shape: 1.0,
                scale: 1.0
            }
            .mean(),
            1.5f64.exp()
        ));
        assert!(close(
            Cvar::Weibull {
                shape: 1.0,
                scale: 3.0
            }
            .mean(),
            3.0
        ));
        assert!(close(
            Cvar::Weibull {
                shape: 2.0,
                scale: 1.0
            }
            .mean(),
            PI.sqrt() / 2.0
        ));
        assert!(close(
            Cvar::Weibull {
                shape: 0.5,
                scale: 1.0
            }
            .mean(),
            2.0
        ));
        assert!(close(
            Cvar::Triangular {
                lower: 0.0,
                upper: 3.0,
                mode: 3.0
            }
            .mean(),
            2.0
        ));
        assert!(close(ln_gamma(0.5), PI.sqrt().ln()));
        assert!(close(ln_gamma(10.0), 362_880f64.ln()));
        assert!(close(ln_gamma(0.1), 9.513_507_698_668_732f64.ln()));
    }

    #[test]
    fn triangular_stays_in_bounds_and_degenerates_cleanly() {
        let c = Cvar::Triangular {
            lower: 10.0,
            upper: 20.0,
            mode: 20.0,
        };
        let mut rng = Rng::new(6);
        assert!((0..N).all(|_| (10.0..=20.0).contains(&c.sample(&mut rng))));
        let c = Cvar::Triangular {
            lower: 5.0,
            upper: 5.0,
            mode: 5.0,
        };
        c.validate().unwrap();
        assert_eq!(c.sample(&mut rng), 5.0);
    }

    #[test]
    fn same_seed_same_sequence_different_seed_different() {
        let rvs = [
            Rv::Uniform {
                min: 0.0,
                mean: 1e6,
                round: 0,
            },
            Rv::Gamma {
                min: 0.0,
                mean: 1e6,
                gamma: 1500.0,
                round: 0,
            },
            Rv::Gamma {
                min: 0.0,
                mean: 1e6,
                gamma: 300.0,
                round: 0,
            },
            netsfs_filesize(),
            cvar(Cvar::from_params("erlang", "shape:3;rate:1e6").unwrap()),
            cvar(Cvar::from_params("erlang", "shape:30;rate:1e6").unwrap()),
            cvar(Cvar::from_params("exponential", "mean:1e6").unwrap()),
            cvar(Cvar::from_params("gamma", "mean:1e6").unwrap()),
            cvar(Cvar::from_params("lognormal", "shape:1;scale:12").unwrap()),
            cvar(Cvar::from_params("normal", "mean:1e6;sigma:1e5").unwrap()),
            cvar(Cvar::from_params("triangular", "upper:1e6;mode:1e5").unwrap()),
            cvar(Cvar::from_params("uniform", "upper:1e6").unwrap()),
            cvar(Cvar::from_params("weibull", "shape:2;scale:1e6").unwrap()),
        ];
        let draw = |rv: &Rv, seed| {
            let mut rng = Rng::new(seed);
            (0..64).map(|_| rv.sample(&mut rng)).collect::<Vec<_>>()
        };
        for rv in &rvs {
            assert_eq!(draw(rv, 42), draw(rv, 42), "{rv:?}");
            assert_ne!(draw(rv, 42), draw(rv, 43), "{rv:?}");
        }
    }

    #[test]
    fn from_params_every_kind() {
        let cases = [
            (
                "erlang",
                "shape:2;rate:8192",
                Cvar::Erlang {
                    shape: 2,
                    rate: 8192.0,
                },
            ),
            (
                "cvar-exponential",
                "mean:4096",
                Cvar::Exponential { mean: 4096.0 },
            ),
            (
                "gamma",
                "mean:16384;gamma:1.5",
                Cvar::Gamma {
                    mean: 16384.0,
                    shape: 1.5,
                },
            ),
            (
                "lognormal",
                "shape:0.5;scale:9",
                Cvar::Lognormal {
                    shape: 0.5,
                    scale: 9.0,
                },
            ),
            (
                "normal",
                "mean:100;sigma:10",
                Cvar::Normal {
                    mean: 100.0,
                    sigma: 10.0,
                },
            ),
            (
                "triangular",
                "lower:1;upper:9;mode:2",
                Cvar::Triangular {
                    lower: 1.0,
                    upper: 9.0,
                    mode: 2.0,
                },
            ),
            (
                "uniform",
                "lower:4096;upper:8192",
                Cvar::Uniform {
                    lower: 4096.0,
                    upper: 8192.0,
                },
            ),
            (
                "weibull",
                "scale:3;shape:2",
                Cvar::Weibull {
                    shape: 2.0,
                    scale: 3.0,
                },
            ),
        ];
        for (kind, params, want) in cases {
            assert_eq!(
                Cvar::from_params(kind, params).unwrap(),
                want,
                "{kind} {params}"
            );
        }
        // Whitespace, empty items and a trailing `;` are tolerated.
        assert_eq!(
            Cvar::from_params("gamma", " mean : 16384 ;; gamma:1.5; ").unwrap(),
            Cvar::Gamma {
                mean: 16384.0,
                shape: 1.5
            }
        );
        assert_eq!(CVAR_KINDS.len(), 8);
        for (kind, _) in CVAR_KINDS {
            assert_eq!(Cvar::from_params(kind, "").unwrap().kind(), *kind);
        }
    }

    #[test]
    fn from_params_defaults_are_filebenchs() {
        let d = |k| Cvar::from_params(k, "").unwrap();
        assert_eq!(
            d("erlang"),
            Cvar::Erlang {
                shape: 1,
                rate: 1.0
            }
        );
        assert_eq!(d("exponential"), Cvar::Exponential { mean: 1.0 });
        assert_eq!(
            d("gamma"),
            Cvar::Gamma {
                mean: 4096.0,
                shape: 1.5
            }
        );
        assert_eq!(
            d("lognormal"),
            Cvar::Lognormal {
                shape: 1.0,
                scale: 1.0
            }
        );
        assert_eq!(
            d("normal"),
            Cvar::Normal {
                mean: 0.0,
                sigma: 1.0
            }
        );
        assert_eq!(
            d("triangular"),
            Cvar::Triangular {
                lower: 0.0,
                upper: 1.0,
                mode: 0.5
            }
        );
        assert_eq!(
            d("uniform"),
            Cvar::Uniform {
                lower: 0.0,
                upper: 1.0
            }
        );
        assert_eq!(
            d("weibull"),
            Cvar::Weibull {
                shape: 1.0,
                scale: 1.0
            }
        );
        assert_eq!(
            Cvar::from_params("gamma", "gamma:2").unwrap(),
            Cvar::Gamma {
                mean: 4096.0,
                shape: 2.0
            }
        );
    }

    #[test]
    fn from_params_errors() {
        let err = |k, p| Cvar::from_params(k, p).unwrap_err();
        let e = err("pareto", "");
        assert_eq!(
            e,
            RvError::UnknownCvar {
                kind: "pareto".into()
            }
        );
        let msg = e.to_string();
        for (k, _) in CVAR_KINDS {
            assert!(msg.contains(&format!("cvar-{k}")), "{msg}");
        }
        let e = err("gamma", "mean:16384;shape:1.5");
        assert_eq!(
            e,
            RvError::UnknownParameter {
                kind: "gamma",
                key: "shape".into()
            }
        );
        let msg = e.to_string();
        assert!(msg.contains("`mean` (default 4096)") && msg.contains("`gamma` (default 1.5)"));
        assert!(matches!(err("gamma", "mean"), RvError::MissingValue { .. }));
        assert!(matches!(
            err("gamma", "mean:"),
            RvError::MissingValue { .. }
        ));
        assert!(matches!(
            err("gamma", "mean:16k"),
            RvError::NotANumber { .. }
        ));
        assert!(matches!(
            err("gamma", "mean:inf"),
            RvError::NotANumber { .. }
        ));
        assert!(matches!(
            err("gamma", "mean:1;mean:2"),
            RvError::DuplicateParameter { .. }
        ));
        assert!(matches!(err("gamma", ":5"), RvError::EmptyKey { .. }));
        assert!(matches!(err("Gamma", ""), RvError::UnknownCvar { .. }));
        let range = |k, p| match err(k, p) {
            RvError::OutOfRange { param, .. } => param,
            e => panic!("{k} {p}: {e}"),
        };
        assert_eq!(range("erlang", "shape:2.5"), "shape");
        assert_eq!(range("erlang", "shape:0"), "shape");
        assert_eq!(range("erlang", "rate:0"), "rate");
        assert_eq!(range("exponential", "mean:-1"), "mean");
        assert_eq!(range("gamma", "gamma:0"), "gamma");
        assert_eq!(range("gamma", "mean:-5"), "mean");
        assert_eq!(range("lognormal", "shape:-1"), "shape");
        assert_eq!(range("normal", "sigma:-1"), "sigma");
        assert_eq!(range("triangular", "lower:5;upper:1;mode:3"), "lower");
        assert_eq!(range("triangular", "lower:0;upper:1;mode:2"), "mode");
        assert_eq!(range("uniform", "lower:2;upper:1"), "lower");
        assert_eq!(range("weibull", "shape:0"), "shape");
        assert_eq!(range("weibull", "scale:-1"), "scale");
        // A negative lognormal scale (μ) is a valid distribution, unlike in filebench.
        assert!(Cvar::from_params("lognormal", "scale:-1").is_ok());
    }

    #[test]
    fn validation_errors() {
        let e = Rv::Uniform {
            min: 100.0,
            mean: 50.0,
            round: 0,
        }
        .validate()
        .unwrap_err();
        assert!(matches!(e, RvError::MeanBelowMin { .. }));
        assert!(e.to_string().contains("set mean ≥ min"), "{e}");
        let e = Rv::Gamma {
            min: 100.0,
            mean: 50.0,
            gamma: 1500.0,
            round: 0,
        }
        .validate();
        assert!(matches!(e, Err(RvError::MeanBelowMin { .. })));
        let e = Rv::Gamma {
            min: 0.0,
            mean: 50.0,
            gamma: 0.0,
            round: 0,
        }
        .validate();
        assert_eq!(e, Err(RvError::NonPositiveGamma { gamma: 0.0 }));
        let e = Rv::Gamma {
            min: 0.0,
            mean: f64::NAN,
            gamma: 1500.0,
            round: 0,
        }
        .validate();
        assert!(matches!(e, Err(RvError::NotFinite { param: "mean", .. })));
        let table = |rows: &[(f64, f64, f64)]| Rv::Tabular {
            rows: rows
                .iter()
                .map(|&(percent, low, high)| TableRow { percent, low, high })
                .collect(),
            round: 0,
        };
        assert_eq!(table(&[]).validate(), Err(RvError::EmptyTable));
        assert_eq!(
            table(&[(60.0, 1.0, 2.0), (30.0, 3.0, 4.0)]).validate(),
            Err(RvError::PercentSum { sum: 90.0 })
        );
        assert!(table(&[(60.0, 1.0, 2.0), (40.005, 3.0, 4.0)])
            .validate()
            .is_ok());
        assert!(table(&[(60.0, 1.0, 2.0), (40.02, 3.0, 4.0)])
            .validate()
            .is_err());
        assert_eq!(
            table(&[(120.0, 1.0, 2.0), (-20.0, 3.0, 4.0)]).validate(),
            Err(RvError::PercentOutOfRange {
                row: 1,
                percent: 120.0
            })
        );
        assert_eq!(
            table(&[(50.0, 1.0, 2.0), (50.0, 4.0, 3.0)]).validate(),
            Err(RvError::LowAboveHigh {
                row: 2,
                low: 4.0,
                high: 3.0
            })
        );
        let c = |min, max| Rv::Cvar {
            dist: Cvar::Exponential { mean: 1.0 },
            min,
            max,
            round: 0,
        };
        assert_eq!(
            c(Some(10.0), Some(5.0)).validate(),
            Err(RvError::MinAboveMax {
                min: 10.0,
                max: 5.0
            })
        );
        assert!(c(Some(5.0), Some(5.0)).validate().is_ok());
        assert!(c(None, Some(f64::INFINITY)).validate().is_err());
        let bad = Rv::Cvar {
            dist: Cvar::Normal {
                mean: 0.0,
                sigma: -1.0,
            },
            min: None,
            max: None,
            round: 0,
        };
        let e = bad.validate().unwrap_err();
        assert!(
            e.to_string().contains("sigma is -1, but it must be ≥ 0"),
            "{e}"
        );
    }

    #[test]
    fn invalid_parameters_do_not_hang_or_panic() {
        let mut rng = Rng::new(1);
        let rvs = [
            Rv::Gamma {
                min: 0.0,
                mean: 100.0,
                gamma: 0.0,
                round: 0,
            },
            Rv::Gamma {
                min: 0.0,
                mean: 100.0,
                gamma: -5.0,
                round: 0,
            },
            Rv::Gamma {
                min: 0.0,
                mean: f64::NAN,
                gamma: 1500.0,
                round: 0,
            },
            Rv::Tabular {
                rows: vec![],
                round: 0,
            },
            cvar(Cvar::Gamma {
                mean: 1.0,
                shape: 0.0,
            }),
            cvar(Cvar::Erlang {
                shape: 0,
                rate: 10.0,
            }),
            cvar(Cvar::Weibull {
                shape: 0.0,
                scale: 1.0,
            }),
            cvar(Cvar::Triangular {
                lower: 5.0,
                upper: 1.0,
                mode: 3.0,
            }),
        ];
        for rv in &rvs {
            assert!(rv.validate().is_err(), "{rv:?}");
            for _ in 0..100 {
                let _ = rv.sample(&mut rng);
            }
        }
    }
}
