//! Which values an option accepts: the check every value passes (`make_opt`) before any
//! job is resolved, with the expected form named in the error. The syntax itself (sizes,
//! times, lists, patterns) is `defs::value`'s.

use crate::defs::value::{
    choice_word, number, parse_bool, parse_bssplit, parse_distribution, parse_flag,
    parse_float_list, parse_int, parse_range_list, parse_rw, parse_size, parse_size_list,
    parse_size_or_percent, parse_time_us, KbBase,
};
use crate::defs::{Kind, OptDef};

/// fio's "empty or boolean" options (`FIO_OPT_STR_SET`): given bare they mean 1, and on the
/// command line they never take the next argument as their value. Every other boolean needs
/// a value (`--direct=1`), as in fio.
const FLAG_OPTIONS: &[&str] = &[
    "bs_unaligned",
    "norandommap",
    "time_based",
    "verify_only",
    "exitall",
    "exitall_on_error",
    "stonewall",
    "new_group",
    "thread",
    "group_reporting",
    "zero_buffers",
    "refill_buffers",
    // engine options
    "dummy",
    "fixedbufs",
    "hipri",
    "listen",
    "no_completion_thread",
    "pingpong",
    "registerfiles",
    "sqthread_poll",
    "userspace_reap",
    "xnvme_iovec",
];

/// Text options that fio also takes bare, meaning "named after the job"
/// (`write_bw_log` alone logs to `JOBNAME_bw.log`).
const BARE_TEXT_OPTIONS: &[&str] = &[
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
];

/// True when `def` may be given without a value (`--time_based`, `stonewall`).
pub fn is_flag(def: &OptDef) -> bool {
    matches!(def.kind, Kind::Bool) && FLAG_OPTIONS.contains(&def.name)
        || matches!(def.kind, Kind::Deprecated)
}

/// The expected form of an option, for error messages.
pub fn expected_form(def: &OptDef) -> &'static str {
    if let Some(form) = special_form(def.name) {
        return form;
    }
    match def.kind {
        Kind::Str => "text",
        Kind::Choice(_) => "one of the listed words",
        Kind::Int { .. } => "a whole number such as 8, 0x10 or 1k",
        Kind::IntList { .. } => "whole numbers per direction, such as 100 or 100,50",
        Kind::Size => "a size such as 4k, 1m or 2g",
        Kind::SizeOrPercent => "a size such as 4k or 1g, or a whole percentage such as 20%",
        Kind::SizeList => "sizes per direction (read,write,trim), such as 4k or 4k,8k",
        Kind::RangeList => "ranges per direction (read,write,trim), such as 4k-512k",
        Kind::Time(_) => "a time such as 500ms, 10s or 2m",
        Kind::Bool if FLAG_OPTIONS.contains(&def.name) => "nothing, 0 or 1",
        Kind::Bool => "0 or 1",
        Kind::Float => "a number",
        Kind::FloatList => "numbers separated by ':'",
        Kind::Special => "the option's own syntax (see --cmdhelp)",
        Kind::Deprecated => "anything",
    }
}

/// Options whose values have a syntax of their own, checked here by name.
fn special_form(name: &str) -> Option<&'static str> {
    Some(match name {
        "rw" => "a pattern with an optional modifier, such as randread, randread:8 or write:-8k",
        "bssplit" => "size/percent pairs split by ':', per direction, such as 4k/10:64k/90",
        "random_distribution" => {
            "random, zipf:THETA, pareto:H, normal:DEV[:CENTER], zoned:PCT/PCT:… or zoned_abs:PCT/SIZE:…"
        }
        "percentile_list" => "up to 20 percentiles in 0..100 separated by ':'",
        _ => return None,
    })
}

