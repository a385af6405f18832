//! Reports of one run made on many hosts at once, as fio prints them for `--client`: each
//! host's own report (its jobs, its groups, its disks), then an "All clients" total per
//! reporting group, in the normal format and in JSON's `client_stats` layout.
//!
//! Shared by the MPI runner (`src/cluster`, one client per rank) and fio's client/server
//! (one client per server and port). The totals are exact: the hosts' full statistics are
//! merged with the same `+=` as a group's clones, so latency histograms add bin by bin
//! (exact percentiles), bytes and I/Os add, and run times take the longest.
//!
//! Beyond fio (optional, see [`Extras`]; `Extras::default()` is fio's own layout): a
//! `hostname=…` line before each host's report, percentiles in the totals, and per group
//! and direction the throughput until the first host finished and until the last did, and
//! the spread of the hosts' own throughput, which shows a straggler.
//!
//! Where fio 3.33 is wrong this is not: its "All clients" merges every group into one
//! block (here one block per group) and prints its bandwidth without units
//! (`BW=154Mi (162M)`; here `BW=154MiB/s (162MB/s)`).

// The MPI runner (src/cluster/mpi.rs) is this module's one user outside its tests: without
// the `mpi` feature its items are built but unused.
#![cfg_attr(not(feature = "mpi"), allow(dead_code))]

use super::json::{self, Obj, Value};
use super::{ctime, normal, VERSION};
use crate::job::Job;
use crate::num::{fw, num2str, Unit};
use crate::stats::disk::DiskUtil;
use crate::stats::group::{GroupStats, RunSummary};
use crate::stats::JobStats;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// Which client a report came from: an MPI rank, or a fio server's port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClientId {
    Rank(u32),
    Port(u16),
}

impl ClientId {
    /// The JSON key and value naming it (`"rank" : 1`, `"port" : 8765`).
    fn json_pair(self) -> (&'static str, i64) {
        match self {
            ClientId::Rank(r) => ("rank", r as i64),
            ClientId::Port(p) => ("port", p as i64),
        }
    }

    /// `rank 1`, `port 8765`: how the text report names the client next to its host.
    pub fn label(self) -> String {
        match self {
            ClientId::Rank(r) => format!("rank {r}"),
            ClientId::Port(p) => format!("port {p}"),
        }
    }
}

/// One host's results: its reported jobs (already merged as its own `group_reporting`
/// asks), its group totals and its disks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientStats {
    pub hostname: String,
    pub id: ClientId,
    pub threads: Vec<JobStats>,
    pub groups: Vec<GroupStats>,
    pub disks: Vec<DiskUtil>,
}

impl ClientStats {
    /// A client's stats from its run summary.
    pub fn from_summary(hostname: &str, id: ClientId, sum: &RunSummary) -> Self {
        ClientStats {
            hostname: hostname.to_string(),
            id,
            threads: sum.threads.clone(),
            groups: sum.groups.clone(),
            disks: sum.disks.clone(),
        }
    }

    /// Its results as a run summary, for the single-host renderers.
    pub fn summary(&self) -> RunSummary {
        RunSummary {
            threads: self.threads.clone(),
            groups: self.groups.clone(),
            disks: self.disks.clone(),
            elapsed_ms: 0,
            release: Default::default(),
        }
    }
}

/// What is printed beyond fio's own client report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extras {
    /// A `hostname=…, rank=…` line before each client's report (fio prints none, so its
    /// reports cannot be told apart).
    pub client_lines: bool,
    /// The first-done / last-done throughput and the per-client spread of each group.
    pub spread: bool,
    /// Percentiles in the "All clients" blocks, from the summed histograms (fio 3.33
    /// prints none there).
    pub total_percentiles: bool,
}

impl Extras {
    /// Everything on (the MPI runner's report).
    pub fn all() -> Self {
        Extras {
            client_lines: true,
            spread: true,
            total_percentiles: true,
        }
    }
}

/// The "All clients" total of one group: every client's jobs of that group merged into one
/// (fio's `jobs=` counts them), and the clients' group totals added.
#[derive(Debug, Clone)]
pub struct GroupTotal {
    pub stats: JobStats,
    pub group: GroupStats,
}

