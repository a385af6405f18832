//! fio's command line: its own flags (`--output`, `--eta`, …) and job options given as
//! `--opt=val`, `--opt val` or `-opt=val`, where `--name` starts a new job and options before
//! the first `--name` are defaults for the jobs after them. Positional arguments are job files.

use crate::defs::raw::{RawJob, RawOpt};
use crate::defs::TimeUnit;
use crate::error::Origin;
use crate::error::ParseError;
use crate::options;
use crate::options::jobfile::{self, FileOptions};
use crate::options::table::{RW, WAIT_FOR};

/// The output formats of `--output-format` (comma-combined).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Normal,
    Json,
    JsonPlus,
    Terse,
}

impl OutputFormat {
    /// A word of `--output-format` (`terse` also as `minimal` or `csv`, as fio takes it);
    /// the client's flags and a plain run's read them with this.
    pub fn from_word(w: &str) -> Option<OutputFormat> {
        Some(match w {
            "normal" => OutputFormat::Normal,
            "json" => OutputFormat::Json,
            "json+" => OutputFormat::JsonPlus,
            "terse" | "minimal" | "csv" => OutputFormat::Terse,
            _ => return None,
        })
    }
}

/// The one-shot actions of fio's flags (`--version`, `--cmdhelp`, …): each answers and
/// exits instead of running the jobs; `command::Command` picks the one that wins.
#[derive(Debug, Clone, Default)]
pub struct Actions {
    /// `--version`.
    pub version: bool,
    /// `--help`: print the usage and exit.
    pub help: bool,
    /// `--debug=?` (or `help`): list the debug categories.
    pub debug_list: bool,
    /// `--cpuclock-test`: test the clock across CPUs and exit.
    pub cpuclock_test: bool,
    /// `--inflate-log=FILE`: print a compressed log's text and exit.
    pub inflate_log: Option<String>,
    /// `--showcmd`: print the job files as command lines.
    pub showcmd: bool,
    /// `--cmdhelp` with an optional option name (`Some("")` for all).
    pub cmdhelp: Option<String>,
    /// `--crctest` with an optional list of hashes (`Some("")` for all).
    pub crctest: Option<String>,
    /// `--enghelp` with an optional engine (and command).
    pub enghelp: Option<String>,
    /// `--parse-only`: parse the jobs, run nothing.
    pub parse_only: bool,
    /// `--merge-blktrace-only`: parse the jobs, merge their blktrace inputs, run nothing.
    pub merge_blktrace_only: bool,
}

/// The settings of a run, as opposed to the jobs and to the one-shot actions.
#[derive(Debug, Clone, Default)]
pub struct CliConfig {
    pub output: Option<String>,
    pub formats: Vec<OutputFormat>,
    pub readonly: bool,
    /// `--eta=always|never|auto`.
    pub eta: Option<String>,
    /// `--eta-newline=TIME` in milliseconds (a bare number is seconds, as in fio).
    pub eta_newline: Option<u64>,
    /// `--eta-interval=TIME` in milliseconds (a bare number is seconds, as in fio).
    pub eta_interval: Option<u64>,
    /// `--status-interval=TIME` in milliseconds (a bare number is seconds, as in fio).
    pub status_interval: Option<u64>,
    /// `--section=NAME` (repeatable): only these sections of the first job file run.
    pub sections: Vec<String>,
    /// `--max-jobs=N`: the most job clones a run may have (fio's limit, 4096, without it);
    /// see run::limits.
    pub max_jobs: Option<u64>,
    pub warnings_fatal: bool,
    pub terse_version: Option<u32>,
    pub append_terse: bool,
    /// `--env`: the JSON report gains an `iobench_env` object (see `context::env`).
    pub env: bool,
    /// `--save`: the run is stored in the results history (see `history`).
    pub save: bool,
    /// `--history=PATH`: the history's file, instead of the default.
    pub history: Option<String>,
    /// `--live=FILE|-`: JSON Lines of each interval's own numbers (see `present::jsonlines`).
    pub live: Option<String>,
    /// `--metrics=ADDR:PORT`: a Prometheus endpoint while the run goes (`present::metrics`).
    pub metrics: Option<String>,
    /// `--metrics-linger=TIME` (ms): after the run, keep serving the final values until one
    /// scrape of them was answered, at most this long (see `present::metrics`).
    pub metrics_linger_ms: Option<u64>,
    /// `--profile=NAME`: one of fio's built-in profiles, whose jobs follow the others.
    pub profile: Option<crate::options::profile::Profile>,
    /// `--bandwidth-log[=NAME]`: fio's aggregate bandwidth logs (see `fioflags`), named
    /// `NAME-{read,write,trim}_bw.log` (`agg` without a name; a name is fio 3.42's).
    pub bandwidth_log: Option<String>,
    /// `--alloc-size=KB`: the size of fio's shared-memory pool; iobench has none (its
    /// memory grows as needed), so the value is only checked.
    pub alloc_size: Option<u64>,
    /// `--idle-prof=system|percpu|calibrate`.
    pub idle_prof: Option<String>,
    /// `--trigger-file=FILE`, `--trigger-timeout=T` (ms), `--trigger=CMD`.
    pub trigger_file: Option<String>,
    pub trigger_timeout: Option<u64>,
    pub trigger: Option<String>,
    /// `--trigger-remote=CMD`: sent to fio servers by a client; a local run has none.
    pub trigger_remote: Option<String>,
    /// `--aux-path=DIR`: where state files (verify state) are written and read.
    pub aux_path: Option<String>,
    /// `--daemonize=PIDFILE`: only with `--server`, as in fio (ignored otherwise).
    pub daemonize: Option<String>,
    /// `--fio-compat=VERSION` (or `IOBENCH_FIO_COMPAT`): the fio release iobench speaks
    /// as; 3.42 unless told otherwise. Copied to every job (`RawJob::release`).
    pub fio_compat: crate::defs::release::FioRelease,
}

