//! Reads result files as data: iobench's and fio's JSON and JSON+ output alike (also a
//! `--status-interval` JSON Lines stream, whose last document is the final report, and
//! fio's output with notes printed before the JSON). The studies (sweep, compare) and the
//! HTML report read results only through here.

use serde_json::Value;
use std::path::Path;

/// The I/O directions fio reports, in its order.
pub const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// One result file: its jobs (or `client_stats` entries) as fio reported them.
#[derive(Debug, Clone, Default)]
pub struct ResultFile {
    /// `fio version`: `fio-3.33`, or iobench's version line.
    pub version: String,
    pub jobs: Vec<JobResult>,
    /// The whole document, for readers that want more than the summary.
    pub doc: Value,
}

/// One job (or one client's job) of a result file.
#[derive(Debug, Clone, Default)]
pub struct JobResult {
    pub name: String,
    /// The directions that did I/O, in fio's order.
    pub dirs: Vec<DirResult>,
}

/// What one job did in one direction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirResult {
    /// `read`, `write` or `trim`.
    pub dir: String,
    pub iops: f64,
    /// Bytes per second (`bw_bytes`).
    pub bw_bytes: f64,
    pub io_bytes: u64,
    pub total_ios: u64,
    pub runtime_ms: u64,
    /// Mean total latency (`lat_ns`), in nanoseconds.
    pub lat_mean_ns: f64,
    pub lat_min_ns: f64,
    pub lat_max_ns: f64,
    /// The latency the percentiles are of: `clat` (fio's default) or `lat`.
    pub pct_of: &'static str,
    /// Percentiles in nanoseconds: p50, p90, p99, p99.9 (0 when not reported).
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub p99_9_ns: f64,
    /// JSON+ latency bins (`bins`: bucket value in ns → count) of the percentiles' latency.
    pub bins: Vec<(u64, u64)>,
}

/// The metrics a study can compare, with which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Iops,
    Bw,
    LatMean,
    P50,
    P99,
    P99_9,
}

impl Metric {
    /// Parses a metric name as `--metric` takes it.
    pub fn parse(s: &str) -> Option<Metric> {
        Some(match s {
            "iops" => Metric::Iops,
            "bw" | "bandwidth" => Metric::Bw,
            "lat" | "lat_mean" | "latency" => Metric::LatMean,
            "p50" | "median" => Metric::P50,
            "p99" => Metric::P99,
            "p99.9" | "p999" => Metric::P99_9,
            _ => return None,
        })
    }

    /// The metric's name, as `--metric` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::Bw => "bw",
            Metric::LatMean => "lat",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::P99_9 => "p99.9",
        }
    }

    /// True when a larger value is better (throughput), false for latencies.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Iops | Metric::Bw)
    }

    /// The metric's value in `d`: IOPS, bytes/s, or nanoseconds.
    pub fn of(self, d: &DirResult) -> f64 {
        match self {
            Metric::Iops => d.iops,
            Metric::Bw => d.bw_bytes,
            Metric::LatMean => d.lat_mean_ns,
            Metric::P50 => d.p50_ns,
            Metric::P99 => d.p99_ns,
            Metric::P99_9 => d.p99_9_ns,
        }
    }
}

/// Reads a result file from disk.
pub fn read(path: &Path) -> Result<ResultFile, String> {
    regular_file(path)?;
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&String::from_utf8_lossy(&text)).map_err(|e| format!("{}: {e}", path.display()))
}

