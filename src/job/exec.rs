//! How a job issues its I/O: engine, queue depth and batching, workers, timing, grouping,
//! syncing and rate limits, resolved into typed values the run core uses as they are.

#![warn(clippy::cast_possible_truncation)]

use crate::defs::reader::Reader;
use crate::defs::steady::Criterion;
use crate::defs::OptDef;
use crate::defs::TimeUnit;
use crate::engine::EngineConfig;
use crate::error::JobError;
use crate::options::table::COMM;
use crate::options::table::{
    ARRIVAL, ATOMIC, BUFFERED, CGROUP, CGROUP_NODELETE, CGROUP_WEIGHT, CLOCKSOURCE, CPUMASK,
    CPUS_ALLOWED, CPUS_ALLOWED_POLICY, DIRECT, END_FSYNC, END_SYNCFS, EXEC_POSTRUN, EXEC_PRERUN,
    EXITALL, FADVISE_HINT, FDATASYNC, FLOW, FLOW_ID, FLOW_SLEEP, FSYNC, FSYNC_ON_CLOSE, GID,
    GTOD_CPU, IODEPTH, IODEPTH_BATCH, IODEPTH_BATCH_COMPLETE_MAX, IODEPTH_BATCH_COMPLETE_MIN,
    IODEPTH_LOW, IOENGINE, IOSCHEDULER, IO_STALL_WARN, IO_SUBMIT_MODE, IO_TIMEOUT,
    LATENCY_PERCENTILE, LATENCY_RUN, LATENCY_TARGET, LATENCY_WINDOW, LOCKMEM, LOOPS, MAX_LATENCY,
    NEW_GROUP, NICE, NUMA_CPU_NODES, NUMA_MEM_POLICY, NUMJOBS, PRIO, PRIOCLASS, PRIOHINT,
    RAMP_SIZE, RAMP_TIME, RATE, RATE_CYCLE, RATE_IGNORE_THINKTIME, RATE_IOPS, RATE_IOPS_MIN,
    RATE_MIN, RATE_PROCESS, RUNTIME, RW, SERIALIZE_OVERLAP, STARTDELAY, STEADYSTATE,
    STEADYSTATE_CHECK_INTERVAL, STEADYSTATE_DURATION, STEADYSTATE_RAMP_TIME, STONEWALL, SYNC,
    SYNC_FILE_RANGE, THINKCYCLES, THINKTIME, THINKTIME_BLOCKS, THINKTIME_BLOCKS_TYPE,
    THINKTIME_IOTIME, THINKTIME_SPIN, THREAD, TIME_BASED, UID, WAIT_FOR, WRITE_HINT,
};
use serde::{Deserialize, Serialize};

/// A value that may be given as a range `a-b` (picked at random per clone).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Range {
    pub lo: u64,
    pub hi: u64,
}

/// How often to sync written data: fsync=N, fdatasync=N.
#[derive(Debug, Clone, Copy, Default)]
pub struct SyncOpts {
    pub fsync_blocks: u64,
    pub fdatasync_blocks: u64,
    pub end_fsync: bool,
    /// `end_syncfs` (fio 3.42): at the job's end, one syncfs per file system its regular
    /// files are on, instead of `end_fsync`'s fsync per file.
    pub end_syncfs: bool,
    pub fsync_on_close: bool,
    /// Extra open flags: `sync=` (O_SYNC or O_DSYNC) and `atomic` (fio's O_ATOMIC bit); 0 when off.
    pub open_sync_flags: i32,
    /// `sync_file_range=flags[:N]`: the SYNC_FILE_RANGE_* bits and every how many writes
    /// (0: never).
    pub range_flags: u32,
    pub range_blocks: u64,
}

/// `arrival=` (iobench): how the I/Os of a rated job are started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arrival {
    /// fio's closed loop: an I/O waits for a free slot, its latency counts from its issue.
    Closed,
    /// Open loop, evenly spaced scheduled starts.
    Fixed,
    /// Open loop, Poisson scheduled starts.
    Poisson,
}

/// Rate limits per direction (read, write, trim).
#[derive(Debug, Clone, Copy, Default)]
pub struct RateOpts {
    pub bps: [u64; 3],
    pub min_bps: [u64; 3],
    pub iops: [u64; 3],
    pub min_iops: [u64; 3],
    pub poisson: bool,
    pub cycle_ms: u64,
    /// `arrival=fixed|poisson` (iobench): open-loop arrivals, latency from the scheduled
    /// start; false for fio's closed loop.
    pub open_loop: bool,
}

