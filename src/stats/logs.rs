//! Per-job sample logs: `write_bw_log`, `write_lat_log` (lat, slat, clat files),
//! `write_iops_log`, with `log_avg_msec`, `log_offset`, `log_prio`, `per_job_logs` and
//! `log_unix_epoch`. Lines are fio's: `time, value, ddir, bs[, offset], prio`.
//!
//! Samples gather in memory while the job runs (amortised pushes, no syscall per I/O) and
//! the worker appends them to their files every second of job time and at the end, so an
//! interrupted run keeps what it logged. `write_hist_log` lines come from [`super::histlog`].

use super::iostat::IoStat;
use crate::job::reportopts::LogConfig;
use serde::{Deserialize, Serialize};
use std::io::Write;

/// One logged sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub time_ms: u64,
    pub value: u64,
    pub ddir: u8,
    pub bs: u64,
    pub offset: u64,
    /// The I/O's issue time, ns since the stats began (`log_issue_time`; 0 in a log
    /// that has none).
    #[serde(default)]
    pub issue_ns: u64,
    /// The window's largest sample, beside its mean in `value`
    /// (`log_window_value=both`; 0 otherwise).
    #[serde(default)]
    pub max: u64,
}

/// One log's samples and, with `log_avg_msec`, its averaging windows.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SampleLog {
    pub samples: Vec<Sample>,
    /// Whether the file was created (later flushes append).
    pub opened: bool,
    window: [IoStat; 3],
    window_start: [Option<u64>; 3],
    /// Log each window's maximum rather than its mean (`log_max_value`).
    #[serde(default)]
    window_max: bool,
    /// Log each window's mean and its maximum (`log_window_value=both`).
    #[serde(default)]
    window_both: bool,
}

