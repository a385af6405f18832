//! `random_generator=lfsr`: a maximal-length linear feedback shift register visits every
//! block number below its size exactly once per pass without a map. The tap table is the
//! standard one for maximal-length Galois LFSRs (as published by Xilinx, XAPP 052); the
//! state steps like fio's, so the sequence matches fio's.

/// Tap positions per register width (index = bits); widths below 3 do not exist.
const TAPS: [&[u8]; 64] = [
    &[],
    &[],
    &[],
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
];

/// An LFSR producing each value in `0..nums` once.
#[derive(Debug, Clone)]
pub struct Lfsr {
    xormask: u64,
    last: u64,
    top_bit: u64,
    max_val: u64,
    produced: u64,
    cycle: u64,
}

impl Lfsr {
    /// A register covering `nums` values, started from `seed`; `None` when no width fits
    /// or the seed is the one illegal state.
    pub fn new(nums: u64, seed: u64) -> Option<Self> {
        let width = (3..64).find(|&i| (1u64 << i) > nums)?;
        let taps = TAPS[width];
        let xormask = taps.iter().fold(0u64, |m, &t| m | 1 << (t - 1));
        let mut l = Lfsr {
            xormask,
            last: 0,
            top_bit: 1 << (taps[0] - 1),
            max_val: nums.checked_sub(1)?,
            produced: 0,
            // With no spin, the very first step is doubled once (fio's cycle bookkeeping,
            // which a reset does not restore).
            cycle: 1,
        };
        l.reset(seed).then_some(l)
    }

    /// Restarts the pass from `seed`; false when the seed is the illegal all-ones state.
    pub fn reset(&mut self, seed: u64) -> bool {
        let mask = (self.top_bit << 1) - 1;
        self.produced = 0;
        self.last = seed & mask;
        self.last != mask
    }

    #[inline]
    fn step(&mut self) {
        let v = self.last;
        self.last = ((v >> 1) | self.top_bit) ^ ((v & 1).wrapping_sub(1) & self.xormask);
    }

    /// The next value, or `None` once every value of the pass was produced.
    #[inline]
    pub fn next(&mut self) -> Option<u64> {
        let n = self.produced;
        self.produced += 1;
        if n > self.max_val {
            return None;
        }
        loop {
            if self.cycle != 0 {
                self.cycle -= 1;
                if self.cycle == 0 {
                    self.step();
                }
            }
            self.step();
            if self.last <= self.max_val {
                return Some(self.last);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_every_value_once() {
        for n in [5u64, 8, 100, 1000] {
            let mut l = Lfsr::new(n, 0xb189_9bed).unwrap();
            let mut seen = vec![false; n as usize];
            while let Some(v) = l.next() {
                assert!(!seen[v as usize], "{v} twice");
                seen[v as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "n={n}");
        }
    }
}
