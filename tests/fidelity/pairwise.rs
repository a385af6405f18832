//! The pairwise differential suite (issue 35): a covering array over the options that
//! shape a run (engine, rw, block size, depth, direct, numjobs/thread, ramp, how the job
//! ends, rate, verify, fsync, group_reporting, startdelay, a second job with or without
//! stonewall), made by a small deterministic greedy generator so that every pair of values
//! of every two factors is in some row, less the pairs that cannot run (the constraints,
//! each with why). Each row runs with fio 3.33 and with iobench in its dialect, on small
//! files in a private scratch directory, and the two are compared: the I/O counts per
//! direction (exact for jobs bound by size, number_ios or loops; a range for timed ones),
//! the write_iolog (offsets, sizes, and order where the order is fixed: depth 1 or a
//! synchronous engine), the runtime (a range), the report's sections (each job's JSON key
//! set, and how many jobs group_reporting leaves) and fio's informational lines around
//! the report. Zero I/Os where fio did work is always a failure.
//!
//! CI runs a fixed sample of the rows (those that cover the most pairs); the whole array
//! is `IOBENCH_PAIRWISE_FULL=1`, another sample `IOBENCH_PAIRWISE_SEED=N`, chosen rows
//! `IOBENCH_PAIRWISE_ROWS=3,17` (docs/device-work.md). Differences written down there as open
//! are named by `known_open` and pass with a message.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

/// One option of the run and the values it takes in the array.
struct Factor {
    name: &'static str,
    values: &'static [&'static str],
}

/// The factors, in the order the generator fills a row (the largest first).
const FACTORS: &[Factor] = &[
    Factor {
        name: "ioengine",
        values: &[
            "psync", "sync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap", "null",
        ],
    },
    Factor {
        name: "rw",
        values: &["read", "write", "randread", "randwrite", "rw", "randrw"],
    },
    Factor {
        name: "bs",
        values: &["4k", "64k", "1m", "4k-64k"],
    },
    Factor {
        name: "end",
        values: &["time", "size", "number_ios", "loops"],
    },
    Factor {
        name: "iodepth",
        values: &["1", "8", "32"],
    },
    Factor {
        name: "jobs",
        values: &["1", "2", "2+thread"],
    },
    Factor {
        name: "sections",
        values: &["one", "two", "two+stonewall"],
    },
    Factor {
        name: "direct",
        values: &["0", "1"],
    },
    Factor {
        name: "ramp",
        values: &["0", "150ms"],
    },
    Factor {
        name: "rate",
        values: &["none", "32m"],
    },
    Factor {
        name: "verify",
        values: &["none", "crc32c"],
    },
    Factor {
        name: "fsync",
        values: &["0", "4"],
    },
    Factor {
        name: "group",
        values: &["0", "1"],
    },
    Factor {
        name: "startdelay",
        values: &["0", "50ms"],
    },
];

/// Pairs of values that make no run worth comparing, and why. A row holds none of them.
const CONSTRAINTS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "verify",
        "crc32c",
        "rw",
        "read",
        "verify is asked of the jobs that write: a read-only job has no written blocks to check",
    ),
    (
        "verify",
        "crc32c",
        "rw",
        "randread",
        "verify is asked of the jobs that write: a read-only job has no written blocks to check",
    ),
    (
        "verify",
        "crc32c",
        "ioengine",
        "null",
        "the null engine keeps no data, so every verify read fails, in fio as in iobench",
    ),
];

/// A (factor, value) index pair.
type Val = (usize, usize);

fn factor(name: &str) -> usize {
    FACTORS
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("no factor {name}"))
}

fn value(f: usize, v: &str) -> usize {
    FACTORS[f]
        .values
        .iter()
        .position(|x| *x == v)
        .unwrap_or_else(|| panic!("factor {} has no value {v}", FACTORS[f].name))
}

/// The constraints as index pairs, each with its reason.
fn constraints() -> Vec<(Val, Val, &'static str)> {
    CONSTRAINTS
        .iter()
        .map(|&(f1, v1, f2, v2, why)| {
            let (a, b) = (factor(f1), factor(f2));
            ((a, value(a, v1)), (b, value(b, v2)), why)
        })
        .collect()
}

