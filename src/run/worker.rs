//! The worker loop: drives one engine over one job clone, keeping up to iodepth I/Os in
//! flight, committing in submit batches and reaping between complete_min and complete_max,
//! as fio's do_io does. Generic over the engine, so the loop is monomorphised per engine.

use super::io_errors::{full_resid_verror, io_error_line, io_verror, queue_verror};
use crate::defs::Ddir;
use crate::engine::{Engine, EngineFile, IoUnit, Op, QueueFailure, Queued, Setup, SyncKind};
use crate::gen::Generator;
use crate::job::Job;
use crate::stats::JobStats;
use std::io;
use std::os::fd::RawFd;

/// How often a ramp by bytes (`ramp_size`) is judged: once a second, as fio 3.42's helper
/// thread does.
const RAMP_CHECK_NS: u64 = 1_000_000_000;

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
        kind: crate::engine::SyncKind,
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
    fn sync_now(kind: crate::engine::SyncKind, file: usize, gen: &Generator) -> Hold {
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
    // A synchronous engine's depth is already 1: the job caps it where it resolves the
    // engine (`job::exec`), the one place that does.
    let depth = ex.iodepth.max(1) as usize;
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
    data.attach_state(cx.job, cx.gen.thread_number(), cx.names.len())?;
    data.attach_replay(&cx.gen);
    data.attach_log(&cx.gen);
    data.attach_trims(&cx.gen);
    // A job that writes gets its buffers filled now; a read-only job's are left untouched
    // until its reads land in them, as fio leaves them (so its page faults fall in the run).
    if cx.job.workload.pattern.writes() {
        // SAFETY: `bufs` holds `depth` slots of `slot_len` bytes and no I/O has started.
        unsafe { data.init_buffers(bufs.base(), bufs.slot_len(), depth) };
    }
    // fio creates a delayed job only once its startdelay is over, so the engine is set
    // up after the delay: a net writer's link open must follow its readers' set-up.
    let delay = super::pacing::start_delay_us(cx.job, cx.gen.thread_number());
    if delay > 0 {
        super::pacing::sleep_until(now_ns() + delay * 1000, super::terminating);
    }
    engine.setup(&Setup {
        depth: depth as u32,
        files: cx.files,
        names: cx.names,
        buf_base: bufs.base(),
        slot_len: bufs.slot_len(),
    })?;
    let pool: Vec<IoUnit> = (0..depth)
        .map(|i| IoUnit::new(i as u32, bufs.slot(i)))
        .collect();
    // A clock the kernel does not have leaves fio's reading of the logs' epoch clock in
    // place (its timespec is shared): the same value here.
    cx.stats.job_start = clock_ms(cx.job.report.job_start_clock)
        .or_else(|| clock_ms(cx.job.report.logs.epoch_clock))
        .unwrap_or(0);
    // CPU use counts from here: buffers and queues are in place (fio's ru_start).
    cx.stats.cpu_start = Some(crate::stats::cpu::Rusage::take(
        crate::stats::cpu::Who::Thread,
    ));
    // The state is declared after the buffers, so dropped before them (see `engine`).
    let mut w = Worker::new(engine, cx, data, pool, bufs.slot_len())?;
    w.start();
    // verify_only: the writes are walked, not issued; fio still counts them as issued
    // and done (added once the run is over, so no rate sample takes them in).
    let faked = w.data.verify_only().then(|| {
        w.gen_done = true;
        w.data.fake_writes(&mut w.cx.gen)
    });
    while w.step()? {}
    let timed_out = w.watch.timed_out();
    let stats = w.finish(timed_out, faked)?;
    if timed_out {
        // The hung I/Os may still complete into their buffers: they are left to the
        // process's end, never freed under them (`finish` leaves the engine alike).
        std::mem::forget(bufs);
    }
    Ok(stats)
}

/// One clone's worker: the engine, the slots and everything that decides what to issue
/// next, so that each phase of the loop (fill, submit, reap, complete, act on a hold,
/// finish) is a method over it. Monomorphised per engine like `run`.
struct Worker<'a, E: Engine> {
    engine: E,
    cx: WorkerCtx<'a>,
    /// The verify contents: buffer filling, checking on completion, the read-back pass.
    data: crate::verify::Contents,
    open: super::open_files::OpenFiles<'a>,
    /// One unit per slot of the depth; `free` lists the slots not queued or in flight.
    pool: Vec<IoUnit>,
    free: Vec<u32>,
    /// Slots queued but not yet committed to the engine.
    staged: Vec<u32>,
    /// Committed and not yet reaped.
    inflight: usize,
    watch: super::watchdog::Watch,
    pace: super::pacing::Pacer,
    syncer: super::syncing::Syncer,
    flow: Option<super::flow::Flow>,
    iolog: Option<crate::iolog::IologWriter>,
    /// What holds issuing back (pacing, syncing), acted on once its wait is over.
    hold: Hold,
    /// An I/O generated but not issued yet (held back); issued before a new one.
    pending: Option<crate::gen::NextIo>,
    /// The file fio's sync at the start of a new loop goes to, until that sync is issued.
    loop_sync: Option<crate::gen::LoopSync>,
    /// serialize_overlap: which slots are queued or in flight.
    busy: Vec<bool>,
    /// The next I/O waits for a completion (it overlaps one in flight, or the engine said
    /// busy): the reap then waits for at least one, as fio's does on a full queue.
    must_reap: bool,
    /// A periodic sync was just queued beside the I/Os in flight: the fill goes on.
    sync_queued: bool,
    /// A periodic sync made while the engine was busy: retried as it is before anything
    /// else, as fio retries a refused unit (so a sync point can get one more sync).
    pending_sync: Option<(SyncKind, usize)>,
    /// The slot of a unit the engine refused: its retry takes it again, as fio retries
    /// the same unit (a sync is logged at the offset its unit last carried).
    refused_slot: Option<u32>,
    /// unlink_each_loop: the loop whose files are in place.
    files_loop: u32,
    /// When the last I/O was issued (replay delays count from it).
    last_issue: u64,
    /// The time the last completions were stamped with, when nothing happened since:
    /// the next turn of the loop starts at it instead of reading the clock again (the
    /// few ns between are the completions' bookkeeping). Taken once.
    completed_at: Option<u64>,
    /// The latest clock reading of this turn (its start, or its last commit): the time
    /// the watchdog is told the worker began to wait, without another read.
    turn_ns: u64,
    /// Where the measured run starts (after the ramp, or the latency window's final run).
    stat_start: u64,
    ramping: bool,
    ramp_end: u64,
    /// Per direction, the I/Os taken before the ramp ended and completed after it: fio
    /// counts their bytes (at completion) but not their issue (its issued count starts
    /// again at the ramp's end), so they come off the I/O count when the job ends.
    ramp_carry: [u64; 3],
    /// The syncs in flight at the ramp's end, likewise (fio counts a sync at its issue).
    ramp_carry_syncs: Vec<SyncKind>,
    /// The ramp ended during a verify pass: the pass's reads take no latency from then.
    pass_unmeasured: bool,
    /// When a timed job's runtime is over.
    end: Option<u64>,
    /// Nothing more will be generated.
    gen_done: bool,
    /// The job's failure, which ends the loop.
    error: Option<String>,
    /// latency_target: the stats as they were before the run, for its final run.
    fresh_stats: Option<JobStats>,
    // What the job asked for, fixed for the run.
    depth: usize,
    slot_len: usize,
    batch: usize,
    /// I/Os queued since the last full commit (fio's `io_u_queued`): reaching `batch`
    /// commits everything staged and starts the count again. The commit made before a
    /// reap leaves the count alone, as fio's does, so the next batch is cut short: with
    /// iodepth_batch_submit=8, reaping 6 at a time, fio submits 6, 2, 4, 4, 2, 6, …
    since_commit: usize,
    cmin: usize,
    cmax: usize,
    /// fio's polling mode (see `ExecOpts::completion_polling`): one I/O at a time.
    polling: bool,
    low: usize,
    serialize: bool,
    lock: crate::job::files::LockMode,
    stamps_commit: bool,
    prio_stats: bool,
    /// The engine times its own requests (the http engine's iobench-only options): its
    /// samples are taken after every completion into the stats' `obj`.
    obj_stats: bool,
    periodic_sync: bool,
    /// File engines (filecreate, ...): an I/O counts as bytes only; the file call's
    /// latency is the one sample, in `op_dir` (the job's read direction unless it only
    /// writes, as fio's), kept when `op_lat`.
    file_ops: bool,
    op_dir: Ddir,
    op_lat: bool,
    /// `arrival=fixed|poisson`: the scheduled start of the I/O in each slot (empty
    /// otherwise), from which its `sched_lat` counts.
    open_loop: bool,
    sched_at: Vec<u64>,
}

