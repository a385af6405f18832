//! The steady-state monitor: once an interval (a second by default) the collector reads each running clone's totals
//! from the live board, turns them into an IOPS, a bandwidth and a mean-latency sample
//! (the mean completion latency of the interval's I/Os), and stops the job
//! (or its whole reporting group, with group_reporting) once the window of samples meets
//! the `steadystate` criterion. Workers do nothing for it: their I/O path is untouched.

use super::spawn::CloneSpec;
use crate::job::Job;
use crate::stats::steady::{SteadyReport, Window};
use std::collections::HashMap;

/// One clone's previous reading.
#[derive(Debug, Clone, Copy, Default)]
struct Last {
    ms: u64,
    ios: u64,
    bytes: u64,
    /// Completion latencies so far: fio's mean × samples (ns) and samples.
    clat_sum_ns: f64,
    clat_count: u64,
    ramp_over: bool,
}

/// One window: a clone's own, or a reporting group's (judged on the group's last clone).
#[derive(Debug)]
struct Judged {
    window: Window,
    /// The clones whose samples add up into this window.
    members: Vec<usize>,
    /// The clone whose report carries the result (the last member).
    holder: usize,
    attained: bool,
}

/// Watches the clones of one run-together phase.
pub struct Monitor {
    last: Vec<Last>,
    judged: Vec<Judged>,
    next_ms: u64,
    /// The sampling period (`steadystate_check_interval`, one for the whole run as in
    /// fio, whose helper thread samples every job at once).
    period_ms: u64,
}