fn allowed(cons: &[(Val, Val, &str)], a: Val, b: Val) -> bool {
    !cons
        .iter()
        .any(|&(x, y, _)| (x == a && y == b) || (x == b && y == a))
}

/// Every pair of values of two factors that may run, as (f1, v1, f2, v2) with f1 < f2.
fn all_pairs(cons: &[(Val, Val, &str)]) -> BTreeSet<(usize, usize, usize, usize)> {
    let mut s = BTreeSet::new();
    for (f1, a) in FACTORS.iter().enumerate() {
        for (f2, b) in FACTORS.iter().enumerate().skip(f1 + 1) {
            for v1 in 0..a.values.len() {
                for v2 in 0..b.values.len() {
                    if allowed(cons, (f1, v1), (f2, v2)) {
                        s.insert((f1, v1, f2, v2));
                    }
                }
            }
        }
    }
    s
}

/// The pairs one row covers.
fn row_pairs(row: &[usize]) -> Vec<(usize, usize, usize, usize)> {
    let mut p = Vec::new();
    for f1 in 0..row.len() {
        for f2 in f1 + 1..row.len() {
            p.push((f1, row[f1], f2, row[f2]));
        }
    }
    p
}

/// The covering array: a greedy pairwise generator, deterministic (no randomness, ties
/// to the lowest index). Each row starts from the first pair not yet covered; every other
/// factor then takes the allowed value that covers the most new pairs with the values
/// already in the row. Every factor has a value allowed with all others (psync, write,
/// verify=none ...), so a row can always be completed.
fn generate() -> Vec<Vec<usize>> {
    let cons = constraints();
    let mut left = all_pairs(&cons);
    let mut rows = Vec::new();
    while let Some(&(f1, v1, f2, v2)) = left.iter().next() {
        let mut row: Vec<Option<usize>> = vec![None; FACTORS.len()];
        row[f1] = Some(v1);
        row[f2] = Some(v2);
        for f in 0..FACTORS.len() {
            if row[f].is_some() {
                continue;
            }
            let mut best: Option<(usize, usize)> = None;
            for v in 0..FACTORS[f].values.len() {
                let set: Vec<Val> = row
                    .iter()
                    .enumerate()
                    .filter_map(|(g, x)| x.map(|x| (g, x)))
                    .collect();
                if set.iter().any(|&gv| !allowed(&cons, gv, (f, v))) {
                    continue;
                }
                let gain = set
                    .iter()
                    .filter(|&&(g, x)| {
                        let key = if g < f { (g, x, f, v) } else { (f, v, g, x) };
                        left.contains(&key)
                    })
                    .count();
                if best.is_none_or(|(_, b)| gain > b) {
                    best = Some((v, gain));
                }
            }
            row[f] = Some(best.expect("a value allowed with the row").0);
        }
        let row: Vec<usize> = row.into_iter().map(Option::unwrap).collect();
        for p in row_pairs(&row) {
            left.remove(&p);
        }
        rows.push(row);
    }
    rows
}

/// The pairs of `want` that `rows` miss.
fn misses(
    rows: &[&Vec<usize>],
    want: &BTreeSet<(usize, usize, usize, usize)>,
) -> Vec<(usize, usize, usize, usize)> {
    let mut left = want.clone();
    for r in rows {
        for p in row_pairs(r) {
            left.remove(&p);
        }
    }
    left.into_iter().collect()
}

fn pair_name(&(f1, v1, f2, v2): &(usize, usize, usize, usize)) -> String {
    format!(
        "{}={} × {}={}",
        FACTORS[f1].name, FACTORS[f1].values[v1], FACTORS[f2].name, FACTORS[f2].values[v2]
    )
}