impl<'a, E: Engine> Worker<'a, E> {
    /// The state before the first I/O, with the engine set up and the slots in `pool`.
    fn new(
        engine: E,
        mut cx: WorkerCtx<'a>,
        data: crate::verify::Contents,
        pool: Vec<IoUnit>,
        slot_len: usize,
    ) -> io::Result<Self> {
        let job = cx.job;
        let ex = &job.exec;
        let depth = pool.len();
        let serialize = ex.serialize_overlap;
        // Offload submitters complete nothing in the worker's queue call, whatever engine
        // they drive; otherwise the engine's flags say (null: only at depth 1).
        let flags = ex.engine.flags();
        let sync = !ex.offload && flags.sync_at(depth as u32);
        let watch = super::watchdog::Watch::new(job, depth, sync, cx.stats.live);
        // cmdprio: each priority's latency is kept apart (default priority first).
        let prios = engine.ioprios();
        let prio_stats = !prios.is_empty();
        if prio_stats {
            cx.stats.seed_prios(&prios);
        }
        let layout = engine.obj_layout();
        let obj_stats = layout.is_some();
        if let Some(l) = layout {
            cx.stats.obj = Some(Box::new(crate::stats::objstats::ObjStats::new(&l)));
        }
        // Pacing, syncing and the iolog: see `pacing`, `syncing` and `crate::iolog`.
        let pace = super::pacing::Pacer::new(job, cx.gen.thread_number(), depth as u32);
        let syncer = super::syncing::Syncer::new(job);
        let iolog = match &job.workload.replay {
            r if r.read_iolog.is_some() => None,
            crate::job::workload::Replay {
                write_iolog: Some(p),
                ..
            } => Some(crate::iolog::IologWriter::create(p, cx.names)?),
            _ => None,
        };
        let fresh_stats = pace.latency.searching().then(|| cx.stats.clone());
        let open_loop = pace.open_loop();
        let pattern = &job.workload.pattern;
        Ok(Worker {
            stamps_commit: !sync,
            file_ops: !ex.offload && flags.file_ops,
            engine,
            open: super::open_files::OpenFiles::new(job, cx.targets, cx.fds, cx.lazy),
            data,
            pool,
            // fio's free list is a stack filled with io_u 0 first, so its first I/O takes
            // the last unit's buffer (and its first faults are there): the same here.
            free: (0..depth as u32).collect(),
            staged: Vec::with_capacity(depth),
            inflight: 0,
            watch,
            periodic_sync: syncer.periodic(),
            pace,
            syncer,
            flow: super::flow::Flow::for_job(job),
            iolog,
            hold: Hold::None,
            pending: None,
            loop_sync: None,
            busy: vec![false; if serialize { depth } else { 0 }],
            must_reap: false,
            sync_queued: false,
            pending_sync: None,
            refused_slot: None,
            files_loop: 0,
            last_issue: 0,
            completed_at: None,
            turn_ns: 0,
            stat_start: 0,
            ramping: false,
            ramp_end: 0,
            ramp_carry: [0; 3],
            ramp_carry_syncs: Vec::new(),
            pass_unmeasured: false,
            end: None,
            gen_done: false,
            error: None,
            fresh_stats,
            depth,
            slot_len,
            batch: (ex.iodepth_batch_submit as usize).clamp(1, depth),
            since_commit: 0,
            cmin: (ex.iodepth_batch_complete_min as usize).min(depth),
            cmax: (ex.iodepth_batch_complete_max as usize).clamp(1, depth),
            polling: ex.completion_polling,
            low: (ex.iodepth_low as usize).clamp(1, depth),
            serialize,
            lock: job.files.lock,
            prio_stats,
            obj_stats,
            op_dir: if pattern.writes() && !pattern.reads() {
                Ddir::Write
            } else {
                Ddir::Read
            },
            op_lat: !job.report.stats.disable_lat,
            open_loop,
            sched_at: vec![0; if open_loop { depth } else { 0 }],
            cx,
        })
    }

    /// Starts the clock: the ramp, the runtime and the pacer count from now.
    fn start(&mut self) {
        let ex = &self.cx.job.exec;
        let t0 = now_ns();
        self.pace.start(t0);
        let ramp_end = t0 + ex.ramp_time_us * 1000;
        self.end = (ex.runtime_us > 0).then_some(ramp_end + ex.runtime_us * 1000);
        self.ramp_end = ramp_end;
        self.stat_start = t0;
        self.ramping = ex.ramp_time_us > 0;
        // ramp_size: the bytes are judged at each whole second of the job, as fio 3.42's
        // helper thread judges them, so the ramp ends at the first second by which the
        // clone has moved that much (and never, in a job shorter than a second).
        // The runtime starts when the ramp ends, however long it takes.
        if ex.ramp_bytes > 0 {
            self.ramping = true;
            self.ramp_end = t0 + RAMP_CHECK_NS;
            self.end = self.end.map(|_| u64::MAX);
        }
    }

    /// One turn of the loop: answer a live snapshot, end the ramp, then act on a hold, or
    /// fill the queue, submit and reap. False when the loop is over.
    fn step(&mut self) -> io::Result<bool> {
        let now = self.completed_at.take().unwrap_or_else(now_ns);
        self.turn_ns = now;
        if self.cx.stats.live.is_some_and(|s| s.wanted()) {
            let measured = if self.ramping {
                0
            } else {
                now - self.stat_start
            };
            self.cx.stats.inflight = self.inflight as u32;
            crate::stats::snapshot::answer(&mut self.cx.stats, measured);
        }
        if self.ramping && now >= self.ramp_end {
            if self.ramp_bytes_reached() {
                self.end_ramp(now);
            } else {
                self.ramp_end += RAMP_CHECK_NS;
            }
        }
        if self.error.is_some() || self.end.is_some_and(|e| now >= e) || super::terminating() {
            return Ok(false);
        }
        // Pacing/syncing: act on a hold once nothing it waits for is in flight.
        if self.hold != Hold::None
            && (self.inflight == 0 || matches!(self.hold, Hold::Until { drain: false, .. }))
        {
            self.act_on_hold()?;
            return Ok(true);
        }
        let limit = if self.polling {
            1
        } else {
            self.pace.depth_limit(self.depth)
        };
        self.fill(limit)?;
        if self.hold != Hold::None {
            // fio quiesces before a sync, a think time or a rate wait: a full commit.
            self.full_commit()?;
        }
        if !self.staged.is_empty() {
            self.submit()?;
        }
        self.check_min_rate();
        if self.inflight == 0 && self.staged.is_empty() && self.syncer.take_end_sync() {
            self.end_sync()?;
        }
        // A loop ended: its writes are verified before the next loop's I/O. (The
        // backlog's reads are taken among the writes, in `next_io`.)
        if self.inflight == 0 && self.staged.is_empty() && self.data.take_loop_due() {
            if let Some(t) = self.verify_pass()? {
                self.error.get_or_insert(t);
            }
        }
        if self.inflight == 0 {
            let idle = self.gen_done && self.staged.is_empty() && self.hold == Hold::None;
            return Ok(!idle);
        }
        self.reap(limit)?;
        Ok(true)
    }