/// The totals as printed: without percentiles unless `extras` asks for them.
fn printed_totals(clients: &[ClientStats], extras: Extras) -> Vec<GroupTotal> {
    let mut totals = all_clients(clients);
    if !extras.total_percentiles {
        for t in &mut totals {
            let c = &mut t.stats.cfg;
            c.clat_percentiles = false;
            c.lat_percentiles = false;
            c.slat_percentiles = false;
        }
    }
    totals
}

/// The exact "All clients" totals, one per reporting group that any client ran.
pub fn all_clients(clients: &[ClientStats]) -> Vec<GroupTotal> {
    let ngroups = clients.iter().map(|c| c.groups.len()).max().unwrap_or(0);
    let mut out = Vec::new();
    for gid in 0..ngroups {
        let mut total: Option<JobStats> = None;
        let mut group = GroupStats::new(gid as u32);
        for c in clients {
            if let Some(g) = c.groups.get(gid) {
                group += g;
            }
            for t in c.threads.iter().filter(|t| t.groupid == gid as u32) {
                let acc = total.get_or_insert_with(|| {
                    let mut s = JobStats::new("All clients", gid as u32, t.cfg.clone());
                    s.jobs = 0;
                    s.pid = 0;
                    s.latency_depth = 0;
                    s
                });
                *acc += t;
                acc.jobs += t.jobs;
                if acc.error == 0 && t.error != 0 {
                    acc.error = t.error;
                    acc.verror = t.verror.clone();
                }
            }
        }
        if let Some(stats) = total {
            out.push(GroupTotal { stats, group });
        }
    }
    out
}

/// One client's throughput in one group and direction.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRate {
    /// Index into the clients list.
    pub client: usize,
    pub bytes: u64,
    /// When the client finished the group's I/O in this direction (its longest job), ms.
    pub done_ms: u64,
    /// bytes/s over `done_ms`.
    pub bw: u64,
}

/// The first-done / last-done figures and the spread of one group's direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub groupid: u32,
    pub ddir: usize,
    pub rates: Vec<ClientRate>,
    /// When the fastest client finished, ms, and the throughput of all clients until then
    /// (bytes/s). Unless `measured`, each client is taken at its own mean rate until then,
    /// so this is the sum of the clients' rates.
    pub first_done_ms: u64,
    pub first_done_bw: u64,
    /// True when `first_done_bw` comes from the clients' progress over time (the MPI
    /// runner's timelines) rather than from their mean rates.
    pub measured: bool,
    /// When the last client finished, ms, and all bytes over that time (fio's aggregate).
    pub last_done_ms: u64,
    pub last_done_bw: u64,
    /// Mean and standard deviation of the clients' rates, bytes/s.
    pub mean_bw: f64,
    pub stdev_bw: f64,
    /// The slowest client (the straggler) and the fastest, as indexes into the clients.
    pub slowest: usize,
    pub fastest: usize,
}

/// The spread of every group and direction that moved data, from the clients' group totals.
pub fn spreads(clients: &[ClientStats]) -> Vec<Spread> {
    let ngroups = clients.iter().map(|c| c.groups.len()).max().unwrap_or(0);
    let mut out = Vec::new();
    for gid in 0..ngroups {
        for d in 0..3 {
            let rates: Vec<ClientRate> = clients
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    let g = c.groups.get(gid)?;
                    (g.max_run[d] > 0).then(|| ClientRate {
                        client: i,
                        bytes: g.io_bytes[d],
                        done_ms: g.max_run[d],
                        bw: g.io_bytes[d] * 1000 / g.max_run[d],
                    })
                })
                .collect();
            if rates.is_empty() {
                continue;
            }
            let n = rates.len() as f64;
            let mean = rates.iter().map(|r| r.bw as f64).sum::<f64>() / n;
            let var = rates
                .iter()
                .map(|r| (r.bw as f64 - mean).powi(2))
                .sum::<f64>()
                / n;
            let first = rates.iter().map(|r| r.done_ms).min().unwrap_or(0);
            let last = rates.iter().map(|r| r.done_ms).max().unwrap_or(0);
            let bytes: u64 = rates.iter().map(|r| r.bytes).sum();
            let slowest = rates
                .iter()
                .min_by_key(|r| r.bw)
                .map(|r| r.client)
                .unwrap_or(0);
            let fastest = rates
                .iter()
                .max_by_key(|r| r.bw)
                .map(|r| r.client)
                .unwrap_or(0);
            out.push(Spread {
                groupid: gid as u32,
                ddir: d,
                first_done_ms: first,
                first_done_bw: rates.iter().map(|r| r.bw).sum(),
                measured: false,
                last_done_ms: last,
                last_done_bw: (bytes * 1000).checked_div(last).unwrap_or(0),
                mean_bw: mean,
                stdev_bw: var.sqrt(),
                slowest,
                fastest,
                rates,
            });
        }
    }
    out
}

