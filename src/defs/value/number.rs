//! Single numbers: whole numbers, sizes with unit suffixes, percentages, times, booleans
//! and floats.

use crate::defs::TimeUnit;

/// What a plain `k` means: 1024 (fio's default, `kb_base=1024`) or 1000.
///
/// fio's rule, checked against fio 3.33: every suffix follows `kb_base` (`k`, `kb`, `Ki`,
/// `K`), except the ones spelled with `iB` (`KiB`, `MiB`, …), which take the *other* base.
/// So under the default `kb_base=1024`, `1KiB` is 1000 and `1Ki` is 1024; under
/// `kb_base=1000`, `1KiB` is 1024 and `1Ki` is 1000.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KbBase {
    Binary,
    Decimal,
}

impl KbBase {
    /// Reads a `kb_base` value.
    pub fn parse(s: &str) -> Result<KbBase, String> {
        match parse_int(s)? {
            1024 => Ok(KbBase::Binary),
            1000 => Ok(KbBase::Decimal),
            n => Err(format!("kb_base must be 1024 or 1000, not {n}")),
        }
    }

    fn unit(self) -> u64 {
        match self {
            KbBase::Binary => 1024,
            KbBase::Decimal => 1000,
        }
    }

    fn other(self) -> KbBase {
        match self {
            KbBase::Binary => KbBase::Decimal,
            KbBase::Decimal => KbBase::Binary,
        }
    }
}

/// A size that may instead be a share of the file (`size=20%`) or a count of zones
/// (`size=10z`, for zoned block devices).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeOrPercent {
    Bytes(u64),
    /// A whole percentage, 0..=100.
    Percent(f64),
    Zones(u64),
}

/// Splits an optional sign off the front.
fn split_sign(t: &str) -> (bool, &str) {
    if let Some(rest) = t.strip_prefix('-') {
        (true, rest)
    } else {
        (false, t.strip_prefix('+').unwrap_or(t))
    }
}

/// Splits `0x…` hex or leading decimal digits from the suffix after them, and reads them.
fn split_number<'a>(body: &'a str, whole: &str) -> Result<(u64, &'a str), String> {
    if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "'{whole}' is not a hex number (no unit may follow a hex number)"
            ));
        }
        let n = u64::from_str_radix(hex, 16).map_err(|_| format!("'{whole}' is too large"))?;
        return Ok((n, ""));
    }
    let end = body
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(body.len());
    if end == 0 {
        return Err(format!("'{whole}' does not start with a number"));
    }
    let (digits, suffix) = body.split_at(end);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("'{whole}' is too large"))?;
    if suffix.starts_with('.') {
        return Err(format!(
            "'{whole}' has a fraction; fio reads only whole numbers here (write 1536k, not 1.5m)"
        ));
    }
    Ok((n, suffix))
}

/// The multiplier of a size suffix (`k`, `KiB`, `mb`, `b`, or nothing), case-insensitive.
fn size_multiplier(suffix: &str, base: KbBase) -> Option<u64> {
    let lower = suffix.to_ascii_lowercase();
    let mut chars = lower.chars();
    let power = match chars.next() {
        None => return Some(1),
        Some('b') if lower.len() == 1 => return Some(1),
        Some('k') => 1,
        Some('m') => 2,
        Some('g') => 3,
        Some('t') => 4,
        Some('p') => 5,
        Some(_) => return None,
    };
    let unit = match chars.as_str() {
        "" | "b" | "i" => base.unit(),
        "ib" => base.other().unit(),
        _ => return None,
    };
    Some(unit.pow(power))
}

/// Reads a whole number that may carry a size suffix (`iodepth=1k` is 1024, as in fio):
/// decimal or `0x` hex, with an optional sign.
pub fn parse_int_kb(s: &str, base: KbBase) -> Result<i64, String> {
    let t = s.trim();
    let (neg, body) = split_sign(t);
    let (n, suffix) = split_number(body, s)?;
    let mult = size_multiplier(suffix, base).ok_or_else(|| unknown_unit(s, suffix))?;
    let v = n
        .checked_mul(mult)
        .and_then(|v| i64::try_from(v).ok())
        .ok_or_else(|| format!("'{s}' is too large"))?;
    Ok(if neg { -v } else { v })
}

