//! `iobench slo`: the highest arrival rate a job's storage takes while its latency, counted
//! from each I/O's scheduled start (open-loop arrivals, `arrival=`), meets every target.
//!
//! Each step is a plain run of the job (through `session`) at one offered rate
//! (`rate_iops=R`, `arrival=fixed` unless the job or `--arrival` says otherwise,
//! `time_based`), long enough for its strictest percentile: at least `10 / (1 - q)` I/Os
//! for a percentile q (1,000 for p99, 10,000 for p99.9), 100 for a mean, and never shorter
//! than `--min-time`. The search doubles the rate while every target is met (halving first
//! when the starting rate already fails), then bisects between the last rate that met the
//! targets and the first that did not, until they are within `--precision` of each other.
//! A noisy step (met on fewer I/Os than its percentile needs, or a value within `--noise`
//! of its bound) is run again, up to `--repeat-noisy` more times until two runs agree;
//! the search then goes by the median run, so one lucky or unlucky run does not move it.

use crate::cli::{self, OutputFormat};
use crate::defs::value::parse_time_us;
use crate::defs::TimeUnit;
use crate::flags::{Flag, Spec, Takes};
use crate::stats::hist::Hist;
use crate::stats::iostat::IoStat;
use crate::study::vocab::{self, Format};
use std::fmt::Write;
use std::path::Path;

