//! `end_fsync` in fio 3.33's place (issue 14): fio ends every loop's I/O (its do_io) with
//! the end fsync, so a job syncs once per loop, and before that loop's verify pass reads
//! the data back. The order of the job's writes, syncs and reads, as strace records them,
//! is compared with fio's.

use crate::common;

use std::path::Path;
use std::process::Command;

/// The job's data calls in order, runs of one call folded into `name xN`; None without
/// strace. (The reads of the file's first page that both tools make as they lay the file
/// out come first.)
fn calls(tool: Command, dir: &Path, args: &[&str]) -> Option<Vec<String>> {
    let have = Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        assert!(
            std::env::var("IOBENCH_REQUIRE_FIO").as_deref() != Ok("1"),
            "strace is not installed"
        );
        return None;
    }
    let _ = std::fs::remove_file(dir.join("f"));
    let log = dir.join("trace");
    let mut c = Command::new("strace");
    c.current_dir(dir)
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=fsync,fdatasync,pread64,pwrite64,io_submit",
            "-o",
        ])
        .arg(&log)
        .arg(tool.get_program())
        .args([
            "--name=e",
            "--filename=f",
            "--size=16k",
            "--bs=4k",
            "--rw=write",
        ])
        .args(["--end_fsync=1", "--output-format=terse"])
        .args(args);
    common::run_ok(c);
    let text = std::fs::read_to_string(&log).unwrap();
    let mut folded: Vec<(String, usize)> = Vec::new();
    for l in text.lines() {
        let Some(name) = ["fsync", "fdatasync", "pread64", "pwrite64", "io_submit"]
            .iter()
            .find(|n| l.contains(&format!("{n}(")))
        else {
            continue;
        };
        match folded.last_mut() {
            Some((n, k)) if n == name => *k += 1,
            _ => folded.push((name.to_string(), 1)),
        }
    }
    Some(folded.iter().map(|(n, k)| format!("{n} x{k}")).collect())
}

#[test]
fn end_fsync_comes_before_the_verify_pass_and_once_per_loop_as_fio() {
    let dir = common::scratch("end_fsync_order");
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["--verify=md5"],
            &["pread64 x2", "pwrite64 x4", "fsync x1", "pread64 x4"],
        ),
        (
            &["--verify=md5", "--loops=2"],
            &[
                "pread64 x2",
                "pwrite64 x4",
                "fsync x1",
                "pread64 x4",
                "pwrite64 x4",
                "fsync x1",
                "pread64 x4",
            ],
        ),
        (
            &["--loops=2"],
            &[
                "pread64 x2",
                "pwrite64 x4",
                "fsync x1",
                "pwrite64 x4",
                "fsync x1",
            ],
        ),
        (
            &["--loops=2", "--ioengine=libaio", "--iodepth=4"],
            &[
                "pread64 x2",
                "io_submit x4",
                "fsync x1",
                "io_submit x4",
                "fsync x1",
            ],
        ),
    ];
    for (args, want) in cases {
        let Some(ours) = calls(common::iobench(), &dir, args) else {
            return;
        };
        assert_eq!(ours, want, "{args:?}");
        if let Some(fio) = common::fio() {
            assert_eq!(
                calls(fio, &dir, args).unwrap(),
                ours,
                "{args:?}: fio's order"
            );
        }
    }
}
