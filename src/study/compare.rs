//! `iobench compare`: honest comparisons. Each side is a job, run `--repeat` times in
//! alternation with the others (A B A B …, after `--warmup` discarded rounds), or a set
//! of result files (iobench's or fio's own JSON). Per job and direction it reports mean
//! ± σ, range and median of each metric, flags outliers, and gives each side's speed
//! relative to the first with its propagated uncertainty and Welch's t-test p-value;
//! `--fail-if-slower P%` turns that into a regression gate (exit status 2).

use super::progress::Progress;
use super::stats::{self, Summary, OUTLIER_Z};
use super::table::{self, Table};
use super::tool::{self, Tool};
use super::vocab::{self, Format};
use crate::cli::{self, OutputFormat};
use crate::flags::{self, Flag, Spec, Takes};
use crate::present::outputs;
use crate::present::results::{self, Metric, ResultFile};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// `iobench compare`'s flags, before the first `--`.
pub const SPEC: Spec<Args> = Spec {
    command: "compare",
    usage: "\
usage: iobench compare [OPTIONS] RESULT.json RESULT.json ...
       iobench compare [OPTIONS] -- JOB_A... -- JOB_B... [-- ...]

Each side after a -- is a job (a plain run's arguments), run --repeat times in turn with
the others (A B A B ...), or one or more result files (iobench's or fio's JSON).",
    flags: &[
        Flag {
            names: &["--repeat", "-r"],
            takes: Takes::Value,
            form: "N",
            help: "runs per job (default 5)",
            apply: |a, v| {
                a.repeat = run_count(&v)?;
                Ok(())
            },
        },
        Flag {
            names: &["--warmup", "-w"],
            takes: Takes::Value,
            form: "K",
            help: "rounds run first and discarded (default 0)",
            apply: |a, v| {
                a.warmup = run_count(&v)?;
                Ok(())
            },
        },
        Flag {
            names: &["--name", "-n"],
            takes: Takes::Value,
            form: "LABEL",
            help: "a side's label, in order (default: the options that differ\n\
                   between the sides when their jobs share names, such as bs=4k\n\
                   and bs=8k; else A, B, ... or the file name)",
            apply: |a, v| {
                a.names.push(v.string());
                Ok(())
            },
        },
        Flag {
            names: &["--metric", "-m"],
            takes: Takes::Value,
            form: "M[,M...]",
            help: "iops, bw, lat, p50, p99, p99.9 (default iops,bw,lat); the\n\
                   first is the one --fail-if-slower judges; http.CLASS.STAT\n\
                   compares a class of the http engine's requests (http.get.p99,\n\
                   http.4k.lat, http.all.ttfb_p99: see docs/guide/compare.md)",
            apply: set_metrics,
        },
        Flag {
            names: &["--fail-if-slower"],
            takes: Takes::Value,
            form: "P%",
            help: "exit 2 when a side is slower than the first by more than P%\n\
                   beyond its noise (two standard deviations of the ratio); needs\n\
                   2 or more runs a side (one run has no noise to judge by)",
            apply: |a, v| {
                let p: f64 = v
                    .text()
                    .trim_end_matches('%')
                    .parse()
                    .ok()
                    .filter(|p: &f64| (0.0..100.0).contains(p))
                    .ok_or_else(|| v.bad("a percentage such as 5%"))?;
                a.fail_if_slower = Some(p);
                Ok(())
            },
        },
        Flag {
            names: &["--margin"],
            takes: Takes::Value,
            form: "P%",
            help: "the equivalence margin (default 5%): two sides whose means are\n\
                   shown (two one-sided Welch tests) to be within P% of the first's\n\
                   are \"equivalent within ±P %\"; too noisy to tell either way is\n\
                   \"cannot tell\", with the runs a side that would tell",
            apply: |a, v| {
                a.margin = Some(stats::parse_margin(v.flag, v.text())?);
                Ok(())
            },
        },
        Flag {
            names: &["--dir", "-o", "--output"],
            takes: Takes::Value,
            form: "DIR",
            help: "keep every run's JSON+ in DIR (default: a temporary directory)",
            apply: |a, v| {
                a.dir = Some(v.path());
                Ok(())
            },
        },
        Flag {
            names: &["--export-json"],
            takes: Takes::Value,
            form: "FILE",
            help: "also write the results there as JSON",
            apply: |a, v| {
                a.export_json = Some(v.path());
                Ok(())
            },
        },
        Flag {
            names: &["--export-csv"],
            takes: Takes::Value,
            form: "FILE",
            help: "also write the results there as CSV",
            apply: |a, v| {
                a.export_csv = Some(v.path());
                Ok(())
            },
        },
        Flag {
            names: &["--export-markdown"],
            takes: Takes::Value,
            form: "FILE",
            help: "also write the tables there as markdown",
            apply: |a, v| {
                a.export_md = Some(v.path());
                Ok(())
            },
        },
        Flag {
            names: &["--tool", "-t"],
            takes: Takes::Value,
            form: "fio|PATH",
            help: "run the first side with another fio-compatible binary (fio's own\n\
                   options only; its --version must work) and say, per metric, whether\n\
                   its numbers and iobench's differ beyond the noise (default metrics\n\
                   then: iops,bw,p50,p99); one job side runs on both",
            apply: |a, v| {
                if v.text().is_empty() {
                    return Err(v.bad("fio or the path of a fio-compatible binary"));
                }
                a.tool = Some(v.string());
                Ok(())
            },
        },
        Flag {
            names: &["--tool-timeout"],
            takes: Takes::Value,
            form: "SECS",
            help: "stop a --tool run still going after SECS (0: never); default\n\
                   1.5 × the job's runtime plus 60 s, 1 h for a job bound by size",
            apply: |a, v| {
                let expected = "a time in seconds, such as 600 or 10m (0: no limit)";
                let us = crate::defs::value::parse_time_us(v.text(), crate::defs::TimeUnit::Sec)
                    .map_err(|_| v.bad(expected))?;
                if us > 10 * 365 * 86_400 * 1_000_000 {
                    return Err(v.bad(expected));
                }
                a.tool_timeout = Some((us > 0).then(|| std::time::Duration::from_micros(us)));
                Ok(())
            },
        },
        vocab::markdown(),
        vocab::json(),
        vocab::output_format(
            "how the result prints (default normal): the tables as text or\n\
             markdown, or the comparison as JSON (what --export-json writes)\n\
             on stdout and the tables on stderr",
        ),
        crate::history::save_flag(),
        crate::history::history_flag(),
    ],
    pass_unknown: false,
    attached: false,
    single_dash: false,
};

/// One side of the comparison.
#[derive(Debug, Clone)]
enum Source {
    Job(Vec<String>),
    Files(Vec<PathBuf>),
}

#[derive(Debug, Default)]
pub struct Args {
    sides: Vec<Source>,
    names: Vec<String>,
    repeat: usize,
    warmup: usize,
    metrics: Vec<Metric>,
    fail_if_slower: Option<f64>,
    /// `--margin`: the equivalence margin in percent (None: the default 5 %).
    margin: Option<f64>,
    dir: Option<PathBuf>,
    export_json: Option<PathBuf>,
    export_csv: Option<PathBuf>,
    export_md: Option<PathBuf>,
    /// `--output-format`: the tables as text or markdown, or the comparison as JSON.
    format: Format,
    /// `--tool`: the binary that runs the first side instead of iobench.
    tool: Option<String>,
    /// `--tool-timeout`: None for the default (from the job's runtime), Some(None) for
    /// no limit.
    tool_timeout: Option<Option<std::time::Duration>>,
    /// True when `--metric` was given (`--tool` otherwise picks its own default).
    metrics_given: bool,
    /// The http engine's classes `--metric http.CLASS.STAT` named (their names as
    /// `JobResult::http` has them), compared as rows beside the job's directions.
    http: Vec<String>,
    /// False when every `--metric` was an http one: the directions' rows are left out.
    dir_rows: bool,
    /// `--save`, `--history`: every run of a job side goes to the results history.
    save: bool,
    history: Option<String>,
}

impl crate::history::Saves for Args {
    fn save(&mut self) {
        self.save = true;
    }
    fn history(&mut self, path: String) {
        self.history = Some(path);
    }
}

/// True when every argument names a file that holds a result document (read, and any
/// error in it reported, later).
fn all_results(args: &[String]) -> bool {
    !args.is_empty() && args.iter().all(|a| results::is_result_file(Path::new(a)))
}

/// Reads the arguments: `None` when `--help` was asked for.
fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let mut a = Args {
        repeat: 5,
        metrics: vec![Metric::Iops, Metric::Bw, Metric::LatMean],
        ..Default::default()
    };
    let m = SPEC.parse(args)?;
    if m.help {
        return Ok(None);
    }
    SPEC.apply(&m, &mut a)?;
    let files = m.positional;
    if a.repeat == 0 {
        return Err("--repeat must be at least 1".into());
    }
    if a.history.is_some() && !a.save {
        return Err("--history=PATH says where --save stores the runs: add --save".into());
    }
    for f in &files {
        results::read(Path::new(f))?;
        a.sides.push(Source::Files(vec![f.into()]));
    }
    if let Some(tail) = m.rest {
        for side in tail.split(|x| x == "--") {
            if side.is_empty() {
                return Err("an empty side between two -- (see iobench compare --help)".into());
            }
            a.sides.push(if all_results(side) {
                Source::Files(side.iter().map(PathBuf::from).collect())
            } else {
                Source::Job(side.to_vec())
            });
        }
    }
    if a.tool_timeout.is_some() && a.tool.is_none() {
        return Err("--tool-timeout bounds a --tool run: give --tool too".into());
    }
    if a.tool.is_some() {
        if let Some(Source::Files(_)) = a.sides.first() {
            return Err(
                "--tool runs the first side, so it must be a job (after --), not result files"
                    .into(),
            );
        }
        // One job: the same job on both sides, the tool's run against iobench's.
        if a.sides.len() == 1 {
            let same = a.sides[0].clone();
            a.sides.push(same);
        }
        if !a.metrics_given {
            a.metrics = vec![Metric::Iops, Metric::Bw, Metric::P50, Metric::P99];
        }
    }
    if a.sides.len() < 2 {
        return Err(
            "nothing to compare: give two or more sides (see iobench compare --help)".into(),
        );
    }
    if a.fail_if_slower.is_some() {
        for (i, side) in a.sides.iter().enumerate() {
            let (n, how) = match side {
                Source::Job(_) => (a.repeat, "runs (--repeat)"),
                Source::Files(f) => (f.len(), "result files"),
            };
            if n < 2 {
                return Err(format!(
                    "--fail-if-slower needs 2 or more runs a side, and side {} has {n} {how}: \
                     with one run a side's noise (σ) is unknown, so a slowdown cannot be told \
                     from noise; use --repeat 2 or more for a job, or give 2 or more result \
                     files a side after -- (iobench compare -- a1.json a2.json -- b1.json b2.json)",
                    i + 1
                ));
            }
        }
    }
    if a.names.len() > a.sides.len() {
        return Err(format!(
            "{} names for {} sides",
            a.names.len(),
            a.sides.len()
        ));
    }
    Ok(Some(a))
}

