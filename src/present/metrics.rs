//! `--metrics=ADDR:PORT`: a Prometheus (text exposition format 0.0.4) endpoint served
//! while the run goes, from the snapshots the collector takes (the workers do nothing
//! extra): I/O and byte counters, I/Os in flight, and completion-latency histograms
//! whose buckets are read off fio's histogram, per job and direction; for the http
//! engine under its iobench-only options, its requests, failures, latency and time to
//! first byte per operation, size class, endpoint and multipart stage (`iobench_http_*`).
//! The listener is bound before any job starts, so a bad address fails the run at once;
//! with port 0 the port the kernel picked is printed once on stderr.
//!
//! A small HTTP/1.x server of its own (no crate: one path, two methods, a request head of a
//! few hundred bytes): a thread per connection, at most [`MAX_CONNS`] at once (one more is
//! answered 503), a request head of at most [`MAX_HEAD`] bytes (431 past it) that must
//! arrive whole within [`HEAD_SECS`] s (408 otherwise), so a slow or huge client cannot
//! hold up a scrape. `GET` and `HEAD` of `/metrics` or `/`, query string ignored.
//!
//! When the run ends the final values stay served (`iobench_up` 0) for a while: with
//! `--metrics-linger=T` the process waits at exit until one scrape after the end has been
//! answered, at most T, whether or not anything scraped during the run (so a scraper that
//! polls every 15 s sees the whole run); without it, it waits so only if something scraped
//! during the run, at most [`LINGER_SECS`] (Prometheus's default scrape interval). The
//! environment variable `IOBENCH_METRICS_LINGER=SECS`, the older way, still sets that default.

use crate::stats::hist;
use crate::stats::iostat::IoStat;
use crate::stats::{JobStats, RunOutcome};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Connections served at once.
pub const MAX_CONNS: usize = 8;
/// Largest request head (request line and headers) read.
pub const MAX_HEAD: usize = 8192;
/// Seconds a request head may take to arrive.
pub const HEAD_SECS: u64 = 5;
/// Default seconds the final values wait for a scrape after the run.
pub const LINGER_SECS: u64 = 15;

/// The latest snapshot of the run, and whether the run has ended.
#[derive(Default)]
pub struct State {
    outcome: RunOutcome,
    done: bool,
    started: Option<std::time::Instant>,
    /// Scrapes answered during the run, and after its end.
    scraped: u64,
    scraped_after: u64,
}

/// The endpoint of this process: one listener, serving whichever run is current.
struct Endpoint {
    addr: String,
    state: Arc<Mutex<State>>,
}

static ENDPOINT: OnceLock<Endpoint> = OnceLock::new();
/// `--metrics-linger` of the latest run, in ms (None: not given).
static LINGER_MS: Mutex<Option<u64>> = Mutex::new(None);
/// Woken on every scrape (the exit's wait for a last scrape).
static SCRAPED: Condvar = Condvar::new();

/// Binds `addr` (once per process; later runs reuse it) and starts serving; `linger_ms`
/// is `--metrics-linger`.
pub fn start(addr: &str, linger_ms: Option<u64>) -> Result<Arc<Mutex<State>>, String> {
    if let Ok(mut l) = LINGER_MS.lock() {
        *l = linger_ms;
    }
    if let Some(e) = ENDPOINT.get() {
        if e.addr != addr {
            return Err(format!(
                "--metrics={addr}: this process already serves {}",
                e.addr
            ));
        }
        if let Ok(mut s) = e.state.lock() {
            *s = State {
                started: Some(std::time::Instant::now()),
                ..Default::default()
            };
        }
        return Ok(e.state.clone());
    }
    let listener = TcpListener::bind(addr).map_err(|e| {
        format!(
            "--metrics={addr}: cannot listen there: {e} (expected ADDR:PORT, e.g. 127.0.0.1:9500)"
        )
    })?;
    if addr.rsplit(':').next() == Some("0") {
        if let Ok(a) = listener.local_addr() {
            eprintln!("iobench: metrics on http://{a}/metrics");
        }
    }
    let state = Arc::new(Mutex::new(State {
        started: Some(std::time::Instant::now()),
        ..Default::default()
    }));
    let served = state.clone();
    std::thread::Builder::new()
        .name("iobench-metrics".into())
        .spawn(move || accept_loop(listener, served))
        .map_err(|e| format!("--metrics: {e}"))?;
    let _ = ENDPOINT.set(Endpoint {
        addr: addr.to_string(),
        state: state.clone(),
    });
    // SAFETY: registers a plain extern "C" function with no arguments, run at exit.
    unsafe { libc::atexit(linger_at_exit) };
    Ok(state)
}

