//! The report page of an `iobench pts` output directory, as the SNIA PTS asks a report to
//! look: a header (device, platform, purge, preconditioning, threads and depth, rounds,
//! active range, why a run does not conform), the steady-state convergence plot, the
//! measurement-window plot (average, ±10 % band, least-squares line), the steady-state
//! determination table, the results tables and plots, and the IOPS matrix as a heat map.
//! It reads only the directory's `summary.json` (the pts study writes it; this module
//! does not depend on the study), and draws with `svg`'s charts.

use super::svg::{
    self, Axis, Quantity, Series, Stat, StatSeries, StudyChart, StudyX, Style, YSpec,
};
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

/// The `summary.json` of a pts output directory, when `dir` is one (a directory whose
/// `summary.json` names the SNIA specification; `state.json` beside it is not needed,
/// so a published summary alone renders too).
pub fn summary_of(dir: &Path) -> Option<Result<Value, String>> {
    let path = dir.join("summary.json");
    if !path.is_file() {
        return None;
    }
    let read = super::results::read_input(&path)
        .map(|t| String::from_utf8_lossy(&t).into_owned())
        .and_then(|t| {
            super::results::parse_doc(&t).map_err(|e| format!("{}: {e}", path.display()))
        });
    match read {
        Ok(v)
            if !v["specification"]
                .as_str()
                .unwrap_or("")
                .starts_with("SNIA") =>
        {
            None
        }
        Ok(mut v) => {
            if let Err(e) = super::results::check_doc_bounds(&path, &v) {
                return Some(Err(e));
            }
            // The platform: the summary's own, else a run's `iobench_env` (older runs).
            if !v["platform"].is_object() {
                if let Some(env) = first_env(dir, &v) {
                    v["platform"] = env;
                }
            }
            Some(Ok(v))
        }
        err => Some(err),
    }
}

/// The `iobench_env` of the first section's preconditioning run or first round: a
/// regular file inside `dir` (a name that leaves it, `/dev/zero` or `../x`, is passed
/// over), read within the limits of every input.
fn first_env(dir: &Path, sum: &Value) -> Option<Value> {
    let sec = &sum["sections"][0];
    let mut files: Vec<String> = sec["preconditioning"]["run"]
        .as_str()
        .map(str::to_string)
        .into_iter()
        .collect();
    if let (Some(name), Some(w)) = (sec["name"].as_str(), sec["tracking"]["workload"].as_str()) {
        files.push(format!("runs/{name}/r01-{w}.json"));
    }
    files.iter().find_map(|f| {
        let inside = Path::new(f)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside {
            return None;
        }
        let t = super::results::read_input(&dir.join(f)).ok()?;
        let v = super::results::parse_doc(String::from_utf8_lossy(&t).trim_start()).ok()?;
        v.get("iobench_env").filter(|e| e.is_object()).cloned()
    })
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// The quantity a tracking unit stands for.
fn quantity(unit: &str) -> Quantity {
    match unit {
        "IOPS" => Quantity::Iops,
        _ => Quantity::Plain,
    }
}

/// The IOPS axis of a chart, log-scaled where its values span decades when `allow_log`.
fn iops_axis(allow_log: bool) -> Axis<'static> {
    Axis {
        label: "IOPS",
        q: Quantity::Iops,
        allow_log,
    }
}

/// A block size as the specification's tables name it: `0.5 KiB`, `4 KiB`.
fn bs_label(bs: u64) -> String {
    if bs < 1024 {
        format!("{} KiB", svg::num3(bs as f64 / 1024.0))
    } else {
        format!("{} KiB", bs / 1024)
    }
}

