//! The runner: checks and prepares every job's targets, starts the clones of each group
//! together (processes by default, threads with `thread=1`), runs the groups in order, and
//! collects each clone's stats. `worker` is the per-clone I/O loop.

pub mod cgroup;
pub mod claim;
pub mod filelock;
pub mod files;
pub mod flow;
pub mod groups;
pub mod hooks;
pub mod interim;
pub mod io_errors;
pub mod iosched;
pub mod limits;
pub mod lockmem;
pub mod numa;
pub mod open_files;
pub mod pacing;
pub mod signals;
pub mod spawn;
pub mod steady;
pub mod syncing;
pub mod watchdog;
pub mod worker;

use crate::cli::CliConfig;
use crate::engine::registry::EngineVisitor;
use crate::engine::{Engine, EngineFile};
use crate::error::RunError;
use crate::job::Job;
use crate::stats::{JobStats, RunOutcome};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Set when any job has `exitall` (fio applies it to every job then).
static EXITALL_ANY: AtomicBool = AtomicBool::new(false);
/// The status line while the run goes (with `--eta`): what each clone will do and the
/// line's own memory; drawn from the collector's loop by [`live_tick`].
struct Status {
    line: crate::stats::status::EtaLine,
    plans: Vec<crate::stats::board::Plan>,
    every_ms: u64,
    next_ms: u64,
    /// With JSON or terse on stdout, a forced status line (`--eta=always`) goes to
    /// stderr so the machine output stays parseable.
    to_stdout: bool,
}

static STATUS: std::sync::Mutex<Option<Status>> = std::sync::Mutex::new(None);

/// Called for every phase (the jobs that start together) once its files are laid out and
/// just before its clones start, with the phase's index: the MPI runner's barrier and
/// agreed start (src/cluster), so that a phase starts on every rank at once. Every phase
/// calls it, even one with nothing to run, so all ranks meet the same number of times.
static PHASE_START: std::sync::OnceLock<fn(usize)> = std::sync::OnceLock::new();

/// Sets the phase-start hook (once per process; the MPI runner is its one user).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn set_phase_start(f: fn(usize)) {
    let _ = PHASE_START.set(f);
}

fn phase_start(phase: usize) {
    if let Some(f) = PHASE_START.get() {
        f(phase);
    }
}

