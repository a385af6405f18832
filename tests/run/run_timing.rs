//! Statistical timing checks through the binary: `rate` holds the asked bandwidth,
//! `rate_iops` the asked IOPS, and I/O done during `ramp_time` is not counted. Rates are
//! exact in fio's pacing model, so the tolerances are tight (±3%) and the runs short.

use crate::common;

use serde_json::Value;

/// The first job's JSON section for direction `dir` from `--name=x <args>`.
fn run_json(args: &[&str], dir: &str) -> Value {
    let mut c = common::iobench();
    c.arg("--name=x")
        .args(["--ioengine=null", "--size=64m", "--output-format=json"])
        .args(args);
    let out = common::run_ok(c);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    v["jobs"][0][dir].clone()
}

fn within(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= want * tol
}

#[test]
fn rate_holds_ten_mib_per_second() {
    let w = run_json(
        &[
            "--rw=write",
            "--bs=4k",
            "--rate=10m",
            "--time_based",
            "--runtime=2s",
        ],
        "write",
    );
    let kib = w["io_kbytes"].as_f64().unwrap();
    let ms = w["runtime"].as_f64().unwrap();
    let bw = kib / (ms / 1000.0);
    assert!(
        within(bw, 10240.0, 0.03),
        "bandwidth {bw:.0} KiB/s, want 10240 ±3%"
    );
    assert!(within(w["bw"].as_f64().unwrap(), 10240.0, 0.03), "{w}");
    // Without a rate the null engine runs orders of magnitude faster: the cap is real.
    let free = run_json(
        &["--rw=write", "--bs=4k", "--time_based", "--runtime=200ms"],
        "write",
    );
    assert!(free["bw"].as_f64().unwrap() > 10.0 * 10240.0, "{free}");
}

#[test]
fn rate_iops_and_poisson_hold_their_mean() {
    for extra in [&[][..], &["--rate_process=poisson"][..]] {
        let mut args = vec![
            "--rw=randread",
            "--bs=4k",
            "--rate_iops=2000",
            "--time_based",
            "--runtime=1500ms",
        ];
        args.extend_from_slice(extra);
        let r = run_json(&args, "read");
        let ios = r["total_ios"].as_f64().unwrap();
        let secs = r["runtime"].as_f64().unwrap() / 1000.0;
        let iops = ios / secs;
        // Poisson arrivals over 3000 I/Os vary by about 1/sqrt(3000) ≈ 2%.
        let tol = if extra.is_empty() { 0.03 } else { 0.06 };
        assert!(
            within(iops, 2000.0, tol),
            "{extra:?}: {iops:.0} IOPS, want 2000"
        );
    }
}

#[test]
fn ramp_time_io_is_not_counted() {
    // 1 MiB/s for a 1 s ramp and then 1 s measured: only the second MiB is reported.
    let w = run_json(
        &[
            "--rw=write",
            "--bs=4k",
            "--rate=1m",
            "--ramp_time=1s",
            "--time_based",
            "--runtime=1s",
        ],
        "write",
    );
    let kib = w["io_kbytes"].as_f64().unwrap();
    assert!(
        within(kib, 1024.0, 0.03),
        "counted {kib} KiB, want 1024 (not 2048)"
    );
    // The measured time is the 1 s after the ramp, not 2 s. The bound leaves room for a
    // worker descheduled at the deadline on a busy (or CPU-stolen) host; the byte count
    // above is what tells counted ramp I/O apart.
    assert!(within(w["runtime"].as_f64().unwrap(), 1000.0, 0.10), "{w}");
}
