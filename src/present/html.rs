//! `iobench report INPUT... -o report.html`: one self-contained HTML file (inline SVG, no
//! script, no network request) from iobench's or fio's JSON/JSON+ results, sweep result
//! directories, compare exports and fio-format logs. Results are read through
//! `results`; charts come from `svg`; every chart's numbers are also in a table.

use super::svg::{self, Bar, Series, XAxis};
use crate::flags::{Flag, Spec, Takes};
use crate::present::results::{self, DirResult, ResultFile, DIRECTIONS};
use crate::stats::hist;
use serde_json::Value;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// `iobench report`'s flags.
pub const SPEC: Spec = Spec {
    command: "report",
    usage: "\
usage: iobench report INPUT... [-o report.html] [--title TEXT]

INPUT is a result file (iobench's or fio's JSON or JSON+), a sweep directory (iobench
sweep -o DIR), a compare export (iobench compare --export-json), or a log (write_bw_log,
write_iops_log, write_lat_log, write_hist_log).",
    flags: &[
        Flag {
            names: &["--output", "-o"],
            takes: Takes::Value,
            form: "FILE",
            help: "the HTML file to write (default: report.html)",
        },
        Flag {
            names: &["--title"],
            takes: Takes::Value,
            form: "TEXT",
            help: "the report's title (default: iobench report)",
        },
    ],
    pass_unknown: false,
    attached: false,
    single_dash: false,
};

