//! I/O generation: which direction, file, offset and length each next I/O has — the same
//! sequence fio issues for the same job. The worker asks [`Generator::next_io`] once per
//! I/O; it allocates, locks and calls the OS nowhere on that path.
//!
//! The parts: `rand` (fio's Tausworthe generators and seeds), `axmap` (the random map),
//! `lfsr`, `dist` (zipf/pareto/normal), `plan` (each file's region), `config` (the job's
//! options resolved), `offset` (the next offset and length), `files` (which file next,
//! and which files are open: the worker hears of opens and closes as [`FileEvent`]s),
//! `replay` (read_iolog).

mod axmap;
mod config;
mod dist;
mod files;
mod lfsr;
mod offset;
mod plain;
pub mod plan;
pub mod rand;
mod replay;
pub mod sprandom;
pub mod zbd;

pub use replay::{replay_extents, replay_writes};

use crate::defs::Ddir;
use crate::error::JobError;
use crate::job::workload::{Distribution, FileService, RwSequencer, Workload};
use crate::job::Job;
use axmap::BlockMap;
use dist::{Gauss, Zipf};
use lfsr::Lfsr;
use rand::{FRand, Stream, NR_STREAMS};

/// The part of one file a job clone works on, computed by the runner from the file's real
/// size (after laying it out) before the generator is made.
#[derive(Debug, Clone)]
pub struct FileExtent {
    /// The file's (or device's) size in bytes.
    pub real_size: u64,
    /// fio's hash of the file name; it seeds the zipf/pareto/normal distributions.
    pub name_hash: u32,
    /// The size the file had before the runner laid it out (0 when it did not exist).
    /// fio plans a job's region (`offset=N%`, default sizes) from it.
    pub setup_size: u64,
    /// A block or character device rather than a regular file (`file_append` skips it).
    pub device: bool,
    /// With `filesize`: the size planned for the file (fio's region ends there, whatever
    /// the file's size before layout was); 0 without.
    pub planned: u64,
    /// With `zonemode=zbd`: the file's zones, shared by the run's jobs (`zbd::attach`);
    /// without, a zoned generator makes zones of its own.
    pub zones: Option<std::sync::Arc<zbd::ZoneTable>>,
}

impl FileExtent {
    /// The extent of file `name` of `real_size` bytes, which it already had before the
    /// job was set up.
    pub fn new(name: &str, real_size: u64) -> Self {
        FileExtent {
            real_size,
            name_hash: rand::jhash(name.as_bytes(), 0),
            setup_size: real_size,
            device: false,
            planned: 0,
            zones: None,
        }
    }

    /// Gives the file the zone table the runner made for it (`zonemode=zbd`).
    pub fn with_zones(mut self, zones: Option<std::sync::Arc<zbd::ZoneTable>>) -> Self {
        self.zones = zones;
        self
    }

    /// Records the size `filesize` planned for the file.
    pub fn planned(mut self, planned: u64) -> Self {
        self.planned = planned;
        self
    }

    /// Marks the extent as a device's.
    pub fn on_device(mut self, device: bool) -> Self {
        self.device = device;
        self
    }

    /// Records the size the file had before layout (0 for a file just created).
    pub fn laid_out_from(mut self, setup_size: u64) -> Self {
        self.setup_size = setup_size;
        self
    }
}

/// The sync fio issues when a new loop starts (see `Generator::sync_at_new_loop`): its
/// file, how many file events come before it, and the offset it is logged at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSync {
    pub file: usize,
    pub events_before: usize,
    pub offset: u64,
}

/// A file the generator opened or closed, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileEvent {
    Opened(usize),
    Closed(usize),
}

/// The next I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextIo {
    pub ddir: Ddir,
    /// Index into the job's file list.
    pub file: usize,
    pub offset: u64,
    pub len: u64,
}

/// fio's 1-based thread number of clone `clone_index` of a job section whose first clone
/// is thread `first` (1 + the numjobs of every earlier section). fio numbers the section's
/// own thread first, then the clones from the highest index down: with numjobs=3, clones
/// 0, 2, 1 are threads first, first+1, first+2. The number seeds the random streams.
pub fn fio_thread_number(first: u64, numjobs: u32, clone_index: u32) -> u64 {
    if clone_index == 0 {
        first
    } else {
        first + numjobs.saturating_sub(clone_index) as u64
    }
}

