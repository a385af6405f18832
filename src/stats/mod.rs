//! Statistics: per-job counters and latency summaries, recorded by workers through a small
//! API (`record_*`) and merged into groups for reporting.

use crate::job::Ddir;
use serde::{Deserialize, Serialize};

/// Latency summary in nanoseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LatStat {
    pub samples: u64,
    pub min: u64,
    pub max: u64,
    pub sum: f64,
    pub sum_sq: f64,
}

impl LatStat {
    pub fn add(&mut self, ns: u64) {
        if self.samples == 0 || ns < self.min {
            self.min = ns;
        }
        self.max = self.max.max(ns);
        self.samples += 1;
        let v = ns as f64;
        self.sum += v;
        self.sum_sq += v * v;
    }
    pub fn mean(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.sum / self.samples as f64
        }
    }
}

/// One direction's counters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    pub slat: LatStat,
    pub clat: LatStat,
    pub lat: LatStat,
    pub runtime_ms: u64,
}

/// Everything measured for one job clone (or, after merging, a group).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobStats {
    /// Index of the job (section) in the resolved job list.
    pub job_index: usize,
    pub name: String,
    pub groupid: u32,
    pub jobs: u32,
    pub error: i32,
    pub pid: u32,
    pub dir: [DirStats; 3],
}

impl JobStats {
    /// One completed I/O. `now_ns` is the time since the job's statistics started, so that
    /// bandwidth and IOPS samples can be cut into windows.
    pub fn record_io(&mut self, ddir: Ddir, bytes: u64, slat_ns: u64, clat_ns: u64, now_ns: u64) {
        let _ = now_ns;
        let d = &mut self.dir[ddir as usize];
        d.ios += 1;
        d.bytes += bytes;
        d.slat.add(slat_ns);
        d.clat.add(clat_ns);
        d.lat.add(slat_ns + clat_ns);
    }

    /// The run time of direction `ddir` in milliseconds, set when the job ends.
    pub fn set_runtime_ms(&mut self, ddir: Ddir, ms: u64) {
        self.dir[ddir as usize].runtime_ms = ms;
    }
}

/// What a whole run produced: one JobStats per job clone, in start order, and whether a
/// signal cut it short.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunOutcome {
    pub results: Vec<JobStats>,
    pub signal: Option<i32>,
}