/// The most runs a side `--repeat` and `--warmup` ask for (each).
const MAX_RUNS: usize = 1000;

/// `--repeat`, `--warmup`: a bounded count, since the runs are planned (and their files
/// checked) before the first.
fn run_count(v: &flags::Value<'_>) -> Result<usize, String> {
    let expected = format!("a whole number from 0 to {MAX_RUNS}");
    v.number::<usize>(&expected)
        .ok()
        .filter(|n| *n <= MAX_RUNS)
        .ok_or_else(|| v.bad(&expected))
}

impl vocab::Formats for Args {
    const ACCEPTS: &'static [Format] = &[Format::Normal, Format::Markdown, Format::Json];
    const FORM: &'static str = "normal|markdown|json";
    fn format_mut(&mut self) -> &mut Format {
        &mut self.format
    }
}

/// `--metric`: the metrics compared, and the http engine's classes they name.
fn set_metrics(a: &mut Args, v: flags::Value<'_>) -> Result<(), String> {
    a.metrics.clear();
    a.http.clear();
    a.dir_rows = false;
    for m in v.text().split(',').map(str::trim) {
        let metric = match results::http_metric(m) {
            Some(r) => {
                let (class, metric) = r.map_err(|e| format!("{}: {e}", v.flag))?;
                if !a.http.contains(&class) {
                    a.http.push(class);
                }
                metric
            }
            None => {
                a.dir_rows = true;
                Metric::parse(m).ok_or_else(|| {
                    flags::bad_value(
                        v.flag,
                        m,
                        "iops, bw, lat, p50, p99, p99.9 or http.CLASS.STAT",
                    )
                })?
            }
        };
        if !a.metrics.contains(&metric) {
            a.metrics.push(metric);
        }
    }
    a.metrics_given = true;
    Ok(())
}

