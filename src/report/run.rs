//! The reporting side of a run, for the binary: opens `--output`, prints the headers before
//! the jobs start, snapshots disk counters, registers the printer of the reports made while
//! the run goes (`--status-interval`, SIGUSR1), and prints the final report in every format.

use super::{final_report, Sink};
use crate::cli::CliConfig;
use crate::job::Job;
use crate::stats::disk::DiskSnapshot;
use crate::stats::group::summarize;
use crate::stats::RunOutcome;
use std::time::Instant;

/// The disk counters before a run, over the devices of the jobs that report disk
/// statistics (`None` when no job does): the start of fio's `disk_util` section.
pub fn disk_snapshot(jobs: &[Job]) -> Option<DiskSnapshot> {
    let paths: Vec<String> = jobs
        .iter()
        .filter(|j| j.report.disk_util && !j.exec.engine.flags().no_local_disk())
        .flat_map(crate::job::files::job_paths)
        .collect();
    if paths.is_empty() {
        None
    } else {
        Some(DiskSnapshot::take(&paths))
    }
}

/// Reporting state for one run.
pub struct Reporter {
    sink: Sink,
    disks: Option<DiskSnapshot>,
    start: Instant,
}

impl Reporter {
    /// Opens the output, prints the job headers (normal format only) and takes the disk
    /// snapshot. Call just before the jobs start.
    pub fn start(cfg: &CliConfig, jobs: &[Job]) -> std::io::Result<Reporter> {
        let mut sink = Sink::open(cfg)?;
        if cfg.wants_normal() {
            sink.write(&super::normal::header(jobs))?;
            sink.write(&super::sync_depth_notes(jobs))?;
        } else {
            // Machine formats keep stdout clean: fio's notes go to stderr.
            eprint!("{}", super::sync_depth_notes(jobs));
        }
        let disks = disk_snapshot(jobs);
        let mut live_sink = sink.try_clone()?;
        let (cfg2, jobs2, start) = (cfg.clone(), jobs.to_vec(), Instant::now());
        crate::run::interim::set_reporter(Box::new(move |outcome: &RunOutcome| {
            // As in fio, reports printed while the run goes carry no disk statistics.
            let mut sum = summarize(&jobs2, outcome);
            sum.elapsed_ms = start.elapsed().as_millis() as u64;
            if let Err(e) = live_sink.write(&super::interim_report(&cfg2, &jobs2, &sum)) {
                eprintln!("iobench: output: {e}");
            }
        }));
        Ok(Reporter {
            sink,
            disks,
            start: Instant::now(),
        })
    }

    /// Prints the final report of `outcome` in every format asked for.
    pub fn finish(
        &mut self,
        cfg: &CliConfig,
        jobs: &[Job],
        outcome: &RunOutcome,
    ) -> std::io::Result<()> {
        let mut sum = summarize(jobs, outcome);
        if let Some(d) = &self.disks {
            sum.disks = d.delta();
        }
        sum.elapsed_ms = self.start.elapsed().as_millis() as u64;
        self.sink.write(&final_report(cfg, jobs, &sum))
    }
}
