//! The worker loop: drives one engine over one job clone, keeping up to iodepth I/Os in
//! flight, committing in submit batches and reaping between complete_min and complete_max,
//! as fio's do_io does. Generic over the engine, so the loop is monomorphised per engine.

use super::io_errors::{full_resid_verror, io_error_line, io_verror, queue_verror};
use crate::engine::{Engine, EngineFile, IoUnit, Op, Queued, Setup, SyncOp};
use crate::gen::Generator;
use crate::job::{Ddir, Job};
use crate::stats::JobStats;
use std::io;
use std::os::fd::RawFd;

/// The run clock in nanoseconds: the `clocksource` the job chose (see `crate::clock`).
#[inline]
pub fn now_ns() -> u64 {
    crate::clock::now_ns()
}

/// What a worker needs besides the engine.
pub struct WorkerCtx<'a> {
    pub job: &'a Job,
    pub fds: &'a [RawFd],
    pub files: &'a [EngineFile],
    /// File names, for error messages.
    pub names: &'a [String],
    /// The prepared targets (the worker reopens them when it opens files as it goes).
    pub targets: &'a [super::files::Target],
    /// Open files as they are picked and close them when done (see `open_files`);
    /// `fds` are then all -1 at the start.
    pub lazy: bool,
    pub gen: Generator,
    pub stats: JobStats,
}

/// Why the worker holds back from issuing (pacing and syncing, see `pacing`/`syncing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    None,
    /// Reap everything in flight, then carry on (latency_target lowered the depth).
    Drain,
    /// Reap everything in flight, then sync `file`, after the first `before` file events
    /// (those that came before the sync's file pick); logged at `offset` when given.
    Sync {
        kind: crate::gen::SyncKind,
        file: usize,
        before: usize,
        offset: Option<u64>,
    },
    /// Reap everything in flight, then pause for thinktime.
    Think,
    /// Sleep until this time (after reaping everything in flight when `drain`).
    Until {
        at: u64,
        drain: bool,
    },
}

impl Hold {
    /// A sync of `file` decided now: after the file events waiting so far, logged at the
    /// generator's offset.
    fn sync_now(kind: crate::gen::SyncKind, file: usize, gen: &Generator) -> Hold {
        Hold::Sync {
            kind,
            file,
            before: gen.file_events_waiting(),
            offset: None,
        }
    }
}

