//! fio's client/server protocol, both directions, against the installed fio 3.33 on
//! loopback ports: `fio --client` against `iobench --server` must print what it prints
//! against `fio --server` (normal and JSON, `client_stats`, "All clients"), and
//! `iobench --client` against `fio --server` must give fio's client report.

mod common;

use common::netproc::{free_port, mask, Server};
use common::{fio, iobench, scratch};
use serde_json::Value;
use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

/// A small job whose I/O counts are fixed: two psync jobs on files in `dir`.
fn job_file(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("two.fio");
    std::fs::write(
        &p,
        format!(
            "[global]\nioengine=psync\nsize=1m\nbs=4k\ndirectory={}\n\n[r1]\nrw=randread\n\n[w1]\nrw=write\n",
            dir.display()
        ),
    )
    .unwrap();
    p
}

fn fio_server(port: u16) -> Server {
    let mut c = fio().expect("fio");
    c.arg(format!("--server=,{port}"));
    Server::start(c, port)
}

fn iobench_server(port: u16, cwd: &Path) -> Server {
    let mut c = iobench();
    c.arg(format!("--server=,{port}")).current_dir(cwd);
    Server::start(c, port)
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The lines that carry no timing: they must be equal to the letter.
fn exact_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| {
            l.contains("(g=0): rw=")
                || l.contains("Starting ")
                || l.contains("issued rwts")
                || l.contains("IO depths")
                || l.contains("latency   :")
                || l.contains("Run status group")
                || l.contains("Laying out")
        })
        .map(str::to_string)
        .collect()
}

/// Each line's shape, without the latency bucket lines (which buckets appear depends on
/// the timings) and with the version in the probe line masked.
fn shape(out: &str) -> Vec<String> {
    out.lines()
        // A status line fio's client may print when a run is slow ("Jobs: 2 (f=2)\r").
        .map(|l| l.rsplit('\r').next().unwrap_or(l))
        .filter(|l| !l.trim_start().starts_with("lat (") || l.contains("min="))
        .filter(|l| !l.trim_start().starts_with("Disk stats") && !l.contains(": ios="))
        .map(|l| {
            let l = match l.find("fio=") {
                Some(p) => format!(
                    "{}fio=V{}",
                    &l[..p],
                    &l[p..].find(',').map_or("", |c| &l[p + c..])
                ),
                None => l.to_string(),
            };
            mask(&l)
        })
        .collect()
}

