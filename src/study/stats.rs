//! The statistics of repeated runs, as hyperfine reports them: mean ± σ, range, median,
//! outliers by the modified z-score (with a floor that holds at small n), the ratio of two
//! means with its uncertainty propagated, Welch's t-test for whether two means differ, and
//! the verdict a reader can act on: different, equivalent within a margin (two one-sided
//! tests), or cannot tell with the runs there are (and about how many more would tell).

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

/// Below this many samples the median and MAD rest on one or two values (3401, 3398,
/// 3681 has a MAD of 3, so 3681 would score 60): a sample is judged against the others
/// instead (see [`modified_z`]).
pub const OUTLIER_MIN_N: usize = 5;

/// The floor of the MAD, as a share of the median's magnitude: a spread smaller than 1 %
/// of the value is no spread to judge an outlier by (equal repeats make the MAD ~0).
pub const MAD_FLOOR: f64 = 0.01;

/// At fewer than [`OUTLIER_MIN_N`] samples, the floor of the others' σ, as a share of the
/// median: only a sample more than 10 × 5 % = 50 % away from the others is flagged.
pub const SMALL_N_FLOOR: f64 = 0.05;

/// Each sample's outlier score, flagged above [`OUTLIER_Z`]. From [`OUTLIER_MIN_N`]
/// samples on it is the modified z-score, |x − median| / (1.4826 · MAD), with the MAD
/// floored at [`MAD_FLOOR`] of the median. With 3 or 4 samples it is the distance from
/// the mean of the others in units of their σ, floored at [`SMALL_N_FLOOR`] of the
/// median, so that two equal repeats do not make a third an outlier. All zeros with
/// fewer than 3 samples, or with no spread at all.
pub fn modified_z(xs: &[f64]) -> Vec<f64> {
    let n = xs.len();
    if n < 3 {
        return vec![0.0; n];
    }
    let med = median(xs);
    if n < OUTLIER_MIN_N {
        return (0..n)
            .map(|i| {
                let others: Vec<f64> = (0..n).filter(|&j| j != i).map(|j| xs[j]).collect();
                let o = summarize(&others);
                let scale = o.sd.max(SMALL_N_FLOOR * med.abs());
                if scale == 0.0 {
                    0.0
                } else {
                    (xs[i] - o.mean).abs() / scale
                }
            })
            .collect();
    }
    let dev: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&dev).max(MAD_FLOOR * med.abs());
    if mad == 0.0 {
        return vec![0.0; n];
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

/// The significance level of the verdicts.
pub const ALPHA: f64 = 0.05;

/// The power the smallest detectable difference is given at (80 %, the usual choice).
const POWER: f64 = 0.8;

/// The default equivalence margin, in percent of the first side's mean.
pub const DEFAULT_MARGIN_PCT: f64 = 5.0;

/// What two series of runs say about their means, in words a reader can act on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Welch's test rejects equal means. `p` is None when neither side has spread (the
    /// means differ exactly); `within` when the difference is also inside the margin.
    Different {
        p: Option<f64>,
        diff_pct: f64,
        within: Option<f64>,
    },
    /// Both one-sided tests (TOST) put the difference inside ±`margin` percent.
    Equivalent { margin: f64, diff_pct: f64 },
    /// Neither: `mde_pct` is the smallest difference (in percent of the first mean) this
    /// noise and these counts would show at 80 % power, `more` the runs a side to add
    /// before a difference of the margin's size, or equivalence within it, could be
    /// shown. Both None with one run a side (no noise known).
    CannotTell {
        n: usize,
        mde_pct: Option<f64>,
        more: Option<usize>,
        diff_pct: f64,
    },
}

impl Verdict {
    /// One word for exports and machine use: different, equivalent, cannot-tell.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Different { .. } => "different",
            Verdict::Equivalent { .. } => "equivalent",
            Verdict::CannotTell { .. } => "cannot-tell",
        }
    }

    /// The verdict in a sentence: "different (p 0.0012, +37.2 %)", "equivalent within
    /// ±5 %", or "cannot tell: with 5 runs the smallest difference this noise can show is
    /// ±52 %; run about 450 more".
    pub fn text(&self) -> String {
        match *self {
            Verdict::Different {
                p,
                diff_pct,
                within,
            } => {
                let p = p.map_or("no spread".to_string(), |p| format!("p {}", fmt_p(p)));
                let w = within.map_or(String::new(), |m| {
                    format!(", but within the ±{} margin", pct(m))
                });
                format!("different ({p}, {diff_pct:+.1} %){w}")
            }
            Verdict::Equivalent { margin, .. } => format!("equivalent within ±{}", pct(margin)),
            Verdict::CannotTell {
                n, mde_pct, more, ..
            } => match (mde_pct, more) {
                (Some(m), Some(k)) => format!(
                    "cannot tell: with {n} runs the smallest difference this noise can show is ±{}; run about {k} more",
                    pct(m)
                ),
                (Some(m), None) => format!(
                    "cannot tell: with {n} runs the smallest difference this noise can show is ±{}; more runs would hardly help (the noise is too large)",
                    pct(m)
                ),
                _ => format!(
                    "cannot tell: with {n} run a side the noise is unknown; run at least {} more",
                    2usize.saturating_sub(n).max(1)
                ),
            },
        }
    }
}

