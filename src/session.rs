//! One run of a set of jobs inside this process, handed back as data ([`run`]) or reported
//! as a plain run reports it ([`run_reported`]): the same path a
//! plain `iobench` run takes (arguments → [`crate::cli::parse_args`] → [`crate::job::resolve`]
//! → [`crate::run::preflight`] → [`crate::run::run_all`] → [`crate::stats::group::summarize`]),
//! without printing anything. Studies (`iobench quick`, sweeps, repeated comparisons) call it
//! once per measurement, so that each measurement is exactly a plain run of its job and
//! none re-executes the binary.

use crate::cli::{CliConfig, OutputFormat};
use crate::defs::raw::RawJob;
use crate::job::Job;
use crate::report::json::Value;
use crate::stats::group::{summarize, RunSummary};
use crate::stats::RunOutcome;
use std::time::{Duration, Instant, SystemTime};

/// A run ready to start: its parsed flags and its resolved jobs, checked as a plain run
/// checks them before any I/O.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub config: CliConfig,
    pub jobs: Vec<Job>,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Finished {
    pub config: CliConfig,
    pub jobs: Vec<Job>,
    pub outcome: RunOutcome,
    /// The reported jobs, groups and disk statistics, as the final report shows them.
    pub summary: RunSummary,
    /// The exit status a plain run would end with (0: every job succeeded).
    pub code: u8,
    /// When the jobs started, and how long the run took from there.
    pub started: SystemTime,
    pub wall: Duration,
}

/// Parses a plain run's arguments (fio's command line, job files included), resolves the
/// jobs and makes the checks done before any I/O. The error is the message a plain run
/// prints after `iobench: `.
pub fn prepare<S: AsRef<str>>(args: &[S]) -> Result<Prepared, String> {
    let inv = crate::cli::parse_args(args).map_err(|e| e.to_string())?;
    let mut jobs = Vec::with_capacity(inv.jobs.len());
    for raw in &inv.jobs {
        jobs.push(crate::job::resolve(raw).map_err(|e| e.to_string())?);
    }
    if jobs.is_empty() {
        return Err("no jobs to run".to_string());
    }
    crate::report::check_terse_version(&inv.config)?;
    crate::run::preflight(&inv.config, &jobs)?;
    Ok(Prepared {
        config: inv.config,
        jobs,
    })
}

/// Runs prepared jobs in this process and returns their outcome; prints nothing but what
/// the run itself prints (fio's informational lines go to stdout only when the normal
/// format is asked for and `--output` is not given, as in a plain run).
pub fn run(p: Prepared) -> Finished {
    let disks = crate::report::run::disk_snapshot(&p.jobs);
    let started = SystemTime::now();
    let t0 = Instant::now();
    let (outcome, code) = crate::run::run_all(&p.config, &p.jobs);
    let wall = t0.elapsed();
    let mut summary = summarize(&p.jobs, &outcome);
    if let Some(d) = &disks {
        summary.disks = d.delta();
    }
    summary.elapsed_ms = wall.as_millis() as u64;
    Finished {
        config: p.config,
        jobs: p.jobs,
        outcome,
        summary,
        code,
        started,
        wall,
    }
}

/// `prepare` then `run`: the whole of a plain run, handed back as data.
pub fn run_args<S: AsRef<str>>(args: &[S]) -> Result<Finished, String> {
    prepare(args).map(run)
}

impl Finished {
    /// fio's JSON document of the run (`plus`: JSON+ with histogram bins), as data.
    pub fn document(&self, plus: bool) -> Value {
        crate::report::json::document(&self.jobs, &self.summary, plus)
    }

    /// The final report in the formats the run's `--output-format` asked for, byte for
    /// byte what a plain run prints at its end.
    pub fn report(&self) -> String {
        crate::report::final_report(&self.config, &self.jobs, &self.summary)
    }

    /// True when a signal cut the run short: a study should stop there.
    pub fn interrupted(&self) -> bool {
        self.outcome.signal.is_some()
    }

    /// True when JSON was among the formats asked for.
    pub fn wants_json(&self) -> bool {
        self.config
            .formats
            .iter()
            .any(|f| matches!(f, OutputFormat::Json | OutputFormat::JsonPlus))
    }
}

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

/// `--profile=act`'s table, summed over the profile's workers, printed when they are
/// done and before the report (on stdout whatever the format, as fio prints it).
fn print_act_table(outcome: &crate::stats::RunOutcome) {
    let mut sum: Option<crate::stats::act::ActSlices> = None;
    for a in outcome.results.iter().filter_map(|r| r.act.as_deref()) {
        match &mut sum {
            Some(s) => s.merge(a),
            None => sum = Some(a.clone()),
        }
    }
    if let Some(s) = sum {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(s.table().as_bytes());
        let _ = out.flush();
    }
}

/// Runs `jobs` and writes their reports as `cfg` asks (formats, `--output`), exactly as a
/// plain run does. An `Err` is a problem found before any job started, or an output error.
pub fn run_reported(cfg: &CliConfig, jobs: &[Job]) -> Result<Ran, String> {
    crate::report::check_terse_version(cfg)?;
    crate::run::preflight(cfg, jobs)?;
    crate::present::start(cfg)?;
    let mut reporter =
        crate::report::run::Reporter::start(cfg, jobs).map_err(|e| format!("output: {e}"))?;
    let (outcome, code) = crate::run::run_all(cfg, jobs);
    crate::run::interim::finish(&outcome);
    print_act_table(&outcome);
    reporter
        .finish(cfg, jobs, &outcome)
        .map_err(|e| format!("output: {e}"))?;
    Ok(Ran { code, outcome })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_job_runs_and_reports_as_data() {
        let f = run_args(&[
            "--output-format=json",
            "--name=s",
            "--ioengine=null",
            "--size=1m",
            "--bs=4k",
            "--rw=randread",
        ])
        .expect("runs");
        assert_eq!(f.code, 0);
        let doc = f.document(false);
        let jobs = match doc.get("jobs") {
            Some(Value::Arr(a)) => a,
            other => panic!("no jobs array: {other:?}"),
        };
        let ios = jobs[0]
            .get("read")
            .and_then(|r| r.get("total_ios"))
            .and_then(Value::as_f64);
        assert_eq!(ios, Some(256.0));
        assert!(f.report().contains("\"jobname\" : \"s\""));
    }

    #[test]
    fn bad_arguments_are_refused_before_any_io() {
        let e = run_args(&["--name=s", "--ioengine=null", "--bs=oops"]).unwrap_err();
        assert!(e.contains("bs"), "{e}");
    }
}