    /// At a check of the ramp: true unless `ramp_size` is set and the clone has moved
    /// fewer bytes (every direction together) than it asks.
    #[cold]
    fn ramp_bytes_reached(&self) -> bool {
        let want = self.cx.job.exec.ramp_bytes;
        want == 0 || self.cx.stats.dir.iter().map(|d| d.bytes).sum::<u64>() >= want
    }

    /// The ramp is over: what was counted while ramping does not belong in the results.
    #[cold]
    fn end_ramp(&mut self, now: u64) {
        self.ramping = false;
        crate::debug::enter(crate::debug::RunState::Running);
        self.stat_start = now;
        // The runtime counts from the ramp's end as it happens, not as it was due: fio
        // starts its epoch again there, so a ramp that ends late (a first I/O slower than
        // the ramp, a stalled thread) still leaves the whole runtime measured.
        let runtime_ns = self.cx.job.exec.runtime_us * 1000;
        self.end = self.end.map(|_| now + runtime_ns);
        self.pace.start(now);
        self.cx.stats.reset_io_maps();
        self.cx.stats.reset_ramp_counts();
        // The I/Os in flight now complete after the ramp: their bytes and latencies are
        // counted then, but, as in fio, not their issue (nor the depth they were
        // committed at). Those staged and not yet committed are issued after the ramp.
        let mut taken = vec![true; self.pool.len()];
        for &f in self.free.iter().chain(&self.staged) {
            taken[f as usize] = false;
        }
        for (u, _) in self.pool.iter().zip(&taken).filter(|(_, t)| **t) {
            match u.op {
                Op::Rw(d) => self.ramp_carry[d as usize] += 1,
                Op::Sync { kind } => self.ramp_carry_syncs.push(kind),
            }
        }
    }

    /// Acts on the hold whose wait is over: a sync, a thinktime pause or a sleep; then
    /// checks the latency_target window.
    fn act_on_hold(&mut self) -> io::Result<()> {
        match std::mem::replace(&mut self.hold, Hold::None) {
            Hold::Sync {
                kind,
                file,
                before,
                offset,
            } => {
                // The files opened and closed before the sync's file was picked (that
                // one included) come first, as in fio's log.
                if let Some(fail) = self.file_events(before)? {
                    self.cx.stats.record_error(fail.errno, &fail.verror);
                    self.error = Some(fail.verror);
                    return Ok(());
                }
                self.sync(kind, file, offset)?;
            }
            Hold::Think => self.pace.think(super::terminating),
            Hold::Until { at, .. } => {
                let at = self.end.map_or(at, |e| at.min(e));
                if self.open_loop && self.inflight > 0 {
                    self.reap_until(at)?;
                } else {
                    super::pacing::sleep_until(at, super::terminating)
                }
            }
            Hold::Drain | Hold::None => {}
        }
        if let Some(s) = &self.fresh_stats {
            match self.pace.latency.check_window(now_ns()) {
                super::pacing::Verdict::FinalRun => {
                    self.cx.stats = s.clone();
                    self.stat_start = now_ns();
                }
                super::pacing::Verdict::Done => self.gen_done = true,
                _ => {}
            }
        }
        Ok(())
    }

    /// Open-loop arrivals: waits for the next scheduled start at `at` while reaping what
    /// completes, so completions are stamped within a poll slice of when they happen
    /// and the next I/O still starts on time. A non-blocking reap, then a short sleep:
    /// no engine offers a reap with a deadline, and this runs only while the job is
    /// ahead of its schedule.
    #[cold]
    fn reap_until(&mut self, at: u64) -> io::Result<()> {
        /// The longest sleep between two looks at the completions.
        const POLL_NS: u64 = 20_000;
        loop {
            if self.inflight > 0 {
                self.reap_some(0, self.inflight, Self::complete)?;
            }
            let now = now_ns();
            if now >= at || self.error.is_some() || super::terminating() {
                return Ok(());
            }
            if self.inflight == 0 {
                super::pacing::sleep_until(at, super::terminating);
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_nanos((at - now).min(POLL_NS)));
        }
    }

    /// Syncs `file` with nothing in flight, logging it at `offset` when given.
    fn sync(
        &mut self,
        kind: crate::engine::SyncKind,
        file: usize,
        offset: Option<u64>,
    ) -> io::Result<()> {
        let off = offset
            .or(self.cx.gen.sync_log_offset())
            .unwrap_or(self.syncer.last_io_offset);
        let t = now_ns();
        // Nothing is in flight: any slot is free to carry the sync.
        let unit = &mut self.pool[self.free.last().copied().unwrap_or(0) as usize];
        let fd = self.open.fds().get(file).copied().unwrap_or(-1);
        let r = self.syncer.sync(&mut self.engine, unit, file, fd, kind)?;
        if r < 0 {
            let errno = (-r) as i32;
            let text = format!(
                "io_u error on file {}: {}: {}",
                self.cx.names.get(file).map_or("?", |s| s.as_str()),
                crate::job::errors::strerror(errno),
                kind.log_name()
            );
            self.cx.stats.record_error(errno, &io_verror(errno));
            if !self.cx.job.exec.errors.non_fatal(1, errno) {
                eprintln!("iobench: {text}");
                self.error.get_or_insert(text);
            }
        } else {
            let lat = (!self.ramping).then(|| now_ns() - t);
            super::syncing::account(&mut self.cx.stats, kind, lat);
        }
        if let Some(l) = &mut self.iolog {
            l.log_op(file, kind.log_name(), off, 0)?;
        }
        Ok(())
    }

    /// Queues a periodic sync of `file` in a free slot beside the I/Os in flight, as fio
    /// 3.33 queues one on an engine that takes syncs so (io_uring, posixaio; libaio syncs
    /// in line with its I/Os left in flight): until one completes, the next free slot gets
    /// another (see `Syncer::io_completed`).
    #[cold]
    fn queue_sync(&mut self, kind: SyncKind, file: usize) -> io::Result<()> {
        // The files opened and closed on the way to the sync's file pick come first.
        if let Some(fail) = self.file_events(usize::MAX)? {
            self.cx.stats.record_error(fail.errno, &fail.verror);
            self.error = Some(fail.verror);
            return Ok(());
        }
        let fd = match self.open.for_io(file, &mut self.engine) {
            Ok(fd) => fd,
            Err(fail) => {
                self.cx.stats.record_error(fail.errno, &fail.verror);
                self.error = Some(fail.verror);
                return Ok(());
            }
        };
        let slot = self.take_slot();
        // fio logs the sync as it queues it, at the offset its unit kept from the I/O it
        // carried before (the sync leaves it alone).
        if let Some(l) = &mut self.iolog {
            l.log_op(file, kind.log_name(), self.pool[slot as usize].offset, 0)?;
        }
        let u = &mut self.pool[slot as usize];
        u.op = Op::Sync { kind };
        u.file = file as u32;
        u.fd = fd;
        u.len = 0;
        u.result = 0;
        u.start_ns = now_ns();
        u.issue_ns = u.start_ns;
        self.watch.queuing(u);
        // SAFETY: `u` is a slot just taken from `free`; a sync unit reads and writes no
        // buffer.
        match unsafe { self.engine.queue(u) }? {
            Queued::Queued => {
                self.syncer.sync_queued();
                self.staged.push(slot);
                self.count_queued()?;
                self.sync_queued = true;
            }
            Queued::Completed => {
                // Done in line (libaio): fio marks its depth, by every I/O busy with it.
                self.syncer.sync_queued();
                let t = now_ns();
                let busy = (self.inflight + self.staged.len() + 1) as u32;
                self.cx.stats.record_depth(busy, 1);
                let res = self.pool[slot as usize].result;
                self.complete(slot, res, t);
                self.sync_queued = self.error.is_none();
            }
            Queued::Busy => {
                self.free.push(slot);
                self.refused_slot = Some(slot);
                self.open.io_done(file, &mut self.engine);
                self.pending_sync = Some((kind, file));
                self.must_reap = self.inflight > 0;
                self.full_commit()?;
            }
        }
        Ok(())
    }

