//! The queue-depth, submit and complete marks of the verify pass, gathered while the
//! pass holds the job's stats elsewhere and added when it ends, so the `IO depths`,
//! `submit` and `complete` lines count verify reads as fio counts them.

use crate::stats::JobStats;

/// Buckets beyond this are all fio's `>=64`.
const CAP: usize = 64;

/// Marks gathered during one verify pass.
pub struct Marks {
    /// I/Os marked per busy depth.
    depth: [u64; CAP + 1],
    /// Submit calls per number of I/Os they carried.
    submit: [u64; CAP + 1],
    /// Reaps per number of completions they returned.
    complete: [u64; CAP + 1],
}

impl Marks {
    pub fn new() -> Marks {
        Marks {
            depth: [0; CAP + 1],
            submit: [0; CAP + 1],
            complete: [0; CAP + 1],
        }
    }

    /// A synchronous engine completed one read in its queue call.
    #[inline]
    pub fn inline_io(&mut self) {
        self.depth[1] += 1;
        self.submit[1] += 1;
        self.complete[1] += 1;
    }

    /// `n` reads were submitted while `busy` were in flight or staged.
    #[inline]
    pub fn committed(&mut self, busy: usize, n: usize) {
        if n > 0 {
            self.depth[busy.min(CAP)] += n as u64;
            self.submit[n.min(CAP)] += 1;
        }
    }

    /// One reap returned `n` completions.
    #[inline]
    pub fn reaped(&mut self, n: usize) {
        if n > 0 {
            self.complete[n.min(CAP)] += 1;
        }
    }

    /// Adds the marks to the job's stats.
    pub fn apply(&self, stats: &mut JobStats) {
        for i in 0..=CAP {
            if self.depth[i] > 0 {
                stats.record_depth(i as u32, self.depth[i] as u32);
            }
            for _ in 0..self.submit[i] {
                stats.record_submit(i as u32);
            }
            for _ in 0..self.complete[i] {
                stats.record_complete(i as u32);
            }
        }
    }
}

impl Default for Marks {
    fn default() -> Self {
        Marks::new()
    }
}
