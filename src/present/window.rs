//! The numbers of one interval between two snapshots of a run: what each job and group
//! did since the last snapshot (not the running totals fio's interim reports carry),
//! derived from the cumulative statistics the clones publish, so the workers do nothing
//! extra. Latency percentiles come from the difference of the two histograms; min and
//! max are exact when the interval set a new extreme, else the edge of the lowest or
//! highest histogram bucket the interval filled (within 1/64 of the value).

use crate::stats::hist::{self, Hist};
use crate::stats::iostat::IoStat;
use crate::stats::{JobStats, RunOutcome};
use serde_json::{json, Map, Value};

/// The percentiles every interval reports.
pub const PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// One direction's interval numbers, summed over clones.
#[derive(Debug, Clone, Default)]
pub struct DirWindow {
    pub ios: u64,
    pub bytes: u64,
    pub total_ios: u64,
    pub total_bytes: u64,
    /// Latency samples, their sum (ns), min and max in the interval.
    pub lat_n: u64,
    pub lat_sum: f64,
    pub lat_min: u64,
    pub lat_max: u64,
    pub hist: Hist,
}

impl DirWindow {
    fn add(&mut self, o: &DirWindow) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.total_ios += o.total_ios;
        self.total_bytes += o.total_bytes;
        if o.lat_n > 0 {
            self.lat_min = if self.lat_n == 0 {
                o.lat_min
            } else {
                self.lat_min.min(o.lat_min)
            };
            self.lat_max = self.lat_max.max(o.lat_max);
        }
        self.lat_n += o.lat_n;
        self.lat_sum += o.lat_sum;
        self.hist.merge(&o.hist);
    }

    /// The interval as JSON: counts, rates over `secs`, latency summary and percentiles.
    pub fn value(&self, secs: f64, lat_key: &str) -> Value {
        let mut m = Map::new();
        let rate = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
        m.insert("ios".into(), json!(self.ios));
        m.insert("bytes".into(), json!(self.bytes));
        m.insert("iops".into(), json!(rate(self.ios)));
        m.insert("bw_bytes".into(), json!(rate(self.bytes)));
        let mut lat = Map::new();
        if self.lat_n > 0 {
            lat.insert("min".into(), json!(self.lat_min));
            lat.insert("mean".into(), json!(self.lat_sum / self.lat_n as f64));
            lat.insert("max".into(), json!(self.lat_max));
            let n = self.hist.total();
            let p = self.hist.percentiles(&PERCENTILES, n);
            for (q, v) in PERCENTILES.iter().zip(p) {
                lat.insert(format!("p{q}"), json!(v));
            }
        }
        m.insert(lat_key.into(), Value::Object(lat));
        m.insert("total_ios".into(), json!(self.total_ios));
        m.insert("total_bytes".into(), json!(self.total_bytes));
        Value::Object(m)
    }
}

/// Which latency an interval reports: completion latency (fio's default percentiles), or
/// total latency when only that one is kept.
fn lat_of(s: &JobStats, d: usize) -> (&IoStat, &Hist, &'static str) {
    let dir = &s.dir[d];
    if !dir.hist[1].is_empty() || dir.hist[2].is_empty() {
        (&dir.clat, &dir.hist[1], "clat_ns")
    } else {
        (&dir.lat, &dir.hist[2], "lat_ns")
    }
}

/// What clone `now` did since `prev` (its previous snapshot, or nothing) in direction
/// `d`. A count that went down (the ramp ended and the clone started counting again)
/// counts from zero.
pub fn clone_window(prev: Option<&JobStats>, now: &JobStats, d: usize) -> DirWindow {
    fn side(s: &JobStats, d: usize) -> Counts<'_> {
        let (lat, hist, _) = lat_of(s, d);
        Counts {
            ios: s.dir[d].ios,
            bytes: s.dir[d].bytes,
            lat,
            hist,
        }
    }
    window_of(prev.map(|p| side(p, d)), side(now, d))
}

/// One class of the http engine's requests over an interval: its group in
/// `iobench_http` (`ops`, `sizes`, `endpoints`, `multipart`), its name, its requests
/// (latency to the last byte) and, with `http_ttfb`, their time to first byte.
#[derive(Debug, Clone)]
pub struct HttpWindow {
    pub group: &'static str,
    pub name: String,
    pub lat: DirWindow,
    pub ttfb: Option<DirWindow>,
}