/// Appends the page of the pts run `dir` (its summary `sum`) to `h`; `k` keeps the
/// chart ids apart when a report has more than one input.
pub fn section(h: &mut String, k: usize, dir: &Path, sum: &Value) {
    let test = sum["test"].as_str().unwrap_or("");
    let _ = write!(
        h,
        "<section class=\"pts\" data-test=\"{}\"><h2>{} — {} test: {}</h2>",
        svg::esc(test),
        svg::esc(sum["specification"].as_str().unwrap_or("")),
        svg::esc(test),
        svg::esc(&dir.display().to_string())
    );
    header(h, sum);
    for (i, sec) in sum["sections"].as_array().into_iter().flatten().enumerate() {
        let id = format!("pts{k}-{i}");
        let unit = sec["tracking"]["unit"].as_str().unwrap_or("");
        let _ = write!(
            h,
            "<h3>Section {}</h3><p>Purge: {}. Preconditioning: {}. Tracking variable: {} ({}).</p>",
            svg::esc(sec["name"].as_str().unwrap_or("")),
            svg::esc(sec["purge"].as_str().unwrap_or("not done")),
            svg::esc(&preconditioning(&sec["preconditioning"])),
            svg::esc(sec["tracking"]["workload"].as_str().unwrap_or("")),
            svg::esc(unit)
        );
        if sec["series"].is_array() {
            saturation(h, &id, sec);
            continue;
        }
        convergence(h, &id, sec, unit);
        let d = &sec["determination"];
        if d["average"].is_null() {
            let _ = write!(
                h,
                "<p class=\"note\">{}</p>",
                svg::esc(d["verdict"].as_str().unwrap_or("no determination"))
            );
            continue;
        }
        window(h, &id, sec, d, unit);
        determination(h, d, unit);
        results(h, &id, test, sec);
        if sec["hir"].is_object() {
            host_idle(h, &id, &sec["hir"], d["steady"] == true);
        }
        if sec["dirth"].is_object() {
            demand(h, &id, &sec["dirth"]);
        }
    }
    h.push_str("</section>");
}

fn preconditioning(p: &Value) -> String {
    if p.is_null() {
        return "none (the test asks for none)".into();
    }
    format!(
        "{}, {} ({})",
        p["workload"].as_str().unwrap_or(""),
        Quantity::Bytes.text(num(&p["bytes"])),
        if p["done"] == true {
            "done"
        } else {
            "not done"
        }
    )
}

/// The header: what was tested, how, and whether the run conforms.
fn header(h: &mut String, sum: &Value) {
    let st = &sum["settings"];
    let t = &sum["target"];
    let env = &sum["platform"];
    let platform = if env.is_object() {
        format!(
            "{} — {}, kernel {} {} ({}); {} × {}; {} memory",
            text(&env["hostname"]),
            text(&env["os"]),
            text(&env["kernel"]["release"]),
            text(&env["kernel"]["version"]),
            text(&env["kernel"]["machine"]),
            text(&env["cpu"]["count"]),
            text(&env["cpu"]["model"]),
            Quantity::Bytes.text(num(&env["memory"]["total_bytes"]))
        )
    } else {
        "not recorded (an older summary.json)".into()
    };
    let purges: Vec<String> = sum["sections"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["purge"].as_str().map(str::to_string))
        .collect();
    let mut purge = purges.first().cloned().unwrap_or_else(|| "not done".into());
    if st["purge"] == false {
        purge = "not purged (--no-purge)".into();
    }
    let precond = sum["sections"][0]["preconditioning"].clone();
    let rows: Vec<(&str, String)> = vec![
        (
            "device",
            format!(
                "{} ({}, {})",
                text(&t["path"]),
                text(&t["kind"]),
                Quantity::Bytes.text(num(&t["size"]))
            ),
        ),
        ("platform", platform),
        (
            "iobench",
            env["iobench_version"]
                .as_str()
                .map_or("not recorded".to_string(), |v| format!("{v} (run)")),
        ),
        ("purge method", purge),
        ("preconditioning", preconditioning(&precond)),
        (
            "threads and queue depth",
            format!(
                "{} ({} engine, direct I/O)",
                load_text(sum),
                text(&st["engine"])
            ),
        ),
        (
            "rounds",
            format!(
                "{} ms per workload, at most {} rounds",
                text(&st["round_ms"]),
                text(&st["max_rounds"])
            ),
        ),
        (
            "active range",
            format!(
                "{} % ({} of {} tested)",
                text(&sum["active_range_pct"]),
                Quantity::Bytes.text(num(&sum["active_range_bytes"])),
                Quantity::Bytes.text(num(&st["capacity"]))
            ),
        ),
        (
            "write cache",
            format!(
                "the profile asks for {}; the device reports {}",
                text(&sum["write_cache"]["profile_asks"]),
                sum["write_cache"]["device"]
                    .as_str()
                    .unwrap_or("nothing (not a block device, or not known)")
            ),
        ),
        ("resumed", format!("{} time(s)", text(&sum["resumed"]))),
    ];
    h.push_str("<table class=\"ctx pts-header\">");
    for (k, v) in rows {
        let _ = write!(
            h,
            "<tr><th class=\"l\">{}</th><td>{}</td></tr>",
            svg::esc(k),
            svg::esc(&v)
        );
    }
    h.push_str("</table>");
    match sum["not_conforming_because"].as_array() {
        Some(why) if !why.is_empty() => {
            h.push_str("<div class=\"note not-conforming\" style=\"color:#7a4b00;background:#fff6e0;padding:4px 8px\"><b>Not conforming to the specification:</b><ul>");
            for w in why {
                let _ = write!(h, "<li>{}</li>", svg::esc(w.as_str().unwrap_or("")));
            }
            h.push_str("</ul></div>");
        }
        _ => h.push_str("<p class=\"conforming\">Conforming run.</p>"),
    }
}