#[cfg(test)]
/// The normal-format report: each client's own report, then the "All clients" blocks,
/// then (with `extras.spread`) each group's first-done / last-done lines.
pub fn render_normal(clients: &[ClientStats], extras: Extras) -> String {
    render_normal_with(clients, extras, &spreads(clients), Default::default())
}

/// `render_normal` with the spreads given (the MPI runner measures first-done figures),
/// in the dialect `release` of the jobs.
pub fn render_normal_with(
    clients: &[ClientStats],
    extras: Extras,
    spreads: &[Spread],
    release: crate::defs::release::FioRelease,
) -> String {
    let mut out = String::new();
    for c in clients {
        if extras.client_lines {
            let _ = writeln!(out, "\nhostname={}, {}", c.hostname, c.id.label());
        }
        let mut sum = c.summary();
        sum.release = release;
        out.push_str(&normal::render(&sum));
    }
    let now = ctime(std::time::SystemTime::now());
    for t in printed_totals(clients, extras) {
        out.push_str(&normal::render_thread(&t.stats, &t.group, &now, release));
    }
    if extras.spread {
        out.push_str(&render_spreads_of(clients, spreads));
    }
    out
}

/// `All clients group 0 (4 clients):` and, per direction, the first-done / last-done
/// throughput and the spread of the clients' own throughput with the slowest named.
pub fn render_spreads(clients: &[ClientStats]) -> String {
    render_spreads_of(clients, &spreads(clients))
}

/// `render_spreads` of the spreads given.
pub fn render_spreads_of(clients: &[ClientStats], spreads: &[Spread]) -> String {
    let mut out = String::new();
    let mut last_gid = None;
    for s in spreads {
        let Some(g) = clients
            .get(s.slowest)
            .and_then(|c| c.groups.get(s.groupid as usize))
        else {
            continue;
        };
        if last_gid != Some(s.groupid) {
            let _ = writeln!(
                out,
                "\nAll clients group {} ({} clients):",
                s.groupid,
                s.rates.len()
            );
            last_gid = Some(s.groupid);
        }
        let pow2 = g.kb_base != 1000;
        let sf = g.sig_figs as usize;
        let unit = if g.bits {
            Unit::BitPerSec
        } else {
            Unit::BytePerSec
        };
        let both = |v: u64| {
            format!(
                "{} ({})",
                num2str(v, sf, 1, pow2, unit),
                num2str(v, sf, 1, !pow2, unit)
            )
        };
        let name = |i: usize| {
            clients
                .get(i)
                .map(|c| format!("{} {}", c.hostname, c.id.label()))
                .unwrap_or_default()
        };
        let label = ["   READ", "  WRITE", "   TRIM"][s.ddir];
        let _ = writeln!(
            out,
            "{label}: first-done bw={}{} at {}msec, last-done bw={} at {}msec",
            both(s.first_done_bw),
            if s.measured { "" } else { " (est.)" },
            s.first_done_ms,
            both(s.last_done_bw),
            s.last_done_ms
        );
        let cv = if s.mean_bw > 0.0 {
            s.stdev_bw * 100.0 / s.mean_bw
        } else {
            0.0
        };
        let slow = s.rates.iter().find(|r| r.client == s.slowest);
        let fast = s.rates.iter().find(|r| r.client == s.fastest);
        let _ = writeln!(
            out,
            "   per-client bw: min={} [{}], max={} [{}], avg={}, stdev={}%",
            both(slow.map(|r| r.bw).unwrap_or(0)),
            name(s.slowest),
            both(fast.map(|r| r.bw).unwrap_or(0)),
            name(s.fastest),
            both(s.mean_bw as u64),
            fw(0, 2, cv)
        );
    }
    out
}