/// Reads a whole number with `kb_base=1024` units.
pub fn parse_int(s: &str) -> Result<i64, String> {
    parse_int_kb(s, KbBase::Binary)
}

fn unknown_unit(s: &str, suffix: &str) -> String {
    format!("'{s}' has an unknown unit '{suffix}' (expected k, m, g, t, p, with optional i or B)")
}

/// Reads a byte count with an optional unit suffix.
pub fn parse_size(s: &str, base: KbBase) -> Result<u64, String> {
    let t = s.trim();
    let (neg, body) = split_sign(t);
    let (n, suffix) = split_number(body, s)?;
    if neg && n != 0 {
        return Err(format!("'{s}' is negative"));
    }
    let mult = size_multiplier(suffix, base).ok_or_else(|| unknown_unit(s, suffix))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Reads a size that may be negative (`rw=write:-8k`).
pub fn parse_signed_size(s: &str, base: KbBase) -> Result<i64, String> {
    parse_int_kb(s, base)
}

/// Reads a whole percentage `N%` with N in 0..=100.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let body = t
        .strip_suffix('%')
        .ok_or_else(|| format!("'{s}' is not a percentage (no '%')"))?;
    let body = body.trim_end();
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "'{s}' is not a whole percentage (fio reads only whole numbers before '%')"
        ));
    }
    let n: u64 = body.parse().map_err(|_| format!("'{s}' is too large"))?;
    if n > 100 {
        return Err(format!("{n}% is more than 100%"));
    }
    Ok(n as f64)
}

/// Reads a size, a whole percentage (`20%`) or a number of zones (`10z`).
pub fn parse_size_or_percent(s: &str, base: KbBase) -> Result<SizeOrPercent, String> {
    let t = s.trim();
    if t.ends_with('%') {
        return parse_percent(t).map(SizeOrPercent::Percent);
    }
    if let Some(zones) = t.strip_suffix('z') {
        if !zones.is_empty() && zones.bytes().all(|b| b.is_ascii_digit()) {
            return zones
                .parse()
                .map(SizeOrPercent::Zones)
                .map_err(|_| format!("'{s}' is too large"));
        }
        return Err(format!("'{s}' is not a number of zones such as 10z"));
    }
    parse_size(t, base).map(SizeOrPercent::Bytes)
}

/// Reads a duration in microseconds; a bare number is in `unit`.
///
/// Units (any case): `us`/`usec`, `ms`/`msec`, `s`/`sec`, `m`/`min`, `h`, `d`. fio 3.33 reads
/// `10sec` and `10min` as ten microseconds, against its own documentation; iobench follows the
/// documentation.
pub fn parse_time_us(s: &str, unit: TimeUnit) -> Result<u64, String> {
    let t = s.trim();
    let (neg, body) = split_sign(t);
    let (n, suffix) = split_number(body, s)?;
    if neg && n != 0 {
        return Err(format!("'{s}' is negative"));
    }
    let mult: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" => match unit {
            TimeUnit::Usec => 1,
            TimeUnit::Msec => 1_000,
            TimeUnit::Sec => 1_000_000,
        },
        "us" | "usec" => 1,
        "ms" | "msec" => 1_000,
        "s" | "sec" => 1_000_000,
        "m" | "min" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        other => {
            return Err(format!(
                "'{s}' has an unknown time unit '{other}' (expected us, ms, s, m, h or d)"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Reads a boolean as fio does: the number 0 or 1 (decimal or hex).
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match parse_unsigned(s)? {
        0 => Ok(false),
        1 => Ok(true),
        n => Err(format!("{n} is not 0 or 1")),
    }
}

/// Reads the value of an "empty or boolean" option (`time_based=1`): any whole number, where
/// non-zero means on.
pub fn parse_flag(s: &str) -> Result<bool, String> {
    if s.trim().is_empty() {
        return Ok(true);
    }
    Ok(parse_unsigned(s)? != 0)
}

fn parse_unsigned(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (n, suffix) = split_number(t, s)?;
    if !suffix.is_empty() {
        return Err(format!("'{s}' is not a whole number"));
    }
    Ok(n)
}

/// Reads one finite floating-point number.
pub fn parse_float(s: &str) -> Result<f64, String> {
    let t = s.trim();
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && !t.is_empty() => Ok(v),
        _ => Err(format!("'{s}' is not a number")),
    }
}
