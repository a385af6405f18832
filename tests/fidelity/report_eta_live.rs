//! The live status line during a run (`--eta=always`, `--eta-newline`): fio's layout with
//! the job map, percentage, rates and ETA; pending later groups shown as `P`; an endless
//! time_based job shows no made-up ETA; with JSON the line goes to stderr.

use crate::common;

use std::process::{Command, Stdio};

/// The status lines of a run's output (split at `\r` and `\n`).
fn status_lines(text: &str) -> Vec<String> {
    text.split(['\r', '\n'])
        .filter(|l| l.starts_with("Jobs: "))
        .map(str::to_string)
        .collect()
}

/// True for a full line like `Jobs: 1 (f=1): [R(1)][66.7%][r=3996KiB/s][r=999 IOPS][eta 00m:01s]`.
fn is_full_line(l: &str, map: &str) -> bool {
    let Some(rest) = l.strip_prefix("Jobs: ") else {
        return false;
    };
    let Some((_, rest)) = rest.split_once(": [") else {
        return false;
    };
    let parts: Vec<&str> = rest.trim_end().trim_end_matches(']').split("][").collect();
    parts.len() == 5
        && parts[0] == map
        && parts[1].ends_with('%')
        && parts[2].starts_with("r=")
        && parts[3].starts_with("r=")
        && parts[3].ends_with(" IOPS")
        && parts[4].starts_with("eta ")
}

fn rate_job(tool: &mut Command) -> &mut Command {
    tool.args([
        "--name=x",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=4",
        "--rate_iops=2000",
        "--eta=always",
        "--eta-newline=1",
    ])
}

#[test]
fn status_lines_have_fios_layout() {
    let out = common::run({
        let mut c = common::iobench();
        rate_job(&mut c);
        c
    });
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines = status_lines(&text);
    let full: Vec<&String> = lines.iter().filter(|l| is_full_line(l, "R(1)")).collect();
    assert!(!full.is_empty(), "{lines:?}");
    // The ETA counts down to the end of the 4 s runtime.
    assert!(full.iter().all(|l| l.contains("[eta 00m:0")), "{full:?}");
    // The job's rate limit follows the job count, as fio shows it.
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("Jobs: 1 (f=1), 0-2000 IOPS") || l.starts_with("Jobs: 0 (f=0)")),
        "{lines:?}"
    );
    assert!(text.contains("Run status group 0"), "{text}");
    if let Some(mut fio) = common::fio() {
        rate_job(&mut fio);
        let theirs = common::run(fio);
        let ftext = String::from_utf8_lossy(&theirs.stdout);
        let flines = status_lines(&ftext);
        // fio's rate-limited jobs print their rate instead of the map at first; its full
        // lines have the same shape as ours.
        let ffull = flines
            .iter()
            .filter(|l| {
                is_full_line(l.split_once(", ").map_or(l, |_| l), "R(1)") || l.contains("[R(1)]")
            })
            .count();
        assert!(ffull >= 1, "{flines:?}");
        assert!(
            flines
                .iter()
                .any(|l| l.starts_with("Jobs: 1 (f=1), 0-2000 IOPS: [R(1)]")),
            "{flines:?}"
        );
    }
}

#[test]
fn pending_groups_show_in_the_map() {
    let out = common::run({
        let mut c = common::iobench();
        c.args([
            "--eta=always",
            "--name=a",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=4",
            "--rate_iops=1000",
            "--numjobs=2",
            "--name=b",
            "--stonewall",
            "--ioengine=null",
            "--size=4k",
        ]);
        c
    });
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines = status_lines(&text);
    assert!(
        lines.iter().any(|l| is_full_line(l, "R(2),P(1)")),
        "{lines:?}"
    );
}

#[test]
fn an_endless_time_based_job_shows_no_eta() {
    let mut c = common::iobench();
    c.args([
        "--name=x",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--rate_iops=1000",
        "--eta=always",
    ])
    .stdout(Stdio::piped());
    let child = c.spawn().expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(4500));
    // SAFETY: signals the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let lines = status_lines(&text);
    let full: Vec<&String> = lines.iter().filter(|l| l.contains("[R(1)]")).collect();
    assert!(!full.is_empty(), "{lines:?}");
    assert!(
        full.iter()
            .all(|l| l.contains("[-.-%]") && l.trim_end().ends_with("[eta --]")),
        "{full:?}"
    );
    assert!(text.contains("Run status group 0"), "{text}");
}

#[test]
fn with_json_the_status_line_goes_to_stderr() {
    let out = common::run({
        let mut c = common::iobench();
        rate_job(&mut c).arg("--output-format=json");
        c
    });
    assert!(out.status.success());
    let _: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        status_lines(&err).iter().any(|l| is_full_line(l, "R(1)")),
        "{err}"
    );
}