/// A job object with the client's `hostname` and `rank`/`port` added and the keys fio's
/// client report leaves out (`eta`, `elapsed`) removed.
fn client_job(mut obj: Value, hostname: &str, id: ClientId) -> Value {
    if let Value::Obj(pairs) = &mut obj {
        pairs.retain(|(k, _)| k != "eta" && k != "elapsed");
        pairs.push(("hostname".into(), Value::Str(hostname.to_string())));
        let (k, v) = id.json_pair();
        pairs.push((k.into(), Value::Int(v)));
    }
    obj
}

#[cfg(test)]
/// The JSON document: fio's `client_stats` array (each client's jobs, then one "All
/// clients" object per group, named after the last client as fio does), `disk_util` with
/// each disk's client, and with `extras.spread` a `client_spread` array beyond fio.
pub fn json_value(jobs: &[Job], clients: &[ClientStats], plus: bool, extras: Extras) -> Value {
    json_value_with(jobs, clients, plus, extras, &spreads(clients))
}

/// `json_value` with the spreads given.
pub fn json_value_with(
    jobs: &[Job],
    clients: &[ClientStats],
    plus: bool,
    extras: Extras,
    spreads: &[Spread],
) -> Value {
    let now = std::time::SystemTime::now();
    let since = now
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    // The dialect of the report: the jobs' (they share the command line's).
    let release = jobs.first().map(|j| j.raw.release).unwrap_or_default();
    let mut root = Obj::new();
    root.str("fio version", VERSION)
        .int("timestamp", since.as_secs())
        .str("time", ctime(now).trim_end_matches('\n'));
    root.obj("global options", json::global_opts(jobs));
    let mut arr = Vec::new();
    for c in clients {
        for t in &c.threads {
            let Some(g) = c.groups.get(t.groupid as usize) else {
                continue;
            };
            let o = json::thread_obj(t, g, jobs.get(t.job_index), 0, plus, release);
            arr.push(client_job(o.into_value(), &c.hostname, c.id));
        }
    }
    if let Some(last) = clients.last() {
        for t in printed_totals(clients, extras) {
            let o = json::thread_obj(&t.stats, &t.group, None, 0, plus, release);
            arr.push(client_job(o.into_value(), &last.hostname, last.id));
        }
    }
    root.arr("client_stats", arr);
    let mut disks = Vec::new();
    for c in clients {
        for d in json::disk_values(&c.summary()) {
            disks.push(client_job(d, &c.hostname, c.id));
        }
    }
    if !disks.is_empty() {
        root.arr("disk_util", disks);
    }
    if extras.spread {
        let list = spreads
            .iter()
            .map(|s| spread_obj(clients, s).into_value())
            .collect();
        root.arr("client_spread", list);
    }
    root.into_value()
}

