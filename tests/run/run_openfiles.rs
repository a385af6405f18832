//! `openfiles`, `unlink_each_loop` and closing each file when the job is done with it,
//! checked against fio 3.33: the same open/close/I/O sequence in the iologs both tools
//! write, at most `openfiles` descriptors of the job's files open at once (strace), files
//! deleted and made afresh between loops, and the same failure when a fresh file is read.

use crate::common;

use std::path::Path;
use std::process::Command;

/// Runs `tool` with `args` in a fresh directory `dir` (see `common::run_logged`); returns
/// the iolog's lines and the JSON report.
fn logged(tool: Command, dir: &Path, args: &[&str]) -> (Vec<String>, serde_json::Value) {
    let (lines, out) = common::run_logged(tool, dir, args);
    (lines, common::json_report(&out))
}

/// Asserts iobench and fio log the same sequence for `args`; returns iobench's.
fn same_as_fio(tag: &str, args: &[&str]) -> Vec<String> {
    let base = common::scratch(&format!("openfiles_{tag}"));
    let (ours, _) = logged(common::iobench(), &base.join("iobench"), args);
    if let Some(fio) = common::fio() {
        let (theirs, _) = logged(fio, &base.join("fio"), args);
        assert_eq!(ours, theirs, "{tag}: iologs differ for {args:?}");
    }
    ours
}

fn count(lines: &[String], what: &str) -> usize {
    lines.iter().filter(|l| l.ends_with(what)).count()
}

#[test]
fn openfiles_limits_and_orders_the_open_files_as_fio() {
    // Two of four files at a time: files 2 and 3 open only after 0 and 1 are closed.
    let rr = same_as_fio(
        "rr",
        &[
            "--nrfiles=4",
            "--size=64k",
            "--bs=8k",
            "--rw=read",
            "--openfiles=2",
        ],
    );
    let pos = |s: &str| rr.iter().position(|l| l == s).unwrap();
    assert!(pos("j.0.1 close") < pos("j.0.2 open"), "{rr:?}");
    assert_eq!(count(&rr, " open"), 4);
    for (tag, extra) in [
        ("random", "--file_service_type=random"),
        ("random3", "--file_service_type=random:3"),
        ("zipf", "--file_service_type=zipf:1.2"),
    ] {
        same_as_fio(
            tag,
            &[
                "--nrfiles=5",
                "--size=80k",
                "--bs=4k",
                "--rw=randwrite",
                "--openfiles=3",
                extra,
            ],
        );
    }
    // One file at a time over three loops: each loop reopens them one by one.
    let one = same_as_fio(
        "loops",
        &[
            "--nrfiles=3",
            "--size=48k",
            "--bs=8k",
            "--rw=write",
            "--loops=3",
            "--openfiles=1",
        ],
    );
    assert_eq!(count(&one, " open"), 9);
}

#[test]
fn a_file_is_closed_when_the_job_is_done_with_it() {
    // file_service_type=sequential finishes file 0 before file 1: fio logs its close
    // there, not at the end of the job.
    let seq = same_as_fio(
        "sequential",
        &[
            "--nrfiles=2",
            "--size=32k",
            "--bs=8k",
            "--rw=read",
            "--file_service_type=sequential",
        ],
    );
    let pos = |s: &str| seq.iter().position(|l| l == s).unwrap();
    assert!(pos("j.0.0 close") < pos("j.0.1 open"), "{seq:?}");
    // The zipf service starts a file over when it runs out: fio closes and reopens it.
    same_as_fio(
        "zipf_wrap",
        &[
            "--nrfiles=4",
            "--size=64k",
            "--bs=4k",
            "--rw=randread",
            "--file_service_type=zipf:1.2",
        ],
    );
}

