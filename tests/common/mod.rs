//! Shared helpers for integration tests: the iobench binary, the real fio, scratch dirs.
#![allow(dead_code)]

pub mod loopdev;
pub mod nbdkit;
pub mod netproc;
pub mod reffio;
pub mod seaweed;

use std::path::PathBuf;
use std::process::{Command, Output};

/// The iobench binary built for this test run, working in [`scratch_cwd`] unless the
/// test names another directory, speaking the dialect of the host's fio ([`HOST_DIALECT`],
/// the reference [`fio`] returns) so that a differential test compares like with like. A
/// test of another dialect uses [`iobench_default`] or [`reffio::RefFio::iobench`].
pub fn iobench() -> Command {
    let mut c = iobench_default();
    c.env("IOBENCH_FIO_COMPAT", HOST_DIALECT);
    c
}

/// The dialect of the host's fio (Debian 12's), the one the suite's older differential
/// tests were written against.
pub const HOST_DIALECT: &str = "3.33";

/// A command for `exe` (fio, iobench's path, or a wrapper such as strace that runs one)
/// with `IOBENCH_FIO_COMPAT` set to [`HOST_DIALECT`]: fio ignores the variable, iobench
/// speaks the host fio's dialect.
pub fn tool(exe: &str) -> Command {
    let mut c = Command::new(exe);
    c.env("IOBENCH_FIO_COMPAT", HOST_DIALECT);
    c
}

/// The iobench binary in its default dialect (fio 3.42): no `IOBENCH_FIO_COMPAT`.
pub fn iobench_default() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iobench"));
    c.current_dir(scratch_cwd());
    c.env_remove("IOBENCH_FIO_COMPAT");
    c
}

/// Where a test's iobench or fio works when the test names no directory: a scratch
/// directory, never the repository (a verify job leaves `local-<job>-0-verify.state` in
/// its working directory, as fio's does; `verify_state_save` is on by default).
pub fn scratch_cwd() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
}

/// The real fio, or `None` when it is not installed. With `IOBENCH_REQUIRE_FIO=1` (CI) a
/// missing fio is a test failure, so differential tests never skip silently there.
pub fn fio() -> Option<Command> {
    let found = Command::new("fio")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if found {
        let mut c = Command::new("fio");
        c.current_dir(scratch_cwd());
        return Some(c);
    }
    if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
        panic!(
            "fio is not installed but IOBENCH_REQUIRE_FIO=1: install it (apt-get install -y fio)"
        );
    }
    eprintln!("fio not installed: skipping differential test");
    None
}

/// A fresh scratch directory under the target dir, removed and recreated.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// A file or directory tree removed when this drops, so a test that fails midway leaves
/// nothing behind either.
pub struct Gone(pub PathBuf);

impl Drop for Gone {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(&self.0);
    }
}

/// fio's gfapi engine opens its log, /tmp/fio_gfapi.log, whenever a test makes fio load
/// that engine (its `--enghelp`, a job naming it): removed when this drops, unless it was
/// there before the test.
pub fn fio_gfapi_log() -> Option<Gone> {
    let log = PathBuf::from("/tmp/fio_gfapi.log");
    (!log.exists()).then_some(Gone(log))
}