/// A row as `name=value` words.
fn describe(row: &[usize]) -> String {
    row.iter()
        .enumerate()
        .map(|(f, &v)| format!("{}={}", FACTORS[f].name, FACTORS[f].values[v]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A row's values by factor name.
struct Row<'a>(&'a [usize]);

impl Row<'_> {
    fn get(&self, name: &str) -> &'static str {
        let f = factor(name);
        FACTORS[f].values[self.0[f]]
    }
    fn engine(&self) -> &'static str {
        self.get("ioengine")
    }
    /// The engines fio marks synchronous (their depth is capped at 1).
    fn sync_engine(&self) -> bool {
        matches!(self.engine(), "psync" | "sync" | "pvsync2" | "mmap")
    }
    /// A rate on a mixed job: fio picks the direction that is behind its rate, by the
    /// clock, so which direction each I/O takes is not fixed.
    fn rated_mix(&self) -> bool {
        self.get("rate") != "none" && matches!(self.get("rw"), "rw" | "randrw")
    }
    /// I/O is issued in an order that does not depend on completions.
    fn ordered(&self) -> bool {
        (self.sync_engine() || self.get("iodepth") == "1") && !self.rated_mix()
    }
    /// A clock decides which I/Os are measured or when they are issued.
    fn clocked(&self) -> bool {
        self.timed() || self.get("ramp") != "0" || self.get("rate") != "none"
    }
    fn timed(&self) -> bool {
        self.get("end") == "time"
    }
    /// The counts are fixed by the job (no clock decides where the measured I/O starts or
    /// stops).
    fn exact(&self) -> bool {
        !self.timed() && self.get("ramp") == "0" && !self.rated_mix()
    }
    fn numjobs(&self) -> u64 {
        if self.get("jobs") == "1" {
            1
        } else {
            2
        }
    }
    fn sections(&self) -> usize {
        if self.get("sections") == "one" {
            1
        } else {
            2
        }
    }
}

/// The job file of a row, its files in `dir`; each section writes its own iolog.
fn job_file(row: &Row, dir: &Path) -> String {
    let mut g = vec![
        format!("directory={}", dir.display()),
        format!("ioengine={}", row.engine()),
        format!("rw={}", row.get("rw")),
        format!("iodepth={}", row.get("iodepth")),
        format!("direct={}", row.get("direct")),
        "size=2m".to_string(),
    ];
    match row.get("bs") {
        "4k-64k" => g.push("bsrange=4k-64k".into()),
        bs => g.push(format!("bs={bs}")),
    }
    match row.get("jobs") {
        "1" => {}
        "2" => g.push("numjobs=2".into()),
        _ => g.extend(["numjobs=2".to_string(), "thread".to_string()]),
    }
    if row.get("ramp") != "0" {
        g.push(format!("ramp_time={}", row.get("ramp")));
    }
    match row.get("end") {
        "time" => g.extend(["time_based".to_string(), "runtime=250ms".to_string()]),
        "size" => {}
        "number_ios" => g.push("number_ios=40".into()),
        _ => g.push("loops=2".into()),
    }
    if row.get("rate") != "none" {
        g.push(format!("rate={}", row.get("rate")));
    }
    if row.get("verify") != "none" {
        g.push(format!("verify={}", row.get("verify")));
    }
    if row.get("fsync") != "0" {
        g.push(format!("fsync={}", row.get("fsync")));
    }
    if row.get("group") == "1" {
        g.push("group_reporting".into());
    }
    if row.get("startdelay") != "0" {
        g.push(format!("startdelay={}", row.get("startdelay")));
    }
    let mut s = format!("[global]\n{}\n", g.join("\n"));
    for (i, name) in ["a", "b"].iter().take(row.sections()).enumerate() {
        s.push_str(&format!("\n[{name}]\n"));
        if i == 1 && row.get("sections") == "two+stonewall" {
            s.push_str("stonewall\n");
        }
        // One log per section; clones of a section (numjobs) share it, and their lines
        // interleave, so those logs are not compared.
        s.push_str(&format!(
            "write_iolog={}\n",
            dir.join(format!("{name}.iolog")).display()
        ));
    }
    s
}

/// What one tool's run of a row left.
struct Run {
    out: Output,
    /// The JSON report.
    json: serde_json::Value,
    /// Each section's iolog: the I/O lines (`file op offset len`), file names relative.
    logs: Vec<Vec<String>>,
    /// stdout before the report and stderr: fio's notes and warnings.
    notes: Vec<String>,
}