/// The tracking variable round by round, with the window marked.
fn convergence(h: &mut String, id: &str, sec: &Value, unit: &str) {
    let pts: Vec<(f64, f64)> = sec["rounds"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| (num(&r["round"]), num(&r["tracking"])))
        .collect();
    let name = format!(
        "{} ({unit})",
        sec["tracking"]["workload"].as_str().unwrap_or("tracking")
    );
    let mut series = vec![Series { name, points: pts }];
    // The further tracking variables (PTS 2.0's IOPS test), on the same axis: a log one
    // when they lie decades apart (1024 KiB reads against 4 KiB writes).
    for also in sec["tracking"]["also"].as_array().into_iter().flatten() {
        let Some(w) = also.as_str() else { continue };
        series.push(Series {
            name: format!("{w} ({unit})"),
            points: sec["rounds"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| (num(&r["round"]), num(&r["also"][w])))
                .collect(),
        });
    }
    h.push_str(&svg::xy_chart(
        &format!("{id}-convergence"),
        if series.len() > 1 {
            "Steady-state convergence: tracking variables per round"
        } else {
            "Steady-state convergence: tracking variable per round"
        },
        Axis {
            label: "round",
            q: Quantity::Plain,
            allow_log: false,
        },
        Axis {
            label: unit,
            q: quantity(unit),
            allow_log: series.len() > 1,
        },
        &series,
    ));
}

/// The measurement window: its rounds, their average, the ±10 % band and the line.
fn window(h: &mut String, id: &str, sec: &Value, d: &Value, unit: &str) {
    let round0 = num(&d["first_round"]);
    let vals: Vec<f64> = d["values"]
        .as_array()
        .into_iter()
        .flatten()
        .map(num)
        .collect();
    // x: the round's place in the window (1 to 5), so that the window fills the chart.
    let xs: Vec<f64> = (1..=vals.len()).map(|i| i as f64).collect();
    let (first, last) = (1.0, vals.len() as f64);
    let avg = num(&d["average"]);
    // The least-squares line is over the round numbers.
    let (slope, icpt) = (num(&d["slope"]), num(&d["intercept"]));
    let at = |x: f64| slope * (round0 - 1.0 + x) + icpt;
    let xlabel = format!("round in the window (1 = round {})", svg::num3(round0));
    let flat = |v: f64| vec![(first, v), (last, v)];
    let band = num(&d["excursion_limit"]).max(0.0);
    let pct = svg::num3(band * 100.0);
    let series = [
        Series {
            name: format!(
                "{} ({unit})",
                sec["tracking"]["workload"].as_str().unwrap_or("")
            ),
            points: xs.iter().copied().zip(vals.iter().copied()).collect(),
        },
        Series {
            name: format!("window average {}", svg::num3(avg)),
            points: flat(avg),
        },
        Series {
            name: format!("average + {pct} %"),
            points: flat(avg * (1.0 + band)),
        },
        Series {
            name: format!("average − {pct} %"),
            points: flat(avg * (1.0 - band)),
        },
        Series {
            // The formula is over the round numbers, as the determination states it.
            name: format!(
                "least-squares line (x = round): {}",
                d["formula"].as_str().unwrap_or("")
            ),
            points: vec![(first, at(first)), (last, at(last))],
        },
    ];
    h.push_str(&svg::xy_chart(
        &format!("{id}-window"),
        &format!(
            "Measurement window: rounds {}–{}",
            text(&d["first_round"]),
            text(&d["last_round"])
        ),
        Axis {
            label: &xlabel,
            q: Quantity::Plain,
            allow_log: false,
        },
        Axis {
            label: unit,
            q: quantity(unit),
            allow_log: false,
        },
        &series,
    ));
}

