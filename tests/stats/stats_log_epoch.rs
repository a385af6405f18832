//! log_alternate_epoch / log_alternate_epoch_clock_id: log times count from the epoch of
//! the chosen clock_gettime clock (here CLOCK_MONOTONIC), as fio's do; a clock id the
//! system lacks is refused before the run.

use crate::common;

fn monotonic_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

#[test]
fn log_times_follow_the_alternate_epoch_clock() {
    let dir = common::scratch("log_epoch");
    let before = monotonic_ms();
    let mut c = common::iobench();
    c.current_dir(&dir).args([
        "--name=e",
        "--ioengine=null",
        "--size=64k",
        "--write_bw_log=e",
        "--log_alternate_epoch=1",
        "--log_alternate_epoch_clock_id=1",
        "--minimal",
    ]);
    let out = common::run(c);
    let after = monotonic_ms();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(dir.join("e_bw.1.log")).unwrap();
    let t: u64 = log.split(',').next().unwrap().trim().parse().unwrap();
    assert!(
        (before..=after).contains(&t),
        "{t} not in {before}..={after}"
    );

    let mut c = common::iobench();
    c.current_dir(&dir).args([
        "--name=e",
        "--ioengine=null",
        "--size=64k",
        "--log_alternate_epoch=1",
        "--log_alternate_epoch_clock_id=99",
    ]);
    let out = common::run(c);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("log_alternate_epoch_clock_id") && err.contains("99"),
        "{err}"
    );
}
