//! A PTS run's results: the summary JSON (`summary.json`: settings, purge,
//! preconditioning, every round's tracking variable, the steady-state determination with
//! every number it was made from, the results over the measurement window) and the text
//! report (`report.txt`, also printed). Both are made from the state file and the rounds'
//! JSON files only, so a resumed run reports exactly as an uninterrupted one would.

use super::measure::{self, Metrics};
use super::plan::{self, Section, Settings, Test, Workload};
use super::state::{SectionState, State};
use super::steady::{self, Determination};
use crate::study::table::Table;
use serde_json::{json, Value};
use std::path::Path;

/// The path, under the output directory, of one workload's run in one round.
pub fn round_file(section: &str, round: usize, workload: &str) -> String {
    format!("runs/{section}/r{round:02}-{workload}.json")
}

/// The path of a section's preconditioning run.
pub fn precondition_file(section: &str) -> String {
    format!("runs/{section}/wipc.json")
}

/// The path of one host idle recovery burst: `runs/hir/ws2-b007.json`.
pub fn burst_file(section: &str, segment: &str, number: usize) -> String {
    format!("runs/{section}/{segment}-b{number:03}.json")
}

/// Why a run does not conform to the specification (empty: it does).
pub fn not_conforming(st: &State) -> Vec<String> {
    let s = &st.settings;
    let mut why = Vec::new();
    if s.capacity < st.target.size {
        why.push(format!(
            "scaled: --capacity {} of the target's {} bytes",
            s.capacity, st.target.size
        ));
    }
    if s.round_ms != 60_000 {
        why.push(format!(
            "scaled: --round-time {} ms (the specification's is 60 s)",
            s.round_ms
        ));
    }
    if s.max_rounds != steady::MAX_ROUNDS {
        why.push(format!(
            "scaled: --max-rounds {} (the specification's is {})",
            s.max_rounds,
            steady::MAX_ROUNDS
        ));
    }
    if s.test == Test::Hir && s.hir_burst_ms != plan::HIR_BURST_MS {
        why.push(format!(
            "scaled: --hir-burst {} ms (the specification's is 5 s)",
            s.hir_burst_ms
        ));
    }
    if s.test == Test::Hir && s.hir_bursts != plan::HIR_BURSTS {
        why.push(format!(
            "scaled: --hir-bursts {} (the specification's is {})",
            s.hir_bursts,
            plan::HIR_BURSTS
        ));
    }
    if !s.purge {
        why.push("not purged (--no-purge)".into());
    }
    if let Some(wc) = super::purge::write_cache(&st.target) {
        if wc != s.profile.write_cache() {
            why.push(format!(
                "the device's write cache is '{wc}', the profile asks for '{}' \
                 (iobench does not change it)",
                s.profile.write_cache()
            ));
        }
    }
    if st.target.kind == super::purge::TargetKind::File {
        why.push("the target is a file, not a drive".into());
    }
    why
}

/// The values of the tracking variable, round by round.
fn tracking(sec: &SectionState) -> Vec<f64> {
    sec.rounds.iter().map(|r| r.tracking).collect()
}

/// Every tracking variable's values round by round: the section's own first, then its
/// further ones (`also_tracked`) in order.
pub fn tracked_series(def: &Section, sec: &SectionState) -> Vec<Vec<f64>> {
    let mut all = vec![tracking(sec)];
    for i in 0..def.also_tracked.len() {
        all.push(
            sec.rounds
                .iter()
                .map(|r| r.also.get(i).copied().unwrap_or(0.0))
                .collect(),
        );
    }
    all
}

/// A workload's numbers over the rounds `first..=last`: means, and the largest maximum.
fn over_window(
    dir: &Path,
    section: &str,
    w: &Workload,
    first: usize,
    last: usize,
) -> Result<Metrics, String> {
    let runs: Vec<Metrics> = (first..=last)
        .map(|r| measure::read(dir, &round_file(section, r, &w.name)))
        .collect::<Result<_, _>>()?;
    let n = runs.len().max(1) as f64;
    let mean = |f: fn(&Metrics) -> f64| runs.iter().map(f).sum::<f64>() / n;
    Ok(Metrics {
        iops: mean(|m| m.iops),
        bw: mean(|m| m.bw),
        lat_mean_ns: mean(|m| m.lat_mean_ns),
        lat_max_ns: runs.iter().map(|m| m.lat_max_ns).fold(0.0, f64::max),
        lat_p99999_ns: mean(|m| m.lat_p99999_ns),
        written: runs.iter().map(|m| m.written).sum(),
        runtime_ms: runs.iter().map(|m| m.runtime_ms).sum(),
    })
}

