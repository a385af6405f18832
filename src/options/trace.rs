//! `--debug=parse`: the lines fio prints for each option as it is handled, named by fio's
//! own option types.

use crate::debug::{on, print, Cat};
use crate::defs::value;
use crate::defs::{Kind, OptDef};

/// fio's name for how an option's value is read, as `--debug=parse` shows it.
pub fn parse_type(def: &OptDef) -> &'static str {
    match def.kind {
        Kind::Str => "OPT_STR_STORE",
        Kind::Choice(_) | Kind::Special => "OPT_STR",
        Kind::Int { .. } | Kind::IntList { .. } => "OPT_INT",
        Kind::Size | Kind::SizeList | Kind::RangeList => "OPT_ULL",
        Kind::SizeOrPercent => "OPT_STR_VAL_ZONE",
        Kind::Time(_) => "OPT_STR_VAL_TIME",
        Kind::Bool => "OPT_BOOL",
        Kind::Float | Kind::FloatList => "OPT_FLOAT_LIST",
        Kind::Deprecated => "OPT_DEPRECATED",
    }
}

/// `--debug=parse`'s lines for one option as it is handled.
pub fn parse_option(def: &OptDef, value: Option<&str>) {
    if !on(Cat::Parse) {
        return;
    }
    let v = def.shown(value.unwrap_or(""));
    print(
        Cat::Parse,
        format_args!("handle_option={}, ptr={v}", def.name),
    );
    print(
        Cat::Parse,
        format_args!(
            "__handle_option={}, type={}, ptr={v}",
            def.name,
            parse_type(def)
        ),
    );
    if def.name == "steadystate" {
        steady_threshold(v);
    } else if matches!(def.kind, Kind::Size | Kind::SizeList | Kind::SizeOrPercent) {
        let kb = value::KbBase::Binary;
        if let Ok(n) = value::parse_size(v, kb) {
            print(Cat::Parse, format_args!("  ret=0, out={n}"));
        }
    } else if matches!(def.kind, Kind::Int { .. }) {
        if let Ok(n) = value::parse_int(v) {
            print(Cat::Parse, format_args!("  ret=0, out={n}"));
        }
    } else if let Kind::Time(unit) = def.kind {
        if let Ok(n) = value::parse_time_us(v, unit) {
            print(Cat::Parse, format_args!("  ret=0, out={n}"));
        }
    }
}

/// The line fio's `steadystate` callback prints once it has read the threshold: a
/// percentage or an IOPS limit as a C `%f`, a bandwidth in bytes or (fio 3.42) a latency
/// in nanoseconds as an integer. A value
/// fio refuses prints nothing (the option's error follows).
fn steady_threshold(v: &str) {
    let Ok(c) = crate::defs::steady::Criterion::parse(v, value::KbBase::Binary) else {
        return;
    };
    if c.pct {
        print(
            Cat::Parse,
            format_args!("set steady state threshold to {:.6}%", c.limit),
        );
    } else if c.measure == crate::defs::steady::Measure::Iops {
        print(
            Cat::Parse,
            format_args!("set steady state IOPS threshold to {:.6}", c.limit),
        );
    } else if c.measure == crate::defs::steady::Measure::Lat {
        print(
            Cat::Parse,
            format_args!(
                "set steady state latency threshold to {} nsec",
                c.limit as i64
            ),
        );
    } else {
        print(
            Cat::Parse,
            format_args!("set steady state BW threshold to {}", c.limit as i64),
        );
    }
}
