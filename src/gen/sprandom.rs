//! `sprandom=1` (fio 3.41; `spr_cs` 3.42): preconditioning a flash device to the state a
//! long random-write workload leaves it in, in one pass over its physical capacity.
//!
//! The device (the job's one file) is cut into `spr_num_regions` equal regions of its
//! physical size (the logical size plus `spr_op` over-provisioning). Each region is written
//! with fresh blocks from the job's LFSR; while it is, each block written is kept, with the
//! region's invalidation probability, to be written again later. Rewriting a kept block
//! invalidates its first copy, so the regions end with the spread of valid data the
//! steady state has (Desnoyers' model: validity times the share of the device at that
//! validity is constant; write amplification taken as 0.5 / OP + 0.7). The blocks kept in
//! one region are written at the start of the next one, or, with `spr_cs` (a device cache
//! size), at the end of the next one, so that a block and its rewrite are never in the
//! device's cache together.
//!
//! Everything here is fio's computation step for step (the same doubles in the same order,
//! the same 32-bit random stream), so a job gives fio's very offsets in fio's order. All
//! memory is taken when the job's generator is made; the per-I/O step allocates nothing.

use super::lfsr::Lfsr;
use super::rand::FRand;
pub use crate::job::workload::SpRandomOpts;

/// Invalidation probabilities are kept in 1/10000ths, as fio keeps them.
const PCT_PRECISION: u32 = 10_000;

/// The size fio writes for a device of `logical` bytes: its physical capacity, the
/// logical size plus the over-provisioning share (rounded up), aligned up to `bs`.
pub fn physical_size(over_provisioning: f64, logical: u64, bs: u64) -> u64 {
    // fio adds in doubles, then converts the sum.
    let size = (logical as f64 + (logical as f64 * over_provisioning).ceil()) as u64;
    (size + (bs - 1)) & !(bs - 1)
}

/// `n` values evenly spaced from `start` to `end`, both included.
fn evenly_spaced(start: f64, end: f64, n: usize) -> Vec<f64> {
    if n == 1 {
        return vec![start];
    }
    let step = (end - start) / (n as f64 - 1.0);
    (0..n).map(|i| start + i as f64 * step).collect()
}

/// The value at `x` of the polyline through `(xs[i], ys[i])` (xs increasing), held at the
/// end values outside it.
fn interpolate(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len();
    if n == 0 {
        return 0.0;
    }
    if n == 1 || x <= xs[0] {
        return ys[0];
    }
    if x >= xs[n - 1] {
        return ys[n - 1];
    }
    for i in 0..n - 1 {
        if x >= xs[i] && x <= xs[i + 1] {
            let (x1, y1, x2, y2) = (xs[i], ys[i], xs[i + 1], ys[i + 1]);
            if (x2 - x1).abs() < 1e-9 {
                return y1;
            }
            return y1 + (y2 - y1) * ((x - x1) / (x2 - x1));
        }
    }
    0.0
}

/// The expected validity of each of `n` equal regions, lowest validity first.
fn validity_per_region(n: usize, over_provisioning: f64) -> Vec<f64> {
    let waf = 0.5 / over_provisioning + 0.7;
    let gc_validity = 1.0 - 1.0 / waf;
    // Validities spaced evenly from full down to the collected block's; each one's share of
    // the device is inversely proportional to it, so the cumulative share is the x axis.
    let validity = evenly_spaced(1.0, gc_validity, n);
    let mut acc = 0.0;
    let cumulative: Vec<f64> = validity
        .iter()
        .map(|v| {
            acc += 1.0 / v;
            acc
        })
        .collect();
    // Resampled at equal steps of that share: one validity per equal-sized region.
    let xs = evenly_spaced(cumulative[0], cumulative[n - 1], n);
    let mut out: Vec<f64> = xs
        .iter()
        .map(|&x| interpolate(x, &cumulative, &validity))
        .collect();
    out.reverse();
    out
}

/// How many blocks of a region of `count` blocks at `validity` may be kept for rewriting:
/// the expected number plus six standard deviations.
fn keep_capacity(count: u64, validity: f64) -> u64 {
    let sigma = (count as f64 * validity * (1.0 - validity)).sqrt();
    (count as f64 * (1.0 - validity) + 6.0 * sigma).ceil() as u64
}

