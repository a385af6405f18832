//! Pacing: when the worker may issue its next I/O and when it must stop, as fio 3.33 paces a
//! job — `rate`/`rate_iops` caps (linear or Poisson arrivals), `rate_min`/`rate_iops_min`
//! floors checked every `rate_cycle`, `thinktime` pauses (spun and slept, after
//! `thinktime_blocks` issued or completed I/Os), `startdelay` (ranges too), `max_latency`,
//! and the `latency_target` queue-depth search.
//!
//! The worker asks cheap questions on its hot path ([`Pacer::wait_ns`], [`Pacer::issued`],
//! [`Pacer::completed`]): integer arithmetic only, no allocation, no lock, no system call.
//! It sleeps only when it is ahead of the rate, as fio does: first reaping what is in
//! flight, then sleeping until the next I/O is due.

#![warn(missing_docs, clippy::cast_possible_truncation)]

use crate::gen::rand::{clone_seeds, FRand, Stream};
use crate::job::{Ddir, Job};

/// What the worker must do after a completion was accounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Carry on.
    Go,
    /// Reap everything in flight before issuing more (the allowed depth dropped).
    Quiesce,
    /// The latency target search settled: reset the statistics and run at this depth.
    FinalRun,
    /// The latency target search finished its final run: the job is done.
    Done,
    /// The job fails with this errno and message (max_latency, latency_target at depth 1).
    Fail(i32, String),
}

/// The `latency_target` search state (fio's latency_qd, _low, _high).
#[derive(Debug, Clone)]
struct LatTarget {
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

/// A job clone's pacing state.
#[derive(Debug, Clone)]
pub struct Pacer {
    epoch_ns: u64,
    rate_bps: [u64; 3],
    min_bs: [u64; 3],
    poisson: bool,
    poisson_rng: [FRand; 3],
    last_usec: [u64; 3],
    rate_bytes: [u64; 3],
    next_due_us: [u64; 3],
    think_us: u64,
    spin_us: u64,
    think_blocks: u64,
    think_on_issue: bool,
    think_count: u64,
    think_last: u64,
    /// `thinktime_iotime` (µs, 0 when unset): pause after doing I/O this long, counted
    /// from the start of the last pause (or of the job); `thinktime_blocks` then only
    /// counts when it was set too.
    iotime_us: u64,
    think_blocks_set: bool,
    last_think_ns: u64,
    /// `rate_ignore_thinktime`: a pause does not leave the job behind its rate.
    rate_ignores_think: bool,
    /// The direction of the last issued I/O (the one a pause follows).
    last_ddir: Ddir,
    min_bps: [u64; 3],
    min_iops: [u64; 3],
    cycle_ms: u64,
    check_bytes: [u64; 3],
    check_blocks: [u64; 3],
    check_time_ns: [u64; 3],
    start_ns: u64,
    max_lat_ns: [u64; 3],
    lat: Option<LatTarget>,
    ios_done: u64,
    /// rwmixread/rwmixwrite of a mixed job (0 for a direction it never issues).
    mix: [u32; 2],
}

/// The job's `startdelay` for clone `thread_number`: a fixed time, or one picked in the
/// range `a-b` by the clone's own random stream (repeatable under randrepeat).
pub fn start_delay_us(job: &Job, thread_number: u64) -> u64 {
    let d = job.exec.startdelay_us;
    if d.hi <= d.lo {
        return d.lo;
    }
    let w = &job.workload;
    let seeds = clone_seeds(w, thread_number);
    FRand::new(seeds[Stream::StartDelay as usize], true).between(d.lo, d.hi)
}

impl Pacer {
    /// The pacing state of clone `thread_number` of `job`, from the job's typed options
    /// (read once when the job was resolved). `depth` is the worker's queue depth.
    pub fn new(job: &Job, thread_number: u64, depth: u32) -> Self {
        let x = &job.exec;
        let (bps, iops) = (x.rate.bps, x.rate.iops);
        let min_bs = [
            job.workload.bs[0].0.max(1),
            job.workload.bs[1].0.max(1),
            job.workload.bs[2].0.max(1),
        ];
        let mut rate_bps = [0u64; 3];
        for d in 0..3 {
            rate_bps[d] = if bps[d] > 0 {
                bps[d]
            } else {
                iops[d] * min_bs[d]
            };
        }
        let seeds = clone_seeds(&job.workload, thread_number);
        let prng = |s: Stream| FRand::new(seeds[s as usize], false);
        let lat = x.latency_target.map(|l| LatTarget {
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
        });
        let think = &x.think;
        Pacer {
            epoch_ns: 0,
            rate_bps,
            min_bs,
            poisson: x.rate.poisson,
            poisson_rng: [
                prng(Stream::Poisson),
                prng(Stream::Poisson2),
                prng(Stream::Poisson3),
            ],
            last_usec: [0; 3],
            rate_bytes: [0; 3],
            next_due_us: [0; 3],
            think_us: think.us,
            spin_us: think.spin_us,
            think_blocks: think.blocks,
            think_on_issue: think.on_issue,
            think_count: 0,
            think_last: 0,
            iotime_us: think.iotime_us,
            think_blocks_set: think.blocks_set,
            last_think_ns: 0,
            rate_ignores_think: think.rate_ignores,
            last_ddir: Ddir::Read,
            min_bps: x.rate.min_bps,
            min_iops: x.rate.min_iops,
            cycle_ms: x.rate.cycle_ms,
            check_bytes: [0; 3],
            check_blocks: [0; 3],
            check_time_ns: [0; 3],
            start_ns: 0,
            max_lat_ns: x.max_latency_us.map(|us| us * 1000),
            lat,
            ios_done: 0,
            mix: if matches!(
                job.workload.pattern,
                crate::job::Pattern::ReadWrite | crate::job::Pattern::RandRw
            ) {
                [job.workload.rwmix_read, 100 - job.workload.rwmix_read]
            } else {
                [0, 0]
            },
        }
    }

