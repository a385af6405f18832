//! The RAW stage: options exactly as the user spelled them, checked one by one against the
//! option table, with where each came from so errors can point at `file:line`.

pub mod check;
pub mod help;
pub mod jobfile;
pub mod keywords;
pub mod profile;
pub mod showcmd;
pub mod table;
mod trace;

pub use table::{lookup, nearest, OPTIONS};

use crate::defs::{OptDef, Support};

use crate::error::Origin;

/// One option setting as given: `name[=value]`, already matched to its table entry and with
/// its value validated for the entry's kind.
#[derive(Debug, Clone)]
pub struct RawOpt {
    pub def: &'static OptDef,
    /// The value text after `${VAR}` expansion; `None` for a bare flag (`--time_based`).
    pub value: Option<String>,
    pub origin: Origin,
}

/// One job section (or command-line `--name`), with the `[global]` options in force where it
/// was defined already folded in front of its own.
#[derive(Debug, Clone, Default)]
pub struct RawJob {
    pub name: String,
    /// Options in the order they apply: inherited globals first, then the section's own.
    pub opts: Vec<RawOpt>,
    pub origin: Origin,
    /// How many of `opts` (at the front) were inherited from `[global]` or from options
    /// before the first `--name`; JSON reports them as `global options`.
    pub globals: usize,
    /// The first job of a second or later job file: fio separates job files by a
    /// stonewall, so this job waits for all before it as if it said `stonewall`.
    pub file_stonewall: bool,
    /// A job of `--profile=act`: the number of hourly slices of ACT's latency table.
    pub act_slices: Option<u64>,
}

impl RawJob {
    /// Job `name` with `options` (name, value pairs, as on a command line), for tests
    /// and tools that build a job or an engine without a job file.
    pub fn from_pairs(name: &str, options: &[(&str, &str)]) -> Result<RawJob, String> {
        let mut raw = RawJob {
            name: name.into(),
            ..Default::default()
        };
        for (n, v) in options {
            raw.opts.push(RawOpt {
                def: lookup(n).ok_or_else(|| format!("unknown option {n}"))?,
                value: Some(v.to_string()),
                origin: Origin::command_line(),
            });
        }
        Ok(raw)
    }

    /// The last setting of option `name`, which is the one that wins. `name` may be the
    /// option's canonical name or any of its aliases.
    pub fn get(&self, name: &str) -> Option<&RawOpt> {
        let canon = lookup(name).map_or(name, |d| d.name);
        self.opts.iter().rev().find(|o| o.def.name == canon)
    }

    /// The value text of option `name`, with bare flags read as "1".
    pub fn value(&self, name: &str) -> Option<&str> {
        self.get(name).map(|o| o.value.as_deref().unwrap_or("1"))
    }
}

use crate::error::ParseError;

/// Matches `name` to its table entry and checks `value` against its kind: the one gate every
/// option passes through, from the command line or a job file.
pub fn make_opt(name: &str, value: Option<&str>, origin: &Origin) -> Result<RawOpt, ParseError> {
    make_opt_with(name, value, origin, false)
}

/// [`make_opt`], optionally letting through options (and values) iobench does not implement
/// yet: `--showcmd` only translates a job file, it never runs it.
pub fn make_opt_with(
    name: &str,
    value: Option<&str>,
    origin: &Origin,
    allow_not_yet: bool,
) -> Result<RawOpt, ParseError> {
    let def = lookup(name).ok_or_else(|| ParseError::UnknownOption {
        name: name.to_string(),
        nearest: nearest(name),
        origin: origin.clone(),
    })?;
    if def.support == Support::NotYet && !allow_not_yet {
        return Err(ParseError::NotSupported {
            name: def.name.to_string(),
            origin: origin.clone(),
        });
    }
    check::validate(def, value).map_err(|reason| ParseError::BadValue {
        option: name.to_string(),
        value: value.unwrap_or("").to_string(),
        reason,
        expected: check::expected_form(def),
        origin: origin.clone(),
    })?;
    trace::parse_option(def, value);
    let unsupported = |v: &&str| !def.value_supported(v) || check::unsupported_form(def, v);
    if let Some(v) = value.filter(unsupported).filter(|_| !allow_not_yet) {
        let word = crate::defs::value::choice_word(v);
        if let Some(why) = crate::engine::registry::spec(word)
            .and_then(|s| s.refused)
            .filter(|_| def.name == "ioengine")
        {
            return Err(ParseError::EngineRefused {
                engine: v.to_string(),
                why,
                origin: origin.clone(),
            });
        }
        return Err(ParseError::NotSupported {
            name: format!("{}={v}", def.name),
            origin: origin.clone(),
        });
    }
    Ok(RawOpt {
        def,
        value: value.map(str::to_string),
        origin: origin.clone(),
    })
}