fn keys(v: &Value, path: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{path}/{k}");
                out.insert(p.clone());
                keys(x, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                keys(x, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

fn json_of(o: &Output) -> Value {
    let t = text(o);
    let start = t.find('{').unwrap_or_else(|| panic!("no JSON in: {t}"));
    serde_json::from_str(&t[start..]).unwrap_or_else(|e| panic!("bad JSON ({e}): {t}"))
}

/// Removes the data files of earlier runs, so that each run lays its files out.
fn fresh(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_name().to_string_lossy().ends_with(".0.0") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn fio_client(args: &[String], cwd: &Path) -> Output {
    fresh(cwd);
    let mut c: Command = fio().expect("fio");
    c.args(args).current_dir(cwd);
    c.output().expect("run fio --client")
}

#[test]
fn fio_client_prints_the_same_against_iobench_server() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_normal");
    let job = job_file(&dir);
    let (pf, pi) = (free_port(), free_port());
    let _fs = fio_server(pf);
    let _is = iobench_server(pi, &dir);
    let run = |port: u16| {
        let o = fio_client(
            &[
                format!("--client=localhost,{port}"),
                job.display().to_string(),
            ],
            &dir,
        );
        assert!(
            o.status.success(),
            "fio --client failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        text(&o)
    };
    let a = run(pf);
    let b = run(pi);
    assert_eq!(
        exact_lines(&a),
        exact_lines(&b),
        "fio server:\n{a}\niobench server:\n{b}"
    );
    assert_eq!(
        shape(&a),
        shape(&b),
        "fio server:\n{a}\niobench server:\n{b}"
    );
    // fio's client sums the two jobs: "All clients" with both jobs' I/O.
    assert!(b.contains("All clients: (groupid=0, jobs=2)"), "{b}");
    assert!(b.contains("issued rwts: total=256,256,0,0"), "{b}");
    assert!(
        b.contains("<") && b.contains("> Starting 2 processes"),
        "{b}"
    );
}

#[test]
fn fio_client_json_is_the_same_against_iobench_server() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_json");
    let job = job_file(&dir);
    let (pf, pi) = (free_port(), free_port());
    let _fs = fio_server(pf);
    let _is = iobench_server(pi, &dir);
    let run = |port: u16| {
        let o = fio_client(
            &[
                format!("--client=localhost,{port}"),
                "--output-format=json".into(),
                job.display().to_string(),
            ],
            &dir,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        json_of(&o)
    };
    let a = run(pf);
    let b = run(pi);
    let (mut ka, mut kb) = (BTreeSet::new(), BTreeSet::new());
    keys(&a, "", &mut ka);
    keys(&b, "", &mut kb);
    assert_eq!(ka, kb, "JSON key sets differ");
    assert_eq!(a["global options"], b["global options"]);
    let cs = b["client_stats"].as_array().expect("client_stats");
    let names: Vec<&str> = cs.iter().map(|c| c["jobname"].as_str().unwrap()).collect();
    assert_eq!(names, ["r1", "w1", "All clients"]);
    for (x, y) in a["client_stats"].as_array().unwrap().iter().zip(cs) {
        assert_eq!(x["job options"], y["job options"]);
        assert_eq!(x["read"]["total_ios"], y["read"]["total_ios"]);
        assert_eq!(x["write"]["io_bytes"], y["write"]["io_bytes"]);
        assert_eq!(y["hostname"], "localhost");
        assert_eq!(y["port"], pi);
    }
    assert_eq!(cs[2]["read"]["total_ios"], 256);
    assert_eq!(cs[2]["write"]["total_ios"], 256);
}

#[test]
fn fio_client_drives_several_iobench_servers() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_multi");
    let job = dir.join("one.fio");
    std::fs::write(
        &job,
        format!(
            "[r]\nioengine=psync\nrw=read\nsize=512k\nbs=4k\ndirectory={}\n",
            dir.display()
        ),
    )
    .unwrap();
    let (p1, p2) = (free_port(), free_port());
    let _s1 = iobench_server(p1, &dir);
    let _s2 = iobench_server(p2, &dir);
    let o = fio_client(
        &[
            format!("--client=localhost,{p1}"),
            job.display().to_string(),
            format!("--client=localhost,{p2}"),
            job.display().to_string(),
            "--output-format=json".into(),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = json_of(&o);
    let cs = j["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), 3, "two jobs and All clients: {j}");
    let ports: BTreeSet<u64> = cs[..2]
        .iter()
        .map(|c| c["port"].as_u64().unwrap())
        .collect();
    assert_eq!(ports, [p1 as u64, p2 as u64].into_iter().collect());
    assert_eq!(cs[2]["jobname"], "All clients");
    assert_eq!(
        cs[2]["read"]["total_ios"], 256,
        "128 reads from each server"
    );
}

#[test]
fn a_job_a_server_refuses_is_reported_whole_and_fails() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_refused");
    let job = dir.join("bad.fio");
    std::fs::write(&job, "[x]\nrw=sideways\n").unwrap();
    let p = free_port();
    let _s = fio_server(p);
    // The server's whole explanation arrives (RUN is only sent after START), and a job
    // that never ran is a failure, where fio's client says 0.
    for _ in 0..3 {
        let o = iobench_client(
            &[format!("--client=localhost,{p}"), job.display().to_string()],
            &dir,
        );
        let out = text(&o);
        assert!(out.contains("failed parsing rw=sideways"), "{out}");
        assert!(!out.contains("disconnected"), "{out}");
        assert_eq!(o.status.code(), Some(1), "{out}");
    }
}

#[test]
fn bad_job_gets_an_error_text_not_a_hang() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_badjob");
    let job = dir.join("bad.fio");
    std::fs::write(&job, "[x]\nrw=sideways\n").unwrap();
    let p = free_port();
    let _s = iobench_server(p, &dir);
    let o = fio_client(
        &[format!("--client=localhost,{p}"), job.display().to_string()],
        &dir,
    );
    let out = text(&o) + &String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains("sideways"),
        "the error names the bad value: {out}"
    );
}

/// The report without the "All clients" block, which iobench prints with exact
/// percentiles where fio 3.33 prints none.
fn before_all_clients(out: &str) -> &str {
    out.find("All clients:").map_or(out, |p| &out[..p])
}

fn iobench_client(args: &[String], cwd: &Path) -> Output {
    fresh(cwd);
    let mut c = iobench();
    c.args(args).current_dir(cwd);
    c.output().expect("run iobench --client")
}

#[test]
fn iobench_client_reports_like_fio_client() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_client_normal");
    let job = job_file(&dir);
    let pf = free_port();
    let _fs = fio_server(pf);
    let args = [
        format!("--client=localhost,{pf}"),
        job.display().to_string(),
    ];
    let a = fio_client(&args, &dir);
    let b = iobench_client(&args, &dir);
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    let (a, b) = (text(&a), text(&b));
    assert_eq!(
        exact_lines(&a),
        exact_lines(&b),
        "fio client:\n{a}\niobench client:\n{b}"
    );
    assert_eq!(
        shape(before_all_clients(&a)),
        shape(before_all_clients(&b)),
        "fio client:\n{a}\niobench client:\n{b}"
    );
    // The total is there, with the percentiles fio leaves out.
    let all = &b[b
        .find("All clients: (groupid=0, jobs=2)")
        .expect("All clients")..];
    assert!(all.contains("clat percentiles"), "{all}");
    assert!(all.contains("issued rwts: total=256,256,0,0"), "{all}");
}

#[test]
fn iobench_client_json_is_fios() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_client_json");
    let job = job_file(&dir);
    let pf = free_port();
    let _fs = fio_server(pf);
    let args = [
        format!("--client=localhost,{pf}"),
        "--output-format=json".into(),
        job.display().to_string(),
    ];
    let a = json_of(&fio_client(&args, &dir));
    let o = iobench_client(&args, &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let b = json_of(&o);
    let top = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(top(&a), top(&b));
    assert_eq!(a["global options"], b["global options"]);
    let (ca, cb) = (
        a["client_stats"].as_array().unwrap(),
        b["client_stats"].as_array().unwrap(),
    );
    assert_eq!(ca.len(), cb.len());
    for (x, y) in ca.iter().zip(cb) {
        let (mut kx, mut ky) = (BTreeSet::new(), BTreeSet::new());
        keys(x, "", &mut kx);
        keys(y, "", &mut ky);
        if x["jobname"] == "All clients" {
            // iobench adds the percentiles; every key of fio's is there.
            assert!(
                kx.is_subset(&ky),
                "{:?}",
                kx.difference(&ky).collect::<Vec<_>>()
            );
        } else {
            assert_eq!(kx, ky, "keys of {}", x["jobname"]);
            assert_eq!(x["job options"], y["job options"]);
        }
        assert_eq!(x["read"]["total_ios"], y["read"]["total_ios"]);
        assert_eq!(x["hostname"], y["hostname"]);
        assert_eq!(x["port"], y["port"]);
    }
    assert_eq!(
        a["disk_util"].as_array().map(Vec::len),
        b["disk_util"].as_array().map(Vec::len)
    );
}

#[test]
fn iobench_client_drives_several_servers_and_survives_a_lost_one() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_client_multi");
    let long = dir.join("long.fio");
    std::fs::write(
        &long,
        format!(
            "[t]\nioengine=psync\nrw=read\nsize=256k\nbs=4k\ntime_based\nruntime=3s\ndirectory={}\n",
            dir.display()
        ),
    )
    .unwrap();
    let (p1, p2, p3, p4) = (free_port(), free_port(), free_port(), free_port());
    let _s1 = fio_server(p1);
    let _s2 = iobench_server(p2, &dir);
    let mut s3 = iobench_server(p3, &dir);
    let mut s4 = fio_server(p4);
    let mut c = iobench();
    c.args([
        format!("--client=localhost,{p1}"),
        format!("--client=localhost,{p2}"),
        format!("--client=localhost,{p3}"),
        format!("--client=localhost,{p4}"),
        "--output-format=json".into(),
        long.display().to_string(),
    ])
    .current_dir(&dir)
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // One server of each kind dies mid-run (the fio one with the backend it forked).
    s3.kill();
    s4.kill();
    let o = child.wait_with_output().unwrap();
    assert!(
        !o.status.success(),
        "a lost server makes the exit status non-zero"
    );
    let j = json_of(&o);
    let cs = j["client_stats"].as_array().unwrap();
    let ports: Vec<u64> = cs
        .iter()
        .filter(|c| c["jobname"] == "t")
        .map(|c| c["port"].as_u64().unwrap())
        .collect();
    assert_eq!(ports.len(), 2, "the two servers left are reported: {j}");
    assert!(ports.contains(&(p1 as u64)) && ports.contains(&(p2 as u64)));
    assert_eq!(cs.last().unwrap()["jobname"], "All clients");
    let all = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        all.matches("host=localhost disconnected").count(),
        2,
        "{all}"
    );
}

