//! Verify options beyond the basic pass: continue_on_error=verify (every bad block is
//! reported and counted, the job goes on and succeeds), verify_async_cpus (checker threads
//! pinned), experimental_verify (the check replays the write sequence).

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

fn args(cmd: &mut Command, file: &Path, extra: &[&str]) {
    // In the file's scratch folder: verify state files land there, not in the repository.
    if let Some(dir) = file.parent() {
        cmd.current_dir(dir);
    }
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
    assert!(
        ours[0].contains("offset 4096,") && ours[1].contains("offset 16384,"),
        "{t}"
    );
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

/// The `Cpus_allowed_list` of every checker thread ("iobench-verify") in process `pid` or
/// its children, as seen in /proc now.
fn checker_cpus(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        let Ok(tgid) = p.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(p.path().join("stat")).unwrap_or_default();
        // The parent pid is the second field after the ")" closing the command name.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if tgid != pid && ppid != Some(pid) {
            continue;
        }
        let Ok(tasks) = std::fs::read_dir(p.path().join("task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            if comm.trim() != "iobench-verify" {
                continue;
            }
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            if let Some(l) = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")) {
                out.push(l["Cpus_allowed_list:".len()..].trim().to_string());
            }
        }
    }
    out
}

/// verify_async_cpus: the checker threads run only on the CPUs given (seen in /proc while
/// the verify pass runs); a CPU the machine lacks is refused up front.
#[test]
fn verify_async_cpus_pins_the_checker_threads() {
    // SAFETY: sysconf has no memory effects.
    let ncpu = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if ncpu < 2 {
        return;
    }
    let dir = common::scratch("verify_async_cpus");
    let f = dir.join("data");
    let q = [
        "--ioengine=libaio",
        "--iodepth=4",
        "--verify=sha512",
        "--verify_async=2",
        "--verify_async_cpus=1",
        "--bs=4k",
        "--size=48m",
        "--output=/dev/null",
    ];
    let mut seen = Vec::new();
    for _ in 0..3 {
        let mut c = common::iobench();
        args(&mut c, &f, &q);
        let mut child = c.spawn().unwrap();
        while child.try_wait().unwrap().is_none() {
            seen.extend(checker_cpus(child.id()));
        }
        assert!(child.wait().unwrap().success());
        if !seen.is_empty() {
            break;
        }
    }
    assert!(!seen.is_empty(), "no checker thread seen in /proc");
    assert!(seen.iter().all(|c| c == "1"), "{seen:?}");
    let o = ib(&f, &["--verify_async=1", "--verify_async_cpus=4096"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("verify_async_cpus"), "{}", text(&o));
}

/// experimental_verify: the check replays the random write sequence (blocks come back in
/// the order they were written, without fio's "from the log" flag); a good file passes and
/// a flipped byte fails after the same reads as fio's.
#[test]
fn experimental_verify_replays_the_writes_and_catches_a_flip() {
    let dir = common::scratch("verify_experimental");
    let f = dir.join("data");
    let ex = ["--rw=randwrite", "--experimental_verify=1"];
    let o = ib(&f, &ex);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("read: IOPS="), "{}", text(&o));
    let mut q = ex.to_vec();
    q.extend(["--ioengine=libaio", "--iodepth=4"]);
    let o = ib(&f, &q);
    assert!(o.status.success(), "{}", text(&o));
    let mut only = ex.to_vec();
    only.push("--verify_only=1");
    let o = ib(&f, &only);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("(64.0KiB/"), "{}", text(&o));
    // Byte 9000 is in the block at 8192.
    flip(&f, 9000);
    let o = ib(&f, &only);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    let ours = failures(&t);
    assert_eq!(ours.len(), 1, "{t}");
    assert!(ours[0].contains("offset 8192, length 4096"), "{t}");
    assert!(ours[0].contains("flags=8)"), "{t}");
    let Some(mut c) = common::fio() else { return };
    args(&mut c, &f, &only);
    let o = common::run(c);
    let tf = text(&o);
    assert!(!o.status.success(), "{tf}");
    assert_eq!(failures(&tf), ours, "{tf}");
    // The same blocks were read before the bad one: the same write order was replayed.
    let read = |t: &str| {
        t.lines()
            .find(|l| l.trim_start().starts_with("read: IOPS="))
            .and_then(|l| {
                l.split('(')
                    .nth(2)
                    .map(|s| s.split('/').next().unwrap().to_string())
            })
    };
    assert_eq!(read(&t), read(&tf), "{t}\n{tf}");
}
