//! `thinktime_iotime` (pause after doing I/O for a while, not after N blocks) and
//! `rate_ignore_thinktime` (keep the rate through a pause instead of catching up), timed
//! from the iolog both tools write and compared with fio 3.33. Bounds are wide: only the
//! shape (where the pauses fall, how many I/Os a rate allows) is checked.

use crate::common;

use std::path::Path;
use std::process::Command;

/// A 200 IOPS time_based job pausing 0.5 s at a time (the tests add runtime and iotime).
const PACED: [&str; 7] = [
    "--ioengine=psync",
    "--size=1m",
    "--bs=4k",
    "--rw=randread",
    "--rate_iops=200",
    "--time_based",
    "--thinktime=500ms",
];

/// The issue times (µs) of every I/O `tool` logs for `args`, and its JSON report.
fn issue_times(mut tool: Command, dir: &Path, args: &[&str]) -> (Vec<u64>, serde_json::Value) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let log = dir.join("io.log");
    tool.arg("--name=j")
        .arg(format!("--filename={}", dir.join("f").display()))
        .args(args)
        .arg(format!("--write_iolog={}", log.display()))
        .arg("--output-format=json");
    let out = common::run_ok(tool);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let text = std::fs::read_to_string(&log).unwrap();
    let times = text
        .lines()
        .filter(|l| l.contains(" read ") || l.contains(" write "))
        .filter_map(|l| l.split(' ').next()?.parse().ok())
        .collect();
    (times, json)
}

/// Starts (ms from the first I/O) of the gaps longer than `min_ms` between I/Os.
fn pauses(times: &[u64], min_ms: u64) -> Vec<u64> {
    let first = times.first().copied().unwrap_or(0);
    times
        .windows(2)
        .filter(|w| w[1] - w[0] >= min_ms * 1000)
        .map(|w| (w[0] - first) / 1000)
        .collect()
}

#[test]
fn thinktime_iotime_pauses_after_io_time_as_fio() {
    // 0.5 s pauses, each after 0.5 s of I/O counted from the last pause's start: the
    // first at 1.0 s, the next at 2.0 s. Without iotime, a pause would follow every I/O.
    let mut args = PACED.to_vec();
    args.extend(["--runtime=2800ms", "--thinktime_iotime=500ms"]);
    let base = common::scratch("thinktime_iotime");
    let (ours, _) = issue_times(common::iobench(), &base.join("iobench"), &args);
    let p = pauses(&ours, 300);
    assert_eq!(p.len(), 2, "pauses at {p:?} ms");
    assert!((900..=1150).contains(&p[0]), "first pause at {} ms", p[0]);
    assert!((1900..=2200).contains(&p[1]), "second pause at {} ms", p[1]);
    if let Some(fio) = common::fio() {
        let (theirs, _) = issue_times(fio, &base.join("fio"), &args);
        let q = pauses(&theirs, 300);
        assert_eq!(p.len(), q.len(), "fio paused at {q:?} ms, iobench at {p:?}");
        for (a, b) in p.iter().zip(&q) {
            assert!(
                a.abs_diff(*b) < 200,
                "fio paused at {q:?} ms, iobench at {p:?}"
            );
        }
    }
}

#[test]
fn rate_ignore_thinktime_keeps_the_rate_through_pauses_as_fio() {
    // 200 IOPS for 3 s with a 0.5 s pause after each 1 s of I/O (pause at 1.5 s). By
    // default the job catches up after the pause (about 600 I/Os); ignoring thinktime it
    // does not (about 500).
    let run = |tool: Command, dir: &Path, ignore: bool| {
        let mut args = PACED.to_vec();
        args.extend(["--runtime=3", "--thinktime_iotime=1"]);
        if ignore {
            args.push("--rate_ignore_thinktime=1");
        }
        let (times, json) = issue_times(tool, dir, &args);
        let n = json["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
        // Where the time went, for a failure: the pauses and the first issue times.
        let first: Vec<u64> = times.iter().take(12).map(|t| t / 1000).collect();
        let why = format!(
            "pauses at {:?} ms; first issues at {first:?} ms",
            pauses(&times, 300)
        );
        (n, why)
    };
    let base = common::scratch("rate_ignore_thinktime");
    let (caught_up, why) = run(common::iobench(), &base.join("a"), false);
    assert!(
        (560..=640).contains(&caught_up),
        "{caught_up} I/Os catching up: {why}"
    );
    let (kept, why) = run(common::iobench(), &base.join("b"), true);
    assert!(
        (460..=540).contains(&kept),
        "{kept} I/Os keeping the rate: {why}"
    );
    if let Some(fio) = common::fio() {
        let (theirs, _) = run(fio, &base.join("c"), true);
        assert!(
            kept.abs_diff(theirs) <= 30,
            "fio {theirs} I/Os, iobench {kept}"
        );
    }
}
