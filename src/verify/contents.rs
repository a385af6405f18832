//! The worker's data hooks: fill each write buffer before it is queued, remember what was
//! written, check reads on completion, and run the verify read phase after the writes.
//! The worker calls these in a few places; everything else about data lives here.

use super::block::{self, Expect, Failure, Stamp};
use super::hist::WriteLog;
use super::pass::{ReadPass, Source};
use crate::buffer::fill::Filler;
use crate::defs::value::SizeSpec;
use crate::defs::verify_method::Method;
use crate::defs::Ddir;
use crate::engine::{IoUnit, Op};
use crate::gen::Generator;
use crate::job::Job;
use crate::stats::JobStats;

/// fio's errno for a verify failure (EILSEQ).
pub const EILSEQ: i32 = libc::EILSEQ;

/// A slot's `slot_seq` when no logged write of it is in flight.
const NO_SEQ: u64 = u64::MAX;

/// The flags of fio's verify header check for a block from the verify log.
pub(super) const FROM_LOG: u32 = 0x88;

/// One written block, remembered for the verify phase.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Piece {
    pub(super) file: u32,
    pub(super) offset: u64,
    pub(super) len: u32,
    pub(super) numberio: u64,
    pub(super) seed: u64,
    pub(super) seq: u64,
    /// The job's number of the write (see `trim`).
    pub(super) wno: u64,
    /// Trimmed since written: it must read back as zeroes.
    pub(super) zeroes: bool,
}

/// Per-worker data state.
pub struct Contents {
    pub(super) filler: Filler,
    pub(super) v: crate::job::verifyopts::VerifyOpts,
    /// Something to do for each write (verify data, refill, scramble).
    writes_active: bool,
    slots: Vec<Stamp>,
    issued_writes: u64,
    thread: u16,
    /// The written blocks still to check (fio's verify list).
    hist: WriteLog,
    /// Writes remembered so far: the next one's sequence number.
    next_seq: u64,
    /// Backlog blocks still owed by the last backlog point (fio's `verify_batch`).
    verify_batch: u64,
    /// The last completed I/O was a read (fio's `last_ddir`): no backlog point then.
    last_read: bool,
    keep_hist: bool,
    pub(super) check_numberio: bool,
    pub(super) check_seed: bool,
    /// The job writes and reads: main-loop reads are not checked (written data is).
    mixed: bool,
    /// With `verify_state_save`: the last completed writes, saved when the job ends.
    saving: Option<SaveTo>,
    /// Reads completed so far (fio's `io_blocks[DDIR_READ]`), for `read_stops`.
    reads_done: u64,
    /// With `verify_state_load`: where the saved run's certain writes end.
    loaded: Option<super::state::Loaded>,
    /// `continue_on_error` covers verify errors (and `verify_fatal` is off): a failed
    /// block is counted and reported, and checking goes on.
    pub(super) keep_going: bool,
    /// `experimental_verify`: the write sequence is replayed from a copy of the generator
    /// taken before the first I/O, instead of being remembered.
    replay: Option<crate::gen::Generator>,
    experimental: bool,
    /// Bytes written in this loop: how far an experimental replay reads.
    written: u64,
    /// The job's smallest block size (fio's `rw_min_bs`).
    min_bs: u64,
    /// `experimental_verify` on libaio or io_uring: fio 3.33 sets up each I/O for its
    /// engine (the opcode) when it takes it from the generator, before its verify loop
    /// turns the replayed write into a read, so the "read" goes out as a write of fresh
    /// verify data, counted as a read, and its check of that buffer passes. The same is
    /// done here, so that the device sees fio's work and such a job passes as under fio.
    rewrites: bool,
    /// `experimental_verify`: bytes verified over the whole job and verify reads issued
    /// (fio's `bytes_verified` and `verify_read_issues`, never reset between loops): a
    /// loop's replay reads while the job's verified bytes stay within that loop's writes,
    /// so with equal loops only the first is read back, as in fio 3.33.
    verified_total: u64,
    verify_reads: u64,
    /// Verify trims (`trim_percentage`), when asked for.
    trims: Option<super::trim::Trims>,
    /// The write number of the write in each slot.
    slot_wno: Vec<u64>,
    /// The verify log's sequence number of the write in each slot while it is in flight
    /// (queued and not yet completed), [`NO_SEQ`] otherwise: a logged block whose write
    /// is in flight is not read back yet (fio's `IP_F_IN_FLIGHT`).
    slot_seq: Vec<u64>,
    /// Per slot: the logged block whose backlog verify read the slot carries, checked
    /// against it when the read completes (see [`Self::next_backlog`]).
    reading: Vec<Option<Piece>>,
    /// The block of the backlog read taken last and not queued yet: the unit the worker
    /// queues next as a read takes it (in [`Self::before_queue`]).
    staged: Option<Piece>,
    /// The job's error policy: which read errors of the verify pass may be passed over.
    pub(super) errors: crate::job::errors::ErrorPolicy,
    /// The generator pass of the last generated I/O (0 before the first).
    pass: u32,
    /// A loop ended: its writes are to be verified before the next loop's I/O.
    loop_due: bool,
    randrepeat: bool,
}