    /// Fills the queue up to `limit`: generates (or takes back the held) I/Os and queues
    /// them, committing in submit batches, until something holds issuing back.
    fn fill(&mut self, limit: usize) -> io::Result<()> {
        while self.hold == Hold::None
            && !self.gen_done
            && !self.free.is_empty()
            && self.inflight + self.staged.len() < limit
            && !self.data.loop_due()
            && !self.syncer.end_sync_waits()
        {
            // An engine that is busy says so before the I/O is made up (fio's write_iolog
            // logs the refused attempt too, so with it the attempt is made as in fio; so
            // with periodic syncs, where the unit fio made before the refusal, sync or
            // write, decides how many syncs a sync point gets).
            if self.iolog.is_none() && !self.periodic_sync && self.engine.busy() {
                self.must_reap = self.inflight > 0;
                return self.full_commit();
            }
            let Some(next) = self.next_io()? else {
                if std::mem::take(&mut self.sync_queued) {
                    continue;
                }
                return Ok(());
            };
            if !self.issue(next)? {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The next I/O to issue, once every reason to hold it back is ruled out; None when
    /// the fill stops here (a hold, a failure or the end of the I/O).
    fn next_io(&mut self) -> io::Result<Option<crate::gen::NextIo>> {
        if let Some((kind, f)) = self.pending_sync.take() {
            self.queue_sync(kind, f)?;
            return Ok(None);
        }
        // A replayed log's sync: drain, then sync the file it names (see gen::replay).
        if let Some((kind, f)) = self
            .pending
            .is_none()
            .then(|| self.cx.gen.replay_sync_due())
            .flatten()
        {
            self.syncer.last_file = f;
            self.hold = Hold::sync_now(kind, f, &self.cx.gen);
            return Ok(None);
        }
        // verify_backlog: the read of a logged block may go first, as fio's get_io_u
        // asks check_get_verify before anything else (an I/O already made up and held
        // back is issued first: fio had it from get_io_u before).
        // fio's loop takes one while the job has I/O left to issue, or verify trims to
        // make, and its per-loop byte check has not ended the loop.
        let gen = &self.cx.gen;
        if self.data.backlog_on()
            && self.pending.is_none()
            && gen.pass_left()
            && (gen.budget_left() || self.data.trims_pending())
        {
            if let Some(read) = self.data.next_backlog() {
                return Ok(Some(read));
            }
        }
        // A due verify trim goes before the next generated I/O, as fio's get_io_u.
        let mut fresh = false;
        let mut got = self.pending.take().or_else(|| self.data.next_trim());
        if got.is_none() {
            // fio decides on a sync before it generates the next I/O: the sync goes
            // to the file its file service picks next (that pick is used up).
            if let Some(kind) = self.syncer.due().filter(|_| self.cx.gen.budget_left()) {
                let f = self.cx.gen.file_for_sync().unwrap_or(self.syncer.last_file);
                if queueable(kind) && self.engine.queues_sync(kind) {
                    self.queue_sync(kind, f)?;
                } else {
                    self.hold = Hold::sync_now(kind, f, &self.cx.gen);
                }
                return Ok(None);
            }
            // flow: a job ahead of its weight holds back (draining and sleeping
            // flow_sleep first, when set), as fio does before it makes an I/O.
            if let Some(f) = self.flow.as_mut() {
                if f.exceeded() {
                    self.hold = Hold::Until {
                        at: now_ns() + f.sleep_ns.max(1000),
                        drain: f.sleep_ns > 0,
                    };
                    return Ok(None);
                }
            }
            fresh = true;
            if self.periodic_sync {
                self.cx.gen.sync_at_new_loop = self.syncer.due_at_new_loop().is_some();
            }
            got = self.cx.gen.next_io();
            if let Some(f) = self.cx.gen.take_loop_sync_file() {
                self.loop_sync = Some(f);
            }
        }
        let Some(mut next) = got else {
            if let Some(fail) = self.file_events(usize::MAX)? {
                self.cx.stats.record_error(fail.errno, &fail.verror);
                self.error = Some(fail.verror);
            }
            self.gen_done = true;
            return Ok(None);
        };
        // verify_state_load on a reading job: it ends before the first read the saved
        // state does not vouch for, as fio's does.
        if self.data.read_stops(next.ddir, next.file, next.offset) {
            self.gen_done = true;
            return Ok(None);
        }
        // A new loop: the last one's end fsync, then what it wrote is verified, first.
        if fresh {
            let sync = self.syncer.loop_ended(self.cx.gen.loop_number());
            if self.data.loop_ended(self.cx.gen.pass()) || sync {
                self.pending = Some(next);
                return Ok(None);
            }
        }
        if self.pace.think_due() {
            (self.pending, self.hold) = (Some(next), Hold::Think);
            return Ok(None);
        }
        let replay_us = self.cx.gen.replay_delay_us();
        if replay_us > 0 || self.pace.rated() {
            let t = now_ns();
            let wait;
            (next.ddir, wait) = self.pace.choose(next.ddir, t);
            let replay_at = self.last_issue + replay_us * 1000;
            if wait > 0 || (replay_us > 0 && replay_at > t) {
                self.pending = Some(next);
                // Open-loop arrivals keep the queue going: the next start is on the
                // schedule, not after the I/Os in flight.
                self.hold = Hold::Until {
                    at: (t + wait).max(replay_at),
                    drain: wait > 0 && !self.open_loop,
                };
                return Ok(None);
            }
        }
        if next.len > self.slot_len as u64 {
            // The buffers were sized for the job's largest I/O; never read past one.
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "an I/O of {} bytes does not fit the {}-byte buffers",
                    next.len, self.slot_len
                ),
            ));
        }
        // unlink_each_loop: a new loop starts on fresh files, once the last loop's
        // I/O is all done (fio deletes them between its loops).
        if self.cx.job.files.unlink_each_loop && self.cx.gen.loop_number() != self.files_loop {
            if self.inflight + self.staged.len() > 0 {
                (self.pending, self.hold) = (Some(next), Hold::Drain);
                return Ok(None);
            }
            self.files_loop = self.cx.gen.loop_number();
            if let Err(e) = self.open.unlink_all(&mut self.engine) {
                let errno = crate::error::os_errno(&e).unwrap_or(libc::EIO);
                let text = format!("unlink_each_loop: {e}");
                eprintln!("iobench: {text}");
                self.cx.stats.record_error(
                    errno,
                    &format!(
                        "file:backend.c:560, func=unlink_all_files, error={}",
                        crate::job::errors::strerror(errno)
                    ),
                );
                self.error = Some(text);
                return Ok(None);
            }
        }
        // Then, as fio, a sync if one is due (on the file picked first in the loop).
        if let Some(ls) = self.loop_sync.take() {
            self.syncer.new_loop();
            if let Some(kind) = self.syncer.due() {
                let h = Hold::Sync {
                    kind,
                    file: ls.file,
                    before: ls.events_before,
                    offset: Some(ls.offset),
                };
                (self.pending, self.hold) = (Some(next), h);
                return Ok(None);
            }
        }
        // The files the generator opened and closed on the way to this I/O (after
        // the loop's verify and unlink, as fio orders them).
        if let Some(fail) = self.file_events(usize::MAX)? {
            self.cx.stats.record_error(fail.errno, &fail.verror);
            self.error = Some(fail.verror);
            return Ok(None);
        }
        // serialize_overlap: an I/O overlapping one queued or in flight (whatever its
        // file, as fio compares offsets only) waits for a completion.
        if self.serialize && overlaps_busy(&self.pool, &self.busy, next.offset, next.len) {
            (self.pending, self.must_reap) = (Some(next), true);
            return Ok(None);
        }
        Ok(Some(next))
    }

