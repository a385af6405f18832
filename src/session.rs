//! The one pipeline every run goes through: [`prepare`] makes every check a plain run makes
//! before any I/O (the jobs resolve, fio's job limit, the terse version, the preflight
//! checks), and [`run`] runs the prepared jobs in this process, snapshotting the disks and
//! summarising the results. The entry points differ only in the [`Hooks`] they pass: a
//! plain run prints its headers and its report ([`run_reported`]), the server's runner
//! sends wire messages, an MPI rank meets the others at a barrier, a study keeps the
//! results as data ([`run_quiet`]). So `iobench`, `sweep`, `compare`, `quick`, the server
//! and MPI ranks refuse the same jobs with the same message, and none starts I/O first.

use crate::cli::{CliConfig, Invocation};
use crate::defs::raw::RawJob;
use crate::job::Job;
use crate::report::json::Value;
use crate::stats::group::{summarize, RunSummary};
use crate::stats::RunOutcome;
use std::time::{Duration, Instant, SystemTime};

/// Why a run was refused before any I/O. Its text is what a plain run prints after
/// `iobench: ` ([`Error::NoJobs`] is printed alone, followed by the usage, as fio does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// No job at all: fio's "No job(s) defined".
    NoJobs,
    /// A job or a flag that cannot run, with the reason.
    Refused(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NoJobs => f.write_str(crate::run::limits::NO_JOBS),
            Error::Refused(m) => f.write_str(m),
        }
    }
}

impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}

impl From<String> for Error {
    fn from(m: String) -> Error {
        Error::Refused(m)
    }
}

impl Error {
    /// Prints the refusal as a plain run does, on stderr; with no job, fio's usage
    /// (`usage`, the command table's help) follows on stdout.
    pub fn print(&self, usage: impl FnOnce() -> String) {
        match self {
            Error::NoJobs => {
                eprintln!("{self}");
                print!("{}", usage());
            }
            Error::Refused(m) => eprintln!("iobench: {m}"),
        }
    }
}

/// A run ready to start: its parsed flags and its resolved jobs, checked as a plain run
/// checks them before any I/O.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub config: CliConfig,
    pub jobs: Vec<Job>,
}

impl Prepared {
    /// The same jobs with the reports going to `output` in `formats` (a study keeps each
    /// run's JSON+ in a file of its own). The checks made still hold: none depends on
    /// where the report goes.
    pub fn reporting_to(&self, output: &str, formats: Vec<crate::cli::OutputFormat>) -> Prepared {
        let mut p = self.clone();
        p.config.output = Some(output.to_string());
        p.config.formats = formats;
        p
    }
}

/// Resolves the raw jobs into typed jobs, stopping at the first error (with its file:line).
pub fn resolve(raw: &[RawJob]) -> Result<Vec<Job>, String> {
    raw.iter()
        .map(|r| crate::job::resolve(r).map_err(|e| e.to_string()))
        .collect()
}

/// Every check a plain run makes on resolved jobs before any I/O, in its order: at least
/// one job and no more clones than fio's job limit (`--max-jobs`), a terse version fio
/// knows, then the preflight (NUMA nodes, `--readonly`, mounted devices, steady state).
pub fn check(cfg: &CliConfig, jobs: &[Job]) -> Result<(), Error> {
    crate::run::limits::check_jobs(cfg, jobs).map_err(|e| {
        if jobs.is_empty() {
            Error::NoJobs
        } else {
            Error::Refused(e)
        }
    })?;
    crate::report::check_terse_version(cfg)?;
    if cfg.history.is_some() && !cfg.save {
        return Err(Error::Refused(
            "--history=PATH says where --save stores the run: add --save (or leave --history out)"
                .into(),
        ));
    }
    crate::run::preflight(cfg, jobs)?;
    Ok(())
}

/// Resolves an invocation's jobs and checks them: the one way into a run.
pub fn prepare(inv: &Invocation) -> Result<Prepared, Error> {
    prepare_with(inv, |_, _| Ok(()))
}

