//! Value syntax as fio reads it: numbers, sizes with unit suffixes under `kb_base`, times
//! with units, booleans, percentages, ranges, per-direction lists, `bssplit`, `rw` modifiers
//! and random distributions.
//!
//! Every function returns a plain `String` reason on error; callers wrap it with the option
//! name, value and origin (see `error::ParseError::BadValue`).
//!
//! Where fio silently reads a prefix of nonsense (`1.5k` as 1, `4x` as 4, `10sec` as ten
//! microseconds), iobench refuses the value with a reason instead: a benchmark that quietly
//! measures something else than asked is worse than one that stops before any I/O.

mod lists;
pub(crate) mod number;
mod pattern;

pub use lists::{
    parse_bssplit, parse_float_list, parse_range_list, parse_size_list, per_dir, spread, BsSplit,
    PerDir,
};
pub use number::{
    parse_bool, parse_flag, parse_float, parse_int, parse_int_kb, parse_percent, parse_signed_size,
    parse_size, parse_size_or_percent, parse_time_us, KbBase, SizeOrPercent,
};
pub use pattern::{parse_distribution, parse_rw, Distribution, RwSpec, SeqModifier, ZoneSplit};

/// The word of a choice value: the text before the first `,` or `:`, trimmed.
pub fn choice_word(v: &str) -> &str {
    let end = v.find([',', ':']).unwrap_or(v.len());
    v[..end].trim()
}

/// A size that may be a share of the file: `size=20%`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeSpec {
    Bytes(u64),
    Percent(f64),
}
