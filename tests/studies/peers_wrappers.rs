//! The tools that wrap fio, run with iobench in fio's place: bench-fio's sweep and
//! fio-plot's 2D and histogram charts (PyPI package fio-plot), and KDiskMark's fio command
//! lines. Both wrappers check the version first ("fio-3" in `fio --version`), then read
//! fio's JSON and logs. Outputs go under the system temp folder, never into the repository.
use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn required() -> bool {
    std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1")
}

/// A folder whose `fio` is iobench, to put first on PATH.
fn fake_fio_path(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("fio");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_iobench"), &link).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("iobench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn has(tool: &str) -> bool {
    let found = Command::new(tool)
        .arg("--help")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found || !required(),
        "{tool} is not installed (pip install fio-plot)"
    );
    found
}

/// bench-fio sweeps iodepth 1 and 2 with iobench as fio, and fio-plot draws its 2D bar
/// chart and its latency histogram from the results.
#[test]
fn bench_fio_and_fio_plot_run_on_iobench() {
    if !has("bench-fio") || !has("fio-plot") {
        return;
    }
    let dir = tmp("benchfio");
    let _gone = common::Gone(dir.clone());
    let path = fake_fio_path(&dir);
    // bench-fio writes its job file to /tmp/<target's name>-tmpjobfile.fio whatever
    // TMPDIR says: a name of this process's own, removed with the test.
    let name = format!("target-{}.dat", std::process::id());
    let _jobfile = common::Gone(format!("/tmp/{name}-tmpjobfile.fio").into());
    let target = dir.join(&name);
    std::fs::write(&target, vec![0u8; 16 << 20]).unwrap();
    let out = dir.join("out");
    let mut c = Command::new("bench-fio");
    c.env("PATH", &path)
        .args(["-d", target.to_str().unwrap(), "-t", "file", "-s", "16m"])
        .args([
            "-o",
            out.to_str().unwrap(),
            "--iodepth",
            "1",
            "2",
            "--numjobs",
            "1",
        ])
        .args([
            "-m",
            "randread",
            "--runtime",
            "1",
            "-e",
            "libaio",
            "--loginterval",
            "100",
        ]);
    let o = common::run(c);
    let log = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "bench-fio failed: {log}");
    assert!(!log.contains("Could not detect Fio version"), "{log}");
    let results = out.join(&name).join("4k");
    for depth in [1, 2] {
        let json = results.join(format!("randread-{depth}-1.json"));
        let text =
            std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{json:?}: {e}: {log}"));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(v["jobs"][0]["read"]["iops"].as_f64().unwrap() > 0.0);
        assert!(results
            .join(format!("randread-iodepth-{depth}-numjobs-1_lat.1.log"))
            .exists());
    }
    let chart = |args: &[&str], png: &str| {
        let mut c = Command::new("fio-plot");
        c.current_dir(&dir)
            .args([
                "-i",
                results.to_str().unwrap(),
                "-T",
                "iobench",
                "-r",
                "randread",
            ])
            .args(args)
            .args(["-o", dir.join(png).to_str().unwrap()]);
        let o = common::run(c);
        assert!(
            o.status.success(),
            "fio-plot {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let size = std::fs::metadata(dir.join(png))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(size > 10_000, "{png} not drawn ({size} bytes)");
    };
    chart(&["-l", "-d", "1", "2", "-n", "1"], "2d.png");
    chart(&["-H", "-d", "1", "-n", "1"], "hist.png");
}

/// KDiskMark's fio command lines: a create_only preparation, then SEQ1M Q8T1, SEQ128K
/// Q32T1, RND4K Q32T16 and RND4K Q1T1, read and write, each with libaio, direct,
/// end_fsync, refill_buffers, randrepeat=0, group_reporting and JSON; KDiskMark reads
/// `fio version` and each group's bw, iops and clat_ns.mean.
#[test]
fn kdiskmark_command_lines_run_on_iobench() {
    let dir = tmp("kdiskmark");
    let _gone = common::Gone(dir.clone());
    let file = dir.join("kdiskmark-test.tmp");
    let f = format!("--filename={}", file.display());
    let mut prep = common::iobench();
    prep.args(["--output-format=json", "--create_only=1", &f, "--size=16m"])
        .args(["--zero_buffers=0", "--name=prepare"]);
    common::run_ok(prep);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 16 << 20);
    let tests = [
        ("1024k", 8, 1, "read"),
        ("128k", 32, 1, "read"),
        ("4k", 32, 16, "randread"),
        ("4k", 1, 1, "randread"),
    ];
    for (bs, qd, threads, rw) in tests {
        for rw in [rw.to_string(), rw.replace("read", "write")] {
            let mut c = common::iobench();
            c.args([
                "--output-format=json",
                "--ioengine=libaio",
                "--randrepeat=0",
            ])
            .args([
                "--refill_buffers",
                "--end_fsync=1",
                "--direct=1",
                "--rwmixread=70",
            ])
            .args([&f, "--name=RW", "--size=16m", "--zero_buffers=0"])
            .arg(format!("--bs={bs}"))
            .args(["--runtime=1", &format!("--rw={rw}")])
            .arg(format!("--iodepth={qd}"))
            .arg(format!("--numjobs={threads}"))
            .arg("--group_reporting");
            let v = common::json_report(&common::run_ok(c));
            assert!(v["fio version"].as_str().unwrap().contains("fio-3"));
            let jobs = v["jobs"].as_array().unwrap();
            assert_eq!(
                jobs.len(),
                1,
                "group_reporting: one entry for {threads} jobs"
            );
            let d = if rw.contains("read") { "read" } else { "write" };
            let j = &jobs[0][d];
            assert!(
                j["bw"].as_u64().unwrap() > 0 && j["iops"].as_f64().unwrap() > 0.0,
                "{rw} {bs}"
            );
            assert!(j["clat_ns"]["mean"].as_f64().unwrap() > 0.0);
        }
    }
}
