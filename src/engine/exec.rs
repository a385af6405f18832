//! exec: runs a program for the job's duration, as fio's exec engine does, so a tool of
//! one's own (a load generator, a monitor) starts and stops with the jobs. The first
//! "I/O" starts `program` with `arguments` (split at spaces; `%n` is the job's name, `%r`
//! its runtime in seconds), its output going to `NAME.stdout` and `NAME.stderr` unless
//! `std_redirect=0`; every later one waits 50 ms, and once the runtime is over sends the
//! program SIGTERM and waits `grace_time` seconds. The program is killed when the job ends.
//! No data moves: the job reports only its I/O count and latencies, as fio's does.

use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, Queued, Setup};
use crate::defs::reader::Reader;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::error::JobError;
use std::io;
use std::process::{Child, Command, Stdio};

pub const PROGRAM: OptDef = opt("program", K::Str, "The program to run")
    .cat(C::Engine)
    .engines(&["exec"]);

pub const ARGUMENTS: OptDef = opt("arguments", K::Str, "Arguments to pass to the program")
    .cat(C::Engine)
    .engines(&["exec"]);

pub const GRACE_TIME: OptDef = opt(
    "grace_time",
    K::Int {
        min: 0,
        max: i64::MAX,
    },
    "Seconds to wait before killing the program",
)
.def("1")
.cat(C::Engine)
.engines(&["exec"]);

pub const STD_REDIRECT: OptDef = opt(
    "std_redirect",
    K::Bool,
    "Send the program's output to files",
)
.def("1")
.cat(C::Engine)
.engines(&["exec"]);

/// The pause between checks on the program, as fio's: 50 ms inside the call and 50 ms of
/// thinktime after it.
const CHECK_US: u64 = 50_000;

/// exec's options, read once.
#[derive(Debug, Clone)]
pub struct ExecOpts {
    program: String,
    arguments: Option<String>,
    grace_s: u64,
    std_redirect: bool,
    job: String,
    runtime_us: u64,
}

/// The program runner.
pub struct Exec {
    o: ExecOpts,
    child: Option<Child>,
    /// The program was started (or tried: see `launch`).
    launched: bool,
    started_ns: u64,
}

impl ExecOpts {
    /// `arguments` with `%r` (runtime in seconds) and `%n` (job name) filled in.
    fn expanded(&self) -> Option<String> {
        self.arguments.as_ref().map(|a| {
            a.replace("%r", &(self.runtime_us / 1_000_000).to_string())
                .replace("%n", &self.job)
        })
    }
}

impl Exec {
    fn launch(&mut self) -> io::Result<()> {
        let args = self.o.expanded();
        let shown = args.clone().unwrap_or_else(|| "(null)".into());
        let line = format!("{} {}", self.o.program, args.as_deref().unwrap_or(""));
        let mut words = line.split(' ').filter(|w| !w.is_empty());
        let Some(prog) = words.next() else {
            return Err(io::Error::other("exec: no program to run"));
        };
        let mut cmd = Command::new(prog);
        cmd.args(words).stdin(Stdio::null());
        if self.o.std_redirect {
            let (out, err) = (
                format!("{}.stdout", self.o.job),
                format!("{}.stderr", self.o.job),
            );
            println!(
                "{} : Saving output of {} {shown} : stdout={out} stderr={err}",
                self.o.job, self.o.program
            );
            let open = |p: &str| {
                std::fs::File::create(p).map_err(|e| {
                    io::Error::new(e.kind(), format!("cannot open output file {p}: {e}"))
                })
            };
            cmd.stdout(open(&out)?).stderr(open(&err)?);
        } else {
            println!("{} : Running {} {shown}", self.o.job, self.o.program);
        }
        use std::io::Write;
        let _ = io::stdout().flush();
        self.launched = true;
        // A program that cannot start leaves the job running its time without it, as in
        // fio 3.33 (whose failed execvp returns into a copy of the worker, the job ending
        // with no error); iobench says so on stderr instead of keeping quiet.
        match cmd.spawn() {
            Ok(c) => self.child = Some(c),
            Err(e) => eprintln!(
                "iobench: job '{}': exec {prog}: {e}; the job runs its time without it, as in fio",
                self.o.job
            ),
        }
        Ok(())
    }
}

impl Drop for Exec {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Engine for Exec {
    fn setup(&mut self, _: &Setup<'_>) -> io::Result<()> {
        // fio reports the engine as setting up while it prepares.
        crate::debug::setting_up(|| {
            println!(
                "{} : program={}, arguments={}",
                self.o.job,
                self.o.program,
                self.o.arguments.as_deref().unwrap_or("(null)")
            );
            self.started_ns = crate::clock::now_ns();
            Ok(())
        })
    }

    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        io.len = 0;
        io.result = 0;
        if !self.launched {
            self.launch()?;
            return Ok(Queued::Completed);
        }
        std::thread::sleep(std::time::Duration::from_micros(CHECK_US));
        let ran_us = (crate::clock::now_ns() - self.started_ns) / 1000;
        if ran_us > self.o.runtime_us {
            if let Some(c) = &self.child {
                // SAFETY: signals the program this engine started (and has not reaped).
                unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
            }
            std::thread::sleep(std::time::Duration::from_secs(self.o.grace_s));
        }
        Ok(Queued::Completed)
    }

    fn think_us(&self) -> Option<u64> {
        Some(CHECK_US)
    }
}

impl super::spec::Declared for Exec {
    type Opts = ExecOpts;
    const SPECS: &'static [Spec] = &[Spec::new(
        "exec",
        "runs a program alongside the jobs",
        Flags {
            diskless: true,
            fake_files: true,
            opens_own_files: true,
            no_offload: true,
            no_io: true,
            ..Flags::SYNC
        },
    )
    .options(&[PROGRAM, ARGUMENTS, GRACE_TIME, STD_REDIRECT])
    .hidden()];
    fn configure(_: &'static Spec, r: &Reader, job: &JobFacts) -> Result<ExecOpts, JobError> {
        let Some(program) = r.text(&PROGRAM).filter(|p| !p.trim().is_empty()) else {
            return Err(r.invalid(
                &PROGRAM,
                "ioengine=exec needs program= (the program to run)",
            ));
        };
        Ok(ExecOpts {
            program,
            arguments: r.text(&ARGUMENTS),
            grace_s: r.num(&GRACE_TIME)?.max(0) as u64,
            std_redirect: r.bool(&STD_REDIRECT)?,
            job: r.raw.name.clone(),
            runtime_us: job.runtime_us,
        })
    }
    fn build(o: &ExecOpts) -> Self {
        Exec {
            o: o.clone(),
            child: None,
            launched: false,
            started_ns: 0,
        }
    }
}
