//! The random number generators fio uses, written from their published definitions, so a
//! job seeded the way fio seeds it issues the very same offsets: L'Ecuyer's combined
//! Tausworthe generators (taus88, 32-bit, and taus258, 64-bit), the seed table fio derives
//! from `randseed` and the job number, and the two small hashes its distributions use.

/// fio's built-in seed for `randrepeat` jobs.
pub const DEFAULT_SEED: u64 = 0xb189_9bed;
/// The multiplier fio spreads a user seed with (a golden-ratio prime).
const SEED_SPREAD: u64 = 0x9e37_0001;
/// Golden-ratio constants of the multiplicative hashes.
const GOLDEN_64: u64 = 0x61C8_8646_80B5_83EB;
const GOLDEN_32: u32 = 0x61C8_8647;

/// Which stream a seed feeds; the order fixes each seed's index in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Stream {
    BsRead = 0,
    BsWrite,
    BsTrim,
    Verify,
    Mix,
    File,
    Block,
    FileSize,
    Trim,
    Buf,
    SeqRandRead,
    SeqRandWrite,
    SeqRandTrim,
    StartDelay,
    Dedupe,
    Poisson,
    Zone,
    Poisson2,
    Poisson3,
    PrioCmds,
    DedupeWorkingSet,
    /// FDP's placement id choice (fio 3.36).
    Fdp,
    /// `sprandom`'s choice of the blocks to rewrite (fio 3.41).
    Sprandom,
}

/// How many seeds the table holds: fio 3.41's count (`FIO_RAND_NR_OFFS`, 23). The newer
/// fios' streams (FDP's from 3.36, sprandom's from 3.41) come after the 21 of fio 3.33,
/// so the seeds of the first 21 are the same in every dialect.
pub const NR_STREAMS: usize = 23;

/// How seeds are chosen, from `randrepeat`, `randseed` and `allrandrepeat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedOpts {
    pub randrepeat: bool,
    pub randseed: Option<u64>,
    pub allrandrepeat: bool,
    /// The dialect: fio 3.35 changed how the three combine.
    pub release: crate::defs::release::FioRelease,
}

impl SeedOpts {
    /// The seed options a job's workload gives.
    pub fn of(w: &crate::job::workload::Workload) -> Self {
        SeedOpts {
            randrepeat: w.randrepeat,
            randseed: w.randseed,
            allrandrepeat: w.allrandrepeat,
            release: w.release,
        }
    }
}

/// The per-stream seeds of clone `thread_number` of a job with workload `w`: the one way
/// the generator, the pacer and the file layout seed their streams, so they agree.
pub fn clone_seeds(w: &crate::job::workload::Workload, thread_number: u64) -> [u64; NR_STREAMS] {
    seed_table(SeedOpts::of(w), thread_number)
}

/// `--debug=random`'s list of a clone's seeds, as fio prints it from 3.35 on (fio
/// 64b2ba14): the dialect's stream count, then each seed. t/random_seed.py of fio's own
/// suite reads these lines to check `randrepeat`, `allrandrepeat` and `randseed`.
pub fn debug_seeds(release: crate::defs::release::FioRelease, seeds: &[u64; NR_STREAMS]) {
    use crate::debug::Cat;
    if !release.prints_rand_seeds() || !crate::debug::on(Cat::Random) {
        return;
    }
    let n = release.rand_streams();
    crate::dprint!(Cat::Random, "FIO_RAND_NR_OFFS={n}");
    for (i, s) in seeds.iter().take(n).enumerate() {
        crate::dprint!(Cat::Random, "rand_seeds[{i}]={s}");
    }
}

/// The per-stream seeds of one job clone. `thread_number` is fio's 1-based number of the
/// job clone among all clones of the run.
pub fn seed_table(o: SeedOpts, thread_number: u64) -> [u64; NR_STREAMS] {
    let mut seeds = [0u64; NR_STREAMS];
    // An explicit randseed turns randrepeat off, as in fio.
    let repeat = o.randrepeat && o.randseed.is_none();
    if o.randseed.is_some() || repeat {
        let mut seed = o.randseed.unwrap_or(0x89);
        for _ in 0..4 {
            seed = seed.wrapping_mul(SEED_SPREAD);
        }
        for (i, s) in seeds.iter_mut().enumerate() {
            *s = seed.wrapping_mul(thread_number).wrapping_add(i as u64);
            seed = seed.wrapping_mul(SEED_SPREAD);
        }
    } else {
        for s in seeds.iter_mut() {
            *s = os_random();
        }
    }
    // From fio 3.35 on the table above is all: `randseed` wins over `randrepeat`, and
    // neither `allrandrepeat` nor `randrepeat` re-seeds a stream after it.
    if o.release.randseed_overrides_randrepeat() {
        return seeds;
    }
    if o.allrandrepeat {
        for (i, s) in seeds.iter_mut().enumerate() {
            *s = DEFAULT_SEED
                .wrapping_mul(thread_number)
                .wrapping_add(i as u64);
        }
    }
    // fio fills the seeds before it lets randseed turn randrepeat off, so with randrepeat
    // on (its default) the block stream keeps the built-in seed even under randseed.
    if o.randrepeat {
        seeds[Stream::Block as usize] = DEFAULT_SEED.wrapping_mul(thread_number);
    }
    seeds
}