    /// Queues `next` in a free slot: completes it at once when the engine does, stages
    /// it (committing a full batch) when it queues. False when the fill stops here.
    #[inline]
    fn issue(&mut self, next: crate::gen::NextIo) -> io::Result<bool> {
        let fd = match self.open.for_io(next.file, &mut self.engine) {
            Ok(fd) => fd,
            Err(fail) => {
                self.cx.stats.record_error(fail.errno, &fail.verror);
                self.error = Some(fail.verror);
                return Ok(false);
            }
        };
        if let Some(l) = &mut self.iolog {
            l.log_io(next.file, next.ddir, next.offset, next.len)?;
        }
        let slot = self.take_slot();
        if self.serialize {
            self.busy[slot as usize] = true;
        }
        let u = &mut self.pool[slot as usize];
        u.op = Op::Rw(next.ddir);
        u.file = next.file as u32;
        u.fd = fd;
        u.offset = next.offset;
        u.len = next.len as usize;
        u.pass = self.cx.gen.pass();
        u.start_ns = now_ns();
        u.issue_ns = u.start_ns;
        if self.open_loop {
            // Its place in the schedule (never after now: a mixed job's other direction
            // is chosen only when it is due).
            self.sched_at[slot as usize] = self.pace.rate.due_ns(next.ddir).min(u.start_ns);
        }
        self.data.before_queue(u);
        self.last_issue = u.start_ns;
        // lockfile: the lock covers the queue call, as fio's does.
        if let Err(e) = super::filelock::lock(self.lock, u.fd, next.ddir) {
            self.free.push(slot);
            let text = format!("lockfile: {e}");
            self.cx
                .stats
                .record_error(e.raw_os_error().unwrap_or(libc::EIO), &text);
            self.error = Some(text);
            return Ok(false);
        }
        if crate::debug::on(crate::debug::Cat::Io) {
            let name = self
                .cx
                .names
                .get(u.file as usize)
                .map_or("", |s| s.as_str());
            for stage in ["fill", "prep", "queue"] {
                let d = next.ddir as usize;
                crate::debug::io_unit(stage, u.buf, u.offset, u.len, d, name);
            }
        }
        self.watch.queuing(u);
        // SAFETY: `u` is a slot just taken from `free` (not in flight); its buffer is
        // the slot's own region of `bufs` (`slot_len` bytes, at least the largest
        // block, which bounds `u.len`). `run` declares `bufs` before the worker, so it
        // outlives any I/O the engine still has in flight if the loop ends early.
        let queued = unsafe { self.engine.queue(u) };
        if let Err(e) = super::filelock::unlock(self.lock, fd) {
            let text = format!("lockfile: {e}");
            self.cx
                .stats
                .record_error(e.raw_os_error().unwrap_or(libc::EIO), &text);
            self.error.get_or_insert(text);
        }
        let queued = queued?;
        // Only an I/O the engine took counts towards rate, thinktime and sync intervals
        // (fio takes a busy one's issue back too).
        if queued != Queued::Busy {
            if self.open_loop && !self.ramping {
                let (due, at) = (
                    self.sched_at[slot as usize],
                    self.pool[slot as usize].start_ns,
                );
                let behind = self.pace.rate.behind(next.ddir, due, at);
                self.cx.stats.record_start(next.ddir, behind);
            }
            self.pace.issued(next.ddir, next.len);
            self.syncer
                .issued(next.ddir, next.file, next.offset, next.len);
        }
        match queued {
            Queued::Completed => {
                let t = now_ns();
                if self.file_ops {
                    if let Some(ns) = self.engine.take_op_latency() {
                        if self.op_lat && !self.ramping {
                            self.cx.stats.record_clat_only(self.op_dir, ns);
                        }
                    }
                }
                self.cx.stats.record_depth(1, 1);
                self.cx.stats.record_submit(1);
                self.cx.stats.record_complete(1);
                if let Some(us) = self.engine.think_us() {
                    self.pace.think.set_by_engine(us);
                }
                let res = self.pool[slot as usize].result;
                if self.watch.cut_short(res) {
                    return Ok(false);
                }
                self.complete(slot, res, t);
                self.completed_at = Some(t);
                // A synchronous engine never leaves this fill on its own (nothing is in
                // flight, so the queue never fills): the turn ends here whenever `step`
                // has something to do, the ramp's end included, or the ramp would only
                // end with the run and take every count with it.
                let stop = self.error.is_some()
                    || (self.ramping && t >= self.ramp_end)
                    || self.end.is_some_and(|e| t >= e)
                    || super::terminating()
                    || self.cx.stats.live.is_some_and(|s| s.wanted());
                Ok(!stop)
            }
            Queued::Queued => {
                if next.ddir == Ddir::Read && self.data.carries_backlog(slot) {
                    self.cx.gen.count_verify_read(next.len);
                }
                self.staged.push(slot);
                self.count_queued()?;
                Ok(true)
            }
            Queued::Busy => {
                if self.engine.finished() {
                    self.gen_done = true;
                }
                self.free.push(slot);
                self.refused_slot = Some(slot);
                if self.serialize {
                    self.busy[slot as usize] = false;
                }
                self.open.io_done(next.file, &mut self.engine);
                // A backlog read waits in the verify state for its retry instead.
                if !self.data.refused(slot) {
                    self.pending = Some(next);
                }
                self.must_reap = self.inflight > 0;
                // fio commits what is queued when the engine is busy.
                self.full_commit()?;
                Ok(false)
            }
        }
    }

    /// A free slot for the next unit: the one the engine last refused when it is free,
    /// else the last freed.
    #[inline]
    fn take_slot(&mut self) -> u32 {
        if let Some(r) = self.refused_slot.take() {
            if let Some(i) = self.free.iter().rposition(|&s| s == r) {
                let top = self.free.len() - 1;
                self.free.swap(i, top);
            }
        }
        self.free.pop().expect("free slot")
    }

    /// One more I/O was queued: a full commit once `batch` have been since the last.
    #[inline]
    fn count_queued(&mut self) -> io::Result<()> {
        self.since_commit += 1;
        if self.since_commit >= self.batch {
            self.full_commit()?;
        }
        Ok(())
    }

    /// fio's td_io_commit: marks the depth (by every I/O busy now, for the I/Os queued
    /// since the last full commit: fio marks it here only, not at the commit before a
    /// reap), commits what is staged and starts the batch count again (nothing when
    /// nothing was queued since the last).
    fn full_commit(&mut self) -> io::Result<()> {
        if self.since_commit == 0 {
            return Ok(());
        }
        let busy = (self.inflight + self.staged.len()) as u32;
        self.cx.stats.record_depth(busy, self.since_commit as u32);
        if !self.staged.is_empty() {
            self.submit()?;
        }
        self.since_commit = 0;
        Ok(())
    }

    /// Commits the staged I/Os to the engine (as fio does before it reaps, too, which
    /// leaves the batch count alone).
    fn submit(&mut self) -> io::Result<()> {
        let n = self.engine.commit()?;
        if n > 0 {
            self.cx.stats.record_submit(n as u32);
        }
        let t = now_ns();
        self.turn_ns = t;
        for &s in &self.staged[..n] {
            self.pool[s as usize].issue_ns = t;
            self.watch.issued(s, t);
        }
        self.staged.drain(..n);
        self.inflight += n;
        Ok(())
    }

    /// rate_min/rate_iops_min: fails the job when it falls behind.
    fn check_min_rate(&mut self) {
        if self.pace.rate.has_floor() {
            let stats = &mut self.cx.stats;
            let bytes = stats.dir.each_ref().map(|d| d.bytes);
            let blocks = stats.dir.each_ref().map(|d| d.ios);
            let name = &self.cx.job.name;
            if let Some(m) = self.pace.rate.check_floor(name, bytes, blocks, now_ns()) {
                stats.record_error(libc::EIO, &m);
                self.error.get_or_insert(m);
            }
        }
    }

