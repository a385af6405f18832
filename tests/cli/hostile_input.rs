//! Hostile and mistaken input (issue 13): each case asserts what iobench does with it —
//! a clear error and a non-zero exit, or a correct run — and never a panic, a hang or
//! data lost. Where fio 3.33 behaves well, the same input is run through fio and the
//! outcome compared.

use crate::common;

use common::{fio, scratch};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test; `IOBENCH_TEST_BIN` points these tests at another build (to
/// show that each fails on a build without the fix).
fn iobench() -> Command {
    match std::env::var_os("IOBENCH_TEST_BIN") {
        Some(b) => Command::new(b),
        None => common::iobench(),
    }
}

/// Runs `cmd` with a deadline: a hang is a test failure, not a stuck CI.
fn run_for(mut cmd: Command, secs: u64) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn");
    let pid = child.id() as i32;
    // Drain the pipes while waiting (a large report must not block the child).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(o) => o.expect("output"),
        Err(_) => {
            // SAFETY: kill the child we spawned (its pid is still ours: not yet reaped).
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let o = rx.recv().expect("output").expect("output");
            panic!(
                "{cmd:?} still running after {secs} s (a hang): {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}

fn ib(args: &[&str]) -> Output {
    let mut c = iobench();
    c.args(args);
    run_for(c, 30)
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// No panic (rc 101, "panicked"), no abort (a signal), a non-zero exit code.
fn assert_clean_failure(o: &Output, what: &str) {
    let e = err(o);
    assert!(
        !e.contains("panicked") && !e.contains("RUST_BACKTRACE"),
        "{what}: panicked: {e}"
    );
    let code = o.status.code();
    assert!(code.is_some(), "{what}: killed by a signal: {e}");
    assert_ne!(code, Some(0), "{what}: accepted: {}{e}", out(o));
    assert_ne!(code, Some(101), "{what}: panicked: {e}");
}

fn digest(p: &Path) -> (u64, u64) {
    let data = std::fs::read(p).expect("read");
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in &data {
        h = (h ^ *b as u64).wrapping_mul(0x100_0000_01b3);
    }
    (data.len() as u64, h)
}

fn patterned(p: &Path, len: usize) {
    let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(p, data).expect("write");
}

fn json(o: &Output) -> serde_json::Value {
    common::json_report(o)
}

// ---- defect 1: arguments that are not UTF-8 ----

#[test]
fn d01_non_utf8_job_name_and_filename() {
    let dir = scratch("hi_d01");
    let fname = dir.join(OsStr::from_bytes(b"data-\xe9t\xe9"));
    let mut c = iobench();
    c.arg(OsStr::from_bytes(b"--name=j\xe9"))
        .arg({
            let mut a = b"--filename=".to_vec();
            a.extend_from_slice(fname.as_os_str().as_bytes());
            std::ffi::OsString::from(OsStr::from_bytes(&a))
        })
        .args(["--rw=write", "--size=64k", "--output-format=terse"]);
    let o = run_for(c, 30);
    assert!(o.status.success(), "{}", err(&o));
    // The file has exactly the bytes given, not a lossy conversion, and the report
    // prints the job name's bytes as given (as fio does).
    assert_eq!(std::fs::metadata(&fname).expect("raw name").len(), 65536);
    assert!(o.stdout.windows(4).any(|w| w == b";j\xe9;"), "{}", out(&o));
}

#[test]
fn d01_non_utf8_job_file_path() {
    let dir = scratch("hi_d01b");
    let jf = dir.join(OsStr::from_bytes(b"job-\xff.fio"));
    std::fs::write(&jf, "[x]\nioengine=null\nsize=1m\n").unwrap();
    let mut c = iobench();
    c.arg(&jf).arg("--output-format=terse");
    let o = run_for(c, 30);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).starts_with("3;"), "{}", out(&o));
}

// ---- defect 2: random maps too big for memory ----

#[test]
fn d02_huge_random_map_fails_cleanly() {
    let o = ib(&[
        "--name=x",
        "--ioengine=null",
        "--size=1p",
        "--bs=4k",
        "--rw=randread",
        "--number_ios=1000",
    ]);
    assert_clean_failure(&o, "1p random map");
    let e = err(&o);
    assert!(e.contains("norandommap") && e.contains("lfsr"), "{e}");
    assert!(!e.contains("memory allocation"), "{e}");
    // The ways out named work.
    for way in ["--norandommap", "--random_generator=lfsr"] {
        let o = ib(&[
            "--name=x",
            "--ioengine=null",
            "--size=1p",
            "--bs=4k",
            "--rw=randread",
            "--number_ios=1000",
            way,
        ]);
        assert!(o.status.success(), "{way}: {}", err(&o));
    }
}

// ---- defect 3: job limits ----

#[test]
fn d03_numjobs_beyond_the_job_limit_refused_at_once() {
    let t = Instant::now();
    let o = ib(&[
        "--name=x",
        "--ioengine=null",
        "--size=1m",
        "--numjobs=1000000",
    ]);
    assert_clean_failure(&o, "numjobs=1000000");
    assert!(err(&o).contains("maximum number of jobs"), "{}", err(&o));
    assert!(t.elapsed() < Duration::from_secs(10));
    if let Some(mut f) = fio() {
        f.args([
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--numjobs=1000000",
        ]);
        let fo = run_for(f, 60);
        assert!(!fo.status.success(), "fio refuses it too");
    }
    let o = ib(&[
        "--max-jobs=2",
        "--name=x",
        "--ioengine=null",
        "--size=1m",
        "--numjobs=3",
    ]);
    assert_clean_failure(&o, "--max-jobs=2 numjobs=3");
    let o = ib(&[
        "--max-jobs=3",
        "--name=x",
        "--ioengine=null",
        "--size=1m",
        "--numjobs=3",
    ]);
    assert!(o.status.success(), "{}", err(&o));
}

// ---- defect 4: a FIFO as the target ----

#[test]
fn d04_fifo_target_fails_without_hanging() {
    let dir = scratch("hi_d04");
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for rw in ["read", "write"] {
        let f = format!("--filename={}", fifo.display());
        let o = ib(&["--name=x", &f, &format!("--rw={rw}"), "--size=1m"]);
        assert_clean_failure(&o, "fifo");
        assert!(err(&o).contains("failed to get file size"), "{}", err(&o));
        if let Some(mut fc) = fio() {
            fc.args(["--name=x", &f, &format!("--rw={rw}"), "--size=1m"]);
            let fo = run_for(fc, 30);
            assert!(
                out(&fo).contains("failed to get file size")
                    || err(&fo).contains("failed to get file size")
            );
        }
    }
}

// ---- defect 5 and 7: peak ----

#[test]
fn d05_peak_thread_count_capped_and_runtime_kept() {
    let dir = scratch("hi_d05");
    let f = dir.join("f");
    patterned(&f, 1 << 20);
    let fs = f.to_str().unwrap();
    let o = ib(&["peak", "-r1", "-n", "100000", fs]);
    assert_clean_failure(&o, "peak -n 100000");
    assert!(err(&o).contains("-n 100000"), "{}", err(&o));
    let t = Instant::now();
    let o = ib(&["peak", "-r1", "-p0", "-n", "256", fs]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
}

#[test]
fn d07_peak_on_a_file_smaller_than_the_block_size() {
    let dir = scratch("hi_d07");
    let f = dir.join("tiny");
    patterned(&f, 1000);
    let o = ib(&["peak", "-r1", "-p0", f.to_str().unwrap()]);
    assert_clean_failure(&o, "peak on 1000 bytes");
    assert!(!out(&o).contains("Maximum IOPS=0"), "{}", out(&o));
    assert!(
        err(&o).contains("smaller than the block size"),
        "{}",
        err(&o)
    );
}

#[test]
fn d07_numjobs_zero_refused() {
    let o = ib(&["--name=x", "--ioengine=null", "--size=1m", "--numjobs=0"]);
    assert_clean_failure(&o, "numjobs=0");
    assert!(err(&o).contains("numjobs"), "{}", err(&o));
    if let Some(mut f) = fio() {
        f.args(["--name=x", "--ioengine=null", "--size=1m", "--numjobs=0"]);
        assert!(!run_for(f, 30).status.success(), "fio fails it too");
    }
}

// ---- defect 6: no job at all ----

#[test]
fn d06_no_job_defined() {
    let dir = scratch("hi_d06");
    let empty = dir.join("empty.fio");
    std::fs::write(&empty, "").unwrap();
    let global = dir.join("global.fio");
    std::fs::write(&global, "[global]\nbs=4k\n").unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec![],
        vec![empty.display().to_string()],
        vec![global.display().to_string()],
        vec![
            global.display().to_string(),
            "--output-format=json".to_string(),
        ],
    ];
    for args in &cases {
        let mut c = iobench();
        c.args(args);
        let o = run_for(c, 30);
        assert_clean_failure(&o, &format!("{args:?}"));
        assert!(
            err(&o).contains("No job(s) defined"),
            "{args:?}: {}",
            err(&o)
        );
        assert!(!out(&o).contains("Starting"), "{}", out(&o));
        if let Some(mut f) = fio() {
            f.args(args);
            let fo = run_for(f, 30);
            assert_eq!(fo.status.code(), Some(1));
            assert!(err(&fo).contains("No job(s) defined"));
        }
    }
}

// ---- defect 8: a read past the end of an existing file ----

#[test]
fn d08_read_offset_past_eof_leaves_the_file() {
    let dir = scratch("hi_d08");
    let f = dir.join("data");
    for tool in ["iobench", "fio"] {
        patterned(&f, 4 << 20);
        let before = digest(&f);
        let mut c = if tool == "fio" {
            match fio() {
                Some(c) => c,
                None => continue,
            }
        } else {
            iobench()
        };
        c.args(["--name=x", "--rw=read", "--offset=60m"])
            .arg(format!("--filename={}", f.display()));
        let o = run_for(c, 30);
        assert!(!o.status.success(), "{tool} accepted it");
        assert_eq!(digest(&f), before, "{tool} changed the file");
        if tool == "iobench" {
            assert!(err(&o).contains("offset"), "{}", err(&o));
        }
    }
}

// ---- defects 9 and 10: iolog entries past the end, and huge lengths ----

fn iolog(dir: &Path, name: &str, file: &Path, lines: &[&str]) -> String {
    let mut s = String::from("fio version 2 iolog\n");
    let f = file.display();
    s.push_str(&format!("{f} add\n{f} open\n"));
    for l in lines {
        s.push_str(&format!("{f} {l}\n"));
    }
    s.push_str(&format!("{f} close\n"));
    let p = dir.join(name);
    std::fs::write(&p, s).unwrap();
    p.display().to_string()
}

#[test]
fn d09_iolog_entry_past_eof_fails_with_eio_and_leaves_the_file() {
    let dir = scratch("hi_d09");
    let f = dir.join("data");
    let log = iolog(&dir, "l", &f, &["read 0 4096", "read 8388608 4096"]);
    for tool in ["iobench", "fio"] {
        patterned(&f, 1 << 20);
        let before = digest(&f);
        let mut c = if tool == "fio" {
            match fio() {
                Some(c) => c,
                None => continue,
            }
        } else {
            iobench()
        };
        c.args(["--name=x", "--output-format=json"])
            .arg(format!("--read_iolog={log}"));
        let o = run_for(c, 30);
        assert!(!o.status.success(), "{tool} exit 0");
        assert_eq!(digest(&f), before, "{tool} changed the file");
        let j = json(&o);
        assert_eq!(j["jobs"][0]["error"], 5, "{tool}");
        assert_eq!(j["jobs"][0]["read"]["io_bytes"], 4096, "{tool}");
    }
}

#[test]
fn d10_iolog_length_beyond_32_bits_is_ignored_not_truncated() {
    let dir = scratch("hi_d10");
    let f = dir.join("data");
    patterned(&f, 1 << 20);
    let before = digest(&f);
    let log = iolog(&dir, "l", &f, &["read 0 4294967296", "read 0 4096"]);
    let mut c = iobench();
    c.args(["--name=x", "--output-format=json"])
        .arg(format!("--read_iolog={log}"));
    let o = run_for(c, 30);
    assert_eq!(digest(&f), before, "the file was laid out again");
    let j = json(&o);
    let read = j["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
    assert!(read <= 4096, "read {read} bytes");
    assert!(err(&o).contains("line ignored"), "{}", err(&o));
}

// ---- defect 12: a job whose layout fails stays in the report ----

#[test]
fn d12_layout_failure_keeps_the_job_with_its_error() {
    let dir = scratch("hi_d12");
    let file = dir.join("plain");
    std::fs::write(&file, "x").unwrap();
    // A directory that is a regular file: the layout fails with ENOTDIR.
    let o = ib(&[
        "--name=x",
        &format!("--directory={}", file.display()),
        "--rw=read",
        "--size=1m",
        "--output-format=json",
    ]);
    assert_clean_failure(&o, "layout in a file");
    let j = json(&o);
    assert_eq!(j["jobs"].as_array().unwrap().len(), 1, "{j}");
    assert_eq!(j["jobs"][0]["jobname"], "x");
    assert_eq!(j["jobs"][0]["error"], libc::ENOTDIR);
}

// ---- defect 13: --output keeps stdout clean ----

#[test]
fn d13_error_line_does_not_go_to_stdout_with_output_file() {
    let dir = scratch("hi_d13");
    let outf = dir.join("out.txt");
    let o = ib(&[
        "--name=x",
        "--filename=/dev/full",
        "--rw=write",
        "--size=64k",
        &format!("--output={}", outf.display()),
    ]);
    assert_clean_failure(&o, "/dev/full");
    assert_eq!(out(&o), "", "stdout must stay empty");
    assert!(err(&o).contains("err=28"), "{}", err(&o));
    let text = std::fs::read_to_string(&outf).unwrap();
    assert!(text.contains("err=28"), "{text}");
    // And JSON on stdout stays JSON.
    let o = ib(&[
        "--name=x",
        "--filename=/dev/full",
        "--rw=write",
        "--size=64k",
        "--output-format=json",
    ]);
    let s = out(&o);
    assert!(s.starts_with('{'), "{s}");
    serde_json::from_str::<serde_json::Value>(&s).expect("valid JSON");
}

// ---- defect 15: messages that name option and value ----

#[test]
fn d15_messages_name_option_and_value() {
    let dir = scratch("hi_d15");
    let log = dir.join("no/such/dir/log");
    let o = ib(&[
        "--name=x",
        "--ioengine=null",
        "--size=1m",
        &format!("--write_iolog={}", log.display()),
    ]);
    assert_clean_failure(&o, "write_iolog");
    assert!(
        err(&o).contains("write_iolog") && err(&o).contains(&log.display().to_string()),
        "{}",
        err(&o)
    );
    let o = ib(&[
        "--name=x",
        "--ioengine=null",
        "--size=1m",
        "--cpus_allowed=999",
    ]);
    assert_clean_failure(&o, "cpus_allowed");
    assert!(
        err(&o).contains("cpus_allowed") && err(&o).contains("999"),
        "{}",
        err(&o)
    );
    // Refused at parse time, before anything runs.
    assert!(!out(&o).contains("Starting"), "{}", out(&o));
    let o = ib(&[
        "--name=x",
        "--ioengine=null",
        "--offset=18446744073709547520",
        "--size=4k",
    ]);
    assert_clean_failure(&o, "offset overflow");
    assert!(
        err(&o).contains("offset") && !err(&o).contains("specify size"),
        "{}",
        err(&o)
    );
}

// ---- defect 16: legitimate job files ----

#[test]
fn d16_deep_include_chains_and_cycles() {
    let dir = scratch("hi_d16");
    for i in 1..40 {
        std::fs::write(
            dir.join(format!("i{i}.fio")),
            format!("include i{}.fio\n", i + 1),
        )
        .unwrap();
    }
    std::fs::write(dir.join("i40.fio"), "bs=8k\n").unwrap();
    let top = dir.join("top.fio");
    std::fs::write(&top, "[x]\nioengine=null\nsize=1m\ninclude i1.fio\n").unwrap();
    let mut c = iobench();
    c.arg(&top).arg("--output-format=json");
    let o = run_for(c, 30);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(json(&o)["jobs"][0]["job options"]["bs"], "8k");
    if let Some(mut f) = fio() {
        f.arg("--parse-only").arg(&top);
        assert!(run_for(f, 30).status.success(), "fio takes 40 levels");
    }
    // A cycle is an error that says so, not a hang or a depth count.
    std::fs::write(dir.join("i40.fio"), "include i1.fio\n").unwrap();
    let mut c = iobench();
    c.arg(&top);
    let o = run_for(c, 30);
    assert_clean_failure(&o, "include cycle");
    assert!(err(&o).contains("cycle"), "{}", err(&o));
}

#[test]
fn d16_latin1_job_file() {
    let dir = scratch("hi_d16b");
    let jf = dir.join("latin1.fio");
    std::fs::write(
        &jf,
        b"; caf\xe9 cr\xe8me\n[x]\nioengine=null\nsize=1m\n# \xff\xfe\n".as_slice(),
    )
    .unwrap();
    let mut c = iobench();
    c.arg(&jf).arg("--output-format=terse");
    let o = run_for(c, 30);
    assert!(o.status.success(), "{}", err(&o));
    if let Some(mut f) = fio() {
        f.arg(&jf).arg("--output-format=terse");
        assert!(run_for(f, 30).status.success());
    }
}

// ---- defect 17: deliberate differences from fio are said ----

#[test]
fn d17_unlink_keeps_files_it_did_not_create_and_says_so() {
    let dir = scratch("hi_d17");
    let f = dir.join("mine");
    patterned(&f, 1 << 20);
    let o = ib(&[
        "--name=x",
        &format!("--filename={}", f.display()),
        "--rw=read",
        "--unlink=1",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(f.exists(), "a file the run did not create was deleted");
    assert!(err(&o).contains("unlink=1 keeps"), "{}", err(&o));
    // A file the run created is removed.
    let g = dir.join("made");
    let o = ib(&[
        "--name=x",
        &format!("--filename={}", g.display()),
        "--rw=write",
        "--size=64k",
        "--unlink=1",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(!g.exists());
}

#[test]
fn d17_writing_through_a_symlink_is_announced() {
    let dir = scratch("hi_d17b");
    let target = dir.join("target");
    patterned(&target, 64 << 10);
    let link = dir.join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = ib(&[
        "--name=x",
        &format!("--filename={}", link.display()),
        "--rw=write",
        "--size=64k",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains("symbolic link") && err(&o).contains("target"),
        "{}",
        err(&o)
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

// ---- the wider suite: bad values, huge and negative numbers, encodings ----

/// What a case must do.
enum Want {
    /// Fail cleanly, with stderr naming each of these.
    Fail(&'static [&'static str]),
    /// Run to completion (fio accepts it too).
    Ok,
}

/// Command-line cases on a 1 MiB null job: each is refused naming the option (and where it
/// helps the value), or accepted where fio accepts it.
const CLI_CASES: &[(&str, Want)] = &[
    ("--bs=0", Want::Fail(&["bs"])),
    ("--bs=-4k", Want::Fail(&["bs", "-4k", "negative"])),
    (
        "--bs=99999999999999999999",
        Want::Fail(&["bs", "too large"]),
    ),
    ("--bs=4q", Want::Fail(&["bs", "unit"])),
    ("--size=-1", Want::Fail(&["size", "negative"])),
    ("--size=1e", Want::Fail(&["size", "1e"])),
    ("--size=150%", Want::Fail(&["size", "150%"])),
    ("--iodepth=0", Want::Fail(&["iodepth", "0"])),
    ("--iodepth=-1", Want::Fail(&["iodepth", "-1"])),
    ("--iodepth=100000000", Want::Fail(&["memory"])),
    ("--rw=readwrit", Want::Fail(&["rw", "readwrit"])),
    ("--rw=", Want::Fail(&["rw"])),
    ("--rwmixread=101", Want::Fail(&["rwmixread", "101"])),
    ("--rwmixread=-5", Want::Fail(&["rwmixread", "-5"])),
    ("--runtime=-1", Want::Fail(&["runtime", "-1"])),
    ("--runtime=abc", Want::Fail(&["runtime", "abc"])),
    ("--ramp_time=1y", Want::Fail(&["ramp_time", "1y"])),
    ("--numjobs=-3", Want::Fail(&["numjobs", "-3"])),
    ("--numjobs=99999999999999999999", Want::Fail(&["numjobs"])),
    ("--offset=-4k", Want::Fail(&["offset", "negative"])),
    ("--offset=200%", Want::Fail(&["offset", "200%"])),
    ("--bssplit=4k/200", Want::Fail(&["bssplit", "200"])),
    ("--bssplit=4k/50:8k/60", Want::Fail(&["bssplit", "110%"])),
    (
        "--percentage_random=101",
        Want::Fail(&["percentage_random"]),
    ),
    (
        "--random_distribution=zipf:0",
        Want::Fail(&["random_distribution", "zipf"]),
    ),
    (
        "--random_distribution=zipf:-1",
        Want::Fail(&["random_distribution"]),
    ),
    (
        "--random_distribution=pareto:2",
        Want::Fail(&["random_distribution", "pareto"]),
    ),
    (
        "--random_distribution=normal:-5",
        Want::Fail(&["random_distribution"]),
    ),
    (
        "--random_distribution=bogus",
        Want::Fail(&["random_distribution", "bogus"]),
    ),
    (
        "--ioengine=nonexistent",
        Want::Fail(&["ioengine", "nonexistent"]),
    ),
    ("--nice=100", Want::Fail(&["nice", "100"])),
    ("--prio=99", Want::Fail(&["prio", "99"])),
    ("--rate=-1", Want::Fail(&["rate", "negative"])),
    ("--rate_iops=1q", Want::Fail(&["rate_iops", "1q"])),
    ("--thinktime=-1", Want::Fail(&["thinktime"])),
    ("--loops=-1", Want::Fail(&["loops", "-1"])),
    ("--verify=bogus", Want::Fail(&["verify", "bogus"])),
    (
        "--buffer_compress_percentage=200",
        Want::Fail(&["buffer_compress_percentage"]),
    ),
    (
        "--dedupe_percentage=101",
        Want::Fail(&["dedupe_percentage"]),
    ),
    ("--cpus_allowed=a-b", Want::Fail(&["cpus_allowed", "a"])),
    ("--cpus_allowed=3-1", Want::Fail(&["cpus_allowed", "3-1"])),
    (
        "--cpus_allowed=0-77777777777777",
        Want::Fail(&["cpus_allowed", "too large"]),
    ),
    ("--status-interval=-1", Want::Fail(&["status-interval"])),
    ("--eta=sometimes", Want::Fail(&["eta", "sometimes"])),
    ("--output-format=xml", Want::Fail(&["output-format", "xml"])),
    ("--unknownoption=1", Want::Fail(&["unknownoption"])),
    ("--filename=", Want::Fail(&["filename"])),
    (
        "--exitall_on_error=maybe",
        Want::Fail(&["exitall_on_error", "maybe"]),
    ),
    ("--fill_device=2", Want::Fail(&["fill_device", "2"])),
    // Found by fuzzing: a pattern starting with a multi-byte character.
    (
        "--buffer_pattern=\u{166}00",
        Want::Fail(&["buffer_pattern"]),
    ),
    ("--verify_pattern=\u{e9}1", Want::Fail(&["verify_pattern"])),
    ("--offset=9223372036854775807", Want::Fail(&["offset"])),
    // Accepted by fio too.
    ("--bsrange=8k-4k", Want::Ok),
    ("--loops=0", Want::Ok),
    ("--startdelay=5-1", Want::Ok),
    ("--bs=4k,8k,16k", Want::Ok),
];

#[test]
fn cli_cases() {
    let mut failures = Vec::new();
    for (arg, want) in CLI_CASES {
        let o = ib(&["--name=x", "--ioengine=null", "--size=1m", arg]);
        let e = err(&o);
        let ok = match want {
            Want::Ok => o.status.success(),
            Want::Fail(words) => {
                o.status.code().is_some_and(|c| c != 0 && c != 101)
                    && !e.contains("panicked")
                    && words.iter().all(|w| e.contains(w))
            }
        };
        if !ok {
            failures.push(format!("{arg}: rc {:?}: {e}", o.status.code()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(CLI_CASES.len() >= 50);
}

/// Job files that try to exhaust or confuse the reader.
#[test]
fn job_file_bombs() {
    let dir = scratch("hi_bombs");
    let many: String = (0..5000)
        .map(|i| format!("[j{i}]\nioengine=null\nsize=4k\n"))
        .collect();
    let long_value = format!(
        "[x]\nioengine=null\nsize=1m\ndescription={}\n",
        "a".repeat(2_000_000)
    );
    let cases: Vec<(&str, Vec<u8>, Option<&str>)> = vec![
        ("many", many.into_bytes(), Some("maximum number of jobs")),
        ("longvalue", long_value.into_bytes(), None),
        (
            "longname",
            format!("[{}]\nioengine=null\n", "n".repeat(300)).into_bytes(),
            Some("longer than 255"),
        ),
        ("nul", b"[x]\nioengine=null\x00\nsize=1m\n".to_vec(), None),
        (
            "unsetvar",
            b"[x]\nioengine=null\nsize=1m\nbs=${IOBENCH_SURELY_UNSET}\n".to_vec(),
            Some("bs"),
        ),
        ("unclosed", b"[x\nioengine=null\n".to_vec(), Some("closing")),
        (
            "beforesection",
            b"ioengine=null\n[x]\nsize=1m\n".to_vec(),
            Some("before any [section]"),
        ),
        (
            "badexpr",
            b"[x]\nioengine=null\nsize=(1+)*2\n".to_vec(),
            Some("size"),
        ),
        (
            "deepparens",
            format!(
                "[x]\nioengine=null\nsize=1m\nbs={}1{}\n",
                "(".repeat(5000),
                ")".repeat(5000)
            )
            .into_bytes(),
            Some("bs"),
        ),
        (
            "devzero",
            b"[x]\nioengine=null\nsize=1m\ninclude /dev/zero\n".to_vec(),
            Some("/dev/zero"),
        ),
        (
            "selfinclude",
            b"[x]\nioengine=null\nsize=1m\ninclude selfinclude.fio\n".to_vec(),
            Some("cycle"),
        ),
    ];
    let mut failures = Vec::new();
    for (name, text, want) in &cases {
        let p = dir.join(format!("{name}.fio"));
        std::fs::write(&p, text).unwrap();
        let mut c = iobench();
        c.arg(&p).arg("--output-format=terse");
        let o = run_for(c, 30);
        let e = err(&o);
        let ok = match want {
            None => o.status.success(),
            Some(w) => o.status.code().is_some_and(|c| c == 1) && e.contains(w),
        };
        if !ok || e.contains("panicked") {
            failures.push(format!(
                "{name}: rc {:?}: {}",
                o.status.code(),
                &e[..e.len().min(300)]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // A job file that is a device is refused rather than read forever.
    let o = ib(&["/dev/zero"]);
    assert_clean_failure(&o, "/dev/zero as job file");
}

/// Targets that change under the run: a file truncated while a job reads it fails with
/// a message and keeps its JSON; nothing panics.
#[test]
fn target_truncated_under_the_run() {
    let dir = scratch("hi_trunc");
    let f = dir.join("data");
    patterned(&f, 64 << 20);
    let mut c = iobench();
    c.args([
        "--name=x",
        "--rw=read",
        "--bs=4k",
        "--rate=20m",
        "--output-format=json",
    ])
    .arg(format!("--filename={}", f.display()))
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(!err(&o).contains("panicked"), "{}", err(&o));
    assert!(
        !o.status.success(),
        "short reads past the new end must fail the job"
    );
    let j = json(&o);
    assert!(j["jobs"][0]["read"]["io_bytes"].as_u64().unwrap() > 0);
    assert_ne!(j["jobs"][0]["error"], 0);
}

// ---- issue 26, item 11: smaller defects where fio 3.33 does no better ----

#[test]
fn i26_control_characters_in_a_job_name_keep_the_json_valid() {
    let o = ib(&[
        "--name=a\tb\u{1}c\"d\\",
        "--ioengine=null",
        "--size=64k",
        "--output-format=json",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let j = json(&o);
    assert_eq!(j["jobs"][0]["jobname"], "a\tb\u{1}c\"d\\");
    // fio's own escapes are kept: only control characters gained one.
    assert!(
        out(&o).contains(r#""jobname" : "a\tb\u0001c\"d\\","#),
        "{}",
        out(&o)
    );
}

#[test]
fn i26_an_unknown_cmdhelp_name_fails() {
    let o = ib(&["--cmdhelp=bogus"]);
    assert_clean_failure(&o, "--cmdhelp=bogus");
    assert!(err(&o).contains("No such command: bogus"), "{}", err(&o));
    let o = ib(&["--cmdhelp=bs"]);
    assert!(o.status.success(), "{}", err(&o));
}

#[test]
fn i26_a_closed_stdout_fails_before_the_run() {
    let dir = scratch("i26_closed_stdout");
    let f = dir.join("f");
    // `sh -c 'exec iobench … >&-'`: the report has nowhere to go.
    let bin = format!("{:?}", iobench().get_program());
    let job = format!(
        "--name=x --ioengine=psync --size=64k --filename={}",
        f.display()
    );
    let sh = |redirect: &str| {
        let mut c = Command::new("sh");
        c.arg("-c").arg(format!("exec {bin} {job} {redirect}"));
        run_for(c, 30)
    };
    let o = sh(">&-");
    assert_clean_failure(&o, "closed stdout");
    assert!(err(&o).contains("standard output is closed"), "{}", err(&o));
    assert!(
        !f.exists(),
        "the job must not run when its report cannot be written"
    );
    // With --output the same run is fine.
    let out = dir.join("out.txt");
    let o = sh(&format!("--output={} >&-", out.display()));
    assert!(o.status.success(), "{}", err(&o));
    assert!(std::fs::read_to_string(&out).unwrap().contains("READ:"));
    // `>/dev/null` (write-only) and a read-write /dev/null, as Python's
    // subprocess.DEVNULL gives it (bench/run.py), are a report the user threw away.
    let o = sh(">/dev/null");
    assert!(o.status.success(), "{}", err(&o));
    let o = sh("1<>/dev/null");
    assert!(o.status.success(), "{}", err(&o));
    // A one-shot answer is lost the same way.
    let o = sh("--version >&-");
    assert!(!o.status.success() && err(&o).contains("standard output is closed"));
}

// ---- issue 26, items 10 and 11: no hang on any peer; smaller defects ----

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A TCP listener on loopback that accepts and never says a word, for `secs` seconds;
/// returns its port and the thread holding it.
fn silent_server(secs: u64) -> (u16, std::thread::JoinHandle<()>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    l.set_nonblocking(true).unwrap();
    let h = std::thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs(secs);
        let mut held = Vec::new();
        while Instant::now() < end {
            if let Ok((s, _)) = l.accept() {
                held.push(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    (port, h)
}

#[test]
fn i26_fifo_outputs_without_a_reader_fail_at_once() {
    let dir = scratch("i26_fifo_out");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let f = dir.join("f");
    let job = [
        "--name=x".to_string(),
        "--ioengine=psync".to_string(),
        "--size=64k".to_string(),
        format!("--filename={}", f.display()),
    ];
    for opt in ["--output", "--live"] {
        let mut c = iobench();
        c.args(&job).arg(format!("{opt}={}", fifo.display()));
        let t = Instant::now();
        let o = run_for(c, 30);
        assert_clean_failure(&o, opt);
        assert!(err(&o).contains("no reader"), "{opt}: {}", err(&o));
        assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    }
}

#[test]
fn i26_report_and_compare_refuse_a_fifo_input() {
    let dir = scratch("i26_fifo_in");
    let fifo = dir.join("r.json");
    mkfifo(&fifo);
    let fs = fifo.to_str().unwrap();
    let html = dir.join("r.html");
    for args in [
        vec!["report", fs, "-o", html.to_str().unwrap()],
        vec!["compare", fs, fs],
    ] {
        let o = ib(&args);
        assert_clean_failure(&o, args[0]);
        assert!(err(&o).contains("not a regular file"), "{}", err(&o));
    }
}

#[test]
fn i26_an_empty_result_is_refused() {
    let dir = scratch("i26_empty_result");
    let empty = dir.join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let nojobs = dir.join("nojobs.json");
    std::fs::write(&nojobs, "{\"fio version\" : \"fio-3.33\", \"jobs\" : []}\n").unwrap();
    let html = dir.join("r.html");
    for input in [&empty, &nojobs] {
        let i = input.to_str().unwrap();
        let o = ib(&["report", i, "-o", html.to_str().unwrap()]);
        assert_clean_failure(&o, i);
        assert!(err(&o).contains(i), "{}", err(&o));
        let o = ib(&["compare", i, i]);
        assert_clean_failure(&o, i);
        assert!(err(&o).contains(i), "{}", err(&o));
    }
}

#[test]
fn i26_live_write_errors_fail_the_run_after_its_report() {
    let dir = scratch("i26_live_full");
    let f = dir.join("f");
    let o = ib(&[
        "--name=x",
        "--ioengine=psync",
        "--size=64k",
        &format!("--filename={}", f.display()),
        "--live=/dev/full",
        "--output-format=json",
    ]);
    assert_clean_failure(&o, "--live=/dev/full");
    assert!(err(&o).contains("--live"), "{}", err(&o));
    // The run's report is still printed.
    assert_eq!(json(&o)["jobs"][0]["jobname"], "x");
}

#[test]
fn i26_peak_into_a_closed_pipe_does_not_panic() {
    let dir = scratch("i26_peak_pipe");
    let f = dir.join("f");
    patterned(&f, 1 << 20);
    let bin = format!("{:?}", iobench().get_program());
    let mut c = Command::new("bash");
    c.arg("-c").arg(format!(
        "{bin} peak -r2 -p0 -d1 -s1 -c1 {} 2>{}/err | head -c 1 >/dev/null; exit ${{PIPESTATUS[0]}}",
        f.display(),
        dir.display()
    ));
    let o = run_for(c, 30);
    let e = std::fs::read_to_string(dir.join("err")).unwrap();
    assert!(!e.contains("panicked"), "{e}");
    assert_ne!(o.status.code(), Some(101), "{e}");
}

#[test]
fn i26_a_big_log_makes_a_small_report_with_its_spikes() {
    let dir = scratch("i26_big_log");
    let log = dir.join("x_bw.1.log");
    let mut text = String::new();
    for i in 0..200_000u64 {
        let v = if i == 123_457 {
            99_999_999
        } else {
            1000 + i % 17
        };
        text.push_str(&format!("{}, {v}, 0, 4096, 0\n", i * 10));
    }
    std::fs::write(&log, text).unwrap();
    let html = dir.join("r.html");
    let o = ib(&[
        "report",
        log.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(h.len() < 2_000_000, "{} bytes", h.len());
    assert!(h.contains("downsampled"), "the chart says so");
    // The spike survives: a point holds it (the log's KiB/s drawn as bytes/s) and the
    // table shows it in the unit that suits it.
    assert!(h.contains(&format!("data-y=\"{}\"", 99_999_999u64 * 1024)));
    assert!(h.contains("<td>95.4 GiB/s</td>"));
}

#[test]
fn i26_a_silent_nbd_server_times_out_with_one_errno() {
    let (port, _h) = silent_server(30);
    let o = ib(&[
        "--name=n",
        "--ioengine=nbd",
        &format!("--uri=nbd://127.0.0.1:{port}"),
        "--rw=read",
        "--size=1m",
        "--io_timeout=2s",
        "--output-format=json",
    ]);
    assert_clean_failure(&o, "silent nbd");
    let e = err(&o);
    assert!(
        e.contains("handshake") && e.contains(&port.to_string()),
        "{e}"
    );
    assert!(e.contains("os error 110"), "{e}");
    assert_eq!(json(&o)["jobs"][0]["error"], 110, "{}", out(&o));
}

#[test]
fn i26_a_silent_server_does_not_hang_the_client() {
    let dir = scratch("i26_silent_server");
    let job = dir.join("j.fio");
    std::fs::write(&job, "[x]\nioengine=null\nsize=1m\n").unwrap();
    let (port, _h) = silent_server(60);
    let t = Instant::now();
    let o = ib(&[&format!("--client=127.0.0.1,{port}"), job.to_str().unwrap()]);
    assert_clean_failure(&o, "silent server");
    assert!(err(&o).contains("127.0.0.1"), "{}", err(&o));
    assert!(err(&o).contains("timeout"), "{}", err(&o));
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

/// The pids of `pid`'s children.
fn children(pid: u32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

#[test]
fn i26_a_stopped_worker_ends_the_run_after_io_timeout() {
    let dir = scratch("i26_stopped_worker");
    let f = dir.join("f");
    let mut c = iobench();
    c.args([
        "--name=x",
        "--ioengine=psync",
        "--size=1m",
        "--time_based",
        "--runtime=60s",
        "--io_timeout=2s",
        "--output-format=json",
    ])
    .arg(format!("--filename={}", f.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let pid = child.id();
    let t0 = Instant::now();
    let worker = loop {
        if let Some(&w) = children(pid).first() {
            break w;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "no worker process");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: stopping our own child's child, still alive (its parent waits for it).
    unsafe { libc::kill(worker, libc::SIGSTOP) };
    let t = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let o = match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            // SAFETY: our own processes.
            unsafe {
                libc::kill(worker, libc::SIGKILL);
                libc::kill(pid as i32, libc::SIGKILL);
            }
            panic!("the run hung on a stopped worker");
        }
    };
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    assert_clean_failure(&o, "stopped worker");
    assert!(err(&o).contains("no progress"), "{}", err(&o));
    assert_eq!(json(&o)["jobs"][0]["jobname"], "x");
}

// ---- issue 36: every number that sizes work is bounded ----

/// An slo document with a capacity of -1e308 ran for minutes to 16 GB of chart ticks;
/// every hostile number in a study's document or a log is refused, naming where it is,
/// and a hostile but in-bounds span still renders (a bounded number of ticks).
#[test]
fn i36_report_of_hostile_numbers_is_bounded() {
    let dir = scratch("hi_i36_report");
    let slo = |cap: &str, extra: &str| {
        format!(
            "{{\"capacity_iops\": {cap}, \"steps\": [{{\"offered_iops\":100,\"achieved_iops\":100,\
             \"sched_lat_ns\":{{\"p99\":1000}},\"clat_ns\":{{\"p99\":900}}}}{extra}], \
             \"targets\":[{{\"stat\":\"p99\",\"max_ns\":2000}}]}}"
        )
    };
    let html = dir.join("r.html");
    let report = |name: &str, text: &str| {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        let mut c = iobench();
        c.args(["report", "-o"]).arg(&html).arg(&f);
        run_for(c, 30)
    };
    for (cap, what) in [
        ("-1e308", "capacity_iops"),
        ("1e300", "capacity_iops"),
        ("-1e18", "capacity_iops"),
        ("-1", "capacity_iops"),
        ("1e13", "capacity_iops"),
    ] {
        let o = report("slo.json", &slo(cap, ""));
        assert_clean_failure(&o, cap);
        assert!(
            err(&o).contains(what) && err(&o).contains("out of bounds"),
            "{cap}: {}",
            err(&o)
        );
    }
    // A step's rate or latency out of bounds, named by its place.
    let o = report(
        "slo.json",
        &slo(
            "150",
            ",{\"offered_iops\":200,\"achieved_iops\":-5e17,\"sched_lat_ns\":{}}",
        ),
    );
    assert_clean_failure(&o, "negative achieved rate");
    assert!(err(&o).contains("steps[1].achieved_iops"), "{}", err(&o));
    // A huge array: refused by its length, not drawn.
    let many: String = (0..100_001).map(|_| ",{}").collect();
    let o = report("slo.json", &slo("150", &many));
    assert_clean_failure(&o, "100001 steps");
    assert!(err(&o).contains("elements"), "{}", err(&o));
    // A wide but legal span: a capacity of 1e11 IOPS beside steps at 100 renders.
    let o = report("slo.json", &slo("1e11", ""));
    assert!(o.status.success(), "{}", err(&o));
    assert!(std::fs::metadata(&html).unwrap().len() < 1 << 20);
    // A trend whose times are 1e18 s and a compare document with -1e300 are bounded too.
    let o = report(
        "trend.json",
        "{\"metric\":\"iops\",\"job_hash\":\"x\",\"points\":[{\"id\":1,\"started\":1e18,\
         \"values\":{\"read\":5}},{\"id\":2,\"started\":1.0000000001e18,\"values\":{\"read\":6}}]}",
    );
    assert!(o.status.success(), "{}", err(&o));
    let o = report(
        "cmp.json",
        "{\"relative\":[{\"ratio\":-1e300}],\"sides\":[]}",
    );
    assert_clean_failure(&o, "compare -1e300");
    assert!(err(&o).contains("relative[0].ratio"), "{}", err(&o));
    // Logs: NaN, inf and 1e300 are refused with the line; negative and huge-but-finite
    // values render.
    for v in ["nan", "inf", "-inf", "1e300"] {
        let o = report("x_bw.1.log", &format!("0, 5, 0, 4096\n1, {v}, 0, 4096\n"));
        assert_clean_failure(&o, v);
        assert!(err(&o).contains(":2:"), "{v}: {}", err(&o));
    }
    let o = report(
        "y_lat.1.log",
        "0, 5, 0, 4096\n1, 1e18, 0, 4096\n2, -1e18, 1, 4096\n",
    );
    assert!(o.status.success(), "{}", err(&o));
}

/// Counts from flags that size a study's plan are bounded before anything is planned:
/// `compare --warmup 1e14` used to plan (and start) 2e14 runs, `sweep --repeat 1e14` to
/// allocate them, `slo --max 1e300` to reach fio's rate option as a bad value.
#[test]
fn i36_study_counts_and_rates_are_bounded() {
    let job = ["--name=x", "--ioengine=null", "--size=1m"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["compare", "--warmup", "100000000000000", "--"],
            "--warmup",
        ),
        (vec!["compare", "--repeat", "1001", "--"], "--repeat"),
        (
            vec![
                "sweep",
                "--repeat",
                "100000000000000",
                "--axis",
                "bs=4k,8k",
                "--dry-run",
                "--",
            ],
            "--repeat",
        ),
        (
            vec![
                "sweep",
                "--repeat",
                "1000",
                "--axis",
                "bs=1..200:+1",
                "--dry-run",
                "--",
            ],
            "--repeat 1000",
        ),
        (vec!["slo", "--p99", "1ms", "--max", "1e300", "--"], "--max"),
        (
            vec!["slo", "--p99", "1ms", "--start", "1e13", "--"],
            "--start",
        ),
        (
            vec![
                "pts",
                "hir",
                "-o",
                "/nonexistent/x",
                "--hir-bursts",
                "4000000000",
                "/nonexistent/t",
            ],
            "--hir-bursts",
        ),
    ];
    for (args, flag) in cases {
        let mut all: Vec<&str> = args.clone();
        if all.last() == Some(&"--") {
            all.extend(job);
        }
        let o = ib(&all);
        assert_clean_failure(&o, &all.join(" "));
        assert!(err(&o).contains(flag), "{}: {}", all.join(" "), err(&o));
    }
}

/// What a report builds from its inputs is bounded by what they are, not by what they
/// say: a trend's job hash of multi-byte text panicked (cut at byte 12); a pts summary
/// naming a FIFO as its run hung (and `/dev/zero` was read to the end of memory); a
/// sweep index of 650 KB (20000 runs of one point setting 20000 options) took 8 GB and
/// aborted; 100000 runs each setting another option were to be given 10^10 defaults;
/// a JSON document of 16 million numbers (32 MB of text) was parsed whole (about 32
/// bytes of memory for each 2 of text, so 17 GB for a 1 GiB file).
#[test]
fn i36_report_inputs_bound_what_they_build() {
    let dir = scratch("hi_i36_build");
    let html = dir.join("r.html");
    let report = |input: &Path, secs: u64| {
        let mut c = iobench();
        c.args(["report", "-o"]).arg(&html).arg(input);
        run_for(c, secs)
    };
    // A trend with a job hash of multi-byte characters renders.
    let trend = dir.join("trend.json");
    std::fs::write(
        &trend,
        "{\"metric\":\"iops\",\"job_hash\":\"a\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\",\
         \"points\":[{\"id\":1,\"started\":1,\"values\":{\"read\":5}}]}",
    )
    .unwrap();
    let o = report(&trend, 30);
    assert!(o.status.success(), "{}", err(&o));
    // A pts summary whose run is a FIFO, a device or outside the directory: the
    // platform is not read from it, and the page renders at once.
    let pts = dir.join("pts");
    std::fs::create_dir_all(&pts).unwrap();
    let _ = std::fs::remove_file(pts.join("fifo"));
    mkfifo(&pts.join("fifo"));
    for run in ["fifo", "/dev/zero", "../trend.json"] {
        std::fs::write(
            pts.join("summary.json"),
            format!(
                "{{\"specification\":\"SNIA SSS PTS 2.0.2\",\"test\":\"iops\",\
                 \"sections\":[{{\"preconditioning\":{{\"run\":\"{run}\"}}}}]}}"
            ),
        )
        .unwrap();
        let o = report(&pts, 30);
        assert!(o.status.success(), "{run}: {}", err(&o));
    }
    // A sweep index whose runs would copy a point's 20000 settings 20000 times.
    let sweep = dir.join("sweep");
    std::fs::create_dir_all(&sweep).unwrap();
    let params: Vec<String> = (0..20_000).map(|i| format!("\"a{i}\":\"v\"")).collect();
    let runs = vec!["{\"status\":\"ok\"}"; 20_000].join(",");
    std::fs::write(
        sweep.join("index.json"),
        format!(
            "{{\"sweep\":{{}},\"points\":[{{\"point\":1,\"params\":{{{}}},\"runs\":[{runs}]}}]}}",
            params.join(",")
        ),
    )
    .unwrap();
    let o = report(&sweep, 60);
    assert_clean_failure(&o, "20000 runs of 20000 settings");
    assert!(err(&o).contains("options and settings"), "{}", err(&o));
    // 100000 points, each setting an option of its own.
    let points: Vec<String> = (0..100_000)
        .map(|i| {
            format!(
                "{{\"point\":{i},\"params\":{{\"k{i}\":\"v\"}},\"status\":\"ok\",\
                 \"read\":{{\"iops\":1.0,\"bw_bytes\":1.0}}}}"
            )
        })
        .collect();
    std::fs::write(
        sweep.join("index.json"),
        format!("{{\"sweep\":{{}},\"points\":[{}]}}", points.join(",")),
    )
    .unwrap();
    let o = report(&sweep, 60);
    assert_clean_failure(&o, "100000 options");
    assert!(err(&o).contains("100000 different options"), "{}", err(&o));
    // A result padded with 16 million numbers: refused by the count, with its place.
    let big = dir.join("big.json");
    let mut text = String::from(
        "{\"fio version\":\"fio-3.33\",\"jobs\":[{\"jobname\":\"x\",\"error\":0,\
         \"read\":{\"iops\":1.0,\"bw_bytes\":1,\"io_bytes\":1,\"total_ios\":1,\
         \"runtime\":1,\"lat_ns\":{\"min\":1,\"max\":1,\"mean\":1}}}],\"pad\":[",
    );
    text.push_str(&"0,".repeat(16_000_000));
    text.push_str("0]}");
    std::fs::write(&big, text).unwrap();
    let o = report(&big, 60);
    std::fs::remove_file(&big).unwrap();
    assert_clean_failure(&o, "16 million numbers");
    assert!(
        err(&o).contains("more than 16000000 values in one document"),
        "{}",
        err(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fake fio for `compare --tool`: answers `--version`, then runs `body` (sh).
fn fake_tool(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!("#!/bin/sh\nif [ \"$1\" = --version ]; then echo fio-3.33; exit 0; fi\n{body}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// `compare --tool`: a tool printing 300 MB is stopped past the cap (not buffered whole),
/// a hung one is stopped at `--tool-timeout` (the default comes from the job's runtime),
/// and what either left running in its process group is killed.
#[test]
fn i36_a_child_tool_is_bounded_in_output_and_time() {
    let dir = scratch("hi_i36_tool");
    let job = ["--name=x", "--ioengine=null", "--size=1m"];
    // 300 MB on stdout.
    let loud = fake_tool(&dir, "loud", "head -c 300000000 /dev/zero");
    let mut c = iobench();
    c.args(["compare", "--repeat", "1", "--tool"])
        .arg(&loud)
        .arg("--")
        .args(job);
    let o = run_for(c, 120);
    assert_clean_failure(&o, "300 MB printed");
    assert!(err(&o).contains("printed more than 64 MiB"), "{}", err(&o));
    // Hung, with a child of its own in its group.
    let pidfile = dir.join("left.pid");
    let _ = std::fs::remove_file(&pidfile);
    let hung = fake_tool(
        &dir,
        "hung",
        &format!("sleep 600 & echo $! > {}\nwait", pidfile.display()),
    );
    let mut c = iobench();
    c.args(["compare", "--repeat", "1", "--tool-timeout=2", "--tool"])
        .arg(&hung)
        .arg("--")
        .args(job);
    let o = run_for(c, 60);
    assert_clean_failure(&o, "hung tool");
    assert!(err(&o).contains("still running after 2 s"), "{}", err(&o));
    let left: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let t = Instant::now();
    while alive(left) && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(left), "the tool's child {left} was left running");
    // A tool that ends but leaves a child behind: the child is killed with the group.
    let _ = std::fs::remove_file(&pidfile);
    let leaves = fake_tool(
        &dir,
        "leaves",
        &format!(
            "(sleep 600 >/dev/null 2>&1 & echo $! > {})\nexit 3",
            pidfile.display()
        ),
    );
    let mut c = iobench();
    c.args(["compare", "--repeat", "1", "--tool"])
        .arg(&leaves)
        .arg("--")
        .args(job);
    let o = run_for(c, 60);
    assert_clean_failure(&o, "tool exiting 3");
    let left: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let t = Instant::now();
    while alive(left) && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(left), "the tool's child {left} was left running");
    // `--version` is bounded alike: a child it leaves holding its stdout (compare
    // waited for that pipe to close: 10 minutes here, for ever with `yes`), and one
    // printing without end, end within the probe's 10 s; the child is killed.
    use std::os::unix::fs::PermissionsExt;
    for (name, version) in [
        (
            "version_leaves",
            format!(
                "echo fio-3.33; sleep 600 & echo $! > {}; exit 0",
                pidfile.display()
            ),
        ),
        ("version_loud", "yes fio-3.33".to_string()),
    ] {
        let _ = std::fs::remove_file(&pidfile);
        let p = dir.join(name);
        std::fs::write(
            &p,
            format!("#!/bin/sh\nif [ \"$1\" = --version ]; then {version}; fi\nexit 3\n"),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut c = iobench();
        c.args(["compare", "--repeat", "1", "--tool"])
            .arg(&p)
            .arg("--")
            .args(job);
        let t = Instant::now();
        let o = run_for(c, 40);
        assert_clean_failure(&o, name);
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{name}: {:?}",
            t.elapsed()
        );
        if let Ok(pid) = std::fs::read_to_string(&pidfile) {
            let left: i32 = pid.trim().parse().unwrap();
            let t = Instant::now();
            while alive(left) && t.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(50));
            }
            assert!(!alive(left), "{name}: the child {left} was left running");
        }
    }
    // The flag's value is checked.
    let o = ib(&[
        "compare",
        "--tool-timeout=soon",
        "--tool",
        "fio",
        "--",
        "--name=x",
    ]);
    assert_clean_failure(&o, "--tool-timeout=soon");
    assert!(err(&o).contains("--tool-timeout"), "{}", err(&o));
}

/// Every entry under `dir`: its kind and, for a regular file, its size and digest (a
/// link by its target), so that a test sees anything written, removed or replaced.
fn tree(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(p) = todo.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let path = e.unwrap().path();
            let md = std::fs::symlink_metadata(&path).unwrap();
            let what = if md.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if md.is_dir() {
                todo.push(path.clone());
                "dir".into()
            } else if md.is_file() && md.len() < 1 << 24 {
                format!("file {:?}", digest(&path))
            } else {
                format!("{:?} {}", md.file_type(), md.len())
            };
            out.insert(path, what);
        }
    }
    out
}

/// What each hostile entry is planted as: a FIFO, a link to `/dev/zero`, a link to a
/// copy outside the directory, a sparse file above the cap.
fn plant(at: &Path, how: &str, outside: &Path, big: u64) {
    let _ = std::fs::remove_file(at);
    match how {
        "fifo" => mkfifo(at),
        "/dev/zero" => std::os::unix::fs::symlink("/dev/zero", at).unwrap(),
        "outside" => std::os::unix::fs::symlink(outside, at).unwrap(),
        "huge" => std::fs::File::create(at).unwrap().set_len(big).unwrap(),
        _ => unreachable!(),
    }
}

/// Resuming `pts` or `sweep` in its `-o` directory reads back only what it wrote there:
/// a FIFO at the state, the plan, the index or a run's file (it hung, or the run was
/// silently made again over it), a link to `/dev/zero` (memory without end) or to a file
/// outside (read as a run's result), a file above the cap: each is refused at once with
/// an error naming the file, before the target is purged or any file written or removed.
#[test]
fn i36_a_resumed_pts_or_sweep_reads_back_only_its_own_regular_files() {
    let dir = scratch("hi_i36_resume");
    // ---- pts: a state planted before the first run, the target a file with data.
    let target = dir.join("target");
    patterned(&target, 2 << 20);
    let before = digest(&target);
    let pts = |out: &Path, force: bool| {
        let mut c = iobench();
        c.args(["pts", "latency", "-o"]).arg(out).args([
            "--capacity",
            "2m",
            "--round-time",
            "20ms",
            "--max-rounds",
            "5",
        ]);
        if force {
            c.arg("--force");
        }
        c.arg(&target);
        run_for(c, 60)
    };
    // A finished run elsewhere, whose state and runs a link would lead to.
    let done = dir.join("done");
    let o = pts(&done, true);
    assert!(o.status.success(), "{}", err(&o));
    patterned(&target, 2 << 20);
    let fresh = dir.join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    for how in ["fifo", "/dev/zero", "outside", "huge"] {
        plant(
            &fresh.join("state.json"),
            how,
            &done.join("state.json"),
            300 << 20,
        );
        let snap = tree(&fresh);
        let o = pts(&fresh, true);
        assert_clean_failure(&o, &format!("pts state.json {how}"));
        let e = err(&o);
        let why = if how == "huge" {
            "more than the 268435456 bytes"
        } else {
            "not a regular file"
        };
        assert!(e.contains("state.json") && e.contains(why), "{how}: {e}");
        assert_eq!(digest(&target), before, "{how}: the target was purged");
        assert_eq!(tree(&fresh), snap, "{how}: the directory was written");
    }
    // A run of a finished run: its state resumes, and the run file is read back.
    let mut copy = Command::new("cp");
    copy.arg("-a").arg(&done).arg(dir.join("copy"));
    assert!(copy.status().unwrap().success());
    let run = done.join("runs/latency/r03-rw0-bs4k.json");
    let saved = dir.join("saved-run.json");
    std::fs::copy(&run, &saved).unwrap();
    for how in ["fifo", "/dev/zero", "outside", "huge", "runs-link"] {
        if how == "runs-link" {
            std::fs::copy(&saved, &run).unwrap();
            std::fs::rename(done.join("runs"), dir.join("runs-moved")).unwrap();
            std::os::unix::fs::symlink(dir.join("copy/runs"), done.join("runs")).unwrap();
        } else {
            plant(&run, how, &saved, (1 << 30) + 1);
        }
        let snap = tree(&done);
        let o = pts(&done, false);
        assert_clean_failure(&o, &format!("pts run file {how}"));
        let e = err(&o);
        let (name, why) = match how {
            "huge" => ("r03-rw0-bs4k.json", "bytes, more than the"),
            "runs-link" => ("runs", "a symbolic link"),
            _ => ("r03-rw0-bs4k.json", "not a regular file"),
        };
        assert!(e.contains(name) && e.contains(why), "{how}: {e}");
        assert_eq!(tree(&done), snap, "{how}: the directory was written");
    }
    std::fs::remove_file(done.join("runs")).unwrap();
    std::fs::rename(dir.join("runs-moved"), done.join("runs")).unwrap();
    std::fs::copy(&saved, &run).unwrap();
    let o = pts(&done, false);
    assert!(o.status.success(), "restored: {}", err(&o));
    assert!(err(&o).contains("resuming"), "{}", err(&o));

    // ---- sweep: its plan, a point and (with --fresh) its index.
    let sw = dir.join("sweep");
    let sweep = |axis: &str, fresh: bool| {
        let mut c = iobench();
        c.args(["sweep", "-o"]).arg(&sw).args(["--axis", axis]);
        if fresh {
            c.arg("--fresh");
        }
        c.args(["--", "--name=x", "--ioengine=null", "--size=1m"]);
        run_for(c, 30)
    };
    let o = sweep("bs=4k,8k", false);
    assert!(o.status.success(), "{}", err(&o));
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for f in ["sweep.json", "index.json", "bs=4k.json"] {
        std::fs::copy(sw.join(f), elsewhere.join(f)).unwrap();
    }
    for (file, how, axis, fresh) in [
        ("sweep.json", "fifo", "bs=4k,8k", false),
        ("sweep.json", "/dev/zero", "bs=4k,8k", false),
        ("sweep.json", "huge", "bs=4k,8k", false),
        ("bs=4k.json", "fifo", "bs=4k,8k", false),
        ("bs=4k.json", "/dev/zero", "bs=4k,8k", false),
        ("bs=4k.json", "outside", "bs=4k,8k", false),
        ("bs=4k.json", "huge", "bs=4k,8k", false),
        ("index.json", "fifo", "bs=16k", true),
        ("index.json", "outside", "bs=16k", true),
    ] {
        let at = sw.join(file);
        let keep = dir.join("kept");
        std::fs::copy(&at, &keep).unwrap();
        plant(&at, how, &elsewhere.join(file), (1 << 30) + 1);
        let snap = tree(&sw);
        let o = sweep(axis, fresh);
        assert_clean_failure(&o, &format!("sweep {file} {how}"));
        let e = err(&o);
        let why = if how == "huge" {
            "bytes, more than the"
        } else {
            "not a regular file"
        };
        assert!(e.contains(file) && e.contains(why), "{file} {how}: {e}");
        assert_eq!(tree(&sw), snap, "{file} {how}: the directory was written");
        std::fs::remove_file(&at).unwrap();
        std::fs::rename(&keep, &at).unwrap();
    }
    let o = sweep("bs=4k,8k", false);
    assert!(o.status.success(), "restored: {}", err(&o));
    assert!(err(&o).contains("done before, skipped"), "{}", err(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kills `pid` (a process the test's tool left in a session of its own) once the test
/// is done with it.
struct KillOnDrop(std::path::PathBuf);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for line in std::fs::read_to_string(&self.0).unwrap_or_default().lines() {
            if let Ok(pid) = line.trim().parse::<i32>() {
                // SAFETY: kill(2) of the one sleep the test's tool started (its pid read
                // back from the tool's own file).
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `compare --tool`: a descendant that leaves the tool's process group (`setsid`) and
/// keeps its stdout and stderr open can no longer hold compare: neither the
/// `--version` probe (compare read the pipe to its end, 600 s here) nor a run (the same
/// read after the run) waits past its deadline for the pipe to close.
#[test]
fn i36_a_tools_setsid_child_cannot_hold_compare() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("hi_i36_setsid");
    let pids = dir.join("left.pids");
    let kill = KillOnDrop(pids.clone());
    let me = iobench().get_program().to_owned();
    let job = ["--name=x", "--ioengine=null", "--size=1m"];
    let left = format!("setsid sleep 600 & echo $! >> {}", pids.display());
    for (name, version, body, ok) in [
        // The probe: it answers, then leaves a child holding its stdout.
        (
            "probe",
            format!("echo fio-3.33; {left}; exit 0"),
            "exit 3".to_string(),
            false,
        ),
        // A run that fails, its child holding the pipes.
        (
            "failing_run",
            "echo fio-3.33; exit 0".to_string(),
            format!("{left}\nexit 3"),
            false,
        ),
        // A run that works (iobench itself runs the side), its child holding the pipes.
        (
            "good_run",
            "echo fio-3.33; exit 0".to_string(),
            format!("{left}\nexec {} \"$@\"", me.to_string_lossy()),
            true,
        ),
    ] {
        let p = dir.join(name);
        std::fs::write(
            &p,
            format!("#!/bin/sh\nif [ \"$1\" = --version ]; then {version}; fi\n{body}\n"),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut c = iobench();
        c.args(["compare", "--repeat", "1", "--tool"])
            .arg(&p)
            .arg("--")
            .args(job);
        let t = Instant::now();
        let o = run_for(c, 60);
        let took = t.elapsed();
        if ok {
            assert!(o.status.success(), "{name}: {}", err(&o));
        } else {
            assert_clean_failure(&o, name);
        }
        assert!(took < Duration::from_secs(20), "{name}: took {took:?}");
        let n = std::fs::read_to_string(&pids).unwrap_or_default();
        assert!(!n.trim().is_empty(), "{name}: the tool left no child");
        eprintln!("{name}: compare ended in {took:?}");
    }
    drop(kill);
    let _ = std::fs::remove_dir_all(&dir);
}