/// What each class of the http engine's requests (`iobench_http`) did since `prev`:
/// its operations, size classes, endpoints and multipart stages that did any, as
/// directions are. Reads the snapshot's counters only.
pub fn http_windows(prev: Option<&JobStats>, now: &JobStats) -> Vec<HttpWindow> {
    use crate::stats::objstats::Class;
    let Some(obj) = now.obj.as_deref() else {
        return Vec::new();
    };
    fn lat(c: &Class) -> Counts<'_> {
        Counts {
            ios: c.ios,
            bytes: c.bytes,
            lat: &c.lat,
            hist: &c.lat_hist,
        }
    }
    fn ttfb(c: &Class) -> Counts<'_> {
        Counts {
            ios: c.ios,
            bytes: c.bytes,
            lat: &c.ttfb,
            hist: &c.ttfb_hist,
        }
    }
    let before = prev.and_then(|p| p.obj.as_deref());
    let mut out = Vec::new();
    for (group, classes) in obj.groups() {
        for c in classes.into_iter().filter(|c| c.ios > 0) {
            let was = before
                .and_then(|o| o.groups().into_iter().find(|(g, _)| *g == group))
                .and_then(|(_, cs)| cs.into_iter().find(|x| x.name == c.name));
            out.push(HttpWindow {
                group,
                name: c.name.clone(),
                lat: window_of(was.map(lat), lat(c)),
                ttfb: obj.ttfb.then(|| window_of(was.map(ttfb), ttfb(c))),
            });
        }
    }
    out
}

/// The cumulative counts an interval is the difference of.
struct Counts<'a> {
    ios: u64,
    bytes: u64,
    lat: &'a IoStat,
    hist: &'a Hist,
}

/// The interval from `prev` to `now`; a count that went down counts from zero.
fn window_of(prev: Option<Counts>, now: Counts) -> DirWindow {
    let p = prev.filter(|p| p.ios <= now.ios);
    let (lat_now, hist_now) = (now.lat, now.hist);
    let mut w = DirWindow {
        ios: now.ios - p.as_ref().map_or(0, |p| p.ios),
        bytes: now.bytes.saturating_sub(p.as_ref().map_or(0, |p| p.bytes)),
        total_ios: now.ios,
        total_bytes: now.bytes,
        ..Default::default()
    };
    let (lat_prev, hist_prev) = match &p {
        Some(p) => (Some(p.lat), Some(p.hist)),
        None => (None, None),
    };
    w.lat_n = lat_now.samples - lat_prev.map_or(0, |l| l.samples.min(lat_now.samples));
    if w.lat_n == 0 {
        return w;
    }
    let sum = |l: &IoStat| l.mean * l.samples as f64;
    w.lat_sum = (sum(lat_now) - lat_prev.map_or(0.0, sum)).max(0.0);
    if !hist_now.is_empty() {
        let mut buckets = hist_now.buckets().to_vec();
        if let Some(hp) = hist_prev.filter(|h| !h.is_empty()) {
            for (a, b) in buckets.iter_mut().zip(hp.buckets()) {
                *a = a.saturating_sub(*b);
            }
        }
        let first = buckets.iter().position(|&c| c > 0);
        let last = buckets.iter().rposition(|&c| c > 0);
        w.hist = Hist::from_buckets(buckets);
        w.lat_min = first.map_or(0, hist::val_of);
        w.lat_max = last.map_or(0, hist::val_of);
    }
    // A new extreme in the interval is known exactly.
    match lat_prev {
        Some(lp) if lat_now.max <= lp.max => {}
        _ => w.lat_max = lat_now.max,
    }
    match lat_prev {
        Some(lp) if lat_now.min >= lp.min => {}
        _ => w.lat_min = lat_now.min,
    }
    w
}

/// The clones of an outcome keyed by (job index, k-th clone of that job), which is stable
/// between interim snapshots and the final report.
pub fn keyed(o: &RunOutcome) -> Vec<((usize, usize), &JobStats)> {
    let mut seen: std::collections::HashMap<usize, usize> = Default::default();
    o.results
        .iter()
        .map(|s| {
            let k = seen.entry(s.job_index).or_default();
            *k += 1;
            ((s.job_index, *k - 1), s)
        })
        .collect()
}

