//! What one invocation of iobench is, decided once from its arguments: a subcommand
//! (`peak`, `sweep`, …), a server, client or MPI rank, one of fio's one-shot actions
//! (`--version`, `--cmdhelp`, …) or a run. `main` is then one `match` on [`Command`], and
//! the precedence of fio's flags lives here, in [`Command::from_invocation`], not in an
//! if-ladder.

use crate::cli::{self, Invocation};
use crate::options::profile::Profile;
use crate::server::{self, Mode};

/// The subcommands, each with its one line for `iobench --help`.
pub const SUBCOMMANDS: &[(&str, &str)] = &[
    (
        "peak",
        "peak IOPS of files or devices, with t/io_uring's options",
    ),
    (
        "sweep",
        "one job run over every combination of option values",
    ),
    (
        "compare",
        "jobs run in turn, or result files: mean ± σ, ratio, gate",
    ),
    (
        "quick",
        "KDiskMark's standard test of a directory, file or device",
    ),
    (
        "pts",
        "SNIA SSS PTS tests: purge, precondition, rounds to steady state",
    ),
    (
        "report",
        "one HTML report of results, sweeps, comparisons and logs",
    ),
    (
        "history",
        "the runs saved with --save: list, compare to a baseline, trend",
    ),
    (
        "slo",
        "the highest arrival rate whose latency meets targets (--p99 2ms)",
    ),
];

/// One invocation of iobench.
#[derive(Debug)]
pub enum Command {
    /// `iobench peak ARGS`.
    Peak(Vec<String>),
    /// `iobench sweep ARGS`.
    Sweep(Vec<String>),
    /// `iobench compare ARGS`.
    Compare(Vec<String>),
    /// `iobench quick ARGS`.
    Quick(Vec<String>),
    /// `iobench pts ARGS`.
    Pts(Vec<String>),
    /// `iobench report ARGS`.
    Report(Vec<String>),
    /// `iobench history ARGS`.
    History(Vec<String>),
    /// `iobench slo ARGS`.
    Slo(Vec<String>),
    /// One job a server started in a process of its own (internal).
    ServerJob(Vec<String>),
    /// `--server[=ADDR]`, with `--daemonize=PIDFILE`.
    Server {
        /// The address as given (empty: fio's default).
        addr: String,
        /// Where to write the daemon's pid.
        pidfile: Option<String>,
    },
    /// `--client=HOST …`: the whole command line.
    Client(Vec<String>),
    /// One rank of an MPI run (or a build without MPI refusing to be one).
    Mpi(Vec<String>),
    /// `--version`, in the dialect the command line selects.
    Version(crate::defs::release::FioRelease),
    /// `--help`.
    Help,
    /// `--debug=?`: the debug categories.
    DebugList,
    /// `--cpuclock-test`.
    CpuclockTest,
    /// `--inflate-log=FILE`.
    InflateLog(String),
    /// `--idle-prof=calibrate`: calibrate, report, run nothing.
    IdleCalibrate,
    /// `--showcmd`: the job files as command lines.
    Showcmd(Invocation),
    /// `--cmdhelp[=OPT]`; with a profile and no option, the profile's options.
    Cmdhelp {
        /// The option asked about (empty: all).
        option: String,
        /// `--profile=NAME`, when given.
        profile: Option<Profile>,
    },
    /// `--crctest[=LIST]`.
    Crctest(String),
    /// `--enghelp[=ENGINE[,CMD]]`.
    Enghelp(String),
    /// `--parse-only` or `--merge-blktrace-only`: check the jobs, run nothing.
    ParseOnly(Invocation),
    /// The jobs, run.
    Run(Invocation),
}

impl Command {
    /// Reads the arguments after the program name. An error is a message for
    /// `iobench: …` and exit status 1.
    pub fn parse(args: Vec<String>) -> Result<Command, String> {
        let first = args.first().map(String::as_str).unwrap_or("");
        let sub = |c: fn(Vec<String>) -> Command| Ok(c(args[1..].to_vec()));
        match first {
            "peak" => return sub(Command::Peak),
            "sweep" => return sub(Command::Sweep),
            "compare" => return sub(Command::Compare),
            "quick" => return sub(Command::Quick),
            "pts" => return sub(Command::Pts),
            "report" => return sub(Command::Report),
            "history" => return sub(Command::History),
            "slo" => return sub(Command::Slo),
            f if f == server::job::CHILD_ARG => return sub(Command::ServerJob),
            _ => {}
        }
        if let Some(near) = misspelt(first) {
            return Err(format!(
                "unknown subcommand '{first}' (did you mean '{near}'?)"
            ));
        }
        match server::mode(&args)? {
            Some(Mode::Serve { addr, pidfile }) => return Ok(Command::Server { addr, pidfile }),
            Some(Mode::Client) => return Ok(Command::Client(args)),
            None => {}
        }
        if crate::cluster::is_rank(&args) {
            return Ok(Command::Mpi(args));
        }
        let inv = cli::parse_args(&args).map_err(|e| e.to_string())?;
        Ok(Command::from_invocation(inv))
    }

