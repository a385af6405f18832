//! The cpuio engine side by side with fio 3.33's: the same report layout (no job header,
//! the engine's own start line, no bytes, I/Os counting busy periods), busy periods of
//! `cpuchunks` with the pause that makes them `cpuload` percent, `cpumode=qsort`, and
//! `exit_on_io_done` ending with the I/O jobs.

use crate::common;

use std::time::Instant;

/// A report's text with every number replaced by `#`, and run-specific lines dropped.
fn shape(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("fio-") && !l.starts_with("iobench-"))
        .filter(|l| !l.trim_start().starts_with("lat (")) // bucket spread varies per run
        .map(|l| {
            let mut out = String::new();
            let mut in_num = false;
            for c in l.chars() {
                if c.is_ascii_digit() || (in_num && c == '.') {
                    if !in_num {
                        out.push('#');
                    }
                    in_num = true;
                } else {
                    in_num = false;
                    out.push(c);
                }
            }
            // The date after pid= differs in form only by the clock.
            match out.find("pid=#:") {
                Some(i) => out[..i + 6].to_string(),
                None => out,
            }
        })
        .collect()
}

const JOB: &[&str] = &[
    "--name=c",
    "--ioengine=cpuio",
    "--cpuload=50",
    "--cpuchunks=10000",
    "--runtime=1",
    "--time_based",
];

#[test]
fn normal_report_has_fios_shape() {
    let ours = common::run_ok({
        let mut c = common::iobench();
        c.args(JOB);
        c
    });
    let ours = String::from_utf8_lossy(&ours.stdout).into_owned();
    assert!(
        ours.contains("c (noop): ioengine=cpuio, cpuload=50, cpucycle=10000\n"),
        "{ours}"
    );
    assert!(!ours.contains("rw=read"), "no job header: {ours}");
    let Some(mut fio) = common::fio() else { return };
    fio.args(JOB);
    let theirs = common::run_ok(fio);
    let theirs = String::from_utf8_lossy(&theirs.stdout).into_owned();
    assert_eq!(
        shape(&ours),
        shape(&theirs),
        "ours:\n{ours}\nfio:\n{theirs}"
    );
}

/// (total I/Os, io_bytes, read runtime, mean clat in ns, usr_cpu %) of a JSON report.
fn numbers(out: &std::process::Output) -> (u64, u64, u64, f64, f64) {
    let v = common::json_report(out);
    let j = &v["jobs"][0];
    let r = &j["read"];
    (
        r["total_ios"].as_u64().unwrap(),
        r["io_bytes"].as_u64().unwrap(),
        r["runtime"].as_u64().unwrap(),
        r["clat_ns"]["mean"].as_f64().unwrap(),
        j["usr_cpu"].as_f64().unwrap(),
    )
}

#[test]
fn busy_periods_and_pauses_match_fio() {
    let args = [JOB, &["--output-format=json"]].concat();
    let ours = numbers(&common::run_ok({
        let mut c = common::iobench();
        c.args(&args);
        c
    }));
    // 10 ms busy + 10 ms pause: about 50 periods in a second (fewer on a loaded host).
    assert!((20..=55).contains(&ours.0), "{ours:?}");
    assert_eq!((ours.1, ours.2), (0, 0), "no bytes, no direction runtime");
    assert!(ours.3 >= 10e6, "each period busies the CPU 10 ms: {ours:?}");
    let Some(mut fio) = common::fio() else { return };
    fio.args(&args);
    let theirs = numbers(&common::run_ok(fio));
    assert_eq!((theirs.1, theirs.2), (0, 0));
    let ratio = ours.0 as f64 / theirs.0 as f64;
    assert!((0.6..1.6).contains(&ratio), "ours {ours:?} fio {theirs:?}");
}

#[test]
fn qsort_mode_sorts_and_paces_itself() {
    let out = common::run_ok({
        let mut c = common::iobench();
        c.args([
            "--name=q",
            "--ioengine=cpuio",
            "--cpuload=50",
            "--cpumode=qsort",
            "--runtime=1",
            "--time_based",
        ]);
        c
    });
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("q (qsort): ioengine=cpuio, cpuload=50"),
        "{text}"
    );
    assert!(text.contains("issued rwts: total="), "{text}");
}

#[test]
fn exit_on_io_done_ends_with_the_io_jobs() {
    let dir = common::scratch("cpuio_exit");
    let file = dir.join("f");
    let run = |mut c: std::process::Command| {
        c.args([
            "--name=c",
            "--ioengine=cpuio",
            "--cpuload=30",
            "--cpuchunks=5000",
            "--exit_on_io_done=1",
            "--runtime=30",
            "--time_based",
            "--name=io",
            "--ioengine=psync",
            "--rw=write",
            "--size=1m",
            "--rate=1m",
        ])
        .arg(format!("--filename={}", file.display()));
        let t = Instant::now();
        common::run_ok(c);
        t.elapsed().as_secs_f64()
    };
    let ours = run(common::iobench());
    assert!(ours < 5.0, "cpuio ran on after the I/O job: {ours} s");
    if let Some(fio) = common::fio() {
        let theirs = run(fio);
        assert!(theirs < 5.0, "fio: {theirs} s");
    }
}

#[test]
fn cpuload_is_required() {
    let out = common::run({
        let mut c = common::iobench();
        c.args(["--name=c", "--ioengine=cpuio", "--runtime=1"]);
        c
    });
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cpuload"), "{err}");
}