/// One long case script at a time in a test binary: seed 000 alone lays out 19 files of
/// 256 MiB, and two of them side by side filled a CI disk.
static BIG_CASE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A scratch directory for a test that writes many files, held for the test's turn (other
/// such tests wait until it drops) and removed when it drops, passed or failed.
pub struct BigScratch {
    pub dir: PathBuf,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl Drop for BigScratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A [`BigScratch`] with room for `need_bytes`: under the target dir, or in /dev/shm
/// (tmpfs, which takes O_DIRECT on the kernels CI runs) when the disk is short and memory
/// is not. With room in neither it fails with the figures, not with ENOSPC partway
/// through a script.
pub fn big_scratch(name: &str, need_bytes: u64) -> BigScratch {
    let turn = BIG_CASE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch(name);
    let on_disk = free_bytes(&dir);
    if on_disk >= need_bytes {
        return BigScratch { dir, _turn: turn };
    }
    let _ = std::fs::remove_dir_all(&dir);
    let shm = PathBuf::from("/dev/shm/iobench-tests").join(name);
    let _ = std::fs::remove_dir_all(&shm);
    let in_memory = std::fs::create_dir_all(&shm).map_or(0, |_| free_bytes(&shm));
    assert!(
        in_memory >= need_bytes,
        "{name} lays out {} MiB of files but {} has only {} MiB free and /dev/shm {} MiB",
        need_bytes >> 20,
        dir.display(),
        on_disk >> 20,
        in_memory >> 20
    );
    eprintln!(
        "{name}: {} has {} MiB free, less than the {} MiB this needs: running in {}",
        dir.display(),
        on_disk >> 20,
        need_bytes >> 20,
        shm.display()
    );
    BigScratch {
        dir: shm,
        _turn: turn,
    }
}

/// What a case script lays out at most, with room to spare: seed 000 makes 19 files of
/// 256 MiB, seed 001 16 of 64 MiB, seed 002 one of 1 GiB, seed 003 a 2 GiB image in /tmp
/// (the same filesystem on CI).
pub fn case_bytes(name: &str) -> u64 {
    let mib = match name {
        n if n.starts_with("seed000") => 19 * 256,
        n if n.starts_with("seed001") => 16 * 64,
        n if n.starts_with("seed002") => 1024,
        n if n.starts_with("seed003") => 2048,
        _ => 512,
    };
    (mib + 256) << 20
}

/// The bytes an unprivileged writer may still use on the filesystem holding `dir`.
pub fn free_bytes(dir: &std::path::Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).expect("path without NUL");
    // SAFETY: statvfs is plain old data, valid all zero; statvfs() only writes the struct
    // it is given, both pointers are valid for the call and the path is NUL-terminated.
    let (rc, st) = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        (libc::statvfs(path.as_ptr(), &mut st), st)
    };
    assert_eq!(rc, 0, "statvfs {}", dir.display());
    st.f_bavail * st.f_frsize
}

/// Runs a command and returns its output, panicking with stderr if it could not start.
pub fn run(mut cmd: Command) -> Output {
    cmd.output().expect("spawn command")
}

/// Runs a command that must succeed; a failure panics with the command line and stderr.
pub fn run_ok(mut cmd: Command) -> Output {
    let out = cmd.output().expect("spawn command");
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The `../shared` folder beside the repository.
pub fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared")
}

/// Runs `tool` as job `j` with `args` in a fresh directory `dir`, writing an iolog beside
/// it and JSON on stdout. Returns the log's lines without the header, the time column or
/// the directory (so two tools' logs compare line for line), and the run's output.
pub fn run_logged<S: AsRef<std::ffi::OsStr>>(
    mut tool: Command,
    dir: &std::path::Path,
    args: &[S],
) -> (Vec<String>, Output) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("create job dir");
    let log = dir.with_extension("log");
    let _ = std::fs::remove_file(&log);
    tool.current_dir(dir)
        .arg("--name=j")
        .arg(format!("--directory={}", dir.display()))
        .args(args)
        .arg(format!("--write_iolog={}", log.display()))
        .arg("--output-format=json");
    let out = run(tool);
    let prefix = format!("{}/", dir.display());
    let lines = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .skip(1)
        .map(|l| l.split_once(' ').map_or(l, |(_, r)| r).replace(&prefix, ""))
        .collect();
    (lines, out)
}

/// The JSON report on a run's stdout (after any `pid=…, err=…` line a failed job prints
/// first, as fio does).
pub fn json_report(out: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let at = if stdout.starts_with('{') {
        0
    } else {
        stdout.find("\n{").map_or(0, |i| i + 1)
    };
    serde_json::from_str(&stdout[at..]).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Waits for `child` at most `secs` seconds; `None` when it was still running then, and
/// then it and its process group (a child spawned with `process_group(0)`: fio's job
/// processes) are killed.
pub fn wait_within(mut child: std::process::Child, secs: u64) -> Option<Output> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            // The whole group first; for a child not leading a group of its own this finds
            // no group and does nothing, and the child itself is killed next.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Some(child.wait_with_output().unwrap())
}

/// Waits for `child` at most `secs` seconds; a child still running then is killed and the
/// test fails ("iobench hung"), so a hang is a failure, never a stuck suite.
pub fn wait_for(mut child: std::process::Child, secs: u64) -> Output {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("iobench hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}