/// A block number that no I/O has started at yet (fio's -1).
const NONE: u64 = u64::MAX;

/// Per-file generation state.
#[derive(Debug, Clone)]
struct FileState {
    real_size: u64,
    /// Where the region starts now (moves with strided zones).
    file_offset: u64,
    /// fio's `get_start_offset` now: where the region starts as computed from the file's
    /// laid-out size. The first pass starts at the offset planned from the size before
    /// layout (`file_offset`'s first value); fio recomputes this one wherever it needs the
    /// start (fitting a block, wrapping, later loops).
    loop_start: u64,
    io_size: u64,
    name_hash: u32,
    last_pos: [u64; 3],
    last_start: [u64; 3],
    done: bool,
    /// Open in fio's sense: picked since it was last closed (see `files`).
    open: bool,
    map: Option<BlockMap>,
    lfsr: Option<Lfsr>,
    zipf: Option<Zipf>,
    gauss: Option<Gauss>,
    /// With `sprandom`: the preconditioning state, which picks every write's block.
    spr: Option<Box<sprandom::SpRandom>>,
}

/// The random streams of one job clone.
#[derive(Debug, Clone)]
struct Rngs {
    random: FRand,
    bsrange: [FRand; 3],
    rwmix: FRand,
    seq_rand: [FRand; 3],
    next_file: FRand,
    file_zipf: Option<Zipf>,
    file_gauss: Option<Gauss>,
    zone: FRand,
}

/// Produces the I/O sequence of one job clone.
#[derive(Debug, Clone)]
pub struct Generator {
    cfg: Config,
    rng: Rngs,
    files: Vec<FileState>,
    // Counters, as fio keeps them per thread.
    io_issues: [u64; 3],
    issue_bytes: [u64; 3],
    pass_bytes: u64,
    pass_ios: u64,
    passes_left: u32,
    in_pass: bool,
    started: bool,
    /// Passes begun so far (the first is 1).
    passes_begun: u32,
    number_ios: u64,
    rwmix_ddir: Ddir,
    rwmix_issues: u64,
    seq_nr_left: u32,
    zone_bytes: u64,
    next_file: usize,
    service_file: Option<usize>,
    service_left: u32,
    nr_done_files: usize,
    /// Files open now, and the most that may be (`openfiles`).
    nr_open: usize,
    /// Set by the worker while a periodic sync would be due at the start of a new loop
    /// (fio clears its "last was a sync" mark between loops); the new loop's sync then
    /// takes the first file pick, kept here for the worker.
    pub sync_at_new_loop: bool,
    loop_sync_file: Option<LoopSync>,
    /// The offset of the last I/O the generator tried to make, issued or not (fio's
    /// unit keeps it, and a sync that reuses the unit is logged there).
    last_tried_offset: u64,
    /// Files opened and closed since the worker last asked
    /// ([`Generator::take_file_event`]), in order.
    file_events: std::collections::VecDeque<FileEvent>,
    /// Loops (not time_based wraps) started after the first: the iolog closes and
    /// reopens the files at each, as fio does.
    loop_no: u32,
    replay: Option<replay::Replay>,
    /// `zonemode=zbd`'s zones and this clone's part in them (`None` for other jobs).
    zbd: Option<Box<zbd::ZbdState>>,
    /// The direction of every I/O when `fill_plain` makes them (see `plain`).
    plain: Option<Ddir>,
    /// What fio prints when it fits a zoned job's region to whole zones.
    zbd_notes: Vec<String>,
    /// `sprandom` has written every region (fio's `td->done`): the job is over.
    spr_done: bool,
}

