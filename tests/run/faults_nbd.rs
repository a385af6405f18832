//! Faults on the NBD path (issue 13): nbdkit's `error` filter injects error replies, its
//! `delay` filter slows replies so the server can be killed mid-run, and a hand-written
//! hostile server advertises an absurd export size. In each: a clear message, a non-zero
//! exit, valid JSON with the work done before the fault.

use crate::common;

use common::wait_for;
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::nbdkit::Nbdkit as Server;

fn iobench() -> Command {
    match std::env::var_os("IOBENCH_TEST_BIN") {
        Some(b) => Command::new(b),
        None => common::iobench(),
    }
}

fn nbd_job(uri: &str, args: &[&str]) -> Command {
    let mut c = iobench();
    c.args(["--name=n", "--ioengine=nbd", "--output-format=json"])
        .arg(uri)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Defect 14: an error reply is the errno the protocol defines, not `-1`.
#[test]
fn error_replies_map_to_errno() {
    let dir = common::scratch("fnbd_err");
    for (inject, errno) in [("ENOSPC", 28), ("EIO", 5), ("EPERM", 1)] {
        let s = Server::start(
            &dir,
            &[
                "--filter=error",
                "memory",
                "size=16M",
                &format!("error={inject}"),
                "error-pwrite-rate=100%",
            ],
        );
        let o = wait_for(
            nbd_job(&s.uri(), &["--rw=write", "--size=1m"])
                .spawn()
                .unwrap(),
            30,
        );
        assert!(!o.status.success());
        let j = common::json_report(&o);
        assert_eq!(j["jobs"][0]["error"], errno, "{inject}: {}", err(&o));
        assert!(!err(&o).contains("err=-1"), "{}", err(&o));
    }
}

/// With continue_on_error, a 10 % read error rate runs to the end and counts the errors.
#[test]
fn error_rate_with_continue_on_error() {
    let dir = common::scratch("fnbd_rate");
    let s = Server::start(
        &dir,
        &[
            "--filter=error",
            "memory",
            "size=16M",
            "error=EIO",
            "error-pread-rate=10%",
        ],
    );
    let o = wait_for(
        nbd_job(
            &s.uri(),
            &["--rw=read", "--size=4m", "--continue_on_error=read"],
        )
        .spawn()
        .unwrap(),
        60,
    );
    let j = common::json_report(&o);
    let total = j["jobs"][0]["total_err"].as_u64().unwrap_or(0);
    assert!(total > 10 && total < 1024, "total_err {total}: {}", err(&o));
    // Without it, the first error ends the job with EIO and what completed before.
    let o = wait_for(
        nbd_job(&s.uri(), &["--rw=read", "--size=4m"])
            .spawn()
            .unwrap(),
        60,
    );
    assert!(!o.status.success());
    let j = common::json_report(&o);
    assert_eq!(j["jobs"][0]["error"], 5);
}

/// Defect 11: the server dies mid-run; the report keeps the I/O done before it, with
/// ECONNRESET, and the exit status says the job failed.
#[test]
fn server_killed_mid_run_keeps_completed_work() {
    let dir = common::scratch("fnbd_kill");
    let log = dir.join("requests.log");
    let logfile = format!("logfile={}", log.display());
    let mut s = Server::start(
        &dir,
        &[
            "--filter=log",
            "--filter=delay",
            "memory",
            "size=64M",
            "rdelay=5ms",
            &logfile,
        ],
    );
    let child = nbd_job(&s.uri(), &["--rw=read", "--size=64m"])
        .spawn()
        .unwrap();
    // The server dies once it has answered some reads (its log says so), however slowly
    // a loaded machine starts the run: a fixed sleep could kill it before any I/O.
    let deadline = Instant::now() + Duration::from_secs(30);
    let answered = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("...Read id=")
            .count()
    };
    while answered() < 20 {
        assert!(Instant::now() < deadline, "no reads answered in 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = s.child.kill();
    let o = wait_for(child, 60);
    assert!(!o.status.success());
    let j = common::json_report(&o);
    let job = &j["jobs"][0];
    assert_eq!(job["error"], libc::ECONNRESET, "{}", err(&o));
    let done = job["read"]["io_bytes"].as_u64().unwrap();
    assert!(done > 0 && done < 64 << 20, "io_bytes {done}");
    assert!(err(&o).contains("closed the connection"), "{}", err(&o));
}

/// Defect 2 on NBD: a 1 EB export read at random needs a random map too big to hold.
#[test]
fn exabyte_export_fails_cleanly() {
    let dir = common::scratch("fnbd_eb");
    let s = Server::start(&dir, &["null", "size=1E"]);
    let o = wait_for(
        nbd_job(&s.uri(), &["--rw=randread", "--number_ios=100"])
            .spawn()
            .unwrap(),
        30,
    );
    assert!(!o.status.success());
    assert!(!err(&o).contains("memory allocation"), "{}", err(&o));
    assert!(err(&o).contains("norandommap"), "{}", err(&o));
}

/// A hostile server advertising 2^64-1 bytes: refused with a message, no crash.
#[test]
fn hostile_export_size_refused() {
    let dir = common::scratch("fnbd_hostile");
    let sock = dir.join("h.sock");
    let l = UnixListener::bind(&sock).unwrap();
    let server = std::thread::spawn(move || {
        // Serve the handshake to every connection (the size probe and the worker's).
        l.set_nonblocking(false).unwrap();
        for conn in l.incoming().take(2) {
            let Ok(mut c) = conn else { return };
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let _ = serve_hostile(&mut c, u64::MAX, 0);
        }
    });
    let uri = format!("--uri=nbd+unix:///?socket={}", sock.display());
    let o = wait_for(nbd_job(&uri, &["--rw=read"]).spawn().unwrap(), 30);
    assert!(!o.status.success());
    assert!(!err(&o).contains("panicked"), "{}", err(&o));
    assert!(err(&o).contains("2^63"), "{}", err(&o));
    drop(server);
}

/// Defect 14: an error code outside the protocol's list (0xFFFFFFFF) is EINVAL, not -1.
#[test]
fn unknown_error_reply_is_einval() {
    let dir = common::scratch("fnbd_unknown");
    let sock = dir.join("u.sock");
    let l = UnixListener::bind(&sock).unwrap();
    std::thread::spawn(move || {
        for conn in l.incoming().take(2) {
            let Ok(mut c) = conn else { return };
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let _ = serve_hostile(&mut c, 1 << 20, 0xFFFF_FFFF);
        }
    });
    let uri = format!("--uri=nbd+unix:///?socket={}", sock.display());
    let o = wait_for(nbd_job(&uri, &["--rw=read"]).spawn().unwrap(), 30);
    assert!(!o.status.success());
    let j = common::json_report(&o);
    assert_eq!(j["jobs"][0]["error"], libc::EINVAL, "{}", err(&o));
    assert!(!err(&o).contains("err=-1"), "{}", err(&o));
}

/// A newstyle handshake answering NBD_OPT_GO with an export of `size` bytes, then simple
/// replies carrying `error` to every request until the client disconnects.
fn serve_hostile(
    c: &mut std::os::unix::net::UnixStream,
    size: u64,
    error: u32,
) -> std::io::Result<()> {
    c.write_all(&0x4e42_444d_4147_4943u64.to_be_bytes())?;
    c.write_all(&0x4948_4156_454f_5054u64.to_be_bytes())?;
    c.write_all(&3u16.to_be_bytes())?;
    let mut flags = [0u8; 4];
    c.read_exact(&mut flags)?;
    let mut hdr = [0u8; 16];
    c.read_exact(&mut hdr)?;
    let opt = u32::from_be_bytes(hdr[8..12].try_into().unwrap());
    let len = u32::from_be_bytes(hdr[12..16].try_into().unwrap()) as usize;
    let mut body = vec![0u8; len];
    c.read_exact(&mut body)?;
    let reply = |c: &mut std::os::unix::net::UnixStream, kind: u32, data: &[u8]| {
        let mut m = Vec::new();
        m.extend_from_slice(&0x0003_e889_0455_65a9u64.to_be_bytes());
        m.extend_from_slice(&opt.to_be_bytes());
        m.extend_from_slice(&kind.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        c.write_all(&m)
    };
    let mut info = Vec::new();
    info.extend_from_slice(&0u16.to_be_bytes());
    info.extend_from_slice(&size.to_be_bytes());
    info.extend_from_slice(&1u16.to_be_bytes());
    reply(c, 3, &info)?;
    reply(c, 1, &[])?;
    loop {
        let mut req = [0u8; 28];
        c.read_exact(&mut req)?;
        let cmd = u16::from_be_bytes([req[6], req[7]]);
        if cmd == 2 {
            return Ok(());
        }
        let mut m = Vec::new();
        m.extend_from_slice(&0x6744_6698u32.to_be_bytes());
        m.extend_from_slice(&error.to_be_bytes());
        m.extend_from_slice(&req[8..16]);
        c.write_all(&m)?;
    }
}
