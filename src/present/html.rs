//! `iobench report INPUT... -o report.html`: one self-contained HTML file (inline SVG, no
//! script, no network request) from iobench's or fio's JSON/JSON+ results, bench-fio
//! output directories, sweep result directories, compare exports, slo results, history
//! trends and fio-format logs.
//! Every result is a run; the runs of all inputs are pooled into one result set
//! (`results::pool`), whose axes are the job options that differ between them, so a set
//! of fio result files of a block-size study is one chart per metric, with error bars
//! where a point was run more than once. Charts come from `svg`; every chart's numbers are
//! also in a table, which names the latency it shows as the chart does. `--svg DIR` and
//! `--png DIR` write each chart alone (the PNG rendered by `png`).

use super::doc::sweep_index::Plan;
use super::png;
use super::svg::{
    self, Axis, Quantity, Series, Stat, StatSeries, StudyChart, StudyX, Style, YSpec,
};
use crate::flags::{Flag, Spec, Takes};
use crate::present::results::{self, DirResult, ResultFile, ResultSet, Run, DIRECTIONS, IGNORED};
use crate::stats::hist;
use serde::Deserialize;
use serde_json::Value;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// `iobench report`'s flags.
pub const SPEC: Spec<Args> = Spec {
    command: "report",
    usage: "\
usage: iobench report INPUT... [-o report.html] [--title TEXT] [--svg DIR]
                      [--png DIR [--png-scale N]]

INPUT is a result file (iobench's or fio's JSON or JSON+), a sweep directory (iobench
sweep -o DIR), a PTS directory (iobench pts -o DIR: the specification's report pages), a
directory of result files (fio-plot's bench-fio output), a compare export (iobench
compare --export-json), a capacity search (iobench slo -o FILE), a trend (iobench
history trend --format json), or a log (write_bw_log, write_iops_log,
write_lat_log, write_hist_log). The results of all inputs are pooled: the job options
that differ between them are the charts' axes, and runs alike in every option are
repeats of one point (mean ± σ, min–max).",
    flags: &[
        Flag {
            names: &["--output", "-o"],
            takes: Takes::Value,
            form: "FILE",
            help: "the HTML file to write (default: report.html)",
            apply: |a, v| {
                a.out = v.path();
                Ok(())
            },
        },
        Flag {
            names: &["--title"],
            takes: Takes::Value,
            form: "TEXT",
            help: "the report's title (default: iobench report)",
            apply: |a, v| {
                a.title = v.string();
                Ok(())
            },
        },
        Flag {
            names: &["--svg"],
            takes: Takes::Value,
            form: "DIR",
            help: "also write each chart alone as DIR/ID.svg (DIR is made if missing)",
            apply: |a, v| {
                a.svg_dir = Some(v.path());
                Ok(())
            },
        },
        Flag {
            names: &["--png"],
            takes: Takes::Value,
            form: "DIR",
            help: "also write each chart alone as DIR/ID.png, on white, its text in the \
                   system's sans-serif font (DIR is made if missing)",
            apply: |a, v| {
                a.png_dir = Some(v.path());
                Ok(())
            },
        },
        Flag {
            names: &["--png-scale"],
            takes: Takes::Value,
            form: "N",
            help: "pixels per SVG unit of the --png images, above 0 and at most 8 \
                   (default: 2, a chart 2720 px wide)",
            apply: |a, v| {
                let expected = "a number above 0 and at most 8 (pixels per SVG unit)";
                let n: f32 = v.number(expected)?;
                if !(n > 0.0 && n <= png::MAX_SCALE) {
                    return Err(v.bad(expected));
                }
                a.png_scale = Some(n);
                Ok(())
            },
        },
    ],
    pass_unknown: false,
    attached: false,
    single_dash: false,
};

/// What `iobench report` was asked to do.
#[derive(Debug)]
pub struct Args {
    /// `--output`: the HTML file.
    out: PathBuf,
    title: String,
    svg_dir: Option<PathBuf>,
    png_dir: Option<PathBuf>,
    png_scale: Option<f32>,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            out: PathBuf::from("report.html"),
            title: "iobench report".to_string(),
            svg_dir: None,
            png_dir: None,
            png_scale: None,
        }
    }
}

/// One input, as recognised.
enum Input {
    /// A result file: its runs, and the file itself (for one run's latency detail).
    Result(PathBuf, ResultFile, Vec<Run>),
    /// A sweep directory (its index) or a directory of result files: their runs.
    Runs {
        env: Option<Value>,
        axes: Vec<String>,
        runs: Vec<Run>,
    },
    Compare(PathBuf, Value),
    /// `iobench slo -o FILE`: its steps, drawn as the latency–throughput curve.
    Slo(PathBuf, Value),
    /// `iobench history trend --format json`: a metric of one job over time.
    Trend(PathBuf, Value),
    /// An `iobench pts` output directory: its summary (`pts_page` draws it).
    Pts(PathBuf, Value),
    Log(PathBuf, LogKind, Vec<LogLine>),
}

/// What a log holds.
#[derive(Clone, Copy, PartialEq)]
enum LogKind {
    Bw,
    Iops,
    Lat(&'static str),
    Hist,
}

/// One line of a log: time (ms), direction, and the value (or, for histogram logs, the
/// bucket counts).
struct LogLine {
    t_ms: u64,
    ddir: usize,
    value: f64,
    buckets: Vec<u64>,
}

/// Runs `iobench report ARGS`; returns the exit status.
pub fn main(args: &[String]) -> u8 {
    match report(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("iobench report: {e}");
            1
        }
    }
}

fn report(args: &[String]) -> Result<(), String> {
    let m = SPEC.parse(args)?;
    if m.help {
        print!("{}", SPEC.help());
        return Ok(());
    }
    let mut a = Args::default();
    SPEC.apply(&m, &mut a)?;
    let Args {
        out,
        title,
        svg_dir,
        png_dir,
        png_scale,
    } = a;
    if png_scale.is_some() && png_dir.is_none() {
        return Err("--png-scale sizes the --png images: give --png DIR too".into());
    }
    let inputs = m
        .positional
        .iter()
        .chain(m.rest.iter().flatten())
        .map(|s| read_input(Path::new(s)))
        .collect::<Result<Vec<_>, _>>()?;
    // What the inputs were read from: a sweep directory's index.json, else the file.
    let read_from: Vec<PathBuf> = m
        .positional
        .iter()
        .chain(m.rest.iter().flatten())
        .map(|s| {
            let p = Path::new(s);
            if p.is_dir() {
                p.join("index.json")
            } else {
                p.to_path_buf()
            }
        })
        .collect();
    if inputs.is_empty() {
        return Err("no input given (see iobench report --help)".into());
    }
    crate::present::outputs::refuse_clobber(
        "--output",
        &out,
        read_from.iter().map(PathBuf::as_path),
    )?;
    // The chart directories and the fonts before anything is written: a bad path or a
    // host without fonts fails alone.
    for (flag, dir) in [("--svg", &svg_dir), ("--png", &png_dir)] {
        if let Some(dir) = dir {
            // Made, or checked: a chart directory no other user can plant links in.
            crate::safefs::output_dir(flag, dir)?;
        }
    }
    let renderer = match png_dir {
        Some(_) => Some(png::Renderer::new(png_scale.unwrap_or(png::DEFAULT_SCALE))?),
        None => None,
    };
    let html = render(&title, &inputs)?;
    crate::safefs::write_output(&out, html.as_bytes())
        .map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!("report: {} input(s) → {}", inputs.len(), out.display());
    let charts = charts(&html);
    let names = file_names(&charts);
    if let Some(dir) = svg_dir {
        for ((_, svg), id) in charts.iter().zip(&names) {
            let path = dir.join(format!("{id}.svg"));
            crate::safefs::replace(&path, svg.as_bytes())
                .map_err(|e| format!("--svg {}: {e}", path.display()))?;
        }
        eprintln!(
            "report: {} chart(s) → {}/*.svg",
            charts.len(),
            dir.display()
        );
    }
    if let (Some(dir), Some(r)) = (png_dir, renderer) {
        for ((_, svg), id) in charts.iter().zip(&names) {
            let path = dir.join(format!("{id}.png"));
            let png = r
                .render(svg)
                .map_err(|e| format!("--png: chart {id}: {e}"))?;
            crate::safefs::replace(&path, &png)
                .map_err(|e| format!("--png {}: {e}", path.display()))?;
        }
        eprintln!(
            "report: {} chart(s) → {}/*.png",
            charts.len(),
            dir.display()
        );
    }
    Ok(())
}

/// The file name (without extension) of each chart for `--svg` and `--png`: its title
/// by axis, `read-IOPS-against-bs`, made safe (letters, digits, `.`, `=`, `-`, `_`), a
/// `-2`, `-3`… on a title seen before.
fn file_names(charts: &[(&str, String)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (id, svg) in charts {
        let title = svg
            .split("aria-label=\"")
            .nth(1)
            .and_then(|t| t.split('"').next())
            .unwrap_or(id);
        let title = title
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"");
        let mut slug = String::new();
        for c in title.chars() {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '=' | '_') {
                slug.push(c);
            } else if !slug.ends_with('-') && !slug.is_empty() {
                slug.push('-');
            }
        }
        let mut slug = slug
            .trim_end_matches('-')
            .chars()
            .take(100)
            .collect::<String>();
        if slug.is_empty() {
            slug = id.to_string();
        }
        let mut name = slug.clone();
        let mut k = 2;
        while out.contains(&name) {
            name = format!("{slug}-{k}");
            k += 1;
        }
        out.push(name);
    }
    out
}

