//! A sweep's axes: `--axis NAME=VALUES` over any job option, with values given as a list
//! (`1,2,4`, or `4k,8k|16k,32k` when a value itself holds commas) or a range
//! (`1..128:x2` geometric, `1..16:+1` arithmetic, sizes with units: `1k..32m:x2`), and
//! `--zip NAME=VALUES`, an option that moves together with the axis before it (seed 002's
//! batch = QD/4). Every option and value is checked against the option table before
//! anything runs.

use crate::error::Origin;
use crate::options;

/// One axis: the option it sets and its values, with the options zipped to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<String>,
    /// Options that take their i-th value together with the axis's i-th value.
    pub zipped: Vec<(String, Vec<String>)>,
}

/// The most points a sweep may have: more is almost surely a typo in a range.
pub const MAX_POINTS: usize = 100_000;

/// Parses `NAME=VALUES` as `flag` (`--axis` or `--zip`) gives it.
pub fn parse_spec(flag: &str, spec: &str) -> Result<(String, Vec<String>), String> {
    let (name, values) = spec.split_once('=').ok_or_else(|| {
        format!("{flag} '{spec}': expected NAME=VALUES, e.g. {flag} iodepth=1,2,4 or {flag} bs=4k..1m:x2")
    })?;
    let name = name.trim();
    let def = options::lookup(name).ok_or_else(|| {
        format!("{flag} '{spec}': '{name}' is not an option (see iobench --cmdhelp=all)")
    })?;
    let values = expand(values).map_err(|e| format!("{flag} '{spec}': {e}"))?;
    for v in &values {
        options::make_opt(name, Some(v), &Origin::command_line())
            .map_err(|e| format!("{flag} '{spec}': value '{v}': {e}"))?;
    }
    Ok((def.name.to_string(), values))
}

/// Expands a value list or range into its values, in order.
pub fn expand(values: &str) -> Result<Vec<String>, String> {
    let values = values.trim();
    if values.is_empty() {
        return Err("no values".into());
    }
    if let Some((from, rest)) = values.split_once("..") {
        if !values.contains(',') && !values.contains('|') {
            return expand_range(from, rest);
        }
    }
    let sep = if values.contains('|') { '|' } else { ',' };
    let list: Vec<String> = values.split(sep).map(|v| v.trim().to_string()).collect();
    if list.iter().any(String::is_empty) {
        return Err(format!("an empty value in '{values}'"));
    }
    Ok(list)
}

/// The step of a range: multiply or add.
enum Step {
    Times(f64),
    Plus(u64),
}

fn expand_range(from: &str, rest: &str) -> Result<Vec<String>, String> {
    let (to, step) = match rest.split_once(':') {
        Some((t, s)) => (t, s.trim()),
        None => (rest, "x2"),
    };
    let step = if let Some(f) = step.strip_prefix(['x', '*']) {
        let f: f64 = f
            .parse()
            .map_err(|_| format!("bad factor '{f}': expected :xF with F > 1, e.g. :x2"))?;
        if f.is_nan() || f <= 1.0 || !f.is_finite() {
            return Err(format!(
                "bad factor '{f}': expected :xF with F > 1, e.g. :x2"
            ));
        }
        Step::Times(f)
    } else if let Some(s) = step.strip_prefix('+') {
        let (s, _) = parse_number(s).map_err(|e| format!("bad step '+{s}': {e}"))?;
        if s == 0 {
            return Err("bad step '+0': expected :+N with N > 0".into());
        }
        Step::Plus(s)
    } else {
        return Err(format!(
            "bad step '{step}': expected :xF (geometric, e.g. :x2) or :+N (arithmetic, e.g. :+1)"
        ));
    };
    let (lo, unit_lo) = parse_number(from)?;
    let (hi, unit_hi) = parse_number(to)?;
    if lo > hi {
        return Err(format!("range {from}..{to} runs backwards"));
    }
    if let Step::Times(_) = step {
        if lo == 0 {
            return Err(format!("geometric range {from}..{to} cannot start at 0"));
        }
    }
    let with_units = unit_lo || unit_hi;
    let mut out = Vec::new();
    let mut v = lo;
    while v <= hi {
        out.push(if with_units {
            size_text(v)
        } else {
            v.to_string()
        });
        if out.len() > MAX_POINTS {
            return Err(format!(
                "range {from}..{to} has more than {MAX_POINTS} values"
            ));
        }
        let next = match step {
            Step::Times(f) => (v as f64 * f).round() as u64,
            Step::Plus(s) => v.saturating_add(s),
        };
        if next <= v {
            break;
        }
        v = next;
    }
    Ok(out)
}

/// A range end: a plain number, or a size with a k/m/g/t suffix (binary, as fio's
/// default kb_base reads them). Returns the value and whether a unit was given.
fn parse_number(s: &str) -> Result<(u64, bool), String> {
    let s = s.trim();
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = s[digits.len()..].to_ascii_lowercase();
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("'{s}' is not a number (expected e.g. 4, 4k, 1m)"))?;
    let mult: u64 = match unit.trim_end_matches(['b', 'i']) {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return Err(format!("'{s}': unknown unit (expected k, m, g or t)")),
    };
    let v = n
        .checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))?;
    Ok((v, !unit.is_empty()))
}

/// A byte count in the largest binary unit that divides it: 1024 → `1k`, 3145728 → `3m`.
pub fn size_text(v: u64) -> String {
    for (shift, unit) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if v >= 1 << shift && v % (1 << shift) == 0 {
            return format!("{}{unit}", v >> shift);
        }
    }
    v.to_string()
}