fn run_row(tool: Command, row: &Row, dir: &Path) -> Run {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("scratch dir");
    let jf = dir.join("row.fio");
    std::fs::write(&jf, job_file(row, dir)).expect("job file");
    let mut tool = tool;
    tool.current_dir(dir).arg("--output-format=json").arg(&jf);
    let out = common::run(tool);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let at = if stdout.starts_with('{') {
        0
    } else {
        stdout.find("\n{").map_or(stdout.len(), |i| i + 1)
    };
    let json = serde_json::from_str(&stdout[at..]).unwrap_or(serde_json::Value::Null);
    let prefix = format!("{}/", dir.display());
    let logs = ["a", "b"]
        .iter()
        .take(row.sections())
        .map(|n| {
            let text = std::fs::read_to_string(dir.join(format!("{n}.iolog"))).unwrap_or_default();
            let v3 = text.starts_with("fio version 3");
            text.lines()
                .skip(1)
                .map(|l| {
                    let l = if v3 {
                        l.split_once(' ').map_or(l, |x| x.1)
                    } else {
                        l
                    };
                    l.replace(&prefix, "")
                })
                .filter(|l| l.split(' ').count() == 4)
                .collect()
        })
        .collect();
    let mut notes: Vec<String> = stdout[..at]
        .lines()
        .chain(String::from_utf8_lossy(&out.stderr).lines())
        .map(str::to_string)
        .filter(|l| !l.trim().is_empty())
        .collect();
    notes.sort();
    let _ = std::fs::remove_dir_all(dir);
    Run {
        out,
        json,
        logs,
        notes,
    }
}

/// The key paths of a JSON value (array elements merged under `[]`).
fn key_paths(v: &serde_json::Value, at: &str, into: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}.{k}");
                into.insert(p.clone());
                key_paths(x, &p, into);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                key_paths(x, &format!("{at}[]"), into);
            }
        }
        _ => {}
    }
}

fn jobs(j: &serde_json::Value) -> &[serde_json::Value] {
    j["jobs"].as_array().map_or(&[], Vec::as_slice)
}

/// Total I/Os of a direction ("read", "write", "sync") over the report's jobs.
fn ios(j: &serde_json::Value, dir: &str) -> u64 {
    jobs(j)
        .iter()
        .map(|x| x[dir]["total_ios"].as_u64().unwrap_or(0))
        .sum()
}

/// `a` is within a factor `k` of `b`, with `slack` either way.
fn near(a: u64, b: u64, k: f64, slack: u64) -> bool {
    let (a, b) = (a as f64, b as f64);
    a + slack as f64 >= b / k && a <= b * k + slack as f64
}

