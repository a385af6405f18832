//! `iobench sweep`: one job (a job file or command-line options) run over the cartesian
//! product of axes, in this process, each point exactly as a plain run of the job with the
//! point's settings would run. Each point's fio-format JSON+ goes to the result directory,
//! named after its settings, with an index (`index.json`, `index.csv`) of what every point
//! did; a second run of the same sweep skips the points already done.

use super::axis::{self, Axis, Point};
use super::estimate;
use super::progress::{duration_text, Progress};
use super::stats::{self, Summary, OUTLIER_Z};
use super::table::{self, Table};
use super::vocab::{self, Format};
use crate::cli::{self, OutputFormat};
use crate::defs::raw::RawJob;
use crate::error::Origin;
use crate::flags::{Flag, Spec, Takes};
use crate::job::Job;
use crate::options;
use crate::present::doc::sweep_index as doc;
use crate::present::results::{self, DirResult};
use crate::session::Prepared;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What `iobench sweep` was asked to do.
#[derive(Debug, Default)]
pub struct Args {
    axes: Vec<Axis>,
    dir: Option<PathBuf>,
    dry_run: bool,
    fresh: bool,
    /// `--output-format`: the final table as text or markdown, or the index on stdout.
    format: Format,
    /// Runs of each point (`--repeat`), the points' order alternating between repeats.
    repeat: usize,
    /// `--margin`: the equivalence margin of the notes' verdicts, in percent.
    margin: Option<f64>,
    job_args: Vec<String>,
}

/// `iobench sweep`'s flags; anything else is the job, as a plain run takes it.
pub const SPEC: Spec<Args> = Spec {
    command: "sweep",
    usage: "\
usage: iobench sweep --axis NAME=VALUES [--axis ...] [--zip NAME=VALUES] [-o DIR]
                     [--repeat N] [--dry-run] [--fresh] [--output-format F] [--] JOB...

Runs one job over every combination of the axes' values, each point as a plain run of the
job with the point's settings would run. JOB is a job file or options, as a plain run
takes them (after -- when they could be read as a sweep's own).",
    flags: &[
        Flag {
            names: &["--axis"],
            takes: Takes::Value,
            form: "NAME=VALUES",
            help: "an option and its values: a list (1,2,4; use | between values\n\
                   that hold commas: 4k,8k|16k,32k) or a range (1..128:x2,\n\
                   1..16:+1, 1k..32m:x2); repeat for more axes",
            apply: |a, v| {
                let (name, values) = axis::parse_spec("--axis", v.text())?;
                a.axes.push(Axis {
                    name,
                    values,
                    zipped: vec![],
                });
                Ok(())
            },
        },
        Flag {
            names: &["--zip"],
            takes: Takes::Value,
            form: "NAME=VALUES",
            help: "an option that takes its i-th value with the previous axis's i-th",
            apply: |a, v| {
                let (name, values) = axis::parse_spec("--zip", v.text())?;
                let last = a.axes.last_mut().ok_or(
                    "--zip moves an option with the --axis before it: give an --axis first",
                )?;
                axis::zip(last, name, values)
            },
        },
        Flag {
            names: &["--dir", "-o", "--results", "--output"],
            takes: Takes::Value,
            form: "DIR",
            help: "the result directory (default: sweep-<time>): one JSON+ per\n\
                   point, index.json and index.csv",
            apply: |a, v| {
                a.dir = Some(v.path());
                Ok(())
            },
        },
        Flag {
            names: &["--repeat", "-r"],
            takes: Takes::Value,
            form: "N",
            help: "run each point N times (default 1), the points in order, then in\n\
                   reverse, and so on; mean ± σ and min-max per point, and a\n\
                   warning when a point is noisy",
            apply: |a, v| {
                let expected = format!("a whole number from 1 to {MAX_REPEAT}");
                a.repeat = v.number::<usize>(&expected)?;
                if !(1..=MAX_REPEAT).contains(&a.repeat) {
                    return Err(v.bad(&expected));
                }
                Ok(())
            },
        },
        Flag {
            names: &["--margin"],
            takes: Takes::Value,
            form: "P%",
            help: "with --repeat: the margin (default 5%) within which the notes\n\
                   call a point's IOPS equivalent to the previous value of the\n\
                   last axis (else different, or cannot tell with these repeats)",
            apply: |a, v| {
                a.margin = Some(stats::parse_margin(v.flag, v.text())?);
                Ok(())
            },
        },
        Flag {
            names: &["--dry-run"],
            takes: Takes::Nothing,
            form: "",
            help: "list the points and the estimated time; nothing runs but, for\n\
                   a point bound by size that only reads existing targets, a\n\
                   calibration run of at most 0.5 s",
            apply: |a, _| {
                a.dry_run = true;
                Ok(())
            },
        },
        Flag {
            names: &["--fresh"],
            takes: Takes::Nothing,
            form: "",
            help: "start over in a directory that holds another sweep",
            apply: |a, _| {
                a.fresh = true;
                Ok(())
            },
        },
        vocab::markdown(),
        vocab::json(),
        vocab::output_format(
            "how the result prints (default normal): the final table as text\n\
             or markdown, or the index document (index.json) on stdout and the\n\
             table on stderr; the points always write JSON+ into the result\n\
             directory",
        ),
    ],
    pass_unknown: true,
    attached: false,
    single_dash: false,
};

impl vocab::Formats for Args {
    const ACCEPTS: &'static [Format] = &[Format::Normal, Format::Markdown, Format::Json];
    const FORM: &'static str = "normal|markdown|json";
    fn format_mut(&mut self) -> &mut Format {
        &mut self.format
    }
}

/// The most runs of each point `--repeat` asks for (the runs of the whole sweep are
/// bounded too: [`axis::MAX_POINTS`]).
pub const MAX_REPEAT: usize = 1000;

/// Reads the arguments: `None` when `--help` was asked for.
fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let m = SPEC.parse(args)?;
    if m.help {
        return Ok(None);
    }
    let mut a = Args {
        job_args: m.positional.clone(),
        repeat: 1,
        ..Default::default()
    };
    a.job_args.extend(m.rest.clone().unwrap_or_default());
    SPEC.apply(&m, &mut a)?;
    if a.axes.is_empty() {
        return Err("no --axis given (see iobench sweep --help)".into());
    }
    let mut seen = std::collections::HashSet::new();
    for name in a
        .axes
        .iter()
        .flat_map(|x| std::iter::once(&x.name).chain(x.zipped.iter().map(|z| &z.0)))
    {
        if !seen.insert(name.clone()) {
            return Err(format!("option '{name}' is swept twice"));
        }
    }
    Ok(Some(a))
}

/// Sets `point`'s options on every job, after the job's own, so they win.
pub fn apply(raw: &[RawJob], point: &Point) -> Result<Vec<RawJob>, String> {
    let mut jobs = raw.to_vec();
    for job in &mut jobs {
        for (name, value) in point {
            let opt = options::make_opt(name, Some(value), &Origin::command_line())
                .map_err(|e| e.to_string())?;
            job.opts.push(opt);
        }
    }
    Ok(jobs)
}

