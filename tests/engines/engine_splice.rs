//! The splice engine side by side with fio 3.33's: the same I/O counts and bytes for
//! reads, writes and mixes, and data it writes verifies in fio (and fio's in iobench).

use crate::common;

use std::process::Command;

fn job(mut tool: Command, file: &std::path::Path, args: &[&str]) -> serde_json::Value {
    tool.args(["--name=s", "--bs=64k", "--size=4m", "--output-format=json"])
        .arg(format!("--filename={}", file.display()))
        .args(args);
    common::json_report(&common::run_ok(tool))
}

fn counts(v: &serde_json::Value) -> Vec<(u64, u64)> {
    let j = &v["jobs"][0];
    ["read", "write"]
        .iter()
        .map(|d| {
            (
                j[d]["total_ios"].as_u64().unwrap(),
                j[d]["io_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn splice_moves_the_same_data_as_fio() {
    let dir = common::scratch("engine_splice");
    let f = dir.join("f");
    for rw in ["read", "write", "randrw"] {
        let args = ["--ioengine=splice", &format!("--rw={rw}"), "--randrepeat=1"];
        let ours = counts(&job(common::iobench(), &f, &args));
        assert!(
            ours.iter().map(|c| c.1).sum::<u64>() == 4 << 20,
            "{rw}: {ours:?}"
        );
        if let Some(fio) = common::fio() {
            assert_eq!(ours, counts(&job(fio, &f, &args)), "{rw}");
        }
    }
    // Written by iobench through the pipe, verified by a plain reader (fio's if present).
    let write = [
        "--ioengine=splice",
        "--rw=write",
        "--verify=md5",
        "--do_verify=0",
    ];
    job(common::iobench(), &f, &write);
    let check = ["--ioengine=psync", "--rw=read", "--verify=md5"];
    let tool = common::fio().unwrap_or_else(common::iobench);
    let v = job(tool, &f, &check);
    assert_eq!(v["jobs"][0]["error"], 0, "{v}");
    // And iobench's splice reads verify what was written.
    let v = job(
        common::iobench(),
        &f,
        &["--ioengine=splice", "--rw=read", "--verify=md5"],
    );
    assert_eq!(v["jobs"][0]["error"], 0, "{v}");
}
