//! Verify options beyond the basic pass: continue_on_error=verify (every bad block is
//! reported and counted, the job goes on and succeeds), verify_async_cpus (checker threads
//! pinned), experimental_verify (the check replays the write sequence).

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn args(cmd: &mut Command, file: &Path, extra: &[&str]) {
    cmd.arg("--name=v")
        .arg(format!("--filename={}", file.display()))
        .args(["--rw=write", "--bs=4k", "--size=64k", "--verify=crc32c"])
        .args(extra);
}

fn ib(file: &Path, extra: &[&str]) -> Output {
    let mut c = common::iobench();
    args(&mut c, file, extra);
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

/// The lines that name a failed block, in order.
fn failures(t: &str) -> Vec<String> {
    t.lines()
        .filter(|l| l.contains("verify failed at file"))
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn continue_on_error_verify_reports_every_bad_block_and_goes_on() {
    let dir = common::scratch("verify_coe");
    let f = dir.join("data");
    let o = ib(&f, &["--do_verify=0"]);
    assert!(o.status.success(), "{}", text(&o));
    flip(&f, 5000);
    flip(&f, 20000);
    let only = ["--verify_only=1", "--continue_on_error=verify"];
    let o = ib(&f, &only);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let ours = failures(&t);
    assert_eq!(ours.len(), 2, "{t}");
    assert!(ours[0].contains("offset 4096,") && ours[1].contains("offset 16384,"), "{t}");
    assert!(t.contains("err=84 ()"), "{t}");
    assert!(t.contains("errors    : total=2, first_error=84/"), "{t}");
    // Without it the first bad block ends the job, which fails.
    let o = ib(&f, &["--verify_only=1"]);
    assert!(!o.status.success());
    assert_eq!(failures(&text(&o)).len(), 1, "{}", text(&o));
    // fio says the same of the same file.
    let Some(mut c) = common::fio() else { return };
    args(&mut c, &f, &only);
    let o = common::run(c);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert_eq!(failures(&t), ours, "{t}");
    assert!(t.contains("errors    : total=2, first_error=84/"), "{t}");
}
