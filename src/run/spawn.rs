//! Starting a group's job clones together and collecting their stats: a forked process
//! per clone by default (as fio does), a thread per clone with `thread=1`. A process
//! sends its stats back as JSON over a pipe; one that dies without doing so is reported
//! with its job name. The collector forwards a stop (signal or `exitall`) to every worker
//! and never waits on a worker that is gone.

use super::files::Target;
use crate::job::errors::ExitWhat;
use crate::job::Job;
use crate::stats::JobStats;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// One clone to run.
pub struct CloneSpec<'a> {
    pub job: &'a Job,
    pub job_index: usize,
    pub clone: u32,
    /// fio's 1-based thread number among all clones of the run (seeds randomness).
    pub thread_number: u64,
    pub groupid: u32,
    pub targets: Vec<Target>,
    /// With `create_serialize=0`: the "Laying out" line this clone prints itself
    /// (when the normal report goes to stdout) before laying out its files.
    pub layout_note: Option<String>,
}

/// What a worker hands back.
type Outcome = Result<JobStats, String>;

enum Worker<'s> {
    Proc {
        pid: libc::pid_t,
        pipe: OwnedFd,
        buf: Vec<u8>,
    },
    Thread(std::thread::ScopedJoinHandle<'s, Outcome>),
    Done,
}

fn run_one(spec: &CloneSpec<'_>) -> Outcome {
    if let Some(comm) = &spec.job.exec.comm {
        set_comm(comm);
    }
    // A panic in a worker must not unwind into the collector's code (in a forked child
    // that would run the parent's logic twice): it becomes this clone's error.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| super::run_clone(spec))) {
        Ok(Ok(stats)) => Ok(stats),
        // A clone that could not start (a file it may not open, a CPU set it may not
        // use) is still reported, with its error, as fio reports it in its JSON.
        Ok(Err(e)) => {
            eprintln!("iobench: {e}");
            let mut s = JobStats::for_job(spec.job, spec.job_index, spec.groupid);
            s.pid = std::process::id();
            s.error = e.errno();
            s.verror = e.to_string();
            s.failed = true;
            Ok(s)
        }
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown cause".into());
            Err(format!("worker for job '{}' failed: {what}", spec.job.name))
        }
    }
}

/// `comm=NAME`: names the clone's process (or thread) as fio 3.42 does, with
/// prctl(PR_SET_NAME), which keeps the first 15 bytes. Like fio, a failure is ignored.
fn set_comm(comm: &str) {
    let Ok(name) = std::ffi::CString::new(comm) else {
        return;
    };
    // SAFETY: PR_SET_NAME reads a NUL-terminated string from a pointer we own for the call.
    unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
}

/// Forks a worker process for `spec`.
fn fork_worker(spec: &CloneSpec<'_>) -> Result<(libc::pid_t, OwnedFd), String> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two descriptors into the array we own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just opened by pipe2 and are owned by nobody else.
    let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    use crate::debug::RunState;
    crate::debug::runstate_of(0, RunState::NotCreated, RunState::Created);
    crate::dprint!(crate::debug::Cat::Process, "will fork");
    let started_before = crate::debug::started_count();
    // SAFETY: the main process forks only from its main thread while no other thread of
    // ours is running; the child runs the clone and leaves with _exit, never returning.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        crate::debug::forked_child(spec.thread_number);
        drop(rd);
        super::signals::become_worker();
        crate::debug::started(spec_ramps(spec));
        // Its own session, as fio's forked workers make theirs: with the kernel's
        // autogroup scheduling (sched_autogroup_enabled) each clone then gets a session's
        // share of a busy machine, as fio's do, rather than all clones sharing one. The
        // terminal's SIGINT reaches the main process only; it passes SIGTERM on.
        // SAFETY: setsid has no preconditions; a forked child is never a group leader.
        unsafe { libc::setsid() };
        let out = run_one(spec);
        crate::debug::enter(RunState::Exited);
        let bytes = serde_json::to_vec(&out).unwrap_or_default();
        let mut off = 0;
        while off < bytes.len() {
            // SAFETY: writes from our own buffer to our own pipe end.
            let n = unsafe {
                libc::write(
                    wr.as_raw_fd(),
                    bytes[off..].as_ptr().cast(),
                    bytes.len() - off,
                )
            };
            if n <= 0 {
                if n < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                    continue;
                }
                break;
            }
            off += n as usize;
        }
        // SAFETY: leaves the child at once, running none of the parent's exit handlers.
        unsafe { libc::_exit(if out.is_ok() { 0 } else { 1 }) };
    }
    drop(wr);
    crate::debug::forked(spec.thread_number, pid, started_before);
    Ok((pid, rd))
}

/// True when the clone begins with a ramp period (fio's RAMP state).
fn spec_ramps(spec: &CloneSpec<'_>) -> bool {
    spec.job.exec.ramp_time_us > 0 || spec.job.exec.ramp_bytes > 0
}