/// The flags of `iobench slo`.
pub const SPEC: Spec<Args> = Spec {
    command: "slo",
    usage: "\
usage: iobench slo TARGET... [OPTIONS] -- JOB...

Finds the highest arrival rate (IOPS) at which the job's latency from each I/O's
scheduled start (open-loop arrivals: iobench's arrival= option) meets every target.
JOB is a plain run's arguments or job file; each step runs it with rate_iops=R.
A latency is a time: 2ms, 500us, 1s (a bare number is in microseconds).",
    flags: &[
        Flag {
            names: &["--p50"],
            takes: Takes::Value,
            form: "TIME",
            help: "target for the median",
            apply: target,
        },
        Flag {
            names: &["--p90"],
            takes: Takes::Value,
            form: "TIME",
            help: "target for the 90th percentile",
            apply: target,
        },
        Flag {
            names: &["--p95"],
            takes: Takes::Value,
            form: "TIME",
            help: "target for the 95th percentile",
            apply: target,
        },
        Flag {
            names: &["--p99"],
            takes: Takes::Value,
            form: "TIME",
            help: "target for the 99th percentile",
            apply: target,
        },
        Flag {
            names: &["--p99.9"],
            takes: Takes::Value,
            form: "TIME",
            help: "target for the 99.9th percentile",
            apply: target,
        },
        Flag {
            names: &["--p99.99"],
            takes: Takes::Value,
            form: "TIME",
            help: "target for the 99.99th percentile",
            apply: target,
        },
        Flag {
            names: &["--mean"],
            takes: Takes::Value,
            form: "TIME",
            help: "target for the mean",
            apply: target,
        },
        Flag {
            names: &["--precision"],
            takes: Takes::Value,
            form: "P%",
            help: "stop bisecting when the bounds are within P% (default 5%)",
            apply: |a, v| {
                a.precision = percent(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["--start"],
            takes: Takes::Value,
            form: "IOPS",
            help: "the first rate tried (default 100)",
            apply: |a, v| {
                a.start = rate(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["--max"],
            takes: Takes::Value,
            form: "IOPS",
            help: "the highest rate tried (default 10000000)",
            apply: |a, v| {
                a.max = rate(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["--min-time"],
            takes: Takes::Value,
            form: "TIME",
            help: "the shortest step (default 1s; a bare number is in seconds)",
            apply: |a, v| {
                a.min_time_us = time(v, TimeUnit::Sec)?.max(1000);
                Ok(())
            },
        },
        Flag {
            names: &["--max-time"],
            takes: Takes::Value,
            form: "TIME",
            help: "the longest step (default 60s; a bare number is in seconds)",
            apply: |a, v| {
                a.max_time_us = time(v, TimeUnit::Sec)?.max(1000);
                Ok(())
            },
        },
        Flag {
            names: &["--repeat-noisy"],
            takes: Takes::Value,
            form: "N",
            help: "run a noisy step up to N more times and go by the median run (default 2; 0: never)",
            apply: |a, v| {
                a.repeat_noisy = v
                    .text()
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n <= MAX_REPEATS)
                    .ok_or_else(|| v.bad(&format!("a count from 0 to {MAX_REPEATS}")))?;
                Ok(())
            },
        },
        Flag {
            names: &["--noise"],
            takes: Takes::Value,
            form: "P%",
            help: "a step is noisy when a value is within P% of its target; its runs agree when within P% of the target of each other (default 10%)",
            apply: |a, v| {
                a.noise = percent(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["--arrival"],
            takes: Takes::Value,
            form: "fixed|poisson",
            help: "how the scheduled starts are spaced (default: the job's, else fixed)",
            apply: |a, v| match v.text() {
                "fixed" | "poisson" => {
                    a.arrival = Some(v.string());
                    Ok(())
                }
                _ => Err(v.bad("fixed or poisson")),
            },
        },
        Flag {
            names: &["--output", "-o"],
            takes: Takes::Value,
            form: "FILE",
            help: "also write the result as JSON to FILE",
            apply: |a, v| {
                a.output = Some(v.string());
                Ok(())
            },
        },
        vocab::output_format(
            "the result on stdout as text (default) or as the JSON document\n\
             (the table then goes to stderr), as a plain run's",
        ),
        vocab::json(),
    ],
    pass_unknown: false,
    attached: false,
    single_dash: false,
};

/// What a target bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    /// A percentile, 0-100.
    Percentile(f64),
    /// The mean.
    Mean,
}

impl Stat {
    fn name(self) -> String {
        match self {
            Stat::Percentile(q) => format!("p{q}"),
            Stat::Mean => "mean".into(),
        }
    }

    /// The I/Os a step needs for this statistic to mean something: ten beyond the
    /// percentile (`10 / (1 - q)`), or 100 for a mean.
    fn samples_needed(self) -> u64 {
        match self {
            // 1000 / (100 - q), less a hair for 99.9's rounding (10000.0000006).
            Stat::Percentile(q) if q < 100.0 => (1000.0 / (100.0 - q) - 1e-6).ceil() as u64,
            Stat::Percentile(_) => 100_000,
            Stat::Mean => 100,
        }
        .max(100)
    }
}

/// One latency target: the statistic and its bound in ns.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub stat: Stat,
    pub max_ns: u64,
}

/// The search's settings, as read from the flags.
#[derive(Debug, Clone)]
pub struct Args {
    pub targets: Vec<Target>,
    /// Relative precision of the bisection (0.05 for 5%).
    pub precision: f64,
    pub start: f64,
    pub max: f64,
    pub min_time_us: u64,
    pub max_time_us: u64,
    pub arrival: Option<String>,
    pub output: Option<String>,
    /// `--output-format=json` (or `--json`): the JSON document on stdout.
    pub format: Format,
    pub job_args: Vec<String>,
    /// `--repeat-noisy`: the most extra runs of a noisy step.
    pub repeat_noisy: usize,
    /// `--noise` (0.10 for 10%): how near its bound a value is noisy, and how far apart
    /// (as a share of the bound) two runs' values may be and still agree.
    pub noise: f64,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            targets: Vec::new(),
            precision: 0.05,
            start: 100.0,
            max: 10_000_000.0,
            min_time_us: 1_000_000,
            max_time_us: 60_000_000,
            arrival: None,
            output: None,
            format: Format::Normal,
            job_args: Vec::new(),
            repeat_noisy: 2,
            noise: 0.10,
        }
    }
}

impl vocab::Formats for Args {
    const ACCEPTS: &'static [Format] = &[Format::Normal, Format::Json];
    const FORM: &'static str = "normal|json";
    fn format_mut(&mut self) -> &mut Format {
        &mut self.format
    }
}

/// `--p50`, ..., `--mean`: a target, the statistic named by the flag.
fn target(a: &mut Args, v: crate::flags::Value<'_>) -> Result<(), String> {
    let stat = match v.flag.strip_prefix("--p") {
        Some(q) => Stat::Percentile(q.parse().unwrap_or(99.0)),
        None => Stat::Mean,
    };
    let us = time(v, TimeUnit::Usec)?;
    if us == 0 {
        return Err(v.bad("a time above 0, such as 2ms"));
    }
    a.targets.push(Target {
        stat,
        max_ns: us.saturating_mul(1000),
    });
    Ok(())
}

/// A time flag's value in microseconds (`unit`: a bare number's).
fn time(v: crate::flags::Value<'_>, unit: TimeUnit) -> Result<u64, String> {
    parse_time_us(v.text(), unit).map_err(|e| format!("{}: {e}", v.bad("a time such as 2ms")))
}

/// A rate flag's value in IOPS.
fn rate(v: crate::flags::Value<'_>) -> Result<f64, String> {
    match v.text().parse::<f64>() {
        Ok(x) if x.is_finite() && (1.0..=MAX_RATE).contains(&x) => Ok(x),
        _ => Err(v.bad("a rate in IOPS from 1 to 1e12")),
    }
}

/// A percentage flag's value, as a share (5% is 0.05).
fn percent(v: crate::flags::Value<'_>) -> Result<f64, String> {
    v.text()
        .strip_suffix('%')
        .and_then(|n| n.trim().parse::<f64>().ok())
        .filter(|p| *p > 0.0 && *p < 100.0)
        .map(|p| p / 100.0)
        .ok_or_else(|| v.bad("a percentage above 0, such as 5%"))
}

/// Reads the flags; `None` for `--help`.
pub fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let m = SPEC.parse(args)?;
    if m.help {
        return Ok(None);
    }
    if let Some(p) = m.positional.first() {
        return Err(format!(
            "unexpected argument '{p}': the job goes after -- (see iobench slo --help)"
        ));
    }
    let mut a = Args {
        job_args: m.rest.clone().unwrap_or_default(),
        ..Args::default()
    };
    SPEC.apply(&m, &mut a)?;
    if a.targets.is_empty() {
        return Err(
            "no target given: name at least one, such as --p99 2ms (see iobench slo --help)".into(),
        );
    }
    if a.start > a.max {
        return Err(format!("--start {} is above --max {}", a.start, a.max));
    }
    if a.job_args.is_empty() {
        return Err("no job given: put the job after --, such as -- --name=x --ioengine=nbd ... (see iobench slo --help)".into());
    }
    Ok(Some(a))
}

/// The most `--repeat-noisy` allows: a step is then run at most 11 times.
const MAX_REPEATS: usize = 10;

/// The highest rate `--start` and `--max` take (IOPS), and that a report reads from an
/// slo document: far above any device, far below where a rate's arithmetic fails.
pub const MAX_RATE: f64 = crate::present::html::MAX_SLO_RATE;

/// One step of the search: the job run at one offered rate (when it was noisy, the
/// median of its runs, with every run in `repeats`).
#[derive(Debug, Clone, Default)]
pub struct Step {
    pub offered_iops: f64,
    pub achieved_iops: f64,
    pub runtime_s: f64,
    pub ios: u64,
    pub mean_ns: f64,
    /// The targets' statistics, in the targets' order, in ns.
    pub values_ns: Vec<f64>,
    /// fio's closed-loop clat at the same percentiles (what a rate_iops run reports).
    pub clat_ns: Vec<f64>,
    pub missed_starts: u64,
    pub backlog_max: u64,
    pub exit_code: u8,
    pub pass: bool,
    /// Why the first run was not taken alone (None: it was).
    pub noisy: Option<String>,
    /// Every run at this rate, in order, when the step was repeated (else empty).
    pub repeats: Vec<Step>,
    /// Which of `repeats` the step's numbers are (0-based).
    pub used: usize,
}

/// The whole search.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The highest rate that met every target (0: none did, down to 1 IOPS).
    pub capacity_iops: f64,
    /// The lowest rate that did not (None: every rate up to --max did).
    pub failed_at: Option<f64>,
    /// The target that bound: the one furthest over its bound at `failed_at`.
    pub bound_by: Option<usize>,
    pub steps: Vec<Step>,
}

/// `iobench slo ARGS`: the exit status.
pub fn main(args: &[String]) -> u8 {
    match slo(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("iobench slo: {e}");
            1
        }
    }
}

fn slo(args: &[String]) -> Result<u8, String> {
    let Some(a) = parse_args(args)? else {
        print!("{}", SPEC.help());
        return Ok(0);
    };
    let inv = cli::parse_args(&a.job_args).map_err(|e| e.to_string())?;
    if inv.jobs.is_empty() {
        return Err("no job given after -- (see iobench slo --help)".into());
    }
    if inv.config.output.is_some() {
        return Err("--output after --: slo keeps each step's results itself; give iobench slo --output FILE instead".into());
    }
    // Check the job once, as a run at the first rate, before any I/O; and --output
    // before the search, not after it.
    let first = prepare(&inv, &a, a.start)?;
    if let Some(path) = &a.output {
        check_output(Path::new(path), &first.jobs)?;
        // Nor a job file the jobs were read from.
        crate::present::outputs::refuse_clobber(
            "--output",
            Path::new(path),
            a.job_args
                .iter()
                .filter(|s| !s.starts_with('-'))
                .map(Path::new),
        )?;
    }
    let outcome = search(&a, |rate| run_step(&inv, &a, rate))?;
    let text = serde_json::to_string_pretty(&document(&a, &outcome)).map_err(|e| e.to_string())?;
    if a.format == Format::Json {
        // Only JSON on stdout, as a plain run's --output-format=json.
        eprint!("{}", table(&a, &outcome));
        println!("{text}");
    } else {
        print!("{}", table(&a, &outcome));
    }
    if let Some(path) = &a.output {
        // A new file beside it renamed over it: never written through a planted link, a
        // FIFO or a device that appeared during the search.
        check_output(Path::new(path), &first.jobs)?;
        crate::safefs::write_output(Path::new(path), (text + "\n").as_bytes())
            .map_err(|e| format!("--output {path}: {e}"))?;
    }
    Ok(0)
}

/// The job at `rate`, checked as a plain run of it would be.
/// Refuses an `--output` that is not a regular file when it exists (a FIFO would hang
/// the write, a device or a directory is no place for a document; the type is read
/// with stat, which opens nothing), or that is one of the files the jobs work on.
fn check_output(path: &Path, jobs: &[crate::job::Job]) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            use std::os::unix::fs::FileTypeExt;
            let t = m.file_type();
            let kind = if t.is_dir() {
                "a directory"
            } else if t.is_fifo() {
                "a FIFO"
            } else if t.is_block_device() || t.is_char_device() {
                "a device"
            } else {
                "not a regular file"
            };
            return Err(format!(
                "--output {}: {kind}; expected a file to write the search's JSON to",
                path.display()
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("--output {}: {e}", path.display())),
    }
    for j in jobs {
        for f in j.files.all_paths(&j.name, j.exec.numjobs) {
            // The same file by any name, or, before the job has laid it out, by its name.
            if crate::present::outputs::same_file(path, Path::new(&f))
                || same_name(path, Path::new(&f))
            {
                return Err(format!(
                    "--output {}: that is the file job '{}' works on ({f}); writing it would \
                     destroy it: choose another file",
                    path.display(),
                    j.name
                ));
            }
        }
    }
    Ok(())
}

