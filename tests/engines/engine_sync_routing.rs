//! Every sync goes through the job's engine (issue 14 defect 10): over NBD, `fsync=N`,
//! `fdatasync=N` and `end_fsync` send NBD_CMD_FLUSH, counted from nbdkit's log filter, as
//! many as fio 3.33's nbd engine sends for the same job.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// nbdkit's memory plugin behind the log filter, on a Unix socket; stopped when dropped.
struct Server {
    child: Child,
    socket: PathBuf,
    log: PathBuf,
}

impl Server {
    fn start(dir: &Path, tag: &str) -> Option<Server> {
        let socket = dir.join(format!("{tag}.sock"));
        let log = dir.join(format!("{tag}.log"));
        let _ = std::fs::remove_file(&socket);
        let _ = std::fs::remove_file(&log);
        let child = Command::new("nbdkit")
            .args(["-f", "-U"])
            .arg(&socket)
            .args(["--filter=log", "memory", "size=4M"])
            .arg(format!("logfile={}", log.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(_) if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") => {
                panic!("nbdkit is not installed but IOBENCH_REQUIRE_FIO=1")
            }
            Err(_) => {
                eprintln!("nbdkit not installed: skipping");
                return None;
            }
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !socket.exists() {
            assert!(Instant::now() < deadline, "nbdkit did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Server { child, socket, log })
    }

    /// Flush requests logged since the last call (the log is emptied).
    fn take_flushes(&self) -> usize {
        let text = std::fs::read(&self.log).unwrap_or_default();
        std::fs::write(&self.log, b"").expect("truncate the log");
        String::from_utf8_lossy(&text)
            .lines()
            .filter(|l| l.contains(" Flush ") && l.ends_with("..."))
            .count()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs one write job with `extra` options through `tool`; returns the flushes it sent.
fn flushes(s: &Server, mut tool: Command, extra: &[&str]) -> usize {
    s.take_flushes();
    tool.args([
        "--name=n",
        "--ioengine=nbd",
        "--rw=write",
        "--bs=4k",
        "--size=1m",
        "--output-format=terse",
    ])
    .arg(format!("--uri=nbd+unix:///?socket={}", s.socket.display()))
    .args(extra);
    common::run_ok(tool);
    // nbdkit writes the log line as it answers; give it a moment.
    std::thread::sleep(Duration::from_millis(100));
    s.take_flushes()
}

#[test]
fn nbd_flushes_like_fio() {
    let dir = common::scratch("sync_routing");
    let Some(s) = Server::start(&dir, "nbd") else {
        return;
    };
    // (At iodepth > 1 fio 3.33's nbd engine issues a sync again on each reap while one is
    // in flight, 109 instead of 31 here; iobench issues each once, as fio does on files.)
    for extra in [
        &["--fsync=8"][..],
        &["--end_fsync=1"],
        &["--fsync=5", "--end_fsync=1"],
    ] {
        let ours = flushes(&s, common::iobench(), extra);
        assert!(ours > 0, "{extra:?}: no NBD flush sent");
        if let Some(fio) = common::fio() {
            let theirs = flushes(&s, fio, extra);
            assert_eq!(
                ours, theirs,
                "{extra:?}: iobench {ours} flushes, fio {theirs}"
            );
        }
    }
    // fsync=8 over 256 writes: fio sends 31 (the last write's sync is left to the end).
    assert_eq!(flushes(&s, common::iobench(), &["--fsync=8"]), 31);
    assert_eq!(
        flushes(&s, common::iobench(), &["--fsync=8", "--iodepth=4"]),
        31
    );
    // fdatasync also reaches the server as a flush (fio 3.33 fails the I/O instead).
    assert_eq!(flushes(&s, common::iobench(), &["--fdatasync=8"]), 31);
}
