//! Per-job sample logs: `write_bw_log`, `write_lat_log` (lat, slat, clat files),
//! `write_iops_log`, with `log_avg_msec`, `log_offset`, `log_prio`, `per_job_logs` and
//! `log_unix_epoch`. Lines are fio's: `time, value, ddir, bs[, offset], prio`.
//!
//! Samples are kept in memory while the job runs (amortised pushes, no syscalls) and written
//! when the run's report is made, as fio does for uncompressed logs.

use super::iostat::IoStat;
use serde::{Deserialize, Serialize};
use std::io::Write;

/// The logging options of a job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LogConfig {
    /// File name prefixes; `None` when that log is off.
    pub bw: Option<String>,
    pub lat: Option<String>,
    pub iops: Option<String>,
    /// `log_avg_msec`: average samples over windows of this many ms (0: every I/O).
    pub avg_ms: u64,
    pub offset: bool,
    pub prio: bool,
    /// `per_job_logs`: put the job number in the file name.
    pub per_job: bool,
    /// `log_unix_epoch`: times since the Unix epoch instead of since the job began.
    pub unix_epoch: bool,
}

impl LogConfig {
    /// True when any log is on.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some()
    }
}

/// One logged sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub time_ms: u64,
    pub value: u64,
    pub ddir: u8,
    pub bs: u64,
    pub offset: u64,
}

/// One log's samples and, with `log_avg_msec`, its averaging windows.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SampleLog {
    pub samples: Vec<Sample>,
    window: [IoStat; 3],
    window_start: [Option<u64>; 3],
}

impl SampleLog {
    fn with_capacity(n: usize) -> Self {
        SampleLog {
            samples: Vec::with_capacity(n),
            ..Default::default()
        }
    }

    /// Adds a sample, or folds it into the current window when averaging.
    pub fn add(&mut self, avg_ms: u64, s: Sample) {
        if avg_ms == 0 {
            self.samples.push(s);
            return;
        }
        let d = s.ddir as usize % 3;
        let start = *self.window_start[d].get_or_insert(s.time_ms);
        self.window[d].add(s.value);
        if s.time_ms >= start + avg_ms {
            self.close(d, s.time_ms);
            self.window_start[d] = Some(s.time_ms - s.time_ms % avg_ms);
        }
    }

    fn close(&mut self, d: usize, time_ms: u64) {
        if self.window[d].samples > 0 {
            self.samples.push(Sample {
                time_ms,
                value: (self.window[d].mean + 0.5) as u64,
                ddir: d as u8,
                bs: 0,
                offset: 0,
            });
        }
        self.window[d] = IoStat::default();
    }

    /// Flushes partly filled windows at the end of the job.
    pub fn finish(&mut self, avg_ms: u64, time_ms: u64) {
        if avg_ms > 0 {
            for d in 0..3 {
                self.close(d, time_ms);
            }
        }
    }
}

/// All the logs of one job clone.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobLogs {
    pub cfg: LogConfig,
    pub bw: Option<SampleLog>,
    pub iops: Option<SampleLog>,
    pub lat: Option<SampleLog>,
    pub slat: Option<SampleLog>,
    pub clat: Option<SampleLog>,
    /// ms since the Unix epoch when the job's clock started (for `log_unix_epoch`).
    pub epoch_ms: u64,
}

const RESERVE: usize = 1024;

impl JobLogs {
    /// Logs for a job with these options (the latency logs the job measures).
    pub fn new(cfg: LogConfig, disable_lat: bool, disable_slat: bool, disable_clat: bool) -> Self {
        let mk = |on: bool| on.then(|| SampleLog::with_capacity(RESERVE));
        let epoch_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        JobLogs {
            bw: mk(cfg.bw.is_some()),
            iops: mk(cfg.iops.is_some()),
            lat: mk(cfg.lat.is_some() && !disable_lat),
            slat: mk(cfg.lat.is_some() && !disable_slat),
            clat: mk(cfg.lat.is_some() && !disable_clat),
            cfg,
            epoch_ms,
        }
    }

    /// One completed I/O, for the per-I/O logs (and the averaged latency logs).
    #[inline]
    pub fn io(&mut self, ddir: u8, bytes: u64, offset: u64, slat: u64, clat: u64, now_ms: u64) {
        let avg = self.cfg.avg_ms;
        let s = |value| Sample {
            time_ms: now_ms,
            value,
            ddir,
            bs: bytes,
            offset,
        };
        if let Some(l) = &mut self.lat {
            l.add(avg, s(slat + clat));
        }
        if slat != 0 {
            if let Some(l) = &mut self.slat {
                l.add(avg, s(slat));
            }
        }
        if let Some(l) = &mut self.clat {
            l.add(avg, s(clat));
        }
        if avg == 0 {
            if let Some(l) = &mut self.bw {
                let rate = (bytes * 1_000_000).checked_div(clat).unwrap_or(0);
                l.add(0, s(rate));
            }
            if let Some(l) = &mut self.iops {
                l.add(0, s(1));
            }
        }
    }

