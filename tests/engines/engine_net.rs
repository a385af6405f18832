//! The net and netsplice engines against fio 3.33's, on loopback, with iobench in each
//! role: TCP, UDP and Unix sockets, pingpong, netsplice, the per-clone port, fio's link
//! messages (a UDP reader stops on the sender's close) and sequence trailers (dropped
//! datagrams are counted), rates in bits, and fio's checks of the options.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A fresh port per call (tests run in parallel).
fn port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    20_000 + (std::process::id() % 2000) as u16 * 10 + NEXT.fetch_add(3, Ordering::Relaxed)
}

/// True when something listens on (tcp) or is bound to (udp) `port` on this host.
fn bound(proto: &str, port: u16) -> bool {
    let table = if proto == "udp" { "udp" } else { "tcp" };
    let text = std::fs::read_to_string(format!("/proc/net/{table}")).unwrap_or_default();
    let want = format!(":{port:04X} ");
    text.lines().skip(1).any(|l| {
        l.split_whitespace()
            .nth(1)
            .is_some_and(|a| format!("{a} ").ends_with(&want))
    })
}

/// The tool for a role: fio when asked for and installed, else iobench.
fn tool(fio: bool) -> Command {
    if fio {
        common::fio().expect("fio")
    } else {
        common::iobench()
    }
}

/// (read bytes, read ios, write bytes, write ios, error, dropped reads) of a report.
type Res = (u64, u64, u64, u64, i64, u64);

fn res(out: &std::process::Output) -> Res {
    let v = common::json_report(out);
    let j = &v["jobs"][0];
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap_or(0);
    (
        n("read", "io_bytes"),
        n("read", "total_ios"),
        n("write", "io_bytes"),
        n("write", "total_ios"),
        j["error"].as_i64().unwrap(),
        n("read", "drop_ios"),
    )
}

/// Runs a reader (`fio_reads`: fio or iobench) and a writer over `proto`; returns the
/// reader's and the writer's results.
fn pair(
    engine: &str,
    proto: &str,
    fio_reads: bool,
    fio_writes: bool,
    extra: &[&str],
) -> (Res, Res) {
    pair_with(engine, proto, (fio_reads, fio_writes), extra, (&[], &[]))
}