/// A p-value as the verdicts print it: 3 figures, or "< 0.0001".
pub fn fmt_p(p: f64) -> String {
    if p < 1e-4 {
        "< 0.0001".into()
    } else if p < 0.01 {
        format!("{p:.4}")
    } else {
        format!("{p:.3}")
    }
}

/// A percentage with no needless decimals: 5 %, 2.5 %, 52 %.
fn pct(v: f64) -> String {
    if v >= 10.0 || (v - v.round()).abs() < 0.05 {
        format!("{:.0} %", v)
    } else {
        format!("{v:.1} %")
    }
}

/// Welch's standard error of the difference of means and its degrees of freedom, for
/// samples of `na` and `nb` with standard deviations `sa` and `sb`.
fn welch_se_df(sa: f64, na: f64, sb: f64, nb: f64) -> (f64, f64) {
    let (va, vb) = (sa * sa / na, sb * sb / nb);
    let se2 = va + vb;
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    (se2.sqrt(), if df.is_finite() { df } else { na + nb - 2.0 })
}

/// The `q` quantile of Student's t with `df` degrees of freedom.
fn t_quantile(q: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df.max(1.0)).map_or(1.96, |d| d.inverse_cdf(q))
}

/// The smallest difference of means a two-sided Welch test at [`ALPHA`] would find with
/// 80 % power: (t(1 − α/2) + t(power)) · SE.
fn min_detectable(se: f64, df: f64) -> f64 {
    (t_quantile(1.0 - ALPHA / 2.0, df) + t_quantile(POWER, df)) * se
}

/// Judges `b` against `a` (the reference): different (Welch, two-sided at [`ALPHA`]),
/// equivalent within ±`margin_pct` percent of `a`'s mean (two one-sided Welch tests at
/// [`ALPHA`]), or cannot tell, with the smallest difference these runs could show and
/// about how many more runs a side would bring it down to the margin.
pub fn judge(a: &Summary, b: &Summary, margin_pct: f64) -> Verdict {
    let diff_pct = if a.mean == 0.0 {
        f64::NAN
    } else {
        (b.mean / a.mean - 1.0) * 100.0
    };
    let n = a.n.min(b.n);
    if a.n < 2 || b.n < 2 {
        return Verdict::CannotTell {
            n,
            mde_pct: None,
            more: None,
            diff_pct,
        };
    }
    let delta = margin_pct / 100.0 * a.mean.abs();
    let d = b.mean - a.mean;
    let (se, df) = welch_se_df(a.sd, a.n as f64, b.sd, b.n as f64);
    if se == 0.0 {
        // No spread on either side: the means decide.
        return if d.abs() <= delta {
            Verdict::Equivalent {
                margin: margin_pct,
                diff_pct,
            }
        } else {
            Verdict::Different {
                p: None,
                diff_pct,
                within: None,
            }
        };
    }
    let dist = StudentsT::new(0.0, 1.0, df.max(1.0)).ok();
    let tail = |t: f64| dist.as_ref().map_or(1.0, |d| 1.0 - d.cdf(t));
    let p_two = (2.0 * tail((d / se).abs())).clamp(0.0, 1.0);
    // TOST: H0 d ≤ −δ is rejected when (d + δ)/SE is large, H0 d ≥ δ when (δ − d)/SE is.
    let p_tost = tail((d + delta) / se).max(tail((delta - d) / se));
    let equivalent = delta > 0.0 && p_tost < ALPHA;
    if p_two < ALPHA {
        return Verdict::Different {
            p: Some(p_two),
            diff_pct,
            within: equivalent.then_some(margin_pct),
        };
    }
    if equivalent {
        return Verdict::Equivalent {
            margin: margin_pct,
            diff_pct,
        };
    }
    let scale = if a.mean == 0.0 {
        f64::NAN
    } else {
        100.0 / a.mean.abs()
    };
    let mde_pct = min_detectable(se, df) * scale;
    // Runs a side to add so that the smallest detectable difference is the margin.
    let more = (1..=10_000usize).find(|&k| {
        let (se, df) = welch_se_df(a.sd, (a.n + k) as f64, b.sd, (b.n + k) as f64);
        min_detectable(se, df) * scale <= margin_pct
    });
    Verdict::CannotTell {
        n,
        mde_pct: mde_pct.is_finite().then_some(mde_pct),
        more,
        diff_pct,
    }
}

