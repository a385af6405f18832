//! Differential tests through the binaries: the same job run by fio 3.33 and by iobench
//! writes the same `write_iolog` (same files, actions, offsets and lengths in the same
//! order; only the time column differs), the random map touches every block once per
//! pass, size-based jobs move the same io_kbytes, and logs written by either tool replay
//! in the other with the same result.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// One logged operation without its time: `file action [offset length]`.
type Line = String;

/// Runs `tool` on `--name=x <args> --write_iolog=<log>` in `dir`; returns the log split
/// into one section per job clone (each starts with the header), sorted, since clones
/// append in the order they finish.
fn iolog_of(mut tool: Command, dir: &Path, tag: &str, args: &[&str]) -> Vec<Vec<Line>> {
    let log = dir.join(format!("{tag}.log"));
    let _ = std::fs::remove_file(&log);
    tool.current_dir(dir)
        .arg("--name=x")
        .args(args)
        .arg(format!("--write_iolog={}", log.display()))
        .arg("--output-format=json");
    let out = common::run(tool);
    assert!(
        out.status.success(),
        "{tag} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).expect("log written");
    let mut sections: Vec<Vec<Line>> = Vec::new();
    for l in text.lines() {
        if l.starts_with("fio version") {
            sections.push(vec![l.to_string()]);
            continue;
        }
        let rest = l.split_once(' ').map_or(l, |(_, r)| r);
        sections
            .last_mut()
            .expect("header first")
            .push(rest.to_string());
    }
    sections.sort();
    sections
}

/// Asserts both tools log the same I/O for `args`; returns iobench's log.
fn same_iolog(tag: &str, args: &[&str]) -> Vec<Vec<Line>> {
    let dir = common::scratch(&format!("iolog_{tag}"));
    let ours = iolog_of(common::iobench(), &dir, "iobench", args);
    if let Some(fio) = common::fio() {
        let theirs = iolog_of(fio, &dir, "fio", args);
        assert_eq!(ours, theirs, "{tag}: iologs differ for {args:?}");
    }
    ours
}

/// (action, offset, length) of each I/O line of a section.
fn ios(section: &[Line]) -> Vec<(String, u64, u64)> {
    section
        .iter()
        .filter_map(|l| {
            let p: Vec<&str> = l.split_whitespace().collect();
            match p.as_slice() {
                [_, a, o, n] => Some((a.to_string(), o.parse().ok()?, n.parse().ok()?)),
                _ => None,
            }
        })
        .collect()
}

#[test]
fn sequential_patterns_match_fio() {
    let null = "--ioengine=null";
    same_iolog("hole", &[null, "--rw=read:8k", "--size=128k"]);
    same_iolog("backward", &[null, "--rw=read:-8k", "--size=64k"]);
    same_iolog(
        "offset_pct",
        &[null, "--rw=write", "--offset=25%", "--size=64k"],
    );
    same_iolog("loops", &[null, "--rw=read", "--size=16k", "--loops=3"]);
    let log = same_iolog(
        "incr",
        &[
            null,
            "--rw=write",
            "--size=16k",
            "--numjobs=3",
            "--offset_increment=16k",
        ],
    );
    assert_eq!(log.len(), 3, "one section per clone");
    same_iolog("rw_mix", &[null, "--rw=rw", "--bs=2k", "--size=64k"]);
}

#[test]
fn syncs_are_logged_where_fio_issues_them() {
    let dir = common::scratch("iolog_sync_files");
    let file = format!("--filename={}", dir.join("f").display());
    for (tag, opt) in [
        ("fsync", "--fsync=2"),
        ("fdatasync", "--fdatasync=3"),
        ("sfr", "--sync_file_range=write:2"),
        ("end_fsync", "--end_fsync=1"),
    ] {
        let log = same_iolog(
            tag,
            &[&file, "--ioengine=psync", "--rw=write", "--size=32k", opt],
        );
        assert!(
            log[0].iter().any(|l| l.contains("sync")),
            "{tag}: no sync logged"
        );
    }
}

#[test]
fn random_map_touches_every_block_once_per_pass() {
    for rw in ["randread", "randwrite"] {
        let log = same_iolog(
            rw,
            &[
                "--ioengine=null",
                &format!("--rw={rw}"),
                "--size=256k",
                "--loops=2",
            ],
        );
        let mut hits: BTreeMap<u64, u32> = BTreeMap::new();
        let all = ios(&log[0]);
        assert_eq!(all.len(), 128);
        for (i, (_, off, len)) in all.iter().enumerate() {
            assert_eq!(*len, 4096);
            *hits.entry(*off).or_default() += 1;
            if i == 63 {
                assert_eq!(hits.len(), 64, "first pass covers every block once");
                assert!(hits.values().all(|&n| n == 1));
            }
        }
        assert_eq!(hits.len(), 64);
        assert!(hits.values().all(|&n| n == 2), "each block once per pass");
    }
}

/// The JSON `io_kbytes` per direction of `tool` running `args`.
fn io_kbytes(mut tool: Command, dir: &Path, args: &[&str]) -> (u64, u64) {
    tool.current_dir(dir)
        .arg("--name=x")
        .args(args)
        .arg("--output-format=json");
    let out = common::run(tool);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let j = &v["jobs"][0];
    (
        j["read"]["io_kbytes"].as_u64().unwrap_or(0),
        j["write"]["io_kbytes"].as_u64().unwrap_or(0),
    )
}

#[test]
fn size_based_jobs_move_the_same_io_kbytes() {
    let Some(_) = common::fio() else { return };
    let dir = common::scratch("iolog_kbytes");
    for args in [
        &["--rw=randrw", "--size=1m", "--rwmixread=70"][..],
        &["--rw=write", "--size=1m", "--bsrange=1k-16k"][..],
        &["--rw=read", "--size=256k", "--io_size=1m"][..],
        &["--rw=randwrite", "--size=512k", "--number_ios=37"][..],
        &["--rw=rw", "--size=256k", "--percentage_random=50"][..],
    ] {
        let mut a = vec!["--ioengine=null"];
        a.extend_from_slice(args);
        let ours = io_kbytes(common::iobench(), &dir, &a);
        let theirs = io_kbytes(common::fio().expect("fio"), &dir, &a);
        assert_eq!(ours, theirs, "io_kbytes differ for {args:?}");
    }
}

/// (total read I/Os, total write I/Os, read KiB, write KiB) of a replay by `tool`.
fn replay(mut tool: Command, dir: &Path, log: &Path, extra: &[&str]) -> [u64; 4] {
    tool.current_dir(dir)
        .arg("--name=r")
        .arg("--ioengine=psync")
        .arg(format!("--read_iolog={}", log.display()))
        .args(extra)
        .arg("--output-format=json");
    let out = common::run(tool);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let j = &v["jobs"][0];
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap_or(0);
    [
        n("read", "total_ios"),
        n("write", "total_ios"),
        n("read", "io_kbytes"),
        n("write", "io_kbytes"),
    ]
}

#[test]
fn logs_replay_in_either_tool() {
    let dir = common::scratch("iolog_replay");
    let fio_available = common::fio().is_some();
    // A log from each tool: random mixed I/O on file "x.0.0" in `dir`.
    let make = |tool: Command, name: &str| {
        let log = dir.join(name);
        let _ = std::fs::remove_file(&log);
        let mut t = tool;
        t.current_dir(&dir).args([
            "--name=x",
            "--ioengine=null",
            "--rw=randrw",
            "--size=96k",
            "--bs=4k",
        ]);
        t.arg(format!("--write_iolog={}", log.display()));
        assert!(common::run(t).status.success());
        log
    };
    let mut logs = vec![make(common::iobench(), "ours.log")];
    if fio_available {
        logs.push(make(common::fio().expect("fio"), "fio.log"));
    }
    for log in &logs {
        let text = std::fs::read_to_string(log).unwrap();
        let reads = text.lines().filter(|l| l.contains(" read ")).count() as u64;
        let writes = text.lines().filter(|l| l.contains(" write ")).count() as u64;
        let _ = std::fs::remove_file(dir.join("x.0.0"));
        let ours = replay(common::iobench(), &dir, log, &["--replay_no_stall=1"]);
        assert_eq!([ours[0], ours[1]], [reads, writes], "{}", log.display());
        assert_eq!(ours[2] + ours[3], 96);
        // The replayed file is made as large as the log's furthest I/O.
        assert_eq!(
            std::fs::metadata(dir.join("x.0.0")).unwrap().len(),
            96 * 1024
        );
        if fio_available {
            let theirs = replay(common::fio().unwrap(), &dir, log, &["--replay_no_stall=1"]);
            assert_eq!(ours, theirs, "replays of {} differ", log.display());
        }
        // replay_redirect, replay_scale and replay_align: the same I/O, moved.
        let target = dir.join("redirected");
        let _ = std::fs::remove_file(&target);
        let redirect = format!("--replay_redirect={}", target.display());
        let opts = [redirect.as_str(), "--replay_scale=2", "--replay_align=8k"];
        let ours = replay(common::iobench(), &dir, log, &opts);
        let size = std::fs::metadata(&target).unwrap().len();
        assert!(size <= 48 * 1024 + 4096 && size % 4096 == 0, "{size}");
        if fio_available {
            // fio does not lay out a replayed file (reading past its end is an error
            // there), so it replays on the file iobench made.
            let theirs = replay(common::fio().unwrap(), &dir, log, &opts);
            assert_eq!(ours, theirs);
            assert_eq!(std::fs::metadata(&target).unwrap().len(), size);
        }
    }
}

#[test]
fn strided_zones_match_fio() {
    let z = ["--ioengine=null", "--zonemode=strided"];
    for (tag, extra) in [
        (
            "zones_seq",
            &["--rw=read", "--zonesize=16k", "--zoneskip=16k"][..],
        ),
        (
            "zones_range",
            &[
                "--rw=read",
                "--zonesize=8k",
                "--zonerange=32k",
                "--zoneskip=8k",
            ][..],
        ),
        (
            "zones_rand",
            &["--rw=randread", "--zonesize=16k", "--zoneskip=16k"][..],
        ),
        (
            "zones_loops",
            &[
                "--rw=write",
                "--zonesize=16k",
                "--zoneskip=16k",
                "--loops=2",
            ][..],
        ),
    ] {
        let mut args = z.to_vec();
        args.extend_from_slice(extra);
        args.push("--size=128k");
        let log = same_iolog(tag, &args);
        // Whatever fio says, no I/O lands in a skipped stretch.
        if tag != "zones_range" {
            assert!(
                ios(&log[0]).iter().all(|(_, o, _)| o % 32768 < 16384),
                "{tag}"
            );
        }
    }
}

/// Wall time of a replay of `log` by iobench, and its (reads, writes) counts.
fn timed_replay(dir: &Path, log: &Path, extra: &[&str]) -> (std::time::Duration, [u64; 4]) {
    let t = std::time::Instant::now();
    let r = replay(common::iobench(), dir, log, extra);
    (t.elapsed(), r)
}

#[test]
fn version2_logs_and_replay_timing() {
    let dir = common::scratch("iolog_v2");
    let f = dir.join("f");
    std::fs::write(&f, vec![0u8; 16384]).unwrap();
    let f = f.display();
    // Version 2: no times; `wait` holds until that many ms after the start.
    let v2 = dir.join("v2.log");
    std::fs::write(
        &v2,
        format!(
            "fio version 2 iolog\n{f} add\n{f} open\n{f} write 0 4096\n{f} write 8192 4096\n\
             {f} wait 300 0\n{f} read 0 4096\n{f} read 8192 8192\n{f} close\n"
        ),
    )
    .unwrap();
    let (took, ours) = timed_replay(&dir, &v2, &[]);
    assert_eq!(ours, [2, 2, 12, 8]);
    assert!(took.as_millis() >= 300, "v2 wait not honoured: {took:?}");
    let (took, _) = timed_replay(&dir, &v2, &["--replay_no_stall=1"]);
    assert!(
        took.as_millis() < 250,
        "replay_no_stall still waited: {took:?}"
    );
    if let Some(fio) = common::fio() {
        assert_eq!(replay(fio, &dir, &v2, &[]), ours);
    }
    // Version 3: the times between entries are replayed, scaled by replay_time_scale.
    let v3 = dir.join("v3.log");
    std::fs::write(
        &v3,
        format!(
            "fio version 3 iolog\n1 {f} add\n2 {f} open\n1000 {f} read 0 4096\n\
             400000 {f} write 4096 4096\n400010 {f} close\n"
        ),
    )
    .unwrap();
    let (took, ours) = timed_replay(&dir, &v3, &[]);
    assert_eq!(ours, [1, 1, 4, 4]);
    assert!(took.as_millis() >= 399, "v3 times not honoured: {took:?}");
    let (fast, _) = timed_replay(&dir, &v3, &["--replay_time_scale=400"]);
    assert!(
        fast.as_millis() >= 99 && fast < took,
        "scaled replay took {fast:?}"
    );
    let (none, _) = timed_replay(&dir, &v3, &["--replay_no_stall=1"]);
    assert!(none < fast, "no_stall {none:?} vs scaled {fast:?}");
    if let Some(fio) = common::fio() {
        assert_eq!(replay(fio, &dir, &v3, &[]), ours);
    }
}