/// A fake server: accepts one connection and answers whatever comes with `reply`.
fn fake_server(reply: Vec<u8>) -> u16 {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let mut b = [0u8; 24];
            let _ = s.read_exact(&mut b);
            let _ = s.write_all(&reply);
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
    });
    port
}

#[test]
fn version_mismatch_and_garbage_are_clear_errors() {
    use iobench::fioproto::{crc16, encode, op};
    let dir = scratch("cs_bad_peer");
    let job = job_file(&dir);
    // A PROBE reply from a peer of another protocol version (fio 3.36 speaks 100).
    let mut msg = encode(op::PROBE, 0, &[0u8; 112]);
    msg[0] = 100;
    let crc = crc16(&msg[..20]);
    msg[20..22].copy_from_slice(&crc.to_le_bytes());
    let p = fake_server(msg.clone());
    let o = iobench_client(
        &[format!("--client=localhost,{p}"), job.display().to_string()],
        &dir,
    );
    assert!(!o.status.success());
    let all = text(&o) + &String::from_utf8_lossy(&o.stderr);
    assert!(
        all.contains("version mismatch") && all.contains("100") && all.contains("97"),
        "{all}"
    );
    // Garbage, and a message cut short: errors, never a crash.
    for reply in [vec![0xffu8; 64], msg[..30].to_vec()] {
        let p = fake_server(reply);
        let o = iobench_client(
            &[format!("--client=localhost,{p}"), job.display().to_string()],
            &dir,
        );
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(text(&o).contains("disconnected"), "{}", text(&o));
    }
    // The server side: a client of another version is refused, and the server lives on.
    let ps = free_port();
    let _s = iobench_server(ps, &dir);
    {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", ps)).unwrap();
        s.write_all(&msg).unwrap();
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        assert!(buf.is_empty(), "no answer to a peer of another version");
    }
    let o = fio_client_or_iobench(ps, &job, &dir);
    assert!(o.contains("issued rwts"), "the server still serves: {o}");
}

/// A run against the iobench server on `port`, by fio's client when installed.
fn fio_client_or_iobench(port: u16, job: &Path, dir: &Path) -> String {
    let args = [
        format!("--client=localhost,{port}"),
        job.display().to_string(),
    ];
    let o = match fio() {
        Some(_) => fio_client(&args, dir),
        None => iobench_client(&args, dir),
    };
    text(&o)
}

/// A fake iobench server that agrees to a synchronised start but lays out for `delay`:
/// the real servers must wait for it.
fn slow_sync_server(delay: std::time::Duration) -> u16 {
    use iobench::fioproto::pdu::{ProbeReply, Stop, PROBE_FLAG_SYNC_START};
    use iobench::fioproto::{op, read_cmd, send};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = l.accept() else { return };
        let mut r = s.try_clone().unwrap();
        while let Ok(cmd) = read_cmd(&mut r) {
            match cmd.opcode {
                op::PROBE => {
                    let p = ProbeReply {
                        hostname: "slow".into(),
                        bigendian: 0,
                        fio_version: "iobench-fake".into(),
                        os: 1,
                        arch: 1,
                        bpp: 8,
                        cpus: 1,
                        flags: PROBE_FLAG_SYNC_START,
                    };
                    send(&mut s, op::PROBE, cmd.tag, &p.encode()).unwrap();
                }
                op::JOB => {
                    let st = iobench::fioproto::pdu::Start {
                        jobs: 0,
                        stat_outputs: 0,
                    };
                    send(&mut s, op::START, 0, &st.encode()).unwrap();
                }
                op::RUN => {
                    std::thread::sleep(delay);
                    send(&mut s, op::IOB_READY, 0, &[]).unwrap();
                }
                op::IOB_GO => {
                    send(
                        &mut s,
                        op::STOP,
                        0,
                        &Stop {
                            error: 0,
                            signal: 0,
                        }
                        .encode(),
                    )
                    .unwrap();
                    send(&mut s, op::QUIT, 0, &[]).unwrap();
                }
                _ => {}
            }
        }
    });
    port
}

