//! The live status a server answers SEND_ETA with (fio's `jobs_eta`): the run's child reads
//! the status board its workers publish to (as the status line does) once a second and
//! leaves the answer, already in wire form, in a file the connection sends on request.

use crate::defs::value::SizeSpec;
use crate::fioproto::pdu::JobsEta;
use crate::job::Job;
use crate::stats::board::JobState;
use crate::stats::board::{self, Plan};
use crate::stats::status::{condense, job_eta};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The file holding the latest answer.
pub const ETA_FILE: &str = "eta";

/// What each clone will do, for its ETA (as the status line plans it).
fn plans(jobs: &[Job]) -> Vec<Plan> {
    let mut out = Vec::new();
    for j in jobs {
        let per_pass = match j.workload.io_size.or(j.workload.size) {
            Some(SizeSpec::Bytes(b)) => b,
            _ => 0,
        };
        for _ in 0..j.exec.numjobs.max(1) {
            out.push(Plan {
                bytes_total: per_pass.saturating_mul(j.exec.loops.max(1) as u64),
                runtime_s: j.exec.runtime_us / 1_000_000,
                time_based: j.exec.time_based,
                ramp_s: (j.exec.ramp_time_us + j.exec.startdelay_us.lo) / 1_000_000,
                files: j.files.nrfiles.max(1),
                stonewall: j.exec.stonewall || j.exec.new_group,
                ..Default::default()
            });
        }
    }
    out
}

/// One answer from the board now; `prev` carries the last totals for the rates.
fn sample(
    jobs: &[Job],
    plans: &[Plan],
    started: Instant,
    prev: &mut ([u64; 3], [u64; 3], Instant),
) -> JobsEta {
    let (live, _) = board::snapshot(plans);
    let st = jobs.first().map(|j| &j.report.stats);
    let mut e = JobsEta {
        is_pow2: st.is_none_or(|s| s.kb_base == 1024) as u32,
        unit_base: if st.is_some_and(|s| s.bits) { 5 } else { 4 },
        sig_figs: st.map_or(4, |s| s.sig_figs),
        nr_threads: plans.len() as u32,
        elapsed_sec: started.elapsed().as_secs_f64().ceil() as u64,
        ..Default::default()
    };
    let mut states = String::new();
    let (mut bytes, mut ios) = ([0u64; 3], [0u64; 3]);
    let (mut eta, mut eta_stone) = (0u64, 0u64);
    for j in &live {
        states.push(j.state.letter());
        if j.state.counts_running() {
            e.nr_running += 1;
            e.files_open += j.files_open;
        }
        match j.state {
            JobState::Pending => e.nr_pending += 1,
            JobState::Ramp => e.nr_ramp += 1,
            JobState::SettingUp => e.nr_setting_up += 1,
            _ => {}
        }
        for d in 0..3 {
            bytes[d] += j.bytes[d];
            ios[d] += j.ios[d];
        }
        let one = if e.elapsed_sec >= 3 {
            job_eta(j)
        } else {
            i32::MAX as u64
        };
        if j.state == JobState::Pending && j.stonewall {
            eta_stone = eta_stone.saturating_add(one);
        } else {
            eta = eta.max(one);
        }
    }
    e.eta_sec = eta.saturating_add(eta_stone);
    let ms = prev.2.elapsed().as_millis() as u64;
    for d in 0..3 {
        let db = bytes[d].saturating_sub(prev.0[d]);
        let di = ios[d].saturating_sub(prev.1[d]);
        e.rate[d] = (db * 1000).checked_div(ms).unwrap_or(0) / 1024;
        e.iops[d] = (di * 1000).checked_div(ms).unwrap_or(0) as u32;
    }
    *prev = (bytes, ios, Instant::now());
    e.run_str = condense(&states);
    e
}

/// Starts the writer; it stops when the returned flag is set.
pub fn start(dir: &Path, jobs: &[Job]) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, dir, jobs): (_, PathBuf, Vec<Job>) =
        (stop.clone(), dir.to_path_buf(), jobs.to_vec());
    std::thread::spawn(move || {
        let plans = plans(&jobs);
        let started = Instant::now();
        let mut prev = ([0u64; 3], [0u64; 3], Instant::now());
        while !flag.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1000));
            let e = sample(&jobs, &plans, started, &mut prev);
            let tmp = dir.join("eta.tmp");
            if std::fs::write(&tmp, e.encode()).is_ok() {
                let _ = std::fs::rename(&tmp, dir.join(ETA_FILE));
            }
        }
    });
    stop
}
