//! Differential: each engine, and each engine option iobench honours, runs the same job
//! under fio and iobench; the bytes and I/O counts per direction must agree, and neither
//! may report an error.
use crate::common;

use serde_json::Value;

/// Runs `tool` on one job in `dir` and returns the first job's JSON.
fn job_json(mut tool: std::process::Command, dir: &std::path::Path, args: &[&str]) -> Value {
    tool.current_dir(dir).args(args).arg("--output-format=json");
    let out = common::run(tool);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // fio may print notes before the JSON document.
    let start = text.find('{').expect("json in output");
    let v: Value = serde_json::from_str(&text[start..]).expect("json output");
    v["jobs"][0].clone()
}

/// The counts that must agree: bytes and I/Os per direction, and the error code.
fn counts(j: &Value) -> (u64, u64, u64, u64, i64) {
    (
        j["read"]["io_kbytes"].as_u64().unwrap(),
        j["write"]["io_kbytes"].as_u64().unwrap(),
        j["read"]["total_ios"].as_u64().unwrap(),
        j["write"]["total_ios"].as_u64().unwrap(),
        j["error"].as_i64().unwrap(),
    )
}

fn compare(label: &str, args: &[&str]) {
    let Some(fio) = common::fio() else { return };
    let dir = common::scratch(&format!("engine_fio_diff_{label}"));
    let mut all = vec![
        "--name=d",
        "--filename=data",
        "--size=1m",
        "--bs=4k",
        "--rw=randrw",
        "--iodepth=8",
    ];
    all.extend_from_slice(args);
    let theirs = counts(&job_json(fio, &dir, &all));
    let ours = counts(&job_json(common::iobench(), &dir, &all));
    assert_eq!(
        ours, theirs,
        "{label}: iobench vs fio (read KiB, write KiB, ios, error)"
    );
    assert_eq!(theirs.0 + theirs.1, 1024, "{label}: fio moved size");
    assert_eq!(theirs.4, 0, "{label}: no error");
}

#[test]
fn each_engine_moves_what_fio_moves() {
    for e in [
        "sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap",
        "null",
    ] {
        // fio's vsync merges adjacent I/Os when iodepth > 1 and then under-counts the bytes
        // of a mixed job (its sum is not `size`); iobench does not copy that, so vsync is
        // compared at depth 1.
        let depth = if e == "vsync" {
            "--iodepth=1"
        } else {
            "--iodepth=8"
        };
        compare(e, &[&format!("--ioengine={e}"), depth]);
    }
}

#[test]
fn engine_options_move_what_fio_moves() {
    let cases: &[(&str, &[&str])] = &[
        (
            "pvsync2_hipri_direct",
            &["--ioengine=pvsync2", "--hipri", "--direct=1"],
        ),
        ("mmap_direct", &["--ioengine=mmap", "--direct=1"]),
        (
            "libaio_userspace_reap",
            &[
                "--ioengine=libaio",
                "--direct=1",
                "--userspace_reap=1",
                "--iodepth_batch_complete_min=0",
            ],
        ),
        ("uring_fixedbufs", &["--ioengine=io_uring", "--fixedbufs=1"]),
        (
            "uring_registerfiles",
            &["--ioengine=io_uring", "--registerfiles=1"],
        ),
        (
            "uring_sqpoll",
            &[
                "--ioengine=io_uring",
                "--sqthread_poll=1",
                "--sqthread_poll_cpu=0",
            ],
        ),
        (
            "uring_nonvectored",
            &["--ioengine=io_uring", "--nonvectored=1"],
        ),
        (
            "uring_vectored",
            &["--ioengine=io_uring", "--nonvectored=0"],
        ),
        (
            "uring_force_async",
            &["--ioengine=io_uring", "--force_async=2"],
        ),
        (
            "uring_batches",
            &[
                "--ioengine=io_uring",
                "--direct=1",
                "--iodepth_batch_submit=4",
                "--iodepth_batch_complete_min=2",
                "--iodepth_batch_complete_max=6",
            ],
        ),
        ("posixaio_depth4", &["--ioengine=posixaio", "--iodepth=4"]),
    ];
    for (label, args) in cases {
        compare(label, args);
    }
}

#[test]
fn unsupported_flags_fail_as_in_fio() {
    // hipri on io_uring asks for a polled ring; buffered files cannot be polled, so both
    // tools fail the job with EOPNOTSUPP (95) rather than silently not polling.
    let Some(fio) = common::fio() else { return };
    let dir = common::scratch("engine_fio_diff_hipri");
    let args = [
        "--name=d",
        "--filename=data",
        "--size=256k",
        "--bs=4k",
        "--rw=read",
        "--ioengine=io_uring",
        "--hipri",
    ];
    let mut f = fio;
    f.current_dir(&dir).args(args).arg("--output-format=json");
    let theirs = common::run(f);
    let mut i = common::iobench();
    i.current_dir(&dir).args(args).arg("--output-format=json");
    let ours = common::run(i);
    let err = |o: &std::process::Output| {
        let t = String::from_utf8_lossy(&o.stdout).to_string();
        let v: Value = serde_json::from_str(&t[t.find('{').unwrap()..]).unwrap();
        v["jobs"][0]["error"].as_i64().unwrap()
    };
    assert_eq!(err(&theirs), 95);
    assert_eq!(err(&ours), err(&theirs));
}
