//! `write_hist_log`: every `log_hist_msec` of a direction's completions, one line of the
//! clat histogram's counts since the previous line, `time, ddir, bs, c0, c1, …`, with
//! `log_hist_coarseness` merging each 2^c neighbouring buckets into one (fio's layout:
//! 1856 buckets at coarseness 0, 29 at 6).

use super::hist::{Hist, PLAT_NR};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The histogram log of one job clone: lines waiting to be written, and per direction the
/// counts at the previous line and when the current window began.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HistLog {
    /// `log_hist_msec`.
    pub msec: u64,
    /// `log_hist_coarseness` (0..=6).
    pub coarse: u32,
    /// Formatted lines not written yet.
    pub text: String,
    pub pending_lines: usize,
    /// Whether the file was created (later writes append).
    pub opened: bool,
    last: [Vec<u64>; 3],
    window_start: [Option<u64>; 3],
}

impl HistLog {
    /// A histogram log taking a line every `msec` ms, merging 2^`coarse` buckets.
    pub fn new(msec: u64, coarse: u32) -> Self {
        HistLog {
            msec,
            coarse: coarse.min(6),
            ..Default::default()
        }
    }

    /// One completion at `now_ms` of direction `d`: when its window is full, adds a line
    /// (time shifted by `base`) with the counts `clat` gained since the last line.
    #[inline]
    pub fn tick(&mut self, d: usize, bs: u64, now_ms: u64, base: u64, clat: &Hist) {
        if self.msec == 0 {
            return;
        }
        let start = *self.window_start[d].get_or_insert(now_ms);
        let spent = now_ms.saturating_sub(start);
        if spent < self.msec {
            return;
        }
        // The next window starts where this one should have ended (drift is carried).
        self.window_start[d] = Some(now_ms - (spent - self.msec));
        self.line(d, bs, now_ms + base, clat.buckets());
    }

    fn line(&mut self, d: usize, bs: u64, time: u64, now: &[u64]) {
        let last = &mut self.last[d];
        if last.is_empty() {
            last.resize(PLAT_NR, 0);
        }
        let _ = write!(self.text, "{time}, {d}, {bs}");
        let stride = 1usize << self.coarse;
        for j in (0..PLAT_NR).step_by(stride) {
            let mut sum = 0u64;
            for (k, prev) in last.iter_mut().enumerate().skip(j).take(stride) {
                let cur = now.get(k).copied().unwrap_or(0);
                sum += cur.saturating_sub(*prev);
                *prev = cur;
            }
            let _ = write!(self.text, ", {sum}");
        }
        self.text.push('\n');
        self.pending_lines += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_hold_deltas_merged_by_coarseness() {
        let mut h = HistLog::new(100, 6);
        let mut clat = Hist::new();
        clat.add(10); // bucket 10: first merged bin
        h.tick(0, 4096, 5, 0, &clat); // opens the window at 5
        clat.add(10);
        h.tick(0, 4096, 50, 0, &clat);
        assert_eq!(h.pending_lines, 0);
        clat.add(10);
        h.tick(0, 4096, 107, 0, &clat);
        clat.add(10);
        h.tick(0, 4096, 205, 0, &clat);
        let lines: Vec<&str> = h.text.lines().collect();
        assert_eq!(lines.len(), 2);
        let f: Vec<&str> = lines[0].split(", ").collect();
        assert_eq!(f.len(), 3 + PLAT_NR / 64);
        assert_eq!(&f[..4], &["107", "0", "4096", "3"]);
        // Only the one completion since the previous line; the window carried its drift.
        let g: Vec<&str> = lines[1].split(", ").collect();
        assert_eq!(&g[..4], &["205", "0", "4096", "1"]);
        assert!(g[4..].iter().all(|v| *v == "0"));
    }

    #[test]
    fn full_resolution_has_every_bucket() {
        let mut h = HistLog::new(1, 0);
        let clat = Hist::new();
        h.tick(1, 512, 0, 0, &clat);
        h.tick(1, 512, 1, 1000, &clat);
        let f: Vec<&str> = h.text.trim_end().split(", ").collect();
        assert_eq!(f.len(), 3 + PLAT_NR);
        assert_eq!(&f[..3], &["1001", "1", "512"]);
    }
}