/// Accepts connections, each served by its own thread, at most [`MAX_CONNS`] at once.
/// A connection that finds them full (or its peer holding half of them) ends the oldest
/// one still waiting for its request head (its peer's own first): a peer that connects
/// and says nothing holds a slot only until someone else needs it.
fn accept_loop(listener: TcpListener, state: Arc<Mutex<State>>) {
    let active = Arc::new(AtomicUsize::new(0));
    let waiting: Arc<Mutex<Vec<Waiting>>> = Arc::new(Mutex::new(Vec::new()));
    let mut next_id = 0u64;
    for conn in listener.incoming() {
        let Ok(conn) = conn else {
            // Out of descriptors or the like: let it pass, then go on.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        let _ = conn.set_write_timeout(Some(Duration::from_secs(HEAD_SECS)));
        let peer = conn.peer_addr().map(|a| a.ip()).ok();
        let id = next_id;
        next_id += 1;
        {
            let mut w = waiting.lock().unwrap_or_else(|e| e.into_inner());
            let mine = w.iter().filter(|x| x.peer == peer).count();
            if active.load(Ordering::SeqCst) >= MAX_CONNS || mine >= MAX_CONNS / 2 {
                let pick = w
                    .iter()
                    .position(|x| x.peer == peer && mine >= MAX_CONNS / 2)
                    .or_else(|| (!w.is_empty()).then_some(0));
                if let Some(i) = pick {
                    let gone = w.remove(i);
                    let _ = gone.conn.shutdown(std::net::Shutdown::Both);
                }
            }
            if let Ok(second) = conn.try_clone() {
                w.push(Waiting {
                    id,
                    peer,
                    conn: second,
                });
            }
        }
        if active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNS {
            // The connection ended above has not given its slot back yet: wait for it
            // a moment, as it ends at once.
            let t0 = Instant::now();
            while active.load(Ordering::SeqCst) > MAX_CONNS
                && t0.elapsed() < Duration::from_millis(200)
            {
                std::thread::sleep(Duration::from_millis(2));
            }
            if active.load(Ordering::SeqCst) > MAX_CONNS {
                active.fetch_sub(1, Ordering::SeqCst);
                forget(&waiting, id);
                let mut conn = conn;
                let _ = respond(
                    &mut conn,
                    &Response::error(503, "too many connections"),
                    false,
                );
                continue;
            }
        }
        let (state, mine, waiting2) = (state.clone(), active.clone(), waiting.clone());
        let spawned = std::thread::Builder::new()
            .name("iobench-metrics-conn".into())
            .spawn(move || {
                let _ = serve(conn, &state, &|| forget(&waiting2, id));
                forget(&waiting2, id);
                mine.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            // The closure (and its count) never ran.
            active.fetch_sub(1, Ordering::SeqCst);
            forget(&waiting, id);
        }
    }
}

/// A connection still waiting for its request head, which a new one may end.
struct Waiting {
    id: u64,
    peer: Option<std::net::IpAddr>,
    conn: TcpStream,
}

fn forget(waiting: &Mutex<Vec<Waiting>>, id: u64) {
    waiting
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|w| w.id != id);
}

/// At exit: wait for one scrape of the final values, at most the linger time: with
/// `--metrics-linger`, always; else only if anything scraped during the run.
extern "C" fn linger_at_exit() {
    let Some(e) = ENDPOINT.get() else { return };
    let given = LINGER_MS.lock().ok().and_then(|l| *l);
    // Only a linger asked for waits: a scraper (anyone who can reach the port) never
    // holds the process's exit by itself.
    let env = std::env::var("IOBENCH_METRICS_LINGER")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|s| s.min(LINGER_SECS * 40));
    let Some(wait) = given
        .map(Duration::from_millis)
        .or(env.map(Duration::from_secs))
    else {
        return;
    };
    let until = Instant::now() + wait;
    let Ok(mut s) = e.state.lock() else { return };
    if !s.done || (given.is_none() && s.scraped == 0) {
        return;
    }
    while s.scraped_after == 0 {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        s = match SCRAPED.wait_timeout(s, left) {
            Ok((g, _)) => g,
            Err(_) => return,
        };
    }
}

