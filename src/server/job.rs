//! The server's job runner: a child process (`iobench __fio-server-job DIR ARGS…`, the job
//! texts on its stdin) that runs what a client sent like a plain run, with its informational lines on stdout (the server
//! forwards them as TEXT) and, at the end, the results as fio's wire messages (JOB_OPT, TS,
//! GS, DU) in `DIR/results`, which the server forwards as they are.
//!
//! A child process rather than a thread: a run owns process-wide state (signal handlers, the
//! stop flags, the status board), and a new process per run starts each one clean, as fio's
//! server forks a backend per run.

use crate::cli::{parse_args_sent, Invocation};
use crate::defs::raw::RawOpt;
use crate::fioproto::pdu::JobOpt;
use crate::fioproto::ts::{WireDu, WireGs, WireTs};
use crate::fioproto::{encode_as, op, Proto};
use crate::job::Job;
use crate::options::jobfile::Includes;
use crate::report::Formats;
use crate::session::{Hooks, Prepared};
use crate::stats::group::RunSummary;
use crate::stats::RunOutcome;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// The hidden first argument that runs [`child_main`].
pub const CHILD_ARG: &str = "__fio-server-job";
/// The file the child leaves its result messages in.
pub const RESULTS: &str = "results";
/// The server's address on the client's connection, for fio's server-side file names.
pub const ADDR_ENV: &str = "IOBENCH_SERVER_ADDR";

/// Names files as fio's server does (`unique_filename`, on by default): in a job with a
/// `directory`, every file name starts with the server's address (`127.0.0.1.job.0.0`);
/// `$clientuid` in `filename_format` is that address too.
pub fn server_file_names(jobs: &mut [Job], addr: &str) {
    for job in jobs {
        if !job.files.unique_filename {
            continue;
        }
        let f = &mut job.files;
        f.filename_format = f.filename_format.replace("$clientuid", addr);
        if f.directory.is_none() {
            continue;
        }
        match &f.filename {
            Some(list) => {
                let names: Vec<String> = crate::job::files::split_names(list)
                    .into_iter()
                    .map(|n| format!("{addr}.{n}").replace(':', "\\:"))
                    .collect();
                f.filename = Some(names.join(":"));
            }
            None => f.filename_format = format!("{addr}.{}", f.filename_format),
        }
    }
}

/// Set in the child's environment when the client inflates zlib (PROBE): logs go compressed.
pub const ZLIB_ENV: &str = "IOBENCH_SERVER_ZLIB";

/// The protocol version of the client's connection, in the child's environment: its
/// result messages are written in that version's layout.
pub const PROTO_ENV: &str = "IOBENCH_SERVER_PROTO";