/// The resolved settings the hot path reads.
#[derive(Debug, Clone)]
struct Config {
    read: bool,
    write: bool,
    random: bool,
    trimwrite: bool,
    randtrimwrite: bool,
    seq_add: i64,
    seq_nr: u32,
    rw_seq: RwSequencer,
    rwmix: [u32; 2],
    perc_rand: [u32; 3],
    min_bs: [u64; 3],
    max_bs: [u64; 3],
    ba: [u64; 3],
    bssplit: [Vec<(u64, u32)>; 3],
    bs_unaligned: bool,
    bs_is_seq_rand: bool,
    td_max_bs: u64,
    lfsr: bool,
    use64: bool,
    repeatable: bool,
    seeds: [u64; NR_STREAMS],
    verify: bool,
    distribution: Distribution,
    zone_size: u64,
    zone_range: u64,
    zone_skip: u64,
    time_based: bool,
    loops: u32,
    number_ios: u64,
    /// The overall budget per loop: io_size, or size.
    limit: u64,
    io_size_set: bool,
    pass_total: u64,
    /// Whether a loop ends after `pass_total` bytes (fio's per-loop byte check, which
    /// only counts I/O its engine queued; see `EngineConfig::completes_in_queue`).
    pass_limited: bool,
    /// A time_based job with a verify method: its loops end at the byte check as well
    /// (fio's do_io breaks there so its verify phase can run, then starts over).
    timed_verify: bool,
    service: FileService,
    service_nr: u32,
    /// `openfiles`, capped at the number of files.
    max_open: usize,
    thread_number: u64,
    /// `sprandom=1`'s settings (`None` without).
    sprandom: Option<sprandom::SpRandomOpts>,
}

impl Generator {
    /// Makes the generator for clone `clone_index` (0-based) of `job` over `files`, as if
    /// the job were the run's first job section (see [`Generator::with_thread_number`]
    /// and `fio_thread_number` for the others).
    pub fn new(job: &Job, clone_index: u32, files: &[FileExtent]) -> Result<Self, JobError> {
        let t = fio_thread_number(1, job.exec.numjobs, clone_index);
        Self::with_thread_number(job, clone_index, t, files)
    }

    /// As [`Generator::new`], with fio's 1-based thread number of this clone among all
    /// clones of all jobs of the run (it seeds the random streams, so random offsets match
    /// fio's only when it matches).
    pub fn with_thread_number(
        job: &Job,
        clone_index: u32,
        thread_number: u64,
        files: &[FileExtent],
    ) -> Result<Self, JobError> {
        let w = &job.workload;
        if let Some(path) = &w.replay.read_iolog {
            let log = crate::iolog::read_iolog(path, clone_index, &w.replay).map_err(|e| {
                JobError::Invalid {
                    job: job.name.clone(),
                    message: format!("read_iolog: {e}"),
                }
            })?;
            return Self::replaying(job, clone_index, log, files);
        }
        if files.is_empty() {
            return Err(JobError::Invalid {
                job: job.name.clone(),
                message: "no files to do I/O on".into(),
            });
        }
        let cfg = Config::resolve(job, clone_index, thread_number, files)?;
        let file_states = plan::file_regions(job, clone_index, files)
            .into_iter()
            .zip(files)
            .map(|(r, f)| FileState {
                // The null engine's files reach as far as their I/O does, as fio's fake
                // I/O files do (so `offset` plus `size` is not cut at `size`).
                real_size: if job.exec.engine.flags().fake_files {
                    f.real_size.max(r.start + r.io_size)
                } else {
                    f.real_size
                },
                file_offset: r.start,
                loop_start: if job.files.file_append && !f.device {
                    r.start
                } else {
                    plan::start_offset(job, clone_index, f.real_size)
                },
                io_size: r.io_size,
                name_hash: f.name_hash,
                last_pos: [r.start; 3],
                last_start: [NONE; 3],
                done: false,
                open: false,
                map: None,
                lfsr: None,
                zipf: None,
                gauss: None,
                spr: None,
            })
            .collect::<Vec<FileState>>();
        let mut file_states = file_states;
        let (zbd, zbd_notes) = match &w.zbd {
            Some(o) => {
                let (state, notes) = zbd::ZbdState::setup(job, o, files, &mut file_states)?;
                (Some(Box::new(state)), notes)
            }
            None => (None, Vec::new()),
        };
        let rng = Rngs::seeded(&cfg, files.len());
        let mut g = Generator {
            rng,
            files: file_states,
            io_issues: [0; 3],
            issue_bytes: [0; 3],
            pass_bytes: 0,
            pass_ios: 0,
            passes_left: cfg.loops,
            in_pass: false,
            started: false,
            passes_begun: 0,
            number_ios: cfg.number_ios,
            rwmix_ddir: Ddir::Read,
            rwmix_issues: 0,
            seq_nr_left: 1,
            zone_bytes: 0,
            next_file: 0,
            service_file: None,
            service_left: 0,
            nr_done_files: 0,
            nr_open: 0,
            file_events: std::collections::VecDeque::with_capacity(2 * files.len()),
            sync_at_new_loop: false,
            loop_sync_file: None,
            last_tried_offset: 0,
            loop_no: 0,
            replay: None,
            plain: cfg.plain_ddir(zbd.is_some()),
            zbd,
            zbd_notes,
            spr_done: false,
            cfg,
        };
        g.init_maps(&job.name, w)?;
        g.init_sprandom(&job.name)?;
        Ok(g)
    }

