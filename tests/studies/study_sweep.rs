//! `iobench sweep`: each point equals a plain run of the job with the point's settings
//! (counts, options, the iolog offset for offset), the index matches the point files,
//! resuming skips what is done, and bad sweeps are refused before anything runs.

use crate::common;
use common::{iobench, run, run_ok, scratch};
use serde_json::Value;
use std::path::Path;

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The last log of an iolog file (a log written again is appended to), without its
/// header and its time column.
fn iolog(p: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(p).unwrap();
    let last = text.rsplit("fio version 3 iolog\n").next().unwrap();
    last.lines()
        .map(|l| l.split_once(' ').map_or(l, |x| x.1).to_string())
        .collect()
}

fn job_args(dir: &Path) -> Vec<String> {
    vec![
        "--name=j".into(),
        "--ioengine=psync".into(),
        format!("--filename={}", dir.join("data").display()),
        "--size=1m".into(),
        "--number_ios=64".into(),
    ]
}

#[test]
fn each_point_equals_a_plain_run() {
    let dir = scratch("sweep_points");
    let out = dir.join("res");
    let logs: Vec<String> = (0..4)
        .map(|i| dir.join(format!("sweep{i}.log")).display().to_string())
        .collect();
    let mut cmd = iobench();
    cmd.arg("sweep")
        .args(["--axis", "bs=4k,16k", "--axis", "rw=randread,randwrite"])
        .arg(format!("--zip=write_iolog={}|{}", logs[0], logs[1]))
        .arg("-o")
        .arg(&out)
        .arg("--")
        .args(job_args(&dir));
    // The zip above belongs to rw (2 values): each bs gets the same two log paths, so the
    // second bs's logs overwrite the first's; compare the 16k points.
    let o = run_ok(cmd);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("bs") && table.contains("read IOPS") && table.contains("write IOPS"),
        "{table}"
    );
    let index = read_json(&out.join("index.json"));
    let points = index["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for (k, (bs, rw)) in [("16k", "randread"), ("16k", "randwrite")]
        .iter()
        .enumerate()
    {
        let point = points
            .iter()
            .find(|p| p["params"]["bs"] == *bs && p["params"]["rw"] == *rw)
            .unwrap();
        assert_eq!(point["status"], "ok");
        let file = out.join(point["file"].as_str().unwrap());
        let swept = read_json(&file);
        // The same job as a plain run, the point's settings given as options.
        let plain_log = dir.join(format!("plain{k}.log"));
        let mut cmd = iobench();
        cmd.args(job_args(&dir))
            .arg(format!("--bs={bs}"))
            .arg(format!("--rw={rw}"))
            .arg(format!("--write_iolog={}", plain_log.display()))
            .arg("--output-format=json+");
        let plain: Value = serde_json::from_slice(&run_ok(cmd).stdout).unwrap();
        let (a, b) = (&swept["jobs"][0], &plain["jobs"][0]);
        for d in ["read", "write"] {
            for key in ["total_ios", "io_bytes", "short_ios"] {
                assert_eq!(a[d][key], b[d][key], "{bs} {rw} {d} {key}");
            }
        }
        assert_eq!(a["job options"]["bs"], *bs);
        assert_eq!(a["job options"]["rw"], *rw);
        assert!(
            a["read"]["clat_ns"].get("bins").is_some()
                || a["write"]["clat_ns"].get("bins").is_some(),
            "a point's result is JSON+"
        );
        assert_eq!(
            iolog(Path::new(&logs[k])),
            iolog(&plain_log),
            "{bs} {rw}: iolog offsets"
        );
        // The index carries the point file's numbers.
        let d = if *rw == "randread" { "read" } else { "write" };
        assert_eq!(point[d]["total_ios"], a[d]["total_ios"]);
        assert_eq!(point[d]["iops"].as_f64(), a[d]["iops"].as_f64());
    }
    // The sweep records where it ran: the machine and the target's filesystem.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(index["iobench_env"]["hostname"], host.trim());
    assert_eq!(index["iobench_env"]["targets"].as_array().unwrap().len(), 1);
    let csv = std::fs::read_to_string(out.join("index.csv")).unwrap();
    assert!(
        csv.starts_with("point,bs,rw,write_iolog,dir,iops,"),
        "{csv}"
    );
    assert_eq!(
        csv.lines().count(),
        5,
        "a header and one row per point: {csv}"
    );
}

