//! A run that did no I/O where its jobs were to is a failure in the studies (issue 35):
//! `compare` marks such a side failed and leaves it out (exit 1, never an empty verdict
//! with 0), and `sweep` takes a point kept from before with no I/O as not done.

use crate::common;
use std::path::Path;

/// A real result of a small null job, and the same with every count zeroed (what a run
/// that measured nothing writes).
fn results(dir: &Path) -> (String, String) {
    let out = common::run_ok({
        let mut c = common::iobench();
        c.args([
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--output-format=json",
        ]);
        c
    });
    let good = dir.join("good.json");
    std::fs::write(&good, &out.stdout).unwrap();
    let mut j = common::json_report(&out);
    for d in ["read", "write", "trim"] {
        for k in [
            "io_bytes",
            "io_kbytes",
            "total_ios",
            "bw",
            "bw_bytes",
            "iops",
            "runtime",
        ] {
            if j["jobs"][0][d].get(k).is_some() {
                j["jobs"][0][d][k] = 0.into();
            }
        }
    }
    let zero = dir.join("zero.json");
    std::fs::write(&zero, j.to_string()).unwrap();
    (
        good.to_string_lossy().into_owned(),
        zero.to_string_lossy().into_owned(),
    )
}

#[test]
fn compare_marks_a_side_without_io_failed_and_leaves_it_out() {
    let dir = common::scratch("no_io_compare");
    let _gone = common::Gone(dir.clone());
    let (good, zero) = results(&dir);
    let out = common::run({
        let mut c = common::iobench();
        c.args(["compare", &good, &good, &zero]);
        c
    });
    let err = String::from_utf8_lossy(&out.stderr);
    let so = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{so}{err}");
    assert!(
        err.contains("zero.json: FAILED") && err.contains("no I/O"),
        "{err}"
    );
    assert!(
        !so.contains("zero.json"),
        "a failed side is not compared: {so}"
    );
    assert!(so.contains("good.json"), "the other sides are: {so}");
    // A gate never passes over a failed side.
    let out = common::run({
        let mut c = common::iobench();
        c.args([
            "compare",
            "--fail-if-slower",
            "5%",
            "--",
            &good,
            &good,
            "--",
            &zero,
            &zero,
        ]);
        c
    });
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot judge --fail-if-slower"), "{err}");
    // Two good sides still compare with exit 0.
    let out = common::run({
        let mut c = common::iobench();
        c.args(["compare", &good, &good]);
        c
    });
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn sweep_runs_again_a_point_kept_without_io() {
    let dir = common::scratch("no_io_sweep");
    let _gone = common::Gone(dir.clone());
    let (_, zero) = results(&dir);
    let res = dir.join("sw");
    let sweep = || {
        let mut c = common::iobench();
        c.args(["sweep", "--axis", "bs=4k", "-o"]).arg(&res).args([
            "--",
            "--name=t",
            "--ioengine=null",
            "--size=1m",
        ]);
        common::run_ok(c)
    };
    sweep();
    // The point's result replaced by one with no I/O (as the sync engines' ramp bug
    // left them): the next run of the sweep does it again instead of skipping it.
    std::fs::copy(&zero, res.join("bs=4k.json")).unwrap();
    let out = sweep();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("done before, skipped"), "{err}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("bs=4k.json")).unwrap()).unwrap();
    assert_eq!(
        j["jobs"][0]["read"]["total_ios"], 256,
        "the point ran again"
    );
}