/// As [`pair`], with options for the reader only and the writer only.
fn pair_with(
    engine: &str,
    proto: &str,
    (fio_reads, fio_writes): (bool, bool),
    extra: &[&str],
    (r_extra, w_extra): (&[&str], &[&str]),
) -> (Res, Res) {
    let dir = common::scratch(&format!("net_{engine}_{proto}_{fio_reads}_{fio_writes}"));
    let p = port();
    let sock = dir.join("s.sock");
    let (ra, wa): (Vec<String>, Vec<String>) = match proto {
        "tcp" => (
            vec!["--listen=1".into(), format!("--port={p}")],
            vec!["--hostname=127.0.0.1".into(), format!("--port={p}")],
        ),
        "udp" => (
            vec![format!("--port={p}")],
            vec!["--hostname=127.0.0.1".into(), format!("--port={p}")],
        ),
        _ => {
            let _ = std::fs::remove_file(&sock);
            let f = format!("--filename={}", sock.display());
            (vec![f.clone()], vec![f])
        }
    };
    let common_args = |c: &mut Command| {
        c.current_dir(&dir)
            .arg(format!("--ioengine={engine}"))
            .arg(format!("--protocol={proto}"))
            .args(["--bs=4k", "--size=2m", "--output-format=json"])
            .args(extra);
    };
    let mut r = tool(fio_reads);
    common_args(&mut r);
    let reader = r
        .args(["--name=r", "--rw=read"])
        .args(&ra)
        .args(r_extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reader starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let up = match proto {
            "unix" => sock.exists(),
            p2 => bound(p2, p),
        };
        if up {
            break;
        }
        assert!(Instant::now() < deadline, "the reader never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut w = tool(fio_writes);
    common_args(&mut w);
    w.args(["--name=w", "--rw=write"]).args(&wa).args(w_extra);
    let wout = common::run(w);
    // A writer that failed leaves the reader waiting for a peer forever: end it, and let
    // the assertions on both reports say what went wrong instead of hanging the suite.
    let mut reader = reader;
    let deadline = Instant::now() + Duration::from_secs(60);
    while reader.try_wait().expect("reader status").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = reader.kill();
    let rout = reader.wait_with_output().expect("reader ends");
    (res(&rout), res(&wout))
}

/// Every pairing of the two tools (iobench with itself when fio is absent).
fn pairings() -> Vec<(bool, bool)> {
    if common::fio().is_some() {
        vec![(false, true), (true, false), (false, false)]
    } else {
        vec![(false, false)]
    }
}

const SIZE: u64 = 2 << 20;

#[test]
fn tcp_and_unix_streams_move_every_byte_both_ways() {
    for (engine, proto) in [("net", "tcp"), ("netsplice", "tcp"), ("net", "unix")] {
        for (fr, fw) in pairings() {
            let (r, w) = pair(engine, proto, fr, fw, &[]);
            let what = format!("{engine}/{proto} fio reads {fr} fio writes {fw}: {r:?} {w:?}");
            if fr {
                // fio's reader counts each partial receive as a whole issued block, so it
                // may stop and close a little early: the writer's last sends then meet a
                // reset connection (as a fio writer would).
                assert!(w.2 > SIZE * 9 / 10, "{what}");
                assert!(
                    [0, libc::ECONNRESET as i64, libc::EPIPE as i64].contains(&w.4),
                    "{what}"
                );
            } else {
                assert_eq!((w.2, w.3), (SIZE, SIZE / 4096), "{what}");
            }
            if !fr {
                // iobench receives whole blocks: every byte, block by block.
                assert_eq!((r.0, r.1, r.4), (SIZE, SIZE / 4096, 0), "{what}");
            } else {
                // fio counts partial receives as short I/Os and may stop a little early.
                assert!(r.0 > SIZE * 9 / 10, "{what}");
            }
            // (fio 3.33 also fails its own close of a Unix socket, EISCONN from sendto on
            // a connected socket; iobench does not copy that.)
            if !fw && !fr {
                assert_eq!(w.4, 0, "{what}");
            }
        }
    }
}

#[test]
fn udp_reader_stops_on_the_close_message_and_counts_drops() {
    for (fr, fw) in pairings() {
        let (r, w) = pair("net", "udp", fr, fw, &[]);
        let what = format!("fio reads {fr} fio writes {fw}: {r:?} {w:?}");
        assert_eq!((w.2, w.4), (SIZE, 0), "{what}");
        // The reader ended (on the close message), having received some datagrams and
        // counted the ones it missed from the sequence numbers.
        assert_eq!(r.4, 0, "{what}");
        assert!(r.1 > 0, "{what}");
        assert!(r.1 + r.5 <= SIZE / 4096, "{what}");
    }
}

#[test]
fn udp_gaps_count_as_dropped() {
    // A reader slower than its writer loses datagrams after its socket buffer fills;
    // the ones missing between two it got are counted from the sequence trailers.
    for (fr, fw) in pairings() {
        let (r, w) = pair_with(
            "net",
            "udp",
            (fr, fw),
            &[],
            (&["--thinktime=5ms"], &["--rate=2m"]),
        );
        let what = format!("fio reads {fr} fio writes {fw}: {r:?} {w:?}");
        assert_eq!(w.2, SIZE, "{what}");
        assert!(r.1 < SIZE / 4096 && r.5 > 0, "{what}");
        assert!(r.1 + r.5 <= SIZE / 4096, "{what}");
    }
}

#[test]
fn pingpong_answers_every_block() {
    for proto in ["tcp", "udp"] {
        for (fr, fw) in pairings() {
            let (r, w) = pair("net", proto, fr, fw, &["--pingpong=1", "--size=256k"]);
            let what = format!("{proto} fio reads {fr} fio writes {fw}: {r:?} {w:?}");
            assert_eq!((r.0, r.1), (256 << 10, 64), "{what}");
            assert_eq!((w.2, w.3), (256 << 10, 64), "{what}");
        }
    }
}

#[test]
fn each_clone_uses_its_own_port() {
    // Two listening clones take port and port+1; two sending clones reach them.
    let dir = common::scratch("net_clones");
    let p = port();
    let reader = common::iobench()
        .current_dir(&dir)
        .args([
            "--name=r",
            "--ioengine=net",
            "--listen=1",
            "--rw=read",
            "--numjobs=2",
        ])
        .args([
            "--bs=4k",
            "--size=1m",
            "--group_reporting",
            "--output-format=json",
        ])
        .arg(format!("--port={p}"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(bound("tcp", p) && bound("tcp", p + 1)) {
        assert!(Instant::now() < deadline, "both clones listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let w = common::run_ok({
        let mut c = tool(common::fio().is_some());
        c.current_dir(&dir)
            .args([
                "--name=w",
                "--ioengine=net",
                "--hostname=127.0.0.1",
                "--rw=write",
            ])
            .args(["--numjobs=2", "--bs=4k", "--size=1m", "--group_reporting"])
            .args(["--output-format=json"])
            .arg(format!("--port={p}"));
        c
    });
    let r = reader.wait_with_output().unwrap();
    assert_eq!(res(&r).0, 2 << 20);
    assert_eq!(res(&w).2, 2 << 20);
}

#[test]
fn rates_are_in_bits_as_fio_reports_net() {
    let (r, _) = pair("net", "tcp", false, false, &[]);
    assert_eq!(r.0, SIZE);
    // The normal report of a net job speaks bits (fio's FIO_BIT_BASED engines).
    let dir = common::scratch("net_bits");
    let p = port();
    let reader = common::iobench()
        .current_dir(&dir)
        .args([
            "--name=r",
            "--ioengine=net",
            "--listen=1",
            "--rw=read",
            "--bs=64k",
            "--size=4m",
        ])
        .arg(format!("--port={p}"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    while !bound("tcp", p) {
        std::thread::sleep(Duration::from_millis(20));
    }
    common::run_ok({
        let mut c = common::iobench();
        c.args([
            "--name=w",
            "--ioengine=net",
            "--hostname=127.0.0.1",
            "--rw=write",
        ])
        .args(["--bs=64k", "--size=4m"])
        .arg(format!("--port={p}"));
        c
    });
    let out = reader.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("bit/s"), "{text}");
    assert!(text.contains("iobench: waiting for connection"), "{text}");
}

#[test]
fn bad_network_jobs_are_refused_as_fio_refuses_them() {
    for (args, why) in [
        (
            &["--rw=randread", "--port=1", "--listen=1"][..],
            "can't be random",
        ),
        (&["--rw=read", "--listen=1"], "requires port"),
        (
            &["--rw=write", "--protocol=unix", "--port=5"],
            "port not valid with unix",
        ),
        (
            &["--rw=read", "--protocol=udp", "--port=5", "--listen=1"],
            "listen only valid for TCP",
        ),
        (
            &["--rw=rw", "--protocol=udp", "--port=5"],
            "must be read OR write",
        ),
        (
            &["--rw=read", "--protocol=unix"],
            "UNIX sockets need host/filename",
        ),
    ] {
        let out = common::run({
            let mut c = common::iobench();
            c.args(["--name=x", "--ioengine=net", "--size=1m"])
                .args(args);
            c
        });
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(why),
            "{args:?}: {err}"
        );
    }
}

/// fio's example netio_multicast.fio, small, with its readers slow to bind (an
/// exec_prerun sleep): its writer's `startdelay=1` must put the writer's link open after
/// its readers' set-up, as fio creates a delayed job only when its delay is over (iobench
/// had set the writer up first and slept after, so the readers missed the open message:
/// "bad udp open magic"). The normal reader's close message may reach the pingpong writer
/// before the last answer; fio then ends the writer without counting that block, and so
/// does iobench, where it had failed the job with EPIPE.
#[test]
fn multicast_example_writer_opens_after_its_delay() {
    use std::os::unix::process::CommandExt;
    let p = port();
    let job = format!(
        "[global]\nioengine=net\nprotocol=udp\nbs=64\nsize=64k\nport={p}\n\
         hostname=239.0.0.0\nttl=1\n\n\
         [pingpong_reader]\npingpong=1\nrw=read\nexec_prerun=sleep 0.3\n\n\
         [normal_reader]\nrw=read\nexec_prerun=sleep 0.3\n\n\
         [pingpong_writer]\nstartdelay=1\npingpong=1\nrw=write\n"
    );
    let mut tools = vec![(false, common::iobench())];
    if let Some(f) = common::fio() {
        tools.push((true, f));
    }
    for (is_fio, c) in tools {
        let dir = common::scratch(&format!("net_multicast_{is_fio}"));
        std::fs::write(dir.join("mc.fio"), &job).unwrap();
        // UDP may lose a datagram when a reader's socket buffer is full (a loaded host), and
        // a reader that loses the writer's one close message waits for it forever, fio's as
        // ours. Such a run gets another try, but only when the kernel counted a receive
        // buffer drop while it ran; a hang without one fails.
        let mut c = c;
        let mut tries = 0;
        let out = loop {
            tries += 1;
            let drops = udp_rcvbuf_errors();
            let child = c
                .current_dir(&dir)
                .args(["--output-format=json", "mc.fio"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .spawn()
                .unwrap();
            match common::wait_within(child, 30) {
                Some(out) => break out,
                None => {
                    let lost = udp_rcvbuf_errors() > drops;
                    assert!(
                        lost && tries < 3,
                        "fio {is_fio}: hung {tries} times; a datagram lost by the kernel \
                         this time: {lost}"
                    );
                    c = if is_fio {
                        common::fio().expect("fio")
                    } else {
                        common::iobench()
                    };
                }
            }
        };
        let what = format!("fio {is_fio}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{what}");
        let v = common::json_report(&out);
        let jobs = v["jobs"].as_array().unwrap();
        let ios = |i: usize, d: &str| jobs[i][d]["total_ios"].as_u64().unwrap();
        // The pingpong reader gets every block (the writer waits for each answer). The
        // normal reader only listens: on a loaded host its socket buffer can overflow and
        // the kernel drops datagrams (997 of 1024 on a CI run), so it counts most, not all.
        // The writer counts 1023 or 1024, by who closes first.
        assert_eq!(ios(0, "read"), 1024, "{what}");
        assert!((512..=1024).contains(&ios(1, "read")), "{what}");
        assert!((1023..=1024).contains(&ios(2, "write")), "{what}");
        for j in jobs {
            assert_eq!(j["error"].as_i64(), Some(0), "{what}");
        }
    }
}

/// The kernel's count of UDP datagrams dropped for a full receive buffer (`RcvbufErrors`).
fn udp_rcvbuf_errors() -> u64 {
    let text = std::fs::read_to_string("/proc/net/snmp").unwrap_or_default();
    let mut rows = text.lines().filter(|l| l.starts_with("Udp: "));
    let (Some(names), Some(values)) = (rows.next(), rows.next()) else {
        return 0;
    };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(n, _)| *n == "RcvbufErrors")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}
