//! fio's JSON and JSON+ output: the same keys, nesting, value types and number formatting
//! (`"key" : value`, two-space indent, floats as `%f`); JSON+ adds each latency's histogram
//! buckets (`bins`).

use super::normal::{agg_percent, cpu_percent, dist, LAT_LABELS};
use super::{ctime, version_line};
use crate::job::reportopts::Unified;
use crate::job::Job;
use crate::stats::group::{GroupStats, RunSummary};
use crate::stats::hist::{val_of, Hist};
use crate::stats::iostat::IoStat;
use crate::stats::JobStats;
use std::fmt::Write;

/// A JSON value as fio builds it: integers and floats are distinct types.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Float(f64),
    Obj(Vec<(String, Value)>),
    Arr(Vec<Value>),
}

impl Value {
    /// The member `key` of an object (`None` for other values or a missing key).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Obj(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A number as `f64` (integers too).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The value as `serde_json` holds it (integers stay integers), for callers that
    /// build their own documents around fio's.
    pub fn to_serde(&self) -> serde_json::Value {
        match self {
            Value::Str(s) => serde_json::Value::String(s.clone()),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Value::Obj(pairs) => serde_json::Value::Object(
                pairs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_serde()))
                    .collect(),
            ),
            Value::Arr(vals) => {
                serde_json::Value::Array(vals.iter().map(Value::to_serde).collect())
            }
        }
    }

    /// The value of a `serde_json` document, for adding it to fio's layout: floats keep
    /// fio's `%f` printing, integers stay integers, booleans become fio's 0/1, and members
    /// that are `null` are left out (fio's printer has no null).
    pub fn from_serde(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Str(String::new()),
            serde_json::Value::Bool(b) => Value::Int(*b as i64),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(0.0)),
            },
            serde_json::Value::String(s) => Value::Str(s.clone()),
            serde_json::Value::Array(a) => Value::Arr(
                a.iter()
                    .filter(|v| !v.is_null())
                    .map(Value::from_serde)
                    .collect(),
            ),
            serde_json::Value::Object(m) => Value::Obj(
                m.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), Value::from_serde(v)))
                    .collect(),
            ),
        }
    }
}

/// An ordered JSON object under construction.
#[derive(Debug, Default)]
pub struct Obj(Vec<(String, Value)>);

impl Obj {
    pub fn new() -> Self {
        Obj(Vec::new())
    }
    pub fn int(&mut self, k: &str, v: impl TryInto<i64>) -> &mut Self {
        let v = v.try_into().unwrap_or(i64::MAX);
        self.0.push((k.to_string(), Value::Int(v)));
        self
    }
    pub fn float(&mut self, k: &str, v: f64) -> &mut Self {
        self.0.push((k.to_string(), Value::Float(v)));
        self
    }
    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        self.0.push((k.to_string(), Value::Str(v.to_string())));
        self
    }
    pub fn obj(&mut self, k: &str, v: Obj) -> &mut Self {
        self.0.push((k.to_string(), Value::Obj(v.0)));
        self
    }
    pub fn arr(&mut self, k: &str, v: Vec<Value>) -> &mut Self {
        self.0.push((k.to_string(), Value::Arr(v)));
        self
    }
    pub fn into_value(self) -> Value {
        Value::Obj(self.0)
    }
}