#[test]
fn iobench_servers_start_together() {
    let dir = scratch("cs_sync");
    let job = dir.join("sync.fio");
    std::fs::write(
        &job,
        format!(
            "[s]\nioengine=psync\nrw=write\nsize=64k\nbs=4k\ndirectory={}\nwrite_lat_log=s\nlog_unix_epoch=1\n",
            dir.display()
        ),
    )
    .unwrap();
    let hosts = dir.join("hosts");
    let (slow, real) = (
        slow_sync_server(std::time::Duration::from_millis(1500)),
        free_port(),
    );
    std::fs::write(&hosts, format!("localhost,{slow}\nlocalhost,{real}\n")).unwrap();
    let _s = iobench_server(real, &dir);
    let t0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let o = iobench_client(
        &[
            format!("--client={}", hosts.display()),
            job.display().to_string(),
        ],
        &dir,
    );
    assert!(
        o.status.success(),
        "{}{}",
        text(&o),
        String::from_utf8_lossy(&o.stderr)
    );
    // The server sent its log to the client, which wrote it as `<name>.<host>`.
    let log =
        std::fs::read_to_string(dir.join("s_lat.1.log.localhost")).expect("the real server's log");
    let first: u64 = log.split(',').next().unwrap().trim().parse().unwrap();
    assert!(
        first >= t0 + 1400,
        "the real server's first I/O ({first}) came {} ms after the client started, before \
         the slow server was ready",
        first.saturating_sub(t0)
    );
    // Each iobench server's report says whose it is.
    assert!(
        text(&o).contains(&format!(", port {real}\n")),
        "{}",
        text(&o)
    );
}

#[test]
fn iobench_client_writes_the_logs_a_fio_server_sends() {
    if fio().is_none() {
        return;
    }
    let pf = free_port();
    let sdir = scratch("cs_logs_server");
    let _fs = fio_server(pf);
    let job_text = format!(
        "[lj]\nioengine=psync\nrw=write\nsize=64k\nbs=4k\ndirectory={0}\nwrite_lat_log=lj\nwrite_bw_log=lj\n\
         [hj]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\ndirectory={0}\ntime_based\nruntime=400ms\n\
         rate_iops=50\nwrite_hist_log=hj\nlog_hist_msec=100\nlog_hist_coarseness=3\n",
        sdir.display()
    );
    let mut logs = Vec::new();
    for who in ["fio", "iobench"] {
        let dir = scratch(&format!("cs_logs_{who}"));
        let job = dir.join("lj.fio");
        std::fs::write(&job, &job_text).unwrap();
        let args = [
            format!("--client=localhost,{pf}"),
            job.display().to_string(),
        ];
        let o = if who == "fio" {
            fio_client(&args, &dir)
        } else {
            iobench_client(&args, &dir)
        };
        assert!(
            o.status.success(),
            "{who}: {}{}",
            text(&o),
            String::from_utf8_lossy(&o.stderr)
        );
        let read = |k: &str| {
            std::fs::read_to_string(dir.join(format!("{k}.log.localhost")))
                .unwrap_or_else(|e| panic!("{who}: {k}.log.localhost: {e}"))
        };
        logs.push((read("lj_clat.1"), read("lj_bw.1"), read("hj_clat_hist.2")));
    }
    // fio compresses the logs it sends (zlib): iobench inflates them to the same lines.
    let shape = |s: &str| -> Vec<(usize, String)> {
        s.lines()
            .map(|l| {
                let f: Vec<&str> = l.split(", ").collect();
                (f.len(), format!("{} {}", f[2], f[3]))
            })
            .collect()
    };
    assert_eq!(shape(&logs[0].0), shape(&logs[1].0));
    assert_eq!(
        logs[0].0.lines().count(),
        16,
        "one clat sample per 4k write"
    );
    assert_eq!(shape(&logs[0].1), shape(&logs[1].1));
    // Histogram logs: fio's buckets summed 8 at a time (coarseness 3), 232 bins a line.
    for (_, _, hist) in &logs {
        assert!(hist.lines().count() >= 2, "{hist}");
        assert!(
            hist.lines().all(|l| l.split(", ").count() == 3 + 1856 / 8),
            "{hist}"
        );
    }
    // fio's server puts its address in front of the names of files in a `directory`.
    assert!(sdir.join("127.0.0.1.lj.0.0").exists());
}

