//! fio's terse (`--minimal`, `--output-format=terse`) format: one `;`-separated line per
//! reported job, versions 2 to 5, with fio's field count and order.

use super::normal::{cpu_percent, dist};
use crate::defs::percentiles::LIST_MAX_LEN;
use crate::job::reportopts::Unified;
use crate::stats::disk::DiskUtil;
use crate::stats::group::{GroupStats, RunSummary};
use crate::stats::JobStats;
use std::fmt::Write;

/// Every reported job's terse line.
pub fn render(sum: &RunSummary, ver: u32) -> String {
    let mut out = String::new();
    for t in &sum.threads {
        if let Some(g) = sum.groups.get(t.groupid as usize) {
            out.push_str(&render_thread(t, g, &sum.disks, ver, sum.release));
        }
    }
    out
}

fn lat4(out: &mut String, s: &crate::stats::iostat::IoStat) {
    match s.summary() {
        Some(m) => {
            let _ = write!(
                out,
                ";{};{};{:.6};{:.6}",
                m.min / 1000,
                m.max / 1000,
                m.mean / 1000.0,
                m.dev / 1000.0
            );
        }
        None => out.push_str(";0;0;0.000000;0.000000"),
    }
}

fn ddir(out: &mut String, t: &JobStats, g: &GroupStats, d: usize, ver: u32) {
    let ds = &t.dir[d];
    let bw = (ds.bytes * 1000).checked_div(ds.runtime_ms).unwrap_or(0) / 1024;
    let iops = (ds.ios * 1000).checked_div(ds.runtime_ms).unwrap_or(0);
    let _ = write!(out, ";{};{};{};{}", ds.bytes >> 10, bw, iops, ds.runtime_ms);
    lat4(out, &ds.slat);
    lat4(out, &ds.clat);
    let list = &t.cfg.percentiles.list;
    // With no samples fio still lists every percentile, each as 0.
    let or_zeros = |v: Vec<u64>| {
        if v.is_empty() {
            vec![0; list.len()]
        } else {
            v
        }
    };
    let vals = if t.cfg.lat_percentiles {
        or_zeros(ds.hist[2].percentiles(list, ds.lat.samples))
    } else if t.cfg.clat_percentiles {
        or_zeros(ds.hist[1].percentiles(list, ds.clat.samples))
    } else {
        Vec::new()
    };
    for i in 0..LIST_MAX_LEN {
        match (list.get(i), vals.get(i)) {
            (Some(p), Some(v)) => {
                let _ = write!(out, ";{:.6}%={}", p, v / 1000);
            }
            _ => out.push_str(";0%=0"),
        }
    }
    lat4(out, &ds.lat);
    match ds.bw.summary() {
        Some(m) => {
            let mut per = 100.0;
            if g.agg[d] > 0 {
                per = (m.mean * 100.0 / (g.agg[d] / 1024) as f64).min(100.0);
            }
            let _ = write!(
                out,
                ";{};{};{:.6}%;{:.6};{:.6}",
                m.min, m.max, per, m.mean, m.dev
            );
        }
        None => out.push_str(";0;0;0.000000%;0.000000;0.000000"),
    }
    if ver == 5 {
        let _ = write!(out, ";{}", ds.bw.samples);
        match ds.iops.summary() {
            Some(m) => {
                let _ = write!(
                    out,
                    ";{};{};{:.6};{:.6};{}",
                    m.min, m.max, m.mean, m.dev, ds.iops.samples
                );
            }
            None => out.push_str(";0;0;0.000000;0.000000;0"),
        }
    }
}

/// The `;name;ios…;util%` fields of each device, with `;slaves;…` for md/dm members.
pub fn disks(out: &mut String, disks: &[DiskUtil]) {
    for d in disks {
        let s = &d.stat;
        let _ = write!(
            out,
            ";{};{};{};{};{};{};{};{};{:3.2}%",
            d.name,
            s.ios[0],
            s.ios[1],
            s.merges[0],
            s.merges[1],
            s.ticks[0],
            s.ticks[1],
            s.time_in_queue,
            d.util
        );
        if let Some(a) = &d.aggr {
            let _ = write!(
                out,
                ";slaves;{};{};{};{};{};{};{};{:3.2}%",
                a.ios[0],
                a.ios[1],
                a.merges[0],
                a.merges[1],
                a.ticks[0],
                a.ticks[1],
                a.in_queue,
                a.max_util
            );
        }
    }
}

/// One job's terse line.
pub fn render_thread(
    t: &JobStats,
    g: &GroupStats,
    du: &[DiskUtil],
    ver: u32,
    rel: crate::defs::release::FioRelease,
) -> String {
    let mut out = String::new();
    if ver == 2 {
        let _ = write!(out, "2;{};{};{}", t.name, t.groupid, t.error);
    } else {
        let _ = write!(
            out,
            "{};{};{};{};{}",
            ver,
            super::version_line(rel),
            t.name,
            t.groupid,
            t.error
        );
    }
    ddir(&mut out, t, g, 0, ver);
    if t.cfg.unified != Unified::Mixed {
        ddir(&mut out, t, g, 1, ver);
        if ver == 2 || ver == 4 || ver == 5 {
            ddir(&mut out, t, g, 2, ver);
        }
    }
    if t.cfg.unified == Unified::Both {
        let m = t.mixed();
        ddir(&mut out, &m, g, 0, ver);
    }
    let (usr, sys) = cpu_percent(t);
    let _ = write!(
        out,
        ";{:.6}%;{:.6}%;{};{};{}",
        usr, sys, t.ctx, t.majf, t.minf
    );
    let total = t.total_ios();
    let depth = dist(&t.depth_map, total, 0.1);
    for v in &depth {
        let _ = write!(out, ";{v:3.1}%");
    }
    // Terse keeps its old layout: nanosecond buckets fold into the first microsecond one.
    let mut lat_u = dist(&t.lat_u, total, 0.01);
    let ntotal: u64 = t.lat_n.iter().sum();
    if total > 0 {
        lat_u[0] += 100.0 * ntotal as f64 / total as f64;
    }
    for v in &lat_u {
        let _ = write!(out, ";{v:3.2}%");
    }
    for v in dist(&t.lat_m, total, 0.01) {
        let _ = write!(out, ";{v:3.2}%");
    }
    if ver >= 3 {
        disks(&mut out, du);
    }
    if t.continue_on_error {
        let _ = write!(out, ";{};{}", t.total_err_count, t.first_error);
    }
    if let Some(desc) = t.description.as_deref().filter(|d| !d.is_empty()) {
        if ver == 2 {
            out.push('\n');
        }
        let _ = write!(out, ";{desc}");
    }
    out.push('\n');
    out
}
