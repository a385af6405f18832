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

/// `--repeat 3`: each repeat keeps its own JSON, the points' order alternates between
/// repeats, and the index and table give mean ± σ and min-max over the repeats.
#[test]
fn repeats_keep_each_run_and_summarise_the_spread() {
    let dir = scratch("sweep_repeat");
    let out = dir.join("res");
    let mut cmd = iobench();
    cmd.args(["sweep", "--repeat", "3", "--axis", "bs=4k,8k", "-o"])
        .arg(&out)
        .args(["--name=r", "--ioengine=null", "--size=256k", "--rw=read"]);
    let o = run_ok(cmd);
    let err = String::from_utf8_lossy(&o.stderr);
    // Forward, backward, forward; progress says which run of how many.
    let order: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("(repeat "))
        .map(|l| if l.contains("bs=4k") { "4k" } else { "8k" })
        .collect();
    assert_eq!(order, ["4k", "8k", "8k", "4k", "4k", "8k"], "{err}");
    assert!(
        err.contains("sweep: point 1/6 bs=4k (repeat 1/3) (elapsed "),
        "{err}"
    );
    assert!(err.contains("sweep: point 6/6 bs=8k (repeat 3/3)"), "{err}");
    assert!(err.contains("ETA "), "{err}");
    let index = read_json(&out.join("index.json"));
    for p in index["points"].as_array().unwrap() {
        let runs = p["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 3);
        let mut sum = 0.0;
        for (i, r) in runs.iter().enumerate() {
            assert_eq!(r["repeat"], i + 1);
            assert_eq!(r["failed"], false);
            let f = read_json(&out.join(r["file"].as_str().unwrap()));
            assert_eq!(
                f["jobs"][0]["read"]["iops"].as_f64(),
                r["read"]["iops"].as_f64()
            );
            sum += r["read"]["iops"].as_f64().unwrap();
        }
        let read = &p["read"];
        assert_eq!(read["n"], 3);
        let mean = read["iops"].as_f64().unwrap();
        assert!(
            (mean - sum / 3.0).abs() < 1e-6 * mean,
            "the mean of the runs"
        );
        let s = &read["spread"]["iops"];
        assert!(s["min"].as_f64() <= Some(mean) && Some(mean) <= s["max"].as_f64());
        assert!(s["sd"].as_f64().unwrap() >= 0.0);
    }
    assert!(out.join("bs=8k.r2.json").exists());
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("read IOPS min-max") && table.contains(" ± "),
        "{table}"
    );
    let csv = std::fs::read_to_string(out.join("index.csv")).unwrap();
    assert!(csv.lines().nth(1).unwrap().contains(",3,"), "{csv}");
}

/// bs=1000 with O_DIRECT fails with EINVAL; fio's JSON of it says iops=1000 for its one
/// failed I/O. The point is marked failed in the table, the CSV and the JSON, with the
/// error and the reason, and no number of it is an IOPS value.
#[test]
fn a_failed_point_is_marked_failed_everywhere_with_its_error() {
    let dir = scratch("sweep_einval");
    let out = dir.join("res");
    let data = dir.join("data");
    let mut cmd = iobench();
    cmd.args(["sweep", "--axis", "bs=4k,1000", "-o"])
        .arg(&out)
        .arg("--")
        .args(["--name=e", "--ioengine=psync", "--direct=1", "--rw=read"])
        .arg(format!("--filename={}", data.display()))
        .args(["--size=256k", "--number_ios=8"]);
    let o = run(cmd);
    assert_eq!(o.status.code(), Some(1));
    let index = read_json(&out.join("index.json"));
    let pts = index["points"].as_array().unwrap();
    assert_eq!(pts[0]["failed"], false);
    let p = &pts[1];
    assert_eq!(p["status"], "failed");
    assert_eq!(p["error"], 22, "{p}");
    assert!(
        p["reason"].as_str().unwrap().contains("Invalid argument"),
        "{p}"
    );
    assert!(p.get("read").is_none(), "no value of a failed point: {p}");
    assert!(p["runs"][0].get("read").is_none(), "{p}");
    let failed = read_json(&out.join(p["file"].as_str().unwrap()));
    assert_ne!(failed["jobs"][0]["error"], 0, "the run's JSON is kept");
    let csv = std::fs::read_to_string(out.join("index.csv")).unwrap();
    let row = csv.lines().find(|l| l.starts_with("2,1000,")).unwrap();
    assert!(row.starts_with("2,1000,,,,"), "no numbers: {row}");
    assert!(
        row.contains(",failed,") && row.contains(",true,22,"),
        "{row}"
    );
    let table = String::from_utf8_lossy(&o.stdout);
    let line = table.lines().find(|l| l.starts_with("1000")).unwrap();
    assert!(
        line.contains("failed") && line.contains("error 22") && !line.contains("1.00k"),
        "{table}"
    );
}

