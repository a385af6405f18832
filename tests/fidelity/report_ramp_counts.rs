//! After `ramp_time`, fio counts an I/O as issued only when it is queued after the ramp,
//! but counts the bytes of every I/O that completes after it: those in flight when the
//! ramp ends add to the bandwidth and not to the IOPS or the issued count (seed 000's
//! jobs at QD64 x 8 jobs show 512 MiB more than their issued count). iobench reports
//! the same figures, not a bandwidth equal to IOPS x block size.

use crate::common;
use common::{json_report, run_ok, scratch};

/// (issued I/Os, bytes in blocks, IOPS x runtime) of one tool's run.
fn counts(mut c: std::process::Command, dir: &std::path::Path) -> (u64, u64, f64) {
    c.current_dir(dir).args([
        "--name=r",
        "--filename=f",
        "--size=32m",
        "--ioengine=libaio",
        "--direct=1",
        "--iodepth=16",
        "--bs=4k",
        "--rw=randread",
        "--time_based",
        "--runtime=1",
        "--ramp_time=1",
        "--output-format=json",
    ]);
    let j = json_report(&run_ok(c));
    let r = &j["jobs"][0]["read"];
    let ios = r["total_ios"].as_u64().unwrap();
    let blocks = r["io_bytes"].as_u64().unwrap() / 4096;
    let issued_per_runtime = r["iops"].as_f64().unwrap() * r["runtime"].as_f64().unwrap() / 1e3;
    (ios, blocks, issued_per_runtime)
}

#[test]
fn ios_in_flight_at_the_ramps_end_count_bytes_not_issues() {
    let Some(fio) = common::fio() else { return };
    let dir = scratch("ramp_counts");
    for (tool, c) in [("fio", fio), ("iobench", common::iobench())] {
        let (ios, blocks, per_runtime) = counts(c, &dir);
        // The I/Os in flight at the ramp's end: at least one, at most the depth.
        let carried = blocks.saturating_sub(ios);
        assert!(
            (1..=16).contains(&carried),
            "{tool}: {ios} issued, {blocks} blocks moved"
        );
        // IOPS is the issued count over the runtime.
        assert!(
            (per_runtime - ios as f64).abs() <= 1.0 + ios as f64 * 0.001,
            "{tool}: iops x runtime {per_runtime} against {ios} issued"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A job that ends within its ramp reports the syncs it made (pairwise rows 1, 25, 31, 37
/// and 43 of issue 35): fio counts a sync when it issues it, ramp or not, and takes its
/// latency only after the ramp; iobench counted none, and printed no sync section.
#[test]
fn syncs_of_a_job_that_ends_within_its_ramp_are_counted() {
    let Some(_) = common::fio() else { return };
    let dir = scratch("ramp_syncs");
    let sync_of = |c: std::process::Command, engine: &str| {
        let mut c = c;
        c.current_dir(&dir).args([
            "--name=r",
            "--filename=f",
            "--size=2m",
            "--bs=64k",
            "--rw=write",
            "--fsync=4",
            "--ramp_time=5",
            "--output-format=json",
        ]);
        c.arg(format!("--ioengine={engine}"));
        let j = json_report(&run_ok(c));
        let s = &j["jobs"][0]["sync"];
        (
            s["total_ios"].as_u64().unwrap(),
            s["lat_ns"]["N"].as_u64().unwrap_or(0),
        )
    };
    for engine in ["null", "psync", "io_uring"] {
        let theirs = sync_of(common::fio().unwrap(), engine);
        let ours = sync_of(common::iobench(), engine);
        // 32 writes, a sync after every 4th (the last one is the end's, not counted).
        assert_eq!(theirs.0, 7, "{engine}: fio's syncs");
        assert_eq!(
            ours, theirs,
            "{engine}: (syncs, latency samples) fio's against iobench's"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The verify reads of a job that ends within its ramp are counted with no latency, as
/// fio counts them (pairwise rows 1, 9, 25 and 31 of issue 35): iobench's verify pass took
/// their latencies, and printed read percentiles fio has not.
#[test]
fn verify_reads_within_the_ramp_take_no_latency() {
    let Some(_) = common::fio() else { return };
    let dir = scratch("ramp_verify");
    let read_of = |mut c: std::process::Command| {
        c.current_dir(&dir).args([
            "--name=r",
            "--filename=f",
            "--size=2m",
            "--bs=1m",
            "--rw=randwrite",
            "--ioengine=sync",
            "--verify=crc32c",
            "--ramp_time=5",
            "--output-format=json",
        ]);
        let j = json_report(&run_ok(c));
        let r = j["jobs"][0]["read"].clone();
        (
            r["total_ios"].as_u64().unwrap(),
            r["clat_ns"]["N"].as_u64().unwrap(),
            r["clat_ns"].get("percentile").is_some(),
        )
    };
    let theirs = read_of(common::fio().unwrap());
    assert_eq!(theirs, (2, 0, false), "fio's verify reads");
    assert_eq!(read_of(common::iobench()), theirs, "iobench's verify reads");
    let _ = std::fs::remove_dir_all(&dir);
}