/// One job's or group's windows over the three directions.
#[derive(Debug, Clone, Default)]
pub struct Windows {
    pub name: String,
    pub groupid: u32,
    pub clones: u32,
    pub dirs: [DirWindow; 3],
    pub lat_key: &'static str,
    /// The http engine's classes (`iobench_http`), by group and name, in the order first
    /// seen; empty for any other job.
    pub http: Vec<HttpWindow>,
}

impl Windows {
    /// Adds `w` to its http class.
    fn add_http(&mut self, w: &HttpWindow) {
        match self
            .http
            .iter_mut()
            .find(|h| h.group == w.group && h.name == w.name)
        {
            Some(have) => {
                have.lat.add(&w.lat);
                match (&mut have.ttfb, &w.ttfb) {
                    (Some(a), Some(b)) => a.add(b),
                    (None, Some(b)) => have.ttfb = Some(b.clone()),
                    _ => {}
                }
            }
            None => self.http.push(w.clone()),
        }
    }
}

/// The interval between `prev` and `now`, per job (in job order) and per group.
pub fn windows(prev: &RunOutcome, now: &RunOutcome) -> (Vec<Windows>, Vec<Windows>) {
    let before: std::collections::HashMap<(usize, usize), &JobStats> =
        keyed(prev).into_iter().collect();
    let mut jobs: Vec<(usize, Windows)> = Vec::new();
    for (key, s) in keyed(now) {
        let p = before.get(&key).copied();
        let pos = match jobs.iter().position(|(ji, _)| *ji == key.0) {
            Some(i) => i,
            None => {
                jobs.push((
                    key.0,
                    Windows {
                        name: s.name.clone(),
                        groupid: s.groupid,
                        lat_key: lat_of(s, 0).2,
                        ..Default::default()
                    },
                ));
                jobs.len() - 1
            }
        };
        let w = &mut jobs[pos].1;
        w.clones += 1;
        for d in 0..3 {
            w.dirs[d].add(&clone_window(p, s, d));
        }
        for hw in http_windows(p, s) {
            w.add_http(&hw);
        }
    }
    jobs.sort_by_key(|(ji, _)| *ji);
    let jobs: Vec<Windows> = jobs.into_iter().map(|(_, w)| w).collect();
    let mut groups: Vec<Windows> = Vec::new();
    for j in &jobs {
        let g = match groups.iter_mut().find(|g| g.groupid == j.groupid) {
            Some(g) => g,
            None => {
                groups.push(Windows {
                    name: format!("group {}", j.groupid),
                    groupid: j.groupid,
                    lat_key: j.lat_key,
                    ..Default::default()
                });
                groups.last_mut().unwrap()
            }
        };
        g.clones += j.clones;
        for d in 0..3 {
            g.dirs[d].add(&j.dirs[d]);
        }
        for hw in &j.http {
            g.add_http(hw);
        }
    }
    (jobs, groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::reportopts::StatsConfig;

    fn stats_with(lats: &[u64]) -> JobStats {
        let mut s = JobStats::new("j", 0, StatsConfig::default());
        s.dir[0].hist[1] = Hist::new();
        for &l in lats {
            s.dir[0].ios += 1;
            s.dir[0].bytes += 4096;
            s.dir[0].clat.add(l);
            s.dir[0].hist[1].add(l);
        }
        s
    }

    #[test]
    fn an_interval_is_the_difference_of_two_snapshots() {
        let a = stats_with(&[1000, 2000]);
        let b = stats_with(&[1000, 2000, 3000, 5000, 4000]);
        let w = clone_window(Some(&a), &b, 0);
        assert_eq!((w.ios, w.bytes, w.total_ios), (3, 3 * 4096, 5));
        assert_eq!(w.lat_n, 3);
        assert!((w.lat_sum / 3.0 - 4000.0).abs() < 1e-6);
        assert_eq!(w.lat_max, 5000, "a new maximum is exact");
        assert_eq!(w.hist.total(), 3);
        // The interval's smallest latency (3000) was no new minimum: a bucket edge.
        assert!(
            (w.lat_min as i64 - 3000).abs() <= 3000 / 64 + 1,
            "{}",
            w.lat_min
        );
    }

    #[test]
    fn a_reset_counts_from_zero() {
        let a = stats_with(&[1000, 2000, 3000]);
        let b = stats_with(&[7000]);
        let w = clone_window(Some(&a), &b, 0);
        assert_eq!(w.ios, 1);
        assert_eq!(w.lat_max, 7000);
    }
}
