//! What a job reports: grouping, percentiles, units, which latencies to measure, logs.

use crate::defs::percentiles::PercentileList;
use crate::defs::reader::Reader;
use crate::defs::OptDef;
use crate::error::JobError;
use crate::options::table::{
    BLOCK_ERROR_PERCENTILES, BWAVGTIME, CLAT_PERCENTILES, DESCRIPTION, DISABLE_BW_MEASUREMENT,
    DISABLE_CLAT, DISABLE_LAT, DISABLE_SLAT, DISK_UTIL, GROUP_REPORTING, GTOD_REDUCE, IOPSAVGTIME,
    LAT_PERCENTILES, LOG_ALTERNATE_EPOCH, LOG_ALTERNATE_EPOCH_CLOCK_ID, LOG_AVG_MSEC,
    LOG_HIST_COARSENESS, LOG_HIST_MSEC, LOG_MAX_VALUE, LOG_OFFSET, LOG_PRIO, LOG_STORE_COMPRESSED,
    LOG_UNIX_EPOCH, PERCENTILE_LIST, PER_JOB_LOGS, SIGNIFICANT_FIGURES, SLAT_PERCENTILES, STATS,
    UNIFIED_RW_REPORTING, UNIT_BASE, WRITE_BW_LOG, WRITE_HIST_LOG, WRITE_IOPS_LOG, WRITE_LAT_LOG,
};
use crate::options::table::{JOB_START_CLOCK_ID, LOG_ISSUE_TIME, LOG_WINDOW_VALUE};
use serde::{Deserialize, Serialize};

/// The resolved reporting options.
#[derive(Debug, Clone)]
pub struct ReportOpts {
    pub group_reporting: bool,
    /// What the workers measure and how results are shown.
    pub stats: StatsConfig,
    /// `disk_util`: show the `Disk stats` section for the devices under the job's files.
    pub disk_util: bool,
    /// `description`: printed in the job's result block.
    pub description: Option<String>,
    /// `write_*_log` and their settings.
    pub logs: LogConfig,
    /// `block_error_percentiles`: track trims per block and report their percentiles.
    pub block_error_percentiles: bool,
    /// `job_start_clock_id` (fio 3.36): the clock_gettime clock of JSON's `job_start`
    /// (0, CLOCK_REALTIME, unless set).
    pub job_start_clock: i32,
}

/// `log_alternate_epoch_clock_id`: the clock_gettime clock whose epoch absolute log
/// times count from (0, CLOCK_REALTIME, is the Unix epoch). Checked here, so a clock this
/// system lacks is an error before the run rather than garbage times in the logs.
fn epoch_clock(r: &Reader) -> Result<i32, JobError> {
    let id = r.num(&LOG_ALTERNATE_EPOCH_CLOCK_ID)?;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; a bad id only fails.
    let ok = i32::try_from(id).is_ok_and(|c| unsafe { libc::clock_gettime(c, &mut ts) } == 0);
    if !ok {
        return Err(r.invalid(&LOG_ALTERNATE_EPOCH_CLOCK_ID,
            format!("{id} is not a clock id of this system (0 = CLOCK_REALTIME, 1 = CLOCK_MONOTONIC, ...)"),
        ));
    }
    Ok(id as i32)
}

