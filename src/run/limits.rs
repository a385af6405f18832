//! Limits checked before anything runs, so a hostile or mistaken job file fails at once
//! with a clear message instead of exhausting memory: at least one job, and no more job
//! clones than fio's job limit (4096, or `--max-jobs`).

use crate::cli::CliConfig;
use crate::job::Job;

/// fio's most jobs (clones included) in one run.
pub const MAX_JOBS: u64 = 4096;

/// fio's words when a run has no job.
pub const NO_JOBS: &str = "No job(s) defined";

/// Fails when there is no job, or more clones than the job limit allows.
pub fn check_jobs(cfg: &CliConfig, jobs: &[Job]) -> Result<(), String> {
    if jobs.is_empty() {
        return Err(NO_JOBS.into());
    }
    let limit = cfg.max_jobs.filter(|&m| m > 0).unwrap_or(MAX_JOBS);
    let total = jobs
        .iter()
        .fold(0u64, |a, j| a.saturating_add(j.exec.numjobs.max(1) as u64));
    if total > limit {
        return Err(format!(
            "error: maximum number of jobs reached: {total} jobs (numjobs included) \
             exceed the limit of {limit}{}",
            if cfg.max_jobs.is_some() {
                " set by --max-jobs"
            } else {
                " (--max-jobs sets it)"
            }
        ));
    }
    Ok(())
}
