//! How long a run of a job should take, from the job's own limits: `startdelay`,
//! `ramp_time` and `runtime` for a time-based job; for a size-bound one its bytes
//! (`size` or `io_size`, `loops`, `number_ios` × the mean block size, its clones) at its
//! `rate`/`rate_iops` when it has one, else at a speed measured (a short calibration run,
//! or the runs of a study done so far), never past its `runtime`. Jobs in one phase run
//! together (the longest counts), phases one after the other (see `run::groups`).

use crate::defs::ddir::Pattern;
use crate::defs::value::SizeSpec;
use crate::job::Job;
use crate::present::results::DirResult;

/// The time a run takes beyond its jobs' own: setting up the jobs, opening the files,
/// the report (measured at 20-40 ms on the project's host for a null job).
pub const RUN_OVERHEAD_S: f64 = 0.03;

/// What bounds one job's run (all its clones).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// Its own limits say how long: these seconds (startdelay and ramp included).
    Time(f64),
    /// It moves `bytes` (all clones together) as fast as the target allows, after
    /// `fixed_s` (startdelay, ramp), and never longer than `cap_s` (its runtime).
    Bytes {
        fixed_s: f64,
        bytes: f64,
        cap_s: Option<f64>,
    },
    /// It runs until stopped (time_based without a runtime) or its bytes are not known
    /// (a size in percent or left to the file).
    Unknown,
}

/// The share of a job's bytes in each direction (read, write, trim).
fn shares(j: &Job) -> [f64; 3] {
    let w = &j.workload;
    match w.pattern {
        Pattern::Trim | Pattern::RandTrim => [0.0, 0.0, 1.0],
        Pattern::TrimWrite | Pattern::RandTrimWrite => [0.0, 0.5, 0.5],
        p if p.reads() && p.writes() => {
            let r = f64::from(w.rwmix_read.min(100)) / 100.0;
            [r, 1.0 - r, 0.0]
        }
        p if p.writes() => [0.0, 1.0, 0.0],
        _ => [1.0, 0.0, 0.0],
    }
}

/// The mean block size of direction `d` (bssplit's weights, else the middle of bsrange).
fn mean_bs(j: &Job, d: usize) -> f64 {
    let w = &j.workload;
    let split = &w.bssplit[d];
    let weight: u64 = split.iter().map(|&(_, p)| u64::from(p)).sum();
    if weight > 0 {
        split
            .iter()
            .map(|&(s, p)| s as f64 * f64::from(p))
            .sum::<f64>()
            / weight as f64
    } else {
        let (lo, hi) = w.bs[d];
        (lo + hi.max(lo)) as f64 / 2.0
    }
}

/// The bytes one clone of a size-bound job moves: its io_size (or size) times its loops,
/// and no more than number_ios I/Os of its mean block size. None when the size is a
/// percentage or the file's own.
pub fn clone_bytes(j: &Job) -> Option<f64> {
    let w = &j.workload;
    let size = match w.io_size.as_ref().or(w.size.as_ref())? {
        SizeSpec::Bytes(b) => *b as f64,
        SizeSpec::Percent(_) => return None,
    };
    let mut bytes = size * f64::from(w.loops.max(1));
    if w.number_ios > 0 {
        let sh = shares(j);
        let bs: f64 = (0..3).map(|d| sh[d] * mean_bs(j, d)).sum();
        bytes = bytes.min(w.number_ios as f64 * bs);
    }
    Some(bytes)
}

