//! Access-pattern values: `rw=` with its modifier and `random_distribution=`.

use super::number::{parse_float, parse_signed_size, parse_size, KbBase};
use crate::defs::Pattern;

/// The modifier after `rw=PATTERN:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqModifier {
    /// Random patterns: issue this many I/Os at sequential offsets before picking a new
    /// random one (`randread:8`).
    Count(u32),
    /// Sequential patterns: add this many bytes (may be negative) to the offset after each
    /// I/O, on top of the block size (`write:-8k`).
    Skip(i64),
}

/// A parsed `rw=` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RwSpec {
    pub pattern: Pattern,
    pub modifier: Option<SeqModifier>,
}

/// Reads the word of an `rw` value.
fn pattern_of(word: &str) -> Option<Pattern> {
    Some(match word {
        "read" => Pattern::Read,
        "write" => Pattern::Write,
        "trim" => Pattern::Trim,
        "randread" => Pattern::RandRead,
        "randwrite" => Pattern::RandWrite,
        "randtrim" => Pattern::RandTrim,
        "rw" | "readwrite" => Pattern::ReadWrite,
        "randrw" => Pattern::RandRw,
        "trimwrite" => Pattern::TrimWrite,
        "randtrimwrite" => Pattern::RandTrimWrite,
        _ => return None,
    })
}

/// Reads `rw=`: a pattern, then optionally `:N` (a count for random patterns, a signed size
/// for sequential ones).
pub fn parse_rw(s: &str, base: KbBase) -> Result<RwSpec, String> {
    let t = s.trim();
    let (word, post) = match t.split_once(':') {
        Some((w, p)) => (w.trim(), Some(p.trim())),
        None => (t, None),
    };
    let pattern = pattern_of(word).ok_or_else(|| {
        format!(
            "'{word}' is not one of: read, write, trim, randread, randwrite, randtrim, rw, \
             readwrite, randrw, trimwrite, randtrimwrite"
        )
    })?;
    let modifier = match post {
        None | Some("") => None,
        Some(p) if pattern.is_random() => {
            let n: u32 = p
                .parse()
                .map_err(|_| format!("'{p}' is not a count of sequential I/Os"))?;
            if n == 0 {
                return Err("the count after ':' must be at least 1".to_string());
            }
            Some(SeqModifier::Count(n))
        }
        Some(p) => Some(SeqModifier::Skip(parse_signed_size(p, base)?)),
    };
    Ok(RwSpec { pattern, modifier })
}

/// One zone of `random_distribution=zoned` (`size` in percent of the file) or `zoned_abs`
/// (`size` in bytes): the share of the I/Os that land in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneSplit {
    pub access_perc: u32,
    pub size: u64,
}

/// A parsed `random_distribution=` value: the one form the option checker, the job and
/// the offset generator share.
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    Random,
    /// Zipf with exponent `theta` (≠ 1), optionally centred at a fraction of the file.
    Zipf {
        theta: f64,
        center: Option<f64>,
    },
    /// Pareto with power `h` in (0, 1).
    Pareto {
        h: f64,
        center: Option<f64>,
    },
    /// Normal (Gaussian) with deviation `dev` in percent of the file, in [0, 100).
    Normal {
        dev: f64,
        center: Option<f64>,
    },
    /// `zoned:` zones per direction, sized in percent of the file (a direction without
    /// zones draws uniformly).
    Zoned([Vec<ZoneSplit>; 3]),
    /// `zoned_abs:` zones per direction, sized in bytes.
    ZonedAbs([Vec<ZoneSplit>; 3]),
}

/// fio's default zipf exponent and pareto power when none is given.
const DEFAULT_ZIPF: f64 = 1.1;
const DEFAULT_PARETO: f64 = 0.2;

/// Reads `value[:center]` after a distribution's name.
fn value_and_center(post: Option<&str>, default: f64) -> Result<(f64, Option<f64>), String> {
    let Some(p) = post else {
        return Ok((default, None));
    };
    let (v, c) = match p.split_once(':') {
        Some((v, c)) => (v, Some(parse_float(c)?)),
        None => (p, None),
    };
    if let Some(c) = c {
        if !(0.0..=1.0).contains(&c) {
            return Err(format!("the center {c} is outside 0..1"));
        }
    }
    Ok((parse_float(v)?, c))
}