/// `pass` or `FAIL`, as a determination's `…_ok` says.
fn pass(ok: &Value) -> &'static str {
    if *ok == true {
        "pass"
    } else {
        "FAIL"
    }
}

/// One criterion (`range` or `excursion`) of determination `d`: its measured value, what is
/// allowed, and whether it passed, from the keys `KEY`, `allowed_KEY` and `KEY_ok`.
fn criterion(d: &Value, key: &str) -> (String, String, &'static str) {
    (
        svg::num3(num(&d[key])),
        svg::num3(num(&d[format!("allowed_{key}").as_str()])),
        pass(&d[format!("{key}_ok").as_str()]),
    )
}

/// The steady-state determination: every number it was made from.
fn determination(h: &mut String, d: &Value, unit: &str) {
    let _ = write!(
        h,
        "<p class=\"verdict\"><b>Steady state:</b> {}</p>",
        svg::esc(d["verdict"].as_str().unwrap_or(""))
    );
    // A row: what, the measured value, and for a criterion what is allowed (with its
    // limit as a share of the average) and pass/FAIL.
    let row = |what: String, measured: String| vec![what, measured, String::new(), String::new()];
    let judged = |what: &str, key: &str| {
        let (measured, allowed, verdict) = criterion(d, key);
        let pct = svg::num3(num(&d[format!("{key}_limit").as_str()]) * 100.0);
        vec![
            what.to_string(),
            measured,
            format!("{allowed} ({pct} % of the average)"),
            verdict.into(),
        ]
    };
    let rows = vec![
        row(
            "measurement window".into(),
            format!(
                "rounds {}–{}",
                text(&d["first_round"]),
                text(&d["last_round"])
            ),
        ),
        row(format!("average ({unit})"), svg::num3(num(&d["average"]))),
        judged("range (max − min)", "range"),
        judged("slope excursion (over the window)", "excursion"),
        row(
            "least-squares line".into(),
            d["formula"].as_str().unwrap_or("").into(),
        ),
    ];
    h.push_str("<div class=\"determination\">");
    super::html::table(
        h,
        &["steady-state determination", "measured", "allowed", ""],
        &rows,
    );
    // The further tracking variables, judged over the same window.
    let also: Vec<Vec<String>> = d["also"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            let mut r = vec![text(&a["workload"]), svg::num3(num(&a["average"]))];
            for key in ["range", "excursion"] {
                let (measured, allowed, verdict) = criterion(a, key);
                r.push(format!("{measured} (allowed {allowed})"));
                r.push(verdict.into());
            }
            r.push(text(&a["formula"]));
            r
        })
        .collect();
    if !also.is_empty() {
        super::html::table(
            h,
            &[
                "also tracked",
                &format!("average ({unit})"),
                "range",
                "",
                "slope excursion",
                "",
                "least-squares line",
            ],
            &also,
        );
    }
    h.push_str("</div>");
}

