//! The SNIA PTS steady-state determination: a test repeats its rounds until the tracking
//! variable (one number per round, such as the 4 KiB random write IOPS) has settled over
//! the measurement window, the last five rounds:
//!
//! - its range, max − min over the window, is at most 20 % of the window's average, and
//! - the least-squares line through the window's rounds moves by at most 10 % of the
//!   average across the window (the "slope excursion": |slope| × (last round − first)).
//!
//! A test that has not settled after 25 rounds ends with "steady state not achieved", and
//! its last five rounds are the window it reports.

use crate::stats::steady::least_squares;
use serde::{Deserialize, Serialize};

/// Rounds in the measurement window.
pub const WINDOW: usize = 5;
/// The allowed range, as a share of the window's average.
pub const RANGE_LIMIT: f64 = 0.20;
/// The allowed slope excursion, as a share of the window's average.
pub const EXCURSION_LIMIT: f64 = 0.10;
/// Rounds after which a test stops, settled or not.
pub const MAX_ROUNDS: usize = 25;

/// The determination over one window, with every number it was made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Determination {
    /// The window's rounds, numbered from 1: first and last.
    pub first_round: usize,
    pub last_round: usize,
    /// The tracking variable in each round of the window, oldest first.
    pub values: Vec<f64>,
    pub average: f64,
    /// max − min over the window, and the most it may be (20 % of the average).
    pub range: f64,
    pub allowed_range: f64,
    /// The least-squares line `y = slope·round + intercept`, rounds numbered from 1.
    pub slope: f64,
    pub intercept: f64,
    /// |slope| × (last round − first round), and the most it may be (10 % of the average).
    pub excursion: f64,
    pub allowed_excursion: f64,
    pub range_ok: bool,
    pub excursion_ok: bool,
    /// Both criteria met.
    pub steady: bool,
}

impl Determination {
    /// The least-squares line as written in the report.
    pub fn formula(&self) -> String {
        let sign = if self.intercept < 0.0 { '-' } else { '+' };
        format!(
            "y = {:.6} * x {sign} {:.6}",
            self.slope,
            self.intercept.abs()
        )
    }
}

/// Judges the window ending at the last of `rounds` (the tracking variable of rounds 1,
/// 2, …): `None` while fewer than [`WINDOW`] rounds have run.
pub fn judge(rounds: &[f64]) -> Option<Determination> {
    if rounds.len() < WINDOW {
        return None;
    }
    let first = rounds.len() - WINDOW;
    let values = rounds[first..].to_vec();
    let average = values.iter().sum::<f64>() / WINDOW as f64;
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    let min = values.iter().copied().fold(f64::MAX, f64::min);
    let line = least_squares(&values);
    let first_round = first + 1;
    // least_squares puts the window's first round at x = 0; the report numbers rounds.
    let intercept = line.intercept - line.slope * first_round as f64;
    let range = max - min;
    let excursion = line.slope.abs() * (WINDOW - 1) as f64;
    let allowed_range = RANGE_LIMIT * average.abs();
    let allowed_excursion = EXCURSION_LIMIT * average.abs();
    // A window of zeros (a target that did nothing) is not steady: there is nothing to
    // measure, and 0 ≤ 0 would call it settled.
    let range_ok = average > 0.0 && range <= allowed_range;
    let excursion_ok = average > 0.0 && excursion <= allowed_excursion;
    Some(Determination {
        first_round,
        last_round: rounds.len(),
        values,
        average,
        range,
        allowed_range,
        slope: line.slope,
        intercept,
        excursion,
        allowed_excursion,
        range_ok,
        excursion_ok,
        steady: range_ok && excursion_ok,
    })
}