/// Each chart of the report alone: its id and a standalone SVG document.
fn charts(html: &str) -> Vec<(&str, String)> {
    let mut charts = Vec::new();
    let mut rest = html;
    let open = "<figure class=\"chart\" id=\"";
    while let Some(at) = rest.find(open) {
        let tail = &rest[at + open.len()..];
        let id = &tail[..tail.find('"').unwrap_or(0)];
        let (Some(a), Some(b)) = (tail.find("<svg"), tail.find("</svg>")) else {
            break;
        };
        let text = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n",
            &tail[a..b + 6]
        );
        charts.push((id, text));
        rest = &tail[b..];
    }
    charts
}

/// A sweep's runs and its axes' names, in order.
fn sweep_input(dir: &Path, v: &Value) -> Result<Input, String> {
    // The plan as the sweep wrote it (an index without one has no axes to name).
    let axes = Plan::deserialize(&v["sweep"])
        .map(|p| p.axes.into_iter().map(|a| a.name).collect())
        .unwrap_or_default();
    Ok(Input::Runs {
        env: v.get("iobench_env").cloned(),
        axes,
        runs: results::sweep_runs(dir, v)?,
    })
}

fn read_input(p: &Path) -> Result<Input, String> {
    if p.is_dir() {
        if let Some(sum) = super::pts_page::summary_of(p) {
            return Ok(Input::Pts(p.to_path_buf(), sum?));
        }
        let idx = p.join("index.json");
        if idx.exists() {
            let text = String::from_utf8_lossy(&results::read_input(&idx)?).into_owned();
            let mut v = results::parse_doc(&text).map_err(|e| format!("{}: {e}", idx.display()))?;
            crate::options::redact::json(&mut v);
            results::check_doc_bounds(&idx, &v)?;
            return sweep_input(p, &v);
        }
        // Not a sweep: a directory of result files (bench-fio's layout).
        let files = results::result_files_under(p);
        if files.is_empty() {
            return Err(format!(
                "{}: a directory must be a sweep's result directory (with index.json) or \
                 hold fio JSON result files (as bench-fio writes them); found neither",
                p.display()
            ));
        }
        let mut runs = Vec::new();
        for f in &files {
            runs.extend(results::read_runs(f)?);
        }
        return Ok(Input::Runs {
            env: None,
            axes: Vec::new(),
            runs,
        });
    }
    let text = results::read_input(p)?;
    input_of_text(p, &String::from_utf8_lossy(&text))
}

/// A report of one input file's text, as `iobench report` renders it (for the fuzz
/// target of report's readers: any text gives a page or an error, never a panic).
pub fn render_text(p: &Path, text: &str) -> Result<String, String> {
    render("report", &[input_of_text(p, text)?])
}

/// What an input file's text is: a result, a study's document, or a log.
fn input_of_text(p: &Path, text: &str) -> Result<Input, String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || text.contains("\n{") {
        if let Ok(mut v) = results::parse_doc(trimmed) {
            crate::options::redact::json(&mut v);
            if v.get("relative").is_some() && v.get("sides").is_some() {
                results::check_doc_bounds(p, &v)?;
                return Ok(Input::Compare(p.to_path_buf(), v));
            }
            if v.get("capacity_iops").is_some() && v["steps"].is_array() {
                results::check_doc_bounds(p, &v)?;
                check_slo(p, &v)?;
                return Ok(Input::Slo(p.to_path_buf(), v));
            }
            if v["points"].is_array() && v.get("metric").is_some() && v.get("job_hash").is_some() {
                results::check_doc_bounds(p, &v)?;
                return Ok(Input::Trend(p.to_path_buf(), v));
            }
            if v.get("points").is_some() && v.get("sweep").is_some() {
                results::check_doc_bounds(p, &v)?;
                return sweep_input(p.parent().unwrap_or(Path::new(".")), &v);
            }
        }
        let runs = results::read_runs(p)?;
        // The file as one result (for its latency detail); a failed job has none, but
        // its document may still hold the http engine's failed requests.
        let r = results::parse(text).unwrap_or_else(|_| ResultFile {
            doc: results::docs(trimmed)
                .map_while(Result::ok)
                .last()
                .unwrap_or_default(),
            ..Default::default()
        });
        return Ok(Input::Result(p.to_path_buf(), r, runs));
    }
    let (kind, lines) = parse_log(p, text)?;
    Ok(Input::Log(p.to_path_buf(), kind, lines))
}

/// The highest rate a capacity search's document may name (IOPS), which is also the
/// limit of slo's `--start`/`--max` (defined here, the lower tier, for both).
pub const MAX_SLO_RATE: f64 = 1e12;

/// Checks an slo document's rates and latencies: each a number from 0 to
/// [`MAX_SLO_RATE`] (a rate) or to [`results::MAX_DOC_NUMBER`] (ns), or absent; the
/// chart's axes are sized by them.
fn check_slo(p: &Path, v: &Value) -> Result<(), String> {
    let check = |at: String, x: &Value, max: f64, what: &str| -> Result<(), String> {
        match x.as_f64() {
            None if x.is_null() => Ok(()),
            Some(f) if (0.0..=max).contains(&f) => Ok(()),
            _ => Err(format!(
                "{}: {at}: {x} is out of bounds (expected {what} from 0 to {max:e})",
                p.display()
            )),
        }
    };
    check(
        "capacity_iops".into(),
        &v["capacity_iops"],
        MAX_SLO_RATE,
        "a rate in IOPS",
    )?;
    for (i, s) in v["steps"].as_array().into_iter().flatten().enumerate() {
        for key in ["offered_iops", "achieved_iops"] {
            check(
                format!("steps[{i}].{key}"),
                &s[key],
                MAX_SLO_RATE,
                "a rate in IOPS",
            )?;
        }
        for key in ["sched_lat_ns", "clat_ns"] {
            for (stat, x) in s[key].as_object().into_iter().flatten() {
                check(
                    format!("steps[{i}].{key}.{stat}"),
                    x,
                    results::MAX_DOC_NUMBER,
                    "a latency in ns",
                )?;
            }
        }
    }
    for (i, t) in v["targets"].as_array().into_iter().flatten().enumerate() {
        check(
            format!("targets[{i}].max_ns"),
            &t["max_ns"],
            results::MAX_DOC_NUMBER,
            "a latency in ns",
        )?;
    }
    Ok(())
}

/// Reads a fio-format log: `time, value, ddir, bs, offset[, prio]` lines, or a histogram
/// log's `time, ddir, bs, c0, c1, ...`. The kind comes from the file name, as fio names
/// them (`NAME_bw.1.log`, `NAME_clat_hist.1.log`, ...).
fn parse_log(p: &Path, text: &str) -> Result<(LogKind, Vec<LogLine>), String> {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let kind = if name.contains("_hist") {
        LogKind::Hist
    } else if name.contains("_bw") {
        LogKind::Bw
    } else if name.contains("_iops") {
        LogKind::Iops
    } else if name.contains("_clat") {
        LogKind::Lat("clat")
    } else if name.contains("_slat") {
        LogKind::Lat("slat")
    } else if name.contains("_lat") {
        LogKind::Lat("lat")
    } else {
        return Err(format!(
            "{}: not a JSON result, a sweep directory or a log named as fio names them (NAME_bw|_iops|_lat|_clat|_slat|_clat_hist.N.log)",
            p.display()
        ));
    };
    let mut lines = Vec::new();
    for (n, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        // Finite and within 64 bits: a time, a value, a direction fio could have written
        // (NaN, inf or 1e300 would size the chart's axes).
        let num = |i: usize| -> Result<f64, String> {
            f.get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite() && v.abs() <= results::MAX_DOC_NUMBER)
                .ok_or_else(|| {
                    format!(
                        "{}:{}: expected numbers (finite, at most 2e19) separated by commas: {l}",
                        p.display(),
                        n + 1
                    )
                })
        };
        let line = if kind == LogKind::Hist {
            LogLine {
                t_ms: num(0)? as u64,
                ddir: num(1)? as usize,
                value: 0.0,
                buckets: f
                    .get(3..)
                    .unwrap_or_default()
                    .iter()
                    .map(|v| v.parse().unwrap_or(0))
                    .collect(),
            }
        } else {
            LogLine {
                t_ms: num(0)? as u64,
                value: num(1)?,
                ddir: num(2)? as usize,
                buckets: Vec::new(),
            }
        };
        lines.push(line);
    }
    if lines.is_empty() {
        return Err(format!("{}: the log is empty", p.display()));
    }
    Ok((kind, lines))
}

const STYLE: &str = "body{font-family:sans-serif;margin:20px auto;max-width:1400px;padding:0 16px;color:#222}\
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:8px 0 16px;font-size:12px}\
td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f0f0f0}\
td.l,th.l{text-align:left}td.failed{color:#c00000}\
figure{margin:14px 0;display:block}figure svg{width:100%;height:auto;max-width:1360px}\
figcaption.note,p.note{font-size:13px;color:#7a4b00;background:#fff6e0;padding:4px 8px;margin:4px 0}\
.ctx td{text-align:left}";