/// The results over the window, as the test lays them out, with their plots.
fn results(h: &mut String, id: &str, test: &str, sec: &Value) {
    let rs: Vec<&Value> = sec["results"].as_array().into_iter().flatten().collect();
    if rs.is_empty() {
        return;
    }
    let mut sizes: Vec<u64> = rs.iter().filter_map(|r| r["bs"].as_u64()).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.dedup();
    let mut mixes: Vec<u64> = rs.iter().filter_map(|r| r["read_pct"].as_u64()).collect();
    mixes.sort_unstable_by(|a, b| b.cmp(a));
    mixes.dedup();
    let find = |bs: u64, m: u64| rs.iter().find(|r| r["bs"] == bs && r["read_pct"] == m);
    let mix_name = |m: u64| format!("{m}/{}", 100 - m);
    h.push_str("<div class=\"results\">");
    match test {
        "iops" => {
            h.push_str("<p>IOPS over the measurement window (read/write mix across):</p>");
            let mut header = vec!["block size".to_string()];
            header.extend(mixes.iter().map(|&m| mix_name(m)));
            let rows: Vec<Vec<String>> =
                sizes
                    .iter()
                    .map(|&bs| {
                        let mut row = vec![bs_label(bs)];
                        row.extend(mixes.iter().map(|&m| {
                            find(bs, m).map_or("-".into(), |r| svg::num3(num(&r["iops"])))
                        }));
                        row
                    })
                    .collect();
            let hdr: Vec<&str> = header.iter().map(String::as_str).collect();
            super::html::table(h, &hdr, &rows);
            let cols: Vec<String> = mixes.iter().map(|&m| mix_name(m)).collect();
            let rows_l: Vec<String> = sizes.iter().map(|&b| bs_label(b)).collect();
            h.push_str(&svg::heat_map(
                &format!("{id}-matrix"),
                "IOPS matrix: block size × read/write mix",
                ("read/write mix (% read / % write)", &cols),
                ("block size", &rows_l),
                Quantity::Iops,
                &|r, c| find(sizes[r], mixes[c]).map(|v| Ok(num(&v["iops"]))),
            ));
            let series: Vec<Series> = mixes
                .iter()
                .map(|&m| Series {
                    name: format!("{} R/W", mix_name(m)),
                    points: sizes
                        .iter()
                        .rev()
                        .filter_map(|&bs| {
                            find(bs, m).map(|r| (bs as f64 / 1024.0, num(&r["iops"])))
                        })
                        .collect(),
                })
                .collect();
            h.push_str(&svg::xy_chart(
                &format!("{id}-iops-bs"),
                "IOPS against block size, one line per read/write mix",
                Axis {
                    label: "block size (KiB)",
                    q: Quantity::Plain,
                    allow_log: true,
                },
                iops_axis(true),
                &series,
            ));
        }
        // Host idle recovery's one workload: its steady state is the determination's
        // average, and its bursts are drawn by `host_idle`; demand intensity's matrix is
        // drawn by `demand`.
        "hir" | "dirth" => {}
        "throughput" => {
            let rows: Vec<Vec<String>> = rs
                .iter()
                .map(|r| {
                    vec![
                        text(&r["workload"]),
                        bs_label(r["bs"].as_u64().unwrap_or(0)),
                        mix_name(r["read_pct"].as_u64().unwrap_or(0)),
                        svg::num3(num(&r["mb_s"])),
                    ]
                })
                .collect();
            super::html::table(h, &["workload", "block size", "read/write", "MB/s"], &rows);
        }
        _ => {
            let rows: Vec<Vec<String>> = mixes
                .iter()
                .flat_map(|&m| sizes.iter().rev().map(move |&bs| (m, bs)))
                .filter_map(|(m, bs)| {
                    find(bs, m).map(|r| {
                        vec![
                            bs_label(bs),
                            mix_name(m),
                            svg::num3(num(&r["lat_mean_ms"])),
                            svg::num3(num(&r["lat_max_ms"])),
                            svg::num3(num(&r["lat_p99999_ms"])),
                        ]
                    })
                })
                .collect();
            super::html::table(
                h,
                &[
                    "block size",
                    "read/write",
                    "average ms",
                    "maximum ms",
                    "99.999 % ms",
                ],
                &rows,
            );
            let cols: Vec<String> = mixes.iter().map(|&m| mix_name(m)).collect();
            let rows_l: Vec<String> = sizes.iter().map(|&b| bs_label(b)).collect();
            h.push_str(&svg::heat_map(
                &format!("{id}-latency"),
                "Average response time: block size × read/write mix",
                ("read/write mix (% read / % write)", &cols),
                ("block size", &rows_l),
                Quantity::Time,
                &|r, c| find(sizes[r], mixes[c]).map(|v| Ok(num(&v["lat_mean_ms"]) * 1e6)),
            ));
        }
    }
    h.push_str("</div>");
}

