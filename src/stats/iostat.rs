//! A running summary of samples (min, max, mean, variance) kept the way fio keeps it:
//! Welford's update per sample and the parallel formula when merging, so means and standard
//! deviations agree with fio's to the last printed digit.

use serde::{Deserialize, Serialize};

/// min / max / mean / sum of squared deviations / count of a stream of samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IoStat {
    pub samples: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// Sum of squared deviations from the mean (Welford's M2).
    pub s: f64,
}

impl Default for IoStat {
    fn default() -> Self {
        IoStat {
            samples: 0,
            min: u64::MAX,
            max: 0,
            mean: 0.0,
            s: 0.0,
        }
    }
}

/// min, max, mean and standard deviation, as printed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub dev: f64,
}

impl IoStat {
    /// Adds one sample.
    #[inline]
    pub fn add(&mut self, v: u64) {
        if v > self.max {
            self.max = v;
        }
        if v < self.min {
            self.min = v;
        }
        let val = v as f64;
        let delta = val - self.mean;
        if delta != 0.0 {
            self.mean += delta / (self.samples as f64 + 1.0);
            self.s += delta * (val - self.mean);
        }
        self.samples += 1;
    }

    /// Merges `src` as samples of the same quantity (latencies): the combined mean and
    /// variance of both sample sets.
    pub fn merge(&mut self, src: &IoStat) {
        if src.samples == 0 {
            return;
        }
        self.min = self.min.min(src.min);
        self.max = self.max.max(src.max);
        if self.samples == 0 {
            self.mean = src.mean;
            self.s = src.s;
        } else {
            let (n1, n2) = (self.samples as f64, src.samples as f64);
            let delta = src.mean - self.mean;
            let mean = (src.mean * n2 + self.mean * n1) / (n1 + n2);
            self.s = src.s + self.s + delta * delta * (n1 * n2) / (n1 + n2);
            self.mean = mean;
        }
        self.samples += src.samples;
    }

    /// Merges `src` as a rate of a parallel worker (bandwidth, IOPS): the group's rate is
    /// the sum, so min, max, mean and S all add up, as fio does for group reporting.
    pub fn merge_sum(&mut self, src: &IoStat) {
        if src.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *src;
        } else {
            self.min += src.min;
            self.max += src.max;
            self.samples += src.samples;
            self.mean += src.mean;
            self.s += src.s;
        }
    }

    /// The printed summary, or `None` when there are no samples. The deviation uses n-1.
    pub fn summary(&self) -> Option<Summary> {
        if self.samples == 0 {
            return None;
        }
        let n = self.samples as f64;
        let dev = if n > 1.0 {
            (self.s / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Some(Summary {
            min: self.min,
            max: self.max,
            mean: self.mean,
            dev,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_stddev() {
        let mut s = IoStat::default();
        for v in [2u64, 4, 4, 4, 5, 5, 7, 9] {
            s.add(v);
        }
        let m = s.summary().unwrap();
        assert_eq!((m.min, m.max), (2, 9));
        assert!((m.mean - 5.0).abs() < 1e-12);
        // sample standard deviation of the set: sqrt(32/7)
        assert!((m.dev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(IoStat::default().summary(), None);
    }

    #[test]
    fn merge_equals_adding_all() {
        let (mut a, mut b, mut all) = (IoStat::default(), IoStat::default(), IoStat::default());
        for v in 1..50u64 {
            a.add(v * 3);
            all.add(v * 3);
        }
        for v in 1..20u64 {
            b.add(v * 7 + 1);
            all.add(v * 7 + 1);
        }
        a.merge(&b);
        let (x, y) = (a.summary().unwrap(), all.summary().unwrap());
        assert_eq!((x.min, x.max), (y.min, y.max));
        assert!((x.mean - y.mean).abs() < 1e-9);
        assert!((x.dev - y.dev).abs() < 1e-9);
    }

    #[test]
    fn merge_sum_adds_rates() {
        let (mut a, mut b) = (IoStat::default(), IoStat::default());
        a.add(100);
        a.add(200);
        b.add(10);
        a.merge_sum(&b);
        assert_eq!((a.min, a.max, a.samples), (110, 210, 3));
        assert!((a.mean - 160.0).abs() < 1e-12);
    }
}