/// A JSON string's body: fio escapes only `\\` and `"`, which leaves a job or file name
/// with a control character (a tab, an escape) an invalid document; those are escaped too,
/// so every name gives valid JSON while names without them print as fio's.
fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '"' => {
                o.push('\\');
                o.push(c);
            }
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            '\r' => o.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// Prints `v` as fio does; `level` is the nesting depth of the value's container.
pub fn print(out: &mut String, v: &Value, level: usize) {
    match v {
        Value::Str(s) => {
            let _ = write!(out, "\"{}\"", escape(s));
        }
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => {
            let _ = write!(out, "{}", cfloat(*f));
        }
        Value::Obj(pairs) => {
            out.push_str("{\n");
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                let _ = write!(out, "\"{}\" : ", escape(k));
                print(out, v, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push('}');
        }
        Value::Arr(vals) => {
            out.push_str("[\n");
            for (i, v) in vals.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                print(out, v, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push(']');
        }
    }
}

/// C's `%f`: six decimals, with `nan`/`inf` spelled as glibc spells them.
pub fn cfloat(f: f64) -> String {
    if f.is_nan() {
        if f.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        }
    } else if f.is_infinite() {
        if f < 0.0 {
            "-inf".into()
        } else {
            "inf".into()
        }
    } else {
        format!("{f:.6}")
    }
}

fn lat_obj(t: &JobStats, percentiles: bool, s: &IoStat, hist: &Hist, plus: bool) -> Obj {
    let mut o = Obj::new();
    let (min, max, mean, dev) = match s.summary() {
        Some(m) => (m.min, m.max, m.mean, m.dev),
        None => (0, 0, 0.0, 0.0),
    };
    o.int("min", min)
        .int("max", max)
        .float("mean", mean)
        .float("stddev", dev)
        .int("N", s.samples);
    if percentiles && s.samples > 0 {
        let list = &t.cfg.percentiles.list;
        let vals = hist.percentiles(list, s.samples);
        let mut p = Obj::new();
        for (pc, v) in list.iter().zip(vals) {
            p.int(&format!("{pc:.6}"), v);
        }
        o.obj("percentile", p);
        if plus {
            let mut b = Obj::new();
            for (i, &c) in hist.buckets().iter().enumerate() {
                if c > 0 {
                    b.int(&val_of(i).to_string(), c);
                }
            }
            o.obj("bins", b);
        }
    }
    o
}

fn ddir_obj(t: &JobStats, g: &GroupStats, d: usize, plus: bool) -> Obj {
    let ds = &t.dir[d];
    let mut o = Obj::new();
    let bw_bytes = (ds.bytes * 1000).checked_div(ds.runtime_ms).unwrap_or(0);
    let iops = if ds.runtime_ms > 0 {
        1000.0 * ds.ios as f64 / ds.runtime_ms as f64
    } else {
        0.0
    };
    o.int("io_bytes", ds.bytes)
        .int("io_kbytes", ds.bytes >> 10)
        .int("bw_bytes", bw_bytes)
        .int("bw", bw_bytes / 1024)
        .float("iops", iops)
        .int("runtime", ds.runtime_ms)
        .int("total_ios", ds.ios)
        .int("short_ios", ds.short)
        .int("drop_ios", ds.dropped);
    o.obj(
        "slat_ns",
        lat_obj(t, t.cfg.slat_percentiles, &ds.slat, &ds.hist[0], plus),
    );
    o.obj(
        "clat_ns",
        lat_obj(t, t.cfg.clat_percentiles, &ds.clat, &ds.hist[1], plus),
    );
    o.obj(
        "lat_ns",
        lat_obj(t, t.cfg.lat_percentiles, &ds.lat, &ds.hist[2], plus),
    );
    // Open-loop arrivals (iobench's `arrival=`): latency from the scheduled start, and
    // the starts the full queue held back. Absent otherwise, so plain runs stay fio's.
    if t.cfg.sched_lat {
        let mut s = lat_obj(t, true, &ds.sched, &ds.sched_hist, plus);
        s.int("missed_starts", ds.missed_starts)
            .int("backlog_max", ds.backlog_max);
        o.obj("sched_lat_ns", s);
    }
    // Per-priority latencies (cmdprio), once two priorities have samples, as fio's `prios`.
    let prios = ds.prios_to_show();
    if !prios.is_empty() {
        let key = if t.cfg.lat_percentiles {
            "lat_ns"
        } else {
            "clat_ns"
        };
        let pct = t.cfg.clat_percentiles || t.cfg.lat_percentiles;
        let arr = prios
            .iter()
            .map(|p| {
                let mut po = Obj::new();
                po.int("prioclass", p.ioprio >> 13)
                    .int("prio", p.ioprio & 7)
                    .obj(key, lat_obj(t, pct, &p.lat, &p.hist, plus));
                po.into_value()
            })
            .collect();
        o.arr("prios", arr);
    }
    let (min, max, per, mean, dev) = match ds.bw.summary() {
        Some(m) => (m.min, m.max, agg_percent(g, d, m.mean), m.mean, m.dev),
        None => (0, 0, 0.0, 0.0, 0.0),
    };
    o.int("bw_min", min)
        .int("bw_max", max)
        .float("bw_agg", per)
        .float("bw_mean", mean)
        .float("bw_dev", dev)
        .int("bw_samples", ds.bw.samples);
    let (min, max, mean, dev) = match ds.iops.summary() {
        Some(m) => (m.min, m.max, m.mean, m.dev),
        None => (0, 0, 0.0, 0.0),
    };
    o.int("iops_min", min)
        .int("iops_max", max)
        .float("iops_mean", mean)
        .float("iops_stddev", dev)
        .int("iops_samples", ds.iops.samples);
    o
}

fn opts_obj(opts: &[crate::defs::raw::RawOpt]) -> Obj {
    let mut o = Obj::new();
    for opt in opts {
        // Bare flags (`--group_reporting`) carry no value and fio leaves them out.
        let Some(v) = opt.value.as_deref() else {
            continue;
        };
        let v = opt.def.shown(v);
        if let Some(slot) = o.0.iter_mut().find(|(k, _)| k == opt.def.name) {
            slot.1 = Value::Str(v.to_string());
        } else {
            o.str(opt.def.name, v);
        }
    }
    o
}

/// The `job options` of a job: what its own section (or `--name` group) set.
fn job_opts(job: &Job) -> Obj {
    let mut o = Obj::new();
    if job.raw.origin.file.is_none() {
        o.str("name", &job.name);
    }
    let own = opts_obj(&job.raw.opts[job.raw.globals.min(job.raw.opts.len())..]);
    o.0.extend(own.0);
    o
}

/// One reported job's object.
pub fn thread_obj(
    t: &JobStats,
    g: &GroupStats,
    job: Option<&Job>,
    elapsed_ms: u64,
    plus: bool,
    release: crate::defs::release::FioRelease,
) -> Obj {
    let mut o = Obj::new();
    let elapsed = elapsed_ms.div_ceil(1000);
    // The job's own dialect; a job not known here (a server's, "All clients") is
    // reported in `release`, the dialect the report is written in.
    let rel = job.map_or(release, |j| j.raw.release);
    o.str("jobname", &t.name).int("groupid", t.groupid);
    if rel.reports_job_start() {
        o.int("job_start", t.job_start);
    }
    o.int("error", t.error)
        .int("eta", if elapsed >= 3 { 0 } else { i32::MAX as i64 })
        .int("elapsed", elapsed);
    if let Some(job) = job {
        let jo = job_opts(job);
        if !jo.0.is_empty() {
            o.obj("job options", jo);
        }
    }
    let mixed = t.cfg.unified == Unified::Mixed;
    for (d, name) in ["read", "write", "trim"].iter().enumerate() {
        if mixed && d > 0 {
            continue;
        }
        o.obj(if mixed { "mixed" } else { name }, ddir_obj(t, g, d, plus));
    }
    if !mixed {
        let mut s = Obj::new();
        s.int("total_ios", t.sync_ios);
        s.obj(
            "lat_ns",
            lat_obj(
                t,
                t.cfg.lat_percentiles || t.cfg.clat_percentiles,
                &t.sync,
                &t.sync_hist,
                plus,
            ),
        );
        o.obj("sync", s);
    }
    if t.cfg.unified == Unified::Both {
        let m = t.mixed();
        o.obj("mixed", ddir_obj(&m, g, 0, plus));
    }
    let (usr, sys) = cpu_percent(t);
    o.int("job_runtime", t.total_run_ms)
        .float("usr_cpu", usr)
        .float("sys_cpu", sys)
        .int("ctx", t.ctx)
        .int("majf", t.majf)
        .int("minf", t.minf);
    let total = t.total_ios();
    let depth = dist(&t.depth_map, total, 0.1);
    let mut lv = Obj::new();
    for (i, v) in depth.iter().enumerate() {
        let k = if i < 6 {
            (1 << i).to_string()
        } else {
            format!(">={}", 1 << i)
        };
        lv.float(&k, *v);
    }
    o.obj("iodepth_level", lv);
    for (name, map, tot) in [
        ("iodepth_submit", &t.submit_map, t.total_submit),
        ("iodepth_complete", &t.complete_map, t.total_complete),
    ] {
        let mut m = Obj::new();
        for (i, v) in dist(map, tot, 0.1).iter().enumerate() {
            let k = match i {
                0 => "0".to_string(),
                1..=5 => (1 << (i + 1)).to_string(),
                _ => format!(">={}", 1 << i),
            };
            m.float(&k, *v);
        }
        o.obj(name, m);
    }
    for (name, map, n) in [
        ("latency_ns", &t.lat_n[..], 10),
        ("latency_us", &t.lat_u[..], 10),
        ("latency_ms", &t.lat_m[..], 12),
    ] {
        let mut m = Obj::new();
        for (i, v) in dist(map, total, 0.01).iter().enumerate().take(n) {
            m.float(LAT_LABELS[i], *v);
        }
        o.obj(name, m);
    }
    if t.continue_on_error {
        o.int("total_err", t.total_err_count)
            .int("first_error", t.first_error);
    }
    if t.latency_depth > 0 {
        o.int("latency_depth", t.latency_depth)
            .int("latency_target", t.latency_target);
        // fio 3.42 repeats the two with their units in the name.
        if rel.reports_latency_target() {
            o.int("latency_target_ns", t.latency_target);
        }
        o.float("latency_percentile", t.latency_percentile)
            .int("latency_window", t.latency_window);
        if rel.reports_latency_target() {
            o.int("latency_window_us", t.latency_window);
        }
    }
    if let Some(d) = t.description.as_deref().filter(|d| !d.is_empty()) {
        o.str("desc", d);
    }
    if let Some(b) = &t.block_life {
        let r = b.report(&t.cfg.percentiles.list);
        // fio leaves the object out while no block was trimmed.
        if !r.percentiles.is_empty() {
            let mut pct = Obj::new();
            for (p, n) in &r.percentiles {
                pct.int(&format!("{p:.6}"), *n as i64);
            }
            let mut states = Obj::new();
            for (name, n) in crate::stats::blocklife::STATE_NAMES.iter().zip(r.states) {
                states.int(name, n as i64);
            }
            let mut block = Obj::new();
            block.obj("percentiles", pct).obj("states", states);
            o.obj("block", block);
        }
    }
    if let Some(ss) = &t.steady {
        o.obj("steadystate", steady_obj(ss));
    }
    if let Some(h) = &t.obj {
        o.obj("iobench_http", obj_stats_obj(t, h, plus));
    }
    o
}

/// `iobench_http`: the http engine's own statistics (its iobench-only options): failed
/// requests by status, then each class of requests (per operation, size class, endpoint,
/// multipart stage) with its rate over the job's run time, latency and time to first
/// byte, percentiles as clat's.
fn obj_stats_obj(t: &JobStats, h: &crate::stats::objstats::ObjStats, plus: bool) -> Obj {
    let ms = t.dir.iter().map(|d| d.runtime_ms).max().unwrap_or(0);
    let class = |c: &crate::stats::objstats::Class| {
        let mut o = Obj::new();
        let bw = (c.bytes * 1000).checked_div(ms).unwrap_or(0);
        let iops = if ms > 0 {
            1000.0 * c.ios as f64 / ms as f64
        } else {
            0.0
        };
        o.int("total_ios", c.ios)
            .int("io_bytes", c.bytes)
            .int("bw_bytes", bw)
            .float("iops", iops)
            .int("errors", c.errors)
            .obj("lat_ns", lat_obj(t, true, &c.lat, &c.lat_hist, plus));
        if h.ttfb {
            o.obj("ttfb_ns", lat_obj(t, true, &c.ttfb, &c.ttfb_hist, plus));
        }
        o
    };
    let mut o = Obj::new();
    if let Some(e) = &h.errors {
        let mut eo = Obj::new();
        for (name, n) in e.named() {
            eo.int(name, n);
        }
        eo.int("total", e.total());
        o.obj("errors", eo);
    }
    o.obj("all", class(&h.all));
    for (name, classes) in h.groups() {
        let mut g = Obj::new();
        for c in classes {
            g.obj(&c.name, class(c));
        }
        o.obj(name, g);
    }
    o
}

/// The `steadystate` object: criterion, verdict and the window's samples.
fn steady_obj(ss: &crate::stats::steady::SteadyReport) -> Obj {
    let c = &ss.spec.criterion;
    let ints = |v: &[u64]| v.iter().map(|&x| Value::Int(x as i64)).collect::<Vec<_>>();
    let mut data = Obj::new();
    data.int("bw_mean", ss.bw_mean())
        .int("iops_mean", ss.iops_mean());
    // fio 3.42's latency criteria add the intervals' mean completion latencies.
    if c.measure == crate::defs::steady::Measure::Lat {
        data.int("lat_mean", ss.lat_mean())
            .arr("lat_ns", ints(&ss.lat));
    }
    data.arr("iops", ints(&ss.iops)).arr("bw", ints(&ss.bw));
    let mut o = Obj::new();
    o.str("ss", &c.label())
        .int("duration", ss.spec.dur_s)
        .int("attained", ss.attained as i64)
        .str(
            "criterion",
            &format!("{:.6}{}", ss.criterion as f32, if c.pct { "%" } else { "" }),
        )
        .float("max_deviation", ss.deviation as f32 as f64)
        .float("slope", ss.slope as f32 as f64)
        .obj("data", data);
    o
}

/// The `disk_util` array entries.
pub fn disk_values(sum: &RunSummary) -> Vec<Value> {
    sum.disks
        .iter()
        .map(|d| {
            let mut o = Obj::new();
            let s = &d.stat;
            // fio 3.36 added the sector counts.
            let sectors = sum.release >= crate::defs::release::FioRelease::V3_36;
            o.str("name", &d.name)
                .int("read_ios", s.ios[0])
                .int("write_ios", s.ios[1]);
            if sectors {
                o.int("read_sectors", s.sectors[0])
                    .int("write_sectors", s.sectors[1]);
            }
            o.int("read_merges", s.merges[0])
                .int("write_merges", s.merges[1])
                .int("read_ticks", s.ticks[0])
                .int("write_ticks", s.ticks[1])
                .int("in_queue", s.time_in_queue)
                .float("util", d.util);
            if let Some(a) = &d.aggr {
                o.int("aggr_read_ios", a.ios[0])
                    .int("aggr_write_ios", a.ios[1]);
                if sectors {
                    o.int("aggr_read_sectors", a.sectors[0])
                        .int("aggr_write_sectors", a.sectors[1]);
                }
                o.int("aggr_read_merges", a.merges[0])
                    .int("aggr_write_merge", a.merges[1])
                    .int("aggr_read_ticks", a.ticks[0])
                    .int("aggr_write_ticks", a.ticks[1])
                    .int("aggr_in_queue", a.in_queue)
                    .float("aggr_util", a.max_util);
            }
            o.into_value()
        })
        .collect()
}

/// The `global options`: what `[global]` sections or options before the first `--name` set.
pub fn global_opts(jobs: &[Job]) -> Obj {
    let mut all = Vec::new();
    for j in jobs {
        all.extend_from_slice(&j.raw.opts[..j.raw.globals.min(j.raw.opts.len())]);
    }
    opts_obj(&all)
}

/// Prints `v` with no whitespace at all.
pub fn print_line(out: &mut String, v: &Value) {
    match v {
        Value::Obj(pairs) => {
            out.push('{');
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "\"{}\":", escape(k));
                print_line(out, v);
            }
            out.push('}');
        }
        Value::Arr(vals) => {
            out.push('[');
            for (i, v) in vals.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                print_line(out, v);
            }
            out.push(']');
        }
        scalar => print(out, scalar, 0),
    }
}

/// The JSON document's value, as `render` prints it (for callers that read the results as
/// data, as a script reads fio's JSON).
pub fn document(jobs: &[Job], sum: &RunSummary, plus: bool) -> Value {
    let now = std::time::SystemTime::now();
    let since = now
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let mut root = Obj::new();
    root.str("fio version", &version_line(sum.release))
        .int("timestamp", since.as_secs())
        .int("timestamp_ms", since.as_millis() as u64)
        .str("time", ctime(now).trim_end_matches('\n'));
    let go = global_opts(jobs);
    if !go.0.is_empty() {
        root.obj("global options", go);
    }
    let mut arr = Vec::new();
    for t in &sum.threads {
        let Some(g) = sum.groups.get(t.groupid as usize) else {
            continue;
        };
        arr.push(
            thread_obj(
                t,
                g,
                jobs.get(t.job_index),
                sum.elapsed_ms,
                plus,
                sum.release,
            )
            .into_value(),
        );
    }
    root.arr("jobs", arr);
    if !sum.disks.is_empty() {
        root.arr("disk_util", disk_values(sum));
    }
    root.into_value()
}
