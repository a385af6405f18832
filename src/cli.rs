//! fio's command line: its own flags (`--output`, `--eta`, …) and job options given as
//! `--opt=val`, `--opt val` or `-opt=val`, where `--name` starts a new job and options before
//! the first `--name` are defaults for the jobs after them. Positional arguments are job files.

use crate::error::ParseError;
use crate::options::jobfile::{self, FileOptions};
use crate::options::table::TimeUnit;
use crate::options::{self, Origin, RawJob, RawOpt};

/// The output formats of `--output-format` (comma-combined).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Normal,
    Json,
    JsonPlus,
    Terse,
}

/// What the user asked of iobench itself, as opposed to the jobs.
#[derive(Debug, Clone, Default)]
pub struct CliConfig {
    pub output: Option<String>,
    pub formats: Vec<OutputFormat>,
    pub parse_only: bool,
    pub showcmd: bool,
    pub version: bool,
    /// `--cmdhelp` with an optional option name (`Some("")` for all).
    pub cmdhelp: Option<String>,
    pub enghelp: Option<String>,
    /// `--crctest` with an optional list of hashes (`Some("")` for all).
    pub crctest: Option<String>,
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
    /// `--help`: print the usage and exit.
    pub help: bool,
    /// `--env`: the JSON report gains an `iobench_env` object (see `context::env`).
    pub env: bool,
    /// `--live=FILE|-`: JSON Lines of each interval's own numbers (see `present::live`).
    pub live: Option<String>,
    /// `--metrics=ADDR:PORT`: a Prometheus endpoint while the run goes (`present::metrics`).
    pub metrics: Option<String>,
    /// `--debug=CATS`: fio's debug categories (see `debug`); `Some("?")` lists them.
    pub debug: Option<String>,
    /// `--merge-blktrace-only`: parse the jobs, merge their blktrace inputs, run nothing.
    pub merge_blktrace_only: bool,
    /// `--profile=NAME`: one of fio's built-in profiles, whose jobs follow the others.
    pub profile: Option<crate::options::profile::Profile>,
    /// `--bandwidth-log`: fio's aggregate bandwidth logs (see `fioflags`).
    pub bandwidth_log: bool,
    /// `--alloc-size=KB`: the size of fio's shared-memory pool; iobench has none (its
    /// memory grows as needed), so the value is only checked.
    pub alloc_size: Option<u64>,
    /// `--cpuclock-test`: test the clock across CPUs and exit.
    pub cpuclock_test: bool,
    /// `--idle-prof=system|percpu|calibrate`.
    pub idle_prof: Option<String>,
    /// `--inflate-log=FILE`: print a compressed log's text and exit.
    pub inflate_log: Option<String>,
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
}

impl CliConfig {
    /// The formats asked for, with fio's default (normal) when none was.
    pub fn output_formats(&self) -> Vec<OutputFormat> {
        if self.formats.is_empty() {
            vec![OutputFormat::Normal]
        } else {
            self.formats.clone()
        }
    }

