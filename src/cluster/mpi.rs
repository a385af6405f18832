//! The MPI runner (cargo feature `mpi`): one rank per process that `mpirun` started.
//!
//! 1. Rank 0 reads the command line's job files and broadcasts arguments and files, so
//!    that every rank runs the same jobs even where its file system does not have them.
//! 2. Every rank makes its file names its own (`names`), lays its files out, and before
//!    each phase (the jobs that start together: stonewall and new_group) meets the others
//!    at a barrier; rank 0 then names a start time a little ahead and every rank sleeps
//!    until it, so the phase starts on all hosts within the clocks' agreement.
//! 3. At the end each rank sends rank 0 its full statistics (histogram bins included,
//!    serialised with serde) and the times it started each phase; rank 0 merges them
//!    (`report::clients`) and prints one report, with the start skew and the merge's cost.

use super::names;
use crate::report::clients::{self, ClientId, ClientStats, Extras};
use crate::report::json::Value;
use crate::report::{Formats, Render};
use crate::session::{Hooks, Prepared};
use ::mpi::collective::SystemOperation;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Instant;

/// How far ahead of the barrier rank 0 sets a phase's start: enough for the broadcast
/// to reach every rank (and a descheduled rank to wake) first.
const START_MARGIN_NS: u64 = 20_000_000;

/// What rank 0 sends every rank: the command line and the job files' text by argument.
#[derive(Serialize, Deserialize)]
struct Launch {
    args: Vec<String>,
    files: Vec<(usize, String)>,
}

/// One rank's times around a phase's start, wall-clock ns.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct PhaseTimes {
    /// When the rank left the barrier.
    barrier_exit: u64,
    /// The agreed start and when the rank actually left its wait.
    agreed: u64,
    started: u64,
}

/// What each rank sends rank 0 at the end.
#[derive(Serialize, Deserialize)]
struct RankReport {
    client: ClientStats,
    phases: Vec<PhaseTimes>,
    /// The rank's progress over the run, for the first-done figures.
    timeline: Vec<Sample>,
}

/// A point of a rank's progress: wall-clock ns, and bytes done per direction by all its
/// clones so far (the live board's counters).
type Sample = (u64, [u64; 3]);

/// The most samples a timeline keeps: when full, every other one is dropped and the
/// interval doubles, so a long run costs no more to send than a short one (2048 samples,
/// about 80 KB of JSON) at a resolution of a thousandth of the run.
const TIMELINE_CAP: usize = 2048;

/// Samples this rank's progress every few ms on a thread of its own until stopped.
struct Sampler {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: std::thread::JoinHandle<Vec<Sample>>,
}

impl Sampler {
    fn start() -> Sampler {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut v: Vec<Sample> = Vec::with_capacity(TIMELINE_CAP);
            let mut every = std::time::Duration::from_millis(5);
            while !flag.load(Ordering::Relaxed) {
                v.push((super::realtime_ns(), crate::stats::board::total_bytes()));
                if v.len() >= TIMELINE_CAP {
                    let mut i = 0;
                    v.retain(|_| {
                        i += 1;
                        i % 2 == 1
                    });
                    every *= 2;
                }
                std::thread::sleep(every);
            }
            v.push((super::realtime_ns(), crate::stats::board::total_bytes()));
            v
        });
        Sampler { stop, handle }
    }

    fn finish(self) -> Vec<Sample> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

/// Bytes of direction `d` a timeline had done at wall-clock `t`, interpolated.
fn bytes_at(tl: &[Sample], t: u64, d: usize) -> u64 {
    match tl.iter().position(|s| s.0 >= t) {
        None => tl.last().map_or(0, |s| s.1[d]),
        Some(0) => tl[0].1[d],
        Some(i) => {
            let (a, b) = (tl[i - 1], tl[i]);
            let span = (b.0 - a.0).max(1) as u128;
            let grew = b.1[d].saturating_sub(a.1[d]) as u128;
            a.1[d] + (grew * (t - a.0) as u128 / span) as u64
        }
    }
}