/// Whether two paths name the same place, read as text from the working directory
/// (`.` and `..` taken away, nothing looked up): a file not made yet has no identity.
fn same_name(a: &Path, b: &Path) -> bool {
    fn plain(p: &Path) -> Option<std::path::PathBuf> {
        use std::path::Component;
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().ok()?.join(p)
        };
        let mut out = std::path::PathBuf::new();
        for c in abs.components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                c => out.push(c),
            }
        }
        Some(out)
    }
    matches!((plain(a), plain(b)), (Some(x), Some(y)) if x == y)
}

fn prepare(inv: &cli::Invocation, a: &Args, rate: f64) -> Result<crate::session::Prepared, String> {
    let mut jobs = inv.jobs.clone();
    let secs = step_time_us(a, rate);
    let mut set = vec![
        (
            "rate_iops".to_string(),
            format!("{}", rate.round().max(1.0) as u64),
        ),
        ("time_based".to_string(), "1".to_string()),
        ("runtime".to_string(), format!("{secs}us")),
    ];
    let job_arrival = |j: &crate::defs::raw::RawJob| {
        j.get(&crate::options::table::ARRIVAL)
            .and_then(|o| o.value.clone())
            .filter(|v| v != "closed")
    };
    for j in &mut jobs {
        let arrival = a
            .arrival
            .clone()
            .or_else(|| job_arrival(j))
            .unwrap_or_else(|| "fixed".to_string());
        set.retain(|(k, _)| k != "arrival");
        set.push(("arrival".to_string(), arrival));
        *j = crate::study::sweep::apply(std::slice::from_ref(j), &set)?
            .pop()
            .expect("one job");
    }
    let mut config = inv.config.clone();
    // The steps' reports are kept as data; nothing of them is printed.
    config.formats = vec![OutputFormat::Json];
    let run_inv = cli::Invocation {
        config,
        jobs,
        ..Default::default()
    };
    crate::session::prepare(&run_inv).map_err(|e| e.to_string())
}