/// [`prepare`], with `adjust` applied to the flags and resolved jobs before the checks: an
/// entry point's own refusals and renames (the server's and an MPI rank's file names),
/// checked then as the run will see them.
pub fn prepare_with(
    inv: &Invocation,
    adjust: impl FnOnce(&mut CliConfig, &mut [Job]) -> Result<(), String>,
) -> Result<Prepared, Error> {
    let mut config = inv.config.clone();
    let mut jobs = resolve(&inv.jobs)?;
    adjust(&mut config, &mut jobs)?;
    check(&config, &jobs)?;
    Ok(Prepared { config, jobs })
}

/// Parses a plain run's arguments (fio's command line, job files included), then
/// [`prepare`]s it.
pub fn prepare_args<S: AsRef<str>>(args: &[S]) -> Result<Prepared, Error> {
    let inv = crate::cli::parse_args(args).map_err(|e| Error::Refused(e.to_string()))?;
    prepare(&inv)
}

/// What an entry point adds to the run: every method has a default that does nothing.
pub trait Hooks {
    /// Just before the jobs start, after the disk snapshot (headers, the server's file
    /// layout and wait for the client's go, the MPI phase barrier). An error stops the
    /// run before any job starts.
    fn before_start(&mut self, _p: &Prepared) -> Result<(), String> {
        Ok(())
    }
    /// As soon as the jobs are done, before the summary is made.
    fn after_run(&mut self, _p: &Prepared, _outcome: &RunOutcome) {}
}

/// No hooks: the run prints only what the run itself prints.
pub struct NoHooks;
impl Hooks for NoHooks {}

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

/// The disk counters before a run, over the devices of the jobs that report disk
/// statistics (`None` when no job does): the start of fio's `disk_util` section. The
/// devices are those of every file the jobs' clones open ([`crate::job::files::FileOpts::all_paths`]).
pub fn disk_snapshot(jobs: &[Job]) -> Option<crate::stats::disk::DiskSnapshot> {
    let paths: Vec<String> = jobs
        .iter()
        .filter(|j| j.report.disk_util && !j.exec.engine.flags().no_local_disk())
        .flat_map(|j| j.files.all_paths(&j.name, j.exec.numjobs))
        .collect();
    (!paths.is_empty()).then(|| crate::stats::disk::DiskSnapshot::take(&paths))
}

/// Runs prepared jobs in this process: the disk snapshot, `hooks.before_start`, the jobs,
/// `hooks.after_run`, then the summary with the disks' activity and the elapsed time.
/// `Err`: `before_start` refused, and no job started.
pub fn run(p: &Prepared, hooks: &mut dyn Hooks) -> Result<Finished, String> {
    let disks = disk_snapshot(&p.jobs);
    hooks.before_start(p)?;
    let started = SystemTime::now();
    let t0 = Instant::now();
    let (outcome, code) = crate::run::run_all(&p.config, &p.jobs);
    let wall = t0.elapsed();
    hooks.after_run(p, &outcome);
    let mut summary = summarize(&p.jobs, &outcome);
    if let Some(d) = &disks {
        summary.disks = d.delta();
    }
    summary.elapsed_ms = wall.as_millis() as u64;
    let mut f = Finished {
        config: p.config.clone(),
        jobs: p.jobs.clone(),
        outcome,
        summary,
        code,
        started,
        wall,
    };
    if p.config.save {
        if let Err(e) = save(&f) {
            eprintln!("iobench: history: {e}");
            f.code = f.code.max(1);
        }
    }
    Ok(f)
}

/// `--save`: the run's JSON+ with its `iobench_env` handed to the history, the one place
/// where every entry point's runs (plain, sweep, compare, quick) are saved.
fn save(f: &Finished) -> Result<(), String> {
    let dest = crate::history::destination(f.config.history.as_deref())?;
    let argv: Vec<String> = std::env::args().collect();
    let mut doc = f.document(true).to_serde();
    if let serde_json::Value::Object(o) = &mut doc {
        o.insert(
            "iobench_env".into(),
            crate::context::env::collect(&argv, &f.jobs),
        );
    }
    let started = f
        .started
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let rec = crate::history::store::Record {
        kind: "run".into(),
        point: None,
        started,
        exit_code: f.code.into(),
        doc,
    };
    if let Some(id) = crate::history::record(dest.clone(), rec)? {
        eprintln!("iobench: history: saved as run {id} in {}", dest.display());
    }
    Ok(())
}