/// What bounds job `j`'s run.
pub fn bound(j: &Job) -> Bound {
    let e = &j.exec;
    let fixed_s = (e.startdelay_us.hi + e.ramp_time_us) as f64 / 1e6;
    let runtime = (e.runtime_us > 0).then(|| e.runtime_us as f64 / 1e6);
    if e.time_based {
        return runtime.map_or(Bound::Unknown, |r| Bound::Time(fixed_s + r));
    }
    let Some(bytes) = clone_bytes(j) else {
        // Its bytes unknown, a runtime still ends it (perhaps earlier): not a bound to give.
        return Bound::Unknown;
    };
    // A rated direction paces the job: the slowest one sets its time (rwmix keeps the
    // directions interleaved, so an unrated one waits for the rated one).
    let sh = shares(j);
    let paced = (0..3)
        .filter(|&d| sh[d] > 0.0)
        .filter_map(|d| {
            let bps = match (e.rate.bps[d], e.rate.iops[d]) {
                (b, _) if b > 0 => b as f64,
                (_, i) if i > 0 => i as f64 * mean_bs(j, d),
                _ => return None,
            };
            Some(bytes * sh[d] / bps)
        })
        .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))));
    match paced {
        Some(t) => Bound::Time(fixed_s + runtime.map_or(t, |r| t.min(r))),
        None => Bound::Bytes {
            fixed_s,
            bytes: bytes * f64::from(e.numjobs.max(1)),
            cap_s: runtime,
        },
    }
}

/// The bytes of `jobs`' size-bound (unpaced) jobs: what a calibration run measures the
/// speed of. 0 when every job's time is known from its limits; None when one is unknown.
pub fn unpaced_bytes(jobs: &[Job]) -> Option<f64> {
    let mut total = 0.0;
    for j in jobs {
        match bound(j) {
            Bound::Time(_) => {}
            Bound::Bytes { bytes, .. } => total += bytes,
            Bound::Unknown => return None,
        }
    }
    Some(total)
}

/// The seconds a run of `jobs` should take, its own overhead included: from the jobs'
/// limits alone, with `speed` (bytes per second, all of a phase's size-bound jobs
/// together) for the size-bound ones. None when a job's time is unknown, or a job is
/// size-bound and no speed is given.
pub fn run_s(jobs: &[Job], speed: Option<f64>) -> Option<f64> {
    let mut total = RUN_OVERHEAD_S;
    for phase in crate::run::groups::phases(jobs) {
        let mut longest: f64 = 0.0;
        // The phase's size-bound jobs share the speed: their bytes add up.
        let mut bytes = 0.0;
        let mut fixed: f64 = 0.0;
        let mut cap: Option<f64> = None;
        for &ji in &phase {
            match bound(&jobs[ji]) {
                Bound::Time(s) => longest = longest.max(s),
                Bound::Bytes {
                    fixed_s,
                    bytes: b,
                    cap_s,
                } => {
                    bytes += b;
                    fixed = fixed.max(fixed_s);
                    cap = match (cap, cap_s) {
                        (None, c) => c,
                        (Some(a), Some(c)) => Some(a.max(c)),
                        (Some(a), None) => Some(a),
                    };
                }
                Bound::Unknown => return None,
            }
        }
        if bytes > 0.0 {
            let s = bytes / speed.filter(|&v| v > 0.0)?;
            longest = longest.max(fixed + cap.map_or(s, |c| s.min(c)));
        }
        total += longest;
    }
    Some(total)
}

/// The speed (bytes per second) a run's results show: all its bytes over its longest
/// direction's runtime. None when it moved nothing or took no time.
pub fn speed_of(dirs: &[DirResult]) -> Option<f64> {
    let bytes: u64 = dirs.iter().map(|d| d.io_bytes).sum();
    let ms = dirs.iter().map(|d| d.runtime_ms).max()?;
    (bytes > 0 && ms > 0).then(|| bytes as f64 * 1000.0 / ms as f64)
}

/// Speeds measured over a study's runs, to time the size-bound runs not yet done: each
/// point's own once one of its runs ended, else the mean speed of all runs so far.
#[derive(Debug, Default)]
pub struct Measured {
    /// Per point: the sum of its runs' seconds, and their count.
    own: Vec<(f64, usize)>,
    bytes: f64,
    seconds: f64,
}

impl Measured {
    pub fn new(points: usize) -> Measured {
        Measured {
            own: vec![(0.0, 0); points],
            ..Default::default()
        }
    }