/// `thinktime*`: the pauses between I/Os.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThinkOpts {
    /// `thinktime`: the pause, and `thinktime_spin`: how much of it is spun, in µs.
    pub us: u64,
    pub spin_us: u64,
    /// `thinktime_blocks` (at least 1), and whether the user set it.
    pub blocks: u64,
    pub blocks_set: bool,
    /// `thinktime_blocks_type=issue`: count issued I/Os (else completed ones).
    pub on_issue: bool,
    /// `thinktime_iotime` in µs (0: unset).
    pub iotime_us: u64,
    /// `rate_ignore_thinktime`.
    pub rate_ignores: bool,
    /// `thinkcycles` (fio 3.37): empty loop turns spun after each read, write or trim
    /// is issued, apart from (and before) any thinktime pause (0: none).
    pub cycles: u64,
}

/// `latency_target` and its companions: the queue-depth search for the deepest queue
/// that keeps `percentile` of the I/Os under `target_us`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyTarget {
    pub target_us: u64,
    pub window_us: u64,
    pub percentile: f64,
    /// `latency_run`: keep searching for the whole run.
    pub keep_running: bool,
}

/// fio's flow control between jobs (`flow`, `flow_id`, `flow_sleep`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowOpts {
    /// The job's weight in its flow (0: not in one).
    pub weight: u64,
    pub id: u64,
    pub sleep_us: u64,
}

impl RateOpts {
    pub fn any(&self) -> bool {
        self.bps.iter().chain(self.iops.iter()).any(|&v| v > 0)
    }
}

/// The resolved execution options.
#[derive(Debug, Clone)]
pub struct ExecOpts {
    /// `comm`: the name the clone's process or thread takes (fio 3.42).
    pub comm: Option<String>,
    /// The engine's name as written (for the job header).
    pub ioengine: String,
    /// The engine and its own typed options (see `engine::spec`).
    pub engine: EngineConfig,
    /// `clocksource`, when given (the process-wide clock; see `crate::clock`).
    pub clocksource: Option<crate::clock::ClockSource>,
    pub iodepth: u32,
    /// `iodepth` as the user gave it: fio's header and `latency` line show it even when a
    /// synchronous engine caps the real depth (`iodepth`) at 1.
    pub iodepth_given: u32,
    pub iodepth_batch_submit: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    /// Both iodepth_batch_complete values are 0: fio then polls, reaping (at least one)
    /// after every I/O it queues, so the job runs one I/O at a time.
    pub completion_polling: bool,
    pub iodepth_low: u32,
    pub direct: bool,
    pub numjobs: u32,
    pub runtime_us: u64,
    pub time_based: bool,
    pub ramp_time_us: u64,
    /// `ramp_size` (fio 3.42): the ramp lasts until the clone has moved this many bytes,
    /// judged once a second as fio's helper thread judges it (0: no ramp by bytes).
    pub ramp_bytes: u64,
    pub startdelay_us: Range,
    pub loops: u32,
    pub stonewall: bool,
    pub new_group: bool,
    pub wait_for: Option<String>,
    pub thread: bool,
    pub sync: SyncOpts,
    pub rate: RateOpts,
    pub think: ThinkOpts,
    /// `max_latency` per direction, in µs (0: no limit).
    pub max_latency_us: [u64; 3],
    pub latency_target: Option<LatencyTarget>,
    pub flow: FlowOpts,
    pub nice: Option<i32>,
    pub cpus_allowed: Option<Vec<usize>>,
    pub exitall: bool,
    /// `cpus_allowed_policy=split`: each clone runs on one CPU of the set.
    pub cpus_split: bool,
    /// `prioclass`/`prio`/`priohint` for ioprio_set, when any is given: (class, level,
    /// hint).
    pub ioprio: Option<(u32, u32, u32)>,
    /// What to do on I/O errors and which jobs stop with this one.
    pub errors: super::errors::ErrorPolicy,
    /// `fadvise_hint`: the access pattern announced for each opened file, if any.
    pub access_hint: Option<AccessHint>,
    /// `exec_prerun` / `exec_postrun`: shell commands run around the job's I/O.
    pub exec_prerun: Option<String>,
    pub exec_postrun: Option<String>,
    /// `ioscheduler`: the I/O scheduler to switch the job's disks to.
    pub ioscheduler: Option<String>,
    /// `lockmem`: bytes of memory to pin while the job runs (0: none).
    pub lockmem: u64,
    /// `write_hint`: the kernel's RWH_WRITE_LIFE_* value to set on each file, if given.
    pub write_hint: Option<u64>,
    /// `steadystate*`: when to end the job early because its throughput stopped moving.
    pub steady: Option<SteadySpec>,
    /// `io_submit_mode=offload`: a pool of submitter threads issues the I/O.
    pub offload: bool,
    /// `serialize_overlap`: an I/O waits while it overlaps one in flight, so racing
    /// writes cannot leave a region undefined (and fail a verify).
    pub serialize_overlap: bool,
    /// `uid` / `gid`: the identity the worker takes before opening its files, to measure
    /// (or check the permissions of) an unprivileged user's I/O.
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// `gtod_cpu`: the CPU of the thread that keeps the time for all jobs (fio takes it
    /// out of this job's `cpus_allowed`, unless it is CPU 0).
    pub gtod_cpu: Option<usize>,
    /// `cgroup`: the control group each worker joins for its I/O.
    pub cgroup: Option<String>,
    /// `cgroup_weight`: the group's blkio weight (v1 only).
    pub cgroup_weight: Option<u32>,
    /// `cgroup_nodelete`: keep a group this run created.
    pub cgroup_nodelete: bool,
    /// `numa_cpu_nodes`: run on the CPUs of these nodes (after `cpus_allowed`, as fio).
    pub numa_cpu_nodes: Option<Vec<usize>>,
    /// `numa_mem_policy`: the worker's memory policy.
    pub numa_mem_policy: Option<super::numa::MemPolicy>,
    /// `io_stall_warn` / `io_timeout` (iobench's own): when an I/O is stuck.
    pub watchdog: Watchdog,
}