/// Refuses an input that is not a regular file (a FIFO, a socket, a device): reading one
/// could wait forever for a writer, and none of them holds a saved result.
pub fn regular_file(path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(format!(
            "{}: not a regular file (a result, a log or a sweep directory was expected, \
             not a FIFO, socket or device)",
            path.display()
        )),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Parses result text: the last JSON document in it that has `jobs` or `client_stats`;
/// one without any job is an error (there is nothing to report or compare).
pub fn parse(text: &str) -> Result<ResultFile, String> {
    let r = from_value(document(text)?)?;
    if r.jobs.is_empty() {
        return Err("the result has no jobs (an empty run or a truncated file)".into());
    }
    Ok(r)
}

/// True when `path` holds a result document (fio's or iobench's JSON), valid or not: what
/// a study takes as a result file rather than a job file.
pub fn is_result_file(path: &Path) -> bool {
    regular_file(path).is_ok()
        && std::fs::read(path).is_ok_and(|t| document(&String::from_utf8_lossy(&t)).is_ok())
}

/// The last JSON document of `text` that has `jobs` or `client_stats`.
fn document(text: &str) -> Result<Value, String> {
    // fio may print notes before its JSON; start at the first line that opens an object.
    let start = text
        .find("\n{")
        .map(|i| i + 1)
        .filter(|_| !text.starts_with('{'))
        .unwrap_or(0);
    let mut last = None;
    for doc in serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>() {
        match doc {
            Ok(v) if v.get("jobs").is_some() || v.get("client_stats").is_some() => last = Some(v),
            Ok(_) => {}
            // Text after the JSON (fio's normal output with several formats) ends it.
            Err(e) if last.is_some() => {
                let _ = e;
                break;
            }
            Err(e) => return Err(format!("not a fio JSON result: {e}")),
        }
    }
    Ok(last.ok_or("not a fio JSON result: no \"jobs\" found")?)
}

/// Summarises a parsed fio JSON document. A job that failed (a non-zero `error`), a
/// missing number, one that is not a number, or a negative one is an error naming the job
/// and the key: a study must not read a failed run as a slow one, nor a typo as zero.
pub fn from_value(doc: Value) -> Result<ResultFile, String> {
    let key = if doc.get("client_stats").is_some() {
        "client_stats"
    } else {
        "jobs"
    };
    let entries = doc
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("not a fio JSON result: \"{key}\" is not a list"))?;
    let jobs = entries
        .iter()
        .enumerate()
        // fio's client output ends with an "All clients" entry that repeats the others.
        .filter(|(_, j)| j.get("jobname").and_then(Value::as_str) != Some("All clients"))
        .map(|(i, j)| job_of(&format!("{key}[{i}]"), j))
        .collect::<Result<_, _>>()?;
    Ok(ResultFile {
        version: doc
            .get("fio version")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        jobs,
        doc,
    })
}

/// The number at `key` of `v`, which must be there, be a number and not be negative;
/// `at` names `v` in the errors.
fn num(v: &Value, at: &str, key: &str) -> Result<f64, String> {
    match v.get(key) {
        None => Err(format!("{at}.{key}: missing")),
        Some(x) => opt_num(x, at, key),
    }
}

/// As [`num`], for a value that is there.
fn opt_num(x: &Value, at: &str, key: &str) -> Result<f64, String> {
    match x.as_f64() {
        None => Err(format!("{at}.{key}: expected a number, found {x}")),
        Some(n) if n < 0.0 || !n.is_finite() => Err(format!(
            "{at}.{key}: {n} is not a valid count or rate (negative)"
        )),
        Some(n) => Ok(n),
    }
}

fn job_of(at: &str, j: &Value) -> Result<JobResult, String> {
    let name = match j.get("jobname") {
        Some(Value::String(s)) => s.clone(),
        Some(x) => return Err(format!("{at}.jobname: expected a string, found {x}")),
        None => return Err(format!("{at}.jobname: missing")),
    };
    let at = format!("{at} ('{name}')");
    if let Some(e) = j.get("error") {
        let code = e
            .as_i64()
            .ok_or_else(|| format!("{at}.error: expected a number, found {e}"))?;
        if code != 0 {
            return Err(format!(
                "{at}: the job failed (error {code}: {}); its numbers are not a measurement",
                std::io::Error::from_raw_os_error(code as i32)
            ));
        }
    }
    let mut dirs = Vec::new();
    for d in DIRECTIONS {
        if let Some(v) = j.get(d) {
            let r = dir_of(&format!("{at}.{d}"), d, v)?;
            if r.total_ios > 0 || r.io_bytes > 0 {
                dirs.push(r);
            }
        }
    }
    Ok(JobResult { name, dirs })
}

fn dir_of(at: &str, dir: &str, v: &Value) -> Result<DirResult, String> {
    let io_bytes = num(v, at, "io_bytes")? as u64;
    let total_ios = num(v, at, "total_ios")? as u64;
    if io_bytes == 0 && total_ios == 0 {
        // A direction that did nothing: left out, whatever else it says.
        return Ok(DirResult {
            dir: dir.to_string(),
            ..Default::default()
        });
    }
    let lat = v
        .get("lat_ns")
        .ok_or_else(|| format!("{at}.lat_ns: missing"))?;
    let lat_at = format!("{at}.lat_ns");
    // Percentiles sit under clat_ns unless the job asked for lat_percentiles.
    let (pct_of, pct_src, pct_at) = match lat.get("percentile") {
        Some(_) => ("lat", lat.clone(), lat_at.clone()),
        None => (
            "clat",
            v.get("clat_ns").cloned().unwrap_or(Value::Null),
            format!("{at}.clat_ns"),
        ),
    };
    // A percentile the job did not ask for is 0 (not reported); one that is there must be
    // a number.
    let pct = |p: f64| -> Result<f64, String> {
        let key = format!("{p:.6}");
        match pct_src.get("percentile").and_then(|m| m.get(&key)) {
            None => Ok(0.0),
            Some(x) => opt_num(x, &format!("{pct_at}.percentile"), &key),
        }
    };
    let mut bins: Vec<(u64, u64)> = pct_src
        .get("bins")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, c)| Some((k.parse().ok()?, c.as_u64()?)))
                .collect()
        })
        .unwrap_or_default();
    bins.sort_unstable();
    Ok(DirResult {
        dir: dir.to_string(),
        iops: num(v, at, "iops")?,
        bw_bytes: num(v, at, "bw_bytes")?,
        io_bytes,
        total_ios,
        runtime_ms: num(v, at, "runtime")? as u64,
        lat_mean_ns: num(lat, &lat_at, "mean")?,
        lat_min_ns: num(lat, &lat_at, "min")?,
        lat_max_ns: num(lat, &lat_at, "max")?,
        pct_of,
        p50_ns: pct(50.0)?,
        p90_ns: pct(90.0)?,
        p99_ns: pct(99.0)?,
        p99_9_ns: pct(99.9)?,
        bins,
    })
}

