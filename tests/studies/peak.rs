//! `iobench peak`: t/io_uring's options and output (seed 002).
use crate::common;

fn peak(args: &[&str]) -> std::process::Output {
    let mut c = common::iobench();
    c.arg("peak").args(args);
    common::run(c)
}

#[test]
fn nop_run_prints_a_line_a_second_and_the_maximum() {
    let out = peak(&["-N1", "-d16", "-s4", "-c4", "-r2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let per_second: Vec<&str> = text.lines().filter(|l| l.starts_with("IOPS=")).collect();
    assert_eq!(
        per_second.len(),
        1,
        "runtime 2 s gives one full-second line: {text}"
    );
    assert!(per_second[0].contains("IOS/call=4/"), "{text}");
    assert!(
        !per_second[0].contains("BW="),
        "no bandwidth for no-ops: {text}"
    );
    // t/io_uring sizes its completion ring to the submission ring (IORING_SETUP_CQSIZE).
    assert!(
        text.contains("Engine=io_uring, sq_ring=16, cq_ring=16"),
        "{text}"
    );
    assert!(text.contains("Exiting on timeout"), "{text}");
    let max = text
        .lines()
        .find_map(|l| l.strip_prefix("Maximum IOPS="))
        .expect("maximum line");
    assert!(max.ends_with('M') || max.ends_with('K'), "{max}");
}

#[test]
fn file_reads_with_latency_tracking_print_percentiles() {
    let dir = common::scratch("peak_file");
    let f = dir.join("peak.dat");
    std::fs::write(&f, vec![0u8; 8 << 20]).unwrap();
    let out = peak(&[
        "-d4",
        "-b512",
        "-s1",
        "-c1",
        "-p0",
        "-F1",
        "-B1",
        "-n1",
        "-D0",
        "-R1",
        "-X1",
        "-t1",
        "-r2",
        f.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("BW="), "{text}");
    assert!(text.contains(": Latency percentiles:"), "{text}");
    assert!(text.contains("th=["), "{text}");
    assert!(text.contains("99.9900th=["), "{text}");
}

#[test]
fn sync_mode_reads_with_preadv2() {
    let dir = common::scratch("peak_sync");
    let f = dir.join("peak.dat");
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    let out = peak(&["-S1", "-O0", "-b4096", "-r2", f.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Engine=preadv2"));
}

#[test]
fn bad_command_lines_fail_with_a_message() {
    for args in [
        &["-d0", "x"][..],
        &["-q"],
        &[],
        &["/nonexistent/file", "-r1"],
    ] {
        let out = peak(args);
        assert!(!out.status.success(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn legacy_aio_reads_the_file_and_drops_what_aio_cannot_do() {
    let dir = common::scratch("peak_aio");
    let f = dir.join("peak.dat");
    std::fs::write(&f, vec![0u8; 8 << 20]).unwrap();
    let out = peak(&[
        "-a1",
        "-d8",
        "-s2",
        "-c2",
        "-b4096",
        "-O0",
        "-t1",
        "-r2",
        f.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}{err}");
    // t/io_uring's defaults ask for polling, fixed buffers and registered files: legacy
    // AIO warns about each and runs without them.
    assert!(
        err.contains("aio does not support registered files or buffers"),
        "{err}"
    );
    assert!(text.contains("Engine=aio"), "{text}");
    assert!(
        text.contains("polled=0, fixedbufs=0/0, register_files=0, buffered=1, QD=8"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("IOPS="))
        .expect("a per-second line");
    assert!(line.contains("BW="), "{line}");
    assert!(text.contains("percentiles (usec):") || text.contains("percentiles (nsec):"));
}

#[test]
fn fio_3_42s_vectored_and_restricted_reads_run_and_dash_d_is_gone() {
    let dir = common::scratch("peak_vectored");
    let _g = common::Gone(dir.clone());
    let f = dir.join("peak.dat");
    std::fs::write(&f, vec![0u8; 4 << 20]).unwrap();
    let run = |args: &[&str]| {
        let mut c = common::iobench_default();
        c.arg("peak").args(args).arg(&f);
        common::run(c)
    };
    for args in [
        &["-V1", "-B0", "-F0", "-p0", "-O0", "-r1"][..],
        // As in t/io_uring, the restricted ring allows no SQE flags, so no fixed files
        // (IOSQE_FIXED_FILE): with -F1 the kernel refuses each read (EACCES).
        &["-V1", "-e1", "-B0", "-F0", "-p0", "-O0", "-r1"][..],
        &["-e1", "-B1", "-F0", "-p0", "-O0", "-r1"][..],
    ] {
        let out = run(args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {}{text}",
            String::from_utf8_lossy(&out.stderr)
        );
        // 3.37 dropped the `/D` after fixedbufs with -D itself.
        assert!(text.contains("polled=0, fixedbufs="), "{text}");
        assert!(
            !text.contains("fixedbufs=0/") && !text.contains("fixedbufs=1/"),
            "{text}"
        );
        assert!(text.contains("IOPS="), "{args:?}: {text}");
    }
    let out = run(&["-D1", "-r1"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("-D was removed in fio 3.37"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