/// Where and what the verify state is saved as.
struct SaveTo {
    comps: super::state::Completions,
    name: String,
    index: u64,
}

fn realtime() -> (u32, u32) {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (t.as_secs() as u32, t.subsec_nanos())
}

impl Contents {
    /// The data state for clone `clone` of `job` with `depth` buffer slots.
    pub fn new(job: &Job, clone: u32, depth: usize) -> Contents {
        let w = &job.workload;
        let size = match w.size {
            Some(SizeSpec::Bytes(b)) => b,
            _ => 0,
        };
        let seed = w.randseed.unwrap_or(0x1234_5678_9abc_def0) ^ ((clone as u64 + 1) << 32);
        let filler = Filler::new(&job.buffers, seed, size, w.bs[1].0);
        let v = job.verify.clone();
        let writes = w.pattern.writes();
        let reads = w.pattern != crate::defs::Pattern::Write
            && w.pattern != crate::defs::Pattern::RandWrite;
        let verify_on = v.on();
        let b = filler.opts();
        Contents {
            writes_active: verify_on || b.refill || b.scramble,
            slots: vec![Stamp::default(); depth],
            issued_writes: 0,
            thread: (clone + 1) as u16,
            hist: WriteLog::new(false),
            next_seq: 0,
            verify_batch: 0,
            last_read: false,
            keep_hist: verify_on && writes && (v.do_verify || v.backlog > 0) && !v.experimental,
            check_numberio: v.checks_write_sequence(
                w,
                job.exec.time_based,
                job.exec.engine.flags().sync,
                job.exec.iodepth_given,
            ),
            // fio 3.33's rule: a verify_only pass knows no seeds (nothing was written), so
            // it checks none, nor does a job that only writes; from 3.40 `verify_header_seed`
            // and its defaults decide (an experimental replay keeps no seeds to check).
            check_seed: match v.checks_header_seed(w) {
                Some(on) => on && writes && !v.experimental,
                None => {
                    writes
                        && reads
                        && v.pattern.is_none()
                        && v.backlog == 0
                        && !v.experimental
                        && !v.only
                }
            },
            mixed: writes && reads,
            saving: None,
            reads_done: 0,
            loaded: None,
            keep_going: !v.fatal && job.exec.errors.non_fatal(0, EILSEQ),
            replay: None,
            experimental: verify_on && writes && v.do_verify && v.experimental,
            written: 0,
            min_bs: w.bs.iter().map(|b| b.0).min().unwrap_or(0),
            rewrites: verify_on
                && writes
                && v.do_verify
                && v.experimental
                && matches!(job.exec.engine.name(), "libaio" | "io_uring"),
            verified_total: 0,
            verify_reads: 0,
            trims: None,
            slot_wno: vec![0; depth],
            slot_seq: vec![NO_SEQ; depth],
            reading: vec![None; depth],
            staged: None,
            errors: job.exec.errors.clone(),
            pass: 0,
            loop_due: false,
            randrepeat: w.randrepeat,
            v,
            filler,
        }
    }

