//! `iobench report` on a run of the http engine with its iobench-only options, against a
//! real SeaweedFS on loopback: the page's HTTP section shows the run's own numbers (each
//! operation's count and latency percentiles, time to first byte beside them, failed
//! requests by status) as the JSON has them, and renders in headless Chromium.

use super::present_report::{attrs, browse, chart};
use crate::common::{self, iobench, run_ok, scratch, seaweed, seaweed::Weed};
use serde_json::Value;

/// The S3 options reaching `w`, an object per 4 KiB block of `/bkt/mix`.
fn s3(w: &Weed) -> Vec<String> {
    [
        "--ioengine=http",
        "--http_mode=s3",
        &format!("--http_host=127.0.0.1:{}", w.s3),
        &format!("--http_s3_keyid={}", seaweed::KEY_ID),
        &format!("--http_s3_key={}", seaweed::SECRET),
        "--filename=/bkt/mix",
        "--bs=4k",
        "--size=128k",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// `iobench report` of `inputs` into `out`: the page.
fn report_of(inputs: &[std::path::PathBuf], out: &std::path::Path) -> String {
    let mut c = iobench();
    c.arg("report").args(inputs).arg("--output").arg(out);
    run_ok(c);
    std::fs::read_to_string(out).unwrap()
}

/// Chart `id` of `html`: it is drawn as `kind` and has `n` points; the value of the one
/// of series `series` at `x`.
fn point_of(html: &str, id: &str, kind: &str, n: usize, x: &str, series: &str) -> f64 {
    let ch = chart(html, id);
    assert!(ch.contains(&format!("data-kind=\"{kind}\"")), "{id}: {ch}");
    let (xs, names, ys) = (
        attrs(ch, "pt", "data-x"),
        attrs(ch, "pt", "data-series"),
        attrs(ch, "pt", "data-y"),
    );
    assert_eq!(ys.len(), n, "{id}: {xs:?} {names:?}");
    let i = (0..xs.len())
        .find(|&i| xs[i] == x && names[i] == series)
        .unwrap_or_else(|| panic!("{id}: no {series} at {x}"));
    ys[i].parse().unwrap()
}

/// SeaweedFS started in `dir`, its objects written once; `None` without `weed`.
fn filled(dir: &std::path::Path) -> Option<Weed> {
    let w = Weed::start(dir)?;
    let mut c = iobench();
    c.args(s3(&w)).args(["--name=fill", "--rw=write"]);
    run_ok(c);
    Some(w)
}

#[test]
fn report_shows_http_operations_ttfb_and_errors_as_the_json_has_them() {
    let dir = scratch("present_http");
    let Some(w) = filled(&dir) else { return };
    let res = dir.join("mix.json");
    let mut c = iobench();
    c.args(s3(&w))
        .args([
            "--name=mix",
            "--rw=randread",
            "--io_size=400k",
            "--http_opmix=get:50,put:20,head:15,list:10,delete:5",
            "--http_ttfb=1",
            "--http_errors=count",
            "--output-format=json",
        ])
        .arg(format!("--output={}", res.display()));
    run_ok(c);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&res).unwrap()).unwrap();
    let http = &v["jobs"][0]["iobench_http"];
    let html_path = dir.join("report.html");
    let mut c = iobench();
    c.arg("report").arg(&res).arg("--output").arg(&html_path);
    run_ok(c);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(
        html.contains("<h3>HTTP requests: mix</h3>"),
        "no http section"
    );

    // The per-operation chart: a bar per operation and percentile, latency and TTFB,
    // each the JSON's value.
    let ops = chart(&html, "http0-0-ops");
    assert!(ops.contains("data-kind=\"bars\""), "categories are bars");
    let xs = attrs(ops, "pt", "data-x");
    let series = attrs(ops, "pt", "data-series");
    let ys = attrs(ops, "pt", "data-y");
    let mut checked = 0;
    for op in ["GET", "PUT", "HEAD", "LIST", "DELETE"] {
        let class = &http["ops"][op];
        assert!(class["total_ios"].as_u64().unwrap() > 0, "{op}: {http}");
        // The table row: the count as the JSON has it.
        let row = format!(
            "<td class=\"l\">ops {op}</td><td>{}</td>",
            class["total_ios"]
        );
        assert!(html.contains(&row), "{row}");
        for (kind, label) in [("lat_ns", "latency"), ("ttfb_ns", "TTFB")] {
            for (key, p) in [("50.000000", "p50"), ("99.000000", "p99")] {
                let want = class[kind]["percentile"][key].as_f64().unwrap();
                let name = format!("{label} {p}");
                let i = (0..xs.len())
                    .find(|&i| xs[i] == op && series[i] == name)
                    .unwrap_or_else(|| panic!("no bar {op} {name}"));
                assert_eq!(ys[i].parse::<f64>().unwrap(), want, "{op} {name}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 20);
    // Latencies of a GET and a LIST differ by more than a decade only sometimes: the axis
    // says which scale it chose, with a time unit.
    assert!(ops.contains("class=\"axis y\""));
    assert!(
        ["ns", "µs", "ms", "s"]
            .iter()
            .any(|u| ops.contains(&format!("data-unit=\"{u}\""))),
        "a time unit"
    );
    // Errors by status: the table from the JSON (all zero on a healthy server).
    let total = http["errors"]["total"].as_u64().unwrap();
    assert!(html.contains(&format!("<td class=\"l\">total</td><td>{total}</td>")));

    // Refused requests (a wrong secret: SeaweedFS answers 403) counted by status: the
    // report's error bars are the JSON's counts.
    let refused = dir.join("refused.json");
    let mut c = iobench();
    c.args(s3(&w))
        .args([
            "--http_s3_key=not-the-secret",
            "--name=refused",
            "--filename=/bkt/refused",
            "--rw=write",
            "--size=16k",
            "--http_errors=keep_going",
            "--output-format=json",
        ])
        .arg(format!("--output={}", refused.display()));
    run_ok(c);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&refused).unwrap()).unwrap();
    let errors = &v["jobs"][0]["iobench_http"]["errors"];
    assert_eq!(errors["4xx"], 4, "{errors}");
    let refused_html = dir.join("refused.html");
    let mut c = iobench();
    c.arg("report")
        .arg(&refused)
        .arg("--output")
        .arg(&refused_html);
    run_ok(c);
    let text = std::fs::read_to_string(&refused_html).unwrap();
    let err_bars = chart(&text, "http0-0-errors");
    let exs = attrs(err_bars, "pt", "data-x");
    let eys = attrs(err_bars, "pt", "data-y");
    for (x, y) in exs.iter().zip(&eys) {
        assert_eq!(
            y.parse::<f64>().unwrap(),
            errors[x.as_str()].as_f64().unwrap(),
            "{x}"
        );
    }
    assert!(exs.iter().any(|x| x == "4xx") && exs.len() == 8, "{exs:?}");

    // A plain run's report has no http section.
    let plain = dir.join("plain.json");
    let mut c = iobench();
    c.args(s3(&w))
        .args(["--name=plain", "--rw=read", "--output-format=json"])
        .arg(format!("--output={}", plain.display()));
    run_ok(c);
    let plain_html = dir.join("plain.html");
    let mut c = iobench();
    c.arg("report").arg(&plain).arg("--output").arg(&plain_html);
    run_ok(c);
    let text = std::fs::read_to_string(&plain_html).unwrap();
    assert!(!text.contains("HTTP requests"));

    // Chromium builds the page with every bar.
    let shot = std::env::var_os("IOBENCH_HTTP_SHOT").map(std::path::PathBuf::from);
    if let Some(dom) = browse(&html_path, shot.as_deref()) {
        let bars = chart(&dom, "http0-0-ops");
        assert_eq!(attrs(bars, "pt", "data-y").len(), ys.len());
    }
    drop(w);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `compare --metric http.CLASS.STAT`: two SeaweedFS runs compared on a class of their
/// requests (GET's p99, PUT's IOPS, GET's time to first byte), each sample the run's own
/// JSON value, the job's directions left out; a class no run has is a clear error.
#[test]
fn compare_takes_http_class_metrics() {
    let dir = scratch("compare_http");
    let Some(w) = filled(&dir) else { return };
    let mut files = Vec::new();
    let mut docs = Vec::new();
    for (i, mix) in ["get:80,put:20", "get:50,put:50"].iter().enumerate() {
        let res = dir.join(format!("run{i}.json"));
        let mut c = iobench();
        c.args(s3(&w))
            .args([
                "--name=mix",
                "--rw=randread",
                "--io_size=200k",
                &format!("--http_opmix={mix}"),
                "--http_ttfb=1",
                "--output-format=json",
            ])
            .arg(format!("--output={}", res.display()));
        run_ok(c);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&res).unwrap()).unwrap();
        docs.push(v);
        files.push(res);
    }
    let export = dir.join("cmp.json");
    let mut c = iobench();
    c.arg("compare")
        .args(&files)
        .args(["--metric", "http.get.p99,http.PUT.iops,http.get.ttfb_p50"])
        .arg("--export-json")
        .arg(&export);
    let out = run_ok(c);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("http GET"), "{text}");
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let results = e["results"].as_array().unwrap();
    let sample = |side: usize, dir: &str, metric: &str| -> f64 {
        let label = e["sides"][side]["label"].as_str().unwrap();
        let r = results
            .iter()
            .find(|r| r["side"] == label && r["dir"] == dir && r["metric"] == metric)
            .unwrap_or_else(|| panic!("no {dir} {metric} for side {side}: {e}"));
        r["samples"][0].as_f64().unwrap()
    };
    for (side, v) in docs.iter().enumerate() {
        let ops = &v["jobs"][0]["iobench_http"]["ops"];
        assert_eq!(
            sample(side, "http GET", "p99"),
            ops["GET"]["lat_ns"]["percentile"]["99.000000"]
                .as_f64()
                .unwrap()
        );
        assert_eq!(
            sample(side, "http PUT", "iops"),
            ops["PUT"]["iops"].as_f64().unwrap()
        );
        assert_eq!(
            sample(side, "http GET ttfb", "p50"),
            ops["GET"]["ttfb_ns"]["percentile"]["50.000000"]
                .as_f64()
                .unwrap()
        );
    }
    // Only http rows: every metric named was an http one.
    assert!(results
        .iter()
        .all(|r| r["dir"].as_str().unwrap().starts_with("http ")));
    // PUT's share grew from 20% to 50%: its IOPS with it.
    assert!(sample(1, "http PUT", "iops") > sample(0, "http PUT", "iops"));

    // `report` of the two runs: the classes charted against the option that differs
    // (http_opmix, categorical: grouped bars, a bar per operation and mix), each bar the
    // run's own JSON value; latency and time to first byte per operation beside them.
    let html_path = dir.join("set.html");
    let html = report_of(&files, &html_path);
    assert!(html.contains("HTTP requests by class"), "no http charts");
    let mixes = ["get:80,put:20", "get:50,put:50"];
    let pct = |k: &'static str| move |c: &Value| c[k]["percentile"]["99.000000"].as_f64();
    type Of<'a> = &'a dyn Fn(&Value) -> Option<f64>;
    let charts: [(&str, &str, Of); 4] = [
        ("set-0-http-ops-iops", "bars", &|c| c["iops"].as_f64()),
        ("set-0-http-ops-bw", "bars", &|c| c["bw_bytes"].as_f64()),
        ("set-0-http-ops-p99", "dots", &pct("lat_ns")),
        ("set-0-http-ops-ttfb-p99", "dots", &pct("ttfb_ns")),
    ];
    for (id, kind, value) in charts {
        assert!(chart(&html, id).contains("against http_opmix"), "{id}");
        for (side, v) in docs.iter().enumerate() {
            for op in ["GET", "PUT"] {
                // Two operations by two mixes.
                let got = point_of(&html, id, kind, 4, mixes[side], op);
                let want = value(&v["jobs"][0]["iobench_http"]["ops"][op]).unwrap();
                assert_eq!(got, want, "{id} {op} {side}");
            }
        }
    }
    assert!(chart(&html, "set-0-http-ops-ttfb-p99").contains("time to first byte"));
    // Neither run has size classes or endpoints: no chart of them.
    assert!(!html.contains("set-0-http-sizes") && !html.contains("set-0-http-endpoints"));
    // Chromium builds the page with every bar (IOBENCH_HTTP_SET_SHOT: a screenshot).
    let shot = std::env::var_os("IOBENCH_HTTP_SET_SHOT").map(std::path::PathBuf::from);
    if let Some(dom) = browse(&html_path, shot.as_deref()) {
        let bars = chart(&dom, "set-0-http-ops-iops");
        assert_eq!(attrs(bars, "pt", "data-y").len(), 4);
    }

    // A class no run has, and a malformed metric, are named.
    let mut c = iobench();
    c.arg("compare")
        .args(&files)
        .args(["--metric", "http.64k.p99"]);
    let out = common::run(c);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("no run has the http class '64k'") && err.contains("GET"),
        "{err}"
    );
    let mut c = iobench();
    c.arg("compare")
        .args(&files)
        .args(["--metric", "http.get.p42"]);
    let out = common::run(c);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("http.get.p42") && err.contains("http.CLASS.STAT"),
        "{err}"
    );
    drop(w);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--live`, `--status-interval` and `--metrics` during a mixed run against SeaweedFS:
/// each interim JSON report has the classes (cumulative); each live line has the
/// interval's requests per operation (with latency percentiles), the intervals add up to
/// the final report's counts, the lines validate against the live-line schema; the
/// Prometheus endpoint's counters and latency histograms per operation, size class and
/// endpoint end at the final report's counts. A plain http run's lines have none of it.
#[test]
fn live_lines_and_metrics_carry_http_operations() {
    use super::present_metrics::{free_port, http_get, value};
    let dir = scratch("live_http");
    let Some(w) = filled(&dir) else { return };
    let (live, res) = (dir.join("live.jsonl"), dir.join("res.json"));
    let port = free_port();
    let mut c = iobench();
    c.args(s3(&w))
        .args([
            "--name=mix",
            "--rw=randread",
            "--time_based",
            "--runtime=2500ms",
            "--http_opmix=get:60,put:20,head:20",
            "--http_ttfb=1",
            "--http_size_classes=1",
            &format!("--http_endpoints=127.0.0.1:{0},localhost:{0}", w.s3),
            "--status-interval=1",
            "--metrics-linger=20s",
            "--output-format=json",
        ])
        .arg(format!("--metrics=127.0.0.1:{port}"))
        .arg(format!("--live={}", live.display()))
        .arg(format!("--output={}", res.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    // Scrape until the run has ended (iobench_up 0): that scrape has the final values.
    let t0 = std::time::Instant::now();
    let text = loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
        if let Some(t) = http_get(port, "/metrics") {
            if value(&t, "iobench_up ") == Some(0.0) {
                break t;
            }
        }
        assert!(t0.elapsed().as_secs() < 60, "the run never ended");
    };
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // --status-interval: each interim report (JSON, cumulative) has the classes too, the
    // last one the final report.
    let docs: Vec<Value> =
        serde_json::Deserializer::from_str(&std::fs::read_to_string(&res).unwrap())
            .into_iter::<Value>()
            .map(Result::unwrap)
            .collect();
    assert!(docs.len() >= 2, "interim reports and the final one");
    let v = docs.last().unwrap();
    let ops = &v["jobs"][0]["iobench_http"]["ops"];
    let mut before = 0;
    for d in &docs {
        let n = d["jobs"][0]["iobench_http"]["ops"]["GET"]["total_ios"]
            .as_u64()
            .unwrap();
        assert!(n >= before, "cumulative: {n} after {before}");
        before = n;
    }
    let lines: Vec<Value> = std::fs::read_to_string(&live)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines.len() >= 3,
        "intervals and a final line: {}",
        lines.len()
    );
    for op in ["GET", "PUT", "HEAD"] {
        let want = ops[op]["total_ios"].as_u64().unwrap();
        assert!(want > 0, "{op}: {ops}");
        let sum: u64 = lines
            .iter()
            .map(|l| {
                l["jobs"][0]["iobench_http"]["ops"][op]["ios"]
                    .as_u64()
                    .unwrap_or(0)
            })
            .sum();
        assert_eq!(sum, want, "{op}: the intervals add up to the final report");
        let last = &lines.last().unwrap()["jobs"][0]["iobench_http"]["ops"][op];
        assert_eq!(last["total_ios"].as_u64(), Some(want), "{op}: {last}");
        // An interval with requests has their latency percentiles.
        let busy = lines
            .iter()
            .map(|l| &l["jobs"][0]["iobench_http"]["ops"][op])
            .find(|o| o["ios"].as_u64().unwrap_or(0) > 0)
            .unwrap();
        assert!(busy["lat_ns"]["p99"].as_f64().unwrap() > 0.0, "{busy}");
        // Prometheus: the counter and the histogram's count are the final report's.
        let labels = format!("{{job=\"mix\",group=\"0\",op=\"{op}\"}}");
        assert_eq!(
            value(&text, &format!("iobench_http_requests_total{labels}")),
            Some(want as f64),
            "{text}"
        );
        assert_eq!(
            value(
                &text,
                &format!("iobench_http_latency_seconds_count{labels}")
            ),
            Some(want as f64)
        );
        assert_eq!(
            value(&text, &format!("iobench_http_ttfb_seconds_count{labels}")),
            Some(want as f64)
        );
    }
    // The size class and the two endpoints: their intervals add up to the final report's
    // counts as the operations' do, each with its time to first byte.
    let http = &v["jobs"][0]["iobench_http"];
    let eps = [format!("127.0.0.1:{}", w.s3), format!("localhost:{}", w.s3)];
    for (group, class) in [
        ("sizes", "4k"),
        ("endpoints", &eps[0]),
        ("endpoints", &eps[1]),
    ] {
        let want = http[group][class]["total_ios"].as_u64().unwrap();
        assert!(want > 0, "{group} {class}: {http}");
        let of = |l: &Value| l["jobs"][0]["iobench_http"][group][class].clone();
        let sum: u64 = lines
            .iter()
            .map(|l| of(l)["ios"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(sum, want, "{group} {class}: the intervals add up");
        let busy = lines
            .iter()
            .map(of)
            .find(|o| o["ios"].as_u64().unwrap_or(0) > 0)
            .unwrap();
        assert!(busy["lat_ns"]["p99"].as_f64().unwrap() > 0.0, "{busy}");
        assert!(busy["ttfb_ns"]["p50"].as_f64().unwrap() > 0.0, "{busy}");
        assert!(busy["ttfb_ns"]["mean"].as_f64() <= busy["lat_ns"]["mean"].as_f64());
        // Prometheus: a family per group, its counter and histograms the final report's.
        let (family, label) = match group {
            "sizes" => ("size_", "size"),
            _ => ("endpoint_", "endpoint"),
        };
        let labels = format!("{{job=\"mix\",group=\"0\",{label}=\"{class}\"}}");
        for series in [
            "requests_total",
            "latency_seconds_count",
            "ttfb_seconds_count",
        ] {
            assert_eq!(
                value(&text, &format!("iobench_http_{family}{series}{labels}")),
                Some(want as f64),
                "{series}: {text}"
            );
        }
    }
    // The groups' counts agree: every request has one size class and one endpoint.
    let last = &lines.last().unwrap()["jobs"][0]["iobench_http"];
    let total = |g: &str| -> u64 {
        last[g]
            .as_object()
            .unwrap()
            .values()
            .map(|c| c["total_ios"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(total("sizes"), total("ops"));
    assert_eq!(total("endpoints"), total("ops"));
    assert!(text.contains("# TYPE iobench_http_latency_seconds histogram"));
    let (code, err) = super::output_contract::validate(&[("live-line", vec![live.clone()])]);
    if super::output_contract::have_validator(&err) {
        assert_eq!(code, 0, "{err}");
    }

    // A plain http run: its live lines are as before.
    let plain = dir.join("plain.jsonl");
    let mut c = iobench();
    c.args(s3(&w))
        .args(["--name=plain", "--rw=read"])
        .arg(format!("--live={}", plain.display()));
    run_ok(c);
    let text = std::fs::read_to_string(&plain).unwrap();
    assert!(
        text.contains("\"read\"") && !text.contains("iobench_http"),
        "{text}"
    );
    drop(w);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sweep` of a mixed run over two block sizes against SeaweedFS: each point of the index
