//! The `iobench` binary: arguments → options → jobs → run → report, and the exit status.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Arguments are OS strings: a name that is not UTF-8 is carried byte for byte (osstr).
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(iobench::osstr::from_os)
        .collect();
    if args.first().map(String::as_str) == Some("peak") {
        return ExitCode::from(iobench::peak::main(&args[1..]) as u8);
    }
    let inv = match iobench::cli::parse_args(&args) {
        Ok(inv) => inv,
        Err(e) => {
            eprintln!("iobench: {e}");
            return ExitCode::FAILURE;
        }
    };
    if inv.config.version {
        println!("iobench-{}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    if inv.config.help {
        print!("{}", iobench::cli::usage());
        return ExitCode::SUCCESS;
    }
    if inv.config.showcmd {
        print!("{}", inv.showcmd_text());
        return ExitCode::SUCCESS;
    }
    if let Some(arg) = &inv.config.cmdhelp {
        return exit(iobench::options::help::print_cmdhelp(arg));
    }
    if let Some(list) = &inv.config.crctest {
        return exit(iobench::verify::crctest::run(list));
    }
    if let Some(arg) = &inv.config.enghelp {
        return exit(iobench::options::help::print_enghelp(arg));
    }
    let mut jobs = Vec::new();
    for raw in &inv.jobs {
        match iobench::job::resolve(raw) {
            Ok(j) => jobs.push(j),
            Err(e) => {
                eprintln!("iobench: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if inv.config.parse_only {
        return ExitCode::SUCCESS;
    }
    if let Err(e) = iobench::run::limits::check_jobs(&inv.config, &jobs) {
        eprintln!("{e}");
        if jobs.is_empty() {
            print!("{}", iobench::cli::usage());
        }
        return ExitCode::FAILURE;
    }
    if let Err(e) = iobench::report::check_terse_version(&inv.config) {
        eprintln!("iobench: {e}");
        return ExitCode::FAILURE;
    }
    if let Err(e) = iobench::run::preflight(&inv.config, &jobs) {
        eprintln!("iobench: {e}");
        return ExitCode::FAILURE;
    }
    let mut reporter = match iobench::report::run::Reporter::start(&inv.config, &jobs) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("iobench: output: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (outcome, code) = iobench::run::run_all(&inv.config, &jobs);
    let mut status = ExitCode::from(code);
    if let Err(e) = reporter.finish(&inv.config, &jobs, &outcome) {
        eprintln!("iobench: output: {e}");
        status = ExitCode::FAILURE;
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
