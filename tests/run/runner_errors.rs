//! I/O errors and stopping other jobs, against the real fio: the error line (file,
//! direction, offset, length, errno text), `continue_on_error`, `ignore_error`,
//! `error_dump`, the exit status, and which jobs `exitall`/`exit_what` stop.

use crate::common;

use std::process::{Command, Output};

/// The parts of a run an error decides: exit code, the stderr error lines (tool prefix
/// removed), the job's `err=` value, its issued counts and its `errors` line.
#[derive(Debug, PartialEq)]
struct Seen {
    code: Option<i32>,
    err_lines: Vec<String>,
    err: Option<String>,
    issued: Option<String>,
    errors: Option<String>,
    closing: bool,
}

fn seen(out: &Output, prefix: &str) -> Seen {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let field = |key: &str, end: char| {
        stdout.lines().find_map(|l| {
            let i = l.find(key)?;
            let rest = &l[i + key.len()..];
            Some(rest.split(end).next().unwrap_or("").trim().to_string())
        })
    };
    Seen {
        code: out.status.code(),
        err_lines: stderr
            .lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .filter(|l| l.starts_with("io_u error"))
            .map(str::to_string)
            .collect(),
        err: field("): err=", ':'),
        issued: field("issued rwts: total=", ' '),
        errors: field("errors    : ", '\n'),
        closing: stdout
            .lines()
            .any(|l| l.starts_with(prefix) && l.contains(", err=28/")),
    }
}

fn full_job(mut c: Command, extra: &[&str]) -> Output {
    c.args([
        "--name=full",
        "--filename=/dev/full",
        "--rw=write",
        "--bs=4k",
        "--size=16k",
    ])
    .args(extra);
    common::run(c)
}

#[test]
fn io_errors_and_continue_on_error_match_fio() {
    let Some(_) = common::fio() else {
        return;
    };
    let cases: [&[&str]; 6] = [
        &[],
        &["--continue_on_error=all"],
        &["--continue_on_error=all", "--ignore_error=,ENOSPC"],
        &["--ignore_error=,28"],
        &["--ignore_error=,ENOSPC", "--error_dump=1"],
        &["--continue_on_error=read", "--ignore_error=EIO,ENOSPC:EIO"],
    ];
    for extra in cases {
        let f = seen(&full_job(common::fio().expect("fio"), extra), "fio: ");
        let i = seen(&full_job(common::iobench(), extra), "iobench: ");
        assert_eq!(i, f, "with {extra:?}");
    }
    // The fatal case names file, direction, offset, length and the error.
    let i = seen(&full_job(common::iobench(), &[]), "iobench: ");
    assert_eq!(
        i.err_lines,
        vec!["io_u error on file /dev/full: No space left on device: write offset=0, buflen=4096"]
    );
    assert_eq!(i.code, Some(1));
}

fn terse_ios(out: &Output) -> Vec<(String, bool)> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("3;"))
        .map(|l| {
            let f: Vec<&str> = l.split(';').collect();
            // name, and whether it read anything
            (f[2].to_string(), f[5] != "0")
        })
        .collect()
}

/// Runs a job that ends quickly with `exitall` beside a 2 s job of another group in
/// the same phase, and a later 1 s group; returns per job whether it did I/O and how
/// long the run took.
fn exit_run(
    mut c: Command,
    dir: &std::path::Path,
    what: &str,
    thread: bool,
) -> (Vec<(String, bool)>, f64) {
    c.current_dir(dir).args([
        &format!("--thread={}", thread as u8),
        "--name=a",
        "--rw=read",
        "--size=1m",
        "--bs=4k",
        "--exitall",
        &format!("--exit_what={what}"),
        "--name=b",
        "--rw=read",
        "--size=1m",
        "--time_based",
        "--runtime=2",
        "--new_group",
        "--name=d",
        "--rw=read",
        "--size=1m",
        "--time_based",
        "--runtime=1",
        "--stonewall",
        "--output-format=terse",
    ]);
    let t = std::time::Instant::now();
    let out = common::run(c);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (terse_ios(&out), t.elapsed().as_secs_f64())
}

#[test]
fn exit_what_stops_the_jobs_fio_stops() {
    let dir = common::scratch("exit_what");
    for (what, b_runs_full, d_runs) in [
        ("group", true, true),
        ("stonewall", false, true),
        ("all", false, false),
    ] {
        for thread in [false, true] {
            let (jobs, secs) = exit_run(common::iobench(), &dir, what, thread);
            let names: Vec<&str> = jobs.iter().map(|j| j.0.as_str()).collect();
            assert_eq!(names, ["a", "b", "d"], "{what}");
            assert_eq!(jobs[2].1, d_runs, "{what} thread={thread}: {jobs:?}");
            let expect = match (b_runs_full, d_runs) {
                // Bounds that tell the cases apart (b's 2 s, d's 1 s) with room for
                // a loaded machine's start-up.
                (true, _) => 2.9..6.0,
                (false, true) => 0.9..2.8,
                (false, false) => 0.0..1.8,
            };
            assert!(expect.contains(&secs), "{what} thread={thread}: {secs}s");
            if let Some(fio) = common::fio() {
                if !thread {
                    let (fjobs, _) = exit_run(fio, &dir, what, false);
                    // Whether a stopped job managed an I/O first is timing; compare the
                    // first job and the later group's.
                    let f: Vec<bool> = [&fjobs[0], &fjobs[2]].iter().map(|j| j.1).collect();
                    let i: Vec<bool> = [&jobs[0], &jobs[2]].iter().map(|j| j.1).collect();
                    assert_eq!(i, f, "{what}");
                }
            }
        }
    }
}

#[test]
fn exitall_on_error_stops_the_group() {
    let dir = common::scratch("exitall_on_error");
    let t = std::time::Instant::now();
    let out = common::run({
        let mut c = common::iobench();
        c.current_dir(&dir).args([
            "--name=full",
            "--filename=/dev/full",
            "--rw=write",
            "--bs=4k",
            "--size=16k",
            "--exitall_on_error",
            "--name=long",
            "--rw=read",
            "--size=1m",
            "--time_based",
            "--runtime=5",
        ]);
        c
    });
    assert_eq!(out.status.code(), Some(1));
    assert!(t.elapsed().as_secs_f64() < 3.0, "{:?}", t.elapsed());
}