/// The version [`PROTO_ENV`] names (fio 3.33's when unset or not one iobench speaks).
fn child_proto() -> Proto {
    std::env::var(PROTO_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .and_then(Proto::new)
        .unwrap_or_default()
}

/// Set in the child's environment for a synchronised start.
pub const SYNC_ENV: &str = "IOBENCH_SERVER_SYNC_START";
/// The line a synchronised child prints when its files are laid out; the server turns it
/// into IOB_READY and answers on the child's stdin when the client says go.
pub const READY_LINE: &str = "\u{1}iobench-ready\n";

/// A synchronised start: lays out every clone's files now (as each job would when it
/// starts), says so, and waits for the go on stdin. `false`: no go came.
fn lay_out_then_wait(jobs: &[Job]) -> bool {
    let mut info = |s: &str| {
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(s.as_bytes());
        let _ = o.flush();
    };
    let mut first = 1u64;
    for job in jobs {
        let n = job.exec.numjobs.max(1);
        for clone in 0..n {
            let tn = crate::gen::fio_thread_number(first, job.exec.numjobs, clone);
            // A clone that cannot be prepared is reported by the run itself, in its place.
            if let Ok(p) = crate::run::files::prepare(job, clone, tn, &mut info) {
                if let Some(note) = &p.deferred_note {
                    info(note);
                }
                if let Err(e) = crate::run::files::lay_out_deferred(job, &p.targets) {
                    eprintln!("iobench: job '{}': {e}", job.name);
                }
            }
        }
        first += n as u64;
    }
    info(READY_LINE);
    let mut line = String::new();
    matches!(std::io::stdin().read_line(&mut line), Ok(n) if n > 0 && line.trim() == "go")
}

/// What a client sent for a run: its command line (JOBLINE) and its job files' texts
/// (JOB, or `--remote-config` files the server read for it), held in memory: no scratch
/// file another user could touch (docs/security.md).
#[derive(Debug, Clone, Default)]
pub struct Sent {
    pub args: Vec<String>,
    /// (name for messages, text), in the order they came.
    pub texts: Vec<(String, String)>,
    /// What their `include` lines may read.
    pub includes: Includes,
}

impl Sent {
    /// The bytes the run child reads on its stdin before anything else: the texts and the
    /// include rule (the command line travels as arguments).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut put = |b: &[u8]| {
            out.extend_from_slice(&(b.len() as u64).to_le_bytes());
            out.extend_from_slice(b);
        };
        let rule = match &self.includes {
            Includes::Any => "any".to_string(),
            Includes::Refused => "refused".to_string(),
            Includes::Under(r) => format!("under:{}", r.display()),
        };
        put(rule.as_bytes());
        put(&(self.texts.len() as u64).to_le_bytes());
        for (name, text) in &self.texts {
            put(name.as_bytes());
            put(text.as_bytes());
        }
        out
    }

    /// Reads what [`Sent::encode`] wrote, then takes `args` as the command line.
    fn decode<R: std::io::Read>(r: &mut R, args: &[String]) -> Result<Sent, String> {
        let mut get = || -> Result<Vec<u8>, String> {
            let mut n = [0u8; 8];
            r.read_exact(&mut n)
                .map_err(|e| format!("job texts: {e}"))?;
            let n = u64::from_le_bytes(n);
            if n > crate::fioproto::SERVER_MAX_PAYLOAD as u64 * 64 {
                return Err(format!("job texts: a part of {n} bytes"));
            }
            let mut b = vec![0u8; n as usize];
            r.read_exact(&mut b)
                .map_err(|e| format!("job texts: {e}"))?;
            Ok(b)
        };
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
        let rule = text(get()?);
        let includes = match rule.as_str() {
            "any" => Includes::Any,
            "refused" => Includes::Refused,
            r => match r.strip_prefix("under:") {
                Some(dir) => Includes::Under(dir.into()),
                None => return Err(format!("job texts: bad include rule '{r}'")),
            },
        };
        let count = get()?;
        let count = u64::from_le_bytes(count.try_into().map_err(|_| "job texts: bad count")?);
        let mut texts = Vec::new();
        for _ in 0..count {
            let name = text(get()?);
            texts.push((name, text(get()?)));
        }
        Ok(Sent {
            args: args.to_vec(),
            texts,
            includes,
        })
    }
}

/// Parses, resolves and checks what a client sent, as a plain run would
/// ([`crate::session::prepare`]): what a plain run refuses, the server refuses with the
/// same message before it starts a runner.
pub fn load_sent(s: &Sent) -> Result<(Invocation, Vec<Job>), String> {
    let inv = parse_args_sent(&s.args, &s.texts, &s.includes).map_err(|e| e.to_string())?;
    if inv.jobs.is_empty() {
        // A JOBLINE of flags alone: the jobs come next (JOB, LOAD_FILE).
        return Ok((inv, Vec::new()));
    }
    let p = crate::session::prepare(&inv)?;
    Ok((inv, p.jobs))
}