/// One group's direction in `client_spread`.
fn spread_obj(clients: &[ClientStats], s: &Spread) -> Obj {
    let mut o = Obj::new();
    o.int("groupid", s.groupid)
        .str("ddir", ["read", "write", "trim"][s.ddir])
        .int("first_done_ms", s.first_done_ms)
        .int("first_done_bw_bytes", s.first_done_bw)
        .int("first_done_measured", s.measured as i64)
        .int("last_done_ms", s.last_done_ms)
        .int("last_done_bw_bytes", s.last_done_bw)
        .float("mean_bw_bytes", s.mean_bw)
        .float("stdev_bw_bytes", s.stdev_bw);
    let per = s
        .rates
        .iter()
        .filter_map(|r| {
            let c = clients.get(r.client)?;
            let mut p = Obj::new();
            p.str("hostname", &c.hostname);
            let (k, v) = c.id.json_pair();
            p.int(k, v)
                .int("io_bytes", r.bytes)
                .int("runtime", r.done_ms)
                .int("bw_bytes", r.bw);
            Some(p.into_value())
        })
        .collect();
    o.arr("clients", per);
    for (key, i) in [("slowest", s.slowest), ("fastest", s.fastest)] {
        if let Some(c) = clients.get(i) {
            let (_, v) = c.id.json_pair();
            let mut p = Obj::new();
            p.str("hostname", &c.hostname).int(c.id.json_pair().0, v);
            o.obj(key, p);
        }
    }
    o
}

