//! `steadystate=`: what is judged and its limit (`iops:2%`, `bw_slope:10m`, `lat:20000`).

use super::value::KbBase;
use serde::{Deserialize, Serialize};

/// The measure a steady-state window holds, one sample per interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Measure {
    /// I/Os per second.
    Iops,
    /// Bytes per second.
    Bw,
    /// The mean completion latency of the interval's I/Os, in nanoseconds (fio 3.42).
    Lat,
}

impl Measure {
    /// The word fio's reports use for it (`iops`, `bw`, `lat`).
    pub fn word(self) -> &'static str {
        match self {
            Measure::Iops => "iops",
            Measure::Bw => "bw",
            Measure::Lat => "lat",
        }
    }
}

/// What is judged, and how, as `steadystate=iops:2%` or `bw_slope:10m` says.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    pub measure: Measure,
    /// The slope of the least-squares line through the window (else the largest distance
    /// of a sample from the window's mean).
    pub slope: bool,
    /// The limit is a percentage of the window's mean.
    pub pct: bool,
    /// The limit: a percentage, IOPS, bytes per second, or for latency nanoseconds.
    pub limit: f64,
}

impl Criterion {
    /// Reads `steadystate`'s value: `iops`, `iops_slope`, `bw`, `bw_slope`, `lat` or
    /// `lat_slope`, a colon and the limit (`2%`; `500` IOPS; a bandwidth in bytes with size
    /// suffixes; a latency in nanoseconds, see [`lat_limit`]).
    pub fn parse(v: &str, kb: KbBase) -> Result<Criterion, String> {
        let (word, limit) = v.split_once(':').ok_or_else(|| {
            "expected MEASURE:LIMIT (iops, iops_slope, bw, bw_slope, lat or lat_slope, then \
             a limit such as 2% or 10m)"
                .to_string()
        })?;
        let (measure, slope) = match word.trim() {
            "iops" => (Measure::Iops, false),
            "iops_slope" => (Measure::Iops, true),
            "bw" => (Measure::Bw, false),
            "bw_slope" => (Measure::Bw, true),
            "lat" => (Measure::Lat, false),
            "lat_slope" => (Measure::Lat, true),
            w => {
                return Err(format!(
                    "'{w}' is not one of: iops, iops_slope, bw, bw_slope, lat, lat_slope"
                ))
            }
        };
        let limit = limit.trim();
        let bad = || {
            format!(
                "'{limit}' is not a limit (a number or a percentage; for bw a size, for lat \
                 a latency)"
            )
        };
        let (pct, limit) = match limit.strip_suffix('%') {
            Some(n) => (true, n.trim().parse::<f64>().map_err(|_| bad())?),
            None => match measure {
                Measure::Iops => (false, limit.parse::<f64>().map_err(|_| bad())?),
                Measure::Bw => (
                    false,
                    super::value::parse_size(limit, kb).map_err(|_| bad())? as f64,
                ),
                Measure::Lat => (
                    false,
                    lat_limit(limit).map_err(|e| format!("{}: {e}", bad()))?,
                ),
            },
        };
        if !limit.is_finite() {
            return Err(bad());
        }
        Ok(Criterion {
            measure,
            slope,
            pct,
            limit,
        })
    }

    /// The criterion as fio's JSON names it: `iops:2.000000%`, `bw_slope:1048576.000000`.
    pub fn label(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            self.measure.word(),
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.pct { "%" } else { "" }
        )
    }
}

/// An absolute latency limit, as fio 3.42 reads it: the number is nanoseconds (the
/// samples' unit), and a time unit multiplies it as fio's time options do, which count in
/// microseconds. So `lat:20000` and `lat:20000ns` are 20 µs, but `lat:20us` is 20 ns and
/// `lat:1ms` is 1000 ns (1 µs), not a millisecond: fio's own reading, kept so that a job
/// stops where fio's stops (docs/compatibility.md).
pub fn lat_limit(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    // fio's time units do not know `ns`: it multiplies by one, as a bare number.
    let body = lower
        .strip_suffix("nsec")
        .or_else(|| lower.strip_suffix("ns"))
        .unwrap_or(&lower);
    let n = super::value::parse_time_us(body, super::optdef::TimeUnit::Usec)?;
    Ok(n as f64)
}