#[test]
fn fio_client_gets_the_logs_of_an_iobench_server() {
    if fio().is_none() {
        return;
    }
    let sdir = scratch("cs_ilogs_server");
    let dir = scratch("cs_ilogs_client");
    let pi = free_port();
    let _is = iobench_server(pi, &sdir);
    let job = dir.join("lj.fio");
    std::fs::write(
        &job,
        format!(
            "[lj]\nioengine=psync\nrw=write\nsize=64k\nbs=4k\ndirectory={0}\nwrite_lat_log=lj\nwrite_iops_log=lj\n\
             [hj]\nioengine=psync\nrw=read\nsize=64k\nbs=4k\ndirectory={0}\ntime_based\nruntime=400ms\n\
             rate_iops=50\nwrite_hist_log=hj\nlog_hist_msec=100\nlog_hist_coarseness=3\n",
            sdir.display()
        ),
    )
    .unwrap();
    let o = fio_client(
        &[
            format!("--client=localhost,{pi}"),
            job.display().to_string(),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let clat = std::fs::read_to_string(dir.join("lj_clat.1.log.localhost")).expect("clat log");
    assert_eq!(clat.lines().count(), 16, "{clat}");
    assert!(
        clat.lines().all(|l| l.split(", ").nth(2) == Some("1")),
        "{clat}"
    );
    assert!(dir.join("lj_iops.1.log.localhost").exists());
    let hist = std::fs::read_to_string(dir.join("hj_clat_hist.2.log.localhost")).expect("hist");
    assert!(
        hist.lines().count() >= 2 && hist.lines().all(|l| l.split(", ").count() == 3 + 1856 / 8),
        "{hist}"
    );
    assert!(
        !sdir.join("lj_clat.1.log").exists(),
        "the server keeps no copy, as fio's"
    );
    // As a fio server names the files it creates in a `directory` (see the test above).
    assert!(sdir.join("127.0.0.1.lj.0.0").exists());
}

#[test]
fn unix_socket_ipv6_and_daemonize() {
    let dir = scratch("cs_forms");
    let job = job_file(&dir);
    // A Unix socket: both clients reach it; fio shows the path as the host, port 8765.
    let sock = dir.join("s.sock");
    let mut c = iobench();
    c.arg(format!("--server=sock:{}", sock.display()))
        .current_dir(&dir)
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let child = c.spawn().unwrap();
    let _guard = Server { child, port: 0 };
    let t0 = std::time::Instant::now();
    while std::os::unix::net::UnixStream::connect(&sock).is_err() {
        assert!(t0.elapsed().as_secs() < 10, "no socket");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let args = [
        format!("--client=sock:{}", sock.display()),
        "--output-format=json".to_string(),
        job.display().to_string(),
    ];
    let mut outs = vec![iobench_client(&args, &dir)];
    if fio().is_some() {
        outs.push(fio_client(&args, &dir));
    }
    for o in outs {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let j = json_of(&o);
        assert_eq!(j["client_stats"][0]["hostname"], sock.display().to_string());
        assert_eq!(j["client_stats"][0]["port"], 8765);
        assert_eq!(j["client_stats"][0]["read"]["total_ios"], 256);
    }
    // IPv6 loopback, when the host has it.
    if std::net::TcpListener::bind("[::1]:0").is_ok() {
        let p = free_port();
        let mut c = iobench();
        c.arg(format!("--server=ip6:::1,{p}")).current_dir(&dir);
        c.process_group(0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let _g = Server {
            child: c.spawn().unwrap(),
            port: p,
        };
        let t0 = std::time::Instant::now();
        while std::net::TcpStream::connect(("::1", p)).is_err() {
            assert!(t0.elapsed().as_secs() < 10, "no IPv6 server");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let o = iobench_client(
            &[
                format!("--client=ip6:::1,{p}"),
                "--output-format=json".into(),
                job.display().to_string(),
            ],
            &dir,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(json_of(&o)["client_stats"][0]["hostname"], "::1");
    }
    // --daemonize: the command returns, the pid file names a live server that answers.
    let p = free_port();
    let pidfile = dir.join("srv.pid");
    let st = iobench()
        .args([
            format!("--server=,{p}"),
            format!("--daemonize={}", pidfile.display()),
        ])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let t0 = std::time::Instant::now();
    let pid: i32 = loop {
        if let Ok(t) = std::fs::read_to_string(&pidfile) {
            if let Ok(pid) = t.trim().parse() {
                break pid;
            }
        }
        assert!(t0.elapsed().as_secs() < 10, "no pid file");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let _daemon = Daemon(pid);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", p)).is_ok(),
        "the daemon listens on {p}"
    );
    // It serves runs, detached from the terminal that started it.
    let mut clients = vec![("iobench", iobench())];
    if let Some(f) = fio() {
        clients.push(("fio", f));
    }
    for (who, mut c) in clients {
        fresh(&dir);
        let o = c
            .args([
                format!("--client=localhost,{p}"),
                "--output-format=json".into(),
                job.display().to_string(),
            ])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            json_of(&o)["client_stats"][0]["read"]["total_ios"],
            256,
            "{who}"
        );
    }
    // A second daemon is refused while the pid file names a live one.
    let o = iobench()
        .args([
            format!("--server=,{}", free_port()),
            format!("--daemonize={}", pidfile.display()),
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("appears alive"));
}

/// A daemonised server, killed with its session's process group when the test ends.
struct Daemon(i32);

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: ends the daemon this test started (setsid made its pid its group).
        unsafe {
            libc::kill(-self.0, libc::SIGKILL);
            libc::kill(self.0, libc::SIGKILL);
        }
    }
}

#[test]
fn interrupting_the_client_stops_the_runs_and_reports_them() {
    let dir = scratch("cs_interrupt");
    let long = dir.join("long.fio");
    std::fs::write(
        &long,
        format!(
            "[t]\nioengine=psync\nrw=read\nsize=256k\nbs=4k\ntime_based\nruntime=30s\ndirectory={}\n",
            dir.display()
        ),
    )
    .unwrap();
    let p = free_port();
    let _s = iobench_server(p, &dir);
    let mut clients: Vec<(&str, Command)> = vec![("iobench", iobench())];
    if let Some(f) = fio() {
        clients.push(("fio", f));
    }
    for (who, mut c) in clients {
        fresh(&dir);
        c.args([
            format!("--client=localhost,{p}"),
            long.display().to_string(),
        ])
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
        let child = c.spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        // SAFETY: interrupts the client this test started.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let t0 = std::time::Instant::now();
        let o = child.wait_with_output().unwrap();
        assert!(t0.elapsed().as_secs() < 10, "{who}: the run stopped soon");
        let out = text(&o);
        assert!(
            o.status.success(),
            "{who}: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            out.contains("t: (groupid=0, jobs=1): err= 0"),
            "{who}: {out}"
        );
        assert!(!out.contains("terminating on signal"), "{who}: {out}");
        assert!(!out.contains("exited with error"), "{who}: {out}");
    }
}

#[test]
fn steady_state_travels_both_ways() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_steady");
    let (pf, pi) = (free_port(), free_port());
    let _fs = fio_server(pf);
    let _is = iobench_server(pi, &dir);
    let json = |o: Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        json_of(&o)["client_stats"][0]["steadystate"].clone()
    };
    // The three runs at once, each in its own directory (each ends when its window is
    // steady, after about 2 s).
    let (reference, from_iobench_server, by_iobench_client) = std::thread::scope(|sc| {
        let run = |who: &'static str, p: u16| {
            let sub = dir.join(format!("{who}{p}"));
            sc.spawn(move || {
                std::fs::create_dir_all(&sub).unwrap();
                let job = sub.join("ss.fio");
                std::fs::write(
                    &job,
                    format!(
                        "[ss]\nioengine=psync\nrw=read\nsize=256k\nbs=4k\ntime_based\nruntime=4s\n\
                         steadystate=iops:50%\nsteadystate_duration=2s\ndirectory={}\n",
                        sub.display()
                    ),
                )
                .unwrap();
                let mut c = if who == "fio" {
                    fio().unwrap()
                } else {
                    iobench()
                };
                c.args([
                    format!("--client=localhost,{p}"),
                    "--output-format=json".to_string(),
                    job.display().to_string(),
                ])
                .current_dir(&sub);
                c.output().unwrap()
            })
        };
        let a = run("fio", pf);
        let b = run("fio", pi);
        let c = run("iobench", pf);
        (a.join().unwrap(), b.join().unwrap(), c.join().unwrap())
    });
    let (reference, from_iobench_server, by_iobench_client) = (
        json(reference),
        json(from_iobench_server),
        json(by_iobench_client),
    );
    for ss in [&from_iobench_server, &by_iobench_client] {
        let (mut ka, mut kb) = (BTreeSet::new(), BTreeSet::new());
        keys(&reference, "", &mut ka);
        keys(ss, "", &mut kb);
        assert_eq!(ka, kb, "{reference}\n{ss}");
        assert_eq!(ss["ss"], "iops:50.000000%");
        assert_eq!(ss["duration"], 2);
        assert_eq!(ss["data"]["iops"].as_array().map(Vec::len), Some(2), "{ss}");
    }
}

#[test]
fn iobench_client_terse_is_fios() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_terse");
    let job = job_file(&dir);
    let pf = free_port();
    let _fs = fio_server(pf);
    let args = [
        format!("--client=localhost,{pf}"),
        "--minimal".to_string(),
        job.display().to_string(),
    ];
    // Each line's field count and the fields naming it (the version field aside).
    let shape = |o: Output| -> Vec<(usize, String)> {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        text(&o)
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(';').collect();
                let name = if f[0].is_empty() { f[1] } else { f[2] };
                (f.len(), name.to_string())
            })
            .collect()
    };
    let a = shape(fio_client(&args, &dir));
    let b = shape(iobench_client(&args, &dir));
    assert_eq!(a, b);
    assert_eq!(b.last().map(|x| x.1.as_str()), Some("All clients"));
}

