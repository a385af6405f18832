//! `verify_backlog` at depth against fio 3.33 (issue 35, "The number, again"): fio takes
//! its backlog reads one at a time among the writes without draining the queue, and a
//! logged block whose write is still in flight holds the read back (a write goes
//! instead); a time_based verify job ends each loop at fio's byte check and reads the
//! rest of its log back before the next. With `norandommap` at iodepth 32 that makes
//! about one read per two writes under fio; a random map keeps it at one per write. The
//! ratios depend on timing, so iobench's must fall in the range of two fio runs; at
//! iodepth 1 nothing is in flight at a backlog point and the counts and the write_iolog
//! (verify reads included) are fio's exactly.
use crate::common;

use common::{json_report, run, run_logged, scratch, Gone};
use std::process::Command;

/// The report's job: 512-byte random writes over 2M with md5 and a backlog of 128 read
/// 64 at a time, libaio direct.
const JOB: &[&str] = &[
    "--name=t",
    "--filename=vb",
    "--rw=randwrite",
    "--verify=md5",
    "--verify_backlog=128",
    "--verify_backlog_batch=64",
    "--ioengine=libaio",
    "--direct=1",
    "--bs=512",
    "--size=2M",
];

/// (reads, writes) of one run of `tool` with `args` in `dir`; the job must pass.
fn counts(mut tool: Command, dir: &std::path::Path, args: &[&str]) -> (u64, u64) {
    tool.current_dir(dir).args(args).arg("--output-format=json");
    let o = run(tool);
    let v = json_report(&o);
    let j = &v["jobs"][0];
    assert_eq!(
        j["error"].as_u64(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let n = |d: &str| j[d]["total_ios"].as_u64().unwrap();
    (n("read"), n("write"))
}

fn ratio((r, w): (u64, u64)) -> f64 {
    r as f64 / w.max(1) as f64
}

/// iodepth 32, one second: iobench's reads per write lie in the range of two fio runs
/// (widened by 0.1 either way), for `norandommap` (about 0.5 under fio) and with the
/// random map (about 1).
#[test]
fn backlog_reads_at_depth_in_fios_range() {
    let Some(_) = common::fio() else { return };
    let dir = scratch("verify_backlog_depth");
    let _gone = Gone(dir.clone());
    for extra in [&["--norandommap"][..], &[]] {
        let mut args = JOB.to_vec();
        args.extend(extra);
        args.extend(["--iodepth=32", "--time_based", "--runtime=1"]);
        let fio: Vec<f64> = (0..2)
            .map(|_| ratio(counts(common::fio().unwrap(), &dir, &args)))
            .collect();
        let (lo, hi) = (fio[0].min(fio[1]) - 0.1, fio[0].max(fio[1]) + 0.1);
        for _ in 0..2 {
            let c = counts(common::iobench(), &dir, &args);
            let r = ratio(c);
            assert!(
                (lo..=hi).contains(&r),
                "{extra:?}: iobench reads/writes {c:?} = {r:.3}, fio's {fio:?}"
            );
        }
    }
}

/// iodepth 1, size-bound: the counts and the write_iolog (every write, every verify
/// read among them and after them, the close and open around the verify phase) are
/// fio's, with and without a random map.
#[test]
fn backlog_reads_at_depth_one_log_like_fio() {
    let Some(_) = common::fio() else { return };
    let dir = scratch("verify_backlog_qd1");
    let _gone = Gone(dir.clone());
    for extra in [&["--norandommap"][..], &[]] {
        let mut args: Vec<&str> = JOB[1..].to_vec();
        args.extend(extra);
        args.extend(["--iodepth=1", "--size=64k", "--verify_backlog=16"]);
        args.push("--verify_backlog_batch=8");
        let (f, fo) = run_logged(common::fio().unwrap(), &dir.join("fio"), &args);
        let (i, io) = run_logged(common::iobench(), &dir.join("ib"), &args);
        let (fv, iv) = (json_report(&fo), json_report(&io));
        let n = |v: &serde_json::Value, d: &str| v["jobs"][0][d]["total_ios"].as_u64();
        for d in ["read", "write"] {
            assert_eq!(n(&iv, d), n(&fv, d), "{extra:?}: {d}s");
        }
        assert!(
            f.iter().filter(|l| l.contains(" read ")).count() > 64,
            "fio's log has its verify reads: {f:?}"
        );
        assert_eq!(i, f, "{extra:?}: iobench's write_iolog vs fio's");
    }
}