    /// Reaps: at least one when the queue is full (`limit`) or nothing more can be
    /// queued; all of them when pacing or syncing waits for the queue to drain.
    fn reap(&mut self, limit: usize) -> io::Result<()> {
        let drain = !matches!(self.hold, Hold::None | Hold::Until { drain: false, .. });
        let full = self.free.is_empty()
            || self.gen_done
            || drain
            || self.inflight >= limit
            || self.must_reap;
        self.must_reap = false;
        let mut min = self.cmin.min(self.inflight);
        if min == 0 && full {
            min = 1;
        }
        // Open-loop arrivals: with room in the queue the next start is due on the
        // schedule, so waiting is for the pacing hold (`reap_until`), not for an I/O.
        if self.open_loop && !full {
            min = 0;
        }
        self.watch.waiting(&self.pool, self.turn_ns, self.inflight);
        loop {
            self.reap_some(min, self.cmax.min(self.inflight), Self::complete)?;
            let keep = if drain {
                self.inflight > 0
            } else {
                full && self.inflight > self.low
            };
            if !keep || self.watch.timed_out() {
                return Ok(());
            }
            min = 1;
        }
    }

    /// Waits for between `min` and `max` completions and hands each to `complete` (the
    /// job's [`Self::complete`], or a verify pass's) with the time they were reaped;
    /// returns how many there were.
    #[inline]
    fn reap_some(
        &mut self,
        min: usize,
        max: usize,
        mut complete: impl FnMut(&mut Self, u32, i64, u64),
    ) -> io::Result<usize> {
        let n = self.engine.getevents(min, max)?;
        let t = now_ns();
        if n > 0 {
            self.cx.stats.record_complete(n as u32);
        }
        for i in 0..n {
            let c = self.engine.event(i);
            complete(self, c.slot, c.result, t);
        }
        self.inflight -= n;
        self.completed_at = Some(t);
        Ok(n)
    }

    /// Records one completion at `now`, returning its slot to the free list.
    #[inline]
    fn complete(&mut self, slot: u32, res: i64, now: u64) {
        let u = &mut self.pool[slot as usize];
        u.result = res;
        if let (true, Op::Rw(d)) = (crate::debug::on(crate::debug::Cat::Io), u.op) {
            let name = self
                .cx
                .names
                .get(u.file as usize)
                .map_or("", |s| s.as_str());
            crate::debug::io_unit("complete", u.buf, u.offset, u.len, d as usize, name);
        }
        self.free.push(slot);
        self.watch.completed(slot);
        if self.obj_stats {
            Self::take_obj_samples(&mut self.engine, &mut self.cx.stats.obj, self.ramping);
        }
        self.open.io_done(u.file as usize, &mut self.engine);
        if self.serialize {
            self.busy[slot as usize] = false;
        }
        // fio learns at completion whether the last operation was a sync.
        if let Op::Sync { kind } = u.op {
            self.syncer.sync_completed();
            if u.result >= 0 {
                let lat = (!self.ramping).then(|| now - u.start_ns);
                super::syncing::account(&mut self.cx.stats, kind, lat);
            }
        } else {
            self.syncer.io_completed();
        }
        let stats = &mut self.cx.stats;
        if u.result < 0 {
            self.failed(slot);
        } else if u.result == 0 && u.len > 0 && !self.file_ops && matches!(u.op, Op::Rw(_)) {
            // Nothing moved (a read at the end of the file): fio fails the job with
            // "full resid", counting the I/O as issued with no bytes.
            if let Op::Rw(d) = u.op {
                stats.dir[d as usize].ios += 1;
            }
            let text = full_resid_verror();
            stats.record_error(libc::EIO, &text);
            self.error.get_or_insert(text);
        } else if let Op::Rw(d) = u.op {
            if self.ramping {
                stats.record_ramp_io(d, u.result as u64);
            } else if self.file_ops {
                stats.record_io_bytes(d, u.result as u64, now - self.stat_start);
            } else {
                let slat = if self.stamps_commit {
                    u.issue_ns - u.start_ns
                } else {
                    0
                };
                let clat = now - u.issue_ns;
                stats.record_io_at(
                    d,
                    u.result as u64,
                    u.offset,
                    slat,
                    clat,
                    now - self.stat_start,
                );
                if self.prio_stats {
                    stats.record_prio(d, u.prio, slat, clat);
                }
                if self.open_loop {
                    stats.record_sched(d, now.saturating_sub(self.sched_at[slot as usize]));
                }
            }
            let name = self
                .cx
                .names
                .get(u.file as usize)
                .map_or("?", |s| s.as_str());
            if let Err(text) = self.data.on_complete(u, name) {
                if self.data.keeps_going() {
                    stats.record_error(crate::verify::contents::EILSEQ, "");
                } else {
                    stats.record_error(crate::verify::contents::EILSEQ, &text);
                    self.error.get_or_insert(text);
                }
            }
            match self
                .pace
                .completed(d, now - u.start_ns, (name, u.offset, u.len))
            {
                super::pacing::Verdict::Go => {}
                super::pacing::Verdict::Fail(errno, text) => {
                    stats.record_error(errno, &text);
                    self.error.get_or_insert(text);
                }
                _ => self.hold = Hold::Drain,
            }
        }
    }

    /// Records the requests the engine timed itself since the last completion (the http
    /// engine's iobench-only statistics); during the ramp they are dropped.
    fn take_obj_samples(
        engine: &mut E,
        obj: &mut Option<Box<crate::stats::objstats::ObjStats>>,
        ramping: bool,
    ) {
        engine.drain_obj_samples(&mut |s| {
            if let (false, Some(o)) = (ramping, obj.as_deref_mut()) {
                o.record(s);
            }
        });
    }

    /// Records a failed completion (negative result): counts it, and fails the job
    /// unless the error is one it continues past (errors are off the hot path).
    #[cold]
    fn failed(&mut self, slot: u32) {
        let reported = self.engine.take_queue_failure();
        let u = &self.pool[slot as usize];
        self.data.write_failed(u);
        let ex = &self.cx.job.exec;
        let stats = &mut self.cx.stats;
        let errno = (-u.result) as i32;
        let d = match u.op {
            Op::Rw(d) => {
                // fio counts the failed I/O as issued, with no bytes (a file engine's
                // failed call is not an I/O: nothing was issued).
                if !self.file_ops {
                    stats.dir[d as usize].ios += 1;
                }
                d as usize
            }
            Op::Sync { .. } => 1,
        };
        // fill_device: running out of space is how the job ends, not a failure.
        let full =
            self.cx.job.workload.fill_device && (errno == libc::ENOSPC || errno == libc::EDQUOT);
        if full {
            self.gen_done = true;
            self.pending = None;
        }
        let fatal = !full && !ex.errors.non_fatal(d, errno);
        // Text is only built when it is shown or kept.
        if !(full || fatal || ex.errors.error_dump || stats.error == 0) {
            stats.record_error(errno, "");
            return;
        }
        let name = self
            .cx
            .names
            .get(u.file as usize)
            .map_or("", |s| s.as_str());
        let line = if self.file_ops {
            // File engines fail in their call, named as fio names it.
            format!(
                "{}({}): {}",
                self.engine.op_name(),
                name,
                io::Error::from_raw_os_error(errno)
            )
        } else {
            io_error_line(name, errno, u.op, u.offset, u.len)
        };
        // A trim fails inside fio's queue call, which names itself and prints no io_u
        // line.
        // So does an engine that reports its own failures (mtd), naming its call or not.
        let trim = u.op == Op::Rw(Ddir::Trim);
        if (full || fatal || ex.errors.error_dump) && !trim && reported.is_none() {
            eprintln!("iobench: {line}");
        }
        if !full {
            let (errno, verror) = match reported {
                Some(QueueFailure::Named { errno, site, func }) => (
                    errno,
                    format!(
                        "file:{site}, func={func}, error={}",
                        crate::job::errors::strerror(errno)
                    ),
                ),
                Some(QueueFailure::Silent) => (errno, queue_verror(errno)),
                None if trim => (errno, queue_verror(errno)),
                None => (errno, io_verror(errno)),
            };
            stats.record_error(errno, &verror);
        }
        if fatal && self.error.is_none() {
            self.error = Some(line);
        }
    }

