//! fio's normal (human) text layout: the job headers before the run, then per reported job
//! its result block, the `Run status group` totals and the `Disk stats` section.

use super::{ctime, version_line};
use crate::defs::release::FioRelease;
use crate::defs::Ddir;
use crate::job::group_ids;
use crate::job::reportopts::Unified;
use crate::job::Job;
use crate::num::{fw, num2str, Unit};
use crate::stats::disk::DiskUtil;
use crate::stats::group::{GroupStats, RunSummary};
use crate::stats::hist::Hist;
use crate::stats::{JobStats, LatKind};
use std::fmt::Write;

/// The lines fio prints before it starts: one header per job (`...` for its clones), the
/// version, and `Starting N processes` (or threads).
pub fn header(jobs: &[Job]) -> String {
    let mut out = String::new();
    let gids = group_ids(jobs);
    for (job, gid) in jobs.iter().zip(gids) {
        // fio prints no header for a pseudo-I/O job (cpuio); its engine prints its own.
        if job.exec.engine.flags().no_io {
            continue;
        }
        let pow2 = job.kb_base != crate::defs::value::KbBase::Decimal;
        let sf = job.report.stats.sig_figs as usize;
        let b = |v: u64| num2str(v, sf, 1, pow2, Unit::Byte);
        let bs = &job.workload.bs;
        out.push_str(&super::verify_notes(job, true));
        let _ = writeln!(
            out,
            "{}: (g={}): rw={}, bs=(R) {}-{}, (W) {}-{}, (T) {}-{}, ioengine={}, iodepth={}",
            job.name,
            gid,
            job.workload.pattern.fio_name(),
            b(bs[0].0),
            b(bs[0].1),
            b(bs[1].0),
            b(bs[1].1),
            b(bs[2].0),
            b(bs[2].1),
            job.exec.ioengine,
            job.exec.iodepth_given
        );
        for _ in 1..job.exec.numjobs.max(1) {
            out.push_str(&super::verify_notes(job, false));
        }
        if job.exec.numjobs > 1 {
            out.push_str("...\n");
        }
    }
    let rel = jobs.first().map(|j| j.raw.release).unwrap_or_default();
    let _ = writeln!(out, "{}", version_line(rel));
    let nr: u64 = jobs.iter().map(|j| j.exec.numjobs as u64).sum();
    let threads = jobs.iter().any(|j| j.exec.thread);
    let (nt, np) = if threads { (nr, 0) } else { (0, nr) };
    out.push_str("Starting ");
    if nt > 0 {
        let _ = write!(out, "{} thread{}", nt, if nt > 1 { "s" } else { "" });
    }
    if np > 0 {
        if nt > 0 {
            out.push_str(" and ");
        }
        let _ = write!(out, "{} process{}", np, if np > 1 { "es" } else { "" });
    }
    out.push('\n');
    out
}

/// The whole end-of-run report: a blank line, each reported job, the group lines, disks.
pub fn render(sum: &RunSummary) -> String {
    let mut out = String::from("\n");
    let now = ctime(std::time::SystemTime::now());
    for t in &sum.threads {
        if let Some(g) = sum.groups.get(t.groupid as usize) {
            out.push_str(&render_thread(t, g, &now, sum.release));
        }
    }
    for g in &sum.groups {
        out.push_str(&render_group(g));
    }
    out.push_str(&render_disks(&sum.disks));
    out
}

/// A time in ns in fio 3.42's `latency   :` line's unit: s from 2 s, ms from 2 ms, us
/// from 2 µs, else ns.
fn scale_down_ns(ns: u64) -> (f64, &'static str) {
    let v = ns as f64;
    if ns >= 2_000_000_000 {
        (v / 1e9, "s")
    } else if ns >= 2_000_000 {
        (v / 1e6, "ms")
    } else if ns >= 2_000 {
        (v / 1e3, "us")
    } else {
        (v, "ns")
    }
}

