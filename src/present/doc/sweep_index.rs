//! A sweep's `index.json` (written by study/sweep.rs, read by `iobench report`) and its
//! plan, which the sweep also keeps alone as `sweep.json`.

pub use super::Ordered;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of index.json's layout: an added key does not raise it.
pub const SCHEMA_VERSION: u32 = 1;

/// The plan (the job's arguments and the axes) and one entry per point done: its option
/// values, its JSON+ file, its status and its totals per direction.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(title = "iobench sweep's index.json"))]
pub struct SweepIndex {
    /// The layout's version (1).
    #[cfg_attr(test, schemars(extend("const" = 1)))]
    pub schema_version: u32,
    /// The iobench that wrote it (`iobench-VERSION`).
    pub iobench: String,
    pub sweep: Plan,
    /// Where and how the sweep ran (`--env`'s document; the first point's jobs).
    #[cfg_attr(test, schemars(schema_with = "super::env_schema"))]
    pub iobench_env: Value,
    /// The coefficient of variation (σ / mean) above which a point's repeats are called
    /// noisy.
    pub noise_cv: f64,
    pub points: Vec<PointEntry>,
}

/// The sweep's identity: the job's arguments and the axes (`sweep.json` holds it alone).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Plan {
    /// The job's arguments, as given after the sweep's own.
    #[serde(default)]
    pub args: Vec<String>,
    pub axes: Vec<AxisEntry>,
    /// The runs per point; absent for one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<usize>,
}

/// One axis: an option and its values, with the options zipped to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AxisEntry {
    pub name: String,
    pub values: Vec<String>,
    /// Options that take their i-th value together with the axis's i-th value.
    #[serde(default)]
    pub zip: Vec<Zipped>,
}

/// An option zipped to an axis (`--zip`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Zipped {
    pub name: String,
    pub values: Vec<String>,
}

/// Whether a point or a run failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
}

/// Why a point or a run failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Failure {
    /// The error number of the first job that failed (fio's `error`); null when no job's
    /// error number says why.
    pub error: Option<i32>,
    /// What went wrong, in words.
    pub reason: String,
}

/// One point: its settings, its runs and their summary per direction.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PointEntry {
    /// 1-based.
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub point: usize,
    /// The axes' options and their values at this point.
    pub params: Ordered<String>,
    /// The JSON+ file of its first run; null when there is none.
    pub file: Option<String>,
    pub status: Status,
    /// The exit status of its failed run, else of its first; null when the run did not
    /// exit (a signal).
    pub exit_code: Option<u8>,
    /// Seconds, over all its runs.
    pub elapsed_s: f64,
    /// The runs the sweep makes of every point.
    pub repeats: usize,
    pub runs: Vec<RunEntry>,
    pub failed: bool,
    #[serde(flatten)]
    pub failure: Option<Failure>,
    #[serde(flatten)]
    pub rows: Rows<Summary>,
    /// Warnings on the repeats' spread (a metric varying by more than `noise_cv`, an
    /// outlying repeat).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noise: Vec<String>,
}

/// One run (one repeat) of a point.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RunEntry {
    /// 1-based.
    pub repeat: usize,
    /// Its JSON+ file.
    pub file: String,
    pub status: Status,
    /// Null when the run did not exit (a signal).
    pub exit_code: Option<u8>,
    /// Seconds.
    pub elapsed_s: f64,
    pub failed: bool,
    #[serde(flatten)]
    pub failure: Option<Failure>,
    #[serde(flatten)]
    pub rows: Rows<Totals>,
}

/// A result's rows: its directions, then the http engine's classes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Rows<T> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim: Option<T>,
    /// Added within schema_version 1 (an added key does not raise it): present only when
    /// the job ran the http engine with its iobench-only options; each class of its
    /// requests (all, GET, PUT, ..., a size class, an endpoint; NAME ttfb with time to
    /// first byte as its latency; JOB NAME when several jobs have classes) with a
    /// direction's keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iobench_http: Option<Ordered<T>>,
}

impl<T> Default for Rows<T> {
    fn default() -> Self {
        Rows {
            read: None,
            write: None,
            trim: None,
            iobench_http: None,
        }
    }
}

impl<T> Rows<T> {
    /// Puts a row in its place: a direction under its name, an http class (`http GET`)
    /// under `iobench_http` by its own name (`GET`).
    pub fn put(&mut self, row: &str, value: T) {
        match (row.strip_prefix("http "), row) {
            (Some(class), _) => self
                .iobench_http
                .get_or_insert_with(Ordered::default)
                .insert(class.to_string(), value),
            (None, "read") => self.read = Some(value),
            (None, "write") => self.write = Some(value),
            (None, "trim") => self.trim = Some(value),
            (None, _) => {}
        }
    }
}

/// The latency the percentiles are of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum PercentilesOf {
    /// Completion latency (fio's default).
    Clat,
    /// Total latency (lat_percentiles).
    Lat,
}

/// One direction of a result, summed over its jobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Totals {
    #[cfg_attr(test, schemars(range(min = 0)))]
    pub iops: f64,
    /// Bytes per second.
    #[cfg_attr(test, schemars(range(min = 0)))]
    pub bw_bytes: f64,
    pub io_bytes: u64,
    pub total_ios: u64,
    pub runtime_ms: u64,
    /// Mean total latency, ns.
    #[cfg_attr(test, schemars(range(min = 0)))]
    pub lat_mean_ns: f64,
    #[cfg_attr(test, schemars(range(min = 0)))]
    pub lat_min_ns: f64,
    #[cfg_attr(test, schemars(range(min = 0)))]
    pub lat_max_ns: f64,
    pub percentiles_of: PercentilesOf,
    /// Percentiles, ns (0 when not reported).
    #[cfg_attr(test, schemars(range(min = 0)))]
    pub p50_ns: f64,
    #[cfg_attr(test, schemars(range(min = 0)))]
    pub p90_ns: f64,
    #[cfg_attr(test, schemars(range(min = 0)))]
    pub p99_ns: f64,
    #[cfg_attr(test, schemars(range(min = 0)))]
    pub p99_9_ns: f64,
}

/// A direction of a point: the means of its repeats (the keys a run has), how many
/// were averaged, and the spread per metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Summary {
    #[serde(flatten)]
    pub mean: Totals,
    /// The repeats averaged.
    pub n: usize,
    pub spread: Spread,
}

/// The repeats' spread of each metric a point is summarised by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Spread {
    pub iops: Stat,
    pub bw_bytes: Stat,
    pub lat_mean_ns: Stat,
    pub p50_ns: Stat,
    pub p90_ns: Stat,
    pub p99_ns: Stat,
    pub p99_9_ns: Stat,
}

/// One metric over a point's repeats.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Stat {
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 with fewer than two repeats.
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    /// σ / mean (0 when the mean is 0).
    pub cv: f64,
}