/// The determination's verdict in words; `all_steady`: every tracking variable is steady
/// over the window, not only the first (`d`'s).
fn verdict(d: &Determination, all_steady: bool, sec: &SectionState, max_rounds: usize) -> String {
    if all_steady {
        format!(
            "steady state achieved in round {} (measurement window: rounds {}-{})",
            d.last_round, d.first_round, d.last_round
        )
    } else if sec.rounds.len() >= max_rounds {
        format!(
            "steady state not achieved after {} rounds (last window: rounds {}-{})",
            sec.rounds.len(),
            d.first_round,
            d.last_round
        )
    } else {
        format!("not yet steady after {} rounds", sec.rounds.len())
    }
}

/// One section's part of the summary.
fn section_value(
    dir: &Path,
    s: &Settings,
    def: &Section,
    sec: &SectionState,
) -> Result<Value, String> {
    let rounds: Vec<Value> = sec
        .rounds
        .iter()
        .map(|r| {
            let mut v = json!({"round": r.number, "tracking": r.tracking, "runtime_s": r.runtime_s, "written_bytes": r.written});
            if !def.also_tracked.is_empty() {
                v["also"] = def.also_tracked.iter().zip(&r.also).map(|(k, x)| (k.clone(), json!(x))).collect();
            }
            v
        })
        .collect();
    let mut v = json!({
        "name": def.name,
        "purge": sec.purge.map(|m| m.text()),
        "preconditioning": if def.precondition {
            json!({
                "workload": "128 KiB sequential write, twice the capacity",
                "bytes": 2 * (s.capacity / (128 * 1024) * (128 * 1024)),
                "done": sec.preconditioned,
                "run": precondition_file(&def.name),
            })
        } else {
            Value::Null
        },
        "tracking": {
            "workload": def.tracking,
            "measure": def.measure,
            "unit": def.measure.unit(),
            "also": def.also_tracked,
        },
        "rounds": rounds,
        "finished": sec.finished,
    });
    if !def.judged {
        // Write saturation: IOPS against time and against the data written.
        let mut t = 0.0;
        let mut written = 0u64;
        let series: Vec<Value> = sec
            .rounds
            .iter()
            .map(|r| {
                t += r.runtime_s;
                written += r.written;
                json!({"round": r.number, "time_s": t, "iops": r.tracking, "written_bytes": written,
                       "capacity_written": written as f64 / s.capacity as f64})
            })
            .collect();
        v["series"] = json!(series);
        v["limit"] = json!({"capacity_multiple": 4, "time_s": s.wsat_limit_s});
        return Ok(v);
    }
    if s.test == Test::Hir {
        v["hir"] = hir_value(s, sec);
    }
    let Some(d) = steady::judge(&tracking(sec)) else {
        v["determination"] = json!({"verdict": format!("{} rounds: fewer than the window's {}", sec.rounds.len(), steady::WINDOW)});
        return Ok(v);
    };
    // The further tracking variables, each judged over the same window.
    let mut also = vec![];
    for (name, values) in def
        .also_tracked
        .iter()
        .zip(tracked_series(def, sec).iter().skip(1))
    {
        if let Some(a) = steady::judge(values) {
            let mut av = serde_json::to_value(&a).map_err(|e| e.to_string())?;
            av["workload"] = json!(name);
            av["formula"] = json!(a.formula());
            also.push(av);
        }
    }
    let all_steady = d.steady && also.iter().all(|a| a["steady"] == true);
    let mut dv = serde_json::to_value(&d).map_err(|e| e.to_string())?;
    dv["formula"] = json!(d.formula());
    dv["all_steady"] = json!(all_steady);
    if !def.also_tracked.is_empty() {
        dv["also"] = json!(also);
    }
    dv["verdict"] = json!(verdict(&d, all_steady, sec, s.max_rounds));
    dv["range_limit"] = json!(steady::RANGE_LIMIT);
    dv["excursion_limit"] = json!(steady::EXCURSION_LIMIT);
    v["determination"] = dv;
    let mut results = Vec::new();
    for w in &def.workloads {
        let m = over_window(dir, &def.name, w, d.first_round, d.last_round)?;
        results.push(json!({
            "workload": w.name, "read_pct": w.read_pct, "bs": w.bs, "random": w.random,
            "threads": w.threads, "qd": w.qd,
            "iops": m.iops, "mb_s": m.bw / 1e6,
            "lat_mean_ms": m.lat_mean_ns / 1e6, "lat_max_ms": m.lat_max_ns / 1e6,
            "lat_p99999_ms": m.lat_p99999_ns / 1e6,
        }));
    }
    if s.test == Test::Dirth {
        v["dirth"] = dirth_value(dir, def, &results, d.first_round, d.last_round)?;
    }
    v["results"] = json!(results);
    Ok(v)
}

