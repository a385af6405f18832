//! The hung-I/O watchdog (iobench's own; fio waits forever on a hung device). Two halves:
//!
//! - [`Watch`], in the worker, keeps the issue time of each I/O in flight (the times the
//!   worker stamps for latency anyway) and publishes the oldest on the live board with
//!   relaxed stores: a synchronous engine's I/O as it is queued, an asynchronous engine's
//!   oldest when the worker goes to wait for completions. No lock, no system call and no
//!   scan per I/O: finding the oldest walks a queue of issues in order, amortised O(1).
//! - [`Monitor`], in the collector (main process), reads those on its loop a few times a
//!   second. An I/O outstanding longer than `io_stall_warn` gets one warning on stderr
//!   (job, file, offset, size, age, how many are stuck) and a `[stalled=N]` on the status
//!   line; one outstanding longer than `io_timeout` marks the job timed out and stops its
//!   worker (SIGTERM to a process; the stop flag and [`WAKE_SIGNAL`] to a thread), so that
//!   an interruptible wait or call returns EINTR. The worker ends with ETIMEDOUT and
//!   reports what completed before; its hung I/Os are abandoned to the kernel, with their
//!   buffers, never freed under it. (A call the kernel does not interrupt, such as a read
//!   from a hung disk in uninterruptible sleep, still holds its worker; a second SIGINT
//!   ends the run then.)
//!
//! Detection lives in the collector because a worker stuck in a system call (a sync
//! engine's pread, a blocking wait) cannot look at its own clock.

use super::spawn::CloneSpec;
use crate::engine::{IoUnit, Op};
use crate::job::Job;
use crate::stats::board::Slot;

/// The signal that wakes a thread worker (`thread=1`) from a hung call once its job timed
/// out: its handler does nothing, and is installed without SA_RESTART, so the call
/// returns EINTR. (SIGURG: ignored by default, never sent to a benchmark otherwise.)
pub const WAKE_SIGNAL: libc::c_int = libc::SIGURG;

extern "C" fn on_wake(_sig: libc::c_int) {}

/// Installs the wake signal's handler (once per process is enough; repeating is harmless).
fn install_wake() {
    // SAFETY: a zeroed sigaction with a handler that does nothing and an empty mask is
    // valid; no SA_RESTART, so a blocked call in the woken thread returns EINTR.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_wake as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(WAKE_SIGNAL, &sa, std::ptr::null_mut());
    }
}

/// Called by a thread worker as it starts: records it, so a timeout can wake it.
pub fn note_thread(thread_number: u64) {
    if let Some(s) = crate::stats::board::slot(thread_number) {
        // SAFETY: pthread_self has no preconditions.
        s.set_thread(unsafe { libc::pthread_self() } as u64);
    }
}

/// The errno a timed-out job ends with.
pub const ETIMEDOUT: i32 = libc::ETIMEDOUT;

/// The job's error text for a timed-out I/O, in fio's `file:…, func=…, error=…` form.
pub fn timeout_verror() -> String {
    format!(
        "file:watchdog.rs, func=io_timeout, error={}",
        crate::job::errors::strerror(ETIMEDOUT)
    )
}

/// The worker's half: issue times of the I/Os in flight, the oldest published.
pub struct Watch {
    /// The clone's board slot; None when the watchdog is off (then every call returns at
    /// once).
    slot: Option<&'static Slot>,
    /// The engine completes each I/O inside `queue` (one in flight at most).
    sync: bool,
    warn_ns: u64,
    /// An asynchronous engine's I/Os in flight, oldest first.
    order: IssueOrder,
    /// The issue time published now (0: none).
    published: u64,
}

impl Watch {
    /// A watch over a pool of `depth` units, for `job`'s clone with board slot `slot`.
    pub fn new(job: &Job, depth: usize, sync: bool, slot: Option<&'static Slot>) -> Self {
        let w = &job.exec.watchdog;
        let on = !w.off();
        Watch {
            slot: slot.filter(|_| on),
            sync,
            warn_ns: w.stall_warn_us.saturating_mul(1000),
            order: IssueOrder::new(if on && !sync { depth } else { 0 }),
            published: 0,
        }
    }

