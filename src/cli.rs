//! fio's command line: its own flags (`--output`, `--eta`, …) and job options given as
//! `--opt=val`, `--opt val` or `-opt=val`, where `--name` starts a new job and options before
//! the first `--name` are defaults for the jobs after them. Positional arguments are job files.

use crate::error::ParseError;
use crate::options::{self, jobfile, Kind, Origin, RawJob, RawOpt};

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
    pub readonly: bool,
    pub eta: Option<String>,
    pub eta_newline: Option<u64>,
    pub eta_interval: Option<u64>,
    pub status_interval: Option<u64>,
    pub sections: Vec<String>,
    pub max_jobs: Option<u64>,
    pub warnings_fatal: bool,
    pub terse_version: Option<u32>,
    pub append_terse: bool,
}

/// The whole parsed invocation.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    pub config: CliConfig,
    pub jobs: Vec<RawJob>,
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
    ("version", FlagArg::None),
    ("readonly", FlagArg::None),
    ("max-jobs", FlagArg::Required),
    ("warnings-fatal", FlagArg::None),
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
        "eta" => cfg.eta = Some(val.to_string()),
        "eta-newline" => cfg.eta_newline = Some(parse_u64(flag, val)?),
        "eta-interval" => cfg.eta_interval = Some(parse_u64(flag, val)?),
        "status-interval" => cfg.status_interval = Some(parse_u64(flag, val)?),
        "section" => cfg.sections.push(val.to_string()),
        "parse-only" => cfg.parse_only = true,
        "showcmd" => cfg.showcmd = true,
        "cmdhelp" => cfg.cmdhelp = Some(val.to_string()),
        "enghelp" => cfg.enghelp = Some(val.to_string()),
        "version" => cfg.version = true,
        "readonly" => cfg.readonly = true,
        "max-jobs" => cfg.max_jobs = Some(parse_u64(flag, val)?),
        "warnings-fatal" => cfg.warnings_fatal = true,
        _ => unreachable!("flag listed in OWN_FLAGS"),
    }
    Ok(())
}

/// Parses the arguments after the program name.
pub fn parse_args<S: AsRef<str>>(args: &[S]) -> Result<Invocation, ParseError> {
    let mut inv = Invocation::default();
    let mut defaults: Vec<RawOpt> = Vec::new();
    let mut job_files: Vec<String> = Vec::new();
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
        let (name, mut value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        if let Some((_, kind)) = OWN_FLAGS.iter().find(|(f, _)| *f == name) {
            if value.is_none() && *kind == FlagArg::Required {
                value = args.get(i).map(|s| s.as_ref().to_string());
                i += 1;
                if value.is_none() {
                    return Err(bad(name, "", "a value is required", "a value"));
                }
            }
            apply_own_flag(&mut inv.config, name, value.as_deref())?;
            continue;
        }
        // A job option: take the next argument as its value when it needs one.
        if value.is_none() {
            if let Some(def) = options::lookup(name) {
                let needs_value = !matches!(def.kind, Kind::Bool | Kind::Deprecated);
                if needs_value {
                    if let Some(next) = args.get(i) {
                        value = Some(next.as_ref().to_string());
                        i += 1;
                    }
                }
            }
        }
        let opt = options::make_opt(name, value.as_deref(), &origin)?;
        if opt.def.name == "name" {
            inv.jobs.push(RawJob {
                name: opt.value.clone().unwrap_or_default(),
                opts: defaults.clone(),
                origin: origin.clone(),
                globals: defaults.len(),
            });
        } else if let Some(job) = inv.jobs.last_mut() {
            job.opts.push(opt);
        } else {
            defaults.push(opt);
        }
    }
    for path in &job_files {
        let mut globals = defaults.clone();
        inv.jobs.extend(jobfile::parse_file(path, &mut globals)?);
    }
    Ok(inv)
}