impl ReportOpts {
    pub fn resolve(r: &Reader) -> Result<Self, JobError> {
        let gtod_reduce = r.bool(&GTOD_REDUCE)?;
        let disable_lat = gtod_reduce || r.bool(&DISABLE_LAT)?;
        let disable_clat = gtod_reduce || r.bool(&DISABLE_CLAT)?;
        let disable_slat = gtod_reduce || r.bool(&DISABLE_SLAT)?;
        let disable_bw = gtod_reduce || r.bool(&DISABLE_BW_MEASUREMENT)?;
        let percentiles = match r.raw.value(&PERCENTILE_LIST) {
            Some(text) => {
                PercentileList::parse(text).map_err(|e| r.invalid(&PERCENTILE_LIST, e))?
            }
            None => PercentileList::default(),
        };
        let sig_figs = r.num(&SIGNIFICANT_FIGURES)?;
        if !(1..=10).contains(&sig_figs) {
            return Err(r.invalid(
                &SIGNIFICANT_FIGURES,
                format!("{sig_figs} is outside 1 to 10"),
            ));
        }
        let unified = match r.raw.value(&UNIFIED_RW_REPORTING) {
            None => Unified::None,
            Some(v) => match v.trim() {
                "none" | "0" => Unified::None,
                "mixed" | "1" => Unified::Mixed,
                "both" | "2" => Unified::Both,
                other => {
                    return Err(r.invalid(
                        &UNIFIED_RW_REPORTING,
                        format!("'{other}' is not one of none, mixed, both, 0, 1, 2"),
                    ))
                }
            },
        };
        let bits = match r.raw.value(&UNIT_BASE) {
            None | Some("0") | Some("8") => false,
            Some("1") => true,
            Some(other) => {
                return Err(r.invalid(&UNIT_BASE, format!("'{other}' is not one of 0, 8, 1")))
            }
        };
        let prefix = |def: &OptDef| {
            r.raw.value(def).map(|v| {
                if v.is_empty() || v == "1" {
                    r.raw.name.clone()
                } else {
                    v.to_string()
                }
            })
        };
        let logs = LogConfig {
            bw: prefix(&WRITE_BW_LOG),
            lat: prefix(&WRITE_LAT_LOG),
            iops: prefix(&WRITE_IOPS_LOG),
            hist: prefix(&WRITE_HIST_LOG),
            hist_ms: r.num(&LOG_HIST_MSEC)?.max(0) as u64,
            hist_coarse: r.num(&LOG_HIST_COARSENESS)?.clamp(0, 6) as u32,
            avg_ms: r.num(&LOG_AVG_MSEC)?.max(0) as u64,
            // log_window_value (fio 3.37) renames log_max_value; `both` is refused by its row.
            max_value: if r.is_set(&LOG_WINDOW_VALUE) {
                matches!(r.word(&LOG_WINDOW_VALUE).as_str(), "max" | "1")
            } else {
                r.bool(&LOG_MAX_VALUE)?
            },
            offset: r.bool(&LOG_OFFSET)?,
            prio: r.bool(&LOG_PRIO)?,
            per_job: r.bool(&PER_JOB_LOGS)?,
            unix_epoch: r.bool(&LOG_UNIX_EPOCH)? || r.bool(&LOG_ALTERNATE_EPOCH)?,
            epoch_clock: epoch_clock(r)?,
            store_compressed: r.bool(&LOG_STORE_COMPRESSED)?,
            issue_time: r.bool(&LOG_ISSUE_TIME)?,
        };
        // fio 3.38 takes the issue-time column only in latency logs with offsets.
        if logs.issue_time && (logs.lat.is_none() || !logs.offset) {
            return Err(r.invalid(
                &LOG_ISSUE_TIME,
                "1: the issue-time column needs write_lat_log and log_offset=1 (as in fio)",
            ));
        }
        if logs.issue_time && logs.store_compressed {
            return Err(r.invalid(
                &LOG_ISSUE_TIME,
                "1: with log_store_compressed this is not supported yet",
            ));
        }
        if logs.store_compressed && logs.hist.is_some() {
            return Err(r.invalid(
                &LOG_STORE_COMPRESSED,
                "compressed histogram logs (write_hist_log) are not supported yet".to_string(),
            ));
        }
        let mut bw_avg_ms = r.num(&BWAVGTIME)?.max(1) as u64;
        let mut iops_avg_ms = r.num(&IOPSAVGTIME)?.max(1) as u64;
        // Averaged bw/iops logs take their samples from the same windows, as in fio.
        if logs.avg_ms > 0 && logs.bw.is_some() {
            bw_avg_ms = bw_avg_ms.min(logs.avg_ms);
        }
        if logs.avg_ms > 0 && logs.iops.is_some() {
            iops_avg_ms = iops_avg_ms.min(logs.avg_ms);
        }
        let stats = StatsConfig {
            clat_percentiles: !disable_clat && r.bool(&CLAT_PERCENTILES)?,
            lat_percentiles: !disable_lat && r.bool(&LAT_PERCENTILES)?,
            slat_percentiles: !disable_slat && r.bool(&SLAT_PERCENTILES)?,
            percentiles,
            disable_lat,
            disable_clat,
            disable_slat,
            disable_bw,
            gtod_reduce,
            bw_avg_ms,
            iops_avg_ms,
            unified,
            sig_figs: sig_figs as u32,
            kb_base: match r.kb_base() {
                crate::defs::value::KbBase::Decimal => 1000,
                _ => 1024,
            },
            bits,
            stats: r.bool(&STATS)?,
            sched_lat: false,
        };
        Ok(ReportOpts {
            group_reporting: r.bool(&GROUP_REPORTING)?,
            stats,
            disk_util: r.bool(&DISK_UTIL)?,
            description: r.raw.value(&DESCRIPTION).map(str::to_string),
            logs,
            block_error_percentiles: r.bool(&BLOCK_ERROR_PERCENTILES)?,
            // CLOCK_REALTIME (0) unless set, as in fio (an id the kernel has no clock for
            // gives the logs' epoch clock's time, see run::worker).
            job_start_clock: r.int_as::<i32>(&JOB_START_CLOCK_ID)?.unwrap_or(0),
        })
    }
}

