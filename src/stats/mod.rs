//! Statistics: per-job counters and latency summaries, merged into groups for reporting.

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
    pub clat: LatStat,
    pub runtime_ms: u64,
}

/// Everything measured for one job (or a merged group).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobStats {
    pub name: String,
    pub groupid: u32,
    pub jobs: u32,
    pub error: i32,
    pub pid: u32,
    pub dir: [DirStats; 3],
}
