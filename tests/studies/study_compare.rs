//! `iobench compare`: repeated runs in alternation, statistics that match an independent
//! computation from the kept run files, fio's own JSON compared, and the regression gate's
//! exit status.

use crate::common;
use common::{fio, iobench, run, run_ok, scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn null_job(name: &str, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        &format!("--name={name}"),
        "--ioengine=null",
        "--rw=randread",
        "--bs=4k",
        "--size=1g",
        "--runtime=200ms",
        "--time_based",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

#[test]
fn repeated_runs_alternate_and_their_statistics_check_out() {
    let dir = scratch("compare_repeat");
    let keep = dir.join("runs");
    let export = dir.join("cmp.json");
    let mut cmd = iobench();
    cmd.args(["compare", "--repeat", "3", "--warmup", "1", "-o"])
        .arg(&keep)
        .arg("--export-json")
        .arg(&export)
        .arg("--")
        .args(null_job("x", &[]))
        .arg("--")
        .args(null_job("x", &["--rate_iops=2000"]));
    let o = run_ok(cmd);
    let err = String::from_utf8_lossy(&o.stderr);
    // The sides share the job name x: they are labelled by the option that differs (the
    // first leaves rate_iops at its default), and progress counts the steps.
    let order: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("compare: step "))
        .map(|l| l.split(" (elapsed").next().unwrap())
        .collect();
    assert_eq!(
        order[..4],
        [
            "compare: step 1/8 rate_iops=default warmup 1/1",
            "compare: step 2/8 rate_iops=2000 warmup 1/1",
            "compare: step 3/8 rate_iops=default run 1/3",
            "compare: step 4/8 rate_iops=2000 run 1/3"
        ],
        "A B A B: {err}"
    );
    assert!(err.contains("ETA "), "{err}");
    let (a, b) = ("rate_iops=default", "rate_iops=2000");
    let cmp = read_json(&export);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(
        cmp["iobench_env"]["hostname"],
        host.trim(),
        "the export says where it ran"
    );
    for (side, file) in [(a, "rate_iops_default"), (b, "rate_iops_2000")] {
        // An independent computation from the kept files.
        let xs: Vec<f64> = (1..=3)
            .map(|r| {
                let f = read_json(&keep.join(format!("{file}-run{r}.json")));
                f["jobs"][0]["read"]["iops"].as_f64().unwrap()
            })
            .collect();
        let mean = xs.iter().sum::<f64>() / 3.0;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        let mut sorted = xs.clone();
        sorted.sort_by(f64::total_cmp);
        let r = cmp["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["side"] == side && r["metric"] == "iops")
            .unwrap();
        assert_eq!(r["n"], 3);
        assert!(
            (r["mean"].as_f64().unwrap() - mean).abs() < 1e-6 * mean,
            "{side} mean"
        );
        assert!(
            (r["sd"].as_f64().unwrap() - sd).abs() < 1e-6 * mean.max(1.0),
            "{side} sd"
        );
        assert_eq!(r["median"].as_f64().unwrap(), sorted[1]);
        assert_eq!(r["min"].as_f64().unwrap(), sorted[0]);
        assert_eq!(r["samples"].as_array().unwrap().len(), 3);
    }
    let rel = cmp["relative"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "iops")
        .unwrap();
    let mean = |side: &str| {
        cmp["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["side"] == side && r["metric"] == "iops")
            .unwrap()["mean"]
            .as_f64()
            .unwrap()
    };
    assert!((rel["ratio"].as_f64().unwrap() - mean(b) / mean(a)).abs() < 1e-9);
    let p = rel["p_value"].as_f64().unwrap();
    assert!(
        p < 0.05,
        "2000 IOPS against a null engine's millions: p = {p}"
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("x read IOPS: rate_iops=2000 is 0.0"),
        "{text}"
    );
    // Each run's value is shown, in the order run.
    let xs: Vec<f64> = cmp["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["side"] == b && r["metric"] == "iops")
        .unwrap()["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let row = text
        .lines()
        .find(|l| l.starts_with("rate_iops=2000") && l.contains(" x "))
        .unwrap_or_else(|| panic!("{text}"));
    let shown: Vec<f64> = row
        .split_whitespace()
        .rev()
        .take(3)
        .map(|t| t.trim_end_matches('k').parse::<f64>().unwrap() * 1000.0)
        .collect();
    for (x, s) in xs.iter().zip(shown.iter().rev()) {
        assert!((x - s).abs() < 0.01 * x, "{row} vs {xs:?}");
    }
}

/// Result files written by the real fio, two runs a side: the fast ones and rate-limited
/// ones.
fn fio_results(dir: &Path) -> Option<(Vec<PathBuf>, Vec<PathBuf>)> {
    let fast: Vec<PathBuf> = (1..=2).map(|i| dir.join(format!("fast{i}.json"))).collect();
    let slow: Vec<PathBuf> = (1..=2).map(|i| dir.join(format!("slow{i}.json"))).collect();
    for (paths, extra) in [(&fast, vec![]), (&slow, vec!["--rate_iops=5000"])] {
        for path in paths {
            let mut cmd = fio()?;
            cmd.args(null_job("fio", &extra))
                .arg("--output-format=json")
                .arg(format!("--output={}", path.display()));
            run_ok(cmd);
        }
    }
    Some((fast, slow))
}

#[test]
fn fio_result_files_and_the_regression_gate() {
    let dir = scratch("compare_fio");
    let Some((fast, slow)) = fio_results(&dir) else {
        return;
    };
    let iops = |p: &Path| read_json(p)["jobs"][0]["read"]["iops"].as_f64().unwrap();
    // One run a side: the ratio without a made-up "± 0.000", and no gate, with why.
    let mut cmd = iobench();
    cmd.arg("compare").arg(&fast[0]).arg(&slow[0]);
    let text = String::from_utf8_lossy(&run_ok(cmd).stdout).into_owned();
    let want = format!(
        "slow1.json is {:.3} × fast1.json's IOPS (no p-value",
        iops(&slow[0]) / iops(&fast[0])
    );
    assert!(text.contains(&want), "want {want} in {text}");
    assert!(!text.contains("± 0.000"), "{text}");
    let mut cmd = iobench();
    cmd.args(["compare", "--fail-if-slower", "5%"])
        .arg(&fast[0])
        .arg(&slow[0]);
    let o = run(cmd);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("needs 2 or more runs a side") && err.contains("noise"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "no verdict from one run");
    // Two runs a side: the gate judges.
    let gate = |first: &[PathBuf], second: &[PathBuf], names: [&str; 2], metric: &str| {
        let mut cmd = iobench();
        cmd.args(["compare", "--metric", metric, "--fail-if-slower", "5%"])
            .args(["--name", names[0], "--name", names[1], "--"])
            .args(first)
            .arg("--")
            .args(second);
        run(cmd)
    };
    let o = gate(&fast, &slow, ["fast", "slow"], "iops");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "slower beyond 5%: {text}");
    assert!(text.contains("SLOWER: fio read IOPS: slow"), "{text}");
    assert!(text.contains("slow is ") && text.contains(" ± "), "{text}");
    // The other way round the second side is faster: the gate passes.
    let o = gate(&slow, &fast, ["slow", "fast"], "iops");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // Latency: the same runs on both sides are not slower, so a latency gate passes.
    assert_eq!(gate(&fast, &fast, ["a", "b"], "lat").status.code(), Some(0));
}

#[test]
fn groups_of_files_against_a_job() {
    let dir = scratch("compare_groups");
    let mut files = Vec::new();
    for i in 0..3 {
        let p = dir.join(format!("base{i}.json"));
        let mut cmd = iobench();
        cmd.args(null_job("g", &["--rate_iops=3000"]))
            .arg("--output-format=json")
            .arg(format!("--output={}", p.display()));
        run_ok(cmd);
        files.push(p);
    }
    // Stored baseline results on one side, fresh runs of a job on the other.
    let csv = dir.join("out.csv");
    let mut cmd = iobench();
    cmd.args([
        "compare",
        "--repeat",
        "2",
        "--name",
        "base",
        "--name",
        "new",
        "--export-csv",
    ])
    .arg(&csv)
    .arg("--")
    .args(&files)
    .arg("--")
    .args(null_job("g", &[]));
    let o = run_ok(cmd);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("g read IOPS: new is"), "{text}");
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(csv.starts_with("side,job,dir,metric,n,mean,sd,min,max,median\n"));
    assert!(csv.contains("\nbase,g,read,iops,3,"), "{csv}");
    assert!(csv.contains("\nnew,g,read,iops,2,"), "{csv}");
}

#[test]
fn bad_input_is_refused() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["/nonexistent/a.json", "/nonexistent/b.json"],
            "/nonexistent/a.json",
        ),
        (&["--metric=speed", "--", "x", "--", "y"], "--metric"),
        (
            &["--fail-if-slower=lots", "--", "x", "--", "y"],
            "percentage",
        ),
        (
            &["--", "--name=a", "--ioengine=null", "--size=1m"],
            "two or more",
        ),
        (
            &[
                "--",
                "--name=a",
                "--ioengine=null",
                "--size=1m",
                "--",
                "--name=b",
                "--bs=banana",
            ],
            "banana",
        ),
    ];
    for (args, want) in cases {
        let mut cmd = iobench();
        cmd.arg("compare").args(*args);
        let o = run(cmd);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: want {want} in {err}");
    }
}