    /// Sets up `sprandom` over the job's one file, as fio's `sprandom_init` does once the
    /// file is laid out: the job then writes the file's physical size (its logical size
    /// plus the over-provisioning), whatever `size` or `io_size` said.
    fn init_sprandom(&mut self, job: &str) -> Result<(), JobError> {
        let Some(o) = self.cfg.sprandom else {
            return Ok(());
        };
        let invalid = |message: String| JobError::Invalid {
            job: job.to_string(),
            message,
        };
        if self.files.len() != 1 {
            return Err(invalid("SPRandom supports only one file".into()));
        }
        let f = &self.files[0];
        let logical = f.real_size.min(f.io_size);
        let bs = self.cfg.min_bs[Ddir::Write as usize];
        let seed = self.cfg.seeds[Stream::Sprandom as usize];
        let (spr, physical) = sprandom::SpRandom::new(&o, logical, bs, seed).map_err(invalid)?;
        self.files[0].spr = Some(Box::new(spr));
        self.cfg.limit = physical;
        self.cfg.io_size_set = true;
        self.cfg.pass_total = self.cfg.pass_total.max(physical);
        Ok(())
    }

    /// Sets up each file's random map, LFSR or distribution, as fio's `init_random_map`.
    fn init_maps(&mut self, job: &str, w: &Workload) -> Result<(), JobError> {
        let c = &self.cfg;
        let range_size = c.min_bs[0].min(c.min_bs[1]);
        let rw_min_bs = c.min_bs.iter().copied().min().unwrap_or(1);
        for f in &mut self.files {
            let fsize = f.real_size.min(f.io_size);
            match &c.distribution {
                Distribution::Zipf { .. }
                | Distribution::Pareto { .. }
                | Distribution::Normal { .. } => {
                    let nranges = fsize.div_ceil(range_size);
                    let seed = if c.repeatable {
                        f.name_hash.wrapping_mul(c.thread_number as u32)
                    } else {
                        c.seeds[Stream::Block as usize] as u32
                    };
                    match c.distribution {
                        Distribution::Zipf { theta, center } => {
                            f.zipf = Some(Zipf::new_zipf(nranges.max(1), theta, center, seed))
                        }
                        Distribution::Pareto { h, center } => {
                            f.zipf = Some(Zipf::new_pareto(nranges.max(1), h, center, seed))
                        }
                        Distribution::Normal { dev, center } => {
                            f.gauss = Some(Gauss::new(nranges.max(1), dev, center, seed))
                        }
                        _ => {}
                    }
                    continue;
                }
                _ => {}
            }
            if !c.random {
                continue;
            }
            let region = if c.zone_size != 0 {
                c.zone_range
            } else {
                fsize
            };
            let blocks = region / rw_min_bs;
            if c.lfsr {
                let l = Lfsr::new(blocks, c.seeds[Stream::Block as usize]).ok_or_else(|| {
                    JobError::Invalid {
                        job: job.to_string(),
                        message: "random_generator=lfsr: cannot cover this many blocks".into(),
                    }
                })?;
                f.lfsr = Some(l);
            } else if !w.norandommap && c.uses_map() {
                let budget = axmap::random_map_budget();
                let map = BlockMap::try_new(blocks, budget).ok_or_else(|| JobError::Invalid {
                    job: job.to_string(),
                    message: format!(
                        "failed allocating random map: {blocks} blocks need {} MiB, more \
                         than the {} MiB allowed; use norandommap=1 or \
                         random_generator=lfsr",
                        blocks.div_ceil(8) >> 20,
                        budget >> 20
                    ),
                })?;
                f.map = Some(map);
            }
        }
        Ok(())
    }