/// Checks that a zipped option has as many values as its axis and joins it.
pub fn zip(axis: &mut Axis, name: String, values: Vec<String>) -> Result<(), String> {
    if values.len() != axis.values.len() {
        return Err(format!(
            "--zip {name}: {} values, but axis {} has {}; a zipped option needs one value per axis value",
            values.len(),
            axis.name,
            axis.values.len()
        ));
    }
    axis.zipped.push((name, values));
    Ok(())
}

/// One point of the sweep: the option settings that make it, axis by axis (each axis's
/// setting followed by its zipped options').
pub type Point = Vec<(String, String)>;

/// The cartesian product of the axes, the first axis outermost.
pub fn points(axes: &[Axis]) -> Result<Vec<Point>, String> {
    let total = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
        .filter(|&n| n <= MAX_POINTS)
        .ok_or_else(|| format!("the sweep has more than {MAX_POINTS} points"))?;
    let mut out = Vec::with_capacity(total);
    for mut k in 0..total {
        let mut idx = vec![0; axes.len()];
        for (i, a) in axes.iter().enumerate().rev() {
            idx[i] = k % a.values.len();
            k /= a.values.len();
        }
        let mut p = Vec::new();
        for (a, &i) in axes.iter().zip(&idx) {
            p.push((a.name.clone(), a.values[i].clone()));
            for (z, vals) in &a.zipped {
                p.push((z.clone(), vals[i].clone()));
            }
        }
        out.push(p);
    }
    Ok(out)
}

/// The file-name stem of a point: `iodepth=4,rw=randread`, the settings as they would be
/// typed, with each byte a file name should not hold (and `%`, `=`, `,` inside a name or
/// value) written as `%XX`, so two different points never share a file.
pub fn point_stem(p: &Point) -> String {
    let clean = |s: &str| -> String {
        let mut out = String::with_capacity(s.len());
        for b in s.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+' | b'_') {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    p.iter()
        .map(|(n, v)| format!("{}={}", clean(n), clean(v)))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(expand("1,2,4").unwrap(), ["1", "2", "4"]);
        assert_eq!(expand("4k,8k|16k").unwrap(), ["4k,8k", "16k"]);
        assert_eq!(
            expand("1..128:x2").unwrap(),
            ["1", "2", "4", "8", "16", "32", "64", "128"]
        );
        assert_eq!(expand("1..4:+1").unwrap(), ["1", "2", "3", "4"]);
        assert_eq!(expand("1..5").unwrap(), ["1", "2", "4"]);
        assert_eq!(
            expand("1k..32m:x2").unwrap().len(),
            16,
            "1k, 2k, ... 32m: 16 values"
        );
        assert_eq!(expand("1k..4k:x2").unwrap(), ["1k", "2k", "4k"]);
        assert_eq!(expand("512..2k:x2").unwrap(), ["512", "1k", "2k"]);
    }

    #[test]
    fn bad_ranges_say_what_is_wrong() {
        assert!(expand("8..1").unwrap_err().contains("backwards"));
        assert!(expand("0..8:x2").unwrap_err().contains("cannot start at 0"));
        assert!(expand("1..8:x1").unwrap_err().contains("factor"));
        assert!(expand("1..8:/2").unwrap_err().contains("step"));
        assert!(expand("1..8q").unwrap_err().contains("unit"));
        assert!(expand("1,,2").unwrap_err().contains("empty"));
        assert!(expand("1..100000000:+1").unwrap_err().contains("more than"));
    }

    #[test]
    fn specs_are_checked_against_the_option_table() {
        let (n, v) = parse_spec("--axis", "iodepth=1..4:x2").unwrap();
        assert_eq!((n.as_str(), v.len()), ("iodepth", 3));
        assert!(parse_spec("--axis", "iodeth=1")
            .unwrap_err()
            .contains("not an option"));
        assert!(parse_spec("--axis", "rw=read,sideways")
            .unwrap_err()
            .contains("sideways"));
        assert!(parse_spec("--axis", "iodepth")
            .unwrap_err()
            .contains("NAME=VALUES"));
    }

    #[test]
    fn product_with_zipped_options() {
        let mut qd = Axis {
            name: "iodepth".into(),
            values: vec!["1".into(), "8".into()],
            zipped: vec![],
        };
        zip(
            &mut qd,
            "iodepth_batch_submit".into(),
            vec!["1".into(), "2".into()],
        )
        .unwrap();
        assert!(zip(&mut qd, "x".into(), vec!["1".into()]).is_err());
        let rw = Axis {
            name: "rw".into(),
            values: vec!["read".into(), "randread".into()],
            zipped: vec![],
        };
        let pts = points(&[qd, rw]).unwrap();
        assert_eq!(pts.len(), 4);
        assert_eq!(
            point_stem(&pts[3]),
            "iodepth=8,iodepth_batch_submit=2,rw=randread"
        );
        assert_eq!(pts[1][2], ("rw".to_string(), "randread".to_string()));
    }

    #[test]
    fn points_differing_only_in_punctuation_have_their_own_files() {
        let stems: Vec<String> = ["x y", "x/y", "x:y", "x~y", "x%2Fy", "x,y=z"]
            .iter()
            .map(|v| point_stem(&vec![("description".to_string(), v.to_string())]))
            .collect();
        for (i, a) in stems.iter().enumerate() {
            assert!(!a.contains('/'), "{a}");
            for b in &stems[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(stems[0], "description=x%20y");
        assert_eq!(stems[1], "description=x%2Fy");
    }
}