/// A seed from the OS, for jobs with `randrepeat=0` and no `randseed`.
fn os_random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded from the OS's entropy source once per process; mixing in a
    // counter and the time gives distinct values per call.
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    h.write_u64(now);
    h.finish()
}

/// taus88: three 32-bit Tausworthe components, period about 2^88.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taus88 {
    s: [u32; 3],
}

impl Taus88 {
    pub fn new(seed: u32) -> Self {
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        let at_least = |x: u32, m: u32| if x < m { x.wrapping_add(m) } else { x };
        // The initial constant is the C expression (2^31)+(2^17)+(2^7) with ^ as XOR.
        let s1 = at_least(lcg(29 + 19 + 5), 1);
        let s2 = at_least(lcg(s1), 7);
        let s3 = at_least(lcg(s2), 15);
        let mut t = Taus88 { s: [s1, s2, s3] };
        for _ in 0..6 {
            t.next_u32();
        }
        t
    }

    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        #[inline(always)]
        fn step(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
            ((s & c) << d) ^ (((s << a) ^ s) >> b)
        }
        self.s[0] = step(self.s[0], 13, 19, 4294967294, 12);
        self.s[1] = step(self.s[1], 2, 25, 4294967288, 4);
        self.s[2] = step(self.s[2], 3, 11, 4294967280, 17);
        self.s[0] ^ self.s[1] ^ self.s[2]
    }
}

/// taus258: five 64-bit Tausworthe components.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taus258 {
    s: [u64; 5],
}

impl Taus258 {
    pub fn new(seed: u64) -> Self {
        let lcg = |x: u64| x.wrapping_mul(6906969069) ^ seed;
        let at_least = |x: u64, m: u64| if x < m { x.wrapping_add(m) } else { x };
        let s1 = at_least(lcg(29 + 19 + 5), 1);
        let s2 = at_least(lcg(s1), 7);
        let s3 = at_least(lcg(s2), 15);
        let s4 = at_least(lcg(s3), 33);
        let s5 = at_least(lcg(s4), 49);
        let mut t = Taus258 {
            s: [s1, s2, s3, s4, s5],
        };
        for _ in 0..6 {
            t.next_u64();
        }
        t
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        #[inline(always)]
        fn step(s: u64, a: u32, b: u32, mask: u64, d: u32) -> u64 {
            let x = ((s << a) ^ s) >> b;
            ((s & mask) << d) ^ x
        }
        self.s[0] = step(self.s[0], 1, 53, 18446744073709551614, 10);
        self.s[1] = step(self.s[1], 24, 50, 18446744073709551104, 5);
        self.s[2] = step(self.s[2], 3, 23, 18446744073709547520, 29);
        self.s[3] = step(self.s[3], 5, 24, 18446744073709420544, 23);
        self.s[4] = step(self.s[4], 3, 33, 18446744073701163008, 8);
        self.s[0] ^ self.s[1] ^ self.s[2] ^ self.s[3] ^ self.s[4]
    }
}

/// A generator of either width, as fio's `frand_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FRand {
    R32(Taus88),
    R64(Taus258),
}

impl FRand {
    /// Seeds a generator; the 32-bit one takes the seed's low 32 bits, as fio does.
    pub fn new(seed: u64, use64: bool) -> Self {
        if use64 {
            FRand::R64(Taus258::new(seed))
        } else {
            FRand::R32(Taus88::new(seed as u32))
        }
    }

    /// The next raw value.
    #[inline]
    pub fn next_raw(&mut self) -> u64 {
        match self {
            FRand::R32(t) => t.next_u32() as u64,
            FRand::R64(t) => t.next_u64(),
        }
    }

    /// The largest raw value.
    #[inline]
    pub fn max(&self) -> u64 {
        match self {
            FRand::R32(_) => u32::MAX as u64,
            FRand::R64(_) => u64::MAX,
        }
    }

    /// A value scaled into `0..n` as fio does: `n * (r / (max + 1))`.
    #[inline]
    pub fn scaled(&mut self, n: u64) -> u64 {
        let r = self.next_raw();
        let max = self.max() as f64 + 1.0;
        (n as f64 * (r as f64 / max)) as u64
    }

    /// A value in `start..=end`, both inclusive.
    #[inline]
    pub fn between(&mut self, start: u64, end: u64) -> u64 {
        match self {
            FRand::R32(t) => {
                let r = t.next_u32();
                let span = end.wrapping_sub(start) as u32 as f64 + 1.0;
                start + (span * (r as f64 / 4294967296.0)) as i32 as u64
            }
            FRand::R64(t) => {
                let r = t.next_u64();
                let span = end.wrapping_sub(start).wrapping_add(1) as f64;
                start + (span * (r as f64 / 18446744073709551616.0)) as u64
            }
        }
    }
}