/// The most of the job's files (named `j.0.N` in `dir`) open at once in `tool`'s run of
/// `args`, from its openat and close calls.
fn most_open(tool: Command, dir: &Path, args: &[&str]) -> usize {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let trace = dir.with_extension("strace");
    let program = tool.get_program().to_owned();
    let mut st = Command::new("strace");
    st.args(["-f", "-qq", "-e", "trace=openat,close", "-o"])
        .arg(&trace)
        .arg(program)
        .arg("--name=j")
        .arg(format!("--directory={}", dir.display()))
        .args(args);
    common::run_ok(st);
    let text = std::fs::read_to_string(&trace).unwrap();
    // Descriptors of the job's files, per process (pid fd -> open).
    let mut open = std::collections::HashSet::new();
    let mut most = 0;
    let name = format!("{}/j.0.", dir.display());
    for l in text.lines() {
        let mut parts = l.splitn(2, ' ');
        let pid = parts.next().unwrap_or("");
        let call = parts.next().unwrap_or("").trim_start();
        if call.starts_with("openat(") && call.contains(&name) {
            if let Some(fd) = call
                .rsplit("= ")
                .next()
                .and_then(|r| r.trim().parse::<i32>().ok())
            {
                if fd >= 0 {
                    open.insert((pid.to_string(), fd));
                    most = most.max(open.len());
                }
            }
        } else if let Some(rest) = call.strip_prefix("close(") {
            if let Some(fd) = rest.split(')').next().and_then(|s| s.parse::<i32>().ok()) {
                open.remove(&(pid.to_string(), fd));
            }
        }
    }
    most
}

#[test]
fn no_more_than_openfiles_descriptors_are_open() {
    let base = common::scratch("openfiles_strace");
    // Layout opens each file once by itself; the run then keeps two open at most.
    let args = [
        "--nrfiles=6",
        "--size=96k",
        "--bs=4k",
        "--rw=randwrite",
        "--openfiles=2",
        "--ioengine=psync",
    ];
    let ours = most_open(common::iobench(), &base.join("iobench"), &args);
    assert_eq!(
        ours, 2,
        "iobench had {ours} of the job's files open at once"
    );
    if let Some(fio) = common::fio() {
        let theirs = most_open(fio, &base.join("fio"), &args);
        assert_eq!(ours, theirs);
    }
    // Without openfiles every file is open through the run.
    let all = most_open(
        common::iobench(),
        &base.join("all"),
        &args[..args.len() - 2],
    );
    assert_eq!(all, 6);
}

#[test]
fn asynchronous_and_mapping_engines_open_files_as_they_go() {
    // Each engine writes every block of every file with one file open at a time, and the
    // data verifies: the descriptors (and registered files, mappings) follow the opens.
    let base = common::scratch("openfiles_engines");
    for engine in [
        &["--ioengine=libaio", "--iodepth=8", "--direct=1"][..],
        &["--ioengine=io_uring", "--iodepth=8", "--registerfiles=1"][..],
        &["--ioengine=io_uring", "--iodepth=4", "--fixedbufs=1"][..],
        &["--ioengine=mmap"][..],
        &["--ioengine=sync"][..],
        &["--ioengine=posixaio", "--iodepth=4"][..],
    ] {
        let dir = base.join(engine[0].trim_start_matches("--ioengine="));
        let mut cmd = common::iobench();
        cmd.args([
            "--nrfiles=4",
            "--size=256k",
            "--bs=4k",
            "--rw=randwrite",
            "--openfiles=1",
            "--loops=2",
            "--unlink_each_loop=1",
            "--verify=crc32c",
        ])
        .args(engine);
        let (_, json) = logged(cmd, &dir, &[]);
        let job = &json["jobs"][0];
        assert_eq!(job["error"], 0, "{engine:?}: {job}");
        assert_eq!(job["write"]["io_bytes"], 512 * 1024, "{engine:?}");
        // The verify after each loop read everything back.
        assert_eq!(job["read"]["io_bytes"], 512 * 1024, "{engine:?}");
        for i in 0..4 {
            let len = std::fs::metadata(dir.join(format!("j.0.{i}")))
                .unwrap()
                .len();
            assert_eq!(len, 64 * 1024, "{engine:?}: j.0.{i}");
        }
    }
}