fn render(title: &str, inputs: &[Input]) -> Result<String, String> {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1><p>Made by {} from {} input(s).</p>",
        svg::esc(title),
        svg::esc(title),
        crate::report::VERSION,
        inputs.len()
    );
    // Every run of every result input, pooled into one set.
    let mut runs: Vec<Run> = Vec::new();
    let mut first_axes: Vec<String> = Vec::new();
    let mut env: Option<&Value> = None;
    let mut single: Option<(&PathBuf, &ResultFile)> = None;
    let mut result_inputs = 0;
    for input in inputs {
        match input {
            Input::Result(p, r, rs) => {
                result_inputs += 1;
                runs.extend(rs.iter().cloned());
                env = env.or(r.doc.get("iobench_env"));
                single = Some((p, r));
            }
            Input::Runs {
                env: e,
                axes,
                runs: rs,
            } => {
                result_inputs += 1;
                runs.extend(rs.iter().cloned());
                env = env.or(e.as_ref());
                for a in axes {
                    if !first_axes.contains(a) {
                        first_axes.push(a.clone());
                    }
                }
            }
            _ => {}
        }
    }
    // One result file: its own section (numbers per job, latency histogram and CDF).
    if result_inputs == 1 {
        match single {
            Some((p, r)) if !r.jobs.is_empty() => run_section(&mut h, 0, p, r),
            // A run that measured nothing (every request refused) still has the http
            // engine's failed requests by status to show.
            Some((_, r)) => super::http_page::section(&mut h, 0, &r.doc),
            None => {}
        }
    }
    if runs.len() > 1
        || (runs.len() == 1 && single.is_none())
        || runs.iter().any(|r| r.outcome.is_err())
    {
        let set = results::pool(runs, &first_axes)?;
        set_section(&mut h, &set, env);
    }
    for (k, input) in inputs.iter().enumerate() {
        match input {
            Input::Compare(p, v) => compare_section(&mut h, k, p, v),
            Input::Slo(p, v) => slo_section(&mut h, k, p, v),
            Input::Trend(p, v) => trend_section(&mut h, k, p, v),
            Input::Pts(p, v) => super::pts_page::section(&mut h, k, p, v),
            Input::Log(p, kind, lines) => log_section(&mut h, k, p, *kind, lines),
            _ => {}
        }
    }
    h.push_str("</body></html>\n");
    Ok(h)
}

/// The context header (`iobench_env`), when the input carries one.
fn context(h: &mut String, env: Option<&Value>) {
    let Some(e) = env.filter(|e| e.is_object()) else {
        return;
    };
    let s = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let mut rows: Vec<(String, String)> = vec![
        (
            "command".into(),
            e["command_line"]
                .as_array()
                .map(|a| {
                    let words: Vec<String> = a.iter().map(s).collect();
                    crate::options::redact::argv(&words).join(" ")
                })
                .unwrap_or_default(),
        ),
        ("iobench".into(), s(&e["iobench_version"])),
        ("host".into(), s(&e["hostname"])),
        (
            "kernel".into(),
            format!(
                "{} {}",
                s(&e["kernel"]["release"]),
                s(&e["kernel"]["machine"])
            ),
        ),
        (
            "CPU".into(),
            format!("{} ({} CPUs)", s(&e["cpu"]["model"]), s(&e["cpu"]["count"])),
        ),
        (
            "memory".into(),
            e["memory"]["total_bytes"]
                .as_f64()
                .map(|b| format!("{:.1} GiB", b / (1u64 << 30) as f64))
                .unwrap_or_default(),
        ),
    ];
    for t in e["targets"].as_array().into_iter().flatten() {
        let dev = &t["device"];
        let fs = &t["filesystem"];
        let mut parts = vec![s(&t["path"])];
        if dev.is_object() {
            parts.push(format!(
                "device {} {} ({} GiB, {}, scheduler {})",
                s(&dev["name"]),
                s(&dev["model"]),
                dev["size_bytes"]
                    .as_f64()
                    .map_or(String::new(), |b| format!("{:.1}", b / (1u64 << 30) as f64)),
                if dev["rotational"].as_u64() == Some(1) {
                    "rotational"
                } else {
                    "non-rotational"
                },
                s(&dev["scheduler"])
            ));
        }
        if fs.is_object() {
            parts.push(format!(
                "{} on {} ({})",
                s(&fs["type"]),
                s(&fs["mount_point"]),
                s(&fs["options"])
            ));
        }
        rows.push(("target".into(), parts.join("; ")));
    }
    h.push_str("<table class=\"ctx\">");
    for (k, v) in rows.iter().filter(|r| !r.1.trim().is_empty()) {
        let _ = write!(
            h,
            "<tr><th class=\"l\">{}</th><td>{}</td></tr>",
            svg::esc(k),
            svg::esc(v)
        );
    }
    h.push_str("</table>");
}

