//! Periodic syncs as fio 3.33 issues and counts them, compared through both tools'
//! iologs and JSON: a sync takes the file the file service picks next (so a multi-file
//! job's syncs move between files), is logged at the last I/O's offset, comes again at
//! the start of each loop when the write count allows, and is not issued once the job
//! (or an asynchronous engine's loop) has issued all its bytes. fio also counts every
//! fdatasync in the reads' short count and every sync_file_range in the writes'.

use crate::common;

use std::path::Path;
use std::process::Command;

/// The iolog lines and the JSON job of `tool` running `args` in `dir`.
fn run(tool: Command, dir: &Path, args: &[&str]) -> (Vec<String>, serde_json::Value) {
    let (lines, out) = common::run_logged(tool, dir, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (lines, common::json_report(&out)["jobs"][0].clone())
}

/// Runs both tools (same directory: the names seed nothing here, but keep them equal)
/// and asserts the same iolog and counts; returns iobench's.
fn same_as_fio(tag: &str, args: &[&str]) -> (Vec<String>, serde_json::Value) {
    let dir = common::scratch(&format!("syncs_{tag}")).join("d");
    let ours = run(common::iobench(), &dir, args);
    if let Some(fio) = common::fio() {
        let theirs = run(fio, &dir, args);
        assert_eq!(ours.0, theirs.0, "{tag}: iologs differ for {args:?}");
        for (d, k) in [
            ("read", "total_ios"),
            ("write", "total_ios"),
            ("read", "short_ios"),
            ("write", "short_ios"),
            ("sync", "total_ios"),
        ] {
            assert_eq!(ours.1[d][k], theirs.1[d][k], "{tag}: {d} {k}");
        }
    }
    ours
}

fn syncs(log: &[String]) -> Vec<&String> {
    log.iter().filter(|l| l.contains(" sync ")).collect()
}

#[test]
fn a_sync_goes_to_the_file_picked_next() {
    let (log, _) = same_as_fio(
        "files",
        &[
            "--ioengine=psync",
            "--nrfiles=2",
            "--rw=randrw",
            "--bssplit=4k/60:16k/40",
            "--size=512k",
            "--loops=3",
            "--fsync=1",
            "--number_ios=33",
        ],
    );
    let s = syncs(&log);
    assert!(s.iter().any(|l| l.starts_with("j.0.0 ")) && s.iter().any(|l| l.starts_with("j.0.1 ")));
}

#[test]
fn loops_start_with_a_sync_unless_the_loop_ended_on_its_bytes() {
    let args = ["--rw=rw", "--bs=8k", "--size=64k", "--loops=3", "--fsync=3"];
    let mut sync_engine = vec!["--ioengine=psync"];
    sync_engine.extend(args);
    let (log, job) = same_as_fio("loops_psync", &sync_engine);
    assert_eq!(job["sync"]["total_ios"], 8, "{log:?}");
    // io_uring's loops end after 64k bytes, before the sync the next I/O would bring.
    let mut async_engine = vec!["--ioengine=io_uring"];
    async_engine.extend(args);
    same_as_fio("loops_uring", &async_engine);
}

#[test]
fn fdatasync_and_sync_file_range_count_as_fio_counts_them() {
    let (_, job) = same_as_fio(
        "datasync",
        &[
            "--ioengine=psync",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--fdatasync=4",
        ],
    );
    assert_eq!(job["read"]["short_ios"], 3);
    let (_, job) = same_as_fio(
        "sfr",
        &[
            "--ioengine=psync",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--sync_file_range=write:2",
        ],
    );
    assert_eq!(job["write"]["short_ios"], 7);
}

/// At depth, fio 3.33 issues a periodic sync as it issues any unit: queued beside the
/// writes in flight, and made again while none has completed. null at iodepth=8 refuses
/// the second one while the first is unreaped and retries it (in the same unit, so it
/// is logged at the same offset), so every sync point gets two (126 for 63 points); libaio syncs in line without waiting for its writes, so a
/// write completing after the sync point makes no difference (84 syncs for 256 writes
/// at fsync=3, where waiting for the writes first had made one per point, 85, and
/// counting a write as done at its issue had lost points: 29). iobench had drained the
/// queue and synced once, in every case.
#[test]
fn syncs_at_depth_are_queued_as_fio_queues_them() {
    let (log, job) = same_as_fio(
        "null_depth",
        &[
            "--ioengine=null",
            "--rw=randwrite",
            "--bs=4k",
            "--size=4m",
            "--iodepth=8",
            "--number_ios=256",
            "--fsync=4",
        ],
    );
    assert_eq!(job["sync"]["total_ios"], 126, "{log:?}");
    // libaio: counts only. (posixaio is left to the device suite: on a file here its
    // library thread's fsyncs are quick enough that a sync point's count is timing.)
    let args = [
        "--ioengine=libaio",
        "--rw=randwrite",
        "--bs=4k",
        "--size=4m",
        "--iodepth=8",
        "--number_ios=256",
        "--fsync=3",
    ];
    let dir = common::scratch("syncs_depth_libaio").join("d");
    let (_, ours) = run(common::iobench(), &dir, &args);
    assert_eq!(ours["sync"]["total_ios"], 84, "libaio: iobench syncs");
    if let Some(fio) = common::fio() {
        let (_, theirs) = run(fio, &dir, &args);
        assert_eq!(
            ours["sync"]["total_ios"], theirs["sync"]["total_ios"],
            "libaio"
        );
    }
}
