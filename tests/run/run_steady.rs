//! Steady state (`steadystate`, `steadystate_duration`, `steadystate_ramp_time`): a job
//! whose throughput holds still ends early, as with fio, and both tools report the window
//! with the same JSON keys and the same `steadystate  :` line.

use crate::common;

use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

fn json_of(mut cmd: Command, args: &[&str]) -> Value {
    cmd.args(args).arg("--output-format=json");
    let out = common::run_ok(cmd);
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// Every key path below `v`, with the JSON type at it.
fn shape(v: &Value, path: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                shape(v, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(a) => {
            out.insert(format!("{path}[] array of {}", a.len()));
        }
        Value::Number(n) if n.is_f64() => {
            out.insert(format!("{path}: float"));
        }
        Value::Number(_) => {
            out.insert(format!("{path}: int"));
        }
        Value::String(_) => {
            out.insert(format!("{path}: string"));
        }
        other => {
            out.insert(format!("{path}: {other:?}"));
        }
    }
}

/// The window's IOPS samples of a `steadystate` object.
fn iops_samples(ss: &Value) -> Vec<u64> {
    ss["data"]["iops"]
        .as_array()
        .expect("iops array")
        .iter()
        .map(|v| v.as_u64().expect("integer sample"))
        .collect()
}

const STEADY: &[&str] = &[
    "--name=ss",
    "--ioengine=null",
    "--rw=randread",
    "--size=1g",
    "--time_based",
    "--runtime=30",
    "--rate_iops=1000",
    "--steadystate=iops:20%",
    "--steadystate_duration=2",
];

#[test]
fn a_steady_job_ends_early_with_fios_steadystate_section() {
    let ours = json_of(common::iobench(), STEADY);
    let job = &ours["jobs"][0];
    let ss = &job["steadystate"];
    assert_eq!(ss["attained"], 1, "{ss}");
    assert_eq!(ss["ss"], "iops:20.000000%");
    assert_eq!(ss["duration"], 2);
    // Without steady state the job would run its 30 s.
    let runtime = job["read"]["runtime"].as_u64().unwrap();
    assert!(runtime < 15_000, "ran {runtime} ms");
    let iops = iops_samples(ss);
    assert_eq!(iops.len(), 2);
    for v in &iops {
        assert!((600..=1400).contains(v), "samples {iops:?}");
    }
    let Some(fio) = common::fio() else {
        return;
    };
    let theirs = json_of(fio, STEADY);
    let (mut a, mut b) = (BTreeSet::new(), BTreeSet::new());
    shape(&ours["jobs"][0]["steadystate"], "", &mut a);
    shape(&theirs["jobs"][0]["steadystate"], "", &mut b);
    assert_eq!(a, b);
    assert_eq!(theirs["jobs"][0]["steadystate"]["attained"], 1);
}

#[test]
fn a_group_is_judged_on_its_summed_samples_after_the_ramp() {
    // bw_slope:1 (one byte per second) is never met; the window is not full when the
    // 4 s job ends: sampling starts one second after the 1 s ramp, so about two samples
    // of the two clones' summed rate (one clone alone would give half), then zeros.
    let args = [
        "--name=ss",
        "--ioengine=null",
        "--rw=randread",
        "--size=1g",
        "--time_based",
        "--runtime=4",
        "--rate_iops=1000",
        "--numjobs=2",
        "--group_reporting",
        "--steadystate=bw_slope:1",
        "--steadystate_duration=3",
        "--steadystate_ramp_time=1",
    ];
    let mut tools = vec![("iobench", common::iobench())];
    if let Some(f) = common::fio() {
        tools.push(("fio", f));
    }
    for (name, tool) in tools {
        let v = json_of(tool, &args);
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 1, "{name}: one group report");
        let ss = &jobs[0]["steadystate"];
        assert_eq!(ss["attained"], 0, "{name}: {ss}");
        let iops = iops_samples(ss);
        assert_eq!(iops.len(), 3, "{name}: {iops:?}");
        // Samples first (one or two, as the host's scheduling lets the ticks fall), then
        // the zeros of the window's empty places.
        let taken = iops.iter().take_while(|&&v| v > 0).count();
        assert!(taken >= 1, "{name}: {iops:?}");
        assert!(iops[taken..].iter().all(|&v| v == 0), "{name}: {iops:?}");
        // Each clone runs at 1000 IOPS: the group's samples are their sum, about 2000
        // (one clone alone would give about 1000). On a loaded host a sample may cover
        // part of a second or a paced clone's catch-up, so one of them straying low is
        // allowed; the largest must show the sum and none may exceed it by much.
        let most = iops[..taken].iter().copied().max().unwrap_or(0);
        assert!(
            (1500..=2600).contains(&most),
            "{name}: summed samples {iops:?}"
        );
        assert!(
            iops[..taken].iter().all(|&v| v <= 2600),
            "{name}: summed samples {iops:?}"
        );
    }
}

/// The `steadystate  :` line with its numbers blanked.
fn steady_line(mut cmd: Command) -> String {
    cmd.args(STEADY);
    let out = common::run_ok(cmd);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line = text
        .lines()
        .find(|l| l.starts_with("  steadystate  :"))
        .unwrap_or_else(|| panic!("no steadystate line in:\n{text}"))
        .to_string();
    line.chars()
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect::<String>()
        .replace("99", "9")
        .replace("99", "9")
        .replace("99", "9")
}

#[test]
fn the_normal_report_has_fios_steadystate_line() {
    let ours = steady_line(common::iobench());
    assert!(
        ours.starts_with("  steadystate  : attained=yes, bw="),
        "{ours}"
    );
    assert!(ours.contains(", iops mean dev=9.9%"), "{ours}");
    if let Some(fio) = common::fio() {
        let theirs = steady_line(fio);
        // Units may differ with the measured values; the labels may not.
        let labels = |s: &str| -> Vec<String> {
            s.split([',', ' '])
                .filter_map(|w| w.split_once('=').map(|(k, _)| k.to_string()))
                .collect()
        };
        assert_eq!(labels(&ours), labels(&theirs), "{ours}\n{theirs}");
    }
}

#[test]
fn jobs_of_a_group_must_agree_on_steady_state() {
    let args = [
        "--name=a",
        "--ioengine=null",
        "--size=1m",
        "--steadystate=iops:5%",
        "--steadystate_duration=2",
        "--name=b",
        "--ioengine=null",
        "--size=1m",
    ];
    let mut c = common::iobench();
    c.args(args);
    let out = common::run(c);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("job 'b' rejected: steadystate"), "{err}");
    if let Some(mut f) = common::fio() {
        f.args(args);
        assert!(!common::run(f).status.success(), "fio refuses it too");
    }
    // In a group of their own (stonewall), they may differ.
    let mut c = common::iobench();
    c.args(&args[..5])
        .args(["--name=b", "--stonewall", "--ioengine=null", "--size=1m"]);
    common::run_ok(c);
}