/// Demand intensity over the window: every thread count × depth with its total
/// outstanding I/O, the maximum-, middle- and minimum-IOPS points, and the response-time
/// histogram of each of the three (the window's rounds' JSON+ bins, summed).
fn dirth_value(
    dir: &Path,
    def: &Section,
    results: &[Value],
    first: usize,
    last: usize,
) -> Result<Value, String> {
    let points: Vec<Value> = results
        .iter()
        .map(|r| {
            let (t, q) = (r["threads"].as_u64().unwrap_or(1), r["qd"].as_u64().unwrap_or(1));
            json!({"workload": r["workload"], "threads": t, "qd": q, "oio": t * q,
                   "iops": r["iops"], "lat_mean_ms": r["lat_mean_ms"], "lat_max_ms": r["lat_max_ms"],
                   "lat_p99999_ms": r["lat_p99999_ms"]})
        })
        .collect();
    let iops = |p: &Value| num(&p["iops"]);
    let Some(max) = points.iter().max_by(|a, b| iops(a).total_cmp(&iops(b))) else {
        return Ok(Value::Null);
    };
    // The least demand (T1 QD1: the last point), and the point whose IOPS are nearest
    // the middle of the two.
    let min = points.last().unwrap_or(max);
    let middle = (iops(max) + iops(min)) / 2.0;
    let mid = points
        .iter()
        .filter(|p| p["workload"] != max["workload"] && p["workload"] != min["workload"])
        .min_by(|a, b| {
            (iops(a) - middle)
                .abs()
                .total_cmp(&(iops(b) - middle).abs())
        })
        .unwrap_or(max);
    let mut histograms = vec![];
    for (label, p) in [("max_iops", max), ("mid_iops", mid), ("min_iops", min)] {
        let name = p["workload"].as_str().unwrap_or("");
        let mut bins = vec![];
        for r in first..=last {
            bins.extend(measure::bins(dir, &round_file(&def.name, r, name))?);
        }
        let buckets: Vec<Value> = measure::log_buckets(&bins)
            .iter()
            .map(|&(edge, n)| json!({"upper_ms": edge as f64 / 1e6, "ios": n}))
            .collect();
        histograms.push(
            json!({"point": label, "workload": name, "threads": p["threads"],
            "qd": p["qd"], "oio": p["oio"], "iops": p["iops"],
            "ios": bins.iter().map(|b| b.1).sum::<u64>(), "buckets": buckets}),
        );
    }
    Ok(json!({
        "access_pattern": {"read_pct": plan::DIRTH_READ_PCT, "bs": plan::DIRTH_BS, "random": true},
        "points": points,
        "max_iops": max,
        "mid_iops": mid,
        "min_iops": min,
        "histograms": histograms,
    }))
}

/// Host idle recovery's bursts, segment by segment: IOPS against time (from the first
/// burst's start, bursts and idle at their nominal lengths), each segment's mean, and
/// that mean against the steady state's average.
fn hir_value(s: &Settings, sec: &SectionState) -> Value {
    let steady = steady::judge(&tracking(sec)).map(|d| d.average);
    let burst_s = s.hir_burst_ms as f64 / 1000.0;
    let mut t = 0.0;
    let segments: Vec<Value> = plan::hir_segments(s)
        .iter()
        .enumerate()
        .map(|(i, seg)| {
            let wait_s = seg.wait_ms as f64 / 1000.0;
            let bursts: Vec<Value> = sec
                .bursts
                .iter()
                .filter(|b| b.segment == i)
                .map(|b| {
                    let v = json!({"burst": b.number, "time_s": t, "iops": b.iops, "written_bytes": b.written});
                    t += burst_s + wait_s;
                    v
                })
                .collect();
            let n = bursts.len();
            let mean = (n > 0).then(|| {
                bursts.iter().map(|b| num(&b["iops"])).sum::<f64>() / n as f64
            });
            json!({
                "name": seg.name,
                "kind": if seg.wait_ms > 0 { "wait" } else { "baseline" },
                "wait_state": seg.wait_state,
                "wait_s": wait_s,
                "bursts": bursts,
                "mean_iops": mean,
                "vs_steady_state": match (mean, steady) {
                    (Some(m), Some(a)) if a > 0.0 => json!(m / a),
                    _ => Value::Null,
                },
            })
        })
        .collect();
    json!({
        "burst_s": burst_s,
        "bursts_per_segment": s.hir_bursts,
        "steady_state_iops": steady,
        "done": sec.bursts.len() >= s.hir_bursts * plan::HIR_WAIT_STATES.len() * 2,
        "segments": segments,
    })
}