    /// Sets up the verify state file of thread `thread_number` (1-based) over `files`
    /// files: kept for saving when the job writes with verify, loaded with
    /// `verify_state_load`. Fails when the state to load is missing or corrupt.
    pub fn attach_state(
        &mut self,
        job: &Job,
        thread_number: u64,
        files: usize,
    ) -> std::io::Result<()> {
        let index = thread_number.saturating_sub(1);
        let writes = job.workload.pattern.writes();
        if self.v.state_load && self.v.method != Method::None {
            // A writing job (verify_only) trims its verify list with the state; a job that
            // only reads stops before the first read the state says may not have landed
            // (see `read_stops`), as fio does.
            let dir = crate::cli::state_dir();
            self.loaded = Some(super::state::Loaded::load(
                &dir,
                &job.name,
                index,
                super::state::version_of(self.v.release),
            )?);
        }
        if self.v.state_save && self.v.method != Method::None && writes {
            self.saving = Some(SaveTo {
                // As deep as the job's iodepth as given, as fio's state records it, even
                // where a sync engine keeps one I/O in flight.
                comps: super::state::Completions::new(
                    files,
                    self.slots.len().max(job.exec.iodepth_given as usize),
                    super::state::version_of(self.v.release),
                    job.exec.engine.flags().sync,
                ),
                name: job.name.clone(),
                index,
            });
        }
        Ok(())
    }

    /// Fills freshly allocated buffers (random data unless zeroes or a pattern were asked).
    ///
    /// # Safety
    /// `base` must point to `slots * slot_len` writable bytes that no I/O is using.
    pub unsafe fn init_buffers(&mut self, base: *mut u8, slot_len: usize, slots: usize) {
        for i in 0..slots {
            // SAFETY: the caller promises `slots * slot_len` bytes at `base`, not in use.
            let buf = unsafe { std::slice::from_raw_parts_mut(base.add(i * slot_len), slot_len) };
            self.filler.init(buf);
        }
    }

    /// With `experimental_verify`: keeps a copy of the generator, taken before its first
    /// I/O, to replay the writes in the verify pass.
    pub fn attach_replay(&mut self, gen: &crate::gen::Generator) {
        if self.experimental {
            self.replay = Some(gen.clone());
        }
    }

    /// Chooses how written blocks are logged for the verify: in write order when the
    /// generator's files have a random map, else sorted with overwritten blocks replaced
    /// (see `hist`).
    pub fn attach_log(&mut self, gen: &Generator) {
        self.hist = WriteLog::new(!gen.has_random_map());
    }

    /// Sets up verify trims (`trim_percentage`) from the clone's trim random stream.
    pub fn attach_trims(&mut self, gen: &Generator) {
        self.trims = super::trim::Trims::new(&self.v, self.keep_hist, self.randrepeat, gen);
    }

    /// The verify trim due now, issued before the next generated I/O (see `trim`).
    #[inline]
    pub fn next_trim(&mut self) -> Option<crate::gen::NextIo> {
        self.trims.as_mut()?.due()
    }

    /// True with `verify_only` on a writing job: writes are not issued, only remembered.
    pub fn verify_only(&self) -> bool {
        self.v.only && (self.keep_hist || self.experimental)
    }

