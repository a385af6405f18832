//! Reads result files as data: iobench's and fio's JSON and JSON+ output alike (also a
//! `--status-interval` JSON Lines stream, whose last document is the final report, and
//! fio's output with notes printed before the JSON). The studies (sweep, compare) and the
//! HTML report read results only through here.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    /// The http engine's classes of requests (`iobench_http`: `all`, then each operation,
    /// size class, endpoint and multipart stage, by its name), read as directions are;
    /// with time to first byte, each class again as `NAME ttfb` with that for its latency.
    pub http: Vec<DirResult>,
    /// The group in `iobench_http` of each of `http`, in its order: `all`, `ops`, `sizes`,
    /// `endpoints` or `multipart`.
    pub http_groups: Vec<&'static str>,
}

impl JobResult {
    /// The http engine's classes with their groups.
    pub fn grouped_http(&self) -> impl Iterator<Item = (&'static str, &DirResult)> {
        self.http_groups.iter().copied().zip(&self.http)
    }
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
    /// The mean of the latency the percentiles are of (`clat_ns.mean`, or `lat_ns.mean`
    /// with lat_percentiles), in nanoseconds: the mean that may stand next to them. `None`
    /// when the result does not carry it.
    pub pct_mean_ns: Option<f64>,
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

impl ResultFile {
    /// True when some job of the file moved data in some direction.
    pub fn did_io(&self) -> bool {
        self.jobs.iter().any(|j| !j.dirs.is_empty())
    }

    /// True when the file's jobs were to move data: every engine does but the pseudo-I/O
    /// ones (cpuio burns CPU, exec runs a program), read from each job's `ioengine` (its
    /// own, or the global one) as the report lists it. A file that says nothing of its
    /// jobs' options is taken to have expected I/O (fio's default engine does).
    pub fn expects_io(&self) -> bool {
        let global = self.doc["global options"]["ioengine"].as_str();
        let jobs = (self.doc["jobs"].as_array())
            .or(self.doc["client_stats"].as_array())
            .map_or(&[][..], |v| &v[..]);
        jobs.is_empty()
            || jobs.iter().any(|j| {
                let engine = j["job options"]["ioengine"].as_str().or(global);
                !matches!(engine, Some("cpuio" | "exec"))
            })
    }

    /// Why the file is no measurement although its jobs were to do I/O: none did any.
    pub fn no_io_failure(&self) -> Option<String> {
        (!self.did_io() && self.expects_io())
            .then(|| "no I/O was done although the job was to do I/O".to_string())
    }
}

/// Reads a result file from disk.
pub fn read(path: &Path) -> Result<ResultFile, String> {
    let text = read_input(path)?;
    parse(&String::from_utf8_lossy(&text)).map_err(|e| format!("{}: {e}", path.display()))
}

/// The largest input file `report`, `compare` and `history import` read (a result, a
/// study's document, a log): 1 GiB. A bigger one is refused before it is read, not
/// buffered whole.
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// Reads an input file whole: a regular file (see [`regular_file`]) of at most
/// [`MAX_INPUT_BYTES`].
pub fn read_input(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    regular_file(path)?;
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = Vec::new();
    f.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!(
            "{}: larger than {} MiB, the most an input may have (a result, a study's JSON or a log)",
            path.display(),
            MAX_INPUT_BYTES >> 20
        ));
    }
    Ok(text)
}

/// The most elements an array of a study's document (slo, compare, trend, sweep index,
/// pts summary) may have: its steps, sides, points, rounds.
pub const MAX_DOC_ARRAY: usize = 100_000;

/// The largest magnitude a number in a study's document may have: iobench writes none
/// above it (its counts are 64-bit: rates, latencies in ns, byte counts, times), and an axis or a loop sized
/// by one (`"capacity_iops": -1e308`) is refused before anything is drawn.
pub const MAX_DOC_NUMBER: f64 = 2e19;

/// Checks a study's document (one iobench wrote: slo, compare, history trend, a sweep's
/// index, a pts summary) read from `path` against `MAX_DOC_ARRAY` and
/// `MAX_DOC_NUMBER`, naming the first value out of bounds by its JSON path.
pub fn check_doc_bounds(path: &Path, v: &Value) -> Result<(), String> {
    fn walk(v: &Value, at: &mut String) -> Result<(), String> {
        match v {
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(0.0);
                if !x.is_finite() || x.abs() > MAX_DOC_NUMBER {
                    return Err(format!(
                        "{at}: {n} is out of bounds (expected a number between -2e19 and 2e19)"
                    ));
                }
            }
            Value::Array(a) => {
                if a.len() > MAX_DOC_ARRAY {
                    return Err(format!(
                        "{at}: {} elements, more than the {MAX_DOC_ARRAY} a study's document may have",
                        a.len()
                    ));
                }
                for (i, e) in a.iter().enumerate() {
                    let len = at.len();
                    let _ = write!(at, "[{i}]");
                    walk(e, at)?;
                    at.truncate(len);
                }
            }
            Value::Object(m) => {
                for (k, e) in m {
                    let len = at.len();
                    let _ = write!(at, ".{k}");
                    walk(e, at)?;
                    at.truncate(len);
                }
            }
            _ => {}
        }
        Ok(())
    }
    use std::fmt::Write;
    let mut at = String::from("$");
    walk(v, &mut at).map_err(|e| format!("{}: {e}", path.display()))
}

/// The most values (each number, string, boolean, null, array and object counts one) one
/// JSON document read from a file may hold: 16 million, about 1.5 GB parsed at the most.
/// A file of `[0,0,0,...]` costs about 32 bytes of memory per 2 bytes of text, so the
/// size limit alone ([`MAX_INPUT_BYTES`]) would let 1 GiB of text take 17 GB; fio's
/// largest results (4096 jobs' JSON+) hold a few million.
pub const MAX_DOC_VALUES: usize = 16_000_000;