/// The hung-I/O watchdog's thresholds (iobench extensions, see `run::watchdog`), in
/// microseconds; 0 turns each off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watchdog {
    /// `io_stall_warn` (default 30 s): warn once when an I/O is outstanding this long.
    pub stall_warn_us: u64,
    /// `io_timeout` (default off): end the job with ETIMEDOUT when one is outstanding
    /// this long.
    pub timeout_us: u64,
    /// How much later than `timeout_us` the watchdog acts: a grace for an engine that
    /// bounds each request by `io_timeout` itself (`own_deadline`), else 0.
    pub grace_us: u64,
}

impl Watchdog {
    /// The default warning threshold.
    pub const DEFAULT_WARN_US: u64 = 30_000_000;

    /// The thresholds of a job whose engine has `flags`: one that bounds each request by
    /// `io_timeout` itself (`own_deadline`) is timed out by the watchdog only a grace
    /// later, as a backstop.
    fn resolve(r: &Reader, flags: &crate::engine::spec::Flags) -> Result<Self, JobError> {
        let stall_warn_us = match r.text(&IO_STALL_WARN) {
            None => Self::DEFAULT_WARN_US,
            Some(_) => r.time_us(&IO_STALL_WARN)?,
        };
        let timeout_us = r.time_us(&IO_TIMEOUT)?;
        let grace_us = if flags.own_deadline && timeout_us > 0 {
            crate::engine::spec::DEADLINE_GRACE_US
        } else {
            0
        };
        Ok(Watchdog {
            stall_warn_us,
            timeout_us,
            grace_us,
        })
    }

    /// True when neither threshold is set: nothing to watch.
    pub fn off(&self) -> bool {
        self.stall_warn_us == 0 && self.timeout_us == 0
    }
}