/// Redraws the status line when its interval is due (main process only; a few times a
/// second at most, never on an I/O path).
pub(crate) fn live_tick() {
    let Ok(mut guard) = STATUS.lock() else {
        return;
    };
    let Some(st) = guard.as_mut() else {
        return;
    };
    if crate::stats::board::board_ms() < st.next_ms {
        return;
    }
    let (jobs, now) = crate::stats::board::snapshot(&st.plans);
    st.next_ms = now + st.every_ms;
    let text = st.line.render(&jobs, now);
    use std::io::Write;
    if st.to_stdout {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    } else {
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
}

/// Which board slots (thread number - 1) belong to jobs that do I/O, noted by the runner
/// before the workers start (forked workers inherit it).
static IO_CLONES: OnceLock<Vec<bool>> = OnceLock::new();

/// Notes which clones do real I/O, in thread-number order (one flag per clone).
pub fn note_io_clones(io: Vec<bool>) {
    let _ = IO_CLONES.set(io);
}

/// True while a job that does I/O is pending or running (fio's
/// `fio_running_or_pending_io_threads`).
fn io_jobs_active() -> bool {
    let Some(io) = IO_CLONES.get() else {
        return false;
    };
    io.iter().enumerate().any(|(i, &is_io)| {
        is_io
            && crate::stats::board::slot(i as u64 + 1)
                .is_some_and(|s| !matches!(s.state_letter(), 'E' | '_' | 'X'))
    })
}

/// Sets up the board and, when the status line is on, its drawing state.
fn start_status(cfg: &CliConfig, jobs: &[Job], clones: usize) {
    crate::stats::board::init(clones);
    note_io_clones(
        jobs.iter()
            .flat_map(|j| {
                let io = !j.exec.engine.flags().no_io;
                std::iter::repeat_n(io, j.exec.numjobs.max(1) as usize)
            })
            .collect(),
    );
    crate::engine::cpuio::note_io_probe(io_jobs_active);
    if !crate::stats::status::enabled(cfg, crate::stats::status::stdout_is_tty()) {
        return;
    }
    let Some(first) = jobs.first() else {
        return;
    };
    let st = &first.report.stats;
    let mut plans = Vec::with_capacity(clones);
    for j in jobs {
        for _ in 0..j.exec.numjobs.max(1) {
            plans.push(crate::stats::board::Plan {
                runtime_s: j.exec.runtime_us / 1_000_000,
                time_based: j.exec.time_based,
                ramp_s: (j.exec.ramp_time_us + j.exec.startdelay_us.lo) / 1_000_000,
                stonewall: j.exec.stonewall || j.exec.new_group,
                limits: rate_limits(j),
                ..Default::default()
            });
        }
    }
    let line = crate::stats::status::EtaLine::new(
        st.kb_base == 1024,
        st.bits,
        st.sig_figs,
        cfg.eta_newline.unwrap_or(0),
    );
    if let Ok(mut g) = STATUS.lock() {
        *g = Some(Status {
            line,
            plans,
            every_ms: cfg.eta_interval.unwrap_or(1000).max(250),
            next_ms: 0,
            to_stdout: cfg.wants_normal() && !cfg.live_on_stdout(),
        });
    }
}

/// The job's rate limits over the directions its pattern does, for the status line.
fn rate_limits(job: &Job) -> crate::stats::board::RateLimits {
    use crate::defs::Pattern as P;
    let p = job.workload.pattern;
    let trims = matches!(p, P::Trim | P::RandTrim | P::TrimWrite | P::RandTrimWrite);
    let does = [p.reads(), p.writes(), trims];
    let r = &job.exec.rate;
    let sum = |v: &[u64; 3]| (0..3).filter(|&d| does[d]).map(|d| v[d]).sum();
    crate::stats::board::RateLimits {
        min_bps: sum(&r.min_bps),
        max_bps: sum(&r.bps),
        min_iops: sum(&r.min_iops),
        max_iops: sum(&r.iops),
    }
}

/// Records what a prepared clone will move, for its ETA.
fn plan_clone(thread_number: u64, job: &Job, targets: &[files::Target]) {
    let Ok(mut g) = STATUS.lock() else { return };
    let Some(st) = g.as_mut() else { return };
    let Some(p) = st.plans.get_mut((thread_number as usize).wrapping_sub(1)) else {
        return;
    };
    let per_pass = match job.workload.io_size.or(job.workload.size) {
        Some(crate::defs::value::SizeSpec::Bytes(b)) if b > 0 => b,
        _ => targets.iter().map(|t| t.size).sum(),
    };
    p.bytes_total = per_pass.saturating_mul(job.exec.loops.max(1) as u64);
    p.files = targets.len() as u32;
}

/// Stops drawing the status line. The last one ends in `\r`; the report's leading blank
/// line follows it, as in fio's output.
fn end_status() {
    if let Ok(mut g) = STATUS.lock() {
        *g = None;
    }
}

/// True when the normal report goes to stdout: fio's informational lines go there too.
static INFO_ON_STDOUT: AtomicBool = AtomicBool::new(false);

/// Prints one of fio's informational lines ("Laying out …", "Saving output of …") where
/// fio would: on stdout with the normal report, nowhere when stdout carries JSON or terse.
pub(crate) fn info(s: &str) {
    if INFO_ON_STDOUT.load(Ordering::Relaxed) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(s.as_bytes());
        let _ = out.flush();
    }
}