pub(super) fn table(h: &mut String, header: &[&str], rows: &[Vec<String>]) {
    h.push_str("<table><tr>");
    for c in header {
        let _ = write!(h, "<th>{}</th>", svg::esc(c));
    }
    h.push_str("</tr>");
    for r in rows {
        h.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let class = if i == 0 {
                " class=\"l\""
            } else if c.starts_with("failed") {
                " class=\"failed\""
            } else {
                ""
            };
            let _ = write!(h, "<td{class}>{}</td>", svg::esc(c));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

fn dir_row(label: String, d: &DirResult) -> Vec<String> {
    let t = |v: f64| {
        if v > 0.0 {
            Quantity::Time.text(v)
        } else {
            "-".into()
        }
    };
    vec![
        label,
        Quantity::Iops.text(d.iops),
        Quantity::Rate.text(d.bw_bytes),
        latency_name(d.pct_of).into(),
        d.pct_mean_ns.map_or("-".into(), t),
        t(d.p50_ns),
        t(d.p99_ns),
        t(d.p99_9_ns),
    ]
}

/// The columns of [`dir_row`]: the latency columns are all of the latency it names.
const DIR_HEADER: [&str; 8] = [
    "job / direction",
    "IOPS",
    "bandwidth",
    "latency",
    "mean",
    "p50",
    "p99",
    "p99.9",
];

/// One run: numbers per job and direction, then the latency histogram and CDF.
fn run_section(h: &mut String, k: usize, p: &Path, r: &ResultFile) {
    let _ = write!(
        h,
        "<h2>Run: {} ({})</h2>",
        svg::esc(&p.display().to_string()),
        svg::esc(&r.version)
    );
    context(h, r.doc.get("iobench_env"));
    let rows: Vec<Vec<String>> = r
        .jobs
        .iter()
        .flat_map(|j| {
            j.dirs
                .iter()
                .map(move |d| dir_row(format!("{} {}", j.name, d.dir), d))
        })
        .collect();
    table(h, &DIR_HEADER, &rows);
    for (ji, j) in r.jobs.iter().enumerate() {
        for d in &j.dirs {
            let id = format!("run{k}-{ji}-{}", d.dir);
            let lat = format!("{} latency", d.pct_of);
            let x = || Axis {
                label: &lat,
                q: Quantity::Time,
                allow_log: true,
            };
            if !d.bins.is_empty() {
                let total: u64 = d.bins.iter().map(|b| b.1).sum();
                let pts: Vec<(f64, f64)> =
                    d.bins.iter().map(|&(v, c)| (v as f64, c as f64)).collect();
                let mut cum = 0u64;
                let cdf: Vec<(f64, f64)> = d
                    .bins
                    .iter()
                    .map(|&(v, c)| {
                        cum += c;
                        (v as f64, cum as f64 * 100.0 / total.max(1) as f64)
                    })
                    .collect();
                h.push_str(&svg::xy_chart(
                    &format!("{id}-hist"),
                    &format!("{} {}: {} histogram", j.name, d.dir, latency_name(d.pct_of)),
                    x(),
                    Axis {
                        label: "I/Os in bucket",
                        q: Quantity::Count,
                        allow_log: true,
                    },
                    &[Series {
                        name: d.dir.clone(),
                        points: pts,
                    }],
                ));
                h.push_str(&svg::xy_chart(
                    &format!("{id}-cdf"),
                    &format!("{} {}: {} CDF", j.name, d.dir, latency_name(d.pct_of)),
                    x(),
                    Axis {
                        label: "I/Os at or below",
                        q: Quantity::Percent,
                        allow_log: false,
                    },
                    &[Series {
                        name: d.dir.clone(),
                        points: cdf,
                    }],
                ));
            } else {
                // Plain JSON: the CDF through the reported percentiles.
                let pct = percentile_points(&r.doc, ji, &d.dir);
                if !pct.is_empty() {
                    h.push_str(&svg::xy_chart(
                        &format!("{id}-cdf"),
                        &format!(
                            "{} {}: {} percentiles",
                            j.name,
                            d.dir,
                            latency_name(d.pct_of)
                        ),
                        x(),
                        Axis {
                            label: "percentile",
                            q: Quantity::Percent,
                            allow_log: false,
                        },
                        &[Series {
                            name: d.dir.clone(),
                            points: pct,
                        }],
                    ));
                }
            }
        }
    }
    // The http engine's own statistics, per operation, size class and endpoint.
    super::http_page::section(h, k, &r.doc);
}

/// The (latency ns, percentile) points a plain JSON result lists for a job's direction.
fn percentile_points(doc: &Value, job: usize, dir: &str) -> Vec<(f64, f64)> {
    let d = &doc["jobs"][job][dir];
    let src = if d["lat_ns"].get("percentile").is_some() {
        &d["lat_ns"]
    } else {
        &d["clat_ns"]
    };
    let mut v: Vec<(f64, f64)> = src["percentile"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((v.as_f64()?, k.parse().ok()?)))
        .collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    v
}

/// A metric of a result set: its name, quantity, and how to read it from a direction.
/// Latency metrics are of one latency (clat or lat, as the run's percentiles are) and
/// are read only from runs whose percentiles are of that latency: never mixed.
struct Metric {
    name: &'static str,
    q: Quantity,
    get: fn(&DirResult) -> Option<f64>,
    latency: bool,
}

fn positive(v: f64) -> Option<f64> {
    (v > 0.0).then_some(v)
}

const IOPS: Metric = Metric {
    name: "IOPS",
    q: Quantity::Iops,
    get: |d| Some(d.iops),
    latency: false,
};
const BW: Metric = Metric {
    name: "bandwidth",
    q: Quantity::Rate,
    get: |d| Some(d.bw_bytes),
    latency: false,
};
const LAT_MEAN: Metric = Metric {
    name: "mean",
    q: Quantity::Time,
    get: |d| d.pct_mean_ns,
    latency: true,
};
const P50: Metric = Metric {
    name: "p50",
    q: Quantity::Time,
    get: |d| positive(d.p50_ns),
    latency: true,
};
const P99: Metric = Metric {
    name: "p99",
    q: Quantity::Time,
    get: |d| positive(d.p99_ns),
    latency: true,
};
const P99_9: Metric = Metric {
    name: "p99.9",
    q: Quantity::Time,
    get: |d| positive(d.p99_9_ns),
    latency: true,
};

/// The words for a latency kind, as charts and tables name it.
fn latency_name(kind: &str) -> &'static str {
    if kind == "lat" {
        "lat (total latency: submission + completion)"
    } else {
        "clat (completion latency)"
    }
}

/// The statistics of metric `m` (of latency `kind`) over a point's runs in direction
/// `dir`; `None` when no run has it and none failed.
fn stat_of(set: &ResultSet, runs: &[usize], dir: &str, m: &Metric, kind: &str) -> Option<Stat> {
    let mut vals = Vec::new();
    let mut failures = Vec::new();
    for &i in runs {
        match &set.runs[i].outcome {
            Err(f) => failures.push(f.reason.clone()),
            Ok(dirs) => {
                let v = dirs
                    .iter()
                    .find(|d| d.dir == dir)
                    .filter(|d| !m.latency || d.pct_of == kind)
                    .and_then(m.get);
                vals.extend(v);
            }
        }
    }
    (!vals.is_empty() || !failures.is_empty()).then(|| Stat::of(&vals, &failures))
}

/// The label of value `v` of an axis: a size with its unit (`4 KiB`), else as given.
fn value_label(a: &results::SetAxis, i: usize) -> String {
    match &a.numbers {
        Some(n) if a.bytes && n[i].is_finite() => Quantity::Bytes.text(n[i]),
        _ => a.values[i].clone(),
    }
}

/// An axis as a chart's x: numbers placed by value, else categories.
fn study_x(a: &results::SetAxis) -> StudyX {
    let labels: Vec<String> = (0..a.values.len()).map(|i| value_label(a, i)).collect();
    match &a.numbers {
        Some(n) => StudyX::Numbers {
            values: n.clone(),
            labels,
            q: if a.bytes {
                Quantity::Bytes
            } else {
                Quantity::Plain
            },
        },
        None => StudyX::Categories(labels),
    }
}

/// One series per combination of the other axes' values: metric `m` of each point
/// against axis `ai`. A point whose value on the axis is ignored by its engine makes a
/// flat series (one level, whatever x).
fn series_against(
    set: &ResultSet,
    ai: usize,
    dir: &str,
    m: &Metric,
    kind: &str,
) -> Vec<StatSeries> {
    let mut out: Vec<StatSeries> = Vec::new();
    for p in &set.points {
        let others: Vec<String> = set
            .axes
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != ai)
            .map(|(j, a)| format!("{}={}", a.name, value_label(a, p.at[j])))
            .collect();
        let name = if others.is_empty() {
            dir.to_string()
        } else {
            others.join(" ")
        };
        let Some(st) = stat_of(set, &p.runs, dir, m, kind) else {
            continue;
        };
        let axis = &set.axes[ai];
        let engine = |p: &results::SetPoint| {
            set.runs[p.runs[0]]
                .options
                .get("ioengine")
                .cloned()
                .unwrap_or_else(|| "psync".into())
        };
        let flat = (axis.values[p.at[ai]] == IGNORED)
            .then(|| format!("{} ignored by {}", axis.name, engine(p)));
        match out
            .iter_mut()
            .find(|s| s.name == name && s.flat.is_some() == flat.is_some())
        {
            Some(s) if flat.is_none() => s.points.push((p.at[ai], st)),
            Some(_) => {}
            None => out.push(StatSeries {
                name,
                points: vec![(p.at[ai], st)],
                flat,
            }),
        }
    }
    out
}

/// The series of [`series_against`] split by the values of axis `outer` (one list per
/// value: its label and the series of its points, named by the axes left), every list
/// with the same names in the same order (an empty series where a value lacks one), so
/// that a series looks the same in each small chart.
fn series_split(
    set: &ResultSet,
    ai: usize,
    outer: usize,
    dir: &str,
    m: &Metric,
    kind: &str,
) -> Vec<(String, Vec<StatSeries>)> {
    let axis = &set.axes[outer];
    let mut panels: Vec<(String, Vec<StatSeries>)> = Vec::new();
    for vi in 0..axis.values.len() {
        let mut view = set.clone();
        view.points.retain(|p| p.at[outer] == vi);
        if view.points.is_empty() {
            continue;
        }
        // The outer axis leaves the names: the panel's title says its value.
        let mut series = series_against(&view, ai, dir, m, kind);
        let prefix = format!("{}={}", axis.name, value_label(axis, vi));
        for s in &mut series {
            // Names are the other axes' `name=value`s joined by spaces (a value may hold one).
            s.name = if s.name == prefix {
                String::new()
            } else if let Some(rest) = s.name.strip_prefix(&format!("{prefix} ")) {
                rest.to_string()
            } else if let Some(rest) = s.name.strip_suffix(&format!(" {prefix}")) {
                rest.to_string()
            } else {
                s.name.replace(&format!(" {prefix} "), " ")
            };
            if s.name.is_empty() {
                s.name = dir.to_string();
            }
        }
        panels.push((value_label(axis, vi), series));
    }
    let mut names: Vec<(String, bool)> = Vec::new();
    for s in panels.iter().flat_map(|p| &p.1) {
        if !names.contains(&(s.name.clone(), s.flat.is_some())) {
            names.push((s.name.clone(), s.flat.is_some()));
        }
    }
    for (_, series) in &mut panels {
        *series = names
            .iter()
            .map(|(n, flat)| {
                series
                    .iter()
                    .find(|s| &s.name == n && s.flat.is_some() == *flat)
                    .cloned()
                    .unwrap_or(StatSeries {
                        name: n.clone(),
                        points: vec![],
                        flat: None,
                    })
            })
            .collect();
    }
    panels
}

/// The axis (other than `ai`) whose values split a chart against `ai` into small
/// multiples: the one that leaves at most [`svg::SERIES_LIMIT`] series a chart in the
/// fewest charts, else the one that leaves the fewest series.
fn outer_axis(set: &ResultSet, ai: usize) -> Option<usize> {
    let others: Vec<usize> = (0..set.axes.len()).filter(|&j| j != ai).collect();
    let series_without = |o: usize| -> usize {
        others
            .iter()
            .filter(|&&j| j != o)
            .map(|&j| set.axes[j].values.len())
            .product()
    };
    others
        .iter()
        .copied()
        .filter(|&o| series_without(o) <= svg::SERIES_LIMIT)
        .min_by_key(|&o| set.axes[o].values.len())
        .or_else(|| others.iter().copied().min_by_key(|&o| series_without(o)))
}

/// A study chart of metric `m` against axis `ai`: one chart, or past
/// [`svg::SERIES_LIMIT`] series small multiples by an outer axis.
fn study_or_multiples(
    h: &mut String,
    set: &ResultSet,
    c: &StudyChart,
    ai: usize,
    (dir, m, kind): (&str, &Metric, &str),
) {
    if c.series.len() > svg::SERIES_LIMIT {
        if let Some(outer) = outer_axis(set, ai) {
            let panels = series_split(set, ai, outer, dir, m, kind);
            h.push_str(&svg::small_multiples(c, &set.axes[outer].name, &panels));
            return;
        }
    }
    h.push_str(&svg::study_chart(c));
}