/// `--dry-run` times size-bound points by a short calibration run when it only reads
/// targets that exist, and otherwise says why it cannot, running nothing then.
#[test]
fn dry_run_calibrates_size_bound_points_or_says_why_not() {
    let dir = scratch("sweep_dry_calib");
    let out = dir.join("res");
    let dry = |job: &[&str]| {
        let mut cmd = iobench();
        cmd.args([
            "sweep",
            "--dry-run",
            "--repeat",
            "2",
            "--axis",
            "bs=64k,128k",
            "-o",
        ])
        .arg(&out)
        .arg("--")
        .args(job);
        String::from_utf8_lossy(&run_ok(cmd).stdout).into_owned()
    };
    let text = dry(&["--name=c", "--ioengine=null", "--rw=read", "--size=256m"]);
    assert_eq!(text.matches("by calibration)").count(), 2, "{text}");
    assert!(
        text.contains("estimated time: ") && text.contains("(2 repeats) (2 size-bound points"),
        "{text}"
    );
    assert!(!text.contains("unknown"), "{text}");
    let text = dry(&[
        "--name=c",
        "--ioengine=null",
        "--rw=randwrite",
        "--size=256m",
    ]);
    assert!(
        text.contains("estimated time: unknown") && text.contains("rw=randwrite"),
        "{text}"
    );
    let missing = dir.join("missing");
    let text = dry(&[
        "--name=c",
        "--rw=read",
        "--size=1m",
        &format!("--filename={}", missing.display()),
    ]);
    assert!(text.contains("does not exist yet"), "{text}");
    assert!(
        !missing.exists() && !out.exists(),
        "a dry run lays nothing out"
    );
}

/// `1m30s` or `4s`, as the estimates print them, in seconds.
fn duration_s(text: &str) -> f64 {
    let (m, s) = text.split_once('m').unwrap_or(("0", text));
    m.parse::<f64>().unwrap() * 60.0 + s.trim_end_matches('s').parse::<f64>().unwrap()
}

/// The dry run's estimate, and the one the sweep itself prints before its first point,
/// are within ±30 % of the sweep's real time, for a size-bound sweep (paced by `rate`:
/// its time is its bytes at its rate, whatever the host's load) and a time-bound one
/// (`runtime`, with `ramp_time` and `startdelay`), each with repeats.
#[test]
fn estimates_are_within_30_percent_of_the_real_time() {
    let dir = scratch("sweep_estimate");
    let cases: [(&str, &[&str]); 2] = [
        (
            "bs=4k,64k",
            &["--name=s", "--ioengine=null", "--size=3m", "--rate=2m"],
        ),
        (
            "runtime=1,2",
            &[
                "--name=t",
                "--ioengine=null",
                "--size=1m",
                "--time_based",
                "--ramp_time=500ms",
                "--startdelay=250ms",
            ],
        ),
    ];
    for (k, (axis, job)) in cases.iter().enumerate() {
        let out = dir.join(format!("res{k}"));
        let sweep = |dry: bool| {
            let mut cmd = iobench();
            cmd.arg("sweep");
            if dry {
                cmd.arg("--dry-run");
            }
            cmd.args(["--repeat", "2", "--axis", axis, "-o"])
                .arg(&out)
                .arg("--")
                .args(*job);
            cmd
        };
        let o = run_ok(sweep(true));
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let dry = text
            .lines()
            .find_map(|l| l.strip_prefix("estimated time: "))
            .and_then(|l| l.split(' ').next())
            .map(duration_s)
            .unwrap_or_else(|| panic!("no estimate: {text}"));
        let t0 = std::time::Instant::now();
        let o = run_ok(sweep(false));
        let real = t0.elapsed().as_secs_f64();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let said = err
            .lines()
            .find_map(|l| l.strip_prefix("sweep: 4 runs, estimated time "))
            .map(duration_s)
            .unwrap_or_else(|| panic!("the sweep says no estimate: {err}"));
        for (what, est) in [("dry run", dry), ("sweep", said)] {
            assert!(
                est >= real * 0.7 && est <= real * 1.3,
                "{axis}: the {what}'s estimate {est} s, the sweep took {real:.2} s\n{text}{err}"
            );
        }
    }
}
