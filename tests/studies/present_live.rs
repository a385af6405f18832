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

/// The README's `--live=- … | jq` line, run as written (in a directory holding a short
/// `jobfile.fio`): stdout holds the JSON Lines alone, the report goes to stderr.
#[test]
fn the_readmes_live_line_runs_as_written() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let line = readme
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("iobench --live=-"))
        .expect("the README has an `iobench --live=- ... | jq` line");
    // The shell command without its trailing comment.
    let command = line.split("  #").next().unwrap().trim();
    assert!(command.contains("| jq"), "{command}");
    let dir = scratch("live_readme");
    std::fs::write(
        dir.join("jobfile.fio"),
        "[x]\nioengine=null\nrw=randread\nsize=1g\nruntime=2500ms\ntime_based\n",
    )
    .unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_iobench"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The left side of the pipe alone: every line of stdout is a JSON document, the
    // report is on stderr.
    let left = command.split(" | ").next().unwrap();
    let o = std::process::Command::new("sh")
        .args(["-c", left])
        .current_dir(&dir)
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let docs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(docs.len() >= 3, "2 intervals and the final line: {out}");
    assert_eq!(docs.last().unwrap()["final"], true);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Run status group 0 (all jobs):") && err.contains("Starting 1 process"),
        "the report and the job headers on stderr: {err}"
    );
    // The whole line, through jq.
    let have_jq = std::process::Command::new("jq")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_jq {
        assert_ne!(
            std::env::var("IOBENCH_REQUIRE_FIO").as_deref(),
            Ok("1"),
            "jq is not installed but IOBENCH_REQUIRE_FIO=1: install it (apt-get install -y jq)"
        );
        eprintln!("jq not installed: the README's line was checked without it");
        return;
    }
    let o = std::process::Command::new("bash")
        .args(["-o", "pipefail", "-c", command])
        .current_dir(&dir)
        .env("PATH", &path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    let values: Vec<&str> = out.lines().collect();
    assert!(values.len() >= 3, "{out}");
    assert!(
        values[0].parse::<f64>().is_ok_and(|v| v > 0.0),
        "the first second's IOPS: {out}"
    );
    assert!(!err.contains("parse error"), "jq read every line: {err}");
}
