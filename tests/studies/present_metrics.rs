//! `--metrics`: the endpoint answers while the run goes, its counters grow and agree with
//! its histograms, and a real Prometheus server scrapes it on loopback and answers queries
//! about it through its HTTP API.

use crate::common;
use common::{iobench, run, scratch};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    Some(
        text.split_once("\r\n\r\n")
            .map(|x| x.1.to_string())
            .unwrap_or_default(),
    )
}

pub(crate) fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(series))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// Kills the child when dropped, so a failing test leaves no server behind.
struct Reaped(Child);
impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_run(port: u16, secs: u32) -> Reaped {
    let mut cmd = iobench();
    cmd.args([
        "--name=m",
        "--ioengine=null",
        "--rw=randread",
        "--size=1g",
        "--time_based",
        "--iodepth=4",
        "--rate_iops=5000",
        "--output-format=json",
    ])
    .arg(format!("--runtime={secs}"))
    .arg(format!("--metrics=127.0.0.1:{port}"))
    // These runs need no final scrape (the_endpoint_is_a_small_http_server waits for one).
    .env("IOBENCH_METRICS_LINGER", "0")
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    Reaped(cmd.spawn().unwrap())
}

#[test]
fn the_endpoint_serves_growing_counters_while_the_run_goes() {
    let port = free_port();
    let mut child = start_run(port, 4);
    std::thread::sleep(Duration::from_millis(1800));
    let a = http_get(port, "/metrics").expect("the endpoint answers");
    std::thread::sleep(Duration::from_millis(1200));
    let b = http_get(port, "/metrics").expect("the endpoint answers");
    let series = "iobench_io_total{job=\"m\",group=\"0\",dir=\"read\"}";
    let (va, vb) = (value(&a, series).unwrap(), value(&b, series).unwrap());
    assert!(
        va > 0.0 && vb > va,
        "the counter grows: {va} then {vb}\n{b}"
    );
    let count = value(
        &b,
        "iobench_clat_seconds_count{job=\"m\",group=\"0\",dir=\"read\"}",
    )
    .unwrap();
    assert_eq!(count, vb, "the histogram counts every I/O");
    let inf = value(
        &b,
        "iobench_clat_seconds_bucket{job=\"m\",group=\"0\",dir=\"read\",le=\"+Inf\"}",
    )
    .unwrap();
    assert_eq!(inf, count);
    assert!(b.contains("# TYPE iobench_clat_seconds histogram"));
    assert!(b.contains("iobench_inflight{job=\"m\",group=\"0\"}"));
    assert_eq!(value(&b, "iobench_up"), Some(1.0));
    assert!(http_get(port, "/nothing")
        .unwrap()
        .contains("only GET /metrics"));
    let out = child.0.wait().unwrap();
    assert!(out.success());
}

#[test]
fn a_bad_address_fails_before_the_run() {
    let mut cmd = iobench();
    cmd.args([
        "--name=m",
        "--ioengine=null",
        "--size=1m",
        "--metrics=256.0.0.1:80",
    ]);
    let out = run(cmd);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--metrics=256.0.0.1:80"), "{err}");
    // No port, and a port already taken: each named, nothing run.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = format!("--metrics={}", taken.local_addr().unwrap());
    for arg in ["--metrics=127.0.0.1", busy.as_str()] {
        let mut cmd = iobench();
        cmd.args(["--name=m", "--ioengine=null", "--size=1m", arg]);
        let out = run(cmd);
        assert_ne!(out.status.code(), Some(0), "{arg}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(arg) && err.contains("cannot listen"),
            "{arg}: {err}"
        );
        assert!(out.stdout.is_empty(), "{arg}: nothing ran");
    }
}

#[test]
fn total_latency_when_only_that_histogram_is_kept() {
    let port = free_port();
    let mut cmd = iobench();
    cmd.args([
        "--name=t",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=2500ms",
        "--rate_iops=2000",
        "--clat_percentiles=0",
        "--lat_percentiles=1",
        "--output-format=terse",
        "--metrics-linger=20s",
    ])
    .arg(format!("--metrics=127.0.0.1:{port}"))
    .env_remove("IOBENCH_METRICS_LINGER")
    .stdout(Stdio::null());
    let mut child = Reaped(cmd.spawn().unwrap());
    std::thread::sleep(Duration::from_millis(1700));
    let text = http_get(port, "/metrics").expect("the endpoint answers");
    assert!(
        text.contains("# TYPE iobench_lat_seconds histogram"),
        "{text}"
    );
    assert!(!text.contains("iobench_clat_seconds_bucket"), "{text}");
    let series = "iobench_lat_seconds_count{job=\"t\",group=\"0\",dir=\"read\"}";
    assert!(value(&text, series).unwrap() > 0.0, "{text}");
    // With a linger, the run waits at its end for one scrape of the final values (up to
    // 20 s): give it that scrape, as Prometheus would.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !http_get(port, "/metrics").is_some_and(|t| value(&t, "iobench_up") == Some(0.0)) {
        assert!(Instant::now() < deadline, "the run never ended");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(child.0.wait().unwrap().success());
}