    /// A bandwidth (KiB/s) and IOPS window sample, for the averaged bw/iops logs.
    pub fn window(
        &mut self,
        ddir: u8,
        bw_kib: Option<u64>,
        iops: Option<u64>,
        bs: u64,
        now_ms: u64,
    ) {
        if self.cfg.avg_ms == 0 {
            return;
        }
        let s = |value| Sample {
            time_ms: now_ms,
            value,
            ddir,
            bs,
            offset: 0,
        };
        if let (Some(l), Some(v)) = (&mut self.bw, bw_kib) {
            l.samples.push(s(v));
        }
        if let (Some(l), Some(v)) = (&mut self.iops, iops) {
            l.samples.push(s(v));
        }
    }

    /// The file name of log `kind` for job number `num`, as fio names it.
    pub fn file_name(&self, prefix: &str, kind: &str, num: usize) -> String {
        if self.cfg.per_job {
            format!("{prefix}_{kind}.{num}.log")
        } else {
            format!("{prefix}_{kind}.log")
        }
    }

    /// Writes every log of this job (job number `num`, 1-based), appending when the file is
    /// shared (`per_job_logs=0`).
    pub fn write(&mut self, num: usize, end_ms: u64) -> std::io::Result<()> {
        let avg = self.cfg.avg_ms;
        let base = if self.cfg.unix_epoch {
            self.epoch_ms
        } else {
            0
        };
        let cfg = self.cfg.clone();
        let targets = [
            (cfg.bw.as_deref(), "bw", self.bw.take()),
            (cfg.lat.as_deref(), "lat", self.lat.take()),
            (cfg.lat.as_deref(), "slat", self.slat.take()),
            (cfg.lat.as_deref(), "clat", self.clat.take()),
            (cfg.iops.as_deref(), "iops", self.iops.take()),
        ];
        for (prefix, kind, log) in targets {
            let (Some(prefix), Some(mut log)) = (prefix, log) else {
                continue;
            };
            if kind != "bw" && kind != "iops" {
                log.finish(avg, end_ms);
            }
            let name = self.file_name(prefix, kind, num);
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(!cfg.per_job)
                .write(true)
                .truncate(cfg.per_job)
                .open(&name)?;
            let mut w = std::io::BufWriter::new(file);
            for s in &log.samples {
                write!(w, "{}, {}, {}, {}", s.time_ms + base, s.value, s.ddir, s.bs)?;
                if cfg.offset {
                    write!(w, ", {}", s.offset)?;
                }
                if cfg.prio {
                    writeln!(w, ", 0x0000")?;
                } else {
                    writeln!(w, ", 0")?;
                }
            }
            w.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averaging_windows() {
        let mut l = SampleLog::default();
        for t in 0..25u64 {
            l.add(
                10,
                Sample {
                    time_ms: t,
                    value: t,
                    ddir: 0,
                    bs: 4096,
                    offset: 0,
                },
            );
        }
        l.finish(10, 25);
        let v: Vec<(u64, u64)> = l.samples.iter().map(|s| (s.time_ms, s.value)).collect();
        // 0..=10 averages 5; 11..=20 averages 15.5 → 16; 21..=24 at the end averages 22.5 → 23.
        assert_eq!(v, vec![(10, 5), (20, 16), (25, 23)]);
    }

    #[test]
    fn writes_fio_lines() {
        let dir = std::env::temp_dir().join(format!("iobench-logs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = dir.join("j").display().to_string();
        let cfg = LogConfig {
            bw: Some(prefix.clone()),
            lat: Some(prefix.clone()),
            iops: Some(prefix.clone()),
            offset: true,
            per_job: true,
            ..Default::default()
        };
        let mut logs = JobLogs::new(cfg, false, false, false);
        logs.io(0, 4096, 8192, 0, 1000, 3);
        logs.write(1, 3).unwrap();
        let read = |k: &str| std::fs::read_to_string(format!("{prefix}_{k}.1.log")).unwrap();
        assert_eq!(read("clat"), "3, 1000, 0, 4096, 8192, 0\n");
        assert_eq!(read("lat"), "3, 1000, 0, 4096, 8192, 0\n");
        assert_eq!(read("slat"), "");
        assert_eq!(read("bw"), "3, 4096000, 0, 4096, 8192, 0\n");
        assert_eq!(read("iops"), "3, 1, 0, 4096, 8192, 0\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
