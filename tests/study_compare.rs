//! `iobench compare`: repeated runs in alternation, statistics that match an independent
//! computation from the kept run files, fio's own JSON compared, and the regression gate's
//! exit status.

mod common;
use common::{fio, iobench, run, run_ok, scratch};
use serde_json::Value;
use std::path::Path;

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
    let order: Vec<&str> = err.lines().filter(|l| l.starts_with("compare: ")).collect();
    assert_eq!(
        order[..4],
        [
            "compare: A warmup 1/1",
            "compare: B warmup 1/1",
            "compare: A run 1/3",
            "compare: B run 1/3"
        ],
        "A B A B: {err}"
    );
    let cmp = read_json(&export);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(
        cmp["iobench_env"]["hostname"],
        host.trim(),
        "the export says where it ran"
    );
    for side in ["A", "B"] {
        // An independent computation from the kept files.
        let xs: Vec<f64> = (1..=3)
            .map(|r| {
                let f = read_json(&keep.join(format!("{side}-run{r}.json")));
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
    assert!((rel["ratio"].as_f64().unwrap() - mean("B") / mean("A")).abs() < 1e-9);
    let p = rel["p_value"].as_f64().unwrap();
    assert!(
        p < 0.05,
        "2000 IOPS against a null engine's millions: p = {p}"
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("x read IOPS: B is 0.0"), "{text}");
}

/// Two result files written by the real fio: the fast one and a rate-limited one.
fn fio_results(dir: &Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let fast = dir.join("fast.json");
    let slow = dir.join("slow.json");
    for (path, extra) in [(&fast, vec![]), (&slow, vec!["--rate_iops=5000"])] {
        let mut cmd = fio()?;
        cmd.args(null_job("fio", &extra))
            .arg("--output-format=json")
            .arg(format!("--output={}", path.display()));
        run_ok(cmd);
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
    let mut cmd = iobench();
    cmd.args(["compare", "--fail-if-slower", "5%"])
        .arg(&fast)
        .arg(&slow);
    let o = run(cmd);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "slower beyond 5%: {text}");
    assert!(text.contains("SLOWER: fio read IOPS: slow.json"), "{text}");
    let want = format!(
        "slow.json is {:.3} ± 0.000 × fast.json's IOPS",
        iops(&slow) / iops(&fast)
    );
    assert!(text.contains(&want), "want {want} in {text}");
    // The other way round the second file is faster: the gate passes.
    let mut cmd = iobench();
    cmd.args(["compare", "--fail-if-slower", "5%"])
        .arg(&slow)
        .arg(&fast);
    let o = run(cmd);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // Latency: the rate-limited run is not slower per I/O, so a latency gate passes it.
    let mut cmd = iobench();
    cmd.args(["compare", "--metric", "lat", "--fail-if-slower", "5%"])
        .arg(&fast)
        .arg(&fast);
    assert_eq!(run(cmd).status.code(), Some(0));
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