/// Runs prepared jobs and hands the results back as data, printing nothing but what the
/// run itself prints (fio's informational lines go to stdout only when the normal format
/// is asked for and `--output` is not given, as in a plain run).
pub fn run_quiet(p: &Prepared) -> Finished {
    match run(p, &mut NoHooks) {
        Ok(f) => f,
        Err(_) => unreachable!("no hook refuses"),
    }
}

/// `prepare_args` then `run_quiet`: the whole of a plain run, handed back as data.
pub fn run_args<S: AsRef<str>>(args: &[S]) -> Result<Finished, String> {
    Ok(run_quiet(&prepare_args(args)?))
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
        crate::report::Formats::of(&self.config).json
    }
}

/// What a run left: the exit status a plain run would have and every clone's statistics.
pub struct Ran {
    /// The exit status fio would give (0, the number of failed clones, or 128 + signal).
    pub code: u8,
    pub outcome: RunOutcome,
}

/// `--profile=act`'s table, summed over the profile's workers, printed when they are
/// done and before the report (on stdout whatever the format, as fio prints it; on
/// stderr when `--live=-` has stdout).
fn print_act_table(outcome: &crate::stats::RunOutcome, to_stderr: bool) {
    let mut sum: Option<crate::stats::act::ActSlices> = None;
    for a in outcome.results.iter().filter_map(|r| r.act.as_deref()) {
        match &mut sum {
            Some(s) => s.merge(a),
            None => sum = Some(a.clone()),
        }
    }
    if let Some(s) = sum {
        use std::io::Write;
        if to_stderr {
            let _ = std::io::stderr().lock().write_all(s.table().as_bytes());
        } else {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(s.table().as_bytes());
            let _ = out.flush();
        }
    }
}

/// A plain run's hooks: the live observers (`--live`, `--metrics`), `--output` opened and
/// the job headers printed before the jobs start, then the live observers' last word and
/// `--profile=act`'s table.
#[derive(Default)]
struct PlainReport {
    reporter: Option<crate::report::run::Reporter>,
}

impl Hooks for PlainReport {
    fn before_start(&mut self, p: &Prepared) -> Result<(), String> {
        crate::present::start(&p.config)?;
        self.reporter = Some(
            crate::report::run::Reporter::start(&p.config, &p.jobs)
                .map_err(|e| format!("output: {e}"))?,
        );
        Ok(())
    }

    fn after_run(&mut self, p: &Prepared, outcome: &RunOutcome) {
        crate::run::interim::finish(outcome);
        print_act_table(outcome, p.config.live_on_stdout());
    }
}

/// Runs prepared jobs and writes their reports as the run's flags ask (formats,
/// `--output`), exactly as a plain run does. An `Err` is a problem found before any job
/// started, or an output error.
pub fn run_reported(p: &Prepared) -> Result<Ran, String> {
    let mut hooks = PlainReport::default();
    let f = run(p, &mut hooks)?;
    if let Some(r) = &mut hooks.reporter {
        r.finish(&f.config, &f.jobs, &f.summary)
            .map_err(|e| format!("output: {e}"))?;
    }
    // A `--live` line that could not be written fails the run, after its report.
    let code = if crate::present::jsonlines::take_failure() {
        f.code.max(1)
    } else {
        f.code
    };
    Ok(Ran {
        code,
        outcome: f.outcome,
    })
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

    #[test]
    fn every_check_of_a_plain_run_is_made() {
        let base = ["--name=s", "--ioengine=null", "--size=1m"];
        let with = |extra: &[&str]| {
            let mut a: Vec<&str> = base.to_vec();
            a.extend_from_slice(extra);
            prepare_args(&a).map(|_| ()).unwrap_err().to_string()
        };
        assert!(with(&["--numjobs=5000"]).contains("maximum number of jobs"));
        assert!(with(&["--terse-version=9"]).contains("bad terse version 9"));
        assert!(with(&["--readonly", "--rw=write"]).contains("--readonly"));
        assert_eq!(
            prepare_args(&["--output-format=json"]).unwrap_err(),
            Error::NoJobs
        );
    }
}