/// Reads an equivalence margin given as `5%` or `5` (percent of the first side's mean).
pub fn parse_margin(flag: &str, v: &str) -> Result<f64, String> {
    v.trim()
        .trim_end_matches('%')
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && *p > 0.0 && *p < 100.0)
        .ok_or_else(|| {
            crate::flags::bad_value(flag, v, "a percentage above 0 and below 100, such as 5%")
        })
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

    #[test]
    fn no_outliers_at_small_n_or_near_zero_spread() {
        // Issue 39: two near-equal repeats made the MAD ~0 and 3681 "an outlier (60.8)".
        assert!(modified_z(&[3401.0, 3398.0, 3681.0])
            .iter()
            .all(|&z| z <= OUTLIER_Z));
        assert!(modified_z(&[3401.0, 3398.0, 3681.0, 3400.0])
            .iter()
            .all(|&z| z <= OUTLIER_Z));
        // Five repeats, four nearly equal, one 8 % off: the MAD's floor (1 % of the
        // median) keeps it from being called an outlier.
        assert!(modified_z(&[3401.0, 3398.0, 3400.0, 3399.0, 3681.0])
            .iter()
            .all(|&z| z <= OUTLIER_Z));
        // A real outlier at n = 5 is still flagged: ten times the value.
        let z = modified_z(&[3401.0, 3398.0, 3400.0, 3420.0, 34000.0]);
        assert!(z[4] > OUTLIER_Z, "{z:?}");
        // And at n = 4 and n = 3 a gross one (sweep's 1488 among ~520) too.
        let z = modified_z(&[520.0, 1488.0, 522.0, 518.0]);
        assert!(z[1] > OUTLIER_Z && z.iter().filter(|&&v| v > OUTLIER_Z).count() == 1);
        assert!(modified_z(&[520.0, 1488.0, 522.0])[1] > OUTLIER_Z);
        // Two samples: never.
        assert_eq!(modified_z(&[1.0, 100.0]), vec![0.0; 2]);
    }

    fn sm(n: usize, mean: f64, sd: f64) -> Summary {
        Summary {
            n,
            mean,
            sd,
            ..Default::default()
        }
    }

    #[test]
    fn a_noisy_difference_is_cannot_tell_not_equal() {
        // Issue 39: +37.2 %, p 0.303, for 15.9k ± 5.88k against 21.9k ± 10.3k.
        let v = judge(&sm(5, 15_900.0, 5_880.0), &sm(5, 21_900.0, 10_300.0), 5.0);
        let Verdict::CannotTell {
            mde_pct: Some(mde),
            more: Some(more),
            ..
        } = v
        else {
            panic!("{v:?}")
        };
        assert!(mde > 50.0 && mde < 120.0, "{mde}");
        assert!(more > 100, "{more}");
        let t = v.text();
        assert!(
            t.starts_with("cannot tell: with 5 runs the smallest difference"),
            "{t}"
        );
        assert!(!t.contains("equal"), "{t}");
    }

    #[test]
    fn tight_equal_runs_are_equivalent_and_a_clear_gap_is_different() {
        // 1 % noise, 0.5 % apart, 5 runs: inside ±5 %.
        let v = judge(&sm(5, 1000.0, 10.0), &sm(5, 1005.0, 10.0), 5.0);
        assert_eq!(v.word(), "equivalent", "{v:?}");
        assert_eq!(v.text(), "equivalent within ±5 %");
        // The same at a ±0.5 % margin cannot be shown.
        let v = judge(&sm(5, 1000.0, 10.0), &sm(5, 1005.0, 10.0), 0.5);
        assert_eq!(v.word(), "cannot-tell");
        // 20 % apart with 1 % noise: different.
        let v = judge(&sm(5, 1000.0, 10.0), &sm(5, 1200.0, 10.0), 5.0);
        assert!(
            v.text().starts_with("different (p < 0.0001, +20.0 %)"),
            "{}",
            v.text()
        );
        // One run a side: noise unknown.
        let v = judge(&sm(1, 1000.0, 0.0), &sm(1, 1000.0, 0.0), 5.0);
        assert!(v.text().contains("noise is unknown"), "{}", v.text());
    }

    #[test]
    fn margins_are_read_with_or_without_percent() {
        assert_eq!(parse_margin("--margin", "5%").unwrap(), 5.0);
        assert_eq!(parse_margin("--margin", "2.5").unwrap(), 2.5);
        let e = parse_margin("--margin", "x").unwrap_err();
        assert!(e.contains("--margin") && e.contains("5%"), "{e}");
        assert!(parse_margin("--margin", "0%").is_err());
    }
}
