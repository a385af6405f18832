//! Pacing: when the worker may issue its next I/O and when it must stop, as fio 3.33 paces
//! a job. Three parts, one module each, behind the one [`Pacer`] the worker asks:
//! - [`rate`]: `rate`/`rate_iops` caps (linear or Poisson arrivals) and the
//!   `rate_min`/`rate_iops_min` floors checked every `rate_cycle`;
//! - [`think`]: `thinktime` pauses (spun and slept, after `thinktime_blocks` issued or
//!   completed I/Os, or `thinktime_iotime`);
//! - [`latency`]: `max_latency` and the `latency_target` queue-depth search.
//!
//! Here: the facade, `startdelay` (ranges too) and the sleep they share. The worker asks
//! cheap questions on its hot path ([`Pacer::choose`], [`Pacer::issued`],
//! [`Pacer::completed`]): integer arithmetic only, no allocation, no lock, no system call.
//! It sleeps only when it is ahead of the rate, as fio does: first reaping what is in
//! flight, then sleeping until the next I/O is due.

#![warn(missing_docs, clippy::cast_possible_truncation)]

pub mod latency;
pub mod rate;
pub mod think;

use crate::defs::Ddir;
use crate::gen::rand::{clone_seeds, FRand, Stream};
use crate::job::Job;

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

