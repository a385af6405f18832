//! `iobench report`: one self-contained HTML file from real inputs (a sweep, a comparison,
//! iobench's JSON+ with its logs, fio's own JSON+), every chart present with its data
//! points, and a real browser (headless Chromium, offline) loading it: the DOM it built
//! has every chart and point, and a screenshot is taken.

use crate::common;
use common::{fio, iobench, run, run_ok, scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    for c in [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ] {
        if Path::new(c).exists() {
            return Some(c.into());
        }
    }
    if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
        panic!("chromium is not installed but IOBENCH_REQUIRE_FIO=1: apt-get install -y chromium");
    }
    eprintln!("chromium not installed: skipping the browser part");
    None
}

fn headless(bin: &Path, profile: &Path) -> Command {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

/// The chart whose figure has `id`, from its opening tag to `</figure>`.
pub(crate) fn chart<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<figure class=\"chart\" id=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}"));
    &html[start..start + html[start..].find("</figure>").unwrap()]
}

/// The attribute `name` of each element of `chart` that has `class="CLASS"`.
pub(crate) fn attrs(chart: &str, class: &str, name: &str) -> Vec<String> {
    chart
        .split(&format!("class=\"{class}\""))
        .skip(1)
        .map(|e| {
            let tag = &e[..e.find('>').unwrap_or(e.len())];
            let key = format!(" {name}=\"");
            tag.find(&key)
                .map(|i| {
                    let v = &tag[i + key.len()..];
                    v[..v.find('"').unwrap()].to_string()
                })
                .unwrap_or_default()
        })
        .collect()
}

/// Loads `html` in headless Chromium (offline) and hands back the DOM it built; takes a
/// screenshot to `shot` too when asked (each Chromium start costs seconds on a busy host).
/// `None` when there is no Chromium (and CI does not ask for one).
pub(crate) fn browse(html: &Path, shot: Option<&Path>) -> Option<String> {
    let chrome = chromium()?;
    let profile = html.with_extension("profile");
    let url = format!("file://{}", html.display());
    let mut c = headless(&chrome, &profile);
    c.arg("--dump-dom").arg(&url);
    let dom = String::from_utf8_lossy(&run(c).stdout).into_owned();
    let Some(shot) = shot else {
        return Some(dom);
    };
    let _ = std::fs::remove_file(shot);
    let mut c = headless(&chrome, &profile);
    c.arg("--window-size=1440,2400")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url);
    let o = run(c);
    let png = std::fs::read(shot)
        .unwrap_or_else(|_| panic!("no screenshot: {}", String::from_utf8_lossy(&o.stderr)));
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "a screenshot with content: {} bytes",
        png.len()
    );
    Some(dom)
}