    /// Prepares a unit about to be queued: writes get their contents.
    #[inline]
    pub fn before_queue(&mut self, u: &mut IoUnit) {
        if u.op == Op::Rw(Ddir::Write) && self.writes_active {
            self.prepare_write(u);
        } else if self.v.backlog > 0 && u.op == Op::Rw(Ddir::Read) {
            self.reading[u.slot as usize] = self.staged.take();
            if self.reading[u.slot as usize].is_some() {
                crate::debug::enter(crate::debug::RunState::Verifying);
                crate::dprint!(
                    crate::debug::Cat::Verify,
                    "get_next_verify: ret io_u {:p}",
                    u.buf
                );
            }
        }
    }

    /// True while verify trims wait to be issued: fio's I/O loop goes on for them after
    /// the job's own I/O is done, taking backlog reads too (see `trim`).
    pub fn trims_pending(&self) -> bool {
        self.trims.as_ref().is_some_and(|t| t.pending())
    }

    /// True when the unit in `slot` is a backlog verify read.
    pub fn carries_backlog(&self, slot: u32) -> bool {
        self.reading[slot as usize].is_some()
    }

    /// The engine refused the unit in `slot` (busy): a backlog read's block waits for
    /// the unit's retry, which [`Self::next_backlog`] hands out before anything else.
    /// True when the unit was a backlog read.
    pub fn refused(&mut self, slot: u32) -> bool {
        let p = self.reading[slot as usize].take();
        self.staged = self.staged.or(p);
        p.is_some()
    }

    /// The job reads its backlog among its writes (`verify_backlog` on a job that logs
    /// its writes): the worker asks this first, so that other jobs pay one test per I/O.
    #[inline]
    pub fn backlog_on(&self) -> bool {
        self.v.backlog > 0 && self.keep_hist
    }

    /// fio's `check_get_verify`, asked each time the worker is about to make up an I/O
    /// among the writes: with `verify_backlog`, when a batch is still owed or the log
    /// holds a multiple of the backlog and the last completed I/O was not a read (a new
    /// batch of `verify_backlog_batch`, or the backlog), the log's first block is read
    /// back instead. When that block's write is still in flight nothing is read: the
    /// I/O is made up as usual (a write) and the batch owes the same. The queue is not
    /// drained, so at depth blocks in flight hold reads back, as in fio. The block's
    /// read is returned for the worker to issue; the unit it is queued in takes the
    /// block (see [`Self::before_queue`]) and is checked when it completes.
    pub fn next_backlog(&mut self) -> Option<crate::gen::NextIo> {
        if !self.backlog_on() {
            return None;
        }
        if let Some(p) = self.staged {
            // Taken and not queued yet (the worker retries its refused unit first).
            return Some(read_of(&p));
        }
        let n = self.hist.len() as u64;
        if n == 0 {
            return None;
        }
        if self.verify_batch == 0 {
            if n % self.v.backlog != 0 || self.last_read {
                return None;
            }
            self.verify_batch = if self.v.backlog_batch > 0 {
                self.v.backlog_batch
            } else {
                self.v.backlog
            };
        }
        loop {
            let seq = self.hist.first()?.seq;
            // The O(depth) look at the writes in flight, only when a read is tried.
            if self.slot_seq.contains(&seq) {
                return None;
            }
            let mut p = self.hist.pop_first()?;
            if let Some(t) = &mut self.trims {
                t.verified(p.wno);
                match t.fate(p.file, p.offset, p.wno) {
                    super::trim::Fate::Data => {}
                    super::trim::Fate::Zeroes => p.zeroes = true,
                    // Not checked (fio takes such a block off its log when it trims it).
                    super::trim::Fate::Skip => continue,
                }
            }
            self.verify_batch -= 1;
            self.staged = Some(p);
            return Some(read_of(&p));
        }
    }