/// The seconds a run of `jobs` should take from their own limits (time-based, or
/// size-bound at their rate), or None when a job's speed must be measured first (see
/// [`super::estimate`]).
pub fn estimate_s(jobs: &[Job]) -> Option<f64> {
    estimate::run_s(jobs, None)
}

/// A point's coefficient of variation (σ / mean over its repeats) above which the sweep
/// warns that the point is noisy: 5 %, the spread beyond which a difference of a few
/// percent between two points says nothing.
pub const NOISE_CV: f64 = 0.05;

/// Why a run of a point gave no measurement.
#[derive(Debug, Clone, PartialEq)]
struct Failure {
    /// The error number of the first job that failed (fio's `error`), when a job did.
    error: Option<i32>,
    /// What went wrong, in words (the job's error text, or why the run did not finish).
    reason: String,
}

/// One run (one repeat) of a point.
#[derive(Debug, Clone)]
struct RunResult {
    /// 1-based.
    repeat: usize,
    file: String,
    exit_code: Option<u8>,
    elapsed_s: f64,
    failure: Option<Failure>,
    /// The totals per direction; empty for a failed run (its numbers are not a measurement).
    dirs: Vec<DirResult>,
}

/// A point and its runs so far, in the order of their repeats.
#[derive(Debug, Clone)]
struct PointResult {
    point: Point,
    runs: Vec<RunResult>,
}

/// How a metric is read from a direction's result.
type Reader = fn(&DirResult) -> f64;

/// The metrics a point's repeats are summarised by: the index's key and how it is read.
const SPREAD: [(&str, Reader); 7] = [
    ("iops", |d| d.iops),
    ("bw_bytes", |d| d.bw_bytes),
    ("lat_mean_ns", |d| d.lat_mean_ns),
    ("p50_ns", |d| d.p50_ns),
    ("p90_ns", |d| d.p90_ns),
    ("p99_ns", |d| d.p99_ns),
    ("p99_9_ns", |d| d.p99_9_ns),
];

/// The metrics a point's noise is judged by (their names as the warnings say them).
const NOISE_OF: [(&str, &str); 2] = [("iops", "IOPS"), ("lat_mean_ns", "mean latency")];

/// One direction of a point over its repeats.
#[derive(Debug, Clone)]
struct DirSummary {
    /// The means, in a `DirResult` (so one-run points read as before).
    mean: DirResult,
    /// Per [`SPREAD`] key: the repeats' summary and each repeat's modified z-score.
    spread: Vec<(&'static str, Summary, Vec<f64>)>,
}

impl DirSummary {
    fn of(&self, key: &str) -> &Summary {
        &self
            .spread
            .iter()
            .find(|s| s.0 == key)
            .expect("a SPREAD key")
            .1
    }
}

impl PointResult {
    /// The first failed run's failure: one failed repeat fails the point.
    fn failure(&self) -> Option<&Failure> {
        self.runs.iter().find_map(|r| r.failure.as_ref())
    }

    fn status(&self) -> &'static str {
        if self.failure().is_some() {
            "failed"
        } else {
            "ok"
        }
    }

    /// The rows the point's runs have: fio's directions, then the http engine's classes
    /// (`http GET`, …) in the order first seen.
    fn row_names(&self) -> Vec<String> {
        let mut names: Vec<String> = results::DIRECTIONS.iter().map(|d| d.to_string()).collect();
        for d in self.runs.iter().flat_map(|r| &r.dirs) {
            if !names.contains(&d.dir) {
                names.push(d.dir.clone());
            }
        }
        names
    }