    /// A synchronous engine is about to perform `u` in its `queue` call: publish it as the
    /// one I/O in flight (an asynchronous engine's I/Os count from their commit).
    #[inline]
    pub fn queuing(&mut self, u: &IoUnit) {
        if let (Some(s), true) = (self.slot, self.sync) {
            let t = u.start_ns.max(1);
            s.set_oldest(t, u.file, dir_of(u), u.offset, u.len as u64);
            self.published = t;
        }
    }

    /// An asynchronous engine's unit `slot` went to the kernel at `t`.
    #[inline]
    pub fn issued(&mut self, slot: u32, t: u64) {
        if self.slot.is_some() && !self.sync {
            self.order.issued(slot, t);
        }
    }

    /// Unit `slot` completed.
    #[inline]
    pub fn completed(&mut self, slot: u32) {
        let Some(s) = self.slot else { return };
        if self.sync {
            s.clear_oldest();
            self.published = 0;
        } else {
            self.order.completed(slot);
        }
    }

    /// The worker goes to wait for completions with `inflight` I/Os in flight: publish the
    /// oldest and, once it is past the warning threshold, how many are.
    pub fn waiting(&mut self, pool: &[IoUnit], now: u64, inflight: usize) {
        let Some(s) = self.slot else { return };
        if self.sync {
            return;
        }
        match self.order.oldest() {
            Some((i, t)) => {
                if t != self.published {
                    let u = &pool[i];
                    s.set_oldest(t, u.file, dir_of(u), u.offset, u.len as u64);
                    self.published = t;
                }
                // Counting is a scan of the pool, so it is only done once stuck.
                let stuck = if self.warn_ns > 0 && now.saturating_sub(t) >= self.warn_ns {
                    self.order.older_than(now, self.warn_ns)
                } else {
                    0
                };
                s.set_waiting(now, inflight as u32, stuck);
            }
            None if self.published != 0 => {
                s.clear_oldest();
                self.published = 0;
            }
            None => {}
        }
    }

    /// True once the collector timed the job out.
    #[inline]
    pub fn timed_out(&self) -> bool {
        self.slot.is_some_and(|s| s.timed_out())
    }

    /// True when a synchronous I/O's result `res` is the watchdog's interruption of a
    /// hung call (EINTR after a timeout): it is not a result, and is left out.
    #[inline]
    pub fn cut_short(&self, res: i64) -> bool {
        res == -(libc::EINTR as i64) && self.timed_out()
    }
}

/// The I/Os in flight in the order they were issued, so that the oldest is found in
/// amortised O(1): no scan and no allocation per I/O.
struct IssueOrder {
    /// Per pool slot: when its I/O was issued (0: not in flight).
    since: Vec<u64>,
    /// The issues in order, as (pool slot, issue time), in a ring a power of two long
    /// with room for twice the depth. An entry whose slot no longer holds that issue
    /// time is of a completed I/O; those are dropped from the front as the oldest is
    /// looked for. (A slot reissued at the same time stands for an I/O issued then, so
    /// its entry is still right.)
    ring: Vec<(u32, u64)>,
    /// Positions of the first and one past the last entry (counting up; the ring index
    /// is the position masked).
    head: usize,
    tail: usize,
}

impl IssueOrder {
    /// For a pool of `depth` units (0: nothing is tracked).
    fn new(depth: usize) -> Self {
        let cap = if depth == 0 {
            0
        } else {
            (2 * depth + 1).next_power_of_two()
        };
        IssueOrder {
            since: vec![0; depth],
            ring: vec![(0, 0); cap],
            head: 0,
            tail: 0,
        }
    }

    /// Unit `slot` was issued at `t`.
    #[inline]
    fn issued(&mut self, slot: u32, t: u64) {
        let Some(since) = self.since.get_mut(slot as usize) else {
            return;
        };
        let t = t.max(1);
        *since = t;
        if self.tail - self.head == self.ring.len() {
            self.compact();
        }
        let mask = self.ring.len() - 1;
        self.ring[self.tail & mask] = (slot, t);
        self.tail += 1;
    }

