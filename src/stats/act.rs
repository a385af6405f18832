//! `--profile=act`'s latency table: per hour of the run ("slice"), the share of I/Os
//! whose latency (submission to completion) passed 1, 8 and 64 ms, each I/O counted under
//! the largest limit it passed, summed over all of the profile's workers and printed
//! when they are done, with ACT's verdict (a share at or above 5%, 1%, 0.1% fails).
//!
//! fio also stops a worker with an error at the hour mark when the hour failed; iobench
//! shows the failed hour in the table and in the verdict but lets the worker go on.

use serde::{Deserialize, Serialize};

/// ACT's limits: latency in µs and the share in per mille at which a slice fails.
const LIMITS: [(u64, u64); 3] = [(1000, 50), (8000, 10), (64000, 1)];
/// One slice's length in ns.
const SLICE_NS: u64 = crate::options::profile::ACT_SLICE_SECS * 1_000_000_000;

/// One worker's (or the sum of all workers') counts per slice: I/Os past each limit,
/// and all I/Os.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ActSlices {
    nr: u64,
    /// Per slice reached: [past 1 ms, past 8 ms, past 64 ms, total].
    slices: Vec<[u64; 4]>,
}

impl ActSlices {
    /// A table of `nr` slices.
    pub fn new(nr: u64) -> Self {
        ActSlices {
            nr: nr.max(1),
            slices: Vec::new(),
        }
    }

    /// One I/O of latency `lat_ns`, completed `now_ns` after the worker's start. I/Os
    /// after the last slice are not counted, as in fio.
    #[inline]
    pub fn add(&mut self, lat_ns: u64, now_ns: u64) {
        let i = now_ns / SLICE_NS;
        if i >= self.nr {
            return;
        }
        let i = i as usize;
        if self.slices.len() <= i {
            self.slices.resize(i + 1, [0; 4]);
        }
        let s = &mut self.slices[i];
        s[3] += 1;
        let us = lat_ns / 1000;
        if let Some(k) = LIMITS.iter().rposition(|&(limit, _)| us > limit) {
            s[k] += 1;
        }
    }

    /// Adds another worker's counts.
    pub fn merge(&mut self, o: &ActSlices) {
        self.nr = self.nr.max(o.nr);
        if self.slices.len() < o.slices.len() {
            self.slices.resize(o.slices.len(), [0; 4]);
        }
        for (d, s) in self.slices.iter_mut().zip(&o.slices) {
            for k in 0..4 {
                d[k] += s[k];
            }
        }
    }

    /// The table fio prints when the profile's workers are done. It has a row for each
    /// slice the run reached (at least one). fio prints every slice of the test
    /// duration: the same for a run that lasted its duration, but for `--prep` (which
    /// runs no timed test) fio prints a row of zeros for each hour of the duration, 24
    /// million with the default one.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "        trans                   device\n        %>(ms)                  %>(ms)\n slice",
        );
        for _ in 0..2 {
            for (limit, _) in LIMITS {
                out.push_str(&format!("\t {:2}", limit / 1000));
            }
        }
        out.push_str("\n -----  -----   -----  ------   -----   -----  ------\n");
        let mut fails = 0;
        let rows = self.slices.len().max(1);
        for i in 0..rows {
            let s = self.slices.get(i).copied().unwrap_or([0; 4]);
            let perc = |k: usize| {
                if s[3] == 0 {
                    0.0
                } else {
                    100.0 * s[k] as f64 / s[3] as f64
                }
            };
            out.push_str(&format!("   {:2}", i + 1));
            for (k, (_, per_mille)) in LIMITS.iter().enumerate() {
                if perc(k) * 10.0 >= *per_mille as f64 {
                    fails += 1;
                }
                out.push_str(&format!("\t{:2.2}", perc(k)));
            }
            for k in 0..3 {
                out.push_str(&format!("\t{:2.2}", perc(k)));
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "\nact: test complete, device(s): {}\n",
            if fails > 0 { "FAILED" } else { "PASSED" }
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_io_counts_under_the_largest_limit_it_passed() {
        let mut a = ActSlices::new(2);
        for lat_us in [10, 2000, 9000, 70000] {
            a.add(lat_us * 1000, 5);
        }
        a.add(1000, SLICE_NS + 1);
        a.add(1000, 3 * SLICE_NS); // past the last slice: not counted
        assert_eq!(a.slices, vec![[1, 1, 1, 4], [0, 0, 0, 1]]);
        let t = a.table();
        assert!(
            t.contains("    1\t25.00\t25.00\t25.00\t25.00\t25.00\t25.00\n"),
            "{t}"
        );
        assert!(t.ends_with("device(s): FAILED\n"));
    }
}