/// The differences between fio's run and iobench's of a row, each as a check's name and
/// what it saw.
fn compare(row: &Row, fio: &Run, ours: &Run, whole: Option<&Run>) -> Vec<(&'static str, String)> {
    let mut d = Vec::new();
    if fio.out.status.success() != ours.out.status.success() {
        d.push((
            "exit",
            format!(
                "fio {} / iobench {}: {}",
                fio.out.status,
                ours.out.status,
                String::from_utf8_lossy(&ours.out.stderr).trim()
            ),
        ));
    }
    if jobs(&fio.json).is_empty() || jobs(&ours.json).is_empty() {
        d.push((
            "report",
            format!(
                "fio {} jobs, iobench {} jobs",
                jobs(&fio.json).len(),
                jobs(&ours.json).len()
            ),
        ));
        return d;
    }
    // Counts per direction.
    for dir in ["read", "write", "sync"] {
        let (a, b) = (ios(&fio.json, dir), ios(&ours.json, dir));
        if b == 0 && a > 0 {
            d.push(("zero", format!("{dir}: fio {a} I/Os, iobench none")));
        } else if row.exact() && (dir != "sync" || row.ordered()) {
            if a != b {
                d.push(("count", format!("{dir}: fio {a}, iobench {b}")));
            }
        } else if let (Some(w), true) = (whole, dir != "sync" || row.ordered()) {
            // A job bound by size with a ramp: a job that ends inside its ramp reports
            // every I/O it did, as fio's does, else those after the ramp, and which one
            // is the clock's (a loaded host's fio once crossed a 150 ms ramp that
            // iobench's run ended inside). Neither tool reports more than the job does
            // without a ramp (iobench's run of it, which the exact rows hold to fio's).
            // A rated mix's split between the directions is the clock's too.
            let all = if row.rated_mix() && dir != "sync" {
                ios(&w.json, "read") + ios(&w.json, "write")
            } else {
                ios(&w.json, dir)
            };
            if a > all || b > all {
                d.push((
                    "count",
                    format!("{dir}: fio {a}, iobench {b}, the job without its ramp {all}"),
                ));
            }
        } else if a > 0 || b > 0 {
            // A clock ends the job or its ramp: a range. A rate makes the two tools'
            // speeds alike; without one they may differ by a loaded host's spread.
            // An asynchronous engine's syncs are as many as the free slots it finds
            // while one is in flight (fio 3.33 queues one per slot): a wide range.
            let k = if dir == "sync" && !row.ordered() {
                20.0
            } else if row.get("rate") != "none" {
                2.0
            } else {
                20.0
            };
            if !near(b, a, k, 8) {
                d.push(("count", format!("{dir}: fio {a}, iobench {b} (range ×{k})")));
            }
        }
    }
    // The report's shape: how many jobs (group_reporting merges), their names and keys.
    let names = |j: &serde_json::Value| -> Vec<String> {
        jobs(j)
            .iter()
            .map(|x| x["jobname"].as_str().unwrap_or("").to_string())
            .collect()
    };
    if names(&fio.json) != names(&ours.json) {
        d.push((
            "jobs",
            format!(
                "fio {:?}, iobench {:?}",
                names(&fio.json),
                names(&ours.json)
            ),
        ));
    }
    for (i, (a, b)) in jobs(&fio.json).iter().zip(jobs(&ours.json)).enumerate() {
        let (mut ka, mut kb) = (BTreeSet::new(), BTreeSet::new());
        key_paths(a, "", &mut ka);
        key_paths(b, "", &mut kb);
        // Each tool's report has a direction's percentiles exactly when that direction has
        // latency samples, as fio's does.
        for (tool, j, keys) in [("fio", a, &ka), ("iobench", b, &kb)] {
            if let Some(why) = percentiles_follow_samples(j, keys) {
                d.push(("keys", format!("job {i}: {tool}: {why}")));
            }
        }
        // Where a clock (ramp, runtime, rate) decides which I/Os are measured, one tool may
        // have measured none in a direction (all of its verify reads fell in the ramp, say)
        // and the other some: the percentiles then come and go with the host's speed.
        if row.clocked() {
            for keys in [&mut ka, &mut kb] {
                keys.retain(|k| !k.contains(".percentile"));
            }
        }
        let only_fio: Vec<_> = ka.difference(&kb).take(6).cloned().collect();
        let only_ours: Vec<_> = kb.difference(&ka).take(6).cloned().collect();
        if !only_fio.is_empty() || !only_ours.is_empty() {
            d.push((
                "keys",
                format!("job {i}: only fio {only_fio:?}, only iobench {only_ours:?}"),
            ));
        }
    }
    let (mut ga, mut gb) = (BTreeSet::new(), BTreeSet::new());
    key_paths(&fio.json["global options"], "", &mut ga);
    key_paths(&ours.json["global options"], "", &mut gb);
    if ga != gb {
        d.push((
            "keys",
            format!("global options: fio {ga:?}, iobench {gb:?}"),
        ));
    }
    // Runtime: a timed job runs its runtime; a rated one as long as fio's.
    for (i, (a, b)) in jobs(&fio.json).iter().zip(jobs(&ours.json)).enumerate() {
        let (ra, rb) = (
            a["job_runtime"].as_u64().unwrap_or(0),
            b["job_runtime"].as_u64().unwrap_or(0),
        );
        let ok = if row.timed() {
            let per = 250
                * if row.get("group") == "1" {
                    2 * row.numjobs()
                } else {
                    1
                };
            (200..=per + 1000).contains(&rb) || near(rb, ra, 1.5, 100)
        } else if row.get("rate") != "none" {
            // The rate sets the least time a job takes for the bytes it moved; above that a
            // slow (loaded) device stretches either tool's run, so fio's runtime is only an
            // upper guide. fio's own run is held to the same floor, which checks the floor.
            let (fa, fb) = (rate_floor_ms(a), rate_floor_ms(b));
            if ra + 30 < fa * 8 / 10 {
                d.push((
                    "runtime",
                    format!("job {i}: fio {ra} ms is under its rate's floor {fa} ms"),
                ));
            }
            rb + 30 >= fb * 8 / 10 && rb <= ra.max(fb) * 2 + 200
        } else {
            rb <= ra.max(50) * 20
        };
        if !ok {
            d.push(("runtime", format!("job {i}: fio {ra} ms, iobench {rb} ms")));
        }
    }
    // The iologs: one writer per log only (numjobs=1).
    if row.numjobs() == 1 {
        for (s, (a, b)) in fio.logs.iter().zip(&ours.logs).enumerate() {
            if let Some(why) = log_diff(row, a, b) {
                d.push(("iolog", format!("section {s}: {why}")));
            }
        }
    }
    // fio's informational lines around the report.
    if fio.notes != ours.notes {
        let only_fio: Vec<_> = fio
            .notes
            .iter()
            .filter(|l| !ours.notes.contains(l))
            .collect();
        let only_ours: Vec<_> = ours
            .notes
            .iter()
            .filter(|l| !fio.notes.contains(l))
            .collect();
        d.push((
            "notes",
            format!("only fio {only_fio:?}, only iobench {only_ours:?}"),
        ));
    }
    d
}