    /// `before_queue` for a write whose contents this job makes.
    #[inline(never)]
    fn prepare_write(&mut self, u: &mut IoUnit) {
        self.slot_wno[u.slot as usize] = self.issued_writes;
        if let (Some(t), true) = (&mut self.trims, self.keep_hist) {
            t.logged(u.file, u.offset, u.len as u64, self.issued_writes);
        }
        // SAFETY: the unit's buffer is its pool slot, at least `len` bytes, not in flight.
        let buf = unsafe { std::slice::from_raw_parts_mut(u.buf, u.len) };
        if self.v.on() {
            let (time_sec, time_nsec) = realtime();
            let st = Stamp {
                seed: self.filler.write_seed(),
                numberio: self.issued_writes,
                thread: self.thread,
                time_sec,
                time_nsec,
            };
            if crate::debug::on(crate::debug::Cat::Verify) {
                debug_fill(self.v.pattern.as_ref(), u.len);
            }
            block::fill(&self.v, &self.filler, buf, u.offset, &st);
            self.slots[u.slot as usize] = st;
            if self.keep_hist {
                let wno = self.issued_writes;
                self.slot_seq[u.slot as usize] =
                    self.remember(u.file, u.offset, u.len as u32, st, wno);
            }
        } else {
            self.filler.before_write(buf, u.offset, u.start_ns);
        }
        self.issued_writes += 1;
    }

    /// True when verify failures are passed over (`continue_on_error=verify`): the caller
    /// counts them without ending the job.
    pub fn keeps_going(&self) -> bool {
        self.keep_going
    }

    /// With `verify_state_load` on a job that only reads and verifies: true when the read
    /// about to be issued at (`file`, `offset`) is past what the saved writing run is known
    /// to have completed, so the job ends before it (fio's `verify_state_should_stop`).
    #[inline]
    pub fn read_stops(&self, ddir: Ddir, file: usize, offset: u64) -> bool {
        match &self.loaded {
            Some(l) if ddir == Ddir::Read && !self.mixed && self.v.on() => {
                l.read_stops(self.reads_done, file as u64, offset)
            }
            _ => false,
        }
    }

    /// Handles a successful completion: remembers writes, checks reads. An error is the
    /// text for the job's error line (the details were printed already).
    #[inline]
    pub fn on_complete(&mut self, u: &IoUnit, name: &str) -> Result<(), String> {
        if let Op::Rw(d) = u.op {
            self.last_read = d == Ddir::Read;
        }
        if self.v.backlog > 0 && u.op == Op::Rw(Ddir::Read) {
            if let Some(p) = self.reading[u.slot as usize].take() {
                return self.check_backlog(u, &p, name);
            }
        }
        // A read that is not checked, with no trims to count, needs nothing here.
        if u.op == Op::Rw(Ddir::Read) && self.trims.is_none() && (self.mixed || !self.v.on()) {
            return Ok(());
        }
        self.account_completion(u, name)
    }

    /// A write failed: it leaves the verify log (fio's `unlog_io_piece`).
    #[cold]
    pub fn write_failed(&mut self, u: &IoUnit) {
        let slot = u.slot as usize;
        if u.op == Op::Rw(Ddir::Write) && self.keep_hist && self.writes_active {
            self.hist.remove(u.file, u.offset, self.slot_seq[slot]);
            self.slot_seq[slot] = NO_SEQ;
        }
        // A backlog read that failed is an I/O error (the job's error policy judges it);
        // its block is not checked.
        self.reading[slot] = None;
    }

    /// A backlog read completed: checked against its logged block as the pass checks
    /// one (`pass::check_block`), here in the worker (a `verify_async` job's checker
    /// threads serve the pass after the writes). A short read is not continued among the
    /// writes: it fails the check, named so.
    #[inline(never)]
    fn check_backlog(&mut self, u: &IoUnit, p: &Piece, name: &str) -> Result<(), String> {
        if let Some(t) = &mut self.trims {
            t.completed(Ddir::Read);
        }
        if (u.result as usize) < u.len {
            let text = format!(
                "verify: short read at file {name} offset {} ({} of {} bytes)",
                u.offset, u.result, u.len
            );
            eprintln!("iobench: {text}");
            return Err(text);
        }
        // SAFETY: the read completed into the unit's own buffer of `len` bytes.
        let buf = unsafe { std::slice::from_raw_parts_mut(u.buf, u.len) };
        super::pass::check_block(self, p, buf, name, FROM_LOG).map_err(|(_, text)| text)
    }

