//! Verification: a write with verify then a verify_only run pass; a flipped byte and a
//! misplaced block fail with fio's details; data written by fio passes iobench's check and
//! the other way round.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

fn job(cmd: &mut Command, file: &Path, method: &str, extra: &[&str]) {
    cmd.arg("--name=v")
        .arg(format!("--filename={}", file.display()))
        .args(["--rw=randwrite", "--bs=4k", "--size=128k"])
        .arg(format!("--verify={method}"))
        .args(extra);
}

fn ib(file: &Path, method: &str, extra: &[&str], cwd: &Path) -> Output {
    let mut c = common::iobench();
    job(&mut c, file, method, extra);
    c.current_dir(cwd);
    common::run(c)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn flip(file: &Path, at: u64) {
    let mut d = std::fs::read(file).unwrap();
    d[at as usize] ^= 0x01;
    std::fs::write(file, d).unwrap();
}

#[test]
fn write_then_verify_only_passes_and_a_flipped_byte_fails_with_details() {
    let dir = common::scratch("verify_flip");
    let f = dir.join("data");
    let o = ib(&f, "crc32c", &[], &dir);
    assert!(o.status.success(), "{}", text(&o));
    let o = ib(&f, "crc32c", &["--verify_only=1"], &dir);
    assert!(o.status.success(), "{}", text(&o));
    // Byte 5000 lies in the block at 4096, past its 44 bytes of header and checksum.
    flip(&f, 5000);
    let o = ib(&f, "crc32c", &["--verify_only=1", "--verify_dump=1"], &dir);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains(&format!(
            "crc32c: verify failed at file {} offset 4096, length 4096",
            f.display()
        )),
        "{t}"
    );
    assert!(
        t.contains("Expected CRC: ") && t.contains("Received CRC: "),
        "{t}"
    );
    assert!(t.contains("err=84"), "{t}");
    let got = std::fs::read(dir.join("data.4096.received")).unwrap();
    let want = std::fs::read(dir.join("data.4096.expected")).unwrap();
    assert_eq!(got.len(), 4096);
    assert_eq!(want.len(), 4096);
    let diff: Vec<usize> = (0..4096).filter(|&i| got[i] != want[i]).collect();
    assert_eq!(
        diff,
        vec![5000 - 4096],
        "the dumps differ exactly at the flipped byte"
    );
}

#[test]
fn a_block_at_the_wrong_offset_is_reported_as_misplaced() {
    let dir = common::scratch("verify_misplaced");
    let f = dir.join("data");
    let o = ib(&f, "md5", &["--rw=write"], &dir);
    assert!(o.status.success(), "{}", text(&o));
    let mut d = std::fs::read(&f).unwrap();
    d.copy_within(4096..8192, 12288);
    std::fs::write(&f, d).unwrap();
    let o = ib(&f, "md5", &["--rw=write", "--verify_only=1"], &dir);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("verify: bad header offset 4096, wanted 12288"),
        "{t}"
    );
    assert!(t.contains("misplaced"), "{t}");
    assert!(
        !t.contains("md5: verify failed"),
        "not reported as bit rot: {t}"
    );
}

#[test]
fn every_method_round_trips_and_catches_a_flip() {
    let dir = common::scratch("verify_methods");
    for m in [
        "md5",
        "crc64",
        "crc32c",
        "crc32c-intel",
        "crc32",
        "crc16",
        "crc7",
        "xxhash",
        "sha1",
        "sha256",
        "sha3-224",
        "sha3-256",
        "sha3-384",
        "sha3-512",
    ] {
        let f = dir.join(m);
        let o = ib(&f, m, &["--verify_interval=1024"], &dir);
        assert!(o.status.success(), "{m}: {}", text(&o));
        flip(&f, 8192 + 1024 + 500);
        let o = ib(&f, m, &["--verify_only=1", "--verify_interval=1024"], &dir);
        let t = text(&o);
        assert!(!o.status.success(), "{m} missed a flipped byte: {t}");
        assert!(t.contains("offset 9216, length 1024"), "{m}: {t}");
    }
}

