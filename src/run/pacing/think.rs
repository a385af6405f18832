//! The thinktime part of pacing, as fio 3.33 pauses a job: `thinktime` (spun for
//! `thinktime_spin`, slept for the rest) after `thinktime_blocks` issued or completed
//! I/Os (`thinktime_blocks_type`), or after `thinktime_iotime` of I/O; an engine may ask
//! for its own pause (cpuio). `thinkcycles` (fio 3.37) spins a count of loop turns after
//! every issued I/O.

#![warn(missing_docs, clippy::cast_possible_truncation)]

use crate::job::Job;

/// A job clone's thinktime state.
#[derive(Debug, Clone)]
pub struct Think {
    /// The pause, in µs (0: no thinktime).
    us: u64,
    spin_us: u64,
    blocks: u64,
    /// Blocks count at issue (`thinktime_blocks_type=issue`), else at completion.
    on_issue: bool,
    /// I/Os counted so far, and the count at the last pause.
    count: u64,
    last: u64,
    /// `thinktime_iotime` (µs, 0 when unset): pause after doing I/O this long, counted
    /// from the start of the last pause (or of the job); `thinktime_blocks` then only
    /// counts when it was set too.
    iotime_us: u64,
    blocks_set: bool,
    last_ns: u64,
    /// `rate_ignore_thinktime`: a pause does not leave the job behind its rate.
    pub rate_ignores: bool,
    /// `thinkcycles`: loop turns spun after each issued I/O.
    cycles: u64,
}

impl Think {
    /// The thinktime settings of `job`.
    pub fn new(job: &Job) -> Self {
        let t = &job.exec.think;
        Think {
            us: t.us,
            spin_us: t.spin_us,
            blocks: t.blocks,
            on_issue: t.on_issue,
            count: 0,
            last: 0,
            iotime_us: t.iotime_us,
            blocks_set: t.blocks_set,
            last_ns: 0,
            rate_ignores: t.rate_ignores,
            cycles: t.cycles,
        }
    }

    /// The job starts at `now_ns`: `thinktime_iotime` counts from the job's start, not
    /// from the end of a ramp.
    pub fn start(&mut self, now_ns: u64) {
        if self.last_ns == 0 {
            self.last_ns = now_ns;
        }
    }

    /// One I/O was issued: counted, then `thinkcycles` spun.
    #[inline]
    pub fn issued(&mut self) {
        if self.on_issue {
            self.count += 1;
        }
        if self.cycles > 0 {
            spin_cycles(self.cycles);
        }
    }

    /// One I/O completed.
    #[inline]
    pub fn completed(&mut self) {
        if !self.on_issue {
            self.count += 1;
        }
    }

    /// True when a pause is due: enough I/Os issued or completed since the last, or
    /// (`thinktime_iotime`) enough time since the last began.
    #[inline]
    pub fn due(&self) -> bool {
        if self.us == 0 {
            return false;
        }
        self.due_at(crate::clock::now_ns())
    }

    /// [`Think::due`] with the clock read at `now_ns` (the unit tests drive it).
    pub fn due_at(&self, now_ns: u64) -> bool {
        if self.us == 0 {
            return false;
        }
        if self.iotime_us > 0 {
            let since = now_ns.saturating_sub(self.last_ns);
            if since >= (self.iotime_us + self.us) * 1000 {
                return true;
            }
            // The default of one block would pause after every I/O: with iotime only
            // blocks the user set count.
            if !self.blocks_set {
                return false;
            }
        }
        self.count >= self.last + self.blocks
    }

    /// Takes the pause an engine asks for after each I/O (cpuio): `think_us` slept after
    /// every completed I/O, replacing the job's own thinktime settings, as fio's cpuio
    /// engine sets them.
    pub fn set_by_engine(&mut self, think_us: u64) {
        self.us = think_us;
        self.spin_us = 0;
        self.blocks = 1;
        self.on_issue = false;
        self.iotime_us = 0;
    }

    /// Pauses: spins `thinktime_spin`, sleeps the rest (or until `stop()`). Returns the
    /// clock at the pause's start and at its end.
    pub fn pause(&mut self, stop: impl Fn() -> bool) -> (u64, u64) {
        let t0 = crate::clock::now_ns();
        let spin = self.spin_us.min(self.us);
        if spin > 0 {
            while crate::clock::now_ns().saturating_sub(t0) < spin * 1000 {
                std::hint::spin_loop();
            }
        }
        let left = self.us - spin;
        if left > 0 {
            super::sleep_until(t0 + self.us * 1000, stop);
        }
        (t0, crate::clock::now_ns())
    }

    /// The pause that began at `t0_ns` ended at `t1_ns`: the counts start again, and the
    /// pause's length in µs is returned. A clock read at the end that is behind the one
    /// at the start (a time-stamp counter read on another CPU) makes a pause of 0, not
    /// a difference that wraps to centuries.
    pub fn ended(&mut self, t0_ns: u64, t1_ns: u64) -> u64 {
        self.last = self.count;
        if self.iotime_us > 0 {
            self.last_ns = t0_ns;
        }
        t1_ns.saturating_sub(t0_ns) / 1000
    }
}

/// Turns a loop `n` times, one spin-wait hint a turn, as fio's `thinkcycles` does (its
/// x86 `nop` is `rep; nop`, the PAUSE instruction that `spin_loop` emits), so the time it
/// takes is the CPU's, as long as fio's on the same machine.
#[inline(never)]
pub fn spin_cycles(n: u64) {
    for _ in 0..n {
        std::hint::spin_loop();
    }
}