/// Reads `random_distribution=`: `random`, `zipf[:theta[:center]]`, `pareto[:h[:center]]`,
/// `normal[:dev[:center]]`, `zoned:A/S:…[,…]` or `zoned_abs:A/SIZE:…[,…]`.
pub fn parse_distribution(s: &str, base: KbBase) -> Result<Distribution, String> {
    let t = s.trim();
    let (word, post) = match t.split_once(':') {
        Some((w, p)) => (w.trim(), Some(p.trim())),
        None => (t, None),
    };
    match word {
        "random" => match post {
            None => Ok(Distribution::Random),
            Some(_) => Err("'random' takes no ':' value".to_string()),
        },
        "zipf" => {
            let (theta, center) = value_and_center(post, DEFAULT_ZIPF)?;
            if theta == 1.0 || theta <= 0.0 {
                return Err(format!(
                    "the zipf exponent must be above 0 and not 1, not {theta}"
                ));
            }
            Ok(Distribution::Zipf { theta, center })
        }
        "pareto" => {
            let (h, center) = value_and_center(post, DEFAULT_PARETO)?;
            if h <= 0.0 || h >= 1.0 {
                return Err(format!("the pareto power must be in (0, 1), not {h}"));
            }
            Ok(Distribution::Pareto { h, center })
        }
        "normal" => {
            let (dev, center) = value_and_center(post, 0.0)?;
            if !(0.0..100.0).contains(&dev) {
                return Err(format!(
                    "the normal deviation must be in [0, 100), not {dev}"
                ));
            }
            Ok(Distribution::Normal { dev, center })
        }
        "zoned" => {
            let body = post.ok_or("'zoned' needs zones, such as zoned:60/10:40/90")?;
            per_dir(body, |d| {
                zones(d, parse_zone_pct)?.map(fill_pct).transpose()
            })
            .map(Distribution::Zoned)
        }
        "zoned_abs" => {
            let body = post.ok_or("'zoned_abs' needs zones, such as zoned_abs:60/1g:40/9g")?;
            per_dir(body, |d| {
                Ok(zones(d, |sz| parse_size(sz, base).map(Some))?.map(fill_abs))
            })
            .map(Distribution::ZonedAbs)
        }
        other => Err(format!(
            "'{other}' is not one of: random, zipf, pareto, normal, zoned, zoned_abs"
        )),
    }
}

/// Reads each direction's zones of `body` (`r,w,t`, spread by fio's per-direction rule);
/// a direction given no zones gets none.
fn per_dir(
    body: &str,
    each: impl Fn(&str) -> Result<Option<Vec<ZoneSplit>>, String>,
) -> Result<[Vec<ZoneSplit>; 3], String> {
    let parsed = body.split(',').map(each).collect::<Result<Vec<_>, _>>()?;
    if parsed.len() > 3 {
        return Err(format!(
            "{} parts; at most three (read,write,trim) are allowed",
            parsed.len()
        ));
    }
    Ok(super::spread(&parsed).map(Option::unwrap_or_default))
}

/// One direction's zones as written: access percentage and, when given, the zone's size.
type Zones<S> = Vec<(u32, Option<S>)>;

/// Reads one direction's zones `ACCESS/SIZE:…`; access percentages must add up to 100.
fn zones<S>(
    s: &str,
    size: impl Fn(&str) -> Result<Option<S>, String>,
) -> Result<Option<Zones<S>>, String> {
    let mut out = Vec::new();
    for item in s.split(':') {
        if item.trim().is_empty() {
            break;
        }
        let (a, sz) = match item.split_once('/') {
            Some((a, sz)) => (a, size(sz)?),
            None => (item, None),
        };
        let a = a.trim();
        let access: u32 = a
            .parse()
            .ok()
            .filter(|n| *n <= 100)
            .ok_or_else(|| format!("'{a}' is not a whole percentage"))?;
        out.push((access, sz));
    }
    if out.is_empty() {
        return Ok(None);
    }
    let total: u32 = out.iter().map(|z| z.0).sum();
    if total != 100 {
        return Err(format!(
            "the access percentages add up to {total}%, not 100%"
        ));
    }
    Ok(Some(out))
}

/// Reads a zone's size percentage; 0 or nothing (`20/`, as fio's own example writes it)
/// means "share the rest".
fn parse_zone_pct(s: &str) -> Result<Option<u32>, String> {
    let t = s.trim();
    if t.is_empty() {
        return Ok(None);
    }
    match t.parse::<u32>() {
        Ok(0) => Ok(None),
        Ok(n) if n <= 100 => Ok(Some(n)),
        _ => Err(format!("'{t}' is not a whole percentage")),
    }
}

/// Fills missing zone-size percentages with equal shares of what is left of 100%.
fn fill_pct(zones: Vec<(u32, Option<u32>)>) -> Result<Vec<ZoneSplit>, String> {
    let given: u32 = zones.iter().filter_map(|z| z.1).sum();
    if given > 100 {
        return Err(format!("the zone sizes add up to {given}%, more than 100%"));
    }
    let missing = zones.iter().filter(|z| z.1.is_none()).count() as u32;
    let rest = (100 - given).checked_div(missing).unwrap_or(0);
    Ok(zones
        .into_iter()
        .map(|(access_perc, s)| ZoneSplit {
            access_perc,
            size: u64::from(s.unwrap_or(rest)),
        })
        .collect())
}

/// Zones of `zoned_abs` without a size get none, as in fio.
fn fill_abs(zones: Vec<(u32, Option<u64>)>) -> Vec<ZoneSplit> {
    zones
        .into_iter()
        .map(|(access_perc, s)| ZoneSplit {
            access_perc,
            size: s.unwrap_or(0),
        })
        .collect()
}
