//! The rate part of pacing, as fio 3.33 paces a job: `rate`/`rate_iops` caps with linear
//! or Poisson (`rate_process`) arrivals and fio's choice of direction in a mixed job, and
//! the `rate_min`/`rate_iops_min` floors checked once per `rate_cycle`.
//!
//! The hot-path calls ([`Rate::choose`], [`Rate::issued`]) are integer arithmetic only
//! (a Poisson gap draws one random number): no allocation, lock or system call.

#![warn(missing_docs, clippy::cast_possible_truncation)]

use crate::defs::Ddir;
use crate::gen::rand::{clone_seeds, FRand, Stream};
use crate::job::Job;

/// A job clone's rate caps and floors.
#[derive(Debug, Clone)]
pub struct Rate {
    /// When the rates count from (the job's start, or the end of its ramp).
    epoch_ns: u64,
    /// The cap per direction in bytes/s (0: none); `rate_iops` is turned into bytes by
    /// the direction's smallest block.
    bps: [u64; 3],
    min_bs: [u64; 3],
    poisson: bool,
    poisson_rng: [FRand; 3],
    /// Poisson arrivals: the due time of the last I/O, in µs from the epoch.
    last_usec: [u64; 3],
    /// Bytes issued since the epoch.
    bytes: [u64; 3],
    /// When the next I/O of each direction is due, in µs from the epoch.
    next_due_us: [u64; 3],
    /// rwmixread/rwmixwrite of a mixed job (0 for a direction it never issues).
    mix: [u32; 2],
    // The floors: `rate_min`/`rate_iops_min`, checked every `rate_cycle` ms.
    min_bps: [u64; 3],
    min_iops: [u64; 3],
    cycle_ms: u64,
    check_bytes: [u64; 3],
    check_blocks: [u64; 3],
    check_time_ns: [u64; 3],
    start_ns: u64,
    /// `arrival=fixed|poisson`: each I/O is due at its scheduled time whatever the
    /// completions do (the schedule is this one; only the waiting and the accounting
    /// differ from fio's closed loop, see [`Rate::due_ns`]).
    pub open_loop: bool,
}

impl Rate {
    /// The rates of clone `thread_number` of `job` (the Poisson streams are the clone's).
    pub fn new(job: &Job, thread_number: u64) -> Self {
        let x = &job.exec;
        let (bps, iops) = (x.rate.bps, x.rate.iops);
        let min_bs = [
            job.workload.bs[0].0.max(1),
            job.workload.bs[1].0.max(1),
            job.workload.bs[2].0.max(1),
        ];
        let mut cap = [0u64; 3];
        for d in 0..3 {
            cap[d] = if bps[d] > 0 {
                bps[d]
            } else {
                iops[d] * min_bs[d]
            };
        }
        let seeds = clone_seeds(&job.workload, thread_number);
        let prng = |s: Stream| FRand::new(seeds[s as usize], false);
        Rate {
            epoch_ns: 0,
            bps: cap,
            min_bs,
            poisson: x.rate.poisson,
            poisson_rng: [
                prng(Stream::Poisson),
                prng(Stream::Poisson2),
                prng(Stream::Poisson3),
            ],
            last_usec: [0; 3],
            bytes: [0; 3],
            next_due_us: [0; 3],
            mix: if matches!(
                job.workload.pattern,
                crate::defs::Pattern::ReadWrite | crate::defs::Pattern::RandRw
            ) {
                [job.workload.rwmix_read, 100 - job.workload.rwmix_read]
            } else {
                [0, 0]
            },
            min_bps: x.rate.min_bps,
            min_iops: x.rate.min_iops,
            cycle_ms: x.rate.cycle_ms,
            check_bytes: [0; 3],
            check_blocks: [0; 3],
            check_time_ns: [0; 3],
            start_ns: 0,
            open_loop: x.rate.open_loop,
        }
    }