#[test]
fn pattern_with_offset_format_round_trips_and_catches_a_flip() {
    let dir = common::scratch("verify_pattern");
    let f = dir.join("data");
    let p = ["--verify_pattern=0xdeadbeef\"io\"%o", "--rw=write"];
    let o = ib(&f, "pattern", &p, &dir);
    assert!(o.status.success(), "{}", text(&o));
    let d = std::fs::read(&f).unwrap();
    assert_eq!(&d[8192..8198], &[0xde, 0xad, 0xbe, 0xef, b'i', b'o']);
    assert_eq!(&d[8198..8206], &8192u64.to_le_bytes());
    let mut args = p.to_vec();
    args.push("--verify_only=1");
    assert!(ib(&f, "pattern", &args, &dir).status.success());
    flip(&f, 100);
    let o = ib(&f, "pattern", &args, &dir);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("fio: bad pattern block offset 100"), "{t}");
}

/// Writes with one program, verifies with the other, both ways.
fn both_ways(method: &str, extra: &[&str]) {
    let Some(_) = common::fio() else { return };
    let dir = common::scratch(&format!("verify_fio_{method}"));
    let f = dir.join("data");
    let fio = |args: &[&str]| {
        let mut c = common::fio().unwrap();
        job(&mut c, &f, method, extra);
        c.args(args).current_dir(&dir);
        common::run(c)
    };
    // fio writes, iobench checks.
    let o = fio(&[]);
    assert!(o.status.success(), "fio write: {}", text(&o));
    let mut only = extra.to_vec();
    only.push("--verify_only=1");
    let o = ib(&f, method, &only, &dir);
    assert!(
        o.status.success(),
        "iobench check of fio's {method}: {}",
        text(&o)
    );
    // iobench writes, fio checks.
    std::fs::remove_file(&f).unwrap();
    let o = ib(&f, method, extra, &dir);
    assert!(o.status.success(), "iobench write: {}", text(&o));
    let o = fio(&["--verify_only=1"]);
    assert!(
        o.status.success(),
        "fio check of iobench's {method}: {}",
        text(&o)
    );
    // A flipped byte fails iobench's check, and fio's too (fio 3.33 misses flips when
    // verify_offset moves the header, so only without extra options).
    flip(&f, 4096 * 3 + 1000);
    let o = ib(&f, method, &only, &dir);
    assert!(!o.status.success(), "iobench missed the flip: {}", text(&o));
    if extra.iter().all(|a| !a.starts_with("--verify_offset")) {
        let o = fio(&["--verify_only=1"]);
        assert!(!o.status.success(), "fio missed the flip: {}", text(&o));
    }
}

#[test]
fn fio_and_iobench_check_each_other_crc32c() {
    both_ways("crc32c", &[]);
}

#[test]
fn fio_and_iobench_check_each_other_md5() {
    both_ways("md5", &[]);
}

#[test]
fn fio_and_iobench_check_each_other_sha256() {
    both_ways("sha256", &[]);
}

#[test]
fn fio_and_iobench_check_each_other_pattern() {
    both_ways("pattern", &["--verify_pattern=0x1234abcd%o"]);
}

#[test]
fn fio_and_iobench_check_each_other_with_interval_and_offset() {
    both_ways("crc32", &["--verify_interval=512", "--verify_offset=100"]);
}

#[test]
fn fio_and_iobench_check_each_other_all_methods() {
    if common::fio().is_none() {
        return;
    }
    for m in [
        "crc64", "crc16", "crc7", "xxhash", "sha1", "sha512", "sha3-256", "sha3-512", "meta",
    ] {
        both_ways_quiet(m);
    }
}

fn both_ways_quiet(method: &str) {
    let dir = common::scratch(&format!("verify_fio_all_{method}"));
    let f = dir.join("data");
    let mut c = common::fio().unwrap();
    job(&mut c, &f, method, &[]);
    c.current_dir(&dir);
    assert!(common::run(c).status.success());
    let o = ib(&f, method, &["--verify_only=1"], &dir);
    assert!(
        o.status.success(),
        "iobench check of fio's {method}: {}",
        text(&o)
    );
    std::fs::remove_file(&f).unwrap();
    assert!(ib(&f, method, &[], &dir).status.success());
    let mut c = common::fio().unwrap();
    job(&mut c, &f, method, &["--verify_only=1"]);
    c.current_dir(&dir);
    let o = common::run(c);
    assert!(
        o.status.success(),
        "fio check of iobench's {method}: {}",
        text(&o)
    );
}

#[test]
fn verify_backlog_checks_during_the_writes() {
    let dir = common::scratch("verify_backlog");
    let f = dir.join("data");
    let o = ib(
        &f,
        "crc32c",
        &["--verify_backlog=4", "--output-format=json"],
        &dir,
    );
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rd = &v["jobs"][0]["read"];
    assert_eq!(
        rd["total_ios"], 32,
        "every written block read back once: {rd}"
    );
}