/// Stores the latest snapshot for the next scrape.
pub fn update(state: &Mutex<State>, outcome: &RunOutcome, last: bool) {
    if let Ok(mut s) = state.lock() {
        s.outcome = RunOutcome {
            results: outcome.results.clone(),
            signal: None,
        };
        s.done = last;
    }
}

/// What a request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `HEAD`: the headers without the body.
    pub head_only: bool,
}

/// An answer: status, its reason, content type and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub body: String,
    pub ctype: &'static str,
}

impl Response {
    fn error(status: u16, why: &str) -> Response {
        Response {
            status,
            body: format!("{why}\n"),
            ctype: "text/plain; charset=utf-8",
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}

/// Where the request head ends (the index after its blank line), if it has ended.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + 4)
        .or_else(|| buf.windows(2).position(|w| w == b"\n\n").map(|p| p + 2))
}

/// Parses a whole request head: `Ok` for a request this endpoint answers, or the error
/// response. Never panics, whatever the bytes.
pub fn parse_request(head: &[u8]) -> Result<Request, Response> {
    let text = std::str::from_utf8(head).map_err(|_| Response::error(400, "not text"))?;
    let line = text.lines().next().unwrap_or("");
    let mut parts = line.split(' ');
    let (method, target, version) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(t), Some(v), None) if !m.is_empty() && !t.is_empty() => (m, t, v),
        _ => return Err(Response::error(400, "malformed request line")),
    };
    if !matches!(version, "HTTP/1.0" | "HTTP/1.1") {
        return Err(Response::error(
            505,
            "only HTTP/1.0 and HTTP/1.1 are spoken",
        ));
    }
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return Err(Response::error(405, "only GET and HEAD are served")),
    };
    let path = target.split_once('?').map_or(target, |(p, _)| p);
    if path != "/metrics" && path != "/" {
        return Err(Response::error(
            404,
            "only GET /metrics is served (and HEAD)",
        ));
    }
    Ok(Request { head_only })
}

/// Reads a request head within the time and size limits.
fn read_head(conn: &mut TcpStream) -> Result<Vec<u8>, Response> {
    let deadline = Instant::now() + Duration::from_secs(HEAD_SECS);
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = head_end(&buf) {
            buf.truncate(end);
            return Ok(buf);
        }
        if buf.len() > MAX_HEAD {
            return Err(Response::error(431, "request head too large"));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || conn.set_read_timeout(Some(left)).is_err() {
            return Err(Response::error(408, "request head too slow"));
        }
        match conn.read(&mut chunk) {
            Ok(0) => return Err(Response::error(400, "connection closed mid-request")),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(Response::error(408, "request head too slow")),
        }
    }
}

fn respond(conn: &mut TcpStream, r: &Response, head_only: bool) -> std::io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        r.status,
        reason(r.status),
        r.ctype,
        r.body.len()
    );
    if r.status == 405 {
        out.push_str("Allow: GET, HEAD\r\n");
    }
    out.push_str("\r\n");
    if !head_only {
        out.push_str(&r.body);
    }
    conn.write_all(out.as_bytes())?;
    conn.flush()
}