    /// Acts on at most `most` of the file events the generator has (see `file_events`).
    #[inline(always)]
    fn file_events(&mut self, most: usize) -> io::Result<Option<super::open_files::OpenFailure>> {
        // Most I/Os open and close nothing.
        if self.cx.gen.file_events_waiting() == 0 {
            return Ok(None);
        }
        file_events(
            &mut self.cx.gen,
            &mut self.open,
            &mut self.iolog,
            &mut self.engine,
            most,
        )
    }

    /// Runs the verify pass after the writes (of the job or of a loop) over files opened
    /// for it when the worker opens files as it goes. Returns the job's error text when
    /// the pass failed (already recorded in the stats).
    fn verify_pass(&mut self) -> io::Result<Option<String>> {
        // fio closes the job's files before its verify phase (clear_io_state) and opens
        // them again for its reads, and closes them again before its next loop: so does
        // the write_iolog (the reads and the next loop's I/O log their opens).
        self.iolog_close_for_verify()?;
        let opened = if self.data.reads_back() {
            self.open.before_verify(&mut self.engine)
        } else {
            Ok(())
        };
        let r = match opened {
            Ok(()) => self.verify_reads()?,
            Err(f) => Err((f.errno, f.verror)),
        };
        self.open.after_verify(&mut self.engine);
        self.iolog_close_for_verify()?;
        Ok(r.err().map(|(errno, text)| {
            self.cx.stats.record_error(errno, &text);
            text
        }))
    }

    /// The write_iolog's closes around a verify phase (see `verify_pass`), unless the
    /// runtime is over (fio then ends the job without one).
    fn iolog_close_for_verify(&mut self) -> io::Result<()> {
        if let (Some(l), true) = (&mut self.iolog, self.data.verifies_after()) {
            if self.end.is_none_or(|e| now_ns() < e) {
                l.close_all()?;
            }
        }
        Ok(())
    }

    /// Reads back and checks the pass's blocks with the loop's own phases: fill (the
    /// pass's reads instead of generated I/O), submit, reap and complete (the pass's
    /// check instead of the job's accounting). With `verify_async`, checker threads
    /// (scoped to the pass) check the blocks while reads stay in flight.
    fn verify_reads(&mut self) -> io::Result<Result<(), (i32, String)>> {
        self.pass_unmeasured = false;
        let bases = self.pool.iter().map(|u| u.buf).collect();
        let Some(mut pass) = self.data.begin_pass(bases) else {
            return Ok(Ok(()));
        };
        // The pass drops the cache first (counted in the pass's time, as fio's
        // do_verify), so it reads what reached the storage.
        self.open.invalidate_before_verify();
        let threads = self.data.checker_threads();
        let env = (threads > 0).then(|| self.data.checker_env());
        let names = self.cx.names;
        let depth = self.depth;
        let run = std::thread::scope(|scope| -> io::Result<()> {
            let mut ck = match &env {
                Some((v, filler)) => Some(crate::verify::offload::Checkers::spawn(
                    scope, threads, depth, v, filler, names,
                )?),
                None => None,
            };
            // The checkers end (and the scope joins them) when `ck` is dropped here.
            self.verify_loop(&mut pass, &mut ck)
        });
        let r = self.data.end_pass(pass, &mut self.pool, &mut self.cx.stats);
        run.map(|()| r)
    }

    /// Takes the I/Os carried over the ramp's end off the counts (see `ramp_carry`).
    fn settle_ramp_carry(&mut self) {
        for d in Ddir::ALL {
            let ios = &mut self.cx.stats.dir[d as usize].ios;
            *ios = ios.saturating_sub(std::mem::take(&mut self.ramp_carry[d as usize]));
        }
        for kind in std::mem::take(&mut self.ramp_carry_syncs) {
            super::syncing::unaccount(&mut self.cx.stats, kind);
        }
    }

    /// The verify pass's turns of the loop, until every block is read and checked, a
    /// failure ends the pass or the run is stopped.
    fn verify_loop(
        &mut self,
        pass: &mut crate::verify::ReadPass,
        ck: &mut Option<crate::verify::offload::Checkers>,
    ) -> io::Result<()> {
        loop {
            // The ramp is a time: it can end during the pass, as fio's does (its counts
            // so far are forgotten there too). fio's job is then left in its ramp state
            // for the rest of the pass, which counts the reads but takes no latency.
            if self.ramping {
                let now = now_ns();
                if now >= self.ramp_end {
                    self.end_ramp(now);
                    self.pass_unmeasured = true;
                }
            }
            // The runtime bounds the pass too: fio's verify phase stops where the job's
            // runtime is over, so a timed write job reads nothing back (fio says so
            // before it starts, `report::verify_notes`).
            if self.inflight == 0
                && self.staged.is_empty()
                && self.end.is_some_and(|e| now_ns() >= e)
            {
                return Ok(());
            }
            if let Some(c) = ck {
                while let Some(v) = c.try_verdict() {
                    let slot = pass.verdict(v, &self.data, self.cx.names);
                    self.free.push(slot);
                }
            }
            self.verify_fill(pass, ck)?;
            if !self.staged.is_empty() {
                self.submit()?;
            }
            if self.inflight == 0 {
                if let Some(v) = ck.as_mut().and_then(|c| c.wait_verdict()) {
                    let slot = pass.verdict(v, &self.data, self.cx.names);
                    self.free.push(slot);
                    continue;
                }
                if self.staged.is_empty()
                    && (pass.failed() || pass.exhausted() || super::terminating())
                {
                    return Ok(());
                }
                continue;
            }
            self.watch.waiting(&self.pool, now_ns(), self.inflight);
            self.reap_some(1, self.inflight, |w, slot, res, t| {
                w.verify_complete(pass, ck, slot, res, t)
            })?;
        }
    }