    /// The action a parsed command line asks for, by fio's precedence: `--version` before
    /// everything, the help flags before the jobs, `--parse-only` before the run.
    pub fn from_invocation(inv: Invocation) -> Command {
        let a = &inv.actions;
        if a.version {
            Command::Version(inv.config.fio_compat)
        } else if a.debug_list {
            Command::DebugList
        } else if a.cpuclock_test {
            Command::CpuclockTest
        } else if let Some(path) = &a.inflate_log {
            Command::InflateLog(path.clone())
        } else if inv.config.idle_prof.as_deref() == Some("calibrate") {
            Command::IdleCalibrate
        } else if a.help {
            Command::Help
        } else if a.showcmd {
            Command::Showcmd(inv)
        } else if let Some(option) = &a.cmdhelp {
            Command::Cmdhelp {
                option: option.clone(),
                profile: inv.config.profile,
            }
        } else if let Some(list) = &a.crctest {
            Command::Crctest(list.clone())
        } else if let Some(arg) = &a.enghelp {
            Command::Enghelp(arg.clone())
        } else if a.parse_only || a.merge_blktrace_only {
            Command::ParseOnly(inv)
        } else {
            Command::Run(inv)
        }
    }
}

/// The subcommand a first argument is a slip for: a bare word (no option, no path, no
/// file of that name, which would be a job file) within two edits of one.
fn misspelt(first: &str) -> Option<&'static str> {
    if first.is_empty()
        || first.starts_with('-')
        || first.contains(['/', '.', '='])
        || std::path::Path::new(first).exists()
    {
        return None;
    }
    SUBCOMMANDS
        .iter()
        .map(|(name, _)| (strsim::levenshtein(first, name), *name))
        .filter(|&(d, _)| d <= 2)
        .min()
        .map(|(_, name)| name)
}

/// iobench's flags of an MPI run (`cluster`), for `--help`.
const MPI_FLAGS: &[(&str, &str)] = &[
    (
        "--rotate-ranks",
        "under mpirun: read jobs read the files another rank wrote",
    ),
    (
        "--sync-start=barrier|clock",
        "under mpirun: start each phase at the barrier or at a set time",
    ),
];

/// The text of `iobench --help`: fio's usage and flags, iobench's own flags, the
/// subcommands.
pub fn help_text() -> String {
    let mut out = cli::usage();
    out.push_str("\niobench's own options (the mpirun ones need the `mpi` build):\n");
    let mut own = cli::own_flags_help();
    own.extend(MPI_FLAGS.iter().map(|(f, h)| (f.to_string(), *h)));
    out.push_str(&crate::flags::columns_in(&own, cli::HELP_WIDTH));
    out.push_str("\nSubcommands (iobench SUBCOMMAND --help for their options):\n");
    let subs: Vec<(String, &str)> = SUBCOMMANDS
        .iter()
        .map(|(n, h)| (n.to_string(), *h))
        .collect();
    out.push_str(&crate::flags::columns_in(&subs, cli::HELP_WIDTH));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, String> {
        Command::parse(args.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn subcommands_and_their_slips() {
        assert!(
            matches!(parse(&["sweep", "--axis", "bs=4k"]), Ok(Command::Sweep(a)) if a.len() == 2)
        );
        assert!(matches!(parse(&["peak", "--help"]), Ok(Command::Peak(_))));
        let e = parse(&["swep", "--axis", "bs=4k"]).unwrap_err();
        assert_eq!(e, "unknown subcommand 'swep' (did you mean 'sweep'?)");
        assert!(parse(&["comprae"]).unwrap_err().contains("'compare'"));
        // A path, an option, or a word far from every subcommand is not a slip.
        assert_eq!(misspelt("swep.fio"), None);
        assert_eq!(misspelt("./swep"), None);
        assert_eq!(misspelt("--swep"), None);
        assert_eq!(misspelt("benchmark"), None);
    }

    #[test]
    fn server_and_client_are_told_apart() {
        assert!(matches!(
            parse(&["--server=,8766", "--daemonize=/tmp/p"]),
            Ok(Command::Server { addr, pidfile: Some(p) }) if addr == ",8766" && p == "/tmp/p"
        ));
        assert!(
            matches!(parse(&["--client=h", "job.fio"]), Ok(Command::Client(a)) if a.len() == 2)
        );
        assert!(parse(&["--server", "--client=h"])
            .unwrap_err()
            .contains("both"));
        assert!(parse(&["--server", "--daemonize"])
            .unwrap_err()
            .contains("--daemonize"));
    }

    #[test]
    fn version_wins_and_parse_only_runs_nothing() {
        assert!(matches!(
            parse(&["--help", "--version"]),
            Ok(Command::Version(_))
        ));
        assert!(matches!(parse(&["--showcmd", "--help"]), Ok(Command::Help)));
        assert!(matches!(
            parse(&["--parse-only", "--name=a", "--size=1m"]),
            Ok(Command::ParseOnly(_))
        ));
        assert!(matches!(
            parse(&["--cmdhelp=bs", "--parse-only"]),
            Ok(Command::Cmdhelp { option, .. }) if option == "bs"
        ));
        assert!(matches!(
            parse(&["--name=a", "--size=1m"]),
            Ok(Command::Run(_))
        ));
    }

    #[test]
    fn help_lists_every_subcommand_and_own_flag() {
        let h = help_text();
        for (name, _) in SUBCOMMANDS {
            assert!(h.contains(&format!("\n  {name}  ")), "{name}: {h}");
        }
        for flag in [
            "--env",
            "--live=FILE",
            "--metrics=ADDR:PORT",
            "--rotate-ranks",
        ] {
            assert!(h.contains(flag), "{flag}");
        }
    }
}