impl CliConfig {
    /// True when the normal format is among those asked for (headers and progress are
    /// then printed; with only json or terse, stdout carries nothing else). The run's
    /// own notes ask this; the reports pick their formats with `report::Formats`, which
    /// agrees with it.
    pub fn wants_normal(&self) -> bool {
        self.formats.is_empty() || self.formats.contains(&OutputFormat::Normal)
    }

    /// True when `--live=-` has stdout: the JSON Lines are alone there, and the reports
    /// and fio's notes that would go to stdout go to stderr (or, for the notes a machine
    /// format drops, nowhere).
    pub fn live_on_stdout(&self) -> bool {
        self.live.as_deref() == Some("-")
    }

    /// True when the reports go to stdout: no `--output`, and stdout not `--live`'s.
    pub fn report_on_stdout(&self) -> bool {
        self.output.is_none() && !self.live_on_stdout()
    }

    /// How often the collector takes snapshots of the running clones: the
    /// `--status-interval`, else once a second when `--live` or `--metrics` wants them.
    pub fn snapshot_every_ms(&self) -> Option<u64> {
        self.status_interval
            .or_else(|| (self.live.is_some() || self.metrics.is_some()).then_some(1000))
    }
}

/// The whole parsed invocation.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    pub config: CliConfig,
    pub actions: Actions,
    pub jobs: Vec<RawJob>,
    /// `--showcmd`'s rendering of each job file, in order (`None` for a file without
    /// sections); command-line jobs are not rendered, as in fio.
    pub showcmd: Vec<Option<String>>,
}

impl Invocation {
    /// The `--showcmd` output: one line per job file, `iobench ` and its options.
    pub fn showcmd_text(&self) -> String {
        let mut out = String::new();
        for line in &self.showcmd {
            if let Some(opts) = line {
                out.push_str("iobench ");
                out.push_str(opts);
            }
            out.push('\n');
        }
        out
    }
}

/// One flag of a plain run that is not a job option: its name, whether it takes a value,
/// the value's form and what it does, for the parser and for `--help`.
struct OwnFlag {
    name: &'static str,
    arg: FlagArg,
    form: &'static str,
    help: &'static str,
}

const fn flag(name: &'static str, arg: FlagArg, form: &'static str, help: &'static str) -> OwnFlag {
    OwnFlag {
        name,
        arg,
        form,
        help,
    }
}

