//! One run of a set of jobs inside this process: what a plain `iobench JOBS` does between
//! parsing its arguments and exiting. The binary calls it once; `sweep`, `compare` and
//! `quick` call it once per point or repetition, so each of those runs exactly as a plain
//! run of the same jobs would (same resolution, checks, run core and reports).

use crate::cli::CliConfig;
use crate::job::Job;
use crate::options::RawJob;
use crate::stats::RunOutcome;

/// What a run left: the exit status a plain run would have and every clone's statistics.
pub struct Ran {
    /// The exit status fio would give (0, the number of failed clones, or 128 + signal).
    pub code: u8,
    pub outcome: RunOutcome,
}

/// Resolves the raw jobs into typed jobs, stopping at the first error (with its file:line).
pub fn resolve(raw: &[RawJob]) -> Result<Vec<Job>, String> {
    raw.iter()
        .map(|r| crate::job::resolve(r).map_err(|e| e.to_string()))
        .collect()
}

/// Runs `jobs` and writes their reports as `cfg` asks (formats, `--output`), exactly as a
/// plain run does. An `Err` is a problem found before any job started, or an output error.
pub fn run_reported(cfg: &CliConfig, jobs: &[Job]) -> Result<Ran, String> {
    crate::report::check_terse_version(cfg)?;
    crate::run::preflight(cfg, jobs)?;
    let mut reporter =
        crate::report::run::Reporter::start(cfg, jobs).map_err(|e| format!("output: {e}"))?;
    let (outcome, code) = crate::run::run_all(cfg, jobs);
    reporter
        .finish(cfg, jobs, &outcome)
        .map_err(|e| format!("output: {e}"))?;
    Ok(Ran { code, outcome })
}