/// The rate of the array's rated rows, per direction, in bytes a second (`rate=32m`).
const RATE: u64 = 32 << 20;

/// The least runtime, in ms, a rated job's report allows: each direction moves at most
/// `RATE` bytes a second, so the busier one sets it.
fn rate_floor_ms(job: &serde_json::Value) -> u64 {
    ["read", "write"]
        .iter()
        .map(|d| job[*d]["io_bytes"].as_u64().unwrap_or(0) * 1000 / RATE)
        .max()
        .unwrap_or(0)
}

/// A report's percentiles without samples, or samples without percentiles, in any
/// direction of one job.
fn percentiles_follow_samples(job: &serde_json::Value, keys: &BTreeSet<String>) -> Option<String> {
    for dir in ["read", "write", "trim", "sync"] {
        for lat in ["clat_ns", "lat_ns"] {
            let Some(n) = job[dir][lat]["N"].as_u64() else {
                continue;
            };
            let has = keys.contains(&format!(".{dir}.{lat}.percentile"));
            // fio prints a sync's lat percentiles and a direction's clat ones only.
            let asks = (dir == "sync") == (lat == "lat_ns");
            if asks && has != (n > 0) {
                return Some(format!("{dir}.{lat}: N {n}, percentiles {has}"));
            }
        }
    }
    None
}

/// Where two iologs differ, in the row's terms: equal line for line where the order is
/// fixed and the length too; a common prefix for timed ones; as multisets otherwise.
fn log_diff(row: &Row, fio: &[String], ours: &[String]) -> Option<String> {
    if ours.is_empty() && !fio.is_empty() {
        return Some(format!("fio logged {} I/Os, iobench none", fio.len()));
    }
    let exact_len =
        row.exact() && row.get("verify") == "none" && (row.ordered() || row.get("fsync") == "0");
    if exact_len && fio.len() != ours.len() {
        return Some(format!("fio {} lines, iobench {}", fio.len(), ours.len()));
    }
    // A rated mix's clock decides which blocks are written, so which the verify reads
    // back: with verify, only the lengths above compare.
    if row.rated_mix() && row.get("verify") != "none" {
        return None;
    }
    let n = fio.len().min(ours.len());
    if row.ordered() {
        if let Some(at) = (0..n).find(|&i| fio[i] != ours[i]) {
            return Some(format!(
                "line {at}: fio '{}', iobench '{}'",
                fio[at], ours[at]
            ));
        }
        return None;
    }
    // In flight at once: compare the shorter log's lines, less the last depth's worth,
    // with the other log's first lines, as multisets.
    let depth: usize = row.get("iodepth").parse().unwrap();
    let keep = if exact_len {
        n
    } else {
        n.saturating_sub(2 * depth)
    };
    let bag = |l: &[String]| -> BTreeMap<String, i64> {
        let mut m = BTreeMap::new();
        for x in l {
            *m.entry(x.clone()).or_insert(0) += 1;
        }
        m
    };
    let (short, long) = if fio.len() <= ours.len() {
        (fio, ours)
    } else {
        (ours, fio)
    };
    // The syncs, as many as free slots were found (see `compare`), are left out.
    let rw = |l: &[String]| -> Vec<String> {
        l.iter()
            .filter(|x| !x.contains(" sync "))
            // A rated mixed job's directions follow the clock: offsets and sizes compare.
            .map(|x| {
                if row.rated_mix() {
                    x.replace(" read ", " io ").replace(" write ", " io ")
                } else {
                    x.clone()
                }
            })
            .collect()
    };
    let (short, long) = (rw(&short[..keep]), rw(&long[..n]));
    let (a, b) = (bag(&short), bag(&long));
    let missing: Vec<_> = a
        .iter()
        .filter(|(k, &c)| b.get(*k).copied().unwrap_or(0) < c)
        .map(|(k, _)| k.clone())
        .take(3)
        .collect();
    (!missing.is_empty()).then(|| format!("not in the other log: {missing:?}"))
}