#[test]
fn resume_skips_points_done_and_refuses_another_sweep() {
    let dir = scratch("sweep_resume");
    let out = dir.join("res");
    let sweep = |extra: &[&str], axis: &str| {
        let mut cmd = iobench();
        cmd.arg("sweep")
            .args(["--axis", axis])
            .arg("-o")
            .arg(&out)
            .args(extra);
        cmd.args(["--name=n", "--ioengine=null", "--size=1m", "--rw=randread"]);
        run(cmd)
    };
    let first = sweep(&[], "bs=4k,8k,16k");
    assert!(first.status.success());
    let second = sweep(&[], "bs=4k,8k,16k");
    assert!(second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(err.matches("done before, skipped").count(), 3, "{err}");
    std::fs::remove_file(out.join("bs=8k.json")).unwrap();
    let third = sweep(&[], "bs=4k,8k,16k");
    let err = String::from_utf8_lossy(&third.stderr);
    assert_eq!(err.matches("done before, skipped").count(), 2, "{err}");
    assert!(err.contains("point 2/3 bs=8k"), "{err}");
    assert!(out.join("bs=8k.json").exists());
    // Another sweep in the same directory is refused, and --fresh starts over.
    let other = sweep(&[], "bs=4k,32k");
    assert_eq!(other.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&other.stderr).contains("holds another sweep"));
    let fresh = sweep(&["--fresh"], "bs=4k,32k");
    assert!(
        fresh.status.success(),
        "{}",
        String::from_utf8_lossy(&fresh.stderr)
    );
    assert!(
        !out.join("bs=8k.json").exists(),
        "--fresh removes the old sweep's points"
    );
    let index = read_json(&out.join("index.json"));
    assert_eq!(index["points"].as_array().unwrap().len(), 2);
}

#[test]
fn dry_run_lists_points_and_time_and_runs_nothing() {
    let dir = scratch("sweep_dry");
    let out = dir.join("res");
    let mut cmd = iobench();
    cmd.args(["sweep", "--dry-run", "--axis", "iodepth=1..64:x2", "--zip"])
        .arg("iodepth_batch_submit=1,1,1,2,4,8,16")
        .arg("-o")
        .arg(&out)
        .args([
            "--name=q",
            "--ioengine=null",
            "--size=1m",
            "--runtime=2",
            "--time_based",
            "--ramp_time=1",
        ]);
    let o = run_ok(cmd);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("7 points\n"), "{text}");
    // iodepth_batch_submit is an alias: points name options as fio's table does.
    assert!(text.contains("iodepth=8 iodepth_batch=2"), "{text}");
    assert!(
        text.contains("estimated time: 21s"),
        "7 points of 1 s ramp + 2 s: {text}"
    );
    assert!(!out.exists(), "a dry run creates nothing");
}

#[test]
fn bad_sweeps_fail_before_running_anything() {
    let dir = scratch("sweep_bad");
    let out = dir.join("res");
    let cases: &[(&[&str], &str)] = &[
        (&["--axis", "iodeph=1,2"], "'iodeph' is not an option"),
        (&["--axis", "rw=read,sideways"], "sideways"),
        (&["--axis", "bs=8..1"], "backwards"),
        (
            &["--axis", "iodepth=1,2", "--zip", "iodepth_batch_submit=1"],
            "one value per axis value",
        ),
        (&["--name=x"], "no --axis"),
    ];
    for (args, want) in cases {
        let mut cmd = iobench();
        cmd.arg("sweep").args(*args).arg("-o").arg(&out);
        cmd.args(["--name=b", "--ioengine=null", "--size=1m"]);
        let o = run(cmd);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: want '{want}' in: {err}");
        assert!(!out.exists(), "{args:?}: nothing may run");
    }
}