/// fio's 64-bit multiplicative hash (used to scatter zipf/pareto/normal hot spots).
#[inline]
pub fn hash_u64(v: u64) -> u64 {
    v.wrapping_mul(GOLDEN_64)
}

/// Bob Jenkins' lookup2-style hash as fio applies it to file names (including fio's way
/// of reading only one byte per word in the 12-byte rounds).
pub fn jhash(key: &[u8], initval: u32) -> u32 {
    let rol = |w: u32, s: u32| w.rotate_left(s);
    let len = key.len() as u32;
    let mut a = GOLDEN_32.wrapping_add(len).wrapping_add(initval);
    let mut b = a;
    let mut c = a;
    let mut k = key;
    while k.len() > 12 {
        a = a.wrapping_add(k[0] as u32);
        b = b.wrapping_add(k[4] as u32);
        c = c.wrapping_add(k[8] as u32);
        a = a.wrapping_sub(c);
        a ^= rol(c, 4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= rol(a, 6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= rol(b, 8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c);
        a ^= rol(c, 16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= rol(a, 19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= rol(b, 4);
        b = b.wrapping_add(a);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    let byte = |i: usize, shift: u32| (k.get(i).copied().unwrap_or(0) as u32) << shift;
    let n = k.len();
    if n >= 9 {
        c = c.wrapping_add(byte(8, 0) + byte(9, 8) + byte(10, 16) + byte(11, 24));
    }
    if n >= 5 {
        b = b.wrapping_add(byte(4, 0) + byte(5, 8) + byte(6, 16) + byte(7, 24));
    }
    a = a.wrapping_add(byte(0, 0) + byte(1, 8) + byte(2, 16) + byte(3, 24));
    // Bytes past the end read as zero above, which equals adding nothing for them.
    c ^= b;
    c = c.wrapping_sub(rol(b, 14));
    a ^= c;
    a = a.wrapping_sub(rol(c, 11));
    b ^= a;
    b = b.wrapping_sub(rol(a, 25));
    c ^= b;
    c = c.wrapping_sub(rol(b, 16));
    a ^= c;
    a = a.wrapping_sub(rol(c, 4));
    b ^= a;
    b = b.wrapping_sub(rol(a, 14));
    c ^= b;
    c = c.wrapping_sub(rol(b, 24));
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taus88_is_deterministic_and_spread() {
        let mut a = Taus88::new(1);
        let mut b = Taus88::new(1);
        let xs: Vec<u32> = (0..8).map(|_| a.next_u32()).collect();
        let ys: Vec<u32> = (0..8).map(|_| b.next_u32()).collect();
        assert_eq!(xs, ys);
        assert!(xs.windows(2).all(|w| w[0] != w[1]));
    }

    #[test]
    fn between_stays_in_range() {
        let mut r = FRand::new(7, false);
        for _ in 0..10_000 {
            let v = r.between(1, 100);
            assert!((1..=100).contains(&v));
        }
        let mut r = FRand::new(7, true);
        for _ in 0..10_000 {
            let v = r.between(1, 100);
            assert!((1..=100).contains(&v));
        }
    }

    #[test]
    fn repeat_seeds_depend_on_thread_number() {
        let o = SeedOpts {
            randrepeat: true,
            randseed: None,
            allrandrepeat: false,
            release: crate::defs::release::FioRelease::V3_33,
        };
        let s1 = seed_table(o, 1);
        let s2 = seed_table(o, 2);
        assert_eq!(s1[Stream::Block as usize], DEFAULT_SEED);
        assert_eq!(s2[Stream::Block as usize], DEFAULT_SEED * 2);
        assert_ne!(s1[Stream::Mix as usize], s2[Stream::Mix as usize]);
    }

    #[test]
    fn from_fio_3_35_randseed_wins_and_no_stream_is_pinned() {
        use crate::defs::release::FioRelease;
        let o = |release, randseed| SeedOpts {
            randrepeat: true,
            randseed,
            allrandrepeat: false,
            release,
        };
        let old = seed_table(o(FioRelease::V3_33, Some(1234)), 1);
        let new = seed_table(o(FioRelease::V3_35, Some(1234)), 1);
        // 3.33 keeps the block stream on the built-in seed even under randseed.
        assert_eq!(old[Stream::Block as usize], DEFAULT_SEED);
        assert_ne!(new[Stream::Block as usize], DEFAULT_SEED);
        // Every other stream is seeded alike; the default seed is the same table.
        assert_eq!(old[Stream::Mix as usize], new[Stream::Mix as usize]);
        assert_eq!(
            seed_table(o(FioRelease::V3_42, None), 1),
            seed_table(o(FioRelease::V3_42, Some(0x89)), 1)
        );
    }
}