/// Differences known and written down as open in docs/device-work.md: the check and the
/// rows it applies to. A row that shows one of these passes with a message; any other
/// difference fails.
fn known_open(row: &Row, check: &str) -> Option<&'static str> {
    let writes = !matches!(row.get("rw"), "read" | "randread");
    // A clock (runtime or ramp) decides what is counted, and fio's mmap writes are far
    // slower than iobench's: the counts, and which reads fall after the ramp, differ.
    let clocked = row.timed() || row.get("ramp") != "0";
    if matches!(check, "count" | "keys") && row.engine() == "mmap" && clocked && writes {
        return Some("device-work.md, open: mmap writes (rows 37, 41)");
    }
    None
}

/// The rows to run: all (`IOBENCH_PAIRWISE_FULL=1`), the listed ones
/// (`IOBENCH_PAIRWISE_ROWS=3,17`), a seeded draw (`IOBENCH_PAIRWISE_SEED=N`), or by
/// default the `SAMPLE` rows that cover the most pairs, taken greedily.
fn chosen(rows: &[Vec<usize>]) -> (Vec<usize>, String) {
    const SAMPLE: usize = 20;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if env("IOBENCH_PAIRWISE_FULL").as_deref() == Some("1") {
        return ((0..rows.len()).collect(), "the whole array".into());
    }
    if let Some(list) = env("IOBENCH_PAIRWISE_ROWS") {
        let pick: Vec<usize> = list
            .split(',')
            .map(|x| {
                x.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|&i| i < rows.len())
                    .unwrap_or_else(|| {
                        panic!(
                            "IOBENCH_PAIRWISE_ROWS: '{x}' is not a row (0..{})",
                            rows.len()
                        )
                    })
            })
            .collect();
        return (pick, format!("rows {list}"));
    }
    if let Some(seed) = env("IOBENCH_PAIRWISE_SEED") {
        let mut s: u64 = seed
            .parse::<u64>()
            .unwrap_or_else(|_| panic!("IOBENCH_PAIRWISE_SEED: '{seed}' is not a number"))
            .max(1);
        let mut left: Vec<usize> = (0..rows.len()).collect();
        let mut pick = Vec::new();
        while pick.len() < SAMPLE.min(rows.len()) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            pick.push(left.remove((s % left.len() as u64) as usize));
        }
        pick.sort_unstable();
        return (pick, format!("seed {seed}'s sample"));
    }
    let mut left: BTreeSet<_> = rows.iter().flat_map(|r| row_pairs(r)).collect();
    let mut pick = Vec::new();
    while pick.len() < SAMPLE.min(rows.len()) {
        let best = (0..rows.len())
            .filter(|i| !pick.contains(i))
            .max_by_key(|&i| {
                (
                    row_pairs(&rows[i])
                        .iter()
                        .filter(|p| left.contains(p))
                        .count(),
                    std::cmp::Reverse(i),
                )
            })
            .unwrap();
        for p in row_pairs(&rows[best]) {
            left.remove(&p);
        }
        pick.push(best);
    }
    pick.sort_unstable();
    (pick, "the default sample".into())
}

