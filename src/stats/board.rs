//! The live board: one slot per job clone in memory shared with the forked workers, where
//! each worker publishes its progress (bytes and I/Os per direction, its state letter)
//! with plain relaxed stores, and the main process reads them to draw fio's status line
//! (`Jobs: 1 (f=1): [R(1)][45.5%][r=1024MiB/s][r=262k IOPS][eta 00m:06s]`).
//!
//! Only the worker writes its counters and only whole values, so no read-modify-write
//! and no lock sits on the I/O path; a reader may see one counter a few I/Os ahead of
//! another, which a status line does not mind.

use std::sync::atomic::AtomicPtr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// One clone's published progress (a cache line of its own, written by one worker).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Slot {
    bytes: [AtomicU64; 3],
    ios: [AtomicU64; 3],
    /// Per direction, the completion latencies recorded so far, as fio reads them for
    /// `steadystate=lat`: mean × samples (the bits of an f64, in ns) and samples. An
    /// interval's mean is the difference of two readings' sums over that of their counts.
    clat_sum_ns: [AtomicU64; 3],
    clat_count: [AtomicU64; 3],
    /// Board milliseconds when the clone's I/O began (0: not yet).
    started_ms: AtomicU64,
    /// The state letter as a char code (0: pending).
    state: AtomicU32,
    /// The snapshot generation the main process asked for last (see `stats::snapshot`).
    want: AtomicU64,
    /// The generation the clone's latest snapshot answers.
    answered: AtomicU64,
    /// Odd while the clone writes its snapshot buffer.
    seq: AtomicU64,
    /// Bytes of snapshot in the buffer (0: none yet).
    len: AtomicU64,
    /// The hung-I/O watchdog's view (see `run::watchdog`): what the worker last published
    /// of its oldest I/O in flight, and what the collector concluded.
    watch: WatchSlot,
}

/// The watchdog's fields of a slot. The worker writes the first group (relaxed stores to
/// its own slot), the collector the last two.
#[derive(Debug)]
struct WatchSlot {
    /// Run-clock ns when the oldest I/O in flight was issued (0: none in flight).
    oldest_ns: AtomicU64,
    oldest_offset: AtomicU64,
    oldest_len: AtomicU64,
    /// Its file (index into the clone's files) and direction.
    oldest_file: AtomicU32,
    oldest_dir: AtomicU32,
    /// I/Os in flight, and of them the ones the worker itself saw stuck.
    inflight: AtomicU32,
    stuck: AtomicU32,
    /// Run-clock ns when the worker last went to wait for completions.
    waiting_ns: AtomicU64,
    /// Stalled I/Os as the collector counts them (for the status line).
    stalled: AtomicU32,
    /// Set by the collector when an I/O outlived `io_timeout`.
    timed_out: AtomicU32,
    /// A thread worker's pthread id (0: a process), for waking it from a hung call.
    thread: AtomicU64,
}

/// The oldest I/O a clone has in flight, as published for the watchdog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Oldest {
    /// Run-clock ns when it was issued.
    pub issued_ns: u64,
    pub file: u32,
    pub dir: u32,
    pub offset: u64,
    pub len: u64,
    /// I/Os in flight and those the worker saw stuck when it last looked.
    pub inflight: u32,
    pub stuck: u32,
    /// Run-clock ns when the worker last went to wait for completions.
    pub waiting_ns: u64,
}

impl Slot {
    /// Publishes the running totals of direction `d`.
    #[inline]
    pub fn set_progress(&self, d: usize, bytes: u64, ios: u64) {
        self.bytes[d].store(bytes, Ordering::Relaxed);
        self.ios[d].store(ios, Ordering::Relaxed);
    }

    /// Publishes direction `d`'s completion latencies so far: their mean (ns) and count.
    #[inline]
    pub fn set_clat(&self, d: usize, mean_ns: f64, count: u64) {
        let sum = mean_ns * count as f64;
        self.clat_sum_ns[d].store(sum.to_bits(), Ordering::Relaxed);
        self.clat_count[d].store(count, Ordering::Relaxed);
    }

    /// Marks the clone as doing I/O, with the letter fio shows for its pattern.
    pub fn set_running(&self, letter: char) {
        self.started_ms.store(board_ms().max(1), Ordering::Relaxed);
        self.state.store(letter as u32, Ordering::Relaxed);
    }

    /// Marks the clone as done with its I/O (`E` until the main process reaps it).
    pub fn set_exited(&self) {
        self.state.store('E' as u32, Ordering::Relaxed);
    }

