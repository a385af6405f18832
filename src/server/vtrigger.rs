//! The server's side of a client's trigger (VTRIGGER, fio's `--trigger-remote`): every
//! job is stopped, the verify state of every job thread goes back to the client, then the
//! client's command runs here, in a shell (fio runs it with `system`).
//!
//! The jobs run in the run's child process, so the connection leaves a [`TRIGGER_FILE`] in
//! the run's directory; the child's [`Watch`] sees it, stops every job as fio's server
//! does (`exitall`-like: no later group starts), and when the run is over leaves the
//! states, already in wire form, in [`STATES_FILE`]. The connection sends them before the
//! run's results, then runs the command.
//!
//! A thread's state is what it saved when it ended (a writing job with a verify method
//! and `verify_state_save`, as fio fills its completions only for those) or, for every
//! other thread, an empty record with its depth, file count and writes issued, as fio
//! sends one for every thread. The server keeps no copy of states saved after the trigger,
//! as fio's server keeps none (they are the client's now).

use crate::fioproto::vstate::{StateFields, ThreadState};
use crate::job::Job;
use crate::stats::RunOutcome;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Left in the run's directory by the connection: the client triggered.
pub const TRIGGER_FILE: &str = "trigger";
/// Left there by the child when its run is over: the VTRIGGER answer's payload.
pub const STATES_FILE: &str = "vstates";

/// The child's watch for the trigger.
pub struct Watch {
    fired: Arc<Mutex<Option<SystemTime>>>,
    end: Arc<AtomicBool>,
}

/// How often the child looks for the trigger.
const POLL: Duration = Duration::from_millis(20);
/// How far a file's modification time may lag the clock (the kernel stamps files with a
/// coarse clock): a state saved this close before the run began or the trigger came is
/// taken as saved after it.
const STAMP_SLACK: Duration = Duration::from_millis(50);

/// Starts watching `dir` for the trigger. Once it came, the stop is asked again at every
/// look until [`Watch::end`]: a trigger that arrives while the files are still laid out,
/// before the run started (and reset its stop flags), still stops it.
pub fn watch(dir: &Path) -> Watch {
    let w = Watch {
        fired: Arc::new(Mutex::new(None)),
        end: Arc::new(AtomicBool::new(false)),
    };
    let (fired, end, flag) = (w.fired.clone(), w.end.clone(), dir.join(TRIGGER_FILE));
    std::thread::spawn(move || {
        while !end.load(Ordering::Relaxed) {
            let mut f = fired.lock().unwrap_or_else(|e| e.into_inner());
            if f.is_none() && flag.exists() {
                *f = Some(SystemTime::now());
            }
            if f.is_some() {
                crate::run::request_stop_all();
            }
            drop(f);
            std::thread::sleep(POLL);
        }
    });
    w
}

impl Watch {
    /// Stops watching; when the trigger came, the time it was seen.
    pub fn end(&self) -> Option<SystemTime> {
        self.end.store(true, Ordering::Relaxed);
        *self.fired.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether `job`'s threads keep the completions of their writes (and save them).
fn keeps_completions(job: &Job) -> bool {
    job.verify.state_save
        && job.verify.method != crate::defs::verify_method::Method::None
        && job.workload.pattern.writes()
}

/// The states of every thread of a run that began at `began` and was triggered at
/// `fired`, in thread order. Files the threads saved after the trigger are removed.
pub fn thread_states(
    jobs: &[Job],
    outcome: &RunOutcome,
    began: SystemTime,
    fired: SystemTime,
) -> Vec<ThreadState> {
    let mut firsts = Vec::with_capacity(jobs.len());
    let mut next = 1u64;
    for j in jobs {
        firsts.push(next);
        next += j.exec.numjobs.max(1) as u64;
    }
    // Clones of a job are reported in clone order.
    let mut clones_seen = vec![0u32; jobs.len()];
    let dir = crate::cli::state_dir();
    let mut out: Vec<ThreadState> = Vec::with_capacity(outcome.results.len());
    for r in &outcome.results {
        let Some(job) = jobs.get(r.job_index) else {
            continue;
        };
        let clone = clones_seen[r.job_index];
        clones_seen[r.job_index] += 1;
        let index = crate::gen::fio_thread_number(firsts[r.job_index], job.exec.numjobs, clone) - 1;
        let saved = keeps_completions(job)
            .then(|| saved_state(&dir, &job.name, index, began, fired))
            .flatten();
        out.push(saved.unwrap_or_else(|| {
            ThreadState::new(&StateFields {
                name: job.name.clone(),
                index,
                depth: job.exec.iodepth.max(1),
                nofiles: job.files.nrfiles.max(1),
                numberio: r.dir[1].ios,
                comps: Vec::new(),
            })
        }));
    }
    out.sort_by_key(ThreadState::index);
    out
}

/// The state thread `index` of job `name` saved during this run (since `began`); removed
/// when it was saved after the trigger (`fired`).
fn saved_state(
    dir: &Path,
    name: &str,
    index: u64,
    began: SystemTime,
    fired: SystemTime,
) -> Option<ThreadState> {
    let path = crate::verify::state::file_name(dir, name, index);
    let written = std::fs::metadata(&path).and_then(|m| m.modified()).ok()? + STAMP_SLACK;
    if written < began {
        return None;
    }
    let state = std::fs::read(&path)
        .ok()
        .and_then(|b| ThreadState::from_state_file(&b).ok());
    if written >= fired {
        let _ = std::fs::remove_file(&path);
    }
    state
}

/// The states of threads that never ran (the trigger came before the run, or after it):
/// empty records for every thread of `jobs`.
pub fn idle_states(jobs: &[Job]) -> Vec<ThreadState> {
    let mut out = Vec::new();
    let mut index = 0u64;
    for job in jobs {
        for _ in 0..job.exec.numjobs.max(1) {
            out.push(ThreadState::new(&StateFields {
                name: job.name.clone(),
                index,
                depth: job.exec.iodepth.max(1),
                nofiles: job.files.nrfiles.max(1),
                ..Default::default()
            }));
            index += 1;
        }
    }
    out
}
