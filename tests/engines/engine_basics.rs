//! Each implemented engine runs a size-based job on a real file and moves exactly `size`
//! bytes; an engine iobench lacks is refused by name before any I/O.
use crate::common;

/// Runs one job and returns the bytes it moved, read + write, from the JSON output.
fn run_engine(engine: &str, rw: &str, extra: &[&str]) -> u64 {
    let dir = common::scratch(&format!("engine_{engine}_{rw}"));
    let mut c = common::iobench();
    c.current_dir(&dir).args([
        "--name=x",
        &format!("--rw={rw}"),
        "--size=2m",
        "--bs=4k",
        &format!("--ioengine={engine}"),
        "--output-format=json",
    ]);
    c.args(extra);
    let out = common::run(c);
    assert!(
        out.status.success(),
        "{engine}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json output");
    let job = &v["jobs"][0];
    job["read"]["io_bytes"].as_u64().unwrap() + job["write"]["io_bytes"].as_u64().unwrap()
}

#[test]
fn every_engine_moves_exactly_size_bytes() {
    for engine in [
        "psync", "sync", "vsync", "pvsync", "pvsync2", "null", "libaio", "io_uring", "posixaio",
        "mmap",
    ] {
        for rw in ["randread", "write"] {
            let bytes = run_engine(engine, rw, &["--iodepth=8", "--direct=1"]);
            assert_eq!(bytes, 2 << 20, "{engine} {rw}");
        }
    }
}

#[test]
fn async_engines_honour_batching_options() {
    for engine in ["libaio", "io_uring", "null", "posixaio"] {
        let bytes = run_engine(
            engine,
            "randwrite",
            &[
                "--iodepth=16",
                "--iodepth_batch_submit=4",
                "--iodepth_batch_complete_min=2",
                "--iodepth_batch_complete_max=8",
            ],
        );
        assert_eq!(bytes, 2 << 20, "{engine}");
    }
}

#[test]
fn an_engine_iobench_lacks_is_named_in_the_error() {
    let dir = common::scratch("engine_missing");
    let mut c = common::iobench();
    c.current_dir(&dir)
        .args(["--name=x", "--size=1m", "--ioengine=rdma"]);
    let out = common::run(c);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("option 'ioengine=rdma' is not supported yet: needs RDMA hardware"),
        "{err}"
    );
    assert!(!dir.join("x.0.0").exists(), "no file before the error");
}

/// The passthrough engines run (the lab's engine-sg and engine-io_uring_cmd cases drive
/// them on emulated devices); here, a regular file is refused by each with what it needs.
#[test]
fn passthrough_engines_refuse_a_regular_file() {
    for (engine, needs) in [
        (
            "sg",
            "only works on block devices (/dev/sdX) and SCSI generic",
        ),
        ("io_uring_cmd", "generic character devices (/dev/ngXnY)"),
    ] {
        let dir = common::scratch(&format!("passthrough_{engine}"));
        let mut c = common::iobench();
        c.current_dir(&dir)
            .args(["--name=x", "--size=1m", "--filename=f"])
            .arg(format!("--ioengine={engine}"));
        let out = common::run(c);
        let all = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(all.contains(needs), "{engine}: {all}");
        assert!(!all.contains("not supported yet"), "{engine}: {all}");
    }
}