impl SampleLog {
    fn with_capacity(n: usize, window_max: bool, window_both: bool) -> Self {
        SampleLog {
            samples: Vec::with_capacity(n),
            window_max,
            window_both,
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
                value: if self.window_max && !self.window_both {
                    self.window[d].max
                } else {
                    (self.window[d].mean + 0.5) as u64
                },
                max: if self.window_both {
                    self.window[d].max
                } else {
                    0
                },
                ddir: d as u8,
                bs: 0,
                offset: 0,
                issue_ns: 0,
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
    pub hist: Option<super::histlog::HistLog>,
    /// The job's number in file names (fio's thread number).
    pub num: usize,
    next_flush_ms: u64,
    /// I/Os logged since the last write-out (each adds at most five samples).
    #[serde(skip)]
    ios_since_flush: usize,
    /// The first error met while flushing during the run (reported at the end).
    error: Option<String>,
    /// ms since the epoch of `epoch_clock` when the job's clock started (for
    /// `log_unix_epoch` / `log_alternate_epoch`).
    pub epoch_ms: u64,
}

const RESERVE: usize = 1024;

impl JobLogs {
    /// Logs for a job with these options (the latency logs the job measures).
    pub fn new(cfg: LogConfig, disable_lat: bool, disable_slat: bool, disable_clat: bool) -> Self {
        let mk = |on: bool| {
            on.then(|| SampleLog::with_capacity(RESERVE, cfg.max_value, cfg.both_values))
        };
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes into the timespec we own (the id was checked when
        // the job was read; a failure leaves zeros).
        unsafe { libc::clock_gettime(cfg.epoch_clock, &mut ts) };
        let epoch_ms = ts.tv_sec.max(0) as u64 * 1000 + ts.tv_nsec.max(0) as u64 / 1_000_000;
        JobLogs {
            bw: mk(cfg.bw.is_some()),
            iops: mk(cfg.iops.is_some()),
            lat: mk(cfg.lat.is_some() && !disable_lat),
            slat: mk(cfg.lat.is_some() && !disable_slat),
            clat: mk(cfg.lat.is_some() && !disable_clat),
            hist: cfg
                .hist
                .as_ref()
                .map(|_| super::histlog::HistLog::new(cfg.hist_ms, cfg.hist_coarse)),
            num: 1,
            next_flush_ms: FLUSH_MS,
            ios_since_flush: 0,
            error: None,
            cfg,
            epoch_ms,
        }
    }

    /// One completed I/O, for the per-I/O logs (and the averaged latency logs).
    #[inline]
    pub fn io(&mut self, ddir: u8, bytes: u64, offset: u64, slat: u64, clat: u64, now_ns: u64) {
        let now_ms = now_ns / 1_000_000;
        let avg = self.cfg.avg_ms;
        let s = |value| Sample {
            time_ms: now_ms,
            value,
            ddir,
            bs: bytes,
            offset,
            issue_ns: 0,
            max: 0,
        };
        // The I/O was issued its clat before now (windowed logs carry no issue time).
        let issued = |value| Sample {
            issue_ns: if self.cfg.issue_time && avg == 0 {
                now_ns.saturating_sub(clat)
            } else {
                0
            },
            ..s(value)
        };
        if let Some(l) = &mut self.lat {
            l.add(avg, s(slat + clat));
        }
        if slat != 0 {
            let v = issued(slat);
            if let Some(l) = &mut self.slat {
                l.add(avg, v);
            }
        }
        let v = issued(clat);
        if let Some(l) = &mut self.clat {
            l.add(avg, v);
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
        self.ios_since_flush += 1;
        self.maybe_flush(now_ms);
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
            issue_ns: 0,
            max: 0,
        };
        // A window's rate is one sample: with `log_window_value=both` its largest is itself
        // (fio 3.42 prints the same number twice).
        let both = self.cfg.both_values;
        let s = |value| Sample {
            max: if both { value } else { 0 },
            ..s(value)
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

    /// Sets the job's number (fio's thread number, 1-based), which names its log files.
    pub fn set_number(&mut self, num: u64) {
        self.num = num as usize;
    }

    /// Called with each completion's time: writes out what has gathered once a second of
    /// job time has passed or many samples wait, so an interrupted run keeps its logs.
    #[inline]
    pub fn maybe_flush(&mut self, now_ms: u64) {
        if now_ms >= self.next_flush_ms || self.ios_since_flush >= FLUSH_IOS {
            self.next_flush_ms = now_ms + FLUSH_MS;
            self.ios_since_flush = 0;
            if let Err(e) = self.flush() {
                self.error.get_or_insert(e.to_string());
            }
        }
    }

    /// Appends every gathered sample to its file (creating or truncating it on first use).
    pub fn flush(&mut self) -> std::io::Result<()> {
        let base = if self.cfg.unix_epoch {
            self.epoch_ms
        } else {
            0
        };
        let (offset, prio, per_job, num) =
            (self.cfg.offset, self.cfg.prio, self.cfg.per_job, self.num);
        let issue = self.cfg.issue_time;
        let fz = if self.cfg.store_compressed { ".fz" } else { "" };
        let name = |prefix: &str, kind: &str| {
            if per_job {
                format!("{prefix}_{kind}.{num}.log{fz}")
            } else {
                format!("{prefix}_{kind}.log{fz}")
            }
        };
        let zip = self.cfg.store_compressed;
        let cfg = &self.cfg;
        let mut text = Vec::new();
        let targets = [
            (cfg.bw.as_deref(), "bw", &mut self.bw),
            (cfg.lat.as_deref(), "lat", &mut self.lat),
            (cfg.lat.as_deref(), "slat", &mut self.slat),
            (cfg.lat.as_deref(), "clat", &mut self.clat),
            (cfg.iops.as_deref(), "iops", &mut self.iops),
        ];
        for (prefix, kind, log) in targets {
            let (Some(prefix), Some(log)) = (prefix, log.as_mut()) else {
                continue;
            };
            if log.opened && log.samples.is_empty() {
                continue;
            }
            if zip {
                let bin = super::logzip::encode(&log.samples, offset, prio, base);
                let z = super::logzip::maybe_deflate(true, &bin)?;
                append(&name(prefix, kind), &mut log.opened, per_job, &z)?;
                log.samples.clear();
                continue;
            }
            text.clear();
            super::logline::LineWriter::new(base, offset, prio)
                .with_issue_time(issue)
                .with_max(cfg.both_values)
                .write(&mut text, &log.samples);
            append(&name(prefix, kind), &mut log.opened, per_job, &text)?;
            log.samples.clear();
        }
        // log_store_compressed with a histogram log is refused when the job is resolved.
        if let (Some(prefix), Some(h)) = (cfg.hist.as_deref(), self.hist.as_mut()) {
            if !h.opened || !h.text.is_empty() {
                append(
                    &name(prefix, "clat_hist"),
                    &mut h.opened,
                    per_job,
                    h.text.as_bytes(),
                )?;
                h.text.clear();
                h.pending_lines = 0;
            }
        }
        Ok(())
    }

    /// Ends the logs at `end_ms` (ms since the job's stats began): closes partly filled
    /// averaging windows and writes everything out.
    pub fn finish(&mut self, end_ms: u64) -> std::io::Result<()> {
        let avg = self.cfg.avg_ms;
        for l in [&mut self.lat, &mut self.slat, &mut self.clat]
            .into_iter()
            .flatten()
        {
            l.finish(avg, end_ms);
        }
        self.flush()?;
        match self.error.take() {
            Some(e) => Err(std::io::Error::other(e)),
            None => Ok(()),
        }
    }

    /// A completion's clat histogram (`clat`, cumulative, empty when clat percentiles are
    /// off): every `log_hist_msec` a `write_hist_log` line with the counts since the last.
    #[inline]
    pub fn hist_tick(&mut self, ddir: u8, bs: u64, now_ms: u64, clat: &super::hist::Hist) {
        let base = if self.cfg.unix_epoch {
            self.epoch_ms
        } else {
            0
        };
        if let Some(h) = &mut self.hist {
            h.tick(ddir as usize % 3, bs, now_ms, base, clat);
        }
    }
}

/// I/Os logged before a write-out, at most (then it comes before its second is up): a
/// bound on the memory the samples take (at most five 40-byte samples per I/O) that keeps
/// the file opens and writes rare per I/O.
const FLUSH_IOS: usize = 16384;

/// How often, in ms of job time, gathered samples are written out.
const FLUSH_MS: u64 = 1000;

/// Writes `bytes` to the log file `name`: truncating it the first time for a per-job log,
/// appending otherwise (a shared log gathers every clone's lines, as in fio).
fn append(name: &str, opened: &mut bool, per_job: bool, bytes: &[u8]) -> std::io::Result<()> {
    let fresh = !*opened && per_job;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(!fresh)
        .truncate(fresh)
        .open(name)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{name}: {e}")))?;
    *opened = true;
    f.write_all(bytes)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{name}: {e}")))
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
                    issue_ns: 0,
                    max: 0,
                },
            );
        }
        l.finish(10, 25);
        let v: Vec<(u64, u64)> = l.samples.iter().map(|s| (s.time_ms, s.value)).collect();
        // 0..=10 averages 5; 11..=20 averages 15.5 → 16; 21..=24 at the end averages 22.5 → 23.
        assert_eq!(v, vec![(10, 5), (20, 16), (25, 23)]);
    }

    #[test]
    fn max_value_windows() {
        let mut l = SampleLog::with_capacity(4, true, false);
        for t in 0..25u64 {
            let value = if t == 3 { 100 } else { t };
            l.add(
                10,
                Sample {
                    time_ms: t,
                    value,
                    ddir: 0,
                    bs: 4096,
                    offset: 0,
                    issue_ns: 0,
                    max: 0,
                },
            );
        }
        l.finish(10, 25);
        let v: Vec<(u64, u64)> = l.samples.iter().map(|s| (s.time_ms, s.value)).collect();
        assert_eq!(v, vec![(10, 100), (20, 20), (25, 24)]);
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
        logs.io(0, 4096, 8192, 0, 1000, 3_000_000);
        logs.finish(3).unwrap();
        let read = |k: &str| std::fs::read_to_string(format!("{prefix}_{k}.1.log")).unwrap();
        assert_eq!(read("clat"), "3, 1000, 0, 4096, 8192, 0\n");
        assert_eq!(read("lat"), "3, 1000, 0, 4096, 8192, 0\n");
        assert_eq!(read("slat"), "");
        assert_eq!(read("bw"), "3, 4096000, 0, 4096, 8192, 0\n");
        assert_eq!(read("iops"), "3, 1, 0, 4096, 8192, 0\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
