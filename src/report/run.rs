//! The reporting side of a plain run: opens `--output`, prints the headers before the jobs
//! start, registers the printer of the reports made while the run goes
//! (`--status-interval`, SIGUSR1), and prints the final report in every format asked for.

use super::{final_report, Sink};
use crate::cli::CliConfig;
use crate::job::Job;
use crate::stats::group::{summarize, RunSummary};
use crate::stats::RunOutcome;
use std::time::Instant;

/// Reporting state for one run.
pub struct Reporter {
    sink: Sink,
}

impl Reporter {
    /// Opens the output and prints the job headers (normal format only). Call just
    /// before the jobs start.
    pub fn start(cfg: &CliConfig, jobs: &[Job]) -> std::io::Result<Reporter> {
        let mut sink = Sink::open(cfg)?;
        if super::Formats::of(cfg).normal {
            sink.write(&super::normal::header(jobs))?;
            sink.write(&super::sync_depth_notes(jobs))?;
        } else {
            // Machine formats keep stdout clean: fio's notes go to stderr.
            eprint!("{}", super::all_verify_notes(jobs));
            eprint!("{}", super::sync_depth_notes(jobs));
        }
        let mut live_sink = sink.try_clone()?;
        let (cfg2, jobs2, start) = (cfg.clone(), jobs.to_vec(), Instant::now());
        crate::run::interim::set_reporter(Box::new(move |outcome: &RunOutcome| {
            // As in fio, reports printed while the run goes carry no disk statistics.
            let mut sum = summarize(&jobs2, outcome);
            sum.elapsed_ms = start.elapsed().as_millis() as u64;
            let report = |c: &CliConfig| super::interim_report(c, &jobs2, &sum);
            if let Err(e) = live_sink.write_report(&cfg2, report) {
                eprintln!("iobench: output: {e}");
            }
        }));
        Ok(Reporter { sink })
    }

    /// Prints the final report of a run in every format asked for.
    pub fn finish(
        &mut self,
        cfg: &CliConfig,
        jobs: &[Job],
        sum: &RunSummary,
    ) -> std::io::Result<()> {
        self.sink
            .write_report(cfg, |c: &CliConfig| final_report(c, jobs, sum))
    }
}