    /// Starts (or, when ramp_time ends, restarts) the rates: they count from `now_ns`.
    pub fn start(&mut self, now_ns: u64) {
        self.epoch_ns = now_ns;
        self.start_ns = now_ns;
        self.bytes = [0; 3];
        self.next_due_us = [0; 3];
        self.last_usec = [0; 3];
        self.check_bytes = [0; 3];
        self.check_blocks = [0; 3];
    }

    /// True when a cap is set for any direction.
    #[inline]
    pub fn capped(&self) -> bool {
        self.bps.iter().any(|&b| b > 0)
    }

    /// Nanoseconds to wait before an I/O of `ddir` may be issued (0: now).
    #[inline]
    pub fn wait_ns(&self, ddir: Ddir, now_ns: u64) -> u64 {
        let d = ddir as usize;
        if self.bps[d] == 0 {
            return 0;
        }
        let due = self.epoch_ns + self.next_due_us[d] * 1000;
        due.saturating_sub(now_ns)
    }

    /// The scheduled start of the next I/O of `ddir` on the worker clock (open-loop
    /// arrivals measure its latency from here): the same due time [`Rate::wait_ns`] waits
    /// for, so an I/O issued late, behind a full queue, keeps its place in the schedule.
    #[inline]
    pub fn due_ns(&self, ddir: Ddir) -> u64 {
        self.epoch_ns + self.next_due_us[ddir as usize] * 1000
    }

    /// How many arrivals of `ddir` an I/O due at `due_ns` and started at `now_ns` is
    /// behind: whole mean gaps between arrivals (0 when it starts within one gap).
    #[inline]
    pub fn behind(&self, ddir: Ddir, due_ns: u64, now_ns: u64) -> u64 {
        let d = ddir as usize;
        let late = now_ns.saturating_sub(due_ns);
        if late == 0 || self.bps[d] == 0 {
            return 0;
        }
        // late × rate / block, in ns and bytes per second: u128 keeps it exact.
        let n = u128::from(late) * u128::from(self.bps[d])
            / (u128::from(self.min_bs[d]) * 1_000_000_000);
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// fio's rate_ddir: the direction to issue next and how long to wait for it. A mixed
    /// job ahead of its rate in `ddir` switches to the other direction when that one is
    /// due, or, when both are ahead, waits for whichever is due first.
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
        let bps = self.bps[d];
        if bps == 0 {
            return;
        }
        self.bytes[d] += bytes;
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
            let b = self.bytes[d];
            (b / bps) * 1_000_000 + (b % bps) * 1_000_000 / bps
        };
    }

    /// `rate_ignore_thinktime`: counts the bytes the job would have issued in `ddir`
    /// during a pause of `paused_us` as issued (less one block, so the next I/O goes at
    /// once), so the job keeps its rate after the pause instead of catching up.
    pub fn skip(&mut self, ddir: Ddir, paused_us: u64) {
        let d = ddir as usize;
        let bps = self.bps[d];
        if paused_us == 0 || bps == 0 {
            return;
        }
        // bps × µs outgrows a u64 after 260 days at 200 IOPS of 4 KiB: u128, saturated.
        let missed = u128::from(bps) * u128::from(paused_us) / 1_000_000;
        let missed = u64::try_from(missed).unwrap_or(u64::MAX);
        let bs = self.min_bs[d];
        let us_per_io = bs * 1_000_000 / bps;
        let held_back = if us_per_io <= paused_us { bs } else { 0 };
        self.bytes[d] = self.bytes[d].saturating_add(missed.saturating_sub(held_back));
        self.last_usec[d] = self.last_usec[d].saturating_add(paused_us);
    }

    /// True when rate_min or rate_iops_min is set (the worker then checks after reaps).
    pub fn has_floor(&self) -> bool {
        self.min_bps
            .iter()
            .chain(self.min_iops.iter())
            .any(|&v| v > 0)
    }

    /// fio's rate_min/rate_iops_min check, once per `rate_cycle` after a 2 s settling
    /// time. `bytes`/`blocks` are the job's completed totals per direction. Returns the
    /// message when a floor was not met.
    pub fn check_floor(
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
}
