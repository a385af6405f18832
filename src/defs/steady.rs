//! `steadystate=`: what is judged and its limit (`iops:2%`, `bw_slope:10m`).

use super::value::KbBase;
use serde::{Deserialize, Serialize};

/// What is judged, and how, as `steadystate=iops:2%` or `bw_slope:10m` says.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    /// IOPS samples (else bandwidth samples, in bytes per second).
    pub iops: bool,
    /// The slope of the least-squares line through the window (else the largest distance
    /// of a sample from the window's mean).
    pub slope: bool,
    /// The limit is a percentage of the window's mean.
    pub pct: bool,
    pub limit: f64,
}

impl Criterion {
    /// Reads `steadystate`'s value: `iops`, `iops_slope`, `bw` or `bw_slope`, a colon and
    /// the limit (`2%`, `500` IOPS, or a bandwidth in bytes with size suffixes).
    pub fn parse(v: &str, kb: KbBase) -> Result<Criterion, String> {
        let (word, limit) = v.split_once(':').ok_or_else(|| {
            "expected MEASURE:LIMIT (iops, iops_slope, bw or bw_slope, then a limit such as 2% or 10m)"
                .to_string()
        })?;
        let (iops, slope) = match word.trim() {
            "iops" => (true, false),
            "iops_slope" => (true, true),
            "bw" => (false, false),
            "bw_slope" => (false, true),
            // fio 3.42's criterion on the mean completion latency of each interval.
            w @ ("lat" | "lat_slope") => {
                return Err(format!(
                    "'{w}' (fio 3.42's latency criterion) is not supported yet; iops, \
                     iops_slope, bw and bw_slope are"
                ))
            }
            w => {
                return Err(format!(
                    "'{w}' is not one of: iops, iops_slope, bw, bw_slope"
                ))
            }
        };
        let limit = limit.trim();
        let bad = || format!("'{limit}' is not a limit (a number, a percentage, or for bw a size)");
        let (pct, limit) = match limit.strip_suffix('%') {
            Some(n) => (true, n.trim().parse::<f64>().map_err(|_| bad())?),
            None if iops => (false, limit.parse::<f64>().map_err(|_| bad())?),
            None => (
                false,
                super::value::parse_size(limit, kb).map_err(|_| bad())? as f64,
            ),
        };
        if !limit.is_finite() {
            return Err(bad());
        }
        Ok(Criterion {
            iops,
            slope,
            pct,
            limit,
        })
    }

    /// The criterion as fio's JSON names it: `iops:2.000000%`, `bw_slope:1048576.000000`.
    pub fn label(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            if self.iops { "iops" } else { "bw" },
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.pct { "%" } else { "" }
        )
    }
}