/// Replaces the estimated first-done figures with measured ones where the timelines
/// allow: for a group that is alone in its phase, the bytes every rank had done when the
/// fastest finished (from the phase's agreed start), over that time.
fn measure_first_done(
    jobs: &[crate::job::Job],
    reports: &[RankReport],
    spreads: &mut [clients::Spread],
) {
    let gids = crate::job::group_ids(jobs);
    let phases = crate::run::groups::phases(jobs);
    for s in spreads.iter_mut() {
        let Some(phase) = phases
            .iter()
            .position(|p| p.iter().any(|&j| gids[j] == s.groupid))
        else {
            continue;
        };
        if phases[phase].iter().any(|&j| gids[j] != s.groupid) || s.first_done_ms == 0 {
            continue;
        }
        let mut total = 0u64;
        let mut ok = true;
        for r in &s.rates {
            let Some(rep) = reports.get(r.client) else {
                ok = false;
                break;
            };
            let Some(p) = rep.phases.get(phase) else {
                ok = false;
                break;
            };
            let t = p.agreed + s.first_done_ms * 1_000_000;
            let done = bytes_at(&rep.timeline, t, s.ddir).saturating_sub(bytes_at(
                &rep.timeline,
                p.agreed,
                s.ddir,
            ));
            total += done.min(r.bytes);
        }
        if ok {
            s.first_done_bw = total * 1000 / s.first_done_ms;
            s.measured = true;
        }
    }
}

static PHASES: Mutex<Vec<PhaseTimes>> = Mutex::new(Vec::new());