/// Write saturation: IOPS against time and against the data written.
fn saturation(h: &mut String, id: &str, sec: &Value) {
    let series = sec["series"].as_array().cloned().unwrap_or_default();
    let pts = |x: &str| -> Vec<(f64, f64)> {
        series
            .iter()
            .map(|r| (num(&r[x]), num(&r["iops"])))
            .collect()
    };
    let iops = iops_axis(false);
    h.push_str(&svg::xy_chart(
        &format!("{id}-wsat-time"),
        "Write saturation: IOPS against time",
        Axis {
            label: "time",
            q: Quantity::Seconds,
            allow_log: false,
        },
        iops,
        &[Series {
            name: "4 KiB random write".into(),
            points: pts("time_s"),
        }],
    ));
    h.push_str(&svg::xy_chart(
        &format!("{id}-wsat-capacity"),
        "Write saturation: IOPS against data written (× capacity)",
        Axis {
            label: "data written (× capacity)",
            q: Quantity::Plain,
            allow_log: false,
        },
        iops_axis(false),
        &[Series {
            name: "4 KiB random write".into(),
            points: pts("capacity_written"),
        }],
    ));
    let rows: Vec<Vec<String>> = series
        .iter()
        .map(|r| {
            vec![
                text(&r["round"]),
                svg::num3(num(&r["time_s"])),
                svg::num3(num(&r["iops"])),
                Quantity::Bytes.text(num(&r["written_bytes"])),
                svg::num3(num(&r["capacity_written"])),
            ]
        })
        .collect();
    super::html::table(
        h,
        &["round", "time s", "IOPS", "written", "× capacity"],
        &rows,
    );
}

/// One bar per category: `values` (category, value) as a bar chart of quantity `q`.
fn bars(id: &str, title: &str, xlabel: &str, y: YSpec, values: &[(String, f64)]) -> String {
    let x = StudyX::Categories(values.iter().map(|v| v.0.clone()).collect());
    let series = [StatSeries {
        name: y.label.clone(),
        points: values
            .iter()
            .enumerate()
            .map(|(i, v)| (i, Stat::of(&[v.1], &[])))
            .collect(),
        flat: None,
    }];
    svg::study_chart(&StudyChart {
        id,
        title,
        xlabel,
        x: &x,
        y,
        style: Style::Bars,
        series: &series,
        second: None,
        notes: &[],
    })
}