/// The summary of the run in `dir`.
pub fn summary(dir: &Path, st: &State) -> Result<Value, String> {
    let s = &st.settings;
    let defs = plan::sections(s);
    let why = not_conforming(st);
    let sections: Vec<Value> = defs
        .iter()
        .zip(&st.sections)
        .map(|(d, sec)| section_value(dir, s, d, sec))
        .collect::<Result<_, _>>()?;
    Ok(json!({
        "specification": format!("SNIA SSS PTS {} v2.0.x",
            match s.profile { plan::Profile::Enterprise => "Enterprise", plan::Profile::Client => "Client" }),
        "test": s.test.name(),
        "conforming": why.is_empty(),
        "not_conforming_because": why,
        "target": st.target,
        "settings": s,
        "active_range_pct": s.profile.active_range_pct(),
        "active_range_bytes": s.active_bytes(),
        "write_cache": {
            "profile_asks": s.profile.write_cache(),
            "device": super::purge::write_cache(&st.target),
        },
        "resumed": st.resumed,
        "platform": platform(),
        "sections": sections,
    }))
}

/// The machine the summary was made on (the report's header names it): hostname, OS,
/// kernel, CPU, memory, clock source, and this iobench's version.
fn platform() -> Value {
    let mut m = crate::context::env::machine();
    m.insert("iobench_version".into(), json!(env!("CARGO_PKG_VERSION")));
    Value::Object(m)
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn fmt3(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

/// The text report, from the summary.
pub fn text(sum: &Value) -> String {
    let mut o = String::new();
    let st = &sum["settings"];
    o.push_str(&format!(
        "{} — {} test\n",
        sum["specification"].as_str().unwrap_or(""),
        sum["test"].as_str().unwrap_or("")
    ));
    o.push_str(&format!(
        "target: {} ({}, {} bytes)  capacity tested: {} bytes  active range: {} % ({} bytes)\n",
        sum["target"]["path"].as_str().unwrap_or(""),
        sum["target"]["kind"].as_str().unwrap_or(""),
        sum["target"]["size"],
        st["capacity"],
        sum["active_range_pct"],
        sum["active_range_bytes"]
    ));
    o.push_str(&format!(
        "engine: {}, direct I/O  {}  round: {} ms per workload  rounds at most: {}\n",
        st["engine"].as_str().unwrap_or(""),
        crate::present::pts_page::load_text(sum),
        st["round_ms"],
        st["max_rounds"]
    ));
    o.push_str(&format!(
        "write cache: the profile asks for '{}', the device reports {}\n",
        sum["write_cache"]["profile_asks"].as_str().unwrap_or(""),
        sum["write_cache"]["device"].as_str().map_or(
            "nothing (not a block device, or not known)".to_string(),
            |s| format!("'{s}'")
        )
    ));
    match sum["not_conforming_because"].as_array() {
        Some(w) if !w.is_empty() => {
            o.push_str("NOT CONFORMING to the specification:\n");
            for x in w {
                o.push_str(&format!("  - {}\n", x.as_str().unwrap_or("")));
            }
        }
        _ => o.push_str("conforming run\n"),
    }
    if num(&sum["resumed"]) > 0.0 {
        o.push_str(&format!("resumed {} time(s)\n", sum["resumed"]));
    }
    for sec in sum["sections"].as_array().into_iter().flatten() {
        o.push_str(&format!("\n== {} ==\n", sec["name"].as_str().unwrap_or("")));
        o.push_str(&format!(
            "purge: {}\n",
            sec["purge"].as_str().unwrap_or("not done")
        ));
        if !sec["preconditioning"].is_null() {
            o.push_str(&format!(
                "workload-independent preconditioning: 128 KiB sequential writes, {} bytes\n",
                sec["preconditioning"]["bytes"]
            ));
        }
        let unit = sec["tracking"]["unit"].as_str().unwrap_or("");
        o.push_str(&format!(
            "tracking variable: {} ({unit})\n",
            sec["tracking"]["workload"].as_str().unwrap_or("")
        ));
        if let Some(series) = sec["series"].as_array() {
            let mut t = Table {
                header: ["round", "time s", "IOPS", "written bytes", "× capacity"]
                    .map(String::from)
                    .to_vec(),
                rows: vec![],
            };
            for r in series {
                t.rows.push(vec![
                    r["round"].to_string(),
                    format!("{:.2}", num(&r["time_s"])),
                    fmt3(num(&r["iops"])),
                    r["written_bytes"].to_string(),
                    format!("{:.2}", num(&r["capacity_written"])),
                ]);
            }
            o.push_str(&t.text());
            continue;
        }
        let rounds: Vec<String> = sec["rounds"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| format!("{}:{}", r["round"], fmt3(num(&r["tracking"]))))
            .collect();
        o.push_str(&format!("rounds: {}\n", rounds.join("  ")));
        let d = &sec["determination"];
        o.push_str(&format!(
            "steady state: {}\n",
            d["verdict"].as_str().unwrap_or("")
        ));
        if d["average"].is_null() {
            continue;
        }
        o.push_str(&format!(
            "  window average {} {unit}; range {} (allowed {}, 20 %): {}; \
             slope excursion {} (allowed {}, 10 %): {}\n  least-squares line: {}\n",
            fmt3(num(&d["average"])),
            fmt3(num(&d["range"])),
            fmt3(num(&d["allowed_range"])),
            if d["range_ok"] == true {
                "pass"
            } else {
                "FAIL"
            },
            fmt3(num(&d["excursion"])),
            fmt3(num(&d["allowed_excursion"])),
            if d["excursion_ok"] == true {
                "pass"
            } else {
                "FAIL"
            },
            d["formula"].as_str().unwrap_or("")
        ));
        for a in d["also"].as_array().into_iter().flatten() {
            o.push_str(&format!(
                "  also tracked: {}: window average {}; range {} (allowed {}): {}; slope excursion {} (allowed {}): {}\n",
                a["workload"].as_str().unwrap_or(""),
                fmt3(num(&a["average"])),
                fmt3(num(&a["range"])),
                fmt3(num(&a["allowed_range"])),
                if a["range_ok"] == true { "pass" } else { "FAIL" },
                fmt3(num(&a["excursion"])),
                fmt3(num(&a["allowed_excursion"])),
                if a["excursion_ok"] == true { "pass" } else { "FAIL" },
            ));
        }
        o.push_str(&results_text(sum["test"].as_str().unwrap_or(""), sec));
        if sec["hir"].is_object() {
            o.push_str(&hir_text(&sec["hir"]));
        }
    }
    o
}

/// Demand intensity: the matrix's points by outstanding I/O, and the three chosen points.
fn dirth_text(sec: &Value) -> String {
    let d = &sec["dirth"];
    let mut t = Table {
        header: [
            "threads",
            "depth",
            "outstanding",
            "IOPS",
            "average ms",
            "99.999 % ms",
            "maximum ms",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    let mut points: Vec<&Value> = d["points"].as_array().into_iter().flatten().collect();
    points.sort_by_key(|p| (p["oio"].as_u64(), p["threads"].as_u64()));
    for p in points {
        t.rows.push(vec![
            p["threads"].to_string(),
            p["qd"].to_string(),
            p["oio"].to_string(),
            fmt3(num(&p["iops"])),
            fmt3(num(&p["lat_mean_ms"])),
            fmt3(num(&p["lat_p99999_ms"])),
            fmt3(num(&p["lat_max_ms"])),
        ]);
    }
    let pick = |k: &str| {
        format!(
            "{}: T{} QD{} ({} IOPS)",
            k,
            d[k]["threads"],
            d[k]["qd"],
            fmt3(num(&d[k]["iops"]))
        )
    };
    format!(
        "demand intensity over the measurement window (8 KiB random, 65/35):\n{}{}; {}; {}\n",
        t.text(),
        pick("max_iops"),
        pick("mid_iops"),
        pick("min_iops")
    )
}

/// Host idle recovery's segments: idle, bursts, mean IOPS, and against steady state.
fn hir_text(h: &Value) -> String {
    let mut t = Table {
        header: [
            "segment",
            "idle after each burst s",
            "bursts",
            "mean IOPS",
            "× steady state",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    for seg in h["segments"].as_array().into_iter().flatten() {
        t.rows.push(vec![
            seg["name"].as_str().unwrap_or("").to_string(),
            fmt3(num(&seg["wait_s"])),
            seg["bursts"].as_array().map_or(0, Vec::len).to_string(),
            seg["mean_iops"].as_f64().map_or("-".into(), fmt3),
            seg["vs_steady_state"]
                .as_f64()
                .map_or("-".into(), |r| format!("{r:.2}")),
        ]);
    }
    format!(
        "host idle recovery: {} bursts of {} s of 4 KiB random writes per segment:\n{}",
        h["bursts_per_segment"],
        fmt3(num(&h["burst_s"])),
        t.text()
    )
}

/// A section's results over its window, as the test lays them out.
fn results_text(test: &str, sec: &Value) -> String {
    let results: Vec<&Value> = sec["results"].as_array().into_iter().flatten().collect();
    let get = |name: &str| results.iter().find(|r| r["workload"] == name).copied();
    let bs_label = |bs: u64| {
        if bs < 1024 {
            format!("{:.1} KiB", bs as f64 / 1024.0)
        } else {
            format!("{} KiB", bs / 1024)
        }
    };
    let mut t = Table::default();
    match Test::parse(test) {
        Some(Test::Iops) => {
            t.header = vec!["block size".into()];
            t.header
                .extend(plan::IOPS_MIXES.iter().map(|m| format!("{m}/{}", 100 - m)));
            for &bs in &plan::IOPS_SIZES {
                let mut row = vec![bs_label(bs)];
                for &m in &plan::IOPS_MIXES {
                    let w = results.iter().find(|r| r["bs"] == bs && r["read_pct"] == m);
                    row.push(w.map_or("-".into(), |r| fmt3(num(&r["iops"]))));
                }
                t.rows.push(row);
            }
            format!(
                "IOPS over the measurement window (read/write mix across):\n{}",
                t.text()
            )
        }
        Some(Test::Throughput) => {
            t.header = ["workload", "MB/s"].map(String::from).to_vec();
            for r in &results {
                t.rows.push(vec![
                    r["workload"].as_str().unwrap_or("").to_string(),
                    fmt3(num(&r["mb_s"])),
                ]);
            }
            format!("throughput over the measurement window:\n{}", t.text())
        }
        Some(Test::Dirth) => dirth_text(sec),
        Some(Test::Hir) => get("rw0-bs4k").map_or(String::new(), |r| {
            format!(
                "steady state before the bursts: {} IOPS of 4 KiB random writes, {} ms average response time\n",
                fmt3(num(&r["iops"])),
                fmt3(num(&r["lat_mean_ms"]))
            )
        }),
        _ => {
            t.header = [
                "block size",
                "read/write",
                "average ms",
                "maximum ms",
                "99.999 % ms",
            ]
            .map(String::from)
            .to_vec();
            for &m in &plan::LAT_MIXES {
                for &bs in &plan::LAT_SIZES {
                    let name = format!(
                        "rw{m}-bs{}",
                        if bs < 1024 {
                            bs.to_string()
                        } else {
                            format!("{}k", bs / 1024)
                        }
                    );
                    if let Some(r) = get(&name) {
                        t.rows.push(vec![
                            bs_label(bs),
                            format!("{m}/{}", 100 - m),
                            fmt3(num(&r["lat_mean_ms"])),
                            fmt3(num(&r["lat_max_ms"])),
                            fmt3(num(&r["lat_p99999_ms"])),
                        ]);
                    }
                }
            }
            format!(
                "response times over the measurement window (QD1, T1):\n{}",
                t.text()
            )
        }
    }
}

/// Writes `summary.json` and `report.txt` into `dir`; returns the text report and the
/// summary's JSON.
pub fn write(dir: &Path, st: &State) -> Result<(String, String), String> {
    let sum = summary(dir, st)?;
    let text = text(&sum);
    let json = serde_json::to_string_pretty(&sum).map_err(|e| e.to_string())? + "\n";
    for (name, data) in [
        ("summary.json", json.as_bytes()),
        ("report.txt", text.as_bytes()),
    ] {
        crate::safefs::replace(&dir.join(name), data)
            .map_err(|e| format!("{}: {e}", dir.join(name).display()))?;
    }
    Ok((text, json))
}
