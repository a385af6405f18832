//! Sample logs against fio: the same files appear, with fio's names and line shapes.

use crate::common;

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

/// (file name, fields per line) of the `.log` files in `dir`: line counts depend on timing.
fn shapes_in(dir: &Path) -> BTreeMap<String, Vec<usize>> {
    logs_in(dir).into_iter().map(|(k, v)| (k, v.1)).collect()
}

#[test]
fn hist_log_matches_fio_name_and_bins() {
    let Some(fio) = common::fio() else { return };
    let a = common::scratch("logs_hist_fio");
    let b = common::scratch("logs_hist_iob");
    let args = [
        "--name=h",
        "--ioengine=null",
        "--size=1g",
        "--rw=randrw",
        "--rate_iops=2000",
        "--runtime=700ms",
        "--time_based",
        "--write_hist_log=hh",
        "--log_hist_msec=200",
        "--log_hist_coarseness=3",
        "--output-format=json",
    ];
    run_in(fio, &a, &args);
    run_in(common::iobench(), &b, &args);
    let (f, i) = (shapes_in(&a), shapes_in(&b));
    assert_eq!(f, i);
    // 1856 buckets / 2^3, after time, ddir and bs.
    assert_eq!(i["hh_clat_hist.1.log"], vec![3 + 232]);
    let text = std::fs::read_to_string(b.join("hh_clat_hist.1.log")).unwrap();
    let mut times = Vec::new();
    let mut total = 0u64;
    for l in text.lines() {
        let f: Vec<u64> = l.split(", ").map(|v| v.parse().unwrap()).collect();
        assert!(f[1] <= 1 && f[2] == 4096, "{l}");
        if f[1] == 0 {
            times.push(f[0]);
        }
        total += f[3..].iter().sum::<u64>();
    }
    // One line per 200 ms window and direction, each counting only its own window.
    assert!((2..=4).contains(&times.len()), "{times:?}");
    // Windows are aligned to multiples of 200 ms (as fio's): a late line (say at 207 under
    // load) is followed by the next window's line at 400, each in a window of its own.
    assert!(
        times.windows(2).all(|w| w[1] / 200 > w[0] / 200),
        "{times:?}"
    );
    // rate_iops holds each direction to 2000/s: about 4 per ms in all.
    assert!(total > 1000 && total < 3000, "{total}");
}

#[test]
fn logs_are_written_while_the_job_runs() {
    let dir = common::scratch("logs_live");
    let mut child = common::iobench()
        .current_dir(&dir)
        .args([
            "--name=live",
            "--ioengine=null",
            "--size=1g",
            "--rate_iops=1000",
            "--runtime=20s",
            "--time_based",
            "--write_bw_log=live",
            "--write_hist_log=live",
            "--log_hist_msec=100",
            "--log_avg_msec=100",
            "--output-format=json",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // A run killed outright keeps what it logged up to the last second.
    let _ = child.kill();
    let _ = child.wait();
    std::thread::sleep(std::time::Duration::from_millis(200));
    for name in ["live_bw.1.log", "live_clat_hist.1.log"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        assert!(text.lines().count() >= 5, "{name}: {text:?}");
    }
}