/// `latency_target` with `latency_window`, `latency_percentile` and `latency_run`; `None`
/// when no target (or a zero one) is given.
fn latency_target(r: &Reader) -> Result<Option<LatencyTarget>, JobError> {
    if !r.is_set(&LATENCY_TARGET) {
        return Ok(None);
    }
    let target_us = r.time_us(&LATENCY_TARGET)?;
    let percentile = match r.text(&LATENCY_PERCENTILE) {
        None => 100.0,
        // fio reads a float (a trailing `%` is allowed) in 0..=100.
        Some(p) => match crate::defs::value::parse_float(p.trim().trim_end_matches('%')) {
            Ok(v) if (0.0..=100.0).contains(&v) => v,
            Ok(v) => {
                return Err(r.invalid(
                    &LATENCY_PERCENTILE,
                    format!("{v} is outside 0..100 (a percentage of the I/Os)"),
                ))
            }
            Err(e) => return Err(r.invalid(&LATENCY_PERCENTILE, e)),
        },
    };
    Ok((target_us > 0).then_some(LatencyTarget {
        target_us,
        window_us: r.time_us(&LATENCY_WINDOW)?,
        percentile,
        keep_running: r.bool(&LATENCY_RUN)?,
    }))
}

/// Parses `sync_file_range=flag[,flag...][:N]` into the SYNC_FILE_RANGE_* bits and N.
fn parse_sync_range(v: &str) -> Result<(u32, u64), String> {
    let (flags, nr) = match v.split_once(':') {
        Some((f, n)) => (
            f,
            n.trim()
                .parse::<u64>()
                .map_err(|_| format!("bad count '{n}' (expected flags:N)"))?,
        ),
        None => (v, 1),
    };
    let mut bits = 0u32;
    for f in flags.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        bits |= match f {
            "wait_before" => libc::SYNC_FILE_RANGE_WAIT_BEFORE,
            "write" => libc::SYNC_FILE_RANGE_WRITE,
            "wait_after" => libc::SYNC_FILE_RANGE_WAIT_AFTER,
            _ => {
                return Err(format!(
                    "unknown flag '{f}' (expected wait_before, write, wait_after)"
                ))
            }
        };
    }
    Ok((bits, nr))
}

/// The open flag fio 3.33 passes for `atomic=1` on Linux (its `OS_O_ATOMIC`, from a
/// proposed kernel interface that was never merged): the kernel ignores the bit, so
/// atomic writes are plain O_DIRECT writes, in fio as here. Kept so both tools issue the
/// same `open` call.
const O_ATOMIC: i32 = 0o40000000;

/// The access pattern fio announces to the kernel (`fadvise_hint`): none with
/// fadvise_hint=0; with 1 (the default) random for random patterns, else sequential.
/// It decides read-ahead on buffered files, so leaving it out would change what is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessHint {
    Random,
    Sequential,
    /// fadvise_hint=noreuse (fio 3.35): POSIX_FADV_NOREUSE.
    NoReuse,
}

impl AccessHint {
    pub(crate) fn resolve(r: &Reader) -> Option<Self> {
        let random = r.text(&RW).is_some_and(|v| v.contains("rand"));
        match r.choice(&FADVISE_HINT).as_deref() {
            Some("0") | Some("false") | Some("off") | Some("no") => None,
            Some("sequential") => Some(AccessHint::Sequential),
            Some("random") => Some(AccessHint::Random),
            Some("noreuse") => Some(AccessHint::NoReuse),
            _ if random => Some(AccessHint::Random),
            _ => Some(AccessHint::Sequential),
        }
    }

    /// The posix_fadvise advice for an opened file.
    pub fn fadvise(self) -> i32 {
        match self {
            AccessHint::Random => libc::POSIX_FADV_RANDOM,
            AccessHint::Sequential => libc::POSIX_FADV_SEQUENTIAL,
            AccessHint::NoReuse => libc::POSIX_FADV_NOREUSE,
        }
    }

    /// The madvise advice for the mmap engine's mapping.
    pub fn madvise(self) -> i32 {
        match self {
            AccessHint::Random => libc::MADV_RANDOM,
            AccessHint::Sequential => libc::MADV_SEQUENTIAL,
            // Refused with the mmap engine when the job is resolved, as fio fails it.
            AccessHint::NoReuse => libc::MADV_NORMAL,
        }
    }
}

impl ExecOpts {
    /// True when a synchronous engine capped the job's iodepth at 1 (fio's note says so).
    pub fn depth_capped(&self) -> bool {
        self.iodepth < self.iodepth_given
    }

