//! The `iobench` binary: arguments → options → jobs → run → report, and the exit status.

use std::process::ExitCode;

fn main() -> ExitCode {
    iobench::api::report::guard_stdout();
    // Arguments are OS strings: a name that is not UTF-8 is carried byte for byte (osstr).
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(iobench::api::osstr::from_os)
        .collect();
    match args.first().map(String::as_str) {
        Some("peak") => return ExitCode::from(iobench::api::peak::main(&args[1..]) as u8),
        Some("sweep") => return ExitCode::from(iobench::api::study::sweep::main(&args[1..])),
        Some("compare") => return ExitCode::from(iobench::api::study::compare::main(&args[1..])),
        Some("quick") => return ExitCode::from(iobench::api::study::quick::main(&args[1..])),
        Some("report") => return ExitCode::from(iobench::api::present::report::main(&args[1..])),
        _ => {}
    }
    // fio's client/server mode (`--server`, `--client`, `--daemonize`) and the server's runs.
    if let Some(code) = iobench::api::server::dispatch(&args) {
        return code;
    }
    // One rank of an MPI run (or a build without MPI refusing to be one).
    if let Some(code) = iobench::api::cluster::main(&args) {
        return ExitCode::from(code);
    }
    let inv = match iobench::api::cli::parse_args(&args) {
        Ok(inv) => inv,
        Err(e) => {
            eprintln!("iobench: {e}");
            return ExitCode::FAILURE;
        }
    };
    if inv.config.version {
        println!("{}", iobench::api::report::VERSION);
        return ExitCode::SUCCESS;
    }
    if inv
        .config
        .debug
        .as_deref()
        .is_some_and(iobench::api::debug::asks_for_list)
    {
        print!("{}", iobench::api::debug::list_text());
        return ExitCode::SUCCESS;
    }
    if inv.config.cpuclock_test {
        return ExitCode::from(iobench::api::fioflags::cpuclock_test());
    }
    if let Some(path) = &inv.config.inflate_log {
        return exit(iobench::api::stats::logzip::inflate_to_stdout(path));
    }
    let idle = inv
        .config
        .idle_prof
        .as_deref()
        .and_then(iobench::api::fioflags::IdleProf::start);
    if let Some(p) = idle.as_ref().filter(|p| p.calibrate_only()) {
        print!("{}", p.report());
        return ExitCode::SUCCESS;
    }
    if inv.config.help {
        print!("{}", iobench::api::cli::usage());
        return ExitCode::SUCCESS;
    }
    if inv.config.showcmd {
        print!("{}", inv.showcmd_text());
        return ExitCode::SUCCESS;
    }
    if let Some(arg) = &inv.config.cmdhelp {
        // With a profile, a bare --cmdhelp lists the profile's own options, as fio.
        if let Some(p) = inv.config.profile.filter(|_| arg.is_empty()) {
            print!("{}", p.cmdhelp());
            return ExitCode::SUCCESS;
        }
        return exit(iobench::api::options::help::print_cmdhelp(arg));
    }
    if let Some(list) = &inv.config.crctest {
        return exit(iobench::api::verify::crctest::run(list));
    }
    if let Some(arg) = &inv.config.enghelp {
        return exit(iobench::api::options::help::print_enghelp(arg));
    }
    let jobs = match iobench::api::session::resolve(&inv.jobs) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("iobench: {e}");
            return ExitCode::FAILURE;
        }
    };
    // fio merges the jobs' blktrace inputs and runs nothing; a job without one has
    // nothing to merge.
    if inv.config.parse_only || inv.config.merge_blktrace_only {
        return ExitCode::SUCCESS;
    }
    // fio's job limit (`--max-jobs`), and no job at all: "No job(s) defined".
    if let Err(e) = iobench::api::run::limits::check_jobs(&inv.config, &jobs) {
        eprintln!("{e}");
        if jobs.is_empty() {
            print!("{}", iobench::api::cli::usage());
        }
        return ExitCode::FAILURE;
    }
    let c = &inv.config;
    iobench::api::fioflags::start_trigger(
        c.trigger_file.clone(),
        c.trigger_timeout,
        c.trigger.clone(),
    );
    let mut status = match iobench::api::session::run_reported(&inv.config, &jobs) {
        Ok(ran) => ExitCode::from(ran.code),
        Err(e) => {
            eprintln!("iobench: {e}");
            return ExitCode::FAILURE;
        }
    };
    if inv.config.bandwidth_log {
        if let Err(e) = iobench::api::fioflags::write_bandwidth_logs() {
            eprintln!("iobench: bandwidth log: {e}");
            status = ExitCode::FAILURE;
        }
    }
    if let Some(p) = &idle {
        print!("{}", p.report());
    }
    status
}

/// Maps a help request's success flag to the exit status.
fn exit(success: bool) -> ExitCode {
    if success {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
