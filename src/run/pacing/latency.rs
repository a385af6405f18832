//! The latency part of pacing: `max_latency` (a completion slower than it fails the job)
//! and the `latency_target` search for the deepest queue that keeps `latency_percentile`
//! of the I/Os within the target over each `latency_window` (fio's latency_qd, _low,
//! _high).

#![warn(missing_docs, clippy::cast_possible_truncation)]

use super::Verdict;
use crate::defs::Ddir;
use crate::job::Job;

/// A job clone's latency limits.
#[derive(Debug, Clone)]
pub struct Latency {
    /// `max_latency` per direction, in ns (0: none).
    max_ns: [u64; 3],
    target: Option<Target>,
    /// I/Os completed over the job.
    ios_done: u64,
}

/// The `latency_target` search state.
#[derive(Debug, Clone)]
struct Target {
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    keep_running: bool,
    max_depth: u32,
    qd: u32,
    low: u32,
    high: u32,
    stable: u32,
    cycle_start_ns: u64,
    cycle_ios: u64,
    failed: u64,
    end_run: bool,
}

impl Latency {
    /// The latency limits of `job` for a worker of queue depth `depth`.
    pub fn new(job: &Job, depth: u32) -> Self {
        let x = &job.exec;
        Latency {
            max_ns: x.max_latency_us.map(|us| us * 1000),
            target: x.latency_target.map(|l| Target {
                target_ns: l.target_us * 1000,
                window_ns: l.window_us * 1000,
                percentile: l.percentile,
                keep_running: l.keep_running,
                max_depth: depth.max(1),
                qd: 1,
                low: 1,
                high: depth.max(1),
                stable: 0,
                cycle_start_ns: 0,
                cycle_ios: 0,
                failed: 0,
                end_run: false,
            }),
            ios_done: 0,
        }
    }

    /// Starts (or, when ramp_time ends, restarts) the search at depth 1, unless it is in
    /// its final run.
    pub fn start(&mut self, now_ns: u64) {
        if let Some(l) = &mut self.target {
            if !l.end_run {
                l.qd = 1;
                l.low = 1;
                l.high = l.max_depth;
                l.cycle_start_ns = now_ns;
                l.cycle_ios = self.ios_done;
                l.failed = 0;
            }
        }
    }

    /// The depth the worker may keep in flight now (below iodepth while the target
    /// search runs).
    #[inline]
    pub fn depth_limit(&self, depth: usize) -> usize {
        match &self.target {
            Some(l) => (l.qd as usize).clamp(1, depth),
            None => depth,
        }
    }

    /// Accounts one completed I/O of total latency `lat_ns`. `what` (file, offset, len)
    /// names it in a failure message.
    #[inline]
    pub fn completed(&mut self, ddir: Ddir, lat_ns: u64, what: (&str, u64, usize)) -> Verdict {
        let d = ddir as usize;
        self.ios_done += 1;
        let max = self.max_ns[d];
        if max > 0 && lat_ns > max {
            return Verdict::Fail(libc::ETIMEDOUT, message(lat_ns, max, ddir, what));
        }
        if let Some(l) = &mut self.target {
            if lat_ns > l.target_ns {
                if l.percentile >= 100.0 {
                    if l.qd == 1 {
                        let t = l.target_ns;
                        return Verdict::Fail(libc::ETIMEDOUT, message(lat_ns, t, ddir, what));
                    }
                    l.ramp_down(self.ios_done);
                    return Verdict::Quiesce;
                }
                l.failed += 1;
            }
        }
        Verdict::Go
    }

    /// True when the target search runs (the worker then checks its window).
    pub fn searching(&self) -> bool {
        self.target.is_some()
    }

    /// The periodic check of the search's window (fio's lat_target_check).
    pub fn check_window(&mut self, now_ns: u64) -> Verdict {
        let Some(l) = &mut self.target else {
            return Verdict::Go;
        };
        if now_ns.saturating_sub(l.cycle_start_ns) < l.window_ns {
            return Verdict::Go;
        }
        let ios = self.ios_done - l.cycle_ios;
        let ok = if ios == 0 {
            100.0
        } else {
            (ios - l.failed.min(ios)) as f64 * 100.0 / ios as f64
        };
        let v = if ok >= l.percentile {
            l.ramp_up()
        } else {
            l.ramp_down(self.ios_done);
            Verdict::Quiesce
        };
        l.cycle_start_ns = now_ns;
        l.cycle_ios = self.ios_done;
        l.failed = 0;
        v
    }

    /// The `latency   :` line's values as fio keeps them: the target in ns, the window in
    /// µs (fio 3.33-3.42 print `latency_target` 10000000 for 10ms, `latency_window`
    /// 1000000 for 1s), the percentile and the depth reached.
    pub fn report(&self) -> Option<(u64, u64, f64, u32)> {
        self.target
            .as_ref()
            .map(|l| (l.target_ns, l.window_ns / 1000, l.percentile, l.qd))
    }
}

impl Target {
    fn ramp_down(&mut self, ios_done: u64) {
        if self.qd > 1 {
            self.high = self.qd;
            if self.qd == self.low {
                self.low = self.low.saturating_sub(1).max(1);
            }
            self.qd = ((self.qd + self.low) / 2).max(1);
        }
        self.stable = 0;
        self.cycle_ios = ios_done;
        self.failed = 0;
    }

    fn ramp_up(&mut self) -> Verdict {
        let before = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        if self.high != self.max_depth {
            self.qd = (self.qd + self.high) / 2;
        } else {
            self.qd *= 2;
        }
        self.qd = self.qd.min(self.max_depth);
        if !self.keep_running && self.qd == before {
            if self.end_run {
                return Verdict::Done;
            }
            self.end_run = true;
            return Verdict::FinalRun;
        }
        Verdict::Go
    }
}

/// The failure message of a completion over its limit.
fn message(
    lat_ns: u64,
    max_ns: u64,
    ddir: Ddir,
    (file, offset, len): (&str, u64, usize),
) -> String {
    let dir = match ddir {
        Ddir::Read => "read",
        Ddir::Write => "write",
        Ddir::Trim => "trim",
    };
    format!(
        "latency of {lat_ns} nsec exceeds specified max ({max_ns} nsec): {file} {dir} {offset} {len}"
    )
}
