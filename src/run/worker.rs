//! The worker loop: drives one engine over one job clone, keeping up to iodepth I/Os in
//! flight, committing in submit batches and reaping between complete_min and complete_max,
//! as fio's do_io does. Generic over the engine, so the loop is monomorphised per engine.

use crate::engine::{Engine, EngineFile, IoUnit, Op, Queued, Setup};
use crate::gen::Generator;
use crate::job::{Ddir, Job};
use crate::stats::JobStats;
use std::io;
use std::os::fd::RawFd;

/// A monotonic clock in nanoseconds (CLOCK_MONOTONIC, served by the vDSO: no syscall).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Aligned I/O buffers, one per pool slot, allocated once per job.
struct Buffers {
    base: *mut u8,
    layout: std::alloc::Layout,
    slot_len: usize,
}

impl Buffers {
    fn new(slots: usize, slot_len: usize) -> io::Result<Self> {
        let slot_len = slot_len.max(1).next_multiple_of(4096);
        let layout = std::alloc::Layout::from_size_align(slots * slot_len, 4096)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        // SAFETY: the layout has non-zero size; freed in Drop with the same layout.
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        if base.is_null() {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        Ok(Buffers {
            base,
            layout,
            slot_len,
        })
    }
    fn slot(&self, i: usize) -> *mut u8 {
        // SAFETY: i < slots, so the offset stays inside the allocation.
        unsafe { self.base.add(i * self.slot_len) }
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, and no I/O is in flight any more.
        unsafe { std::alloc::dealloc(self.base, self.layout) };
    }
}

/// What a worker needs besides the engine.
pub struct WorkerCtx<'a> {
    pub job: &'a Job,
    pub fds: &'a [RawFd],
    pub files: &'a [EngineFile],
    /// File names, for error messages.
    pub names: &'a [String],
    pub gen: Generator,
    pub stats: JobStats,
}