/// How long a step at `rate` runs: enough I/Os for the strictest target, between
/// `--min-time` and `--max-time`.
fn step_time_us(a: &Args, rate: f64) -> u64 {
    let need = samples_needed(a);
    let us = (need as f64 / rate * 1e6).ceil() as u64;
    us.clamp(a.min_time_us, a.max_time_us.max(a.min_time_us))
}

/// One step: the job run at `rate`, its scheduled latencies summed over every job and
/// direction.
fn run_step(inv: &cli::Invocation, a: &Args, rate: f64) -> Result<Step, String> {
    let p = prepare(inv, a, rate)?;
    let f = crate::session::run_quiet(&p);
    if f.interrupted() {
        return Err("interrupted".into());
    }
    // A failed job says nothing about latency: the search stops there.
    if f.code != 0 {
        return Err(format!(
            "the job failed at {rate:.0} IOPS (exit status {}): see its error above",
            f.code
        ));
    }
    let mut sched = IoStat::default();
    let mut hist = Hist::new();
    let mut clat_hist = Hist::new();
    let (mut missed, mut backlog, mut ios, mut runtime_ms) = (0, 0, 0, 0);
    for t in &f.summary.threads {
        for d in &t.dir {
            sched.merge(&d.sched);
            hist.merge(&d.sched_hist);
            clat_hist.merge(&d.hist[crate::stats::LatKind::Clat as usize]);
            missed += d.missed_starts;
            backlog = backlog.max(d.backlog_max);
            ios += d.ios;
            runtime_ms = runtime_ms.max(d.runtime_ms);
        }
    }
    let runtime_s = (runtime_ms.max(1)) as f64 / 1000.0;
    let mean_ns = sched.summary().map_or(0.0, |m| m.mean);
    let value = |h: &Hist, s: Stat, mean: f64| match s {
        Stat::Mean => mean,
        Stat::Percentile(q) => h.percentiles(&[q], h.total()).first().copied().unwrap_or(0) as f64,
    };
    let values_ns: Vec<f64> = a
        .targets
        .iter()
        .map(|t| value(&hist, t.stat, mean_ns))
        .collect();
    let clat_mean = f
        .summary
        .threads
        .iter()
        .flat_map(|t| t.dir.iter())
        .fold(IoStat::default(), |mut acc, d| {
            acc.merge(&d.clat);
            acc
        })
        .summary()
        .map_or(0.0, |m| m.mean);
    let clat_ns = a
        .targets
        .iter()
        .map(|t| value(&clat_hist, t.stat, clat_mean))
        .collect();
    let met = a
        .targets
        .iter()
        .zip(&values_ns)
        .all(|(t, v)| *v <= t.max_ns as f64);
    Ok(Step {
        offered_iops: rate,
        achieved_iops: ios as f64 / runtime_s,
        runtime_s,
        ios,
        mean_ns,
        values_ns,
        clat_ns,
        missed_starts: missed,
        backlog_max: backlog,
        exit_code: f.code,
        pass: met && f.code == 0 && sched.samples > 0,
        ..Default::default()
    })
}

