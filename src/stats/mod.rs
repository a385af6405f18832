//! Statistics: per-job counters and latency summaries, recorded by workers through a small
//! API (`record_*`, `set_*`) and merged into groups for reporting (`+=`).
//!
//! Recording never allocates or locks: histograms are sized when the stats are made, and
//! bandwidth/IOPS windows are cut inline from the completion timestamps.

pub mod act;
pub mod blocklife;
pub mod board;
pub mod cpu;
pub mod disk;
pub mod group;
pub mod hist;
pub mod histlog;
pub mod iostat;
pub mod logline;
pub mod logs;
pub mod logzip;
pub mod objstats;
pub mod snapshot;
pub mod status;
pub mod steady;

use crate::defs::Ddir;
use crate::job::reportopts::{StatsConfig, Unified};
use hist::Hist;
use iostat::IoStat;
use serde::{Deserialize, Serialize};

/// Which latency a histogram or summary is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatKind {
    Slat = 0,
    Clat = 1,
    Lat = 2,
}

/// One direction's counters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DirStats {
    /// I/Os completed (fio's `total_io_u`).
    pub ios: u64,
    /// Short I/Os (fewer bytes than asked).
    pub short: u64,
    /// I/Os dropped (not issued when a rate limit or time ran out).
    pub dropped: u64,
    pub bytes: u64,
    pub runtime_ms: u64,
    pub slat: IoStat,
    pub clat: IoStat,
    pub lat: IoStat,
    /// Bandwidth samples in KiB/s, one per `bwavgtime` window.
    pub bw: IoStat,
    /// IOPS samples, one per `iopsavgtime` window.
    pub iops: IoStat,
    /// Histograms of slat, clat, lat (empty when that percentile report is off).
    pub hist: [Hist; 3],
    /// Completion latency per I/O priority, when the engine sets priorities per I/O
    /// (cmdprio): fio's clat_prio, reported once two priorities have samples.
    #[serde(default)]
    pub prios: Vec<PrioStat>,
    /// Open-loop arrivals (`arrival=`, iobench): latency from each I/O's scheduled
    /// start to its completion, with its histogram (empty unless `cfg.sched_lat`).
    #[serde(default)]
    pub sched: IoStat,
    #[serde(default)]
    pub sched_hist: Hist,
    /// Open-loop arrivals: I/Os that started at least one arrival gap after their
    /// scheduled time (the queue was full), and the most I/Os behind schedule at once.
    #[serde(default)]
    pub missed_starts: u64,
    #[serde(default)]
    pub backlog_max: u64,
}

/// The latencies of the I/Os sent at one priority (`ioprio`: class << 13 | level): clat,
/// or lat under `lat_percentiles`, as fio keeps them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrioStat {
    pub ioprio: u16,
    pub lat: IoStat,
    pub hist: Hist,
}

impl PrioStat {
    fn new(ioprio: u16) -> Self {
        PrioStat {
            ioprio,
            lat: IoStat::default(),
            hist: Hist::new(),
        }
    }
}

impl DirStats {
    /// The priorities with samples, when there are at least two (fio prints them only
    /// then).
    pub fn prios_to_show(&self) -> Vec<&PrioStat> {
        let v: Vec<&PrioStat> = self.prios.iter().filter(|p| p.lat.samples > 0).collect();
        if v.len() >= 2 {
            v
        } else {
            Vec::new()
        }
    }

    fn prio_mut(&mut self, ioprio: u16) -> &mut PrioStat {
        let i = match self.prios.iter().position(|p| p.ioprio == ioprio) {
            Some(i) => i,
            None => {
                self.prios.push(PrioStat::new(ioprio));
                self.prios.len() - 1
            }
        };
        &mut self.prios[i]
    }
}

impl DirStats {
    /// The summary of latency `k`.
    pub fn lat_stat(&self, k: LatKind) -> &IoStat {
        match k {
            LatKind::Slat => &self.slat,
            LatKind::Clat => &self.clat,
            LatKind::Lat => &self.lat,
        }
    }
}

/// Where the bandwidth/IOPS windows stand: when the current one began and the counts then.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct Window {
    start_ns: u64,
    at_start: [u64; 3],
}