/// Runs the clone's I/O to the end (size done or runtime over); returns its stats.
pub fn run<E: Engine>(engine: E, mut cx: WorkerCtx<'_>) -> io::Result<JobStats> {
    let ex = &cx.job.exec;
    let depth = if engine.caps().sync {
        1
    } else {
        ex.iodepth.max(1) as usize
    };
    let job_bs = cx.job.workload.bs.iter().map(|b| b.1).max().unwrap_or(4096);
    let max_bs = job_bs.max(cx.gen.replay_max_len().unwrap_or(0)) as usize;
    let bufs = crate::buffer::mem::IoMem::new(&cx.job.buffers.mem, depth, max_bs)?;
    // Declared after the buffers, so dropped before them: an engine whose I/O may still
    // be in flight when the loop ends early (kernel AIO, offload submitters) finishes or
    // cancels it while the buffers are alive.
    let mut engine = engine;
    // Each clone fills its buffers from its own seed (fio seeds them by thread number).
    let clone = cx.gen.thread_number().saturating_sub(1) as u32;
    let mut data = crate::verify::Contents::new(cx.job, clone, depth);
    let mut flow = super::flow::Flow::for_job(cx.job);
    data.attach_state(cx.job, cx.gen.thread_number(), cx.names.len())?;
    data.attach_replay(&cx.gen);
    data.attach_trims(&cx.gen);
    // A job that writes gets its buffers filled now; a read-only job's are left untouched
    // until its reads land in them, as fio leaves them (so its page faults fall in the run).
    if cx.job.workload.pattern.writes() {
        // SAFETY: `bufs` holds `depth` slots of `slot_len` bytes and no I/O has started.
        unsafe { data.init_buffers(bufs.base(), bufs.slot_len(), depth) };
    }
    engine.setup(&Setup {
        depth: depth as u32,
        files: cx.files,
        names: cx.names,
        buf_base: bufs.base(),
        slot_len: bufs.slot_len(),
    })?;
    let mut open = super::open_files::OpenFiles::new(cx.job, cx.targets, cx.fds, cx.lazy);
    // unlink_each_loop: the loop whose files are in place.
    let mut files_loop = 0u32;
    let mut pool: Vec<IoUnit> = (0..depth)
        .map(|i| IoUnit::new(i as u32, bufs.slot(i)))
        .collect();
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    // serialize_overlap: which slots are queued or in flight, and whether the next I/O
    // waits for one of them to complete.
    let serialize = ex.serialize_overlap;
    let lock = cx.job.files.lock;
    let mut busy = vec![false; if serialize { depth } else { 0 }];
    let mut overlap_wait = false;
    let mut staged: Vec<u32> = Vec::with_capacity(depth);
    // CPU use counts from here: buffers and queues are in place (fio's ru_start).
    cx.stats.cpu_start = Some(crate::stats::cpu::Rusage::take(
        crate::stats::cpu::Who::Thread,
    ));
    let batch = (ex.iodepth_batch_submit as usize).clamp(1, depth);
    let cmin = (ex.iodepth_batch_complete_min as usize).min(depth);
    let cmax = (ex.iodepth_batch_complete_max as usize).clamp(1, depth);
    let low = (ex.iodepth_low as usize).clamp(1, depth);
    let stamps_commit = engine.stamps_issue_on_commit();
    let mut watch = super::watchdog::Watch::new(cx.job, depth, engine.caps().sync, cx.stats.live);
    // cmdprio: each priority's latency is kept apart (default priority first).
    let prios = engine.ioprios();
    let prio_stats = !prios.is_empty();
    if prio_stats {
        cx.stats.seed_prios(&prios);
    }
    // File engines (filecreate, ...): an I/O counts as bytes only; the file call's latency
    // is the one sample, in the job's read direction unless it only writes (as fio's).
    let file_ops = engine.caps().file_ops;
    let op_dir = if cx.job.workload.pattern.writes() && !cx.job.workload.pattern.reads() {
        Ddir::Write
    } else {
        Ddir::Read
    };
    let op_lat = !cx.job.report.stats.disable_lat;
    // Pacing, syncing and the iolog: see `pacing`, `syncing` and `crate::iolog`.
    let mut pace = super::pacing::Pacer::new(cx.job, cx.gen.thread_number(), depth as u32);
    let mut syncer = super::syncing::Syncer::new(cx.job);
    let mut iolog = match &cx.job.workload.replay {
        r if r.read_iolog.is_some() => None,
        crate::job::workload::Replay {
            write_iolog: Some(p),
            ..
        } => Some(crate::iolog::IologWriter::create(p, cx.names)?),
        _ => None,
    };
    let fresh_stats = pace.latency_report().map(|_| cx.stats.clone());
    let mut hold = Hold::None;
    let periodic_sync = syncer.periodic();
    // The file fio's sync at the start of a new loop goes to, until that sync is issued.
    let mut loop_sync: Option<crate::gen::LoopSync> = None;
    let mut pending: Option<crate::gen::NextIo> = None;
    let mut last_issue = 0u64;
    let delay = super::pacing::start_delay_us(cx.job, cx.gen.thread_number());
    if delay > 0 {
        super::pacing::sleep_until(now_ns() + delay * 1000, super::terminating);
    }

    let t0 = now_ns();
    pace.start(t0);
    let ramp_end = t0 + ex.ramp_time_us * 1000;
    let end = if ex.runtime_us > 0 {
        Some(ramp_end + ex.runtime_us * 1000)
    } else {
        None
    };
    let mut stat_start = t0;
    let mut ramping = ex.ramp_time_us > 0;
    let mut inflight = 0usize;
    let mut gen_done = false;
    // verify_only: the writes are walked, not issued; fio still counts them as issued
    // and done (added once the run is over, so no rate sample takes them in).
    let mut faked = None;
    if data.verify_only() {
        faked = Some(data.fake_writes(&mut cx.gen));
        gen_done = true;
    }
    let mut error: Option<String> = None;

    // Records one completion, returning its slot to the free list.
    macro_rules! complete {
        ($slot:expr, $res:expr, $now:expr) => {{
            let u = &mut pool[$slot as usize];
            u.result = $res;
            if let (true, Op::Rw(d)) = (crate::debug::on(crate::debug::Cat::Io), u.op) {
                let name = cx.names.get(u.file as usize).map_or("", |s| s.as_str());
                crate::debug::io_unit("complete", u.buf, u.offset, u.len, d as usize, name);
            }
            free.push($slot);
            watch.completed($slot);
            open.io_done(u.file as usize, &mut engine);
            if serialize {
                busy[$slot as usize] = false;
            }
            if u.result < 0 {
                let errno = (-u.result) as i32;
                let d = match u.op {
                    Op::Rw(d) => {
                        // fio counts the failed I/O as issued, with no bytes (a file
                        // engine's failed call is not an I/O: nothing was issued).
                        if !file_ops {
                            cx.stats.dir[d as usize].ios += 1;
                        }
                        d as usize
                    }
                    Op::Sync { .. } => 1,
                };
                // fill_device: running out of space is how the job ends, not a failure.
                let full =
                    cx.job.workload.fill_device && (errno == libc::ENOSPC || errno == libc::EDQUOT);
                if full {
                    gen_done = true;
                    pending = None;
                }
                let fatal = !full && !ex.errors.non_fatal(d, errno);
                // Text is only built when it is shown or kept (errors are off the hot path).
                if full || fatal || ex.errors.error_dump || cx.stats.error == 0 {
                    let name = cx.names.get(u.file as usize).map_or("", |s| s.as_str());
                    let line = if file_ops {
                        // File engines fail in their call, named as fio names it.
                        format!(
                            "{}({}): {}",
                            engine.op_name(),
                            name,
                            io::Error::from_raw_os_error(errno)
                        )
                    } else {
                        io_error_line(name, errno, u.op, u.offset, u.len)
                    };
                    // A trim fails inside fio's queue call, which names itself and
                    // prints no io_u line.
                    let trim = u.op == Op::Rw(Ddir::Trim);
                    if (full || fatal || ex.errors.error_dump) && !trim {
                        eprintln!("iobench: {line}");
                    }
                    if !full {
                        let verror = if trim {
                            queue_verror(errno)
                        } else {
                            io_verror(errno)
                        };
                        cx.stats.record_error(errno, &verror);
                    }
                    if fatal && error.is_none() {
                        error = Some(line);
                    }
                } else {
                    cx.stats.record_error(errno, "");
                }
            } else if u.result == 0 && u.len > 0 && !file_ops && matches!(u.op, Op::Rw(_)) {
                // Nothing moved (a read at the end of the file): fio fails the job with
                // "full resid", counting the I/O as issued with no bytes.
                if let Op::Rw(d) = u.op {
                    cx.stats.dir[d as usize].ios += 1;
                }
                let text = full_resid_verror();
                cx.stats.record_error(libc::EIO, &text);
                error.get_or_insert(text);
            } else if let Op::Rw(d) = u.op {
                if file_ops {
                    if !ramping {
                        cx.stats
                            .record_io_bytes(d, u.result as u64, $now - stat_start);
                    }
                } else if !ramping {
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
                    if prio_stats {
                        cx.stats.record_prio(d, u.prio, slat, $now - u.issue_ns);
                    }
                }
                let name = cx.names.get(u.file as usize).map_or("?", |s| s.as_str());
                if let Err(text) = data.on_complete(u, name) {
                    if data.keeps_going() {
                        cx.stats.record_error(crate::verify::contents::EILSEQ, "");
                    } else {
                        cx.stats
                            .record_error(crate::verify::contents::EILSEQ, &text);
                        error.get_or_insert(text);
                    }
                }
                match pace.completed(d, $now - u.start_ns, (name, u.offset, u.len)) {
                    super::pacing::Verdict::Go => {}
                    super::pacing::Verdict::Fail(errno, text) => {
                        cx.stats.record_error(errno, &text);
                        if error.is_none() {
                            error = Some(text);
                        }
                    }
                    _ => hold = Hold::Drain,
                }
            }
        }};
    }

    loop {
        let now = now_ns();
        if cx.stats.live.is_some_and(|s| s.wanted()) {
            let measured = if ramping { 0 } else { now - stat_start };
            cx.stats.inflight = inflight as u32;
            crate::stats::live::answer(&mut cx.stats, measured);
        }
        if ramping && now >= ramp_end {
            ramping = false;
            stat_start = now;
            pace.start(now);
            // What was counted while ramping does not belong in the results.
            cx.stats.reset_io_maps();
            // The I/Os in flight now complete after the ramp and are counted then.
            if inflight > 0 {
                cx.stats.record_depth(inflight as u32, inflight as u32);
            }
        }
        if error.is_some() || end.is_some_and(|e| now >= e) || super::terminating() {
            break;
        }
        // Pacing/syncing: act on a hold once nothing it waits for is in flight.
        if hold != Hold::None && (inflight == 0 || matches!(hold, Hold::Until { drain: false, .. }))
        {
            match std::mem::replace(&mut hold, Hold::None) {
                Hold::Sync {
                    kind,
                    file: f,
                    before,
                    offset,
                } => {
                    // The files opened and closed before the sync's file was picked
                    // (that one included) come first, as in fio's log.
                    if let Some(fail) =
                        file_events(&mut cx.gen, &mut open, &mut iolog, &mut engine, before)?
                    {
                        cx.stats.record_error(fail.errno, &fail.verror);
                        error = Some(fail.verror);
                        continue;
                    }
                    let off = offset
                        .or(cx.gen.sync_log_offset())
                        .unwrap_or(syncer.last_io_offset);
                    let t = now_ns();
                    // Nothing is in flight: any slot is free to carry the sync.
                    let unit = &mut pool[free.last().copied().unwrap_or(0) as usize];
                    let fd = open.fds().get(f).copied().unwrap_or(-1);
                    let r = syncer.sync(&mut engine, unit, f, fd, kind)?;
                    if r < 0 {
                        let errno = (-r) as i32;
                        let text = format!(
                            "io_u error on file {}: {}: {}",
                            cx.names.get(f).map_or("?", |s| s.as_str()),
                            crate::job::errors::strerror(errno),
                            kind.log_name()
                        );
                        if ex.errors.non_fatal(1, errno) {
                            cx.stats.record_error(errno, &io_verror(errno));
                        } else {
                            eprintln!("iobench: {text}");
                            cx.stats.record_error(errno, &io_verror(errno));
                            error.get_or_insert(text);
                        }
                    } else if !ramping {
                        super::syncing::account(&mut cx.stats, kind, now_ns() - t);
                    }
                    if let Some(l) = &mut iolog {
                        l.log_op(f, kind.log_name(), off, 0)?;
                    }
                }
                Hold::Think => pace.think(super::terminating),
                Hold::Until { at, .. } => {
                    super::pacing::sleep_until(end.map_or(at, |e| at.min(e)), super::terminating)
                }
                Hold::Drain | Hold::None => {}
            }
            if let Some(s) = &fresh_stats {
                match pace.check_latency_window(now_ns()) {
                    super::pacing::Verdict::FinalRun => {
                        cx.stats = s.clone();
                        stat_start = now_ns();
                    }
                    super::pacing::Verdict::Done => gen_done = true,
                    _ => {}
                }
            }
            continue;
        }
        // Fill the queue.
        let limit = pace.depth_limit(depth);
        while hold == Hold::None
            && !gen_done
            && !free.is_empty()
            && inflight + staged.len() < limit
            && !data.backlog_due()
        {
            // A replayed log's sync: drain, then sync the file it names (see gen::replay).
            if let Some((kind, f)) = pending
                .is_none()
                .then(|| cx.gen.replay_sync_due())
                .flatten()
            {
                syncer.last_file = f;
                hold = Hold::sync_now(kind, f, &cx.gen);
                break;
            }
            // A due verify trim goes before the next generated I/O, as fio's get_io_u.
            let mut fresh = false;
            let mut got = pending.take().or_else(|| data.next_trim());
            if got.is_none() {
                // fio decides on a sync before it generates the next I/O: the sync goes
                // to the file its file service picks next (that pick is used up).
                if let Some(kind) = syncer.due().filter(|_| cx.gen.budget_left()) {
                    let f = cx.gen.file_for_sync().unwrap_or(syncer.last_file);
                    hold = Hold::sync_now(kind, f, &cx.gen);
                    break;
                }
                // flow: a job ahead of its weight holds back (draining and sleeping
                // flow_sleep first, when set), as fio does before it makes an I/O.
                if let Some(f) = flow.as_mut() {
                    if f.exceeded() {
                        hold = Hold::Until {
                            at: now_ns() + f.sleep_ns.max(1000),
                            drain: f.sleep_ns > 0,
                        };
                        break;
                    }
                }
                fresh = true;
                if periodic_sync {
                    cx.gen.sync_at_new_loop = syncer.due_at_new_loop().is_some();
                }
                got = cx.gen.next_io();
                if let Some(f) = cx.gen.take_loop_sync_file() {
                    loop_sync = Some(f);
                }
            }
            let next = match got {
                Some(n) => n,
                None => {
                    if let Some(fail) =
                        file_events(&mut cx.gen, &mut open, &mut iolog, &mut engine, usize::MAX)?
                    {
                        cx.stats.record_error(fail.errno, &fail.verror);
                        error = Some(fail.verror);
                    }
                    gen_done = true;
                    break;
                }
            };
            // verify_state_load on a reading job: it ends before the first read the saved
            // state does not vouch for, as fio's does.
            if data.read_stops(next.ddir, next.file, next.offset) {
                gen_done = true;
                break;
            }
            // A new loop: what the last one wrote is verified first.
            if fresh && data.loop_ended(cx.gen.pass()) {
                pending = Some(next);
                break;
            }
            if pace.think_due() {
                (pending, hold) = (Some(next), Hold::Think);
                break;
            }
            let mut next = next;
            let replay_us = cx.gen.replay_delay_us();
            if replay_us > 0 || pace.rated() {
                let t = now_ns();
                let wait;
                (next.ddir, wait) = pace.choose(next.ddir, t);
                let replay_at = last_issue + replay_us * 1000;
                if wait > 0 || (replay_us > 0 && replay_at > t) {
                    pending = Some(next);
                    hold = Hold::Until {
                        at: (t + wait).max(replay_at),
                        drain: wait > 0,
                    };
                    break;
                }
            }
            if next.len > bufs.slot_len() as u64 {
                // The buffers were sized for the job's largest I/O; never read past one.
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "an I/O of {} bytes does not fit the {}-byte buffers",
                        next.len,
                        bufs.slot_len()
                    ),
                ));
            }
            // unlink_each_loop: a new loop starts on fresh files, once the last loop's
            // I/O is all done (fio deletes them between its loops).
            if cx.job.files.unlink_each_loop && cx.gen.loop_number() != files_loop {
                if inflight + staged.len() > 0 {
                    (pending, hold) = (Some(next), Hold::Drain);
                    break;
                }
                files_loop = cx.gen.loop_number();
                if let Err(e) = open.unlink_all(&mut engine) {
                    let errno = crate::error::os_errno(&e).unwrap_or(libc::EIO);
                    let text = format!("unlink_each_loop: {e}");
                    eprintln!("iobench: {text}");
                    cx.stats.record_error(
                        errno,
                        &format!(
                            "file:backend.c:560, func=unlink_all_files, error={}",
                            crate::job::errors::strerror(errno)
                        ),
                    );
                    error = Some(text);
                    break;
                }
            }
            // Then, as fio, a sync if one is due (on the file picked first in the loop).
            if let Some(ls) = loop_sync.take() {
                syncer.new_loop();
                if let Some(kind) = syncer.due() {
                    let h = Hold::Sync {
                        kind,
                        file: ls.file,
                        before: ls.events_before,
                        offset: Some(ls.offset),
                    };
                    (pending, hold) = (Some(next), h);
                    break;
                }
            }
            // The files the generator opened and closed on the way to this I/O (after
            // the loop's verify and unlink, as fio orders them).
            if let Some(fail) =
                file_events(&mut cx.gen, &mut open, &mut iolog, &mut engine, usize::MAX)?
            {
                cx.stats.record_error(fail.errno, &fail.verror);
                error = Some(fail.verror);
                break;
            }
            // serialize_overlap: an I/O overlapping one queued or in flight (whatever its
            // file, as fio compares offsets only) waits for a completion.
            if serialize && overlaps_busy(&pool, &busy, next.offset, next.len) {
                (pending, overlap_wait) = (Some(next), true);
                break;
            }
            let fd = match open.for_io(next.file, &mut engine) {
                Ok(fd) => fd,
                Err(fail) => {
                    cx.stats.record_error(fail.errno, &fail.verror);
                    error = Some(fail.verror);
                    break;
                }
            };
            pace.issued(next.ddir, next.len);
            syncer.issued(next.ddir, next.file, next.offset, next.len);
            if let Some(l) = &mut iolog {
                l.log_io(&next)?;
            }
            let slot = free.pop().expect("free slot");
            if serialize {
                busy[slot as usize] = true;
            }
            let u = &mut pool[slot as usize];
            u.op = Op::Rw(next.ddir);
            u.file = next.file as u32;
            u.fd = fd;
            u.offset = next.offset;
            u.len = next.len as usize;
            u.pass = cx.gen.pass();
            u.start_ns = now_ns();
            u.issue_ns = u.start_ns;
            data.before_queue(u);
            last_issue = u.start_ns;
            // lockfile: the lock covers the queue call, as fio's does.
            if let Err(e) = super::filelock::lock(lock, u.fd, next.ddir) {
                free.push(slot);
                let text = format!("lockfile: {e}");
                cx.stats
                    .record_error(e.raw_os_error().unwrap_or(libc::EIO), &text);
                error = Some(text);
                break;
            }
            if crate::debug::on(crate::debug::Cat::Io) {
                let name = cx.names.get(u.file as usize).map_or("", |s| s.as_str());
                for stage in ["fill", "prep", "queue"] {
                    let d = next.ddir as usize;
                    crate::debug::io_unit(stage, u.buf, u.offset, u.len, d, name);
                }
            }
            watch.queuing(u);
            // SAFETY: `u` is a slot just taken from `free` (not in flight); its buffer is
            // the slot's own region of `bufs` (`slot_len` bytes, at least the largest
            // block, which bounds `u.len`). `bufs` is declared before `engine`, so it
            // outlives any I/O the engine still has in flight if the loop ends early.
            let queued = unsafe { engine.queue(u) };
            if let Err(e) = super::filelock::unlock(lock, fd) {
                let text = format!("lockfile: {e}");
                cx.stats
                    .record_error(e.raw_os_error().unwrap_or(libc::EIO), &text);
                error.get_or_insert(text);
            }
            match queued? {
                Queued::Completed => {
                    let t = now_ns();
                    if file_ops {
                        if let Some(ns) = engine.take_op_latency() {
                            if op_lat && !ramping {
                                cx.stats.record_clat_only(op_dir, ns);
                            }
                        }
                    }
                    cx.stats.record_depth(1, 1);
                    cx.stats.record_submit(1);
                    cx.stats.record_complete(1);
                    if let Some(us) = engine.think_us() {
                        pace.engine_think(us);
                    }
                    let res = pool[slot as usize].result;
                    if watch.cut_short(res) {
                        break;
                    }
                    complete!(slot, res, t);
                    if error.is_some()
                        || end.is_some_and(|e| t >= e)
                        || super::terminating()
                        || cx.stats.live.is_some_and(|s| s.wanted())
                    {
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
                            &mut watch,
                        )?;
                    }
                }
                Queued::Busy => {
                    if engine.finished() {
                        gen_done = true;
                    }
                    free.push(slot);
                    if serialize {
                        busy[slot as usize] = false;
                    }
                    open.io_done(next.file, &mut engine);
                    pending = Some(next);
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
                &mut watch,
            )?;
        }
        if pace.has_min_rate() {
            let bytes = cx.stats.dir.each_ref().map(|d| d.bytes);
            let blocks = cx.stats.dir.each_ref().map(|d| d.ios);
            if let Some(m) = pace.check_min_rate(&cx.job.name, bytes, blocks, now_ns()) {
                cx.stats.record_error(libc::EIO, &m);
                error.get_or_insert(m);
            }
        }
        if inflight == 0 && staged.is_empty() && data.backlog_due() {
            let batch = if data.take_loop_due() {
                None
            } else {
                Some(ex_backlog_batch(cx.job))
            };
            let r = verify_pass(
                &mut engine,
                &mut data,
                &mut open,
                &mut pool,
                &mut cx,
                stat_start,
                batch,
            )?;
            if let Some(t) = r {
                error.get_or_insert(t);
            }
        }
        if inflight == 0 {
            if gen_done && staged.is_empty() && hold == Hold::None {
                break;
            }
            continue;
        }
        // Reap: at least one when the queue is full or nothing more can be queued; all of
        // them when pacing or syncing waits for the queue to drain.
        let drain = !matches!(hold, Hold::None | Hold::Until { drain: false, .. });
        let full = free.is_empty() || gen_done || drain || inflight >= limit || overlap_wait;
        overlap_wait = false;
        let mut min = cmin.min(inflight);
        if min == 0 && full {
            min = 1;
        }
        watch.waiting(&pool, now_ns(), inflight);
        loop {
            let n = engine.getevents(min, cmax.min(inflight))?;
            let t = now_ns();
            if n > 0 {
                cx.stats.record_complete(n as u32);
            }
            for i in 0..n {
                let c = engine.event(i);
                complete!(c.slot, c.result, t);
            }
            inflight -= n;
            let keep = if drain {
                inflight > 0
            } else {
                full && inflight > low
            };
            if !keep || watch.timed_out() {
                break;
            }
            min = 1;
        }
    }
    // A timed-out job's hung I/Os are not waited for (see the end).
    let timed_out = watch.timed_out();
    if timed_out {
        let text = super::watchdog::timeout_verror();
        cx.stats.record_error(super::watchdog::ETIMEDOUT, &text);
        error = Some(text);
        inflight = 0;
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
        error = verify_pass(
            &mut engine,
            &mut data,
            &mut open,
            &mut pool,
            &mut cx,
            stat_start,
            None,
        )?;
    }
    let _ = (hold, gen_done, pending.is_some());
    let ms = ((now_ns() - stat_start) / 1_000_000).max(1);
    // end_fsync and fsync_on_close: once the job's writes are done (fio logs them as syncs
    // but leaves them out of the sync statistics).
    // (A replayed log decides whether the job writes, and a sync as its last operation
    // leaves nothing to sync, as in fio.)
    let wrote = cx
        .gen
        .replay_writes()
        .map_or(cx.job.workload.pattern.writes(), |w| {
            w && !syncer.last_was_sync()
        });
    if (syncer.end_fsync || syncer.fsync_on_close) && wrote && !timed_out {
        for (i, &fd) in open.fds().iter().enumerate() {
            // Files closed along the way were synced at their close (fsync_on_close).
            if cx.lazy && fd < 0 {
                continue;
            }
            let unit = &mut pool[0];
            super::syncing::issue(&mut engine, unit, i, fd, SyncOp::Fsync, 0, 0)?;
            if let Some(l) = &mut iolog {
                l.log_op(i, "sync", syncer.last_offset, 0)?;
            }
        }
    }
    if let Some(l) = iolog.take() {
        l.finish()?;
    }
    if let Some((t, w, p, d)) = pace.latency_report() {
        cx.stats.set_latency_target(t, w, p, d);
    }
    cx.stats.set_total_runtime_ms(ms);
    // Datagrams lost on the way (net over UDP) count as dropped reads, as in fio.
    cx.stats.dir[Ddir::Read as usize].dropped += engine.take_dropped();
    // A pseudo-I/O engine (cpuio) moves no bytes: fio gives its directions no run time.
    let moves_data = !cx.job.exec.engine.flags().no_io;
    for d in Ddir::ALL {
        if moves_data && cx.stats.dir[d as usize].ios > 0 {
            cx.stats.set_runtime_ms(d, ms);
        }
    }
    // Faked writes get no run time (fio leaves it out for verify_only), so a direction
    // with only those shows its counts but no rate; faked trims do get one, as in fio.
    if let Some(f) = faked {
        let mut n = 0;
        for d in Ddir::ALL {
            let (ios, bytes) = f[d as usize];
            cx.stats.dir[d as usize].ios += ios;
            cx.stats.dir[d as usize].bytes += bytes;
            n += ios;
            if ios > 0 && d != Ddir::Write {
                cx.stats.set_runtime_ms(d, ms);
            }
        }
        cx.stats.record_depth(1, n as u32);
    }
    if cx.stats.live.is_some() {
        // The final numbers, for a report made before the collector has this clone's
        // results (one made while it finishes, or just after).
        crate::stats::live::answer(&mut cx.stats, ms * 1_000_000);
    }
    if error.is_some() {
        cx.stats.failed = true;
        if cx.stats.error != 0 {
            // fio's closing line for a failed job.
            super::error_line(&format!(
                "iobench: pid={}, err={}/{}\n",
                std::process::id(),
                cx.stats.error,
                cx.stats.verror
            ));
        }
    }
    if timed_out {
        // The hung I/Os may still complete into their buffers, and an engine's teardown
        // may wait for them: both are left to the process's end, never freed under them.
        std::mem::forget(engine);
        std::mem::forget(bufs);
    }
    Ok(cx.stats)
}

