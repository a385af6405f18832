//! End-to-end basics of the binary: a first run and errors before any I/O.
use crate::common;

#[test]
fn unknown_option_names_it_and_suggests_the_nearest() {
    let out = common::run({
        let mut c = common::iobench();
        c.args(["--name=x", "--bsize=4k"]);
        c
    });
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown option 'bsize'"), "{err}");
    assert!(err.contains("did you mean"), "{err}");
}

#[test]
fn psync_read_runs_end_to_end_and_counts_every_byte() {
    let dir = common::scratch("psync_read");
    let out = common::run({
        let mut c = common::iobench();
        c.current_dir(&dir)
            .args(["--name=x", "--rw=read", "--size=1m", "--bs=4k"]);
        c
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("read: IOPS="), "{text}");
    assert_eq!(std::fs::metadata(dir.join("x.0.0")).unwrap().len(), 1 << 20);
}
