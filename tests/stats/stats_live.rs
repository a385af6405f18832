//! Reports printed while the run goes: `--status-interval` (normal, and JSON as one
//! document per line) and SIGUSR1, with workers as processes and as threads. Real runs of
//! the binary on the null engine; the only timing assumed is that a 3 s run with a 1 s
//! interval prints at least 2 reports before its final one.

use crate::common;

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

fn null_job(extra: &[&str]) -> std::process::Command {
    let mut c = common::iobench();
    c.args([
        "--name=x",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=3",
    ]);
    c.args(extra);
    c
}

/// Every key path of a JSON value (`jobs.read.io_bytes`; array items share one path).
fn key_paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let p = format!("{prefix}.{k}");
                out.insert(p.clone());
                key_paths(v, &p, out);
            }
        }
        Value::Array(a) => {
            for v in a {
                key_paths(v, prefix, out);
            }
        }
        _ => {}
    }
}

/// Parses stdout as JSON Lines: every non-empty line one complete document.
fn json_lines(stdout: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(stdout);
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("line is not JSON ({e}): {l}")))
        .collect()
}

/// Feeds stdout to python3's `json.loads`, one line at a time (skipped without python3).
fn python_reads_every_line(stdout: &[u8]) {
    use std::io::Write;
    let script = "import sys, json\nn = 0\nfor l in sys.stdin:\n    if l.strip():\n        json.loads(l)\n        n += 1\nprint(n)\n";
    let Ok(mut child) = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    else {
        eprintln!("python3 not found: skipping its check");
        return;
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdout)
        .expect("feed python3");
    let out = child.wait_with_output().expect("python3");
    assert!(out.status.success(), "python3 json.loads failed on a line");
    let n: usize = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("count");
    assert!(n >= 3, "python3 read {n} documents");
}

/// `jobs[i].<dir>.io_bytes` summed over read/write/trim, per job, per document.
fn io_bytes(doc: &Value) -> Vec<u64> {
    doc["jobs"]
        .as_array()
        .expect("jobs array")
        .iter()
        .map(|j| {
            ["read", "write", "trim"]
                .iter()
                .map(|d| j[d]["io_bytes"].as_u64().expect("io_bytes"))
                .sum()
        })
        .collect()
}

fn assert_monotonic(docs: &[Value]) {
    let series: Vec<Vec<u64>> = docs.iter().map(io_bytes).collect();
    for w in series.windows(2) {
        assert_eq!(w[0].len(), w[1].len(), "same jobs in every report");
        for (a, b) in w[0].iter().zip(&w[1]) {
            assert!(a <= b, "io bytes went down between reports: {series:?}");
        }
    }
}

#[test]
fn status_interval_json_is_one_document_per_line_with_the_final_keys() {
    for mode in [&[][..], &["--thread"][..]] {
        let mut args = vec!["--status-interval=1", "--output-format=json"];
        args.extend_from_slice(mode);
        let out = common::run_ok(null_job(&args));
        let docs = json_lines(&out.stdout);
        assert!(
            docs.len() >= 3,
            "{mode:?}: expected 2+ interim reports and the final one, got {}",
            docs.len()
        );
        let last = docs.last().expect("final report");
        let mut want = BTreeSet::new();
        key_paths(last, "", &mut want);
        for d in &docs {
            let mut got = BTreeSet::new();
            key_paths(d, "", &mut got);
            assert_eq!(
                got, want,
                "{mode:?}: interim keys differ from the final report's"
            );
        }
        assert_monotonic(&docs);
        python_reads_every_line(&out.stdout);
        // Runtime and latency samples grow between the first and the final report.
        let field = |d: &Value, path: &[&str]| {
            path.iter()
                .fold(&d["jobs"][0], |v, k| &v[*k])
                .as_u64()
                .unwrap_or_else(|| panic!("{path:?} in {d}"))
        };
        for path in [
            &["job_runtime"][..],
            &["read", "clat_ns", "N"],
            &["read", "lat_ns", "N"],
        ] {
            let (a, b) = (field(&docs[0], path), field(last, path));
            assert!(0 < a && a < b, "{mode:?}: {path:?} first {a}, final {b}");
        }
        let first = io_bytes(&docs[0])[0];
        assert!(first > 0, "{mode:?}: the first report saw no I/O");
        assert!(
            first < io_bytes(last)[0],
            "{mode:?}: interim report is not interim"
        );
    }
}

