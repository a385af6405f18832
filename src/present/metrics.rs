//! `--metrics=ADDR:PORT`: a Prometheus (text exposition format 0.0.4) endpoint served
//! while the run goes, from the snapshots the collector takes (the workers do nothing
//! extra): I/O and byte counters, I/Os in flight, and completion-latency histograms
//! whose buckets are read off fio's histogram, per job and direction. The listener is
//! bound before any job starts, so a bad address fails the run at once.

use crate::stats::hist;
use crate::stats::{JobStats, RunOutcome};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};

/// The latest snapshot of the run, and whether the run has ended.
#[derive(Default)]
pub struct State {
    outcome: RunOutcome,
    done: bool,
    started: Option<std::time::Instant>,
}

/// The endpoint of this process: one listener, serving whichever run is current.
struct Endpoint {
    addr: String,
    state: Arc<Mutex<State>>,
}

static ENDPOINT: OnceLock<Endpoint> = OnceLock::new();

/// Binds `addr` (once per process; later runs reuse it) and starts serving.
pub fn start(addr: &str) -> Result<Arc<Mutex<State>>, String> {
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
    let state = Arc::new(Mutex::new(State {
        started: Some(std::time::Instant::now()),
        ..Default::default()
    }));
    let served = state.clone();
    std::thread::Builder::new()
        .name("iobench-metrics".into())
        .spawn(move || {
            for conn in listener.incoming().flatten() {
                let _ = serve(conn, &served);
            }
        })
        .map_err(|e| format!("--metrics: {e}"))?;
    let _ = ENDPOINT.set(Endpoint {
        addr: addr.to_string(),
        state: state.clone(),
    });
    Ok(state)
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

/// Answers one HTTP request: `GET /metrics` (or `/`) with the exposition text.
fn serve(conn: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    conn.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // Skip the headers.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("");
    let mut conn = conn;
    let (status, ctype, body) =
        if request.starts_with("GET ") && (path == "/metrics" || path == "/") {
            let text = match state.lock() {
                Ok(s) => render(&s),
                Err(_) => String::new(),
            };
            ("200 OK", "text/plain; version=0.0.4; charset=utf-8", text)
        } else {
            (
                "404 Not Found",
                "text/plain",
                "only GET /metrics is served\n".to_string(),
            )
        };
    write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    conn.flush()
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
            let buckets = dir.hist[k].buckets();
            for b in bounds_ns() {
                let cum: u64 = buckets[..hist::idx_of(b)].iter().sum();
                let le = b as f64 / 1e9;
                out.push_str(&format!("{family}_bucket{{{labels},le=\"{le}\"}} {cum}\n"));
            }
            let total = dir.hist[k].total();
            out.push_str(&format!(
                "{family}_bucket{{{labels},le=\"+Inf\"}} {total}\n"
            ));
            let sum = stat.mean * stat.samples as f64 / 1e9;
            out.push_str(&format!("{family}_sum{{{labels}}} {sum}\n"));
            out.push_str(&format!("{family}_count{{{labels}}} {total}\n"));
        }
    }
    out
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
}