    /// Starts (or, when ramp_time ends, restarts) the clocks: rates count from `now_ns`.
    pub fn start(&mut self, now_ns: u64) {
        // thinktime_iotime counts from the job's start, not from the end of a ramp.
        if self.last_think_ns == 0 {
            self.last_think_ns = now_ns;
        }
        self.epoch_ns = now_ns;
        self.start_ns = now_ns;
        self.rate_bytes = [0; 3];
        self.next_due_us = [0; 3];
        self.last_usec = [0; 3];
        self.check_bytes = [0; 3];
        self.check_blocks = [0; 3];
        if let Some(l) = &mut self.lat {
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

    /// True when a rate cap is set for any direction.
    pub fn rated(&self) -> bool {
        self.rate_bps.iter().any(|&b| b > 0)
    }

    /// Nanoseconds to wait before an I/O of `ddir` may be issued (0: now).
    #[inline]
    pub fn wait_ns(&self, ddir: Ddir, now_ns: u64) -> u64 {
        let d = ddir as usize;
        if self.rate_bps[d] == 0 {
            return 0;
        }
        let due = self.epoch_ns + self.next_due_us[d] * 1000;
        due.saturating_sub(now_ns)
    }

    /// fio's rate_ddir: the direction to issue next and how long to wait for it. A mixed job
    /// ahead of its rate in `ddir` switches to the other direction when that one is due,
    /// or, when both are ahead, waits for whichever is due first.
    #[inline]
    pub fn choose(&self, ddir: Ddir, now_ns: u64) -> (Ddir, u64) {
        let wait = self.wait_ns(ddir, now_ns);
        let other = match ddir {
            Ddir::Read => Ddir::Write,
            Ddir::Write => Ddir::Read,
            Ddir::Trim => return (ddir, wait),
        };
        if wait == 0 || self.mix[other as usize] == 0 {
            return (ddir, wait);
        }
        let w2 = self.wait_ns(other, now_ns);
        if wait <= w2 {
            (ddir, wait)
        } else {
            (other, w2)
        }
    }

    /// Accounts one issued I/O of `bytes` and computes when the next one is due.
    #[inline]
    pub fn issued(&mut self, ddir: Ddir, bytes: u64) {
        let d = ddir as usize;
        self.last_ddir = ddir;
        if self.think_on_issue {
            self.think_count += 1;
        }
        let bps = self.rate_bps[d];
        if bps == 0 {
            return;
        }
        self.rate_bytes[d] += bytes;
        self.next_due_us[d] = if self.poisson {
            let iops = (bps / self.min_bs[d]).max(1);
            let rng = &mut self.poisson_rng[d];
            let u = rng.next_raw() as f64 / (rng.max() as f64 + 1.0);
            let gap = (1_000_000 / iops) as f64 * -(1.0 - u).ln();
            // A float-to-integer `as` saturates: a huge gap waits as long as a u64 can.
            #[allow(clippy::cast_possible_truncation)]
            let gap = gap as u64;
            self.last_usec[d] += gap;
            self.last_usec[d]
        } else {
            let b = self.rate_bytes[d];
            (b / bps) * 1_000_000 + (b % bps) * 1_000_000 / bps
        };
    }

    /// The depth the worker may keep in flight now (below iodepth while `latency_target`
    /// searches).
    #[inline]
    pub fn depth_limit(&self, depth: usize) -> usize {
        match &self.lat {
            Some(l) => (l.qd as usize).clamp(1, depth),
            None => depth,
        }
    }

    /// Accounts one completed I/O: its total latency `lat_ns` against `max_latency` and
    /// `latency_target`. `file`, `offset`, `len` name it in a failure message.
    #[inline]
    pub fn completed(&mut self, ddir: Ddir, lat_ns: u64, what: (&str, u64, usize)) -> Verdict {
        let d = ddir as usize;
        self.ios_done += 1;
        if !self.think_on_issue {
            self.think_count += 1;
        }
        let max = self.max_lat_ns[d];
        if max > 0 && lat_ns > max {
            return Verdict::Fail(libc::ETIMEDOUT, lat_message(lat_ns, max, ddir, what));
        }
        if let Some(l) = &mut self.lat {
            if lat_ns > l.target_ns {
                if l.percentile >= 100.0 {
                    if l.qd == 1 {
                        let t = l.target_ns;
                        return Verdict::Fail(libc::ETIMEDOUT, lat_message(lat_ns, t, ddir, what));
                    }
                    l.ramp_down(self.ios_done);
                    return Verdict::Quiesce;
                }
                l.failed += 1;
            }
        }
        Verdict::Go
    }

    /// The periodic latency_target check (fio's lat_target_check), after completions.
    pub fn check_latency_window(&mut self, now_ns: u64) -> Verdict {
        let Some(l) = &mut self.lat else {
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

    /// The `latency   :` line's values: target µs, window µs, percentile, depth reached.
    pub fn latency_report(&self) -> Option<(u64, u64, f64, u32)> {
        self.lat
            .as_ref()
            .map(|l| (l.target_ns / 1000, l.window_ns / 1000, l.percentile, l.qd))
    }

    /// True when a thinktime pause is due: enough I/Os issued or completed since the
    /// last, or (`thinktime_iotime`) enough time since the last began.
    #[inline]
    pub fn think_due(&self) -> bool {
        if self.think_us == 0 {
            return false;
        }
        if self.iotime_us > 0 {
            let since = super::worker::now_ns().saturating_sub(self.last_think_ns);
            if since >= (self.iotime_us + self.think_us) * 1000 {
                return true;
            }
            // The default of one block would pause after every I/O: with iotime only
            // blocks the user set count.
            if !self.think_blocks_set {
                return false;
            }
        }
        self.think_count >= self.think_last + self.think_blocks
    }

    /// Takes the pause an engine asks for after each I/O (cpuio): `think_us` slept after
    /// every completed I/O, replacing the job's own thinktime settings, as fio's cpuio
    /// engine sets them.
    pub fn engine_think(&mut self, think_us: u64) {
        self.think_us = think_us;
        self.spin_us = 0;
        self.think_blocks = 1;
        self.think_on_issue = false;
        self.iotime_us = 0;
    }

    /// Pauses for thinktime: spins `thinktime_spin`, sleeps the rest. The worker reaps what
    /// is in flight first.
    pub fn think(&mut self, stop: impl Fn() -> bool) {
        let t0 = super::worker::now_ns();
        let spin = self.spin_us.min(self.think_us);
        if spin > 0 {
            while super::worker::now_ns() - t0 < spin * 1000 {
                std::hint::spin_loop();
            }
        }
        let left = self.think_us - spin;
        if left > 0 {
            sleep_until(t0 + self.think_us * 1000, stop);
        }
        self.think_last = self.think_count;
        if self.iotime_us > 0 {
            self.last_think_ns = t0;
        }
        if self.rate_ignores_think {
            let paused_us = (super::worker::now_ns() - t0) / 1000;
            self.skip_rate_for(paused_us);
        }
    }

    /// `rate_ignore_thinktime`: counts the bytes the job would have issued during a pause
    /// of `paused_us` as issued (less one block, so the next I/O goes at once), so the
    /// job keeps its rate after the pause instead of catching up.
    fn skip_rate_for(&mut self, paused_us: u64) {
        let d = self.last_ddir as usize;
        let bps = self.rate_bps[d];
        if paused_us == 0 || bps == 0 {
            return;
        }
        let missed = bps * paused_us / 1_000_000;
        let bs = self.min_bs[d];
        let us_per_io = bs * 1_000_000 / bps;
        let held_back = if us_per_io <= paused_us { bs } else { 0 };
        self.rate_bytes[d] += missed.saturating_sub(held_back);
        self.last_usec[d] += paused_us;
    }

    /// fio's rate_min/rate_iops_min check, once per `rate_cycle` after a 2 s settling time.
    /// `bytes`/`blocks` are the job's completed totals per direction. Returns the message
    /// when a floor was not met.
    pub fn check_min_rate(
        &mut self,
        name: &str,
        bytes: [u64; 3],
        blocks: [u64; 3],
        now_ns: u64,
    ) -> Option<String> {
        for d in 0..3 {
            if (self.min_bps[d] == 0 && self.min_iops[d] == 0) || bytes[d] == 0 {
                continue;
            }
            if now_ns.saturating_sub(self.start_ns) < 2_000_000_000 {
                return None;
            }
            if self.check_bytes[d] != 0 || self.check_blocks[d] != 0 {
                let spent = now_ns.saturating_sub(self.check_time_ns[d]) / 1_000_000;
                if spent < self.cycle_ms || spent == 0 {
                    continue;
                }
                if self.min_bps[d] > 0 {
                    let got = (bytes[d] - self.check_bytes[d]) * 1000 / spent;
                    if got < self.min_bps[d] {
                        return Some(format!(
                            "{name}: rate_min={}B/s not met, got {got}B/s",
                            self.min_bps[d]
                        ));
                    }
                } else {
                    let got = (blocks[d] - self.check_blocks[d]) * 1000 / spent;
                    if got < self.min_iops[d] {
                        return Some(format!(
                            "{name}: rate_iops_min={} not met, got {got} IOPS",
                            self.min_iops[d]
                        ));
                    }
                }
            }
            self.check_bytes[d] = bytes[d];
            self.check_blocks[d] = blocks[d];
            self.check_time_ns[d] = now_ns;
        }
        None
    }

    /// True when rate_min or rate_iops_min is set (the worker then checks after reaps).
    pub fn has_min_rate(&self) -> bool {
        self.min_bps
            .iter()
            .chain(self.min_iops.iter())
            .any(|&v| v > 0)
    }
}

impl LatTarget {
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

fn lat_message(
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

/// Sleeps until `deadline_ns` on the worker clock, in slices of at most 10 ms so a stop
/// request (`stop()`) ends the wait promptly.
pub fn sleep_until(deadline_ns: u64, stop: impl Fn() -> bool) {
    loop {
        let now = super::worker::now_ns();
        if now >= deadline_ns || stop() {
            return;
        }
        let left = (deadline_ns - now).min(10_000_000);
        std::thread::sleep(std::time::Duration::from_nanos(left));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pacer(args: &[(&str, &str)]) -> Pacer {
        let mut raw = crate::options::RawJob {
            name: "p".into(),
            ..Default::default()
        };
        for (n, v) in args {
            raw.opts.push(crate::options::RawOpt {
                def: crate::options::lookup(n).expect("known option"),
                value: Some(v.to_string()),
                origin: crate::options::Origin::command_line(),
            });
        }
        let job = crate::job::resolve(&raw).expect("job");
        Pacer::new(&job, 1, 8)
    }

    #[test]
    fn linear_rate_spaces_ios_evenly() {
        let mut p = pacer(&[("rate", "1m"), ("bs", "4k")]);
        p.start(0);
        assert_eq!(p.wait_ns(Ddir::Read, 0), 0);
        p.issued(Ddir::Read, 4096);
        // 4 KiB at 1 MiB/s is due 3906 us later.
        assert_eq!(p.wait_ns(Ddir::Read, 0), 3_906_000);
        assert_eq!(p.wait_ns(Ddir::Read, 4_000_000), 0);
        assert_eq!(p.wait_ns(Ddir::Write, 0), 0);
    }

    #[test]
    fn rate_iops_and_poisson_average_out() {
        let mut p = pacer(&[("rate_iops", "1000"), ("rate_process", "poisson")]);
        p.start(0);
        for _ in 0..10_000 {
            p.issued(Ddir::Read, 4096);
        }
        // 10000 I/Os at 1000/s take about 10 s on average.
        let due = p.wait_ns(Ddir::Read, 0) as f64 / 1e9;
        assert!((9.5..10.5).contains(&due), "{due}");
    }

    #[test]
    fn thinktime_blocks_count_issues_or_completions() {
        let mut p = pacer(&[("thinktime", "10"), ("thinktime_blocks", "2")]);
        p.issued(Ddir::Read, 1);
        assert!(!p.think_due());
        p.completed(Ddir::Read, 1, ("f", 0, 1));
        assert!(!p.think_due());
        p.completed(Ddir::Read, 1, ("f", 0, 1));
        assert!(p.think_due());
        p.think(|| false);
        assert!(!p.think_due());
        let mut p = pacer(&[("thinktime", "10"), ("thinktime_blocks_type", "issue")]);
        p.issued(Ddir::Read, 1);
        assert!(p.think_due());
    }

    #[test]
    fn max_latency_fails_per_direction() {
        let mut p = pacer(&[("max_latency", "100,0")]);
        assert_eq!(p.completed(Ddir::Read, 50_000, ("f", 0, 1)), Verdict::Go);
        assert!(matches!(
            p.completed(Ddir::Read, 150_000, ("f", 0, 1)),
            Verdict::Fail(libc::ETIMEDOUT, _)
        ));
        assert_eq!(p.completed(Ddir::Write, 150_000, ("f", 0, 1)), Verdict::Go);
    }

    #[test]
    fn latency_target_doubles_then_settles() {
        let mut p = pacer(&[("latency_target", "1000"), ("latency_window", "1000")]);
        p.start(0);
        assert_eq!(p.depth_limit(8), 1);
        let mut now = 0;
        let mut seen = vec![];
        for _ in 0..10 {
            now += 2_000_000;
            p.completed(Ddir::Read, 10, ("f", 0, 1));
            let v = p.check_latency_window(now);
            seen.push((p.depth_limit(8), v));
        }
        assert_eq!(seen[0].0, 2);
        assert_eq!(seen[1].0, 4);
        assert_eq!(seen[2].0, 8);
        assert_eq!(seen[3], (8, Verdict::FinalRun));
        assert_eq!(seen[4], (8, Verdict::Done));
    }

    #[test]
    fn min_rate_is_checked_after_settling() {
        let mut p = pacer(&[("rate_min", "1m")]);
        p.start(0);
        let s = 1_000_000_000u64;
        assert!(p.check_min_rate("p", [100, 0, 0], [1, 0, 0], s).is_none());
        assert!(p
            .check_min_rate("p", [100, 0, 0], [1, 0, 0], 2 * s)
            .is_none());
        let m = p.check_min_rate("p", [200, 0, 0], [2, 0, 0], 3 * s);
        assert!(m.unwrap().contains("rate_min=1048576B/s not met"));
    }
}