/// Splits a latency summary into fio's display unit (nsec, usec or msec).
fn scaled(min: u64, max: u64, mean: f64, dev: f64) -> (&'static str, u64, u64, f64, f64) {
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        (
            "(msec)",
            min / 1_000_000,
            max / 1_000_000,
            mean / 1e6,
            dev / 1e6,
        )
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        ("(usec)", min / 1000, max / 1000, mean / 1e3, dev / 1e3)
    } else {
        ("(nsec)", min, max, mean, dev)
    }
}

fn display_lat(out: &mut String, name: &str, s: &crate::stats::iostat::IoStat) {
    let Some(m) = s.summary() else { return };
    let (base, min, max, mean, dev) = scaled(m.min, m.max, m.mean, m.dev);
    let _ = writeln!(
        out,
        "    {} {}: min={}, max={}, avg={}, stdev={}",
        name,
        base,
        num2str(min, 6, 1, false, Unit::None),
        num2str(max, 6, 1, false, Unit::None),
        fw(5, 2, mean),
        fw(5, 2, dev)
    );
}

/// The percentile block of one histogram: unit chosen from the value range, several
/// entries per line, widths as fio's.
pub fn percentiles_block(out: &mut String, hist: &Hist, nr: u64, t: &JobStats, pre: &str) {
    let list = &t.cfg.percentiles.list;
    let prec = t.cfg.percentiles.precision;
    let vals = hist.percentiles(list, nr);
    if vals.is_empty() {
        return;
    }
    let minv = *vals.iter().min().unwrap_or(&0);
    let maxv = *vals.iter().max().unwrap_or(&0);
    let (scale, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000u64, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = write!(out, "    {pre} percentiles ({unit}):\n     |");
    let q = maxv / divisor;
    let digits = if q == 0 {
        // log10(0) is -inf in C: the width falls back to the minimum.
        0
    } else {
        ((q as f64).log10() + 1.0) as usize
    };
    let time_width = digits.max(5);
    let per_line = (80 - 7) / (prec + 10 + time_width);
    let len = vals.len();
    for (j, (&p, &v)) in list.iter().zip(&vals).enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let last = j == len - 1;
        let mut v = v;
        for _ in 0..scale {
            v = v.div_ceil(1000);
        }
        let _ = write!(
            out,
            " {}th=[{:>w$}]{}",
            fw(prec + 3, prec, p),
            v,
            if last { '\n' } else { ',' },
            w = time_width
        );
        if last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

fn ddir_label(t: &JobStats, d: usize) -> &'static str {
    if t.cfg.unified == Unified::Mixed {
        return "mixed";
    }
    ["read", "write", "trim"][d]
}

fn show_ddir(out: &mut String, g: &GroupStats, t: &JobStats, d: usize) {
    let ds = &t.dir[d];
    if ds.runtime_ms == 0 {
        return;
    }
    let pow2 = g.kb_base != 1000;
    let sf = t.cfg.sig_figs as usize;
    let unit = if t.cfg.bits {
        Unit::BitPerSec
    } else {
        Unit::BytePerSec
    };
    let runt = ds.runtime_ms;
    let bw = ds.bytes * 1000 / runt;
    let iops = ds.ios * 1000 / runt;
    let _ = write!(
        out,
        "  {}: IOPS={}, BW={} ({})({}/{}msec)",
        ddir_label(t, d),
        num2str(iops, sf, 1, false, Unit::None),
        num2str(bw, sf, 1, pow2, unit),
        num2str(bw, sf, 1, !pow2, unit),
        num2str(ds.bytes, sf, 1, pow2, Unit::Byte),
        runt,
    );
    if d == Ddir::Write as usize {
        let _ = write!(out, "; {} zone resets", t.zone_resets);
    }
    out.push('\n');
    display_lat(out, "slat", &ds.slat);
    display_lat(out, "clat", &ds.clat);
    display_lat(out, " lat", &ds.lat);
    // Open-loop arrivals (iobench's `arrival=` only): latency from the scheduled start.
    if t.cfg.sched_lat {
        display_lat(out, "sched_lat", &ds.sched);
    }
    // Per-priority latencies (cmdprio), as fio prints them once two priorities have I/O.
    let prios = ds.prios_to_show();
    let prio_kind = if t.cfg.lat_percentiles { "lat" } else { "clat" };
    let prio_name = |p: &crate::stats::PrioStat| {
        format!("{prio_kind} prio {}/{}", p.ioprio >> 13, p.ioprio & 7)
    };
    for p in &prios {
        display_lat(out, &prio_name(p), &p.lat);
    }
    let kinds = [
        (t.cfg.slat_percentiles, LatKind::Slat, "slat"),
        (t.cfg.clat_percentiles, LatKind::Clat, "clat"),
        (t.cfg.lat_percentiles, LatKind::Lat, "lat"),
    ];
    for (on, k, name) in kinds {
        let n = ds.lat_stat(k).samples;
        if on && n > 0 {
            percentiles_block(out, &ds.hist[k as usize], n, t, name);
        }
    }
    if t.cfg.sched_lat && ds.sched.samples > 0 {
        percentiles_block(out, &ds.sched_hist, ds.sched.samples, t, "sched_lat");
        let _ = writeln!(
            out,
            "    sched_lat: missed starts={}, backlog max={}",
            ds.missed_starts, ds.backlog_max
        );
    }
    if t.cfg.clat_percentiles || t.cfg.lat_percentiles {
        let all = if t.cfg.lat_percentiles {
            ds.lat.samples
        } else {
            ds.clat.samples
        };
        for p in &prios {
            let n = p.lat.samples;
            let pre = format!(
                "{} ({:.2}% of IOs)",
                prio_name(p),
                100.0 * n as f64 / all.max(1) as f64
            );
            percentiles_block(out, &p.hist, n, t, &pre);
        }
    }
    if let Some(m) = ds.bw.summary() {
        let kb = g.kb_base as f64;
        let mut label = match (t.cfg.bits, pow2) {
            (true, true) => "Kibit",
            (true, false) => "kbit",
            (false, true) => "KiB",
            (false, false) => "kB",
        };
        let per = agg_percent(g, d, m.mean);
        let (mut min, mut max, mut mean, mut dev) = (m.min, m.max, m.mean, m.dev);
        if t.cfg.bits {
            min *= 8;
            max *= 8;
            mean *= 8.0;
            dev *= 8.0;
        }
        if mean > kb * kb {
            min = (min as f64 / kb) as u64;
            max = (max as f64 / kb) as u64;
            mean /= kb;
            dev /= kb;
            label = if t.cfg.bits { "Mibit" } else { "MiB" };
        }
        let _ = writeln!(
            out,
            "   bw ({:>5}/s): min={:>5}, max={:>5}, per={}%, avg={}, stdev={}, samples={}",
            label,
            min,
            max,
            fw(3, 2, per),
            fw(5, 2, mean),
            fw(5, 2, dev),
            ds.bw.samples
        );
    }
    if let Some(m) = ds.iops.summary() {
        let _ = writeln!(
            out,
            "   iops        : min={:>5}, max={:>5}, avg={}, stdev={}, samples={}",
            m.min,
            m.max,
            fw(5, 2, m.mean),
            fw(5, 2, m.dev),
            ds.iops.samples
        );
    }
}

/// A job's mean bandwidth (KiB/s) as a share of its group's aggregate, capped at 100%.
pub fn agg_percent(g: &GroupStats, d: usize, mean: f64) -> f64 {
    if g.agg[d] > 1024 {
        (mean * 100.0 / (g.agg[d] as f64 / 1024.0)).min(100.0)
    } else {
        100.0
    }
}

/// Percentages of `map` over `total`, with tiny non-zero shares shown as `min`.
pub fn dist(map: &[u64], total: u64, min: f64) -> Vec<f64> {
    map.iter()
        .map(|&m| {
            if total == 0 {
                return 0.0;
            }
            let v = m as f64 / total as f64 * 100.0;
            if v < min && m > 0 {
                min
            } else {
                v
            }
        })
        .collect()
}

fn show_lat_lines(out: &mut String, vals: &[f64], labels: &[&str], unit: &str) {
    let mut new_line = true;
    let mut shown = false;
    let mut line = 0;
    for (v, l) in vals.iter().zip(labels) {
        if *v <= 0.0 {
            continue;
        }
        shown = true;
        if new_line {
            if line > 0 {
                out.push('\n');
            }
            let _ = write!(out, "  lat ({unit})   : ");
            new_line = false;
            line = 0;
        }
        if line > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}={}%", l, fw(3, 2, *v));
        line += 1;
        if line == 5 {
            new_line = true;
        }
    }
    if shown {
        out.push('\n');
    }
}