    /// Unit `slot` completed.
    #[inline]
    fn completed(&mut self, slot: u32) {
        if let Some(t) = self.since.get_mut(slot as usize) {
            *t = 0;
        }
    }

    /// True when ring entry (slot, t) is of an I/O still in flight.
    #[inline]
    fn live(&self, (slot, t): (u32, u64)) -> bool {
        self.since[slot as usize] == t
    }

    /// The pool slot and issue time of the oldest I/O in flight, dropping the entries of
    /// completed ones on the way.
    #[inline]
    fn oldest(&mut self) -> Option<(usize, u64)> {
        let mask = self.ring.len().wrapping_sub(1);
        while self.head != self.tail {
            let e = self.ring[self.head & mask];
            if self.live(e) {
                return Some((e.0 as usize, e.1));
            }
            self.head += 1;
        }
        None
    }

    /// How many in flight were issued at least `age_ns` before `now` (a scan of the
    /// pool: only done once the oldest is that old).
    fn older_than(&self, now: u64, age_ns: u64) -> u32 {
        self.since
            .iter()
            .filter(|&&x| x != 0 && now.saturating_sub(x) >= age_ns)
            .count() as u32
    }

    /// Drops every entry whose I/O completed, keeping the order (the ring is full: an I/O
    /// that hangs while others go on keeps it from emptying at the front). At most
    /// `depth` entries are live, so this frees at least half the ring.
    #[cold]
    fn compact(&mut self) {
        let mask = self.ring.len() - 1;
        let mut kept = self.head;
        for at in self.head..self.tail {
            let e = self.ring[at & mask];
            if self.live(e) {
                self.ring[kept & mask] = e;
                kept += 1;
            }
        }
        self.tail = kept;
    }
}

/// The unit's direction as the board carries it (3: a sync).
fn dir_of(u: &IoUnit) -> u32 {
    match u.op {
        Op::Rw(d) => d as u32,
        Op::Sync { .. } => 3,
    }
}

/// One watched clone, in the collector.
struct Watched {
    slot: &'static Slot,
    warn_ns: u64,
    /// When it acts: `io_timeout` and its grace.
    timeout_ns: u64,
    /// The grace (an engine that bounds its requests itself), left out of the messages,
    /// which name `io_timeout` as the job gave it.
    grace_ns: u64,
    job: String,
    files: Vec<String>,
    /// Warned about a stall already (once per clone).
    warned: bool,
    /// Timed out already.
    fired: bool,
    /// Since when its worker process has been seen stopped (SIGSTOP, a debugger).
    stopped_since: Option<u64>,
    /// When it was told to end after being stopped too long (SIGTERM, then SIGCONT).
    ended_at: Option<u64>,
}

/// The collector's half: watches the clones of one run-together phase.
pub struct Monitor {
    clones: Vec<Option<Watched>>,
}

