//! From per-clone results to what is reported: clones merged where `group_reporting` asks,
//! and per-group totals for the `Run status group N (all jobs):` lines.

use super::disk::DiskUtil;
use super::{JobStats, RunOutcome};
use crate::job::reportopts::Unified;
use crate::job::Job;
use serde::{Deserialize, Serialize};

/// The totals of one reporting group (fio's group_run_stats).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupStats {
    pub groupid: u32,
    /// Shortest and longest run time of a member, per direction, in ms.
    pub min_run: [u64; 3],
    pub max_run: [u64; 3],
    /// Lowest and highest member bandwidth, bytes/s.
    pub min_bw: [u64; 3],
    pub max_bw: [u64; 3],
    pub io_bytes: [u64; 3],
    /// Aggregate bandwidth: all bytes over the longest run time, bytes/s.
    pub agg: [u64; 3],
    pub kb_base: u32,
    pub bits: bool,
    pub sig_figs: u32,
    pub unified: Unified,
}

impl GroupStats {
    /// Empty totals of group `groupid` (`+=` fills them).
    pub fn new(groupid: u32) -> Self {
        GroupStats {
            groupid,
            min_run: [u64::MAX; 3],
            max_run: [0; 3],
            min_bw: [u64::MAX; 3],
            max_bw: [0; 3],
            io_bytes: [0; 3],
            agg: [0; 3],
            kb_base: 1024,
            bits: false,
            sig_figs: 4,
            unified: Unified::None,
        }
    }
}

/// Adds another host's totals of the same group (fio's sum_group_stats, for "All
/// clients"): run times and member bandwidths widen, bytes add, and the aggregate is
/// recomputed as all bytes over the longest run time rather than summed, so it is exact
/// when the hosts ran for different times.
impl std::ops::AddAssign<&GroupStats> for GroupStats {
    fn add_assign(&mut self, rhs: &GroupStats) {
        for d in 0..3 {
            if rhs.max_run[d] == 0 {
                continue;
            }
            self.min_run[d] = self.min_run[d].min(rhs.min_run[d]);
            self.max_run[d] = self.max_run[d].max(rhs.max_run[d]);
            self.min_bw[d] = self.min_bw[d].min(rhs.min_bw[d]);
            self.max_bw[d] = self.max_bw[d].max(rhs.max_bw[d]);
            self.io_bytes[d] += rhs.io_bytes[d];
            self.agg[d] = (self.io_bytes[d] * 1000)
                .checked_div(self.max_run[d])
                .unwrap_or(0);
        }
        self.kb_base = rhs.kb_base;
        self.bits = rhs.bits;
        self.sig_figs = rhs.sig_figs;
        if rhs.unified != Unified::None {
            self.unified = rhs.unified;
        }
    }
}

/// Everything the renderers need: the reported jobs (merged), the groups, disk activity.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    pub threads: Vec<JobStats>,
    pub groups: Vec<GroupStats>,
    pub disks: Vec<DiskUtil>,
    /// Time since the run began, in ms (JSON's `elapsed` and `eta`).
    pub elapsed_ms: u64,
    /// The dialect the reports speak (the jobs' `--fio-compat`).
    pub release: crate::defs::release::FioRelease,
}

/// Merges the clones of `outcome` into reported jobs and computes the group totals. A new
/// reported job starts at each clone unless it has `group_reporting` and is in the same group
/// as the previous one, as in fio. Clones of a job with `stats=0` are left out.
pub fn summarize(jobs: &[Job], outcome: &RunOutcome) -> RunSummary {
    let mut threads: Vec<JobStats> = Vec::new();
    let mut last_gid: Option<u32> = None;
    for r in &outcome.results {
        if !r.cfg.stats {
            continue;
        }
        let grouped = jobs
            .get(r.job_index)
            .map(|j| j.report.group_reporting)
            .unwrap_or(false);
        let start_new = threads.is_empty() || !grouped || last_gid != Some(r.groupid);
        last_gid = Some(r.groupid);
        if start_new {
            let mut t = JobStats::new(&r.name, r.groupid, r.cfg.clone());
            t.jobs = 0;
            t.job_index = r.job_index;
            t.description = r.description.clone();
            t.pid = r.pid;
            t.job_start = r.job_start;
            threads.push(t);
        }
        let t = threads.last_mut().expect("pushed above");
        // fio's `job options` are the last member's.
        t.job_index = r.job_index;
        t.continue_on_error = r.continue_on_error;
        t.total_err_count += r.total_err_count;
        t.first_error = r.first_error;
        if t.error == 0 && r.error != 0 {
            t.error = r.error;
            t.verror = r.verror.clone();
        }
        t.latency_depth = r.latency_depth;
        t.latency_target = r.latency_target;
        t.latency_percentile = r.latency_percentile;
        t.latency_window = r.latency_window;
        if r.steady.is_some() {
            t.steady = r.steady.clone();
        }
        t.merge(r);
        t.jobs += 1;
    }
    let ngroups = threads
        .iter()
        .map(|t| t.groupid + 1)
        .max()
        .unwrap_or(0)
        .max(
            outcome
                .results
                .iter()
                .map(|r| r.groupid + 1)
                .max()
                .unwrap_or(0),
        );
    let mut groups: Vec<GroupStats> = (0..ngroups).map(GroupStats::new).collect();
    for t in &threads {
        let g = &mut groups[t.groupid as usize];
        g.kb_base = t.cfg.kb_base;
        g.bits = t.cfg.bits;
        g.sig_figs = t.cfg.sig_figs;
        if t.cfg.unified != Unified::None {
            g.unified = t.cfg.unified;
        }
        for (j, d) in t.dir.iter().enumerate() {
            if d.runtime_ms == 0 {
                continue;
            }
            if d.runtime_ms < g.min_run[j] {
                g.min_run[j] = d.runtime_ms;
            }
            g.max_run[j] = g.max_run[j].max(d.runtime_ms);
            let bw = d.bytes * 1000 / d.runtime_ms;
            g.min_bw[j] = g.min_bw[j].min(bw);
            g.max_bw[j] = g.max_bw[j].max(bw);
            g.io_bytes[j] += d.bytes;
        }
    }
    for g in &mut groups {
        for j in 0..3 {
            g.agg[j] = (g.io_bytes[j] * 1000)
                .checked_div(g.max_run[j])
                .unwrap_or(0);
        }
    }
    RunSummary {
        threads,
        groups,
        disks: Vec::new(),
        elapsed_ms: 0,
        release: jobs.first().map(|j| j.raw.release).unwrap_or_default(),
    }
}
