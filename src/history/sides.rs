//! Which stored runs make one side of a comparison: a list of run IDs (`3 5 7`, `3-7`,
//! `3,5`), a study's runs, the newest N runs a filter takes, or the newest N runs like a
//! baseline saved after it. A side is judged by its noise, so its runs must be alike
//! (the same options hash, device model, filesystem, kernel and host): [`alike`] refuses
//! a side that mixes them, naming the run and the field that differ. Warm-up runs of a
//! `compare --warmup` study are stored but never picked by a study or a count.

use super::store::{Filter, Identity, RunRow, Store};

/// A side's runs, oldest first, and how it reads in the output (`run 12`, `runs 3-7`).
#[derive(Debug, Clone)]
pub struct Runs {
    pub rows: Vec<RunRow>,
}

impl Runs {
    pub fn ids(&self) -> Vec<i64> {
        self.rows.iter().map(|r| r.id).collect()
    }

    /// `run 12`, or `runs 3-7, 9`.
    pub fn describe(&self) -> String {
        let ids = self.ids();
        format!(
            "{} {}",
            if ids.len() == 1 { "run" } else { "runs" },
            ranges(&ids)
        )
    }

    /// The identity the runs share (checked by [`alike`]).
    pub fn ident(&self) -> Identity {
        self.rows
            .first()
            .map(|r| r.ident.clone())
            .unwrap_or_default()
    }
}