/// [`load_sent`] for the runner itself: the jobs' files named as fio's server names them
/// (after the server's address, when it is known) and checked under those names.
pub fn prepare(s: &Sent, addr: Option<&str>) -> Result<Prepared, String> {
    let inv = parse_args_sent(&s.args, &s.texts, &s.includes).map_err(|e| e.to_string())?;
    Ok(crate::session::prepare_with(&inv, |_, jobs| {
        if let Some(addr) = addr {
            server_file_names(jobs, addr);
        }
        Ok(())
    })?)
}

/// fio's START counts: job threads (every clone) and the reports they make (clones merged
/// by `group_reporting` within a group; `stats=0` clones make none).
pub fn counts(jobs: &[Job]) -> (u32, u32) {
    let gids = crate::job::group_ids(jobs);
    let (mut threads, mut reports) = (0u32, 0u32);
    let mut last: Option<u32> = None;
    for (job, gid) in jobs.iter().zip(gids) {
        for _ in 0..job.exec.numjobs.max(1) {
            threads += 1;
            if !job.report.stats.stats {
                continue;
            }
            if reports == 0 || !job.report.group_reporting || last != Some(gid) {
                reports += 1;
            }
            last = Some(gid);
        }
    }
    (threads, reports)
}

/// Each reported job's fio thread number: that of the first clone merged into it (1-based,
/// counting every clone), as fio fills `thread_stat.thread_number`. fio's client looks the
/// job's options up by it (minus one) among lists sent by report index, so with
/// `group_reporting` and `numjobs` it finds the wrong list or none; a fio client shows
/// the same from this server as from fio's.
fn thread_numbers(jobs: &[Job], outcome: &RunOutcome) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    let mut last: Option<u32> = None;
    for (k, r) in outcome.results.iter().enumerate() {
        if !r.cfg.stats {
            continue;
        }
        let grouped = jobs
            .get(r.job_index)
            .is_some_and(|j| j.report.group_reporting);
        if out.is_empty() || !grouped || last != Some(r.groupid) {
            out.push(k as u32 + 1);
        }
        last = Some(r.groupid);
    }
    out
}

/// Options with a value, the last setting of each winning in place (as JSON lists them).
fn opt_pairs(opts: &[RawOpt]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for o in opts {
        let Some(v) = o.value.as_deref() else {
            continue;
        };
        let v = o.def.shown(v);
        match out.iter_mut().find(|(k, _)| k == o.def.name) {
            Some(slot) => slot.1 = v.to_string(),
            None => out.push((o.def.name.to_string(), v.to_string())),
        }
    }
    out
}

/// The job's own options (fio's `job options`).
pub fn job_options(job: &Job) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if job.raw.origin.file.is_none() {
        out.push(("name".to_string(), job.name.clone()));
    }
    let own = &job.raw.opts[job.raw.globals.min(job.raw.opts.len())..];
    out.extend(opt_pairs(own));
    out
}

/// The options every job inherited (fio's `global options`).
pub fn global_options(jobs: &[Job]) -> Vec<(String, String)> {
    let mut all = Vec::new();
    for j in jobs {
        all.extend_from_slice(&j.raw.opts[..j.raw.globals.min(j.raw.opts.len())]);
    }
    opt_pairs(&all)
}

