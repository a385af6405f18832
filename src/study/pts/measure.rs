//! What a PTS report reads from one run's JSON (a plain run's JSON+ file): IOPS and
//! bandwidth over read and write together, response times, and the bytes written.

use super::plan::Measure;
use crate::present::results::{self, percentile_of_bins};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One run's numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub iops: f64,
    /// Bytes per second.
    pub bw: f64,
    /// Mean response time (total latency), nanoseconds, weighted by I/O count.
    pub lat_mean_ns: f64,
    pub lat_max_ns: f64,
    /// The 99.999th percentile of the response time, nanoseconds.
    pub lat_p99999_ns: f64,
    pub written: u64,
    pub runtime_ms: u64,
}

impl Metrics {
    /// The value of `m` in the unit the report shows it in (IOPS, MB/s, ms).
    pub fn value(&self, m: Measure) -> f64 {
        match m {
            Measure::Iops => self.iops,
            Measure::Bandwidth => self.bw / 1e6,
            Measure::MeanLatency => self.lat_mean_ns / 1e6,
        }
    }
}

/// Reads one run's JSON+ file. A run that did no I/O (a stalled device, or a scaled
/// round too short to start one) measured zero, which the determination sees.
pub fn read(path: &Path) -> Result<Metrics, String> {
    let file = results::read(path)?;
    if file.jobs.is_empty() {
        return Err(format!("{}: no job in the result", path.display()));
    }
    let dirs = results::totals(&file);
    let ios: u64 = dirs.iter().map(|d| d.total_ios).sum();
    let mut bins: std::collections::BTreeMap<u64, u64> = Default::default();
    for d in &dirs {
        for &(v, c) in &d.bins {
            *bins.entry(v).or_default() += c;
        }
    }
    let bins: Vec<(u64, u64)> = bins.into_iter().collect();
    Ok(Metrics {
        iops: dirs.iter().map(|d| d.iops).sum(),
        bw: dirs.iter().map(|d| d.bw_bytes).sum(),
        lat_mean_ns: dirs
            .iter()
            .map(|d| d.lat_mean_ns * d.total_ios as f64)
            .sum::<f64>()
            / ios.max(1) as f64,
        lat_max_ns: dirs.iter().map(|d| d.lat_max_ns).fold(0.0, f64::max),
        lat_p99999_ns: percentile_of_bins(&bins, 99.999),
        written: dirs
            .iter()
            .filter(|d| d.dir == "write")
            .map(|d| d.io_bytes)
            .sum(),
        runtime_ms: dirs.iter().map(|d| d.runtime_ms).max().unwrap_or(0),
    })
}
