//! Steady state (`steadystate`, `steadystate_duration`, `steadystate_ramp_time`): people
//! who condition a drive before measuring it want the job to end once throughput (or, from
//! fio 3.42, the mean completion latency) has stopped moving, not after a guessed runtime. This module holds the criterion, the
//! window of samples (one per `steadystate_check_interval`) it is judged on, and what the report shows of it; the
//! sampling itself is `run::steady`'s.

use crate::defs::steady::{Criterion, Measure};
use crate::job::exec::SteadySpec;
use serde::{Deserialize, Serialize};

/// The window of the last `dur_s` samples and the verdict on them.
#[derive(Debug, Clone)]
pub struct Window {
    spec: SteadySpec,
    iops: Vec<u64>,
    bw: Vec<u64>,
    /// Each interval's mean completion latency, nanoseconds (0 for an interval without
    /// completions, as fio).
    lat: Vec<u64>,
    /// Samples taken so far (the window holds the last `dur_s` of them).
    taken: u64,
    last: Verdict,
}

/// The result of the last judgement of a full window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Verdict {
    pub slope: f64,
    pub deviation: f64,
    pub criterion: f64,
}

impl Window {
    pub fn new(spec: SteadySpec) -> Window {
        let n = spec.samples();
        Window {
            spec,
            iops: Vec::with_capacity(n),
            bw: Vec::with_capacity(n),
            lat: Vec::with_capacity(n),
            taken: 0,
            last: Verdict::default(),
        }
    }

    /// Adds one interval's sample (per-second rates and the interval's mean completion
    /// latency in ns); true when the window is full and meets the criterion.
    pub fn push(&mut self, iops: u64, bw: u64, lat: u64) -> bool {
        let n = self.spec.samples();
        if self.iops.len() == n {
            self.iops.remove(0);
            self.bw.remove(0);
            self.lat.remove(0);
        }
        self.iops.push(iops);
        self.bw.push(bw);
        self.lat.push(lat);
        self.taken += 1;
        if self.iops.len() < n {
            return false;
        }
        let c = &self.spec.criterion;
        let ys = match c.measure {
            Measure::Iops => &self.iops,
            Measure::Bw => &self.bw,
            Measure::Lat => &self.lat,
        };
        self.last = judge(ys, c);
        if c.slope {
            self.last.criterion.abs() < c.limit
        } else {
            self.last.criterion < c.limit
        }
    }

    /// What the report shows: the samples oldest first, padded with zeros to a full window.
    pub fn report(&self, attained: bool) -> SteadyReport {
        let n = self.spec.samples();
        let pad = |v: &[u64]| {
            let mut out = v.to_vec();
            out.resize(n, 0);
            out
        };
        SteadyReport {
            spec: self.spec,
            attained,
            slope: self.last.slope,
            deviation: self.last.deviation,
            criterion: self.last.criterion,
            iops: pad(&self.iops),
            bw: pad(&self.bw),
            lat: pad(&self.lat),
        }
    }
}

/// Judges a full window as fio's steadystate.c does: the least-squares slope (x = 0, 1, …,
/// one per interval) or the largest distance from the mean, and the criterion value
/// compared with the limit. The sums are fio's integers; a slope's percentage is of the
/// window's mean in whole units (fio divides its integer sum), a deviation's of the exact
/// mean.
fn judge(ys: &[u64], c: &Criterion) -> Verdict {
    let n = ys.len() as u64;
    let sum_y = ys.iter().fold(0u64, |a, &y| a.wrapping_add(y));
    let mut v = Verdict::default();
    if n == 0 {
        return v;
    }
    if c.slope {
        let sum_x = n * (n - 1) / 2;
        let sum_x_sq = (n - 1) * n * (2 * n - 1) / 6;
        let sum_xy = ys.iter().enumerate().fold(0u64, |a, (x, &y)| {
            a.wrapping_add((x as u64).wrapping_mul(y))
        });
        let nf = n as f64;
        v.slope = (sum_xy as f64 - sum_x as f64 * sum_y as f64 / nf)
            / (sum_x_sq as f64 - sum_x as f64 * sum_x as f64 / nf);
        v.criterion = if c.pct {
            100.0 * v.slope / (sum_y / n) as f64
        } else {
            v.slope
        };
    } else {
        let mean = sum_y as f64 / n as f64;
        v.deviation = ys
            .iter()
            .map(|&y| (y as f64 - mean).abs())
            .fold(0.0, f64::max);
        v.criterion = if c.pct {
            100.0 * v.deviation / mean
        } else {
            v.deviation
        };
    }
    v
}

/// A least-squares line `y = slope·x + intercept` through points at x = 0, 1, 2, …
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Line {
    pub slope: f64,
    pub intercept: f64,
}

