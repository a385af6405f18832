//! exec_prerun / exec_postrun: the commands run around the job, their output lands in
//! fio's file names, and a failing prerun stops that job (and only that job) with an error.

use crate::common;

use std::fs;

#[test]
fn prerun_and_postrun_run_in_order_and_keep_their_output() {
    let dir = common::scratch("hooks_ok");
    let data = dir.join("data");
    let mut c = common::iobench();
    c.current_dir(&dir).args([
        "--name=h",
        "--rw=write",
        "--size=64k",
        "--filename=data",
        // Files are laid out before the prerun runs, as fio does.
        "--exec_prerun=echo pre; echo to-stderr >&2; stat -c %s data",
        "--exec_postrun=echo post; stat -c %s data",
    ]);
    let out = common::run_ok(c);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let pre_note = stdout
        .find("h : Saving output of prerun in h.prerun.txt")
        .expect("prerun note");
    let post_note = stdout
        .find("h : Saving output of postrun in h.postrun.txt")
        .expect("postrun note");
    assert!(pre_note < post_note);
    assert_eq!(
        fs::read_to_string(dir.join("h.prerun.txt")).unwrap(),
        "pre\nto-stderr\n65536\n"
    );
    assert_eq!(
        fs::read_to_string(dir.join("h.postrun.txt")).unwrap(),
        "post\n65536\n"
    );
    assert_eq!(fs::metadata(&data).unwrap().len(), 65536);
}

#[test]
fn a_failing_prerun_stops_its_job_with_an_error() {
    let dir = common::scratch("hooks_fail");
    let mut c = common::iobench();
    c.current_dir(&dir).args([
        "--output-format=json",
        "--name=bad",
        "--ioengine=null",
        "--size=1m",
        "--exec_prerun=echo broken; exit 3",
        "--exec_postrun=echo never",
        "--name=good",
        "--ioengine=null",
        "--size=1m",
    ]);
    let out = common::run(c);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("job 'bad': exec_prerun 'echo broken; exit 3' failed (exit status: 3)"),
        "{stderr}"
    );
    assert_eq!(
        fs::read_to_string(dir.join("bad.prerun.txt")).unwrap(),
        "broken\n"
    );
    assert!(!dir.join("bad.postrun.txt").exists());
    // stdout stays one JSON document, and the other job still ran.
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let names: Vec<&str> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"good"), "{names:?}");
    let good = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == "good")
        .unwrap();
    assert_eq!(good["read"]["io_bytes"], 1 << 20);
}