/// Labels of the latency distribution buckets.
pub const LAT_LABELS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

/// One reported job's block.
pub fn render_thread(t: &JobStats, g: &GroupStats, now: &str, rel: FioRelease) -> String {
    let mut out = String::new();
    if t.total_bytes() == 0 && t.total_ios() == 0 {
        return out;
    }
    if t.error == 0 {
        let _ = write!(
            out,
            "{}: (groupid={}, jobs={}): err={:2}: pid={}: {}",
            t.name, t.groupid, t.jobs, t.error, t.pid, now
        );
    } else {
        let _ = write!(
            out,
            "{}: (groupid={}, jobs={}): err={:2} ({}): pid={}: {}",
            t.name, t.groupid, t.jobs, t.error, t.verror, t.pid, now
        );
    }
    if let Some(desc) = t.description.as_deref().filter(|d| !d.is_empty()) {
        let _ = writeln!(out, "  Description  : [{desc}]");
    }
    for d in 0..3 {
        if t.dir[d].bytes > 0 {
            show_ddir(&mut out, g, t, d);
        }
    }
    if t.cfg.unified == Unified::Both {
        let m = t.mixed();
        show_ddir(&mut out, g, &m, 0);
    }
    let total = t.total_ios();
    show_lat_lines(
        &mut out,
        &dist(&t.lat_n, total, 0.01),
        &LAT_LABELS[..10],
        "nsec",
    );
    show_lat_lines(
        &mut out,
        &dist(&t.lat_u, total, 0.01),
        &LAT_LABELS[..10],
        "usec",
    );
    show_lat_lines(&mut out, &dist(&t.lat_m, total, 0.01), &LAT_LABELS, "msec");
    if let Some(m) = t.sync.summary() {
        let _ = m;
        out.push_str(if rel.normal_output_3_42() {
            "  fsync/fdatasync/sync_file_range/syncfs:\n"
        } else {
            "  fsync/fdatasync/sync_file_range:\n"
        });
        display_lat(&mut out, "sync", &t.sync);
        percentiles_block(&mut out, &t.sync_hist, t.sync.samples, t, "sync");
    }
    let (usr, sys) = cpu_percent(t);
    let _ = writeln!(
        out,
        "  cpu          : usr={}%, sys={}%, ctx={}, majf={}, minf={}",
        fw(3, 2, usr),
        fw(3, 2, sys),
        t.ctx,
        t.majf,
        t.minf
    );
    let d = dist(&t.depth_map, total, 0.1);
    let _ = writeln!(
        out,
        "  IO depths    : 1={}%, 2={}%, 4={}%, 8={}%, 16={}%, 32={}%, >=64={}%",
        fw(3, 1, d[0]),
        fw(3, 1, d[1]),
        fw(3, 1, d[2]),
        fw(3, 1, d[3]),
        fw(3, 1, d[4]),
        fw(3, 1, d[5]),
        fw(3, 1, d[6])
    );
    for (label, map, tot) in [
        ("submit", &t.submit_map, t.total_submit),
        ("complete", &t.complete_map, t.total_complete),
    ] {
        let d = dist(map, tot, 0.1);
        let _ = writeln!(
            out,
            "     {:<10}: 0={}%, 4={}%, 8={}%, 16={}%, 32={}%, 64={}%, >=64={}%",
            label,
            fw(3, 1, d[0]),
            fw(3, 1, d[1]),
            fw(3, 1, d[2]),
            fw(3, 1, d[3]),
            fw(3, 1, d[4]),
            fw(3, 1, d[5]),
            fw(3, 1, d[6])
        );
    }
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        t.dir[0].ios,
        t.dir[1].ios,
        t.dir[2].ios,
        t.sync_ios,
        t.dir[0].short,
        t.dir[1].short,
        t.dir[2].short,
        t.dir[0].dropped,
        t.dir[1].dropped,
        t.dir[2].dropped
    );
    if t.continue_on_error {
        let _ = writeln!(
            out,
            "     errors    : total={}, first_error={}/<{}>",
            t.total_err_count,
            t.first_error,
            super::strerror(t.first_error)
        );
    }
    if t.latency_depth > 0 {
        let (target, window) = if rel.normal_output_3_42() {
            let (tv, tu) = scale_down_ns(t.latency_target);
            let (wv, wu) = scale_down_ns(t.latency_window.saturating_mul(1000));
            (
                format!("{}{tu}", fw(0, 2, tv)),
                format!("{}{wu}", fw(0, 2, wv)),
            )
        } else {
            (t.latency_target.to_string(), t.latency_window.to_string())
        };
        let _ = writeln!(
            out,
            "     latency   : target={target}, window={window}, percentile={}%, depth={}",
            fw(0, 2, t.latency_percentile),
            t.latency_depth
        );
    }
    if let Some(b) = &t.block_life {
        show_block_life(&mut out, &b.report(&t.cfg.percentiles.list));
    }
    if let Some(ss) = &t.steady {
        show_steady(&mut out, t, ss);
    }
    if let Some(h) = &t.obj {
        show_obj_stats(&mut out, h);
    }
    out
}