    /// True when the main process asked for a snapshot this clone has not given yet: one
    /// relaxed load of the clone's own cache line, cheap enough for every loop turn.
    #[inline]
    pub fn wanted(&self) -> bool {
        self.want.load(Ordering::Relaxed) != self.answered.load(Ordering::Relaxed)
    }

    /// The clone's state letter (`\0` while pending).
    pub fn state_letter(&self) -> char {
        char::from_u32(self.state.load(Ordering::Relaxed)).unwrap_or('\0')
    }

    /// Publishes the I/O that is now the oldest in flight (`issued_ns` 0: none).
    #[inline]
    pub fn set_oldest(&self, issued_ns: u64, file: u32, dir: u32, offset: u64, len: u64) {
        let w = &self.watch;
        w.oldest_file.store(file, Ordering::Relaxed);
        w.oldest_dir.store(dir, Ordering::Relaxed);
        w.oldest_offset.store(offset, Ordering::Relaxed);
        w.oldest_len.store(len, Ordering::Relaxed);
        // Last, with release: a reader that sees this time sees the fields above.
        w.oldest_ns.store(issued_ns, Ordering::Release);
    }

    /// Marks that nothing is in flight.
    #[inline]
    pub fn clear_oldest(&self) {
        self.watch.oldest_ns.store(0, Ordering::Relaxed);
    }

    /// Publishes, as the worker goes to wait, how many I/Os are in flight and stuck.
    #[inline]
    pub fn set_waiting(&self, now_ns: u64, inflight: u32, stuck: u32) {
        let w = &self.watch;
        w.inflight.store(inflight, Ordering::Relaxed);
        w.stuck.store(stuck, Ordering::Relaxed);
        w.waiting_ns.store(now_ns, Ordering::Relaxed);
    }

    /// The oldest I/O in flight as last published, or None when there is none (or the
    /// worker replaced it while it was read).
    pub fn oldest(&self) -> Option<Oldest> {
        let w = &self.watch;
        let t = w.oldest_ns.load(Ordering::Acquire);
        if t == 0 {
            return None;
        }
        let o = Oldest {
            issued_ns: t,
            file: w.oldest_file.load(Ordering::Relaxed),
            dir: w.oldest_dir.load(Ordering::Relaxed),
            offset: w.oldest_offset.load(Ordering::Relaxed),
            len: w.oldest_len.load(Ordering::Relaxed),
            inflight: w.inflight.load(Ordering::Relaxed),
            stuck: w.stuck.load(Ordering::Relaxed),
            waiting_ns: w.waiting_ns.load(Ordering::Relaxed),
        };
        std::sync::atomic::fence(Ordering::Acquire);
        // Issue times only grow, so an unchanged time means the fields belong to it.
        (w.oldest_ns.load(Ordering::Relaxed) == t).then_some(o)
    }

    /// Sets the stalled count the status line shows (collector only).
    pub fn set_stalled(&self, n: u32) {
        if self.watch.stalled.load(Ordering::Relaxed) != n {
            self.watch.stalled.store(n, Ordering::Relaxed);
        }
    }

    /// Marks the clone's job as timed out (collector only).
    pub fn set_timed_out(&self) {
        self.watch.timed_out.store(1, Ordering::Release);
    }

    /// Records the calling thread as the clone's worker thread (`thread=1`).
    pub fn set_thread(&self, id: u64) {
        self.watch.thread.store(id, Ordering::Relaxed);
    }

    /// The clone's worker thread, if it runs as one.
    pub fn thread(&self) -> Option<u64> {
        Some(self.watch.thread.load(Ordering::Relaxed)).filter(|&t| t != 0)
    }

    /// True once the collector timed the clone's job out.
    #[inline]
    pub fn timed_out(&self) -> bool {
        self.watch.timed_out.load(Ordering::Acquire) != 0
    }

    /// Marks the clone as reaped: `_`, or `X` when it failed.
    pub fn set_done(&self, failed: bool) {
        let c = if failed { 'X' } else { '_' };
        self.state.store(c as u32, Ordering::Relaxed);
    }
}

/// What the main process knows of a clone before it runs (for its ETA).
#[derive(Debug, Clone, Copy, Default)]
pub struct Plan {
    pub bytes_total: u64,
    pub runtime_s: u64,
    pub time_based: bool,
    pub ramp_s: u64,
    pub files: u32,
    pub stonewall: bool,
    pub limits: RateLimits,
}