    pub fn resolve(r: &Reader) -> Result<Self, JobError> {
        // `atomic=1`: fio 3.33 opens with O_DIRECT and its O_ATOMIC bit; 3.34 to 3.37 do
        // nothing with it; from 3.38 on the writes carry RWF_ATOMIC (and nothing else).
        let atomic_given = r.bool(&ATOMIC)?;
        let atomic = atomic_given && r.raw.release < crate::defs::FioRelease::V3_34;
        let rwf_atomic_asked = atomic_given && r.raw.release >= crate::defs::FioRelease::V3_38;
        let direct = atomic
            || if r.is_set(&BUFFERED) && !r.is_set(&DIRECT) {
                !r.bool(&BUFFERED)?
            } else {
                r.bool(&DIRECT)?
            };
        let ioengine = r.string(&IOENGINE);
        let spec = crate::engine::registry::find(crate::defs::value::choice_word(&ioengine))
            .map_err(|e| r.invalid(&IOENGINE, e))?;
        let iodepth = r.num_as::<u32>(&IODEPTH)?.max(1);
        let depth = if spec.flags.sync { 1 } else { iodepth };
        let batch = r.num_as::<u32>(&IODEPTH_BATCH)?;
        let batch = if batch == 0 || batch > depth {
            depth
        } else {
            batch
        };
        let cmin = r.num_as::<u32>(&IODEPTH_BATCH_COMPLETE_MIN)?;
        let cmax = r.num_as::<u32>(&IODEPTH_BATCH_COMPLETE_MAX)?;
        let polling = cmin == 0 && cmax == 0;
        // fio leaves an unset maximum at the minimum (one completion per reap by default).
        let cmax = cmax.max(cmin).max(1);
        let low = r.num_as::<u32>(&IODEPTH_LOW)?;
        let low = if low == 0 || low > depth { depth } else { low };
        let (range_flags, range_blocks) = match r.text(&SYNC_FILE_RANGE) {
            Some(v) => parse_sync_range(&v).map_err(|e| r.invalid(&SYNC_FILE_RANGE, e))?,
            None => (0, 0),
        };
        let sync_flags = match r.text(&SYNC).as_deref() {
            None | Some("0") | Some("none") | Some("false") | Some("off") => 0,
            Some("dsync") => libc::O_DSYNC,
            Some(_) => libc::O_SYNC,
        } | if atomic { O_ATOMIC } else { 0 };
        if spec.name == "mmap" && AccessHint::resolve(r) == Some(AccessHint::NoReuse) {
            return Err(r.invalid(
                &FADVISE_HINT,
                "noreuse has no madvise counterpart: fio's mmap engine fails the mapping",
            ));
        }
        if rwf_atomic_asked && !spec.flags.atomic_writes {
            return Err(r.invalid(
                &ATOMIC,
                format!(
                    "1: the {} engine does not support atomic writes (fio's pvsync2, libaio \
                     and io_uring do)",
                    spec.name
                ),
            ));
        }
        // fio drops the flag for a job that does not write.
        let rw = r.string(&RW);
        let writes = !matches!(
            rw.split(':').next().unwrap_or("").trim(),
            "read" | "randread" | "trim" | "randtrim"
        );
        let end_syncfs = r.bool(&END_SYNCFS)?;
        if end_syncfs && !spec.flags.syncfs {
            return Err(r.invalid(
                &END_SYNCFS,
                format!(
                    "1: the {} engine does not support syncfs (fio refuses the job too)",
                    spec.name
                ),
            ));
        }
        let engine = EngineConfig::new(
            spec,
            r,
            &crate::engine::spec::JobFacts {
                direct,
                madvise: AccessHint::resolve(r).map(AccessHint::madvise),
                iodepth: depth,
                runtime_us: r.time_us(&RUNTIME)?,
                rwf_atomic: rwf_atomic_asked && writes,
            },
        )?;
        let arrival = match r.choice(&ARRIVAL).as_deref() {
            Some("fixed") => Arrival::Fixed,
            Some("poisson") => Arrival::Poisson,
            _ => Arrival::Closed,
        };
        if arrival != Arrival::Closed && !r.is_set(&RATE) && !r.is_set(&RATE_IOPS) {
            return Err(r.invalid(
                &ARRIVAL,
                "open-loop arrivals need a schedule: set rate_iops (or rate) as well",
            ));
        }
        let per_dir = |def: &OptDef| r.per_dir(def, |v| r.size_of(v, def));
        let per_dir_int =
            |def: &OptDef| r.per_dir(def, |v| r.int_of(v, def).map(|n| n.max(0) as u64));
        let startdelay = match r.text(&STARTDELAY) {
            None => Range::default(),
            Some(v) => {
                let (a, b) = v.split_once('-').unwrap_or((&v, &v));
                let t = |s: &str| {
                    crate::defs::value::parse_time_us(s, TimeUnit::Sec)
                        .map_err(|e| r.invalid(&STARTDELAY, e))
                };
                let (lo, hi) = (t(a)?, t(b)?);
                Range {
                    lo: lo.min(hi),
                    hi: lo.max(hi),
                }
            }
        };
        Ok(ExecOpts {
            ioengine,
            engine,
            iodepth: depth,
            iodepth_given: iodepth,
            iodepth_batch_submit: batch,
            iodepth_batch_complete_min: cmin.min(depth),
            iodepth_batch_complete_max: cmax.min(depth).max(1),
            completion_polling: polling,
            iodepth_low: low,
            direct,
            numjobs: match r.num(&NUMJOBS)? {
                n if n < 1 => {
                    return Err(r.invalid(&NUMJOBS, format!("{n}: at least 1 job is needed")))
                }
                n => u32::try_from(n).unwrap_or(u32::MAX),
            },
            runtime_us: r.time_us(&RUNTIME)?,
            time_based: r.bool(&TIME_BASED)?,
            ramp_time_us: r.time_us(&RAMP_TIME)?,
            ramp_bytes: match (r.time_us(&RAMP_TIME)?, r.num(&RAMP_SIZE)?.max(0) as u64) {
                (t, b) if t > 0 && b > 0 => {
                    return Err(r.invalid(
                        &RAMP_SIZE,
                        format!("{b}: the job has ramp_time too; give one of the two"),
                    ))
                }
                (_, b) => b,
            },
            startdelay_us: startdelay,
            loops: r.num_as::<u32>(&LOOPS)?.max(1),
            clocksource: match r.choice(&CLOCKSOURCE) {
                Some(v) => Some(
                    crate::clock::ClockSource::parse(&v).map_err(|e| r.invalid(&CLOCKSOURCE, e))?,
                ),
                None => None,
            },
            stonewall: r.bool(&STONEWALL)? || r.raw.file_stonewall,
            new_group: r.bool(&NEW_GROUP)?,
            wait_for: r.text(&WAIT_FOR).filter(|s| !s.is_empty()),
            thread: r.bool(&THREAD)?,
            sync: SyncOpts {
                fsync_blocks: r.num(&FSYNC)?.max(0) as u64,
                fdatasync_blocks: r.num(&FDATASYNC)?.max(0) as u64,
                end_fsync: r.bool(&END_FSYNC)?,
                end_syncfs,
                fsync_on_close: r.bool(&FSYNC_ON_CLOSE)?,
                open_sync_flags: sync_flags,
                range_flags,
                range_blocks,
            },
            rate: RateOpts {
                bps: per_dir(&RATE)?,
                min_bps: per_dir(&RATE_MIN)?,
                iops: per_dir_int(&RATE_IOPS)?,
                min_iops: per_dir_int(&RATE_IOPS_MIN)?,
                poisson: r.text(&RATE_PROCESS).as_deref() == Some("poisson")
                    || arrival == Arrival::Poisson,
                cycle_ms: r.num(&RATE_CYCLE)?.max(1) as u64,
                open_loop: arrival != Arrival::Closed,
            },
            think: ThinkOpts {
                us: r.time_us(&THINKTIME)?,
                spin_us: r.time_us(&THINKTIME_SPIN)?,
                blocks: r.num(&THINKTIME_BLOCKS)?.max(1) as u64,
                blocks_set: r.is_set(&THINKTIME_BLOCKS),
                on_issue: r.choice(&THINKTIME_BLOCKS_TYPE).as_deref() == Some("issue"),
                iotime_us: r.time_us(&THINKTIME_IOTIME)?,
                rate_ignores: r.bool(&RATE_IGNORE_THINKTIME)?,
                cycles: r.num(&THINKCYCLES)?.max(0) as u64,
            },
            max_latency_us: r.per_dir(&MAX_LATENCY, |v| r.time_of(v, &MAX_LATENCY))?,
            latency_target: latency_target(r)?,
            flow: FlowOpts {
                // fio's weight is an unsigned 32-bit number: -1 is 4294967295.
                weight: u64::from(i32::try_from(r.num(&FLOW)?).unwrap_or(0) as u32),
                id: r.num(&FLOW_ID)?.max(0) as u64,
                sleep_us: r.num(&FLOW_SLEEP)?.max(0) as u64,
            },
            nice: r.int_as::<i32>(&NICE)?,
            cpus_allowed: match (r.text(&CPUS_ALLOWED), r.int(&CPUMASK)?) {
                (Some(v), _) => Some(
                    parse_cpu_list(&v)
                        .and_then(|l| cpus_present(&v, l))
                        .map_err(|e| r.invalid(&CPUS_ALLOWED, e))?,
                ),
                (None, Some(mask)) => Some((0..63).filter(|b| mask >> b & 1 == 1).collect()),
                (None, None) => None,
            },
            exitall: r.bool(&EXITALL)?,
            cpus_split: match r.text(&CPUS_ALLOWED_POLICY).as_deref() {
                None | Some("shared") => false,
                Some("split") => true,
                Some(o) => {
                    return Err(r.invalid(
                        &CPUS_ALLOWED_POLICY,
                        format!("'{o}' is not one of shared, split"),
                    ))
                }
            },
            ioprio: if r.is_set(&PRIO) || r.is_set(&PRIOCLASS) || r.is_set(&PRIOHINT) {
                Some((
                    r.num_as::<u32>(&PRIOCLASS)?.min(3),
                    r.num_as::<u32>(&PRIO)?.min(7),
                    r.num_as::<u32>(&PRIOHINT)?.min(1023),
                ))
            } else {
                None
            },
            errors: super::errors::ErrorPolicy::resolve(r)?,
            watchdog: Watchdog::resolve(r, &spec.flags)?,
            access_hint: AccessHint::resolve(r),
            comm: r.text(&COMM).filter(|s| !s.is_empty()),
            exec_prerun: r.text(&EXEC_PRERUN),
            exec_postrun: r.text(&EXEC_POSTRUN),
            ioscheduler: r.text(&IOSCHEDULER),
            lockmem: r.bytes(&LOCKMEM)?,
            write_hint: match r.text(&WRITE_HINT).as_deref() {
                None => None,
                Some("none") => Some(1),
                Some("short") => Some(2),
                Some("medium") => Some(3),
                Some("long") => Some(4),
                Some("extreme") => Some(5),
                Some(other) => {
                    return Err(r.invalid(
                        &WRITE_HINT,
                        format!("'{other}' is not one of none, short, medium, long, extreme"),
                    ))
                }
            },
            steady: steady_spec(r)?,
            serialize_overlap: r.bool(&SERIALIZE_OVERLAP)?,
            offload: match r.choice(&IO_SUBMIT_MODE).as_deref() {
                None | Some("inline") => false,
                // The file engines time their call inside the engine; a submitter's
                // timing would not reach the job's statistics.
                Some("offload") if spec.flags.no_offload => {
                    return Err(r.invalid(
                        &IO_SUBMIT_MODE,
                        format!("offload is not supported with ioengine={}", spec.name),
                    ))
                }
                Some("offload") => true,
                Some(o) => {
                    return Err(r.invalid(
                        &IO_SUBMIT_MODE,
                        format!("'{o}' is not one of inline, offload"),
                    ))
                }
            },
            uid: r.int_as::<u32>(&UID)?,
            gid: r.int_as::<u32>(&GID)?,
            cgroup: r.text(&CGROUP).filter(|s| !s.is_empty()),
            cgroup_weight: r.int_as::<u32>(&CGROUP_WEIGHT)?,
            cgroup_nodelete: r.bool(&CGROUP_NODELETE)?,
            numa_cpu_nodes: r
                .text(&NUMA_CPU_NODES)
                .map(|v| super::numa::parse_nodes(&v).map_err(|e| r.invalid(&NUMA_CPU_NODES, e)))
                .transpose()?,
            numa_mem_policy: r
                .text(&NUMA_MEM_POLICY)
                .map(|v| super::numa::parse_policy(&v).map_err(|e| r.invalid(&NUMA_MEM_POLICY, e)))
                .transpose()?,
            gtod_cpu: match r.int_as::<u32>(&GTOD_CPU)? {
                None => None,
                Some(c) => Some(
                    cpus_present(&c.to_string(), vec![c as usize])
                        .map_err(|e| r.invalid(&GTOD_CPU, e))?[0],
                ),
            },
        })
    }
}

