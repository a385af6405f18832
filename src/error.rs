//! Error types, one per stage, so that each message names what the user got wrong
//! (option, value, expected form, file and line) before any I/O starts.

use std::fmt;
use std::sync::Arc;
use thiserror::Error;

/// Where an option or section came from: a job file line, or the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The job file's path as given; `None` for the command line.
    pub file: Option<Arc<str>>,
    /// 1-based line number in `file` (0 when unknown).
    pub line: usize,
}

impl Origin {
    pub fn command_line() -> Self {
        Origin::default()
    }
    pub fn at(file: &Arc<str>, line: usize) -> Self {
        Origin {
            file: Some(file.clone()),
            line,
        }
    }
}

/// Renders as a `file:line: ` prefix, or nothing for the command line.
impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{}:{}: ", file, self.line),
            None => Ok(()),
        }
    }
}

/// An error found while reading the command line or a job file.
#[derive(Debug, Error)]
pub enum ParseError {
    /// An option name that the table does not know.
    #[error("{origin}unknown option '{name}'{}", suggestion(.nearest))]
    UnknownOption {
        name: String,
        nearest: Option<&'static str>,
        origin: Origin,
    },
    /// A value that does not read as the option's kind.
    #[error("{origin}bad value '{value}' for option '{option}': {reason} (expected {expected})")]
    BadValue {
        option: String,
        value: String,
        reason: String,
        expected: &'static str,
        origin: Origin,
    },
    /// An option that is in fio's table but not implemented by iobench yet.
    #[error("{origin}option '{name}' is not supported yet")]
    NotSupported { name: String, origin: Origin },
    /// An option of fio's that iobench cannot run here, with the reason.
    #[error("{origin}option '{name}' is not supported yet: {why}")]
    NotSupportedBecause {
        name: String,
        why: &'static str,
        origin: Origin,
    },
    /// An option (or alias, or value) newer than the fio release the job is read as.
    #[error(
        "{origin}option '{name}' was added in fio {since}; it is not in fio {dialect} \
         (--fio-compat={dialect})"
    )]
    NewerThanDialect {
        name: String,
        /// The release that added it, as `3.42` (text, so this base-tier type does not
        /// reach up to defs' FioRelease).
        since: String,
        /// The release the job is read as.
        dialect: String,
        origin: Origin,
    },
    /// An engine fio removed in a release at or before the one the job is read as.
    #[error(
        "{origin}option 'ioengine={engine}': fio {removed} removed this engine, so it is not \
         in fio {dialect} (it was last in fio {last}: --fio-compat={last})"
    )]
    RemovedInDialect {
        engine: String,
        /// The release that removed it, as `3.34`.
        removed: String,
        /// The last release that had it.
        last: String,
        /// The release the job is read as.
        dialect: String,
        origin: Origin,
    },
    /// An engine fio has that iobench refuses, with the engine's own reason.
    #[error("{origin}option 'ioengine={engine}' is not supported yet: {why}")]
    EngineRefused {
        engine: String,
        why: &'static str,
        origin: Origin,
    },
    /// A structural problem in a job file (missing section, bad include, …).
    #[error("{origin}{message}")]
    Syntax { message: String, origin: Origin },
    /// A file that could not be read (job file, include).
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

fn suggestion(nearest: &Option<&'static str>) -> String {
    match nearest {
        Some(n) => format!(" (did you mean '{n}'?)"),
        None => String::new(),
    }
}

/// An error found while turning raw options into a runnable job.
#[derive(Debug, Error)]
pub enum JobError {
    #[error("job '{job}': {message}")]
    Invalid { job: String, message: String },
    #[error(transparent)]
    Parse(#[from] ParseError),
}

/// An error during the run itself.
#[derive(Debug, Error)]
pub enum RunError {
    #[error("job '{job}': {message}")]
    Setup { job: String, message: String },
    #[error("job '{job}': {source}")]
    Io {
        job: String,
        #[source]
        source: std::io::Error,
    },
}

impl RunError {
    /// The errno fio would report for it (`error` in the JSON): the system's, or EINVAL
    /// for a set-up the job's options made impossible.
    pub fn errno(&self) -> i32 {
        match self {
            RunError::Io { source, .. } => os_errno(source).unwrap_or(libc::EIO),
            RunError::Setup { .. } => libc::EINVAL,
        }
    }
}

/// An I/O error with the path it concerns: the message names the file, and the errno
/// stays readable for the report (see [`os_errno`]).
#[derive(Debug, Error)]
#[error("{path}: {source}")]
pub struct PathError {
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

/// Wraps `e` with the path it concerns, keeping its kind.
pub fn with_path(path: &str, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(
        e.kind(),
        PathError {
            path: path.to_string(),
            source: e,
        },
    )
}

/// The errno of `e`, looking inside [`PathError`]s (one may wrap another).
pub fn os_errno(e: &std::io::Error) -> Option<i32> {
    e.raw_os_error()
        .or_else(|| os_errno(&e.get_ref()?.downcast_ref::<PathError>()?.source))
}