    /// True when the normal format is among those asked for (headers and progress are
    /// then printed; with only json or terse, stdout carries nothing else).
    pub fn wants_normal(&self) -> bool {
        self.formats.is_empty() || self.formats.contains(&OutputFormat::Normal)
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

/// Flags of iobench itself, with whether they take a value.
const OWN_FLAGS: &[(&str, FlagArg)] = &[
    ("output", FlagArg::Required),
    ("output-format", FlagArg::Required),
    ("minimal", FlagArg::None),
    ("terse-version", FlagArg::Required),
    ("append-terse", FlagArg::None),
    ("eta", FlagArg::Required),
    ("eta-newline", FlagArg::Required),
    ("eta-interval", FlagArg::Required),
    ("status-interval", FlagArg::Required),
    ("section", FlagArg::Required),
    ("parse-only", FlagArg::None),
    ("showcmd", FlagArg::None),
    ("cmdhelp", FlagArg::Optional),
    ("enghelp", FlagArg::Optional),
    ("crctest", FlagArg::Optional),
    ("version", FlagArg::None),
    ("readonly", FlagArg::None),
    ("max-jobs", FlagArg::Required),
    ("warnings-fatal", FlagArg::None),
    ("help", FlagArg::None),
    ("env", FlagArg::None),
    ("live", FlagArg::Required),
    ("metrics", FlagArg::Required),
    ("debug", FlagArg::Required),
    ("merge-blktrace-only", FlagArg::None),
    ("bandwidth-log", FlagArg::None),
    ("alloc-size", FlagArg::Required),
    ("cpuclock-test", FlagArg::None),
    ("idle-prof", FlagArg::Required),
    ("inflate-log", FlagArg::Required),
    ("trigger-file", FlagArg::Required),
    ("trigger-timeout", FlagArg::Required),
    ("trigger", FlagArg::Required),
    ("trigger-remote", FlagArg::Required),
    ("aux-path", FlagArg::Required),
    ("daemonize", FlagArg::Required),
    ("profile", FlagArg::Required),
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
    let us = options::value::parse_time_us(v, TimeUnit::Sec).map_err(|e| bad(flag, v, &e, FORM))?;
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

fn apply_own_flag(cfg: &mut CliConfig, flag: &str, v: Option<&str>) -> Result<(), ParseError> {
    let val = v.unwrap_or("");
    match flag {
        "output" => cfg.output = Some(val.to_string()),
        "output-format" => {
            // As in fio, each --output-format replaces the formats given before it.
            cfg.formats.clear();
            for f in val.split(',') {
                cfg.formats.push(match f {
                    "normal" => OutputFormat::Normal,
                    "json" => OutputFormat::Json,
                    "json+" => OutputFormat::JsonPlus,
                    "terse" | "minimal" | "csv" => OutputFormat::Terse,
                    _ => {
                        return Err(bad(
                            flag,
                            f,
                            "unknown format",
                            "normal, json, json+ or terse",
                        ))
                    }
                })
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
        "parse-only" => cfg.parse_only = true,
        "showcmd" => cfg.showcmd = true,
        "cmdhelp" => cfg.cmdhelp = Some(val.to_string()),
        "enghelp" => cfg.enghelp = Some(val.to_string()),
        "crctest" => cfg.crctest = Some(val.to_string()),
        "version" => cfg.version = true,
        "readonly" => cfg.readonly = true,
        "max-jobs" => cfg.max_jobs = Some(parse_u64(flag, val)?),
        "warnings-fatal" => cfg.warnings_fatal = true,
        "help" => cfg.help = true,
        "env" => cfg.env = true,
        "live" => cfg.live = Some(val.to_string()),
        "metrics" => cfg.metrics = Some(val.to_string()),
        // Applied before the other arguments (see `parse_args`), so parse lines show.
        "debug" => cfg.debug = Some(val.to_string()),
        "merge-blktrace-only" => cfg.merge_blktrace_only = true,
        "bandwidth-log" => cfg.bandwidth_log = true,
        "alloc-size" => cfg.alloc_size = Some(parse_u64(flag, val)?),
        "cpuclock-test" => cfg.cpuclock_test = true,
        "idle-prof" => cfg.idle_prof = Some(val.to_string()),
        "inflate-log" => cfg.inflate_log = Some(val.to_string()),
        "trigger-file" => cfg.trigger_file = Some(val.to_string()),
        "trigger-timeout" => cfg.trigger_timeout = Some(parse_ms(flag, val, 1)?),
        "trigger" => cfg.trigger = Some(val.to_string()),
        "trigger-remote" => cfg.trigger_remote = Some(val.to_string()),
        "aux-path" => {
            crate::verify::state::set_aux_path(val);
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
    if let Some((f, kind)) = OWN_FLAGS.iter().find(|(f, _)| *f == name) {
        return Resolved::Flag(f, *kind);
    }
    if options::lookup(name).is_some() {
        return Resolved::Option(name.to_string());
    }
    if name.is_empty() {
        return Resolved::Unknown;
    }
    let flags = OWN_FLAGS.iter().filter(|(f, _)| f.starts_with(name));
    let opts = options::OPTIONS.iter().flat_map(|o| {
        std::iter::once(o.name)
            .chain(o.aliases.iter().copied())
            .filter(|n| n.starts_with(name))
    });
    let mut found: Vec<Resolved> = flags
        .map(|(f, k)| Resolved::Flag(f, *k))
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

/// The usage `--help` prints.
pub fn usage() -> String {
    let mut out = String::from(
        "usage: iobench [options] [job options] [job files]\n\
         \x20      iobench peak [options] FILE   (peak IOPS, t/io_uring's options)\n\
         \x20      iobench quick [options] [DIR] (KDiskMark's standard test; quick --help)\n\
         \x20      iobench --server[=ip:ADDR,PORT|,PORT|sock:PATH] [--daemonize=PIDFILE]\n\
         \x20      iobench --client=HOST[,PORT] [job files] [--client=HOST …] (fio's protocol)\n\n\
         Job options are fio's (see --cmdhelp), as --opt=value, --opt value or -opt=value;\n\
         --name=NAME starts a job, and options before the first --name apply to every job.\n\n\
         iobench's own options:\n",
    );
    for (flag, kind) in OWN_FLAGS {
        let arg = match kind {
            FlagArg::None => "",
            FlagArg::Required => "=VALUE",
            FlagArg::Optional => "[=VALUE]",
        };
        out.push_str(&format!("  --{flag}{arg}\n"));
    }
    out.push_str(
        "\nUnder mpirun (built with the `mpi` feature; one report from rank 0):\n\
         \x20 --rotate-ranks             read jobs read the files another rank wrote\n\
         \x20 --sync-start=barrier|clock start each phase at the barrier or an agreed time\n",
    );
    out
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
    // `--debug` takes effect before any option is read, as in fio.
    pre_debug(args, &mut inv.config);
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
                apply_own_flag(&mut inv.config, flag, value.as_deref())?;
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
                if !options::value::is_flag(def) {
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
            allow_not_yet: inv.config.showcmd,
            includes: includes.clone(),
        };
        let parsed = match text {
            Some(t) => jobfile::parse_text(t, path, &mut globals, &opts)?,
            None => jobfile::parse_path(path, &mut globals, &opts)?,
        };
        inv.jobs.extend(parsed.jobs);
        inv.showcmd.push(parsed.showcmd);
    }
    if let Some(p) = inv.config.profile.filter(|_| inv.config.cmdhelp.is_none()) {
        add_profile_jobs(p, &profile_opts, &defaults, &mut inv.jobs)?;
    }
    if inv.config.readonly {
        check_readonly(&inv.jobs)?;
    }
    if !inv.config.showcmd {
        check_wait_for(&inv.jobs)?;
    }
    Ok(inv)
}

/// Finds `--debug=CATS` (or `--debug CATS`) among the arguments and turns the categories
/// on, printing fio's "set debug option" lines.
fn pre_debug<S: AsRef<str>>(args: &[S], cfg: &mut CliConfig) {
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
        match crate::debug::parse(&spec) {
            crate::debug::Request::List => cfg.debug = Some("?".into()),
            crate::debug::Request::Enable(lines) => {
                for l in lines {
                    println!("{l}");
                }
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
        let rw = job.get("rw");
        let word = rw.map_or("read", |o| {
            options::value::choice_word(o.value.as_deref().unwrap_or("read"))
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
        let Some(opt) = job.get("wait_for") else {
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