fn prometheus() -> Option<Command> {
    if Command::new("prometheus").arg("--version").output().is_ok() {
        return Some(Command::new("prometheus"));
    }
    if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
        panic!(
            "prometheus is not installed but IOBENCH_REQUIRE_FIO=1: apt-get install -y prometheus"
        );
    }
    eprintln!("prometheus not installed: skipping");
    None
}

#[test]
fn a_real_prometheus_scrapes_it() {
    let Some(mut prom) = prometheus() else { return };
    let dir = scratch("metrics_prometheus");
    let (port, web) = (free_port(), free_port());
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: iobench\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
        ),
    )
    .unwrap();
    prom.arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{web}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _server = Reaped(prom.spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    while http_get(web, "/-/ready").is_none_or(|t| !t.contains("Ready")) {
        assert!(Instant::now() < deadline, "prometheus did not become ready");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Prometheus applies its targets a few seconds after start: wait until it has tried
    // ours (nothing listens yet, so it is down), so every second of the run is scraped.
    while !http_get(web, "/api/v1/targets").is_some_and(|t| t.contains("\"lastScrape\":\"2")) {
        assert!(
            Instant::now() < deadline,
            "prometheus never scraped the target"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut run = start_run(port, 6);
    let status = run.0.wait().unwrap();
    assert!(status.success());
    let mut stdout = String::new();
    run.0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let final_ios = report["jobs"][0]["read"]["total_ios"].as_f64().unwrap();
    // What Prometheus stored: the counter's latest scraped value, and the series' samples.
    let q = "/api/v1/query?query=iobench_io_total%7Bdir%3D%22read%22%7D";
    let answer = http_get(web, q).unwrap();
    let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(v["status"], "success", "{answer}");
    let res = &v["data"]["result"][0];
    assert_eq!(
        res["metric"]["job"], "iobench",
        "Prometheus's own job label (ours is exported_job)"
    );
    assert_eq!(res["metric"]["exported_job"], "m");
    let scraped: f64 = res["value"][1].as_str().unwrap().parse().unwrap();
    assert!(
        scraped > 0.0 && scraped <= final_ios,
        "scraped {scraped}, final {final_ios}"
    );
    // Several scrapes during the run, each value above the one before.
    let q = "/api/v1/query?query=iobench_io_total%7Bdir%3D%22read%22%7D%5B1m%5D";
    let v: serde_json::Value = serde_json::from_str(&http_get(web, q).unwrap()).unwrap();
    let values: Vec<f64> = v["data"]["result"][0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(
        values.len() >= 2,
        "scraped {} times over a 6 s run: {v}",
        values.len()
    );
    assert!(values.windows(2).all(|w| w[1] >= w[0]), "{values:?}");
    let q = "/api/v1/query?query=max_over_time(iobench_clat_seconds_count%7Bdir%3D%22read%22%7D%5B1m%5D)";
    let v: serde_json::Value = serde_json::from_str(&http_get(web, q).unwrap()).unwrap();
    let hist_count: f64 = v["data"]["result"][0]["value"][1]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(hist_count > 0.0 && hist_count <= final_ios);
}

/// Sends `req` raw and reads the whole answer (until the server closes).
fn raw(port: u16, req: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(req);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn the_endpoint_is_a_small_http_server() {
    use std::io::BufRead;
    let mut cmd = iobench();
    cmd.args([
        "--name=m",
        "--ioengine=null",
        "--rw=randread",
        "--size=1g",
        "--time_based",
        "--runtime=3",
        "--rate_iops=5000",
        "--output-format=json",
        "--metrics=127.0.0.1:0",
    ])
    .env("IOBENCH_METRICS_LINGER", "20")
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = Reaped(cmd.spawn().unwrap());
    // The port the kernel picked, printed once on stderr.
    let (tx, rx) = std::sync::mpsc::channel();
    let err = child.0.stderr.take().unwrap();
    let lines = std::thread::spawn(move || {
        let mut all = Vec::new();
        for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            if let Some(a) = l
                .strip_prefix("iobench: metrics on http://")
                .and_then(|r| r.strip_suffix("/metrics"))
            {
                let _ = tx.send(a.rsplit(':').next().unwrap().parse::<u16>().unwrap());
            }
            all.push(l);
        }
        all
    });
    let port = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the bound port is printed on stderr");
    // A client sending its request a byte every 2 s holds no one up.
    let slow = std::thread::spawn(move || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        for b in b"GET /metr" {
            if s.write_all(&[*b]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_secs(2));
        }
    });
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    let a = http_get(port, "/metrics?x=1").expect("a scrape with a query string");
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    assert_eq!(value(&a, "iobench_up"), Some(1.0), "{a}");
    // HEAD: the headers, no body.
    let h = raw(port, b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    assert!(h.ends_with("\r\n\r\n"), "no body after HEAD: {h}");
    // A huge header is cut short, not buffered.
    let mut big = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
    big.extend(std::iter::repeat_n(b'a', 1 << 20));
    let r = raw(port, &big);
    assert!(r.starts_with("HTTP/1.1 431"), "{}", &r[..r.len().min(200)]);
    // After the run: the final values, still served.
    let t0 = Instant::now();
    let last = loop {
        let t = http_get(port, "/metrics").unwrap_or_default();
        if value(&t, "iobench_up") == Some(0.0) {
            break t;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "no final values: {t}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let series = "iobench_io_total{job=\"m\",group=\"0\",dir=\"read\"}";
    assert!(value(&last, series).unwrap() > 0.0, "{last}");
    assert!(child.0.wait().unwrap().success());
    let lines = lines.join().unwrap();
    let printed = lines.iter().filter(|l| l.contains("metrics on")).count();
    assert_eq!(printed, 1, "{lines:?}");
    let _ = slow.join();
}

/// `--metrics-linger=T`: a scraper that did not scrape during the run (one polling every
/// 15 s, say) still reads the final values after it ended: `iobench_up` 0 and counters
/// equal to the final report's; the process ends once that scrape was answered. Without
/// the flag such a run ends at once.
#[test]
fn metrics_linger_serves_the_final_values_after_the_run() {
    let dir = scratch("metrics_linger");
    let run_with = |linger: Option<&str>, name: &str| {
        let port = free_port();
        let out = dir.join(name);
        let mut cmd = iobench();
        cmd.args([
            "--name=m",
            "--ioengine=null",
            "--rw=randread",
            "--size=1g",
            "--time_based",
            "--runtime=1",
            "--rate_iops=2000",
            "--output-format=json",
        ])
        .arg(format!("--output={}", out.display()))
        .arg(format!("--metrics=127.0.0.1:{port}"))
        .args(linger.map(|l| format!("--metrics-linger={l}")))
        .env_remove("IOBENCH_METRICS_LINGER")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        let child = Reaped(cmd.spawn().unwrap());
        // The run has ended once its final report is written (nothing scraped meanwhile).
        let t0 = Instant::now();
        let report: serde_json::Value = loop {
            let text = std::fs::read_to_string(&out).unwrap_or_default();
            if let Ok(v) = serde_json::from_str(&text) {
                break v;
            }
            assert!(t0.elapsed() < Duration::from_secs(20), "no report");
            std::thread::sleep(Duration::from_millis(50));
        };
        (child, port, report)
    };
    let (mut child, port, report) = run_with(Some("20s"), "linger.json");
    let last = http_get(port, "/metrics").expect("still served after the run");
    assert_eq!(value(&last, "iobench_up"), Some(0.0), "{last}");
    let series = "iobench_io_total{job=\"m\",group=\"0\",dir=\"read\"}";
    assert_eq!(
        value(&last, series),
        report["jobs"][0]["read"]["total_ios"].as_f64(),
        "the whole run: {last}"
    );
    let t0 = Instant::now();
    assert!(child.0.wait().unwrap().success());
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "it ends once the final values were read: {:?}",
        t0.elapsed()
    );
    // Without the flag, and no scrape during the run, nothing waits.
    let (mut child, _, _) = run_with(None, "plain.json");
    let t0 = Instant::now();
    assert!(child.0.wait().unwrap().success());
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    // The flag needs the endpoint it keeps serving.
    let mut cmd = iobench();
    cmd.args([
        "--metrics-linger=5s",
        "--name=m",
        "--ioengine=null",
        "--size=1m",
    ]);
    let o = run(cmd);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("metrics-linger") && err.contains("--metrics="),
        "{err}"
    );
}

/// Silent connections cannot lock scrapers out (issue 36: 8 of them held every slot for
/// the 5 s head timeout, renewable forever): with 8, then 30, connections open that say
/// nothing, a scrape is answered at once; and a scraper during the run does not hold
/// the exit (it held it 15 s) unless a linger was asked for.
#[test]
fn silent_connections_do_not_lock_scrapers_out_nor_hold_the_exit() {
    let port = free_port();
    let mut cmd = iobench();
    cmd.args([
        "--name=m",
        "--ioengine=null",
        "--rw=randread",
        "--size=1g",
        "--time_based",
        "--runtime=3",
        "--rate_iops=5000",
        "--output-format=json",
    ])
    .arg(format!("--metrics=127.0.0.1:{port}"))
    .env_remove("IOBENCH_METRICS_LINGER")
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let mut child = Reaped(cmd.spawn().unwrap());
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(10), "never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut silent = Vec::new();
    for n in [8, 30] {
        while silent.len() < n {
            silent.push(TcpStream::connect(("127.0.0.1", port)).unwrap());
        }
        let t = Instant::now();
        let body = http_get(port, "/metrics").unwrap_or_default();
        assert!(
            value(&body, "iobench_up").is_some(),
            "no scrape answered with {n} silent connections: {body:?}"
        );
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    }
    // The run ends about 3 s after it began; scraped during it, it still exits at once.
    let t = Instant::now();
    assert!(child.0.wait().unwrap().success());
    assert!(
        t0.elapsed() < Duration::from_secs(8),
        "the exit waited for a scraper: {:?} ({:?} after the scrape)",
        t0.elapsed(),
        t.elapsed()
    );
    drop(silent);
}