#[test]
fn a_too_small_block_for_the_header_is_refused() {
    let dir = common::scratch("verify_small");
    let o = ib(&dir.join("d"), "sha256", &["--bs=64"], &dir);
    assert!(!o.status.success());
    assert!(text(&o).contains("too small"), "{}", text(&o));
}

/// `--crctest=LIST` prints one `name:<tabs>N MiB/sec` line per hash, laid out as fio's.
#[test]
fn crctest_prints_fio_lines() {
    let mut c = common::iobench();
    c.arg("--crctest=crc32c,xxhash");
    let o = common::run(c);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let shape = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| {
                let (name, rest) = l.split_once(':').unwrap();
                let tabs = rest.chars().take_while(|&c| c == '\t').count();
                assert!(rest.ends_with(" MiB/sec"), "{l}");
                let n = rest.trim().trim_end_matches(" MiB/sec");
                assert!(n.parse::<f64>().unwrap() > 0.0, "{l}");
                format!("{name}:{tabs}")
            })
            .collect()
    };
    assert_eq!(shape(&out), ["crc32c:2", "xxhash:2"]);
    if let Some(mut f) = common::fio() {
        f.arg("--crctest=crc32c,xxhash");
        let fo = common::run(f);
        assert_eq!(shape(&String::from_utf8_lossy(&fo.stdout)), shape(&out));
    }
    let mut c = common::iobench();
    c.arg("--crctest=nosuch");
    let o = common::run(c);
    assert!(!o.status.success());
    assert!(text(&o).contains("unknown hash `nosuch`"), "{}", text(&o));
}

/// Bytes of a verify state file that both programs must agree on: everything but the
/// header checksum and fio's random-generator state (which nothing reads back).
fn state_shape(mut b: Vec<u8>) -> Vec<u8> {
    b[16..24].fill(0);
    b[0x38..0x70].fill(0);
    b
}

/// A write cut short (number_ios) leaves fio's state file; verify_only with
/// verify_state_load checks only the writes the state says were made, and passes where a
/// plain verify_only fails on the first block never written. Both ways with fio.
#[test]
fn verify_state_save_and_load() {
    let dir = common::scratch("verify_state");
    let f = dir.join("data");
    let state = dir.join("local-v-0-verify.state");
    let cut = ["--rw=write", "--number_ios=12", "--do_verify=0"];
    let o = ib(&f, "crc32c", &cut, &dir);
    assert!(o.status.success(), "{}", text(&o));
    let ours = std::fs::read(&state).expect("iobench left no verify state file");
    let o = ib(&f, "crc32c", &["--rw=write", "--verify_only=1"], &dir);
    assert!(!o.status.success(), "unwritten blocks passed: {}", text(&o));
    std::fs::write(&state, &ours).unwrap();
    let load = ["--rw=write", "--verify_only=1", "--verify_state_load=1"];
    let o = ib(&f, "crc32c", &load, &dir);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("(48.0KiB/"), "{}", text(&o));
    // A missing state file is an error, not a full verify.
    std::fs::remove_file(&state).unwrap();
    let o = ib(&f, "crc32c", &load, &dir);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("local-v-0-verify.state"), "{}", text(&o));

    let Some(_) = common::fio() else { return };
    let fio = |args: &[&str]| {
        let mut c = common::fio().unwrap();
        job(&mut c, &f, "crc32c", args);
        c.current_dir(&dir);
        common::run(c)
    };
    // fio's file has the same layout and contents.
    std::fs::remove_file(&f).unwrap();
    assert!(fio(&cut).status.success());
    let theirs = std::fs::read(&state).unwrap();
    assert_eq!(state_shape(theirs.clone()), state_shape(ours.clone()));
    // fio's state drives iobench's check, and iobench's drives fio's.
    let o = ib(&f, "crc32c", &load, &dir);
    assert!(o.status.success(), "iobench with fio's state: {}", text(&o));
    std::fs::write(&state, &ours).unwrap();
    let o = fio(&load);
    assert!(o.status.success(), "fio with iobench's state: {}", text(&o));
    assert!(text(&o).contains("(48.0KiB/"), "{}", text(&o));
    // A sync engine with an iodepth given: the state is as deep as that iodepth in both.
    let deep = [
        "--rw=write",
        "--number_ios=12",
        "--do_verify=0",
        "--iodepth=4",
    ];
    assert!(fio(&deep).status.success());
    let theirs = std::fs::read(&state).unwrap();
    assert!(ib(&f, "crc32c", &deep, &dir).status.success());
    let ours = std::fs::read(&state).unwrap();
    assert_eq!(state_shape(theirs), state_shape(ours));
}

