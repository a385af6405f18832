//! Verify trims (trim_percentage, trim_backlog, trim_backlog_batch, trim_verify_zero)
//! against fio 3.33 on a loop device: the same trims are issued (counts in the JSON, the
//! BLKDISCARD calls under strace), trimmed blocks must read back as zeroes, and the
//! targets and patterns fio cannot trim fail as under fio.

use crate::common;

use common::loopdev::Loop;
use std::process::Command;

/// (error, read, write, trim) issued counts of one JSON run.
fn counts(out: &std::process::Output) -> (i64, u64, u64, u64) {
    let text = String::from_utf8_lossy(&out.stdout);
    let at = text
        .find("{\n")
        .unwrap_or_else(|| panic!("no JSON in {text}"));
    let mut de = serde_json::Deserializer::from_str(&text[at..]).into_iter::<serde_json::Value>();
    let v = de.next().unwrap().unwrap();
    let j = &v["jobs"][0];
    let n = |d: &str| j[d]["total_ios"].as_u64().unwrap();
    (
        j["error"].as_i64().unwrap(),
        n("read"),
        n("write"),
        n("trim"),
    )
}

fn job(tool: Command, dev: &str, extra: &str) -> Command {
    let mut c = tool;
    c.args([
        "--name=t",
        "--bs=4k",
        "--rw=trimwrite",
        "--verify=crc32c",
        "--output-format=json",
    ])
    .arg(format!("--filename={dev}"))
    .args(extra.split_whitespace());
    c
}

#[test]
fn verify_trims_match_fio_counts() {
    let Some(lo) = Loop::new("verify_trim_counts", "8M") else {
        return;
    };
    let cases = [
        // (extra options, the counts fio 3.33 gives, checked below against fio itself)
        (
            "--size=256k --trim_percentage=50 --trim_backlog=4",
            (0, 64, 64, 94),
        ),
        // No backlog: nothing is trimmed (fio reports the chosen blocks as leaked).
        ("--size=256k --trim_percentage=50", (0, 64, 64, 64)),
        // Without the zero check, trimmed blocks are not read back.
        (
            "--size=256k --trim_percentage=50 --trim_backlog=4 --trim_verify_zero=0",
            (0, 34, 64, 94),
        ),
        (
            "--size=60k --trim_backlog=8 --trim_percentage=100",
            (0, 15, 15, 24),
        ),
        (
            "--size=60k --trim_backlog=8 --trim_percentage=100 --trim_backlog_batch=1",
            (0, 15, 15, 23),
        ),
        (
            "--size=256k --trim_backlog=7 --trim_percentage=30 --trim_backlog_batch=2 \
             --trim_verify_zero=0 --rw=randtrimwrite",
            (0, 46, 64, 82),
        ),
        (
            "--size=256k --trim_backlog=3 --trim_percentage=30 --randseed=7 \
             --rw=randtrimwrite --ioengine=libaio --iodepth=4",
            (0, 64, 64, 84),
        ),
        // Blocks a backlog verify has read leave the trim list, as in fio.
        (
            "--size=256k --trim_percentage=50 --trim_backlog=4 --verify_backlog=8",
            (0, 64, 64, 84),
        ),
        (
            "--size=256k --trim_percentage=50 --trim_backlog=3 --verify_backlog=5",
            (0, 64, 64, 89),
        ),
        // Each loop is verified, and trims start over with it.
        (
            "--size=256k --trim_percentage=50 --trim_backlog=4 --loops=2",
            (0, 128, 128, 188),
        ),
    ];
    let fio = common::fio().is_some();
    for (extra, want) in cases {
        let got = counts(&common::run(job(common::iobench(), &lo.dev, extra)));
        assert_eq!(got, want, "iobench with {extra}");
        if fio {
            let f = counts(&common::run(job(
                common::fio().expect("fio"),
                &lo.dev,
                extra,
            )));
            assert_eq!(got, f, "iobench vs fio with {extra}");
        }
    }
}

/// The BLKDISCARD ranges a run issues, in order.
fn discards(tool: Command, dev: &str, dir: &std::path::Path) -> Vec<String> {
    let log = dir.join("strace.log");
    let mut c = Command::new("strace");
    // The tool's environment goes along (iobench's IOBENCH_FIO_COMPAT: the dialect of the
    // fio it is compared with decides its seeds).
    for (k, v) in tool.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    // In the scratch directory: the verify job leaves its state file where it works.
    c.current_dir(dir)
        .args(["-f", "-qq", "-e", "trace=ioctl", "-o"])
        .arg(&log)
        .arg(tool.get_program())
        .args(
            job(
                Command::new("x"),
                dev,
                "--size=256k --trim_backlog=3 --trim_percentage=30 --randseed=7 \
                 --rw=randtrimwrite",
            )
            .get_args(),
        );
    common::run_ok(c);
    let text = std::fs::read_to_string(&log).unwrap();
    text.lines()
        .filter_map(|l| l.split_once("BLKDISCARD, ").map(|(_, r)| r.to_string()))
        .collect()
}

