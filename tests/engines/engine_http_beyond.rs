//! The http engine's iobench-only options (issue 31's "beyond the peers"): errors by HTTP
//! status with a keep-going mode, time to first byte, operation mixes, object-size
//! classes, several endpoints. Against a real SeaweedFS (`weed mini`) on loopback, its
//! request log read back; statuses SeaweedFS cannot be made to answer (503, 429, 500,
//! resets, hangs, a slow body) come from a small Python http.server on loopback.

use crate::common::netproc::{free_port, Server};
use crate::common::{self, seaweed, seaweed::Weed};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn iobench(args: &[String], format: &str) -> Output {
    let mut c = common::iobench();
    c.args(args).arg(format!("--output-format={format}"));
    common::run(c)
}

fn json(args: &[String]) -> (Output, Value) {
    let out = iobench(args, "json");
    let v = common::json_report(&out);
    (out, v)
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn with(mut base: Vec<String>, more: &[&str]) -> Vec<String> {
    base.extend(more.iter().map(|s| s.to_string()));
    base
}

/// Runs `args` with JSON output, asserting the run succeeded: its report.
fn json_ok(args: &[String]) -> Value {
    let (out, v) = json(args);
    assert!(out.status.success(), "{}", stderr(&out));
    v
}

/// A job against SeaweedFS `w` with its S3 identity's secret, then `more`.
fn on(w: &Weed, more: &[&str]) -> Vec<String> {
    with(s3(w, seaweed::SECRET), more)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A job of the http engine against a server on loopback's `port`, then `more`.
fn at(port: u16, more: &[&str]) -> Vec<String> {
    with(
        args(&["--ioengine=http", &format!("--http_host=127.0.0.1:{port}")]),
        more,
    )
}

/// S3 options reaching the server's plain port with `secret`.
fn s3(w: &Weed, secret: &str) -> Vec<String> {
    let mut a = args(&["--ioengine=http", "--http_mode=s3"]);
    a.push(format!("--http_host=127.0.0.1:{}", w.s3));
    a.push(format!("--http_s3_keyid={}", seaweed::KEY_ID));
    a.push(format!("--http_s3_key={secret}"));
    a
}

/// The server's answer to each object, by its block number (offset / 4096) modulo 8:
/// 503, 429, 500, a reset (RST, no answer), 201, 403, a 3 s hang, 201. A GET of an
/// object named `slow…` answers its headers at once and its 4 KiB body 300 ms later. S3's
/// multipart calls are answered as S3 does, each part after 300 ms. Each request is
/// logged to `log` as `METHOD PATH?QUERY`.
const PLAY_SERVER: &str = r#"
import http.server, socket, struct, sys, time
port, log = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def answer(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def any(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        with open(log, "a") as f:
            f.write(self.command + " " + self.path + "\n")
        path, _, query = self.path.partition("?")
        name = path.rsplit("/", 1)[-1]
        if query == "uploads=":
            self.answer(200, b"<Result><UploadId>up/1+x</UploadId></Result>")
            return
        if query.startswith("partNumber="):
            time.sleep(0.3)
            self.send_response(200)
            self.send_header("ETag", '"e' + query.split("&")[0].split("=")[1] + '"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if query.startswith("uploadId="):
            self.answer(200, b"<CompleteMultipartUploadResult/>")
            return
        if name.startswith("slow"):
            self.send_response(200)
            self.send_header("Content-Length", "4096")
            self.end_headers()
            self.wfile.flush()
            time.sleep(0.3)
            self.wfile.write(b"s" * 4096)
            return
        block = (int(name.split("_")[-2]) // 4096) % 8
        if block == 3:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if block == 6:
            time.sleep(3)
        self.answer({0: 503, 1: 429, 2: 500, 4: 201, 5: 403, 6: 201, 7: 201}[block], b"x" * 16)
    do_GET = do_PUT = do_DELETE = do_HEAD = do_POST = any
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
"#;

fn play_server(dir: &Path) -> Option<(Server, std::path::PathBuf)> {
    if Command::new("python3").arg("-V").output().is_err() {
        eprintln!("python3 is not installed: skipping");
        return None;
    }
    let port = free_port();
    let log = dir.join("play.log");
    let mut c = Command::new("python3");
    c.arg("-c").arg(PLAY_SERVER).arg(port.to_string()).arg(&log);
    Some((Server::start(c, port), log))
}

/// `http_errors`: failed requests counted by status (503, 429, other 5xx, 4xx), resets
/// and timeouts; `keep_going` runs past them, `count` stops at the first as fio does, and
/// a plain job's report has no `iobench_http` at all.
#[test]
fn http_errors_are_counted_by_status() {
    let dir = common::scratch("engine_http_errors");
    let Some((server, log)) = play_server(&dir) else {
        return;
    };
    let base = at(
        server.port,
        &[
            "--name=errs",
            "--filename=/b/o",
            "--rw=write",
            "--bs=4k",
            "--size=32k",
        ],
    );
    let t0 = std::time::Instant::now();
    let (out, v) = json(&with(
        base.clone(),
        &["--http_errors=keep_going", "--io_timeout=1"],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let job = &v["jobs"][0];
    let e = &job["iobench_http"]["errors"];
    for (k, n) in [
        ("503", 1),
        ("429", 1),
        ("5xx", 1),
        ("4xx", 1),
        ("reset", 1),
        ("timeout", 1),
        ("total", 6),
    ] {
        assert_eq!(e[k], n, "{k}: {e}\n{}", stderr(&out));
    }
    // Every block was tried, the two that succeeded are the only ones with bytes.
    assert_eq!(job["write"]["total_ios"], 8, "{job}");
    assert_eq!(job["write"]["io_bytes"], 8192, "{job}");
    let put = &job["iobench_http"]["ops"]["PUT"];
    assert_eq!(
        (put["total_ios"].clone(), put["errors"].clone()),
        (2.into(), 6.into())
    );
    // The hang was cut at 0.9 s, not waited out.
    assert!(t0.elapsed().as_secs_f64() < 10.0);
    let text = std::fs::read_to_string(&log).unwrap();
    for off in (0..32).step_by(4) {
        let line = format!("PUT /b/o_{}_4096", off * 1024);
        assert!(text.lines().any(|l| l == line), "{line}: {text}");
    }
    // Only the first failure is said; the counts say the rest.
    assert_eq!(
        stderr(&out).matches("iobench: http:").count(),
        1,
        "{}",
        stderr(&out)
    );

    // The normal output carries the counts too.
    let out = iobench(
        &with(base.clone(), &["--http_errors=keep_going", "--size=24k"]),
        "normal",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "http errors   : 503=1, 429=1, 5xx=1, 4xx=1, other_status=0, timeout=0, reset=1, \
             other=0, total=5"
        ),
        "{text}"
    );

    // count: the first failure ends the job, as in fio.
    let (out, v) = json(&with(base.clone(), &["--http_errors=count"]));
    let job = &v["jobs"][0];
    assert_ne!(job["error"], 0, "{}", stderr(&out));
    assert_eq!(job["iobench_http"]["errors"]["503"], 1);
    assert_eq!(job["iobench_http"]["errors"]["total"], 1);

    // A plain job: fio's keys only.
    let (_, v) = json(&base);
    assert!(
        v["jobs"][0].get("iobench_http").is_none(),
        "{}",
        v["jobs"][0]
    );
    drop(server);
}

/// `keep_going` with `io_timeout`: a listener on loopback accepts every connection and
/// never answers. Each request waits its whole deadline (the job's `io_timeout`, the
/// engine's own, not a share of it), fails as a `timeout` and the job goes on to its end:
/// the watchdog, a grace later, never ends it.
#[test]
fn http_keep_going_counts_requests_past_their_deadline() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let stopped = std::sync::Arc::clone(&stop);
    // Holds what it accepts (so no connection is closed), answering nothing.
    let mute = std::thread::spawn(move || {
        let mut held = Vec::new();
        while !stopped.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((c, _)) => held.push(c),
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
        held.len()
    });
    let (out, v) = json(&at(
        port,
        &[
            "--name=hung",
            "--filename=/b/o",
            "--rw=write",
            "--bs=4k",
            "--size=8k",
            "--http_errors=keep_going",
            "--io_timeout=1s",
        ],
    ));
    stop.store(true, Ordering::Relaxed);
    let conns = mute.join().unwrap();
    let job = &v["jobs"][0];
    // keep_going passes the failed requests over (fio's total_err has them): the run
    // succeeds, and the watchdog never ended the job (no ETIMEDOUT).
    assert!(out.status.success(), "{}\n{job}", stderr(&out));
    assert_eq!(n(&job["total_err"]), 2, "{job}");
    assert_ne!(job["error"], 110, "{job}");
    assert!(!stderr(&out).contains("I/O timed out"), "{}", stderr(&out));
    let e = &job["iobench_http"]["errors"];
    assert_eq!((n(&e["timeout"]), n(&e["total"])), (2, 2), "{e}");
    assert_eq!(n(&job["iobench_http"]["ops"]["PUT"]["errors"]), 2);
    assert_eq!(n(&job["write"]["total_ios"]), 2, "{job}");
    assert_eq!(n(&job["write"]["io_bytes"]), 0, "{job}");
    // Two requests, each cut at 1 s: the deadline is io_timeout itself, not less.
    let ms = n(&job["write"]["runtime"]);
    assert!((2000..4000).contains(&ms), "{ms} ms: {job}");
    // A timed-out connection is not reused: each request made its own.
    assert_eq!(conns, 2);
}

/// 4xx from a real server: SeaweedFS refuses a wrong signature with 403, and
/// keep_going counts every one of them while the server logs them.
#[test]
fn http_errors_count_seaweedfs_refusals() {
    let dir = common::scratch("engine_http_refusals");
    let Some(w) = Weed::start(&dir) else { return };
    let v = json_ok(&with(
        s3(&w, "not-the-secret"),
        &[
            "--name=refused",
            "--filename=/bkt/refused",
            "--rw=write",
            "--bs=4k",
            "--size=16k",
            "--http_errors=keep_going",
        ],
    ));
    let e = &v["jobs"][0]["iobench_http"]["errors"];
    assert_eq!(e["4xx"], 4, "{e}");
    assert_eq!(e["total"], 4, "{e}");
    let seen = w.requests_for("/bkt/refused");
    assert_eq!(
        seen.iter()
            .filter(|r| r.method == "PUT" && r.status == 403)
            .count(),
        4,
        "{seen:?}"
    );
}

/// `http_ttfb`: time to first byte beside the full latency, for every request, with
/// percentiles; a server that sends its headers 300 ms before its body shows the
/// difference, and SeaweedFS's GETs are all counted.
#[test]
fn http_ttfb_is_reported_beside_latency() {
    let dir = common::scratch("engine_http_ttfb");
    let Some((server, _log)) = play_server(&dir) else {
        return;
    };
    let v = json_ok(&at(
        server.port,
        &[
            "--name=slow",
            "--filename=/b/slow",
            "--http_object_mode=range",
            "--rw=read",
            "--bs=4k",
            "--size=8k",
            "--http_ttfb=1",
        ],
    ));
    let get = &v["jobs"][0]["iobench_http"]["ops"]["GET"];
    assert_eq!(get["total_ios"], 2, "{get}");
    let ttfb_max = get["ttfb_ns"]["max"].as_u64().unwrap();
    let lat_min = get["lat_ns"]["min"].as_u64().unwrap();
    assert!(ttfb_max < 200_000_000, "first byte before the body: {get}");
    assert!(lat_min >= 300_000_000, "the body came 300 ms later: {get}");
    assert!(get["ttfb_ns"]["percentile"]["99.000000"].as_u64().unwrap() > 0);
    drop(server);

    let Some(w) = Weed::start(&dir) else { return };
    let job = on(&w, &["--filename=/bkt/ttfb", "--bs=4k", "--size=64k"]);
    let _ = json_ok(&with(job.clone(), &["--name=w", "--rw=write"]));
    let v = json_ok(&with(
        job.clone(),
        &["--name=r", "--rw=randread", "--http_ttfb=1"],
    ));
    let h = &v["jobs"][0]["iobench_http"];
    let gets = w
        .requests_for("/bkt/ttfb")
        .iter()
        .filter(|r| r.method == "GET" && r.status == 200)
        .count();
    assert_eq!(gets, 16);
    assert_eq!(h["ops"]["GET"]["ttfb_ns"]["N"], 16, "{h}");
    assert_eq!(h["all"]["ttfb_ns"]["N"], 16, "{h}");
    assert!(
        h["ops"]["GET"]["ttfb_ns"]["mean"].as_f64() <= h["ops"]["GET"]["lat_ns"]["mean"].as_f64()
    );
    // Without the option: latency per operation, no first byte.
    let (_, v) = json(&with(
        job.clone(),
        &["--name=r", "--rw=read", "--http_errors=count"],
    ));
    assert!(v["jobs"][0]["iobench_http"]["ops"]["GET"]
        .get("ttfb_ns")
        .is_none());
    let out = iobench(
        &with(job, &["--name=r", "--rw=read", "--http_ttfb=1"]),
        "normal",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("http op GET: ios=16"), "{text}");
    assert!(text.contains("ttfb (usec): min="), "{text}");
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// `http_opmix`: each request's operation drawn by weight, HEAD and LIST among them; the
/// results per operation add up to the job's, the fio sections count each operation in
/// its direction, and SeaweedFS's log holds exactly the requests reported.
#[test]
fn http_opmix_mixes_operations_by_weight() {
    let dir = common::scratch("engine_http_mix");
    let Some(w) = Weed::start(&dir) else { return };
    let job = on(&w, &["--filename=/bkt/mix", "--bs=4k", "--size=128k"]);
    let _ = json_ok(&with(job.clone(), &["--name=fill", "--rw=write"]));
    let v = json_ok(&with(
        job.clone(),
        &[
            "--name=mix",
            "--rw=randread",
            "--io_size=800k",
            "--http_opmix=get:50,put:20,head:15,list:10,delete:5",
        ],
    ));
    let j = &v["jobs"][0];
    let ops = &j["iobench_http"]["ops"];
    let count = |op: &str| n(&ops[op]["total_ios"]);
    let (get, put, head, list, del) = (
        count("GET"),
        count("PUT"),
        count("HEAD"),
        count("LIST"),
        count("DELETE"),
    );
    assert_eq!(get + put + head + list + del, 200, "{ops}");
    for (got, weight) in [(get, 50), (put, 20), (head, 15), (list, 10), (del, 5)] {
        // 200 draws: each share within 2/3 and 3/2 of its weight's (all far from 0).
        let want = 2 * weight;
        assert!(
            got * 3 >= want * 2 && got * 2 <= want * 3,
            "{got} vs {want}: {ops}"
        );
    }
    assert_eq!(n(&j["iobench_http"]["all"]["errors"]), 0);
    // fio's sections: reads are the GETs, HEADs and LISTs (only GETs move the I/O's bytes).
    assert_eq!(n(&j["read"]["total_ios"]), get + head + list, "{j}");
    assert_eq!(n(&j["read"]["io_bytes"]), get * 4096);
    assert_eq!(n(&j["write"]["total_ios"]), put);
    assert_eq!(n(&j["trim"]["total_ios"]), del);
    assert!(n(&ops["LIST"]["io_bytes"]) > 0, "a listing has a body");
    // The server saw exactly these requests (the fill's 32 PUTs before them).
    let log = w.requests();
    let of = |m: &str, f: &dyn Fn(&str) -> bool| {
        log.iter().filter(|r| r.method == m && f(&r.path)).count() as u64
    };
    let obj = |p: &str| p.starts_with("/bkt/mix_");
    assert_eq!(of("PUT", &obj), 32 + put, "{log:?}");
    assert_eq!(of("HEAD", &obj), head);
    assert_eq!(of("DELETE", &obj), del);
    assert_eq!(of("GET", &obj), get);
    assert_eq!(of("GET", &|p| p == "/bkt" || p == "/bkt/"), list, "{log:?}");
}

/// `http_size_classes`: latency per object size, the sizes drawn by fio's own `bssplit`
/// (weights) or `bsrange` (a range, classed by powers of two); each class's count is the
/// number of objects of that size SeaweedFS was sent.
#[test]
fn http_size_classes_report_latency_per_size() {
    let dir = common::scratch("engine_http_sizes");
    let Some(w) = Weed::start(&dir) else { return };
    let v = json_ok(&on(
        &w,
        &[
            "--name=split",
            "--filename=/bkt/split",
            "--rw=write",
            "--size=8m",
            "--bssplit=4k/50:64k/30:1m/20",
            "--http_size_classes=1",
        ],
    ));
    let j = &v["jobs"][0];
    let sizes = &j["iobench_http"]["sizes"];
    let log = w.requests_for("/bkt/split_");
    let mut total = 0;
    for (name, bytes) in [("4k", 4096u64), ("64k", 65536), ("1m", 1 << 20)] {
        let c = &sizes[name];
        let ios = n(&c["total_ios"]);
        assert!(ios > 0, "{name}: {sizes}");
        assert_eq!(n(&c["io_bytes"]), ios * bytes, "{name}: {c}");
        let sent = log
            .iter()
            .filter(|r| r.method == "PUT" && r.path.ends_with(&format!("_{bytes}")))
            .count() as u64;
        assert_eq!(sent, ios, "{name}: {log:?}");
        assert_eq!(n(&c["lat_ns"]["N"]), ios);
        total += ios;
    }
    assert_eq!(total, n(&j["write"]["total_ios"]));
    // A megabyte takes longer than 4 KiB to hash, send and store.
    let mean = |k: &str| sizes[k]["lat_ns"]["mean"].as_f64().unwrap();
    assert!(mean("1m") > mean("4k"), "{sizes}");

    let v = json_ok(&on(
        &w,
        &[
            "--name=range",
            "--filename=/bkt/range",
            "--rw=write",
            "--size=1m",
            "--bsrange=4k-64k",
            "--http_size_classes=1",
        ],
    ));
    let j = &v["jobs"][0];
    let sizes = j["iobench_http"]["sizes"].as_object().unwrap();
    let names: Vec<&str> = sizes.keys().map(|k| k.as_str()).collect();
    assert_eq!(names, ["4k-8k", "8k-16k", "16k-32k", "32k-64k", "64k-128k"]);
    let sum: u64 = sizes.values().map(|c| n(&c["total_ios"])).sum();
    assert_eq!(sum, n(&j["write"]["total_ios"]));
    // Each PUT's size (the object's name ends with it) is in its class's range.
    let log = w.requests_for("/bkt/range_");
    let in_class = |lo: u64, hi: u64| {
        log.iter()
            .filter(|r| {
                let len: u64 = r.path.rsplit('_').next().unwrap().parse().unwrap();
                (lo..hi).contains(&len)
            })
            .count() as u64
    };
    assert_eq!(in_class(16384, 32768), n(&sizes["16k-32k"]["total_ios"]));
    assert_eq!(in_class(32768, 65536), n(&sizes["32k-64k"]["total_ios"]));
}

/// `http_endpoints`: requests spread over two SeaweedFS servers in turn, over two
/// buckets (two files); each endpoint's count is what its server logged.
#[test]
fn http_endpoints_report_per_endpoint() {
    let dir = common::scratch("engine_http_endpoints");
    let (da, db) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&da).unwrap();
    std::fs::create_dir_all(&db).unwrap();
    let Some(a) = Weed::start(&da) else { return };
    let Some(b) = Weed::start(&db) else { return };
    let (ea, eb) = (format!("127.0.0.1:{}", a.s3), format!("127.0.0.1:{}", b.s3));
    let v = json_ok(&on(
        &a,
        &[
            "--name=eps",
            &format!("--http_endpoints={ea},{eb}"),
            "--filename=/bkt1/ep:/bkt2/ep",
            "--rw=write",
            "--bs=4k",
            "--size=96k",
            "--http_ttfb=1",
        ],
    ));
    let j = &v["jobs"][0];
    let eps = &j["iobench_http"]["endpoints"];
    let puts = |w: &Weed| {
        w.requests()
            .into_iter()
            .filter(|r| r.method == "PUT" && r.path.contains("/ep_"))
            .collect::<Vec<_>>()
    };
    let (pa, pb) = (puts(&a), puts(&b));
    assert_eq!(n(&eps[&ea]["total_ios"]), pa.len() as u64, "{eps}");
    assert_eq!(n(&eps[&eb]["total_ios"]), pb.len() as u64, "{eps}");
    assert_eq!((pa.len(), pb.len()), (12, 12), "in turn");
    assert_eq!(n(&eps[&ea]["ttfb_ns"]["N"]), 12);
    // Both buckets were written.
    let all: Vec<_> = pa.iter().chain(&pb).map(|r| r.path.as_str()).collect();
    assert!(all.iter().any(|p| p.starts_with("/bkt1/ep_")), "{all:?}");
    assert!(all.iter().any(|p| p.starts_with("/bkt2/ep_")), "{all:?}");
    assert_eq!(n(&j["write"]["total_ios"]), 24);
    // A bad list is refused, naming the option.
    let out = iobench(
        &on(
            &a,
            &[
                "--name=bad",
                "--http_endpoints=http://x/",
                "--filename=/b/o",
                "--size=4k",
            ],
        ),
        "normal",
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("http_endpoints"), "{}", stderr(&out));
}

/// `http_multipart`: a write larger than the part size is an S3 multipart upload
/// (initiate, parts, complete), `http_multipart_jobs` parts at a time, with part and
/// whole-object latency. SeaweedFS stores the objects (read back with verify); a Python
/// server whose parts take 300 ms each shows the parts running side by side.
#[test]
fn http_multipart_uploads_parts_and_objects() {
    let dir = common::scratch("engine_http_multipart");
    let Some(w) = Weed::start(&dir) else { return };
    let (out, v) = json(&on(
        &w,
        &[
            "--name=mp",
            "--filename=/bkt/mp",
            "--rw=write",
            "--bs=12m",
            "--size=24m",
            "--verify=crc32c",
            "--http_multipart=5m",
            "--http_multipart_jobs=2",
        ],
    ));
    assert!(
        out.status.success() && v["jobs"][0]["error"] == 0,
        "{}",
        stderr(&out)
    );
    let h = &v["jobs"][0]["iobench_http"];
    // S3's parts are 5 MiB at least but the last: 5 + 5 + 2 MiB per object.
    assert_eq!(n(&h["multipart"]["part"]["total_ios"]), 6, "{h}");
    assert_eq!(n(&h["multipart"]["part"]["io_bytes"]), 24 << 20);
    assert_eq!(n(&h["multipart"]["object"]["total_ios"]), 2, "{h}");
    assert_eq!(n(&h["ops"]["PUT"]["total_ios"]), 2);
    assert_eq!(n(&h["ops"]["GET"]["total_ios"]), 2, "verified whole");
    let log = w.requests_for("/bkt/mp_");
    let count = |m: &str| {
        log.iter()
            .filter(|r| r.method == m && r.status == 200)
            .count()
    };
    assert_eq!(
        (count("POST"), count("PUT"), count("GET")),
        (4, 6, 2),
        "{log:?}"
    );

    let Some((server, plog)) = play_server(&dir) else {
        return;
    };
    let run = |jobs: &str| {
        let v = json_ok(&at(
            server.port,
            &[
                "--name=mp",
                "--http_mode=s3",
                "--http_s3_keyid=k",
                "--http_s3_key=s",
                "--filename=/b/mp",
                "--rw=write",
                "--bs=1m",
                "--size=1m",
                "--http_multipart=256k",
                &format!("--http_multipart_jobs={jobs}"),
            ],
        ));
        let h = v["jobs"][0]["iobench_http"].clone();
        assert_eq!(n(&h["multipart"]["part"]["total_ios"]), 4, "{h}");
        assert!(
            n(&h["multipart"]["part"]["lat_ns"]["min"]) >= 300_000_000,
            "{h}"
        );
        n(&h["multipart"]["object"]["lat_ns"]["max"])
    };
    // Four 300 ms parts: side by side well under 1.2 s, one at a time at least that.
    assert!(run("4") < 900_000_000);
    assert!(run("1") >= 1_200_000_000);
    let text = std::fs::read_to_string(&plog).unwrap();
    assert!(text.contains("POST /b/mp_0_1048576?uploads="), "{text}");
    for i in 1..=4 {
        let line = format!("PUT /b/mp_0_1048576?partNumber={i}&uploadId=up%2F1%2Bx");
        assert!(text.contains(&line), "{line}: {text}");
    }
    assert!(
        text.contains("POST /b/mp_0_1048576?uploadId=up%2F1%2Bx"),
        "{text}"
    );
}

/// Bad values of the iobench-only options are refused before any request, naming the
/// option and what it takes.
#[test]
fn http_beyond_options_are_checked() {
    let run = crate::engine_http::parse_only;
    let s3 = ["--http_mode=s3", "--http_s3_keyid=k", "--http_s3_key=s"];
    for (extra, want) in [
        (vec!["--http_errors=maybe"], "http_errors"),
        (
            vec!["--http_opmix=get:1,post:1"],
            "'post' is not one of get",
        ),
        (vec!["--http_opmix=get:x"], "http_opmix"),
        (vec!["--http_opmix=get:1,list:1"], "needs http_mode=s3"),
        (
            [&s3[..], &["--http_opmix=get:1", "--verify=crc32c"]].concat(),
            "cannot run with verify",
        ),
        (vec!["--http_multipart=5m"], "need http_mode=s3"),
        (
            [
                &s3[..],
                &["--http_multipart=5m", "--http_object_mode=range"],
            ]
            .concat(),
            "use block mode",
        ),
        (vec!["--http_multipart_jobs=0"], "http_multipart_jobs"),
        (vec!["--http_endpoints=a:1,,b:2"], "http_endpoints"),
    ] {
        let out = run(&extra);
        let e = stderr(&out);
        assert!(!out.status.success() && e.contains(want), "{extra:?}: {e}");
    }
    let good = [
        &s3[..],
        &[
            "--http_errors=keep_going",
            "--http_ttfb=1",
            "--http_opmix=GET:3,head:1,list:1",
            "--http_size_classes=1",
            "--http_endpoints=a:1,b:2",
            "--http_multipart=5m",
            "--http_multipart_jobs=4",
        ],
    ]
    .concat();
    let out = run(&good);
    assert!(out.status.success(), "{}", stderr(&out));
}