/// has the http engine's classes (`iobench_http`: GET, PUT, TTFB) with the numbers of the
/// point's own result, the table has their columns, and the index validates.
#[test]
fn sweep_index_and_table_have_http_classes() {
    let dir = scratch("sweep_http");
    let Some(w) = filled(&dir) else { return };
    let mut c = iobench();
    c.args(["sweep", "--axis", "bs=4k,16k", "-o"])
        .arg(dir.join("sw"))
        .arg("--")
        .args(s3(&w))
        .args([
            "--name=mix",
            "--rw=randread",
            "--io_size=160k",
            "--http_opmix=get:70,put:30,delete:0",
            "--http_ttfb=1",
        ]);
    let out = run_ok(c);
    let table = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(table.contains("http GET IOPS"), "{table}");
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sw/index.json")).unwrap()).unwrap();
    let points = index["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        let file = dir.join("sw").join(p["file"].as_str().unwrap());
        let text = std::fs::read_to_string(&file).unwrap();
        let v: Value = serde_json::Deserializer::from_str(&text)
            .into_iter::<Value>()
            .last()
            .unwrap()
            .unwrap();
        let ops = &v["jobs"][0]["iobench_http"]["ops"];
        let http = &p["iobench_http"];
        for op in ["GET", "PUT"] {
            assert_eq!(http[op]["total_ios"], ops[op]["total_ios"], "{op}: {http}");
            assert_eq!(
                http[op]["p99_ns"].as_f64().unwrap(),
                ops[op]["lat_ns"]["percentile"]["99.000000"]
                    .as_f64()
                    .unwrap()
            );
            assert_eq!(
                http[&format!("{op} ttfb")]["p50_ns"].as_f64().unwrap(),
                ops[op]["ttfb_ns"]["percentile"]["50.000000"]
                    .as_f64()
                    .unwrap()
            );
        }
        assert!(
            http.get("DELETE").is_none(),
            "a class that did nothing is left out"
        );
        assert_eq!(
            p["runs"][0]["iobench_http"]["GET"]["total_ios"],
            ops["GET"]["total_ios"]
        );
    }
    // `report` of the sweep: each operation's p99 (and TTFB's) against bs, a numeric
    // axis: lines, each point the index's value.
    let html = report_of(&[dir.join("sw")], &dir.join("sw.html"));
    for (id, key) in [
        ("set-0-http-ops-p99", ""),
        ("set-0-http-ops-ttfb-p99", " ttfb"),
    ] {
        for (p, x) in points.iter().zip(["4 KiB", "16 KiB"]) {
            for op in ["GET", "PUT"] {
                // GET and PUT at two sizes.
                let got = point_of(&html, id, "lines", 4, x, op);
                let want = p["iobench_http"][format!("{op}{key}")]["p99_ns"].as_f64();
                assert_eq!(Some(got), want, "{id} {op} {x}");
            }
        }
    }
    let (code, err) =
        super::output_contract::validate(&[("sweep-index", vec![dir.join("sw/index.json")])]);
    if super::output_contract::have_validator(&err) {
        assert_eq!(code, 0, "{err}");
    }
    drop(w);
    let _ = std::fs::remove_dir_all(&dir);
}
