//! `percentile_list`: which completion-latency percentiles the reports show.

use serde::{Deserialize, Serialize};

/// fio keeps at most this many percentiles in `percentile_list`.
pub const LIST_MAX_LEN: usize = 20;

/// The default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// A parsed `percentile_list` with its display precision (the most decimals any entry was
/// written with, as fio counts them), sorted ascending.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PercentileList {
    pub list: Vec<f64>,
    pub precision: usize,
}

impl Default for PercentileList {
    fn default() -> Self {
        PercentileList {
            list: DEFAULT_PERCENTILES.to_vec(),
            precision: 2,
        }
    }
}

impl PercentileList {
    /// Parses `percentile_list` (`99:99.9:50`), the one parser of it (option validation
    /// and job resolution both call it): colon-separated numbers in [0, 100], each may end
    /// in `%` (`99.9%` is 99.9, as fio's sscanf reads it), at most 20. A zero entry ends
    /// the list, as in fio. Errors say what was wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text
            .split(':')
            .map(|p| {
                let p = p.trim();
                p.strip_suffix('%').unwrap_or(p)
            })
            .collect();
        if parts.len() > LIST_MAX_LEN {
            return Err(format!(
                "{} percentiles given; at most {LIST_MAX_LEN} are allowed",
                parts.len()
            ));
        }
        let mut list = Vec::with_capacity(parts.len());
        let mut precision = 0;
        for part in parts {
            let v = super::value::parse_float(part)?;
            if !(0.0..=100.0).contains(&v) {
                return Err(format!("percentile {part} is outside 0..100"));
            }
            if let Some((_, frac)) = part.split_once('.') {
                let digits = frac.chars().take_while(|c| c.is_ascii_digit()).count();
                precision = precision.max(digits);
            }
            list.push(v);
        }
        if let Some(z) = list.iter().position(|&v| v == 0.0) {
            list.truncate(z);
        }
        list.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        Ok(PercentileList { list, precision })
    }
}
