//! Outlying runs: flagged for the report, never dropped.
//!
//! Two complementary rules, as the spec asks:
//!
//! * **Tukey's fences** (Tukey, *Exploratory Data Analysis*, 1977): outside
//!   [Q1 − 1.5·IQR, Q3 + 1.5·IQR]. Quartiles are type-7 sample quantiles (Hyndman & Fan 1996,
//!   the R/NumPy default; see [`crate::quantile`]) rather than Tukey's hinges, so users can
//!   reproduce them; the two agree for n ≡ 1 (mod 4) and differ slightly otherwise.
//! * **Scaled MAD** (Hampel, JASA 69, 1974; threshold 3 as recommended by Leys et al., J. Exp.
//!   Soc. Psychol. 49, 2013): |x − median| > 3·1.4826·MAD. The factor 1.4826 = 1/Φ⁻¹(¾) makes
//!   the MAD a consistent estimator of σ for normal data (Rousseeuw & Croux, JASA 88, 1993).
//!   Robust to the outliers themselves, unlike mean ± k·s. When more than half the values are
//!   identical the MAD is 0 and every other value is flagged: a report should show why.
//!
//! Dropping runs silently biases means and intervals; the decision stays with a human.

use crate::quantile::{median_sorted, quantile_sorted, sorted_copy};
use crate::Sample;

/// Tukey's multiplier of the interquartile range.
pub const TUKEY_K: f64 = 1.5;
/// Consistency constant of the MAD for normal data, 1/Φ⁻¹(0.75).
pub const MAD_SCALE: f64 = 1.4826;
/// Number of scaled MADs beyond which a value is flagged.
pub const MAD_THRESHOLD: f64 = 3.0;

/// Tukey's fences of a sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TukeyFences {
    /// First quartile (type 7).
    pub q1: f64,
    /// Third quartile (type 7).
    pub q3: f64,
    /// Q1 − 1.5·IQR.
    pub lower: f64,
    /// Q3 + 1.5·IQR.
    pub upper: f64,
}

impl TukeyFences {
    /// Interquartile range Q3 − Q1.
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }
}

/// The scaled-MAD rule's numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MadRule {
    /// Median of the sample.
    pub median: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    /// 1.4826·MAD, an estimate of σ.
    pub scaled_mad: f64,
    /// median − 3·scaled MAD.
    pub lower: f64,
    /// median + 3·scaled MAD.
    pub upper: f64,
}

/// Which rules flag one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct OutlierFlags {
    /// Outside Tukey's fences.
    pub tukey: bool,
    /// More than 3 scaled MADs from the median.
    pub mad: bool,
}

impl OutlierFlags {
    /// Flagged by either rule.
    pub fn any(&self) -> bool {
        self.tukey || self.mad
    }
}

/// Fences, MAD, and one flag pair per input value (same order as the sample).
#[derive(Clone, Debug, PartialEq)]
pub struct OutlierReport {
    /// Tukey's fences.
    pub tukey: TukeyFences,
    /// Scaled-MAD rule.
    pub mad: MadRule,
    /// `flags[i]` belongs to `sample.values()[i]`.
    pub flags: Vec<OutlierFlags>,
}

impl OutlierReport {
    /// Indices (in run order) flagged by either rule.
    pub fn flagged_indices(&self) -> Vec<usize> {
        self.flags
            .iter()
            .enumerate()
            .filter(|(_, f)| f.any())
            .map(|(i, _)| i)
            .collect()
    }
}

/// Applies both rules to every value of the sample.
pub fn detect_outliers(sample: &Sample) -> OutlierReport {
    let sorted = sample.sorted();
    let q1 = quantile_sorted(&sorted, 0.25);
    let q3 = quantile_sorted(&sorted, 0.75);
    let iqr = q3 - q1;
    let tukey = TukeyFences {
        q1,
        q3,
        lower: q1 - TUKEY_K * iqr,
        upper: q3 + TUKEY_K * iqr,
    };
    let median = median_sorted(&sorted);
    let deviations: Vec<f64> = sample.values().iter().map(|x| (x - median).abs()).collect();
    let mad = median_sorted(&sorted_copy(&deviations));
    let scaled_mad = MAD_SCALE * mad;
    let limit = MAD_THRESHOLD * scaled_mad;
    let mad_rule = MadRule {
        median,
        mad,
        scaled_mad,
        lower: median - limit,
        upper: median + limit,
    };
    let flags = sample
        .values()
        .iter()
        .zip(&deviations)
        .map(|(&x, &d)| OutlierFlags {
            tukey: x < tukey.lower || x > tukey.upper,
            mad: d > limit,
        })
        .collect();
    OutlierReport {
        tukey,
        mad: mad_rule,
        flags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_slow_run_is_flagged_by_both() {
        let s = Sample::new(vec![100.0, 102.0, 98.0, 101.0, 99.0, 60.0, 100.5]).unwrap();
        let r = detect_outliers(&s);
        assert_eq!(r.flagged_indices(), vec![5]);
        assert!(r.flags[5].tukey && r.flags[5].mad);
        assert_eq!(r.flags.len(), s.len());
        // Type-7 quartiles of the sorted data 60 98 99 100 100.5 101 102: h = 1.5 and 4.5.
        assert_eq!(r.tukey.q1, 98.5);
        assert_eq!(r.tukey.q3, 100.75);
        assert_eq!(r.mad.median, 100.0);
        assert_eq!(r.mad.mad, 1.0);
    }

    #[test]
    fn clean_sample_has_no_flags() {
        let s = Sample::new(vec![10.0, 11.0, 9.5, 10.4, 10.1, 9.8]).unwrap();
        assert!(detect_outliers(&s).flagged_indices().is_empty());
    }

    #[test]
    fn rules_can_disagree() {
        // For normal data Tukey's upper fence sits near 2.7σ and the MAD rule at 3σ.
        // 1..=8 and 13.5: Q1 = 3, Q3 = 7, fence 13; median 5, MAD 2, MAD limit 5 + 8.9.
        let mut v: Vec<f64> = (1..=8).map(f64::from).collect();
        v.push(13.5);
        let r = detect_outliers(&Sample::new(v).unwrap());
        assert_eq!((r.tukey.q1, r.tukey.q3, r.tukey.upper), (3.0, 7.0, 13.0));
        assert_eq!((r.mad.median, r.mad.mad), (5.0, 2.0));
        assert!(r.flags[8].tukey, "{r:?}");
        assert!(!r.flags[8].mad, "{r:?}");
    }

    #[test]
    fn zero_mad_flags_every_different_value() {
        let s = Sample::new(vec![5.0, 5.0, 5.0, 5.1]).unwrap();
        let r = detect_outliers(&s);
        assert_eq!(r.mad.mad, 0.0);
        assert!(r.flags[3].mad);
        assert!(!r.flags[0].mad);
    }
}
