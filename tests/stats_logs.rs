//! Sample logs against fio: the same files appear, with fio's names and line shapes.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// File name → (line count, fields per line) of the `.log` files in `dir`.
fn logs_in(dir: &Path) -> BTreeMap<String, (usize, Vec<usize>)> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".log") {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).unwrap();
        let mut fields: Vec<usize> = text.lines().map(|l| l.split(", ").count()).collect();
        fields.dedup();
        m.insert(name, (text.lines().count(), fields));
    }
    m
}

fn run_in(mut cmd: Command, dir: &Path, args: &[&str]) {
    let out = cmd.current_dir(dir).args(args).output().expect("spawn");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn per_io_logs_match_fio_names_and_lines() {
    let Some(fio) = common::fio() else { return };
    let a = common::scratch("logs_fio");
    let b = common::scratch("logs_iob");
    let args = [
        "--name=lg",
        "--filename=data",
        "--size=64k",
        "--bs=4k",
        "--rw=write",
        "--write_bw_log=lg",
        "--write_lat_log=lg",
        "--write_iops_log=lg",
        "--log_offset=1",
        "--output-format=json",
    ];
    run_in(fio, &a, &args);
    run_in(common::iobench(), &b, &args);
    let (f, i) = (logs_in(&a), logs_in(&b));
    assert_eq!(f, i);
    assert_eq!(f.len(), 5, "{f:?}");
    // Offsets are logged as fio logs them: each block's start.
    let clat = std::fs::read_to_string(b.join("lg_clat.1.log")).unwrap();
    let offsets: Vec<&str> = clat
        .lines()
        .map(|l| l.split(", ").nth(4).unwrap())
        .collect();
    assert_eq!(&offsets[..3], &["0", "4096", "8192"]);
}

#[test]
fn shared_log_without_job_number() {
    let Some(fio) = common::fio() else { return };
    let a = common::scratch("logs_shared_fio");
    let b = common::scratch("logs_shared_iob");
    let args = [
        "--name=s",
        "--filename=data",
        "--size=16k",
        "--write_lat_log=s",
        "--per_job_logs=0",
        "--output-format=terse",
    ];
    run_in(fio, &a, &args);
    run_in(common::iobench(), &b, &args);
    assert_eq!(logs_in(&a), logs_in(&b));
}
