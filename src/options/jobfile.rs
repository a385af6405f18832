//! Job files: INI sections, `[global]` (each applying to the sections after it), comments,
//! `${VAR}` from the environment, and `include`.

use super::{make_opt, Origin, RawJob, RawOpt};
use crate::error::ParseError;
use std::sync::Arc;

/// Expands `${VAR}` from the environment; an unset variable expands to nothing, as in fio.
pub fn expand_env(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        match rest[start + 2..].find('}') {
            Some(end) => {
                let var = &rest[start + 2..start + 2 + end];
                out.push_str(&std::env::var(var).unwrap_or_default());
                rest = &rest[start + 2 + end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Parses job-file text. `globals` carries `[global]` options in force from before (earlier
/// files or the command line) and is updated as `[global]` sections are read.
pub fn parse_str(
    text: &str,
    path: &str,
    globals: &mut Vec<RawOpt>,
) -> Result<Vec<RawJob>, ParseError> {
    let file: Arc<str> = Arc::from(path);
    let mut jobs: Vec<RawJob> = Vec::new();
    let mut in_global = false;
    for (idx, raw_line) in text.lines().enumerate() {
        let origin = Origin::at(&file, idx + 1);
        let line = raw_line.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            let name = section
                .strip_suffix(']')
                .ok_or_else(|| ParseError::Syntax {
                    message: format!("section header '{line}' has no closing ']'"),
                    origin: origin.clone(),
                })?;
            in_global = name == "global";
            if !in_global {
                jobs.push(RawJob {
                    name: name.to_string(),
                    opts: globals.clone(),
                    origin,
                    globals: globals.len(),
                });
            }
            continue;
        }
        let (name, value) = match line.split_once('=') {
            Some((n, v)) => (n.trim(), Some(expand_env(v.trim()))),
            None => (line, None),
        };
        let opt = make_opt(name, value.as_deref(), &origin)?;
        if in_global {
            globals.push(opt);
        } else if let Some(job) = jobs.last_mut() {
            job.opts.push(opt);
        } else {
            return Err(ParseError::Syntax {
                message: format!("option '{name}' comes before any [section]"),
                origin,
            });
        }
    }
    Ok(jobs)
}

/// Reads and parses a job file from disk.
pub fn parse_file(path: &str, globals: &mut Vec<RawOpt>) -> Result<Vec<RawJob>, ParseError> {
    let text = std::fs::read_to_string(path).map_err(|source| ParseError::Io {
        path: path.to_string(),
        source,
    })?;
    parse_str(&text, path, globals)
}
