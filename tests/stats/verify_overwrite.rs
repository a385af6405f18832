//! Verify jobs that write a block more than once (`norandommap`, non-uniform
//! distributions) with `verify_backlog`: only the newest write of a block is checked,
//! among the writes and after them, as in fio 3.33 (issue 24, item 4.1). Each is run with
//! fio as well: both pass, and with a synchronous engine both read back the same count.
//! With `experimental_verify` on libaio fio writes its replayed blocks again instead of
//! reading them (see `verify::contents`), so those jobs pass there too.
use crate::common;

use common::{json_report, run, scratch};
use std::process::Command;

/// Runs `tool` with `args` in a fresh `dir`; returns each job's (error, reads, writes)
/// and the run's text.
fn counts(mut tool: Command, dir: &std::path::Path, args: &[&str]) -> (Vec<[u64; 3]>, String) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    tool.arg(format!("--directory={}", dir.display()))
        .args(args)
        .arg("--output-format=json");
    let o = run(tool);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json_report(&o);
    let jobs = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            [
                j["error"].as_u64().unwrap(),
                j["read"]["total_ios"].as_u64().unwrap(),
                j["write"]["total_ios"].as_u64().unwrap(),
            ]
        })
        .collect();
    let _ = std::fs::remove_dir_all(dir);
    (jobs, text)
}

/// psync: fio's verify log and backlog points are deterministic, so the read counts
/// match fio's exactly (reads = backlog checks + the pass after the writes).
#[test]
fn overwritten_blocks_verify_like_fio_with_a_sync_engine() {
    let Some(_) = common::fio() else { return };
    let dir = scratch("verify_overwrite_sync");
    for extra in [
        "--rw=randwrite --norandommap=1 --verify_backlog=16",
        "--rw=randwrite --norandommap=1 --verify_backlog=16 --verify_backlog_batch=8",
        "--rw=randwrite --norandommap=1 --verify_backlog=7 --verify_backlog_batch=20",
        "--rw=randrw --norandommap=1 --verify_backlog=3 --verify_backlog_batch=2",
        "--rw=randwrite --random_distribution=zipf:1.2 --verify_backlog=16",
        "--rw=randwrite --norandommap=1 --verify_backlog=4 --verify_interval=2048 \
         --verify_offset=1024 --nrfiles=3 --openfiles=2",
        "--rw=randwrite --norandommap=1",
    ] {
        let mut args = vec![
            "--name=v",
            "--ioengine=psync",
            "--verify=md5",
            "--bs=4096",
            "--filesize=256k",
        ];
        args.extend(extra.split_whitespace());
        // The same directory for both: zipf seeds from the file's name.
        let (f, ft) = counts(common::fio().unwrap(), &dir.join("j"), &args);
        let (i, it) = counts(common::iobench(), &dir.join("j"), &args);
        assert!(f.iter().all(|j| j[0] == 0), "fio {extra}: {ft}");
        assert_eq!(
            i, f,
            "{extra}: iobench (error, reads, writes) vs fio's\n{it}"
        );
    }
}

/// The command of the report: libaio at iodepth 32, two jobs over three files each. The
/// reads depend on timing (fio checks among writes in flight), so only success is
/// compared, over several runs.
#[test]
fn overwritten_blocks_verify_like_fio_with_libaio() {
    let Some(_) = common::fio() else { return };
    let dir = scratch("verify_overwrite_aio");
    let args = [
        "--name=verify",
        "--fallocate=truncate",
        "--ioengine=libaio",
        "--rw=randwrite",
        "--verify=md5",
        "--direct=1",
        "--iodepth=32",
        "--filesize=512K",
        "--bs=4096",
        "--norandommap=1",
        "--numjobs=2",
        "--nrfiles=3",
        "--openfiles=2",
        "--verify_backlog=16",
        "--verify_backlog_batch=16",
        "--verify_interval=2048",
        "--verify_offset=1024",
    ];
    for _ in 0..3 {
        let (f, ft) = counts(common::fio().unwrap(), &dir.join("fio"), &args);
        assert!(f.iter().all(|j| j[0] == 0), "fio: {ft}");
        let (i, it) = counts(common::iobench(), &dir.join("ib"), &args);
        assert_eq!(i.len(), 2, "{it}");
        for j in &i {
            assert_eq!(j[0], 0, "iobench failed where fio passes: {it}");
            assert_eq!(j[2], 384, "{it}");
            assert!(j[1] > 0, "{it}");
        }
    }
}

/// The report's experimental_verify commands: fio passes them on libaio (its "reads"
/// of the replayed writes go out as writes, so overwritten blocks never fail), and so
/// must iobench. The same job on psync, where fio really reads, fails in both.
#[test]
fn experimental_verify_over_overwritten_blocks_like_fio() {
    let Some(_) = common::fio() else { return };
    let dir = scratch("verify_overwrite_exp");
    let base = [
        "--name=verify",
        "--fallocate=truncate",
        "--verify=md5",
        "--direct=1",
        "--bs=4096",
        "--norandommap=1",
        "--numjobs=2",
        "--nrfiles=3",
        "--openfiles=2",
        "--verify_backlog=16",
        "--verify_backlog_batch=16",
        "--verify_interval=2048",
        "--verify_offset=1024",
        "--filesize=1M",
        "--experimental_verify=1",
    ];
    for rw in ["randwrite", "readwrite", "randwrite:8"] {
        for _ in 0..2 {
            let mut args = base.to_vec();
            let rw = format!("--rw={rw}");
            args.extend(["--ioengine=libaio", "--iodepth=32", &rw]);
            let (f, ft) = counts(common::fio().unwrap(), &dir.join("fio"), &args);
            assert!(f.iter().all(|j| j[0] == 0), "fio {rw}: {ft}");
            let (i, it) = counts(common::iobench(), &dir.join("ib"), &args);
            assert_eq!(i.len(), 2, "{it}");
            for (j, fj) in i.iter().zip(&f) {
                assert_eq!(j[0], 0, "iobench failed where fio passes ({rw}): {it}");
                // Every written block is checked once at least, as by fio.
                assert!(j[1] >= j[2] && fj[1] >= fj[2], "{rw}: {i:?} vs fio {f:?}");
            }
        }
    }
    let mut args = base.to_vec();
    args.extend(["--ioengine=psync", "--rw=randwrite"]);
    let (f, _) = counts(common::fio().unwrap(), &dir.join("fio"), &args);
    let (i, it) = counts(common::iobench(), &dir.join("ib"), &args);
    assert!(f.iter().all(|j| j[0] == 84), "fio on psync: {f:?}");
    assert!(
        i.iter().all(|j| j[0] == 84),
        "psync: iobench {i:?} vs fio {f:?}\n{it}"
    );
}