    /// Point `k`'s run took `elapsed_s` and moved what `dirs` say.
    pub fn add(&mut self, k: usize, elapsed_s: f64, dirs: &[DirResult]) {
        if elapsed_s > 0.0 {
            self.own[k].0 += elapsed_s;
            self.own[k].1 += 1;
        }
        if let Some(s) = speed_of(dirs) {
            let ms = dirs.iter().map(|d| d.runtime_ms).max().unwrap_or(0);
            self.bytes += s * ms as f64 / 1000.0;
            self.seconds += ms as f64 / 1000.0;
        }
    }

    /// Point `k`'s next run (its jobs `jobs`): from its limits, else its own runs, else
    /// the speed of the runs so far.
    pub fn next_s(&self, k: usize, jobs: &[Job], limits: Option<f64>) -> Option<f64> {
        if limits.is_some() {
            return limits;
        }
        let (s, n) = self.own[k];
        if n > 0 {
            return Some(s / n as f64);
        }
        run_s(
            jobs,
            (self.seconds > 0.0).then(|| self.bytes / self.seconds),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(args: &[&str]) -> Vec<Job> {
        let mut v = vec!["--name=t".to_string()];
        v.extend(args.iter().map(|s| s.to_string()));
        let inv = crate::cli::parse_args(&v).unwrap();
        crate::session::prepare(&inv).unwrap().jobs
    }

    #[test]
    fn time_based_rate_bound_and_size_bound() {
        let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-6);
        let o = RUN_OVERHEAD_S;
        let j = job(&[
            "--ioengine=null",
            "--time_based",
            "--runtime=3",
            "--ramp_time=1",
            "--startdelay=2",
        ]);
        assert!(near(run_s(&j, None), 6.0 + o));
        // 8 MiB at 2 MiB/s; number_ios cuts it to 1024 4 KiB I/Os (4 MiB); loops double it.
        let j = job(&["--ioengine=null", "--size=8m", "--rate=2m"]);
        assert!(near(run_s(&j, None), 4.0 + o));
        let j = job(&[
            "--ioengine=null",
            "--size=8m",
            "--rate_iops=512",
            "--number_ios=1024",
        ]);
        assert!(near(run_s(&j, None), 2.0 + o));
        let j = job(&["--ioengine=null", "--size=8m", "--rate=2m", "--loops=2"]);
        assert!(near(run_s(&j, None), 8.0 + o));
        // The runtime ends a paced job early.
        let j = job(&["--ioengine=null", "--size=8m", "--rate=2m", "--runtime=1"]);
        assert!(near(run_s(&j, None), 1.0 + o));
        // A mixed job at a read rate only: its reads (70 % of 10 MiB) at 7 MiB/s.
        let j = job(&[
            "--ioengine=null",
            "--rw=rw",
            "--rwmixread=70",
            "--size=10m",
            "--rate=7m,",
        ]);
        assert!(near(run_s(&j, None), 1.0 + o));
        // Size-bound and unpaced: a speed is needed; two clones move twice the bytes.
        let j = job(&["--ioengine=null", "--size=8m", "--numjobs=2"]);
        assert_eq!(run_s(&j, None), None);
        assert_eq!(unpaced_bytes(&j), Some(16.0 * 1048576.0));
        assert!(near(run_s(&j, Some(4.0 * 1048576.0)), 4.0 + o));
        let j = job(&["--ioengine=null", "--size=8m", "--runtime=1"]);
        assert!(near(run_s(&j, Some(1048576.0)), 1.0 + o));
        // Forever, or bytes unknown.
        assert_eq!(
            run_s(&job(&["--ioengine=null", "--time_based"]), None),
            None
        );
        assert_eq!(
            run_s(&job(&["--ioengine=null", "--size=50%"]), Some(1.0)),
            None
        );
        // Phases add up: a stonewalled second job after the first.
        let inv = crate::cli::parse_args(
            &[
                "--name=a",
                "--ioengine=null",
                "--size=4m",
                "--rate=4m",
                "--name=b",
                "--stonewall",
                "--ioengine=null",
                "--size=4m",
                "--rate=2m",
            ]
            .map(String::from),
        )
        .unwrap();
        let j = crate::session::prepare(&inv).unwrap().jobs;
        assert!(near(run_s(&j, None), 3.0 + o));
    }
}