/// Checks that `value` reads as `def`'s kind. The meaning (units under kb_base, percentages
/// of a file) is applied later, when the job is resolved; sizes are checked here under
/// `kb_base=1024`, which accepts exactly the same spellings as 1000.
pub fn validate(def: &OptDef, value: Option<&str>) -> Result<(), String> {
    let v = match value {
        None if is_flag(def) || BARE_TEXT_OPTIONS.contains(&def.name) => return Ok(()),
        None => return Err("a value is required".to_string()),
        Some(v) => v,
    };
    let kb = KbBase::Binary;
    match def.name {
        "rw" => return parse_rw(v, kb).map(|_| ()),
        "bssplit" => return parse_bssplit(v, kb).map(|_| ()),
        "random_distribution" => return parse_distribution(v, kb).map(|_| ()),
        "percentile_list" => return crate::defs::percentiles::PercentileList::parse(v).map(|_| ()),
        "steadystate" => return crate::defs::steady::Criterion::parse(v, kb).map(|_| ()),
        "ioengine" => return check_engine(v, def),
        // fio reads `filesize` as one size, or a range to pick each file's size from.
        "filesize" if !is_range(v) => return parse_size(v, kb).map(|_| ()),
        _ => {}
    }
    match def.kind {
        Kind::Deprecated => Ok(()),
        Kind::Str | Kind::Special => {
            if v.trim().is_empty() {
                Err("a value is required".to_string())
            } else {
                Ok(())
            }
        }
        Kind::Choice(choices) => check_choice(v, choices),
        Kind::Int { min, max } => check_int(v, min, max),
        Kind::IntList { min, max } => v
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .try_for_each(|p| check_int(p, min, max)),
        Kind::Size => parse_size(v, kb).map(|_| ()),
        Kind::SizeOrPercent => parse_size_or_percent(v, kb).map(|_| ()),
        Kind::SizeList => parse_size_list(v, kb).map(|_| ()),
        Kind::RangeList => parse_range_list(v, kb).map(|_| ()),
        // Per-direction lists (max_latency=10ms,20ms) and ranges (startdelay=1-5) pass here;
        // the option's resolver decides which of those it allows.
        Kind::Time(unit) => v
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .flat_map(|p| p.split('-'))
            .try_for_each(|p| parse_time_us(p, unit).map(|_| ())),
        Kind::Bool if FLAG_OPTIONS.contains(&def.name) => parse_flag(v).map(|_| ()),
        Kind::Bool => parse_bool(v).map(|_| ()),
        Kind::Float => number::parse_float(v).map(|_| ()),
        Kind::FloatList => parse_float_list(v).map(|_| ()),
    }
}

/// Checks an `ioengine` value: one of fio's engines (whether iobench runs it yet is
/// decided later, see `OptDef::value_supported`), or `external:PATH`.
fn check_engine(v: &str, def: &OptDef) -> Result<(), String> {
    let word = choice_word(v);
    let known = crate::options::table::engine(word).is_some()
        || crate::options::table::OTHER_ENGINE_NAMES.contains(&word)
        || word == "external";
    if known {
        return Ok(());
    }
    match def.kind {
        Kind::Choice(choices) => check_choice(v, choices),
        _ => Err(format!("'{word}' is not an I/O engine")),
    }
}

/// True when `v` is written as a range (`1k-4k`, `1k:4k`): a `-` or `:` after the first
/// character.
fn is_range(v: &str) -> bool {
    v.trim()
        .get(1..)
        .is_some_and(|rest| rest.contains(['-', ':']))
}

/// True when `v` is a valid spelling that iobench does not implement yet for `def`, so it is
/// refused as "not supported yet" rather than accepted and ignored (none at present).
pub fn unsupported_form(def: &OptDef, v: &str) -> bool {
    let _ = (def, v);
    false
}

/// Matches each comma-separated word (`sync_file_range=wait_before,write`), without any
/// `:` suffix, against the choices, case-sensitively as fio does (fio refuses `rw=READ`).
pub fn check_choice(v: &str, choices: &[(&str, &str)]) -> Result<(), String> {
    v.split(',').try_for_each(|part| {
        let word = choice_word(part);
        if choices.iter().any(|(c, _)| *c == word) {
            Ok(())
        } else {
            let names: Vec<&str> = choices.iter().map(|(c, _)| *c).collect();
            Err(format!("'{word}' is not one of: {}", names.join(", ")))
        }
    })
}

/// Checks a whole number (size suffixes allowed, as in fio) against its bounds. An option
/// the table leaves unbounded is one fio keeps in a 32-bit int: fio 3.33 silently truncates
/// a larger value (`numjobs=4294967297` runs one job), iobench refuses it.
fn check_int(v: &str, min: i64, max: i64) -> Result<(), String> {
    let n = parse_int(v)?;
    let max = if max == i64::MAX {
        i64::from(u32::MAX)
    } else {
        max
    };
    let min = if min == i64::MIN {
        i64::from(i32::MIN)
    } else {
        min
    };
    if n < min || n > max {
        Err(format!("{n} is outside {min}..={max}"))
    } else {
        Ok(())
    }
}