/// Bytes of serialized statistics one clone's snapshot buffer holds. Full histograms of
/// every direction take under half of it; pages are only touched when written.
pub const SNAP_CAP: usize = 1 << 20;

struct Board {
    slots: &'static [Slot],
    /// `slots.len()` buffers of `SNAP_CAP` bytes (null when that mapping failed).
    snaps: *mut u8,
    epoch: std::time::Instant,
}

// SAFETY: the slots are atomics in a mapping that lives for the whole process; the
// snapshot buffers are only touched under the sequence protocol of `publish`.
unsafe impl Sync for Board {}
// SAFETY: as above; the board is only ever shared, never moved out of.
unsafe impl Send for Board {}

/// The board of the current run. Each run (a plain run, or each point of a sweep) gets a
/// fresh, zeroed board sized for its clones; the previous one is leaked, not unmapped,
/// because `&'static` slots of it may still be held (its snapshot buffers are reserved
/// lazily, so a leaked board costs address space only).
static BOARD: AtomicPtr<Board> = AtomicPtr::new(std::ptr::null_mut());

/// The current run's board, if one was made.
fn board() -> Option<&'static Board> {
    // SAFETY: the pointer is null or comes from `Box::leak` in `init`, never freed.
    unsafe { BOARD.load(std::sync::atomic::Ordering::Acquire).as_ref() }
}

/// Milliseconds since the board was made (0 without a board).
pub fn board_ms() -> u64 {
    board()
        .map(|b| b.epoch.elapsed().as_millis() as u64)
        .unwrap_or(0)
}

/// Creates the board for `clones` clones, in shared memory so that workers forked later
/// write where the main process reads. Called at the start of each run, before any worker
/// starts, so every run (each point of a sweep too) starts from a zeroed board; without
/// it (or if the mapping fails) nothing is published and no status line is drawn.
pub fn init(clones: usize) {
    if clones == 0 {
        BOARD.store(std::ptr::null_mut(), std::sync::atomic::Ordering::Release);
        return;
    }
    let len = clones * std::mem::size_of::<Slot>();
    // A shared anonymous mapping, never unmapped: the board lives as long as the process.
    let Ok(p) = crate::shm::anonymous(len, crate::shm::Sharing::Shared, false) else {
        BOARD.store(std::ptr::null_mut(), std::sync::atomic::Ordering::Release);
        return;
    };
    // SAFETY: the mapping holds `clones` zeroed (atomics of zero, a valid Slot), suitably
    // aligned (page-aligned) slots.
    let slots = unsafe { std::slice::from_raw_parts(p as *const Slot, clones) };
    // Reserved lazily, so unused snapshot buffers cost address space only.
    let snaps = crate::shm::anonymous(clones * SNAP_CAP, crate::shm::Sharing::Shared, true)
        .unwrap_or(std::ptr::null_mut());
    let board = Box::leak(Box::new(Board {
        slots,
        snaps,
        epoch: std::time::Instant::now(),
    }));
    BOARD.store(board, std::sync::atomic::Ordering::Release);
}

/// Asks every clone for a snapshot of its statistics; returns the generation their
/// answers will carry, or None when the board cannot carry snapshots. Main process only.
pub fn request() -> Option<u64> {
    let b = board()?;
    if b.snaps.is_null() {
        return None;
    }
    let g = b
        .slots
        .iter()
        .map(|s| s.want.load(Ordering::Relaxed))
        .max()
        .unwrap_or(0)
        + 1;
    for s in b.slots {
        s.want.store(g, Ordering::Release);
    }
    Some(g)
}

/// Clone `i`'s (0-based) progress toward generation `g`: `Some(true)` when its snapshot
/// answers it, `Some(false)` while it may still answer, None when it never will (not
/// started, or done with its I/O).
pub fn answer_state(i: usize, g: u64) -> Option<bool> {
    let s = board()?.slots.get(i)?;
    if s.answered.load(Ordering::Acquire) >= g {
        return Some(true);
    }
    match s.state.load(Ordering::Relaxed) {
        0 => None,
        c if c == 'E' as u32 || c == '_' as u32 || c == 'X' as u32 => None,
        _ => Some(false),
    }
}