/// The array covers every allowed pair, holds no forbidden one, and is the same on every
/// run (the generator has no randomness).
#[test]
fn the_array_covers_every_pair() {
    let rows = generate();
    let cons = constraints();
    let want = all_pairs(&cons);
    let all: Vec<&Vec<usize>> = rows.iter().collect();
    let miss = misses(&all, &want);
    assert!(
        miss.is_empty(),
        "pairs missed: {:?}",
        miss.iter().map(pair_name).collect::<Vec<_>>()
    );
    for r in &rows {
        for p in row_pairs(r) {
            assert!(
                allowed(&cons, (p.0, p.1), (p.2, p.3)),
                "row {} holds the forbidden {}",
                describe(r),
                pair_name(&p)
            );
        }
    }
    assert_eq!(rows, generate(), "the generator is deterministic");
    // Fewer rows than all pairs of the two largest factors would be impossible; far more
    // would mean the greedy choice is broken.
    assert!(
        rows.len() >= 8 * 6 && rows.len() <= 80,
        "{} rows",
        rows.len()
    );
}

#[test]
fn pairwise_rows_do_what_fio_does() {
    let Some(_) = common::fio() else { return };
    let rows = generate();
    let cons = constraints();
    let want = all_pairs(&cons);
    println!(
        "pairwise: {} factors, {} rows, {} pairs",
        FACTORS.len(),
        rows.len(),
        want.len()
    );
    for (a, b, why) in &cons {
        println!(
            "  constraint: {}={} × {}={}: {why}",
            FACTORS[a.0].name,
            FACTORS[a.0].values[a.1],
            FACTORS[b.0].name,
            FACTORS[b.0].values[b.1]
        );
    }
    for (i, r) in rows.iter().enumerate() {
        println!("  row {i:2}: {}", describe(r));
    }
    let all: Vec<&Vec<usize>> = rows.iter().collect();
    let miss = misses(&all, &want);
    println!(
        "  pairs missed by the array: {}",
        if miss.is_empty() {
            "none".to_string()
        } else {
            miss.iter().map(pair_name).collect::<Vec<_>>().join(", ")
        }
    );
    assert!(miss.is_empty(), "the array misses pairs");
    let (pick, what) = chosen(&rows);
    let sample: Vec<&Vec<usize>> = pick.iter().map(|&i| &rows[i]).collect();
    println!(
        "running {what}: {} rows {pick:?}, covering {} of {} pairs",
        pick.len(),
        want.len() - misses(&sample, &want).len(),
        want.len()
    );
    let base = common::scratch("pairwise");
    let mut failed = Vec::new();
    let mut passed = 0;
    for &i in &pick {
        let row = Row(&rows[i]);
        let fio = run_row(common::fio().unwrap(), &row, &base.join(format!("fio-{i}")));
        let ours = run_row(common::iobench(), &row, &base.join(format!("iob-{i}")));
        // A size-bound job with a ramp: what the job does without it bounds the counts.
        let whole = (!row.timed() && row.get("ramp") != "0").then(|| {
            let mut plain = rows[i].clone();
            plain[factor("ramp")] = value(factor("ramp"), "0");
            run_row(
                common::iobench(),
                &Row(&plain),
                &base.join(format!("whole-{i}")),
            )
        });
        let diffs = compare(&row, &fio, &ours, whole.as_ref());
        let mut bad = Vec::new();
        for (check, what) in &diffs {
            match known_open(&row, check) {
                Some(doc) => println!("  row {i}: known open ({doc}): {check}: {what}"),
                None => bad.push(format!("{check}: {what}")),
            }
        }
        println!(
            "  row {i:2} {}: read {}/{} write {}/{} sync {}/{} (fio/iobench)",
            if bad.is_empty() { "ok  " } else { "FAIL" },
            ios(&fio.json, "read"),
            ios(&ours.json, "read"),
            ios(&fio.json, "write"),
            ios(&ours.json, "write"),
            ios(&fio.json, "sync"),
            ios(&ours.json, "sync"),
        );
        if bad.is_empty() {
            passed += 1;
        } else {
            for b in &bad {
                println!("      {b}");
            }
            failed.push(format!(
                "row {i} ({}):\n    {}",
                describe(&rows[i]),
                bad.join("\n    ")
            ));
        }
    }
    println!("pairwise: {passed} of {} rows pass", pick.len());
    let _ = std::fs::remove_dir_all(&base);
    assert!(
        failed.is_empty(),
        "{} of {} rows differ from fio (rerun one with IOBENCH_PAIRWISE_ROWS=N):\n{}",
        failed.len(),
        pick.len(),
        failed.join("\n")
    );
}