#[test]
fn a_failed_point_is_recorded_and_the_others_run() {
    let dir = scratch("sweep_fail");
    let out = dir.join("res");
    let good = dir.join("good");
    std::fs::create_dir_all(&good).unwrap();
    let mut cmd = iobench();
    cmd.args(["sweep", "--axis"])
        .arg(format!(
            "directory={}|/proc/iobench-no-such-dir",
            good.display()
        ))
        .arg("-o")
        .arg(&out)
        .args(["--name=f", "--rw=write", "--size=64k"]);
    let o = run(cmd);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let index = read_json(&out.join("index.json"));
    let pts = index["points"].as_array().unwrap();
    assert_eq!(pts[0]["status"], "ok");
    assert_eq!(pts[1]["status"], "failed");
    assert!(out.join(pts[0]["file"].as_str().unwrap()).exists());
}

#[test]
fn markdown_table() {
    let dir = scratch("sweep_md");
    let mut cmd = iobench();
    cmd.args(["sweep", "--markdown", "--axis", "numjobs=1..3:+1", "-o"])
        .arg(dir.join("res"))
        .args(["--name=m", "--ioengine=null", "--size=1m", "--rw=read"]);
    let o = run_ok(cmd);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("| numjobs | read IOPS |"), "{text}");
    assert_eq!(text.lines().count(), 5, "{text}");
    // numjobs=3 without group_reporting: three jobs, summed in the index.
    let index = read_json(&dir.join("res/index.json"));
    let p3 = &index["points"][2];
    let f = read_json(&dir.join("res").join(p3["file"].as_str().unwrap()));
    let ios: u64 = f["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["read"]["total_ios"].as_u64().unwrap())
        .sum();
    assert_eq!(p3["read"]["total_ios"].as_u64(), Some(ios));
}

#[test]
fn each_point_gets_its_own_live_board() {
    // The second point has more clones than the first: its interim reports must still see
    // every clone's progress (the board of shared counters is made anew for each point).
    let dir = scratch("sweep_board");
    let out = dir.join("res");
    let mut cmd = iobench();
    cmd.args(["sweep", "--axis", "numjobs=1,3", "-o"])
        .arg(&out)
        .args([
            "--name=b",
            "--ioengine=null",
            "--rw=randread",
            "--size=1g",
            "--thread",
            "--status-interval=1",
            "--runtime=2500ms",
            "--time_based",
        ]);
    run_ok(cmd);
    let text = std::fs::read_to_string(out.join("numjobs=3.json")).unwrap();
    let docs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        docs.len() >= 3,
        "interim reports and the final one: {}",
        docs.len()
    );
    let interim = &docs[docs.len() - 2];
    let jobs = interim["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3);
    for j in jobs {
        assert!(
            j["read"]["total_ios"].as_u64().unwrap() > 0,
            "every clone's progress: {j}"
        );
    }
}

/// Axis values that differ only in punctuation are different points with their own files
/// and their own numbers (they once mapped to one file, and its numbers were shown thrice).
#[test]
fn values_differing_in_punctuation_get_their_own_files() {
    let dir = scratch("sweep_punct");
    let out = dir.join("res");
    let mut cmd = iobench();
    cmd.args(["sweep", "--axis", "description=x y,x/y,x:y", "-o"])
        .arg(&out)
        .arg("--")
        .args([
            "--name=p",
            "--ioengine=null",
            "--rw=read",
            "--bs=4k",
            "--size=1m",
        ]);
    run_ok(cmd);
    let index = read_json(&out.join("index.json"));
    let files: Vec<String> = index["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["file"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(files.len(), 3);
    let mut uniq = files.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), 3, "one file per point: {files:?}");
    for (f, want) in files.iter().zip(["x y", "x/y", "x:y"]) {
        let doc = read_json(&out.join(f));
        assert_eq!(
            doc["jobs"][0]["job options"]["description"], want,
            "{f} holds its own point's run"
        );
    }
}
