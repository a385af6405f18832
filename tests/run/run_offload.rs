//! io_submit_mode=offload: the job hands its I/O to a pool of submitter threads, as fio
//! does, so the thread that opened the file is not the one that reads it; the job keeps
//! its rate; an asynchronous engine works too, one I/O per submitter at a time.
//!
//! No side-by-side run with fio here: fio 3.33's offload mode hangs at the end of the
//! job on this machine (every run on a freshly laid-out file, some others), leaving a
//! stray worker process behind.

use crate::common;

use std::path::Path;
use std::process::Command;

/// Thread ids that opened `file` and that read with pread64, from strace -f.
fn open_and_read_tids(tool: Command, dir: &Path, tag: &str, args: &[&str]) -> (Vec<u32>, Vec<u32>) {
    let log = dir.join(format!("{tag}.strace"));
    let file = dir.join("data");
    let mut c = Command::new("strace");
    c.args(["-f", "-qq", "-e", "trace=openat,pread64", "-o"])
        .arg(&log)
        .arg(tool.get_program())
        .args(tool.get_args())
        .args(["--name=o", "--ioengine=psync", "--size=1m", "--rw=randread"])
        .arg(format!("--filename={}", file.display()))
        .args(args);
    common::run_ok(c);
    let text = std::fs::read_to_string(&log).expect("strace log");
    let name = file.to_string_lossy().to_string();
    let tid = |l: &str| {
        l.split_whitespace()
            .next()
            .and_then(|t| t.parse::<u32>().ok())
    };
    let mut opens: Vec<u32> = text
        .lines()
        .filter(|l| l.contains("openat(") && l.contains(&name) && l.contains("O_RDONLY"))
        .filter_map(tid)
        .collect();
    let mut reads: Vec<u32> = text
        .lines()
        .filter(|l| l.contains("pread64("))
        .filter_map(tid)
        .collect();
    opens.sort_unstable();
    opens.dedup();
    reads.sort_unstable();
    reads.dedup();
    (opens, reads)
}

fn have_strace() -> bool {
    let found = Command::new("strace").arg("-V").output().is_ok();
    if !found && std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
        panic!("strace is not installed but IOBENCH_REQUIRE_FIO=1");
    }
    found
}

// Time-based and rate-limited, as offload is meant to be used.
const OFFLOAD: &[&str] = &[
    "--io_submit_mode=offload",
    "--iodepth=4",
    "--time_based",
    "--runtime=1",
    "--rate_iops=500",
];

#[test]
fn submitter_threads_do_the_io_not_the_job_thread() {
    if !have_strace() {
        return;
    }
    let dir = common::scratch("offload_tids");
    let (opens, reads) = open_and_read_tids(common::iobench(), &dir, "ours", OFFLOAD);
    assert_eq!(opens.len(), 1, "{opens:?}");
    assert!(!reads.is_empty());
    assert!(
        !reads.contains(&opens[0]),
        "the job thread read: {opens:?} {reads:?}"
    );
    // Inline (the default), the job thread reads itself.
    let (opens, reads) = open_and_read_tids(common::iobench(), &dir, "inline", &["--size=64k"]);
    assert!(reads.contains(&opens[0]), "{opens:?} {reads:?}");
}

#[test]
fn an_offloaded_job_keeps_its_rate() {
    let dir = common::scratch("offload_rate");
    let mut c = common::iobench();
    c.args(["--name=o", "--ioengine=psync", "--size=4m", "--rw=randrw"])
        .arg(format!("--filename={}", dir.join("data").display()))
        .args(OFFLOAD)
        .args(["--runtime=2", "--output-format=json"]);
    let out = common::run_ok(c);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let j = &v["jobs"][0];
    let ios = j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap();
    // 500 IOPS per direction for 2 s.
    assert!((1600..=2200).contains(&ios), "{ios} I/Os");
    assert_eq!(j["error"], 0);
}

#[test]
fn an_asynchronous_engine_is_driven_one_io_per_submitter() {
    // fio's examples (fixed-rate-submission.fio) offload libaio: each submitter has its
    // own context and waits for its I/O.
    if !have_strace() {
        return;
    }
    let dir = common::scratch("offload_aio");
    let log = dir.join("aio.strace");
    let mut c = Command::new("strace");
    c.args(["-f", "-qq", "-e", "trace=io_submit", "-o"])
        .arg(&log)
        .arg(common::iobench().get_program())
        .args([
            "--name=o",
            "--ioengine=libaio",
            "--size=1m",
            "--rw=randread",
        ])
        .arg(format!("--filename={}", dir.join("data").display()))
        .args(OFFLOAD);
    common::run_ok(c);
    let text = std::fs::read_to_string(&log).expect("strace log");
    let submits: Vec<&str> = text.lines().filter(|l| l.contains("io_submit(")).collect();
    assert!(submits.len() > 100, "{} io_submit calls", submits.len());
    assert!(
        submits.iter().all(|l| l.contains(", 1, [")),
        "one I/O per submit"
    );
}

#[test]
fn file_engines_are_refused_since_their_timing_would_be_lost() {
    let dir = common::scratch("offload_filecreate");
    let mut c = common::iobench();
    c.args([
        "--name=fc",
        "--ioengine=filecreate",
        "--nrfiles=4",
        "--filesize=4k",
    ])
    .arg(format!("--directory={}", dir.display()))
    .arg("--io_submit_mode=offload");
    let out = common::run(c);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("io_submit_mode") && err.contains("filecreate"),
        "{err}"
    );
}
