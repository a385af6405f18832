//! Lists: per-direction sizes and ranges (`bs=4k,8k`, `bsrange=1k-4k,8k-32k`), `bssplit`,
//! and colon-separated floats (`percentile_list=99:99.9`).

#![warn(missing_docs, clippy::cast_possible_truncation)]

use super::number::{parse_float, parse_size, KbBase};

/// One value per data direction (read, write, trim). `None` means "not given here": the
/// option's default (or an earlier setting) stays in force for that direction.
pub type PerDir<T> = [Option<T>; 3];

/// A block-size split for one direction: `(block size, percent)` pairs, sorted by percent
/// (ascending, stable), with every share filled in.
pub type BsSplit = Vec<(u64, u32)>;

/// The most entries one direction of `bssplit` may have, as in fio.
const BSSPLIT_MAX: usize = 64;

/// fio's one rule for `read,write,trim` lists: part `i` goes to direction `i`, and a
/// direction past the last part takes the last part (one part applies to all three; two
/// give read and write, and trim takes the write one). Every per-direction option reads
/// its parts through this, so they cannot disagree. `parts` is a split's output, never
/// empty.
pub fn spread<T: Clone>(parts: &[T]) -> [T; 3] {
    let last = parts.len().saturating_sub(1);
    std::array::from_fn(|d| parts[d.min(last)].clone())
}

/// The parts of a per-direction list `r,w,t` spread by [`spread`], trimmed; an empty part
/// is `None` (that direction keeps its default, as `,8k` leaves the read size alone).
pub fn per_dir(text: &str) -> PerDir<&str> {
    let parts: Vec<Option<&str>> = text
        .split(',')
        .map(str::trim)
        .map(|p| (!p.is_empty()).then_some(p))
        .collect();
    spread(&parts)
}

/// [`spread`] for values already parsed, refusing a list that gives nothing or more than
/// three parts (the table's check of a per-direction kind).
fn fill<T: Clone>(parts: Vec<Option<T>>, s: &str) -> Result<PerDir<T>, String> {
    if parts.iter().all(Option::is_none) {
        return Err(format!("'{s}' gives no value"));
    }
    if parts.len() > 3 {
        return Err(format!(
            "'{s}' has {} parts; at most three (read,write,trim) are allowed",
            parts.len()
        ));
    }
    Ok(spread(&parts))
}

/// Splits per-direction text at commas, dropping one trailing comma as fio does.
fn split_commas(s: &str) -> Vec<&str> {
    let t = s.trim();
    let t = t.strip_suffix(',').unwrap_or(t);
    t.split(',').collect()
}