/// A job's steady-state settings; present only with `steadystate_duration` above zero.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadySpec {
    pub criterion: Criterion,
    /// The window's length (seconds).
    pub dur_s: u32,
    /// Sampling starts one interval after this much of the job's time.
    pub ramp_ms: u64,
    /// `steadystate_check_interval` (fio 3.35): one sample every this many ms (1000 by
    /// default), so the window holds `dur_s * 1000 / interval_ms` samples.
    pub interval_ms: u64,
}

impl SteadySpec {
    /// How many samples the window holds (at least one).
    pub fn samples(&self) -> usize {
        usize::try_from(u64::from(self.dur_s) * 1000 / self.interval_ms.max(1))
            .unwrap_or(usize::MAX)
            .max(1)
    }
}

/// `steadystate`, `steadystate_duration` and `steadystate_ramp_time`; none unless the
/// duration is at least a whole second (fio counts it in whole seconds).
fn steady_spec(r: &Reader) -> Result<Option<SteadySpec>, JobError> {
    let dur_s = r.time_us(&STEADYSTATE_DURATION)? / 1_000_000;
    if dur_s == 0 {
        return Ok(None);
    }
    let text = r.string(&STEADYSTATE);
    let criterion = crate::defs::steady::Criterion::parse(&text, r.kb_base())
        .map_err(|e| r.invalid(&STEADYSTATE, e))?;
    let interval_us = r.time_us(&STEADYSTATE_CHECK_INTERVAL)?;
    // fio 3.35 and later check the interval against the window (whole seconds, one that
    // divides the duration into more than one sample), 3.33 had none.
    if r.raw.release >= crate::defs::release::FioRelease::V3_35 {
        let dur_us = r.time_us(&STEADYSTATE_DURATION)?;
        if interval_us < 1_000_000 {
            return Err(r.invalid(
                &STEADYSTATE_CHECK_INTERVAL,
                format!("{interval_us}us: the interval must be at least 1s"),
            ));
        }
        if dur_us % interval_us != 0 || dur_us <= interval_us {
            return Err(r.invalid(
                &STEADYSTATE_CHECK_INTERVAL,
                format!(
                    "{interval_us}us: steadystate_duration ({dur_us}us) must be a multiple \
                     of the interval, more than one of it"
                ),
            ));
        }
    }
    Ok(Some(SteadySpec {
        criterion,
        dur_s: u32::try_from(dur_s).unwrap_or(u32::MAX),
        ramp_ms: r.time_us(&STEADYSTATE_RAMP_TIME)? / 1000,
        interval_ms: if r.raw.release >= crate::defs::release::FioRelease::V3_35 {
            interval_us / 1000
        } else {
            1000
        },
    }))
}