/// Answers one HTTP request: `GET` or `HEAD` of `/metrics` (or `/`) with the exposition
/// text; one request per connection.
fn serve(mut conn: TcpStream, state: &Mutex<State>, headed: &dyn Fn()) -> std::io::Result<()> {
    let req = read_head(&mut conn).and_then(|h| parse_request(&h));
    // Its head is in: no new connection ends this one now.
    headed();
    let (resp, head_only, after) = match req {
        Ok(req) => {
            let (body, after) = match state.lock() {
                Ok(mut s) => {
                    let text = render(&s);
                    if !s.done {
                        s.scraped += 1;
                    }
                    (text, s.done)
                }
                Err(_) => (String::new(), false),
            };
            let r = Response {
                status: 200,
                body,
                ctype: "text/plain; version=0.0.4; charset=utf-8",
            };
            (r, req.head_only, after)
        }
        Err(r) => (r, false, false),
    };
    respond(&mut conn, &resp, head_only)?;
    if after {
        // Counted only once the final values are written: the exit handler waiting for
        // this scrape lets the process end as soon as it is told, which would cut an
        // answer still being written.
        if let Ok(mut s) = state.lock() {
            s.scraped_after += 1;
        }
        SCRAPED.notify_all();
    }
    if resp.status != 200 {
        // The client may still be sending what was refused: read a little of it (bounded
        // in time and size) so that closing does not reset the connection before the
        // answer is read.
        let _ = conn.shutdown(std::net::Shutdown::Write);
        let _ = conn.set_read_timeout(Some(Duration::from_secs(1)));
        let mut sink = [0u8; 16384];
        let mut drained = 0usize;
        while drained < 4 * MAX_HEAD * 128 {
            match conn.read(&mut sink) {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            }
        }
    }
    Ok(())
}

/// A label value escaped as the exposition format wants it.
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The histogram's upper bounds in ns: the powers of two from 128 ns to 2^33 ns (8.6 s),
/// each the first edge of one of fio's bucket groups, so every count is exact (a bound
/// counts the latencies below it); 2^33 starts fio's last group, past which its buckets
/// have no edges at powers of two.
fn bounds_ns() -> impl Iterator<Item = u64> {
    (7..=33).map(|k| 1u64 << k)
}

/// One job's clones summed: (name, group, per-direction stats).
fn per_job(o: &RunOutcome) -> Vec<JobStats> {
    let mut jobs: Vec<JobStats> = Vec::new();
    for s in &o.results {
        match jobs.iter_mut().find(|j| j.job_index == s.job_index) {
            Some(j) => {
                for d in 0..3 {
                    j.dir[d].ios += s.dir[d].ios;
                    j.dir[d].bytes += s.dir[d].bytes;
                    j.dir[d].clat.merge(&s.dir[d].clat);
                    j.dir[d].lat.merge(&s.dir[d].lat);
                    j.dir[d].hist[1].merge(&s.dir[d].hist[1]);
                    j.dir[d].hist[2].merge(&s.dir[d].hist[2]);
                }
                j.inflight += s.inflight;
                if let (Some(a), Some(b)) = (j.obj.as_deref_mut(), s.obj.as_deref()) {
                    a.merge(b);
                }
            }
            None => jobs.push(s.clone()),
        }
    }
    jobs
}

/// The exposition text of the latest snapshot.
fn render(s: &State) -> String {
    let mut out = String::new();
    let jobs = per_job(&s.outcome);
    let dirs = ["read", "write", "trim"];
    let header = |out: &mut String, name: &str, kind: &str, help: &str| {
        out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
    };
    header(
        &mut out,
        "iobench_up",
        "gauge",
        "1 while a run is going, 0 once it has ended.",
    );
    out.push_str(&format!("iobench_up {}\n", u8::from(!s.done)));
    header(
        &mut out,
        "iobench_run_seconds",
        "gauge",
        "Seconds since the run started.",
    );
    let secs = s.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
    out.push_str(&format!("iobench_run_seconds {secs:.3}\n"));
    header(&mut out, "iobench_io_total", "counter", "I/Os completed.");
    for j in &jobs {
        for (d, dn) in dirs.iter().enumerate() {
            out.push_str(&format!(
                "iobench_io_total{{job=\"{}\",group=\"{}\",dir=\"{dn}\"}} {}\n",
                esc(&j.name),
                j.groupid,
                j.dir[d].ios
            ));
        }
    }
    header(&mut out, "iobench_bytes_total", "counter", "Bytes moved.");
    for j in &jobs {
        for (d, dn) in dirs.iter().enumerate() {
            out.push_str(&format!(
                "iobench_bytes_total{{job=\"{}\",group=\"{}\",dir=\"{dn}\"}} {}\n",
                esc(&j.name),
                j.groupid,
                j.dir[d].bytes
            ));
        }
    }
    header(
        &mut out,
        "iobench_inflight",
        "gauge",
        "I/Os in flight at the last snapshot.",
    );
    for j in &jobs {
        out.push_str(&format!(
            "iobench_inflight{{job=\"{}\",group=\"{}\"}} {}\n",
            esc(&j.name),
            j.groupid,
            j.inflight
        ));
    }
    // Completion latency (fio's default percentiles); total latency for a direction
    // that keeps only that histogram (clat_percentiles=0, lat_percentiles=1).
    let families = [
        (
            "iobench_clat_seconds",
            1,
            "Completion latency, from fio's histogram.",
        ),
        (
            "iobench_lat_seconds",
            2,
            "Total latency, from fio's histogram (kept without clat's).",
        ),
    ];
    for (family, k, help) in families {
        let series: Vec<(&JobStats, usize)> = jobs
            .iter()
            .flat_map(|j| (0..3).map(move |d| (j, d)))
            .filter(|(j, d)| {
                let dir = &j.dir[*d];
                dir.ios > 0 && !dir.hist[k].is_empty() && (k == 1 || dir.hist[1].is_empty())
            })
            .collect();
        if series.is_empty() {
            continue;
        }
        header(&mut out, family, "histogram", help);
        for (j, d) in series {
            let dir = &j.dir[d];
            let stat = if k == 1 { &dir.clat } else { &dir.lat };
            let labels = format!(
                "job=\"{}\",group=\"{}\",dir=\"{}\"",
                esc(&j.name),
                j.groupid,
                dirs[d]
            );
            histogram(&mut out, family, &labels, &dir.hist[k], stat);
        }
    }
    http(&mut out, &jobs);
    out
}

