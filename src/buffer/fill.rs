//! Filling write buffers: fio's seeded random fill (four 64-bit lanes, each advanced by a
//! multiply), compressible fills, dedupe seed choice and the per-write scramble.

use crate::job::buffers::{BufferOpts, DedupeMode};

const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
const PRIMES: [u64; 4] = [1, 2, 3, 5];

/// Fills `buf` from `seed` as fio's `__fill_random_buf` does with four seed buckets, so a
/// block's data can be rebuilt from the seed in its verify header.
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut s = PRIMES.map(|p| seed.wrapping_mul(p));
    let whole = buf.len() / 32 * 32;
    let (body, tail) = buf.split_at_mut(whole);
    for chunk in body.chunks_exact_mut(32) {
        for (lane, word) in s.iter_mut().zip(chunk.chunks_exact_mut(8)) {
            word.copy_from_slice(&lane.to_le_bytes());
            *lane = lane.wrapping_mul(GOLDEN_RATIO_64);
        }
    }
    let mut x = s[0];
    let mut words = tail.chunks_exact_mut(8);
    for word in &mut words {
        word.copy_from_slice(&x.to_le_bytes());
        x = x.wrapping_mul(GOLDEN_RATIO_64);
    }
    let rest = words.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&x.to_le_bytes()[..n]);
}

/// Fills `buf` in `segment`-byte pieces, each `100 - pct` percent random (from `seed`) and
/// the rest zeroes or `pattern`, as fio's compressible fill does.
pub fn fill_compressible(buf: &mut [u8], seed: u64, pct: u32, segment: usize, pattern: &[u8]) {
    let fill_plain = |b: &mut [u8]| {
        if pattern.is_empty() {
            b.fill(0);
        } else {
            let n = pattern.len().min(b.len());
            b[..n].copy_from_slice(&pattern[..n]);
            crate::defs::datapattern::spread(b, pattern.len());
        }
    };
    if pct >= 100 {
        fill_plain(buf);
        return;
    }
    let segment = segment.clamp(1, buf.len().max(1));
    let mut pos = 0;
    while pos < buf.len() {
        let left = buf.len() - pos;
        let random = (segment * (100 - pct as usize) / 100).min(left);
        fill_random(&mut buf[pos..pos + random], seed);
        pos += random;
        let left = buf.len() - pos;
        if left == 0 {
            break;
        }
        let mut plain = segment - random;
        if plain > left || left - plain <= 8 {
            plain = left;
        }
        fill_plain(&mut buf[pos..pos + plain]);
        pos += plain;
    }
}

