//! How a job issues its I/O: engine, queue depth, workers, timing and grouping.

use super::reader::Reader;
use crate::error::JobError;
use crate::options::table::TimeUnit;

/// The resolved execution options.
#[derive(Debug, Clone)]
pub struct ExecOpts {
    pub ioengine: String,
    pub iodepth: u32,
    pub direct: bool,
    pub numjobs: u32,
    pub runtime_us: u64,
    pub time_based: bool,
    pub ramp_time_us: u64,
    pub stonewall: bool,
    pub new_group: bool,
}

impl ExecOpts {
    pub fn resolve(r: &Reader) -> Result<Self, JobError> {
        let direct = if r.is_set("buffered") && !r.is_set("direct") {
            !r.bool("buffered")?
        } else {
            r.bool("direct")?
        };
        Ok(ExecOpts {
            ioengine: r.text("ioengine").unwrap_or_else(|| "psync".into()),
            iodepth: r.int("iodepth")?.unwrap_or(1) as u32,
            direct,
            numjobs: r.int("numjobs")?.unwrap_or(1) as u32,
            runtime_us: r.time_us("runtime", TimeUnit::Sec)?,
            time_based: r.bool("time_based")?,
            ramp_time_us: r.time_us("ramp_time", TimeUnit::Sec)?,
            stonewall: r.bool("stonewall")?,
            new_group: r.bool("new_group")?,
        })
    }
}