#[test]
fn remote_config_runs_the_servers_own_job_file() {
    let dir = scratch("cs_remote");
    let job = job_file(&dir);
    let pi = free_port();
    let _is = iobench_server(pi, &dir);
    let mut runs = vec![iobench_client(
        &[
            format!("--client=localhost,{pi}"),
            format!("--remote-config={}", job.display()),
        ],
        &dir,
    )];
    if fio().is_some() {
        let pf = free_port();
        let _fs = fio_server(pf);
        // fio's client against iobench's server, iobench's client against fio's.
        runs.push(fio_client(
            &[
                format!("--client=localhost,{pi}"),
                format!("--remote-config={}", job.display()),
            ],
            &dir,
        ));
        runs.push(iobench_client(
            &[
                format!("--client=localhost,{pf}"),
                format!("--remote-config={}", job.display()),
            ],
            &dir,
        ));
    }
    for o in runs {
        let out = text(&o);
        assert!(
            o.status.success(),
            "{out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.contains("issued rwts: total=256,0,0,0"), "{out}");
        assert!(out.contains("issued rwts: total=0,256,0,0"), "{out}");
    }
    let o = iobench_client(
        &[
            format!("--client=localhost,{pi}"),
            "--remote-config=/nonexistent/x.fio".into(),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("/nonexistent/x.fio"), "{}", text(&o));
}

#[test]
fn group_reporting_through_fio_client_matches_fio_server() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_groups");
    let job = dir.join("gr.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=psync\nsize=256k\nbs=4k\ndirectory={}\ngroup_reporting\n\n\
             [a]\nrw=read\nnumjobs=2\n\n[b]\nrw=write\nnumjobs=2\nnew_group\n",
            dir.display()
        ),
    )
    .unwrap();
    let (pf, pi) = (free_port(), free_port());
    let _fs = fio_server(pf);
    let _is = iobench_server(pi, &dir);
    let run = |p: u16| {
        let o = fio_client(
            &[
                format!("--client=localhost,{p}"),
                "--output-format=json".into(),
                job.display().to_string(),
            ],
            &dir,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        json_of(&o)
    };
    let (a, b) = (run(pf), run(pi));
    let (ca, cb) = (
        a["client_stats"].as_array().unwrap(),
        b["client_stats"].as_array().unwrap(),
    );
    assert_eq!(ca.len(), cb.len());
    for (x, y) in ca.iter().zip(cb) {
        for k in ["jobname", "groupid", "job options"] {
            // fio's client finds job options by thread number: "b" has none, from either.
            assert_eq!(x[k], y[k], "{k} of {}", x["jobname"]);
        }
        for d in ["read", "write"] {
            assert_eq!(
                x[d]["total_ios"], y[d]["total_ios"],
                "{d} of {}",
                x["jobname"]
            );
        }
    }
}

#[test]
fn several_servers_reports_say_whose_they_are() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_whose");
    let job = job_file(&dir);
    let (p1, p2) = (free_port(), free_port());
    let _s1 = fio_server(p1);
    let _s2 = fio_server(p2);
    let hosts = dir.join("hosts");
    std::fs::write(&hosts, format!("localhost,{p1}\nlocalhost,{p2}\n")).unwrap();
    let o = iobench_client(
        &[
            format!("--client={}", hosts.display()),
            job.display().to_string(),
        ],
        &dir,
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    // Each server's report starts with its name (fio's client prints none: fio#1931) ...
    for p in [p1, p2] {
        let lines: Vec<&str> = out.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.starts_with("hostname=") && l.ends_with(&format!(", port {p}")))
            .unwrap_or_else(|| panic!("no header for port {p}: {out}"));
        assert!(lines[at + 1].starts_with("r1: (groupid=0"), "{out}");
    }
    // ... and every text line is whole: one `<host>` prefix at its start, none inside.
    for l in out.lines().filter(|l| l.starts_with('<')) {
        assert_eq!(l.matches("> ").count(), 1, "{l}");
    }
}

/// The status lines (`Jobs: …`) a client drew in `out`: the pieces between `\r`s and
/// newlines that start so.
fn status_lines(out: &str) -> Vec<String> {
    out.split(['\r', '\n'])
        .map(str::trim_end)
        .filter(|l| l.starts_with("Jobs: "))
        .map(str::to_string)
        .collect()
}