#[test]
fn verify_trims_discard_the_same_ranges_as_fio() {
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("strace not installed: skipping");
        return;
    }
    let Some(lo) = Loop::new("verify_trim_strace", "8M") else {
        return;
    };
    let dir = common::scratch("verify_trim_strace_log");
    let ours = discards(common::iobench(), &lo.dev, &dir);
    // 64 trims of the pattern itself and 20 verify trims.
    assert_eq!(ours.len(), 84, "{ours:?}");
    if common::fio().is_some() {
        let theirs = discards(common::fio().expect("fio"), &lo.dev, &dir);
        assert_eq!(ours, theirs);
    }
}

/// Runs a verify_only pass with trims over what is on the device; true when it passes.
fn verify_only_passes(tool: Command, dev: &str) -> (bool, String) {
    let out = common::run(job(
        tool,
        dev,
        "--size=64k --verify_only=1 --trim_percentage=50 --trim_backlog=4",
    ));
    let c = counts(&out);
    if c.0 == 0 {
        // The pass stands in for 16 writes and 21 trims (16 of the pattern, 5 verify
        // trims) and counts them as issued, as fio does.
        assert_eq!(c, (0, 16, 16, 21));
    }
    (c.0 == 0, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn trimmed_blocks_must_read_back_as_zeroes() {
    let Some(lo) = Loop::new("verify_trim_zero", "8M") else {
        return;
    };
    let mut tools = vec![("iobench", common::iobench as fn() -> Command)];
    if common::fio().is_some() {
        tools.push(("fio", || common::fio().expect("fio")));
    }
    for (name, tool) in tools {
        // Written without trims: the blocks the pass takes as trimmed still hold data.
        common::run_ok(job(tool(), &lo.dev, "--size=64k"));
        let (ok, err) = verify_only_passes(tool(), &lo.dev);
        assert!(!ok, "{name}: untrimmed data passed as trimmed");
        assert!(
            err.contains("trim: verify failed at file") && err.contains("offset 0, length 4096"),
            "{name}: {err}"
        );
        // Written with the same trims: the trimmed blocks are zeroes and the rest data.
        common::run_ok(job(
            tool(),
            &lo.dev,
            "--size=64k --trim_percentage=50 --trim_backlog=4",
        ));
        let (ok, err) = verify_only_passes(tool(), &lo.dev);
        assert!(ok, "{name}: {err}");
    }
}

#[test]
fn trim_on_a_regular_file_fails_as_under_fio() {
    let dir = common::scratch("verify_trim_file");
    let f = dir.join("f");
    std::fs::write(&f, vec![1u8; 65536]).unwrap();
    let run = |tool: Command| {
        let mut c = tool;
        c.args(["--name=t", "--bs=4k", "--size=64k", "--rw=trim"])
            .arg(format!("--filename={}", f.display()))
            .arg("--output-format=json");
        counts(&common::run(c))
    };
    // BLKDISCARD on a regular file: ENOTTY, the job's error, named as fio names it.
    assert_eq!(run(common::iobench()).0, libc::ENOTTY as i64);
    let mut c = common::iobench();
    c.args(["--name=t", "--bs=4k", "--size=64k", "--rw=trim"])
        .arg(format!("--filename={}", f.display()));
    let out = common::run(c);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("err=25 (file:ioengines.c:399, func=td_io_queue, error=Inappropriate ioctl"),
        "{text}"
    );
    if common::fio().is_some() {
        assert_eq!(run(common::fio().expect("fio")).0, libc::ENOTTY as i64);
    }
}

#[test]
fn trim_backlog_needs_a_pattern_that_trims() {
    let dir = common::scratch("verify_trim_refused");
    let mut c = common::iobench();
    c.args([
        "--name=t",
        "--rw=write",
        "--size=64k",
        "--verify=crc32c",
        "--trim_percentage=10",
        "--trim_backlog=4",
    ])
    .arg(format!("--filename={}", dir.join("f").display()));
    let out = common::run(c);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("trim_backlog") && err.contains("trimwrite"),
        "{err}"
    );
}