/// True when `len` bytes at `offset` overlap a unit that is queued or in flight.
fn overlaps_busy(pool: &[IoUnit], busy: &[bool], offset: u64, len: u64) -> bool {
    pool.iter()
        .zip(busy)
        .any(|(u, &b)| b && offset < u.offset + u.len as u64 && u.offset < offset + len)
}

/// Acts on the files the generator opened and closed since last asked: logs them, and
/// (when the worker opens files as it goes) opens each picked file at once, as fio does,
/// and closes each finished one once its I/O in flight completes. Returns the failure of
/// an open (fio logs only opens that worked). Acts on `most` events at the most.
fn file_events<E: Engine>(
    gen: &mut Generator,
    open: &mut super::open_files::OpenFiles<'_>,
    iolog: &mut Option<crate::iolog::IologWriter>,
    engine: &mut E,
    most: usize,
) -> io::Result<Option<super::open_files::OpenFailure>> {
    let mut failed = None;
    for _ in 0..most {
        let Some(ev) = gen.take_file_event() else {
            break;
        };
        match ev {
            crate::gen::FileEvent::Opened(f) => {
                if let Err(fail) = open.open_now(f, engine) {
                    failed.get_or_insert(fail);
                } else if let Some(l) = iolog {
                    l.log_open(f)?;
                }
            }
            crate::gen::FileEvent::Closed(f) => {
                if let Some(l) = iolog {
                    l.log_close(f)?;
                }
                open.close(f, engine);
            }
        }
    }
    Ok(failed)
}

