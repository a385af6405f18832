//! The statistics of repeated runs, as hyperfine reports them: mean ± σ, range, median,
//! outliers by the modified z-score, the ratio of two means with its uncertainty
//! propagated, and Welch's t-test for whether two means differ.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// A summary of one series of samples.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 with fewer than two samples.
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    pub median: f64,
}

/// Summarises `xs` (empty gives zeros).
pub fn summarize(xs: &[f64]) -> Summary {
    let n = xs.len();
    if n == 0 {
        return Summary::default();
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let sd = if n > 1 {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    Summary {
        n,
        mean,
        sd,
        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
        max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        median: median(xs),
    }
}

/// The median of `xs` (the mean of the middle two for an even count).
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 0 {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    }
}

/// The modified z-score above which a sample is flagged as an outlier (hyperfine's rule:
/// |x − median| / (1.4826 · MAD) > 10).
pub const OUTLIER_Z: f64 = 10.0;

/// Each sample's modified z-score: |x − median| / (1.4826 · MAD), with MAD the median
/// absolute deviation. All zeros when the MAD is 0 (no spread to judge by).
pub fn modified_z(xs: &[f64]) -> Vec<f64> {
    let med = median(xs);
    let dev: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&dev);
    if mad == 0.0 {
        return vec![0.0; xs.len()];
    }
    dev.iter().map(|d| d / (1.4826 * mad)).collect()
}

/// `b / a` with its standard deviation by first-order error propagation:
/// σ_r = r · sqrt((σa/a)² + (σb/b)²).
pub fn ratio(a: &Summary, b: &Summary) -> (f64, f64) {
    if a.mean == 0.0 {
        return (f64::NAN, f64::NAN);
    }
    let r = b.mean / a.mean;
    let rel = |s: &Summary| if s.mean == 0.0 { 0.0 } else { s.sd / s.mean };
    (r, r.abs() * (rel(a).powi(2) + rel(b).powi(2)).sqrt())
}

/// Welch's two-sided t-test: the p-value for "the means of `a` and `b` are equal", or
/// None when it cannot be computed (fewer than two samples in a series, or no variance
/// in either).
pub fn welch_p(a: &Summary, b: &Summary) -> Option<f64> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (va, vb) = (a.sd.powi(2) / a.n as f64, b.sd.powi(2) / b.n as f64);
    let se2 = va + vb;
    if se2 == 0.0 {
        return None;
    }
    let t = (a.mean - b.mean) / se2.sqrt();
    let df = se2.powi(2) / (va.powi(2) / (a.n - 1) as f64 + vb.powi(2) / (b.n - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some((2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_a_series() {
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(
            (s.n, s.mean, s.min, s.max, s.median),
            (8, 5.0, 2.0, 9.0, 4.5)
        );
        assert!((s.sd - 2.138_089_935).abs() < 1e-8);
        assert_eq!(summarize(&[3.0]).sd, 0.0);
    }

    #[test]
    fn ratio_propagates_relative_errors() {
        let a = Summary {
            n: 5,
            mean: 100.0,
            sd: 3.0,
            ..Default::default()
        };
        let b = Summary {
            n: 5,
            mean: 150.0,
            sd: 6.0,
            ..Default::default()
        };
        let (r, s) = ratio(&a, &b);
        assert_eq!(r, 1.5);
        assert!((s - 1.5 * (0.03f64.powi(2) + 0.04f64.powi(2)).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn welch_matches_a_known_value() {
        // a = 1..5, b = 3..7 (shift 2): t = -2, df = 8, two-sided p = 0.0805 (R's t.test).
        let a = summarize(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let b = summarize(&[3.0, 4.0, 5.0, 6.0, 7.0]);
        let p = welch_p(&a, &b).unwrap();
        assert!((p - 0.080_516).abs() < 1e-5, "p = {p}");
        assert!(welch_p(&summarize(&[1.0]), &b).is_none());
    }

    #[test]
    fn welch_matches_closed_forms() {
        // Two runs a side with equal spread: df = 2, where the t CDF is closed-form,
        // p = 1 − |t| / sqrt(2 + t²). a = {0, 2}, b = {3, 5}: t = −3/√2, p = 0.1679497.
        let p = welch_p(&summarize(&[0.0, 2.0]), &summarize(&[3.0, 5.0])).unwrap();
        assert!((p - 0.167_949_7).abs() < 1e-6, "p = {p}");
        // No spread on one side: df = 1 (Cauchy), p = 1 − (2/π)·atan|t|. a = {0, 2},
        // b = {5, 5}: t = −4, p = 0.1559583.
        let p = welch_p(&summarize(&[0.0, 2.0]), &summarize(&[5.0, 5.0])).unwrap();
        assert!((p - 0.155_958_3).abs() < 1e-6, "p = {p}");
    }

    #[test]
    fn welch_matches_a_textbook_example_with_unequal_variances() {
        // The unequal-sizes, unequal-variances example of Welch's test on Wikipedia:
        // t = −2.2255, df = 24.52, p = 0.0355 (checked by integrating the t density by
        // Simpson's rule: 0.035485).
        let a = summarize(&[19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0]);
        let b = summarize(&[
            28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7, 23.2, 17.5, 20.6, 18.0,
            23.9, 21.6, 24.3, 20.4, 23.9, 13.3,
        ]);
        let p = welch_p(&a, &b).unwrap();
        assert!((p - 0.035_485).abs() < 1e-5, "p = {p}");
        // Symmetric in its arguments.
        assert_eq!(welch_p(&b, &a), Some(p));
        // No spread on either side: no test.
        assert!(welch_p(&summarize(&[1.0, 1.0]), &summarize(&[2.0, 2.0])).is_none());
    }

    #[test]
    fn outliers_by_modified_z() {
        let z = modified_z(&[10.0, 10.1, 9.9, 10.0, 10.2, 30.0]);
        assert!(z[5] > OUTLIER_Z);
        assert!(z[..5].iter().all(|&v| v < OUTLIER_Z));
        assert_eq!(modified_z(&[1.0, 1.0, 1.0]), vec![0.0; 3]);
    }
}