/// The samples of one side: one result per run or file.
struct Side {
    label: String,
    source: Source,
    runs: Vec<ResultFile>,
}

/// Runs `iobench compare ARGS`; returns the exit status (2: slower beyond the noise).
pub fn main(args: &[String]) -> u8 {
    let study = crate::history::Study::begin("compare");
    match compare(args) {
        Ok(code) => study.finish(code),
        Err(e) => {
            eprintln!("iobench compare: {e}");
            1
        }
    }
}

/// A side's label: its `--name`; with `--tool`, the tool's name and version for the first
/// side and `iobench` for the others; else the file's name, or A, B, ...
fn label_of(i: usize, src: &Source, names: &[String], tool: Option<&Tool>, n: usize) -> String {
    if let Some(n) = names.get(i) {
        return n.clone();
    }
    if let Some(t) = tool {
        return match (i, n) {
            (0, _) => t.label(),
            (_, 2) => "iobench".into(),
            _ => format!("iobench {}", (b'A' + (i % 26) as u8) as char),
        };
    }
    match src {
        Source::Files(f) if f.len() == 1 => f[0].file_name().map_or_else(
            || f[0].display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        _ => ((b'A' + (i % 26) as u8) as char).to_string(),
    }
}

/// The options that set the sides' jobs apart, as labels (`bs=4k` and `bs=8k`), when
/// every side is a job and all give their jobs the same names (so the names cannot tell
/// them apart); None when they differ in no option, or the labels would be long or alike.
/// An option one side does not set reads as its default there (`bs=4k`), or
/// `NAME=default` when the option table gives none.
fn option_labels(sides: &[Source]) -> Option<Vec<String>> {
    // Per side: its job names, and each option's value in force.
    type Settings = Vec<(String, Option<String>)>;
    let mut opts: Vec<(Vec<String>, Settings)> = Vec::new();
    for s in sides {
        let Source::Job(args) = s else { return None };
        let inv = cli::parse_args(args).ok()?;
        let names: Vec<String> = inv.jobs.iter().map(|j| j.name.clone()).collect();
        // The value in force for each option, the last one set.
        let mut set: Settings = Vec::new();
        for o in inv.jobs.iter().flat_map(|j| &j.opts) {
            let name = o.def.name.to_string();
            match set.iter_mut().find(|x| x.0 == name) {
                Some(x) => x.1 = o.value.clone(),
                None => set.push((name, o.value.clone())),
            }
        }
        opts.push((names, set));
    }
    if opts.windows(2).any(|w| w[0].0 != w[1].0) {
        return None;
    }
    let value = |set: &[(String, Option<String>)], n: &str| -> Option<Option<String>> {
        set.iter().find(|x| x.0 == n).map(|x| x.1.clone())
    };
    let default_of = |n: &str| {
        crate::options::table::lookup(n)
            .and_then(|d| d.default)
            .unwrap_or("default")
    };
    let mut differ: Vec<String> = Vec::new();
    for (_, set) in &opts {
        for (n, _) in set {
            if !differ.contains(n)
                && opts
                    .windows(2)
                    .any(|w| value(&w[0].1, n) != value(&w[1].1, n))
            {
                differ.push(n.clone());
            }
        }
    }
    if differ.is_empty() {
        return None;
    }
    let labels: Vec<String> = opts
        .iter()
        .map(|(_, set)| {
            differ
                .iter()
                .map(|n| match value(set, n) {
                    None => format!("{n}={}", default_of(n)),
                    Some(None) => n.clone(),
                    Some(Some(v)) => format!("{n}={v}"),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let mut uniq = labels.clone();
    uniq.sort();
    uniq.dedup();
    (uniq.len() == labels.len() && labels.iter().all(|l| l.chars().count() <= 40)).then_some(labels)
}

/// The input result files of every side.
fn inputs(a: &Args) -> Vec<&Path> {
    a.sides
        .iter()
        .flat_map(|s| match s {
            Source::Files(f) => f.iter().map(PathBuf::as_path).collect(),
            Source::Job(_) => Vec::new(),
        })
        .collect()
}

/// Refuses an export that is one of the input result files.
fn refuse_clobbers(a: &Args) -> Result<(), String> {
    let inputs = inputs(a);
    if inputs.is_empty() {
        return Ok(());
    }
    for (flag, out) in [
        ("--export-json", &a.export_json),
        ("--export-csv", &a.export_csv),
        ("--export-markdown", &a.export_md),
    ] {
        if let Some(out) = out {
            outputs::refuse_clobber(flag, out, inputs.iter().copied())?;
        }
    }
    Ok(())
}

/// How one side's runs are made.
enum Runner {
    /// In this process, as a plain run.
    Iobench(Box<crate::session::Prepared>),
    /// By another fio-compatible binary (`--tool`), with the side's own arguments.
    Tool(Tool, Vec<String>),
}

/// `iobench compare ARGS` (the history's `compare --rerun` runs its sides through it).
pub(crate) fn compare(args: &[String]) -> Result<u8, String> {
    let Some(a) = parse_args(args)? else {
        print!("{}", SPEC.help());
        return Ok(0);
    };
    refuse_clobbers(&a)?;
    let tool = a.tool.as_deref().map(Tool::find).transpose()?;
    // Sides whose jobs share their names are told apart by the options that differ.
    let by_options = if tool.is_none() {
        option_labels(&a.sides)
    } else {
        None
    };
    let mut sides: Vec<Side> = a
        .sides
        .iter()
        .enumerate()
        .map(|(i, s)| Side {
            label: match (a.names.get(i), &by_options) {
                (None, Some(l)) => l[i].clone(),
                _ => label_of(i, s, &a.names, tool.as_ref(), a.sides.len()),
            },
            source: s.clone(),
            runs: Vec::new(),
        })
        .collect();
    // A run kept in `-o DIR` must not land on an input.
    if let Some(dir) = &a.dir {
        for s in sides.iter().filter(|s| matches!(s.source, Source::Job(_))) {
            let rounds = (1..=a.warmup)
                .map(|n| (true, n))
                .chain((1..=a.repeat).map(|n| (false, n)));
            for (warm, n) in rounds {
                outputs::refuse_clobber("-o", &run_file(dir, &s.label, warm, n), inputs(&a))?;
            }
        }
    }
    // Every job is checked before any runs (the tool's side too: iobench reads fio's
    // options, and refuses its own extensions there).
    let mut jobs: Vec<Option<Runner>> = Vec::new();
    let mut estimates: Vec<Option<f64>> = Vec::new();
    let mut ran: Vec<crate::job::Job> = Vec::new();
    for (k, s) in sides.iter().enumerate() {
        match &s.source {
            Source::Job(args) => {
                let inv = cli::parse_args(args).map_err(|e| format!("{}: {e}", s.label))?;
                if inv.jobs.is_empty() {
                    return Err(format!("{}: no job in '{}'", s.label, args.join(" ")));
                }
                // Checked as a plain run of the side would be, before any side runs.
                let mut prepared =
                    crate::session::prepare(&inv).map_err(|e| format!("{}: {e}", s.label))?;
                prepared.config.save |= a.save;
                if a.history.is_some() {
                    prepared.config.history = a.history.clone();
                }
                ran.extend(prepared.jobs.iter().cloned());
                estimates.push(super::sweep::estimate_s(&prepared.jobs));
                jobs.push(Some(match (&tool, k) {
                    (Some(t), 0) => {
                        tool::check_fio_only(&s.label, &inv)?;
                        Runner::Tool(t.clone(), args.clone())
                    }
                    _ => Runner::Iobench(Box::new(prepared)),
                }));
            }
            Source::Files(_) => {
                jobs.push(None);
                estimates.push(None);
            }
        }
    }
    for (s, j) in sides.iter_mut().zip(&jobs) {
        if let (Source::Files(files), None) = (&s.source, j) {
            s.runs = files
                .iter()
                .map(|f| results::read(f))
                .collect::<Result<_, _>>()?;
        }
    }
    let running = jobs.iter().any(Option::is_some);
    // With `--live=-` on a side, stdout is the JSON Lines' alone: the tables go to stderr.
    let live_on_stdout = jobs
        .iter()
        .any(|j| matches!(j, Some(Runner::Iobench(p)) if p.config.live_on_stdout()));
    if live_on_stdout && a.format == Format::Json {
        return Err(
            "--output-format=json and --live=- both want stdout: write the live \
                    lines to a file (--live=FILE) or the comparison with --export-json=FILE"
                .into(),
        );
    }
    // Without -o the runs go in a private directory (mkdtemp, 0700) removed at the end;
    // -o DIR is made or checked: no other user may plant or swap run files in it.
    let mut private = None;
    let (dir, temporary) = match &a.dir {
        Some(d) => (d.clone(), false),
        None if running => {
            let p = crate::safefs::private_dir("iobench-compare-").map_err(|e| e.to_string())?;
            let path = p.path().to_path_buf();
            private = Some(p);
            (path, true)
        }
        None => (PathBuf::new(), true),
    };
    let mut code = 0u8;
    if running {
        crate::safefs::output_dir("-o", &dir)?;
        let rounds = a.warmup + a.repeat;
        // Each side's run length when its jobs are bound by time (the ETA adds them up).
        let per_round: Vec<Option<f64>> = jobs
            .iter()
            .zip(&estimates)
            .filter(|(j, _)| j.is_some())
            .map(|(_, e)| *e)
            .collect();
        let steps = rounds * per_round.len();
        let mut progress = Progress::new("compare", "step", steps);
        let mut step = 0usize;
        // The `--live` destinations written so far: a side's later runs (and a side
        // sharing its file) add their lines after the earlier ones.
        let mut live_written: Vec<Option<String>> = Vec::new();
        'rounds: for round in 0..rounds {
            for (k, j) in jobs.iter().enumerate() {
                let Some(runner) = j else { continue };
                let warm = round < a.warmup;
                let label = sides[k].label.clone();
                let file = run_file(
                    &dir,
                    &label,
                    warm,
                    if warm {
                        round + 1
                    } else {
                        round - a.warmup + 1
                    },
                );
                step += 1;
                let left: Option<f64> = (step..=steps)
                    .map(|i| per_round[(i - 1) % per_round.len()])
                    .sum();
                progress.step(
                    step,
                    &format!(
                        "{label} {} {}/{}",
                        if warm { "warmup" } else { "run" },
                        if warm {
                            round + 1
                        } else {
                            round - a.warmup + 1
                        },
                        if warm { a.warmup } else { a.repeat }
                    ),
                    left,
                );
                crate::history::Study::label_next(&format!(
                    "{label} {} {}",
                    if warm { "warmup" } else { "run" },
                    if warm {
                        round + 1
                    } else {
                        round - a.warmup + 1
                    }
                ));
                let status = match runner {
                    Runner::Iobench(prepared) => {
                        if prepared.config.live.is_some() {
                            crate::present::jsonlines::tag_next(
                                serde_json::json!({
                                    "kind": "compare",
                                    "side": label,
                                    "warmup": warm,
                                    "repeat": if warm { round + 1 } else { round - a.warmup + 1 },
                                    "run": step,
                                    "runs": steps,
                                }),
                                live_written.contains(&prepared.config.live),
                            );
                            live_written.push(prepared.config.live.clone());
                        }
                        let run = prepared
                            .reporting_to(&file.to_string_lossy(), vec![OutputFormat::JsonPlus]);
                        crate::session::run_reported(&run)?.code as i32
                    }
                    Runner::Tool(t, args) => {
                        let limit = a
                            .tool_timeout
                            .unwrap_or_else(|| Some(tool::time_limit(estimates[k])));
                        let (status, err) = t.run(args, &file, limit)?;
                        if status != 0 && !err.is_empty() {
                            eprintln!("{err}");
                        }
                        status
                    }
                };
                progress.done();
                if status != 0 {
                    code = 1;
                    progress.note(&format!(
                        "compare: {label}: the run exited with status {status}"
                    ));
                }
                if crate::run::signals::signalled().is_some() {
                    progress.finish();
                    eprintln!("compare: stopped by a signal; reporting the runs that finished");
                    break 'rounds;
                }
                if !warm {
                    sides[k].runs.push(results::read(&file)?);
                }
            }
        }
        progress.finish();
    }
    let judged = judge(&sides, &a, &ran, tool.as_ref(), live_on_stdout)?;
    if running && temporary {
        drop(private);
    } else if running {
        eprintln!("compare: every run's JSON+ is in {}", dir.display());
    }
    Ok(match judged {
        Judged::Slower => 2,
        Judged::Failed => code.max(1),
        Judged::Ok => code,
    })
}

/// Prints the tables, the relative speeds and the `--fail-if-slower` lines of `sides`, and
/// writes the exports asked for; `ran` are the jobs run (for the export's context). True
/// when the gate found a side slower.
fn judge(
    sides: &[Side],
    a: &Args,
    ran: &[crate::job::Job],
    tool: Option<&Tool>,
    to_stderr: bool,
) -> Result<Judged, String> {
    // With `--output-format=json` stdout is the comparison's alone.
    let json_out = a.format == Format::Json;
    let say = |text: &str| super::table::emit(to_stderr || json_out, text);
    let markdown = a.format == Format::Markdown;
    // A side with a run (or file) that did no I/O where its jobs were to is a failure:
    // it is marked so and left out, never compared (its numbers are no measurement).
    let mut failed = Vec::new();
    for s in sides {
        let why = s
            .runs
            .iter()
            .enumerate()
            .find_map(|(i, r)| r.no_io_failure().map(|w| (i + 1, w)));
        if let Some((n, why)) = why {
            eprintln!(
                "compare: {}: FAILED: run {n} of {}: {why}; not compared",
                s.label,
                s.runs.len()
            );
            failed.push(s.label.clone());
        }
    }
    if !failed.is_empty() && a.fail_if_slower.is_some() {
        return Err(format!(
            "cannot judge --fail-if-slower: {} failed (no I/O)",
            failed.join(", ")
        ));
    }
    let kept: Vec<Side>;
    let sides = if failed.is_empty() {
        sides
    } else {
        kept = sides
            .iter()
            .filter(|s| !failed.contains(&s.label))
            .map(|s| Side {
                label: s.label.clone(),
                source: s.source.clone(),
                runs: s.runs.clone(),
            })
            .collect();
        if kept.is_empty() {
            return Ok(Judged::Failed);
        }
        &kept[..]
    };
    let http_view;
    let sides = if a.http.is_empty() {
        sides
    } else {
        http_view = with_http_rows(sides, a)?;
        &http_view[..]
    };
    let report = Report::build(
        sides,
        &a.metrics,
        a.margin.unwrap_or(stats::DEFAULT_MARGIN_PCT),
    );
    if !report.missing.is_empty() {
        // A gate must not pass because a side measured nothing to judge.
        if a.fail_if_slower.is_some() {
            return Err(format!(
                "cannot judge --fail-if-slower: {}",
                report.missing.join("; ")
            ));
        }
        for m in &report.missing {
            eprintln!("compare: {m}: not compared");
        }
    }
    let tables = report.tables(&a.metrics);
    for t in &tables {
        say(&if markdown { t.markdown() } else { t.text() });
        say("\n");
    }
    say(&report.relative_text(&a.metrics));
    if tool.is_some() {
        let t = report.verdicts();
        say("\n");
        say(&if markdown { t.markdown() } else { t.text() });
    }
    if a.fail_if_slower.is_some() {
        if let Some(few) = report.too_few_runs(a.metrics[0]) {
            return Err(format!("cannot judge --fail-if-slower: {few}"));
        }
    }
    let slower = a
        .fail_if_slower
        .map(|p| report.regressions(a.metrics[0], p))
        .unwrap_or_default();
    for line in &slower {
        say(&format!("{line}\n"));
    }
    if a.export_json.is_some() || json_out {
        // The context: the machine, and the jobs of every side that ran.
        let argv: Vec<String> = std::env::args().collect();
        let env = crate::context::env::collect(&argv, ran);
        let doc = report.json(sides, a, &env, tool);
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
        if json_out && !to_stderr {
            super::table::emit(false, &text);
        }
        if let Some(p) = &a.export_json {
            write(p, text)?;
        }
    }
    if let Some(p) = &a.export_csv {
        write(p, report.csv())?;
    }
    if let Some(p) = &a.export_md {
        write(
            p,
            tables
                .iter()
                .map(Table::markdown)
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
                + &report.relative_text(&a.metrics),
        )?;
    }
    Ok(if !slower.is_empty() {
        Judged::Slower
    } else if !failed.is_empty() {
        Judged::Failed
    } else {
        Judged::Ok
    })
}

/// What [`judge`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Judged {
    Ok,
    /// `--fail-if-slower` found a side slower (exit status 2).
    Slower,
    /// A side did no I/O where its jobs were to (exit status 1).
    Failed,
}

/// `iobench history compare`: stored results judged exactly as `compare` judges result
/// files: the same statistics, tables, exports and `--fail-if-slower` gate. `sides` are
/// labelled results, the first the reference; `flags` are compare's own flags (`--metric`,
/// `--fail-if-slower`, `--markdown`, `--export-*`). Returns the exit status (2: slower).
pub fn judge_results(
    sides: Vec<(String, Vec<ResultFile>)>,
    flags: &[String],
) -> Result<u8, String> {
    let mut a = Args {
        repeat: 1,
        metrics: vec![Metric::Iops, Metric::Bw, Metric::LatMean],
        ..Default::default()
    };
    let m = SPEC.parse(flags)?;
    SPEC.apply(&m, &mut a)?;
    // The same rule as `compare`'s: one run has no noise to judge a slowdown by.
    if a.fail_if_slower.is_some() {
        if let Some((label, runs)) = sides.iter().find(|s| s.1.len() < 2) {
            return Err(format!(
                "--fail-if-slower needs 2 or more runs a side, and {label} has {}: with one \
                 run a side's noise (σ) is unknown, so a slowdown cannot be told from noise \
                 (save 2 or more runs of the job and make them the side: history baseline \
                 set --last N, history compare --baseline --last N, or RUNS as 3-7)",
                runs.len()
            ));
        }
    }
    let sides: Vec<Side> = sides
        .into_iter()
        .map(|(label, runs)| Side {
            label,
            source: Source::Files(Vec::new()),
            runs,
        })
        .collect();
    Ok(match judge(&sides, &a, &[], None, false)? {
        Judged::Slower => 2,
        Judged::Failed => 1,
        Judged::Ok => 0,
    })
}

fn write(p: &Path, text: String) -> Result<(), String> {
    crate::safefs::write_output(p, text.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))
}

/// Where run `n` of a side (a warm-up run when `warm`) keeps its JSON+.
fn run_file(dir: &Path, label: &str, warm: bool, n: usize) -> PathBuf {
    dir.join(format!(
        "{}-{}{n}.json",
        safe(label),
        if warm { "warmup" } else { "run" }
    ))
}

fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One series: a side's samples of one metric for one job and direction.
struct Series {
    side: usize,
    job: String,
    dir: String,
    metric: Metric,
    samples: Vec<f64>,
    summary: Summary,
    z: Vec<f64>,
}

/// One side's speed relative to the first side, for one job, direction and metric.
struct Relative {
    side: usize,
    job: String,
    dir: String,
    metric: Metric,
    /// other / first
    ratio: f64,
    ratio_sd: f64,
    p: Option<f64>,
    /// The two series compared: the first side's and this side's.
    base: Summary,
    this: Summary,
    /// Different, equivalent within the margin, or cannot tell.
    verdict: stats::Verdict,
}

/// The version of `--export-json`'s layout (docs/schema/compare-export.schema.json).
pub const EXPORT_SCHEMA_VERSION: u32 = 1;

impl Relative {
    /// How far this side's mean is from the first's, in percent of the first's.
    fn diff_pct(&self) -> f64 {
        (self.ratio - 1.0) * 100.0
    }

    /// Different (Welch's t-test), equivalent within the margin (two one-sided tests) or
    /// cannot tell, in words: never "equal" for a difference the noise hides.
    fn verdict(&self) -> String {
        self.verdict.text()
    }
}

struct Report {
    labels: Vec<String>,
    series: Vec<Series>,
    relative: Vec<Relative>,
    /// What the first side measured and a later side did not: "B has no read of job x".
    missing: Vec<String>,
}

/// The (job, direction) keys of a side, in order, and the job names it uses.
fn keys(side: &Side) -> Vec<(String, String)> {
    let mut k: Vec<(String, String)> = Vec::new();
    for r in &side.runs {
        for j in &r.jobs {
            for d in &j.dirs {
                let key = (j.name.clone(), d.dir.clone());
                if !k.contains(&key) {
                    k.push(key);
                }
            }
        }
    }
    k
}

/// `sides` with the http classes `--metric http.…` named as rows of each job (`http
/// GET`, `http 4k ttfb`), beside its directions unless every metric was an http one. An
/// error when no run of any side has a class named so (its case aside).
fn with_http_rows(sides: &[Side], a: &Args) -> Result<Vec<Side>, String> {
    let mut seen = vec![false; a.http.len()];
    let view = sides
        .iter()
        .map(|s| Side {
            label: s.label.clone(),
            source: s.source.clone(),
            runs: s
                .runs
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    for j in &mut r.jobs {
                        let mut dirs = if a.dir_rows {
                            std::mem::take(&mut j.dirs)
                        } else {
                            Vec::new()
                        };
                        for (i, want) in a.http.iter().enumerate() {
                            if let Some(c) =
                                j.http.iter().find(|c| c.dir.eq_ignore_ascii_case(want))
                            {
                                seen[i] = true;
                                let mut c = c.clone();
                                c.dir = format!("http {}", c.dir);
                                dirs.push(c);
                            }
                        }
                        j.dirs = dirs;
                    }
                    r
                })
                .collect(),
        })
        .collect();
    if let Some(i) = seen.iter().position(|s| !s) {
        let have: Vec<String> = sides
            .iter()
            .flat_map(|s| &s.runs)
            .flat_map(|r| &r.jobs)
            .flat_map(|j| j.http.iter().map(|c| c.dir.clone()))
            .fold(Vec::new(), |mut v, c| {
                if !v.contains(&c) {
                    v.push(c);
                }
                v
            });
        return Err(format!(
            "--metric: no run has the http class '{}' (classes found: {}; a job reports \
             them with the http engine's iobench-only options, see docs/engines.md)",
            a.http[i],
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        ));
    }
    Ok(view)
}

