//! `flow`, `flow_id`, `flow_sleep`: fio's flow control between jobs. Jobs with the same
//! `flow_id` and a non-zero `flow` weight share one I/O counter; before each I/O a job
//! compares its own share of that counter with its share of the flow's total weight, and
//! when it is ahead it holds back (after draining and sleeping `flow_sleep` µs, when set)
//! instead of issuing, as fio's `flow_threshold_exceeded` does. So `flow=1` and `flow=8`
//! in one flow run at about 1:8 in I/O counts, whatever their engines and depths.
//!
//! The shared counters live in one anonymous shared mapping made before any worker is
//! forked, so processes and threads see the same atomics; each check is two relaxed loads
//! and, when the job goes on, one atomic add (no lock, no syscall).

#![warn(missing_docs, clippy::cast_possible_truncation)]

use crate::job::Job;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The flows' shared counters, one per distinct `flow_id` in use.
static COUNTERS: OnceLock<&'static [AtomicU64]> = OnceLock::new();
/// (flow_id, total weight) of each counter slot, in slot order.
static FLOWS: OnceLock<Vec<(u64, u64)>> = OnceLock::new();

/// Sets up the counters of every flow the run's jobs use (every clone of a job with a
/// weight adds it to its flow's total, as each of fio's threads does). Call once, in the
/// main process before any worker starts.
pub fn setup(jobs: &[Job]) {
    let mut flows: Vec<(u64, u64)> = Vec::new();
    for j in jobs {
        let w = j.exec.flow.weight;
        if w == 0 {
            continue;
        }
        let id = j.exec.flow.id;
        // fio sums the weights in an unsigned 32-bit total, which wraps: with a negative
        // weight (stored as 2^32 - n) the total is the plain sum again once the other
        // jobs' weights outweigh it, and that job's share is then far above 1, so it is
        // never held back; the others keep their shares of the sum.
        let w = u32::try_from(w).unwrap_or(u32::MAX);
        let add = w.wrapping_mul(j.exec.numjobs.max(1));
        match flows.iter_mut().find(|f| f.0 == id) {
            Some(f) => {
                let sum = u32::try_from(f.1).unwrap_or(u32::MAX).wrapping_add(add);
                f.1 = u64::from(sum);
            }
            None => flows.push((id, u64::from(add))),
        }
    }
    if flows.is_empty() {
        return;
    }
    let len = flows.len() * std::mem::size_of::<AtomicU64>();
    let p = match crate::shm::anonymous(len, crate::shm::Sharing::Shared, false) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("iobench: flow: {e}");
            return;
        }
    };
    // SAFETY: a fresh anonymous shared mapping of `len` bytes: zeroed memory is a valid
    // AtomicU64 array, page-aligned; it is never unmapped (the run's lifetime), and
    // forked workers inherit it shared.
    let counters = unsafe { std::slice::from_raw_parts(p as *const AtomicU64, flows.len()) };
    let _ = COUNTERS.set(counters);
    let _ = FLOWS.set(flows);
}

/// One worker's side of its flow.
pub struct Flow {
    counter: &'static AtomicU64,
    mine: u64,
    weight_ratio: f64,
    /// `flow_sleep` in ns (0: no sleep, only hold back).
    pub sleep_ns: u64,
}

impl Flow {
    /// The flow of `job`, when it has a weight.
    pub fn for_job(job: &Job) -> Option<Flow> {
        let w = job.exec.flow.weight;
        if w == 0 {
            return None;
        }
        let id = job.exec.flow.id;
        let flows = FLOWS.get()?;
        let slot = flows.iter().position(|f| f.0 == id)?;
        Some(Flow {
            counter: COUNTERS.get()?.get(slot)?,
            mine: 0,
            weight_ratio: w as f64 / flows[slot].1 as f64,
            sleep_ns: job.exec.flow.sleep_us * 1000,
        })
    }

    /// Before an I/O: true when this job is ahead of its weight and must hold back;
    /// otherwise the I/O is counted and false returned.
    #[inline]
    pub fn exceeded(&mut self) -> bool {
        let total = self.counter.load(Ordering::Relaxed);
        // fio divides as doubles: 0/0 is NaN, which is never ahead.
        if self.mine as f64 / total as f64 > self.weight_ratio {
            return true;
        }
        self.counter.fetch_add(1, Ordering::Relaxed);
        self.mine += 1;
        false
    }
}
