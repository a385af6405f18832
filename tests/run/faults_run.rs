//! Faults during a run (issue 13): a file system that fills up (a small tmpfs), a worker
//! killed with SIGKILL, the run stopped and continued. In each: a clear message, a
//! non-zero exit where something failed, valid JSON with the work done before the fault,
//! nothing written outside the target.

use crate::common;

use common::wait_for;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn iobench() -> Command {
    match std::env::var_os("IOBENCH_TEST_BIN") {
        Some(b) => Command::new(b),
        None => common::iobench(),
    }
}

fn spawn(args: &[&str]) -> Child {
    iobench()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iobench")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A 1 MiB tmpfs, unmounted when dropped. `None` where mounting is not permitted (an
/// unprivileged container); the tests then say so and check nothing.
struct SmallFs(PathBuf);

impl SmallFs {
    fn mount(name: &str) -> Option<SmallFs> {
        let dir = common::scratch(name);
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(&dir)
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("cannot mount a tmpfs here (not root?): ENOSPC checks not run");
            return None;
        }
        Some(SmallFs(dir))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Defect 12 with ENOSPC: the layout fails, the job stays in the JSON with error 28.
#[test]
fn enospc_during_layout() {
    let Some(fs) = SmallFs::mount("frun_enospc_layout") else {
        return;
    };
    let d = format!("--directory={}", fs.0.display());
    let o = wait_for(
        spawn(&[
            "--name=x",
            &d,
            "--rw=read",
            "--size=4m",
            "--output-format=json",
        ]),
        30,
    );
    assert!(!o.status.success());
    let j = common::json_report(&o);
    assert_eq!(j["jobs"][0]["jobname"], "x");
    assert_eq!(j["jobs"][0]["error"], 28, "{}", err(&o));
    assert!(err(&o).contains("No space left"), "{}", err(&o));
    assert_eq!(listing(&fs.0), vec!["x.0.0".to_string()]);
}

/// ENOSPC in the middle of writing: the JSON keeps what was written before it.
#[test]
fn enospc_during_writes_keeps_the_work_done() {
    let Some(fs) = SmallFs::mount("frun_enospc_write") else {
        return;
    };
    let d = format!("--directory={}", fs.0.display());
    let o = wait_for(
        spawn(&[
            "--name=x",
            &d,
            "--rw=write",
            "--size=4m",
            "--output-format=json",
        ]),
        30,
    );
    assert!(!o.status.success());
    let j = common::json_report(&o);
    let job = &j["jobs"][0];
    assert_eq!(job["error"], 28, "{}", err(&o));
    let done = job["write"]["io_bytes"].as_u64().unwrap();
    assert!(done > 0 && done <= 1 << 20, "io_bytes {done}");
    assert_eq!(listing(&fs.0), vec!["x.0.0".to_string()]);
}

/// The pids of `pid`'s children.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// A worker process killed with SIGKILL: non-zero exit, valid JSON, no orphan.
#[test]
fn worker_killed_with_sigkill() {
    let child = spawn(&[
        "--name=x",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=20",
        "--output-format=json",
    ]);
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(10);
    let worker = loop {
        if let Some(&w) = children(pid).first() {
            break w;
        }
        assert!(Instant::now() < deadline, "no worker process appeared");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill with a pid we just read from /proc and a valid signal number.
    unsafe { libc::kill(worker as i32, libc::SIGKILL) };
    let o = wait_for(child, 30);
    assert!(!o.status.success(), "a killed worker must fail the run");
    assert!(err(&o).contains("signal 9"), "{}", err(&o));
    let j = common::json_report(&o);
    assert!(j["jobs"].is_array());
}

/// SIGSTOP then SIGCONT: the run resumes and completes normally.
#[test]
fn stopped_and_continued_run_completes() {
    let child = spawn(&[
        "--name=x",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=2",
        "--output-format=json",
    ]);
    let pid = child.id() as i32;
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: signals to the child we spawned.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(800));
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let o = wait_for(child, 30);
    assert!(o.status.success(), "{}", err(&o));
    let j = common::json_report(&o);
    assert!(j["jobs"][0]["read"]["io_bytes"].as_u64().unwrap() > 0);
}