/// The set as charts are drawn from it: no axis (repeats of one job) becomes one
/// category; more than three axes become one axis of the runs' differing options.
fn chartable(set: &ResultSet) -> ResultSet {
    let mut s = set.clone();
    if s.axes.is_empty() {
        s.axes.push(results::SetAxis {
            name: "runs".into(),
            values: vec!["same options".into()],
            numbers: None,
            bytes: false,
        });
        for p in &mut s.points {
            p.at = vec![0];
        }
    } else if s.axes.len() > 3 {
        let labels: Vec<String> = s
            .points
            .iter()
            .map(|p| {
                s.axes
                    .iter()
                    .zip(&p.at)
                    .map(|(a, &i)| format!("{}={}", a.name, a.values[i]))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        s.axes = vec![results::SetAxis {
            name: "run (options that differ)".into(),
            values: labels,
            numbers: None,
            bytes: false,
        }];
        for (i, p) in s.points.iter_mut().enumerate() {
            p.at = vec![i];
        }
    }
    s
}

/// The runs of every result input, pooled: for each axis and direction, IOPS and
/// bandwidth (bars against categories, lines against numbers) and the latency (of one
/// kind, named); IOPS bars with p99 on a second axis against the first axis (fio-plot's 2D
/// chart); a heat map of IOPS for two numeric axes; the table of every point; the runs.
fn set_section(h: &mut String, whole: &ResultSet, env: Option<&Value>) {
    let set = chartable(whole);
    let _ = write!(
        h,
        "<h2>Results: {} run(s), {} point(s)</h2>",
        set.runs.len(),
        set.points.len()
    );
    context(h, env);
    let axes_text: Vec<String> = whole
        .axes
        .iter()
        .map(|a| {
            let kind = if a.numbers.is_some() {
                "numeric"
            } else {
                "categorical"
            };
            format!("{} ({kind}: {})", a.name, a.values.join(", "))
        })
        .collect();
    let _ = write!(
        h,
        "<p class=\"axes\">Options that differ between the runs: {}.</p>",
        svg::esc(&if axes_text.is_empty() {
            "none (the runs are repeats of one job)".to_string()
        } else {
            axes_text.join("; ")
        })
    );
    let mut notes = set.notes.clone();
    let ok_dirs = || {
        set.runs
            .iter()
            .filter_map(|r| r.outcome.as_ref().ok())
            .flatten()
    };
    let mut kinds: Vec<&str> = ok_dirs().map(|d| d.pct_of).collect();
    kinds.sort_unstable();
    kinds.dedup();
    if kinds.len() > 1 {
        notes.push(
            "Some runs report percentiles of clat (completion latency), others of lat \
             (total latency, lat_percentiles=1): their latency charts and columns are apart, \
             never mixed."
                .into(),
        );
    }
    for n in &notes {
        let _ = write!(h, "<p class=\"note\">{}</p>", svg::esc(n));
    }
    let failed = set.runs.iter().filter(|r| r.outcome.is_err()).count();
    if failed > 0 {
        let _ = write!(
            h,
            "<p class=\"note\">{failed} of {} run(s) failed: they are marked ✕ in the charts \
             and \"failed\" in the table, with the reason, and never drawn as values.</p>",
            set.runs.len()
        );
    }
    let dirs: Vec<&str> = DIRECTIONS
        .into_iter()
        .filter(|d| ok_dirs().any(|x| x.dir == *d))
        .collect();
    // A failed run has no direction: show its failure under the first direction there
    // is (read when there is none).
    let dirs = if dirs.is_empty() { vec!["read"] } else { dirs };
    for (ai, axis) in set.axes.iter().enumerate() {
        let x = study_x(axis);
        let numeric = axis.numbers.is_some();
        let axis_notes: Vec<String> = notes
            .iter()
            .filter(|n| n.starts_with(&format!("{} ", axis.name)))
            .cloned()
            .collect();
        for d in &dirs {
            for m in [&IOPS, &BW] {
                let series = series_against(&set, ai, d, m, "");
                if series.is_empty() {
                    continue;
                }
                let chart = StudyChart {
                    id: &format!("set-{ai}-{d}-{}", m.name),
                    title: &format!("{d} {} against {}", m.name, axis.name),
                    xlabel: &axis.name,
                    x: &x,
                    y: YSpec {
                        label: format!("{d} {}", m.name),
                        q: m.q,
                        allow_log: false,
                    },
                    style: if numeric { Style::Lines } else { Style::Bars },
                    series: &series,
                    second: None,
                    notes: &axis_notes,
                };
                study_or_multiples(h, &set, &chart, ai, (d, m, ""));
            }
            for kind in &kinds {
                // One job's latency: its mean and percentiles; several: p99 of each.
                let series: Vec<StatSeries> =
                    if set.points.len() == axis.values.len() && set.axes.len() == 1 {
                        [&LAT_MEAN, &P50, &P99, &P99_9]
                            .iter()
                            .filter_map(|m| {
                                let mut s = series_against(&set, ai, d, m, kind).pop()?;
                                s.name = format!("{kind} {}", m.name);
                                Some(s)
                            })
                            .collect()
                    } else {
                        series_against(&set, ai, d, &P99, kind)
                    };
                let one_job = set.points.len() == axis.values.len() && set.axes.len() == 1;
                if series.is_empty() {
                    continue;
                }
                let which = if set.axes.len() == 1 {
                    "mean, p50, p99, p99.9"
                } else {
                    "p99"
                };
                let chart = StudyChart {
                    id: &format!("set-{ai}-{d}-{kind}"),
                    title: &format!("{d} {} {which} against {}", latency_name(kind), axis.name),
                    xlabel: &axis.name,
                    x: &x,
                    y: YSpec {
                        label: format!("{d} {kind} latency"),
                        q: Quantity::Time,
                        allow_log: true,
                    },
                    style: if numeric { Style::Lines } else { Style::Dots },
                    series: &series,
                    second: None,
                    notes: &axis_notes,
                };
                if one_job {
                    h.push_str(&svg::study_chart(&chart));
                } else {
                    study_or_multiples(h, &set, &chart, ai, (d, &P99, kind));
                }
            }
        }
    }
    // fio-plot's 2D chart: IOPS bars, p99 on a second axis, against the first axis.
    if let (Some(axis), Some(kind)) = (set.axes.first(), kinds.first()) {
        let x = study_x(axis);
        for d in &dirs {
            let bars = series_against(&set, 0, d, &IOPS, "");
            let p99 = series_against(&set, 0, d, &P99, kind);
            if bars.is_empty() || p99.is_empty() {
                continue;
            }
            if bars.len() > svg::SERIES_LIMIT {
                let _ = write!(
                    h,
                    "<p class=\"note\">The {d} IOPS-and-p99 chart against {} is left out: \
                     its {} series would not read apart in one chart (the IOPS and latency \
                     charts above show them as small multiples).</p>",
                    svg::esc(&axis.name),
                    bars.len()
                );
                continue;
            }
            h.push_str(&svg::study_chart(&StudyChart {
                id: &format!("set-combo-{d}"),
                title: &format!(
                    "{d} IOPS (bars) and {kind} p99 latency (◆, right axis) against {}",
                    axis.name
                ),
                xlabel: &axis.name,
                x: &x,
                y: YSpec {
                    label: format!("{d} IOPS"),
                    q: Quantity::Iops,
                    allow_log: false,
                },
                style: Style::Bars,
                series: &bars,
                second: Some((
                    YSpec {
                        label: format!("{kind} p99"),
                        q: Quantity::Time,
                        allow_log: true,
                    },
                    &p99,
                )),
                notes: &[],
            }));
        }
    }
    // A heat map for two numeric axes; with a third axis (categorical or not), one per
    // value of it, all on one colour scale.
    let numeric: Vec<usize> = (0..set.axes.len())
        .filter(|&j| set.axes[j].numbers.is_some())
        .collect();
    if (2..=3).contains(&set.axes.len()) && numeric.len() >= 2 {
        let (hx, hy) = (numeric[0], numeric[1]);
        let third = (0..set.axes.len()).find(|j| *j != hx && *j != hy);
        let (ax, ay) = (&set.axes[hx], &set.axes[hy]);
        let cols: Vec<String> = (0..ax.values.len()).map(|i| value_label(ax, i)).collect();
        let rows: Vec<String> = (0..ay.values.len()).map(|i| value_label(ay, i)).collect();
        let values = third.map_or(1, |t| set.axes[t].values.len());
        for d in &dirs {
            let cell = |r: usize, c: usize, v: usize| {
                let p = set.points.iter().find(|p| {
                    p.at[hx] == c && p.at[hy] == r && third.is_none_or(|t| p.at[t] == v)
                })?;
                let st = stat_of(&set, &p.runs, d, &IOPS, "")?;
                Some(if st.n > 0 {
                    Ok(st.mean)
                } else {
                    Err(st.reason)
                })
            };
            let (nr, nc) = (rows.len(), cols.len());
            let all: Vec<f64> = (0..values)
                .flat_map(|v| (0..nr).flat_map(move |r| (0..nc).map(move |c| (r, c, v))))
                .filter_map(|(r, c, v)| cell(r, c, v)?.ok())
                .collect();
            let range = (
                all.iter().copied().fold(f64::MAX, f64::min),
                all.iter().copied().fold(0.0, f64::max),
            );
            for v in 0..values {
                let (id, title) = match third {
                    Some(t) => {
                        let at = &set.axes[t];
                        (
                            format!("set-heat-{d}-{v}"),
                            format!(
                                "{d} IOPS (mean) by {} and {}, {}={}",
                                ax.name,
                                ay.name,
                                at.name,
                                value_label(at, v)
                            ),
                        )
                    }
                    None => (
                        format!("set-heat-{d}"),
                        format!("{d} IOPS (mean) by {} and {}", ax.name, ay.name),
                    ),
                };
                h.push_str(&svg::heat_map_in(
                    &id,
                    &title,
                    (ax.name.as_str(), &cols),
                    (ay.name.as_str(), &rows),
                    Quantity::Iops,
                    &|r, c| cell(r, c, v),
                    third.map(|_| range),
                ));
            }
            if let Some(t) = third {
                let _ = write!(
                    h,
                    "<p class=\"note\">{d} IOPS heat maps: one per value of {}, all on one \
                     colour scale ({} to {}).</p>",
                    svg::esc(&set.axes[t].name),
                    svg::esc(&Quantity::Iops.text(range.0)),
                    svg::esc(&Quantity::Iops.text(range.1))
                );
            }
        }
    }
    http_set_charts(h, &set);
    for d in &dirs {
        for kind in &kinds {
            pooled_histograms(h, &set, d, kind);
        }
    }
    // The table of every point: mean ± σ (min–max, n), failures with their reason.
    let mut header: Vec<String> = set.axes.iter().map(|a| a.name.clone()).collect();
    header.push("runs".into());
    let mut cols: Vec<(&str, &Metric, &str)> = Vec::new();
    for d in &dirs {
        for m in [&IOPS, &BW] {
            header.push(format!("{d} {}", m.name));
            cols.push((d, m, ""));
        }
        for kind in &kinds {
            for m in [&LAT_MEAN, &P50, &P99, &P99_9] {
                header.push(format!("{d} {kind} {}", m.name));
                cols.push((d, m, kind));
            }
        }
    }
    let rows: Vec<Vec<String>> = set
        .points
        .iter()
        .map(|p| {
            let mut r: Vec<String> = set
                .axes
                .iter()
                .zip(&p.at)
                .map(|(a, &i)| value_label(a, i))
                .collect();
            r.push(p.runs.len().to_string());
            for (d, m, kind) in &cols {
                r.push(stat_of(&set, &p.runs, d, m, kind).map_or("-".into(), |s| s.text(m.q)));
            }
            r
        })
        .collect();
    if !kinds.is_empty() {
        let _ = write!(
            h,
            "<p>Latency columns: {} (the latency the runs' percentiles are of; its mean \
             stands beside them).</p>",
            svg::esc(
                &kinds
                    .iter()
                    .map(|k| latency_name(k))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        );
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    table(h, &header, &rows);
    // The runs themselves.
    let runs: Vec<Vec<String>> = set
        .runs
        .iter()
        .map(|r| {
            vec![
                r.source.clone(),
                match &r.outcome {
                    Ok(_) => "ok".into(),
                    Err(f) => format!("failed: {}", f.reason),
                },
            ]
        })
        .collect();
    let _ = write!(h, "<details><summary>the {} run(s)</summary>", runs.len());
    table(h, &["source", "outcome"], &runs);
    h.push_str("</details>");
}

/// The words for a group of the http engine's classes, as the charts' titles name it.
fn http_group_name(group: &str) -> &'static str {
    match group {
        "ops" => "operations",
        "sizes" => "size classes",
        "endpoints" => "endpoints",
        _ => "multipart stages",
    }
}

/// The http engine's classes of the runs (`iobench_http`), charted against each axis as
/// the directions are: for each group (operations, size classes, endpoints, multipart
/// stages), each class's IOPS and bandwidth (bars against categories, lines against
/// numbers), its p99 latency and, with `http_ttfb`, its p99 time to first byte; error
/// bars from repeats, failed runs marked. Nothing when no run has classes.
fn http_set_charts(h: &mut String, set: &ResultSet) {
    if set.runs.iter().all(|r| r.http.is_empty()) {
        return;
    }
    // The set seen through its classes: each run's numbers are its classes, by name.
    let mut view = set.clone();
    for r in &mut view.runs {
        if let Ok(dirs) = &mut r.outcome {
            *dirs = r.http.iter().map(|(_, c)| c.clone()).collect();
        }
    }
    let _ = write!(
        h,
        "<h3>HTTP requests by class</h3><p>The http engine's classes of requests \
         (<code>iobench_http</code>) against the options that differ: a series per class \
         (and per value of the other options).</p>"
    );
    for (ai, axis) in set.axes.iter().enumerate() {
        let x = study_x(axis);
        let numeric = axis.numbers.is_some();
        for group in results::HTTP_GROUPS {
            // The group's classes in the order first seen, and the latency their
            // percentiles are of.
            let mut names: Vec<&str> = Vec::new();
            let mut kind = "";
            let mut ttfb = false;
            for (g, c) in set.runs.iter().flat_map(|r| &r.http) {
                if *g != group {
                    continue;
                }
                match c.dir.strip_suffix(" ttfb") {
                    Some(_) => ttfb = true,
                    None if !names.contains(&c.dir.as_str()) => {
                        names.push(&c.dir);
                        kind = c.pct_of;
                    }
                    None => {}
                }
            }
            let charts: [(&str, &str, &Metric, bool); 4] = [
                ("iops", "IOPS", &IOPS, false),
                ("bw", "bandwidth", &BW, false),
                ("p99", "p99 latency", &P99, false),
                ("ttfb-p99", "p99 time to first byte", &P99, true),
            ];
            for (id, what, m, of_ttfb) in charts {
                if of_ttfb && !ttfb {
                    continue;
                }
                let series: Vec<StatSeries> = names
                    .iter()
                    .flat_map(|n| {
                        let dir = if of_ttfb {
                            format!("{n} ttfb")
                        } else {
                            n.to_string()
                        };
                        let mut ss = series_against(&view, ai, &dir, m, kind);
                        for s in &mut ss {
                            s.name = if s.name == dir {
                                n.to_string()
                            } else {
                                format!("{n} {}", s.name)
                            };
                        }
                        ss
                    })
                    .collect();
                if series.is_empty() {
                    continue;
                }
                let latency = m.latency;
                h.push_str(&svg::study_chart(&StudyChart {
                    id: &format!("set-{ai}-http-{group}-{id}"),
                    title: &format!(
                        "http {} {what} against {}",
                        http_group_name(group),
                        axis.name
                    ),
                    xlabel: &axis.name,
                    x: &x,
                    y: YSpec {
                        label: format!("http {what}"),
                        q: m.q,
                        allow_log: latency,
                    },
                    style: match (numeric, latency) {
                        (true, _) => Style::Lines,
                        (false, false) => Style::Bars,
                        (false, true) => Style::Dots,
                    },
                    series: &series,
                    second: None,
                    notes: &[],
                }));
            }
        }
    }
}

/// The most points one pooled histogram chart overlays (more get a chart of their own).
const HIST_SERIES: usize = 6;

/// Each point's latency histogram (of latency `kind`, direction `dir`) pooled over its
/// runs: the JSON+ bins summed bucket by bucket, so the repeats' I/Os count as one larger
/// sample (a mean of histograms would weigh a short run like a long one). The legend says
/// n, the runs pooled, and the I/Os; a run without bins (plain JSON) or with another
/// latency kind is left out and said so. Drawn only when some point has bins.
fn pooled_histograms(h: &mut String, set: &ResultSet, dir: &str, kind: &str) {
    let mut series: Vec<Series> = Vec::new();
    for p in &set.points {
        let mut sum: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
        let (mut n, mut without) = (0usize, 0usize);
        for &i in &p.runs {
            let Ok(dirs) = &set.runs[i].outcome else {
                continue;
            };
            match dirs.iter().find(|x| x.dir == dir && x.pct_of == kind) {
                Some(x) if !x.bins.is_empty() => {
                    n += 1;
                    for &(v, c) in &x.bins {
                        *sum.entry(v).or_default() += c;
                    }
                }
                Some(_) => without += 1,
                None => {}
            }
        }
        if n == 0 {
            continue;
        }
        let ios: u64 = sum.values().sum();
        let label: Vec<String> = set
            .axes
            .iter()
            .zip(&p.at)
            .map(|(a, &i)| format!("{}={}", a.name, value_label(a, i)))
            .collect();
        let mut name = format!(
            "{} (n={n} run{}, {} I/Os)",
            label.join(" "),
            if n == 1 { "" } else { "s" },
            Quantity::Count.text(ios as f64)
        );
        if without > 0 {
            let _ = write!(name, ", {without} without bins left out");
        }
        series.push(Series {
            name,
            points: sum.into_iter().map(|(v, c)| (v as f64, c as f64)).collect(),
        });
    }
    let chunks = series.len().div_ceil(HIST_SERIES);
    let lat = format!("{kind} latency");
    for (c, part) in series.chunks(HIST_SERIES).enumerate() {
        let id = if chunks > 1 {
            format!("set-hist-{dir}-{kind}-{}", c + 1)
        } else {
            format!("set-hist-{dir}-{kind}")
        };
        h.push_str(&svg::xy_chart_marked(
            &id,
            &format!(
                "{dir} {} histogram per point, pooled over its runs{}",
                latency_name(kind),
                if chunks > 1 {
                    format!(" ({} of {chunks})", c + 1)
                } else {
                    String::new()
                }
            ),
            Axis {
                label: &lat,
                q: Quantity::Time,
                allow_log: true,
            },
            Axis {
                label: "I/Os in bucket (sum over the runs)",
                q: Quantity::Count,
                allow_log: true,
            },
            part,
            &svg::Marks {
                kind: "histogram",
                ..Default::default()
            },
        ));
    }
}

/// A compare metric's name (naming which latency) and quantity; compare keeps IOPS,
/// bytes/s and nanoseconds.
fn compare_metric(metric: &str) -> (String, Quantity) {
    match metric {
        "iops" => ("IOPS".into(), Quantity::Iops),
        "bw" => ("bandwidth".into(), Quantity::Rate),
        "lat" => ("lat (total latency) mean".into(), Quantity::Time),
        m => (format!("{m} latency"), Quantity::Time),
    }
}

/// A comparison: bars of each side's mean with σ and min–max error bars per job,
/// direction and metric, and the relative speeds.
fn compare_section(h: &mut String, k: usize, p: &Path, v: &Value) {
    let _ = write!(
        h,
        "<h2>Comparison: {}</h2>",
        svg::esc(&p.display().to_string())
    );
    context(h, v.get("iobench_env"));
    let results = v["results"].as_array().cloned().unwrap_or_default();
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for r in &results {
        let key = (
            r["job"].as_str().unwrap_or("").to_string(),
            r["dir"].as_str().unwrap_or("").to_string(),
            r["metric"].as_str().unwrap_or("").to_string(),
        );
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let stat = |r: &Value| {
        let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
        Stat {
            n: r["n"].as_u64().unwrap_or(1) as usize,
            mean: f("mean"),
            sd: f("sd"),
            min: r["min"].as_f64().unwrap_or(f("mean")),
            max: r["max"].as_f64().unwrap_or(f("mean")),
            failed: 0,
            reason: String::new(),
        }
    };
    for (i, (job, dir, metric)) in keys.iter().enumerate() {
        let (label, q) = compare_metric(metric);
        let of_key: Vec<&Value> = results
            .iter()
            .filter(|r| {
                r["job"] == job.as_str()
                    && r["dir"] == dir.as_str()
                    && r["metric"] == metric.as_str()
            })
            .collect();
        let sides: Vec<String> = of_key
            .iter()
            .map(|r| r["side"].as_str().unwrap_or("").to_string())
            .collect();
        let series: Vec<StatSeries> = of_key
            .iter()
            .enumerate()
            .map(|(si, r)| StatSeries {
                name: sides[si].clone(),
                points: vec![(si, stat(r))],
                flat: None,
            })
            .collect();
        h.push_str(&svg::study_chart(&StudyChart {
            id: &format!("cmp{k}-{i}"),
            title: &format!("{job} {dir}: {label}, mean ± σ and min–max"),
            xlabel: "side",
            x: &StudyX::Categories(sides.clone()),
            y: YSpec {
                label: format!("{dir} {label}"),
                q,
                allow_log: false,
            },
            style: Style::Bars,
            series: &series,
            second: None,
            notes: &[],
        }));
    }
    // The table in the charts' units, so that its numbers read like the bars.
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let (label, q) = compare_metric(r["metric"].as_str().unwrap_or(""));
            let num = |k: &str| r[k].as_f64().map_or("-".into(), |x| q.text(x));
            vec![
                format!(
                    "{} {} {} {}",
                    r["side"].as_str().unwrap_or(""),
                    r["job"].as_str().unwrap_or(""),
                    r["dir"].as_str().unwrap_or(""),
                    label
                ),
                r["n"].to_string(),
                num("mean"),
                num("sd"),
                num("median"),
                num("min"),
                num("max"),
            ]
        })
        .collect();
    table(
        h,
        &[
            "side job dir metric",
            "runs",
            "mean",
            "σ",
            "median",
            "min",
            "max",
        ],
        &rows,
    );
    let rel: Vec<Vec<String>> = v["relative"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            vec![
                format!(
                    "{} {} {}",
                    r["job"].as_str().unwrap_or(""),
                    r["dir"].as_str().unwrap_or(""),
                    r["metric"].as_str().unwrap_or("")
                ),
                format!(
                    "{} / {}",
                    r["side"].as_str().unwrap_or(""),
                    r["baseline"].as_str().unwrap_or("")
                ),
                format!(
                    "{:.3} ± {:.3}",
                    r["ratio"].as_f64().unwrap_or(f64::NAN),
                    r["ratio_sd"].as_f64().unwrap_or(f64::NAN)
                ),
                r["p_value"]
                    .as_f64()
                    .map_or("-".into(), |p| format!("{p:.4}")),
            ]
        })
        .collect();
    table(h, &["job dir metric", "sides", "ratio", "Welch p"], &rel);
}

/// A capacity search (`iobench slo`): the latency–throughput curve, latency from the
/// scheduled start and fio's clat at each target's statistic against the achieved rate,
/// with each target a dashed level, the capacity a vertical marker and the steps over a
/// target red crosses; then the steps as a table.
fn slo_section(h: &mut String, k: usize, p: &Path, v: &Value) {
    let _ = write!(
        h,
        "<h2>Capacity under latency targets: {}</h2>",
        svg::esc(&p.display().to_string())
    );
    let steps = v["steps"].as_array().cloned().unwrap_or_default();
    let targets = v["targets"].as_array().cloned().unwrap_or_default();
    let mut series = Vec::new();
    let mut marks = svg::Marks {
        kind: "slo",
        ..Default::default()
    };
    for t in &targets {
        let stat = t["stat"].as_str().unwrap_or("");
        for (key, what) in [("sched_lat_ns", "sched_lat"), ("clat_ns", "clat")] {
            let points: Vec<(f64, f64)> = steps
                .iter()
                .filter_map(|s| Some((s["achieved_iops"].as_f64()?, s[key][stat].as_f64()?)))
                .collect();
            series.push(Series {
                name: format!("{what} {stat}"),
                points,
            });
        }
        if let Some(max) = t["max_ns"].as_f64() {
            marks
                .levels
                .push((max, format!("target {stat} ≤ {}", Quantity::Time.text(max))));
            for s in &steps {
                let (Some(x), Some(y)) = (
                    s["achieved_iops"].as_f64(),
                    s["sched_lat_ns"][stat].as_f64(),
                ) else {
                    continue;
                };
                if y > max {
                    marks.failed.push((
                        x,
                        y,
                        format!(
                            "offered {} IOPS: sched_lat {stat} {} over the target {}",
                            svg::num3(s["offered_iops"].as_f64().unwrap_or(0.0)),
                            Quantity::Time.text(y),
                            Quantity::Time.text(max)
                        ),
                    ));
                }
            }
        }
    }
    match v["capacity_iops"].as_f64() {
        Some(c) => marks.vertical.push((
            c,
            format!(
                "capacity {} IOPS{}",
                svg::num3(c),
                v["bound_by"]
                    .as_str()
                    .map(|b| format!(" (bound by {b})"))
                    .unwrap_or_default()
            ),
        )),
        None => {
            let _ = write!(
                h,
                "<p class=\"note\">No rate met every target: no capacity found.</p>"
            );
        }
    }
    h.push_str(&svg::xy_chart_marked(
        &format!("slo{k}"),
        "Latency against achieved rate: scheduled latency (sched_lat) and fio's clat",
        Axis {
            label: "achieved rate (IOPS)",
            q: Quantity::Iops,
            allow_log: true,
        },
        Axis {
            label: "latency",
            q: Quantity::Time,
            allow_log: true,
        },
        &series,
        &marks,
    ));
    let mut header: Vec<String> = vec!["offered IOPS".into(), "achieved IOPS".into()];
    for t in &targets {
        let stat = t["stat"].as_str().unwrap_or("");
        header.push(format!("sched_lat {stat}"));
        header.push(format!("clat {stat}"));
    }
    header.extend(["missed starts".into(), "runs".into(), "met".into()]);
    let rows: Vec<Vec<String>> = steps
        .iter()
        .map(|s| {
            let mut r = vec![
                svg::num3(s["offered_iops"].as_f64().unwrap_or(0.0)),
                svg::num3(s["achieved_iops"].as_f64().unwrap_or(0.0)),
            ];
            for t in &targets {
                let stat = t["stat"].as_str().unwrap_or("");
                for key in ["sched_lat_ns", "clat_ns"] {
                    r.push(
                        s[key][stat]
                            .as_f64()
                            .map_or("-".into(), |x| Quantity::Time.text(x)),
                    );
                }
            }
            r.push(s["missed_starts"].to_string());
            // A noisy step's repeats (slo's --repeat-noisy), and the run it went by.
            r.push(match (s["used_run"].as_u64(), s["noisy"].as_str()) {
                (Some(u), Some(why)) => format!(
                    "{} (run {u} used, the median; noisy: {why})",
                    s["runs"].as_u64().unwrap_or(1)
                ),
                (None, Some(why)) => format!("1 (noisy: {why})"),
                _ => "1".into(),
            });
            r.push(
                if s["met"].as_bool() == Some(true) {
                    "yes"
                } else {
                    "no"
                }
                .into(),
            );
            r
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    table(h, &header, &rows);
}

/// A metric's trend over time (`iobench history trend --format json`): one point per
/// run, a line per direction, on a date axis; the baseline run, when named, a marker.
fn trend_section(h: &mut String, k: usize, p: &Path, v: &Value) {
    let metric = v["metric"].as_str().unwrap_or("iops");
    let (label, q) = match metric {
        "iops" => ("IOPS".to_string(), Quantity::Iops),
        "bw" => ("bandwidth".into(), Quantity::Rate),
        "lat" => ("lat (total latency) mean".into(), Quantity::Time),
        m => (format!("{m} latency"), Quantity::Time),
    };
    let _ = write!(
        h,
        "<h2>Trend of {}: {}</h2>",
        svg::esc(&label),
        svg::esc(&p.display().to_string())
    );
    let points = v["points"].as_array().cloned().unwrap_or_default();
    let mut series = Vec::new();
    for d in DIRECTIONS {
        let pts: Vec<(f64, f64)> = points
            .iter()
            .filter_map(|pt| Some((pt["started"].as_f64()?, pt["values"][d].as_f64()?)))
            .collect();
        if !pts.is_empty() {
            series.push(Series {
                name: d.to_string(),
                points: pts,
            });
        }
    }
    let mut marks = svg::Marks {
        kind: "trend",
        dates: true,
        ..Default::default()
    };
    let base = &v["baseline"];
    if let Some(id) = base["id"].as_i64() {
        if let Some(t) = points
            .iter()
            .find(|pt| pt["id"].as_i64() == Some(id))
            .and_then(|pt| pt["started"].as_f64())
        {
            // A baseline of several runs is marked at its first, its size said.
            let n = base["ids"].as_array().map_or(1, Vec::len);
            let runs = if n > 1 {
                format!("{n} runs from run {id}")
            } else {
                format!("run {id}")
            };
            marks.vertical.push((
                t,
                format!(
                    "baseline {} ({runs})",
                    base["name"].as_str().unwrap_or("default")
                ),
            ));
        }
    }
    let job = v["job_hash"].as_str().unwrap_or("-");
    let target = v["target"].as_str().unwrap_or("-");
    h.push_str(&svg::xy_chart_marked(
        &format!("trend{k}"),
        &format!(
            "{label} per run, job {}, target {target}",
            job.chars().take(12).collect::<String>()
        ),
        Axis {
            label: "run started",
            q: Quantity::Plain,
            allow_log: false,
        },
        Axis {
            label: &label,
            q,
            allow_log: true,
        },
        &series,
        &marks,
    ));
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|pt| {
            let mut r = vec![
                pt["id"].to_string(),
                svg::date_seconds(pt["started"].as_f64().unwrap_or(0.0)),
            ];
            r.extend(series.iter().map(|s| {
                pt["values"][s.name.as_str()]
                    .as_f64()
                    .map_or("-".into(), |x| q.text(x))
            }));
            r
        })
        .collect();
    let mut header = vec!["run".to_string(), "started (UTC)".into()];
    header.extend(series.iter().map(|s| format!("{} {label}", s.name)));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    table(h, &header, &rows);
}

/// A log: its values over time, one line per direction; a histogram log: p50, p99 and
/// p99.9 over time.
fn log_section(h: &mut String, k: usize, p: &Path, kind: LogKind, lines: &[LogLine]) {
    let _ = write!(h, "<h2>Log: {}</h2>", svg::esc(&p.display().to_string()));
    let names = ["read", "write", "trim"];
    let mut series: Vec<Series> = Vec::new();
    // fio logs bandwidth in KiB/s and latencies in ns.
    let (title, ylabel, scale, q) = match kind {
        LogKind::Bw => ("bandwidth over time", "bandwidth", 1024.0, Quantity::Rate),
        LogKind::Iops => ("IOPS over time", "IOPS", 1.0, Quantity::Iops),
        LogKind::Lat(which) => (
            match which {
                "clat" => "clat (completion latency) over time",
                "slat" => "slat (submission latency) over time",
                _ => "lat (total latency) over time",
            },
            match which {
                "clat" => "clat",
                "slat" => "slat",
                _ => "lat",
            },
            1.0,
            Quantity::Time,
        ),
        LogKind::Hist => (
            "clat (completion latency) percentiles over time",
            "clat",
            1.0,
            Quantity::Time,
        ),
    };
    let mut rows = Vec::new();
    // (points read, points drawn) of the series that had to be thinned.
    let mut thinned = (0usize, 0usize);
    if kind == LogKind::Hist {
        for (pq, qn) in [(50.0, "p50"), (99.0, "p99"), (99.9, "p99.9")] {
            for (d, dname) in names.iter().enumerate() {
                let pts: Vec<(f64, f64)> = lines
                    .iter()
                    .filter(|l| l.ddir == d)
                    .filter_map(|l| {
                        hist_percentile(&l.buckets, pq).map(|v| (l.t_ms as f64 / 1e3, v * scale))
                    })
                    .collect();
                let pts = downsample(pts, &mut thinned);
                if !pts.is_empty() {
                    for (t, v) in &pts {
                        rows.push(vec![format!("{dname} {qn}"), format!("{t:.3}"), q.text(*v)]);
                    }
                    series.push(Series {
                        name: format!("{dname} {qn}"),
                        points: pts,
                    });
                }
            }
        }
    } else {
        for (d, name) in names.iter().enumerate() {
            let pts: Vec<(f64, f64)> = lines
                .iter()
                .filter(|l| l.ddir == d)
                .map(|l| (l.t_ms as f64 / 1e3, l.value * scale))
                .collect();
            let pts = downsample(pts, &mut thinned);
            if !pts.is_empty() {
                for (t, v) in &pts {
                    rows.push(vec![name.to_string(), format!("{t:.3}"), q.text(*v)]);
                }
                series.push(Series {
                    name: name.to_string(),
                    points: pts,
                });
            }
        }
    }
    let title = if thinned.0 > 0 {
        format!("{title} (downsampled)")
    } else {
        title.to_string()
    };
    h.push_str(&svg::xy_chart(
        &format!("log{k}"),
        &title,
        Axis {
            label: "time",
            q: Quantity::Seconds,
            allow_log: false,
        },
        Axis {
            label: ylabel,
            q,
            allow_log: q == Quantity::Time,
        },
        &series,
    ));
    if thinned.0 > 0 {
        let _ = write!(
            h,
            "<p>The log's {} points were downsampled to {} for the chart and the table: \
             each of at most {} time buckets per series keeps its minimum and its maximum, \
             so spikes stay visible.</p>",
            thinned.0,
            thinned.1,
            CHART_POINTS / 2
        );
    }
    h.push_str("<details><summary>numbers</summary>");
    table(h, &["series", "time (s)", ylabel], &rows);
    h.push_str("</details>");
}

/// The most points a log series is drawn with: a long log (millions of lines) would make
/// a report of hundreds of MB that no browser draws.
const CHART_POINTS: usize = 4000;

/// Thins a series to at most [`CHART_POINTS`]: the points are cut into time buckets and
/// each bucket keeps its lowest and highest point, in time order. Adds the counts before
/// and after to `thinned` when it had to thin.
fn downsample(pts: Vec<(f64, f64)>, thinned: &mut (usize, usize)) -> Vec<(f64, f64)> {
    if pts.len() <= CHART_POINTS {
        return pts;
    }
    let per = pts.len().div_ceil(CHART_POINTS / 2);
    let mut out = Vec::with_capacity(CHART_POINTS);
    for chunk in pts.chunks(per) {
        let lo = chunk
            .iter()
            .enumerate()
            .min_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
            .map_or(0, |m| m.0);
        let hi = chunk
            .iter()
            .enumerate()
            .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
            .map_or(0, |m| m.0);
        out.push(chunk[lo.min(hi)]);
        if lo != hi {
            out.push(chunk[lo.max(hi)]);
        }
    }
    thinned.0 += pts.len();
    thinned.1 += out.len();
    out
}

/// A percentile (ns) of one histogram-log line: its buckets are fio's, merged 2^c at a
/// time (`log_hist_coarseness`), each standing for the middle of its first fio bucket.
fn hist_percentile(buckets: &[u64], q: f64) -> Option<f64> {
    let total: u64 = buckets.iter().sum();
    if total == 0 || buckets.is_empty() {
        return None;
    }
    let coarse = (hist::PLAT_NR / buckets.len()).max(1);
    let want = (q / 100.0 * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (i, &c) in buckets.iter().enumerate() {
        seen += c;
        if seen >= want {
            return Some(hist::val_of((i * coarse).min(hist::PLAT_NR - 1)) as f64);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_log_percentiles() {
        let mut b = vec![0u64; hist::PLAT_NR];
        b[hist::idx_of(1000)] = 50;
        b[hist::idx_of(9000)] = 50;
        assert_eq!(
            hist_percentile(&b, 50.0),
            Some(hist::val_of(hist::idx_of(1000)) as f64)
        );
        assert_eq!(
            hist_percentile(&b, 99.0),
            Some(hist::val_of(hist::idx_of(9000)) as f64)
        );
        assert_eq!(hist_percentile(&[0, 0], 50.0), None);
    }
}