/// A ring of kept block numbers in two parts: those kept in the region being written
/// (staged) and those of the region before, which may be written now (committed).
#[derive(Debug, Clone)]
struct KeptRing {
    slots: Vec<u64>,
    committed_end: usize,
    staged_end: usize,
    read: usize,
}

impl KeptRing {
    fn new(capacity: usize) -> Self {
        KeptRing {
            slots: vec![0; capacity.max(1)],
            committed_end: 0,
            staged_end: 0,
            read: 0,
        }
    }

    fn cap(&self) -> usize {
        self.slots.len()
    }

    fn span(&self, from: usize, to: usize) -> usize {
        if to >= from {
            to - from
        } else {
            self.cap() - from + to
        }
    }

    /// Room for one more staged block (one slot always stays free, as in fio).
    fn has_room(&self) -> bool {
        let used = self.span(self.read, self.committed_end)
            + self.span(self.committed_end, self.staged_end);
        used + 1 < self.cap()
    }

    fn stage(&mut self, block: u64) {
        if (self.staged_end + 1) % self.cap() == self.read {
            return;
        }
        self.slots[self.staged_end] = block;
        self.staged_end = (self.staged_end + 1) % self.cap();
    }

    fn commit(&mut self) {
        self.committed_end = self.staged_end;
    }

    fn pop(&mut self) -> Option<u64> {
        if self.read == self.committed_end {
            return None;
        }
        let b = self.slots[self.read];
        self.read = (self.read + 1) % self.cap();
        Some(b)
    }
}

/// One job clone's sprandom state over its one file.
#[derive(Debug, Clone)]
pub struct SpRandom {
    /// Per region, the chance (in 1/10000ths) that a block written there is kept.
    invalid_pct: Vec<u32>,
    kept: KeptRing,
    /// Blocks kept per phase (the region being written, the one before).
    kept_count: [u64; 2],
    region: usize,
    phase: usize,
    region_writes: u64,
    writes_left: u64,
    defer_to_region_end: bool,
    rng: FRand,
}

impl SpRandom {
    /// The state for a file of `logical` bytes written in `bs` blocks, with the random
    /// stream seeded by `seed` (fio's sprandom seed, a 32-bit generator), and the bytes
    /// the job writes (the physical size). An error says what fio refuses.
    pub fn new(o: &SpRandomOpts, logical: u64, bs: u64, seed: u64) -> Result<(Self, u64), String> {
        if !bs.is_power_of_two() {
            return Err(format!("sprandom: bs [{bs}] should be power of 2"));
        }
        let n = o.num_regions as usize;
        if n == 0 {
            return Err("sprandom: spr_num_regions must be at least 1".into());
        }
        let physical = physical_size(o.over_provisioning, logical, bs);
        let validity = validity_per_region(n, o.over_provisioning);
        let invalid_pct = validity
            .iter()
            .map(|v| ((1.0 - v) * PCT_PRECISION as f64).round() as i32 as u32)
            .collect();
        let region_size = physical / o.num_regions as u64;
        let region_writes = region_size / bs;
        if o.cache_size != 0 && o.cache_size > region_size {
            return Err(format!(
                "sprandom: spr_cs [{}] must be smaller than region_sz [{region_size}] which \
                 means [{}] regions allowed",
                o.cache_size,
                physical / o.cache_size
            ));
        }
        let mut capacity = keep_capacity(region_writes, validity[0]);
        if o.cache_size != 0 {
            // The kept blocks wait a region longer: room for two regions' worth.
            capacity *= 2;
        }
        let capacity = usize::try_from(capacity)
            .map_err(|_| "sprandom: too many blocks per region".to_string())?;
        Ok((
            SpRandom {
                invalid_pct,
                kept: KeptRing::new(capacity),
                kept_count: [0; 2],
                region: 0,
                phase: 0,
                region_writes,
                writes_left: region_writes,
                defer_to_region_end: o.cache_size != 0,
                rng: FRand::new(seed, false),
            },
            physical,
        ))
    }

    /// Keeps `block` for rewriting with the current region's probability, counted in
    /// `phase`.
    fn maybe_keep(&mut self, block: u64, phase: usize) {
        let v = self.rng.between(0, PCT_PRECISION as u64) as u32;
        let pct = self.invalid_pct.get(self.region).copied().unwrap_or(0);
        if v <= pct && self.kept.has_room() {
            self.kept.stage(block);
            self.kept_count[phase] += 1;
        }
    }