    /// Per direction, the repeats' means and spread; nothing for a failed point (no value
    /// of it is counted).
    fn summary(&self) -> Vec<DirSummary> {
        if self.failure().is_some() {
            return vec![];
        }
        let mut out = Vec::new();
        for dir in self.row_names() {
            let dir = dir.as_str();
            let parts: Vec<&DirResult> = self
                .runs
                .iter()
                .filter_map(|r| r.dirs.iter().find(|d| d.dir == dir))
                .collect();
            let Some(first) = parts.first() else { continue };
            let spread: Vec<(&'static str, Summary, Vec<f64>)> = SPREAD
                .iter()
                .map(|(k, f)| {
                    let xs: Vec<f64> = parts.iter().map(|d| f(d)).collect();
                    (*k, stats::summarize(&xs), stats::modified_z(&xs))
                })
                .collect();
            let n = parts.len() as f64;
            let mean_u = |f: fn(&DirResult) -> u64| {
                (parts.iter().map(|d| f(d) as f64).sum::<f64>() / n).round() as u64
            };
            let m = |k: &str| spread.iter().find(|s| s.0 == k).map_or(0.0, |s| s.1.mean);
            let mean = DirResult {
                dir: dir.to_string(),
                iops: m("iops"),
                bw_bytes: m("bw_bytes"),
                io_bytes: mean_u(|d| d.io_bytes),
                total_ios: mean_u(|d| d.total_ios),
                runtime_ms: mean_u(|d| d.runtime_ms),
                lat_mean_ns: m("lat_mean_ns"),
                lat_min_ns: parts.iter().map(|d| d.lat_min_ns).fold(f64::MAX, f64::min),
                lat_max_ns: parts.iter().map(|d| d.lat_max_ns).fold(0.0, f64::max),
                pct_of: first.pct_of,
                // The mean of the latency the percentiles are of, when every repeat has it.
                pct_mean_ns: parts
                    .iter()
                    .map(|d| d.pct_mean_ns)
                    .sum::<Option<f64>>()
                    .map(|s| s / n),
                p50_ns: m("p50_ns"),
                p90_ns: m("p90_ns"),
                p99_ns: m("p99_ns"),
                p99_9_ns: m("p99_9_ns"),
                bins: vec![],
            };
            out.push(DirSummary { mean, spread });
        }
        out
    }

    /// Why the point's numbers may not be trusted: a coefficient of variation above
    /// [`NOISE_CV`], or a repeat that is an outlier by the modified z-score compare uses.
    fn noise(&self) -> Vec<String> {
        let mut out = Vec::new();
        for d in self.summary() {
            for (key, name) in NOISE_OF {
                let Some((_, s, z)) = d.spread.iter().find(|s| s.0 == key) else {
                    continue;
                };
                if s.n < 2 || s.mean == 0.0 {
                    continue;
                }
                let cv = s.sd / s.mean;
                if cv > NOISE_CV {
                    out.push(format!(
                        "{} {name} varies by {:.1}% over {} repeats (σ/mean; above {:.0}%)",
                        d.mean.dir,
                        cv * 100.0,
                        s.n,
                        NOISE_CV * 100.0
                    ));
                }
                for (i, zi) in z.iter().enumerate().filter(|(_, z)| **z > OUTLIER_Z) {
                    let r = &self.runs[i];
                    let v = r
                        .dirs
                        .iter()
                        .find(|x| x.dir == d.mean.dir)
                        .map_or(0.0, |x| {
                            SPREAD.iter().find(|p| p.0 == key).map_or(0.0, |p| p.1(x))
                        });
                    out.push(format!(
                        "{} {name}: repeat {} ({}) is an outlier (modified z-score {:.1} > {OUTLIER_Z})",
                        d.mean.dir,
                        r.repeat,
                        metric_text(key, v),
                        zi
                    ));
                }
            }
        }
        out
    }
}

/// A value of an index key as the table shows it, with its unit.
fn metric_text(key: &str, v: f64) -> String {
    match key {
        "iops" => format!("{} IOPS", table::si(v)),
        "bw_bytes" => format!("{} MiB/s", table::mib_s(v)),
        _ => format!("{} us", table::us(v)),
    }
}

/// The sweep's identity, kept in `sweep.json`: a directory holds one sweep. A sweep run
/// once per point has no `repeat` key, as before repeats existed, so it resumes there.
fn plan_doc(a: &Args) -> doc::Plan {
    doc::Plan {
        args: a.job_args.clone(),
        axes: a
            .axes
            .iter()
            .map(|x| doc::AxisEntry {
                name: x.name.clone(),
                values: x.values.clone(),
                zip: x
                    .zipped
                    .iter()
                    .map(|(n, v)| doc::Zipped {
                        name: n.clone(),
                        values: v.clone(),
                    })
                    .collect(),
            })
            .collect(),
        repeat: (a.repeat > 1).then_some(a.repeat),
    }
}

/// Runs `iobench sweep ARGS`; returns the exit status.
pub fn main(args: &[String]) -> u8 {
    let study = crate::history::Study::begin("sweep");
    match sweep(args) {
        Ok(code) => study.finish(code),
        Err(e) => {
            eprintln!("iobench sweep: {e}");
            1
        }
    }
}

/// The file name stem of a point's `repeat`-th run: the point's own with one run, else
/// `<point>.r<k>`.
fn run_stem(p: &Point, repeat: usize, repeats: usize) -> String {
    let stem = axis::point_stem(p);
    if repeats > 1 {
        format!("{stem}.r{repeat}")
    } else {
        stem
    }
}

/// The order runs are made in: repeat 1 over the points forward, repeat 2 backward, ...
/// (so a drift over time does not fall on the same points each round). (point, repeat).
fn run_order(points: usize, repeats: usize) -> Vec<(usize, usize)> {
    let mut v = Vec::with_capacity(points * repeats);
    for r in 1..=repeats {
        if r % 2 == 1 {
            v.extend((0..points).map(|k| (k, r)));
        } else {
            v.extend((0..points).rev().map(|k| (k, r)));
        }
    }
    v
}

fn sweep(args: &[String]) -> Result<u8, String> {
    let Some(a) = parse_args(args)? else {
        print!("{}", SPEC.help());
        return Ok(0);
    };
    let inv = cli::parse_args(&a.job_args).map_err(|e| e.to_string())?;
    if inv.config.live_on_stdout() && a.format == Format::Json {
        return Err(
            "--output-format=json and --live=- both want stdout: write the live \
                    lines to a file (--live=FILE); the index is in the result directory"
                .into(),
        );
    }
    if inv.jobs.is_empty() {
        return Err(
            "no job given: name a job file or options such as --name=x --rw=read \
                    (see iobench sweep --help)"
                .into(),
        );
    }
    if inv.config.output.is_some() {
        return Err("--output: a sweep writes each point's JSON into its result directory (-o DIR); drop --output".into());
    }
    let points = axis::points(&a.axes)?;
    if points.len().saturating_mul(a.repeat) > axis::MAX_POINTS {
        return Err(format!(
            "--repeat {}: {} points × {} runs is more than the {} runs a sweep may make",
            a.repeat,
            points.len(),
            a.repeat,
            axis::MAX_POINTS
        ));
    }
    // Resolve every point before running any: a bad combination fails now, not at point 37.
    let mut planned = Vec::with_capacity(points.len());
    let mut first_jobs = Vec::new();
    // Each point is prepared as a plain run of it would be (job limit, terse version,
    // preflight), so a point a plain run refuses stops the sweep before any I/O.
    for p in &points {
        let point_inv = cli::Invocation {
            config: inv.config.clone(),
            jobs: apply(&inv.jobs, p)?,
            ..Default::default()
        };
        let prepared = crate::session::prepare(&point_inv)
            .map_err(|e| format!("point {}: {e}", axis::point_stem(p)))?;
        planned.push((p.clone(), estimate_s(&prepared.jobs), prepared));
        if first_jobs.is_empty() {
            first_jobs = planned[planned.len() - 1].2.jobs.clone();
        }
    }
    if a.dry_run {
        return dry_run(&a, &planned);
    }
    let dir = a.dir.clone().unwrap_or_else(default_dir);
    let mut own_names: Vec<String> = ["index.json", "index.csv", "index.json.tmp", "index.csv.tmp"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (p, _, _) in &planned {
        for r in 1..=a.repeat {
            let stem = run_stem(p, r, a.repeat);
            own_names.extend(
                ["json", "failed.json", "json.partial"]
                    .iter()
                    .map(|ext| format!("{stem}.{ext}")),
            );
        }
    }
    prepare_dir(&dir, &plan_doc(&a), a.fresh, &own_names)?;
    // The sweep records where and how it ran (the first point's jobs stand for the rest).
    let argv: Vec<String> = std::env::args().collect();
    let env = crate::context::env::collect(&argv, &first_jobs);
    let mut done: Vec<PointResult> = points
        .iter()
        .map(|p| PointResult {
            point: p.clone(),
            runs: vec![],
        })
        .collect();
    let order = run_order(points.len(), a.repeat);
    let mut progress = Progress::new("sweep", "point", order.len());
    let mut measured = estimate::Measured::new(points.len());
    if let Some(s) = order
        .iter()
        .map(|&(k, _)| planned[k].1)
        .sum::<Option<f64>>()
    {
        progress.note(&format!(
            "sweep: {} runs, estimated time {}",
            order.len(),
            duration_text(s)
        ));
    }
    let mut code = 0u8;
    // True once a run's live lines went to `--live`'s destination (a file then keeps them).
    let mut live_written = false;
    for (i, &(k, repeat)) in order.iter().enumerate() {
        let (p, _, prepared) = &planned[k];
        let stem = run_stem(p, repeat, a.repeat);
        let file = format!("{stem}.json");
        let what = if a.repeat > 1 {
            format!("{} (repeat {repeat}/{})", settings_text(p), a.repeat)
        } else {
            settings_text(p)
        };
        // A point kept from before is done unless it did no I/O where I/O was expected
        // (then it runs again: such a result is a failure, not a measurement).
        // Read as the sweep wrote it (a regular file here, not through a link).
        let kept = own_file(&dir, &file, results::MAX_INPUT_BYTES)?;
        if let Some(prev) = kept
            .and_then(|t| results::parse(&String::from_utf8_lossy(&t)).ok())
            .filter(|f| !f.jobs.is_empty() && f.no_io_failure().is_none())
        {
            progress.note(&format!(
                "sweep: point {}/{} {what} done before, skipped",
                i + 1,
                order.len(),
            ));
            done[k].runs.push(RunResult {
                repeat,
                file,
                exit_code: Some(0),
                elapsed_s: 0.0,
                failure: None,
                dirs: results::totals(&prev),
            });
            continue;
        }
        // The runs left: each from its limits, else its point's runs so far, else the
        // speed of the runs done (a size-bound point not run yet).
        let left: Option<f64> = order[i..]
            .iter()
            .map(|&(k, _)| measured.next_s(k, &planned[k].2.jobs, planned[k].1))
            .sum();
        progress.step(i + 1, &what, left);
        let t0 = Instant::now();
        crate::history::Study::label_next(&stem);
        if prepared.config.live.is_some() {
            let point: serde_json::Map<String, Value> = p
                .iter()
                .map(|(n, v)| (n.clone(), Value::String(v.clone())))
                .collect();
            crate::present::jsonlines::tag_next(
                json!({
                    "kind": "sweep",
                    "point": point,
                    "file": file,
                    "repeat": repeat,
                    "run": i + 1,
                    "runs": order.len(),
                }),
                live_written,
            );
            live_written = true;
        }
        let (exit_code, r) = run_point(prepared, &dir, &stem);
        let elapsed = t0.elapsed().as_secs_f64();
        progress.done();
        let (failure, dirs) = match r {
            Ok(dirs) => (None, dirs),
            Err(f) => (Some(f), vec![]),
        };
        let file = if failure.is_none() {
            file
        } else {
            code = code.max(1);
            format!("{stem}.failed.json")
        };
        measured.add(k, elapsed, &dirs);
        match &failure {
            None => progress.note(&format!("sweep:   {}", brief(&dirs))),
            Some(f) => progress.note(&format!("sweep:   {what} FAILED: {}", f.reason)),
        }
        done[k].runs.push(RunResult {
            repeat,
            file,
            exit_code,
            elapsed_s: elapsed,
            failure,
            dirs,
        });
        done[k].runs.sort_by_key(|r| r.repeat);
        write_index(&dir, &a, &env, &done)?;
        if let Some(sig) = crate::run::signals::signalled() {
            progress.finish();
            eprintln!("sweep: stopped by signal {sig} after {} of {} runs; run the same sweep again to resume", i + 1, order.len());
            return Ok(128u8.saturating_add(sig as u8));
        }
    }
    progress.finish();
    let index = write_index(&dir, &a, &env, &done)?;
    for r in &done {
        for n in r.noise() {
            eprintln!(
                "sweep: warning: point {} is noisy: {n}",
                settings_text(&r.point)
            );
        }
    }
    let t = result_table(
        &a.axes,
        &done,
        a.repeat,
        a.margin.unwrap_or(stats::DEFAULT_MARGIN_PCT),
    );
    // With `--live=-` stdout is the JSON Lines' alone, and with `--output-format=json`
    // the index's: the table goes to stderr.
    let json = a.format == Format::Json;
    super::table::emit(
        inv.config.live_on_stdout() || json,
        &if a.format == Format::Markdown {
            t.markdown()
        } else {
            t.text()
        },
    );
    if json {
        super::table::emit(false, &index);
    }
    eprintln!(
        "sweep: {} points{} in {}, results in {}",
        done.len(),
        if a.repeat > 1 {
            format!(" × {} repeats", a.repeat)
        } else {
            String::new()
        },
        duration_text(progress.elapsed_s()),
        dir.display()
    );
    Ok(code)
}

/// How long `--dry-run` lets a size-bound point run to measure its speed.
pub const CALIBRATION_US: u64 = 500_000;

/// Why a size-bound point cannot be calibrated without changing anything: it writes or
/// trims, a file it needs does not exist yet (the run would lay it out), or its size is
/// not known in bytes. None when a short run only reads what is already there.
fn calibration_refused(jobs: &[Job]) -> Option<String> {
    for j in jobs {
        let p = j.workload.pattern;
        if p != crate::defs::ddir::Pattern::Read && p != crate::defs::ddir::Pattern::RandRead {
            return Some(format!(
                "job '{}' has rw={}, and a calibration run would change the target",
                j.name,
                p.fio_name()
            ));
        }
        if j.exec.engine.flags().no_local_disk() {
            continue;
        }
        for path in j.files.all_paths(&j.name, j.exec.numjobs) {
            if std::fs::metadata(&path).is_err() {
                return Some(format!(
                    "job '{}': {path} does not exist yet, and a calibration run would lay it out",
                    j.name
                ));
            }
        }
    }
    None
}

/// A size-bound point's time from a run of at most [`CALIBRATION_US`]: the speed its
/// jobs reached over their own runtime (the setup and the report are not I/O), at which
/// the point's bytes are timed by its own limits. Err: why it cannot be calibrated.
fn calibrate(prepared: &Prepared) -> Result<f64, String> {
    if let Some(why) = calibration_refused(&prepared.jobs) {
        return Err(why);
    }
    if estimate::unpaced_bytes(&prepared.jobs).is_none() {
        return Err(
            "a job's time is not bound: time_based without a runtime, or a size that is a \
             percentage or the file's own (its bytes unknown)"
                .into(),
        );
    }
    let mut p = prepared.clone();
    p.config.formats = vec![OutputFormat::Json];
    p.config.output = None;
    p.config.live = None;
    p.config.metrics = None;
    for j in &mut p.jobs {
        j.exec.runtime_us = match j.exec.runtime_us {
            0 => CALIBRATION_US,
            r => r.min(CALIBRATION_US),
        };
    }
    let f = crate::session::run_quiet(&p);
    if f.code != 0 {
        return Err(format!(
            "its calibration run failed (exit status {})",
            f.code
        ));
    }
    let dirs: Vec<DirResult> = results::parse(&f.report())
        .map(|r| r.jobs.into_iter().flat_map(|j| j.dirs).collect())
        .map_err(|e| format!("its calibration run: {e}"))?;
    let speed = estimate::speed_of(&dirs).ok_or("its calibration run moved no bytes")?;
    estimate::run_s(&prepared.jobs, Some(speed))
        .ok_or_else(|| "its time is not bound by its size".to_string())
}

/// `--dry-run`: the points, each one's time, and the sweep's. A size-bound point's time
/// comes from a short calibration run when that only reads what is there.
fn dry_run(a: &Args, planned: &[(Point, Option<f64>, Prepared)]) -> Result<u8, String> {
    println!("{} points", planned.len());
    let mut total = Some(0.0);
    let mut why_not: Option<String> = None;
    let mut calibrated = 0;
    for (k, (p, est, prepared)) in planned.iter().enumerate() {
        let text = match est {
            Some(s) => duration_text(*s),
            None if why_not.is_some() => "size-bound".into(),
            None => match calibrate(prepared) {
                Ok(s) => {
                    calibrated += 1;
                    total = total.map(|t| t + s);
                    let about = if s < 1.0 {
                        "under 1s".to_string()
                    } else {
                        format!("about {}", duration_text(s))
                    };
                    format!("size-bound, {about} by calibration")
                }
                Err(e) => {
                    why_not = Some(format!("point {} ({}): {e}", k + 1, settings_text(p)));
                    total = None;
                    "size-bound".into()
                }
            },
        };
        if let Some(s) = est {
            total = total.map(|t| t + s);
        }
        println!("  {:>4}  {}  ({text})", k + 1, settings_text(p));
    }
    let times = if a.repeat > 1 {
        format!(" ({} repeats)", a.repeat)
    } else {
        String::new()
    };
    match (total, why_not) {
        (Some(s), _) => println!(
            "estimated time: {}{times}{}",
            duration_text(s * a.repeat as f64),
            if calibrated > 0 {
                format!(
                    " ({calibrated} size-bound point{} timed by a calibration run of at most {} ms each)",
                    if calibrated == 1 { "" } else { "s" },
                    CALIBRATION_US / 1000
                )
            } else {
                String::new()
            }
        ),
        (None, Some(why)) => println!(
            "estimated time: unknown: size-bound points are timed by a short calibration run, \
             and {why}"
        ),
        (None, None) => println!("estimated time: unknown"),
    }
    Ok(0)
}

/// Runs one point with its JSON+ going to `<stem>.json` (via a partial file, so an
/// interrupted point is never taken as done, and a failed one is kept as
/// `<stem>.failed.json`). Returns the exit status (None: the run could not start or
/// write its report) and the totals, or why the run failed.
fn run_point(
    prepared: &Prepared,
    dir: &Path,
    stem: &str,
) -> (Option<u8>, Result<Vec<DirResult>, Failure>) {
    let partial = dir.join(format!("{stem}.json.partial"));
    let point = prepared.reporting_to(&partial.to_string_lossy(), vec![OutputFormat::JsonPlus]);
    let ran = match crate::session::run_reported(&point) {
        Ok(r) => r,
        Err(reason) => {
            let _ = std::fs::remove_file(&partial);
            return (
                None,
                Err(Failure {
                    error: None,
                    reason,
                }),
            );
        }
    };
    let keep = |name: String| -> Result<(), Failure> {
        std::fs::rename(&partial, dir.join(name)).map_err(|e| Failure {
            error: None,
            reason: format!("{}: {e}", partial.display()),
        })
    };
    if let Some(sig) = crate::run::signals::signalled() {
        let _ = std::fs::remove_file(&partial);
        let reason = format!("stopped by signal {sig}");
        return (
            Some(ran.code),
            Err(Failure {
                error: None,
                reason,
            }),
        );
    }
    // The first job that failed says why (fio's `error` and its text).
    let failed_job = ran.outcome.results.iter().find(|r| r.error != 0);
    if ran.code == 0 && failed_job.is_none() {
        // The directions, then the http engine's classes (under its iobench-only options).
        let read = results::read(&partial);
        // A point that did no I/O where its jobs were to (a run that measured nothing
        // and still exited 0) is a failure, never an empty row.
        let expects_io = prepared.jobs.iter().any(|j| !j.exec.engine.flags().no_io);
        if let Some(reason) = read
            .as_ref()
            .ok()
            .filter(|f| !f.did_io() && expects_io)
            .and_then(|f| f.no_io_failure())
        {
            let failure = Failure {
                error: None,
                reason,
            };
            let failure = keep(format!("{stem}.failed.json")).err().unwrap_or(failure);
            return (Some(ran.code), Err(failure));
        }
        let totals = read.map(|f| {
            let mut t = results::totals(&f);
            t.extend(results::http_totals(&f));
            t
        });
        if let Err(f) = keep(format!("{stem}.json")) {
            return (Some(ran.code), Err(f));
        }
        // A result that cannot be read back is no measurement either.
        return (
            Some(ran.code),
            totals.map_err(|reason| Failure {
                error: None,
                reason,
            }),
        );
    }
    let failure = match failed_job {
        Some(j) => Failure {
            error: Some(j.error),
            reason: format!(
                "job '{}' failed with error {} ({}){}",
                j.name,
                j.error,
                crate::report::strerror(j.error),
                if j.verror.is_empty() {
                    String::new()
                } else {
                    format!(": {}", j.verror)
                }
            ),
        },
        None => Failure {
            error: None,
            reason: format!("the run ended with exit status {}", ran.code),
        },
    };
    let failure = keep(format!("{stem}.failed.json")).err().unwrap_or(failure);
    (Some(ran.code), Err(failure))
}
fn default_dir() -> PathBuf {
    // Seconds since the epoch keep the name sortable and free of spaces.
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    PathBuf::from(format!("sweep-{secs}"))
}

/// Makes the result directory, or checks that the one there holds this same sweep.
/// `own_names` are the files the sweep writes there besides `sweep.json`.
fn prepare_dir(
    dir: &Path,
    plan: &doc::Plan,
    fresh: bool,
    own_names: &[String],
) -> Result<(), String> {
    // Made, or checked: no other user may plant links or swap run files in it.
    crate::safefs::output_dir("-o", dir)?;
    let plan_path = dir.join("sweep.json");
    // What a resumed sweep reads back is looked at first, before anything is written or
    // removed: its plan, its index (under --fresh) and every file it would take as a point.
    if let Some(text) = own_file(dir, "sweep.json", MAX_PLAN_BYTES)? {
        let old = results::parse_doc(String::from_utf8_lossy(&text).trim_start())
            .ok()
            .and_then(|v| serde_json::from_value::<doc::Plan>(v).ok());
        for name in own_names {
            check_own(dir, name)?;
        }
        if old.as_ref() != Some(plan) {
            if !fresh {
                return Err(format!(
                    "{} holds another sweep (its sweep.json differs): use another -o DIR, or --fresh to start over there",
                    dir.display()
                ));
            }
            remove_points(dir)?;
        }
    } else {
        // No sweep here yet: whatever already has the name of a file this sweep writes is
        // someone else's, and stays (with --fresh too: there is no earlier sweep to undo).
        for name in own_names {
            let path = dir.join(name);
            if std::fs::symlink_metadata(&path).is_ok() {
                return Err(format!(
                    "{}: already there and not written by a sweep (no sweep.json beside it); a sweep would overwrite it: use another -o DIR, or move it",
                    path.display()
                ));
            }
        }
    }
    let text = serde_json::to_string_pretty(plan).unwrap_or_default();
    crate::safefs::replace(&plan_path, (text + "\n").as_bytes())
        .map_err(|e| format!("{}: {e}", plan_path.display()))
}

/// The largest `sweep.json` a resumed sweep reads: 64 MiB (a plan is its axes and job
/// arguments: kilobytes).
const MAX_PLAN_BYTES: u64 = 64 << 20;

/// File `name` of the result directory as the sweep wrote it (see `safefs::read_own`:
/// a regular file, not a link, a FIFO or a device, of at most `cap` bytes); None: there
/// is none.
fn own_file(dir: &Path, name: &str, cap: u64) -> Result<Option<Vec<u8>>, String> {
    crate::safefs::read_own(dir, Path::new(name), cap)
        .map_err(|e| format!("{}: {e}", dir.join(name).display()))
}

/// Refuses a file the sweep would read back or replace when it is no file a sweep
/// writes: a link, a FIFO, a device, a directory, or a regular file above the limit of
/// every input.
fn check_own(dir: &Path, name: &str) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    let path = dir.join(name);
    let md = match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        r => r.map_err(|e| format!("{}: {e}", path.display()))?,
    };
    let ft = md.file_type();
    let what = match () {
        _ if ft.is_file() && md.len() <= results::MAX_INPUT_BYTES => return Ok(()),
        _ if ft.is_file() => {
            return Err(format!(
                "{}: {} bytes, more than the {} a sweep's file may have (not one a sweep \
                 wrote: remove it, or use another -o DIR)",
                path.display(),
                md.len(),
                results::MAX_INPUT_BYTES
            ))
        }
        _ if ft.is_symlink() => "a symbolic link",
        _ if ft.is_fifo() => "a FIFO",
        _ if ft.is_socket() => "a socket",
        _ if ft.is_dir() => "a directory",
        _ => "a device",
    };
    Err(format!(
        "{}: {what}, not a regular file: a sweep reads its own files back only as regular \
         files in its -o DIR, not through links (remove it, or use another -o DIR)",
        path.display()
    ))
}