/// Reads sizes per direction: `4k`, `4k,8k`, `,8k`, `4k,8k,16k`. As in fio, when there is
/// no comma a `:` or `-` also separates directions (`bs=4k:8k` is read 4k, write 8k).
pub fn parse_size_list(s: &str, base: KbBase) -> Result<PerDir<u64>, String> {
    let t = s.trim();
    let parts: Vec<&str> = if t.contains(',') {
        split_commas(t)
    } else if t.contains(':') {
        t.split(':').collect()
    } else if t.trim_start_matches(['-', '+']).contains('-') {
        t.split('-').collect()
    } else {
        vec![t]
    };
    let parsed = parts
        .iter()
        .map(|p| {
            if p.trim().is_empty() {
                Ok(None)
            } else {
                parse_size(p, base).map(Some)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    fill(parsed, s)
}

/// Reads one `min-max` (or `min:max`) range; the ends are swapped when given backwards.
fn parse_range(p: &str, base: KbBase) -> Result<(u64, u64), String> {
    let (a, b) = p
        .split_once('-')
        .or_else(|| p.split_once(':'))
        .ok_or_else(|| format!("'{}' is not a range such as 4k-64k", p.trim()))?;
    let (lo, hi) = (parse_size(a, base)?, parse_size(b, base)?);
    Ok(if lo > hi { (hi, lo) } else { (lo, hi) })
}

/// Reads ranges per direction: `4k-512k`, `1k:4k`, `1k-4k,8k-32k`, `1k-4k,,8k-16k`.
pub fn parse_range_list(s: &str, base: KbBase) -> Result<PerDir<(u64, u64)>, String> {
    if s.contains('/') {
        return Err(format!(
            "'{s}' uses '/'; separate the read, write and trim ranges with ','"
        ));
    }
    let parsed = split_commas(s)
        .iter()
        .map(|p| {
            if p.trim().is_empty() {
                Ok(None)
            } else {
                parse_range(p, base).map(Some)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    fill(parsed, s)
}

/// Reads the whole percentage after a `/` in a split entry; 0 means "share the rest", as in
/// fio.
fn parse_share(p: &str, whole: &str) -> Result<Option<u32>, String> {
    let t = p.trim();
    // A blank percentage (`1k/`) is a missing one, as fio reads it: that block size shares
    // what the others leave of 100%.
    if t.is_empty() {
        return Ok(None);
    }
    if !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{p}' in '{whole}' is not a whole percentage"));
    }
    match t.parse::<u32>() {
        Ok(0) => Ok(None),
        Ok(n) if n <= 100 => Ok(Some(n)),
        _ => Err(format!("{t}% in '{whole}' is more than 100%")),
    }
}

/// Reads one direction of `bssplit`: `4k/10:64k/50:32k/40`. Entries without a percentage
/// (or with 0) share what the others leave of 100%.
fn parse_bssplit_dir(s: &str, base: KbBase, whole: &str) -> Result<Option<BsSplit>, String> {
    let mut entries: Vec<(u64, Option<u32>)> = Vec::new();
    for item in s.split(':') {
        if item.trim().is_empty() {
            break; // fio stops at the first empty entry
        }
        if entries.len() == BSSPLIT_MAX {
            return Err(format!("'{whole}' has more than {BSSPLIT_MAX} entries"));
        }
        let (bs, share) = match item.split_once('/') {
            Some((bs, p)) => (bs, parse_share(p, whole)?),
            None => (item, None),
        };
        let bs = parse_size(bs, base)?;
        if bs == 0 {
            return Err(format!("a block size of 0 in '{whole}'"));
        }
        entries.push((bs, share));
    }
    if entries.is_empty() {
        return Ok(None);
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    let missing =
        u32::try_from(entries.iter().filter(|e| e.1.is_none()).count()).unwrap_or(u32::MAX);
    if given > 100 {
        return Err(format!(
            "the percentages in '{whole}' add up to {given}%, more than 100%"
        ));
    }
    let rest = (100 - given).checked_div(missing).unwrap_or(0);
    let mut out: BsSplit = entries
        .into_iter()
        .map(|(bs, share)| (bs, share.unwrap_or(rest)))
        .collect();
    out.sort_by_key(|e| e.1);
    Ok(Some(out))
}

/// Reads `bssplit`: one split for all directions, or `read,write[,trim]` splits where trim
/// takes the write split when only two are given.
pub fn parse_bssplit(s: &str, base: KbBase) -> Result<PerDir<BsSplit>, String> {
    let dirs: Vec<&str> = s.trim().split(',').collect();
    if dirs.len() > 3 {
        return Err(format!(
            "'{s}' has {} parts; at most three (read,write,trim) are allowed",
            dirs.len()
        ));
    }
    let parsed = dirs
        .iter()
        .map(|d| parse_bssplit_dir(d, base, s))
        .collect::<Result<Vec<_>, _>>()?;
    fill(parsed, s)
}

/// Reads floats separated by `:`; each may end in `%` (fio reads `latency_percentile=50%`
/// and `percentile_list=50%:99%` as the numbers).
pub fn parse_float_list(s: &str) -> Result<Vec<f64>, String> {
    s.split(':')
        .map(|v| parse_float(v.trim().strip_suffix('%').unwrap_or(v)))
        .collect()
}