thread_local! {
    /// What the document being parsed on this thread may still hold ([`Bounded`]).
    static VALUES_LEFT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One JSON document parsed as a [`Value`] of at most [`MAX_DOC_VALUES`] values: the
/// parse stops with an error (naming the limit, and serde_json's line and column) at the
/// first value past it, before it is built.
pub struct Bounded(pub Value);

/// A value inside a [`Bounded`] document.
struct Node(Value);

impl<'de> serde::Deserialize<'de> for Bounded {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        VALUES_LEFT.with(|l| l.set(MAX_DOC_VALUES));
        <Node as serde::Deserialize>::deserialize(d).map(|n| Bounded(n.0))
    }
}

impl<'de> serde::Deserialize<'de> for Node {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

/// Counts one value against the document's budget.
fn one_more<E: serde::de::Error>() -> Result<(), E> {
    VALUES_LEFT.with(|l| match l.get() {
        0 => Err(E::custom(format_args!(
            "more than {MAX_DOC_VALUES} values in one document, the most an input may hold"
        ))),
        n => {
            l.set(n - 1);
            Ok(())
        }
    })
}

struct NodeVisitor;

impl<'de> serde::de::Visitor<'de> for NodeVisitor {
    type Value = Node;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<Node, E> {
        one_more()?;
        Ok(Node(Value::Bool(b)))
    }
    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Node, E> {
        one_more()?;
        Ok(Node(Value::from(n)))
    }
    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Node, E> {
        one_more()?;
        Ok(Node(Value::from(n)))
    }
    fn visit_f64<E: serde::de::Error>(self, x: f64) -> Result<Node, E> {
        one_more()?;
        Ok(Node(
            serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number),
        ))
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Node, E> {
        one_more()?;
        Ok(Node(Value::String(s.to_string())))
    }
    fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Node, E> {
        one_more()?;
        Ok(Node(Value::String(s)))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Node, E> {
        one_more()?;
        Ok(Node(Value::Null))
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Node, E> {
        self.visit_unit()
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        serde::Deserialize::deserialize(d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
        one_more()?;
        let mut v = Vec::new();
        while let Some(Node(x)) = a.next_element()? {
            v.push(x);
        }
        Ok(Node(Value::Array(v)))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
        one_more()?;
        let mut m = serde_json::Map::new();
        while let Some(k) = a.next_key::<String>()? {
            let Node(x) = a.next_value()?;
            m.insert(k, x);
        }
        Ok(Node(Value::Object(m)))
    }
}

/// Parses one JSON document of an input file (a study's document, a sweep index, a pts
/// summary) within [`MAX_DOC_VALUES`].
pub fn parse_doc(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Bounded>(text).map(|b| b.0)
}

/// The JSON documents of a text one after another (fio's `--status-interval` output),
/// each within [`MAX_DOC_VALUES`].
pub fn docs(text: &str) -> impl Iterator<Item = Result<Value, serde_json::Error>> + '_ {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Bounded>()
        .map(|d| d.map(|b| b.0))
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
        && read_input(path).is_ok_and(|t| document(&String::from_utf8_lossy(&t)).is_ok())
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
    for doc in docs(&text[start..]) {
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
    let mut doc = last.ok_or("not a fio JSON result: no \"jobs\" found")?;
    // fio writes credentials in the clear: none reaches a report or an export.
    crate::options::redact::json(&mut doc);
    Ok(doc)
}

/// The jobs of a fio JSON document and the key they are under: `client_stats` in a
/// client's report of many servers, `jobs` otherwise.
fn job_entries(doc: &Value) -> Result<(&'static str, &Vec<Value>), String> {
    let key = if doc.get("client_stats").is_some() {
        "client_stats"
    } else {
        "jobs"
    };
    let entries = doc
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("not a fio JSON result: \"{key}\" is not a list"))?;
    Ok((key, entries))
}

/// Summarises a parsed fio JSON document. A job that failed (a non-zero `error`), a
/// missing number, one that is not a number, or a negative one is an error naming the job
/// and the key: a study must not read a failed run as a slow one, nor a typo as zero.
pub fn from_value(doc: Value) -> Result<ResultFile, String> {
    let (key, entries) = job_entries(&doc)?;
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
    let (http_groups, http) = j
        .get("iobench_http")
        .map(|h| http_classes(&at, h, &dirs))
        .transpose()?
        .unwrap_or_default()
        .into_iter()
        .unzip();
    Ok(JobResult {
        name,
        dirs,
        http,
        http_groups,
    })
}

/// The groups of `iobench_http` that hold classes, in report order.
pub const HTTP_GROUPS: [&str; 4] = ["ops", "sizes", "endpoints", "multipart"];

/// The classes of a job's `iobench_http`, each a [`DirResult`] named by its class (over
/// the job's run time, the longest of its directions'), with its group (`all` for all).
fn http_classes(
    at: &str,
    h: &Value,
    dirs: &[DirResult],
) -> Result<Vec<(&'static str, DirResult)>, String> {
    let runtime = dirs.iter().map(|d| d.runtime_ms).max().unwrap_or(0);
    let mut named: Vec<(&'static str, String, &Value)> = vec![("all", "all".into(), &h["all"])];
    for group in HTTP_GROUPS {
        if let Some(m) = h.get(group).and_then(Value::as_object) {
            named.extend(m.iter().map(|(k, v)| (group, k.clone(), v)));
        }
    }
    let mut out = Vec::new();
    for (group, name, c) in named {
        if !c.is_object() {
            continue;
        }
        let mut c = c.clone();
        c["runtime"] = Value::from(runtime);
        let at = format!("{at}.iobench_http.{name}");
        out.push((group, dir_of(&at, &name, &c)?));
        if let Some(t) = c.get("ttfb_ns").cloned() {
            c["lat_ns"] = t;
            out.push((
                group,
                dir_of(&format!("{at}.ttfb_ns"), &format!("{name} ttfb"), &c)?,
            ));
        }
    }
    // A class that did nothing is left out, as a direction is.
    out.retain(|(_, d)| d.total_ios > 0 || d.io_bytes > 0);
    Ok(out)
}

/// A `--metric` naming a class of the http engine's requests: `http.CLASS.STAT`, CLASS
/// an operation (`get`, any case), a size class, an endpoint, a multipart stage or
/// `all`; STAT a [`Metric`], or `ttfb`, `ttfb_p50`, `ttfb_p99`, `ttfb_p99.9` for time to
/// first byte. Gives the class's name as [`JobResult::http`] has it (with ` ttfb` for
/// the TTFB ones) and the metric; `None` when `s` does not start with `http.`.
pub fn http_metric(s: &str) -> Option<Result<(String, Metric), String>> {
    let rest = s.strip_prefix("http.")?;
    // The class may hold dots (an endpoint's address), the statistic too (p99.9).
    let split = ["p99.9", "ttfb_p99.9"]
        .iter()
        .find_map(|st| {
            rest.strip_suffix(st)
                .and_then(|c| c.strip_suffix('.'))
                .map(|c| (c, *st))
        })
        .or_else(|| rest.rsplit_once('.'));
    let bad = || {
        Err(format!(
            "{s}: expected http.CLASS.STAT (CLASS: get, put, head, list, delete, all, a size \
             class or an endpoint; STAT: iops, bw, lat, p50, p99, p99.9, ttfb, ttfb_p50, \
             ttfb_p99 or ttfb_p99.9)"
        ))
    };
    let Some((class, stat)) = split.filter(|(c, _)| !c.is_empty()) else {
        return Some(bad());
    };
    let (stat, ttfb) = match stat.strip_prefix("ttfb") {
        Some("") => ("lat", true),
        Some(st) => match st.strip_prefix('_') {
            Some(st) => (st, true),
            None => return Some(bad()),
        },
        None => (stat, false),
    };
    let Some(m) = Metric::parse(stat) else {
        return Some(bad());
    };
    if ttfb && matches!(m, Metric::Iops | Metric::Bw) {
        return Some(bad());
    }
    let class = if ttfb {
        format!("{class} ttfb")
    } else {
        class.to_string()
    };
    Some(Ok((class, m)))
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
    let pct_mean_ns = pct_src
        .get("mean")
        .map(|x| opt_num(x, &pct_at, "mean"))
        .transpose()?;
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
        pct_mean_ns,
        p50_ns: pct(50.0)?,
        p90_ns: pct(90.0)?,
        p99_ns: pct(99.0)?,
        p99_9_ns: pct(99.9)?,
        bins,
    })
}

/// The value below which `p` percent of the samples in `bins` fall (sorted by value).
pub fn percentile_of_bins(bins: &[(u64, u64)], p: f64) -> f64 {
    // Saturating: counts read from a file may add up past u64.
    let total: u64 = bins.iter().fold(0u64, |t, b| t.saturating_add(b.1));
    if total == 0 {
        return 0.0;
    }
    let want = (p / 100.0 * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for &(v, c) in bins {
        seen = seen.saturating_add(c);
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
    sum_jobs(file.jobs.iter())
}

/// The http engine's classes of `file`'s jobs (`iobench_http`) as rows beside the
/// directions: `http NAME` (`http GET`, `http 4k`, `http GET ttfb`), or `http JOB NAME`
/// when several jobs have them (a class's latency cannot be summed across jobs).
pub fn http_totals(file: &ResultFile) -> Vec<DirResult> {
    let with: Vec<&JobResult> = file.jobs.iter().filter(|j| !j.http.is_empty()).collect();
    let several = with.len() > 1;
    with.iter()
        .flat_map(|j| {
            j.http.iter().map(move |c| {
                let mut c = c.clone();
                c.dir = if several {
                    format!("http {} {}", j.name, c.dir)
                } else {
                    format!("http {}", c.dir)
                };
                c
            })
        })
        .collect()
}

/// [`totals`] of some jobs: what they did together, per direction.
pub fn sum_jobs<'a>(jobs: impl Iterator<Item = &'a JobResult> + Clone) -> Vec<DirResult> {
    let mut out: Vec<DirResult> = Vec::new();
    for dir in DIRECTIONS {
        let parts: Vec<&DirResult> = jobs
            .clone()
            .flat_map(|j| j.dirs.iter())
            .filter(|d| d.dir == dir)
            .collect();
        if !parts.is_empty() {
            out.push(sum_parts(dir, &parts));
        }
    }
    out
}

/// The http engine's classes of several jobs (clones, or the jobs of one point's file),
/// each with its group: one per group and name, in the order first seen, summed as
/// [`sum_jobs`] sums directions.
pub fn sum_http<'a>(
    classes: impl Iterator<Item = (&'static str, &'a DirResult)>,
) -> Vec<(&'static str, DirResult)> {
    let mut by: Vec<(&'static str, &str, Vec<&DirResult>)> = Vec::new();
    for (g, c) in classes {
        match by.iter_mut().find(|(bg, n, _)| *bg == g && *n == c.dir) {
            Some(b) => b.2.push(c),
            None => by.push((g, &c.dir, vec![c])),
        }
    }
    by.into_iter()
        .map(|(g, n, parts)| (g, sum_parts(n, &parts)))
        .collect()
}

/// One direction (or http class) `name` of several jobs: IOPS, bandwidth and bytes add
/// up; the mean latency is weighted by I/O count; percentiles come from the merged
/// JSON+ bins when every part has them (exact), else from the part with the most I/Os.
fn sum_parts(name: &str, parts: &[&DirResult]) -> DirResult {
    if parts.len() == 1 {
        return parts[0].clone();
    }
    let ios: u64 = parts.iter().map(|d| d.total_ios).sum();
    let mut t = DirResult {
        dir: name.to_string(),
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
        pct_mean_ns: parts
            .iter()
            .map(|d| d.pct_mean_ns.map(|m| m * d.total_ios as f64))
            .sum::<Option<f64>>()
            .map(|s| s / ios.max(1) as f64),
        ..Default::default()
    };
    if parts.iter().all(|d| !d.bins.is_empty()) {
        let mut merged: std::collections::BTreeMap<u64, u64> = Default::default();
        for d in parts {
            for &(v, c) in &d.bins {
                let n = merged.entry(v).or_default();
                *n = n.saturating_add(c);
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
    t
}

// ---- Result sets: runs from many inputs pooled, and the options that differ found.

/// Why a run has no numbers: fio's errno (0 when not known) and the reason in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub error: i64,
    pub reason: String,
}

impl Failure {
    /// The failure of a job that ended with errno `error`.
    pub fn of_errno(error: i64) -> Failure {
        Failure {
            error,
            reason: format!("{} (error {error})", strerror(error)),
        }
    }
}

/// The words for errno `e`, without Rust's " (os error N)".
fn strerror(e: i64) -> String {
    let s = std::io::Error::from_raw_os_error(e as i32).to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// One run of one configuration: a job of a result file (with its clones), or one
/// measurement of a sweep point.
#[derive(Debug, Clone)]
pub struct Run {
    /// Where it was read from: the file, with the job's name when the file has several.
    pub source: String,
    /// Its options as given: the file's `global options`, then the job's `job options`
    /// (for a sweep point, its settings last).
    pub options: BTreeMap<String, String>,
    /// What it did per direction, or why it has no numbers (a failed run is never read
    /// as a slow one).
    pub outcome: Result<Vec<DirResult>, Failure>,
    /// The http engine's classes (`iobench_http`) with their groups, as
    /// [`JobResult::http`] names them; empty for any other run and a failed one.
    pub http: Vec<(&'static str, DirResult)>,
}

/// The string form of an option's value as fio's JSON writes it.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The options of a JSON object (`global options`, `job options`, a point's `params`).
fn options_in(v: &Value) -> impl Iterator<Item = (String, String)> + '_ {
    v.as_object().into_iter().flatten().map(|(k, v)| {
        let v = if crate::options::redact::is_secret(k) {
            crate::defs::REDACTED.to_string()
        } else {
            text_of(v)
        };
        (k.clone(), v)
    })
}

/// Every run in a result document, failed jobs included (marked). Jobs of the document
/// with the same name and options are clones of one job (`numjobs` without
/// `group_reporting`) and are summed into one run.
/// The pseudo-option that names the program a result file came from.
pub const TOOL_AXIS: &str = "tool";

/// `fio` or `iobench`, by the result's `fio version` (iobench writes `iobench-…`).
fn tool_of(doc: &Value) -> Option<&'static str> {
    let v = doc.get("fio version")?.as_str()?;
    if v.starts_with("iobench") {
        Some("iobench")
    } else if v.starts_with("fio") {
        Some("fio")
    } else {
        None
    }
}

pub fn runs_of(doc: &Value, source: &str) -> Result<Vec<Run>, String> {
    let (key, entries) = job_entries(doc).map_err(|e| format!("{source}: {e}"))?;
    let mut global: BTreeMap<String, String> = options_in(&doc["global options"]).collect();
    // The program that wrote the file: a set with fio's and iobench's files gets `tool`
    // as an axis (see [`pool`]), so the two are never pooled as repeats of one point.
    if let Some(t) = tool_of(doc) {
        global.insert(TOOL_AXIS.into(), t.into());
    }
    // (name, options, the jobs' numbers, the first failure)
    type Group = (
        String,
        BTreeMap<String, String>,
        Vec<JobResult>,
        Option<Failure>,
    );
    let mut groups: Vec<Group> = Vec::new();
    for (i, j) in entries.iter().enumerate() {
        let name = j.get("jobname").and_then(Value::as_str).unwrap_or("");
        if name == "All clients" {
            continue;
        }
        let mut opts = global.clone();
        opts.extend(options_in(&j["job options"]));
        let at = format!("{source}: {key}[{i}]");
        let error = match j.get("error") {
            None => 0,
            Some(e) => e
                .as_i64()
                .ok_or_else(|| format!("{at}.error: expected a number, found {e}"))?,
        };
        let (job, failure) = if error != 0 {
            (None, Some(Failure::of_errno(error)))
        } else {
            (Some(job_of(&at, j)?), None)
        };
        let pos = groups
            .iter()
            .position(|g| g.0 == name && g.1 == opts)
            .unwrap_or_else(|| {
                groups.push((name.to_string(), opts, Vec::new(), None));
                groups.len() - 1
            });
        let g = &mut groups[pos];
        g.2.extend(job);
        if g.3.is_none() {
            g.3 = failure;
        }
    }
    if groups.is_empty() {
        return Err(format!(
            "{source}: the result has no jobs (an empty run or a truncated file)"
        ));
    }
    let several = groups.len() > 1;
    Ok(groups
        .into_iter()
        .map(|(name, options, jobs, failure)| Run {
            source: if several {
                format!("{source} (job {name})")
            } else {
                source.to_string()
            },
            options,
            http: sum_http(jobs.iter().flat_map(JobResult::grouped_http)),
            outcome: match failure {
                Some(f) => Err(f),
                None => Ok(sum_jobs(jobs.iter())),
            },
        })
        .collect())
}

/// The runs of a result file on disk (see [`runs_of`]).
pub fn read_runs(path: &Path) -> Result<Vec<Run>, String> {
    let text = read_input(path)?;
    let doc = document(&String::from_utf8_lossy(&text))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    runs_of(&doc, &path.display().to_string())
}

/// The result files under a directory that is not a sweep's (fio-plot's bench-fio
/// layout: `OUT/DEVICE/[MODEMIX/]BS/[run-N/]MODE-IODEPTH-NUMJOBS.json`, with its `.log`
/// files beside them), in name order; files that are not fio JSON results are passed over.
pub fn result_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for p in entries {
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if m.is_dir() {
                stack.push(p);
            } else if m.is_file()
                && p.extension().is_some_and(|e| e == "json")
                && is_result_file(&p)
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The most the runs a report pools may hold in all, counted as each run's options and
/// settings (runs × what names a run): 4 million. A sweep index of 20000 runs naming
/// 20000 settings of one point (650 KB of text) would otherwise build 400 million copies,
/// and 100000 runs each setting another option 10 billion defaults in [`pool`].
pub const MAX_RUN_CELLS: usize = 4_000_000;

/// The runs of a sweep directory from its `index.json`: each point's result files (its
/// repeats: `runs[].file` as iobench's sweep writes them, `repeats[].file`, `files[]` or
/// `file`) read back, with the point's settings
/// over the job's options; a point marked failed (`"failed": true` or `"status":
/// "failed"`) is a failed run with the reason the sweep kept; a point whose files are gone
/// is taken from the numbers in the index. Each file is read once, however many entries
/// name it; more than [`MAX_DOC_ARRAY`] runs, or runs holding more than
/// [`MAX_RUN_CELLS`] options and settings in all, are an error.
pub fn sweep_runs(dir: &Path, index: &Value) -> Result<Vec<Run>, String> {
    let mut runs = Vec::new();
    let mut cells = 0usize;
    let mut read: BTreeMap<String, Option<Vec<Run>>> = BTreeMap::new();
    for (k, pt) in index["points"].as_array().into_iter().flatten().enumerate() {
        let params: BTreeMap<String, String> = options_in(&pt["params"]).collect();
        // iobench's sweep lists its repeats in `runs[]` (`repeats` is their count);
        // other layouts give `repeats[]`.
        let listed = [&pt["runs"], &pt["repeats"]]
            .into_iter()
            .find_map(|l| l.as_array().filter(|r| !r.is_empty()));
        let entries: Vec<&Value> = match listed {
            Some(r) => r.iter().collect(),
            None => vec![pt],
        };
        for e in entries {
            if runs.len() == MAX_DOC_ARRAY {
                return Err(format!(
                    "{}: more than {MAX_DOC_ARRAY} runs in the sweep's points, the most a \
                     sweep may have",
                    dir.display()
                ));
            }
            let file = e["file"].as_str().unwrap_or("");
            let from_file = if !file.is_empty() && !file.contains('/') {
                read.entry(file.to_string())
                    .or_insert_with(|| read_runs(&dir.join(file)).ok())
                    .as_deref()
            } else {
                None
            };
            // What the run copies from its file: the first job's options, each job's
            // http classes (summed).
            let from_options = from_file.map_or(0, |rs| {
                rs.first().map_or(0, |r| r.options.len())
                    + rs.iter().map(|r| 1 + r.http.len()).sum::<usize>()
            });
            cells = cells.saturating_add(1 + params.len() + from_options);
            if cells > MAX_RUN_CELLS {
                return Err(format!(
                    "{}: the sweep's runs name more than {MAX_RUN_CELLS} options and \
                     settings in all (runs × each run's options), the most a report draws",
                    dir.display()
                ));
            }
            runs.push(sweep_entry_run(dir, k, pt, e, file, from_file, &params));
        }
    }
    Ok(runs)
}

/// Whether a sweep index entry (a point or one of its repeats) says it failed, and why.
fn entry_failure(e: &Value) -> Option<Failure> {
    let failed = e["failed"].as_bool() == Some(true) || e["status"].as_str() == Some("failed");
    if !failed {
        return None;
    }
    let error = e["error"].as_i64().unwrap_or(0);
    let reason = match e["reason"].as_str() {
        Some(r) => r.to_string(),
        None if error != 0 => Failure::of_errno(error).reason,
        None => match e["exit_code"].as_u64() {
            Some(c) => format!("the point's run failed (exit status {c})"),
            None => "the point's run failed".to_string(),
        },
    };
    Some(Failure { error, reason })
}

fn sweep_entry_run(
    dir: &Path,
    k: usize,
    pt: &Value,
    e: &Value,
    file: &str,
    from_file: Option<&[Run]>,
    params: &BTreeMap<String, String>,
) -> Run {
    let source = if file.is_empty() {
        format!("{} point {}", dir.display(), k + 1)
    } else {
        dir.join(file).display().to_string()
    };
    let mut options: BTreeMap<String, String> = from_file
        .as_ref()
        .and_then(|r| r.first())
        .map(|r| r.options.clone())
        .unwrap_or_default();
    options.extend(params.clone());
    let failure = entry_failure(e).or_else(|| entry_failure(pt));
    let http = match (&failure, &from_file) {
        (None, Some(runs)) => sum_http(
            runs.iter()
                .flat_map(|r| r.http.iter().map(|(g, c)| (*g, c))),
        ),
        _ => Vec::new(),
    };
    let outcome = match (failure, from_file) {
        (Some(f), _) => Err(f),
        (None, Some(runs)) => match runs.iter().find_map(|r| r.outcome.clone().err()) {
            Some(f) => Err(f),
            None => {
                Ok(sum_dirs(runs.iter().flat_map(|r| {
                    r.outcome.as_ref().ok().into_iter().flatten()
                })))
            }
        },
        (None, None) => Ok(DIRECTIONS
            .iter()
            .filter_map(|d| index_dir(d, &e[*d]).or_else(|| index_dir(d, &pt[*d])))
            .collect()),
    };
    Run {
        source,
        options,
        outcome,
        http,
    }
}

/// Directions summed (several jobs' totals of one point file).
fn sum_dirs<'a>(dirs: impl Iterator<Item = &'a DirResult>) -> Vec<DirResult> {
    let job = JobResult {
        name: String::new(),
        dirs: dirs.cloned().collect(),
        http: Vec::new(),
        http_groups: Vec::new(),
    };
    sum_jobs(std::iter::once(&job))
}

/// A direction's numbers as a sweep index keeps them.
fn index_dir(dir: &str, v: &Value) -> Option<DirResult> {
    let f = |k: &str| v[k].as_f64();
    Some(DirResult {
        dir: dir.to_string(),
        iops: f("iops")?,
        bw_bytes: f("bw_bytes")?,
        io_bytes: f("io_bytes").unwrap_or(0.0) as u64,
        total_ios: f("total_ios").unwrap_or(0.0) as u64,
        runtime_ms: f("runtime_ms").unwrap_or(0.0) as u64,
        lat_mean_ns: f("lat_mean_ns").unwrap_or(0.0),
        lat_min_ns: f("lat_min_ns").unwrap_or(0.0),
        lat_max_ns: f("lat_max_ns").unwrap_or(0.0),
        pct_of: if v["percentiles_of"].as_str() == Some("lat") {
            "lat"
        } else {
            "clat"
        },
        pct_mean_ns: f("pct_mean_ns"),
        p50_ns: f("p50_ns").unwrap_or(0.0),
        p90_ns: f("p90_ns").unwrap_or(0.0),
        p99_ns: f("p99_ns").unwrap_or(0.0),
        p99_9_ns: f("p99_9_ns").unwrap_or(0.0),
        bins: Vec::new(),
    })
}

/// An option that names or files a run rather than shaping its I/O: never an axis.
const NOT_AXES: [&str; 9] = [
    "name",
    "description",
    "output",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "write_iolog",
    "per_job_logs",
];

/// fio's value of an option a job did not set, for the options studies vary.
fn default_of(option: &str) -> Option<&'static str> {
    Some(match option {
        "iodepth" | "numjobs" => "1",
        "ioengine" => "psync",
        "rw" => "read",
        "bs" => "4k",
        "direct" => "0",
        _ => return None,
    })
}

/// The value an axis shows for an option a run's engine ignores.
pub const IGNORED: &str = "ignored";

/// Options a synchronous engine ignores (it completes each I/O before the next).
const QUEUE_OPTIONS: [&str; 5] = [
    "iodepth",
    "iodepth_batch",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "iodepth_low",
];

/// Options whose values are sizes in bytes (shown as KiB, MiB, …).
const SIZE_OPTIONS: [&str; 6] = ["bs", "size", "io_size", "filesize", "blockalign", "ba"];

/// One option that differs between the runs of a set.
#[derive(Debug, Clone, PartialEq)]
pub struct SetAxis {
    pub name: String,
    /// Its values, in order (numbers ascending, else as first met; [`IGNORED`] last).
    pub values: Vec<String>,
    /// Each value as a number, for a numeric axis (`None`: categorical; for
    /// [`IGNORED`], `NaN`).
    pub numbers: Option<Vec<f64>>,
    /// The numbers are sizes in bytes.
    pub bytes: bool,
}

/// One configuration of a set: its value on each axis and its runs (the repeats).
#[derive(Debug, Clone, PartialEq)]
pub struct SetPoint {
    /// The index of its value in each axis's `values`.
    pub at: Vec<usize>,
    /// Indices into [`ResultSet::runs`].
    pub runs: Vec<usize>,
}

/// Runs from any inputs pooled: the options that differ between them are the axes, and
/// runs alike on every axis are repeats of one point.
#[derive(Debug, Clone)]
pub struct ResultSet {
    pub runs: Vec<Run>,
    pub axes: Vec<SetAxis>,
    pub points: Vec<SetPoint>,
    /// What the reader must know: options that were ignored and so collapsed.
    pub notes: Vec<String>,
}

/// A size or count as fio writes it (`4k`, `1m`, `512`, `1.5`): bytes, base 1024.
pub fn parse_number(s: &str) -> Option<f64> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.strip_suffix('b').unwrap_or(&t);
    let t = t.strip_suffix('i').unwrap_or(t);
    let (num, mult) = match t.char_indices().last()? {
        (i, 'k') => (&t[..i], 1024f64),
        (i, 'm') => (&t[..i], 1024f64.powi(2)),
        (i, 'g') => (&t[..i], 1024f64.powi(3)),
        (i, 't') => (&t[..i], 1024f64.powi(4)),
        _ => (t, 1.0),
    };
    num.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(|v| v * mult)
}

/// True when a job's `ioengine` completes each I/O before the next (psync, sync,
/// pvsync, mmap, …): its queue depth is 1 whatever `iodepth` says.
pub fn engine_is_sync(engine: &str) -> bool {
    crate::engine::registry::spec(engine).is_some_and(|s| s.flags.sync)
}

/// Pools `runs` into a set. `first` names axes to put first (a sweep's, in its order).
/// Every run is given a value of every option any run sets: runs × options above
/// [`MAX_RUN_CELLS`] is an error.
pub fn pool(runs: Vec<Run>, first: &[String]) -> Result<ResultSet, String> {
    let alias = |k: &str| match k {
        "blocksize" => "bs".to_string(),
        "readwrite" => "rw".to_string(),
        "io_engine" => "ioengine".to_string(),
        k => k.to_string(),
    };
    let mut eff: Vec<BTreeMap<String, String>> = runs
        .iter()
        .map(|r| {
            r.options
                .iter()
                .map(|(k, v)| (alias(k), v.clone()))
                .collect()
        })
        .collect();
    let mut keys: Vec<String> = eff.iter().flat_map(|o| o.keys().cloned()).collect();
    keys.sort();
    keys.dedup();
    keys.retain(|k| !NOT_AXES.contains(&k.as_str()));
    let cells = runs.len().saturating_mul(keys.len());
    if cells > MAX_RUN_CELLS {
        return Err(format!(
            "{} runs setting {} different options in all: each run would be given all of \
             them, {cells} in all, more than the {MAX_RUN_CELLS} a report pools",
            runs.len(),
            keys.len()
        ));
    }
    // `tool` is an axis only when both programs wrote some of the runs (a run read from
    // no file has none, and is not a third tool).
    let tools: std::collections::BTreeSet<&String> =
        eff.iter().filter_map(|o| o.get(TOOL_AXIS)).collect();
    if tools.len() < 2 {
        keys.retain(|k| k != TOOL_AXIS);
        for o in &mut eff {
            o.remove(TOOL_AXIS);
        }
    }
    for o in &mut eff {
        for k in &keys {
            if !o.contains_key(k) {
                let d = default_of(k).unwrap_or("(not set)");
                o.insert(k.clone(), d.to_string());
            }
        }
    }
    // Queue options a synchronous engine ignores: collapsed, with a note when they varied.
    let mut notes = Vec::new();
    for q in QUEUE_OPTIONS {
        let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for o in eff.iter_mut() {
            let engine = o.get("ioengine").cloned().unwrap_or_else(|| "psync".into());
            if !engine_is_sync(&engine) {
                continue;
            }
            if let Some(v) = o.get_mut(q) {
                let vals = seen.entry(engine).or_default();
                if !vals.contains(v) {
                    vals.push(v.clone());
                }
                *v = IGNORED.to_string();
            }
        }
        for (engine, vals) in seen.into_iter().filter(|s| s.1.len() > 1) {
            notes.push(format!(
                "{q} is ignored by {engine}: a synchronous engine completes each I/O before \
                 issuing the next, so its runs at {q}={} are one point (shown as \"{q} {IGNORED}\")",
                vals.join(",")
            ));
        }
    }
    let mut axes: Vec<SetAxis> = Vec::new();
    for k in &keys {
        // In the order first met (a set for the test, so 100000 runs are not 10^10).
        let mut values: Vec<String> = Vec::new();
        let mut met = std::collections::HashSet::new();
        for o in &eff {
            if met.insert(o[k].as_str()) {
                values.push(o[k].clone());
            }
        }
        if values.len() < 2 {
            continue;
        }
        let real: Vec<&String> = values.iter().filter(|v| *v != IGNORED).collect();
        let nums: Option<Vec<f64>> = real.iter().map(|v| parse_number(v)).collect();
        let boolean = real.iter().all(|v| *v == "0" || *v == "1");
        let numeric = nums.filter(|_| !boolean && real.len() >= 2);
        let numbers = numeric.map(|_| {
            values.sort_by(|a, b| {
                let f = |s: &String| parse_number(s).unwrap_or(f64::INFINITY);
                f(a).total_cmp(&f(b))
            });
            values
                .iter()
                .map(|v| parse_number(v).unwrap_or(f64::NAN))
                .collect()
        });
        if numbers.is_none() {
            // Categorical: as first met, with the ignored value last.
            values.sort_by_key(|v| v == IGNORED);
        }
        axes.push(SetAxis {
            name: k.clone(),
            bytes: SIZE_OPTIONS.contains(&k.as_str()),
            numbers,
            values,
        });
    }
    let rank = |n: &str| {
        first
            .iter()
            .position(|f| f == n)
            .or_else(|| {
                ["ioengine", "rw", "bs", "iodepth", "numjobs"]
                    .iter()
                    .position(|f| *f == n)
                    .map(|p| p + first.len())
            })
            .unwrap_or(usize::MAX)
    };
    axes.sort_by_key(|a| rank(&a.name));
    // Each run's place on the axes, and the runs at each place (looked up, not searched).
    let places: Vec<std::collections::HashMap<&str, usize>> = axes
        .iter()
        .map(|a| {
            let mut m = std::collections::HashMap::new();
            for (i, v) in a.values.iter().enumerate() {
                m.entry(v.as_str()).or_insert(i);
            }
            m
        })
        .collect();
    let mut points: Vec<SetPoint> = Vec::new();
    let mut point_at: std::collections::HashMap<Vec<usize>, usize> =
        std::collections::HashMap::new();
    for (i, o) in eff.iter().enumerate() {
        let at: Vec<usize> = axes
            .iter()
            .zip(&places)
            .map(|(a, m)| m.get(o[&a.name].as_str()).copied().unwrap_or(0))
            .collect();
        match point_at.get(&at) {
            Some(&p) => points[p].runs.push(i),
            None => {
                point_at.insert(at.clone(), points.len());
                points.push(SetPoint { at, runs: vec![i] });
            }
        }
    }
    points.sort_by(|a, b| a.at.cmp(&b.at));
    Ok(ResultSet {
        runs,
        axes,
        points,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_and_iobench_files_are_a_tool_axis_never_repeats() {
        let doc = |version: &str| {
            serde_json::json!({
                "fio version": version,
                "global options": {"bs": "4k"},
                "jobs": [{"jobname": "x", "error": 0, "job options": {"rw": "read"},
                          "read": {"iops": 100.0, "bw_bytes": 409600, "io_bytes": 4096, "total_ios": 1, "runtime": 1000,
                                   "lat_ns": {"min": 1, "max": 3, "mean": 2}}}],
            })
        };
        let mut runs = Vec::new();
        for (i, v) in [
            "fio-3.33",
            "fio-3.33",
            "iobench-0.1.0 (fio-3.33 compatible)",
        ]
        .iter()
        .enumerate()
        {
            runs.extend(runs_of(&doc(v), &format!("f{i}.json")).unwrap());
        }
        assert_eq!(runs[0].options[TOOL_AXIS], "fio");
        assert_eq!(runs[2].options[TOOL_AXIS], "iobench");
        let set = pool(runs.clone(), &[]).unwrap();
        let names: Vec<&str> = set.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["tool"], "{names:?}");
        // Files of one program: no tool axis, repeats of one point.
        let set = pool(runs[..2].to_vec(), &[]).unwrap();
        assert!(set.axes.is_empty());
    }

    #[test]
    fn http_metrics_name_a_class_and_a_statistic() {
        let m = |s: &str| http_metric(s).map(|r| r.map(|(c, m)| (c, m.name())));
        assert_eq!(m("http.get.p99"), Some(Ok(("get".into(), "p99"))));
        assert_eq!(m("http.PUT.iops"), Some(Ok(("PUT".into(), "iops"))));
        assert_eq!(
            m("http.16k-32k.p99.9"),
            Some(Ok(("16k-32k".into(), "p99.9")))
        );
        assert_eq!(
            m("http.127.0.0.1:8333.lat"),
            Some(Ok(("127.0.0.1:8333".into(), "lat")))
        );
        assert_eq!(m("http.get.ttfb"), Some(Ok(("get ttfb".into(), "lat"))));
        assert_eq!(
            m("http.all.ttfb_p99.9"),
            Some(Ok(("all ttfb".into(), "p99.9")))
        );
        assert_eq!(m("p99"), None, "not an http metric");
        for bad in [
            "http.get",
            "http.get.p42",
            "http.get.ttfb_iops",
            "http..p99",
            "http.get.ttfbx",
        ] {
            let e = m(bad).unwrap().unwrap_err();
            assert!(e.contains(bad) && e.contains("http.CLASS.STAT"), "{e}");
        }
    }

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

    /// A run with these options and `iops` read IOPS (or failed with errno 22).
    fn run(opts: &[(&str, &str)], iops: Option<f64>) -> Run {
        Run {
            source: "t".into(),
            http: Vec::new(),
            options: opts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            outcome: match iops {
                Some(iops) => Ok(vec![DirResult {
                    dir: "read".into(),
                    iops,
                    ..Default::default()
                }]),
                None => Err(Failure::of_errno(22)),
            },
        }
    }

    #[test]
    fn a_pool_finds_the_options_that_differ_and_the_repeats() {
        let mut runs = Vec::new();
        for bs in ["64k", "4k", "1m"] {
            for r in 0..3 {
                runs.push(run(
                    &[("name", &format!("job{r}")), ("bs", bs), ("rw", "read")],
                    Some(1.0),
                ));
            }
        }
        runs.push(run(&[("name", "x"), ("bs", "1000"), ("rw", "read")], None));
        let set = pool(runs, &[]).unwrap();
        assert_eq!(set.axes.len(), 1, "names are not axes: {:?}", set.axes);
        let bs = &set.axes[0];
        assert_eq!(bs.name, "bs");
        assert_eq!(bs.values, ["1000", "4k", "64k", "1m"], "sorted by size");
        assert_eq!(
            bs.numbers.as_deref(),
            Some(&[1000.0, 4096.0, 65536.0, 1048576.0][..])
        );
        assert!(bs.bytes);
        let sizes: Vec<usize> = set.points.iter().map(|p| p.runs.len()).collect();
        assert_eq!(sizes, [1, 3, 3, 3], "repeats of one point are grouped");
        assert_eq!(
            set.runs[set.points[0].runs[0]]
                .outcome
                .as_ref()
                .unwrap_err()
                .reason,
            "Invalid argument (error 22)"
        );
        // A categorical axis keeps its order; a 0/1 option is no line.
        let set = pool(
            vec![
                run(&[("ioengine", "libaio"), ("direct", "1")], Some(1.0)),
                run(&[("ioengine", "io_uring"), ("direct", "0")], Some(1.0)),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(set.axes[0].name, "ioengine");
        assert_eq!(set.axes[0].values, ["libaio", "io_uring"]);
        assert!(set.axes.iter().all(|a| a.numbers.is_none()));
    }

    #[test]
    fn a_sync_engines_iodepth_collapses_with_a_note() {
        let mut runs = Vec::new();
        for e in ["psync", "libaio"] {
            for qd in ["1", "8", "32"] {
                runs.push(run(&[("ioengine", e), ("iodepth", qd)], Some(1.0)));
            }
        }
        // Unset ioengine is fio's default, psync.
        runs.push(run(&[("iodepth", "4")], Some(1.0)));
        let set = pool(runs, &[]).unwrap();
        let qd = set.axes.iter().find(|a| a.name == "iodepth").unwrap();
        assert_eq!(qd.values, ["1", "8", "32", IGNORED]);
        assert_eq!(set.points.len(), 4, "psync's 4 runs are one point");
        assert_eq!(set.notes.len(), 1);
        assert!(
            set.notes[0].starts_with("iodepth is ignored by psync"),
            "{}",
            set.notes[0]
        );
        for e in ["psync", "sync", "pvsync", "pvsync2", "vsync", "mmap"] {
            assert!(engine_is_sync(e), "{e}");
        }
        for e in ["libaio", "io_uring", "null", "posixaio"] {
            assert!(!engine_is_sync(e), "{e}");
        }
    }

    #[test]
    fn a_sweep_index_gives_runs_failures_and_repeats() {
        let dir = std::env::temp_dir().join(format!("iobench-sweep-runs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.json"), one_read("\"iops\": 5")).unwrap();
        std::fs::write(dir.join("b.json"), one_read("\"iops\": 7")).unwrap();
        let index = serde_json::json!({"points": [
            {"params": {"bs": "4k"}, "file": "a.json", "status": "ok"},
            {"params": {"bs": "8k"}, "status": "ok", "repeats": [{"file": "a.json"}, {"file": "b.json"},
                {"failed": true, "error": 5, "reason": "I/O error on /dev/x"}]},
            {"params": {"bs": "1000"}, "file": "p.failed.json", "failed": true, "error": 22,
             "reason": "Invalid argument"},
            {"params": {"bs": "16k"}, "file": "gone.json", "status": "ok",
             "read": {"iops": 9.0, "bw_bytes": 1.0, "percentiles_of": "clat", "p99_ns": 5.0}},
        ]});
        let runs = sweep_runs(&dir, &index).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let iops = |r: &Run| {
            r.outcome
                .as_ref()
                .map(|d| d[0].iops)
                .map_err(|f| f.reason.clone())
        };
        let got: Vec<_> = runs.iter().map(iops).collect();
        assert_eq!(
            got,
            [
                Ok(5.0),
                Ok(5.0),
                Ok(7.0),
                Err("I/O error on /dev/x".into()),
                Err("Invalid argument".into()),
                Ok(9.0)
            ]
        );
        assert_eq!(
            runs[2].options["bs"], "8k",
            "the point's settings over the file's"
        );
        let set = pool(runs, &["bs".into()]).unwrap();
        assert_eq!(
            set.points.iter().map(|p| p.runs.len()).collect::<Vec<_>>(),
            [1, 1, 3, 1]
        );
    }
}