/// The result messages of a finished run, in fio's order: global options, then per
/// reported job its options and its TS, then each group's GS, then each disk's DU.
pub fn result_messages(jobs: &[Job], outcome: &RunOutcome, sum: &RunSummary) -> Vec<u8> {
    // fio's server sends each job's logs as it ends, before the reports.
    let zlib = std::env::var_os(ZLIB_ENV).is_some();
    let p = child_proto();
    let encode =
        |opcode: u16, tag: u64, payload: &[u8]| encode_as(p.number(), opcode, tag, payload);
    let mut out = super::logs::messages(jobs, zlib, p);
    for (name, value) in global_options(jobs) {
        let o = JobOpt {
            global: true,
            truncated: false,
            groupid: 0,
            name,
            value,
        };
        out.extend(encode(op::JOB_OPT, 0, &o.encode()));
    }
    let numbers = thread_numbers(jobs, outcome);
    for (i, t) in sum.threads.iter().enumerate() {
        let Some(g) = sum.groups.get(t.groupid as usize) else {
            continue;
        };
        if let Some(job) = jobs.get(t.job_index) {
            for (name, value) in job_options(job) {
                let o = JobOpt {
                    global: false,
                    truncated: false,
                    groupid: i as u32,
                    name,
                    value,
                };
                out.extend(encode(op::JOB_OPT, 0, &o.encode()));
            }
        }
        let tn = numbers.get(i).copied().unwrap_or(i as u32 + 1);
        out.extend(encode(op::TS, 0, &WireTs::encode_as(p, t, tn, g)));
    }
    for g in &sum.groups {
        out.extend(encode(op::GS, 0, &WireGs::encode(g)));
    }
    for d in &sum.disks {
        out.extend(encode(op::DU, 0, &WireDu::encode(d, sum.elapsed_ms)));
    }
    out
}

/// The runner's additions to the pipeline: the job lines as text before the jobs start,
/// the client's trigger and synchronised start, the ETA file while the jobs run.
struct ServerRun<'a> {
    dir: &'a Path,
    began: std::time::SystemTime,
    trigger: Option<super::vtrigger::Watch>,
    eta: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    fired: Option<std::time::SystemTime>,
}

impl Hooks for ServerRun<'_> {
    fn before_start(&mut self, p: &Prepared) -> Result<(), String> {
        if Formats::of(&p.config).normal {
            // fio's server sends the job lines and "Starting …", not its version line.
            let header = crate::report::normal::header(&p.jobs);
            let version = crate::report::version_line(p.config.fio_compat);
            let mut text: String = header
                .lines()
                .filter(|l| *l != version)
                .map(|l| format!("{l}\n"))
                .collect();
            text.push_str(&crate::report::sync_depth_notes(&p.jobs));
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(text.as_bytes());
            let _ = o.flush();
        }
        self.began = std::time::SystemTime::now();
        self.trigger = Some(super::vtrigger::watch(self.dir));
        if std::env::var_os(SYNC_ENV).is_some() && !lay_out_then_wait(&p.jobs) {
            return Err("server: the client never said go: not starting".into());
        }
        self.eta = Some(super::eta::start(self.dir, &p.jobs));
        Ok(())
    }

    fn after_run(&mut self, _p: &Prepared, _outcome: &RunOutcome) {
        if let Some(eta) = &self.eta {
            eta.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        self.fired = self.trigger.as_ref().and_then(|t| t.end());
    }
}

/// The server's pid, in its run child's environment: a child whose parent is already
/// another process when it starts was orphaned before it could hear of it.
pub const SERVER_PID_ENV: &str = "IOBENCH_SERVER_PID";

/// The child's entry: `args` are the results directory, then the command line.
pub fn child_main(args: &[String]) -> ExitCode {
    // The server's death signals this child (SIGHUP, its parent-death signal, ignored
    // from fork until here) once per server thread it passes to: one request to stop, so
    // the run still ends in order and its directory goes.
    crate::run::signals::repeats_are_one();
    crate::run::signals::stop_on_hangup();
    let parent = std::env::var(SERVER_PID_ENV)
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(std::os::unix::process::parent_id);
    let _orphaned = RemoveIfOrphaned {
        dir: args.first().map(Path::new),
        parent,
    };
    if std::os::unix::process::parent_id() != parent {
        // The server died while the hang-up was still ignored: no signal will come.
        eprintln!("iobench: {CHILD_ARG}: the server is gone: not running");
        return ExitCode::FAILURE;
    }
    child_run(args)
}