/// The I/Os a step needs for its strictest target.
fn samples_needed(a: &Args) -> u64 {
    a.targets
        .iter()
        .map(|t| t.stat.samples_needed())
        .max()
        .unwrap_or(100)
}

/// Why one run of a step cannot decide alone: its verdict rests on fewer I/Os than the
/// strictest percentile needs (less `--noise`: a step of exactly the planned length may
/// lose a few at its start), unless it missed because the storage fell behind the offered
/// rate (more I/Os would not change that); or a value lies within `--noise` of its bound,
/// where the verdict turns on the noise. None when the run is clear.
fn noise_of(a: &Args, s: &Step) -> Option<String> {
    let need = samples_needed(a);
    let overloaded = s.achieved_iops < (1.0 - a.noise) * s.offered_iops;
    if (s.ios as f64) < (1.0 - a.noise) * need as f64 && (s.pass || !overloaded) {
        return Some(format!(
            "{} on {} I/Os, fewer than the {need} its strictest target needs",
            if s.pass { "met" } else { "missed" },
            s.ios
        ));
    }
    a.targets.iter().zip(&s.values_ns).find_map(|(t, v)| {
        let bound = t.max_ns as f64;
        ((v / bound - 1.0).abs() <= a.noise).then(|| {
            format!(
                "{} {} ms within {}% of its target {} ms",
                t.stat.name(),
                ms(*v),
                a.noise * 100.0,
                ms(bound)
            )
        })
    })
}

/// How the runs of one step disagree: different verdicts, or a target's values further
/// apart than `--noise` of its bound (what matters is whether the verdict could turn: 4
/// and 6 ms agree under a 30 ms target). None when they agree.
fn disagreement(a: &Args, runs: &[Step]) -> Option<String> {
    let met = runs.iter().filter(|r| r.pass).count();
    if met != 0 && met != runs.len() {
        return Some(format!("met in {met} of {} runs", runs.len()));
    }
    a.targets.iter().enumerate().find_map(|(i, t)| {
        let vals = runs.iter().map(|r| r.values_ns[i]);
        let lo = vals.clone().fold(f64::MAX, f64::min);
        let hi = vals.fold(0.0, f64::max);
        ((hi - lo) / t.max_ns as f64 > a.noise).then(|| {
            format!(
                "{} from {} to {} ms across the runs",
                t.stat.name(),
                ms(lo),
                ms(hi)
            )
        })
    })
}

/// How far over its targets a run is: its largest value / bound.
fn worst_ratio(a: &Args, s: &Step) -> f64 {
    a.targets
        .iter()
        .zip(&s.values_ns)
        .map(|(t, v)| v / t.max_ns as f64)
        .fold(0.0, f64::max)
}

/// One step at `rate`: a run, and when it is noisy ([`noise_of`]) more runs, up to
/// `--repeat-noisy`, until the runs agree. A repeated step is its median run by the
/// worst target's ratio to its bound (with an even count, the worse of the middle two:
/// a capacity claimed must hold).
fn measure(
    a: &Args,
    rate: f64,
    step: &mut impl FnMut(f64) -> Result<Step, String>,
) -> Result<Step, String> {
    let first = step(rate)?;
    let Some(why) = noise_of(a, &first) else {
        return Ok(first);
    };
    if a.repeat_noisy == 0 {
        return Ok(Step {
            noisy: Some(format!("{why}; not repeated (--repeat-noisy 0)")),
            ..first
        });
    }
    let mut runs = vec![first];
    let mut disagree = None;
    while runs.len() <= a.repeat_noisy {
        eprintln!(
            "iobench slo: {rate:.0} IOPS is noisy ({why}): run {} of at most {}",
            runs.len() + 1,
            a.repeat_noisy + 1
        );
        runs.push(step(rate)?);
        disagree = disagreement(a, &runs);
        if disagree.is_none() {
            break;
        }
    }
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&x, &y| worst_ratio(a, &runs[x]).total_cmp(&worst_ratio(a, &runs[y])));
    let used = order[runs.len() / 2];
    let noisy = match disagree {
        None => format!("{why}; the {} runs agree", runs.len()),
        Some(d) => format!("{why}; the {} runs still disagree ({d})", runs.len()),
    };
    Ok(Step {
        noisy: Some(noisy),
        used,
        repeats: runs.clone(),
        ..runs[used].clone()
    })
}