/// One input, as recognised.
enum Input {
    Result(PathBuf, ResultFile),
    Sweep(PathBuf, Value),
    Compare(PathBuf, Value),
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
    let mut out = PathBuf::from("report.html");
    let mut title = "iobench report".to_string();
    for (flag, v) in m.flags {
        let v = v.unwrap_or_default();
        match flag {
            "--output" => out = v.into(),
            _ => title = v,
        }
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
    let html = render(&title, &inputs);
    std::fs::write(&out, html).map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!("report: {} input(s) → {}", inputs.len(), out.display());
    Ok(())
}

fn read_input(p: &Path) -> Result<Input, String> {
    if p.is_dir() {
        let idx = p.join("index.json");
        let text = std::fs::read_to_string(&idx).map_err(|e| {
            format!(
                "{}: a directory must be a sweep's result directory with index.json ({e})",
                p.display()
            )
        })?;
        let v: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", idx.display()))?;
        return Ok(Input::Sweep(p.to_path_buf(), v));
    }
    results::regular_file(p)?;
    let text = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let text = String::from_utf8_lossy(&text);
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || text.contains("\n{") {
        if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
            if v.get("relative").is_some() && v.get("sides").is_some() {
                return Ok(Input::Compare(p.to_path_buf(), v));
            }
            if v.get("points").is_some() && v.get("sweep").is_some() {
                return Ok(Input::Sweep(
                    p.parent().unwrap_or(Path::new(".")).to_path_buf(),
                    v,
                ));
            }
        }
        let r = results::parse(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        return Ok(Input::Result(p.to_path_buf(), r));
    }
    let (kind, lines) = parse_log(p, &text)?;
    Ok(Input::Log(p.to_path_buf(), kind, lines))
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
        let num = |i: usize| -> Result<f64, String> {
            f.get(i).and_then(|v| v.parse::<f64>().ok()).ok_or_else(|| {
                format!(
                    "{}:{}: expected numbers separated by commas: {l}",
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
                buckets: f[3..].iter().map(|v| v.parse().unwrap_or(0)).collect(),
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

const STYLE: &str = "body{font-family:sans-serif;margin:24px;max-width:1100px;color:#222}\
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:8px 0 16px;font-size:12px}\
td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f0f0f0}\
td.l,th.l{text-align:left}figure{margin:12px 12px 12px 0;display:inline-block;vertical-align:top}figcaption{font-weight:bold;font-size:13px}\
.ctx td{text-align:left}";

fn render(title: &str, inputs: &[Input]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1><p>Made by {} from {} input(s).</p>",
        svg::esc(title),
        svg::esc(title),
        crate::report::VERSION,
        inputs.len()
    );
    for (k, input) in inputs.iter().enumerate() {
        match input {
            Input::Result(p, r) => run_section(&mut h, k, p, r),
            Input::Sweep(p, v) => sweep_section(&mut h, k, p, v),
            Input::Compare(p, v) => compare_section(&mut h, k, p, v),
            Input::Log(p, kind, lines) => log_section(&mut h, k, p, *kind, lines),
        }
    }
    h.push_str("</body></html>\n");
    h
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
                .map(|a| a.iter().map(s).collect::<Vec<_>>().join(" "))
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

fn table(h: &mut String, header: &[&str], rows: &[Vec<String>]) {
    h.push_str("<table><tr>");
    for c in header {
        let _ = write!(h, "<th>{}</th>", svg::esc(c));
    }
    h.push_str("</tr>");
    for r in rows {
        h.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let class = if i == 0 { " class=\"l\"" } else { "" };
            let _ = write!(h, "<td{class}>{}</td>", svg::esc(c));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

fn dir_row(label: String, d: &DirResult) -> Vec<String> {
    vec![
        label,
        format!("{:.0}", d.iops),
        format!("{:.2}", d.bw_bytes / (1u64 << 20) as f64),
        format!("{:.2}", d.lat_mean_ns / 1e3),
        format!("{:.2}", d.p50_ns / 1e3),
        format!("{:.2}", d.p99_ns / 1e3),
        format!("{:.2}", d.p99_9_ns / 1e3),
    ]
}

const DIR_HEADER: [&str; 7] = [
    "job / direction",
    "IOPS",
    "MiB/s",
    "lat mean (µs)",
    "p50 (µs)",
    "p99 (µs)",
    "p99.9 (µs)",
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
            if !d.bins.is_empty() {
                let total: u64 = d.bins.iter().map(|b| b.1).sum();
                let pts: Vec<(f64, f64)> = d
                    .bins
                    .iter()
                    .map(|&(v, c)| (v as f64 / 1e3, c as f64))
                    .collect();
                let mut cum = 0u64;
                let cdf: Vec<(f64, f64)> = d
                    .bins
                    .iter()
                    .map(|&(v, c)| {
                        cum += c;
                        (v as f64 / 1e3, cum as f64 * 100.0 / total.max(1) as f64)
                    })
                    .collect();
                h.push_str(&svg::line_chart(
                    &format!("{id}-hist"),
                    &format!("{} {}: {} latency histogram", j.name, d.dir, d.pct_of),
                    &format!("{} latency (µs, log scale)", d.pct_of),
                    "I/Os in bucket",
                    &XAxis::Log,
                    &[Series {
                        name: d.dir.clone(),
                        points: pts,
                    }],
                ));
                h.push_str(&svg::line_chart(
                    &format!("{id}-cdf"),
                    &format!("{} {}: {} latency CDF", j.name, d.dir, d.pct_of),
                    &format!("{} latency (µs, log scale)", d.pct_of),
                    "I/Os at or below (%)",
                    &XAxis::Log,
                    &[Series {
                        name: d.dir.clone(),
                        points: cdf,
                    }],
                ));
            } else {
                // Plain JSON: the CDF through the reported percentiles.
                let pct = percentile_points(&r.doc, ji, &d.dir);
                if !pct.is_empty() {
                    h.push_str(&svg::line_chart(
                        &format!("{id}-cdf"),
                        &format!("{} {}: {} latency percentiles", j.name, d.dir, d.pct_of),
                        &format!("{} latency (µs, log scale)", d.pct_of),
                        "percentile (%)",
                        &XAxis::Log,
                        &[Series {
                            name: d.dir.clone(),
                            points: pct,
                        }],
                    ));
                }
            }
        }
    }
}

/// The (latency µs, percentile) points a plain JSON result lists for a job's direction.
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
        .filter_map(|(k, v)| Some((v.as_f64()? / 1e3, k.parse().ok()?)))
        .collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    v
}

/// The metrics a sweep's charts show: (index key, label, scale to the unit shown).
const SWEEP_METRICS: [(&str, &str, f64); 6] = [
    ("iops", "IOPS", 1.0),
    ("bw_bytes", "bandwidth (MiB/s)", 1.0 / 1048576.0),
    ("lat_mean_ns", "mean latency (µs)", 1e-3),
    ("p50_ns", "p50 latency (µs)", 1e-3),
    ("p99_ns", "p99 latency (µs)", 1e-3),
    ("p99_9_ns", "p99.9 latency (µs)", 1e-3),
];

/// A sweep: every metric against each axis (one line per combination of the other axes'
/// values), a heat map of IOPS for two axes, and the table of points.
fn sweep_section(h: &mut String, k: usize, p: &Path, v: &Value) {
    let _ = write!(h, "<h2>Sweep: {}</h2>", svg::esc(&p.display().to_string()));
    context(h, v.get("iobench_env"));
    let points = v["points"].as_array().cloned().unwrap_or_default();
    // The swept options, in order (an axis and its zipped options).
    let mut names: Vec<String> = Vec::new();
    let mut axes: Vec<(String, Vec<String>)> = Vec::new();
    for a in v["sweep"]["axes"].as_array().into_iter().flatten() {
        let name = a["name"].as_str().unwrap_or("").to_string();
        let vals: Vec<String> = a["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect();
        names.push(name.clone());
        for z in a["zip"].as_array().into_iter().flatten() {
            names.push(z["name"].as_str().unwrap_or("").to_string());
        }
        axes.push((name, vals));
    }
    let param = |pt: &Value, n: &str| pt["params"][n].as_str().unwrap_or("").to_string();
    let dirs: Vec<&str> = DIRECTIONS
        .into_iter()
        .filter(|d| points.iter().any(|pt| pt.get(*d).is_some()))
        .collect();
    // The table of every point.
    let mut header: Vec<String> = names.clone();
    for d in &dirs {
        for (_, label, _) in SWEEP_METRICS {
            header.push(format!("{d} {label}"));
        }
    }
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|pt| {
            let mut r: Vec<String> = names.iter().map(|n| param(pt, n)).collect();
            for d in &dirs {
                for (key, _, scale) in SWEEP_METRICS {
                    r.push(
                        pt[*d][key]
                            .as_f64()
                            .map_or("-".into(), |x| format!("{:.2}", x * scale)),
                    );
                }
            }
            r
        })
        .collect();
    for (ai, (axis, values)) in axes.iter().enumerate() {
        for d in &dirs {
            for (mi, (key, label, scale)) in SWEEP_METRICS.iter().enumerate() {
                // One line per combination of the other axes' values.
                let mut series: Vec<Series> = Vec::new();
                for pt in points.iter().filter(|pt| pt.get(*d).is_some()) {
                    let others: Vec<String> = axes
                        .iter()
                        .filter(|(n, _)| n != axis)
                        .map(|(n, _)| format!("{n}={}", param(pt, n)))
                        .collect();
                    let sname = if others.is_empty() {
                        d.to_string()
                    } else {
                        others.join(" ")
                    };
                    let Some(x) = values.iter().position(|v| *v == param(pt, axis)) else {
                        continue;
                    };
                    let Some(y) = pt[*d][*key].as_f64() else {
                        continue;
                    };
                    match series.iter_mut().find(|s| s.name == sname) {
                        Some(s) => s.points.push((x as f64, y * scale)),
                        None => series.push(Series {
                            name: sname,
                            points: vec![(x as f64, y * scale)],
                        }),
                    }
                }
                if series.is_empty() {
                    continue;
                }
                h.push_str(&svg::line_chart(
                    &format!("sweep{k}-{ai}-{d}-{mi}"),
                    &format!("{d} {label} against {axis}"),
                    axis,
                    label,
                    &XAxis::Categories(values.clone()),
                    &series,
                ));
            }
        }
    }
    if axes.len() == 2 {
        let (ax, ay) = (&axes[0], &axes[1]);
        for d in &dirs {
            let cell = |r: usize, c: usize| {
                points
                    .iter()
                    .find(|pt| param(pt, &ax.0) == ax.1[c] && param(pt, &ay.0) == ay.1[r])
                    .and_then(|pt| pt[*d]["iops"].as_f64())
            };
            h.push_str(&svg::heat_map(
                &format!("sweep{k}-heat-{d}"),
                &format!("{d} IOPS by {} and {}", ax.0, ay.0),
                (ax.0.as_str(), &ax.1),
                (ay.0.as_str(), &ay.1),
                "IOPS",
                &cell,
            ));
        }
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    table(h, &header, &rows);
}

/// A comparison: bars of each side's mean with σ error bars per job, direction and
/// metric, and the relative speeds.
/// A compare metric's name with its unit, and the factor from compare's units (IOPS, B/s,
/// ns) to the report's.
fn compare_metric(metric: &str) -> (&str, f64) {
    match metric {
        "iops" => ("IOPS", 1.0),
        "bw" => ("bandwidth (MiB/s)", 1.0 / 1048576.0),
        "lat" => ("mean latency (µs)", 1e-3),
        m => (m, 1e-3),
    }
}

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
    for (i, (job, dir, metric)) in keys.iter().enumerate() {
        let (label, scale) = compare_metric(metric);
        let bars: Vec<Bar> = results
            .iter()
            .filter(|r| {
                r["job"] == job.as_str()
                    && r["dir"] == dir.as_str()
                    && r["metric"] == metric.as_str()
            })
            .map(|r| Bar {
                label: r["side"].as_str().unwrap_or("").to_string(),
                value: r["mean"].as_f64().unwrap_or(0.0) * scale,
                sd: r["sd"].as_f64().unwrap_or(0.0) * scale,
            })
            .collect();
        h.push_str(&svg::bar_chart(
            &format!("cmp{k}-{i}"),
            &format!("{job} {dir}: {label}, mean ± σ"),
            label,
            &bars,
        ));
    }
    // The table in the charts' units, so that its numbers read like the bars.
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let (label, scale) = compare_metric(r["metric"].as_str().unwrap_or(""));
            let num = |k: &str| format!("{:.2}", r[k].as_f64().unwrap_or(0.0) * scale);
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

/// A log: its values over time, one line per direction; a histogram log: p50, p99 and
/// p99.9 over time.
fn log_section(h: &mut String, k: usize, p: &Path, kind: LogKind, lines: &[LogLine]) {
    let _ = write!(h, "<h2>Log: {}</h2>", svg::esc(&p.display().to_string()));
    let names = ["read", "write", "trim"];
    let mut series: Vec<Series> = Vec::new();
    let (title, ylabel, scale) = match kind {
        LogKind::Bw => ("bandwidth over time", "bandwidth (KiB/s)", 1.0),
        LogKind::Iops => ("IOPS over time", "IOPS", 1.0),
        LogKind::Lat(which) => (
            match which {
                "clat" => "completion latency over time",
                "slat" => "submission latency over time",
                _ => "latency over time",
            },
            "latency (µs)",
            1e-3,
        ),
        LogKind::Hist => ("latency percentiles over time", "latency (µs)", 1e-3),
    };
    let mut rows = Vec::new();
    // (points read, points drawn) of the series that had to be thinned.
    let mut thinned = (0usize, 0usize);
    if kind == LogKind::Hist {
        for (q, qn) in [(50.0, "p50"), (99.0, "p99"), (99.9, "p99.9")] {
            for (d, dname) in names.iter().enumerate() {
                let pts: Vec<(f64, f64)> = lines
                    .iter()
                    .filter(|l| l.ddir == d)
                    .filter_map(|l| {
                        hist_percentile(&l.buckets, q).map(|v| (l.t_ms as f64 / 1e3, v * scale))
                    })
                    .collect();
                let pts = downsample(pts, &mut thinned);
                if !pts.is_empty() {
                    for (t, v) in &pts {
                        rows.push(vec![
                            format!("{dname} {qn}"),
                            format!("{t:.3}"),
                            format!("{v:.2}"),
                        ]);
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
                    rows.push(vec![name.to_string(), format!("{t:.3}"), format!("{v:.2}")]);
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
    h.push_str(&svg::line_chart(
        &format!("log{k}"),
        &title,
        "time (s)",
        ylabel,
        &XAxis::Linear,
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