/// When the run child ends (or unwinds: a report printed to a dead server's pipe fails)
/// and the server that made its directory is gone (killed: its death ended this run
/// through PR_SET_PDEATHSIG), no one will read the results, so the run's private
/// directory goes with this process. Only a directory named as the server names them
/// (`conn::PRIVATE_PREFIX`) is ever removed. The hang-up itself says so: a server being
/// killed is still this process's parent until its last thread has gone, and a run it
/// stopped can end before that.
struct RemoveIfOrphaned<'a> {
    dir: Option<&'a Path>,
    parent: u32,
}

impl Drop for RemoveIfOrphaned<'_> {
    fn drop(&mut self) {
        let Some(dir) = self.dir else { return };
        let ours = dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(super::conn::PRIVATE_PREFIX));
        let gone =
            crate::run::signals::hung_up() || std::os::unix::process::parent_id() != self.parent;
        if ours && gone {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The run child's work: the jobs read from stdin, run, results left in the directory.
fn child_run(args: &[String]) -> ExitCode {
    let Some((dir, rest)) = args.split_first() else {
        eprintln!("iobench: {CHILD_ARG}: no results directory");
        return ExitCode::FAILURE;
    };
    // The job texts come on stdin, never through a file (docs/security.md).
    let sent = match Sent::decode(&mut std::io::stdin().lock(), rest) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("iobench: {CHILD_ARG}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let addr = std::env::var_os(ADDR_ENV).map(|a| a.to_string_lossy().into_owned());
    let prepared = match prepare(&sent, addr.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("iobench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let dir = Path::new(dir);
    let mut hooks = ServerRun {
        dir,
        began: std::time::SystemTime::now(),
        trigger: None,
        eta: None,
        fired: None,
    };
    let f = match crate::session::run(&prepared, &mut hooks) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("iobench: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(fired) = hooks.fired {
        let states = super::vtrigger::thread_states(&f.jobs, &f.outcome, hooks.began, fired);
        let tmp = dir.join("vstates.tmp");
        let bytes = crate::fioproto::vstate::encode_list(&states);
        if let Err(e) = std::fs::write(&tmp, bytes)
            .and_then(|_| std::fs::rename(&tmp, dir.join(super::vtrigger::STATES_FILE)))
        {
            eprintln!("iobench: server: cannot keep the verify states for the trigger: {e}");
        }
    }
    let bytes = result_messages(&f.jobs, &f.outcome, &f.summary);
    let tmp = dir.join("results.tmp");
    if let Err(e) =
        std::fs::write(&tmp, &bytes).and_then(|_| std::fs::rename(&tmp, dir.join(RESULTS)))
    {
        eprintln!("iobench: server: cannot save the results: {e}");
        return ExitCode::FAILURE;
    }
    if Formats::of(&f.config).normal {
        // fio's backend ends its report with a blank line, sent as text.
        println!();
    }
    ExitCode::from(f.code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> Sent {
        let mut a: Vec<String> = ["--name=x", "--ioengine=null", "--size=1m"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        Sent {
            args: a,
            ..Sent::default()
        }
    }

    fn load(s: &Sent) -> Result<(Invocation, Vec<Job>), String> {
        load_sent(s)
    }

    #[test]
    fn what_a_plain_run_refuses_the_server_refuses_before_its_runner() {
        let e = load(&args(&["--numjobs=5000"])).unwrap_err();
        assert!(e.contains("maximum number of jobs reached"), "{e}");
        let e = load(&args(&["--terse-version=9"])).unwrap_err();
        assert!(e.contains("bad terse version 9"), "{e}");
        let e = load(&args(&["--readonly", "--rw=write"])).unwrap_err();
        assert!(e.contains("--readonly"), "{e}");
        // The runner checks again, under the server's file names.
        let e = prepare(&args(&["--numjobs=5000"]), Some("127.0.0.1")).unwrap_err();
        assert!(e.contains("maximum number of jobs reached"), "{e}");
        // A JOBLINE of flags alone waits for its jobs.
        let flags_alone = Sent {
            args: vec!["--output-format=json".to_string()],
            ..Sent::default()
        };
        assert!(load(&flags_alone).is_ok());
    }
}