/// One histogram series of `family` with `labels`: cumulative buckets in seconds, sum and
/// count.
fn histogram(out: &mut String, family: &str, labels: &str, h: &hist::Hist, stat: &IoStat) {
    let buckets = h.buckets();
    for b in bounds_ns() {
        let cum: u64 = buckets[..hist::idx_of(b)].iter().sum();
        let le = b as f64 / 1e9;
        out.push_str(&format!("{family}_bucket{{{labels},le=\"{le}\"}} {cum}\n"));
    }
    let total = h.total();
    out.push_str(&format!(
        "{family}_bucket{{{labels},le=\"+Inf\"}} {total}\n"
    ));
    let sum = stat.mean * stat.samples as f64 / 1e9;
    out.push_str(&format!("{family}_sum{{{labels}}} {sum}\n"));
    out.push_str(&format!("{family}_count{{{labels}}} {total}\n"));
}

/// The http engine's classes (`iobench_http`, under its iobench-only options): per job
/// and class, requests and failed requests as counters, latency (and time to first byte
/// with `http_ttfb`) as histograms. Operations keep the plain family names
/// (`iobench_http_requests_total{op=...}`); size classes, endpoints and multipart stages
/// have a family each (`iobench_http_size_requests_total{size=...}`, `..._endpoint_...`,
/// `..._multipart_...`), so a sum over one family never counts a request twice. Nothing
/// for any other job, nor for a group no job has.
fn http(out: &mut String, jobs: &[JobStats]) {
    use crate::stats::objstats::{Class, ObjStats};
    let with: Vec<(&JobStats, &ObjStats)> = jobs
        .iter()
        .filter_map(|j| j.obj.as_deref().map(|o| (j, o)))
        .collect();
    if with.is_empty() {
        return;
    }
    let header = |out: &mut String, name: &str, kind: &str, help: &str| {
        out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
    };
    type Group = fn(&ObjStats) -> &[Class];
    // (family infix, label, what the label names, the classes)
    let groups: [(&str, &str, &str, Group); 4] = [
        ("", "op", "operation", |o| &o.ops),
        ("size_", "size", "object-size class", |o| &o.sizes),
        ("endpoint_", "endpoint", "endpoint", |o| &o.endpoints),
        ("multipart_", "stage", "multipart stage", |o| &o.multipart),
    ];
    let ttfb = with.iter().any(|(_, o)| o.ttfb);
    for (infix, label, what, classes) in groups {
        if with.iter().all(|(_, o)| classes(o).is_empty()) {
            continue;
        }
        let labels = |j: &JobStats, c: &Class| {
            format!(
                "job=\"{}\",group=\"{}\",{label}=\"{}\"",
                esc(&j.name),
                j.groupid,
                esc(&c.name)
            )
        };
        type Count = fn(&Class) -> u64;
        let counters: [(&str, &str, Count); 2] = [
            ("requests_total", "requests that succeeded", |c| c.ios),
            ("errors_total", "requests that failed", |c| c.errors),
        ];
        for (suffix, help, count) in counters {
            let name = format!("iobench_http_{infix}{suffix}");
            header(
                out,
                &name,
                "counter",
                &format!("http engine: {help}, per {what}."),
            );
            for (j, o) in &with {
                for c in classes(o) {
                    out.push_str(&format!("{name}{{{}}} {}\n", labels(j, c), count(c)));
                }
            }
        }
        type Of = fn(&Class) -> (&hist::Hist, &IoStat);
        let histograms: [(&str, &str, bool, Of); 2] = [
            (
                "latency_seconds",
                "each request's latency to its last byte",
                true,
                |c| (&c.lat_hist, &c.lat),
            ),
            (
                "ttfb_seconds",
                "each request's time to first byte",
                ttfb,
                |c| (&c.ttfb_hist, &c.ttfb),
            ),
        ];
        for (suffix, help, _, of) in histograms.into_iter().filter(|h| h.2) {
            let name = format!("iobench_http_{infix}{suffix}");
            header(
                out,
                &name,
                "histogram",
                &format!("http engine: {help}, per {what}."),
            );
            for (j, o) in &with {
                for c in classes(o) {
                    let (h, stat) = of(c);
                    if !h.is_empty() {
                        histogram(out, &name, &labels(j, c), h, stat);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::reportopts::StatsConfig;

    #[test]
    fn exposition_of_a_snapshot() {
        let mut a = JobStats::new("x\"y", 0, StatsConfig::default());
        a.dir[0].hist[1] = hist::Hist::new();
        for l in [500u64, 1500, 3000, 2_000_000] {
            a.dir[0].ios += 1;
            a.dir[0].bytes += 4096;
            a.dir[0].clat.add(l);
            a.dir[0].hist[1].add(l);
        }
        a.inflight = 3;
        let mut b = a.clone();
        b.inflight = 1;
        let s = State {
            outcome: RunOutcome {
                results: vec![a, b],
                signal: None,
            },
            done: false,
            started: None,
            scraped: 0,
            scraped_after: 0,
        };
        let text = render(&s);
        assert!(
            text.contains("iobench_io_total{job=\"x\\\"y\",group=\"0\",dir=\"read\"} 8\n"),
            "{text}"
        );
        assert!(
            text.contains("iobench_bytes_total{job=\"x\\\"y\",group=\"0\",dir=\"read\"} 32768\n")
        );
        assert!(text.contains("iobench_inflight{job=\"x\\\"y\",group=\"0\"} 4\n"));
        assert!(
            text.contains("le=\"0.000000512\"} 2\n"),
            "500 ns twice: {text}"
        );
        assert!(
            text.contains("le=\"0.000001024\"} 2\n"),
            "none in 512..1024 ns"
        );
        assert!(
            text.contains("le=\"0.000002048\"} 4\n"),
            "1500 ns twice more"
        );
        assert!(text.contains("le=\"8.589934592\"} 8\n"), "the last bound");
        assert!(text.contains("le=\"+Inf\"} 8\n"));
        assert!(text
            .contains("iobench_clat_seconds_count{job=\"x\\\"y\",group=\"0\",dir=\"read\"} 8\n"));
        assert!(
            !text.contains("dir=\"write\",le="),
            "no histogram for a direction without I/O"
        );
    }

    #[test]
    fn requests_are_parsed_with_limits() {
        let ok = parse_request(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        assert!(!ok.head_only);
        assert!(parse_request(b"HEAD / HTTP/1.0\r\n\r\n").unwrap().head_only);
        assert_eq!(
            parse_request(b"POST /metrics HTTP/1.1\r\n\r\n")
                .unwrap_err()
                .status,
            405
        );
        assert_eq!(
            parse_request(b"GET /x HTTP/1.1\r\n\r\n")
                .unwrap_err()
                .status,
            404
        );
        assert_eq!(
            parse_request(b"GET /metrics HTTP/2\r\n\r\n")
                .unwrap_err()
                .status,
            505
        );
        assert_eq!(parse_request(b"\xff\r\n\r\n").unwrap_err().status, 400);
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nrest"), Some(18));
    }
}
