//! The standard normal distribution.

use super::special::gamma_inc;
use crate::{Result, StatsError};

/// √(2π).
const SQRT_2PI: f64 = 2.506_628_274_631_000_7;

/// Standard normal density φ(z).
pub fn normal_pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / SQRT_2PI
}

/// Standard normal CDF Φ(z).
///
/// Computed as Φ(z) = ½[1 + sign(z)·P(½, z²/2)] through the regularized incomplete gamma
/// function (Abramowitz & Stegun 7.1.2 with 6.5.17), taking the upper function Q directly in the
/// tails so that Φ(−10) ≈ 7.6e-24 keeps its relative precision.
pub fn normal_cdf(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    let (p, q) = gamma_inc(0.5, 0.5 * z * z);
    if z >= 0.0 {
        0.5 + 0.5 * p
    } else if p < 0.5 {
        0.5 - 0.5 * p
    } else {
        0.5 * q
    }
}

/// Standard normal upper tail 1 − Φ(z), accurate for large z.
pub fn normal_sf(z: f64) -> f64 {
    normal_cdf(-z)
}

/// Standard normal quantile Φ⁻¹(p) for p in [0, 1] (±∞ at the ends).
///
/// Acklam's rational approximation (relative error 1.15e-9) polished by one Halley step against
/// the accurate [`normal_cdf`], which brings it to about machine precision.
pub fn normal_quantile(p: f64) -> Result<f64> {
    if !(0.0..=1.0).contains(&p) {
        return Err(StatsError::InvalidProbability(p));
    }
    Ok(normal_quantile_unchecked(p))
}

pub(crate) fn normal_quantile_unchecked(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const P_LOW: f64 = 0.024_25;
    let tail = |q: f64| {
        let r = (-2.0 * q.ln()).sqrt();
        (((((C[0] * r + C[1]) * r + C[2]) * r + C[3]) * r + C[4]) * r + C[5])
            / ((((D[0] * r + D[1]) * r + D[2]) * r + D[3]) * r + 1.0)
    };
    let x = if p < P_LOW {
        tail(p)
    } else if p <= 1.0 - P_LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -tail(1.0 - p)
    };
    // Halley refinement. Work on the smaller tail so the residual keeps relative precision.
    let e = if x < 0.0 {
        normal_cdf(x) - p
    } else {
        (1.0 - p) - normal_sf(x)
    };
    let u = e * SQRT_2PI * (0.5 * x * x).exp();
    if u.is_finite() {
        x - u / (1.0 + 0.5 * x * u)
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_known_values() {
        assert_eq!(normal_cdf(0.0), 0.5);
        // Reference values from SciPy's norm.cdf (Cephes ndtr).
        let cases = [
            (1.0, 0.841_344_746_068_542_9),
            (-1.0, 0.158_655_253_931_457_07),
            (1.959_963_984_540_054, 0.975),
            (-3.0, 0.001_349_898_031_630_093_3),
            (-10.0, 7.619_853_024_160_47e-24),
            (0.1, 0.539_827_837_277_029),
        ];
        for (z, want) in cases {
            let got = normal_cdf(z);
            assert!(
                (got - want).abs() <= 1e-14 * want,
                "Φ({z}) = {got}, want {want}"
            );
        }
        assert_eq!(normal_cdf(f64::INFINITY), 1.0);
        assert_eq!(normal_cdf(f64::NEG_INFINITY), 0.0);
    }

    #[test]
    fn quantile_known_values_and_round_trip() {
        let z = normal_quantile(0.975).unwrap();
        assert!((z - 1.959_963_984_540_054).abs() < 1e-14, "{z}");
        assert_eq!(normal_quantile(0.5).unwrap(), 0.0);
        for p in [
            1e-300,
            1e-20,
            1e-8,
            0.001,
            0.02,
            0.3,
            0.7,
            0.9,
            0.999,
            1.0 - 1e-12,
        ] {
            let z = normal_quantile(p).unwrap();
            let back = normal_cdf(z);
            assert!(
                (back - p).abs() <= 1e-13 * p.min(1.0 - p).max(1e-300) + 1e-16,
                "{p}"
            );
        }
        assert!(normal_quantile(1.5).is_err());
        assert!(normal_quantile(f64::NAN).is_err());
        assert_eq!(normal_quantile(0.0).unwrap(), f64::NEG_INFINITY);
    }
}
