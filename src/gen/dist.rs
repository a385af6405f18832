//! Non-uniform `random_distribution`s: zipf, pareto and normal (gauss), computed as fio
//! computes them so that the same seed picks the same hot blocks. Each returns a range
//! index in `0..nranges`.

use super::rand::{hash_u64, Taus88};

/// Zipf's generator stops summing the zeta series after this many terms.
const ZIPF_MAX_TERMS: u64 = 10_000_000;

/// zipf(theta) and pareto(h) share their state shape.
#[derive(Debug, Clone)]
pub struct Zipf {
    rand: Taus88,
    nranges: u64,
    rand_off: u64,
    theta: f64,
    zeta2: f64,
    zetan: f64,
    pareto_pow: f64,
    hash: bool,
}

fn shared(nranges: u64, center: Option<f64>, seed: u32) -> (Taus88, u64) {
    let mut rand = Taus88::new(seed);
    let mut off = rand.next_u32() as u64;
    if let Some(c) = center {
        off = (nranges as f64 * c) as u64;
    }
    (rand, off)
}

impl Zipf {
    pub fn new_zipf(nranges: u64, theta: f64, center: Option<f64>, seed: u32) -> Self {
        let (rand, rand_off) = shared(nranges, center, seed);
        let mut zetan = 0.0;
        for i in 0..nranges.min(ZIPF_MAX_TERMS) {
            zetan += (1.0 / (i + 1) as f64).powf(theta);
        }
        Zipf {
            rand,
            nranges,
            rand_off,
            theta,
            zeta2: 1.0f64.powf(theta) + 0.5f64.powf(theta),
            zetan,
            pareto_pow: 0.0,
            hash: true,
        }
    }

    pub fn new_pareto(nranges: u64, h: f64, center: Option<f64>, seed: u32) -> Self {
        let (rand, rand_off) = shared(nranges, center, seed);
        Zipf {
            rand,
            nranges,
            rand_off,
            theta: 0.0,
            zeta2: 0.0,
            zetan: 0.0,
            pareto_pow: h.ln() / (1.0 - h).ln(),
            hash: true,
        }
    }

    /// Keeps ranks in order (used for file selection, where rank 0 is the hottest file).
    pub fn without_hash(mut self) -> Self {
        self.hash = false;
        self
    }

    pub fn next_zipf(&mut self) -> u64 {
        let n = self.nranges as f64;
        let alpha = 1.0 / (1.0 - self.theta);
        let eta = (1.0 - (2.0 / n).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / self.zetan);
        let uni = self.rand.next_u32() as f64 / u32::MAX as f64;
        let z = uni * self.zetan;
        let val: u64 = if z < 1.0 {
            1
        } else if z < 1.0 + 0.5f64.powf(self.theta) {
            2
        } else {
            1 + (n * (eta * uni - eta + 1.0).powf(alpha)) as u64
        };
        let mut v = val - 1;
        if self.hash {
            v = hash_u64(v);
        }
        v.wrapping_add(self.rand_off) % self.nranges
    }

    pub fn next_pareto(&mut self) -> u64 {
        let r = self.rand.next_u32() as f64 / u32::MAX as f64;
        let mut n = ((self.nranges - 1) as f64 * r.powf(self.pareto_pow)) as u64;
        if self.hash {
            n = hash_u64(n);
        }
        n.wrapping_add(self.rand_off) % self.nranges
    }
}

/// The normal distribution: a sum of twelve uniforms, optionally widened by `dev` percent.
#[derive(Debug, Clone)]
pub struct Gauss {
    rand: Taus88,
    nranges: u64,
    stddev: u64,
    rand_off: u64,
    hash: bool,
}

impl Gauss {
    pub fn new(nranges: u64, dev: f64, center: Option<f64>, seed: u32) -> Self {
        let mut stddev = 0;
        if dev != 0.0 {
            stddev = ((nranges as f64 * dev) / 100.0).ceil() as u64;
            stddev = stddev.min(nranges / 2);
        }
        let rand_off = match center {
            None => 0,
            Some(c) => (nranges as f64 * (c - 0.5)) as i64 as u64,
        };
        Gauss {
            rand: Taus88::new(seed),
            nranges,
            stddev,
            rand_off,
            hash: true,
        }
    }

    pub fn without_hash(mut self) -> Self {
        self.hash = false;
        self
    }

    fn dev(&mut self) -> i64 {
        if self.stddev == 0 {
            return 0;
        }
        let r = self.rand.next_u32();
        let vr = (self.stddev as f64 * (r as f64 / 4294967296.0)) as i32 as i64;
        vr - (self.stddev / 2) as i64
    }

    pub fn next(&mut self) -> u64 {
        const ITERS: u64 = 12;
        let mut sum: u64 = 0;
        for _ in 0..ITERS {
            sum += self.rand.next_u32() as u64 % (self.nranges + 1);
        }
        sum = sum.div_ceil(ITERS);
        if self.stddev != 0 {
            let mut dev = self.dev();
            while (dev + sum as i64) as u64 >= self.nranges {
                dev /= 2;
            }
            sum = (sum as i64 + dev) as u64;
        }
        if self.hash {
            sum = hash_u64(sum);
        }
        sum.wrapping_add(self.rand_off) % self.nranges
    }
}