    /// The next block number to write, drawing fresh ones from `lfsr`; `None` once every
    /// region is written or the LFSR has no block left (the job is done).
    pub fn next(&mut self, lfsr: &mut Lfsr) -> Option<u64> {
        let phase = self.phase;
        if !self.defer_to_region_end {
            if let Some(b) = self.kept.pop() {
                self.maybe_keep(b, phase ^ 1);
                return Some(b);
            }
        }
        if self.writes_left == 0 {
            if self.defer_to_region_end {
                if let Some(b) = self.kept.pop() {
                    self.maybe_keep(b, phase ^ 1);
                    return Some(b);
                }
            }
            if self.region >= self.invalid_pct.len() {
                return None;
            }
            self.kept_count[phase] = 0;
            self.region += 1;
            let phase = phase ^ 1;
            self.writes_left = self.region_writes.saturating_sub(self.kept_count[phase]);
            self.phase = phase;
            self.kept.commit();
        }
        let phase = self.phase;
        let Some(b) = lfsr.next() else {
            // The blocks kept for the end of this region are still written.
            if self.defer_to_region_end {
                return self.kept.pop();
            }
            return None;
        };
        self.writes_left = self.writes_left.saturating_sub(1);
        self.maybe_keep(b, phase ^ 1);
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn physical_size_adds_the_spare_share_and_aligns() {
        // 1 MiB + ceil(1 MiB * 0.15) = 1205863, aligned up to 4 KiB.
        assert_eq!(physical_size(0.15, 1 << 20, 4096), 1_208_320);
        assert_eq!(physical_size(0.5, 8192, 4096), 12_288);
    }

    #[test]
    fn validity_falls_from_full_to_the_collected_blocks() {
        let v = validity_per_region(4, 0.15);
        // Lowest first after the reversal; the last region is fully valid.
        assert_eq!(v.len(), 4);
        assert!((v[3] - 1.0).abs() < 1e-12);
        let gc = 1.0 - 1.0 / (0.5 / 0.15 + 0.7);
        assert!((v[0] - gc).abs() < 1e-12);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn the_ring_keeps_one_slot_free_and_shows_only_committed_blocks() {
        let mut r = KeptRing::new(3);
        assert!(r.has_room());
        r.stage(7);
        assert!(r.has_room());
        r.stage(8);
        assert!(!r.has_room());
        assert_eq!(r.pop(), None);
        r.commit();
        assert_eq!(r.pop(), Some(7));
        assert_eq!(r.pop(), Some(8));
        assert_eq!(r.pop(), None);
    }

    #[test]
    fn every_region_is_written_and_kept_blocks_come_back() {
        let o = SpRandomOpts {
            over_provisioning: 0.15,
            num_regions: 4,
            cache_size: 0,
        };
        let (mut s, physical) = SpRandom::new(&o, 1 << 20, 4096, 12345).unwrap();
        let mut lfsr = Lfsr::new(256, 99).unwrap();
        let mut seen = std::collections::HashMap::new();
        let mut n = 0u64;
        while let Some(b) = s.next(&mut lfsr) {
            assert!(b < 256);
            *seen.entry(b).or_insert(0u32) += 1;
            n += 1;
        }
        assert_eq!(seen.len(), 256, "every logical block is written");
        // Up to one region past the last (fio's region count runs one over); the job's
        // byte budget, the physical size, cuts it (the generator's limit).
        let region_writes = physical / 4 / 4096;
        assert!(n > 256 && n <= 5 * region_writes, "{n}");
        assert!(seen.values().any(|&c| c > 1), "some blocks are rewritten");
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        let o = SpRandomOpts {
            over_provisioning: 0.15,
            num_regions: 100,
            cache_size: 0,
        };
        let e = SpRandom::new(&o, 1 << 20, 12288, 1).unwrap_err();
        assert!(e.contains("power of 2"), "{e}");
        let big = SpRandomOpts {
            cache_size: 1 << 20,
            ..o
        };
        let e = SpRandom::new(&big, 1 << 20, 4096, 1).unwrap_err();
        assert!(e.contains("spr_cs"), "{e}");
    }
}