fn describe_status(status: i32) -> String {
    if libc::WIFSIGNALED(status) {
        format!("killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    }
}

/// Runs every clone of `specs` at once and returns their outcomes in order.
pub fn run_together(specs: &[CloneSpec<'_>]) -> Vec<Outcome> {
    let _ = std::io::Write::flush(&mut std::io::stdout());
    // Before any clone's buffers fault: the pages fio's start-up takes (see why there).
    if specs.iter().any(|s| {
        s.job.exec.direct && s.job.buffers.mem.kind == crate::job::buffers::MemKind::Malloc
    }) {
        crate::buffer::mem::start_up_footprint();
    }
    let mut results: Vec<Option<Outcome>> = specs.iter().map(|_| None).collect();
    // Each worker thread's id, published as it starts (for `--debug=process`).
    let tids: Vec<std::sync::atomic::AtomicI32> = specs
        .iter()
        .map(|_| std::sync::atomic::AtomicI32::new(0))
        .collect();
    std::thread::scope(|scope| {
        let mut workers: Vec<Worker<'_>> = Vec::with_capacity(specs.len());
        // Processes first, while this is still the only thread.
        for (i, s) in specs.iter().enumerate() {
            if s.job.exec.thread {
                workers.push(Worker::Done);
                continue;
            }
            match fork_worker(s) {
                Ok((pid, pipe)) => workers.push(Worker::Proc {
                    pid,
                    pipe,
                    buf: Vec::new(),
                }),
                Err(e) => {
                    results[i] = Some(Err(e));
                    workers.push(Worker::Done);
                }
            }
        }
        let stops: Vec<&'static AtomicBool> = specs
            .iter()
            .map(|_| &*Box::leak(Box::new(AtomicBool::new(false))))
            .collect();
        for (i, s) in specs.iter().enumerate() {
            if s.job.exec.thread {
                let flag = stops[i];
                let tid = &tids[i];
                use crate::debug::RunState;
                crate::debug::runstate_of(0, RunState::NotCreated, RunState::Created);
                crate::dprint!(crate::debug::Cat::Process, "will pthread_create");
                workers[i] = Worker::Thread(scope.spawn(move || {
                    // SAFETY: gettid has no preconditions and cannot fail.
                    tid.store(unsafe { libc::gettid() }, Ordering::Release);
                    crate::debug::started(spec_ramps(s));
                    crate::stop::set_clone_stop(flag);
                    super::watchdog::note_thread(s.thread_number);
                    super::signals::block_usr1_here();
                    let out = run_one(s);
                    crate::debug::enter(RunState::Exited);
                    out
                }));
                if crate::debug::on(crate::debug::Cat::Process) {
                    // As fio's main thread waits for a new job to be initialized before
                    // letting it run: here only to name the thread in the lines.
                    let deadline = std::time::Instant::now() + Duration::from_secs(1);
                    while tid.load(Ordering::Acquire) == 0 && std::time::Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            }
        }
        // fio lets the new jobs run once all of them are made.
        if crate::debug::on(crate::debug::Cat::Process) {
            for (i, s) in specs.iter().enumerate() {
                let pid = match &workers[i] {
                    Worker::Proc { pid, .. } => *pid,
                    Worker::Thread(_) => tids[i].load(Ordering::Acquire),
                    Worker::Done => continue,
                };
                crate::debug::let_run(s.thread_number, &s.job.name, pid, spec_ramps(s));
            }
        }
        let mut steady = super::steady::Monitor::new(specs);
        let mut watchdog = super::watchdog::Monitor::new(specs);
        collect(
            specs,
            &mut workers,
            &mut results,
            &stops,
            &mut steady,
            &mut watchdog,
        );
        for (i, report) in steady.iter().flat_map(|m| m.reports()) {
            if let Some(Ok(stats)) = &mut results[i] {
                stats.steady = Some(report);
            }
        }
    });
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("worker ended without results".into())))
        .collect()
}

/// Asks one running clone to stop: a process by SIGTERM, a thread by its own flag.
fn stop_clone(w: &Worker<'_>, flag: &AtomicBool) {
    match w {
        Worker::Proc { pid, .. } => {
            // SAFETY: signals our own child, which is alive or a zombie until reaped.
            unsafe { libc::kill(*pid, libc::SIGTERM) };
        }
        Worker::Thread(_) => flag.store(true, Ordering::Relaxed),
        Worker::Done => {}
    }
}

fn collect(
    specs: &[CloneSpec<'_>],
    workers: &mut [Worker<'_>],
    results: &mut [Option<Outcome>],
    stops: &[&'static AtomicBool],
    steady: &mut Option<super::steady::Monitor>,
    watchdog: &mut Option<super::watchdog::Monitor>,
) {
    let mut forwarded = false;
    loop {
        if workers.iter().all(|w| matches!(w, Worker::Done)) {
            return;
        }
        if super::terminating() && !forwarded {
            forwarded = true;
            for w in workers.iter() {
                if let Worker::Proc { pid, .. } = w {
                    // SAFETY: signals our own child, which is alive or a zombie until reaped.
                    unsafe { libc::kill(*pid, libc::SIGTERM) };
                }
            }
        }
        let mut pfds: Vec<libc::pollfd> = Vec::new();
        let mut idx: Vec<usize> = Vec::new();
        for (i, w) in workers.iter().enumerate() {
            if let Worker::Proc { pipe, .. } = w {
                pfds.push(libc::pollfd {
                    fd: pipe.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                });
                idx.push(i);
            }
        }
        // Wake for the steady-state sampling when it is due sooner than the usual poll.
        let due = steady.as_ref().map_or(u64::MAX, |m| m.ms_to_next());
        let wait_ms = due.min(50) as libc::c_int;
        // SAFETY: pfds is a valid array of pollfd of the given length.
        unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, wait_ms) };
        let mut finished = Vec::new();
        for (p, &i) in pfds.iter().zip(&idx) {
            if p.revents == 0 {
                continue;
            }
            if let Worker::Proc { pipe, buf, .. } = &mut workers[i] {
                let mut chunk = [0u8; 65536];
                // SAFETY: reads into our stack buffer from our pipe end.
                let n =
                    unsafe { libc::read(pipe.as_raw_fd(), chunk.as_mut_ptr().cast(), chunk.len()) };
                if n > 0 {
                    buf.extend_from_slice(&chunk[..n as usize]);
                } else if n == 0
                    || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    finished.push(i);
                }
            }
        }
        for i in finished {
            if let Worker::Proc { pid, buf, .. } = std::mem::replace(&mut workers[i], Worker::Done)
            {
                let mut status = 0;
                // SAFETY: reaps our own child; it closed its pipe, so it is exiting.
                while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                }
                let out = match serde_json::from_slice::<Outcome>(&buf) {
                    Ok(o) => o,
                    Err(_) => Err(format!(
                        "worker process {pid} for job '{}' {} without results",
                        specs[i].job.name,
                        describe_status(status)
                    )),
                };
                let failed = !matches!(&out, Ok(s) if !s.failed);
                crate::debug::reaped(specs[i].thread_number);
                super::interim::finished(specs[i].thread_number, out.as_ref().ok());
                results[i] = Some(out);
                finished_clone(specs, workers, stops, i, failed);
            }
        }
        for i in 0..workers.len() {
            if matches!(&workers[i], Worker::Thread(h) if h.is_finished()) {
                if let Worker::Thread(h) = std::mem::replace(&mut workers[i], Worker::Done) {
                    let out = h.join().unwrap_or_else(|_| {
                        Err(format!(
                            "worker thread for job '{}' panicked",
                            specs[i].job.name
                        ))
                    });
                    let failed = !matches!(&out, Ok(s) if !s.failed);
                    crate::debug::reaped(specs[i].thread_number);
                    super::interim::finished(specs[i].thread_number, out.as_ref().ok());
                    results[i] = Some(out);
                    finished_clone(specs, workers, stops, i, failed);
                }
            }
        }
        if pfds.is_empty() {
            std::thread::sleep(Duration::from_millis(due.min(20)));
        }
        super::live_tick();
        super::interim::tick();
        crate::debug::repeat_waits();
        if let Some(m) = steady.as_mut() {
            m.tick(specs, |i| stop_clone(&workers[i], stops[i]));
        }
        if let Some(m) = watchdog.as_mut() {
            m.tick(
                |i| stop_clone(&workers[i], stops[i]),
                |i| match &workers[i] {
                    Worker::Proc { pid, .. } => Some(*pid),
                    _ => None,
                },
            );
        }
    }
}

/// `exitall` (set on any job, it applies to all, as in fio) or `exitall_on_error` with a
/// failed clone: when clone `i` ends, stop the clones `exit_what` names: the running
/// ones of its reporting group, every running one, or every job including later groups.
fn finished_clone(
    specs: &[CloneSpec<'_>],
    workers: &[Worker<'_>],
    stops: &[&'static AtomicBool],
    i: usize,
    failed: bool,
) {
    let spec = &specs[i];
    let errs = &spec.job.exec.errors;
    if !(super::exitall_any() || (errs.exitall_on_error && failed)) {
        return;
    }
    match errs.exit_what {
        ExitWhat::Group => {
            for (j, w) in workers.iter().enumerate() {
                if specs[j].groupid == spec.groupid {
                    stop_clone(w, stops[j]);
                }
            }
        }
        ExitWhat::Stonewall => super::request_stop(),
        ExitWhat::All => super::request_stop_all(),
    }
}
