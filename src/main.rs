//! The `iobench` binary: the arguments read once into a `Command`, one call per command,
//! and the exit status.
//!
//! The entry point is the C `main`, not Rust's: Rust's start-up code reopens a closed
//! descriptor 0, 1 or 2 on /dev/null before `fn main` runs, so a closed standard output
//! (`iobench … >&-`) could not be told from `>/dev/null` (or from Python's
//! `subprocess.DEVNULL`, which bench/run.py uses) and the report was lost with exit
//! status 0, as in fio. [`main`] looks at descriptor 1 first, then does what Rust's
//! start-up code does that matters here (see its comments) and calls [`run_command`].

#![cfg_attr(not(test), no_main)]

use iobench::api::cli::Invocation;
use iobench::api::command::{self, Command};
use iobench::api::{cluster, fioflags, options, peak, present, server, session, study, verify};
use std::process::ExitCode;

/// The process's entry point, called by the C runtime in place of Rust's `lang_start`
/// (std's `rt::lang_start_internal` and `sys::pal::unix::init`). What that does, and
/// what is done here instead:
/// - closed descriptors 0-2 reopened on /dev/null: done here, after noting whether 1 was
///   closed (so that no file the run opens can become standard output);
/// - SIGPIPE set to SIG_IGN (Rust's default): done here, so a closed pipe is an error
///   from `write`, not a silent death;
/// - the arguments: glibc hands them to std through `.init_array`, so `std::env::args`
///   works without `lang_start`;
/// - a panic caught at the top (exit status 101): done here with `catch_unwind`, which
///   also keeps an unwind from crossing this `extern "C"` frame;
/// - standard output flushed at exit (`rt::cleanup`): done here;
/// - the main thread's name and the stack overflow handler: left out; a panic message then
///   names the thread `<unnamed>`, and a stack overflow is a plain SIGSEGV instead of a
///   message and SIGABRT (either way the process dies with a signal).
#[cfg(not(test))]
#[no_mangle]
pub extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    for fd in 0..=2 {
        // SAFETY: F_GETFD only reads the descriptor's flags; no memory is passed.
        let closed = unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF);
        if !closed {
            continue;
        }
        if fd == libc::STDOUT_FILENO {
            iobench::api::report::note_stdout_closed();
        }
        // SAFETY: a NUL-terminated path; the lowest free descriptor is `fd`, since the
        // ones below it are open (they were, or were just reopened).
        let got = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        if got != fd {
            // Nothing is sane to run with: abort as Rust's start-up code does.
            std::process::abort();
        }
    }
    // SAFETY: setting a signal's disposition to SIG_IGN passes no handler code.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let code = match std::panic::catch_unwind(run_command) {
        Ok(code) => code,
        Err(_) => return 101,
    };
    use std::io::Write;
    let flushed = std::io::stdout().flush();
    // `ExitCode` hides its number: it is the one byte that makes an equal `ExitCode`.
    let status = (0..=u8::MAX)
        .find(|&b| ExitCode::from(b) == code)
        .map_or(1, libc::c_int::from);
    if flushed.is_err() && status == 0 {
        return 1;
    }
    status
}

/// What `fn main` would be: the command read from the arguments and answered.
#[cfg_attr(test, allow(dead_code))]
fn run_command() -> ExitCode {
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
        Command::Peak(a) => ExitCode::from(peak::main(&a) as u8),
        Command::Sweep(a) => ExitCode::from(study::sweep::main(&a)),
        Command::Compare(a) => ExitCode::from(study::compare::main(&a)),
        Command::Quick(a) => ExitCode::from(study::quick::main(&a)),
        Command::Report(a) => ExitCode::from(present::report::main(&a)),
        Command::ServerJob(a) => server::job::child_main(&a),
        Command::Server { addr, pidfile } => server::serve(&addr, pidfile.as_deref()),
        Command::Client(a) => iobench::api::client::main(&a),
        Command::Mpi(a) => ExitCode::from(cluster::main(&a, command::help_text)),
        Command::Version => print(&format!("{}\n", iobench::api::report::VERSION)),
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
    if c.bandwidth_log {
        if let Err(e) = fioflags::write_bandwidth_logs() {
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