/// `compare --tool fio`: the first side runs with the real fio, the second with iobench, in
/// turn; the verdict table labels the sides by tool and its numbers come from the kept runs.
#[test]
fn tool_fio_runs_the_first_side_and_gives_verdicts() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("compare_tool");
    let keep = dir.join("runs");
    let export = dir.join("cmp.json");
    let data = dir.join("data");
    let job: Vec<String> = [
        "--name=t",
        "--ioengine=psync",
        "--rw=read",
        "--bs=4k",
        "--size=4m",
        "--runtime=300ms",
        "--time_based",
        // An output option of the user's is replaced by compare's own.
        "--output-format=normal",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--filename={}", data.display())])
    .collect();
    let mut cmd = iobench();
    cmd.args(["compare", "--tool", "fio", "--repeat", "2", "-o"])
        .arg(&keep)
        .arg("--export-json")
        .arg(&export)
        .arg("--")
        .args(&job)
        .arg("--")
        .args(&job);
    let o = run_ok(cmd);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    let order: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("compare: step "))
        .map(|l| l.split(" (elapsed").next().unwrap())
        .collect();
    assert_eq!(
        order[..4],
        [
            "compare: step 1/4 fio 3.33 run 1/2",
            "compare: step 2/4 iobench run 1/2",
            "compare: step 3/4 fio 3.33 run 2/2",
            "compare: step 4/4 iobench run 2/2"
        ],
        "{err}"
    );
    // The first side's runs are fio's own JSON+.
    let f = read_json(&keep.join("fio_3.33-run1.json"));
    assert_eq!(f["fio version"], "fio-3.33");
    assert!(f["jobs"][0]["read"]["clat_ns"]["bins"].is_object(), "JSON+");
    let i = read_json(&keep.join("iobench-run1.json"));
    assert!(i["fio version"].as_str().unwrap().starts_with("iobench-"));
    // The verdict table: both labels in its header, a row per default metric.
    let header = out
        .lines()
        .find(|l| l.contains("verdict"))
        .unwrap_or_else(|| panic!("no verdict table: {out}"));
    assert!(
        header.contains("fio 3.33") && header.contains("iobench"),
        "{header}"
    );
    for unit in ["IOPS", "MiB/s", "p50 us", "p99 us"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with("t ") && l.contains(unit) && l.contains('%')),
            "no {unit} verdict row: {out}"
        );
    }
    // Each verdict row's difference and p-value come from the kept files.
    let cmp = read_json(&export);
    assert_eq!(cmp["tool"]["version"], "fio-3.33");
    let iops = |side: &str| -> Vec<f64> {
        (1..=2)
            .map(|r| {
                read_json(&keep.join(format!("{side}-run{r}.json")))["jobs"][0]["read"]["iops"]
                    .as_f64()
                    .unwrap()
            })
            .collect()
    };
    let (a, b) = (iops("fio_3.33"), iops("iobench"));
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let rel = cmp["relative"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "iops")
        .unwrap();
    assert_eq!(rel["side"], "iobench");
    assert_eq!(rel["baseline"], "fio 3.33");
    let want = (mean(&b) / mean(&a) - 1.0) * 100.0;
    assert!(
        (rel["diff_pct"].as_f64().unwrap() - want).abs() < 1e-6,
        "{rel}"
    );
    let p = rel["p_value"].as_f64();
    let verdict = rel["verdict"].as_str().unwrap();
    match p {
        Some(p) if p < 0.05 => assert_eq!(verdict, "different"),
        Some(_) => assert!(
            ["equivalent", "cannot-tell"].contains(&verdict),
            "{verdict}"
        ),
        None => {}
    }
}