/// The flags of a plain run, fio's and iobench's, in the order `--help` lists them (fio's
/// own order first).
const OWN_FLAGS: &[OwnFlag] = &[
    flag(
        "debug",
        FlagArg::Required,
        "options",
        "turn on debug output for these categories (?: list them)",
    ),
    flag(
        "parse-only",
        FlagArg::None,
        "",
        "parse the options and jobs, do no I/O",
    ),
    flag(
        "merge-blktrace-only",
        FlagArg::None,
        "",
        "merge the jobs' blktrace inputs, do no I/O",
    ),
    flag(
        "output",
        FlagArg::Required,
        "file",
        "write the output to this file",
    ),
    flag(
        "bandwidth-log",
        FlagArg::Optional,
        "name",
        "write the aggregate bandwidth logs (NAME-read_bw.log, ...; agg without a name)",
    ),
    flag(
        "minimal",
        FlagArg::None,
        "",
        "terse output (as --output-format=terse)",
    ),
    flag(
        "output-format",
        FlagArg::Required,
        "type",
        "normal, json, json+ or terse, comma-combined",
    ),
    flag(
        "terse-version",
        FlagArg::Required,
        "type",
        "version of the terse format: 2, 3 (default), 4 or 5",
    ),
    flag(
        "append-terse",
        FlagArg::None,
        "",
        "terse lines after the normal output",
    ),
    flag("version", FlagArg::None, "", "print the version and exit"),
    flag(
        "fio-compat",
        FlagArg::Required,
        "version",
        "speak as this fio release, 3.33 to 3.42 (default 3.42)",
    ),
    flag("help", FlagArg::None, "", "print this help and exit"),
    flag(
        "cpuclock-test",
        FlagArg::None,
        "",
        "check the CPU clock across CPUs and exit",
    ),
    flag(
        "crctest",
        FlagArg::Optional,
        "type",
        "measure the checksum functions' speed and exit",
    ),
    flag(
        "cmdhelp",
        FlagArg::Optional,
        "cmd",
        "describe a job option (all: every one) and exit",
    ),
    flag(
        "enghelp",
        FlagArg::Optional,
        "engine[,cmd]",
        "list the engines, or an engine's options, and exit",
    ),
    flag(
        "showcmd",
        FlagArg::None,
        "",
        "print each job file as a command line and exit",
    ),
    flag(
        "eta",
        FlagArg::Required,
        "when",
        "the status line: always, never or auto",
    ),
    flag(
        "eta-newline",
        FlagArg::Required,
        "t",
        "start a new status line every t",
    ),
    flag(
        "eta-interval",
        FlagArg::Required,
        "t",
        "refresh the status line every t (250ms at least)",
    ),
    flag(
        "status-interval",
        FlagArg::Required,
        "t",
        "print the full report every t while running",
    ),
    flag(
        "readonly",
        FlagArg::None,
        "",
        "refuse every job that writes or trims",
    ),
    flag(
        "section",
        FlagArg::Required,
        "name",
        "run only this section of the job file (repeatable)",
    ),
    flag(
        "alloc-size",
        FlagArg::Required,
        "kb",
        "fio's shared pool size (checked; iobench needs none)",
    ),
    flag(
        "warnings-fatal",
        FlagArg::None,
        "",
        "a parser warning is an error",
    ),
    flag(
        "max-jobs",
        FlagArg::Required,
        "nr",
        "the most job clones a run may have",
    ),
    flag(
        "daemonize",
        FlagArg::Required,
        "pidfile",
        "with --server: run in the background, pid in this file",
    ),
    flag(
        "idle-prof",
        FlagArg::Required,
        "option",
        "CPU idleness: system or percpu; calibrate runs nothing",
    ),
    flag(
        "inflate-log",
        FlagArg::Required,
        "log",
        "print a compressed log as text and exit",
    ),
    flag(
        "trigger-file",
        FlagArg::Required,
        "file",
        "run the trigger when this file appears",
    ),
    flag(
        "trigger-timeout",
        FlagArg::Required,
        "t",
        "run the trigger after t",
    ),
    flag(
        "trigger",
        FlagArg::Required,
        "cmd",
        "the command a trigger runs here",
    ),
    flag(
        "trigger-remote",
        FlagArg::Required,
        "cmd",
        "the command a trigger runs on the servers",
    ),
    flag(
        "aux-path",
        FlagArg::Required,
        "path",
        "where state files (verify state) go",
    ),
    flag(
        "profile",
        FlagArg::Required,
        "name",
        "add a built-in profile's jobs: tiobench or act",
    ),
    flag(
        "env",
        FlagArg::None,
        "",
        "add an iobench_env object to the JSON output: host, kernel,\n\
         devices, settings (what the run ran on)",
    ),
    flag(
        "save",
        FlagArg::None,
        "",
        "store the run's JSON+ and iobench_env in the results history\n\
         (see iobench history --help)",
    ),
    flag(
        "history",
        FlagArg::Required,
        "PATH",
        "with --save: the history's SQLite file (default\n\
         $XDG_DATA_HOME/iobench/history.sqlite)",
    ),
    flag(
        "live",
        FlagArg::Required,
        "FILE|-",
        "write each interval's own numbers as JSON Lines while running;\n\
         with -, stdout holds the JSON Lines alone and the report goes\n\
         to stderr (or to --output)",
    ),
    flag(
        "metrics",
        FlagArg::Required,
        "ADDR:PORT",
        "serve Prometheus metrics on ADDR:PORT while running",
    ),
    flag(
        "metrics-linger",
        FlagArg::Required,
        "TIME",
        "after the run, serve --metrics' final values (iobench_up 0)\n\
         until one scrape has read them, at most TIME (0: not at all;\n\
         default: 15s when something scraped during the run)",
    ),
];