/// Runs a verify pass (the whole job's, or `batch` blocks of the backlog) over files
/// opened for it when the worker opens files as it goes. Returns the job's error text
/// when the pass failed (already recorded in the stats).
fn verify_pass<E: Engine>(
    engine: &mut E,
    data: &mut crate::verify::Contents,
    open: &mut super::open_files::OpenFiles<'_>,
    pool: &mut [IoUnit],
    cx: &mut WorkerCtx<'_>,
    stat_start: u64,
    batch: Option<usize>,
) -> io::Result<Option<String>> {
    let opened = if data.reads_back() {
        open.before_verify(engine)
    } else {
        Ok(())
    };
    let r = match opened {
        Ok(()) => data.verify_phase(
            engine,
            pool,
            open.fds(),
            cx.names,
            &mut cx.stats,
            stat_start,
            batch,
        )?,
        Err(f) => Err((f.errno, f.verror)),
    };
    open.after_verify(engine);
    Ok(r.err().map(|(errno, text)| {
        cx.stats.record_error(errno, &text);
        text
    }))
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
    watch: &mut super::watchdog::Watch,
) -> io::Result<()> {
    // fio marks the depth at commit, by every I/O busy at that moment.
    let busy = (*inflight + staged.len()) as u32;
    let n = engine.commit()?;
    if n > 0 {
        stats.record_submit(n as u32);
        stats.record_depth(busy, n as u32);
    }
    let t = now_ns();
    for &s in &staged[..n] {
        pool[s as usize].issue_ns = t;
        watch.issued(s, t);
    }
    staged.drain(..n);
    *inflight += n;
    Ok(())
}