/// A job clone's pacing: its rate, thinktime and latency parts, each asked through the
/// few calls the worker makes (the one place where they meet: a pause under
/// `rate_ignore_thinktime` moves the rate on).
#[derive(Debug, Clone)]
pub struct Pacer {
    /// Rate caps and floors.
    pub rate: rate::Rate,
    /// Thinktime pauses.
    pub think: think::Think,
    /// max_latency and latency_target.
    pub latency: latency::Latency,
    /// The direction of the last issued I/O (the one a pause follows).
    last_ddir: Ddir,
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
        Pacer {
            rate: rate::Rate::new(job, thread_number),
            think: think::Think::new(job),
            latency: latency::Latency::new(job, depth),
            last_ddir: Ddir::Read,
        }
    }

    /// Starts (or, when ramp_time ends, restarts) the clocks: rates count from `now_ns`.
    pub fn start(&mut self, now_ns: u64) {
        self.think.start(now_ns);
        self.rate.start(now_ns);
        self.latency.start(now_ns);
    }

    /// True under `arrival=fixed|poisson`: issue on schedule, do not wait for the queue
    /// to drain (see [`rate::Rate::due_ns`]).
    #[inline]
    pub fn open_loop(&self) -> bool {
        self.rate.open_loop
    }

    /// True when a rate cap is set for any direction.
    #[inline]
    pub fn rated(&self) -> bool {
        self.rate.capped()
    }

    /// The direction to issue next and how long to wait for it (see [`rate::Rate::choose`]).
    #[inline]
    pub fn choose(&self, ddir: Ddir, now_ns: u64) -> (Ddir, u64) {
        self.rate.choose(ddir, now_ns)
    }

    /// Accounts one issued I/O of `bytes`.
    #[inline]
    pub fn issued(&mut self, ddir: Ddir, bytes: u64) {
        self.last_ddir = ddir;
        self.think.issued();
        self.rate.issued(ddir, bytes);
    }

    /// The depth the worker may keep in flight now (below iodepth while `latency_target`
    /// searches).
    #[inline]
    pub fn depth_limit(&self, depth: usize) -> usize {
        self.latency.depth_limit(depth)
    }

    /// Accounts one completed I/O: its total latency `lat_ns` against `max_latency` and
    /// `latency_target`. `what` (file, offset, len) names it in a failure message.
    #[inline]
    pub fn completed(&mut self, ddir: Ddir, lat_ns: u64, what: (&str, u64, usize)) -> Verdict {
        self.think.completed();
        self.latency.completed(ddir, lat_ns, what)
    }

    /// True when a thinktime pause is due.
    #[inline]
    pub fn think_due(&self) -> bool {
        self.think.due()
    }

    /// Pauses for thinktime (the worker reaps what is in flight first); under
    /// `rate_ignore_thinktime` the rate skips the pause.
    pub fn think(&mut self, stop: impl Fn() -> bool) {
        let (t0, t1) = self.think.pause(stop);
        self.paused(t0, t1);
    }

    /// Accounts a thinktime pause from `t0_ns` to `t1_ns` on the worker clock.
    pub fn paused(&mut self, t0_ns: u64, t1_ns: u64) {
        let paused_us = self.think.ended(t0_ns, t1_ns);
        if self.think.rate_ignores {
            self.rate.skip(self.last_ddir, paused_us);
        }
    }
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
        let raw = crate::defs::raw::RawJob::from_pairs("p", args).expect("known options");
        let job = crate::job::resolve(&raw).expect("job");
        Pacer::new(&job, 1, 8)
    }

    #[test]
    fn linear_rate_spaces_ios_evenly() {
        let mut p = pacer(&[("rate", "1m"), ("bs", "4k")]);
        p.start(0);
        assert_eq!(p.rate.wait_ns(Ddir::Read, 0), 0);
        p.issued(Ddir::Read, 4096);
        // 4 KiB at 1 MiB/s is due 3906 us later.
        assert_eq!(p.rate.wait_ns(Ddir::Read, 0), 3_906_000);
        assert_eq!(p.rate.wait_ns(Ddir::Read, 4_000_000), 0);
        assert_eq!(p.rate.wait_ns(Ddir::Write, 0), 0);
    }

    #[test]
    fn rate_iops_and_poisson_average_out() {
        let mut p = pacer(&[("rate_iops", "1000"), ("rate_process", "poisson")]);
        p.start(0);
        for _ in 0..10_000 {
            p.issued(Ddir::Read, 4096);
        }
        // 10000 I/Os at 1000/s take about 10 s on average.
        let due = p.rate.wait_ns(Ddir::Read, 0) as f64 / 1e9;
        assert!((9.5..10.5).contains(&due), "{due}");
    }

    #[test]
    fn open_loop_keeps_the_schedule_and_counts_how_far_behind() {
        let mut p = pacer(&[("rate_iops", "1000"), ("arrival", "fixed")]);
        assert!(p.open_loop());
        p.start(5_000);
        assert_eq!(p.rate.due_ns(Ddir::Read), 5_000);
        p.issued(Ddir::Read, 4096);
        // The second I/O is due 1 ms after the first, however late the first went.
        assert_eq!(p.rate.due_ns(Ddir::Read), 1_005_000);
        // Started 3.5 ms late at 1000 IOPS: three arrivals behind.
        assert_eq!(p.rate.behind(Ddir::Read, 1_005_000, 4_505_000), 3);
        assert_eq!(p.rate.behind(Ddir::Read, 1_005_000, 1_500_000), 0);
        assert!(!pacer(&[("rate_iops", "1000")]).open_loop());
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
            let v = p.latency.check_window(now);
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
        assert!(p.rate.check_floor("p", [100, 0, 0], [1, 0, 0], s).is_none());
        assert!(p
            .rate
            .check_floor("p", [100, 0, 0], [1, 0, 0], 2 * s)
            .is_none());
        let m = p.rate.check_floor("p", [200, 0, 0], [2, 0, 0], 3 * s);
        assert!(m.unwrap().contains("rate_min=1048576B/s not met"));
    }

    /// The job of tests/run/run_thinktime_iotime.rs's rate_ignore_thinktime test, run on
    /// a simulated clock: 200 IOPS for 3 s with a 0.5 s pause after each 1 s of I/O.
    /// `late(i)` is how long the host keeps the worker from its `i`-th step (a
    /// preemption), and `pause_end(t0, us)` when a pause begun at `t0` ends. Returns the
    /// I/Os issued.
    fn simulate(
        ignore: bool,
        late: impl Fn(u64) -> u64,
        pause_end: impl Fn(u64, u64) -> u64,
    ) -> u64 {
        let mut args = vec![
            ("rate_iops", "200"),
            ("bs", "4k"),
            ("thinktime", "500ms"),
            ("thinktime_iotime", "1"),
        ];
        if ignore {
            args.push(("rate_ignore_thinktime", "1"));
        }
        let mut p = pacer(&args);
        let start = 1_000_000_000u64;
        let end = start + 3_000_000_000;
        p.start(start);
        let (mut now, mut ios, mut step) = (start, 0, 0);
        while now < end {
            now += late(step);
            step += 1;
            if p.think.due_at(now) {
                let t1 = pause_end(now, 500_000);
                p.paused(now, t1);
                now = now.max(t1);
                continue;
            }
            let (d, wait) = p.choose(Ddir::Read, now);
            if wait > 0 {
                now = (now + wait).min(end);
                continue;
            }
            p.issued(d, 4096);
            p.completed(d, 1000, ("f", 0, 4096));
            ios += 1;
            now += 20_000;
        }
        ios
    }

    #[test]
    fn rate_ignore_thinktime_keeps_the_rate_on_a_slow_host() {
        let on_time = |t0: u64, us: u64| t0 + us * 1000;
        // A quiet host: pauses at 1.5 s, 300 + 200 I/Os (fio 3.33: about 500).
        let quiet = simulate(true, |_| 0, on_time);
        assert!((495..=505).contains(&quiet), "{quiet}");
        // Without rate_ignore_thinktime the job catches up after its pause.
        let caught_up = simulate(false, |_| 0, on_time);
        assert!((595..=605).contains(&caught_up), "{caught_up}");
        // A late first I/O, a long preemption before or during a pause, a pause that
        // overshoots: the job is behind and catches up, never ahead of its rate.
        for (name, n) in [
            (
                "first I/O 1.2 s late",
                simulate(true, |i| if i == 0 { 1_200_000_000 } else { 0 }, on_time),
            ),
            (
                "first I/O 2 s late",
                simulate(true, |i| if i == 0 { 2_000_000_000 } else { 0 }, on_time),
            ),
            (
                "preempted 400 ms at I/O 290",
                simulate(true, |i| if i == 290 { 400_000_000 } else { 0 }, on_time),
            ),
            (
                "pause overshoots 300 ms",
                simulate(true, |_| 0, |t0, us| t0 + us * 1000 + 300_000_000),
            ),
            (
                "every step 3 ms late",
                simulate(true, |_| 3_000_000, on_time),
            ),
        ] {
            assert!((430..=620).contains(&n), "{name}: {n} I/Os");
        }
        // The clock read at a pause's end behind the one at its start (a time-stamp
        // counter read on another CPU): a pause of nothing, not one of 584 years that
        // puts the next I/O beyond the runtime.
        let back = simulate(true, |_| 0, |t0, _| t0 - 2_000);
        assert!(back >= 400, "{back} I/Os after a backward clock step");
    }
}