/// The flags of a plain run that are iobench's own (fio has none of them).
pub const IOBENCH_ONLY: &[&str] = &[
    "fio-compat",
    "env",
    "live",
    "metrics",
    "metrics-linger",
    "save",
    "history",
];

/// fio's flags handled before the plain run's parser (client and server mode), for
/// `--help`.
const MODE_FLAGS: &[OwnFlag] = &[
    flag(
        "server",
        FlagArg::Optional,
        "args",
        "serve fio's protocol: ip:ADDR,PORT, ,PORT or sock:PATH",
    ),
    flag(
        "client",
        FlagArg::Required,
        "hostname",
        "run the jobs on the server at hostname (repeatable)",
    ),
    flag(
        "remote-config",
        FlagArg::Required,
        "file",
        "with --client: a job file on the server's side",
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FlagArg {
    None,
    Required,
    Optional,
}

fn bad(option: &str, value: &str, reason: &str, expected: &'static str) -> ParseError {
    ParseError::BadValue {
        option: option.to_string(),
        value: value.to_string(),
        reason: reason.to_string(),
        expected,
        origin: Origin::command_line(),
    }
}

fn parse_u64(flag: &str, v: &str) -> Result<u64, ParseError> {
    v.trim()
        .parse()
        .map_err(|_| bad(flag, v, "not a whole number", "a whole number"))
}

/// Reads an interval flag as fio does (a bare number is seconds; units allowed) into
/// milliseconds, refusing anything under `min_ms`.
fn parse_ms(flag: &str, v: &str, min_ms: u64) -> Result<u64, ParseError> {
    const FORM: &str = "a time such as 1, 500ms or 2s";
    let us =
        crate::defs::value::parse_time_us(v, TimeUnit::Sec).map_err(|e| bad(flag, v, &e, FORM))?;
    let ms = us / 1000;
    if ms < min_ms.max(1) {
        return Err(bad(
            flag,
            v,
            &format!("shorter than {}ms", min_ms.max(1)),
            FORM,
        ));
    }
    Ok(ms)
}

fn apply_own_flag(
    cfg: &mut CliConfig,
    act: &mut Actions,
    flag: &str,
    v: Option<&str>,
) -> Result<(), ParseError> {
    let val = v.unwrap_or("");
    match flag {
        "output" => cfg.output = Some(val.to_string()),
        "output-format" => {
            // As in fio, each --output-format replaces the formats given before it.
            cfg.formats.clear();
            for f in val.split(',') {
                cfg.formats.push(OutputFormat::from_word(f).ok_or_else(|| {
                    bad(flag, f, "unknown format", "normal, json, json+ or terse")
                })?)
            }
        }
        "minimal" => cfg.formats.push(OutputFormat::Terse),
        "terse-version" => cfg.terse_version = Some(parse_u64(flag, val)? as u32),
        "append-terse" => cfg.append_terse = true,
        "eta" => match val {
            "always" | "never" | "auto" => cfg.eta = Some(val.to_string()),
            _ => return Err(bad(flag, val, "unknown setting", "always, never or auto")),
        },
        "eta-newline" => cfg.eta_newline = Some(parse_ms(flag, val, 1)?),
        // fio's shortest: its disk-utilisation tick.
        "eta-interval" => cfg.eta_interval = Some(parse_ms(flag, val, 250)?),
        "status-interval" => cfg.status_interval = Some(parse_ms(flag, val, 1000)?),
        "section" => cfg.sections.push(val.to_string()),
        "parse-only" => act.parse_only = true,
        "showcmd" => act.showcmd = true,
        "cmdhelp" => act.cmdhelp = Some(val.to_string()),
        "enghelp" => act.enghelp = Some(val.to_string()),
        "crctest" => act.crctest = Some(val.to_string()),
        "version" => act.version = true,
        "fio-compat" => {
            cfg.fio_compat = crate::defs::release::FioRelease::parse(val).map_err(|_| {
                bad(
                    flag,
                    val,
                    "not a fio release iobench speaks",
                    "a release from 3.33 to 3.42, e.g. 3.39",
                )
            })?
        }
        "readonly" => cfg.readonly = true,
        "max-jobs" => cfg.max_jobs = Some(parse_u64(flag, val)?),
        "warnings-fatal" => cfg.warnings_fatal = true,
        "help" => act.help = true,
        "env" => cfg.env = true,
        "save" => cfg.save = true,
        "history" => cfg.history = Some(val.to_string()),
        "live" => cfg.live = Some(val.to_string()),
        "metrics" => cfg.metrics = Some(val.to_string()),
        "metrics-linger" => {
            let us = crate::defs::value::parse_time_us(val, TimeUnit::Sec)
                .map_err(|e| bad(flag, val, &e, "a time such as 0, 30 or 2m"))?;
            cfg.metrics_linger_ms = Some(us / 1000);
        }
        // Applied before the other arguments (see `parse_args`), so parse lines show.
        "debug" => act.debug_list |= crate::debug::asks_for_list(val),
        "merge-blktrace-only" => act.merge_blktrace_only = true,
        "bandwidth-log" => cfg.bandwidth_log = Some(v.unwrap_or("agg").to_string()),
        "alloc-size" => cfg.alloc_size = Some(parse_u64(flag, val)?),
        "cpuclock-test" => act.cpuclock_test = true,
        "idle-prof" => cfg.idle_prof = Some(val.to_string()),
        "inflate-log" => act.inflate_log = Some(val.to_string()),
        "trigger-file" => cfg.trigger_file = Some(val.to_string()),
        "trigger-timeout" => cfg.trigger_timeout = Some(parse_ms(flag, val, 1)?),
        "trigger" => cfg.trigger = Some(val.to_string()),
        "trigger-remote" => cfg.trigger_remote = Some(val.to_string()),
        "aux-path" => {
            set_aux_path(val);
            cfg.aux_path = Some(val.to_string())
        }
        "daemonize" => cfg.daemonize = Some(val.to_string()),
        "profile" => {
            cfg.profile = Some(
                crate::options::profile::Profile::parse(val)
                    .map_err(|e| bad(flag, val, &e, "tiobench or act"))?,
            )
        }
        _ => unreachable!("flag listed in OWN_FLAGS"),
    }
    Ok(())
}

/// Finds the flag or option an argument names: exactly, or (as fio's `getopt_long_only`
/// allows) by a prefix that only one name starts with.
fn resolve_name(name: &str) -> Resolved {
    if let Some(f) = OWN_FLAGS.iter().find(|f| f.name == name) {
        return Resolved::Flag(f.name, f.arg);
    }
    if options::lookup(name).is_some() {
        return Resolved::Option(name.to_string());
    }
    if name.is_empty() {
        return Resolved::Unknown;
    }
    let flags = OWN_FLAGS.iter().filter(|f| f.name.starts_with(name));
    let opts = options::OPTIONS.iter().flat_map(|o| {
        std::iter::once(o.name)
            .chain(o.aliases.iter().copied())
            .filter(|n| n.starts_with(name))
    });
    let mut found: Vec<Resolved> = flags
        .map(|f| Resolved::Flag(f.name, f.arg))
        .chain(opts.map(|n| Resolved::Option(n.to_string())))
        .take(2)
        .collect();
    if found.len() == 1 {
        found.remove(0)
    } else {
        Resolved::Unknown
    }
}

enum Resolved {
    Flag(&'static str, FlagArg),
    Option(String),
    Unknown,
}

/// One row of `--help`: `--name=form` (`--name[=form]` when the value may be left out).
fn help_row(f: &OwnFlag) -> (String, &'static str) {
    let left = match f.arg {
        FlagArg::None => format!("--{}", f.name),
        FlagArg::Required => format!("--{}={}", f.name, f.form),
        FlagArg::Optional => format!("--{}[={}]", f.name, f.form),
    };
    (left, f.help)
}

/// The `--help` text of fio's flags: the usage line and each flag fio has, described and
/// aligned (`command::help_text` adds iobench's own flags and the subcommands).
pub fn usage() -> String {
    let mut out = String::from(
        "usage: iobench [options] [job options] [job files]\n\
         \x20      iobench SUBCOMMAND [options] ...   (the subcommands are listed below)\n\
         \x20      iobench --server[=ip:ADDR,PORT|,PORT|sock:PATH] [--daemonize=PIDFILE]\n\
         \x20      iobench --client=HOST[,PORT] [job files] [--client=HOST …] (fio's protocol)\n\n\
         Job options are fio's (see --cmdhelp), as --opt=value, --opt value or -opt=value;\n\
         --name=NAME starts a job, and options before the first --name apply to every job.\n\n\
         fio's options:\n",
    );
    let rows: Vec<(String, &str)> = OWN_FLAGS
        .iter()
        .filter(|f| !IOBENCH_ONLY.contains(&f.name))
        .chain(MODE_FLAGS)
        .map(help_row)
        .collect();
    out.push_str(&crate::flags::columns_in(&rows, HELP_WIDTH));
    out
}

/// Where the descriptions of `iobench --help` start (after two spaces of indent and two
/// after the flag), the same for every list in it.
pub const HELP_WIDTH: usize = 26;

/// The `--help` rows of iobench's own flags of a plain run.
pub fn own_flags_help() -> Vec<(String, &'static str)> {
    OWN_FLAGS
        .iter()
        .filter(|f| IOBENCH_ONLY.contains(&f.name))
        .map(help_row)
        .collect()
}

/// Parses the arguments after the program name.
pub fn parse_args<S: AsRef<str>>(args: &[S]) -> Result<Invocation, ParseError> {
    parse_args_sent(args, &[], &jobfile::Includes::Any)
}

/// [`parse_args`] for a job a client sent to `--server`: `texts` (name, text) are job
/// files held in memory, read after those `args` names, and `includes` says which files
/// their `include` lines may read.
pub fn parse_args_sent<S: AsRef<str>>(
    args: &[S],
    texts: &[(String, String)],
    includes: &jobfile::Includes,
) -> Result<Invocation, ParseError> {
    let mut inv = Invocation::default();
    inv.config.fio_compat = crate::defs::release::FioRelease::from_env().map_err(|e| {
        bad(
            "fio-compat",
            &std::env::var(crate::defs::release::ENV).unwrap_or_default(),
            &e,
            "a release from 3.33 to 3.42 in IOBENCH_FIO_COMPAT, e.g. 3.39",
        )
    })?;
    // `--debug` takes effect before any option is read, as in fio.
    pre_debug(args);
    // A profile's own options are known from the start, wherever `--profile` stands.
    let profile = pre_profile(args);
    let mut profile_opts: Vec<(String, Option<String>)> = Vec::new();
    let mut defaults: Vec<RawOpt> = Vec::new();
    let mut job_files: Vec<String> = Vec::new();
    // Options of a command-line job that `--section` leaves out are dropped with it.
    let mut skipping = false;
    // After `--name=global`, options are defaults again until the next job.
    let mut in_global = false;
    let origin = Origin::command_line();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_ref();
        i += 1;
        let body = match arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) {
            Some(b) if !b.is_empty() => b,
            _ => {
                job_files.push(arg.to_string());
                continue;
            }
        };
        let (given, mut value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let name = match resolve_name(given) {
            Resolved::Flag(flag, kind) => {
                if value.is_none() && kind == FlagArg::Required {
                    value = args.get(i).map(|s| s.as_ref().to_string());
                    i += 1;
                    if value.is_none() {
                        return Err(bad(flag, "", "a value is required", "a value"));
                    }
                }
                apply_own_flag(&mut inv.config, &mut inv.actions, flag, value.as_deref())?;
                continue;
            }
            Resolved::Option(name) => name,
            Resolved::Unknown => given.to_string(),
        };
        // A profile option (one no job option has the name of, as fio looks job options
        // up first).
        if profile.is_some_and(|p| p.options().contains(&given) && options::lookup(given).is_none())
        {
            if value.is_none() && given != "prep" {
                value = args.get(i).map(|s| s.as_ref().to_string());
                i += 1;
            }
            profile_opts.push((given.to_string(), value));
            continue;
        }
        // A job option: as in fio, every option but the "empty or boolean" flags takes the
        // next argument as its value when none follows '='.
        if value.is_none() {
            if let Some(def) = options::lookup(&name) {
                if !options::check::is_flag(def) {
                    value = args.get(i).map(|s| s.as_ref().to_string());
                    i += 1;
                }
            }
        }
        let opt = options::make_opt(&name, value.as_deref(), &origin)?;
        if opt.def.name == "name" {
            let job_name = opt.value.clone().unwrap_or_default();
            // `--name=global…` opens a global section: what follows are defaults.
            let global = job_name.starts_with("global");
            in_global = global;
            skipping = !global
                && !inv.config.sections.is_empty()
                && !inv.config.sections.contains(&job_name);
            if !global && !skipping {
                inv.jobs.push(RawJob {
                    name: job_name,
                    opts: defaults.clone(),
                    origin: origin.clone(),
                    globals: defaults.len(),
                    ..Default::default()
                });
            }
            continue;
        }
        if skipping {
            continue;
        }
        match inv.jobs.last_mut() {
            Some(job) if !in_global => job.opts.push(opt),
            _ => defaults.push(opt),
        }
    }
    if *includes != jobfile::Includes::Any {
        if let Some(f) = job_files.first() {
            // A sent command line names no server-side file: job files travel as JOB.
            return Err(ParseError::Io {
                path: f.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "a client's command line may not name a file on the server \
                     (send the job file itself, or --remote-config under --server-root)",
                ),
            });
        }
    }
    let sources = job_files
        .iter()
        .map(|p| (p.as_str(), None))
        .chain(texts.iter().map(|(n, t)| (n.as_str(), Some(t.as_str()))));
    for (idx, (path, text)) in sources.enumerate() {
        let mut globals = defaults.clone();
        // As in fio, `--section` filters the first job file only, and each later file
        // starts with a stonewall.
        let opts = FileOptions {
            sections: if idx == 0 {
                inv.config.sections.clone()
            } else {
                Vec::new()
            },
            stonewall_first: idx > 0,
            allow_not_yet: inv.actions.showcmd,
            includes: includes.clone(),
        };
        let parsed = match text {
            Some(t) => jobfile::parse_text(t, path, &mut globals, &opts)?,
            None => jobfile::parse_path(path, &mut globals, &opts)?,
        };
        inv.jobs.extend(parsed.jobs);
        inv.showcmd.push(parsed.showcmd);
    }
    if let Some(p) = inv.config.profile.filter(|_| inv.actions.cmdhelp.is_none()) {
        add_profile_jobs(p, &profile_opts, &defaults, &mut inv.jobs)?;
    }
    for j in &mut inv.jobs {
        j.release = inv.config.fio_compat;
        // An option (or value) fio added after the dialect's release is refused by name,
        // with the release that added it, as that fio would not know it.
        for o in &j.opts {
            crate::options::check_dialect(
                o.spelled,
                o.value.as_deref(),
                inv.config.fio_compat,
                &o.origin,
            )?;
        }
    }
    if inv.config.readonly {
        check_readonly(&inv.jobs)?;
    }
    if !inv.actions.showcmd {
        check_wait_for(&inv.jobs)?;
    }
    if let (Some(ms), None) = (inv.config.metrics_linger_ms, &inv.config.metrics) {
        return Err(bad(
            "metrics-linger",
            &format!("{}ms", ms),
            "there is no --metrics endpoint to keep serving",
            "--metrics=ADDR:PORT with it",
        ));
    }
    // A name for the aggregate logs is fio 3.42's; older fios refuse the argument.
    if let Some(name) = inv.config.bandwidth_log.as_deref() {
        if name.is_empty() {
            return Err(bad(
                "bandwidth-log",
                name,
                "an empty name",
                "--bandwidth-log or --bandwidth-log=NAME",
            ));
        }
        let named = args
            .iter()
            .any(|a| a.as_ref().starts_with("--bandwidth-log="));
        if named && inv.config.fio_compat < crate::defs::release::FioRelease::V3_42 {
            return Err(bad(
                "bandwidth-log",
                name,
                &format!(
                    "fio {} takes no name for the aggregate logs (fio 3.42 does)",
                    inv.config.fio_compat
                ),
                "--bandwidth-log alone",
            ));
        }
    }
    Ok(inv)
}

/// Finds `--debug=CATS` (or `--debug CATS`) among the arguments and turns the categories
/// on, printing fio's "set debug option" lines.
fn pre_debug<S: AsRef<str>>(args: &[S]) {
    let mut it = args.iter().map(|a| a.as_ref());
    while let Some(a) = it.next() {
        let spec = match a
            .strip_prefix("--debug")
            .or_else(|| a.strip_prefix("-debug"))
        {
            Some(rest) if rest.starts_with('=') => rest[1..].to_string(),
            Some("") => it.next().unwrap_or("").to_string(),
            _ => continue,
        };
        // A request for the list is answered when the flag itself is read.
        if let crate::debug::Request::Enable(lines) = crate::debug::parse(&spec) {
            for l in lines {
                println!("{l}");
            }
        }
    }
    crate::dprint!(crate::debug::Cat::Parse, "dup options");
}

/// The profile `--profile` names, if any and known (an unknown one is reported when the
/// flag itself is read).
fn pre_profile<S: AsRef<str>>(args: &[S]) -> Option<crate::options::profile::Profile> {
    let mut found = None;
    let mut it = args.iter().map(|a| a.as_ref());
    while let Some(a) = it.next() {
        let name = match a
            .strip_prefix("--profile")
            .or_else(|| a.strip_prefix("-profile"))
        {
            Some(rest) if rest.starts_with('=') => &rest[1..],
            Some("") => it.next().unwrap_or(""),
            _ => continue,
        };
        found = crate::options::profile::Profile::parse(name).ok();
    }
    found
}

/// Adds a profile's jobs after the others, as fio does when it starts: each inherits
/// the command line's defaults, then the profile's global options.
fn add_profile_jobs(
    p: crate::options::profile::Profile,
    given: &[(String, Option<String>)],
    defaults: &[RawOpt],
    jobs: &mut Vec<RawJob>,
) -> Result<(), ParseError> {
    let origin = Origin::command_line();
    let e = crate::options::profile::expand(p, given).map_err(|message| ParseError::Syntax {
        message,
        origin: origin.clone(),
    })?;
    let make = |list: &[(String, Option<String>)]| -> Result<Vec<RawOpt>, ParseError> {
        list.iter()
            .map(|(k, v)| options::make_opt(k, v.as_deref(), &origin))
            .collect()
    };
    let mut globals = defaults.to_vec();
    globals.extend(make(&e.globals)?);
    for (name, opts) in &e.jobs {
        let mut all = globals.clone();
        all.extend(make(opts)?);
        jobs.push(RawJob {
            name: name.clone(),
            opts: all,
            origin: origin.clone(),
            globals: globals.len(),
            act_slices: e.act_slices,
            ..Default::default()
        });
    }
    Ok(())
}

/// `--readonly`: refuses, before any I/O, every job whose `rw` writes or trims.
fn check_readonly(jobs: &[RawJob]) -> Result<(), ParseError> {
    for job in jobs {
        let rw = job.get(&RW);
        let word = rw.map_or("read", |o| {
            crate::defs::value::choice_word(o.value.as_deref().unwrap_or("read"))
        });
        if !matches!(word, "read" | "randread") {
            return Err(ParseError::Syntax {
                message: format!(
                    "job '{}' has rw={word}, which writes or trims, but --readonly is set",
                    job.name
                ),
                origin: rw.map_or_else(|| job.origin.clone(), |o| o.origin.clone()),
            });
        }
    }
    Ok(())
}

/// `wait_for=NAME` must name a job defined before this one, and not the job itself, as fio
/// checks before it starts.
fn check_wait_for(jobs: &[RawJob]) -> Result<(), ParseError> {
    for (idx, job) in jobs.iter().enumerate() {
        let Some(opt) = job.get(&WAIT_FOR) else {
            continue;
        };
        let target = opt.value.as_deref().unwrap_or("").trim();
        let message = if target == job.name {
            format!(
                "job '{}' cannot wait for itself (wait_for={target})",
                job.name
            )
        } else if !jobs[..idx].iter().any(|j| j.name == target) {
            format!(
                "job '{}' waits for '{target}', but no job before it has that name",
                job.name
            )
        } else {
            continue;
        };
        return Err(ParseError::Syntax {
            message,
            origin: opt.origin.clone(),
        });
    }
    Ok(())
}

/// `--aux-path`: where state files go instead of the current directory, as fio's
/// `aux_path` (set once by the command line, before any job runs).
static AUX_PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Sets `--aux-path` (the first call wins).
pub fn set_aux_path(dir: &str) {
    let _ = AUX_PATH.set(std::path::PathBuf::from(dir));
}

/// The directory state files are saved in and loaded from: `--aux-path`, or `.`.
pub fn state_dir() -> std::path::PathBuf {
    AUX_PATH
        .get()
        .cloned()
        .unwrap_or_else(|| std::path::PathBuf::from("."))
}