#[test]
fn status_interval_normal_prints_full_reports_as_it_goes() {
    for mode in [&["--thread"][..], &[][..]] {
        let mut args = vec!["--status-interval=1"];
        args.extend_from_slice(mode);
        let out = common::run_ok(null_job(&args));
        let text = String::from_utf8_lossy(&out.stdout);
        let reports = text.matches("Run status group 0 (all jobs):").count();
        assert!(reports >= 3, "{mode:?}: {reports} reports:\n{text}");
        assert_eq!(
            text.matches("x: (groupid=0, jobs=1): err= 0:").count(),
            reports,
            "{mode:?}: every report has the job's block:\n{text}"
        );
        let ios: Vec<u64> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("issued rwts: total="))
            .map(|l| l.split(',').next().unwrap_or("0").parse().expect("count"))
            .collect();
        assert_eq!(ios.len(), reports);
        assert!(ios.windows(2).all(|w| w[0] <= w[1]), "{mode:?}: {ios:?}");
        // The header is printed once.
        assert_eq!(text.matches("Starting 1 ").count(), 1, "{text}");
    }
}

#[test]
fn later_groups_are_listed_with_nothing_done_until_they_run() {
    let out = common::run_ok({
        let mut c = common::iobench();
        c.args([
            "--status-interval=1",
            "--output-format=json",
            "--name=a",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=2",
            "--name=b",
            "--stonewall",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=2",
        ]);
        c
    });
    let docs = json_lines(&out.stdout);
    assert!(docs.len() >= 3, "{} reports", docs.len());
    assert_monotonic(&docs);
    let first = io_bytes(&docs[0]);
    assert_eq!(first.len(), 2, "both jobs listed from the first report");
    assert_eq!(first[1], 0, "job b has not started in the first report");
    assert!(io_bytes(docs.last().expect("final"))[1] > 0);
}

/// Runs a 4 s job, sends SIGUSR1 after `after`, and returns its output.
fn with_usr1(args: &[&str]) -> std::process::Output {
    let mut c = null_job(args);
    c.args(["--runtime=4"]);
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iobench");
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: signals the child we spawned and have not reaped.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGUSR1) };
    assert_eq!(r, 0, "kill -USR1");
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_end(&mut stdout)
        .expect("read stdout");
    let out = child.wait_with_output().expect("wait");
    std::process::Output { stdout, ..out }
}

#[test]
fn sigusr1_prints_the_results_so_far_and_the_run_goes_on() {
    for mode in [&[][..], &["--thread"][..]] {
        let mut args = vec!["--output-format=json"];
        args.extend_from_slice(mode);
        let out = with_usr1(&args);
        assert!(
            out.status.success(),
            "{mode:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        // The interim report is one line; the final one keeps fio's layout.
        let first = text.lines().next().expect("output");
        let interim: Value = serde_json::from_str(first).expect("interim report on one line");
        let rest = &text[first.len()..];
        let fin: Value = serde_json::from_str(rest).expect("final report");
        let (a, b) = (io_bytes(&interim)[0], io_bytes(&fin)[0]);
        assert!(0 < a && a < b, "{mode:?}: interim {a}, final {b}");
        assert!(fin["jobs"][0]["job_runtime"].as_u64().expect("runtime") >= 4000);
    }
    let out = with_usr1(&["--thread"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.matches("Run status group 0 (all jobs):").count(),
        2,
        "{text}"
    );
}