    /// The next I/O, or `None` when the job's I/O (all loops) is done. A time_based job
    /// starts over by itself and never ends here unless it cannot issue anything.
    pub fn next_io(&mut self) -> Option<NextIo> {
        if let Some(r) = &mut self.replay {
            return r.next();
        }
        loop {
            if self.spr_done {
                return None;
            }
            if !self.in_pass && !self.start_pass() {
                return None;
            }
            if !self.budget_left() {
                self.in_pass = false;
                continue;
            }
            match self.get_io() {
                Some(io) => {
                    let d = io.ddir as usize;
                    self.io_issues[d] += 1;
                    self.issue_bytes[d] += io.len;
                    self.pass_bytes += io.len;
                    self.pass_ios += 1;
                    return Some(io);
                }
                None => self.in_pass = false,
            }
        }
    }

    /// A fresh generator for one of the clone's side streams (trim choice, dedupe, …),
    /// seeded and sized as fio seeds that stream for this clone.
    pub fn side_stream(&self, s: rand::Stream) -> rand::FRand {
        rand::FRand::new(self.cfg.seeds[s as usize], self.cfg.use64)
    }

    /// fio's 1-based thread number of this clone (it seeds the clone's other streams too:
    /// startdelay ranges, Poisson rates).
    pub fn thread_number(&self) -> u64 {
        self.cfg.thread_number
    }

    /// True when the files have a random map (random I/O without `norandommap`, a
    /// non-uniform distribution or `random_generator=lfsr`): no block is written twice in
    /// a pass.
    pub fn has_random_map(&self) -> bool {
        self.files.iter().any(|f| f.map.is_some())
    }

    /// Which pass (loop) the I/O `next_io` last returned belongs to (the first is 1; 0 when
    /// replaying a log, which has no passes).
    #[inline]
    pub fn pass(&self) -> u32 {
        self.passes_begun
    }

    /// Starts a new pass over the same region, as a new loop does.
    pub fn restart(&mut self) {
        if let Some(r) = &mut self.replay {
            r.restart();
            return;
        }
        self.in_pass = false;
        self.passes_left = self.passes_left.max(1);
    }

    /// The file a periodic sync goes to: fio's file service picks it as for an I/O (the
    /// pick is used up), so the syncs of a multi-file job move between files. `None`
    /// when replaying or when every file is done for the pass.
    pub fn file_for_sync(&mut self) -> Option<usize> {
        if self.replay.is_some() || !self.in_pass {
            return None;
        }
        self.next_file()
    }

    /// False once the job, or with an engine whose loops end after `size` bytes the
    /// loop, has issued all the I/O it may (fio checks this before it considers a sync
    /// or the next I/O).
    pub fn budget_left(&self) -> bool {
        if self.replay.is_some() {
            return true;
        }
        let pass_over = self.cfg.pass_limited && self.pass_bytes >= self.cfg.pass_total;
        if self.cfg.time_based {
            return !(self.cfg.timed_verify && pass_over);
        }
        !(self.issue_bytes_exceeded() || pass_over)
    }

    /// False once fio's per-loop byte check says the loop is over (see `pass_total`):
    /// fio's do_io stops there, before it would take another backlog verify read. (Its
    /// other limits end the generator's I/O; a verify trim still due keeps fio's loop
    /// going, and the backlog reads with it, so those do not stop the reads here.)
    pub fn pass_left(&self) -> bool {
        let c = &self.cfg;
        !(c.pass_limited && self.pass_bytes >= c.pass_total && (!c.time_based || c.timed_verify))
    }

    /// A verify read of the backlog was queued among the loop's I/O: fio's per-loop
    /// byte check counts it (its other counts do not).
    pub fn count_verify_read(&mut self, len: u64) {
        self.pass_bytes += len;
    }

    /// The file picked for the sync that opens a new loop (see `sync_at_new_loop`), and
    /// how many file events came before the sync (they are logged before it).
    pub fn take_loop_sync_file(&mut self) -> Option<LoopSync> {
        self.loop_sync_file.take()
    }