/// Runs the clone's I/O to the end (size done or runtime over); returns its stats.
pub fn run<E: Engine>(mut engine: E, mut cx: WorkerCtx<'_>) -> io::Result<JobStats> {
    let ex = &cx.job.exec;
    let depth = if engine.caps().sync {
        1
    } else {
        ex.iodepth.max(1) as usize
    };
    let max_bs = cx.job.workload.bs.iter().map(|b| b.1).max().unwrap_or(4096) as usize;
    let bufs = Buffers::new(depth, max_bs)?;
    let mut data = crate::verify::Contents::new(cx.job, 0, depth);
    // SAFETY: `bufs` holds `depth` slots of `slot_len` bytes and no I/O has started.
    unsafe { data.init_buffers(bufs.base, bufs.slot_len, depth) };
    engine.setup(&Setup {
        depth: depth as u32,
        files: cx.files,
        buf_base: bufs.base,
        slot_len: bufs.slot_len,
    })?;
    let mut pool: Vec<IoUnit> = (0..depth)
        .map(|i| IoUnit::new(i as u32, bufs.slot(i)))
        .collect();
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut staged: Vec<u32> = Vec::with_capacity(depth);
    let batch = (ex.iodepth_batch_submit as usize).clamp(1, depth);
    let cmin = (ex.iodepth_batch_complete_min as usize).min(depth);
    let cmax = (ex.iodepth_batch_complete_max as usize).clamp(1, depth);
    let low = (ex.iodepth_low as usize).clamp(1, depth);
    let stamps_commit = engine.stamps_issue_on_commit();

    let t0 = now_ns();
    let ramp_end = t0 + ex.ramp_time_us * 1000;
    let end = if ex.runtime_us > 0 {
        Some(ramp_end + ex.runtime_us * 1000)
    } else {
        None
    };
    let mut stat_start = t0;
    let mut ramping = ex.ramp_time_us > 0;
    let mut loops_left = ex.loops.max(1) - 1;
    let mut inflight = 0usize;
    let mut gen_done = false;
    if data.verify_only() {
        data.fake_writes(&mut cx.gen);
        gen_done = true;
    }
    let mut error: Option<String> = None;

    // Records one completion, returning its slot to the free list.
    macro_rules! complete {
        ($slot:expr, $res:expr, $now:expr) => {{
            let u = &mut pool[$slot as usize];
            u.result = $res;
            free.push($slot);
            if u.result < 0 {
                let errno = (-u.result) as i32;
                let e = io::Error::from_raw_os_error(errno);
                let what = match u.op {
                    Op::Rw(Ddir::Read) => "read",
                    Op::Rw(Ddir::Write) => "write",
                    Op::Rw(Ddir::Trim) => "trim",
                    Op::Sync { .. } => "sync",
                };
                let text = format!(
                    "io_u error on file {}: {}: {} offset={}, buflen={}",
                    cx.names.get(u.file as usize).map_or("?", |s| s.as_str()),
                    e,
                    what,
                    u.offset,
                    u.len
                );
                cx.stats.record_error(errno, &text);
                if !ex.continue_on_error && error.is_none() {
                    error = Some(text);
                }
            } else if let Op::Rw(d) = u.op {
                if !ramping {
                    let slat = if stamps_commit {
                        u.issue_ns - u.start_ns
                    } else {
                        0
                    };
                    cx.stats.record_io_at(
                        d,
                        u.result as u64,
                        u.offset,
                        slat,
                        $now - u.issue_ns,
                        $now - stat_start,
                    );
                }
                let name = cx.names.get(u.file as usize).map_or("?", |s| s.as_str());
                if let Err(text) = data.on_complete(u, name) {
                    cx.stats
                        .record_error(crate::verify::contents::EILSEQ, &text);
                    error.get_or_insert(text);
                }
            }
        }};
    }

    loop {
        let now = now_ns();
        if ramping && now >= ramp_end {
            ramping = false;
            stat_start = now;
        }
        if error.is_some() || end.is_some_and(|e| now >= e) || super::terminating() {
            break;
        }
        // Fill the queue.
        while !gen_done && !free.is_empty() && !data.backlog_due() {
            let next = match cx.gen.next_io() {
                Some(n) => n,
                None if ex.time_based || loops_left > 0 => {
                    loops_left = loops_left.saturating_sub(1);
                    cx.gen.restart();
                    match cx.gen.next_io() {
                        Some(n) => n,
                        None => {
                            gen_done = true;
                            break;
                        }
                    }
                }
                None => {
                    gen_done = true;
                    break;
                }
            };
            let slot = free.pop().expect("free slot");
            let u = &mut pool[slot as usize];
            u.op = Op::Rw(next.ddir);
            u.file = next.file as u32;
            u.fd = cx.fds.get(next.file).copied().unwrap_or(-1);
            u.offset = next.offset;
            u.len = next.len as usize;
            u.start_ns = now_ns();
            u.issue_ns = u.start_ns;
            data.before_queue(u);
            match engine.queue(u)? {
                Queued::Completed => {
                    let t = now_ns();
                    cx.stats.record_depth(1, 1);
                    cx.stats.record_submit(1);
                    cx.stats.record_complete(1);
                    let res = pool[slot as usize].result;
                    complete!(slot, res, t);
                    if error.is_some() || end.is_some_and(|e| t >= e) || super::terminating() {
                        break;
                    }
                }
                Queued::Queued => {
                    staged.push(slot);
                    if staged.len() >= batch {
                        commit(
                            &mut engine,
                            &mut pool,
                            &mut staged,
                            &mut inflight,
                            &mut cx.stats,
                        )?;
                    }
                }
                Queued::Busy => {
                    free.push(slot);
                    break;
                }
            }
        }
        if !staged.is_empty() {
            commit(
                &mut engine,
                &mut pool,
                &mut staged,
                &mut inflight,
                &mut cx.stats,
            )?;
        }
        if inflight == 0 && staged.is_empty() && data.backlog_due() {
            let batch = Some(ex_backlog_batch(cx.job));
            if let Err(t) = data.verify_phase(
                &mut engine,
                &mut pool,
                cx.fds,
                cx.names,
                &mut cx.stats,
                stat_start,
                batch,
            )? {
                cx.stats.record_error(crate::verify::contents::EILSEQ, &t);
                error.get_or_insert(t);
            }
            continue;
        }
        if inflight == 0 {
            if gen_done && staged.is_empty() {
                break;
            }
            continue;
        }
        // Reap: at least one when the queue is full or nothing more can be queued.
        let full = free.is_empty() || gen_done;
        let mut min = cmin.min(inflight);
        if min == 0 && full {
            min = 1;
        }
        loop {
            let n = engine.getevents(min, cmax.min(inflight))?;
            let t = now_ns();
            if n > 0 {
                cx.stats.record_complete(n as u32);
                cx.stats.record_depth(inflight as u32, n as u32);
            }
            for i in 0..n {
                let c = engine.event(i);
                complete!(c.slot, c.result, t);
            }
            inflight -= n;
            if !(full && inflight > low) {
                break;
            }
            min = 1;
        }
    }
    // Drain what is still in flight so buffers are not freed under the kernel.
    while inflight > 0 {
        let n = engine.getevents(1, inflight)?;
        let t = now_ns();
        for i in 0..n {
            let c = engine.event(i);
            complete!(c.slot, c.result, t);
        }
        inflight -= n;
    }
    if error.is_none() {
        let r = data.verify_phase(
            &mut engine,
            &mut pool,
            cx.fds,
            cx.names,
            &mut cx.stats,
            stat_start,
            None,
        )?;
        if let Err(t) = r {
            cx.stats.record_error(crate::verify::contents::EILSEQ, &t);
            error = Some(t);
        }
    }
    let ms = ((now_ns() - stat_start) / 1_000_000).max(1);
    cx.stats.set_total_runtime_ms(ms);
    for d in Ddir::ALL {
        if cx.stats.dir[d as usize].ios > 0 {
            cx.stats.set_runtime_ms(d, ms);
        }
    }
    if let Some(text) = error {
        eprintln!("iobench: {text}");
    }
    Ok(cx.stats)
}

/// How many blocks one backlog check reads (`verify_backlog_batch`, default the backlog).
fn ex_backlog_batch(job: &Job) -> usize {
    let v = &job.verify;
    (if v.backlog_batch > 0 {
        v.backlog_batch
    } else {
        v.backlog
    }) as usize
}

fn commit<E: Engine>(
    engine: &mut E,
    pool: &mut [IoUnit],
    staged: &mut Vec<u32>,
    inflight: &mut usize,
    stats: &mut JobStats,
) -> io::Result<()> {
    let n = engine.commit()?;
    if n > 0 {
        stats.record_submit(n as u32);
    }
    let t = now_ns();
    for &s in &staged[..n] {
        pool[s as usize].issue_ns = t;
    }
    staged.drain(..n);
    *inflight += n;
    Ok(())
}
