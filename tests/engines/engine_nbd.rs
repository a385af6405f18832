//! The nbd engine against a real NBD server (nbdkit's memory plugin on a Unix socket),
//! side by side with fio's nbd engine (libnbd): data either tool writes verifies in the
//! other, both issue the same operations at the same offsets, and move the same bytes.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An nbdkit serving a RAM disk on a Unix socket, stopped when dropped.
struct Server {
    child: Child,
    socket: PathBuf,
}

impl Server {
    /// Starts nbdkit, or returns None (skip) when it is not installed, unless CI asked
    /// for every differential test to run.
    fn start(dir: &Path, extra: &[&str]) -> Option<Server> {
        let socket = dir.join(format!("nbd{}.sock", extra.len()));
        let _ = std::fs::remove_file(&socket);
        let child = Command::new("nbdkit")
            .args(["-f", "-U"])
            .arg(&socket)
            .args(extra)
            .args(["memory", "size=16M"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(_) if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") => {
                panic!(
                    "nbdkit is not installed but IOBENCH_REQUIRE_FIO=1 (apt-get install -y nbdkit)"
                )
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
        Some(Server { child, socket })
    }

    fn uri(&self) -> String {
        format!("--uri=nbd+unix:///?socket={}", self.socket.display())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn job(mut tool: Command, s: &Server, args: &[&str]) -> Command {
    tool.args([
        "--name=n",
        "--ioengine=nbd",
        "--iodepth=8",
        "--output-format=json",
    ])
    .arg(s.uri())
    .args(args);
    tool
}

/// The JSON report on stdout (fio may print a line of its own before it).
fn json(out: &std::process::Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let from = text.find("{\n").or_else(|| text.find('{')).unwrap_or(0);
    serde_json::from_str(&text[from..]).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn data_written_by_either_tool_verifies_in_the_other() {
    let dir = common::scratch("nbd_verify");
    let Some(s) = Server::start(&dir, &[]) else {
        return;
    };
    let Some(fio) = common::fio() else {
        return;
    };
    // iobench writes, fio checks.
    common::run_ok(job(
        common::iobench(),
        &s,
        &["--rw=write", "--bs=64k", "--verify=crc32c", "--do_verify=0"],
    ));
    let out = common::run_ok(job(
        fio,
        &s,
        &[
            "--rw=read",
            "--bs=64k",
            "--verify=crc32c",
            "--verify_only=1",
        ],
    ));
    assert_eq!(json(&out)["jobs"][0]["error"], 0);
    // fio writes, iobench checks; then a block of other data must fail iobench's check.
    let fio = common::fio().expect("fio");
    common::run_ok(job(
        fio,
        &s,
        &["--rw=randwrite", "--bs=4k", "--verify=md5", "--do_verify=0"],
    ));
    let out = common::run_ok(job(
        common::iobench(),
        &s,
        &[
            "--rw=randread",
            "--bs=4k",
            "--verify=md5",
            "--verify_only=1",
        ],
    ));
    assert_eq!(json(&out)["jobs"][0]["error"], 0);
    let out = common::run(job(
        common::iobench(),
        &s,
        &["--rw=read", "--bs=4k", "--verify=crc32c", "--verify_only=1"],
    ));
    assert!(!out.status.success(), "md5 blocks passed a crc32c check");
}

/// The operations of a run's iolog, without times: `action offset length`.
fn ops(tool: Command, s: &Server, dir: &Path, tag: &str, args: &[&str]) -> Vec<String> {
    let log = dir.join(format!("{tag}.iolog"));
    let _ = std::fs::remove_file(&log);
    let mut c = job(tool, s, args);
    c.arg(format!("--write_iolog={}", log.display()));
    common::run_ok(c);
    std::fs::read_to_string(&log)
        .expect("iolog")
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5).then(|| f[2..].join(" "))
        })
        .collect()
}

#[test]
fn the_same_job_issues_the_same_operations_as_fio() {
    let dir = common::scratch("nbd_ops");
    let Some(s) = Server::start(&dir, &[]) else {
        return;
    };
    let Some(fio) = common::fio() else {
        return;
    };
    for args in [
        &["--rw=randrw", "--bs=4k", "--size=1m"][..],
        &["--rw=randtrim", "--bs=8k", "--size=512k"][..],
        &["--rw=write", "--bs=16k", "--size=512k", "--offset=1m"][..],
    ] {
        let ours = ops(common::iobench(), &s, &dir, "ours", args);
        let theirs = ops(common::fio().expect("fio"), &s, &dir, "theirs", args);
        assert!(!ours.is_empty(), "{args:?}");
        // The order of completion differs at depth 8; the set of operations may not.
        let (mut a, mut b) = (ours.clone(), theirs.clone());
        a.sort();
        b.sort();
        assert_eq!(a, b, "{args:?}");
        // Issue order is the generator's: the same as fio's.
        assert_eq!(ours[..8], theirs[..8], "{args:?}");
    }
    drop(fio);
}

#[test]
fn size_comes_from_the_server_and_bytes_match_fio() {
    let dir = common::scratch("nbd_bytes");
    let Some(s) = Server::start(&dir, &[]) else {
        return;
    };
    let args = ["--rw=randrw", "--bs=4k", "--rwmixread=60"];
    let ours = json(&common::run_ok(job(common::iobench(), &s, &args)));
    let j = &ours["jobs"][0];
    let total = j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap();
    // No size given: the whole 16 MiB export.
    assert_eq!(total, 16 << 20);
    if let Some(fio) = common::fio() {
        let theirs = json(&common::run_ok(job(fio, &s, &args)));
        for d in ["read", "write"] {
            assert_eq!(j[d]["io_bytes"], theirs["jobs"][0][d]["io_bytes"], "{d}");
        }
    }
}

#[test]
fn bad_addresses_and_read_only_exports_are_clear_errors() {
    let dir = common::scratch("nbd_errors");
    let mut c = common::iobench();
    c.args([
        "--name=n",
        "--ioengine=nbd",
        "--uri=http://x/y",
        "--size=1m",
    ]);
    let out = common::run(c);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("uri") && err.contains("'http://x/y'"), "{err}");
    let mut c = common::iobench();
    c.args(["--name=n", "--ioengine=nbd", "--size=1m"]);
    let err = String::from_utf8_lossy(&common::run(c).stderr).to_string();
    assert!(err.contains("needs uri="), "{err}");
    let gone = dir.join("nobody.sock");
    let mut c = common::iobench();
    c.args(["--name=n", "--ioengine=nbd", "--size=1m"])
        .arg(format!("--uri=nbd+unix:///?socket={}", gone.display()));
    let out = common::run(c);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nbd server"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let Some(s) = Server::start(&dir, &["-r"]) else {
        return;
    };
    let out = common::run(job(common::iobench(), &s, &["--rw=write", "--size=64k"]));
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("read-only"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Reading a read-only export is fine.
    common::run_ok(job(common::iobench(), &s, &["--rw=read", "--size=64k"]));
}
