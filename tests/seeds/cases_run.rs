//! The acceptance workloads of tests/cases (copies of ../shared/cases) run with iobench:
//! seed 004's job files every time (a few seconds); the longer scripts of seeds 000 and
//! 002 (20-30 s each) when `IOBENCH_CASES=1`; seed 001's runs in cases_json (JSON, with
//! its SIGINT); seed 003 (root, a loop device) is in runner_targets.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases")
}

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_iobench"))
}

/// The repository's copies stay the same as the shared originals when those are present.
#[test]
fn case_copies_match_the_shared_cases() {
    let shared = common::shared().join("cases");
    if !shared.is_dir() {
        eprintln!("no ../shared/cases here: nothing to compare");
        return;
    }
    let mut names = Vec::new();
    for sub in ["", "seed004"] {
        for e in std::fs::read_dir(shared.join(sub))
            .expect("shared cases")
            .flatten()
        {
            if e.path().is_file() {
                names.push(Path::new(sub).join(e.file_name()));
            }
        }
    }
    assert!(names.len() >= 12, "{names:?}");
    for n in names {
        let a = std::fs::read(shared.join(&n)).expect("shared file");
        let b = std::fs::read(cases().join(&n))
            .unwrap_or_else(|_| panic!("tests/cases/{} is missing", n.display()));
        assert!(
            a == b,
            "tests/cases/{} differs from the shared copy",
            n.display()
        );
    }
}

#[test]
fn seed004_job_files_run_one_group_per_job() {
    let dir = common::scratch("cases_seed004");
    let mut files: Vec<PathBuf> = std::fs::read_dir(cases().join("seed004"))
        .expect("seed004")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 7);
    for f in files {
        let body = std::fs::read_to_string(&f).expect("job file");
        let jobs = body
            .lines()
            .filter(|l| l.starts_with('[') && l.trim() != "[global]")
            .count();
        let out = common::run({
            let mut c = common::iobench();
            c.arg(&f).env("DIR", &dir);
            c
        });
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}: {}\n{text}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        for g in 0..jobs {
            assert!(
                text.contains(&format!("Run status group {g} (all jobs):")),
                "{}: group {g} missing\n{text}",
                f.display()
            );
        }
        assert!(
            !text.contains(&format!("Run status group {jobs} ")),
            "{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs one script with FIO set to this build; returns its stdout.
fn script(name: &str) -> Option<String> {
    if std::env::var("IOBENCH_CASES").as_deref() != Ok("1") {
        eprintln!("skipping {name}: set IOBENCH_CASES=1 to run the long acceptance scripts");
        return None;
    }
    let scratch = common::big_scratch(&format!("cases_{name}"), common::case_bytes(name));
    let out = Command::new("sh")
        .arg(cases().join(name))
        .env("FIO", bin())
        .env("DIR", &scratch.dir)
        .output()
        .expect("run script");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{name}: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(text)
}

#[test]
fn seed000_five_libaio_jobs_run() {
    let Some(text) = script("seed000-uas.sh") else {
        return;
    };
    assert_eq!(
        text.matches("Run status group 0 (all jobs):").count(),
        5,
        "{text}"
    );
    assert_eq!(text.matches("Starting 8 processes").count(), 2, "{text}");
}

#[test]
fn seed002_peak_sweep_runs() {
    let Some(text) = script("seed002-peak.sh") else {
        return;
    };
    assert_eq!(text.matches("Maximum IOPS=").count(), 7, "{text}");
}
