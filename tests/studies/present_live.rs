//! `--live`: every line is one JSON document with one interval's own numbers, and the
//! intervals add up to the final report's totals, per job, per group and per direction.

use crate::common;
use common::{iobench, run, run_ok, scratch};
use serde_json::Value;

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn check_sums(extra: &[&str]) {
    let dir = scratch(&format!("live_{}", extra.len()));
    let live = dir.join("live.jsonl");
    let mut cmd = iobench();
    cmd.args([
        "--name=a",
        "--ioengine=null",
        "--rw=randrw",
        "--size=1g",
        "--runtime=3500ms",
        "--time_based",
        "--rate_iops=4000,2000",
        "--numjobs=2",
        "--output-format=json",
    ])
    .args(extra)
    .arg(format!("--live={}", live.display()));
    let out = run_ok(cmd);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ls = lines(&live);
    assert!(
        ls.len() >= 4,
        "3 intervals of 1 s and the final line: {}",
        ls.len()
    );
    assert_eq!(ls.last().unwrap()["final"], true);
    assert!(ls[..ls.len() - 1].iter().all(|l| l["final"] == false));
    // One interval in the middle: its own numbers, not the totals so far.
    let mid = &ls[1]["jobs"][0]["read"];
    let ios = mid["ios"].as_u64().unwrap();
    assert!(ios > 0 && ios < mid["total_ios"].as_u64().unwrap(), "{mid}");
    let rate = mid["iops"].as_f64().unwrap();
    assert!(
        (6000.0..10000.0).contains(&rate),
        "two clones at 4000 read IOPS: {rate}"
    );
    for key in ["min", "mean", "max", "p50", "p90", "p99", "p99.9"] {
        assert!(mid["clat_ns"][key].is_number(), "{key} in {mid}");
    }
    // The intervals add up to the final report, per direction.
    for (d, name) in ["read", "write"].iter().enumerate() {
        let sum = |what: &str| -> u64 {
            ls.iter()
                .map(|l| l["jobs"][0][name][what].as_u64().unwrap_or(0))
                .sum()
        };
        let jobs = report["jobs"].as_array().unwrap();
        let final_ios: u64 = jobs
            .iter()
            .map(|j| j[name]["total_ios"].as_u64().unwrap())
            .sum();
        let final_bytes: u64 = jobs
            .iter()
            .map(|j| j[name]["io_bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(sum("ios"), final_ios, "{name} I/Os (direction {d})");
        assert_eq!(sum("bytes"), final_bytes, "{name} bytes");
        let last = &ls.last().unwrap()["groups"][0][name];
        assert_eq!(
            last["total_ios"].as_u64(),
            Some(final_ios),
            "the group's total so far"
        );
    }
    assert_eq!(ls[0]["jobs"][0]["clones"], 2);
}

#[test]
fn intervals_add_up_to_the_final_report_processes() {
    check_sums(&[]);
}

#[test]
fn intervals_add_up_to_the_final_report_threads() {
    check_sums(&["--thread", "--group_reporting"]);
}

#[test]
fn live_to_stdout_and_bad_destination() {
    let mut cmd = iobench();
    cmd.args([
        "--name=s",
        "--ioengine=null",
        "--size=64m",
        "--runtime=1500ms",
        "--time_based",
        "--live=-",
        "--output-format=terse",
    ]);
    let out = run_ok(cmd);
    let text = String::from_utf8_lossy(&out.stdout);
    let json_lines = text.lines().filter(|l| l.starts_with('{')).count();
    assert!(json_lines >= 2, "{text}");
    let mut cmd = iobench();
    cmd.args([
        "--name=s",
        "--ioengine=null",
        "--size=1m",
        "--live=/proc/nonexistent/x.jsonl",
    ]);
    let out = run(cmd);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--live=/proc/nonexistent/x.jsonl"), "{err}");
}
