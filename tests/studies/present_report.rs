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

/// The inputs: a 2×2 sweep, a comparison export, an iobench JSON+ run with bw and
/// histogram logs, and fio's JSON+ of the same kind of job.
fn make_inputs(dir: &Path) -> Vec<String> {
    let mut cmd = iobench();
    cmd.args(["sweep", "--axis", "iodepth=1,4", "--axis", "bs=4k,8k", "-o"])
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
    cmd.current_dir(dir)
        .args([
            "--name=l",
            "--ioengine=psync",
            "--rw=randread",
            "--size=4m",
            "--runtime=1500ms",
            "--time_based",
        ])
        .args([
            "--write_bw_log=l",
            "--write_hist_log=l",
            "--log_avg_msec=250",
            "--log_hist_msec=250",
            "--output-format=json+",
            "--env",
        ])
        .arg(format!("--filename={}", dir.join("l.dat").display()));
    let out = run_ok(cmd);
    std::fs::write(dir.join("run.json"), &out.stdout).unwrap();
    let mut inputs = vec![
        dir.join("sweep").display().to_string(),
        dir.join("cmp.json").display().to_string(),
        dir.join("run.json").display().to_string(),
        dir.join("l_bw.1.log").display().to_string(),
        dir.join("l_clat_hist.1.log").display().to_string(),
    ];
    if let Some(mut f) = fio() {
        f.args([
            "--name=f",
            "--ioengine=psync",
            "--rw=randread",
            "--size=4m",
            "--runtime=1",
            "--time_based",
            "--output-format=json+",
        ])
        .arg(format!("--filename={}", dir.join("f.dat").display()));
        let out = run_ok(f);
        std::fs::write(dir.join("fio.json"), &out.stdout).unwrap();
        inputs.push(dir.join("fio.json").display().to_string());
    }
    inputs
}

#[test]
fn report_has_every_chart_and_point_and_renders_in_chromium() {
    let dir = scratch("report_html");
    let inputs = make_inputs(&dir);
    let html_path = dir.join("report.html");
    let mut cmd = iobench();
    cmd.arg("report").args(&inputs).arg("-o").arg(&html_path);
    run_ok(cmd);
    let html = std::fs::read_to_string(&html_path).unwrap();
    // Self-contained: no script, nothing fetched.
    assert!(!html.contains("<script") && !html.contains(" src=") && !html.contains(" href="));
    // Charts: the sweep's 6 metrics against each of its 2 axes and a heat map; 3 bars of
    // the comparison; histogram and CDF of each JSON+ run; one chart per log.
    let fio_charts = if inputs.len() == 6 { 2 } else { 0 };
    let charts = 2 * 6 + 1 + 3 + 2 + 1 + 1 + fio_charts;
    assert_eq!(count(&html, "<figure class=\"chart\""), charts);
    assert_eq!(
        count(&html, "class=\"axis-label\""),
        2 * charts,
        "x and y labels on each"
    );
    assert_eq!(count(&html, "<g class=\"legend\">"), charts);
    // The sweep's IOPS chart against iodepth: one point per point, its value the index's.
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep/index.json")).unwrap())
            .unwrap();
    let start = html
        .find("id=\"sweep0-0-read-0\"")
        .expect("IOPS against iodepth");
    let chart = &html[start..start + html[start..].find("</figure>").unwrap()];
    assert_eq!(count(chart, "class=\"pt\""), 4);
    for p in index["points"].as_array().unwrap() {
        let iops = p["read"]["iops"].as_f64().unwrap();
        let want = format!(
            "data-series=\"bs={}\" data-x=\"{}\" data-y=\"{iops}\"",
            p["params"]["bs"].as_str().unwrap(),
            p["params"]["iodepth"].as_str().unwrap()
        );
        assert!(chart.contains(&want), "{want}");
    }
    // The comparison's bars carry mean and σ.
    let cmp: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cmp.json")).unwrap()).unwrap();
    let a = cmp["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["side"] == "bs=4096" && r["metric"] == "iops")
        .unwrap();
    assert!(html.contains(&format!(
        "data-y=\"{}\" data-sd=\"{}\"",
        a["mean"].as_f64().unwrap(),
        a["sd"].as_f64().unwrap()
    )));
    // The context header of the run made with --env.
    assert!(html.contains("<th class=\"l\">host</th>"));
    let pts_in_source = count(&html, "class=\"pt\"");
    // A real browser: the DOM it builds from the file, offline.
    let Some(chrome) = chromium() else { return };
    let profile = dir.join("profile");
    let url = format!("file://{}", html_path.display());
    let mut c = headless(&chrome, &profile);
    c.arg("--dump-dom").arg(&url);
    let dom = run(c);
    let dom = String::from_utf8_lossy(&dom.stdout);
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
    let shot = dir.join("report.png");
    let _ = std::fs::remove_file(&shot);
    let mut c = headless(&chrome, &profile);
    c.arg("--window-size=1200,2400")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url);
    let o = run(c);
    let png = std::fs::read(&shot)
        .unwrap_or_else(|_| panic!("no screenshot: {}", String::from_utf8_lossy(&o.stderr)));
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "a screenshot with content: {} bytes",
        png.len()
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