#[test]
fn tool_errors_are_clear() {
    let job = ["--name=a", "--ioengine=null", "--size=1m"];
    let cases: &[(&[&str], &str)] = &[
        (&["--tool", "/nonexistent/fio"], "/nonexistent/fio"),
        (&["--tool", "no-such-fio-binary"], "not found in PATH"),
        (&["--tool", "false"], "not fio-compatible"),
        (&["--tool", "true"], "not fio-compatible"),
    ];
    for (args, want) in cases {
        let mut cmd = iobench();
        cmd.arg("compare").args(*args).arg("--").args(job);
        let o = run(cmd);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: want {want} in {err}");
    }
    if fio().is_none() {
        return;
    }
    // An iobench-only option on the side fio would run is refused before anything runs.
    for extra in ["--io_timeout=5s", "--env"] {
        let mut cmd = iobench();
        cmd.args(["compare", "--tool", "fio", "--"])
            .args(job)
            .arg(extra);
        let o = run(cmd);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{extra}: {err}");
        assert!(
            err.contains("only fio's own options") && !err.contains("fio 3.33 run"),
            "{extra}: {err}"
        );
    }
}

/// A result file whose read direction says `read` (the rest of fio's keys filled in).
fn result_text(error: u32, read: &str) -> String {
    format!(
        r#"{{"fio version":"fio-3.33","jobs":[{{"jobname":"x","groupid":0,"error":{error},
  "read":{{{read}"io_bytes":{io},"bw_bytes":{bw},"runtime":1000,"total_ios":{n},
    "lat_ns":{{"min":100,"max":900,"mean":250.0}},
    "clat_ns":{{"percentile":{{"50.000000":200,"99.000000":800}}}}}}}}]}}"#,
        io = if error == 0 { 4096000 } else { 0 },
        bw = if error == 0 { 4096000 } else { 0 },
        n = if error == 0 { 1000 } else { 0 },
    )
}

