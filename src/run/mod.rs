//! The runner: checks and prepares every job's targets, starts the clones of each group
//! together (processes by default, threads with `thread=1`), runs the groups in order, and
//! collects each clone's stats. `worker` is the per-clone I/O loop.

pub mod files;
pub mod groups;
pub mod pacing;
pub mod signals;
pub mod spawn;
pub mod syncing;
pub mod worker;

use crate::cli::CliConfig;
use crate::engine::registry::EngineVisitor;
use crate::engine::{Engine, EngineFile};
use crate::error::RunError;
use crate::job::Job;
use crate::stats::{JobStats, RunOutcome};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

static TERMINATE: AtomicBool = AtomicBool::new(false);

/// True once a stop was asked for (signal, `exitall`): workers end their loops promptly.
#[inline]
pub fn terminating() -> bool {
    TERMINATE.load(Ordering::Relaxed)
}

/// Asks every worker to stop.
pub fn request_stop() {
    TERMINATE.store(true, Ordering::Relaxed);
}

/// Lets the next group run after an `exitall` stop (a signal's stop stays).
fn clear_stop() {
    if signals::signalled().is_none() {
        TERMINATE.store(false, Ordering::Relaxed);
    }
}

struct Visit<'a> {
    cx: worker::WorkerCtx<'a>,
}

impl EngineVisitor for Visit<'_> {
    type Out = std::io::Result<JobStats>;
    fn visit<E: Engine>(self, engine: E) -> Self::Out {
        worker::run(engine, self.cx)
    }
}

/// Checks made before anything is printed or any I/O is done (`--readonly`, mounted
/// block devices).
pub fn preflight(cfg: &CliConfig, jobs: &[Job]) -> Result<(), String> {
    files::preflight(cfg.readonly, jobs)
}

/// Runs one clone over its prepared targets, in this process or thread.
pub fn run_clone(spec: &spawn::CloneSpec<'_>) -> Result<JobStats, RunError> {
    let job = spec.job;
    let err = |source| RunError::Io {
        job: job.name.clone(),
        source,
    };
    apply_placement(job)?;
    let no_files = job.exec.engine == crate::engine::EngineKind::Null;
    let opened = if no_files {
        Vec::new()
    } else {
        files::open_all(job, &spec.targets).map_err(err)?
    };
    let writable = files::job_writes(job);
    let fds: Vec<i32> = if no_files {
        spec.targets.iter().map(|_| -1).collect()
    } else {
        opened.iter().map(|f| f.as_raw_fd()).collect()
    };
    let efiles: Vec<EngineFile> = spec
        .targets
        .iter()
        .zip(&fds)
        .map(|(t, &fd)| EngineFile {
            fd,
            size: t.size,
            writable,
        })
        .collect();
    let names: Vec<String> = spec.targets.iter().map(|t| t.path.clone()).collect();
    let extents: Vec<crate::gen::FileExtent> = spec
        .targets
        .iter()
        .map(|t| crate::gen::FileExtent::new(&t.path, t.size).laid_out_from(t.setup_size))
        .collect();
    let gen =
        crate::gen::Generator::with_thread_number(job, spec.clone, spec.thread_number, &extents)
            .map_err(|e| RunError::Setup {
                job: job.name.clone(),
                message: e.to_string(),
            })?;
    let mut stats = JobStats::for_job(job, spec.job_index, spec.groupid);
    stats.pid = std::process::id();
    stats.set_log_number(spec.thread_number);
    stats.live = crate::stats::live::LiveSlot::attach(
        spec.thread_number,
        crate::report::eta::running_letter(job.workload.pattern),
        job.exec.ramp_time_us > 0,
    );
    let cx = worker::WorkerCtx {
        job,
        fds: &fds,
        files: &efiles,
        names: &names,
        gen,
        stats,
    };
    let ru_start = crate::stats::cpu::Rusage::take(crate::stats::cpu::Who::Thread);
    let r = job
        .exec
        .engine
        .visit(&job.exec.engine_opts, Visit { cx })
        .map_err(err);
    drop(opened);
    r.map(|mut s| {
        s.set_cpu(crate::stats::cpu::Rusage::take(crate::stats::cpu::Who::Thread).since(&ru_start));
        s.job_index = spec.job_index;
        if let Err(e) = s.finish_logs() {
            eprintln!("iobench: {}: writing logs: {e}", job.name);
        }
        s.publish_final();
        s
    })
}