/// The samples of `metric` for the `pos`-th job named `job` in each run of `side`.
fn samples(side: &Side, job_pos: Option<usize>, job: &str, dir: &str, metric: Metric) -> Vec<f64> {
    side.runs
        .iter()
        .filter_map(|r| {
            let j = match job_pos {
                Some(p) => r.jobs.get(p),
                None => r.jobs.iter().find(|j| j.name == job),
            }?;
            j.dirs.iter().find(|d| d.dir == dir).map(|d| metric.of(d))
        })
        .collect()
}

impl Report {
    fn build(sides: &[Side], metrics: &[Metric], margin: f64) -> Report {
        let mut series = Vec::new();
        for (si, s) in sides.iter().enumerate() {
            for (job, dir) in keys(s) {
                for &m in metrics {
                    let xs = samples(s, None, &job, &dir, m);
                    series.push(Series {
                        side: si,
                        summary: stats::summarize(&xs),
                        z: stats::modified_z(&xs),
                        samples: xs,
                        job: job.clone(),
                        dir: dir.clone(),
                        metric: m,
                    });
                }
            }
        }
        // Each later side against the first: by job name, or by position when the two
        // sides name their jobs differently (job A's "x" against job B's "y").
        let mut relative = Vec::new();
        let mut missing: Vec<String> = sides
            .iter()
            .filter(|s| keys(s).is_empty())
            .map(|s| format!("{} measured nothing (no job did any I/O)", s.label))
            .collect();
        let base_keys = keys(&sides[0]);
        for (si, s) in sides.iter().enumerate().skip(1) {
            let other_keys = keys(s);
            let by_name = base_keys.iter().any(|k| other_keys.contains(k));
            let jobs_of = |side: &Side| -> Vec<String> {
                let mut v: Vec<String> = Vec::new();
                for (j, _) in keys(side) {
                    if !v.contains(&j) {
                        v.push(j);
                    }
                }
                v
            };
            let (base_jobs, other_jobs) = (jobs_of(&sides[0]), jobs_of(s));
            for (job, dir) in &base_keys {
                let other_pos = if by_name {
                    None
                } else {
                    match base_jobs.iter().position(|j| j == job) {
                        Some(p) if p < other_jobs.len() => Some(p),
                        _ => {
                            missing.push(format!(
                                "{} has no job to set against {}'s job '{job}'",
                                s.label, sides[0].label
                            ));
                            continue;
                        }
                    }
                };
                let base_pos = if by_name {
                    None
                } else {
                    base_jobs.iter().position(|j| j == job)
                };
                for &m in metrics {
                    let xa = samples(&sides[0], base_pos, job, dir, m);
                    let xb = samples(
                        s,
                        other_pos,
                        other_pos.map_or(job.as_str(), |p| other_jobs[p].as_str()),
                        dir,
                        m,
                    );
                    if xa.is_empty() || xb.is_empty() {
                        let msg = format!(
                            "{} has no {dir} results for job '{job}' ({} has)",
                            s.label, sides[0].label
                        );
                        if !xa.is_empty() && !missing.contains(&msg) {
                            missing.push(msg);
                        }
                        continue;
                    }
                    let (sa, sb) = (stats::summarize(&xa), stats::summarize(&xb));
                    let (ratio, ratio_sd) = stats::ratio(&sa, &sb);
                    relative.push(Relative {
                        side: si,
                        job: job.clone(),
                        dir: dir.clone(),
                        metric: m,
                        ratio,
                        ratio_sd,
                        p: stats::welch_p(&sa, &sb),
                        verdict: stats::judge(&sa, &sb, margin),
                        base: sa,
                        this: sb,
                    });
                }
            }
        }
        Report {
            labels: sides.iter().map(|s| s.label.clone()).collect(),
            series,
            relative,
            missing,
        }
    }