    /// Where fio would log a sync made now: the offset of the last I/O the generator
    /// tried to make (`None` when replaying a log).
    pub fn sync_log_offset(&self) -> Option<u64> {
        self.replay.is_none().then_some(self.last_tried_offset)
    }

    /// How many file events wait for the worker (see [`Generator::take_file_event`]).
    #[inline]
    pub fn file_events_waiting(&self) -> usize {
        self.file_events.len()
    }

    /// The next file the generator opened (picked it first since it was closed) or
    /// closed (done with it for the pass, or at a new loop), in order: the worker logs
    /// them and, when it opens files as it goes, closes the descriptor once the file's
    /// I/O in flight is done. A file may open and close with no I/O in between.
    #[inline]
    pub fn take_file_event(&mut self) -> Option<FileEvent> {
        self.file_events.pop_front()
    }

    /// How many loops have started after the first (time_based wraps do not count): the
    /// iolog writer closes and reopens files when this changes.
    pub fn loop_number(&self) -> u32 {
        self.loop_no
    }

    /// For a replayed log: how long to wait, in microseconds since the previous I/O was
    /// issued, before issuing the I/O `next_io` just returned (0 when not replaying or
    /// with `replay_no_stall`).
    pub fn replay_delay_us(&self) -> u64 {
        self.replay.as_ref().map_or(0, |r| r.delay_us())
    }

    /// fio's `keep_running` plus the state reset between passes.
    fn start_pass(&mut self) -> bool {
        if self.started {
            // A pass that issued nothing ends the job (fio stops a job whose loop did
            // no I/O), time_based or not.
            if self.pass_ios == 0 {
                return false;
            }
            if self.cfg.time_based {
                // time_based wraps around until the runtime is over.
            } else if self.passes_left > 0 {
                self.passes_left -= 1;
            } else {
                if self.number_ios_exceeded() {
                    return false;
                }
                let done: u64 = self.issue_bytes.iter().sum();
                if done >= self.cfg.limit {
                    return false;
                }
                if self.cfg.limit - done < self.cfg.td_max_bs {
                    return false;
                }
                if self.nr_done_files >= self.files.len() && !self.cfg.io_size_set {
                    return false;
                }
            }
            // A new pass is a new loop of fio's (files closed, reopened as picked);
            // time_based wraps are not.
            if !self.cfg.time_based {
                self.loop_no += 1;
                // A new loop closes every file (they reopen at their next I/O).
                for i in 0..self.files.len() {
                    self.close_file(i);
                }
                self.clear_state();
                if self.sync_at_new_loop && !self.issue_bytes_exceeded() {
                    let offset = self.last_tried_offset;
                    self.loop_sync_file = self.next_file().map(|file| LoopSync {
                        file,
                        events_before: self.file_events.len(),
                        offset,
                    });
                }
            } else {
                self.clear_state();
            }
        } else {
            self.started = true;
            self.passes_left -= 1;
        }
        if self.cfg.trimwrite {
            self.number_ios = self.number_ios.saturating_mul(2);
        }
        self.in_pass = true;
        self.pass_bytes = 0;
        self.pass_ios = 0;
        self.passes_begun = self.passes_begun.wrapping_add(1);
        true
    }

    /// fio's `clear_io_state` between loops: files start over, seeds repeat.
    fn clear_state(&mut self) {
        self.zone_bytes = 0;
        self.rwmix_issues = 0;
        self.nr_done_files = 0;
        for i in 0..self.files.len() {
            self.files[i].done = false;
            self.files[i].file_offset = self.files[i].loop_start;
            self.reset_file(i);
        }
        if self.cfg.repeatable {
            self.rng = Rngs::seeded(&self.cfg, self.files.len());
        }
    }

    /// fio's `fio_file_reset`: positions back to the region start, map cleared.
    fn reset_file(&mut self, i: usize) {
        let seed = self.cfg.seeds[Stream::Block as usize];
        let f = &mut self.files[i];
        f.last_pos = [f.file_offset; 3];
        f.last_start = [NONE; 3];
        if let Some(m) = &mut f.map {
            m.reset();
        } else if let Some(l) = &mut f.lfsr {
            l.reset(seed);
        }
        if self.zbd.is_some() {
            self.zbd_file_reset(i);
        }
    }