/// Whether rounds stop after `series` (each tracking variable's values, round by round):
/// when every one is steady over the same window, or at `max_rounds`.
pub fn settled(series: &[Vec<f64>], max_rounds: usize) -> bool {
    let all_steady = series.iter().all(|v| judge(v).is_some_and(|d| d.steady));
    all_steady || series.first().map_or(0, Vec::len) >= max_rounds
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn a_flat_window_is_steady_with_a_zero_slope() {
        let d = judge(&[500.0, 100.0, 100.0, 100.0, 100.0, 100.0]).unwrap();
        assert_eq!((d.first_round, d.last_round), (2, 6));
        assert!(close(d.average, 100.0) && close(d.range, 0.0) && close(d.slope, 0.0));
        assert!(close(d.intercept, 100.0));
        assert!(d.steady);
        assert_eq!(d.formula(), "y = 0.000000 * x + 100.000000");
    }

    #[test]
    fn hand_computed_window() {
        // Rounds 1-5: 100, 104, 98, 102, 96. Average 100, range 8 (allowed 20).
        // x̄ = 3, Σ(x−x̄)(y−ȳ) = (−2)(0) + (−1)(4) + 0 + 1(2) + 2(−4) = −10, Σ(x−x̄)² = 10:
        // slope −1, intercept 100 + 3 = 103, excursion 4 (allowed 10).
        let d = judge(&[100.0, 104.0, 98.0, 102.0, 96.0]).unwrap();
        assert!(close(d.average, 100.0));
        assert!(close(d.range, 8.0) && close(d.allowed_range, 20.0));
        assert!(close(d.slope, -1.0) && close(d.intercept, 103.0));
        assert!(close(d.excursion, 4.0) && close(d.allowed_excursion, 10.0));
        assert!(d.steady);
        assert_eq!(d.formula(), "y = -1.000000 * x + 103.000000");
    }

    #[test]
    fn range_passes_and_slope_fails() {
        // A steady climb: 90, 95, 100, 105, 110. Average 100, range 20 ≤ 20 (passes at the
        // limit); slope 5 per round, excursion 20 > 10.
        let d = judge(&[90.0, 95.0, 100.0, 105.0, 110.0]).unwrap();
        assert!(close(d.range, 20.0) && d.range_ok);
        assert!(close(d.slope, 5.0) && close(d.excursion, 20.0));
        assert!(!d.excursion_ok && !d.steady);
    }

    #[test]
    fn slope_passes_and_range_fails() {
        // A symmetric swing: 120, 80, 100, 80, 120. Average 100, range 40 > 20; about
        // x̄ = 3, Σ(x−x̄)(y−ȳ) = (−2)(20) + (−1)(−20) + 0 + (1)(−20) + (2)(20) = 0: the
        // line is flat, excursion 0 ≤ 10.
        let d = judge(&[120.0, 80.0, 100.0, 80.0, 120.0]).unwrap();
        assert!(close(d.average, 100.0));
        assert!(close(d.range, 40.0) && !d.range_ok);
        assert!(close(d.slope, 0.0) && d.excursion_ok);
        assert!(!d.steady);
    }

    #[test]
    fn the_limits_are_inclusive_and_just_over_fails() {
        // Excursion exactly 10 % of the average: 96, 98, 100, 102, 104 (slope 2, × 4 = 8)
        // is under; 95, 97.5, 100, 102.5, 105 gives slope 2.5, excursion 10 = 10 %.
        let d = judge(&[95.0, 97.5, 100.0, 102.5, 105.0]).unwrap();
        assert!(close(d.excursion, 10.0) && d.excursion_ok && d.steady);
        let d = judge(&[94.9, 97.45, 100.0, 102.55, 105.1]).unwrap();
        assert!(close(d.excursion, 10.2) && !d.excursion_ok);
        // A window of zeros measured nothing: never steady.
        assert!(!judge(&[0.0; 5]).unwrap().steady);
    }

    #[test]
    fn every_tracking_variable_must_be_steady() {
        let flat = vec![100.0; 6];
        // Range 40 % of the average: not steady, so the rounds go on.
        let swinging = vec![100.0, 100.0, 120.0, 80.0, 100.0, 100.0];
        assert!(settled(std::slice::from_ref(&flat), MAX_ROUNDS));
        assert!(!settled(&[flat.clone(), swinging.clone()], MAX_ROUNDS));
        assert!(!settled(&[swinging.clone(), flat.clone()], MAX_ROUNDS));
        // Until the limit.
        assert!(settled(&[flat, swinging], 6));
        assert!(!settled(&[vec![1.0; 4]], MAX_ROUNDS));
    }

    #[test]
    fn rounds_go_on_until_steady_or_the_limit() {
        assert!(!settled(&[vec![1.0, 2.0, 3.0, 4.0]], MAX_ROUNDS));
        let rising: Vec<f64> = (1..=24).map(|r| 100.0 * r as f64).collect();
        assert!(!settled(&[rising], MAX_ROUNDS));
        let rising: Vec<f64> = (1..=25).map(|r| 100.0 * r as f64).collect();
        assert!(settled(std::slice::from_ref(&rising), MAX_ROUNDS));
        let last = judge(&rising).unwrap();
        assert!(!last.steady && (last.first_round, last.last_round) == (21, 25));
        // Settles in round 7: the window is rounds 3-7.
        let settling = vec![10.0, 50.0, 99.0, 101.0, 100.0, 99.0, 101.0];
        assert!(!settled(&[settling[..6].to_vec()], MAX_ROUNDS));
        assert!(settled(std::slice::from_ref(&settling), MAX_ROUNDS));
        let d = judge(&settling).unwrap();
        assert_eq!((d.first_round, d.last_round), (3, 7));
    }
}