/// The value below which `p` percent of the samples in `bins` fall (sorted by value).
pub fn percentile_of_bins(bins: &[(u64, u64)], p: f64) -> f64 {
    let total: u64 = bins.iter().map(|b| b.1).sum();
    if total == 0 {
        return 0.0;
    }
    let want = (p / 100.0 * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for &(v, c) in bins {
        seen += c;
        if seen >= want {
            return v as f64;
        }
    }
    bins.last().map_or(0.0, |b| b.0 as f64)
}

/// Every direction of a result summed over its jobs: IOPS, bandwidth and bytes add up;
/// the mean latency is weighted by I/O count; percentiles come from the merged JSON+
/// bins when every job has them (exact), else from the job with the most I/Os.
pub fn totals(file: &ResultFile) -> Vec<DirResult> {
    let mut out: Vec<DirResult> = Vec::new();
    for dir in DIRECTIONS {
        let parts: Vec<&DirResult> = file
            .jobs
            .iter()
            .flat_map(|j| j.dirs.iter())
            .filter(|d| d.dir == dir)
            .collect();
        if parts.is_empty() {
            continue;
        }
        if parts.len() == 1 {
            out.push(parts[0].clone());
            continue;
        }
        let ios: u64 = parts.iter().map(|d| d.total_ios).sum();
        let mut t = DirResult {
            dir: dir.to_string(),
            iops: parts.iter().map(|d| d.iops).sum(),
            bw_bytes: parts.iter().map(|d| d.bw_bytes).sum(),
            io_bytes: parts.iter().map(|d| d.io_bytes).sum(),
            total_ios: ios,
            runtime_ms: parts.iter().map(|d| d.runtime_ms).max().unwrap_or(0),
            lat_mean_ns: parts
                .iter()
                .map(|d| d.lat_mean_ns * d.total_ios as f64)
                .sum::<f64>()
                / ios.max(1) as f64,
            lat_min_ns: parts.iter().map(|d| d.lat_min_ns).fold(f64::MAX, f64::min),
            lat_max_ns: parts.iter().map(|d| d.lat_max_ns).fold(0.0, f64::max),
            pct_of: parts[0].pct_of,
            ..Default::default()
        };
        if parts.iter().all(|d| !d.bins.is_empty()) {
            let mut merged: std::collections::BTreeMap<u64, u64> = Default::default();
            for d in &parts {
                for &(v, c) in &d.bins {
                    *merged.entry(v).or_default() += c;
                }
            }
            t.bins = merged.into_iter().collect();
            t.p50_ns = percentile_of_bins(&t.bins, 50.0);
            t.p90_ns = percentile_of_bins(&t.bins, 90.0);
            t.p99_ns = percentile_of_bins(&t.bins, 99.0);
            t.p99_9_ns = percentile_of_bins(&t.bins, 99.9);
        } else if let Some(big) = parts.iter().max_by_key(|d| d.total_ios) {
            t.p50_ns = big.p50_ns;
            t.p90_ns = big.p90_ns;
            t.p99_ns = big.p99_ns;
            t.p99_9_ns = big.p99_9_ns;
        }
        out.push(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"note: both iodepth >= 1 and synchronous I/O engine are selected
{
  "fio version" : "fio-3.33",
  "jobs" : [
    { "jobname" : "a", "groupid" : 0, "error" : 0,
      "read" : { "io_bytes" : 4096000, "bw_bytes" : 2048000, "iops" : 500.0, "runtime" : 2000,
                 "total_ios" : 1000,
                 "clat_ns" : { "percentile" : { "50.000000" : 1000, "99.000000" : 5000,
                                                "99.900000" : 9000 },
                               "bins" : { "1000" : 600, "5000" : 390, "9000" : 10 } },
                 "lat_ns" : { "min" : 900, "max" : 9100, "mean" : 2000.0 } },
      "write" : { "io_bytes" : 0, "total_ios" : 0 } },
    { "jobname" : "b", "groupid" : 0, "error" : 0,
      "read" : { "io_bytes" : 4096000, "bw_bytes" : 2048000, "iops" : 500.0, "runtime" : 2500,
                 "total_ios" : 1000,
                 "clat_ns" : { "percentile" : { "50.000000" : 3000 },
                               "bins" : { "3000" : 1000 } },
                 "lat_ns" : { "min" : 2900, "max" : 3100, "mean" : 3000.0 } } }
  ]
}
fio: some trailing normal output
"#;

    #[test]
    fn reads_fio_json_with_notes_before() {
        let f = parse(DOC).unwrap();
        assert_eq!(f.version, "fio-3.33");
        assert_eq!(f.jobs.len(), 2);
        assert_eq!(
            f.jobs[0].dirs.len(),
            1,
            "a direction with no I/O is left out"
        );
        let d = &f.jobs[0].dirs[0];
        assert_eq!((d.iops, d.p99_ns, d.p99_9_ns), (500.0, 5000.0, 9000.0));
        assert_eq!(d.pct_of, "clat");
    }

    #[test]
    fn totals_merge_bins_for_exact_percentiles() {
        let t = totals(&parse(DOC).unwrap());
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].iops, 1000.0);
        assert_eq!(t[0].total_ios, 2000);
        assert_eq!(t[0].lat_mean_ns, 2500.0);
        // 2000 samples: 600 at 1000, 1000 at 3000, 390 at 5000, 10 at 9000.
        assert_eq!(t[0].p50_ns, 3000.0);
        assert_eq!(t[0].p99_ns, 5000.0);
        assert_eq!(t[0].p99_9_ns, 9000.0);
        assert_eq!(t[0].runtime_ms, 2500);
    }

    #[test]
    fn last_document_of_a_json_lines_stream_wins() {
        let a = one_read("\"iops\": 1");
        let b = one_read("\"iops\": 2");
        let f = parse(&format!("{a}\n{b}\n")).unwrap();
        assert_eq!(f.jobs[0].dirs[0].iops, 2.0);
    }

    /// A one-job result whose read direction has `iops` as given.
    fn one_read(iops: &str) -> String {
        format!(
            r#"{{"jobs":[{{"jobname":"x","error":0,"read":{{{iops},"bw_bytes":4096,"io_bytes":8192,"total_ios":2,"runtime":2,"lat_ns":{{"min":1,"max":3,"mean":2}}}}}}]}}"#
        )
    }

    #[test]
    fn failed_jobs_and_bad_numbers_are_errors_naming_the_key() {
        assert_eq!(
            parse(&one_read("\"iops\": 7.5")).unwrap().jobs[0].dirs[0].iops,
            7.5
        );
        let cases = [
            (
                one_read("\"iops\": \"fast\""),
                "jobs[0] ('x').read.iops: expected a number, found \"fast\"",
            ),
            (
                one_read("\"iops\": -5"),
                "jobs[0] ('x').read.iops: -5 is not a valid",
            ),
            (
                one_read("\"iops\": null"),
                "jobs[0] ('x').read.iops: expected a number",
            ),
            (one_read("\"iopz\": 1"), "jobs[0] ('x').read.iops: missing"),
        ];
        for (doc, want) in cases {
            let e = parse(&doc).unwrap_err();
            assert!(e.contains(want), "want {want} in {e}");
        }
        // fio's JSON of a run that failed: error 13 and nothing done.
        let failed = r#"{"fio version":"fio-3.33","jobs":[{"jobname":"x","error":13,
            "read":{"io_bytes":0,"bw_bytes":0,"iops":0.0,"runtime":0,"total_ios":0,
            "lat_ns":{"min":0,"max":0,"mean":0.0}}}]}"#;
        let e = parse(failed).unwrap_err();
        assert!(
            e.contains("jobs[0] ('x')")
                && e.contains("error 13")
                && e.contains("Permission denied"),
            "{e}"
        );
        // A direction that did nothing needs no more than its counts.
        let idle = r#"{"jobs":[{"jobname":"x","error":0,"write":{"io_bytes":0,"total_ios":0}}]}"#;
        assert!(parse(idle).unwrap().jobs[0].dirs.is_empty());
    }

    #[test]
    fn not_json_is_an_error() {
        assert!(parse("hello").is_err());
        assert!(parse("{\"a\": 1}").is_err());
    }
}
