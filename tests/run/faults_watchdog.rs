//! The hung-I/O watchdog (issue 13, "Beyond fio"): `io_stall_warn` and `io_timeout`.
//! nbdkit's `delay` filter makes reads slow or hung on the NBD engine; a TCP peer that
//! accepts and never reads makes a `net` job's writes hang in a synchronous engine's
//! system call (processes and threads). In each: one clear warning naming job, file,
//! offset, size and age; with `io_timeout` the run ends early with ETIMEDOUT, a non-zero
//! exit and valid JSON holding the I/O done before the stall. fio has no such watchdog
//! (it waits forever), so nothing here compares with it.

use crate::common;

use common::wait_for;
use std::os::unix::net::UnixListener;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::nbdkit::Nbdkit as Server;

fn iobench() -> Command {
    let mut c = common::iobench();
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn nbd_job(uri: &str, args: &[&str]) -> Command {
    let mut c = iobench();
    c.args(["--name=n", "--ioengine=nbd", "--output-format=json"])
        .arg(uri)
        .args(args);
    c
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `c` to its end (at most `secs` s), with how long it took.
fn timed(mut c: Command, secs: u64) -> (Output, Duration) {
    let t0 = Instant::now();
    let o = wait_for(c.spawn().unwrap(), secs);
    (o, t0.elapsed())
}

/// Reads that take 1.5 s each, io_stall_warn=1s: one warning naming job, file, offset,
/// size, age and the stuck count; the status line shows the stall; the run completes.
#[test]
fn slow_reads_warn_once_with_details() {
    let dir = common::scratch("fwd_warn");
    let s = Server::start(
        &dir,
        &["--filter=delay", "memory", "size=16M", "rdelay=1500ms"],
    );
    let (o, _) = timed(
        nbd_job(
            &s.uri(),
            &[
                "--rw=read",
                "--bs=4k",
                "--size=12k",
                "--io_stall_warn=1s",
                "--eta=always",
                "--eta-interval=250ms",
            ],
        ),
        60,
    );
    let e = err(&o);
    assert!(
        o.status.success(),
        "a slow run that completes succeeds: {e}"
    );
    assert_eq!(e.matches("I/O stalled").count(), 1, "warned once: {e}");
    let line = e.lines().find(|l| l.contains("I/O stalled")).unwrap();
    for part in [
        "job 'n'",
        "read of 4096 bytes at offset ",
        "of file ",
        "outstanding for 1.",
        "1 I/O stuck",
        "io_stall_warn=1s",
    ] {
        assert!(line.contains(part), "{part:?} missing from: {line}");
    }
    assert!(e.contains("[stalled=1]"), "status line: {e}");
    let j = common::json_report(&o);
    assert_eq!(j["jobs"][0]["error"], 0);
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 12288);
}

/// Reads that hang (30 s), writes that do not, io_timeout=2s: the run ends within a few
/// seconds with ETIMEDOUT (err=110), non-zero, with the writes done before in the JSON.
#[test]
fn hung_reads_end_the_job_with_etimedout() {
    let dir = common::scratch("fwd_timeout");
    let s = Server::start(&dir, &["--filter=delay", "memory", "size=16M", "rdelay=30"]);
    let (o, took) = timed(
        nbd_job(
            &s.uri(),
            &[
                "--rw=rw",
                "--bs=4k",
                "--size=8m",
                "--iodepth=4",
                "--io_stall_warn=1s",
                "--io_timeout=2s",
            ],
        ),
        60,
    );
    let e = err(&o);
    assert!(!o.status.success(), "{e}");
    assert!(took < Duration::from_secs(20), "took {took:?}: {e}");
    assert!(e.contains("err=110/"), "{e}");
    assert!(
        e.contains("I/O timed out (io_timeout=2s): read of 4096 bytes"),
        "{e}"
    );
    assert_eq!(e.matches("I/O stalled").count(), 1, "{e}");
    let j = common::json_report(&o);
    let job = &j["jobs"][0];
    assert_eq!(job["error"], libc::ETIMEDOUT, "{e}");
    assert!(job["write"]["io_bytes"].as_u64().unwrap() > 0, "{job}");
    assert_eq!(job["read"]["io_bytes"], 0, "no read completed");
}

/// A TCP peer that accepts and never reads: once the socket buffers fill, the `net`
/// engine's send blocks in the kernel, the local engine's "device" hung.
struct DeafPeer {
    port: u16,
    _keep: std::thread::JoinHandle<()>,
}

impl DeafPeer {
    fn start() -> DeafPeer {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let keep = std::thread::spawn(move || {
            if let Ok((conn, _)) = l.accept() {
                std::thread::sleep(Duration::from_secs(60));
                drop(conn);
            }
        });
        DeafPeer { port, _keep: keep }
    }
}

/// The hung send of a synchronous engine ends with ETIMEDOUT, as a process and as a
/// thread (woken by the watchdog's signal), keeping the writes that went through.
#[test]
fn hung_sync_engine_times_out_in_processes_and_threads() {
    for thread in [false, true] {
        let peer = DeafPeer::start();
        let mut c = iobench();
        c.args([
            "--name=deaf",
            "--ioengine=net",
            "--hostname=127.0.0.1",
            "--protocol=tcp",
            "--rw=write",
            "--bs=64k",
            "--size=1g",
            "--io_stall_warn=1s",
            "--io_timeout=2s",
            "--output-format=json",
        ])
        .arg(format!("--port={}", peer.port));
        if thread {
            c.arg("--thread");
        }
        let (o, took) = timed(c, 45);
        let e = err(&o);
        assert!(!o.status.success(), "thread={thread}: {e}");
        assert!(took < Duration::from_secs(20), "thread={thread}: {took:?}");
        assert!(e.contains("write of 65536 bytes at offset "), "{e}");
        let j = common::json_report(&o);
        let job = &j["jobs"][0];
        assert_eq!(job["error"], libc::ETIMEDOUT, "thread={thread}: {e}");
        assert!(job["write"]["io_bytes"].as_u64().unwrap() > 0, "{job}");
    }
}

/// No false alarm: reads of 200 ms each over a run of several seconds stay well under
/// io_stall_warn=1s, so nothing is printed and the status line is fio's.
#[test]
fn steady_slow_run_prints_no_stall() {
    let dir = common::scratch("fwd_quiet");
    let s = Server::start(
        &dir,
        &["--filter=delay", "memory", "size=16M", "rdelay=200ms"],
    );
    let (o, took) = timed(
        nbd_job(
            &s.uri(),
            &[
                "--rw=read",
                "--bs=4k",
                "--size=48k",
                "--io_stall_warn=1s",
                "--io_timeout=1500ms",
                "--eta=always",
                "--eta-interval=250ms",
            ],
        ),
        60,
    );
    let e = err(&o);
    assert!(
        took > Duration::from_millis(2000),
        "the run spans the thresholds"
    );
    assert!(o.status.success(), "{e}");
    assert!(!e.contains("stalled") && !e.contains("timed out"), "{e}");
    assert_eq!(
        common::json_report(&o)["jobs"][0]["read"]["io_bytes"],
        48 << 10
    );
}

/// A plain run (default thresholds) prints nothing of the watchdog.
#[test]
fn plain_run_prints_no_watchdog_output() {
    let (o, _) = timed(
        {
            let mut c = iobench();
            c.args([
                "--name=p",
                "--ioengine=null",
                "--size=64m",
                "--iodepth=8",
                "--output-format=json",
            ]);
            c
        },
        60,
    );
    assert!(o.status.success());
    assert_eq!(err(&o), "");
}

/// An NBD server that accepts and never answers the handshake: with io_timeout=1s the
/// job fails in about a second (not the 30 s default) and says what timed out.
#[test]
fn silent_nbd_server_times_out_at_connect() {
    let dir = common::scratch("fwd_silent");
    let sock = dir.join("silent.sock");
    let l = UnixListener::bind(&sock).unwrap();
    let _keep = std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in l.incoming().flatten() {
            held.push(c);
        }
    });
    let uri = format!("--uri=nbd+unix:///?socket={}", sock.display());
    let (o, took) = timed(nbd_job(&uri, &["--rw=read", "--io_timeout=1s"]), 30);
    let e = err(&o);
    assert!(!o.status.success(), "{e}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(
        e.contains("did not complete its handshake within 1.0 s"),
        "{e}"
    );
}

/// The options are iobench's own: marked so in `--cmdhelp`, absent from fio's overview,
/// and bad values are refused naming the option.
#[test]
fn options_are_marked_and_checked() {
    let help = |arg: &str| {
        let mut c = common::iobench();
        c.arg(arg);
        String::from_utf8_lossy(&common::run(c).stdout).into_owned()
    };
    for name in ["io_stall_warn", "io_timeout"] {
        assert!(
            help(&format!("--cmdhelp={name}")).contains("iobench extension, not in fio"),
            "{name}"
        );
        assert!(!help("--cmdhelp=all").contains(name), "{name}");
        let mut c = common::iobench();
        c.args(["--parse-only", "--name=x", "--size=1m"])
            .arg(format!("--{name}=soon"));
        let o = common::run(c);
        assert!(!o.status.success());
        assert!(err(&o).contains(name), "{}", err(&o));
    }
}
