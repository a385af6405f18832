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

/// True when jq is installed; else says so (`then`: what the test does without it), and
/// fails under IOBENCH_REQUIRE_FIO=1 (CI installs it).
fn have_jq(then: &str) -> bool {
    let found = std::process::Command::new("jq")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert_ne!(
            std::env::var("IOBENCH_REQUIRE_FIO").as_deref(),
            Ok("1"),
            "jq is not installed but IOBENCH_REQUIRE_FIO=1: install it (apt-get install -y jq)"
        );
        eprintln!("jq not installed: {then}");
    }
    found
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
    if !have_jq("the README's line was checked without it") {
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
    // Two whole seconds of a 2.5 s run; the final remainder line is skipped by the
    // README's `select(.final | not)`, so no value is a partial second's (or a 0).
    assert!(values.len() >= 2, "{out}");
    assert!(
        values
            .iter()
            .all(|v| v.parse::<f64>().is_ok_and(|v| v > 0.0)),
        "every second's IOPS: {out}"
    );
    assert!(!err.contains("parse error"), "jq read every line: {err}");
}

/// Runs `args` (an iobench study with `--live=-`) through `jq -c .` in bash with
/// pipefail: jq must read every stdout line as JSON. Keeps jq's lines in `keep`; returns
/// them, and iobench's stderr.
fn study_through_jq(
    dir: &std::path::Path,
    args: &[String],
    keep: &std::path::Path,
) -> (Vec<Value>, String) {
    let bin = env!("CARGO_BIN_EXE_iobench");
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let err_file = dir.join("stderr.txt");
    let line = format!(
        "{bin} {} 2>'{}' | jq -c . | tee '{}'",
        quoted.join(" "),
        err_file.display(),
        keep.display()
    );
    let o = std::process::Command::new("bash")
        .args(["-o", "pipefail", "-c", &line])
        .current_dir(dir)
        .output()
        .unwrap();
    let err = std::fs::read_to_string(&err_file).unwrap_or_default();
    assert!(
        o.status.success(),
        "{line}\n{err}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let docs = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("jq printed {l}: {e}")))
        .collect();
    (docs, err)
}

/// `sweep … --live=-` and `compare … --live=-`: stdout holds the JSON Lines alone (jq
/// reads every line), each saying which point (sweep) or side and run (compare) it is
/// from; the tables and the progress are on stderr; and the lines still validate against
/// the published live-line schema.
#[test]
fn studies_put_their_live_lines_alone_on_stdout() {
    if !have_jq("skipped") {
        return;
    }
    let dir = scratch("live_studies");
    let job = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "--name=s",
            "--ioengine=null",
            "--rw=randread",
            "--size=1g",
            "--runtime=1200ms",
            "--time_based",
            "--live=-",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    // A sweep of two points.
    let mut args: Vec<String> = ["sweep", "--axis", "bs=4k,64k", "-o", "sw"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(job(&[]));
    let jsonl = dir.join("sweep.jsonl");
    let (docs, err) = study_through_jq(&dir, &args, &jsonl);
    assert!(docs.len() >= 4, "two points, 2+ lines each: {docs:?}");
    for d in &docs {
        let s = &d["iobench_study"];
        assert_eq!(s["kind"], "sweep", "{d}");
        assert!(s["point"]["bs"] == "4k" || s["point"]["bs"] == "64k", "{d}");
        assert_eq!(s["runs"], 2, "{d}");
    }
    let finals: Vec<&Value> = docs.iter().filter(|d| d["final"] == true).collect();
    assert_eq!(finals.len(), 2, "one final line per point");
    assert_ne!(
        finals[0]["iobench_study"]["point"],
        finals[1]["iobench_study"]["point"]
    );
    assert!(
        err.contains("sweep: point 1/2") && err.contains("IOPS"),
        "the progress and the table on stderr: {err}"
    );
    // A comparison of two sides, two runs each (run in turn: A B A B).
    let mut args: Vec<String> = ["compare", "--repeat", "2", "--"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(job(&["--bs=4k"]));
    args.push("--".into());
    args.extend(job(&["--bs=16k"]));
    let jsonl2 = dir.join("compare.jsonl");
    let (docs, err) = study_through_jq(&dir, &args, &jsonl2);
    assert!(docs.len() >= 8, "four runs, 2+ lines each: {docs:?}");
    let mut side_of_run: Vec<Option<String>> = vec![None; 4];
    for d in &docs {
        let s = &d["iobench_study"];
        assert_eq!(s["kind"], "compare", "{d}");
        assert_eq!(s["warmup"], false, "{d}");
        assert_eq!(s["runs"], 4, "{d}");
        let run = s["run"].as_u64().unwrap() as usize;
        let side = s["side"].as_str().unwrap().to_string();
        let seen = side_of_run[run - 1].get_or_insert_with(|| side.clone());
        assert_eq!(*seen, side, "one side per run: {d}");
        assert_eq!(s["repeat"], (run as u64).div_ceil(2), "{d}");
    }
    let sides: Vec<String> = side_of_run.into_iter().map(Option::unwrap).collect();
    assert!(sides[0].contains("4k") && sides[2] == sides[0], "{sides:?}");
    assert!(
        sides[1].contains("16k") && sides[3] == sides[1],
        "{sides:?}"
    );
    assert_eq!(docs.iter().filter(|d| d["final"] == true).count(), 4);
    assert!(err.contains("IOPS"), "the tables on stderr: {err}");
    let (status, verr) =
        crate::output_contract::validate(&[("live-line", vec![jsonl.clone(), jsonl2.clone()])]);
    if crate::output_contract::have_validator(&verr) {
        assert_eq!(status, 0, "{verr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
