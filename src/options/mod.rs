//! The RAW stage: options exactly as the user spelled them, checked one by one against the
//! option table, with where each came from so errors can point at `file:line`.

pub mod check;
pub mod help;
pub mod jobfile;
pub mod keywords;
pub mod profile;
pub mod redact;
pub mod showcmd;
pub mod table;
mod trace;

pub use table::{lookup, nearest, OPTIONS};

use crate::defs::raw::{RawJob, RawOpt};
use crate::defs::reader::Reader;
use crate::defs::{OptDef, Support};
use crate::options::table::DIRECT;

use crate::error::Origin;

/// Engines configured from name, value pairs: the catalog is what knows the defaults.
impl crate::engine::EngineConfig {
    /// Engine `name` with `options` (name, value pairs, as a job file would set them),
    /// for tests and tools that drive an engine without a whole job.
    pub fn from_options(name: &str, options: &[(&str, &str)]) -> Result<Self, String> {
        let spec = crate::engine::registry::find(name)?;
        let raw = crate::defs::raw::RawJob::from_pairs(name, options)?;
        let r = Reader::new(&raw);
        let facts = crate::engine::spec::JobFacts {
            direct: r.bool(&DIRECT).map_err(|e| e.to_string())?,
            madvise: None,
            iodepth: 1,
            runtime_us: 0,
            rwf_atomic: false,
        };
        Self::new(spec, &r, &facts).map_err(|e| e.to_string())
    }
}

/// Raw jobs built from name, value pairs, checked against the table.
impl RawJob {
    /// Job `name` with `options` (name, value pairs, as on a command line), for tests
    /// and tools that build a job or an engine without a job file.
    pub fn from_pairs(name: &str, options: &[(&str, &str)]) -> Result<RawJob, String> {
        let mut raw = RawJob {
            name: name.into(),
            ..Default::default()
        };
        for (n, v) in options {
            let def = lookup(n).ok_or_else(|| format!("unknown option {n}"))?;
            raw.opts.push(RawOpt {
                def,
                spelled: RawOpt::spelling(def, n),
                value: Some(v.to_string()),
                origin: Origin::command_line(),
            });
        }
        Ok(raw)
    }
}

use crate::error::ParseError;

/// Matches `name` to its table entry and checks `value` against its kind: the one gate every
/// option passes through, from the command line or a job file.
pub fn make_opt(name: &str, value: Option<&str>, origin: &Origin) -> Result<RawOpt, ParseError> {
    make_opt_with(name, value, origin, false)
}

/// The dialect check: option `name` (as spelled, its name or an alias) with `value`, in a job
/// read as fio `dialect` (`--fio-compat`), is refused by name when fio added the option, the
/// alias or the value word after that release, and `ioengine=` an engine that fio removed
/// at or before it (`engine::refused::REMOVED`). `make_opt` calls it once the dialect is known.
pub fn check_dialect(
    name: &str,
    value: Option<&str>,
    dialect: crate::defs::FioRelease,
    origin: &Origin,
) -> Result<(), ParseError> {
    let Some(def) = lookup(name) else {
        return Ok(());
    };
    if let Some((engine, removed)) = removed_engine(def, value) {
        if removed > dialect {
            // The dialect has it: refused as iobench refuses it in any dialect.
            refuse_unsupported(def, value, origin)?;
        } else {
            let last = crate::defs::FioRelease::all()
                .filter(|r| *r < removed)
                .last()
                .unwrap_or(crate::defs::FioRelease::OLDEST);
            return Err(ParseError::RemovedInDialect {
                engine: engine.to_string(),
                removed: removed.to_string(),
                last: last.to_string(),
                dialect: dialect.to_string(),
                origin: origin.clone(),
            });
        }
    }
    let since = def.added_in(name, value);
    if since <= dialect {
        return Ok(());
    }
    let shown = match value {
        Some(v) if def.added_in(name, None) <= dialect => format!("{name}={v}"),
        _ => name.to_string(),
    };
    Err(ParseError::NewerThanDialect {
        name: shown,
        since: since.to_string(),
        dialect: dialect.to_string(),
        origin: origin.clone(),
    })
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
        if let Some(why) = def.why_not {
            return Err(ParseError::NotSupportedBecause {
                name: def.name.to_string(),
                why,
                origin: origin.clone(),
            });
        }
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
    // An engine a later fio removed is refused once the dialect is known (check_dialect):
    // by the release that removed it, or as any refused engine in the older dialects.
    if !allow_not_yet && removed_engine(def, value).is_none() {
        refuse_unsupported(def, value, origin)?;
    }
    Ok(RawOpt {
        def,
        spelled: RawOpt::spelling(def, name),
        value: value.map(str::to_string),
        origin: origin.clone(),
    })
}

/// `ioengine=ENGINE` naming an engine a fio release after 3.33 removed: (the engine, the
/// release that removed it).
fn removed_engine<'a>(
    def: &OptDef,
    value: Option<&'a str>,
) -> Option<(&'a str, crate::defs::FioRelease)> {
    if def.name != table::IOENGINE.name {
        return None;
    }
    let word = crate::defs::value::choice_word(value?);
    crate::engine::refused::removed_in(word).map(|r| (word, r))
}

/// Refuses a value iobench does not run: an engine it refuses (with the engine's reason)
/// or another value not supported yet.
fn refuse_unsupported(
    def: &OptDef,
    value: Option<&str>,
    origin: &Origin,
) -> Result<(), ParseError> {
    let unsupported = |v: &&str| !def.value_supported(v) || check::unsupported_form(def, v);
    if let Some(v) = value.filter(unsupported) {
        let word = crate::defs::value::choice_word(v);
        if let Some(why) = crate::engine::registry::spec(word)
            .and_then(|s| s.refused)
            .filter(|_| def.name == table::IOENGINE.name)
        {
            return Err(ParseError::EngineRefused {
                engine: v.to_string(),
                why,
                origin: origin.clone(),
            });
        }
        if let Some(why) = def.why_not {
            return Err(ParseError::NotSupportedBecause {
                name: format!("{}={v}", def.name),
                why,
                origin: origin.clone(),
            });
        }
        return Err(ParseError::NotSupported {
            name: format!("{}={v}", def.name),
            origin: origin.clone(),
        });
    }
    Ok(())
}