/// A failed side, missing keys, non-numbers and negative numbers in result files are
/// errors naming the file and the key, never a silent 0 or a dropped side.
#[test]
fn bad_result_files_are_errors_naming_file_and_key() {
    let dir = scratch("compare_bad_results");
    let good = dir.join("good.json");
    std::fs::write(&good, result_text(0, r#""iops":1000.0,"#)).unwrap();
    let cases = [
        ("failed.json", result_text(13, r#""iops":0.0,"#), "error 13"),
        ("missing.json", result_text(0, ""), "read.iops: missing"),
        (
            "fast.json",
            result_text(0, r#""iops":"fast","#),
            "read.iops: expected a number",
        ),
        (
            "negative.json",
            result_text(0, r#""iops":-1000.0,"#),
            "read.iops: -1000",
        ),
    ];
    for (name, text, want) in cases {
        let bad = dir.join(name);
        std::fs::write(&bad, text).unwrap();
        for args in [vec!["--fail-if-slower", "5%"], vec![]] {
            let mut cmd = iobench();
            cmd.arg("compare").args(&args).arg(&good).arg(&bad);
            let o = run(cmd);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{name} {args:?}: {err}");
            assert!(
                err.contains(name) && err.contains(want),
                "{name}: want the file and {want} in {err}"
            );
        }
    }
    // A side that measured nothing (no error, no I/O) cannot pass a gate either.
    let idle = dir.join("idle.json");
    std::fs::write(
        &idle,
        r#"{"jobs":[{"jobname":"x","error":0,"read":{"io_bytes":0,"total_ios":0}}]}"#,
    )
    .unwrap();
    let mut cmd = iobench();
    cmd.args(["compare", "--fail-if-slower", "5%", "--"])
        .args([&good, &good])
        .arg("--")
        .args([&idle, &idle]);
    let o = run(cmd);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // Said as a failed side (no I/O), never judged.
    assert!(err.contains("B failed (no I/O)"), "{err}");
    assert!(err.contains("no I/O was done"), "{err}");
}