/// A sweep of two numeric axes (lines, a heat map, the 2D chart), a comparison export
/// (bars with error bars) and fio-format logs, in one report, and in Chromium.
#[test]
fn report_has_every_chart_kind_and_point_and_renders_in_chromium() {
    let dir = scratch("report_html");
    let mut cmd = iobench();
    cmd.args([
        "sweep",
        "--axis",
        "iodepth=1,4",
        "--axis",
        "bs=4k,64k",
        "-o",
    ])
    .arg(dir.join("sweep"))
    .args([
        "--",
        "--name=s",
        "--ioengine=null",
        "--rw=randread",
        "--size=8m",
    ]);
    run_ok(cmd);
    let mut cmd = iobench();
    cmd.args(["compare", "--repeat", "2", "--export-json"])
        .arg(dir.join("cmp.json"))
        .args([
            "--",
            "--name=c",
            "--ioengine=null",
            "--size=64m",
            "--",
            "--name=c",
            "--ioengine=null",
            "--size=64m",
            "--bs=8k",
        ]);
    run_ok(cmd);
    let mut cmd = iobench();
    cmd.current_dir(&dir)
        .args([
            "--name=l",
            "--ioengine=psync",
            "--rw=randread",
            "--size=4m",
            "--runtime=1200ms",
            "--time_based",
            "--write_bw_log=l",
            "--write_hist_log=l",
            "--log_avg_msec=250",
            "--log_hist_msec=250",
            "--output-format=json+",
        ])
        .arg(format!("--filename={}", dir.join("l.dat").display()));
    let run_json = dir.join("run.json");
    std::fs::write(&run_json, run_ok(cmd).stdout).unwrap();
    // One JSON+ result alone: its section with the clat histogram and CDF, the latency
    // axis log-scaled when its buckets span more than a decade, as the counts are.
    let mut cmd = iobench();
    cmd.arg("report")
        .arg(&run_json)
        .arg("-o")
        .arg(dir.join("run.html"));
    run_ok(cmd);
    let one = std::fs::read_to_string(dir.join("run.html")).unwrap();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&run_json).unwrap()).unwrap();
    let bins = doc["jobs"][0]["read"]["clat_ns"]["bins"]
        .as_object()
        .unwrap();
    let span = |v: Vec<f64>| {
        v.iter().copied().fold(0.0, f64::max) / v.iter().copied().fold(f64::MAX, f64::min)
    };
    let scale = |s: f64| if s > 10.0 { "log" } else { "linear" };
    let lat_span = span(bins.keys().map(|k| k.parse().unwrap()).collect());
    let count_span = span(bins.values().map(|c| c.as_f64().unwrap()).collect());
    let hist = chart(&one, "run0-0-read-hist");
    assert!(hist.contains("l read: clat (completion latency) histogram"));
    assert!(hist.contains(&format!(
        "class=\"axis x\" data-scale=\"{}\"",
        scale(lat_span)
    )));
    assert!(hist.contains(&format!(
        "class=\"axis y\" data-scale=\"{}\"",
        scale(count_span)
    )));
    assert_eq!(count(hist, "class=\"pt\""), bins.len());
    assert!(one.contains("<h2>Run:") && one.contains("id=\"run0-0-read-cdf\""));
    assert!(
        one.contains("<td>clat (completion latency)</td>"),
        "the table names it"
    );
    let html_path = dir.join("report.html");
    let mut cmd = iobench();
    cmd.arg("report")
        .arg(dir.join("sweep"))
        .arg(dir.join("cmp.json"))
        .arg(dir.join("l_bw.1.log"))
        .arg(dir.join("l_clat_hist.1.log"))
        .arg("-o")
        .arg(&html_path);
    run_ok(cmd);
    let html = std::fs::read_to_string(&html_path).unwrap();
    // Self-contained: no script, nothing fetched.
    assert!(!html.contains("<script") && !html.contains(" src=") && !html.contains(" href="));
    // The sweep, per axis: IOPS, bandwidth and clat p99 as lines (both axes are numbers);
    // the 2D chart; a heat map. The comparison: 3 bar charts. One chart per log.
    let kinds = attrs(&html, "chart", "data-kind");
    let n = |k: &str| kinds.iter().filter(|x| *x == k).count();
    assert_eq!(
        (n("lines"), n("combo"), n("heatmap"), n("bars"), n("xy")),
        (6, 1, 1, 3, 2),
        "{kinds:?}"
    );
    let charts = kinds.len();
    assert_eq!(count(&html, "class=\"title\""), charts, "each titled once");
    assert_eq!(count(&html, "<g class=\"legend\""), charts);
    assert!(
        count(&html, "class=\"axis-label\"") >= 2 * charts,
        "x and y labels"
    );
    assert!(
        !html.contains("k µs") && !html.contains("k ms"),
        "no 30k µs"
    );
    // Every chart takes the page's width.
    assert_eq!(count(&html, "width=\"1360\""), 2 * charts);
    // IOPS against bs: lines on a log axis (4k to 64k is more than a decade) with the
    // units of sizes; one point per sweep point, its value the index's.
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep/index.json")).unwrap())
            .unwrap();
    let c = chart(&html, "set-1-read-IOPS");
    assert!(c.contains("class=\"axis x\" data-scale=\"log\""), "{c}");
    assert!(c.contains(">bs (log scale)<") && c.contains(">64 KiB<"));
    assert!(c.contains("class=\"axis y\" data-scale=\"linear\""));
    assert_eq!(count(c, "class=\"pt\""), 4);
    for p in index["points"].as_array().unwrap() {
        let iops = p["read"]["iops"].as_f64().unwrap();
        let bs = if p["params"]["bs"] == "4k" {
            "4 KiB"
        } else {
            "64 KiB"
        };
        let want = format!(
            "data-series=\"iodepth={}\" data-x=\"{bs}\" data-y=\"{iops}\"",
            p["params"]["iodepth"].as_str().unwrap(),
        );
        assert!(c.contains(&want), "{want}");
    }
    // iodepth 1 and 4: a linear axis, placed by value.
    assert!(chart(&html, "set-0-read-IOPS").contains("class=\"axis x\" data-scale=\"linear\""));
    // The latency chart names its latency, on the axis and in the title.
    let lat = chart(&html, "set-0-read-clat");
    assert!(lat.contains("read clat (completion latency) p99 against iodepth"));
    assert!(lat.contains(">read clat latency ("));
    // The 2D chart: IOPS bars and p99 diamonds on a right-hand axis.
    let combo = chart(&html, "set-combo-read");
    assert_eq!(count(combo, "class=\"pt\""), 4);
    assert_eq!(count(combo, "class=\"pt2\""), 4);
    assert!(combo.contains("class=\"axis y2\""));
    // The comparison's bars carry mean, σ and min–max from the export.
    let cmp: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cmp.json")).unwrap()).unwrap();
    let a = cmp["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["side"] == "bs=4096" && r["metric"] == "iops")
        .unwrap();
    assert!(html.contains(&format!(
        "class=\"errbar\" data-n=\"2\" data-mean=\"{}\" data-sd=\"{}\" data-min=\"{}\" data-max=\"{}\"",
        a["mean"].as_f64().unwrap(),
        a["sd"].as_f64().unwrap(),
        a["min"].as_f64().unwrap(),
        a["max"].as_f64().unwrap()
    )));
    // --svg: each chart alone.
    let svgs = dir.join("svg");
    let mut cmd = iobench();
    cmd.arg("report")
        .arg(dir.join("sweep"))
        .arg("-o")
        .arg(dir.join("sweep.html"))
        .arg("--svg")
        .arg(&svgs);
    run_ok(cmd);
    let heat = std::fs::read_to_string(named(&svgs, "read-IOPS-mean-by-")).unwrap();
    assert!(heat.starts_with("<?xml") && heat.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(heat.trim_end().ends_with("</svg>") && !heat.contains("<figure"));
    // 8 charts, and the latency histograms pooled per point.
    assert_eq!(std::fs::read_dir(&svgs).unwrap().count(), 9);
    let pts_in_source = count(&html, "class=\"pt\"");
    let Some(dom) = browse(&html_path, Some(&dir.join("report.png"))) else {
        return;
    };
    assert_eq!(
        count(&dom, "<figure class=\"chart\""),
        charts,
        "the browser built every chart"
    );
    assert_eq!(
        count(&dom, "class=\"pt\""),
        pts_in_source,
        "and every data point"
    );
    assert_eq!(count(&dom, "<svg"), charts);
    assert_eq!(
        count(&dom, "data-scale=\"log\""),
        count(&html, "data-scale=\"log\"")
    );
}

/// 12 fio result files of a block-size study (4 sizes × 3 repeats) and one that failed
/// (bs=1000 with O_DIRECT): one chart per metric against bs, each point with error bars
/// (mean ± σ, min–max of its 3 runs), the failure marked with its reason and no value.
#[test]
fn fio_block_size_study_is_one_chart_with_error_bars() {
    let Some(_) = fio() else { return };
    let dir = scratch("report_fio_bs");
    let target = dir.join("scratch.dat");
    let job = |bs: &str, out: &Path| {
        let mut f = fio().unwrap();
        f.args([
            "--name=bs",
            "--ioengine=psync",
            "--rw=read",
            "--direct=1",
            "--size=1m",
            "--output-format=json",
        ])
        .arg(format!("--bs={bs}"))
        .arg(format!("--filename={}", target.display()))
        .arg(format!("--output={}", out.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
        f
    };
    // The first run lays the file out; the other 12 read it at once (fio starts slowly
    // on a busy host, and the study's numbers need not be quiet ones).
    let first = dir.join("bs-4k-0.json");
    run(job("4k", &first));
    let mut running = Vec::new();
    for bs in ["4k", "16k", "64k", "256k", "1000"] {
        let repeats = if bs == "1000" { 1 } else { 3 };
        for r in 0..repeats {
            let out = dir.join(format!("bs-{bs}-{r}.json"));
            if out != first {
                running.push(job(bs, &out).spawn().expect("spawn fio"));
            }
        }
    }
    for mut c in running {
        c.wait().unwrap();
    }
    let mut inputs = Vec::new();
    let mut iops: Vec<(String, Vec<f64>)> = Vec::new();
    for bs in ["4k", "16k", "64k", "256k", "1000"] {
        let repeats = if bs == "1000" { 1 } else { 3 };
        let mut vals = Vec::new();
        for r in 0..repeats {
            let out = dir.join(format!("bs-{bs}-{r}.json"));
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
            vals.push(doc["jobs"][0]["read"]["iops"].as_f64().unwrap());
            if bs == "1000" {
                assert_eq!(doc["jobs"][0]["error"], 22, "bs=1000 with O_DIRECT fails");
            }
            inputs.push(out);
        }
        iops.push((bs.to_string(), vals));
    }
    let html_path = dir.join("bs.html");
    let mut cmd = iobench();
    cmd.arg("report")
        .args(&inputs)
        .arg("-o")
        .arg(&html_path)
        .arg("--svg")
        .arg(dir.join("svg"));
    run_ok(cmd);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(!html.contains("<h2>Run:"), "no section per file");
    assert!(html.contains("Results: 13 run(s), 5 point(s)"));
    assert!(html
        .contains("Options that differ between the runs: bs (numeric: 1000, 4k, 16k, 64k, 256k)."));
    assert_eq!(
        count(&html, "IOPS against bs</text>"),
        1,
        "one IOPS chart for the 13 files"
    );
    let c = chart(&html, "set-0-read-IOPS");
    assert!(c.contains("data-kind=\"lines\""));
    assert!(c.contains("class=\"axis x\" data-scale=\"log\"") && c.contains(">bs (log scale)<"));
    // Four points, each with its 3 runs' mean, σ and range.
    assert_eq!(attrs(c, "pt", "data-n"), ["3", "3", "3", "3"]);
    let bars = attrs(c, "errbar", "data-mean");
    assert_eq!(bars.len(), 4, "an error bar per point");
    for (bs, vals) in iops.iter().filter(|(bs, _)| bs != "1000") {
        let mean = vals.iter().sum::<f64>() / 3.0;
        let sd = (vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        let min = vals.iter().copied().fold(f64::MAX, f64::min);
        let max = vals.iter().copied().fold(f64::MIN, f64::max);
        let want = format!("data-n=\"3\" data-mean=\"{mean}\" data-sd=\"{sd}\" data-min=\"{min}\" data-max=\"{max}\"");
        assert!(c.contains(&want), "bs={bs}: {want}");
    }
    // The failed run: a mark with its reason, no value, and "failed" in the table.
    let failed = attrs(c, "failed", "data-reason");
    assert_eq!(failed, ["Invalid argument (error 22)"]);
    assert_eq!(attrs(c, "failed", "data-x"), ["1000 B"]);
    assert!(!c.contains("data-x=\"1000 B\" data-y="), "never a value");
    assert!(html.contains("<td class=\"failed\">failed: Invalid argument (error 22)</td>"));
    // Latency: clat named, log-scaled when it spans a decade, the table saying which.
    let lat = chart(&html, "set-0-read-clat");
    assert!(lat.contains("clat (completion latency) mean, p50, p99, p99.9 against bs"));
    assert!(html.contains("<th>read clat p99</th>") && !html.contains("<th>read lat p99</th>"));
    assert!(
        std::fs::read_to_string(named(&dir.join("svg"), "read-IOPS-against-bs"))
            .unwrap()
            .contains("class=\"errbar\"")
    );
    let Some(dom) = browse(&html_path, None) else {
        return;
    };
    assert_eq!(
        count(&dom, "class=\"errbar\""),
        count(&html, "class=\"errbar\"")
    );
    assert_eq!(
        count(&dom, "class=\"failed\""),
        count(&html, "class=\"failed\"")
    );
}

/// A sweep of ioengine (categories) × iodepth (numbers): bars against ioengine, never a
/// line between engines; psync's iodepth collapsed to one dashed level with a note; a
/// bench-fio layout directory read as a set of runs.
#[test]
fn categories_are_bars_and_an_ignored_iodepth_collapses() {
    let dir = scratch("report_engines");
    let mut cmd = iobench();
    cmd.args([
        "sweep",
        "--axis",
        "ioengine=psync,libaio",
        "--axis",
        "iodepth=1,4,16",
        "-o",
    ])
    .arg(dir.join("sweep"))
    .args(["--", "--name=e", "--rw=randread", "--size=2m"])
    .arg(format!("--filename={}", dir.join("e.dat").display()));
    run_ok(cmd);
    let html_path = dir.join("engines.html");
    let mut cmd = iobench();
    cmd.arg("report")
        .arg(dir.join("sweep"))
        .arg("-o")
        .arg(&html_path);
    run_ok(cmd);
    let html = std::fs::read_to_string(&html_path).unwrap();
    // 3 psync points are one: iodepth is ignored by a synchronous engine.
    assert!(html.contains("Results: 6 run(s), 4 point(s)"), "{html}");
    assert!(html.contains("iodepth is ignored by psync"));
    let bars = chart(&html, "set-0-read-IOPS");
    assert!(bars.contains("data-kind=\"bars\"") && bars.contains("data-scale=\"category\""));
    assert!(!bars.contains("<polyline"), "no line between engines");
    assert_eq!(count(bars, "<rect class=\"pt\""), 4);
    let dots = chart(&html, "set-0-read-clat");
    assert!(dots.contains("data-kind=\"dots\"") && !dots.contains("<polyline"));
    let lines = chart(&html, "set-1-read-IOPS");
    assert!(lines.contains("data-kind=\"lines\""));
    assert_eq!(
        attrs(lines, "flat", "data-note"),
        ["iodepth ignored by psync"]
    );
    assert!(lines.contains("<figcaption class=\"note\">iodepth is ignored by psync"));
    // The same runs laid out as bench-fio lays them out: OUT/DEVICE/BS/MODE-QD-JOBS.json.
    let bench = dir.join("bench/e.dat/4k");
    std::fs::create_dir_all(&bench).unwrap();
    for (i, e) in std::fs::read_dir(dir.join("sweep")).unwrap().enumerate() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".json") && name != "index.json" && name != "sweep.json" {
            std::fs::copy(&p, bench.join(format!("randread-{i}-1.json"))).unwrap();
        }
    }
    std::fs::write(
        bench.join("randread-iodepth-1-numjobs-1_bw.1.log"),
        "0, 1, 0, 4096, 0\n",
    )
    .unwrap();
    let mut cmd = iobench();
    cmd.arg("report")
        .arg(dir.join("bench"))
        .arg("-o")
        .arg(dir.join("bench.html"));
    run_ok(cmd);
    let bench_html = std::fs::read_to_string(dir.join("bench.html")).unwrap();
    assert!(
        bench_html.contains("Results: 6 run(s), 4 point(s)"),
        "{bench_html}"
    );
    let Some(dom) = browse(&html_path, None) else {
        return;
    };
    assert_eq!(
        count(&dom, "class=\"flat\""),
        count(&html, "class=\"flat\"")
    );
}

#[test]
fn bad_inputs_are_named() {
    let dir = scratch("report_bad");
    std::fs::write(dir.join("notes.txt"), "hello\n").unwrap();
    std::fs::write(dir.join("x_bw.1.log"), "1, banana, 0, 4096, 0\n").unwrap();
    let cases = [
        (dir.join("notes.txt"), "not a JSON result"),
        (dir.join("x_bw.1.log"), "x_bw.1.log:1"),
        (dir.join("missing.json"), "missing.json"),
        (dir.clone(), "index.json"),
    ];
    for (input, want) in cases {
        let mut cmd = iobench();
        cmd.arg("report")
            .arg(&input)
            .arg("-o")
            .arg(dir.join("r.html"));
        let o = run(cmd);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{input:?}: {err}");
        assert!(err.contains(want), "{input:?}: want {want} in {err}");
    }
    assert!(
        !dir.join("r.html").exists(),
        "nothing written on a bad input"
    );
}

/// A sweep of bs=4k,64k run twice a point (4 MiB random reads, `job` giving the engine
/// and file) in `dir`/sweep, reported with `--svg dir/svg`: the HTML's path and text.
fn repeated_sweep_report(dir: &Path, job: &[&str]) -> (PathBuf, String) {
    let mut cmd = iobench();
    cmd.args(["sweep", "--repeat", "2", "--axis", "bs=4k,64k", "-o"])
        .arg(dir.join("sweep"))
        .args(["--", "--name=s", "--rw=randread", "--size=4m"])
        .args(job);
    run_ok(cmd);
    let html_path = dir.join("r.html");
    let mut cmd = iobench();
    cmd.arg("report")
        .arg(dir.join("sweep"))
        .arg("-o")
        .arg(&html_path)
        .arg("--svg")
        .arg(dir.join("svg"));
    run_ok(cmd);
    let html = std::fs::read_to_string(&html_path).unwrap();
    (html_path, html)
}

/// A sweep with repeats, reported: each point's repeats (the index's `runs[]`) pool into
/// one point with error bars of n = 2, not one run per point.
#[test]
fn a_repeated_sweep_reports_error_bars_from_its_runs() {
    let dir = scratch("report_sweep_repeat");
    let (html_path, html) = repeated_sweep_report(&dir, &["--ioengine=null"]);
    assert!(html_path.exists());
    assert!(
        html.contains("4 run(s), 2 point(s)"),
        "runs pooled by point"
    );
    let c = chart(&html, "set-0-read-IOPS");
    assert_eq!(count(c, "class=\"errbar\" data-n=\"2\""), 2, "{c}");
}

/// A repeated sweep's latency histograms pooled per point: one line per point whose
/// counts are the sum of its two runs' JSON+ bins, bucket by bucket, with n in the legend,
/// on a log latency axis; written alone by `--svg` too, and built by Chromium.
#[test]
fn pooled_histograms_sum_the_repeats_bins() {
    let dir = scratch("report_pooled_hist");
    let file = format!("--filename={}", dir.join("data").display());
    let (html_path, html) = repeated_sweep_report(&dir, &["--ioengine=psync", &file]);
    let c = chart(&html, "set-hist-read-clat");
    assert!(c.contains("data-kind=\"histogram\""), "{c}");
    assert!(
        c.contains("class=\"axis x\" data-scale=\"log\""),
        "a log latency axis: {c}"
    );
    assert!(c.contains("clat latency (log scale)"), "{c}");
    // Each point's line: the sum of its runs' bins, bucket by bucket.
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep/index.json")).unwrap())
            .unwrap();
    let series = attrs(c, "pt", "data-series");
    let xs = attrs(c, "pt", "data-x");
    let ys = attrs(c, "pt", "data-y");
    for (bs, label) in [("4k", "bs=4 KiB"), ("64k", "bs=64 KiB")] {
        let pt = index["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["params"]["bs"] == bs)
            .unwrap();
        let mut want: std::collections::BTreeMap<u64, u64> = Default::default();
        let runs = pt["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        for r in runs {
            let f = dir.join("sweep").join(r["file"].as_str().unwrap());
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            for (v, n) in doc["jobs"][0]["read"]["clat_ns"]["bins"]
                .as_object()
                .unwrap()
            {
                *want.entry(v.parse().unwrap()).or_default() += n.as_u64().unwrap();
            }
        }
        let ios: u64 = want.values().sum();
        let name = series
            .iter()
            .find(|s| s.starts_with(&format!("{label} (n=2 runs, ")))
            .unwrap_or_else(|| panic!("no line for {label}: {series:?}"));
        let got: std::collections::BTreeMap<u64, u64> = series
            .iter()
            .zip(xs.iter().zip(&ys))
            .filter(|(s, _)| *s == name)
            .map(|(_, (x, y))| (x.parse().unwrap(), y.parse().unwrap()))
            .collect();
        assert_eq!(got, want, "{label}: the two runs' bins summed");
        assert_eq!(
            ios,
            2 * 1024 * 1024 * 4 / if bs == "4k" { 4096 } else { 65536 }
        );
    }
    assert!(std::fs::read_to_string(named(
        &dir.join("svg"),
        "read-clat-completion-latency-histogram"
    ))
    .unwrap()
    .contains("histogram per point, pooled over its runs"));
    if let Some(dom) = browse(&html_path, Some(&dir.join("h.png"))) {
        assert_eq!(
            count(&dom, "data-kind=\"histogram\""),
            1,
            "the pooled histogram in the DOM Chromium built"
        );
        assert_eq!(count(&dom, "class=\"pt\""), count(&html, "class=\"pt\""));
    }
    if std::env::var_os("IOBENCH_KEEP_SHOT").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `iobench slo -o FILE` reported: the latency–throughput curve against an NBD export of
/// known capacity (nbdkit's rate filter: 16 Mbit/s over 4 KiB is 512 IOPS), so the search
/// both meets and misses its target. Each step is a point of the sched_lat and clat lines
/// at the achieved rate, the target a dashed level, the capacity a marker, each step over
/// the target a red cross; the latency axis is log-scaled (it spans µs to tens of ms).
#[test]
fn slo_result_is_a_latency_throughput_chart() {
    let dir = scratch("report_slo");
    let server = crate::study_slo::rate_limited(&dir, "16M");
    let slo_json = dir.join("slo.json");
    let mut cmd = iobench();
    cmd.args([
        "slo",
        "--p90",
        "30ms",
        "--precision",
        "25%",
        "--start",
        "256",
    ])
    // 300 ms steps: the first (256 IOPS, ~77 I/Os) has too few for its p90, and is
    // repeated as noisy.
    .args(["--min-time", "300ms", "--max-time", "300ms", "-o"])
    .arg(&slo_json)
    .args(["--", "--name=n", "--ioengine=nbd", &server.uri()])
    .args(["--rw=randread", "--bs=4k", "--iodepth=8"]);
    run_ok(cmd);
    drop(server);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&slo_json).unwrap()).unwrap();
    let steps = doc["steps"].as_array().unwrap();
    let over = steps
        .iter()
        .filter(|s| s["sched_lat_ns"]["p90"].as_f64().unwrap() > 30e6)
        .count();
    assert!(over >= 1, "the search went past the capacity: {doc}");
    let html_path = dir.join("slo.html");
    let mut cmd = iobench();
    cmd.arg("report").arg(&slo_json).arg("-o").arg(&html_path);
    run_ok(cmd);
    let html = std::fs::read_to_string(&html_path).unwrap();
    let c = chart(&html, "slo0");
    assert!(c.contains("data-kind=\"slo\""), "{c}");
    assert_eq!(count(c, "class=\"title\""), 1, "titled once");
    assert!(c.contains("achieved rate (IOPS)"), "x is the achieved rate");
    assert!(
        c.contains("class=\"axis y\" data-scale=\"log\"") && c.contains("latency (log scale)"),
        "latency on a log axis, said: {c}"
    );
    let series = attrs(c, "pt", "data-series");
    for name in ["sched_lat p90", "clat p90"] {
        assert_eq!(
            series.iter().filter(|s| *s == name).count(),
            steps.len(),
            "a {name} point per step"
        );
    }
    // Each point sits at its step's achieved rate.
    let xs = attrs(c, "pt", "data-x");
    for s in steps {
        let want = s["achieved_iops"].as_f64().unwrap();
        assert!(
            xs.iter().any(|x| x.parse::<f64>().unwrap() == want),
            "a point at {want} IOPS"
        );
    }
    assert_eq!(attrs(c, "level", "data-y"), ["30000000"], "the target");
    let cap = doc["capacity_iops"].as_f64().expect("a capacity found");
    assert_eq!(
        attrs(c, "marker", "data-x"),
        [cap.to_string()],
        "the capacity"
    );
    assert_eq!(
        count(c, "class=\"failed\""),
        over,
        "each step over the target"
    );
    // A step repeated as noisy (slo's --repeat-noisy) says so in the table.
    assert!(html.contains("<th>runs</th>"));
    let repeated: Vec<&Value> = steps.iter().filter(|s| s["used_run"].is_u64()).collect();
    assert!(!repeated.is_empty(), "the first step was repeated: {doc}");
    for s in repeated {
        let want = format!(
            "<td>{} (run {} used, the median; noisy: ",
            s["runs"], s["used_run"]
        );
        assert!(html.contains(&want), "{want}");
    }
    let Some(dom) = browse(&html_path, Some(&dir.join("slo.png"))) else {
        return;
    };
    let d = chart(&dom, "slo0");
    assert_eq!(
        count(d, "class=\"pt\""),
        2 * steps.len(),
        "points in the DOM"
    );
    assert_eq!(count(d, "class=\"failed\""), over);
    assert_eq!(count(d, "class=\"marker\""), 1);
}

/// `iobench history trend --format json` reported: the metric against time, one point per
/// saved run on a date axis, and the baseline (once set) a marker at its run.
#[test]
fn history_trend_is_a_chart_over_time_with_its_baseline() {
    let dir = scratch("report_trend");
    let db = dir.join("h.db");
    let hist = |args: &[&str]| {
        let mut c = iobench();
        c.arg("history")
            .args(args)
            .arg(format!("--history={}", db.display()));
        String::from_utf8_lossy(&run_ok(c).stdout).into_owned()
    };
    for _ in 0..3 {
        let mut c = iobench();
        c.arg("--save")
            .arg(format!("--history={}", db.display()))
            .args(["--output-format=json", "--name=t", "--ioengine=null"])
            .args(["--rw=randread", "--bs=4k", "--size=64m"]);
        run_ok(c);
    }
    let list = hist(&["list"]);
    let hash = list
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .nth(5)
        .unwrap();
    let trend = || -> String { hist(&["trend", &format!("--job-hash={hash}"), "--format=json"]) };
    let before: Value = serde_json::from_str(&trend()).unwrap();
    assert!(before.get("baseline").is_none(), "no baseline yet");
    hist(&["baseline", "set", "2"]);
    let text = trend();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["baseline"]["id"], 2, "{doc}");
    let trend_json = dir.join("trend.json");
    std::fs::write(&trend_json, text).unwrap();
    let html_path = dir.join("trend.html");
    let mut cmd = iobench();
    cmd.arg("report").arg(&trend_json).arg("-o").arg(&html_path);
    run_ok(cmd);
    let html = std::fs::read_to_string(&html_path).unwrap();
    let c = chart(&html, "trend0");
    assert!(c.contains("data-kind=\"trend\""), "{c}");
    assert_eq!(count(c, "class=\"title\""), 1, "titled once");
    assert!(
        c.contains("class=\"axis x\" data-scale=\"time\" data-unit=\"UTC\""),
        "a date axis: {c}"
    );
    assert!(c.contains("run started (UTC"), "the x axis says UTC");
    assert!(c.contains(">IOPS</text>"), "y is IOPS: {c}");
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    let started: Vec<String> = points.iter().map(|p| p["started"].to_string()).collect();
    let series = attrs(c, "pt", "data-series");
    let xs = attrs(c, "pt", "data-x");
    let read_x: Vec<&String> = xs
        .iter()
        .zip(&series)
        .filter(|(_, s)| *s == "read")
        .map(|(x, _)| x)
        .collect();
    assert_eq!(
        read_x,
        started.iter().collect::<Vec<_>>(),
        "a point per run, at its time"
    );
    assert_eq!(
        attrs(c, "marker", "data-x"),
        [started[1].clone()],
        "the baseline"
    );
    assert!(c.contains("baseline default (run 2)"));
    let Some(dom) = browse(&html_path, Some(&dir.join("trend.png"))) else {
        return;
    };
    let d = chart(&dom, "trend0");
    assert_eq!(count(d, "class=\"pt\""), 3, "the points in the DOM");
    assert_eq!(count(d, "class=\"marker\""), 1);
}

/// `--png DIR`: each chart as `DIR/ID.png`, named like its SVG, the SVG's size times
/// `--png-scale`, opaque white where nothing is drawn, with lines and dark text (the
/// title) drawn; a directory that cannot be made is an error naming --png, before any
/// output is written.
#[test]
fn report_png_writes_each_chart_as_an_image_with_its_text() {
    use resvg::tiny_skia::Pixmap;
    let dir = scratch("report_png");
    let log = dir.join("job_bw.1.log");
    let text: String = (1..=40u64)
        .map(|i| format!("{}, {}, 0, 4096, 0\n", i * 250, 40_000 + (i % 7) * 9_000))
        .collect();
    std::fs::write(&log, text).unwrap();
    // `iobench report LOG -o DIR/HTML`, for the flags to add.
    let report = |html: &str| {
        let mut c = iobench();
        c.arg("report").arg(&log).arg("-o").arg(dir.join(html));
        c
    };
    let mut cmd = report("r.html");
    cmd.arg("--svg")
        .arg(dir.join("svg"))
        .args(["--png-scale", "1.5", "--png"])
        .arg(dir.join("png"));
    let o = run_ok(cmd);
    assert!(String::from_utf8_lossy(&o.stderr).contains("chart(s) →"));
    let mut svgs: Vec<PathBuf> = std::fs::read_dir(dir.join("svg"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    svgs.sort();
    assert!(!svgs.is_empty());
    assert_eq!(
        std::fs::read_dir(dir.join("png")).unwrap().count(),
        svgs.len(),
        "a PNG per chart"
    );
    let attr = |svg: &str, name: &str| -> f32 {
        let at = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        svg[at..at + svg[at..].find('"').unwrap()].parse().unwrap()
    };
    for svg_path in &svgs {
        let svg = std::fs::read_to_string(svg_path).unwrap();
        let stem = svg_path.file_stem().unwrap().to_str().unwrap();
        let png = std::fs::read(dir.join("png").join(format!("{stem}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{stem}: a PNG");
        let img = Pixmap::decode_png(&png).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let (w, h) = (attr(&svg, "width"), attr(&svg, "height"));
        assert_eq!(
            (img.width(), img.height()),
            ((w * 1.5).ceil() as u32, (h * 1.5).ceil() as u32),
            "{stem}: the SVG's size × 1.5"
        );
        let px = img.pixels();
        let at = |x: u32, y: u32| px[(y * img.width() + x) as usize];
        assert!(px.iter().all(|p| p.alpha() == 255), "{stem}: opaque");
        let corner = at(img.width() - 1, img.height() - 1);
        assert_eq!(
            (corner.red(), corner.green(), corner.blue()),
            (255, 255, 255)
        );
        let drawn = px
            .iter()
            .filter(|p| p.red() < 250 || p.blue() < 250)
            .count();
        assert!(drawn > px.len() / 200, "{stem}: not blank ({drawn} pixels)");
        // The title: centred text in the top 30 units, dark (black on white).
        let band = (30.0 * 1.5) as u32;
        let dark = (0..band)
            .flat_map(|y| (0..img.width()).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let p = at(x, y);
                p.red() < 90 && p.green() < 90 && p.blue() < 90
            })
            .collect::<Vec<_>>();
        assert!(
            dark.len() > 300,
            "{stem}: a title drawn ({} dark pixels)",
            dark.len()
        );
        let (lo, hi) = dark
            .iter()
            .fold((u32::MAX, 0), |(lo, hi), &(x, _)| (lo.min(x), hi.max(x)));
        assert!(
            lo < img.width() / 2 && hi > img.width() / 2,
            "{stem}: centred"
        );
    }
    // A --png path under a file: refused, naming the flag and the path, nothing written.
    let _ = std::fs::remove_file(dir.join("r2.html"));
    let mut cmd = report("r2.html");
    cmd.arg("--png").arg(log.join("charts"));
    let o = run(cmd);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "--png {}: cannot make the directory",
            log.join("charts").display()
        )),
        "{err}"
    );
    assert!(!dir.join("r2.html").exists(), "no report written");
    // --png-scale out of range, and without --png.
    for (args, want) in [
        (
            &["--png", "x", "--png-scale", "0"][..],
            "bad value '0' for --png-scale: expected a number above 0",
        ),
        (
            &["--png-scale", "2"][..],
            "--png-scale sizes the --png images: give --png DIR too",
        ),
    ] {
        let mut cmd = report("r3.html");
        cmd.args(args);
        let o = run(cmd);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The one chart file in `dir` whose name starts with `start` (`--svg` and `--png` name
/// the charts by their titles, by axis: `read-IOPS-against-bs.svg`, never `set-0…`).
fn named(dir: &Path, start: &str) -> PathBuf {
    let all: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(
        all.iter()
            .all(|p| !p.file_name().unwrap().to_string_lossy().starts_with("set-")),
        "{all:?}"
    );
    let hits: Vec<&PathBuf> = all
        .iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(start))
        .collect();
    assert_eq!(hits.len(), 1, "{start}: {all:?}");
    hits[0].clone()
}

/// A sweep of three axes (bs and iodepth numeric, rw categorical), 30 points: a chart
/// whose series would pass 8 becomes small multiples, one small chart per value of an
/// outer axis, on one y scale, under one legend, said in the caption; the two numeric
/// axes get a heat map per value of the third, on one colour scale; the PNGs and
/// Chromium draw them.
#[test]
fn many_series_become_small_multiples_and_a_third_axis_gets_heat_maps() {
    let dir = scratch("report_multiples");
    let mut cmd = iobench();
    cmd.args([
        "sweep",
        "--axis",
        "bs=4k,8k,16k",
        "--axis",
        "iodepth=1,2,4,8,16",
        "--axis",
        "rw=read,randread",
        "-o",
    ])
    .arg(dir.join("sweep"))
    .args(["--", "--name=m", "--ioengine=null", "--size=1m"]);
    run_ok(cmd);
    let html_path = dir.join("r.html");
    let mut cmd = iobench();
    cmd.arg("report")
        .arg(dir.join("sweep"))
        .arg("-o")
        .arg(&html_path)
        .arg("--png")
        .arg(dir.join("png"));
    run_ok(cmd);
    let html = std::fs::read_to_string(&html_path).unwrap();
    // Against bs: 5 iodepths × 2 rws = 10 series: two charts (rw=read, rw=randread) of 5.
    let c = chart(&html, "set-0-read-IOPS");
    assert!(
        c.contains("data-kind=\"multiples\"") && c.contains("data-outer=\"rw\" data-panels=\"2\""),
        "{c}"
    );
    assert_eq!(attrs(c, "panel", "data-value"), ["read", "randread"]);
    assert!(
        c.contains("Small multiples: one chart per value of rw (2 charts), each with the same x and y scales"),
        "{c}"
    );
    // One legend of the 5 iodepths (and the key), none in the panels.
    assert_eq!(count(c, "class=\"legend\""), 1, "{c}");
    for q in [1, 2, 4, 8, 16] {
        assert!(c.contains(&format!(">iodepth={q}</text>")), "{c}");
    }
    // The same y ticks in both panels: one scale.
    let panels: Vec<&str> = c.split("class=\"panel\"").skip(1).collect();
    let ticks = |p: &str| -> Vec<String> {
        let y = &p[p.find("class=\"axis y\"").unwrap()..];
        let y = &y[..y.find("</g>").unwrap()];
        y.split("class=\"tick\"")
            .skip(1)
            .map(|t| t[t.find('>').unwrap() + 1..t.find('<').unwrap()].to_string())
            .collect()
    };
    assert!(!ticks(panels[0]).is_empty());
    assert_eq!(ticks(panels[0]), ticks(panels[1]));
    assert_eq!(count(panels[0], "class=\"pt\""), 15, "5 series × 3 bs");
    // Against rw: 3 bs × 5 iodepths = 15 series: by bs (3 charts of 5).
    let c = chart(&html, "set-2-read-IOPS");
    assert!(c.contains("data-outer=\"bs\" data-panels=\"3\""), "{c}");
    // Against iodepth: 3 × 2 = 6 series: one chart.
    let c = chart(&html, "set-1-read-IOPS");
    assert!(c.contains("data-kind=\"lines\""), "{c}");
    // The combined chart would hold 15 series: left out, and said.
    assert!(
        html.contains("IOPS-and-p99 chart against bs is left out"),
        "{html}"
    );
    // Heat maps of bs × iodepth, one per rw, on one colour scale.
    let (h0, h1) = (
        chart(&html, "set-heat-read-0"),
        chart(&html, "set-heat-read-1"),
    );
    assert!(h0.contains("by bs and iodepth, rw=read"), "{h0}");
    assert!(h1.contains("by bs and iodepth, rw=randread"), "{h1}");
    let legend =
        |h: &str| h[h.find("class=\"legend\"").unwrap()..h.find("</g>").unwrap()].to_string();
    assert_eq!(legend(h0), legend(h1), "one colour scale");
    assert_eq!(count(h0, "class=\"pt\""), 15);
    assert!(html.contains("heat maps: one per value of rw, all on one colour scale"));
    // The PNGs: one per chart, the small multiples among them.
    let png = dir.join("png");
    for name in [
        "read-IOPS-against-bs.png",
        "read-IOPS-mean-by-bs-and-iodepth-rw=read.png",
    ] {
        let bytes = std::fs::read(png.join(name)).unwrap_or_else(|e| {
            panic!(
                "{name}: {e}: {:?}",
                std::fs::read_dir(&png).unwrap().collect::<Vec<_>>()
            )
        });
        assert!(
            bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
            "{name}"
        );
    }
    if let Some(dom) = browse(&html_path, Some(&dir.join("shot.png"))) {
        assert_eq!(
            count(&dom, "class=\"panel\""),
            count(&html, "class=\"panel\"")
        );
    }
}