    /// `on_complete` for a completion this job remembers or checks.
    #[inline(never)]
    fn account_completion(&mut self, u: &IoUnit, name: &str) -> Result<(), String> {
        if let (Some(t), Op::Rw(d)) = (&mut self.trims, u.op) {
            t.completed(d);
        }
        match u.op {
            Op::Rw(Ddir::Write) => {
                self.slot_seq[u.slot as usize] = NO_SEQ;
                self.written += u.len as u64;
                if let Some(s) = &mut self.saving {
                    s.comps.record(u.file as usize, u.offset);
                }
                Ok(())
            }
            Op::Rw(Ddir::Read) if self.v.on() && !self.mixed => {
                crate::debug::enter(crate::debug::RunState::Verifying);
                self.reads_done += 1;
                // SAFETY: the read completed into the unit's own buffer.
                let buf = unsafe { std::slice::from_raw_parts_mut(u.buf, u.len) };
                let r = block::check(
                    &self.v,
                    &self.filler,
                    buf,
                    u.offset,
                    Expect::default(),
                    name,
                    0,
                );
                r.map_err(|f| fail(&f, name, u.offset))
            }
            _ => Ok(()),
        }
    }

    /// Logs a write for the verify as it is issued, as fio logs it (so of two writes of
    /// a block in flight together, the later one is checked). Returns its sequence number.
    fn remember(&mut self, file: u32, offset: u64, len: u32, st: Stamp, wno: u64) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.hist.push(Piece {
            file,
            offset,
            len,
            numberio: st.numberio,
            seed: st.seed,
            seq,
            wno,
            zeroes: false,
        });
        seq
    }

    /// With `verify_only`: walks the write pattern without writing, remembering blocks.
    /// Returns the I/Os it stood in for, per direction (count, bytes): fio counts them as
    /// issued and done.
    pub fn fake_writes(&mut self, gen: &mut Generator) -> [(u64, u64); 3] {
        let mut faked = [(0u64, 0u64); 3];
        loop {
            // Trims are scheduled as in a real run (their blocks read back as zeroes).
            if let Some(n) = self.next_trim() {
                faked[Ddir::Trim as usize].0 += 1;
                faked[Ddir::Trim as usize].1 += n.len;
                if let Some(t) = &mut self.trims {
                    t.completed(Ddir::Trim);
                }
                continue;
            }
            let Some(n) = gen.next_io() else { break };
            faked[n.ddir as usize].0 += 1;
            faked[n.ddir as usize].1 += n.len;
            if let Some(t) = &mut self.trims {
                t.completed(n.ddir);
            }
            if n.ddir == Ddir::Write {
                let wno = self.issued_writes;
                if let (Some(t), true) = (&mut self.trims, self.keep_hist) {
                    t.logged(n.file as u32, n.offset, n.len, wno);
                }
                let st = Stamp {
                    numberio: self.issued_writes,
                    ..Stamp::default()
                };
                self.issued_writes += 1;
                if let Some(s) = &mut self.saving {
                    s.comps.record(n.file, n.offset);
                }
                self.written += n.len;
                if self.keep_hist {
                    let _ = self.remember(n.file as u32, n.offset, n.len as u32, st, wno);
                }
            }
        }
        faked
    }

    /// True when the job has a verify phase after its writes (fio's `do_verify` with a
    /// verify method), whether or not anything is left to read in it.
    pub fn verifies_after(&self) -> bool {
        self.v.do_verify && self.v.on()
    }

    /// True when a verify pass may read the job's files back (so they must be open).
    pub fn reads_back(&self) -> bool {
        self.keep_hist || self.experimental || self.replay.is_some()
    }

    /// True when the writes of a loop of the job that ended are to be verified before
    /// more I/O (see [`Self::loop_ended`]): the worker drains its queue and runs the pass.
    #[inline]
    pub fn loop_due(&self) -> bool {
        self.loop_due
    }

    /// Told that the generator's I/O now belongs to pass `pass`: when a new loop begins
    /// with written blocks to check, they are verified first, as fio verifies after every
    /// loop. Returns true when that verify is now due.
    pub fn loop_ended(&mut self, pass: u32) -> bool {
        let new = pass != self.pass && self.pass != 0;
        self.pass = pass;
        if new && self.keep_hist && self.v.do_verify && !self.hist.is_empty() {
            self.loop_due = true;
        }
        // experimental_verify: fio replays each loop's writes after it, as it does for
        // remembered ones.
        if new && self.experimental && self.replay.is_some() && self.written > 0 {
            self.loop_due = true;
        }
        self.loop_due
    }

    /// Takes the due end-of-loop verify, if any; the new loop starts with no trims
    /// pending. The caller then runs the full verify pass.
    pub fn take_loop_due(&mut self) -> bool {
        let due = std::mem::take(&mut self.loop_due);
        if due {
            if let Some(t) = &mut self.trims {
                t.new_loop();
            }
        }
        due
    }

    /// Starts the verify pass after the writes (of the job, or of a loop of it) that
    /// reads back and checks every block still logged, in the log's order (see `hist`),
    /// or replays the writes (`experimental_verify`), into a pool whose slots have the
    /// buffers `bases`. None when there is nothing to check. The worker then issues the
    /// pass's reads (see `pass`); their reads count in the read statistics, as fio counts
    /// them.
    pub fn begin_pass(&mut self, bases: Vec<*mut u8>) -> Option<ReadPass> {
        // An experimental replay starts again from the copy taken before the first I/O at
        // every loop (fio reseeds its generator at each loop with randrepeat).
        let todo = match &self.replay {
            Some(gen) => Source::Replay {
                gen: Box::new(gen.clone()),
                budget: self.written.saturating_sub(self.verified_total),
                min_bs: self.min_bs,
                numberio: self.verify_reads,
            },
            None => {
                if !self.keep_hist || !self.v.do_verify {
                    return None;
                }
                let mut h = self.hist.take_all();
                if let Some(l) = &self.loaded {
                    // Only what the saved run is known to have written (see `state`).
                    let stop = l.stop_at(h.iter().map(|p| (p.seq, p.file as u64, p.offset)));
                    h.retain(|p| p.seq < stop);
                }
                self.last_read |= !h.is_empty();
                // A backlog batch does not carry over the pass (fio's pass empties the log).
                self.verify_batch = 0;
                Source::List(self.mark_trims(h).into_iter())
            }
        };
        crate::dprint!(crate::debug::Cat::Verify, "starting loop");
        crate::debug::enter(crate::debug::RunState::Verifying);
        let mut pass = ReadPass::new(todo, bases);
        pass.rewrite = self.rewrites && !pass.from_log;
        Some(pass)
    }

    /// Fills the unit of a rewritten replay block (see [`Self::rewrites`]) as a write of
    /// verify number `numberio` and makes it a write.
    pub fn refill(&mut self, u: &mut IoUnit, numberio: u64) {
        let (time_sec, time_nsec) = realtime();
        let st = Stamp {
            seed: self.filler.write_seed(),
            numberio,
            thread: self.thread,
            time_sec,
            time_nsec,
        };
        // SAFETY: the unit's buffer is its pool slot, at least `len` bytes, not in flight.
        let buf = unsafe { std::slice::from_raw_parts_mut(u.buf, u.len) };
        block::fill(&self.v, &self.filler, buf, u.offset, &st);
        u.op = Op::Rw(Ddir::Write);
    }

    /// `verify_async`: how many checker threads a pass hands its blocks to (0: none).
    pub fn checker_threads(&self) -> usize {
        self.v.async_threads as usize
    }

    /// What checker threads check with: copies, so that they borrow nothing of the
    /// worker that drives the pass.
    pub fn checker_env(&self) -> (crate::job::verifyopts::VerifyOpts, Filler) {
        (self.v.clone(), self.filler.clone())
    }

    /// Ends the pass `pass` (every read reaped and every verdict in): restores the
    /// pool's buffers, counts the failures passed over, and returns the one that ended
    /// the pass.
    pub fn end_pass(
        &mut self,
        mut pass: ReadPass,
        pool: &mut [IoUnit],
        stats: &mut JobStats,
    ) -> Result<(), (i32, String)> {
        let result = pass.end(pool, stats);
        if pass.from_log {
            crate::dprint!(crate::debug::Cat::Verify, "get_next_verify: empty");
        }
        crate::debug::enter(crate::debug::RunState::Running);
        crate::dprint!(crate::debug::Cat::Verify, "exiting loop");
        if let Source::Replay { numberio, .. } = pass.todo {
            self.verified_total += pass.verified;
            self.verify_reads = numberio;
            self.written = 0;
        }
        result
    }

    /// Applies the verify trims to blocks about to be checked: trimmed ones are to read
    /// back as zeroes, or are left out with `trim_verify_zero=0`.
    fn mark_trims(&self, mut pieces: Vec<Piece>) -> Vec<Piece> {
        use super::trim::Fate;
        if let Some(t) = &self.trims {
            pieces.retain_mut(|p| match t.fate(p.file, p.offset, p.wno) {
                Fate::Data => true,
                Fate::Zeroes => {
                    p.zeroes = true;
                    true
                }
                Fate::Skip => false,
            });
        }
        pieces
    }
}

