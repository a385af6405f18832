//! Shared by the enumeration tests: running a tool with a time limit (killing its whole
//! process group when it runs over), and the tally line each test prints and checks.
#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a run ended with: its exit code (`None` when killed at the time limit), stdout and
/// stderr.
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// True when the tool said it does not know or does not implement what it was given.
    pub fn refused_as_unknown(&self) -> bool {
        self.stderr.contains("not supported yet")
            || self.stderr.contains("unknown option")
            || self.stderr.contains("is not an I/O engine")
    }
}

/// The process and every process below it (by parent id in /proc), deepest last.
fn family(root: i32) -> Vec<i32> {
    let mut parents: Vec<(i32, i32)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // The parent id is the second field after the command's closing parenthesis.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().nth(1))
                .and_then(|p| p.parse().ok());
            if let Some(ppid) = ppid {
                parents.push((pid, ppid));
            }
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parents.iter().filter(|e| e.1 == p).map(|e| e.0));
        i += 1;
    }
    out
}

/// Runs `cmd` in its own process group for at most `secs` seconds; on time-out the whole
/// group is killed, and every process the tool forked (fio's job processes leave the group
/// with setsid, so they are found by parent id). Output goes to files, so a straggler
/// holding a pipe open cannot block the test.
pub fn run_limited(mut cmd: Command, secs: u64) -> Ran {
    static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("run-{}-{n}", std::process::id()));
    let (out_p, err_p) = (base.with_extension("out"), base.with_extension("err"));
    let out_f = std::fs::File::create(&out_p).expect("stdout file");
    let err_f = std::fs::File::create(&err_p).expect("stderr file");
    cmd.stdin(Stdio::null())
        .stdout(out_f)
        .stderr(err_f)
        .process_group(0);
    let mut child = cmd.spawn().expect("spawn tool");
    let pid = child.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(secs);
    let code = loop {
        match child.try_wait().expect("wait") {
            Some(st) => break st.code(),
            None if Instant::now() >= deadline => {
                for p in family(pid).into_iter().rev() {
                    // SAFETY: signals a process this test started (or one it forked).
                    unsafe { libc::kill(p, libc::SIGKILL) };
                }
                // SAFETY: signals the process group we created for this child only.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let read = |p: &std::path::Path| {
        let s = std::fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned());
        let _ = std::fs::remove_file(p);
        s.unwrap_or_default()
    };
    Ran {
        code,
        stdout: read(&out_p),
        stderr: read(&err_p),
    }
}

/// Prints `TALLY what: n of total` and fails when `n` fell below the recorded `floor`, so
/// a change that loses part of fio's surface fails the test.
pub fn tally(what: &str, n: usize, total: usize, floor: usize, misses: &[String]) {
    println!("TALLY {what}: {n} of {total} supported");
    if !misses.is_empty() {
        println!("  not supported: {}", misses.join(" "));
    }
    assert!(
        n >= floor,
        "{what}: {n} of {total} supported, below the recorded floor {floor}; missing: {}",
        misses.join(" ")
    );
}

/// A fresh scratch directory.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}