/// Runs every job: groups in order, the clones of a group at once. Returns the stats of
/// every clone that ran and the exit status (fio's: 128 after a signal, else the number of
/// failed clones, capped).
pub fn run_all(cfg: &CliConfig, jobs: &[Job]) -> (RunOutcome, u8) {
    signals::install_main();
    let gids = crate::report::group_ids(jobs);
    let normal = crate::report::wants_normal(cfg) && cfg.output.is_none();
    let mut info = |s: &str| {
        if normal {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(s.as_bytes());
            let _ = out.flush();
        }
    };
    let mut outcome = RunOutcome::default();
    let mut failed = 0u32;
    let mut first_thread = 1u64;
    let firsts: Vec<u64> = jobs
        .iter()
        .map(|j| {
            let f = first_thread;
            first_thread += j.exec.numjobs.max(1) as u64;
            f
        })
        .collect();
    crate::stats::live::init(first_thread as usize - 1);
    for phase in groups::phases(jobs) {
        if terminating() {
            break;
        }
        let mut specs = Vec::new();
        let mut prepared_ok = true;
        for &ji in &phase {
            let job = &jobs[ji];
            for clone in 0..job.exec.numjobs.max(1) {
                match files::prepare(job, clone, &mut info) {
                    Ok(targets) => specs.push({
                        let thread_number =
                            crate::gen::fio_thread_number(firsts[ji], job.exec.numjobs, clone);
                        let bytes: u64 = targets.iter().map(|t| t.size).sum();
                        crate::stats::live::prepared(
                            thread_number,
                            bytes.saturating_mul(job.exec.loops.max(1) as u64),
                            targets.len() as u32,
                        );
                        spawn::CloneSpec {
                            job,
                            job_index: ji,
                            clone,
                            thread_number: crate::gen::fio_thread_number(
                                firsts[ji],
                                job.exec.numjobs,
                                clone,
                            ),
                            groupid: gids[ji],
                            targets,
                        }
                    }),
                    Err(e) => {
                        eprintln!("iobench: {e}");
                        failed += 1;
                        prepared_ok = false;
                    }
                }
            }
        }
        if !prepared_ok && specs.is_empty() {
            continue;
        }
        let results = spawn::run_together(&specs);
        for (spec, r) in specs.iter().zip(results) {
            let ok = matches!(&r, Ok(s) if s.error == 0);
            crate::stats::live::set_state(spec.thread_number, if ok { '_' } else { 'X' });
            match r {
                Ok(s) => {
                    if s.error != 0 {
                        failed += 1;
                    }
                    outcome.results.push(s);
                }
                Err(e) => {
                    eprintln!("iobench: {e}");
                    failed += 1;
                }
            }
            if spec.job.files.unlink {
                files::unlink_created(&spec.targets);
            }
        }
        clear_stop();
    }
    outcome.signal = signals::signalled();
    let code = if outcome.signal.is_some() {
        signals::SIGNAL_EXIT
    } else {
        failed.min(127) as u8
    };
    (outcome, code)
}

/// Applies `cpus_allowed`/`cpumask` and `nice` to the calling worker (process or thread).
fn apply_placement(job: &Job) -> Result<(), RunError> {
    let fail = |what: &str| RunError::Setup {
        job: job.name.clone(),
        message: format!("{what}: {}", std::io::Error::last_os_error()),
    };
    if let Some(cpus) = &job.exec.cpus_allowed {
        // SAFETY: cpu_set_t is plain data; CPU_SET only sets bits inside it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            // SAFETY: c is below CPU_SETSIZE.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        // SAFETY: pid 0 is the calling thread; set is a valid cpu_set_t of that size.
        if unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } < 0 {
            return Err(fail("cpus_allowed"));
        }
    }
    if let Some(n) = job.exec.nice {
        // SAFETY: gettid has no arguments; setpriority on a thread id changes only it.
        let r = unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, n)
        };
        if r < 0 {
            return Err(fail("nice"));
        }
    }
    Ok(())
}
