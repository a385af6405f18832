//! The cpu line's minf counts the page faults of the I/O, as fio's does: the rusage starts
//! after the buffers are allocated, and a read job's buffers are faulted in by its reads
//! (so 16 × 64 KiB of fresh buffers show up as ~256 faults with libaio, none with null).

use crate::common;

use std::path::Path;
use std::process::Command;

fn minf(mut tool: Command, dir: &Path, engine: &str, rw: &str) -> i64 {
    tool.args([
        "--name=m",
        "--size=16m",
        "--bs=64k",
        "--iodepth=16",
        "--output-format=json",
    ])
    .arg(format!("--filename={}", dir.join("f").display()))
    .arg(format!("--ioengine={engine}"))
    .arg(format!("--rw={rw}"));
    let out = common::run_ok(tool);
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value =
        serde_json::from_str(&text[text.find('{').unwrap()..]).expect("json");
    doc["jobs"][0]["minf"].as_i64().unwrap()
}

#[test]
fn minor_faults_are_those_of_the_io_as_in_fio() {
    let dir = common::scratch("minf");
    let null = minf(common::iobench(), &dir, "null", "read");
    let aio_read = minf(common::iobench(), &dir, "libaio", "read");
    let aio_write = minf(common::iobench(), &dir, "libaio", "write");
    // 1 MiB of buffers is 256 pages: reads fault them in during the run, the null engine
    // never touches them, and a write job filled them before the run began.
    assert!(null < 64, "null read: minf={null}");
    assert!(
        (240..400).contains(&aio_read),
        "libaio read: minf={aio_read}"
    );
    assert!(aio_write < 64, "libaio write: minf={aio_write}");
    if let Some(_fio) = common::fio() {
        for (engine, rw, ours) in [
            ("null", "read", null),
            ("libaio", "read", aio_read),
            ("libaio", "write", aio_write),
        ] {
            let theirs = minf(common::fio().unwrap(), &dir, engine, rw);
            assert!(
                (ours - theirs).abs() < 64,
                "{engine} {rw}: iobench minf={ours}, fio minf={theirs}"
            );
        }
    }
}
