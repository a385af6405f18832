//! The `iobench` binary: the arguments read once into a `Command`, one call per command,
//! and the exit status.
//!
//! A closed standard output (`iobench … >&-`) is noted before Rust's start-up code runs
//! (see [`NOTE_CLOSED_STDOUT`]): that code reopens a closed descriptor 0, 1 or 2 on
//! /dev/null before `main`, so from `main` on it could not be told from `>/dev/null` (or
//! from Python's `subprocess.DEVNULL`, which bench/run.py uses, /dev/null read-write),
//! and the report was lost with exit status 0, as in fio.

use iobench::api::cli::Invocation;
use iobench::api::command::{self, Command};
use iobench::api::{cluster, fioflags, options, server, session, verify};
use std::process::ExitCode;

/// Run by the C runtime with the other `.init_array` constructors, before `main` and so
/// before Rust's start-up code (`std::rt`) puts /dev/null on a closed descriptor: notes
/// whether standard output was closed (`fcntl(F_GETFD)` fails with EBADF), so that a
/// report bound there fails with an error instead of being lost (`report::Sink::open`).
/// std itself reads the arguments this way on glibc.
#[used]
#[link_section = ".init_array"]
static NOTE_CLOSED_STDOUT: extern "C" fn() = note_closed_stdout;

extern "C" fn note_closed_stdout() {
    // SAFETY: F_GETFD only reads the descriptor's flags; no memory is passed.
    let closed = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) } == -1
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF);
    if closed {
        iobench::api::report::note_stdout_closed();
    }
}

fn main() -> ExitCode {
    // Arguments are OS strings: a name that is not UTF-8 is carried byte for byte (osstr).
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(iobench::api::osstr::from_os)
        .collect();
    let command = match Command::parse(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("iobench: {e}");
            return ExitCode::FAILURE;
        }
    };
    match command {
        Command::Sub(sub, a) => ExitCode::from((sub.main)(&a)),
        Command::ServerJob(a) => server::job::child_main(&a),
        Command::Server { addr, pidfile } => server::serve(&addr, pidfile.as_deref()),
        Command::Client(a) => iobench::api::client::main(&a),
        Command::Mpi(a) => ExitCode::from(cluster::main(&a, command::help_text)),
        Command::Version(rel) => print(&format!("{}\n", iobench::api::report::version_line(rel))),
        Command::Help => print(&command::help_text()),
        Command::DebugList => print(&iobench::api::debug::list_text()),
        Command::CpuclockTest => ExitCode::from(fioflags::cpuclock_test()),
        Command::InflateLog(path) => exit(iobench::api::stats::logzip::inflate_to_stdout(&path)),
        Command::IdleCalibrate => match fioflags::IdleProf::start("calibrate") {
            Some(p) => print(&p.report()),
            None => ExitCode::FAILURE,
        },
        Command::Showcmd(inv) => print(&inv.showcmd_text()),
        // With a profile, a bare --cmdhelp lists the profile's own options, as fio.
        Command::Cmdhelp { option, profile } => match profile.filter(|_| option.is_empty()) {
            Some(p) => print(p.cmdhelp()),
            None => exit(options::help::print_cmdhelp(&option)),
        },
        Command::Crctest(list) => exit(verify::crctest::run(&list)),
        Command::Enghelp(arg) => exit(options::help::print_enghelp(&arg)),
        // fio merges the jobs' blktrace inputs and runs nothing; a job without one has
        // nothing to merge.
        Command::ParseOnly(inv) => match session::resolve(&inv.jobs) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        },
        Command::Run(inv) => run(&inv),
    }
}

/// A plain run: prepared and run by the one pipeline (`session`), reported, with
/// the flags that act around the run (`--idle-prof`, the triggers, `--bandwidth-log`).
fn run(inv: &Invocation) -> ExitCode {
    let c = &inv.config;
    let idle = c.idle_prof.as_deref().and_then(fioflags::IdleProf::start);
    // The one pipeline: jobs resolved, fio's job limit, terse version, preflight.
    let prepared = match session::prepare(inv) {
        Ok(p) => p,
        Err(e) => {
            e.print(command::help_text);
            return ExitCode::FAILURE;
        }
    };
    fioflags::start_trigger(c.trigger_file.clone(), c.trigger_timeout, c.trigger.clone());
    let mut status = match session::run_reported(&prepared) {
        Ok(ran) => ExitCode::from(ran.code),
        Err(e) => return fail(&e),
    };
    if let Some(name) = &c.bandwidth_log {
        if let Err(e) = fioflags::write_bandwidth_logs(name) {
            eprintln!("iobench: bandwidth log: {e}");
            status = ExitCode::FAILURE;
        }
    }
    if let Some(p) = &idle {
        print!("{}", p.report());
    }
    status
}

/// Prints an answer to stdout; exit status 0, or 1 when standard output was closed (the
/// answer would be lost).
fn print(text: &str) -> ExitCode {
    if iobench::api::report::stdout_closed() {
        return fail(&"standard output is closed: the answer has nowhere to go");
    }
    print!("{text}");
    ExitCode::SUCCESS
}

/// Reports an error; exit status 1.
fn fail(e: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("iobench: {e}");
    ExitCode::FAILURE
}

/// Maps a help request's success flag to the exit status.
fn exit(success: bool) -> ExitCode {
    if success {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