/// Writes `bytes` (a clone's serialized statistics) into `slot`'s buffer as the answer to
/// the latest request. Only the clone that owns the slot calls this.
pub fn publish(slot: &Slot, bytes: &[u8]) {
    let Some(b) = board() else { return };
    let want = slot.want.load(Ordering::Acquire);
    let base = b.slots.as_ptr() as usize;
    let i = (slot as *const Slot as usize).wrapping_sub(base) / std::mem::size_of::<Slot>();
    if !b.snaps.is_null() && i < b.slots.len() && bytes.len() <= SNAP_CAP {
        let s = slot.seq.load(Ordering::Relaxed);
        slot.seq.store(s + 1, Ordering::Relaxed);
        std::sync::atomic::fence(Ordering::Release);
        // SAFETY: buffer `i` holds SNAP_CAP bytes and `bytes` fits; this clone is its only
        // writer, and a reader that overlaps this copy sees the odd sequence and retries.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.snaps.add(i * SNAP_CAP), bytes.len())
        };
        slot.len.store(bytes.len() as u64, Ordering::Relaxed);
        slot.seq.store(s + 2, Ordering::Release);
    }
    slot.answered.store(want, Ordering::Release);
}

/// A copy of clone `i`'s latest snapshot, if it published one and no write overlapped
/// the copy.
pub fn read_snapshot(i: usize) -> Option<Vec<u8>> {
    let b = board()?;
    let s = b.slots.get(i)?;
    if b.snaps.is_null() {
        return None;
    }
    for _ in 0..50 {
        let s1 = s.seq.load(Ordering::Acquire);
        if s1 % 2 == 1 {
            std::thread::sleep(std::time::Duration::from_micros(200));
            continue;
        }
        let len = (s.len.load(Ordering::Relaxed) as usize).min(SNAP_CAP);
        if len == 0 {
            return None;
        }
        let mut v = vec![0u8; len];
        // SAFETY: buffer `i` holds SNAP_CAP >= len bytes; a write that overlaps this copy
        // changes the sequence, and the copy is then thrown away.
        unsafe { std::ptr::copy_nonoverlapping(b.snaps.add(i * SNAP_CAP), v.as_mut_ptr(), len) };
        std::sync::atomic::fence(Ordering::Acquire);
        if s.seq.load(Ordering::Relaxed) == s1 {
            return Some(v);
        }
    }
    None
}

/// The slot of the clone with fio thread number `thread_number` (1-based), if any.
pub fn slot(thread_number: u64) -> Option<&'static Slot> {
    let b = board()?;
    b.slots.get((thread_number as usize).checked_sub(1)?)
}

/// Bytes done per direction by every clone together, as published so far: the MPI
/// runner's progress timeline (first-done throughput). Main process only.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn total_bytes() -> [u64; 3] {
    let mut out = [0u64; 3];
    if let Some(b) = board() {
        for s in b.slots {
            for (o, v) in out.iter_mut().zip(&s.bytes) {
                *o += v.load(Ordering::Relaxed);
            }
        }
    }
    out
}

/// Reads every clone's slot into the status line's view, with `plans` (one per clone,
/// in thread-number order).
pub fn snapshot(plans: &[Plan]) -> (Vec<LiveJob>, u64) {
    let Some(b) = board() else {
        return (Vec::new(), 0);
    };
    let now = board_ms();
    let jobs = b
        .slots
        .iter()
        .zip(plans)
        .map(|(s, p)| {
            let load = |a: &[AtomicU64; 3]| {
                [
                    a[0].load(Ordering::Relaxed),
                    a[1].load(Ordering::Relaxed),
                    a[2].load(Ordering::Relaxed),
                ]
            };
            let state = match s.state.load(Ordering::Relaxed) {
                0 => JobState::Pending,
                c if c == 'E' as u32 => JobState::Exited,
                c if c == '_' as u32 => JobState::Done {
                    error: false,
                    killed: false,
                },
                c if c == 'X' as u32 => JobState::Done {
                    error: true,
                    killed: false,
                },
                c => JobState::Running(char::from_u32(c).unwrap_or('R')),
            };
            let started = s.started_ms.load(Ordering::Relaxed);
            LiveJob {
                state,
                bytes: load(&s.bytes),
                ios: load(&s.ios),
                bytes_total: p.bytes_total,
                elapsed_s: if started > 0 {
                    now.saturating_sub(started) / 1000
                } else {
                    0
                },
                runtime_s: p.runtime_s,
                time_based: p.time_based,
                ramp_s: p.ramp_s,
                files_open: p.files,
                stonewall: p.stonewall,
                limits: p.limits,
                stalled: s.watch.stalled.load(Ordering::Relaxed),
            }
        })
        .collect();
    (jobs, now)
}