/// The read of logged block `p` (a backlog verify read).
fn read_of(p: &Piece) -> crate::gen::NextIo {
    crate::gen::NextIo {
        ddir: Ddir::Read,
        file: p.file as usize,
        offset: p.offset,
        len: p.len as u64,
    }
}

/// Prints the failure's details and returns the one-line text for the job's error.
pub(super) fn fail(f: &Failure, name: &str, offset: u64) -> String {
    block::report(f);
    format!(
        "verify failed on file {name} at offset {} ({}): Invalid or incomplete multibyte or wide character",
        offset,
        if f.misplaced { "misplaced block" } else { "data mismatch" }
    )
}

impl Drop for Contents {
    /// Saves the verify state when the job ends, however it ends (as fio does at thread
    /// exit); a failure to save is reported, not fatal.
    fn drop(&mut self) {
        if let Some(n) = self
            .trims
            .as_ref()
            .map(|t| t.left_over())
            .filter(|&n| n > 0)
        {
            eprintln!(
                "iobench: {n} blocks chosen for trimming were never trimmed (trim_backlog \
                 decides when verify trims happen)"
            );
        }
        if let Some(s) = &self.saving {
            let dir = crate::cli::state_dir();
            if let Err(e) = s.comps.save(&dir, &s.name, s.index, self.issued_writes) {
                eprintln!("iobench: job '{}': verify state: {e}", s.name);
            }
        }
    }
}

/// `--debug=verify`'s line as a write buffer is filled: fresh random data, or (with
/// `verify_pattern` and no per-block format) the pattern already in the buffer.
fn debug_fill(pattern: Option<&crate::defs::datapattern::DataPattern>, len: usize) {
    use crate::debug::Cat::Verify;
    match pattern {
        None => crate::dprint!(Verify, "fill random bytes len={len}"),
        Some(p) if !p.has_formats() => crate::dprint!(
            Verify,
            "using already filled verify pattern b={} len={len}",
            p.bytes.len()
        ),
        Some(_) => {}
    }
}