/// Host idle recovery: IOPS of every burst against time, a line per segment (a wait
/// state, or the return to the baseline after it), and each segment's mean as bars.
fn host_idle(h: &mut String, id: &str, hir: &Value, steady: bool) {
    // The level the bursts are read against: the steady state, or where the rounds did not
    // settle, their last window's average, named as such.
    let level = if steady {
        "steady state"
    } else {
        "last window's average (steady state not achieved)"
    };
    let segs = hir["segments"].as_array().cloned().unwrap_or_default();
    let label = |seg: &Value| {
        if seg["kind"] == "wait" {
            format!(
                "wait state {} ({} s idle)",
                text(&seg["wait_state"]),
                svg::num3(num(&seg["wait_s"]))
            )
        } else {
            format!(
                "return to baseline after wait state {}",
                text(&seg["wait_state"])
            )
        }
    };
    let series: Vec<Series> = segs
        .iter()
        .filter(|seg| seg["bursts"].as_array().is_some_and(|b| !b.is_empty()))
        .map(|seg| Series {
            name: label(seg),
            points: seg["bursts"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|b| (num(&b["time_s"]), num(&b["iops"])))
                .collect(),
        })
        .collect();
    let _ = write!(
        h,
        "<div class=\"hir\"><p>Host idle recovery: {} bursts of {} s of 4 KiB random writes \
         per segment; {level} before them: {}.</p>",
        text(&hir["bursts_per_segment"]),
        svg::num3(num(&hir["burst_s"])),
        hir["steady_state_iops"]
            .as_f64()
            .map_or("not determined".to_string(), |v| Quantity::Iops.text(v))
    );
    // The steady state before the bursts, as a level the bursts are read against.
    let marks = svg::Marks {
        levels: hir["steady_state_iops"]
            .as_f64()
            .map(|v| (v, level.to_string()))
            .into_iter()
            .collect(),
        ..Default::default()
    };
    h.push_str(&svg::xy_chart_marked(
        &format!("{id}-hir-time"),
        "Host idle recovery: IOPS of each burst against time",
        Axis {
            label: "time since the first burst",
            q: Quantity::Seconds,
            allow_log: false,
        },
        iops_axis(false),
        &series,
        &marks,
    ));
    let means: Vec<(String, f64)> = segs
        .iter()
        .filter_map(|seg| {
            Some((
                seg["name"].as_str()?.to_string(),
                seg["mean_iops"].as_f64()?,
            ))
        })
        .collect();
    h.push_str(&bars(
        &format!("{id}-hir-segments"),
        "Host idle recovery: mean IOPS per segment (wsN: N × the burst of idle after each burst)",
        "segment",
        YSpec {
            label: "mean IOPS".into(),
            q: Quantity::Iops,
            allow_log: false,
        },
        &means,
    ));
    let rows: Vec<Vec<String>> = segs
        .iter()
        .map(|seg| {
            vec![
                label(seg),
                seg["bursts"].as_array().map_or(0, Vec::len).to_string(),
                seg["mean_iops"].as_f64().map_or("-".into(), svg::num3),
                seg["vs_steady_state"]
                    .as_f64()
                    .map_or("-".into(), |r| format!("{r:.2}")),
            ]
        })
        .collect();
    super::html::table(
        h,
        &["segment", "bursts", "mean IOPS", "× steady state"],
        &rows,
    );
    h.push_str("</div>");
}