/// The http engine's own statistics (`iobench_http` in JSON): failed requests by status,
/// then per class its count, bytes, latency and time to first byte in microseconds with
/// a few percentiles.
fn show_obj_stats(out: &mut String, h: &crate::stats::objstats::ObjStats) {
    if let Some(e) = &h.errors {
        let _ = write!(out, "  http errors   :");
        for (i, (name, n)) in e.named().iter().enumerate() {
            let _ = write!(out, "{} {name}={n}", if i > 0 { "," } else { "" });
        }
        let _ = writeln!(out, ", total={}", e.total());
    }
    let pcts = [50.0, 90.0, 99.0, 99.9];
    let line = |out: &mut String, what: &str, s: &crate::stats::iostat::IoStat, hist| {
        let Some(m) = s.summary() else { return };
        let p = crate::stats::hist::Hist::percentiles(hist, &pcts, s.samples);
        let _ = write!(
            out,
            "      {what:>4} (usec): min={}, max={}, avg={:.2}, stdev={:.2}",
            m.min / 1000,
            m.max / 1000,
            m.mean / 1000.0,
            m.dev / 1000.0
        );
        for (pc, v) in pcts.iter().zip(p) {
            let _ = write!(out, ", p{pc}={}", v / 1000);
        }
        out.push('\n');
    };
    let mut classes = vec![("", &h.all)];
    for (group, v) in h.groups() {
        classes.extend(v.into_iter().map(|c| (group, c)));
    }
    for (group, c) in classes {
        let name = if group.is_empty() {
            "all requests".to_string()
        } else {
            format!("{} {}", group.trim_end_matches('s'), c.name)
        };
        let _ = writeln!(
            out,
            "  http {name}: ios={}, bytes={}, errors={}",
            c.ios, c.bytes, c.errors
        );
        line(out, "lat", &c.lat, &c.lat_hist);
        if h.ttfb {
            line(out, "ttfb", &c.ttfb, &c.ttfb_hist);
        }
    }
}

