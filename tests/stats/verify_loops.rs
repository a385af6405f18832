//! With `loops`, fio verifies what each loop wrote before the next loop starts, so the
//! verify reads add up over the loops; iobench does the same (JSON counts against fio).

use crate::common;

use std::process::Command;

/// (read, write) total_ios of a verified write job run with `extra`.
fn counts(tool: Command, dir: &std::path::Path, extra: &[&str]) -> (u64, u64) {
    let mut c = tool;
    c.current_dir(dir)
        .args([
            "--name=l",
            "--filename=f",
            "--bs=4k",
            "--size=128k",
            "--verify=crc32c",
            "--output-format=json",
        ])
        .args(extra);
    let out = common::run_ok(c);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 0);
    let n = |d: &str| j[d]["total_ios"].as_u64().unwrap();
    (n("read"), n("write"))
}

#[test]
fn every_loop_is_verified() {
    let dir = common::scratch("verify_loops");
    let cases: [(&[&str], (u64, u64)); 3] = [
        (&["--rw=write", "--loops=2"], (64, 64)),
        (
            &[
                "--rw=randwrite",
                "--loops=3",
                "--ioengine=libaio",
                "--iodepth=4",
            ],
            (96, 96),
        ),
        (&["--rw=write", "--loops=2", "--verify_backlog=8"], (64, 64)),
    ];
    for (extra, want) in cases {
        let ours = counts(common::iobench(), &dir, extra);
        assert_eq!(ours, want, "{extra:?}");
        if common::fio().is_some() {
            assert_eq!(ours, counts(Command::new("fio"), &dir, extra), "{extra:?}");
        }
    }
}