impl Monitor {
    /// A monitor for `specs`, or None when no clone has the watchdog on.
    pub fn new(specs: &[CloneSpec<'_>]) -> Option<Monitor> {
        let clones: Vec<Option<Watched>> = specs
            .iter()
            .map(|s| {
                let w = &s.job.exec.watchdog;
                if w.off() {
                    return None;
                }
                Some(Watched {
                    slot: crate::stats::board::slot(s.thread_number)?,
                    warn_ns: w.stall_warn_us.saturating_mul(1000),
                    timeout_ns: w.timeout_us.saturating_add(w.grace_us).saturating_mul(1000),
                    grace_ns: w.grace_us.saturating_mul(1000),
                    job: s.job.name.clone(),
                    files: s.targets.iter().map(|t| t.path.clone()).collect(),
                    warned: false,
                    fired: false,
                    stopped_since: None,
                    ended_at: None,
                })
            })
            .collect();
        if specs.iter().any(|s| s.job.exec.thread) {
            install_wake();
        }
        clones
            .iter()
            .any(Option::is_some)
            .then_some(Monitor { clones })
    }

    /// Looks at every running clone once; `stop(i)` stops clone `i`'s worker, `pid(i)`
    /// is its worker process (None for a thread).
    pub fn tick(&mut self, mut stop: impl FnMut(usize), pid: impl Fn(usize) -> Option<i32>) {
        let now = crate::clock::now_ns();
        for (i, c) in self.clones.iter_mut().enumerate() {
            let Some(c) = c else { continue };
            let running = !matches!(c.slot.state_letter(), '\0' | 'E' | '_' | 'X');
            if let Some(p) = pid(i).filter(|_| running && c.timeout_ns > 0) {
                check_stopped(c, p, now);
            }
            let oldest = c.slot.oldest().filter(|_| running && !c.fired);
            let Some(o) = oldest else {
                c.slot.set_stalled(0);
                continue;
            };
            let age = now.saturating_sub(o.issued_ns);
            let stalled = stalled_count(&o, now, age, c.warn_ns);
            c.slot.set_stalled(stalled);
            if stalled > 0 && !c.warned {
                c.warned = true;
                eprintln!(
                    "iobench: job '{}': I/O stalled: {}; {stalled} I/O{} stuck \
                     (io_stall_warn={})",
                    c.job,
                    describe(&o, &c.files, age),
                    if stalled == 1 { "" } else { "s" },
                    secs(c.warn_ns)
                );
            }
            if c.timeout_ns > 0 && age >= c.timeout_ns {
                c.fired = true;
                c.slot.set_stalled(0);
                eprintln!(
                    "iobench: job '{}': I/O timed out (io_timeout={}): {}; ending the job",
                    c.job,
                    secs(c.timeout_ns - c.grace_ns),
                    describe(&o, &c.files, age)
                );
                c.slot.set_timed_out();
                stop(i);
                if let Some(t) = c.slot.thread() {
                    // SAFETY: the id is a scoped worker thread of this run, which the
                    // collector joins only after it finished, so the id is still valid.
                    unsafe { libc::pthread_kill(t as libc::pthread_t, WAKE_SIGNAL) };
                }
            }
        }
    }
}

/// A worker process that is stopped (SIGSTOP, a debugger) makes no progress and would
/// hold the run forever, whatever its I/Os: stopped for `io_timeout`, it is marked timed
/// out and told to end (SIGTERM, then SIGCONT so that it can), and reports what it did;
/// one that has not ended `io_timeout` later is killed.
fn check_stopped(c: &mut Watched, pid: i32, now: u64) {
    if let Some(t) = c.ended_at {
        if now.saturating_sub(t) >= c.timeout_ns {
            c.ended_at = None;
            eprintln!(
                "iobench: job '{}': worker process {pid} did not end {} after it was told \
                 to; killing it",
                c.job,
                secs(c.timeout_ns - c.grace_ns)
            );
            // SAFETY: signals our own child, alive or a zombie until the collector reaps it.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        return;
    }
    if !process_stopped(pid) {
        c.stopped_since = None;
        return;
    }
    let since = *c.stopped_since.get_or_insert(now);
    if now.saturating_sub(since) < c.timeout_ns {
        return;
    }
    eprintln!(
        "iobench: job '{}': worker process {pid} is stopped and made no progress for {} \
         (io_timeout={}); ending the job",
        c.job,
        secs(now - since),
        secs(c.timeout_ns - c.grace_ns)
    );
    c.fired = true;
    c.slot.set_stalled(0);
    c.slot.set_timed_out();
    c.ended_at = Some(now);
    // SAFETY: signals our own child, alive or a zombie until the collector reaps it; the
    // SIGTERM is pending when SIGCONT lets it run, so it ends at once.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
        libc::kill(pid, libc::SIGCONT);
    }
}

/// True when process `pid` is stopped (state T) or stopped by a tracer (t).
fn process_stopped(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses and may hold any byte.
    stat.rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next())
        .is_some_and(|st| st == "T" || st == "t")
}

