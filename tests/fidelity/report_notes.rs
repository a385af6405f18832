//! fio's informational lines about a job (issue 35): the verify notes it prints while it
//! reads a job ("multiple writers may overwrite blocks ...", "verification read phase will
//! never start ..."), before the job's header line and, for each further clone, after it,
//! and the note on a synchronous engine's capped depth. iobench prints each where and as
//! often as fio 3.33 does, and in its default dialect as fio 3.41 does (the same lines as
//! 3.42's). The pairwise suite (`pairwise.rs`) found the verify ones missing.

use crate::common;
use common::reffio::{reference_fio, RefFio};
use std::process::Command;

/// The jobs compared: each case's arguments (the file is added).
const CASES: &[&[&str]] = &[
    // Both verify notes, the second once per clone, and the depth note.
    &[
        "--rw=write",
        "--verify=crc32c",
        "--time_based",
        "--runtime=50ms",
        "--numjobs=2",
        "--iodepth=4",
    ],
    // A mixed job reads: no "read phase" note; one writer per file set: no "multiple".
    &[
        "--rw=randrw",
        "--verify=crc32c",
        "--time_based",
        "--runtime=50ms",
    ],
    // verify_backlog verifies as it goes: no "read phase" note.
    &[
        "--rw=write",
        "--verify=md5",
        "--verify_backlog=8",
        "--time_based",
        "--runtime=50ms",
    ],
    // A size-bound job with a runtime cap: no note.
    &["--rw=write", "--verify=crc32c", "--runtime=1"],
];

/// The lines of a normal run's output that are notes, and the header lines around them,
/// in order (the results, which differ, left out).
fn notes(mut c: Command, file: &str, args: &[&str]) -> Vec<String> {
    c.args(["--name=n", "--size=256k", "--bs=4k"])
        .arg(format!("--filename={file}"))
        .args(args);
    let out = common::run_ok(c);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    text.lines()
        .filter(|l| {
            l.starts_with("fio: ")
                || l.starts_with("note: ")
                || l.starts_with("n: (g=")
                || *l == "..."
        })
        .map(str::to_string)
        .collect()
}

fn compare(fio: &RefFio, ours: impl Fn() -> Command) -> usize {
    let (host_dir, fio_dir) = fio.scratch(&format!("report_notes_{}", fio.version));
    let mut seen = 0;
    for args in CASES {
        let theirs = notes(
            fio.command(),
            &fio_dir.join("f").display().to_string(),
            args,
        );
        let mut c = ours();
        c.current_dir(&host_dir);
        let mine = notes(c, &host_dir.join("f").display().to_string(), args);
        assert_eq!(mine, theirs, "{} and iobench, {args:?}", fio.label());
        seen += theirs
            .iter()
            .filter(|l| !l.starts_with("n: (g=") && *l != "...")
            .count();
    }
    let _ = std::fs::remove_dir_all(&host_dir);
    seen
}

#[test]
fn verify_and_depth_notes_are_fios_in_333() {
    let Some(fio) = reference_fio("3.33") else {
        return;
    };
    // In the first case "multiple writers" once, "read phase" and the depth note once per
    // clone; none in the others: fails if iobench printed none.
    assert_eq!(compare(&fio, || fio.iobench()), 5);
}

#[test]
fn verify_and_depth_notes_are_fios_in_the_default_dialect() {
    let Some(fio) = reference_fio("3.41") else {
        return;
    };
    assert_eq!(compare(&fio, common::iobench_default), 5);
}

/// What the "read phase will never start" note says holds: a timed write job with verify
/// reads nothing back after its runtime, in fio as in iobench (which read the whole file
/// back after the runtime, pairwise row 15).
#[test]
fn a_timed_write_job_reads_nothing_back() {
    let Some(fio) = common::fio() else { return };
    let dir = common::scratch("notes_timed_verify");
    let reads = |mut c: Command| {
        c.current_dir(&dir).args([
            "--name=v",
            "--filename=f",
            "--size=256k",
            "--rw=write",
            "--verify=crc32c",
            "--time_based",
            "--runtime=100ms",
            "--output-format=json",
        ]);
        let j = common::json_report(&common::run_ok(c));
        (
            j["jobs"][0]["read"]["total_ios"].as_u64().unwrap(),
            j["jobs"][0]["write"]["total_ios"].as_u64().unwrap() > 0,
        )
    };
    assert_eq!(reads(fio), (0, true), "fio");
    assert_eq!(reads(common::iobench()), (0, true), "iobench");
    let _ = std::fs::remove_dir_all(&dir);
}