/// A time-based job pair (a random reader, a sequential writer) in `dir` running `secs`:
/// its status lines show a job map and rates from the third second on.
fn timed_job(dir: &Path, secs: u32) -> std::path::PathBuf {
    let p = dir.join("timed.fio");
    std::fs::write(
        &p,
        format!(
            "[global]\nioengine=psync\nsize=1m\nbs=4k\ntime_based\nruntime={secs}s\ndirectory={}\n\n\
             [r1]\nrw=randread\n\n[w1]\nrw=write\n",
            dir.display()
        ),
    )
    .unwrap();
    p
}

#[test]
fn status_line_is_fios_client_line_summed_over_servers() {
    if fio().is_none() {
        return;
    }
    // Each run in its own directory, all at once (the servers serve each connection
    // apart): the runs take 5 s each.
    let dirs: Vec<_> = (0..5).map(|i| scratch(&format!("cs_eta{i}"))).collect();
    // The two-server run is longer: both servers must know their ETA at once, and the
    // iobench one starts when its files are laid out.
    let jobs: Vec<_> = dirs
        .iter()
        .enumerate()
        .map(|(i, d)| timed_job(d, if i == 2 { 9 } else { 5 }))
        .collect();
    let (pf1, pf2, pi) = (free_port(), free_port(), free_port());
    let _f1 = fio_server(pf1);
    let _f2 = fio_server(pf2);
    let _i = iobench_server(pi, &dirs[0]);
    let c = |p: u16| format!("--client=localhost,{p}");
    let runs: Vec<(&str, Vec<String>)> = vec![
        // fio's client draws by default, even into a pipe; iobench's when asked.
        ("fio", vec![c(pf1), "--eta-newline=1".into()]),
        (
            "iobench",
            vec![c(pf1), "--eta=always".into(), "--eta-newline=1".into()],
        ),
        ("iobench", vec![c(pf1), c(pi), "--eta=always".into()]),
        // With JSON on stdout the line goes to stderr; by default there is none.
        (
            "iobench",
            vec![c(pf2), "--eta=always".into(), "--output-format=json".into()],
        ),
        ("iobench", vec![c(pf2)]),
    ];
    let handles: Vec<_> = runs
        .into_iter()
        .zip(dirs.iter().zip(&jobs))
        .map(|((who, mut args), (dir, job))| {
            args.push(job.display().to_string());
            let mut cmd = if who == "fio" {
                fio().unwrap()
            } else {
                iobench()
            };
            cmd.args(&args).current_dir(dir);
            std::thread::spawn(move || cmd.output().unwrap())
        })
        .collect();
    let outs: Vec<Output> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for o in &outs {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let fio_one = text(&outs[0]);
    let ours_one = text(&outs[1]);
    // The full line, once the servers know their ETA: the same shape, the same counts.
    let full = |out: &str| -> Vec<String> {
        status_lines(out)
            .into_iter()
            .filter(|l| l.contains("[eta "))
            .collect()
    };
    let want = "Jobs: N (f=N): [r(N),W(N)][N%][r=N,w=N][r=N,w=N IOPS][eta Nm:Ns]";
    for (who, out) in [("fio", &fio_one), ("iobench", &ours_one)] {
        let lines = full(out);
        assert!(
            lines.iter().any(|l| mask(l) == want),
            "{who}: no full status line in {out:?}"
        );
        // Every line names the two jobs; near the end one may already be done (`_`), as
        // a loaded host shows now and then, in either tool.
        assert!(
            lines.iter().all(|l| {
                let map = l.split("): [").nth(1).and_then(|m| m.split(']').next());
                map.is_some_and(|m| {
                    let jobs: Vec<&str> = m.split(',').collect();
                    jobs.len() == 2 && jobs.iter().all(|j| ["r(1)", "W(1)", "_(1)"].contains(j))
                })
            }),
            "{who}: {lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("Jobs: 2 (f=2): [r(1),W(1)][")),
            "{who}: {lines:?}"
        );
        // --eta-newline=1: a fresh line now and then, not one redrawn line only.
        assert!(out.contains("\r\nJobs: "), "{who}: {out:?}");
    }
    // iobench's rates carry their units, fio's client drops them (module docs).
    assert!(
        full(&ours_one).iter().any(|l| l.contains("B/s,w=")),
        "{ours_one:?}"
    );
    // Two servers, a fio one and an iobench one: their jobs add up, every server's map.
    let two = text(&outs[2]);
    assert!(
        status_lines(&two)
            .iter()
            .any(|l| l.starts_with("Jobs: 4 (f=4): [r(1),W(1),r(1),W(1)][")),
        "{two:?}"
    );
    let json = &outs[3];
    assert!(!text(json).contains("Jobs: "));
    assert!(json_of(json)["client_stats"][0]["read"]["total_ios"].is_u64());
    assert!(
        !status_lines(&String::from_utf8_lossy(&json.stderr)).is_empty(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let quiet = &outs[4];
    assert!(
        !text(quiet).contains("Jobs: ")
            && !String::from_utf8_lossy(&quiet.stderr).contains("Jobs: ")
    );
}

/// Starts a server command in its own process group and waits until `ready` says it
/// answers (a Unix socket or an IPv6 port, which `Server::start` does not probe).
fn start_server_until(mut c: Command, port: u16, ready: impl Fn() -> bool) -> Server {
    c.process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let s = Server {
        child: c.spawn().unwrap(),
        port,
    };
    let t0 = std::time::Instant::now();
    while !ready() {
        assert!(t0.elapsed().as_secs() < 10, "the server did not start");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    s
}

#[test]
fn every_address_form_against_fio_both_ways() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_forms_fio");
    let job = job_file(&dir);
    let json_run = |client: &str, target: String| -> Value {
        let args = [
            format!("--client={target}"),
            "--output-format=json".to_string(),
            job.display().to_string(),
        ];
        let o = if client == "fio" {
            fio_client(&args, &dir)
        } else {
            iobench_client(&args, &dir)
        };
        assert!(
            o.status.success(),
            "{client} --client={target}: {}{}",
            text(&o),
            String::from_utf8_lossy(&o.stderr)
        );
        json_of(&o)
    };
    // iobench's client reaches a fio server on a Unix socket (the other way round is in
    // `unix_socket_ipv6_and_daemonize`).
    let sock = dir.join("fio.sock");
    let mut c = fio().unwrap();
    c.arg(format!("--server=sock:{}", sock.display()));
    let sp = sock.clone();
    let _fs = start_server_until(c, 0, move || {
        std::os::unix::net::UnixStream::connect(&sp).is_ok()
    });
    let j = json_run("iobench", format!("sock:{}", sock.display()));
    assert_eq!(j["client_stats"][0]["hostname"], sock.display().to_string());
    assert_eq!(j["client_stats"][0]["port"], 8765);
    assert_eq!(j["client_stats"][0]["read"]["total_ios"], 256);
    // IPv6 loopback both ways, when the host has it.
    if std::net::TcpListener::bind("[::1]:0").is_ok() {
        for (server, client) in [("fio", "iobench"), ("iobench", "fio")] {
            let p = free_port();
            let mut c = if server == "fio" {
                fio().unwrap()
            } else {
                iobench()
            };
            c.arg(format!("--server=ip6:::1,{p}")).current_dir(&dir);
            let _s = start_server_until(c, p, move || {
                std::net::TcpStream::connect(("::1", p)).is_ok()
            });
            let j = json_run(client, format!("ip6:::1,{p}"));
            assert_eq!(
                j["client_stats"][0]["hostname"], "::1",
                "{client} to {server}"
            );
            assert_eq!(j["client_stats"][0]["port"], p, "{client} to {server}");
            assert_eq!(j["client_stats"][0]["read"]["total_ios"], 256);
        }
    }
    // A host-list file (one host a word, fio's spellings), the job file shared by all.
    let (pf, pi) = (free_port(), free_port());
    let _f = fio_server(pf);
    let _i = iobench_server(pi, &dir);
    let list = dir.join("hosts.list");
    std::fs::write(&list, format!("localhost,{pf}\n  ip:127.0.0.1,{pi}\n")).unwrap();
    let mut seen = Vec::new();
    for client in ["fio", "iobench"] {
        let j = json_run(client, list.display().to_string());
        let mut hosts: Vec<(String, u64)> = j["client_stats"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["jobname"] == "r1")
            .map(|c| {
                assert_eq!(c["read"]["total_ios"], 256, "{client}");
                (
                    c["hostname"].as_str().unwrap().to_string(),
                    c["port"].as_u64().unwrap(),
                )
            })
            .collect();
        hosts.sort();
        seen.push(hosts);
    }
    assert_eq!(
        seen[0],
        vec![
            ("127.0.0.1".to_string(), pi as u64),
            ("localhost".to_string(), pf as u64)
        ]
    );
    assert_eq!(
        seen[0], seen[1],
        "fio's client and iobench's name the same hosts"
    );
}

#[test]
fn verify_state_travels_from_the_client() {
    if fio().is_none() {
        return;
    }
    // The client's directory holds the data and the verify state of a write run; the
    // servers' directory has neither: a server must ask the client (SENDFILE).
    let cdir = scratch("cs_vstate_client");
    let sdir = scratch("cs_vstate_server");
    let data = cdir.join("data");
    let job = |rw: &str, extra: &str| {
        format!(
            "[vs]\nioengine=psync\nrw={rw}\nsize=256k\nbs=4k\nverify=crc32c\n{extra}\nfilename={}\n",
            data.display()
        )
    };
    std::fs::write(
        cdir.join("w.fio"),
        job("write", "do_verify=0\nverify_state_save=1"),
    )
    .unwrap();
    std::fs::write(cdir.join("r.fio"), job("read", "verify_state_load=1")).unwrap();
    let st = fio()
        .unwrap()
        .args(["w.fio", "--output=/dev/null"])
        .current_dir(&cdir)
        .status()
        .unwrap();
    assert!(st.success());
    // fio's server asks for `<the client's address for it>-<job>-<thread>-verify.state`.
    let state = cdir.join("127.0.0.1-vs-0-verify.state");
    std::fs::copy(cdir.join("local-vs-0-verify.state"), &state).unwrap();
    let (pf, pi) = (free_port(), free_port());
    let mut c = fio().unwrap();
    c.arg(format!("--server=,{pf}")).current_dir(&sdir);
    let _f = Server::start(c, pf);
    let _i = iobench_server(pi, &sdir);
    let run = |client: &str, port: u16| -> Output {
        let mut c = if client == "fio" {
            fio().unwrap()
        } else {
            iobench()
        };
        c.args([format!("--client=localhost,{port}"), "r.fio".into()])
            .current_dir(&cdir)
            .output()
            .unwrap()
    };
    for (client, server, port) in [
        ("iobench", "fio", pf),
        ("fio", "iobench", pi),
        ("iobench", "iobench", pi),
    ] {
        let o = run(client, port);
        let out = text(&o);
        assert!(
            o.status.success() && out.contains("vs: (groupid=0, jobs=1): err= 0"),
            "{client} client, {server} server: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // A state the server cannot load fails the run, as with fio on both sides.
    std::fs::write(&state, b"not a verify state").unwrap();
    for (client, port) in [("iobench", pf), ("fio", pi)] {
        let o = run(client, port);
        assert!(!o.status.success(), "{client}: {}", text(&o));
    }
    std::fs::remove_file(&state).unwrap();
    for (client, port) in [("fio", pf), ("iobench", pf), ("fio", pi), ("iobench", pi)] {
        let o = run(client, port);
        assert!(!o.status.success(), "{client} to {port}: {}", text(&o));
        if port == pi {
            assert!(
                text(&o).contains(
                    "failure on receiving state file 127.0.0.1-vs-0-verify.state: \
                     No such file or directory"
                ),
                "{}",
                text(&o)
            );
        }
    }
}