/// `unified_rw_reporting`: report directions apart, folded into one, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Unified {
    #[default]
    None,
    Mixed,
    Both,
}

/// What a job measures and how its numbers are shown; resolved from the job's options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatsConfig {
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub percentiles: PercentileList,
    pub disable_lat: bool,
    pub disable_clat: bool,
    pub disable_slat: bool,
    pub disable_bw: bool,
    pub gtod_reduce: bool,
    /// `bwavgtime` in ms: the width of a bandwidth sample.
    pub bw_avg_ms: u64,
    /// `iopsavgtime` in ms: the width of an IOPS sample.
    pub iops_avg_ms: u64,
    pub unified: Unified,
    /// `significant_figures`.
    pub sig_figs: u32,
    /// 1024 or 1000.
    pub kb_base: u32,
    /// `unit_base=1`: rates in bits.
    pub bits: bool,
    /// `stats=0` turns off all accounting for the job.
    pub stats: bool,
    /// `arrival=fixed|poisson` (iobench): latency from the scheduled start is kept and
    /// shown (`sched_lat`); set from the job's `exec.rate.open_loop` when it resolves.
    #[serde(default)]
    pub sched_lat: bool,
}

impl Default for StatsConfig {
    fn default() -> Self {
        StatsConfig {
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            percentiles: PercentileList::default(),
            disable_lat: false,
            disable_clat: false,
            disable_slat: false,
            disable_bw: false,
            gtod_reduce: false,
            bw_avg_ms: 500,
            iops_avg_ms: 500,
            unified: Unified::None,
            sig_figs: 4,
            kb_base: 1024,
            bits: false,
            stats: true,
            sched_lat: false,
        }
    }
}

/// The logging options of a job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LogConfig {
    /// File name prefixes; `None` when that log is off.
    pub bw: Option<String>,
    pub lat: Option<String>,
    pub iops: Option<String>,
    /// `write_hist_log` prefix.
    pub hist: Option<String>,
    /// `log_hist_msec` (0: no histogram lines).
    pub hist_ms: u64,
    /// `log_hist_coarseness`.
    pub hist_coarse: u32,
    /// `log_avg_msec`: average samples over windows of this many ms (0: every I/O).
    pub avg_ms: u64,
    /// `log_max_value`: a window logs its largest sample instead of its mean (a latency
    /// log then shows the worst I/O of each window).
    pub max_value: bool,
    pub offset: bool,
    pub prio: bool,
    /// `per_job_logs`: put the job number in the file name.
    pub per_job: bool,
    /// `log_unix_epoch` or `log_alternate_epoch`: times since the epoch of `epoch_clock`
    /// instead of since the job began.
    pub unix_epoch: bool,
    /// `log_alternate_epoch_clock_id`: the clock_gettime clock of those times (0, the
    /// default, is CLOCK_REALTIME: the Unix epoch).
    pub epoch_clock: i32,
    /// `log_store_compressed`: each write-out of a log is one zlib stream appended to
    /// `NAME.log.fz`, fio's format, which `--inflate-log` turns back into text. (Plain
    /// `log_compression` only saves fio memory; the files are the same text.)
    #[serde(default)]
    pub store_compressed: bool,
    /// `log_issue_time` (fio 3.38): a last column with each I/O's issue time, ns since
    /// the job's stats began, in the clat and slat logs (0 in the others).
    #[serde(default)]
    pub issue_time: bool,
}

impl LogConfig {
    /// True when any log is on.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }
}