/// `block_error_percentiles`' two lines as fio lays them out: the percentiles of trims
/// per block, wrapped before 75 columns, then the blocks per state (on the first line's
/// row when no block was trimmed, as fio prints it).
fn show_block_life(out: &mut String, r: &crate::stats::blocklife::BlockReport) {
    out.push_str("  block lifetime percentiles :\n   |");
    let mut pos = 0;
    for (i, &(p, n)) in r.percentiles.iter().enumerate() {
        let end = if i + 1 == r.percentiles.len() {
            '\n'
        } else {
            ','
        };
        let item = format!(" {p:3.2}th={n}{end}");
        if pos + item.len() > 75 {
            pos = 0;
            out.push_str("\n   |");
        }
        out.push_str(&item);
        pos += item.len();
    }
    out.push_str("        states               :");
    for (i, (name, n)) in crate::stats::blocklife::STATE_NAMES
        .iter()
        .zip(r.states)
        .enumerate()
    {
        let end = if i + 1 == r.states.len() { '\n' } else { ',' };
        let _ = write!(out, " {name}={n}{end}");
    }
}

/// The `steadystate  :` line: verdict, the window's mean bandwidth and IOPS, and the
/// criterion's last value.
fn show_steady(out: &mut String, t: &JobStats, ss: &crate::stats::steady::SteadyReport) {
    let kb = t.cfg.kb_base.max(1) as u64;
    let pow2 = kb.is_power_of_two();
    let sf = t.cfg.sig_figs as usize;
    let unit = if t.cfg.bits {
        Unit::BitPerSec
    } else {
        Unit::BytePerSec
    };
    let c = &ss.spec.criterion;
    // fio 3.42's latency criteria add the window's mean latency, always in nsec (fio
    // passes its unit scaling a deviation of zero, which never scales).
    let lat = if c.measure == crate::defs::steady::Measure::Lat {
        format!(
            ", lat={}nsec",
            num2str(ss.lat_mean(), sf, 1, false, Unit::None)
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  steadystate  : attained={}, bw={} ({}), iops={}{}, {}{}={:.3}{}",
        if ss.attained { "yes" } else { "no" },
        num2str(ss.bw_mean() / kb, sf, kb, pow2, unit),
        num2str(ss.bw_mean() / kb, sf, kb, !pow2, unit),
        num2str(ss.iops_mean(), sf, 1, false, Unit::None),
        lat,
        c.measure.word(),
        if c.slope { " slope" } else { " mean dev" },
        ss.criterion,
        if c.pct { "%" } else { "" }
    );
}

/// usr and sys CPU as percentages of the job's run time.
pub fn cpu_percent(t: &JobStats) -> (f64, f64) {
    if t.total_run_ms == 0 {
        return (0.0, 0.0);
    }
    let r = t.total_run_ms as f64;
    (t.usr_ms as f64 * 100.0 / r, t.sys_ms as f64 * 100.0 / r)
}

/// One group's `Run status group N (all jobs):` block.
pub fn render_group(g: &GroupStats) -> String {
    let mut out = format!("\nRun status group {} (all jobs):\n", g.groupid);
    let pow2 = g.kb_base != 1000;
    let sf = g.sig_figs as usize;
    let unit = if g.bits {
        Unit::BitPerSec
    } else {
        Unit::BytePerSec
    };
    let line =
        |out: &mut String, label: &str, io: u64, agg: u64, min: u64, max: u64, r: (u64, u64)| {
            let _ = writeln!(
                out,
                "{}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
                label,
                num2str(agg, sf, 1, pow2, unit),
                num2str(agg, sf, 1, !pow2, unit),
                num2str(min, sf, 1, pow2, unit),
                num2str(max, sf, 1, pow2, unit),
                num2str(min, sf, 1, !pow2, unit),
                num2str(max, sf, 1, !pow2, unit),
                num2str(io, sf, 1, pow2, Unit::Byte),
                num2str(io, sf, 1, !pow2, Unit::Byte),
                r.0,
                r.1
            );
        };
    let labels = ["   READ", "  WRITE", "   TRIM"];
    for (d, &dir_label) in labels.iter().enumerate() {
        if g.max_run[d] == 0 {
            continue;
        }
        let label = if g.unified == Unified::Mixed {
            "  MIXED"
        } else {
            dir_label
        };
        line(
            &mut out,
            label,
            g.io_bytes[d],
            g.agg[d],
            g.min_bw[d],
            g.max_bw[d],
            (g.min_run[d], g.max_run[d]),
        );
    }
    if g.unified == Unified::Both {
        let (mut io, mut agg, mut minb, mut maxb, mut minr, mut maxr) =
            (0u64, 0u64, u64::MAX, 0u64, u64::MAX, 0u64);
        for d in 0..3 {
            if g.max_run[d] == 0 {
                continue;
            }
            io += g.io_bytes[d];
            agg += g.agg[d];
            minb = minb.min(g.min_bw[d]);
            maxb = maxb.max(g.max_bw[d]);
            minr = minr.min(g.min_run[d]);
            maxr = maxr.max(g.max_run[d]);
        }
        line(&mut out, "  MIXED", io, agg, minb, maxb, (minr, maxr));
    }
    out
}

/// The `Disk stats (read/write):` section; empty when no device was found.
pub fn render_disks(disks: &[DiskUtil]) -> String {
    let mut out = String::new();
    if disks.is_empty() {
        return out;
    }
    out.push_str("\nDisk stats (read/write):\n");
    for d in disks {
        if d.aggr.is_some() {
            out.push_str("  ");
        }
        let s = &d.stat;
        let _ = write!(
            out,
            "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={}%",
            d.name,
            s.ios[0],
            s.ios[1],
            s.merges[0],
            s.merges[1],
            s.ticks[0],
            s.ticks[1],
            s.time_in_queue,
            fw(3, 2, d.util)
        );
        if let Some(a) = &d.aggr {
            let _ = write!(
                out,
                ", aggrios={}/{}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, aggrutil={}%",
                a.ios[0],
                a.ios[1],
                a.merges[0],
                a.merges[1],
                a.ticks[0],
                a.ticks[1],
                a.in_queue,
                fw(3, 2, a.max_util)
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::disk::{Aggregate, RawDiskStat};

    #[test]
    fn a_md_device_line_reads_as_in_seed_001() {
        let disk = |name: &str, ios, merges, ticks, in_queue, util, aggr| DiskUtil {
            name: name.into(),
            stat: RawDiskStat {
                ios: [0, ios],
                merges: [0, merges],
                ticks: [0, ticks],
                time_in_queue: in_queue,
                ..RawDiskStat::default()
            },
            util,
            aggr,
        };
        let aggr = Aggregate {
            ios: [0, 275777],
            merges: [0, 7137],
            ticks: [0, 476592],
            in_queue: 370025,
            max_util: 82.66,
            ..Aggregate::default()
        };
        let text = render_disks(&[
            disk("md0", 1697041, 0, 0, 0, 0.0, Some(aggr)),
            disk("nvme1n1", 275297, 7075, 474260, 365564, 81.93, None),
        ]);
        assert_eq!(
            text,
            "\nDisk stats (read/write):\n    md0: ios=0/1697041, merge=0/0, ticks=0/0, \
             in_queue=0, util=0.00%, aggrios=0/275777, aggrmerge=0/7137, aggrticks=0/476592, \
             aggrin_queue=370025, aggrutil=82.66%\n  nvme1n1: ios=0/275297, merge=0/7075, \
             ticks=0/474260, in_queue=365564, util=81.93%\n"
        );
    }
}
