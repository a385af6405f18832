//! fio's log-linear latency histogram. Values below 128 ns get one bucket each; above that,
//! each power of two is cut into 64 equal buckets, so a bucket is never wider than 1/64 of
//! its values (under 1.6% error). Percentiles are read from the buckets exactly as fio reads
//! them, so the same latencies give the same percentiles in both tools.

use serde::{Deserialize, Serialize};

/// Bits of a value kept below its most significant bit.
pub const PLAT_BITS: u32 = 6;
/// Buckets per group (`1 << PLAT_BITS`).
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Groups of buckets.
pub const PLAT_GROUP_NR: usize = 29;
/// Total buckets: 29 groups of 64.
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL as usize;

/// The bucket a latency (in ns) falls into.
pub fn idx_of(val: u64) -> usize {
    let msb = if val == 0 {
        0
    } else {
        63 - val.leading_zeros()
    };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as usize) << PLAT_BITS;
    let offset = ((PLAT_VAL - 1) & (val >> error_bits)) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// The value a bucket stands for: the middle of its range (values under 128 are exact).
pub fn val_of(idx: usize) -> u64 {
    debug_assert!(idx < PLAT_NR);
    if idx < (PLAT_VAL as usize) << 1 {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (idx % PLAT_VAL as usize) as f64;
    // fio computes the midpoint in floating point and truncates.
    base + ((k + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// A latency histogram with fio's buckets. The default one is empty and unallocated (for
/// latencies whose percentiles are not reported): adding to it does nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hist {
    buckets: Vec<u64>,
}

impl Hist {
    /// A histogram with all its buckets, ready to count.
    pub fn new() -> Self {
        Hist {
            buckets: vec![0; PLAT_NR],
        }
    }

    /// A histogram from bucket counts received from elsewhere (a fio server's thread_stat):
    /// `PLAT_NR` counts, the extra ones dropped and missing ones zero.
    pub fn from_buckets(mut buckets: Vec<u64>) -> Self {
        buckets.resize(PLAT_NR, 0);
        Hist { buckets }
    }

    /// True when this histogram was never allocated (its percentiles are off).
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Counts one latency in ns. No allocation: the buckets exist from construction.
    #[inline]
    pub fn add(&mut self, ns: u64) {
        if let Some(b) = self.buckets.get_mut(idx_of(ns)) {
            *b += 1;
        }
    }

    /// The bucket counts, `PLAT_NR` of them.
    pub fn buckets(&self) -> &[u64] {
        &self.buckets
    }

    /// Adds another histogram's counts into this one (group reporting).
    pub fn merge(&mut self, other: &Hist) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            self.buckets = vec![0; PLAT_NR];
        }
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += *b;
        }
    }

    /// Total samples counted.
    pub fn total(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// The value at each percentile of `sorted` (ascending, each in (0, 100]), given `nr`
    /// samples, as fio computes it: walk the buckets, and a percentile p takes the first
    /// bucket where the running count reaches p% of `nr`. Empty when the list is empty or
    /// `nr` is zero.
    pub fn percentiles(&self, sorted: &[f64], nr: u64) -> Vec<u64> {
        let mut out = Vec::with_capacity(sorted.len());
        if sorted.is_empty() || nr == 0 || self.is_empty() {
            return out;
        }
        let mut sum = 0u64;
        let mut j = 0;
        'walk: for (i, &count) in self.buckets.iter().enumerate() {
            sum += count;
            while sum as f64 >= sorted[j] / 100.0 * nr as f64 {
                out.push(val_of(i));
                j += 1;
                if j == sorted.len() {
                    break 'walk;
                }
            }
        }
        // fio reports an error and leaves the rest unset when counts and `nr` disagree;
        // we fill with the last bucket's value so the output keeps its shape.
        while out.len() < sorted.len() {
            out.push(out.last().copied().unwrap_or(0));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defs::percentiles::{PercentileList, DEFAULT_PERCENTILES};

    #[test]
    fn small_values_have_their_own_bucket() {
        for v in 0..128 {
            assert_eq!(idx_of(v), v as usize);
            assert_eq!(val_of(v as usize), v);
        }
    }

    #[test]
    fn bucket_index_and_value_match_fio() {
        // (latency, bucket, bucket value) worked out from fio's definitions.
        let cases = [
            (128u64, 128usize, 129u64),
            (129, 128, 129),
            (130, 129, 131),
            (255, 191, 255),
            (256, 192, 258),
            (415, 231, 414),
            (1000, 317, 1004),
            (2560, 400, 2576),
            (1_000_000, 954, 1_003_520),
            (2_560_500, 1038, 2_572_288),
            (u64::MAX, PLAT_NR - 1, 17_112_760_320),
        ];
        for (v, idx, rep) in cases {
            assert_eq!(idx_of(v), idx, "index of {v}");
            assert_eq!(val_of(idx), rep, "value of bucket {idx}");
        }
    }

    #[test]
    fn every_value_lands_in_a_bucket_that_contains_it() {
        let mut v = 1u64;
        // Values are tracked accurately up to 2^(GROUP_NR + BITS - 1); above, they saturate.
        while v < (1u64 << 34) {
            let i = idx_of(v);
            let rep = val_of(i);
            let err = (rep as f64 - v as f64).abs() / v as f64;
            assert!(err < 1.0 / 64.0 + 1e-9, "{v} -> {rep}");
            v = v * 3 / 2 + 1;
        }
    }

    #[test]
    fn percentiles_of_a_known_set() {
        let mut h = Hist::new();
        for v in 1..=100u64 {
            h.add(v);
        }
        let p = h.percentiles(&[1.0, 50.0, 90.0, 99.0, 100.0], 100);
        assert_eq!(p, vec![1, 50, 90, 99, 100]);

        let mut h = Hist::new();
        for _ in 0..9 {
            h.add(1000);
        }
        h.add(1_000_000);
        let p = h.percentiles(&DEFAULT_PERCENTILES, 10);
        // 90% of 10 samples is 9: still the 1000 ns bucket (shown as 1004); 95% needs 9.5.
        assert_eq!(&p[..11], &[1004; 11]);
        assert_eq!(&p[11..], &[1_003_520; 6]);
    }

    #[test]
    fn percentile_list_parsing() {
        let p = PercentileList::parse("99.9:50:99").unwrap();
        assert_eq!(p.list, vec![50.0, 99.0, 99.9]);
        assert_eq!(p.precision, 1);
        assert_eq!(PercentileList::parse("1:5").unwrap().precision, 0);
        assert!(PercentileList::parse("101").is_err());
        assert!(PercentileList::parse("x").is_err());
    }
}