#[cfg(test)]
/// The JSON document as fio lays it out (with a trailing newline).
pub fn render_json(jobs: &[Job], clients: &[ClientStats], plus: bool, extras: Extras) -> String {
    let mut out = String::new();
    json::print(&mut out, &json_value(jobs, clients, plus, extras), 0);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defs::Ddir;
    use crate::job::reportopts::StatsConfig;

    /// A client that ran one job of group 0 doing `n` reads of 4 KiB at latencies
    /// `base..base+n` µs over `ms` milliseconds.
    fn client(host: &str, rank: u32, n: u64, base_us: u64, ms: u64) -> ClientStats {
        let mut t = JobStats::new("job", 0, StatsConfig::default());
        for i in 0..n {
            t.record_io(Ddir::Read, 4096, 0, (base_us + i) * 1000, i * 1_000_000);
        }
        t.set_runtime_ms(Ddir::Read, ms);
        t.set_total_runtime_ms(ms);
        let sum = crate::stats::group::summarize(
            &[],
            &crate::stats::RunOutcome {
                results: vec![t],
                signal: None,
            },
        );
        ClientStats::from_summary(host, ClientId::Rank(rank), &sum)
    }

    #[test]
    fn all_clients_sums_histograms_bytes_and_takes_the_longest_runtime() {
        let cs = vec![
            client("a", 0, 100, 10, 1000),
            client("b", 1, 300, 500, 3000),
        ];
        let tot = all_clients(&cs);
        assert_eq!(tot.len(), 1);
        let t = &tot[0].stats;
        assert_eq!(t.name, "All clients");
        assert_eq!(t.jobs, 2);
        assert_eq!(t.dir[0].ios, 400);
        assert_eq!(t.dir[0].bytes, 400 * 4096);
        assert_eq!(t.dir[0].runtime_ms, 3000);
        let mut want = cs[0].threads[0].dir[0].hist[1].clone();
        want.merge(&cs[1].threads[0].dir[0].hist[1]);
        assert_eq!(t.dir[0].hist[1], want);
        assert_eq!(t.dir[0].hist[1].total(), 400);
        // The median of the merged histogram lies in the slower client's range: an exact
        // merge, not an average of the two clients' medians.
        let p50 = t.dir[0].hist[1].percentiles(&[50.0], 400)[0];
        assert!((500_000..800_000).contains(&p50), "p50 {p50}");
        let g = &tot[0].group;
        assert_eq!(g.io_bytes[0], 400 * 4096);
        assert_eq!(g.max_run[0], 3000);
        assert_eq!(g.min_run[0], 1000);
        assert_eq!(g.agg[0], 400 * 4096 * 1000 / 3000);
    }

    #[test]
    fn groups_get_their_own_totals() {
        let mut c = client("a", 0, 10, 10, 100);
        let mut t2 = c.threads[0].clone();
        t2.groupid = 1;
        c.threads.push(t2);
        let mut g1 = c.groups[0].clone();
        g1.groupid = 1;
        c.groups.push(g1);
        let tot = all_clients(&[c.clone(), c]);
        assert_eq!(tot.len(), 2);
        assert_eq!(tot[1].stats.groupid, 1);
        assert_eq!(tot[1].stats.dir[0].ios, 20);
    }

    #[test]
    fn spread_names_the_straggler_and_first_and_last_done() {
        let cs = vec![client("a", 0, 100, 10, 1000), client("b", 1, 100, 10, 4000)];
        let s = &spreads(&cs)[0];
        assert_eq!(s.slowest, 1);
        assert_eq!(s.fastest, 0);
        assert_eq!(s.first_done_ms, 1000);
        assert_eq!(s.last_done_ms, 4000);
        let (a, b) = (409_600u64, 409_600 * 1000 / 4000);
        assert_eq!(s.first_done_bw, a + b);
        assert_eq!(s.last_done_bw, 2 * 409_600 * 1000 / 4000);
        let text = render_spreads(&cs);
        assert!(text.contains("All clients group 0 (2 clients):"), "{text}");
        assert!(text.contains("[b rank 1]"), "{text}");
        assert!(
            text.contains("first-done bw=500KiB/s (512kB/s) (est.) at 1000msec"),
            "{text}"
        );
    }

    #[test]
    fn normal_report_has_each_client_then_all_clients() {
        let cs = vec![client("a", 0, 10, 10, 100), client("b", 1, 10, 10, 100)];
        let text = render_normal(&cs, Extras::all());
        let a = text.find("hostname=a, rank 0").expect("client a");
        let b = text.find("hostname=b, rank 1").expect("client b");
        let all = text
            .find("All clients: (groupid=0, jobs=2): err= 0: pid=0:")
            .expect("all clients");
        assert!(a < b && b < all, "{text}");
        assert_eq!(text.matches("Run status group 0").count(), 2);
        // fio's own layout: no client lines, no spread.
        let plain = render_normal(&cs, Extras::default());
        assert!(!plain.contains("hostname="));
        assert!(!plain.contains("first-done"));
        assert!(plain.contains("All clients: (groupid=0, jobs=2)"));
        // fio prints no percentiles in All clients; iobench's own report does.
        let total = |t: &str| t[t.find("All clients:").unwrap()..].to_string();
        assert!(!total(&plain).contains("percentiles"), "{plain}");
        assert!(total(&text).contains("clat percentiles"), "{text}");
    }

    #[test]
    fn json_has_fios_client_stats_layout() {
        let cs = vec![client("a", 0, 10, 10, 100), client("b", 3, 10, 10, 100)];
        let text = render_json(&[], &cs, false, Extras::all());
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let arr = v["client_stats"].as_array().expect("client_stats");
        assert_eq!(arr.len(), 3);
        assert_eq!(arr[0]["hostname"], "a");
        assert_eq!(arr[0]["rank"], 0);
        assert_eq!(arr[1]["rank"], 3);
        assert!(arr[0].get("elapsed").is_none() && arr[0].get("eta").is_none());
        assert_eq!(arr[2]["jobname"], "All clients");
        assert_eq!(arr[2]["hostname"], "b");
        assert_eq!(arr[2]["read"]["total_ios"], 20);
        assert_eq!(arr[2]["read"]["io_bytes"], 20 * 4096);
        assert!(v.get("jobs").is_none());
        assert_eq!(
            v["client_spread"][0]["clients"].as_array().unwrap().len(),
            2
        );
        // A fio server's client is named by port.
        let mut p = cs.clone();
        p[0].id = ClientId::Port(8765);
        let text = render_json(&[], &p, false, Extras::default());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["client_stats"][0]["port"], 8765);
        assert!(v.get("client_spread").is_none());
        assert!(v["client_stats"][2]["read"]["clat_ns"]
            .get("percentile")
            .is_none());
    }

    #[test]
    fn client_stats_travel_through_serde() {
        let c = client("a", 2, 50, 10, 100);
        let wire = serde_json::to_vec(&c).unwrap();
        let back: ClientStats = serde_json::from_slice(&wire).unwrap();
        assert_eq!(back.threads[0].dir[0].hist[1], c.threads[0].dir[0].hist[1]);
        assert_eq!(back.groups, c.groups);
        assert_eq!(back.id, ClientId::Rank(2));
    }
}