/// How many of a clone's I/Os are stalled: none while its oldest is younger than the
/// threshold; every one in flight when the worker has been waiting longer than it (all
/// were issued before it waited); else those the worker counted, at least the oldest.
fn stalled_count(o: &crate::stats::board::Oldest, now: u64, age: u64, warn_ns: u64) -> u32 {
    if warn_ns == 0 || age < warn_ns {
        return 0;
    }
    if o.waiting_ns > 0 && now.saturating_sub(o.waiting_ns) >= warn_ns {
        return o.inflight.max(1);
    }
    o.stuck.max(1)
}

/// "read of 4096 bytes at offset 8192 of file F, outstanding for 1.2 s".
fn describe(o: &crate::stats::board::Oldest, files: &[String], age_ns: u64) -> String {
    let what = match o.dir {
        0 => "read",
        1 => "write",
        2 => "trim",
        _ => "sync",
    };
    let file = files.get(o.file as usize).map_or("?", |s| s.as_str());
    format!(
        "{what} of {} bytes at offset {} of file {file}, outstanding for {:.1} s",
        o.len,
        o.offset,
        age_ns as f64 / 1e9
    )
}

/// A threshold as the option would be written (`1s`, `1.5s`, `500ms`).
fn secs(ns: u64) -> String {
    if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}us", ns / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::board::Oldest;

    fn oldest(issued_ns: u64, inflight: u32, stuck: u32, waiting_ns: u64) -> Oldest {
        Oldest {
            issued_ns,
            file: 0,
            dir: 0,
            offset: 0,
            len: 4096,
            inflight,
            stuck,
            waiting_ns,
        }
    }

    #[test]
    fn stalled_counts() {
        let s = 1_000_000_000;
        // Younger than the threshold: nothing stalled.
        assert_eq!(
            stalled_count(&oldest(10 * s, 4, 0, 10 * s), 10 * s + s / 2, s / 2, s),
            0
        );
        // Waiting longer than the threshold: all in flight are stuck.
        assert_eq!(
            stalled_count(&oldest(10 * s, 4, 0, 10 * s), 12 * s, 2 * s, s),
            4
        );
        // Still looping: the worker's own count, at least the oldest.
        assert_eq!(
            stalled_count(&oldest(10 * s, 4, 2, 12 * s), 12 * s, 2 * s, s),
            2
        );
        assert_eq!(
            stalled_count(&oldest(10 * s, 4, 0, 12 * s), 12 * s, 2 * s, s),
            1
        );
        // Off.
        assert_eq!(
            stalled_count(&oldest(10 * s, 4, 4, 0), 99 * s, 89 * s, 0),
            0
        );
    }

    #[test]
    fn the_oldest_in_flight_is_found_in_issue_order() {
        let mut o = IssueOrder::new(4);
        assert_eq!(o.oldest(), None);
        // Slot 2 hangs from t=10 while the others complete and are reissued many times
        // over (the ring fills and is compacted around it).
        o.issued(2, 10);
        let mut t = 11;
        for _ in 0..100 {
            for s in [0, 1, 3] {
                o.issued(s, t);
                t += 1;
            }
            assert_eq!(o.oldest(), Some((2, 10)));
            for s in [0, 1, 3] {
                o.completed(s);
            }
        }
        assert!(o.tail - o.head <= o.ring.len());
        // Once it completes, the next oldest is the earliest of those still in flight.
        o.issued(3, t);
        o.issued(0, t + 1);
        o.completed(2);
        assert_eq!(o.oldest(), Some((3, t)));
        assert_eq!(o.older_than(t + 5, 5), 1);
        assert_eq!(o.older_than(t + 5, 4), 2);
        // A slot reissued at the time of its earlier entry is still in flight then.
        o.completed(3);
        o.issued(3, t + 1);
        assert_eq!(o.oldest(), Some((0, t + 1)));
        o.completed(0);
        assert_eq!(o.oldest(), Some((3, t + 1)));
        o.completed(3);
        assert_eq!(o.oldest(), None);
    }

    #[test]
    fn thresholds_read_as_written() {
        assert_eq!(secs(30_000_000_000), "30s");
        assert_eq!(secs(1_500_000_000), "1500ms");
        assert_eq!(secs(250_000), "250us");
    }
}