impl Monitor {
    /// A monitor for `specs`, or `None` when no clone has steady-state settings.
    pub fn new(specs: &[CloneSpec<'_>]) -> Option<Monitor> {
        if specs.iter().all(|s| s.job.exec.steady.is_none()) {
            return None;
        }
        let period_ms = specs
            .iter()
            .find_map(|s| s.job.exec.steady.map(|st| st.interval_ms))
            .unwrap_or(1000)
            .max(1);
        let mut judged: Vec<Judged> = Vec::new();
        let mut by_group: HashMap<u32, usize> = HashMap::new();
        for (i, s) in specs.iter().enumerate() {
            let Some(spec) = s.job.exec.steady else {
                continue;
            };
            if s.job.report.group_reporting {
                if let Some(&g) = by_group.get(&s.groupid) {
                    judged[g].members.push(i);
                    judged[g].holder = i;
                    continue;
                }
                by_group.insert(s.groupid, judged.len());
            }
            judged.push(Judged {
                window: Window::new(spec),
                members: vec![i],
                holder: i,
                attained: false,
            });
        }
        Some(Monitor {
            last: vec![Last::default(); specs.len()],
            judged,
            next_ms: crate::stats::board::board_ms() + period_ms,
            period_ms,
        })
    }

    /// Takes the samples when a second has passed; calls `stop` for each clone of a
    /// window that just became steady.
    pub fn tick(&mut self, specs: &[CloneSpec<'_>], mut stop: impl FnMut(usize)) {
        let now = crate::stats::board::board_ms();
        if now < self.next_ms {
            return;
        }
        // On a fixed schedule from the start, as fio's helper thread keeps its timer: a
        // tick that comes late does not push the later ones back (over a 6 s job of 2 s
        // intervals, drift would lose the last sample); one more than a whole period late
        // starts the schedule again from now.
        self.next_ms = next_tick(self.next_ms, now, self.period_ms);
        for j in &mut self.judged {
            if j.attained {
                continue;
            }
            let mut sample = (0u64, 0u64);
            // The interval's completion latencies over the members: sum (ns) and count.
            let mut lat = (0.0f64, 0u64);
            let mut counted = 0;
            for &i in &j.members {
                let s = &specs[i];
                let Some(p) = crate::stats::board::progress(s.thread_number) else {
                    continue;
                };
                if !p.running {
                    continue;
                }
                let spec = s.job.exec.steady.expect("members have steady settings");
                let last = &mut self.last[i];
                if last.ms == 0 {
                    // The clone's first reading: measure from when its I/O began.
                    last.ms = p.started_ms;
                    last.ramp_over = spec.ramp_ms == 0;
                }
                if !last.ramp_over
                    && now.saturating_sub(p.started_ms) >= spec.ramp_ms + self.period_ms
                {
                    last.ramp_over = true;
                }
                let ms = now.saturating_sub(last.ms).max(1);
                if last.ramp_over {
                    sample.0 += 1000 * p.ios.saturating_sub(last.ios) / ms;
                    sample.1 += 1000 * p.bytes.saturating_sub(last.bytes) / ms;
                    lat.0 += p.clat_sum_ns - last.clat_sum_ns;
                    lat.1 += p.clat_count.saturating_sub(last.clat_count);
                    counted += 1;
                }
                *last = Last {
                    ms: now,
                    ios: p.ios,
                    bytes: p.bytes,
                    clat_sum_ns: p.clat_sum_ns,
                    clat_count: p.clat_count,
                    ramp_over: last.ramp_over,
                };
            }
            // fio judges a group's window only while its last clone runs.
            let holder_running = crate::stats::board::progress(specs[j.holder].thread_number)
                .is_some_and(|p| p.running);
            if counted == 0 || !holder_running {
                continue;
            }
            // An interval without completions has a mean latency of 0, as in fio.
            let lat_ns = if lat.1 == 0 {
                0
            } else {
                (lat.0 / lat.1 as f64).max(0.0) as u64
            };
            if j.window.push(sample.0, sample.1, lat_ns) {
                j.attained = true;
                for &i in &j.members {
                    stop(i);
                }
            }
        }
    }

    /// Milliseconds until the next sampling is due (0: due now), so that the collector
    /// wakes for it rather than up to a poll's length late.
    pub fn ms_to_next(&self) -> u64 {
        self.next_ms.saturating_sub(crate::stats::board::board_ms())
    }

    /// The report of each window, by the index of the clone that carries it.
    pub fn reports(&self) -> Vec<(usize, SteadyReport)> {
        self.judged
            .iter()
            .map(|j| (j.holder, j.window.report(j.attained)))
            .collect()
    }
}

/// The sampling after one due at `due_ms` and taken at `now_ms`: a period after the due
/// time, or after now when even that has passed.
fn next_tick(due_ms: u64, now_ms: u64, period_ms: u64) -> u64 {
    let next = due_ms + period_ms;
    if next <= now_ms {
        now_ms + period_ms
    } else {
        next
    }
}

/// Refuses a run whose jobs of one group disagree on steady state (with or without it),
/// as fio does: a group's window must judge every member the same way; and one whose
/// jobs ask for different sampling intervals (fio samples every job at once).
pub fn preflight(jobs: &[Job]) -> Result<(), String> {
    let mut intervals = jobs
        .iter()
        .filter_map(|j| j.exec.steady.map(|s| s.interval_ms));
    if let Some(first) = intervals.next() {
        if let Some(other) = intervals.find(|&i| i != first) {
            return Err(format!(
                "conflicting steadystate_check_interval: {first}ms and {other}ms; every job \
                 of a run must sample at the same interval"
            ));
        }
    }
    let gids = crate::job::group_ids(jobs);
    for (i, job) in jobs.iter().enumerate() {
        if let Some(first) = (0..i).find(|&k| gids[k] == gids[i]) {
            if jobs[first].exec.steady != job.exec.steady {
                return Err(format!(
                    "job '{}' rejected: steadystate options must be the same for every job \
                     of a group (job '{}' of group {} differs)",
                    job.name, jobs[first].name, gids[i]
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::next_tick;

    #[test]
    fn late_samplings_keep_the_schedule() {
        // Due every 2 s from 1000: taken 40 ms late each time, the next stays on time.
        assert_eq!(next_tick(3000, 3040, 2000), 5000);
        assert_eq!(next_tick(5000, 5049, 2000), 7000);
        // A whole period late (a stalled collector): from now on.
        assert_eq!(next_tick(3000, 5000, 2000), 7000);
        assert_eq!(next_tick(3000, 6500, 2000), 8500);
    }
}