/// The search over rates, with `step` running the job at one rate: the ramp (doubling, or
/// halving when the first rate fails), then bisection to `a.precision`.
pub fn search(
    a: &Args,
    mut step: impl FnMut(f64) -> Result<Step, String>,
) -> Result<Outcome, String> {
    let mut steps = Vec::new();
    let mut run = |rate: f64, steps: &mut Vec<Step>| -> Result<bool, String> {
        let s = measure(a, rate, &mut step)?;
        eprintln!(
            "iobench slo: {:.0} IOPS offered, {:.0} achieved: {}{}",
            s.offered_iops,
            s.achieved_iops,
            if s.pass { "met" } else { "missed" },
            if s.repeats.is_empty() {
                String::new()
            } else {
                format!(" (run {} of {}, the median)", s.used + 1, s.repeats.len())
            }
        );
        let pass = s.pass;
        steps.push(s);
        Ok(pass)
    };
    let (mut lo, mut hi) = (0.0, None);
    let mut rate = a.start;
    if run(rate, &mut steps)? {
        lo = rate;
        while rate < a.max {
            rate = (rate * 2.0).min(a.max);
            if run(rate, &mut steps)? {
                lo = rate;
            } else {
                hi = Some(rate);
                break;
            }
        }
    } else {
        hi = Some(rate);
        while rate > 1.0 {
            rate = (rate / 2.0).max(1.0);
            if run(rate, &mut steps)? {
                lo = rate;
                break;
            }
            hi = Some(rate);
        }
    }
    if lo > 0.0 {
        while let Some(h) = hi {
            if (h - lo) / lo <= a.precision {
                break;
            }
            let mid = (lo + h) / 2.0;
            if run(mid, &mut steps)? {
                lo = mid;
            } else {
                hi = Some(mid);
            }
        }
    }
    // The bound: the target furthest over its limit at the lowest failing rate.
    let bound_by = hi.and_then(|h| {
        let s = steps.iter().find(|s| s.offered_iops == h)?;
        a.targets
            .iter()
            .zip(&s.values_ns)
            .enumerate()
            .map(|(i, (t, v))| (i, v / t.max_ns as f64))
            .max_by(|x, y| x.1.total_cmp(&y.1))
            .map(|(i, _)| i)
    });
    Ok(Outcome {
        capacity_iops: lo,
        failed_at: hi,
        bound_by,
        steps,
    })
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// The result as text: the capacity, the bound, then the latency–throughput curve by
/// offered rate.
pub fn table(a: &Args, o: &Outcome) -> String {
    let mut out = String::new();
    let targets: Vec<String> = a
        .targets
        .iter()
        .map(|t| format!("{} <= {} ms", t.stat.name(), ms(t.max_ns as f64)))
        .collect();
    let _ = writeln!(
        out,
        "targets (latency from the scheduled start): {}",
        targets.join(", ")
    );
    if o.capacity_iops > 0.0 {
        let _ = write!(out, "capacity: {:.0} IOPS", o.capacity_iops);
        match (o.failed_at, o.bound_by) {
            (Some(h), Some(b)) => {
                let _ = writeln!(
                    out,
                    " (missed at {h:.0} IOPS; bound by {}; precision {}%)",
                    a.targets[b].stat.name(),
                    a.precision * 100.0
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    " (every rate up to --max {:.0} met the targets)",
                    a.max
                );
            }
        }
    } else {
        let _ = writeln!(
            out,
            "capacity: none (the targets were missed even at 1 IOPS)"
        );
    }
    let mut rows = o.steps.clone();
    rows.sort_by(|x, y| x.offered_iops.total_cmp(&y.offered_iops));
    let mut head = vec!["offered".to_string(), "achieved".into(), "mean ms".into()];
    for t in &a.targets {
        if t.stat != Stat::Mean {
            head.push(format!("{} ms", t.stat.name()));
            head.push(format!("clat {}", t.stat.name()));
        }
    }
    head.extend([
        "missed".into(),
        "backlog".into(),
        "runs".into(),
        "met".into(),
    ]);
    let mut cells = vec![head];
    for s in &rows {
        let mut r = vec![
            format!("{:.0}", s.offered_iops),
            format!("{:.0}", s.achieved_iops),
            ms(s.mean_ns),
        ];
        for (i, t) in a.targets.iter().enumerate() {
            if t.stat != Stat::Mean {
                r.push(ms(s.values_ns[i]));
                r.push(ms(s.clat_ns[i]));
            }
        }
        r.push(s.missed_starts.to_string());
        r.push(s.backlog_max.to_string());
        r.push(if s.repeats.is_empty() {
            "1".to_string()
        } else {
            format!("{} (#{})", s.repeats.len(), s.used + 1)
        });
        r.push(if s.pass { "yes" } else { "no" }.into());
        cells.push(r);
    }
    let widths: Vec<usize> = (0..cells[0].len())
        .map(|c| cells.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for r in &cells {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    // The noisy steps: why, and which run the search went by.
    for s in rows.iter().filter(|s| s.noisy.is_some()) {
        let why = s.noisy.as_deref().unwrap_or_default();
        if s.repeats.is_empty() {
            let _ = writeln!(out, "noisy: {:.0} IOPS: {why}", s.offered_iops);
            continue;
        }
        let verdicts: Vec<&str> = s
            .repeats
            .iter()
            .map(|r| if r.pass { "met" } else { "missed" })
            .collect();
        let _ = writeln!(
            out,
            "noisy: {:.0} IOPS: {why}: runs {}; used run {} (the median)",
            s.offered_iops,
            verdicts.join(", "),
            s.used + 1
        );
    }
    out
}

/// The result as JSON.
pub fn document(a: &Args, o: &Outcome) -> serde_json::Value {
    use serde_json::json;
    let mut rows = o.steps.clone();
    rows.sort_by(|x, y| x.offered_iops.total_cmp(&y.offered_iops));
    let by_target = |v: &[f64]| {
        a.targets
            .iter()
            .zip(v)
            .map(|(t, x)| (t.stat.name(), json!(x)))
            .collect::<serde_json::Map<_, _>>()
    };
    // One run's numbers (a step's, or one of its repeats').
    let run = |r: &Step| {
        let v = json!({
            "offered_iops": r.offered_iops,
            "achieved_iops": r.achieved_iops,
            "ios": r.ios,
            "sched_lat_mean_ns": r.mean_ns,
            "sched_lat_ns": by_target(&r.values_ns),
            "clat_ns": by_target(&r.clat_ns),
            "missed_starts": r.missed_starts,
            "met": r.pass,
        });
        match v {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        }
    };
    json!({
        "capacity_iops": o.capacity_iops,
        "missed_at_iops": o.failed_at,
        "bound_by": o.bound_by.map(|b| a.targets[b].stat.name()),
        "precision": a.precision,
        "targets": a.targets.iter().map(|t| json!({
            "stat": t.stat.name(),
            "max_ns": t.max_ns,
            "samples_per_step": t.stat.samples_needed(),
        })).collect::<Vec<_>>(),
        "steps": rows.iter().map(|s| {
            let mut v = run(s);
            v.insert("runtime_s".into(), json!(s.runtime_s));
            v.insert("backlog_max".into(), json!(s.backlog_max));
            v.insert("exit_code".into(), json!(s.exit_code));
            v.insert("runs".into(), json!(s.repeats.len().max(1)));
            v.insert("noisy".into(), json!(s.noisy));
            v.insert(
                "used_run".into(),
                json!((!s.repeats.is_empty()).then_some(s.used + 1)),
            );
            v.insert(
                "repeats".into(),
                s.repeats.iter().map(|r| serde_json::Value::Object(run(r))).collect(),
            );
            serde_json::Value::Object(v)
        }).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Result<Option<Args>, String> {
        let v: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        parse_args(&v)
    }

    #[test]
    fn output_format_as_a_plain_runs() {
        let json = |f: &[&str]| {
            let mut v = vec!["--p99", "2ms"];
            v.extend_from_slice(f);
            v.extend_from_slice(&["--", "--name=x"]);
            args(&v).map(|a| a.unwrap().format == Format::Json)
        };
        assert_eq!(json(&[]), Ok(false));
        assert_eq!(json(&["--output-format=json"]), Ok(true));
        assert_eq!(json(&["--output-format", "normal"]), Ok(false));
        assert_eq!(json(&["--json"]), Ok(true));
        let e = json(&["--output-format=xml"]).unwrap_err();
        assert!(
            e.contains("--output-format") && e.contains("normal or json"),
            "{e}"
        );
    }

    #[test]
    fn targets_and_flags_are_read() {
        let a = args(&[
            "--p99",
            "2ms",
            "--p99.9",
            "5ms",
            "--mean",
            "500",
            "--precision",
            "2%",
            "--",
            "--name=x",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(a.targets.len(), 3);
        assert_eq!(a.targets[0].stat, Stat::Percentile(99.0));
        assert_eq!(a.targets[0].max_ns, 2_000_000);
        assert_eq!(a.targets[1].stat, Stat::Percentile(99.9));
        assert_eq!(a.targets[2].max_ns, 500_000);
        assert!((a.precision - 0.02).abs() < 1e-12);
        assert_eq!(a.job_args, ["--name=x"]);
        // The rule: ten I/Os beyond the percentile.
        assert_eq!(Stat::Percentile(99.0).samples_needed(), 1000);
        assert_eq!(Stat::Percentile(99.9).samples_needed(), 10_000);
        assert_eq!(step_time_us(&a, 1000.0), 10_000_000);
    }

    #[test]
    fn bad_input_names_the_flag() {
        let e = args(&["--p99", "fast", "--", "--name=x"]).unwrap_err();
        assert!(e.contains("--p99") && e.contains("fast"), "{e}");
        let e = args(&["--p99", "2ms", "--precision", "5", "--", "--name=x"]).unwrap_err();
        assert!(e.contains("--precision") && e.contains("5%"), "{e}");
        let e = args(&["--", "--name=x"]).unwrap_err();
        assert!(e.contains("no target"), "{e}");
        let e = args(&["--p99", "2ms"]).unwrap_err();
        assert!(e.contains("no job"), "{e}");
    }

    fn fake(rate: f64, capacity: f64) -> Step {
        let lat = if rate <= capacity { 1e6 } else { 1e9 };
        Step {
            offered_iops: rate,
            achieved_iops: rate.min(capacity),
            runtime_s: 1.0,
            ios: 1,
            mean_ns: lat,
            values_ns: vec![lat],
            clat_ns: vec![1e6],
            missed_starts: 0,
            backlog_max: 0,
            exit_code: 0,
            pass: rate <= capacity,
            ..Default::default()
        }
    }

    /// A step whose first run at `fluke` is a miss just over its 2 ms bound (a noisy
    /// host), every other run clear: the repeats outvote it, the search goes on past it,
    /// and the step keeps its three runs; without repeats the fluke decides.
    #[test]
    fn a_noisy_step_is_repeated_and_the_median_run_decides() {
        let a = args(&["--p99", "2ms", "--precision", "1%", "--", "--name=x"])
            .unwrap()
            .unwrap();
        assert_eq!((a.repeat_noisy, a.noise), (2, 0.10));
        let search_with = |a: &Args| {
            let mut seen = std::collections::HashMap::new();
            search(a, |r| {
                let n = seen.entry(r.to_bits()).or_insert(0);
                *n += 1;
                let mut s = fake(r, 1000.0);
                s.ios = 5000;
                if r == 400.0 && *n == 1 {
                    // 2.1 ms: missed, within 10% of the bound.
                    s.values_ns = vec![2.1e6];
                    s.pass = false;
                } else if r <= 1000.0 {
                    s.values_ns = vec![1e6 + r + f64::from(*n) * 1000.0];
                }
                Ok(s)
            })
            .unwrap()
        };
        let o = search_with(&a);
        let step = o.steps.iter().find(|s| s.offered_iops == 400.0).unwrap();
        assert!(step.pass, "{step:?}");
        assert_eq!(
            step.repeats.len(),
            3,
            "the two repeats disagreed with the fluke"
        );
        assert!(!step.repeats[0].pass && step.repeats[1].pass && step.repeats[2].pass);
        assert_eq!(step.used, 2, "the median of 2.1, 1.0024 and 1.0034 ms");
        assert_eq!(step.values_ns, [1.0034e6]);
        assert!(step
            .noisy
            .as_deref()
            .unwrap()
            .contains("p99 2.100 ms within 10%"));
        assert!(
            o.capacity_iops > 900.0 && o.capacity_iops <= 1000.0,
            "{o:?}"
        );
        let text = table(&a, &o);
        assert!(
            text.contains("noisy: 400 IOPS: p99 2.100 ms within 10% of its target 2.000 ms")
                && text.contains("runs missed, met, met; used run 3 (the median)"),
            "{text}"
        );
        let doc = document(&a, &o);
        let js = doc["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["offered_iops"] == 400.0)
            .unwrap();
        assert_eq!(js["runs"], 3);
        assert_eq!(js["used_run"], 3);
        assert_eq!(js["repeats"][0]["met"], false);
        // Without repeats the fluke stops the ramp at 400 IOPS.
        let once = Args {
            repeat_noisy: 0,
            ..a.clone()
        };
        let o = search_with(&once);
        assert!(o.capacity_iops < 400.0, "{o:?}");
        let step = o.steps.iter().find(|s| s.offered_iops == 400.0).unwrap();
        assert!(step.repeats.is_empty() && step.noisy.is_some());
    }

    #[test]
    fn too_few_ios_for_the_percentile_is_noisy() {
        let a = args(&["--p99.9", "2ms", "--", "--name=x"])
            .unwrap()
            .unwrap();
        let mut s = fake(100.0, 1000.0);
        s.ios = 500;
        assert!(noise_of(&a, &s)
            .unwrap()
            .contains("met on 500 I/Os, fewer than the 10000"));
        // A miss on too few I/Os is noisy too, unless the storage fell behind the rate.
        s.pass = false;
        s.values_ns = vec![1e9];
        assert!(noise_of(&a, &s).unwrap().contains("missed on 500 I/Os"));
        s.achieved_iops = 50.0;
        assert_eq!(noise_of(&a, &s), None);
        // 9,000 of 10,000 is near enough.
        s.pass = true;
        s.values_ns = vec![1e6];
        s.ios = 9_000;
        assert_eq!(noise_of(&a, &s), None);
        let e = args(&["--p99", "2ms", "--repeat-noisy", "x", "--", "--name=x"]).unwrap_err();
        assert!(e.contains("--repeat-noisy") && e.contains("0 to 10"), "{e}");
        let e = args(&["--p99", "2ms", "--noise", "0%", "--", "--name=x"]).unwrap_err();
        assert!(e.contains("--noise"), "{e}");
    }

    #[test]
    fn search_ramps_then_bisects_to_the_precision() {
        let a = args(&["--p99", "2ms", "--precision", "1%", "--", "--name=x"])
            .unwrap()
            .unwrap();
        for cap in [1.0, 37.0, 5000.0, 123_456.0] {
            let o = search(&a, |r| Ok(fake(r, cap))).unwrap();
            let hi = o.failed_at.unwrap();
            assert!(o.capacity_iops <= cap && cap < hi, "{cap}: {o:?}");
            assert!((hi - o.capacity_iops) / o.capacity_iops <= 0.01, "{cap}");
            assert_eq!(o.bound_by, Some(0));
        }
        let o = search(&a, |r| Ok(fake(r, 0.5))).unwrap();
        assert_eq!(o.capacity_iops, 0.0);
    }
}
