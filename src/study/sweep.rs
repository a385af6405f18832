//! `iobench sweep`: one job (a job file or command-line options) run over the cartesian
//! product of axes, in this process, each point exactly as a plain run of the job with the
//! point's settings would run. Each point's fio-format JSON+ goes to the result directory,
//! named after its settings, with an index (`index.json`, `index.csv`) of what every point
//! did; a second run of the same sweep skips the points already done.

use super::axis::{self, Axis, Point};
use super::table::{self, Table};
use crate::cli::{self, OutputFormat};
use crate::defs::raw::RawJob;
use crate::error::Origin;
use crate::flags::{Flag, Spec, Takes};
use crate::job::Job;
use crate::options;
use crate::present::results::{self, DirResult};
use crate::session::Prepared;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What `iobench sweep` was asked to do.
#[derive(Debug, Default)]
struct Args {
    axes: Vec<Axis>,
    dir: Option<PathBuf>,
    dry_run: bool,
    fresh: bool,
    markdown: bool,
    job_args: Vec<String>,
}

/// `iobench sweep`'s flags; anything else is the job, as a plain run takes it.
pub const SPEC: Spec = Spec {
    command: "sweep",
    usage: "\
usage: iobench sweep --axis NAME=VALUES [--axis ...] [--zip NAME=VALUES] [-o DIR]
                     [--dry-run] [--fresh] [--markdown] [--] JOB...

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
        },
        Flag {
            names: &["--zip"],
            takes: Takes::Value,
            form: "NAME=VALUES",
            help: "an option that takes its i-th value with the previous axis's i-th",
        },
        Flag {
            names: &["--dir", "-o", "--results"],
            takes: Takes::Value,
            form: "DIR",
            help: "the result directory (default: sweep-<time>): one JSON+ per\n\
                   point, index.json and index.csv",
        },
        Flag {
            names: &["--dry-run"],
            takes: Takes::Nothing,
            form: "",
            help: "list the points and the estimated time, run nothing",
        },
        Flag {
            names: &["--fresh"],
            takes: Takes::Nothing,
            form: "",
            help: "start over in a directory that holds another sweep",
        },
        Flag {
            names: &["--markdown"],
            takes: Takes::Nothing,
            form: "",
            help: "print the final table as markdown",
        },
    ],
    pass_unknown: true,
    attached: false,
    single_dash: false,
};

/// Reads the arguments: `None` when `--help` was asked for.
fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let m = SPEC.parse(args)?;
    if m.help {
        return Ok(None);
    }
    let mut a = Args {
        job_args: m.positional,
        ..Default::default()
    };
    a.job_args.extend(m.rest.unwrap_or_default());
    for (flag, v) in m.flags {
        let v = v.unwrap_or_default();
        match flag {
            "--axis" => {
                let (name, values) = axis::parse_spec("--axis", &v)?;
                a.axes.push(Axis {
                    name,
                    values,
                    zipped: vec![],
                });
            }
            "--zip" => {
                let (name, values) = axis::parse_spec("--zip", &v)?;
                let last = a.axes.last_mut().ok_or(
                    "--zip moves an option with the --axis before it: give an --axis first",
                )?;
                axis::zip(last, name, values)?;
            }
            "--dir" => a.dir = Some(v.into()),
            "--dry-run" => a.dry_run = true,
            "--fresh" => a.fresh = true,
            _ => a.markdown = true,
        }
    }
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

/// The seconds a run of `jobs` should take, when every group is bounded by time.
pub fn estimate_s(jobs: &[Job]) -> Option<f64> {
    let mut total = 0.0;
    for phase in crate::run::groups::phases(jobs) {
        let mut longest: f64 = 0.0;
        for &ji in &phase {
            let e = &jobs[ji].exec;
            if e.runtime_us == 0 {
                return None;
            }
            let us = e.startdelay_us.hi + e.ramp_time_us + e.runtime_us;
            longest = longest.max(us as f64 / 1e6);
        }
        total += longest;
    }
    Some(total)
}