/// verify_async: checker threads give the same verdicts (a clean pass, then the flipped
/// block reported with its offset) with reads in flight.
#[test]
fn verify_async_checks_in_threads() {
    let dir = common::scratch("verify_async");
    let f = dir.join("data");
    let q = ["--ioengine=libaio", "--iodepth=8", "--verify_async=2"];
    let o = ib(&f, "md5", &q, &dir);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("read: IOPS="), "{}", text(&o));
    let mut only = q.to_vec();
    only.push("--verify_only=1");
    let o = ib(&f, "md5", &only, &dir);
    assert!(o.status.success(), "{}", text(&o));
    flip(&f, 4096 * 20 + 3000);
    let o = ib(&f, "md5", &only, &dir);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("offset 81920"), "{t}");
}

/// fio 3.39 finished its sha512 (commit 3ee53198; before, the stored sum was the hash's
/// unfinished block buffer): data each reference fio writes with verify=sha512 passes
/// iobench's check in that fio's dialect and the other way round, at header intervals
/// whose data is shorter than, equal to and longer than sha512's 128-byte block and at a
/// block size that is no multiple of it; and the two forms do not check each other's
/// data, in either tool.
#[test]
fn sha512_is_finished_from_fio_3_39_as_each_fio_stores_it() {
    let job = |c: &mut Command, file: &Path, extra: &[&str]| {
        c.arg("--name=v")
            .arg(format!("--filename={}", file.display()))
            .args(["--rw=write", "--size=96k", "--verify=sha512"])
            .args(extra);
    };
    let shapes: [&[&str]; 3] = [
        &["--bs=4k"],
        &["--bs=3k", "--verify_interval=256"],
        &["--bs=4k", "--verify_interval=512"],
    ];
    let refs = common::reffio::reference_fios();
    for fio in &refs {
        let (host, inside) = fio.scratch("verify_sha512");
        for shape in shapes {
            // 64 bytes of data a header: fio 3.33's unfinished sha512 leaves part of its
            // area as whatever its stack held, and fails its own check of its own data.
            if fio.version == "3.33" && shape.contains(&"--verify_interval=256") {
                continue;
            }
            let what = format!("{} {shape:?}", fio.label());
            let mut c = fio.command();
            job(&mut c, &inside.join("f"), shape);
            assert!(common::run(c).status.success(), "{what}: fio write");
            let mut c = fio.iobench();
            job(&mut c, &host.join("f"), shape);
            c.arg("--verify_only=1");
            let o = common::run(c);
            assert!(o.status.success(), "{what}: iobench check: {}", text(&o));
            std::fs::remove_file(host.join("f")).unwrap();
            let mut c = fio.iobench();
            job(&mut c, &host.join("f"), shape);
            assert!(common::run(c).status.success(), "{what}: iobench write");
            let mut c = fio.command();
            job(&mut c, &inside.join("f"), shape);
            c.arg("--verify_only=1");
            let o = common::run(c);
            assert!(o.status.success(), "{what}: fio check: {}", text(&o));
            std::fs::remove_file(host.join("f")).unwrap();
        }
        let _ = std::fs::remove_dir_all(&host);
    }
    // The forms differ: what the 3.33 dialect writes fails the 3.39 check and back (3.40
    // as the same form: 3.41 changed the header too).
    let dir = common::scratch("verify_sha512_forms");
    let f = dir.join("f");
    for (write, check) in [("3.33", "3.39"), ("3.39", "3.33"), ("3.39", "3.40")] {
        let _ = std::fs::remove_file(&f);
        let mut c = common::iobench();
        c.env("IOBENCH_FIO_COMPAT", write);
        job(&mut c, &f, &["--bs=4k"]);
        assert!(common::run(c).status.success());
        let mut c = common::iobench();
        c.env("IOBENCH_FIO_COMPAT", check);
        job(&mut c, &f, &["--bs=4k", "--verify_only=1"]);
        let o = common::run(c);
        let same = write != "3.33" && check != "3.33";
        assert_eq!(o.status.success(), same, "{write} → {check}: {}", text(&o));
    }
}