/// Removes the point files an earlier sweep's index lists (nothing else in the
/// directory); an index that is not a regular file within the limits stops the sweep
/// before anything is removed.
fn remove_points(dir: &Path) -> Result<(), String> {
    let index = own_file(dir, "index.json", results::MAX_INPUT_BYTES)?;
    let parsed = index.and_then(|t| {
        results::parse_doc(String::from_utf8_lossy(&t).trim_start())
            .ok()
            .and_then(|v| serde_json::from_value::<doc::SweepIndex>(v).ok())
    });
    if let Some(v) = parsed {
        for p in &v.points {
            let runs = p.runs.iter().map(|r| Some(&r.file));
            for f in std::iter::once(p.file.as_ref()).chain(runs).flatten() {
                if !f.contains('/') {
                    let _ = std::fs::remove_file(dir.join(f));
                }
            }
        }
    }
    for name in ["index.json", "index.csv"] {
        check_own(dir, name)?;
        let _ = std::fs::remove_file(dir.join(name));
    }
    Ok(())
}

fn settings_text(p: &Point) -> String {
    p.iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn brief(dirs: &[DirResult]) -> String {
    dirs.iter()
        .map(|d| {
            format!(
                "{} {} IOPS, {} MiB/s, lat {} us ({} p99 {} us)",
                d.dir,
                table::si(d.iops),
                table::mib_s(d.bw_bytes),
                table::us(d.lat_mean_ns),
                d.pct_of,
                table::us(d.p99_ns)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn totals_doc(d: &DirResult) -> doc::Totals {
    doc::Totals {
        iops: d.iops,
        bw_bytes: d.bw_bytes,
        io_bytes: d.io_bytes,
        total_ios: d.total_ios,
        runtime_ms: d.runtime_ms,
        lat_mean_ns: d.lat_mean_ns,
        lat_min_ns: d.lat_min_ns,
        lat_max_ns: d.lat_max_ns,
        percentiles_of: if d.pct_of == "lat" {
            doc::PercentilesOf::Lat
        } else {
            doc::PercentilesOf::Clat
        },
        p50_ns: d.p50_ns,
        p90_ns: d.p90_ns,
        p99_ns: d.p99_ns,
        p99_9_ns: d.p99_9_ns,
    }
}

/// A direction of a point: the means (the keys a one-run point has), `n` the repeats
/// averaged, and `spread` per metric: mean, sd, min, max and cv (σ / mean).
fn summary_doc(d: &DirSummary) -> doc::Summary {
    let stat = |key: &str| {
        let s = d.of(key);
        let cv = if s.mean == 0.0 { 0.0 } else { s.sd / s.mean };
        doc::Stat {
            mean: s.mean,
            sd: s.sd,
            min: s.min,
            max: s.max,
            cv,
        }
    };
    doc::Summary {
        mean: totals_doc(&d.mean),
        n: d.of("iops").n,
        spread: doc::Spread {
            iops: stat("iops"),
            bw_bytes: stat("bw_bytes"),
            lat_mean_ns: stat("lat_mean_ns"),
            p50_ns: stat("p50_ns"),
            p90_ns: stat("p90_ns"),
            p99_ns: stat("p99_ns"),
            p99_9_ns: stat("p99_9_ns"),
        },
    }
}

fn failure_doc(f: &Failure) -> doc::Failure {
    doc::Failure {
        error: f.error,
        reason: f.reason.clone(),
    }
}

fn status_of(f: Option<&Failure>) -> doc::Status {
    match f {
        Some(_) => doc::Status::Failed,
        None => doc::Status::Ok,
    }
}

/// The version of index.json's layout (docs/schema/sweep-index.schema.json).
pub const INDEX_SCHEMA_VERSION: u32 = doc::SCHEMA_VERSION;

/// Writes `index.json` and `index.csv` for the runs so far (rewritten after each);
/// returns the index's JSON text.
fn write_index(dir: &Path, a: &Args, env: &Value, done: &[PointResult]) -> Result<String, String> {
    let points: Vec<doc::PointEntry> = done
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.runs.is_empty())
        .map(|(k, r)| {
            let runs: Vec<doc::RunEntry> = r
                .runs
                .iter()
                .map(|run| {
                    let mut rows = doc::Rows::default();
                    for d in &run.dirs {
                        rows.put(&d.dir, totals_doc(d));
                    }
                    doc::RunEntry {
                        repeat: run.repeat,
                        file: run.file.clone(),
                        status: status_of(run.failure.as_ref()),
                        exit_code: run.exit_code,
                        elapsed_s: run.elapsed_s,
                        failed: run.failure.is_some(),
                        failure: run.failure.as_ref().map(failure_doc),
                        rows,
                    }
                })
                .collect();
            let failed_run = r.runs.iter().find(|x| x.failure.is_some());
            let mut rows = doc::Rows::default();
            for d in r.summary() {
                rows.put(&d.mean.dir, summary_doc(&d));
            }
            doc::PointEntry {
                point: k + 1,
                params: doc::Ordered(r.point.clone()),
                file: Some(r.runs[0].file.clone()),
                status: status_of(r.failure()),
                exit_code: failed_run.unwrap_or(&r.runs[0]).exit_code,
                elapsed_s: r.runs.iter().map(|x| x.elapsed_s).sum::<f64>(),
                repeats: a.repeat,
                runs,
                failed: r.failure().is_some(),
                failure: r.failure().map(failure_doc),
                rows,
                noise: r.noise(),
            }
        })
        .collect();
    let index = doc::SweepIndex {
        schema_version: INDEX_SCHEMA_VERSION,
        iobench: crate::report::VERSION.to_string(),
        sweep: plan_doc(a),
        iobench_env: env.clone(),
        noise_cv: NOISE_CV,
        points,
    };
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        crate::safefs::replace(&path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    let text = serde_json::to_string_pretty(&index).unwrap_or_default() + "\n";
    write("index.json", text.clone())?;
    write("index.csv", index_csv(done))?;
    Ok(text)
}

/// `index.csv`: one row per point and direction (one for a failed point), the repeats'
/// means first, as a one-run sweep's columns, then the spread and the failure.
fn index_csv(done: &[PointResult]) -> String {
    let names: Vec<&String> = done
        .first()
        .map_or(vec![], |r| r.point.iter().map(|p| &p.0).collect());
    let mut csv = String::from("point");
    for n in &names {
        csv.push(',');
        csv.push_str(n);
    }
    csv.push_str(
        ",dir,iops,bw_bytes,lat_mean_ns,p50_ns,p90_ns,p99_ns,p99_9_ns,status,file,\
         runs,iops_sd,iops_min,iops_max,bw_sd,bw_min,bw_max,lat_mean_sd,lat_mean_min,\
         lat_mean_max,p99_sd,p99_min,p99_max,noisy,failed,error,reason\n",
    );
    let quote = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    for (k, r) in done.iter().enumerate().filter(|(_, r)| !r.runs.is_empty()) {
        let lead: String = r
            .point
            .iter()
            .map(|(_, v)| format!(",{}", quote(v)))
            .collect();
        let summary = r.summary();
        let rows: Vec<Option<&DirSummary>> = if summary.is_empty() {
            vec![None]
        } else {
            summary.iter().map(Some).collect()
        };
        let noisy = !r.noise().is_empty();
        let (failed, error, reason) = match r.failure() {
            Some(f) => (
                "true",
                f.error.map_or(String::new(), |e| e.to_string()),
                quote(&f.reason),
            ),
            None => ("false", String::new(), String::new()),
        };
        for s in rows {
            // dir and its 7 numbers: 8 fields, 7 commas (a failed point has none).
            let nums = s.map_or(",,,,,,,".to_string(), |s| {
                let d = &s.mean;
                format!(
                    "{},{:.3},{:.0},{:.1},{:.0},{:.0},{:.0},{:.0}",
                    d.dir,
                    d.iops,
                    d.bw_bytes,
                    d.lat_mean_ns,
                    d.p50_ns,
                    d.p90_ns,
                    d.p99_ns,
                    d.p99_9_ns
                )
            });
            let spread = s.map_or(",,,,,,,,,,,".to_string(), |s| {
                ["iops", "bw_bytes", "lat_mean_ns", "p99_ns"]
                    .iter()
                    .map(|k| {
                        let x = s.of(k);
                        format!("{:.3},{:.3},{:.3}", x.sd, x.min, x.max)
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            });
            csv.push_str(&format!(
                "{}{lead},{nums},{},{},{},{spread},{noisy},{failed},{error},{reason}\n",
                k + 1,
                r.status(),
                quote(&r.runs[0].file),
                r.runs.len(),
            ));
        }
    }
    csv
}

/// `52.1k ± 1.2k` (or the value alone for one run).
fn mean_sd(key: &str, s: &Summary) -> String {
    let f = |v: f64| match key {
        "iops" => table::si(v),
        "bw_bytes" => table::mib_s(v),
        _ => table::us(v),
    };
    if s.n > 1 {
        format!("{} ± {}", f(s.mean), f(s.sd))
    } else {
        f(s.mean)
    }
}

/// With repeats, what the step from the previous value of the last axis (the other axes
/// alike) did to the first direction's IOPS: "vs iodepth=1: different (p 0.0012, +80.1 %)",
/// "… equivalent within ±5 %" or "… cannot tell: …". None for the first value, or when
/// that point failed.
fn step_verdict(
    axes: &[Axis],
    done: &[PointResult],
    summaries: &[Vec<DirSummary>],
    i: usize,
    margin: f64,
) -> Option<String> {
    let last = axes.last()?;
    let tail = 1 + last.zipped.len();
    let here = &done[i].point;
    let fixed = here.len().checked_sub(tail)?;
    let value = &here.get(fixed)?.1;
    let pos = last.values.iter().position(|v| v == value)?;
    let prev_value = last.values.get(pos.checked_sub(1)?)?;
    let j = done.iter().position(|p| {
        p.point.len() == here.len()
            && p.point[..fixed] == here[..fixed]
            && p.point[fixed].1 == *prev_value
    })?;
    let (a, b) = (summaries[j].first()?, summaries[i].first()?);
    if a.mean.dir != b.mean.dir {
        return None;
    }
    let v = stats::judge(a.of("iops"), b.of("iops"), margin);
    Some(format!(
        "{} IOPS vs {}={prev_value}: {}",
        b.mean.dir,
        last.name,
        v.text()
    ))
}

/// The final table: one row per point, its settings, then per direction IOPS, MiB/s,
/// mean total latency and the p99 of the latency the percentiles are of (µs); with
/// repeats, each as mean ± σ and the IOPS's range; a last `note` column says why a point
/// failed or is noisy.
fn result_table(axes: &[Axis], done: &[PointResult], repeats: usize, margin: f64) -> Table {
    let mut header: Vec<String> = Vec::new();
    for a in axes {
        header.push(a.name.clone());
        header.extend(a.zipped.iter().map(|z| z.0.clone()));
    }
    let summaries: Vec<Vec<DirSummary>> = done.iter().map(PointResult::summary).collect();
    // fio's directions, then the http engine's classes, as the points have them.
    let mut dirs: Vec<&str> = Vec::new();
    for d in results::DIRECTIONS.into_iter().chain(
        summaries
            .iter()
            .flatten()
            .map(|x| x.mean.dir.as_str())
            .filter(|d| d.starts_with("http ")),
    ) {
        if !dirs.contains(&d) && summaries.iter().any(|s| s.iter().any(|x| x.mean.dir == d)) {
            dirs.push(d);
        }
    }
    // The percentiles are of clat unless the jobs asked for lat_percentiles.
    let pct_of = |d: &str| {
        summaries
            .iter()
            .flatten()
            .find(|x| x.mean.dir == d)
            .map_or("clat", |x| x.mean.pct_of)
    };
    let cols: Vec<&str> = if repeats > 1 {
        vec!["iops", "range", "bw_bytes", "lat_mean_ns", "p99_ns"]
    } else {
        vec!["iops", "bw_bytes", "lat_mean_ns", "p99_ns"]
    };
    for d in &dirs {
        for c in &cols {
            header.push(match *c {
                "iops" => format!("{d} IOPS"),
                "range" => format!("{d} IOPS min-max"),
                "bw_bytes" => format!("{d} MiB/s"),
                "lat_mean_ns" => format!("{d} lat us"),
                _ => format!("{d} {} p99 us", pct_of(d)),
            });
        }
    }
    let notes: Vec<String> = done
        .iter()
        .enumerate()
        .map(|(i, r)| match r.failure() {
            Some(f) => format!("failed: {}", f.reason),
            None => {
                let mut n: Vec<String> = r
                    .noise()
                    .first()
                    .map(|n| format!("noisy: {n}"))
                    .into_iter()
                    .collect();
                if repeats > 1 {
                    n.extend(step_verdict(axes, done, &summaries, i, margin));
                }
                n.join("; ")
            }
        })
        .collect();
    let with_notes = notes.iter().any(|n| !n.is_empty());
    if with_notes {
        header.push("note".into());
    }
    let rows = done
        .iter()
        .zip(&summaries)
        .zip(&notes)
        .filter(|((r, _), _)| !r.runs.is_empty())
        .map(|((r, sums), note)| {
            let mut row: Vec<String> = r.point.iter().map(|p| p.1.clone()).collect();
            for d in &dirs {
                match sums.iter().find(|x| x.mean.dir == *d) {
                    Some(x) => row.extend(cols.iter().map(|c| match *c {
                        "range" => {
                            let s = x.of("iops");
                            format!("{}-{}", table::si(s.min), table::si(s.max))
                        }
                        k => mean_sd(k, x.of(k)),
                    })),
                    None => row.extend(std::iter::repeat_n(
                        if r.failure().is_none() { "-" } else { "failed" }.to_string(),
                        cols.len(),
                    )),
                }
            }
            if with_notes {
                row.push(if note.is_empty() {
                    "-".into()
                } else {
                    note.clone()
                });
            }
            row
        })
        .collect();
    Table { header, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn flags_and_job_arguments_are_told_apart() {
        let a = parse_args(&s(&[
            "--axis",
            "iodepth=1,2",
            "--zip=iodepth_batch_submit=1,1",
            "-o",
            "d",
            "--name=x",
            "--rw=read",
            "--",
            "--dry-run",
        ]))
        .unwrap()
        .expect("not --help");
        assert_eq!(a.axes.len(), 1);
        assert_eq!(a.axes[0].zipped.len(), 1);
        assert_eq!(a.dir, Some(PathBuf::from("d")));
        assert!(!a.dry_run, "after --, everything belongs to the job");
        assert_eq!(a.job_args, s(&["--name=x", "--rw=read", "--dry-run"]));
    }

    #[test]
    fn bad_sweeps_are_refused() {
        assert!(parse_args(&s(&["--name=x"]))
            .unwrap_err()
            .contains("no --axis"));
        assert!(parse_args(&s(&["--zip", "bs=4k"]))
            .unwrap_err()
            .contains("--axis first"));
        assert!(parse_args(&s(&["--axis", "bs=4k", "--axis", "bs=8k"]))
            .unwrap_err()
            .contains("twice"));
    }

    fn run_of(repeat: usize, iops: f64, lat: f64) -> RunResult {
        RunResult {
            repeat,
            file: format!("r{repeat}.json"),
            exit_code: Some(0),
            elapsed_s: 1.0,
            failure: None,
            dirs: vec![DirResult {
                dir: "read".into(),
                iops,
                lat_mean_ns: lat,
                pct_of: "clat",
                ..Default::default()
            }],
        }
    }

    #[test]
    fn noise_by_spread_and_by_outliers() {
        let point = |runs| PointResult {
            point: vec![("bs".into(), "4k".into())],
            runs,
        };
        // Steady: within 1 %, no warning.
        let steady = point(vec![
            run_of(1, 520.0, 100.0),
            run_of(2, 524.0, 100.0),
            run_of(3, 518.0, 100.0),
        ]);
        assert!(steady.noise().is_empty(), "{:?}", steady.noise());
        let s = &steady.summary()[0];
        assert_eq!((s.of("iops").min, s.of("iops").max), (518.0, 524.0));
        // One run far off (the issue's 1488 MiB/s among ~520): CV above 5 % and an
        // outlier by the modified z-score.
        let noisy = point(vec![
            run_of(1, 520.0, 100.0),
            run_of(2, 1488.0, 100.0),
            run_of(3, 522.0, 100.0),
            run_of(4, 518.0, 100.0),
        ]);
        let n = noisy.noise();
        assert!(n.iter().any(|w| w.contains("IOPS varies by")), "{n:?}");
        assert!(
            n.iter()
                .any(|w| w.contains("repeat 2 (1.49k IOPS) is an outlier")),
            "{n:?}"
        );
        // A failed repeat fails the point, and none of its numbers count.
        let mut failed = noisy.clone();
        failed.runs[2].failure = Some(Failure {
            error: Some(22),
            reason: "bad".into(),
        });
        assert_eq!(failed.status(), "failed");
        assert!(failed.summary().is_empty() && failed.noise().is_empty());
    }

    #[test]
    fn notes_say_different_equivalent_or_cannot_tell_along_the_last_axis() {
        let axes = vec![Axis {
            name: "iodepth".into(),
            values: s(&["1", "2", "4", "8"]),
            zipped: vec![],
        }];
        let point = |v: &str, iops: [f64; 3]| PointResult {
            point: vec![("iodepth".into(), v.into())],
            runs: (0..3).map(|k| run_of(k + 1, iops[k], 100.0)).collect(),
        };
        let done = vec![
            point("1", [1000.0, 1002.0, 998.0]),
            point("2", [2000.0, 2004.0, 1996.0]),
            point("4", [2001.0, 2003.0, 1999.0]),
            point("8", [1500.0, 2900.0, 2000.0]),
        ];
        let t = result_table(&axes, &done, 3, 5.0);
        let note = |r: usize| t.rows[r].last().unwrap().clone();
        assert_eq!(note(0), "-");
        assert!(
            note(1).starts_with("read IOPS vs iodepth=1: different (p < 0.0001, +100.0 %)"),
            "{}",
            note(1)
        );
        assert!(
            note(2).ends_with("read IOPS vs iodepth=2: equivalent within ±5 %"),
            "{}",
            note(2)
        );
        assert!(
            note(3).contains("vs iodepth=4: cannot tell: with 3 runs"),
            "{}",
            note(3)
        );
        assert!(note(3).contains("run about"), "{}", note(3));
    }

    /// The fields of each line of `csv`, read as RFC 4180 says (quotes, doubled quotes).
    fn csv_fields(csv: &str) -> Vec<Vec<String>> {
        let mut rows = vec![];
        for line in csv.lines() {
            let (mut row, mut cur, mut quoted) = (vec![], String::new(), false);
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '"' if quoted && chars.peek() == Some(&'"') => {
                        cur.push('"');
                        chars.next();
                    }
                    '"' => quoted = !quoted,
                    ',' if !quoted => row.push(std::mem::take(&mut cur)),
                    c => cur.push(c),
                }
            }
            row.push(cur);
            rows.push(row);
        }
        rows
    }

    #[test]
    fn index_csv_rows_have_the_headers_field_count() {
        let ok = PointResult {
            point: vec![("bs".into(), "4k".into())],
            runs: vec![run_of(1, 500.0, 100.0), run_of(2, 510.0, 100.0)],
        };
        let mut failed = PointResult {
            point: vec![("bs".into(), "8k,x".into())],
            runs: vec![run_of(1, 0.0, 0.0)],
        };
        failed.runs[0].failure = Some(Failure {
            error: Some(5),
            reason: "I/O error, \"bad\"".into(),
        });
        failed.runs[0].dirs.clear();
        let rows = csv_fields(&index_csv(&[ok, failed]));
        assert_eq!(rows.len(), 3);
        let head = &rows[0];
        for r in &rows[1..] {
            assert_eq!(r.len(), head.len(), "{r:?}");
        }
        let col =
            |r: &Vec<String>, name: &str| r[head.iter().position(|h| h == name).unwrap()].clone();
        assert_eq!(col(&rows[2], "status"), "failed");
        assert_eq!(col(&rows[2], "file"), "r1.json");
        assert_eq!(col(&rows[2], "bs"), "8k,x");
        assert_eq!(col(&rows[2], "reason"), "I/O error, \"bad\"");
        assert_eq!(col(&rows[1], "status"), "ok");
    }

    #[test]
    fn repeats_alternate_the_points_order() {
        assert_eq!(
            run_order(3, 3),
            vec![
                (0, 1),
                (1, 1),
                (2, 1),
                (2, 2),
                (1, 2),
                (0, 2),
                (0, 3),
                (1, 3),
                (2, 3)
            ]
        );
    }
}