    /// With `zonemode=zbd`: the clone's zone resets and zone error, read by the runner
    /// once the clone is done (`None` for other jobs).
    pub fn zbd_report(&self) -> Option<std::sync::Arc<zbd::ZbdReport>> {
        self.zbd.as_ref().map(|z| z.report())
    }

    /// The lines fio prints when it fits a zoned job's region to whole zones
    /// (`rounded up offset from …`), for the runner to print.
    pub fn zbd_notes(&self) -> &[String] {
        &self.zbd_notes
    }

    fn number_ios_exceeded(&self) -> bool {
        self.number_ios != 0
            && self.io_issues.iter().sum::<u64>() >= self.number_ios * self.cfg.loops as u64
    }

    fn issue_bytes_exceeded(&self) -> bool {
        let c = &self.cfg;
        let b = &self.issue_bytes;
        let bytes = if c.read && c.write {
            b[0] + b[1]
        } else if c.write {
            b[1]
        } else if c.read {
            b[0]
        } else {
            b[2]
        };
        bytes >= c.limit.saturating_mul(c.loops as u64) || self.number_ios_exceeded()
    }

    /// One I/O of the pass: pick a file, fill the I/O; a file that cannot give one is done.
    fn get_io(&mut self) -> Option<NextIo> {
        loop {
            let fi = self.next_file()?;
            let io = match self.plain {
                Some(ddir) => self.fill_plain(fi, ddir),
                None => self.fill_io(fi),
            };
            if let Some(io) = io {
                let f = &mut self.files[fi];
                f.last_start[io.ddir as usize] = io.offset;
                f.last_pos[io.ddir as usize] = io.offset + io.len;
                return Some(io);
            }
            // fio closes a file it cannot fill an I/O from; the zipf/pareto/normal
            // services start it over, the others are done with it for this pass.
            self.close_file(fi);
            if self.cfg.service.nonuniform() {
                self.reset_file(fi);
            } else {
                self.files[fi].done = true;
                self.nr_done_files += 1;
            }
        }
    }
}

impl FileService {
    /// True for the zipf/pareto/normal services, which never finish a file.
    fn nonuniform(&self) -> bool {
        matches!(
            self,
            FileService::Zipf { .. } | FileService::Pareto { .. } | FileService::Normal { .. }
        )
    }
}

impl Rngs {
    fn seeded(c: &Config, nr_files: usize) -> Self {
        let s = &c.seeds;
        let read_seed = s[Stream::BsRead as usize];
        let mut write_seed = s[Stream::BsWrite as usize];
        let mut trim_seed = s[Stream::BsTrim as usize];
        if c.verify {
            write_seed = read_seed;
        }
        if c.trimwrite {
            trim_seed = write_seed;
        }
        let file_seed = s[Stream::File as usize];
        let nranges = (nr_files as u64) << files::SERVICE_SHIFT;
        let (file_zipf, file_gauss) = match c.service {
            FileService::Zipf { theta, center } => (
                Some(Zipf::new_zipf(nranges, theta, center, file_seed as u32).without_hash()),
                None,
            ),
            FileService::Pareto { h, center } => (
                Some(Zipf::new_pareto(nranges, h, center, file_seed as u32).without_hash()),
                None,
            ),
            FileService::Normal { dev, center } => (
                None,
                Some(Gauss::new(nranges, dev, center, file_seed as u32).without_hash()),
            ),
            _ => (None, None),
        };
        let seq = FRand::new(s[Stream::SeqRandRead as usize], false);
        Rngs {
            random: FRand::new(s[Stream::Block as usize], c.use64),
            bsrange: [
                FRand::new(read_seed, c.use64),
                FRand::new(write_seed, c.use64),
                FRand::new(trim_seed, c.use64),
            ],
            rwmix: FRand::new(s[Stream::Mix as usize], false),
            seq_rand: [seq, seq, seq],
            next_file: FRand::new(file_seed, c.use64),
            file_zipf,
            file_gauss,
            zone: FRand::new(s[Stream::Zone as usize], false),
        }
    }
}

#[cfg(test)]
mod tests;