/// One clone's totals over every direction, for the steady-state monitor.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub ios: u64,
    pub bytes: u64,
    /// Completion latencies recorded so far over every direction: their sum (ns, as
    /// fio's mean × samples) and count.
    pub clat_sum_ns: f64,
    pub clat_count: u64,
    /// Board milliseconds when its I/O began.
    pub started_ms: u64,
    /// Doing I/O now (started, not yet exited).
    pub running: bool,
}

/// Reads the totals of the clone with fio thread number `thread_number`.
pub fn progress(thread_number: u64) -> Option<Progress> {
    let s = slot(thread_number)?;
    let sum = |a: &[AtomicU64; 3]| a.iter().map(|v| v.load(Ordering::Relaxed)).sum();
    let state = s.state.load(Ordering::Relaxed);
    let started_ms = s.started_ms.load(Ordering::Relaxed);
    Some(Progress {
        ios: sum(&s.ios),
        bytes: sum(&s.bytes),
        clat_sum_ns: s
            .clat_sum_ns
            .iter()
            .map(|v| f64::from_bits(v.load(Ordering::Relaxed)))
            .sum(),
        clat_count: sum(&s.clat_count),
        started_ms,
        running: started_ms > 0 && ![0, 'E' as u32, '_' as u32, 'X' as u32].contains(&state),
    })
}

/// Where a job is in its life, as the status map shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Not started yet (`P`).
    Pending,
    /// Being set up: files laid out, engine opened (`I`).
    SettingUp,
    /// In `ramp_time` (`/`).
    Ramp,
    /// Doing I/O; the letter says what (`R`, `r`, `W`, `w`, `M`, `m`, `D`, `d`).
    Running(char),
    /// Exited, not yet reaped (`E`).
    Exited,
    /// Finished: `_` cleanly, `X` with an error, `K` killed by a signal.
    Done { error: bool, killed: bool },
}

impl JobState {
    /// The status map letter.
    pub fn letter(self) -> char {
        match self {
            JobState::Pending => 'P',
            JobState::SettingUp => 'I',
            JobState::Ramp => '/',
            JobState::Running(c) => c,
            JobState::Exited => 'E',
            JobState::Done { error: true, .. } => 'X',
            JobState::Done { killed: true, .. } => 'K',
            JobState::Done { .. } => '_',
        }
    }

    /// True while the job counts as running in `Jobs: N`.
    pub fn counts_running(self) -> bool {
        matches!(self, JobState::Running(_) | JobState::Ramp)
    }
}

/// What is known of one job clone while it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiveJob {
    pub state: JobState,
    /// Bytes and I/Os done so far per direction.
    pub bytes: [u64; 3],
    pub ios: [u64; 3],
    /// Bytes the job will move in all (0 when unknown).
    pub bytes_total: u64,
    /// Seconds since the job started.
    pub elapsed_s: u64,
    /// `runtime` in seconds (0 when none) and whether the job is `time_based`.
    pub runtime_s: u64,
    pub time_based: bool,
    /// `ramp_time` + `startdelay` in seconds (for jobs not started yet).
    pub ramp_s: u64,
    pub files_open: u32,
    /// Whether this job began a new group with `stonewall` (pending ETAs add up).
    pub stonewall: bool,
    /// The job's rate limits over the directions it does, for the `, 0-2000 IOPS` note.
    pub limits: RateLimits,
    /// I/Os the watchdog finds stalled (outstanding beyond `io_stall_warn`); iobench's
    /// own, shown as `[stalled=N]` only when some are, so plain lines stay fio's.
    pub stalled: u32,
}

/// A job's rate limits (`rate_min`-`rate`, `rate_iops_min`-`rate_iops`), summed over the
/// directions it does, as fio's status line shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RateLimits {
    pub min_bps: u64,
    pub max_bps: u64,
    pub min_iops: u64,
    pub max_iops: u64,
}

impl RateLimits {
    pub(crate) fn add(&mut self, o: &RateLimits) {
        self.min_bps += o.min_bps;
        self.max_bps += o.max_bps;
        self.min_iops += o.min_iops;
        self.max_iops += o.max_iops;
    }
}

/// The running letter for a job's pattern: upper case sequential, lower case random;
/// R/W for pure reads or writes, M for a mix, D for trims.
pub fn running_letter(pattern: crate::defs::Pattern) -> char {
    use crate::defs::Pattern as P;
    match pattern {
        P::Read => 'R',
        P::RandRead => 'r',
        P::Write => 'W',
        P::RandWrite => 'w',
        P::ReadWrite => 'M',
        P::RandRw => 'm',
        P::Trim | P::TrimWrite => 'D',
        P::RandTrim | P::RandTrimWrite => 'd',
    }
}