/// Demand intensity / response-time histogram: IOPS against average response time and
/// against outstanding I/O (a line per thread count), response times against outstanding
/// I/O, the points' table, and the response-time histograms of the maximum-, middle- and
/// minimum-IOPS points as bars.
fn demand(h: &mut String, id: &str, d: &Value) {
    let points: Vec<&Value> = d["points"].as_array().into_iter().flatten().collect();
    let mut threads: Vec<u64> = points
        .iter()
        .filter_map(|p| p["threads"].as_u64())
        .collect();
    threads.sort_unstable();
    threads.dedup();
    // A thread count's points, from the shallowest depth.
    let row = |t: u64| {
        let mut r: Vec<&&Value> = points.iter().filter(|p| p["threads"] == t).collect();
        r.sort_by_key(|p| p["qd"].as_u64());
        r
    };
    let ms_ns = |v: &Value| num(v) * 1e6;
    h.push_str("<div class=\"dirth\">");
    let per_thread = |f: &dyn Fn(&Value) -> (f64, f64)| -> Vec<Series> {
        threads
            .iter()
            .map(|&t| Series {
                name: format!("T{t}"),
                points: row(t).into_iter().map(|p| f(p)).collect(),
            })
            .collect()
    };
    h.push_str(&svg::xy_chart(
        &format!("{id}-dirth-intensity"),
        "Demand intensity: average response time against IOPS, a line per thread count \
         (depth rising along it)",
        iops_axis(true),
        Axis {
            label: "average response time",
            q: Quantity::Time,
            allow_log: true,
        },
        &per_thread(&|p| (num(&p["iops"]), ms_ns(&p["lat_mean_ms"]))),
    ));
    h.push_str(&svg::xy_chart(
        &format!("{id}-dirth-oio"),
        "IOPS against total outstanding I/O (threads × depth), a line per thread count",
        Axis {
            label: "total outstanding I/O",
            q: Quantity::Plain,
            allow_log: true,
        },
        iops_axis(true),
        &per_thread(&|p| (num(&p["oio"]), num(&p["iops"]))),
    ));
    let mut by_oio = points.clone();
    by_oio.sort_by_key(|p| (p["oio"].as_u64(), p["threads"].as_u64()));
    let rt = |k: &str, name: &str| Series {
        name: name.into(),
        points: by_oio
            .iter()
            .map(|p| (num(&p["oio"]), ms_ns(&p[k])))
            .collect(),
    };
    h.push_str(&svg::xy_chart(
        &format!("{id}-dirth-rt"),
        "Response time against total outstanding I/O (every thread count × depth)",
        Axis {
            label: "total outstanding I/O",
            q: Quantity::Plain,
            allow_log: true,
        },
        Axis {
            label: "response time",
            q: Quantity::Time,
            allow_log: true,
        },
        &[
            rt("lat_mean_ms", "average"),
            rt("lat_p99999_ms", "99.999 %"),
            rt("lat_max_ms", "maximum"),
        ],
    ));
    let rows: Vec<Vec<String>> = by_oio
        .iter()
        .map(|p| {
            vec![
                text(&p["threads"]),
                text(&p["qd"]),
                text(&p["oio"]),
                svg::num3(num(&p["iops"])),
                Quantity::Time.text(ms_ns(&p["lat_mean_ms"])),
                Quantity::Time.text(ms_ns(&p["lat_p99999_ms"])),
                Quantity::Time.text(ms_ns(&p["lat_max_ms"])),
            ]
        })
        .collect();
    super::html::table(
        h,
        &[
            "threads",
            "depth",
            "outstanding I/O",
            "IOPS",
            "average",
            "99.999 %",
            "maximum",
        ],
        &rows,
    );
    for hist in d["histograms"].as_array().into_iter().flatten() {
        let which = match hist["point"].as_str().unwrap_or("") {
            "max_iops" => "maximum-IOPS point",
            "mid_iops" => "middle-IOPS point",
            _ => "minimum-IOPS point",
        };
        let buckets: Vec<(String, f64)> = hist["buckets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|b| {
                (
                    format!("≤ {}", Quantity::Time.text(num(&b["upper_ms"]) * 1e6)),
                    num(&b["ios"]),
                )
            })
            .collect();
        h.push_str(&bars(
            &format!("{id}-dirth-hist-{}", hist["point"].as_str().unwrap_or("")),
            &format!(
                "Response-time histogram at the {which}: T{} QD{} ({}), {} I/Os",
                text(&hist["threads"]),
                text(&hist["qd"]),
                Quantity::Iops.text(num(&hist["iops"])),
                text(&hist["ios"])
            ),
            "response time (bucket's upper edge)",
            YSpec {
                label: "I/Os".into(),
                q: Quantity::Count,
                // Bars stay on a linear axis (svg draws no log bars); the buckets' edges
                // are what run on a log scale.
                allow_log: false,
            },
            &buckets,
        ));
    }
    h.push_str("</div>");
}

/// The threads and queue depth a summary's test ran at, as the report and the report page
/// say them: the latency test runs one thread at depth one whatever was asked, and demand
/// intensity every thread count and depth up to the ones asked.
pub fn load_text(sum: &Value) -> String {
    let st = &sum["settings"];
    match sum["test"].as_str() {
        Some("latency") => "threads: 1  queue depth: 1 (the latency test's)".into(),
        Some("dirth") => format!(
            "threads: 1 to {}  queue depth: 1 to {} (every thread count × depth)",
            st["threads"], st["qd"]
        ),
        _ => format!("threads: {}  queue depth: {}", st["threads"], st["qd"]),
    }
}