    /// A metric's value as tables show it, in its unit.
    fn fmt(m: Metric, v: f64) -> String {
        match m {
            Metric::Iops => table::si(v),
            Metric::Bw => table::mib_s(v),
            _ => table::us(v),
        }
    }

    fn unit(m: Metric) -> &'static str {
        match m {
            Metric::Iops => "IOPS",
            Metric::Bw => "MiB/s",
            Metric::LatMean => "lat us",
            Metric::P50 => "p50 us",
            Metric::P99 => "p99 us",
            Metric::P99_9 => "p99.9 us",
        }
    }

    /// One table per metric: side, job, direction, runs, mean ± σ (no σ for one run),
    /// min, max, median, outliers, and each run's value in the order run.
    fn tables(&self, metrics: &[Metric]) -> Vec<Table> {
        metrics
            .iter()
            .map(|&m| Table {
                header: [
                    "side",
                    "job",
                    "dir",
                    "runs",
                    Self::unit(m),
                    "± σ",
                    "min",
                    "max",
                    "median",
                    "outliers",
                    "each run",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect(),
                rows: self
                    .series
                    .iter()
                    .filter(|s| s.metric == m)
                    .map(|s| {
                        let out: Vec<String> = s
                            .z
                            .iter()
                            .enumerate()
                            .filter(|(_, z)| **z > OUTLIER_Z)
                            .map(|(i, _)| format!("run {} ({})", i + 1, Self::fmt(m, s.samples[i])))
                            .collect();
                        vec![
                            self.labels[s.side].clone(),
                            s.job.clone(),
                            s.dir.clone(),
                            s.summary.n.to_string(),
                            Self::fmt(m, s.summary.mean),
                            if s.summary.n < 2 {
                                "-".into()
                            } else {
                                Self::fmt(m, s.summary.sd)
                            },
                            Self::fmt(m, s.summary.min),
                            Self::fmt(m, s.summary.max),
                            Self::fmt(m, s.summary.median),
                            if out.is_empty() {
                                "-".into()
                            } else {
                                out.join(", ")
                            },
                            s.samples
                                .iter()
                                .map(|v| Self::fmt(m, *v))
                                .collect::<Vec<_>>()
                                .join(" "),
                        ]
                    })
                    .collect(),
            })
            .collect()
    }

    /// "B: 1.52 ± 0.03 × A's IOPS (p = 0.0012)" lines, hyperfine's way of saying it.
    fn relative_text(&self, metrics: &[Metric]) -> String {
        let mut out = String::new();
        for &m in metrics {
            for r in self.relative.iter().filter(|r| r.metric == m) {
                let p = match r.p {
                    Some(p) => format!("Welch's t-test p = {p:.4}"),
                    None => "no p-value: needs 2+ runs a side".into(),
                };
                // With one run a side there is no σ to give: no "± 0.000".
                let sd = if r.base.n < 2 || r.this.n < 2 {
                    String::new()
                } else {
                    format!(" ± {:.3}", r.ratio_sd)
                };
                out.push_str(&format!(
                    "{} {} {}: {} is {:.3}{sd} × {}'s {} ({p}): {}\n",
                    r.job,
                    r.dir,
                    Self::unit(m),
                    self.labels[r.side],
                    r.ratio,
                    self.labels[0],
                    Self::unit(m),
                    r.verdict()
                ));
            }
        }
        out
    }

    /// The verdict table: per job, direction and metric, both sides' mean ± σ, the
    /// difference in percent, Welch's p-value and whether they differ beyond the noise.
    fn verdicts(&self) -> Table {
        let pm = |m: Metric, s: &Summary| {
            if s.n < 2 {
                format!("{} (1 run)", Self::fmt(m, s.mean))
            } else {
                format!("{} ± {}", Self::fmt(m, s.mean), Self::fmt(m, s.sd))
            }
        };
        let mut header: Vec<String> = ["job", "dir", "metric"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let others: Vec<usize> = {
            let mut v: Vec<usize> = self.relative.iter().map(|r| r.side).collect();
            v.dedup();
            v
        };
        let one = others.len() == 1;
        header.push(self.labels[0].clone());
        header.push(if one {
            self.labels[others[0]].clone()
        } else {
            "side".into()
        });
        if !one {
            header.push("mean ± σ".into());
        }
        header.extend(["diff", "p", "verdict"].iter().map(|s| s.to_string()));
        let rows = self
            .relative
            .iter()
            .map(|r| {
                let mut row = vec![
                    r.job.clone(),
                    r.dir.clone(),
                    Self::unit(r.metric).to_string(),
                    pm(r.metric, &r.base),
                ];
                if !one {
                    row.push(self.labels[r.side].clone());
                }
                row.push(pm(r.metric, &r.this));
                row.push(if r.diff_pct().is_finite() {
                    format!("{:+.1}%", r.diff_pct())
                } else {
                    "-".into()
                });
                row.push(r.p.map_or("-".into(), |p| format!("{p:.3}")));
                row.push(r.verdict());
                row
            })
            .collect();
        Table { header, rows }
    }

    /// Why the gate cannot judge `m`: a side with fewer than two runs (an interrupted
    /// comparison), whose noise is unknown.
    fn too_few_runs(&self, m: Metric) -> Option<String> {
        let r = self
            .relative
            .iter()
            .find(|r| r.metric == m && (r.base.n < 2 || r.this.n < 2))?;
        let (label, n) = if r.base.n < 2 {
            (&self.labels[0], r.base.n)
        } else {
            (&self.labels[r.side], r.this.n)
        };
        Some(format!(
            "{label} has {n} run of {} {} (2 or more a side are needed: with one run its noise is unknown)",
            r.job, r.dir
        ))
    }

    /// The comparisons where a side is slower than the first by more than `pct` percent
    /// even after two standard deviations of the ratio are allowed for noise.
    fn regressions(&self, m: Metric, pct: f64) -> Vec<String> {
        let floor = 1.0 - pct / 100.0;
        self.relative
            .iter()
            .filter(|r| r.metric == m && r.ratio.is_finite())
            .filter_map(|r| {
                // Speed: above 1 is faster, for latencies too.
                let (speed, sd) = if m.higher_is_better() {
                    (r.ratio, r.ratio_sd)
                } else {
                    (1.0 / r.ratio, r.ratio_sd / (r.ratio * r.ratio))
                };
                (speed + 2.0 * sd < floor).then(|| {
                    format!(
                        "SLOWER: {} {} {}: {} runs at {:.3} ± {:.3} × {}'s speed, beyond the {pct}% allowed and the noise",
                        r.job, r.dir, Self::unit(m), self.labels[r.side], speed, sd, self.labels[0]
                    )
                })
            })
            .collect()
    }

    fn json(&self, sides: &[Side], a: &Args, env: &Value, tool: Option<&Tool>) -> Value {
        json!({
            "schema_version": EXPORT_SCHEMA_VERSION,
            "iobench": crate::report::VERSION,
            "tool": tool.map(|t| json!({"program": t.program.display().to_string(), "version": t.version})),
            "iobench_env": env,
            "repeat": a.repeat,
            "warmup": a.warmup,
            "margin_pct": a.margin.unwrap_or(stats::DEFAULT_MARGIN_PCT),
            "sides": sides.iter().map(|s| json!({
                "label": s.label,
                "job": match &s.source { Source::Job(v) => json!(v), _ => Value::Null },
                "files": match &s.source { Source::Files(f) => json!(f.iter().map(|p| p.display().to_string()).collect::<Vec<_>>()), _ => Value::Null },
                "runs": s.runs.len(),
            })).collect::<Vec<_>>(),
            "results": self.series.iter().map(|s| json!({
                "side": self.labels[s.side],
                "job": s.job,
                "dir": s.dir,
                "metric": s.metric.name(),
                "n": s.summary.n,
                "mean": s.summary.mean,
                "sd": s.summary.sd,
                "min": s.summary.min,
                "max": s.summary.max,
                "median": s.summary.median,
                "samples": s.samples,
                "outliers": s.z.iter().enumerate().filter(|(_, z)| **z > OUTLIER_Z).map(|(i, _)| i + 1).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "relative": self.relative.iter().map(|r| json!({
                "side": self.labels[r.side],
                "baseline": self.labels[0],
                "job": r.job,
                "dir": r.dir,
                "metric": r.metric.name(),
                "ratio": r.ratio,
                "ratio_sd": r.ratio_sd,
                "p_value": r.p,
                "diff_pct": r.diff_pct(),
                "verdict": r.verdict.word(),
                "verdict_text": r.verdict(),
            })).collect::<Vec<_>>(),
        })
    }

    fn csv(&self) -> String {
        let mut out = String::from("side,job,dir,metric,n,mean,sd,min,max,median\n");
        for s in &self.series {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{}\n",
                self.labels[s.side].replace(',', ";"),
                s.job.replace(',', ";"),
                s.dir,
                s.metric.name(),
                s.summary.n,
                s.summary.mean,
                s.summary.sd,
                s.summary.min,
                s.summary.max,
                s.summary.median
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn sides_of_jobs() {
        let a = parse_args(&s(&[
            "--repeat",
            "3",
            "--metric=iops,p99",
            "--fail-if-slower",
            "5%",
            "--",
            "--name=a",
            "--rw=read",
            "--",
            "--name=b",
            "--rw=randread",
        ]))
        .unwrap()
        .expect("not --help");
        assert_eq!(a.sides.len(), 2);
        assert_eq!((a.repeat, a.fail_if_slower), (3, Some(5.0)));
        assert_eq!(a.metrics, vec![Metric::Iops, Metric::P99]);
        assert!(matches!(&a.sides[1], Source::Job(v) if v[0] == "--name=b"));
    }

    #[test]
    fn sides_sharing_job_names_are_labelled_by_what_differs() {
        let job = |extra: &[&str]| {
            let mut v = s(&["--name=x", "--ioengine=null", "--size=1m"]);
            v.extend(s(extra));
            Source::Job(v)
        };
        assert_eq!(
            option_labels(&[job(&["--bs=4k"]), job(&["--bs=8k"])]),
            Some(s(&["bs=4k", "bs=8k"]))
        );
        // Unset on one side: the option table's default.
        assert_eq!(
            option_labels(&[job(&[]), job(&["--bs=8k", "--direct=1"])]),
            Some(s(&["bs=4096 direct=0", "bs=8k direct=1"]))
        );
        // Nothing differs, or the jobs' names do: letters (or the names) stay.
        assert_eq!(option_labels(&[job(&[]), job(&[])]), None);
        let other = Source::Job(s(&["--name=y", "--ioengine=null", "--size=1m"]));
        assert_eq!(option_labels(&[job(&["--bs=8k"]), other]), None);
    }

    #[test]
    fn a_gate_needs_two_runs_a_side() {
        let e = parse_args(&s(&[
            "--repeat=1",
            "--fail-if-slower=5%",
            "--",
            "--name=a",
            "--",
            "--name=b",
        ]))
        .unwrap_err();
        assert!(e.contains("needs 2 or more runs a side"), "{e}");
        assert!(parse_args(&s(&[
            "--repeat=2",
            "--fail-if-slower=5%",
            "--",
            "--name=a",
            "--",
            "--name=b"
        ]))
        .is_ok());
    }

    #[test]
    fn bad_arguments() {
        assert!(parse_args(&s(&["--", "--name=a"]))
            .unwrap_err()
            .contains("two or more"));
        assert!(parse_args(&s(&["--metric=speed"]))
            .unwrap_err()
            .contains("--metric"));
        assert!(parse_args(&s(&["--fail-if-slower=lots"]))
            .unwrap_err()
            .contains("percentage"));
        assert!(parse_args(&s(&["--repeat=0", "--", "x", "--", "y"]))
            .unwrap_err()
            .contains("at least 1"));
        assert!(parse_args(&s(&["/nonexistent.json", "b.json"])).is_err());
    }
}