/// A splitmix64 step: a cheap, well-mixed stream of seeds.
#[inline]
pub fn next_seed(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The base seed of the working set that every `dedupe_global` job shares.
const GLOBAL_WORKING_SET: u64 = 0x243f_6a88_85a3_08d3;

/// Per-worker buffer filler: keeps the seed streams for refills and dedupe choices.
#[derive(Clone)]
pub struct Filler {
    opts: BufferOpts,
    seeds: u64,
    dedupe: u64,
    prev: Option<u64>,
    ws_base: u64,
    ws_pages: u64,
    min_bs: usize,
}

impl Filler {
    /// A filler for one job clone; `seed` varies per clone, `file_size` sizes the dedupe
    /// working set, `min_bs` is the smallest write.
    pub fn new(opts: &BufferOpts, seed: u64, file_size: u64, min_bs: u64) -> Filler {
        let min_bs = min_bs.max(1);
        let ws_pages = (file_size / 100 * opts.dedupe_ws_pct as u64 / min_bs).max(1);
        Filler {
            opts: opts.clone(),
            seeds: seed,
            dedupe: seed ^ 0x5eed_d00d,
            prev: None,
            // A job's own working set, or with dedupe_global the run's shared one.
            ws_base: if opts.dedupe_global {
                GLOBAL_WORKING_SET
            } else {
                seed.rotate_left(17)
            },
            ws_pages,
            min_bs: min_bs as usize,
        }
    }

    /// The options this filler follows.
    pub fn opts(&self) -> &BufferOpts {
        &self.opts
    }

    /// A new seed for a unique buffer.
    pub fn fresh_seed(&mut self) -> u64 {
        next_seed(&mut self.seeds)
    }

    /// The seed for the next written buffer, a repeat of an earlier one for the
    /// `dedupe_percentage` share of writes.
    pub fn write_seed(&mut self) -> u64 {
        let pct = self.opts.dedupe_pct as u64;
        if pct > 0 && (pct == 100 || next_seed(&mut self.dedupe) % 100 < pct) {
            match self.opts.dedupe_mode {
                DedupeMode::Repeat => {
                    if let Some(p) = self.prev {
                        return p;
                    }
                }
                DedupeMode::WorkingSet => {
                    let i = next_seed(&mut self.dedupe) % self.ws_pages;
                    let mut s = self.ws_base ^ i.wrapping_mul(GOLDEN_RATIO_64);
                    return next_seed(&mut s);
                }
            }
        }
        let s = self.fresh_seed();
        self.prev = Some(s);
        s
    }

    /// Builds a buffer's contents from `seed`: pattern, zeroes, compressible or random.
    pub fn fill_seeded(&self, buf: &mut [u8], seed: u64) {
        let pat = self.opts.pattern.as_ref().map_or(&[][..], |p| &p.bytes[..]);
        if self.opts.compress_pct > 0 || self.opts.dedupe_pct > 0 {
            let chunk = if self.opts.compress_chunk == 0 {
                self.min_bs
            } else {
                (self.opts.compress_chunk as usize).min(self.min_bs)
            };
            // Each chunk gets its own seed, derived from the buffer's.
            let mut s = seed;
            for piece in buf.chunks_mut(chunk.max(1)) {
                let cs = next_seed(&mut s);
                fill_compressible(piece, cs, self.opts.compress_pct, piece.len(), pat);
            }
        } else if let Some(p) = &self.opts.pattern {
            p.fill(buf, 0);
        } else if self.opts.zero {
            buf.fill(0);
        } else {
            fill_random(buf, seed);
        }
    }

    /// The first fill of a freshly allocated buffer.
    pub fn init(&mut self, buf: &mut [u8]) {
        let s = self.fresh_seed();
        self.fill_seeded(buf, s);
    }

    /// Prepares a write buffer (without verify): refill it, or scramble it a little.
    pub fn before_write(&mut self, buf: &mut [u8], offset: u64, now_ns: u64) {
        if self.opts.refill {
            let s = self.write_seed();
            self.fill_seeded(buf, s);
        } else if self.opts.scramble && !self.opts.seeded() {
            scramble(buf, offset, now_ns);
        }
    }
}

/// fio's small scramble: in each 512-byte sector, the offset goes into one of the eight
/// 64-byte lines and the time into the end of the first, so reused buffers still differ.
pub fn scramble(buf: &mut [u8], offset: u64, now_ns: u64) {
    let line = ((now_ns ^ offset) & 7) as usize * 64;
    let (sec, nsec) = (now_ns / 1_000_000_000, now_ns % 1_000_000_000);
    let mut boff = offset;
    for sector in buf.chunks_exact_mut(512) {
        sector[line..line + 8].copy_from_slice(&boff.to_le_bytes());
        sector[48..56].copy_from_slice(&sec.to_le_bytes());
        sector[56..64].copy_from_slice(&nsec.to_le_bytes());
        boff += 512;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_fill_follows_fio_lanes() {
        let mut b = [0u8; 45];
        fill_random(&mut b, 3);
        let w = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
        assert_eq!(w(0), 3);
        assert_eq!(w(1), 6);
        assert_eq!(w(2), 9);
        assert_eq!(w(3), 15);
        assert_eq!(w(4), 3u64.wrapping_mul(GOLDEN_RATIO_64));
    }

    #[test]
    fn compressible_fill_leaves_the_share_plain() {
        let mut b = vec![0xffu8; 4096];
        fill_compressible(&mut b, 0x9e37_79b9_7f4a_7c15, 50, 512, &[]);
        let zeros = b.iter().filter(|&&x| x == 0).count();
        assert!((2000..2200).contains(&zeros), "{zeros}");
    }
}
