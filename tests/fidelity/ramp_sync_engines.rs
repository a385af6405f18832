//! `ramp_time` with a synchronous engine (issue 35): an engine that completes each I/O in
//! its queue call kept the worker in one fill until the run's end, so the ramp ended with
//! the run and took every count with it (total_ios 0, exit 0). Each engine is run with
//! fio 3.33 and iobench, and iobench's counts in the normal, JSON and terse reports must
//! agree with each other, with its own run without a ramp (the same speed) and, within a
//! wide range (the two tools' speeds differ on a loaded host), with fio's.

use crate::common;
use std::path::Path;
use std::process::Command;

/// The job every case runs: a 64 MiB file (none for null), sequential reads of `bs`.
const SIZE: &str = "64m";

fn job(engine: &str, bs: u64, dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        "--name=t".to_string(),
        format!("--ioengine={engine}"),
        format!("--size={SIZE}"),
        "--rw=read".into(),
        format!("--bs={bs}"),
    ];
    if engine != "null" {
        a.push(format!("--filename={}", dir.join("f").display()));
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Runs `tool` with `args` and `--output-format=fmt`, returning its stdout.
fn run_fmt(mut tool: Command, args: &[String], fmt: &str) -> String {
    tool.args(args).arg(format!("--output-format={fmt}"));
    let out = common::run_ok(tool);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The read I/Os of each job in a JSON report.
fn json_ios(s: &str, _bs: u64) -> Vec<u64> {
    let at = s.find('{').expect("a JSON report");
    let j: serde_json::Value = serde_json::from_str(&s[at..]).expect("JSON report");
    j["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["read"]["total_ios"].as_u64().unwrap())
        .collect()
}

/// The read I/Os of each job in a normal report (its `issued rwts: total=R,...` line).
fn normal_ios(s: &str, _bs: u64) -> Vec<u64> {
    s.lines()
        .filter_map(|l| l.trim().strip_prefix("issued rwts: total="))
        .map(|r| r.split(',').next().unwrap().parse().unwrap())
        .collect()
}

/// The read I/Os of each job in a terse (v3) report: its read KiB over the block size.
fn terse_ios(s: &str, bs: u64) -> Vec<u64> {
    s.lines()
        .filter(|l| l.starts_with("3;"))
        .map(|l| {
            let kib: u64 = l.split(';').nth(5).unwrap().parse().unwrap();
            kib * 1024 / bs
        })
        .collect()
}

fn lay_out(dir: &Path) {
    let f = std::fs::File::create(dir.join("f")).unwrap();
    f.set_len(64 << 20).unwrap();
    // Written, not sparse, so that mmap and direct reads touch real blocks.
    std::fs::write(dir.join("f"), vec![0x5a_u8; 64 << 20]).unwrap();
}

/// A time-based run with a ramp: every output counts the measured I/Os.
fn check_time_based(engine: &str, bs: u64, extra: &[&str]) {
    let Some(fio) = common::fio() else { return };
    // One directory per case (engine and options): tests run at once, and two psync cases
    // with one extra option each shared a directory that the first to end removed.
    let tag: String = extra
        .concat()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let dir = common::scratch(&format!("ramp_sync_{engine}_{bs}_{tag}"));
    let _gone = common::Gone(dir.clone());
    lay_out(&dir);
    let timed = ["--time_based", "--runtime=400ms"];
    let with_ramp: Vec<&str> = timed
        .iter()
        .copied()
        .chain(["--ramp_time=200ms"])
        .chain(extra.iter().copied())
        .collect();
    let args = job(engine, bs, &dir, &with_ramp);
    let fio_ios = json_ios(&run_fmt(fio, &args, "json"), bs);
    let json_text = run_fmt(common::iobench(), &args, "json");
    let json = json_ios(&json_text, bs);
    // The whole runtime is measured after the ramp (fio's epoch starts again there).
    let j: serde_json::Value = serde_json::from_str(&json_text).unwrap();
    for x in j["jobs"].as_array().unwrap() {
        let ms = x["read"]["runtime"].as_u64().unwrap();
        assert!(
            (400..2000).contains(&ms),
            "{engine} {extra:?}: runtime {ms} ms"
        );
    }
    let normal = normal_ios(&run_fmt(common::iobench(), &args, "normal"), bs);
    let terse = terse_ios(&run_fmt(common::iobench(), &args, "terse"), bs);
    let no_ramp_args: Vec<&str> = timed.iter().copied().chain(extra.iter().copied()).collect();
    let no_ramp = json_ios(
        &run_fmt(
            common::iobench(),
            &job(engine, bs, &dir, &no_ramp_args),
            "json",
        ),
        bs,
    );
    let what = format!(
        "{engine} {extra:?}: fio {fio_ios:?}, iobench json {json:?} normal {normal:?} \
         terse {terse:?}, iobench without the ramp {no_ramp:?}"
    );
    eprintln!("{what}");
    assert!(
        !fio_ios.is_empty() && fio_ios.iter().all(|&n| n > 0),
        "{what}"
    );
    for got in [&json, &normal, &terse] {
        assert_eq!(got.len(), fio_ios.len(), "one count per job: {what}");
        for ((&n, &f), &free) in got.iter().zip(&fio_ios).zip(&no_ramp) {
            // Counted at all, near iobench's own speed (the same run without a ramp)
            // and within a factor of fio's (iobench's null engine alone is 3-5x fio's;
            // the wide factors leave room for a loaded host's swings, seen up to 4x).
            assert!(n > 0, "no I/O counted after the ramp: {what}");
            assert!(n * 10 >= free && n <= free * 10, "{what}");
            assert!(n * 50 >= f && n <= f * 50, "{what}");
        }
    }
}

/// A size-bound run whose ramp ends partway: what is done after the ramp is counted,
/// and, as in fio, the ramp's I/Os come off the job's size (fewer than size/bs counted).
/// 512-byte reads of 64 MiB take both tools far longer than the ramp.
#[test]
fn size_bound_psync_counts_what_follows_the_ramp() {
    let Some(fio) = common::fio() else { return };
    let dir = common::scratch("ramp_sync_size");
    let _gone = common::Gone(dir.clone());
    lay_out(&dir);
    let bs = 512;
    let args = job("psync", bs, &dir, &["--ramp_time=20ms"]);
    let all = (64 << 20) / bs;
    let fio_ios = json_ios(&run_fmt(fio, &args, "json"), bs);
    for (fmt, parse) in [
        ("json", json_ios as fn(&str, u64) -> Vec<u64>),
        ("normal", normal_ios),
        ("terse", terse_ios),
    ] {
        let got = parse(&run_fmt(common::iobench(), &args, fmt), bs);
        let what = format!("{fmt}: fio {fio_ios:?}, iobench {got:?} of {all}");
        assert_eq!(got.len(), 1, "{what}");
        assert!(got[0] > 0 && got[0] < all, "{what}");
        assert!(fio_ios[0] > 0 && fio_ios[0] < all, "{what}");
    }
}

#[test]
fn psync_with_ramp_counts() {
    check_time_based("psync", 4096, &[]);
}

#[test]
fn psync_direct_1m_with_ramp_counts() {
    // The issue's own job, scaled down.
    check_time_based("psync", 1 << 20, &["--direct=1"]);
}

#[test]
fn sync_with_ramp_counts() {
    check_time_based("sync", 4096, &[]);
}

#[test]
fn pvsync2_with_ramp_counts() {
    check_time_based("pvsync2", 4096, &[]);
}

#[test]
fn vsync_with_ramp_counts() {
    check_time_based("vsync", 4096, &[]);
}

#[test]
fn mmap_with_ramp_counts() {
    check_time_based("mmap", 4096, &[]);
}

#[test]
fn null_with_ramp_counts() {
    check_time_based("null", 4096, &[]);
}

#[test]
fn psync_numjobs_thread_group_reporting_with_ramp_counts() {
    check_time_based(
        "psync",
        4096,
        &["--numjobs=2", "--thread", "--group_reporting"],
    );
}

#[test]
fn psync_numjobs_processes_with_ramp_counts() {
    check_time_based("psync", 4096, &["--numjobs=2"]);
}