/// Prints fio's closing line of a failed job: on stdout with the normal report there, on
/// stderr otherwise, so `--output=FILE` and JSON/terse on stdout stay clean.
pub(crate) fn error_line(s: &str) {
    use std::io::Write;
    if INFO_ON_STDOUT.load(Ordering::Relaxed) {
        let _ = std::io::stdout().lock().write_all(s.as_bytes());
    } else {
        let _ = std::io::stderr().lock().write_all(s.as_bytes());
    }
}

pub use crate::stop::{request_stop, request_stop_all, terminating};

fn stopped_all() -> bool {
    crate::stop::stop_all_requested() || signals::signalled().is_some()
}

/// True when some job of the run has `exitall`.
pub(crate) fn exitall_any() -> bool {
    EXITALL_ANY.load(Ordering::Relaxed)
}

/// Lets the next group run after an `exitall` stop (a signal's or `exit_what=all`'s
/// stop stays).
fn clear_stop() {
    if !stopped_all() {
        crate::stop::clear(false);
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
    // NUMA nodes this machine lacks stop the run before anything starts, as fio's job
    // parsing does (its --parse-only lets them through, and so does iobench's).
    for job in jobs {
        let e = &job.exec;
        if let Some(msg) =
            crate::job::numa::offline_node(e.numa_cpu_nodes.as_deref(), e.numa_mem_policy.as_ref())
        {
            return Err(format!("job '{}': {msg}", job.name));
        }
    }
    files::preflight(cfg.readonly, jobs)?;
    steady::preflight(jobs)
}

/// Runs one clone over its prepared targets, in this process or thread.
pub fn run_clone(spec: &spawn::CloneSpec<'_>) -> Result<JobStats, RunError> {
    let job = spec.job;
    let err = |source| RunError::Io {
        job: job.name.clone(),
        source,
    };
    apply_placement(job, spec.thread_number)?;
    // In the group for the whole of the clone's work; dropping it moves the clone back.
    let _cgroup = match &job.exec.cgroup {
        Some(name) => Some(
            cgroup::enter(name, job.exec.cgroup_weight).map_err(|source| RunError::Io {
                job: job.name.clone(),
                source,
            })?,
        ),
        None => None,
    };
    if let Some(note) = &spec.layout_note {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(note.as_bytes());
        let _ = out.flush();
    }
    // fio lays a job's files out in the job itself only without create_serialize.
    let own_setup = !job.files.create_serialize;
    if own_setup {
        crate::debug::enter(crate::debug::RunState::SettingUp);
    }
    files::lay_out_deferred(job, &spec.targets).map_err(err)?;
    // Each file's region, for the cache `invalidate` drops at open.
    let targets = files::with_cache_ranges(job, spec.clone, &spec.targets);
    if own_setup {
        crate::debug::enter(crate::debug::RunState::Running);
    }
    if let Some(src) = job.exec.clocksource {
        crate::clock::select(src).map_err(|message| RunError::Setup {
            job: job.name.clone(),
            message,
        })?;
    }
    let no_files = !job.exec.engine.runner_opens_files();
    let lazy = open_files::wants_lazy(job, targets.len());
    if lazy && job.exec.offload {
        return Err(RunError::Setup {
            job: job.name.clone(),
            message: "io_submit_mode=offload cannot open and close files as the job goes \
                      (openfiles below the number of files, or unlink_each_loop)"
                .into(),
        });
    }
    let opened = if no_files || lazy {
        Vec::new()
    } else {
        files::open_all(job, &targets).map_err(err)?
    };
    if let Some(name) = job
        .exec
        .ioscheduler
        .as_ref()
        .filter(|_| !job.exec.engine.flags().diskless)
    {
        iosched::switch(name, &targets).map_err(|message| RunError::Setup {
            job: job.name.clone(),
            message,
        })?;
    }
    hooks::run(job, hooks::Hook::Prerun)?;
    let _pinned = lockmem::pin(job.exec.lockmem).map_err(|message| RunError::Setup {
        job: job.name.clone(),
        message,
    })?;
    let writable = files::job_writes(job);
    let fds: Vec<i32> = if no_files || lazy {
        targets.iter().map(|_| -1).collect()
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
    let names: Vec<String> = targets.iter().map(|t| t.path.clone()).collect();
    let extents: Vec<crate::gen::FileExtent> = spec
        .targets
        .iter()
        .map(|t| {
            crate::gen::FileExtent::new(&t.path, t.size)
                .laid_out_from(t.setup_size)
                .planned(t.planned)
                .on_device(t.kind != files::Kind::Regular)
                .with_zones(crate::gen::zbd::table_of(&t.path))
        })
        .collect();
    let gen =
        crate::gen::Generator::with_thread_number(job, spec.clone, spec.thread_number, &extents)
            .map_err(|e| RunError::Setup {
                job: job.name.clone(),
                message: match e {
                    crate::error::JobError::Invalid { message, .. } => message,
                    other => other.to_string(),
                },
            })?;
    for note in gen.zbd_notes() {
        info(note);
    }
    let zbd_report = gen.zbd_report();
    let mut stats = JobStats::for_job(job, spec.job_index, spec.groupid);
    stats.pid = std::process::id();
    stats.set_continue_on_error(job.exec.errors.continues());
    stats.live = crate::stats::board::slot(spec.thread_number);
    if let Some(slot) = stats.live {
        slot.set_running(crate::stats::board::running_letter(job.workload.pattern));
    }
    stats.set_log_number(spec.thread_number);
    let cx = worker::WorkerCtx {
        job,
        fds: &fds,
        files: &efiles,
        names: &names,
        targets: &targets,
        lazy,
        gen,
        stats,
    };
    let ru_start = crate::stats::cpu::Rusage::take(crate::stats::cpu::Who::Thread);
    let r = if job.exec.offload {
        Visit { cx }.visit(crate::engine::offload::Offload::new(&job.exec.engine))
    } else {
        job.exec.engine.for_clone(spec.clone).visit(Visit { cx })
    }
    .map_err(err);
    crate::debug::enter(crate::debug::RunState::Finishing);
    drop(opened);
    if let Some(slot) = crate::stats::board::slot(spec.thread_number) {
        slot.set_exited();
    }
    hooks::run(job, hooks::Hook::Postrun)?;
    r.map(|mut s| {
        let start = s.cpu_start.unwrap_or(ru_start);
        s.set_cpu(crate::stats::cpu::Rusage::take(crate::stats::cpu::Who::Thread).since(&start));
        s.job_index = spec.job_index;
        if let Some(z) = &zbd_report {
            s.zone_resets = z.resets();
            if let Some((errno, text)) = z.error() {
                eprintln!("iobench: job '{}': {text}", job.name);
                s.record_error(errno, &text);
                s.failed = true;
            }
        }
        if let Err(e) = s.finish_logs() {
            eprintln!("iobench: {}: writing logs: {e}", job.name);
        }
        s
    })
}

/// `zonemode=zbd`: makes the zones of the clone's files (or finds those an earlier job
/// made), in the main process so that every worker shares them; refused as fio refuses
/// it (a file smaller than a zone, a real zoned device, conflicting zone options).
fn attach_zones(job: &Job, clone: u32, targets: &[files::Target]) -> Result<(), RunError> {
    if job.workload.zbd.is_none() {
        return Ok(());
    }
    let err = |message: String| RunError::Setup {
        job: job.name.clone(),
        message,
    };
    let mut sizes: Vec<u64> = targets.iter().map(|t| t.size).collect();
    // The null engine's files reach as far as the job's I/O, as in the generator.
    if job.exec.engine.flags().fake_files {
        sizes = crate::gen::plan::layout_size(job, clone, &sizes);
    }
    for t in targets.iter().filter(|t| t.kind == files::Kind::Block) {
        if let Some(model) = files::zoned_model(&t.path) {
            return Err(err(format!(
                "{}: a {model} zoned block device: iobench emulates zones on regular files \
                 and devices without zones only",
                t.path
            )));
        }
    }
    let named: Vec<(&str, u64)> = targets
        .iter()
        .zip(&sizes)
        .map(|(t, &s)| (t.path.as_str(), s))
        .collect();
    crate::gen::zbd::attach(job, &named)
        .map(|_| ())
        .map_err(err)
}

/// Runs every job: groups in order, the clones of a group at once. Returns the stats of
/// every clone that ran and the exit status (fio's: 128 after a signal, else the number of
/// failed clones, capped).
pub fn run_all(cfg: &CliConfig, jobs: &[Job]) -> (RunOutcome, u8) {
    signals::install_main();
    // A process may run several times (the points of a sweep): an earlier run's
    // `exitall` must not stop this one; a signal still does.
    if signals::signalled().is_none() {
        crate::stop::clear(true);
    }
    // fio's clocksource is global: the last job that sets it decides, before any job runs.
    if let Some(src) = jobs.iter().rev().find_map(|j| j.exec.clocksource) {
        if let Err(e) = crate::clock::select(src) {
            eprintln!("iobench: {e}");
            return (RunOutcome::default(), 1);
        }
    }
    crate::clock::select_default();
    // `gtod_cpu` of any job starts fio's one time thread, on every CPU so named.
    let gtod_cpus: Vec<usize> = jobs.iter().filter_map(|j| j.exec.gtod_cpu).collect();
    let _gtod = if gtod_cpus.is_empty() {
        None
    } else {
        match crate::clock::GtodOffload::start(&gtod_cpus) {
            Ok(g) => Some(g),
            Err(e) => {
                eprintln!("iobench: {e}");
                return (RunOutcome::default(), 1);
            }
        }
    };
    let cgroups: Vec<(String, bool)> = jobs
        .iter()
        .filter_map(|j| Some((j.exec.cgroup.clone()?, j.exec.cgroup_nodelete)))
        .collect();
    let _cgroups = cgroup::Cleanup::plan(&cgroups);
    EXITALL_ANY.store(jobs.iter().any(|j| j.exec.exitall), Ordering::Relaxed);
    flow::setup(jobs);
    crate::gen::zbd::clear_tables();
    let gids = crate::job::group_ids(jobs);
    let normal = cfg.wants_normal() && cfg.report_on_stdout();
    INFO_ON_STDOUT.store(normal, Ordering::Relaxed);
    signals::notice_on_stdout(cfg.wants_normal() && !cfg.live_on_stdout());
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
    start_status(cfg, jobs, (first_thread - 1) as usize);
    interim::start(
        interim_clones(jobs, &firsts, &gids),
        cfg.snapshot_every_ms(),
        cfg.status_interval.is_some(),
    );
    use crate::debug::RunState;
    let phases = groups::phases(jobs);
    for (phase_no, phase) in phases.iter().enumerate() {
        let phase: &[usize] = phase;
        if stopped_all() {
            phase_start(phase_no);
            // fio still reports the jobs a signal or `exit_what=all` kept from starting,
            // with nothing done.
            for &ji in phase {
                for _ in 0..jobs[ji].exec.numjobs.max(1) {
                    outcome
                        .results
                        .push(JobStats::for_job(&jobs[ji], ji, gids[ji]));
                }
            }
            continue;
        }
        let mut specs = Vec::new();
        for &ji in phase {
            let job = &jobs[ji];
            for clone in 0..job.exec.numjobs.max(1) {
                let thread_number =
                    crate::gen::fio_thread_number(firsts[ji], job.exec.numjobs, clone);
                let serial_setup = job.files.create_serialize;
                if serial_setup {
                    crate::debug::runstate_of(0, RunState::NotCreated, RunState::SettingUp);
                }
                let prepared = files::prepare(job, clone, thread_number, &mut info)
                    .and_then(|p| attach_zones(job, clone, &p.targets).map(|()| p));
                if serial_setup {
                    crate::debug::runstate_of(0, RunState::SettingUp, RunState::NotCreated);
                }
                match prepared {
                    Ok(p) if job.files.create_only => {
                        // Only the layout: fio reports the job with nothing done.
                        if let Some(note) = &p.deferred_note {
                            info(note);
                        }
                        if let Err(e) = files::lay_out_deferred(job, &p.targets) {
                            eprintln!("iobench: job '{}': {e}", job.name);
                            failed += 1;
                        }
                        let mut s = JobStats::for_job(job, ji, gids[ji]);
                        s.pid = std::process::id();
                        outcome.results.push(s);
                    }
                    Ok(p) => specs.push({
                        plan_clone(thread_number, job, &p.targets);
                        spawn::CloneSpec {
                            job,
                            job_index: ji,
                            clone,
                            thread_number,
                            groupid: gids[ji],
                            targets: p.targets,
                            layout_note: p.deferred_note.filter(|_| normal),
                        }
                    }),
                    Err(e) => {
                        eprintln!("iobench: {e}");
                        failed += 1;
                        // The job stays in the report with its error, as in fio.
                        outcome
                            .results
                            .push(failed_stats(job, ji, gids[ji], e.errno()));
                    }
                }
            }
        }
        phase_start(phase_no);
        if specs.is_empty() {
            continue;
        }
        debug_phase_waits(jobs, phase, phases.get(phase_no + 1));
        let results = spawn::run_together(&specs);
        crate::debug::end_waits();
        for (spec, r) in specs.iter().zip(results) {
            if let Some(slot) = crate::stats::board::slot(spec.thread_number) {
                slot.set_done(!matches!(&r, Ok(s) if !s.failed));
            }
            match r {
                Ok(s) => {
                    if s.failed {
                        failed += 1;
                    }
                    outcome.results.push(s);
                }
                Err(e) => {
                    eprintln!("iobench: {e}");
                    failed += 1;
                    outcome.results.push(failed_stats(
                        spec.job,
                        spec.job_index,
                        spec.groupid,
                        libc::EIO,
                    ));
                }
            }
            if spec.job.files.unlink {
                files::unlink_created(&spec.targets);
            }
        }
        clear_stop();
    }
    crate::debug::run_ended(jobs.iter().any(|j| j.exec.engine.name() != "cpuio"));
    end_status();
    interim::end();
    outcome.signal = signals::signalled();
    let code = if outcome.signal.is_some() {
        signals::SIGNAL_EXIT
    } else {
        failed.min(127) as u8
    };
    (outcome, code)
}

/// `--debug=process`'s lines about the order jobs start in, as fio's main loop prints
/// them: a job whose `wait_for` job has finished may run; while `phase` runs, the first job
/// of the `next` phase waits for it (a stonewall, or the job it waits for).
fn debug_phase_waits(jobs: &[Job], phase: &[usize], next: Option<&Vec<usize>>) {
    if !crate::debug::on(crate::debug::Cat::Process) {
        return;
    }
    use crate::debug::Cat::Process;
    for &ji in phase {
        if let Some(w) = &jobs[ji].exec.wait_for {
            crate::dprint!(Process, "{}: {w} completed, can run", jobs[ji].name);
        }
    }
    let Some(&first) = next.and_then(|n| n.first()) else {
        return;
    };
    let job = &jobs[first];
    // Printed now, and again on each 100 ms turn of fio's main loop while this phase
    // runs (the job waited for is RUNNING by then).
    match &job.exec.wait_for {
        Some(w) if !job.exec.stonewall => {
            let waiting = format!("{}: waiting for {w}", job.name);
            crate::debug::start_waits(
                &[
                    format!("{} fenced by {w}(INITIALIZED)", job.name),
                    waiting.clone(),
                ],
                vec![format!("{} fenced by {w}(RUNNING)", job.name), waiting],
                false,
            );
        }
        _ => {
            let line = format!("{}: stonewall wait", job.name);
            crate::debug::start_waits(std::slice::from_ref(&line), vec![line.clone()], true);
        }
    }
}

/// The report entry of a clone that failed before doing any I/O: listed with its errno.
fn failed_stats(job: &Job, ji: usize, gid: u32, errno: i32) -> JobStats {
    let mut s = JobStats::for_job(job, ji, gid);
    s.error = errno;
    s.failed = true;
    s
}

/// Every clone of the run in report order, with its thread number and empty statistics,
/// for interim reports.
/// One blank statistics value per job, shared by its clones: built in the main process
/// before it forks, a copy per clone (about 60 KiB of histograms each) would sit in every
/// forked clone's resident set too.
fn interim_clones(
    jobs: &[Job],
    firsts: &[u64],
    gids: &[u32],
) -> Vec<(u64, std::sync::Arc<JobStats>)> {
    let mut v = Vec::new();
    for (ji, job) in jobs.iter().enumerate() {
        let mut blank = JobStats::for_job(job, ji, gids[ji]);
        blank.logs = None;
        let blank = std::sync::Arc::new(blank);
        for clone in 0..job.exec.numjobs.max(1) {
            let tn = crate::gen::fio_thread_number(firsts[ji], job.exec.numjobs, clone);
            v.push((tn, blank.clone()));
        }
    }
    v
}

/// The CPUs a clone may run on: the job's set, or with `cpus_allowed_policy=split` the
/// one CPU of the set that falls to clone `thread_number` (1-based, counted over the
/// whole run and wrapping around the set, as fio splits it).
pub fn clone_cpus(job: &Job, thread_number: u64) -> Option<Vec<usize>> {
    let mut cpus = job.exec.cpus_allowed.clone()?;
    // fio leaves the time thread's CPU to it (and, testing the number for zero, never
    // takes CPU 0 away).
    if let Some(g) = job.exec.gtod_cpu.filter(|&g| g != 0) {
        cpus.retain(|&c| c != g);
    }
    let cpus = &cpus;
    if !job.exec.cpus_split || cpus.is_empty() {
        return Some(cpus.clone());
    }
    let mut set: Vec<usize> = cpus.clone();
    set.sort_unstable();
    set.dedup();
    let i = (thread_number.saturating_sub(1) % set.len() as u64) as usize;
    Some(vec![set[i]])
}

/// `IOPRIO_CLASS_SHIFT`: where the class sits in an I/O priority value.
const IOPRIO_CLASS_SHIFT: u32 = 13;
/// `IOPRIO_CLASS_BE`: the class used when only a level is given.
const IOPRIO_CLASS_BE: u32 = 2;

/// The kernel's I/O priority value for `(class, level, hint)`; class 0 means best effort.
pub fn ioprio_value(class: u32, level: u32, hint: u32) -> u32 {
    let class = if class == 0 { IOPRIO_CLASS_BE } else { class };
    (class << IOPRIO_CLASS_SHIFT) | (hint << 3) | level
}

/// Sets the calling thread's I/O priority (`prio`, `prioclass`, `priohint`).
pub fn set_ioprio(class: u32, level: u32, hint: u32) -> std::io::Result<()> {
    // IOPRIO_WHO_PROCESS with who 0: the calling thread.
    // SAFETY: ioprio_set takes three integers and changes only the caller's priority.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            1 as libc::c_int,
            0 as libc::c_int,
            ioprio_value(class, level, hint) as libc::c_int,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Applies `cpus_allowed`/`cpumask` (split per clone when asked), `nice` and the I/O
/// priority to the calling worker (process or thread).
fn apply_placement(job: &Job, thread_number: u64) -> Result<(), RunError> {
    let fail = |what: &str| RunError::Setup {
        job: job.name.clone(),
        message: format!("{what}: {}", std::io::Error::last_os_error()),
    };
    if let Some(cpus) = clone_cpus(job, thread_number) {
        if cpus.is_empty() {
            return Err(RunError::Setup {
                job: job.name.clone(),
                message: "no CPUs set (cpus_allowed/cpumask is empty)".into(),
            });
        }
        if crate::affinity::pin_current_thread(&cpus).is_err() {
            return Err(fail("cpus_allowed"));
        }
    }
    // After cpus_allowed, as fio: the nodes' CPUs replace the set.
    if let Some(nodes) = &job.exec.numa_cpu_nodes {
        numa::run_on_nodes(nodes).map_err(|e| RunError::Setup {
            job: job.name.clone(),
            message: format!("numa_cpu_nodes: {e}"),
        })?;
    }
    if let Some(p) = &job.exec.numa_mem_policy {
        numa::set_policy(p).map_err(|e| RunError::Setup {
            job: job.name.clone(),
            message: format!("numa_mem_policy: {e}"),
        })?;
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
    if let Some((class, level, hint)) = job.exec.ioprio {
        set_ioprio(class, level, hint).map_err(|e| RunError::Setup {
            job: job.name.clone(),
            message: format!("ioprio_set: {e}"),
        })?;
    }
    // The group first: once the user is dropped, the group can no longer be changed.
    // (With `thread`, as in fio, the C library applies both to the whole process.)
    if let Some(gid) = job.exec.gid {
        // SAFETY: setgid takes a plain id; failure is reported through errno.
        if unsafe { libc::setgid(gid) } < 0 {
            return Err(fail("setgid"));
        }
    }
    if let Some(uid) = job.exec.uid {
        // SAFETY: setuid takes a plain id; failure is reported through errno.
        if unsafe { libc::setuid(uid) } < 0 {
            return Err(fail("setuid"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ioprio_get() -> i64 {
        // SAFETY: ioprio_get with IOPRIO_WHO_PROCESS and who 0 reads the caller's value.
        unsafe { libc::syscall(libc::SYS_ioprio_get, 1 as libc::c_int, 0 as libc::c_int) }
    }

    fn job(args: &[&str]) -> Job {
        let mut all = vec!["--name=x"];
        all.extend_from_slice(args);
        let inv = crate::cli::parse_args(&all).expect("arguments parse");
        crate::job::resolve(&inv.jobs[0]).expect("job resolves")
    }

    #[test]
    fn split_policy_gives_each_clone_one_cpu_in_turn() {
        // The CPU list is set directly: parsing refuses CPUs this machine lacks.
        let mut j = job(&["--cpus_allowed=0", "--cpus_allowed_policy=split"]);
        j.exec.cpus_allowed = Some(vec![1, 3, 4]);
        let got: Vec<_> = (1..=4).map(|t| clone_cpus(&j, t)).collect();
        assert_eq!(
            got,
            [Some(vec![1]), Some(vec![3]), Some(vec![4]), Some(vec![1])]
        );
        let mut j = job(&["--cpus_allowed=0"]);
        j.exec.cpus_allowed = Some(vec![1, 3, 4]);
        assert_eq!(clone_cpus(&j, 2), Some(vec![1, 3, 4]));
        assert_eq!(clone_cpus(&job(&[]), 1), None);
        let j = job(&["--prio=3"]);
        assert_eq!(j.exec.ioprio, Some((0, 3, 0)));
        assert_eq!(ioprio_value(0, 3, 0), (2 << 13) | 3);
        let j = job(&["--priohint=2"]);
        assert_eq!(j.exec.ioprio, Some((0, 0, 2)));
        assert_eq!(ioprio_value(0, 0, 2), (2 << 13) | (2 << 3));
        assert!(job(&["--io_submit_mode=offload"]).exec.offload);
        assert!(!job(&["--io_submit_mode=inline"]).exec.offload);
    }

    #[test]
    fn ioprio_is_set_on_the_calling_thread() {
        std::thread::spawn(|| {
            set_ioprio(0, 5, 0).expect("ioprio_set");
            assert_eq!(ioprio_get(), ((2 << 13) | 5) as i64);
            set_ioprio(3, 0, 0).expect("ioprio_set idle");
            assert_eq!(ioprio_get(), (3 << 13) as i64);
        })
        .join()
        .expect("thread");
    }
}
