//! `lockfile`: the job locks its file around each I/O (exclusive, or shared for the reads
//! of `readwrite`), so it waits while another process holds a conflicting lock and not
//! otherwise. The other process here is python holding a flock for a second and a half.
//! (fio's lock is internal to the fio run, so there is no side-by-side test.)

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const HOLD: Duration = Duration::from_millis(1500);

/// Runs iobench on `file` with `args` while another process holds a flock on it
/// (`shared` or exclusive); returns how long iobench took.
fn time_under_lock(file: &Path, shared: bool, args: &[&str]) -> Duration {
    let op = if shared { "LOCK_SH" } else { "LOCK_EX" };
    let script = format!(
        "import fcntl,sys,time\nf=open(sys.argv[1],'rb')\nfcntl.flock(f,fcntl.{op})\n\
         print('held',flush=True)\ntime.sleep({})\n",
        HOLD.as_secs_f64()
    );
    let mut holder = Command::new("python3")
        .args(["-c", &script])
        .arg(file)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "held");
    let t = Instant::now();
    let mut cmd = common::iobench();
    cmd.args(["--name=j", "--bs=4k", "--size=64k"])
        .arg(format!("--filename={}", file.display()))
        .args(args);
    common::run_ok(cmd);
    let took = t.elapsed();
    let _ = holder.wait();
    took
}

#[test]
fn io_waits_for_a_conflicting_lock_only() {
    let dir = common::scratch("lockfile");
    let file = dir.join("f");
    std::fs::write(&file, vec![1u8; 64 * 1024]).unwrap();
    let blocked = Duration::from_millis(1000);
    let exclusive = time_under_lock(&file, true, &["--rw=read", "--lockfile=exclusive"]);
    assert!(
        exclusive >= blocked,
        "exclusive read ran under a shared lock ({exclusive:?})"
    );
    let shared_read = time_under_lock(&file, true, &["--rw=read", "--lockfile=readwrite"]);
    assert!(
        shared_read < blocked,
        "readwrite read waited for a shared lock ({shared_read:?})"
    );
    let write = time_under_lock(&file, true, &["--rw=write", "--lockfile=readwrite"]);
    assert!(
        write >= blocked,
        "readwrite write ran under a shared lock ({write:?})"
    );
    let none = time_under_lock(&file, false, &["--rw=read"]);
    assert!(none < blocked, "an unlocked job waited ({none:?})");
}