/// `--sync-start=clock`: wait for an agreed wall-clock time after the barrier.
static CLOCK_START: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The phase-start hook (`run::set_phase_start`): the barrier, then (with
/// `--sync-start=clock`) rank 0's agreed start time and the wait for it.
///
/// Leaving the barrier is the default start: it needs no synchronised clocks, and with a
/// core per rank its spread is the interconnect's latency (0.2-3 µs for 2 ranks here).
/// The clock start is for hosts whose clocks agree (PTP) more closely than the barrier's
/// spread; the README has the measurements of both.
fn phase_start(_phase: usize) {
    let world = SimpleCommunicator::world();
    world.barrier();
    let barrier_exit = super::realtime_ns();
    let (agreed, started) = if CLOCK_START.load(std::sync::atomic::Ordering::Relaxed) {
        let mut agreed = if world.rank() == 0 {
            barrier_exit + START_MARGIN_NS
        } else {
            0
        };
        world.process_at_rank(0).broadcast_into(&mut agreed);
        (agreed, super::sleep_until(agreed))
    } else {
        (barrier_exit, barrier_exit)
    };
    if let Ok(mut p) = PHASES.lock() {
        p.push(PhaseTimes {
            barrier_exit,
            agreed,
            started,
        });
    }
}

/// The barrier at the end of the run: true once every rank is there. Once a signal
/// stopped this rank's run (at entry or while it waits), it waits only
/// [`stopped_wait`] more (false then): the signal may be the launcher's after a peer died,
/// and that peer never comes.
fn all_arrive(world: &SimpleCommunicator) -> bool {
    let mut deadline = None;
    let mut req = world.immediate_barrier();
    loop {
        match req.test() {
            Ok(_) => return true,
            Err(r) if past(&mut deadline) => {
                // The barrier cannot be cancelled; the process exits without it.
                std::mem::forget(r);
                return false;
            }
            Err(r) => req = r,
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// True once a signal stopped the run and [`stopped_wait`] has passed since this rank
/// first saw it (`deadline` keeps when that is).
fn past(deadline: &mut Option<Instant>) -> bool {
    if deadline.is_none() && crate::run::signals::signalled().is_some() {
        *deadline = Some(Instant::now() + stopped_wait());
    }
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// The tag of a rank's statistics sent to rank 0 at the end of the run.
const REPORT_TAG: i32 = 0x10b;

/// Rank 0 receives the other ranks' statistics (`RankReport` as JSON) as they come, until
/// every rank's are in (`true`), or until [`stopped_wait`] after a signal stopped the run
/// (`false`: the ranks that did report, in rank order). Received by message rather than
/// after a barrier, so a report of an interrupted run holds every rank that got there.
fn gather(world: &SimpleCommunicator, size: usize) -> (Vec<(i32, Vec<u8>)>, bool) {
    let mut got: Vec<(i32, Vec<u8>)> = Vec::with_capacity(size.saturating_sub(1));
    let mut deadline = None;
    loop {
        while let Some(st) = world.any_process().immediate_probe_with_tag(REPORT_TAG) {
            let from = st.source_rank();
            let (bytes, _) = world
                .process_at_rank(from)
                .receive_vec_with_tag::<u8>(REPORT_TAG);
            got.push((from, bytes));
        }
        if got.len() + 1 >= size {
            got.sort_by_key(|g| g.0);
            return (got, true);
        }
        if past(&mut deadline) {
            got.sort_by_key(|g| g.0);
            return (got, false);
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// How long a rank stopped by a signal waits for the others at the end of the run: long
/// enough for ranks that take a while to stop (their workers to end, their statistics to
/// be summed), short enough to write rank 0's report before the launcher kills it. Open
/// MPI's mpirun, when a rank dies or it is interrupted, sends SIGTERM and SIGKILL
/// `odls_base_sigkill_timeout` seconds later (1 by default; the rank sees the setting as
/// `OMPI_MCA_odls_base_sigkill_timeout` when it is given): then that less
/// [`KILL_MARGIN`]. Under another launcher (srun waits 30 s by default), [`OTHER_WAIT`].
fn stopped_wait() -> std::time::Duration {
    if std::env::var_os("OMPI_COMM_WORLD_RANK").is_none() {
        return OTHER_WAIT;
    }
    let kill_after = std::env::var("OMPI_MCA_odls_base_sigkill_timeout")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);
    std::time::Duration::from_secs(kill_after)
        .saturating_sub(KILL_MARGIN)
        .max(MIN_WAIT)
}

/// Left before Open MPI's SIGKILL to write rank 0's report.
const KILL_MARGIN: std::time::Duration = std::time::Duration::from_millis(400);
/// The least a stopped rank waits for the others.
const MIN_WAIT: std::time::Duration = std::time::Duration::from_millis(500);
/// The wait under launchers other than Open MPI's.
const OTHER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Broadcasts rank 0's `data` to every rank.
fn bcast_bytes(world: &SimpleCommunicator, mut data: Vec<u8>) -> Vec<u8> {
    let root = world.process_at_rank(0);
    let mut len = data.len() as u64;
    root.broadcast_into(&mut len);
    data.resize(len as usize, 0);
    root.broadcast_into(&mut data[..]);
    data
}

/// True on every rank when `bad` is true on any.
fn any(world: &SimpleCommunicator, bad: bool) -> bool {
    let mut out = 0u32;
    world.all_reduce_into(&(bad as u32), &mut out, SystemOperation::max());
    out != 0
}

/// Rank 0's launch message: the arguments, and the text of those that name files.
fn launch_message(args: &[String]) -> Vec<u8> {
    let files = args
        .iter()
        .enumerate()
        .filter(|(_, a)| !a.starts_with('-') && std::path::Path::new(a).is_file())
        .filter_map(|(i, a)| std::fs::read_to_string(a).ok().map(|t| (i, t)))
        .collect();
    serde_json::to_vec(&Launch {
        args: args.to_vec(),
        files,
    })
    .unwrap_or_default()
}

/// A hash that is the same on every rank for the same value (SipHash with fixed keys).
fn hash_of<T: std::hash::Hash + ?Sized>(v: &T) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// The run's shape as this rank resolved it, hashed: the jobs' names and how they fall
/// into phases (stonewall, new_group, wait_for), with the number of phases. Ranks must
/// agree on it, or they wait at different barriers forever; other options may differ
/// (a rate taken from the rank's environment makes a deliberate straggler).
fn shape_of(jobs: &[crate::job::Job]) -> (u64, u64) {
    let phases = crate::run::groups::phases(jobs);
    let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    (hash_of(&(names, &phases)), phases.len() as u64)
}

/// Compares every rank's command line, job files and phases with rank 0's, before the
/// first barrier: ranks that would run different phases wait for each other forever,
/// and a rank's own arguments or job file would silently give way to rank 0's. `Some(a
/// message naming the ranks)` on every rank when any differs.
fn disagreement(
    world: &SimpleCommunicator,
    own_args: u64,
    other_file: bool,
    jobs: &[crate::job::Job],
) -> Option<String> {
    let (shape, nphases) = shape_of(jobs);
    let mine = [own_args, other_file as u64, shape, nphases];
    let mut all = vec![0u64; 4 * world.size() as usize];
    world.all_gather_into(&mine[..], &mut all[..]);
    let first = [all[0], all[1], all[2], all[3]];
    let mut bad = Vec::new();
    for (r, v) in all.chunks(4).enumerate().skip(1) {
        if v[0] != first[0] {
            bad.push(format!(
                "rank {r} was started with other arguments than rank 0"
            ));
        } else if v[1] != 0 {
            bad.push(format!(
                "rank {r} has a job file of the same name with other contents than rank 0's"
            ));
        } else if v[2] != first[2] {
            bad.push(format!(
                "rank {r} would run other phases than rank 0 ({} against {}; an option \
                 that takes the rank's environment, such as \
                 stonewall=${{OMPI_COMM_WORLD_RANK}}?)",
                v[3], first[3]
            ));
        }
    }
    (!bad.is_empty()).then(|| {
        format!(
            "the MPI ranks disagree: {}; every rank must run the same jobs",
            bad.join("; ")
        )
    })
}

/// Every rank's host name, by rank.
fn all_hostnames(world: &SimpleCommunicator, mine: &str) -> Vec<String> {
    let mut buf = [0u8; 256];
    let n = mine.len().min(255);
    buf[..n].copy_from_slice(&mine.as_bytes()[..n]);
    let mut all = vec![0u8; 256 * world.size() as usize];
    world.all_gather_into(&buf[..], &mut all[..]);
    all.chunks(256)
        .map(|c| {
            let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
            String::from_utf8_lossy(&c[..end]).into_owned()
        })
        .collect()
}

/// Runs this rank; returns the exit status (the worst of all ranks').
pub fn run(args: Vec<String>, help: fn() -> String) -> u8 {
    let Some(universe) = ::mpi::initialize() else {
        eprintln!("iobench: MPI could not be initialised (MPI_Init failed or was called twice)");
        return 1;
    };
    let world = universe.world();
    let rank = world.rank() as u32;
    let size = world.size() as u32;
    let msg = bcast_bytes(
        &world,
        if rank == 0 {
            launch_message(&args)
        } else {
            Vec::new()
        },
    );
    let launch: Launch = match serde_json::from_slice(&msg) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("iobench: rank {rank}: bad launch message from rank 0: {e}");
            return 1;
        }
    };
    let own_args = hash_of(&args);
    let mut args = launch.args;
    // Job files received from rank 0 go in a private directory (mkdtemp, 0700), removed
    // once the jobs are parsed: no name another user could plant first.
    let mut temps: Option<crate::safefs::PrivateDir> = None;
    // A job file this rank has too but with other text than rank 0's.
    let mut other_file: Option<String> = None;
    if rank != 0 {
        for (i, text) in &launch.files {
            // Where the file is here too (one host, a shared file system), it is used in
            // place, so that `include` and error messages see its real path.
            match std::fs::read_to_string(&args[*i]) {
                Ok(t) if t == *text => continue,
                Ok(_) => other_file = Some(args[*i].clone()),
                Err(_) => {}
            }
            if temps.is_none() {
                temps = crate::safefs::private_dir("iobench-mpi-").ok();
            }
            let Some(dir) = &temps else { continue };
            let path = dir.path().join(format!(
                "{i}-{}",
                std::path::Path::new(&args[*i])
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ));
            let wrote = crate::safefs::create_new(&path, 0o600)
                .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
            if wrote.is_ok() {
                args[*i] = path.to_string_lossy().into_owned();
            }
        }
    }
    // Every rank's host name first (a collective call every rank makes): a rank's file
    // names depend on the ranks that share its host.
    let host = super::hostname();
    let hosts = all_hostnames(&world, &host);
    let on_my_host = hosts.iter().filter(|h| **h == host).count() as u32;
    let parsed = super::take_args(&mut args).and_then(|cl| {
        if args.iter().any(|a| a == "-") {
            return Err(
                "job file '-': an MPI run takes its job files from the command \
                        line, not from standard input (mpirun gives it to rank 0 only)"
                    .to_string(),
            );
        }
        let inv = crate::cli::parse_args(&args).map_err(|e| e.to_string())?;
        let act = inv.actions.clone();
        if act.version || act.help || act.parse_only {
            // An answer, or the jobs parsed and nothing run: no run to check.
            let jobs = crate::session::resolve(&inv.jobs)?;
            let config = inv.config;
            return Ok((cl, act, Prepared { config, jobs }));
        }
        let read_from = if cl.rotate {
            names::read_source(rank, size, on_my_host)
        } else {
            rank
        };
        // The pipeline of every run, with this rank's file names and the refusals of an
        // MPI run of its own.
        let prepared = crate::session::prepare_with(&inv, |cfg, jobs| {
            if Formats::of(cfg).terse.is_some() {
                return Err(
                    "--output-format=terse (--minimal): an MPI run's report has no \
                            terse form; use normal, json or json+"
                        .to_string(),
                );
            }
            if cfg.status_interval.is_some() {
                return Err(
                    "--status-interval: an MPI run reports once, at the end, on \
                            rank 0; run without it"
                        .to_string(),
                );
            }
            for j in jobs.iter_mut() {
                names::make_unique(j, rank, read_from);
            }
            Ok(())
        })?;
        Ok((cl, act, prepared))
    });
    drop(temps);
    // The same job fails the same way on every rank: rank 0 alone says so, unless only
    // another rank failed (a file of its own, its host's limits).
    let mut bad0 = (rank == 0 && parsed.is_err()) as u32;
    world.process_at_rank(0).broadcast_into(&mut bad0);
    if any(&world, parsed.is_err()) {
        if let Err(e) = &parsed {
            if rank == 0 || bad0 == 0 {
                eprintln!("iobench: rank {rank}: {e}");
            }
        }
        return 1;
    }
    let Ok((cl, act, mut prepared)) = parsed else {
        return 1;
    };
    if let Some(msg) = disagreement(&world, own_args, other_file.is_some(), &prepared.jobs) {
        if rank == 0 {
            eprintln!("iobench: {msg}");
        }
        return 1;
    }
    if act.version || act.help || act.parse_only {
        if rank == 0 && act.version {
            println!("{}", crate::report::VERSION);
        } else if rank == 0 && act.help {
            print!("{}", help());
        }
        return 0;
    }
    let mut sink = None;
    if rank == 0 {
        match crate::report::Sink::open(&prepared.config) {
            Ok(mut s) => {
                if Formats::of(&prepared.config).normal {
                    let _ = s.write(&crate::report::normal::header(&prepared.jobs));
                }
                sink = Some(s);
            }
            Err(e) => eprintln!("iobench: output: {e}"),
        }
    } else {
        // Only rank 0 prints; the others' notes would interleave with its output.
        prepared.config.output = Some("/dev/null".into());
    }
    if any(&world, rank == 0 && sink.is_none()) {
        return 1;
    }
    let mut hooks = RankHooks {
        clock_start: cl.clock_start,
        sampler: None,
        timeline: Vec::new(),
    };
    let f = match crate::session::run(&prepared, &mut hooks) {
        Ok(f) => f,
        // The hooks refuse nothing; a refusal would leave the other ranks at a barrier.
        Err(e) => {
            eprintln!("iobench: rank {rank}: {e}");
            return 1;
        }
    };
    let (jobs, sum, code) = (&f.jobs, &f.summary, f.code);
    let timeline = std::mem::take(&mut hooks.timeline);
    let report = RankReport {
        client: ClientStats::from_summary(&host, ClientId::Rank(rank), sum),
        phases: PHASES.lock().map(|p| p.clone()).unwrap_or_default(),
        timeline,
    };
    let wire = serde_json::to_vec(&report).unwrap_or_default();
    let mode = if cl.clock_start { "clock" } else { "barrier" };
    let mut status = 0u8;
    if rank == 0 {
        let gather_start = Instant::now();
        let (got, all) = gather(&world, size as usize);
        let gathered = gather_start.elapsed();
        let merge_start = Instant::now();
        let mut reports = vec![report];
        let mut sizes = vec![wire.len()];
        for (r, bytes) in &got {
            sizes.push(bytes.len());
            match serde_json::from_slice::<RankReport>(bytes) {
                Ok(rep) => reports.push(rep),
                Err(e) => {
                    eprintln!("iobench: rank {r}'s statistics could not be read: {e}");
                    status = 1;
                }
            }
        }
        if !all {
            // A peer is gone or too slow: mpirun stops every rank (SIGTERM, SIGKILL soon
            // after) when one dies. Rank 0 writes what it has rather than be killed first.
            let came: Vec<String> = std::iter::once(0)
                .chain(got.iter().map(|g| g.0))
                .map(|r| r.to_string())
                .collect();
            let whose = if came.len() == 1 {
                "rank 0's results only".to_string()
            } else {
                format!("the results of ranks {} only", came.join(", "))
            };
            eprintln!(
                "iobench: rank 0: the other ranks did not all come to the end of the run \
                 within {} ms after it was stopped by signal {} (mpirun stops every rank \
                 when one dies; its message names the rank): the report holds {whose}",
                stopped_wait().as_millis(),
                crate::run::signals::signalled().unwrap_or(0)
            );
        }
        let formats = Formats::of(&f.config);
        let merged = render(formats, jobs, &reports);
        let cost = Cost {
            sizes,
            gather_ms: gathered.as_secs_f64() * 1000.0,
            merge_ms: merge_start.elapsed().as_secs_f64() * 1000.0,
        };
        if !write_merged(&mut sink, &f.config, merged, &reports, &cost, mode) {
            status = 1;
        }
        if !all {
            // MPI_Finalize would wait for the missing peer: leave without it.
            std::process::exit(code.max(1) as i32);
        }
    } else {
        world
            .process_at_rank(0)
            .send_with_tag(&wire[..], REPORT_TAG);
    }
    if !all_arrive(&world) {
        // Rank 0 gave up on a peer (or is gone): leave without MPI_Finalize, which would
        // wait for it.
        std::process::exit(code.max(1) as i32);
    }
    let mut worst = 0u32;
    world.all_reduce_into(
        &(code.max(status) as u32),
        &mut worst,
        SystemOperation::max(),
    );
    worst.min(255) as u8
}

/// Writes rank 0's merged report (`merged`) with its MPI section to `sink` (rank 0's
/// `--output` or stdout; with `--output=DIR/`, each format into its own file, as a plain
/// run writes them); false when the write failed (said on stderr).
fn write_merged(
    sink: &mut Option<crate::report::Sink>,
    cfg: &crate::cli::CliConfig,
    merged: Rendered,
    reports: &[RankReport],
    cost: &Cost,
    mode: &str,
) -> bool {
    let full = WithSection {
        merged,
        reports,
        cost,
        mode,
    };
    match sink {
        Some(s) => match s.write_report(cfg, |one| Formats::of(one).render(&full, false)) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("iobench: output: {e}");
                false
            }
        },
        None => true,
    }
}

/// The merge's cost as measured on rank 0.
struct Cost {
    /// Bytes each rank sent.
    sizes: Vec<usize>,
    /// Receiving every rank's statistics, ms.
    gather_ms: f64,
    /// Decoding, merging and rendering, ms (the rendering's own part of it is measured
    /// without the final text's MPI section).
    merge_ms: f64,
}

/// The report before its MPI section: the JSON value (the section is added to it) and
/// the normal text (the section follows it), each made when its format is asked for.
struct Rendered {
    json: Option<Value>,
    normal: String,
}

fn render(f: Formats, jobs: &[crate::job::Job], reports: &[RankReport]) -> Rendered {
    let clients: Vec<ClientStats> = reports.iter().map(|r| r.client.clone()).collect();
    let mut spreads = clients::spreads(&clients);
    measure_first_done(jobs, reports, &mut spreads);
    let json = f
        .json
        .then(|| clients::json_value_with(jobs, &clients, f.plus, Extras::all(), &spreads));
    let normal = if f.normal {
        let release = jobs.first().map(|j| j.raw.release).unwrap_or_default();
        clients::render_normal_with(&clients, Extras::all(), &spreads, release)
    } else {
        String::new()
    };
    Rendered { json, normal }
}

/// This rank's additions to the pipeline: the barrier before each phase, and the
/// sampling of its progress while the jobs run.
struct RankHooks {
    clock_start: bool,
    sampler: Option<Sampler>,
    timeline: Vec<Sample>,
}

impl Hooks for RankHooks {
    fn before_start(&mut self, _p: &Prepared) -> Result<(), String> {
        CLOCK_START.store(self.clock_start, std::sync::atomic::Ordering::Relaxed);
        crate::run::set_phase_start(phase_start);
        self.sampler = Some(Sampler::start());
        Ok(())
    }

    fn after_run(&mut self, _p: &Prepared, _outcome: &crate::stats::RunOutcome) {
        if let Some(s) = self.sampler.take() {
            self.timeline = s.finish();
        }
    }
}

/// Start skew of each phase: (spread of the actual starts, spread of barrier exits), ns.
fn skews(reports: &[RankReport]) -> Vec<(u64, u64)> {
    let n = reports.iter().map(|r| r.phases.len()).max().unwrap_or(0);
    (0..n)
        .map(|i| {
            let spread = |f: fn(&PhaseTimes) -> u64| {
                let v: Vec<u64> = reports
                    .iter()
                    .filter_map(|r| r.phases.get(i).map(f))
                    .collect();
                v.iter().max().unwrap_or(&0) - v.iter().min().unwrap_or(&0)
            };
            (spread(|p| p.started), spread(|p| p.barrier_exit))
        })
        .collect()
}

/// The merged report with its MPI section (ranks, hosts, start skew, merge cost).
struct WithSection<'a> {
    merged: Rendered,
    reports: &'a [RankReport],
    cost: &'a Cost,
    mode: &'a str,
}

impl WithSection<'_> {
    fn hosts(&self) -> usize {
        let mut hosts: Vec<&str> = self
            .reports
            .iter()
            .map(|r| r.client.hostname.as_str())
            .collect();
        hosts.sort_unstable();
        hosts.dedup();
        hosts.len()
    }
}

impl Render for WithSection<'_> {
    /// Refused before the run (see `run`): an MPI report has no terse form.
    fn terse(&self, _version: u32) -> String {
        String::new()
    }

    fn json(&self, _plus: bool) -> Value {
        let sk = skews(self.reports);
        let mut v = self.merged.json.clone().unwrap_or(Value::Obj(Vec::new()));
        let mut o = crate::report::json::Obj::new();
        o.int("ranks", self.reports.len())
            .int("hosts", self.hosts())
            .str("sync_start", self.mode)
            .arr(
                "start_skew_ns",
                sk.iter().map(|s| Value::Int(s.0 as i64)).collect(),
            )
            .arr(
                "barrier_skew_ns",
                sk.iter().map(|s| Value::Int(s.1 as i64)).collect(),
            )
            .arr(
                "gather_bytes",
                self.cost
                    .sizes
                    .iter()
                    .map(|&b| Value::Int(b as i64))
                    .collect(),
            )
            .float("gather_ms", self.cost.gather_ms)
            .float("merge_ms", self.cost.merge_ms);
        if let Value::Obj(pairs) = &mut v {
            pairs.push(("mpi".into(), o.into_value()));
        }
        v
    }

    fn normal(&self) -> String {
        let sk = skews(self.reports);
        let total: usize = self.cost.sizes.iter().sum();
        let hosts = self.hosts();
        let mut out = self.merged.normal.clone();
        let _ = writeln!(
            out,
            "\nMPI: {} ranks on {} host{}, each phase started at the {}",
            self.reports.len(),
            hosts,
            if hosts == 1 { "" } else { "s" },
            if self.mode == "clock" {
                "agreed clock time"
            } else {
                "barrier's exit"
            }
        );
        for (i, (s, b)) in sk.iter().enumerate() {
            let _ = writeln!(
                out,
                "  phase {i}: start skew={:.1}usec (barrier exit spread={:.1}usec)",
                *s as f64 / 1000.0,
                *b as f64 / 1000.0
            );
        }
        let _ = writeln!(
            out,
            "  merge: gathered {} bytes ({} per rank) in {:.2}msec, merged and rendered in {:.2}msec",
            total,
            total / self.reports.len().max(1),
            self.cost.gather_ms,
            self.cost.merge_ms
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timelines_interpolate() {
        let tl = vec![(100, [0, 0, 0]), (200, [1000, 0, 0]), (300, [1000, 50, 0])];
        assert_eq!(bytes_at(&tl, 50, 0), 0);
        assert_eq!(bytes_at(&tl, 150, 0), 500);
        assert_eq!(bytes_at(&tl, 250, 1), 25);
        assert_eq!(bytes_at(&tl, 999, 0), 1000);
    }
}