    /// The verify pass's fill: the rest of short reads first, then new blocks, into
    /// free slots, until the engine is busy or nothing is left.
    fn verify_fill(
        &mut self,
        pass: &mut crate::verify::ReadPass,
        ck: &mut Option<crate::verify::offload::Checkers>,
    ) -> io::Result<()> {
        while !pass.failed() {
            let (slot, fresh) = match pass.again_slot() {
                Some(s) => (s, false),
                None if pass.has_block() && !super::terminating() => match self.free.pop() {
                    Some(s) => (s, true),
                    None => return Ok(()),
                },
                None => return Ok(()),
            };
            let u = &mut self.pool[slot as usize];
            if fresh {
                pass.start_block(u, self.open.fds());
                if pass.rewrites() {
                    self.data.refill(u, pass.numberio(slot));
                }
                // fio's write_iolog has the pass's reads of logged blocks.
                if let (Some(l), true) = (&mut self.iolog, pass.reads_log()) {
                    l.log_io(u.file as usize, Ddir::Read, u.offset, u.len as u64)?;
                }
            }
            u.start_ns = now_ns();
            u.issue_ns = u.start_ns;
            self.watch.queuing(u);
            // SAFETY: `u` is a slot not in flight (just taken from `free`, or a short
            // read reaped and not requeued yet); its buffer is within the slot's own
            // region of `bufs`, sized for the largest block, which `run` keeps alive
            // until the engine (and any I/O in flight) is gone.
            match unsafe { self.engine.queue(u) }? {
                Queued::Completed => {
                    pass.taken(fresh);
                    let stats = &mut self.cx.stats;
                    stats.record_depth(1, 1);
                    stats.record_submit(1);
                    stats.record_complete(1);
                    let res = self.pool[slot as usize].result;
                    self.verify_complete(pass, ck, slot, res, now_ns());
                }
                Queued::Queued => {
                    pass.taken(fresh);
                    self.staged.push(slot);
                    // Committed in the job's submit batches, as the job's own I/O: one
                    // commit of the whole depth lets the block layer merge adjacent
                    // reads that fio (iodepth_batch_submit=1) sends one by one.
                    self.count_queued()?;
                }
                Queued::Busy => {
                    if fresh {
                        self.free.push(slot);
                    }
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The verify pass's complete: the read in `slot` ended with `res` at `now`; the
    /// pass accounts and checks it, and its slot is free again unless a checker holds
    /// it or its rest is still to be read.
    fn verify_complete(
        &mut self,
        pass: &mut crate::verify::ReadPass,
        ck: &mut Option<crate::verify::offload::Checkers>,
        slot: u32,
        res: i64,
        now: u64,
    ) {
        if self.obj_stats {
            Self::take_obj_samples(&mut self.engine, &mut self.cx.stats.obj, self.ramping);
        }
        let u = &mut self.pool[slot as usize];
        u.result = res;
        self.watch.completed(slot);
        let settled = pass.completed(
            u,
            &self.data,
            ck,
            &mut self.cx.stats,
            self.cx.names,
            now,
            self.stat_start,
            self.ramping || self.pass_unmeasured,
        );
        if settled == crate::verify::Settled::Free {
            self.free.push(slot);
        }
    }

    /// end_fsync and fsync_on_close: fsyncs every open file once a loop's writes are done
    /// (fio logs them as syncs but leaves them out of the sync statistics). A replayed
    /// log decides whether the job writes, and a sync as its last operation leaves
    /// nothing to sync, as in fio. The queue is empty.
    fn end_sync(&mut self) -> io::Result<()> {
        let wrote = self
            .cx
            .gen
            .replay_writes()
            .map_or(self.cx.job.workload.pattern.writes(), |w| {
                w && !self.syncer.last_was_sync()
            });
        if !(self.syncer.end_fsync || self.syncer.end_syncfs || self.syncer.fsync_on_close)
            || !wrote
        {
            return Ok(());
        }
        crate::debug::enter(crate::debug::RunState::Fsyncing);
        if self.syncer.end_syncfs {
            return self.end_syncfs();
        }
        for (i, &fd) in self.open.fds().iter().enumerate() {
            // Files closed along the way were synced at their close (fsync_on_close).
            if self.cx.lazy && fd < 0 {
                continue;
            }
            let unit = &mut self.pool[0];
            super::syncing::issue(&mut self.engine, unit, i, fd, SyncKind::Fsync, 0, 0)?;
            if let Some(l) = &mut self.iolog {
                l.log_op(i, "sync", self.syncer.last_offset, 0)?;
            }
        }
        Ok(())
    }

    /// `end_syncfs`: one syncfs for each file system the job's regular files are on (by
    /// the device of each file's directory, the last found first, as fio lists them),
    /// each through its directory opened for the call. fio's iolog names the directory
    /// with the action `wait` (its table of action names has no `syncfs`).
    #[cold]
    fn end_syncfs(&mut self) -> io::Result<()> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let mut dirs: Vec<(u64, String)> = Vec::new();
        for t in self.cx.targets {
            if t.kind != super::files::Kind::Regular {
                continue;
            }
            let dir = match std::path::Path::new(&t.path).parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_string_lossy().into_owned(),
                Some(_) => ".".to_string(),
                None => t.path.clone(),
            };
            let dev = std::fs::metadata(&dir)
                .map_err(|e| io::Error::new(e.kind(), format!("end_syncfs: {dir}: {e}")))?
                .dev();
            if !dirs.iter().any(|(d, _)| *d == dev) {
                dirs.insert(0, (dev, dir));
            }
        }
        for (_, dir) in dirs {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK)
                .open(&dir)
                .map_err(|e| io::Error::new(e.kind(), format!("open {dir} for syncfs: {e}")))?;
            // SAFETY: `f` is an open descriptor for the whole call.
            if unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&f)) } != 0 {
                let e = io::Error::last_os_error();
                return Err(io::Error::new(e.kind(), format!("syncfs {dir}: {e}")));
            }
            if let Some(l) = &mut self.iolog {
                l.log_path_op(&dir, "wait", self.syncer.last_offset, 0)?;
            }
        }
        Ok(())
    }

    /// Ends the run: waits for what is in flight (unless the job `timed_out`), runs the
    /// end syncs, the verify pass, and puts the run times and the `faked` verify_only
    /// counts in the stats.
    fn finish(mut self, timed_out: bool, faked: Option<[(u64, u64); 3]>) -> io::Result<JobStats> {
        // A timed-out job's hung I/Os are not waited for (see the end).
        if timed_out {
            let text = super::watchdog::timeout_verror();
            self.cx
                .stats
                .record_error(super::watchdog::ETIMEDOUT, &text);
            self.error = Some(text);
            self.inflight = 0;
        }
        // Drain what is still in flight so buffers are not freed under the kernel.
        while self.inflight > 0 {
            let n = self.engine.getevents(1, self.inflight)?;
            let t = now_ns();
            for i in 0..n {
                let c = self.engine.event(i);
                self.complete(c.slot, c.result, t);
            }
            self.inflight -= n;
        }
        self.settle_ramp_carry();
        // fio ends do_io with the end fsync, and verifies after it.
        if !timed_out {
            self.end_sync()?;
        }
        if self.error.is_none() {
            self.error = self.verify_pass()?;
            // A ramp that ended during the pass carried its reads in flight.
            self.settle_ramp_carry();
        }
        let ms = ((now_ns() - self.stat_start) / 1_000_000).max(1);
        let cx = &mut self.cx;
        if let Some(l) = self.iolog.take() {
            l.finish()?;
        }
        if let Some((t, w, p, d)) = self.pace.latency.report() {
            cx.stats.set_latency_target(t, w, p, d);
        }
        cx.stats.set_total_runtime_ms(ms);
        // Datagrams lost on the way (net over UDP) count as dropped reads, as in fio.
        cx.stats.dir[Ddir::Read as usize].dropped += self.engine.take_dropped();
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
            crate::stats::snapshot::answer(&mut cx.stats, ms * 1_000_000);
        }
        if self.error.is_some() {
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
        let Worker { engine, cx, .. } = self;
        if timed_out {
            // The hung I/Os may still complete into their buffers, and an engine's
            // teardown may wait for them: it is left to the process's end.
            std::mem::forget(engine);
        }
        Ok(cx.stats)
    }
}

/// True when `len` bytes at `offset` overlap a unit that is queued or in flight.
/// True for the periodic syncs an engine may queue beside I/Os in flight: fsync and
/// fdatasync (sync_file_range keeps the drain, which covers the range written so far).
#[inline]
fn queueable(kind: SyncKind) -> bool {
    matches!(kind, SyncKind::Fsync | SyncKind::Fdatasync)
}

fn overlaps_busy(pool: &[IoUnit], busy: &[bool], offset: u64, len: u64) -> bool {
    pool.iter()
        .zip(busy)
        .any(|(u, &b)| b && offset < u.offset + u.len as u64 && u.offset < offset + len)
}

/// Acts on the files the generator opened and closed since last asked: logs them, and
/// (when the worker opens files as it goes) opens each picked file at once, as fio does,
/// and closes each finished one once its I/O in flight completes. Returns the failure of
/// an open (fio logs only opens that worked). Acts on `most` events at the most.
#[inline(never)]
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

#[cfg(test)]
#[path = "worker_verify_tests.rs"]
mod verify_tests;

/// The time of clock `id` in ms (`None` when the clock cannot be read), as fio stamps a
/// job's start for JSON's `job_start`.
fn clock_ms(id: i32) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we own; a bad id only fails.
    if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
        return None;
    }
    Some(ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000)
}