/// `90` → `1m30s`.
pub fn duration_text(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// How one point ended.
#[derive(Debug, Clone)]
struct PointResult {
    point: Point,
    file: String,
    status: &'static str,
    exit_code: Option<u8>,
    elapsed_s: f64,
    dirs: Vec<DirResult>,
}

/// The sweep's identity, kept in `sweep.json`: a directory holds one sweep.
fn plan_value(a: &Args) -> Value {
    json!({
        "args": a.job_args,
        "axes": a.axes.iter().map(|x| json!({
            "name": x.name,
            "values": x.values,
            "zip": x.zipped.iter().map(|(n, v)| json!({"name": n, "values": v})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// Runs `iobench sweep ARGS`; returns the exit status.
pub fn main(args: &[String]) -> u8 {
    match sweep(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("iobench sweep: {e}");
            1
        }
    }
}

fn sweep(args: &[String]) -> Result<u8, String> {
    let Some(a) = parse_args(args)? else {
        print!("{}", SPEC.help());
        return Ok(0);
    };
    let inv = cli::parse_args(&a.job_args).map_err(|e| e.to_string())?;
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
    let known: Option<f64> = planned.iter().map(|(_, e, _)| *e).sum();
    if a.dry_run {
        println!("{} points", points.len());
        for (k, (p, est, _)) in planned.iter().enumerate() {
            let est = est.map_or("size-bound".into(), duration_text);
            println!("  {:>4}  {}  ({est})", k + 1, settings_text(p));
        }
        match known {
            Some(s) => println!("estimated time: {}", duration_text(s)),
            None => println!("estimated time: unknown (some points are bound by size, not time)"),
        }
        return Ok(0);
    }
    let dir = a.dir.clone().unwrap_or_else(default_dir);
    let mut own_names: Vec<String> = ["index.json", "index.csv", "index.json.tmp", "index.csv.tmp"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (p, _, _) in &planned {
        let stem = axis::point_stem(p);
        own_names.extend(
            ["json", "failed.json", "json.partial"]
                .iter()
                .map(|ext| format!("{stem}.{ext}")),
        );
    }
    prepare_dir(&dir, &plan_value(&a), a.fresh, &own_names)?;
    // The sweep records where and how it ran (the first point's jobs stand for the rest).
    let argv: Vec<String> = std::env::args().collect();
    let env = crate::context::env::collect(&argv, &first_jobs);
    let started = Instant::now();
    let mut done: Vec<PointResult> = Vec::new();
    let mut ran_s = 0.0;
    let mut ran_n = 0usize;
    let mut code = 0u8;
    for (k, (p, _, prepared)) in planned.iter().enumerate() {
        let stem = axis::point_stem(p);
        let file = format!("{stem}.json");
        let path = dir.join(&file);
        if let Some(prev) = results::read(&path).ok().filter(|f| !f.jobs.is_empty()) {
            eprintln!(
                "sweep: point {}/{} {} done before, skipped",
                k + 1,
                points.len(),
                settings_text(p)
            );
            done.push(PointResult {
                point: p.clone(),
                file,
                status: "ok",
                exit_code: Some(0),
                elapsed_s: 0.0,
                dirs: results::totals(&prev),
            });
            continue;
        }
        let left: Vec<Option<f64>> = planned[k..].iter().map(|x| x.1).collect();
        eprintln!(
            "sweep: point {}/{} {}{}",
            k + 1,
            points.len(),
            settings_text(p),
            eta_text(&left, ran_s, ran_n)
        );
        let t0 = Instant::now();
        let r = run_point(prepared, &dir, &stem);
        let elapsed = t0.elapsed().as_secs_f64();
        ran_s += elapsed;
        ran_n += 1;
        let (status, exit_code, dirs) = match r {
            Ok((0, dirs)) => ("ok", Some(0), dirs),
            Ok((c, dirs)) => {
                code = code.max(1);
                ("failed", Some(c), dirs)
            }
            Err(e) => {
                eprintln!("sweep: point {}: {e}", settings_text(p));
                code = code.max(1);
                ("failed", None, vec![])
            }
        };
        if status == "ok" {
            eprintln!("sweep:   {}", brief(&dirs));
        }
        done.push(PointResult {
            point: p.clone(),
            file: if status == "ok" {
                file
            } else {
                format!("{stem}.failed.json")
            },
            status,
            exit_code,
            elapsed_s: elapsed,
            dirs,
        });
        write_index(&dir, &a, &env, &done)?;
        if let Some(sig) = crate::run::signals::signalled() {
            eprintln!("sweep: stopped by signal {sig} after {} of {} points; run the same sweep again to resume", done.len(), points.len());
            return Ok(128u8.saturating_add(sig as u8));
        }
    }
    write_index(&dir, &a, &env, &done)?;
    let t = result_table(&a.axes, &done);
    print!("{}", if a.markdown { t.markdown() } else { t.text() });
    eprintln!(
        "sweep: {} points in {}, results in {}",
        done.len(),
        duration_text(started.elapsed().as_secs_f64()),
        dir.display()
    );
    Ok(code)
}

/// Runs one point with its JSON+ going to `<stem>.json` (via a partial file, so an
/// interrupted point is never taken as done). Returns the exit status and the totals.
fn run_point(prepared: &Prepared, dir: &Path, stem: &str) -> Result<(u8, Vec<DirResult>), String> {
    let partial = dir.join(format!("{stem}.json.partial"));
    let point = prepared.reporting_to(&partial.to_string_lossy(), vec![OutputFormat::JsonPlus]);
    let ran = crate::session::run_reported(&point)?;
    let dirs = results::read(&partial)
        .map(|f| results::totals(&f))
        .unwrap_or_default();
    let name = if ran.code == 0 && crate::run::signals::signalled().is_none() {
        format!("{stem}.json")
    } else if crate::run::signals::signalled().is_some() {
        let _ = std::fs::remove_file(&partial);
        return Ok((ran.code, dirs));
    } else {
        format!("{stem}.failed.json")
    };
    std::fs::rename(&partial, dir.join(name)).map_err(|e| format!("{}: {e}", partial.display()))?;
    Ok((ran.code, dirs))
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
fn prepare_dir(dir: &Path, plan: &Value, fresh: bool, own_names: &[String]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let plan_path = dir.join("sweep.json");
    if let Ok(text) = std::fs::read_to_string(&plan_path) {
        let old: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if &old != plan {
            if !fresh {
                return Err(format!(
                    "{} holds another sweep (its sweep.json differs): use another -o DIR, or --fresh to start over there",
                    dir.display()
                ));
            }
            remove_points(dir);
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
    std::fs::write(&plan_path, text + "\n").map_err(|e| format!("{}: {e}", plan_path.display()))
}

/// Removes the point files an earlier sweep's index lists (nothing else in the directory).
fn remove_points(dir: &Path) {
    let Ok(text) = std::fs::read_to_string(dir.join("index.json")) else {
        return;
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return;
    };
    for p in v["points"].as_array().into_iter().flatten() {
        if let Some(f) = p["file"].as_str().filter(|f| !f.contains('/')) {
            let _ = std::fs::remove_file(dir.join(f));
        }
    }
    let _ = std::fs::remove_file(dir.join("index.json"));
    let _ = std::fs::remove_file(dir.join("index.csv"));
}

fn settings_text(p: &Point) -> String {
    p.iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The sweep's remaining time: the estimates when every point left is bound by time,
/// else the mean time of the points run so far.
fn eta_text(left: &[Option<f64>], ran_s: f64, ran_n: usize) -> String {
    let s = match left.iter().copied().sum::<Option<f64>>() {
        Some(s) => s,
        None if ran_n > 0 => ran_s / ran_n as f64 * left.len() as f64,
        None => return String::new(),
    };
    format!(" (sweep ETA {})", duration_text(s))
}

fn brief(dirs: &[DirResult]) -> String {
    dirs.iter()
        .map(|d| {
            format!(
                "{} {} IOPS, {} MiB/s, lat {} us (p99 {} us)",
                d.dir,
                table::si(d.iops),
                table::mib_s(d.bw_bytes),
                table::us(d.lat_mean_ns),
                table::us(d.p99_ns)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn dir_value(d: &DirResult) -> Value {
    json!({
        "iops": d.iops,
        "bw_bytes": d.bw_bytes,
        "io_bytes": d.io_bytes,
        "total_ios": d.total_ios,
        "runtime_ms": d.runtime_ms,
        "lat_mean_ns": d.lat_mean_ns,
        "lat_min_ns": d.lat_min_ns,
        "lat_max_ns": d.lat_max_ns,
        "percentiles_of": d.pct_of,
        "p50_ns": d.p50_ns,
        "p90_ns": d.p90_ns,
        "p99_ns": d.p99_ns,
        "p99_9_ns": d.p99_9_ns,
    })
}

/// Writes `index.json` and `index.csv` for the points so far (rewritten after each).
fn write_index(dir: &Path, a: &Args, env: &Value, done: &[PointResult]) -> Result<(), String> {
    let points: Vec<Value> = done
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let mut v = json!({
                "point": k + 1,
                "params": r.point.iter().map(|(n, v)| (n.clone(), Value::from(v.clone()))).collect::<serde_json::Map<_, _>>(),
                "file": r.file,
                "status": r.status,
                "exit_code": r.exit_code,
                "elapsed_s": r.elapsed_s,
            });
            for d in &r.dirs {
                v[d.dir.as_str()] = dir_value(d);
            }
            v
        })
        .collect();
    let index = json!({
        "iobench": crate::report::VERSION,
        "sweep": plan_value(a),
        "iobench_env": env,
        "points": points,
    });
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        let tmp = dir.join(format!("{name}.tmp"));
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    write(
        "index.json",
        serde_json::to_string_pretty(&index).unwrap_or_default() + "\n",
    )?;
    let names: Vec<&String> = done
        .first()
        .map_or(vec![], |r| r.point.iter().map(|p| &p.0).collect());
    let mut csv = String::from("point");
    for n in &names {
        csv.push(',');
        csv.push_str(n);
    }
    csv.push_str(",dir,iops,bw_bytes,lat_mean_ns,p50_ns,p90_ns,p99_ns,p99_9_ns,status,file\n");
    let quote = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    for (k, r) in done.iter().enumerate() {
        let lead: String = r
            .point
            .iter()
            .map(|(_, v)| format!(",{}", quote(v)))
            .collect();
        let rows: Vec<Option<&DirResult>> = if r.dirs.is_empty() {
            vec![None]
        } else {
            r.dirs.iter().map(Some).collect()
        };
        for d in rows {
            let nums = d.map_or(",,,,,,,,".to_string(), |d| {
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
            csv.push_str(&format!(
                "{}{lead},{nums},{},{}\n",
                k + 1,
                r.status,
                quote(&r.file)
            ));
        }
    }
    write("index.csv", csv)
}

/// The final table: one row per point, its settings, then per direction IOPS, MiB/s,
/// mean latency and p99 (µs).
fn result_table(axes: &[Axis], done: &[PointResult]) -> Table {
    let mut header: Vec<String> = Vec::new();
    for a in axes {
        header.push(a.name.clone());
        header.extend(a.zipped.iter().map(|z| z.0.clone()));
    }
    let dirs: Vec<&str> = results::DIRECTIONS
        .into_iter()
        .filter(|d| done.iter().any(|r| r.dirs.iter().any(|x| x.dir == *d)))
        .collect();
    for d in &dirs {
        header.push(format!("{d} IOPS"));
        header.push(format!("{d} MiB/s"));
        header.push(format!("{d} lat us"));
        header.push(format!("{d} p99 us"));
    }
    let rows = done
        .iter()
        .map(|r| {
            let mut row: Vec<String> = r.point.iter().map(|p| p.1.clone()).collect();
            for d in &dirs {
                match r.dirs.iter().find(|x| x.dir == *d) {
                    Some(x) => row.extend([
                        table::si(x.iops),
                        table::mib_s(x.bw_bytes),
                        table::us(x.lat_mean_ns),
                        table::us(x.p99_ns),
                    ]),
                    None => row.extend(std::iter::repeat_n(
                        if r.status == "ok" { "-" } else { r.status }.to_string(),
                        4,
                    )),
                }
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

    #[test]
    fn durations() {
        assert_eq!(duration_text(59.4), "59s");
        assert_eq!(duration_text(90.0), "1m30s");
        assert_eq!(duration_text(3700.0), "1h01m");
    }
}