/// Checks a CPU list against the CPUs this machine has, at parse time (as fio does), so
/// `cpus_allowed=999` names the option and the limit instead of a bare EINVAL at run time.
fn cpus_present(given: &str, list: Vec<usize>) -> Result<Vec<usize>, String> {
    // SAFETY: sysconf only reads a system configuration value.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    if n > 0 {
        if let Some(&bad) = list.iter().find(|&&c| c as u64 >= n as u64) {
            return Err(format!(
                "'{given}': CPU {bad} too large (this machine has CPUs 0-{})",
                n - 1
            ));
        }
    }
    Ok(list)
}

/// Reads a CPU list such as `0-3,6`.
pub fn parse_cpu_list(v: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let a: usize = a
            .trim()
            .parse()
            .map_err(|_| format!("bad CPU '{a}' (expected N or N-M)"))?;
        let b: usize = b
            .trim()
            .parse()
            .map_err(|_| format!("bad CPU '{b}' (expected N or N-M)"))?;
        if b < a {
            return Err(format!("bad CPU range '{part}'"));
        }
        // Linux numbers CPUs below CONFIG_NR_CPUS (at most 8192): a larger one is a typo,
        // and a range up to it must not allocate a list of that length.
        if b >= 8192 {
            return Err(format!("CPU {b} too large (CPUs are numbered below 8192)"));
        }
        out.extend(a..=b);
    }
    Ok(out)
}
