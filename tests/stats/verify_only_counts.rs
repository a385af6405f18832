//! verify_only reports the writes it stood in for as fio 3.33 does: issued and done in
//! the counts (`issued rwts: total=16,16`, the JSON write section's total_ios and
//! io_bytes) but with no run time, so no write rate and no WRITE group line; the verify
//! reads fill the depth, submit and complete lines.

use crate::common;

use std::path::Path;
use std::process::Command;

fn job(tool: Command, dir: &Path, extra: &[&str]) -> Command {
    let mut c = tool;
    c.current_dir(dir)
        .args([
            "--name=t",
            "--filename=v",
            "--bs=4k",
            "--rw=write",
            "--verify=crc32c",
            "--size=64k",
        ])
        .args(extra);
    c
}

/// The lines of a normal report that do not depend on timing.
fn steady_lines(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out)
        .lines()
        .filter(|l| {
            l.contains("issued rwts")
                || l.contains("IO depths")
                || l.trim_start().starts_with("submit")
                || l.trim_start().starts_with("complete")
                || l.starts_with("  read:")
                || l.starts_with("  write:")
                || l.contains("WRITE:")
        })
        .map(
            |l| match (l.find("IOPS="), l.find("io="), l.find(", run=")) {
                // The rate itself is timing; that the line is there is what counts.
                (Some(at), _, _) => l[..at].to_string(),
                // The group line: its bandwidth and run time are timing, its io= is not.
                (None, Some(io), Some(run)) if l.contains("WRITE:") => {
                    format!("  WRITE: {}", &l[io..run])
                }
                _ => l.to_string(),
            },
        )
        .collect()
}

/// (total_ios, io_bytes, runtime, bw) of read, write and trim in a JSON report.
fn json_counts(out: &[u8]) -> Vec<(u64, u64, u64, u64)> {
    let v: serde_json::Value = serde_json::from_slice(out).expect("JSON report");
    let j = &v["jobs"][0];
    ["read", "write", "trim"]
        .iter()
        .map(|d| {
            let n = |k: &str| j[*d][k].as_u64().unwrap();
            let rt = n("runtime");
            (n("total_ios"), n("io_bytes"), rt.min(1), n("bw").min(1))
        })
        .collect()
}

#[test]
fn verify_only_counts_the_writes_it_stands_in_for() {
    let dir = common::scratch("verify_only_counts");
    common::run_ok(job(common::iobench(), &dir, &[]));
    let ours = common::run_ok(job(common::iobench(), &dir, &["--verify_only=1"]));
    let lines = steady_lines(&ours.stdout);
    assert!(
        lines.iter().any(|l| l.contains("total=16,16,0,0")),
        "{lines:?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("write:") || l.contains("WRITE:")),
        "a write rate was shown: {lines:?}"
    );
    assert!(lines.iter().any(|l| l.contains("1=100.0%")), "{lines:?}");
    let json = common::run_ok(job(
        common::iobench(),
        &dir,
        &["--verify_only=1", "--output-format=json"],
    ));
    let counts = json_counts(&json.stdout);
    assert_eq!(counts[1], (16, 65536, 0, 0), "write: counted, no run time");
    assert_eq!((counts[0].0, counts[0].1), (16, 65536), "read");
    if let Some(fio) = common::fio() {
        let theirs = common::run_ok(job(fio, &dir, &["--verify_only=1"]));
        assert_eq!(lines, steady_lines(&theirs.stdout));
        let fjson = common::run_ok(job(
            Command::new("fio"),
            &dir,
            &["--verify_only=1", "--output-format=json"],
        ));
        assert_eq!(counts, json_counts(&fjson.stdout));
        // The plain write-then-verify run's depth lines agree too.
        let a = common::run_ok(job(common::iobench(), &dir, &[]));
        let b = common::run_ok(job(Command::new("fio"), &dir, &[]));
        assert_eq!(steady_lines(&a.stdout), steady_lines(&b.stdout));
    }
}