/// Distribution buckets of fio's `IO depths`, `submit` and `complete` lines.
pub const MAP_NR: usize = 7;
/// `lat (nsec)` buckets: 2 4 10 20 50 100 250 500 750 1000.
pub const LAT_N_NR: usize = 10;
/// `lat (usec)` buckets, same edges.
pub const LAT_U_NR: usize = 10;
/// `lat (msec)` buckets: the same edges plus 2000 and >=2000.
pub const LAT_M_NR: usize = 12;

/// Everything measured for one job clone (or, after merging, a group).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobStats {
    /// Index of the job (section) in the resolved job list.
    pub job_index: usize,
    pub name: String,
    pub description: Option<String>,
    pub groupid: u32,
    /// Job clones merged into this one (fio's `jobs=`).
    pub jobs: u32,
    pub error: i32,
    /// The error's text, shown as `err= 5 (text)`.
    pub verror: String,
    pub pid: u32,
    pub cfg: StatsConfig,
    pub dir: [DirStats; 3],
    /// fsync/fdatasync latencies and count.
    pub sync: IoStat,
    pub sync_hist: Hist,
    pub sync_ios: u64,
    /// `IO depths` distribution (per I/O issued, by the depth at the time).
    pub depth_map: [u64; MAP_NR],
    pub submit_map: [u64; MAP_NR],
    pub complete_map: [u64; MAP_NR],
    pub total_submit: u64,
    pub total_complete: u64,
    pub lat_n: [u64; LAT_N_NR],
    pub lat_u: [u64; LAT_U_NR],
    pub lat_m: [u64; LAT_M_NR],
    pub usr_ms: u64,
    pub sys_ms: u64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    /// The job's whole run time in ms (the base of the cpu percentages).
    pub total_run_ms: u64,
    /// `iodepth` for the `latency   :` line (fio shows the depth the latency target
    /// settled on; without a target that is the job's iodepth).
    pub latency_depth: u32,
    /// `latency_target` in ns, as fio keeps it.
    pub latency_target: u64,
    /// `latency_window` in µs, as fio keeps it.
    pub latency_window: u64,
    pub latency_percentile: f64,
    pub continue_on_error: bool,
    pub total_err_count: u64,
    pub first_error: i32,
    /// True when the job stopped on an error it could not pass over (the run's exit
    /// status counts it; an error `continue_on_error` passed over is only shown).
    #[serde(default)]
    pub failed: bool,
    /// The steady-state window and verdict, set by the collector that judged it (on the
    /// last clone of a reporting group with group_reporting).
    #[serde(default)]
    pub steady: Option<steady::SteadyReport>,
    bw_win: Window,
    iops_win: Window,
    /// When the earlier of the two windows ends (ns since the stats started): until then
    /// a completion need not look at them. 0 (a fresh or received value) means "look".
    #[serde(skip)]
    next_window_ns: u64,
    /// Sample logs, when the job writes any. The worker writes them itself: they never
    /// travel with the stats.
    #[serde(skip)]
    pub logs: Option<Box<logs::JobLogs>>,
    /// The worker's rusage when its I/O began (after its buffers were allocated, as fio
    /// takes it), so `minf` counts the faults of the I/O and not of the set-up.
    #[serde(skip)]
    pub cpu_start: Option<cpu::Rusage>,
    /// Where this clone publishes its progress for the status line (see `board`).
    #[serde(skip)]
    pub live: Option<&'static board::Slot>,
    /// When the job began, in ms of its `job_start_clock_id` clock (fio 3.36's JSON
    /// `job_start`); a reported job keeps its first clone's.
    #[serde(default)]
    pub job_start: u64,
    /// Block size per direction for window log lines (0 when it varies).
    pub log_bs: [u64; 3],
    /// I/Os in flight when a live snapshot was taken (`--metrics`); 0 otherwise.
    #[serde(default)]
    pub inflight: u32,
    /// `zonemode=zbd`: zones reset (fio's `; N zone resets` on the write line).
    #[serde(default)]
    pub zone_resets: u64,
    /// `block_error_percentiles`: trims per block of the job's file.
    #[serde(default)]
    pub block_life: Option<Box<blocklife::BlockLife>>,
    /// `--profile=act`: latencies past ACT's limits, per hour.
    #[serde(default)]
    pub act: Option<Box<act::ActSlices>>,
    /// The http engine's own statistics (errors by status, per-operation, per-size and
    /// per-endpoint latencies), under its iobench-only options; `None` otherwise.
    #[serde(default)]
    pub obj: Option<Box<objstats::ObjStats>>,
}