/// The least-squares line through `ys` taken at x = 0, 1, …, n−1 (flat through the one
/// point, or zero, when there are fewer than two). fio's `ss=` and `iobench pts`'s
/// steady-state determination both judge a window with it.
pub fn least_squares(ys: &[f64]) -> Line {
    let n = ys.len() as f64;
    if ys.len() < 2 {
        return Line {
            slope: 0.0,
            intercept: ys.first().copied().unwrap_or(0.0),
        };
    }
    let sum_y: f64 = ys.iter().sum();
    let sum_x = n * (n - 1.0) / 2.0;
    let sum_x2 = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
    let sum_xy: f64 = ys.iter().enumerate().map(|(x, &y)| x as f64 * y).sum();
    let slope = (sum_xy - sum_x * sum_y / n) / (sum_x2 - sum_x * sum_x / n);
    Line {
        slope,
        intercept: (sum_y - slope * sum_x) / n,
    }
}

/// The steady-state section of a job's report (fio's `steadystate` JSON object and
/// `steadystate  :` line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyReport {
    pub spec: SteadySpec,
    pub attained: bool,
    pub slope: f64,
    pub deviation: f64,
    pub criterion: f64,
    /// IOPS samples over the window, oldest first.
    pub iops: Vec<u64>,
    /// Bandwidth samples (bytes per second) over the window, oldest first.
    pub bw: Vec<u64>,
    /// Each interval's mean completion latency (ns) over the window, oldest first (fio
    /// 3.42 reports it for the `lat` criteria).
    #[serde(default)]
    pub lat: Vec<u64>,
}

impl SteadyReport {
    /// Mean IOPS over the window (zeros of a window not yet full included, as fio).
    pub fn iops_mean(&self) -> u64 {
        mean(&self.iops)
    }

    /// Mean bandwidth over the window, bytes per second.
    pub fn bw_mean(&self) -> u64 {
        mean(&self.bw)
    }

    /// Mean of the intervals' mean completion latencies over the window, ns.
    pub fn lat_mean(&self) -> u64 {
        mean(&self.lat)
    }
}

fn mean(v: &[u64]) -> u64 {
    if v.is_empty() {
        0
    } else {
        v.iter().fold(0u64, |a, &x| a.wrapping_add(x)) / v.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defs::value::KbBase;

    fn spec(v: &str, dur: u32) -> SteadySpec {
        SteadySpec {
            criterion: Criterion::parse(v, KbBase::Binary).unwrap(),
            dur_s: dur,
            ramp_ms: 0,
            interval_ms: 1000,
        }
    }

    #[test]
    fn criteria_parse_as_fio_reads_them() {
        let c = Criterion::parse("iops:5%", KbBase::Binary).unwrap();
        assert!(c.measure == Measure::Iops && !c.slope && c.pct && c.limit == 5.0);
        assert_eq!(c.label(), "iops:5.000000%");
        let c = Criterion::parse("bw_slope:1m", KbBase::Binary).unwrap();
        assert!(c.measure == Measure::Bw && c.slope && !c.pct && c.limit == 1048576.0);
        assert_eq!(c.label(), "bw_slope:1048576.000000");
        assert_eq!(
            Criterion::parse("iops_slope:0.01%", KbBase::Binary)
                .unwrap()
                .label(),
            "iops_slope:0.010000%"
        );
        for bad in [
            "iops",
            "lat",
            "iops:x",
            "bw:%",
            "iops:inf",
            "lat:1.5ms",
            "lat:-5",
            "lat:5x",
        ] {
            assert!(Criterion::parse(bad, KbBase::Binary).is_err(), "{bad}");
        }
    }

    #[test]
    fn deviation_waits_for_a_full_window_then_judges_it() {
        let mut w = Window::new(spec("iops:5%", 3));
        assert!(!w.push(2000, 8_000_000, 0));
        assert!(!w.push(2002, 8_008_000, 0));
        assert_eq!(w.report(false).iops, vec![2000, 2002, 0]);
        assert_eq!(w.report(false).iops_mean(), 1334);
        assert!(w.push(2001, 8_004_000, 0));
        let r = w.report(true);
        assert_eq!(r.iops, vec![2000, 2002, 2001]);
        assert!((r.deviation - 1.0).abs() < 1e-9);
        assert!((r.criterion - 100.0 / 2001.0).abs() < 1e-9);
    }

    #[test]
    fn a_rising_series_has_its_slope_and_is_not_steady() {
        let mut w = Window::new(spec("iops_slope:1%", 4));
        for y in [100, 200, 300] {
            assert!(!w.push(y, 0, 0));
        }
        assert!(!w.push(400, 0, 0));
        let r = w.report(false);
        assert!((r.slope - 100.0).abs() < 1e-9);
        assert!((r.criterion - 40.0).abs() < 1e-9);
        // The window slides: once flat, the slope falls under the limit.
        assert!(!w.push(400, 0, 0));
        assert!(!w.push(400, 0, 0));
        assert!(w.push(400, 0, 0));
        assert_eq!(w.report(true).iops, vec![400; 4]);
    }
}
