//! `--debug=parse` prints fio's steady-state threshold line right after the
//! `steadystate` option's handle lines (issue 24, item 4.2), with fio's number formats:
//! `%f` for IOPS limits and percentages, an integer in bytes for bandwidth.
use crate::common;

use common::{iobench, run_ok, scratch};
use std::process::Command;

/// The parse lines from `handle_option=steadystate` on, up to the next option's, with the
/// thread id column dropped.
fn steady_lines(mut c: Command, ss: &str, dir: &std::path::Path) -> Vec<String> {
    c.current_dir(dir).args([
        "--debug=parse",
        "--name=x",
        "--ioengine=null",
        "--size=1m",
        &format!("--ss={ss}"),
        "--ss_dur=1s",
        "--runtime=1s",
    ]);
    let out = run_ok(c);
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("parse "))
        .map(|l| {
            let rest = l["parse".len()..].trim_start();
            rest.split_once(' ')
                .map_or("", |(_, m)| m.trim())
                .to_string()
        })
        .collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("handle_option=steadystate,"))
        .unwrap_or_else(|| panic!("no steadystate line in {lines:?}"));
    lines[at..]
        .iter()
        .take_while(|l| *l == &lines[at] || !l.starts_with("handle_option="))
        .cloned()
        .collect()
}

#[test]
fn steady_state_parse_lines_match_fio() {
    let Some(_) = common::fio() else { return };
    let dir = scratch("debug_parse_steady");
    for ss in [
        "iops:10",
        "iops:.1%",
        "bw:10%",
        "bw:12",
        "bw:10m",
        "bw:10M",
        "bw:0x10",
        "bw_slope:1k",
        "iops_slope:0.1%",
        "iops_slope:3",
        "bw_slope:0.5%",
        "iops: 10 ",
        "iops:10 %",
        "iops:1e3",
        "iops:1234567.891",
    ] {
        let f = steady_lines(Command::new("fio"), ss, &dir);
        let i = steady_lines(iobench(), ss, &dir);
        assert!(
            f.iter().any(|l| l.starts_with("set steady state")),
            "fio printed {f:?}"
        );
        assert_eq!(i, f, "--ss={ss}");
    }
}
