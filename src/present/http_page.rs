//! The report's section for the http engine's own statistics (`iobench_http` in a job's
//! JSON): failed requests by status, and each class of requests (per operation, size
//! class, endpoint, multipart stage) with its counts and its latency percentiles, time to
//! first byte beside them when the job measured it. Read from the result's JSON as
//! written, so the section shows the run's own numbers; drawn with `svg`'s category bars
//! (a class is a category, never a point on a line).

use super::html::table;
use super::svg::{self, Quantity, StatSeries, StudyChart, StudyX, Style, YSpec};
use serde_json::Value;
use std::fmt::Write;

/// The groups of classes `iobench_http` may hold, with the title each gets here.
const GROUPS: [(&str, &str); 4] = [
    ("ops", "per operation"),
    ("sizes", "per object-size class"),
    ("endpoints", "per endpoint"),
    ("multipart", "per multipart stage"),
];

/// The percentiles drawn and tabled, as the JSON names them (the default list has all).
pub const PERCENTILES: [(&str, &str); 3] = [
    ("50.000000", "p50"),
    ("99.000000", "p99"),
    ("99.900000", "p99.9"),
];

fn int(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f as u64))
        .unwrap_or(0)
}

/// A percentile of a latency object (`lat_ns` or `ttfb_ns`), when it was reported.
pub fn percentile(lat: &Value, key: &str) -> Option<f64> {
    lat.get("percentile")?.get(key)?.as_f64()
}

/// Draws the section for every job of `doc` that has `iobench_http`; `k` makes the
/// charts' ids unique on the page.
pub fn section(h: &mut String, k: usize, doc: &Value) {
    let Some(jobs) = doc["jobs"].as_array() else {
        return;
    };
    for (ji, job) in jobs.iter().enumerate() {
        let Some(http) = job.get("iobench_http").filter(|v| v.is_object()) else {
            continue;
        };
        let name = job["jobname"].as_str().unwrap_or("job");
        job_section(h, &format!("http{k}-{ji}"), name, http);
    }
}

fn job_section(h: &mut String, id: &str, name: &str, http: &Value) {
    let _ = write!(
        h,
        "<section class=\"http\" data-job=\"{}\"><h3>HTTP requests: {}</h3>",
        svg::esc(name),
        svg::esc(name)
    );
    let ttfb = http["all"].get("ttfb_ns").is_some();
    let mut header: Vec<String> = [
        "class",
        "requests",
        "bytes",
        "bandwidth",
        "IOPS",
        "errors",
        "latency mean",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(PERCENTILES.iter().map(|(_, p)| format!("latency {p}")));
    if ttfb {
        header.push("TTFB mean".into());
        header.extend(PERCENTILES.iter().map(|(_, p)| format!("TTFB {p}")));
    }
    let mut rows = vec![class_row("all", &http["all"], ttfb)];
    for (group, _) in GROUPS {
        if let Some(classes) = http[group].as_object() {
            for (cname, c) in classes {
                rows.push(class_row(&format!("{group} {cname}"), c, ttfb));
            }
        }
    }
    let hdr: Vec<&str> = header.iter().map(|s| s.as_str()).collect();
    table(h, &hdr, &rows);
    for (group, title) in GROUPS {
        let Some(classes) = http[group].as_object().filter(|c| !c.is_empty()) else {
            continue;
        };
        let names: Vec<String> = classes.keys().cloned().collect();
        let mut series: Vec<StatSeries> = Vec::new();
        let mut kinds = vec![("lat_ns", "latency")];
        if ttfb {
            kinds.push(("ttfb_ns", "TTFB"));
        }
        for (key, label) in &kinds {
            for (pkey, pname) in PERCENTILES {
                let points: Vec<(usize, svg::Stat)> = classes
                    .values()
                    .enumerate()
                    .filter_map(|(i, c)| {
                        percentile(&c[*key], pkey).map(|v| (i, svg::Stat::of(&[v], &[])))
                    })
                    .collect();
                if !points.is_empty() {
                    series.push(StatSeries {
                        name: format!("{label} {pname}"),
                        points,
                        flat: None,
                    });
                }
            }
        }
        if series.is_empty() {
            continue;
        }
        let x = StudyX::Categories(names);
        let title = format!("{name}: latency {title}");
        h.push_str(&svg::study_chart(&StudyChart {
            id: &format!("{id}-{group}"),
            title: &title,
            xlabel: group,
            x: &x,
            y: YSpec {
                label: "latency".into(),
                q: Quantity::Time,
                allow_log: true,
            },
            style: Style::Bars,
            series: &series,
            second: None,
            notes: &[],
        }));
    }
    if let Some(errors) = http["errors"].as_object() {
        let _ = write!(h, "<h4>Failed requests by status</h4>");
        let counted: Vec<(&String, u64)> = errors
            .iter()
            .filter(|(k, _)| k.as_str() != "total")
            .map(|(k, v)| (k, int(v)))
            .collect();
        let rows: Vec<Vec<String>> = errors
            .iter()
            .map(|(k, v)| vec![k.clone(), int(v).to_string()])
            .collect();
        table(h, &["status", "failed requests"], &rows);
        if counted.iter().any(|(_, n)| *n > 0) {
            let x = StudyX::Categories(counted.iter().map(|(k, _)| k.to_string()).collect());
            let series = [StatSeries {
                name: "failed requests".into(),
                points: counted
                    .iter()
                    .enumerate()
                    .map(|(i, (_, n))| (i, svg::Stat::of(&[*n as f64], &[])))
                    .collect(),
                flat: None,
            }];
            h.push_str(&svg::study_chart(&StudyChart {
                id: &format!("{id}-errors"),
                title: &format!("{name}: failed requests by status"),
                xlabel: "status",
                x: &x,
                y: YSpec {
                    label: "failed requests".into(),
                    q: Quantity::Count,
                    allow_log: false,
                },
                style: Style::Bars,
                series: &series,
                second: None,
                notes: &[],
            }));
        }
    }
    h.push_str("</section>");
}

/// One class's table row: counts, rates, errors, then latency (and TTFB) mean and
/// percentiles, `-` where the class has none.
fn class_row(label: &str, c: &Value, ttfb: bool) -> Vec<String> {
    let t = |v: Option<f64>| v.map_or("-".into(), |v| Quantity::Time.text(v));
    let mut row = vec![
        label.to_string(),
        int(&c["total_ios"]).to_string(),
        Quantity::Bytes.text(int(&c["io_bytes"]) as f64),
        Quantity::Rate.text(int(&c["bw_bytes"]) as f64),
        Quantity::Iops.text(c["iops"].as_f64().unwrap_or(0.0)),
        int(&c["errors"]).to_string(),
    ];
    let mut lat = |key: &str| {
        let l = &c[key];
        let some = int(&l["N"]) > 0;
        row.push(t(l["mean"].as_f64().filter(|_| some)));
        for (p, _) in PERCENTILES {
            row.push(t(percentile(l, p)));
        }
    };
    lat("lat_ns");
    if ttfb {
        lat("ttfb_ns");
    }
    row
}
