//! Differential: the depth a job really runs at, as fio reports it (`iodepth_level`,
//! `iodepth_submit`, `iodepth_complete`), for the null engine at depth and for fio's
//! polling mode (both `iodepth_batch_complete` values 0).
//!
//! fio's null engine says busy while its completions are unreaped and hands all of them
//! to any reap that waits, so a null job at iodepth=32 runs one I/O at a time; iobench's
//! null had kept 32 in flight and reaped the newest first, so 31 of them waited for the
//! whole run (a clat max of the runtime). In polling mode fio reaps after each I/O it
//! queues, whatever the engine.
use crate::common;

/// The job's three depth distributions (buckets with a share only) and its clat max.
fn depths(mut tool: std::process::Command, dir: &std::path::Path, args: &[&str]) -> (String, u64) {
    tool.current_dir(dir)
        .args([
            "--name=d",
            "--rw=randread",
            "--bs=4k",
            "--output-format=json",
        ])
        .args(args);
    let out = common::run_ok(tool);
    let v = common::json_report(&out);
    let j = &v["jobs"][0];
    let shares = |key: &str| {
        let m = j[key].as_object().unwrap();
        let kept: Vec<String> = m
            .iter()
            .filter(|(_, x)| x.as_f64().unwrap() > 0.0)
            .map(|(k, x)| format!("{k}={:.1}", x.as_f64().unwrap()))
            .collect();
        format!("{key}:{}", kept.join(","))
    };
    let all = [
        shares("iodepth_level"),
        shares("iodepth_submit"),
        shares("iodepth_complete"),
    ]
    .join(" ");
    (all, j["read"]["clat_ns"]["max"].as_u64().unwrap())
}

fn compare(label: &str, args: &[&str]) {
    let dir = common::scratch(&format!("engine_null_depth_{label}"));
    let (ours, clat_max) = depths(common::iobench(), &dir, args);
    // A null I/O waits for nothing: no completion may lag by a tenth of a second.
    assert!(clat_max < 100_000_000, "{label}: clat max {clat_max} ns");
    let Some(fio) = common::fio() else { return };
    let (theirs, _) = depths(fio, &dir, args);
    assert_eq!(ours, theirs, "{label}: {args:?}");
}

#[test]
fn null_engine_at_depth_runs_as_fio_s() {
    let null = ["--ioengine=null", "--size=1g", "--number_ios=20000"];
    for (label, extra) in [
        ("qd32", &["--iodepth=32"][..]),
        ("qd32_batch8", &["--iodepth=32", "--iodepth_batch=8"]),
        (
            "qd8_cmax4",
            &["--iodepth=8", "--iodepth_batch_complete_max=4"],
        ),
        (
            "qd8_low2_batch8",
            &["--iodepth=8", "--iodepth_low=2", "--iodepth_batch=8"],
        ),
    ] {
        let args: Vec<&str> = null.iter().chain(extra).copied().collect();
        compare(label, &args);
    }
}

#[test]
fn polling_mode_runs_one_io_at_a_time() {
    let file = common::scratch("engine_null_depth_file").join("f");
    std::fs::File::create(&file)
        .and_then(|f| f.set_len(16 << 20))
        .unwrap();
    let file = format!("--filename={}", file.display());
    for (label, engine) in [
        ("poll_null", "--ioengine=null"),
        ("poll_uring", "--ioengine=io_uring"),
        ("poll_libaio", "--ioengine=libaio"),
    ] {
        let args = [
            engine,
            file.as_str(),
            "--size=16m",
            "--number_ios=4096",
            "--iodepth=16",
            "--iodepth_batch=4",
            "--iodepth_batch_complete_min=0",
        ];
        compare(label, &args);
    }
}
