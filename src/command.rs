//! What one invocation of iobench is, decided once from its arguments: a subcommand
//! (`peak`, `sweep`, …), a server, client or MPI rank, one of fio's one-shot actions
//! (`--version`, `--cmdhelp`, …) or a run. `main` is then one `match` on [`Command`], and
//! the precedence of fio's flags lives here, in [`Command::from_invocation`], not in an
//! if-ladder.

use crate::cli::{self, Invocation};
use crate::flags::Table;
use crate::options::profile::Profile;
use crate::server::{self, Mode};
use crate::study;

/// One subcommand: its flags (whose table holds its name, usage and every flag, each with
/// what it sets), its line in `iobench --help`, and the function that runs it. Adding a
/// subcommand is one entry of [`SUBCOMMANDS`]; adding a flag is one row of its table.
pub struct Subcommand {
    /// The flag table: the name (`sweep`), the usage and the rows.
    pub flags: &'static dyn Table,
    /// Its one line in `iobench --help`.
    pub summary: &'static str,
    /// Runs it with the arguments after its name; returns the exit status.
    pub main: fn(&[String]) -> u8,
}

impl Subcommand {
    /// Its name, as typed: `iobench NAME ...`.
    pub fn name(&self) -> &'static str {
        self.flags.command()
    }
}

impl std::fmt::Debug for Subcommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `iobench peak`: t/io_uring's exit statuses are 0 and 1.
fn peak_main(args: &[String]) -> u8 {
    u8::try_from(crate::peak::main(args)).unwrap_or(1)
}

/// The subcommands, in `iobench --help`'s order.
pub const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        flags: &crate::peak::args::SPEC,
        summary: "peak IOPS of files or devices, with t/io_uring's options",
        main: peak_main,
    },
    Subcommand {
        flags: &study::sweep::SPEC,
        summary: "one job run over every combination of option values",
        main: study::sweep::main,
    },
    Subcommand {
        flags: &study::compare::SPEC,
        summary: "jobs run in turn, or result files: mean ± σ, ratio, gate",
        main: study::compare::main,
    },
    Subcommand {
        flags: &study::quick::SPEC,
        summary: "KDiskMark's standard test of a directory, file or device",
        main: study::quick::main,
    },
    Subcommand {
        flags: &study::pts::SPEC,
        summary: "SNIA SSS PTS tests: purge, precondition, rounds to steady state",
        main: study::pts::main,
    },
    Subcommand {
        flags: &crate::present::html::SPEC,
        summary: "one HTML report of results, sweeps, comparisons and logs",
        main: crate::present::html::main,
    },
    Subcommand {
        flags: &study::history::SPEC,
        summary: "the runs saved with --save: list, compare to a baseline, trend",
        main: study::history::main,
    },
    Subcommand {
        flags: &study::slo::SPEC,
        summary: "the highest arrival rate whose latency meets targets (--p99 2ms)",
        main: study::slo::main,
    },
];

/// One invocation of iobench.
#[derive(Debug)]
pub enum Command {
    /// `iobench SUBCOMMAND ARGS`.
    Sub(&'static Subcommand, Vec<String>),
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
        Command::parse_in(SUBCOMMANDS, args)
    }

    /// [`Command::parse`] with the subcommands of `table` (the tests add one of their own).
    pub fn parse_in(table: &'static [Subcommand], args: Vec<String>) -> Result<Command, String> {
        let first = args.first().map(String::as_str).unwrap_or("");
        if let Some(s) = table.iter().find(|s| s.name() == first) {
            return Ok(Command::Sub(s, args[1..].to_vec()));
        }
        if first == server::job::CHILD_ARG {
            return Ok(Command::ServerJob(args[1..].to_vec()));
        }
        if let Some(near) = misspelt(table, first) {
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
fn misspelt(table: &'static [Subcommand], first: &str) -> Option<&'static str> {
    if first.is_empty()
        || first.starts_with('-')
        || first.contains(['/', '.', '='])
        || std::path::Path::new(first).exists()
    {
        return None;
    }
    table
        .iter()
        .map(|s| (strsim::levenshtein(first, s.name()), s.name()))
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
    help_text_in(SUBCOMMANDS)
}

/// [`help_text`] listing the subcommands of `table`.
pub fn help_text_in(table: &[Subcommand]) -> String {
    let mut out = cli::usage();
    out.push_str("\niobench's own options (the mpirun ones need the `mpi` build):\n");
    let mut own = cli::own_flags_help();
    own.extend(MPI_FLAGS.iter().map(|(f, h)| (f.to_string(), *h)));
    out.push_str(&crate::flags::columns_in(&own, cli::HELP_WIDTH));
    out.push_str("\nSubcommands (iobench SUBCOMMAND --help for their options):\n");
    let subs: Vec<(String, &str)> = table
        .iter()
        .map(|s| (s.name().to_string(), s.summary))
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
            matches!(parse(&["sweep", "--axis", "bs=4k"]), Ok(Command::Sub(s, a)) if s.name() == "sweep" && a.len() == 2)
        );
        assert!(matches!(parse(&["peak", "--help"]), Ok(Command::Sub(s, _)) if s.name() == "peak"));
        let e = parse(&["swep", "--axis", "bs=4k"]).unwrap_err();
        assert_eq!(e, "unknown subcommand 'swep' (did you mean 'sweep'?)");
        assert!(parse(&["comprae"]).unwrap_err().contains("'compare'"));
        // A path, an option, or a word far from every subcommand is not a slip.
        assert_eq!(misspelt(SUBCOMMANDS, "swep.fio"), None);
        assert_eq!(misspelt(SUBCOMMANDS, "./swep"), None);
        assert_eq!(misspelt(SUBCOMMANDS, "--swep"), None);
        assert_eq!(misspelt(SUBCOMMANDS, "benchmark"), None);
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
        for s in SUBCOMMANDS {
            let name = s.name();
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