#[test]
fn unlink_each_loop_deletes_and_remakes_the_files_as_fio() {
    let args = [
        "--nrfiles=2",
        "--size=32k",
        "--bs=8k",
        "--rw=write",
        "--loops=3",
        "--unlink_each_loop=1",
    ];
    let log = same_as_fio("unlink", &args);
    assert_eq!(count(&log, " open"), 6, "{log:?}");
    // The files really go: strace shows each unlinked before loops 2 and 3.
    let dir = common::scratch("unlink_each_loop_strace");
    let trace = dir.join("trace");
    let mut st = Command::new("strace");
    st.args(["-f", "-qq", "-e", "trace=unlink,unlinkat", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_iobench"))
        .arg("--name=j")
        .arg(format!("--directory={}", dir.display()))
        .args(args);
    common::run_ok(st);
    let text = std::fs::read_to_string(&trace).unwrap();
    for f in ["j.0.0", "j.0.1"] {
        let n = text
            .lines()
            .filter(|l| l.contains(&format!("/{f}\"")) && l.ends_with("= 0"))
            .count();
        assert_eq!(n, 2, "{f} unlinked {n} times:\n{text}");
    }
}

#[test]
fn a_read_job_fails_on_its_deleted_files_as_fio() {
    // The second loop's files are gone and a read job does not create them: fio fails
    // with ENOENT from the open. A mixed job reads the fresh empty files: "full resid".
    for (tag, rw, errno) in [("read", "read", 2), ("randrw", "randrw", 5)] {
        let args = [
            "--nrfiles=3",
            "--size=48k",
            "--bs=4k",
            &format!("--rw={rw}"),
            "--loops=2",
            "--unlink_each_loop=1",
        ];
        let base = common::scratch(&format!("unlink_fail_{tag}"));
        let (ours, json) = logged(common::iobench(), &base.join("iobench"), &args);
        let job = &json["jobs"][0];
        assert_eq!(job["error"], errno, "{tag}: {job}");
        if let Some(fio) = common::fio() {
            let (theirs, fjson) = logged(fio, &base.join("fio"), &args);
            let fjob = &fjson["jobs"][0];
            assert_eq!(job["error"], fjob["error"], "{tag}");
            for d in ["read", "write"] {
                assert_eq!(job[d]["io_bytes"], fjob[d]["io_bytes"], "{tag} {d}");
                assert_eq!(job[d]["total_ios"], fjob[d]["total_ios"], "{tag} {d}");
            }
            assert_eq!(ours, theirs, "{tag}");
        }
    }
}

#[test]
fn files_the_run_did_not_create_are_kept() {
    let dir = common::scratch("unlink_each_loop_keep");
    let file = dir.join("mine");
    std::fs::write(&file, vec![7u8; 64 * 1024]).unwrap();
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(&file).unwrap().ino();
    let mut cmd = common::iobench();
    cmd.args([
        "--name=j",
        "--size=64k",
        "--bs=4k",
        "--rw=write",
        "--loops=2",
        "--unlink_each_loop=1",
    ])
    .arg(format!("--filename={}", file.display()));
    let out = common::run_ok(cmd);
    assert_eq!(std::fs::metadata(&file).unwrap().ino(), ino);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did not create"), "{err}");
}

#[test]
fn offload_cannot_open_files_as_it_goes() {
    let dir = common::scratch("openfiles_offload");
    let mut cmd = common::iobench();
    cmd.args([
        "--name=j",
        "--nrfiles=2",
        "--openfiles=1",
        "--size=32k",
        "--rw=write",
        "--io_submit_mode=offload",
        "--thread",
    ])
    .arg(format!("--directory={}", dir.display()));
    let out = common::run(cmd);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("offload"), "{err}");
}