/// The block table of a `block_error_percentiles` job: its one file's I/O region (the
/// job's size in bytes, or else what the file holds past the offset) in trim blocks.
/// The resolver refused sizes fio refuses; a region not known before the run gets none.
fn block_life_for(job: &crate::job::Job) -> Option<blocklife::BlockLife> {
    use crate::defs::value::SizeSpec;
    let base = match job.workload.offset {
        SizeSpec::Bytes(b) => b,
        SizeSpec::Percent(_) => 0,
    };
    let size = match job.workload.size {
        Some(SizeSpec::Bytes(b)) => b,
        _ => {
            let name = job.files.filename.as_deref()?;
            std::fs::metadata(name).ok()?.len().checked_sub(base)?
        }
    };
    blocklife::BlockLife::new(base, size, job.workload.bs[Ddir::Trim as usize].0).ok()
}

/// Index of a count in fio's submit/complete distribution (0, 1-4, 5-8, …, >64).
fn map_idx(nr: u32) -> usize {
    match nr {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// Index of a queue depth in fio's `IO depths` distribution (1, 2, 4, … >=64).
fn depth_idx(depth: u32) -> usize {
    match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

/// Index in a 2/4/10/20/50/100/250/500/750/1000(/2000/more) latency bucket list.
fn lat_bucket(v: u64) -> usize {
    match v {
        0..=1 => 0,
        2..=3 => 1,
        4..=9 => 2,
        10..=19 => 3,
        20..=49 => 4,
        50..=99 => 5,
        100..=249 => 6,
        250..=499 => 7,
        500..=749 => 8,
        750..=999 => 9,
        1000..=1999 => 10,
        _ => 11,
    }
}

impl JobStats {
    /// Empty stats for one clone of a job, with the job's measuring options.
    pub fn new(name: &str, groupid: u32, cfg: StatsConfig) -> Self {
        let mut s = JobStats {
            name: name.to_string(),
            groupid,
            jobs: 1,
            pid: std::process::id(),
            latency_depth: 1,
            latency_percentile: 100.0,
            ..Default::default()
        };
        for d in &mut s.dir {
            if cfg.slat_percentiles {
                d.hist[LatKind::Slat as usize] = Hist::new();
            }
            if cfg.clat_percentiles {
                d.hist[LatKind::Clat as usize] = Hist::new();
            }
            if cfg.lat_percentiles {
                d.hist[LatKind::Lat as usize] = Hist::new();
            }
        }
        if cfg.clat_percentiles || cfg.lat_percentiles {
            s.sync_hist = Hist::new();
        }
        if cfg.sched_lat {
            for d in &mut s.dir {
                d.sched_hist = Hist::new();
            }
        }
        s.cfg = cfg;
        s
    }

    /// Empty stats for clone `_clone` of `job` in group `groupid`: name, description,
    /// measuring options and the `latency` line's depth come from the job.
    pub fn for_job(job: &crate::job::Job, job_index: usize, groupid: u32) -> Self {
        let mut s = JobStats::new(&job.name, groupid, job.report.stats.clone());
        s.job_index = job_index;
        s.description = job.report.description.clone();
        s.latency_depth = job.exec.iodepth_given;
        let lc = &job.report.logs;
        if lc.any() {
            let c = &job.report.stats;
            s.logs = Some(Box::new(logs::JobLogs::new(
                lc.clone(),
                c.disable_lat,
                c.disable_slat,
                c.disable_clat,
            )));
        }
        for (d, &(lo, hi)) in job.workload.bs.iter().enumerate() {
            s.log_bs[d] = if lo == hi { lo } else { 0 };
        }
        if let Some(n) = job.raw.act_slices {
            s.act = Some(Box::new(act::ActSlices::new(n)));
        }
        if job.report.block_error_percentiles {
            s.block_life = block_life_for(job).map(Box::new);
        }
        s
    }

    /// One completed I/O. `slat_ns` is 0 when the engine completed the I/O as it was
    /// submitted (sync engines): then no submission latency is recorded, as in fio. `lat`
    /// is `slat + clat`. `now_ns` is the time since the job's statistics started, so that
    /// bandwidth and IOPS samples can be cut into windows.
    #[inline]
    pub fn record_io(&mut self, ddir: Ddir, bytes: u64, slat_ns: u64, clat_ns: u64, now_ns: u64) {
        self.record_io_at(ddir, bytes, 0, slat_ns, clat_ns, now_ns);
    }

    /// `record_io` with the I/O's file offset, for `log_offset` logs.
    #[inline]
    pub fn record_io_at(
        &mut self,
        ddir: Ddir,
        bytes: u64,
        offset: u64,
        slat_ns: u64,
        clat_ns: u64,
        now_ns: u64,
    ) {
        if !self.cfg.stats {
            return;
        }
        if let Some(a) = &mut self.act {
            a.add(slat_ns + clat_ns, now_ns);
        }
        if ddir == Ddir::Trim {
            if let Some(b) = &mut self.block_life {
                b.trimmed(offset);
            }
        }
        if let Some(l) = &mut self.logs {
            l.io(ddir as u8, bytes, offset, slat_ns, clat_ns, now_ns);
        }
        let d = &mut self.dir[ddir as usize];
        d.ios += 1;
        d.bytes += bytes;
        if let Some(slot) = self.live {
            slot.set_progress(ddir as usize, d.bytes, d.ios);
        }
        if slat_ns != 0 && !self.cfg.disable_slat {
            d.slat.add(slat_ns);
            if self.cfg.slat_percentiles {
                d.hist[0].add(slat_ns);
            }
        }
        if !self.cfg.disable_clat {
            d.clat.add(clat_ns);
            if let Some(slot) = self.live {
                slot.set_clat(ddir as usize, d.clat.mean, d.clat.samples);
            }
            if self.cfg.clat_percentiles {
                d.hist[1].add(clat_ns);
            }
            if clat_ns < 1000 {
                self.lat_n[lat_bucket(clat_ns)] += 1;
            } else if clat_ns < 1_000_000 {
                self.lat_u[lat_bucket(clat_ns / 1000)] += 1;
            } else {
                self.lat_m[lat_bucket(clat_ns / 1_000_000)] += 1;
            }
        }
        if !self.cfg.disable_lat {
            let lat = slat_ns + clat_ns;
            d.lat.add(lat);
            if self.cfg.lat_percentiles {
                d.hist[2].add(lat);
            }
        }
        self.sample_windows(now_ns);
        if let Some(l) = &mut self.logs {
            let hist = &self.dir[ddir as usize].hist[LatKind::Clat as usize];
            l.hist_tick(ddir as u8, bytes, now_ns / 1_000_000, hist);
        }
    }

    /// Names this clone's log files with its number (fio's thread number, 1-based).
    pub fn set_log_number(&mut self, num: u64) {
        if let Some(l) = &mut self.logs {
            l.set_number(num);
        }
    }

    /// Writes out what the logs still hold, at the end of the job. Errors name the file.
    pub fn finish_logs(&mut self) -> std::io::Result<()> {
        let end = self.total_run_ms;
        match &mut self.logs {
            Some(l) => l.finish(end),
            None => Ok(()),
        }
    }

    /// One completed I/O counted in bytes and I/Os only, with no latency sample: the I/Os of
    /// the file engines, whose only latency is that of their file call (fio's NOSTATS).
    #[inline]
    pub fn record_io_bytes(&mut self, ddir: Ddir, bytes: u64, now_ns: u64) {
        if !self.cfg.stats {
            return;
        }
        let d = &mut self.dir[ddir as usize];
        d.ios += 1;
        d.bytes += bytes;
        self.sample_windows(now_ns);
    }

    /// One I/O completed during `ramp_time`: counted in I/Os and bytes only (no latency,
    /// no sample), as fio counts its blocks and bytes all along. The ramp's end forgets
    /// them ([`Self::reset_ramp_counts`]); a job that ends within its ramp reports them,
    /// with no latencies, as fio's does.
    #[inline]
    pub fn record_ramp_io(&mut self, ddir: Ddir, bytes: u64) {
        if !self.cfg.stats {
            return;
        }
        let d = &mut self.dir[ddir as usize];
        d.ios += 1;
        d.bytes += bytes;
    }

    /// The ramp is over: the I/Os and bytes counted so far are forgotten, as fio's reset
    /// of its counters at the ramp's end forgets them.
    pub fn reset_ramp_counts(&mut self) {
        for d in &mut self.dir {
            d.ios = 0;
            d.bytes = 0;
            d.short = 0;
        }
        self.sync_ios = 0;
    }

    /// One completion-latency sample that is not an I/O's (a file engine's create, stat or
    /// unlink): it goes to clat and its percentiles only, as fio adds it.
    pub fn record_clat_only(&mut self, ddir: Ddir, clat_ns: u64) {
        if !self.cfg.stats || self.cfg.disable_clat {
            return;
        }
        let d = &mut self.dir[ddir as usize];
        d.clat.add(clat_ns);
        if let Some(slot) = self.live {
            slot.set_clat(ddir as usize, d.clat.mean, d.clat.samples);
        }
        if self.cfg.clat_percentiles {
            d.hist[1].add(clat_ns);
        }
    }

    /// Closes the bandwidth and IOPS windows that have ended by `now_ns` (ns since the
    /// stats started), adding one sample per direction that moved, as fio's helper thread
    /// does every `bwavgtime`/`iopsavgtime` ms. Called by `record_io`; a runner may also call
    /// it while no I/O completes.
    #[inline]
    pub fn sample_windows(&mut self, now_ns: u64) {
        if now_ns >= self.next_window_ns {
            self.close_windows(now_ns);
        }
    }

    /// The part of `sample_windows` that runs when a window may have ended.
    #[inline(never)]
    fn close_windows(&mut self, now_ns: u64) {
        if now_ns >= self.bw_win.start_ns + self.cfg.bw_avg_ms * 1_000_000 {
            let spent = (now_ns - self.bw_win.start_ns) / 1_000_000;
            for (i, d) in self.dir.iter_mut().enumerate() {
                let delta = d.bytes - self.bw_win.at_start[i];
                if delta == 0 {
                    continue;
                }
                let rate = delta * 1000 / spent / 1024;
                d.bw.add(rate);
                self.bw_win.at_start[i] = d.bytes;
                if let Some(l) = &mut self.logs {
                    l.window(
                        i as u8,
                        Some(rate),
                        None,
                        self.log_bs[i],
                        now_ns / 1_000_000,
                    );
                }
            }
            self.bw_win.start_ns = now_ns;
        }
        if now_ns >= self.iops_win.start_ns + self.cfg.iops_avg_ms * 1_000_000 {
            let spent = (now_ns - self.iops_win.start_ns) / 1_000_000;
            for (i, d) in self.dir.iter_mut().enumerate() {
                let delta = d.ios - self.iops_win.at_start[i];
                if delta == 0 {
                    continue;
                }
                let rate = delta * 1000 / spent;
                d.iops.add(rate);
                self.iops_win.at_start[i] = d.ios;
                if let Some(l) = &mut self.logs {
                    l.window(
                        i as u8,
                        None,
                        Some(rate),
                        self.log_bs[i],
                        now_ns / 1_000_000,
                    );
                }
            }
            self.iops_win.start_ns = now_ns;
        }
        self.next_window_ns = (self.bw_win.start_ns + self.cfg.bw_avg_ms * 1_000_000)
            .min(self.iops_win.start_ns + self.cfg.iops_avg_ms * 1_000_000);
    }

    /// One fsync/fdatasync/sync_file_range of the ramp: counted, as fio counts it, with no
    /// latency; the ramp's end forgets it ([`Self::reset_ramp_counts`]).
    pub fn record_ramp_sync(&mut self) {
        if self.cfg.stats {
            self.sync_ios += 1;
        }
    }

    /// One fsync/fdatasync/sync_file_range and its latency.
    pub fn record_sync(&mut self, lat_ns: u64) {
        if !self.cfg.stats {
            return;
        }
        self.sync_ios += 1;
        if !self.cfg.disable_clat {
            self.sync.add(lat_ns);
            if !self.sync_hist.is_empty() {
                self.sync_hist.add(lat_ns);
            }
        }
    }

    /// `nr` I/Os issued while `depth` I/Os were in flight (the `IO depths` line). Sync
    /// engines call this with depth 1, nr 1 per I/O.
    #[inline]
    pub fn record_depth(&mut self, depth: u32, nr: u32) {
        self.depth_map[depth_idx(depth)] += nr as u64;
    }

    /// One submission call that carried `nr` I/Os (the `submit` line).
    #[inline]
    pub fn record_submit(&mut self, nr: u32) {
        self.submit_map[map_idx(nr)] += 1;
        self.total_submit += 1;
    }

    /// One reap that returned `nr` completions (the `complete` line).
    #[inline]
    pub fn record_complete(&mut self, nr: u32) {
        self.complete_map[map_idx(nr)] += 1;
        self.total_complete += 1;
    }

    /// Forgets the depth, submit and complete distributions, as fio does when `ramp_time`
    /// ends: the I/Os counted in them are then the ones the report's totals count.
    pub fn reset_io_maps(&mut self) {
        self.depth_map = [0; MAP_NR];
        self.submit_map = [0; MAP_NR];
        self.complete_map = [0; MAP_NR];
        self.total_submit = 0;
        self.total_complete = 0;
    }

    /// Open-loop arrivals: one I/O's latency from its scheduled start (`arrival=`).
    #[inline]
    pub fn record_sched(&mut self, ddir: Ddir, ns: u64) {
        if self.cfg.stats {
            let d = &mut self.dir[ddir as usize];
            d.sched.add(ns);
            d.sched_hist.add(ns);
        }
    }

    /// Open-loop arrivals: an I/O started `behind` arrivals after its scheduled time
    /// (0: on time).
    #[inline]
    pub fn record_start(&mut self, ddir: Ddir, behind: u64) {
        if behind > 0 && self.cfg.stats {
            let d = &mut self.dir[ddir as usize];
            d.missed_starts += 1;
            d.backlog_max = d.backlog_max.max(behind);
        }
    }

    /// Lists the priorities a job's I/Os may carry, in the order fio reports them (the
    /// default first), before any I/O.
    pub fn seed_prios(&mut self, ioprios: &[u16]) {
        for d in self.dir.iter_mut() {
            for &p in ioprios {
                d.prio_mut(p);
            }
        }
    }

    /// One completed I/O's latency under its priority (see `PrioStat`).
    pub fn record_prio(&mut self, ddir: Ddir, ioprio: u16, slat_ns: u64, clat_ns: u64) {
        if !self.cfg.stats {
            return;
        }
        let ns = if self.cfg.lat_percentiles {
            slat_ns + clat_ns
        } else {
            clat_ns
        };
        let p = self.dir[ddir as usize].prio_mut(ioprio);
        p.lat.add(ns);
        p.hist.add(ns);
    }

    /// An I/O that transferred fewer bytes than asked.
    pub fn record_short(&mut self, ddir: Ddir) {
        self.dir[ddir as usize].short += 1;
    }

    /// An I/O that was dropped rather than issued.
    pub fn record_dropped(&mut self, ddir: Ddir) {
        self.dir[ddir as usize].dropped += 1;
    }

    /// An I/O error: the first one sets the job's error (`err=`), every one counts toward
    /// `continue_on_error`'s totals.
    pub fn record_error(&mut self, errno: i32, text: &str) {
        self.total_err_count += 1;
        if self.first_error == 0 {
            self.first_error = errno;
        }
        if self.error == 0 {
            self.error = errno;
            self.verror = text.to_string();
        }
    }

    /// Marks that the job ran with `continue_on_error`, which adds the `errors` line.
    pub fn set_continue_on_error(&mut self, on: bool) {
        self.continue_on_error = on;
    }

    /// The run time of direction `ddir` in milliseconds, set when the job ends.
    pub fn set_runtime_ms(&mut self, ddir: Ddir, ms: u64) {
        self.dir[ddir as usize].runtime_ms = ms;
    }

    /// The job's whole run time in ms, the base of the `cpu` percentages.
    pub fn set_total_runtime_ms(&mut self, ms: u64) {
        self.total_run_ms = ms;
    }

    /// CPU used by the job: user and system ms, context switches, major/minor faults.
    pub fn set_cpu(&mut self, c: cpu::CpuUsage) {
        self.usr_ms = c.usr_ms;
        self.sys_ms = c.sys_ms;
        self.ctx = c.ctx;
        self.majf = c.majf;
        self.minf = c.minf;
    }

    /// The `latency   :` line's values when `latency_target` is used.
    pub fn set_latency_target(&mut self, target_ns: u64, window_us: u64, pct: f64, depth: u32) {
        self.latency_target = target_ns;
        self.latency_window = window_us;
        self.latency_percentile = pct;
        self.latency_depth = depth;
    }

    /// Merges `src` into `self` (fio's sum_thread_stats): latencies combine as samples,
    /// bandwidth and IOPS add up as parallel rates, counts add, run times take the longest.
    /// With `unified_rw_reporting=mixed` in `self.cfg`, every direction folds into read.
    pub fn merge(&mut self, src: &JobStats) {
        let mixed = self.cfg.unified == Unified::Mixed;
        for l in 0..3 {
            let t = if mixed { 0 } else { l };
            let s = &src.dir[l];
            let d = &mut self.dir[t];
            d.clat.merge(&s.clat);
            d.slat.merge(&s.slat);
            d.lat.merge(&s.lat);
            d.bw.merge_sum(&s.bw);
            d.iops.merge_sum(&s.iops);
            d.bytes += s.bytes;
            d.runtime_ms = d.runtime_ms.max(s.runtime_ms);
            d.ios += s.ios;
            d.short += s.short;
            d.dropped += s.dropped;
            for k in 0..3 {
                d.hist[k].merge(&s.hist[k]);
            }
            d.sched.merge(&s.sched);
            d.sched_hist.merge(&s.sched_hist);
            d.missed_starts += s.missed_starts;
            d.backlog_max = d.backlog_max.max(s.backlog_max);
            for p in &s.prios {
                let mine = d.prio_mut(p.ioprio);
                mine.lat.merge(&p.lat);
                mine.hist.merge(&p.hist);
            }
        }
        self.sync.merge(&src.sync);
        self.sync_hist.merge(&src.sync_hist);
        self.sync_ios += src.sync_ios;
        self.zone_resets += src.zone_resets;
        self.usr_ms += src.usr_ms;
        self.sys_ms += src.sys_ms;
        self.ctx += src.ctx;
        self.majf += src.majf;
        self.minf += src.minf;
        for k in 0..MAP_NR {
            self.depth_map[k] += src.depth_map[k];
            self.submit_map[k] += src.submit_map[k];
            self.complete_map[k] += src.complete_map[k];
        }
        for k in 0..LAT_N_NR {
            self.lat_n[k] += src.lat_n[k];
        }
        for k in 0..LAT_U_NR {
            self.lat_u[k] += src.lat_u[k];
        }
        for k in 0..LAT_M_NR {
            self.lat_m[k] += src.lat_m[k];
        }
        self.total_run_ms += src.total_run_ms;
        // fio's group keeps the block table of the last job summed into it.
        if src.block_life.is_some() {
            self.block_life = src.block_life.clone();
        }
        self.total_submit += src.total_submit;
        self.total_complete += src.total_complete;
        if let Some(o) = &src.obj {
            match &mut self.obj {
                Some(mine) => mine.merge(o),
                None => self.obj = Some(o.clone()),
            }
        }
    }

    /// All read/write/trim I/Os completed.
    pub fn total_ios(&self) -> u64 {
        self.dir.iter().map(|d| d.ios).sum()
    }

    /// All read/write/trim bytes.
    pub fn total_bytes(&self) -> u64 {
        self.dir.iter().map(|d| d.bytes).sum()
    }

    /// A copy with every direction folded into read, for `unified_rw_reporting=both`'s
    /// extra `mixed` block.
    pub fn mixed(&self) -> JobStats {
        let mut m = JobStats::new(&self.name, self.groupid, self.cfg.clone());
        m.cfg.unified = Unified::Mixed;
        m.merge(self);
        m.cfg.unified = Unified::Mixed;
        m
    }
}

impl std::ops::AddAssign<&JobStats> for JobStats {
    fn add_assign(&mut self, rhs: &JobStats) {
        self.merge(rhs);
    }
}

/// What a whole run produced: one JobStats per job clone, in start order, and whether a
/// signal cut it short.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunOutcome {
    pub results: Vec<JobStats>,
    pub signal: Option<i32>,
}