/// Ids as ranges: `3-7, 9, 12-13`.
pub fn ranges(ids: &[i64]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            sorted[i].to_string()
        } else {
            format!("{}-{}", sorted[i], sorted[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

fn one_id(word: &str, whole: &str) -> Result<i64, String> {
    word.trim()
        .parse()
        .ok()
        .filter(|&n: &i64| n > 0)
        .ok_or_else(|| {
            format!(
                "'{whole}' is not a list of run IDs: expected IDs from history list, such as 12, \
             3-7 or 3,5,9"
            )
        })
}

/// The most run IDs one command names (ranges included).
pub const MAX_IDS: usize = 1_000_000;

/// Run IDs as given: each word an ID, a range `A-B` or a comma list of either.
pub fn parse_ids(words: &[String]) -> Result<Vec<i64>, String> {
    let mut ids = Vec::new();
    for w in words {
        for part in w.split(',') {
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (one_id(a, w)?, one_id(b, w)?);
                    if b < a {
                        return Err(format!("'{w}': a range runs from the lower ID up (A-B)"));
                    }
                    // Checked before anything is allocated: a range sizes the work.
                    if b - a >= MAX_IDS as i64 || ids.len() + (b - a) as usize >= MAX_IDS {
                        return Err(format!(
                            "'{w}': at most {MAX_IDS} run IDs at once (a range A-B, B - A \
                             below {MAX_IDS})"
                        ));
                    }
                    ids.extend(a..=b);
                }
                None => ids.push(one_id(part, w)?),
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// True for a warm-up run of a `compare --warmup` study (point `A warmup 1`).
fn warmup(r: &RunRow) -> bool {
    r.point.as_deref().is_some_and(|p| p.contains(" warmup "))
}

/// The runs with these IDs, every one of them stored.
pub fn by_ids(db: &Store, ids: &[i64]) -> Result<Runs, String> {
    let rows = ids
        .iter()
        .map(|&id| db.get(id).map(|(r, _)| r))
        .collect::<Result<_, _>>()?;
    Ok(Runs { rows })
}

/// A study's runs (its warm-up runs left out).
pub fn study(db: &Store, study: i64) -> Result<Runs, String> {
    let rows: Vec<RunRow> = db
        .list(&Filter {
            study: Some(study),
            ..Default::default()
        })?
        .into_iter()
        .filter(|r| !warmup(r))
        .collect();
    if rows.is_empty() {
        return Err(format!(
            "no study {study} in the history (see history list)"
        ));
    }
    Ok(Runs { rows })
}

/// The newest `n` runs `f` takes (warm-ups left out), oldest first.
pub fn last(db: &Store, f: &Filter, n: usize) -> Result<Runs, String> {
    let all: Vec<RunRow> = db.list(f)?.into_iter().filter(|r| !warmup(r)).collect();
    if all.is_empty() {
        return Err("--last: no saved run matches".into());
    }
    let rows = all[all.len().saturating_sub(n)..].to_vec();
    Ok(Runs { rows })
}

/// True when `r` ran the same job on the same target as `base`: what picks a baseline's
/// candidates (the kernel, host and the rest may differ: that is what a check looks for).
fn like(r: &RunRow, base: &Identity) -> bool {
    r.ident.job_hash.is_some()
        && r.ident.job_hash == base.job_hash
        && r.ident.target == base.target
        && r.ident.device_model == base.device_model
}

/// The newest `n` runs like the baseline `base` (the same options hash and target),
/// saved after its newest run; from `study` only when given.
pub fn like_baseline(
    db: &Store,
    base: &Runs,
    n: usize,
    study: Option<i64>,
) -> Result<Runs, String> {
    let b = base.ident();
    let newest = base.rows.iter().map(|r| r.id).max().unwrap_or(0);
    let f = Filter {
        job_hash: b.job_hash.clone(),
        study,
        ..Default::default()
    };
    let all: Vec<RunRow> = db
        .list(&f)?
        .into_iter()
        .filter(|r| !warmup(r) && like(r, &b) && (study.is_some() || r.id > newest))
        .filter(|r| !base.rows.iter().any(|x| x.id == r.id))
        .collect();
    if all.is_empty() {
        return Err(format!(
            "no run like the baseline ({}: options hash {}, target {}) {}",
            base.describe(),
            b.text("options hash"),
            b.target.as_deref().unwrap_or("-"),
            match study {
                Some(s) => format!("in study {s}"),
                None => "saved since".into(),
            }
        ));
    }
    let rows = all[all.len().saturating_sub(n)..].to_vec();
    Ok(Runs { rows })
}

/// Refuses a side whose runs are not alike, naming the first run that differs from the
/// side's first and how; `what` names the side (`the baseline`, `the candidate runs`).
pub fn alike(side: &Runs, what: &str) -> Result<(), String> {
    let Some(first) = side.rows.first() else {
        return Err(format!("{what}: no runs"));
    };
    for r in &side.rows[1..] {
        let d = first.ident.differences_text(&r.ident);
        if !d.is_empty() {
            return Err(format!(
                "{what} ({}) mix runs that are not alike: run {} differs from run {} in {}; \
                 a side's runs must repeat one job on one system, so that their spread is \
                 the noise",
                side.describe(),
                r.id,
                first.id,
                d.join(", ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_ranges_are_refused_before_any_work() {
        let w = |s: &str| vec![s.to_string()];
        let e = parse_ids(&w("1-9000000000000000000")).unwrap_err();
        assert!(e.contains("at most 1000000"), "{e}");
        assert!(parse_ids(&w("1-999999")).is_ok());
        assert!(parse_ids(&w("1-600000,1-600000")).is_err());
        assert!(parse_ids(&w("9223372036854775806-9223372036854775807")).is_ok());
    }

    #[test]
    fn ids_ranges_and_lists() {
        assert_eq!(
            parse_ids(&["3-5".into(), "9,7".into(), "4".into()]).unwrap(),
            [3, 4, 5, 7, 9]
        );
        assert_eq!(ranges(&[9, 3, 4, 5, 7, 8, 12]), "3-5, 7-9, 12");
        assert!(parse_ids(&["5-3".into()]).unwrap_err().contains("lower ID"));
        assert!(parse_ids(&["x".into()])
            .unwrap_err()
            .contains("'x' is not a list"));
        assert!(parse_ids(&["0".into()]).is_err());
    }
}
