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

    #[test]
    fn latency_limits_are_read_in_nanoseconds_with_fios_time_units() {
        // Measured with fio 3.42 (`--debug=parse`: "set steady state latency threshold to
        // N nsec"): a bare number and `ns` are nanoseconds, fio's time units count in
        // microseconds, so `us` multiplies by one and `ms` by a thousand.
        for (v, ns) in [
            ("lat:500", 500.0),
            ("lat:500ns", 500.0),
            ("lat:500NSEC", 500.0),
            ("lat:500us", 500.0),
            ("lat:1ms", 1000.0),
            ("lat:2s", 2_000_000.0),
            ("lat:0x10", 16.0),
            ("lat_slope: 20000 ", 20000.0),
        ] {
            let c = Criterion::parse(v, KbBase::Binary).unwrap();
            assert!(
                c.measure == Measure::Lat && !c.pct && c.limit == ns,
                "{v}: {c:?}"
            );
        }
        let c = Criterion::parse("lat_slope:0.5%", KbBase::Binary).unwrap();
        assert!(c.measure == Measure::Lat && c.slope && c.pct && c.limit == 0.5);
        assert_eq!(c.label(), "lat_slope:0.500000%");
        assert_eq!(
            Criterion::parse("lat:20000", KbBase::Binary)
                .unwrap()
                .label(),
            "lat:20000.000000"
        );
        let e = Criterion::parse("lat:abc", KbBase::Binary).unwrap_err();
        assert!(e.contains("'abc'"), "{e}");
    }

    #[test]
    fn a_latency_window_is_judged_on_the_interval_means() {
        // Mean 50000 ns, the farthest sample 2000 ns from it: 4 % of the mean.
        let lat = [52_000, 48_000, 50_500, 49_500];
        let mut w = Window::new(spec("lat:5%", 4));
        for (i, &l) in lat.iter().enumerate() {
            // IOPS and bandwidth move wildly: only the latency is judged.
            assert_eq!(w.push(100 * (i as u64 + 1), 7 * i as u64, l), i == 3);
        }
        let r = w.report(true);
        assert_eq!(r.lat, lat.to_vec());
        assert_eq!(r.lat_mean(), 50_000);
        assert_eq!(r.deviation, 2000.0);
        assert_eq!(r.criterion, 4.0);
        // The same window against an absolute limit of 2000 ns: not under it.
        let mut w = Window::new(spec("lat:2000", 4));
        assert!(!lat.iter().any(|&l| w.push(0, 0, l)));
        assert_eq!(w.report(false).criterion, 2000.0);
        let mut w = Window::new(spec("lat:2001", 4));
        assert!(lat.iter().map(|&l| w.push(0, 0, l)).last().unwrap());
    }

    #[test]
    fn a_slopes_percentage_is_of_the_whole_mean_as_fio_divides_it() {
        // x = 0..3, y = 100, 103, 101, 109: sum_x 6, sum_x² 14, sum_y 413, sum_xy 632, so
        // the slope is (632 − 6·413/4) / (14 − 36/4) = 2.5 exactly. fio divides it by its
        // integer mean 413 / 4 = 103 (not 103.25): 2.427184…%, over a 2.425 % limit that
        // the exact mean (2.421307…%) would have met.
        let mut w = Window::new(spec("lat_slope:2.425%", 4));
        assert!(![100, 103, 101, 109].iter().any(|&l| w.push(0, 0, l)));
        let r = w.report(false);
        assert_eq!(r.slope, 2.5);
        assert_eq!(r.criterion, 250.0 / 103.0);
        let mut w = Window::new(spec("lat_slope:3", 4));
        assert!([100, 103, 101, 109]
            .iter()
            .map(|&l| w.push(0, 0, l))
            .last()
            .unwrap());
        // A falling latency is as unsteady as a rising one (the slope's size is judged).
        let mut w = Window::new(spec("lat_slope:2", 4));
        assert!(![109, 101, 103, 100].iter().any(|&l| w.push(0, 0, l)));
        assert_eq!(w.report(false).slope, -2.5);
    }

    /// fio 3.42's steady-state ring (steadystate.c) restated for the test: the samples go
    /// into a ring at `tail`; once `tail - head` spans the window the sums are taken, then
    /// updated by the oldest sample out and the newest in; after a judgement that does not
    /// stop the job, `tail` and, for a full ring, `head` move on. Its report reads the ring
    /// from `head`, or one before it for a full ring that was not attained.
    struct FioRing {
        n: usize,
        data: Vec<u64>,
        head: usize,
        tail: usize,
        full: bool,
        sum_y: u64,
        sum_xy: u64,
        oldest: u64,
        slope: bool,
        pct: bool,
        limit: f64,
        last: (f64, f64, f64),
    }

    impl FioRing {
        fn new(n: usize, c: &Criterion) -> FioRing {
            FioRing {
                n,
                data: vec![0; n],
                head: 0,
                tail: 0,
                full: false,
                sum_y: 0,
                sum_xy: 0,
                oldest: 0,
                slope: c.slope,
                pct: c.pct,
                limit: c.limit,
                last: (0.0, 0.0, 0.0),
            }
        }

        fn push(&mut self, y: u64) -> bool {
            let n = self.n;
            self.data[self.tail] = y;
            if self.full || self.tail - self.head == n - 1 {
                if !self.full {
                    self.sum_y = self.data.iter().sum();
                    self.sum_xy = (0..n)
                        .map(|i| i as u64 * self.data[(self.head + i) % n])
                        .sum();
                    self.full = true;
                } else {
                    self.sum_y = self.sum_y - self.oldest + y;
                    self.sum_xy = self.sum_xy + n as u64 * y - self.sum_y;
                }
                self.oldest = self.data[self.head];
                let nu = n as u64;
                let (sx, sxx) = (nu * (nu - 1) / 2, (nu - 1) * nu * (2 * nu - 1) / 6);
                let met = if self.slope {
                    let slope = (self.sum_xy as f64 - sx as f64 * self.sum_y as f64 / n as f64)
                        / (sxx as f64 - sx as f64 * sx as f64 / n as f64);
                    let c = if self.pct {
                        100.0 * slope / (self.sum_y / nu) as f64
                    } else {
                        slope
                    };
                    self.last = (slope, 0.0, c);
                    c.abs() < self.limit
                } else {
                    let mean = self.sum_y as f64 / n as f64;
                    let dev = self
                        .data
                        .iter()
                        .map(|&v| (v as f64 - mean).abs())
                        .fold(0.0, f64::max);
                    let c = if self.pct { 100.0 * dev / mean } else { dev };
                    self.last = (0.0, dev, c);
                    c < self.limit
                };
                if met {
                    return true;
                }
            }
            self.tail = (self.tail + 1) % n;
            // The slope's ring and the deviation's test this differently, to one effect.
            let step = if self.slope {
                self.tail <= self.head
            } else {
                self.tail == self.head
            };
            if step {
                self.head = (self.head + 1) % n;
            }
            false
        }

        fn reported(&self, attained: bool) -> Vec<u64> {
            let n = self.n;
            let j = if attained || !self.full {
                self.head
            } else {
                (self.head + n - 1) % n
            };
            (0..n).map(|l| self.data[(j + l) % n]).collect()
        }
    }

    #[test]
    fn the_window_judges_and_reports_as_fios_ring_does() {
        // A pseudo-random walk of interval means (ns), each criterion and limit form, a
        // window of 2 to 7 samples: every verdict, value and reported window agrees, to
        // the bit, with fio's ring, until the job would stop.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut stops = 0;
        for v in [
            "lat:3%",
            "lat:900",
            "lat_slope:0.8%",
            "lat_slope:150",
            "iops:3%",
            "bw_slope:150",
            // Limits of zero are never met (the criterion must fall below them).
            "lat:0",
            "lat_slope:0%",
        ] {
            for dur in 2..=7u32 {
                let sp = spec(v, dur);
                let mut w = Window::new(sp);
                let mut ring = FioRing::new(sp.samples(), &sp.criterion);
                let mut y = 40_000u64;
                for step in 0..400 {
                    y = (y + next() % 2001).saturating_sub(1000).max(1);
                    let ours = match sp.criterion.measure {
                        Measure::Lat => w.push(next() % 5000, next() % 99, y),
                        Measure::Iops => w.push(y, next() % 99, next() % 5000),
                        Measure::Bw => w.push(next() % 99, y, next() % 5000),
                    };
                    let theirs = ring.push(y);
                    assert_eq!(ours, theirs, "{v} dur {dur} step {step}");
                    let r = w.report(ours);
                    let got = (r.slope, r.deviation, r.criterion);
                    if step + 1 >= sp.samples() {
                        assert_eq!(got, ring.last, "{v} dur {dur} step {step}");
                    }
                    let shown = match sp.criterion.measure {
                        Measure::Lat => &r.lat,
                        Measure::Iops => &r.iops,
                        Measure::Bw => &r.bw,
                    };
                    assert_eq!(shown, &ring.reported(ours), "{v} dur {dur} step {step}");
                    if ours {
                        stops += 1;
                        break;
                    }
                }
            }
        }
        // Both outcomes are exercised: some windows stop the job, some never do.
        assert!((6..=36).contains(&stops), "{stops} of 48 stopped");
    }
}
